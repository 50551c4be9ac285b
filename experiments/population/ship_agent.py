"""Ship a trained policy as the ``ppo`` agent: evaluate it in duplicate and write its weights and model card.

``mus ship-agent runs/ship`` (:func:`ship`) reads a training run's folder (``policy.pt``, ``args.json``,
``run.json``, ``eval.csv``, ``learning_curve.png``) or a recipe's (``mus league --out``: the policy it kept,
``recipe.json``, ``recipe.md``, each round's training, :func:`read_recipe`), plays the policy in duplicate against
every baseline (``--hands`` deals as single hands for stones/hand, ``--games`` deals as whole games for the game
win rate, both with 95% confidence intervals and two-sided p-values; sampled play, and greedy play against
``rule`` and ``equity``), and writes:

* ``agents/data/ppo.pt``: the weights, with the exact command, seed, settings, wall time, machine and the
  evaluation in its ``meta`` (what ``make_agent("ppo")`` loads);
* ``agents/data/ppo.md``: the model card (the same facts, as a page);
* ``docs/ppo_learning_curve.png``: the run's learning curve, for the README.

With ``--exploit REPORT`` (``exploit_seeds.json`` of ``mus exploit POLICY --seeds N``, or one probe's
``exploit.json``; repeatable) the card also gives the policy's exploitability probes (:func:`read_probes`): every
probe's held-out gain and game win rate, the largest of each, and the commands. Each probe must have seen the
shipped weights (its ``frozen.parameters_sha256``). ``--card-only --exploit REPORT`` adds probes to the shipped
file's ``meta`` (the weights are unchanged) and rewrites the card.

Shipping over an agent already in ``agents/data`` keeps what that agent was (its command, budget, evaluation and
probes, :func:`previous_agent`) in the new file's ``meta["previous"]``, and the card compares the two, measure
by measure ("Compared with the agent it replaced").

A policy warm-started from another run's policy (``mus train --warm-start RUN/policy.pt``, as each round of a
PSRO-like loop is) has a lineage: with ``--ancestor RUN`` (repeatable, any order) the card lists every stage from
the first one (from scratch or from the ``equity`` clone) to the shipped run, each with its command, warm start,
league, decisions and minutes, and the total training budget (:func:`read_lineage`). Each ancestor is matched
to the warm start of the next stage by its weights' digest, so a run that is not in the chain is refused.

The evaluation deals come from ``--seed`` (default 7), never from the training or in-training evaluation seeds.
The command line is :mod:`experiments.commands.ship_agent`; this module takes plain Python values.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.policy import build_net, load_policy_file, parameters_digest, save_policy
from experiments.evaluate.report_card import duplicate_row, report_card
from experiments.population.exploit_seeds import aggregate_probes
from experiments.population.ship_card import compare_lines as _compare_lines  # noqa: F401  (tests)
from experiments.population.ship_card import rival_ppo_text as _rival_ppo_text  # noqa: F401  (tests)
from experiments.population.ship_card import write_card
from experiments.population.ship_lineage import (
    first_beats,
    lineage_budget,
    lineage_evals,
    made_text,
    previous_agent,
    read_lineage,
    read_recipe,
    shares_rounded,
    stage_record,
)
from experiments.train.report import learning_curve

__all__ = ["ship", "read_recipe", "rewrite_card", "evaluate_policy", "duplicate_row", "write_card", "draw_curve",
           "read_probes", "read_lineage", "first_beats", "lineage_evals", "previous_agent", "made_text",
           "lineage_budget", "shares_rounded", "BASELINES", "ROOT"]


#: The repository's root: ``agents/data`` and ``docs`` are written below it by default.
ROOT = Path(__file__).resolve().parents[2]


#: The baselines the shipped policy is evaluated against (sampled play).
BASELINES = ("rule", "equity", "ordago", "random")


def evaluate_policy(policy: str | Path, hands: int, games: int, seed: int = 7, kings: int = 8, target: int = 40,
                    opponents: tuple[str, ...] = BASELINES, log: Any = print) -> list[dict[str, Any]]:
    """Duplicate evaluation of a policy file against baselines, as every agent's report card
    (:func:`experiments.evaluate.report_card.report_card`, named ``ppo``): one row per (opponent, sampled/greedy)."""
    card = report_card(str(policy), hands=hands, games=games, seed=seed, kings=kings, target=target,
                       opponents=opponents, name="ppo", log=log)
    return card["rows"]


def read_probes(paths: Sequence[str | Path], net: Any) -> dict[str, Any]:
    """The exploitability probes of the policy ``net`` for its card: the reports at ``paths`` (each an
    ``exploit_seeds.json`` or one probe's ``exploit.json``) merged by
    :func:`~experiments.population.exploit_seeds.aggregate_probes` (every probe, the largest gain and win rate, the
    spread), with each probe's command.

    Raises:
        ValueError: a file is missing or not a probe report, or a probe played other weights than ``net`` (its
            ``frozen.parameters_sha256``); the message names the file.
    """
    results: list[dict[str, Any]] = []
    digest = parameters_digest(net)
    for path in map(Path, paths):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
            found = report["results"] if "results" in report else [report]
            aggregate_probes(found)                      # a probe result has the fields of exploit.json
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}: not a probe report of mus exploit (exploit_seeds.json or exploit.json): "
                             f"{e}") from None
        for r in found:
            seen = (r.get("frozen") or {}).get("parameters_sha256")
            if seen != digest:
                raise ValueError(f"{path}: the probe {r.get('warm_start', '?')}-seed{r.get('seed', '?')} played other "
                                 "weights than this policy (frozen.parameters_sha256 differs): probe the policy "
                                 "that is shipped")
        results += found
    summary = aggregate_probes(results)
    summary.pop("results", None)
    summary["commands"] = sorted({str(r.get("command", "?")) for r in results})
    return summary


def ship(run: str | Path, policy: str = "policy.pt", hands: int = 20000, games: int = 2000, seed: int = 7,
         dest: str | Path = ROOT / "agents" / "data", curve: str | Path = ROOT / "docs" / "ppo_learning_curve.png",
         log: Any = print, exploit: Sequence[str | Path] = (), ancestors: Sequence[str | Path] = ()) -> list[Path]:
    """Evaluate the policy ``policy`` of the training run in folder ``run`` and ship it.

    Plays it in duplicate (:func:`evaluate_policy`, deals from ``seed``) and writes ``dest/ppo.pt`` (the weights,
    with the run's command, settings, machine and the evaluation in its ``meta``), ``dest/ppo.md`` (the model
    card) and ``curve`` (the run's learning curve, :func:`draw_curve`). ``exploit``: probe reports of this policy
    for the card (:func:`read_probes`); ``ancestors``: the folders of the runs it was warm-started from, directly
    or through others (:func:`read_lineage`); both are read and checked before anything is played or written.

    Returns:
        The files written.

    Raises:
        FileNotFoundError: ``run`` holds no file ``policy``.
        ValueError: a probe report that cannot be read or that probed other weights; an ancestor that is not in
            the chain of warm starts.
    """
    folder = Path(run)
    path = folder / policy
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: give the folder of a run made by mus train or of a recipe "
                                "made by mus league (--out)")
    recipe = read_recipe(folder)
    if recipe and ancestors:
        raise ValueError("--ancestor is for a run of mus train: a recipe of mus league gives its own rounds")
    blob = load_policy_file(path)
    net = build_net(blob, path)
    probes = read_probes(exploit, net) if exploit else None
    previous = previous_agent(Path(dest) / "ppo.pt", net)
    info = json.loads((folder / "run.json").read_text()) if (folder / "run.json").is_file() else {}
    train_meta = dict(blob.get("meta") or {})
    if recipe:                          # the recipe's command and budget; the settings of the training it came from
        args = dict(load_policy_file(Path(recipe["args_policy"])).get("meta") or {}).get("args", {})
        info = {"command": recipe["command"], "machine": recipe["machine"]}
        train_meta = {**train_meta, "args": args, "seconds": 60 * recipe["minutes"],
                      "decisions": recipe["decisions"]}
    lineage = read_lineage(stage_record(train_meta, info, parameters_digest(net)), ancestors) if ancestors else []
    rows = evaluate_policy(path, hands, games, seed, kings=train_meta.get("args", {}).get("kings", 8),
                           target=train_meta.get("args", {}).get("target", 40), log=log)
    meta = {"command": info.get("command", "?"), "run": info, "args": train_meta.get("args", {}),
            "arch": dict(net.arch), "parameters": sum(p.numel() for p in net.parameters()),
            "decisions": train_meta.get("decisions"), "updates": train_meta.get("update"),
            "minutes": train_meta.get("seconds", float("nan")) / 60, "eval_seed": seed,
            **({"recipe": recipe} if recipe else {}),
            "ship_command": f"mus ship-agent {run} --policy {policy} --hands {hands} --games {games} --seed {seed}"
                            + "".join(f" --exploit {e}" for e in exploit)
                            + "".join(f" --ancestor {a}" for a in ancestors),
            "evaluation": rows, **({"exploitability": probes} if probes else {}),
            **({"previous": previous} if previous else {}), **({"lineage": lineage} if lineage else {})}
    dest = Path(dest)
    save_policy(dest / "ppo.pt", net, blob.get("config"), meta)
    write_card(dest / "ppo.md", meta, rows)
    if recipe:                          # the rounds' trainings, one after the other
        *before, last = recipe["stages"]
        drawn = draw_curve(Path(last["folder"]), Path(curve), recipe["stages"] if before else ())
    else:
        drawn = draw_curve(folder, Path(curve), lineage)
    return [dest / "ppo.pt", dest / "ppo.md", *([drawn] if drawn else [])]


def rewrite_card(dest: str | Path = ROOT / "agents" / "data", exploit: Sequence[str | Path] = (),
                 ancestors: Sequence[str | Path] = ()) -> Path:
    """Rewrite ``dest/ppo.md`` from the evaluation stored in ``dest/ppo.pt`` (no run is read, nothing is
    played). ``exploit``: probe reports of the shipped weights (:func:`read_probes`); ``ancestors``: the runs it
    was warm-started from (:func:`read_lineage`); each stored first in ``dest/ppo.pt``'s ``meta`` (replacing any
    there; the weights are written back unchanged), after both are checked."""
    path = Path(dest) / "ppo.pt"
    blob = load_policy_file(path)
    meta = dict(blob["meta"])
    if exploit or ancestors:
        net = build_net(blob, path)
        if exploit:
            meta["exploitability"] = read_probes(exploit, net)
        if ancestors:
            shipped = stage_record({"args": meta.get("args", {}), "decisions": meta.get("decisions"),
                              "seconds": 60 * float(meta.get("minutes") or 0.0)}, meta.get("run", {}),
                             parameters_digest(net))
            meta["lineage"] = read_lineage(shipped, ancestors)
        save_policy(path, net, blob.get("config"), meta)
    return write_card(Path(dest) / "ppo.md", meta, meta["evaluation"])


def draw_curve(run: Path, dest: Path, lineage: Sequence[dict[str, Any]] = ()) -> Path | None:
    """Redraw ``run``'s learning curve from its ``eval.csv`` with the current plotting code (falling back to a
    copy of its ``learning_curve.png``); ``None`` when the run has neither. With a ``lineage``, the curve is the
    whole training of the shipped policy, every stage's evaluations with a line where each stage starts
    (:func:`lineage_evals`)."""
    evals, starts = lineage_evals(run, lineage)
    opponents = list(dict.fromkeys(k[: -len("_stones")] for e in evals for k in e if k.endswith("_stones")))
    if evals and opponents:
        return learning_curve(evals, dest, opponents, stages=starts)
    if (run / "learning_curve.png").is_file():
        shutil.copyfile(run / "learning_curve.png", dest)
        return dest
    return None
