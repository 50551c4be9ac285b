"""Ship a trained policy as the ``ppo`` agent: evaluate it in duplicate and write its weights and model card.

``mus ship-agent RUN --dest DIR`` (:func:`ship`) reads a training run's folder (``mus train --out``) or a recipe's
(``mus league --out``, :func:`~experiments.population.ship_lineage.read_recipe`), plays the policy in duplicate
against every baseline (sampled, and greedy against ``rule`` and ``equity``; deals from ``seed``, never the
training's) and writes, in the folder it is given (``runs/shipped`` by default on the command line):

* ``DIR/ppo.pt``: the weights, with the command, seed, settings, wall time, machine and evaluation in its ``meta``
  (what ``make_agent`` loads);
* ``DIR/ppo.md``: the model card (:func:`~experiments.population.ship_card.write_card`);
* the learning curve (``DIR/ppo_learning_curve.png`` unless ``curve`` is given).

Nothing is written into the installed package unless it is named: a maintainer ships the package's agent from a
checkout with ``--dest agents/data --curve docs/ppo_learning_curve.png``. Probe reports (``exploit``,
:func:`read_probes`) and the runs a policy was warm-started from (``ancestors``,
:func:`~experiments.population.ship_lineage.read_lineage`) are checked before anything is played; shipping over an
agent already in ``DIR`` keeps what it was in ``meta["previous"]`` and the card compares the two. The command line
is :mod:`experiments.commands.ship_agent`; this module takes plain Python values.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.policy import build_net, load_policy_file, parameters_digest, save_policy
from experiments.evaluate.report_card import OPPONENTS, duplicate_row, report_card
from experiments.population.exploit_seeds import aggregate_probes
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
from experiments.train.report import MAGNET_PREFIX, learning_curve

__all__ = ["ship", "read_recipe", "rewrite_card", "evaluate_policy", "duplicate_row", "write_card", "draw_curve",
           "read_probes", "read_lineage", "first_beats", "lineage_evals", "previous_agent", "made_text",
           "lineage_budget", "shares_rounded", "EVAL_OPPONENTS", "CURVE_NAME"]


#: The learning curve's file name in the destination folder, unless another path is given.
CURVE_NAME = "ppo_learning_curve.png"


#: The opponents the shipped policy is evaluated against (sampled play): a report card's, without itself.
EVAL_OPPONENTS = tuple(o for o in OPPONENTS if o != "ppo")


def evaluate_policy(policy: str | Path, hands: int, games: int, seed: int = 7, kings: int = 8, target: int = 40,
                    opponents: tuple[str, ...] = EVAL_OPPONENTS, log: Any = print) -> list[dict[str, Any]]:
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


def ship(run: str | Path, policy: str = "policy.pt", hands: int = 20000, games: int = 2000, seed: int = 7, *,
         dest: str | Path, curve: str | Path | None = None, log: Any = print, exploit: Sequence[str | Path] = (),
         ancestors: Sequence[str | Path] = ()) -> list[Path]:
    """Evaluate the policy ``policy`` of the training run in folder ``run`` and ship it into the folder ``dest``.

    Plays it in duplicate (:func:`evaluate_policy`, deals from ``seed``) and writes ``dest/ppo.pt`` (the weights,
    with the run's command, settings, machine and the evaluation in its ``meta``), ``dest/ppo.md`` (the model
    card) and ``curve`` (the run's learning curve, :func:`draw_curve`; ``dest/ppo_learning_curve.png`` by
    default). ``exploit``: probe reports of this policy
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
    curve_path = dest / CURVE_NAME if curve is None else Path(curve)
    save_policy(dest / "ppo.pt", net, blob.get("config"), meta)
    write_card(dest / "ppo.md", meta, rows)
    if recipe:                          # the rounds' trainings, one after the other
        *before, last = recipe["stages"]
        drawn = draw_curve(Path(last["folder"]), curve_path, recipe["stages"] if before else ())
    else:
        drawn = draw_curve(folder, curve_path, lineage)
    return [dest / "ppo.pt", dest / "ppo.md", *([drawn] if drawn else [])]


def rewrite_card(dest: str | Path, exploit: Sequence[str | Path] = (),
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
    opponents = list(dict.fromkeys(k[: -len("_stones")] for e in evals for k in e
                                   if k.endswith("_stones") and not k.startswith(MAGNET_PREFIX)))   # the learner's
    if evals and opponents:
        return learning_curve(evals, dest, opponents, stages=starts)
    if (run / "learning_curve.png").is_file():
        shutil.copyfile(run / "learning_curve.png", dest)
        return dest
    return None
