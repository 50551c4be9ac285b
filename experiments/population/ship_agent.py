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

import csv
import json
import math
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.policy import build_net, load_policy_file, parameters_digest, save_policy
from experiments.evaluate.report_card import duplicate_row, p_value, report_card
from experiments.population.exploit_seeds import aggregate_probes
from experiments.population.recipe_state import STATE_NAME, replica_folder, trained_rounds
from experiments.train.report import learning_curve

__all__ = ["ship", "read_recipe", "rewrite_card", "evaluate_policy", "duplicate_row", "write_card", "draw_curve",
           "read_probes", "read_lineage", "first_beats", "lineage_evals", "previous_agent", "made_text", "BASELINES",
           "ROOT"]

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


#: Warm starts that are not a policy file: the first stage of a lineage.
FIRST_STAGES = ("none", "equity")


def first_beats(eval_csv: Path, opponent: str = "rule", alpha: float = 0.01) -> dict[str, float] | None:
    """The first in-training evaluation of a run (its ``eval.csv``) ahead of ``opponent`` with p < ``alpha`` both
    in stones/hand and in the game win rate: its ``minutes``, ``decisions``, ``stones`` and ``win``. None where
    the file or the opponent's columns are missing, or no evaluation got there."""
    try:
        for r in _read_evals(eval_csv):
            x = {k: r[f"{opponent}_{k}"] for k in ("stones", "stones_lo", "stones_hi", "win", "win_lo", "win_hi")}
            if (x["stones"] > 0 and p_value(x["stones"], x["stones_lo"], x["stones_hi"], 0.0) < alpha
                    and x["win"] > 0.5 and p_value(x["win"], x["win_lo"], x["win_hi"], 0.5) < alpha):
                return {"minutes": r["minutes"], "decisions": r["decisions"], "stones": x["stones"], "win": x["win"]}
    except (OSError, KeyError, ValueError):
        return None
    return None


def _stage(meta: dict[str, Any], info: dict[str, Any], digest: str, folder: Path | None = None) -> dict[str, Any]:
    """One stage of a lineage from a policy file's ``meta`` (as ``mus train`` writes it) and its run's
    ``run.json`` (``info``; empty where there is none); with the run's ``folder``, also when its in-training
    evaluation first beat ``rule`` (:func:`first_beats`)."""
    args = meta.get("args", {})
    sessions = info.get("sessions") or ([{"command": info["command"]}] if "command" in info else [])
    beats = first_beats(folder / "eval.csv") if folder is not None else None
    return {"commands": [str(x.get("command", "?")) for x in sessions] or ["?"],
            "warm_start": str(args.get("warm_start", "?")), "league_mix": str(args.get("league_mix", "?")),
            "decisions": int(meta.get("decisions") or 0), "minutes": float(meta.get("seconds") or 0.0) / 60,
            "parameters_sha256": digest, **({"beats_rule": beats} if beats else {})}


def read_lineage(shipped: dict[str, Any], ancestors: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The training stages that made a policy, oldest first, ending with its own run.

    ``shipped``: the last stage, as :func:`_stage` builds it (its ``warm_start`` names the policy file it started
    from). ``ancestors``: the folders of the earlier runs (``mus train --out``), in any order. Each stage's warm
    start must be the ``policy.pt`` (or ``best_policy.pt``) of one ancestor: matched by the weights' digest
    (:func:`~agents.policy.parameters_digest`) when the warm-start file is still there, else by
    its path. The chain ends at a stage started from scratch or from the ``equity`` clone.

    Raises:
        ValueError: an ancestor without a policy, a warm start that no ancestor provides (naming the stage), a
            loop, or an ancestor that is not in the chain.
    """
    found: dict[str, tuple[Path, dict[str, Any]]] = {}          # digest -> (policy file, its stage)
    by_path: dict[Path, str] = {}
    for folder in map(Path, ancestors):
        policies = [folder / n for n in ("policy.pt", "best_policy.pt") if (folder / n).is_file()]
        if not policies:
            raise ValueError(f"--ancestor {folder}: no policy.pt in it; give the folder of a run made by mus train")
        try:
            info = json.loads((folder / "run.json").read_text()) if (folder / "run.json").is_file() else {}
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"--ancestor {folder}: its run.json cannot be read: {e}") from None
        for path in policies:
            blob = load_policy_file(path)
            digest = parameters_digest(build_net(blob, path))
            found[digest] = (folder, {**_stage(dict(blob.get("meta") or {}), info, digest, folder),
                                      "folder": str(folder)})
            by_path[path.resolve()] = digest
    stages, used = [shipped], set()
    while stages[0]["warm_start"] not in FIRST_STAGES:
        start = Path(stages[0]["warm_start"])
        if start.is_file():
            blob = load_policy_file(start)
            digest = parameters_digest(build_net(blob, start))
        else:
            digest = by_path.get(start.resolve(), "")
        if digest not in found:
            raise ValueError(f"no --ancestor holds {start}, the warm start of the stage "
                             f"`{stages[0]['commands'][0]}`: give the folder of the run that made it")
        if digest in used:
            raise ValueError(f"the warm starts loop back to {found[digest][0]}: give each run once")
        used.add(digest)
        stages.insert(0, found[digest][1])
    extra = sorted({str(folder) for d, (folder, _) in found.items()} - {str(found[d][0]) for d in used})
    if extra:
        raise ValueError(f"--ancestor {extra[0]}: not in the warm-start chain of the shipped policy")
    return stages if len(stages) > 1 else []


def shares_rounded(values: Sequence[float], digits: int = 1) -> tuple[list[float], float]:
    """``values`` rounded to ``digits`` decimals so that they add up to their exact sum rounded the same way
    (largest remainders get the extra units, earlier rows first on ties): a table's rows and its total agree, and
    no row's rounding changes the total. Returns the rounded values and the rounded total."""
    scale = 10 ** digits
    exact = [float(v) * scale for v in values]
    total = round(sum(exact))
    floors = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(exact)), key=lambda i: (floors[i] - exact[i], i))
    for i in by_remainder[: max(0, total - sum(floors))]:
        floors[i] += 1
    return [f / scale for f in floors], total / scale


def lineage_budget(stages: Sequence[dict[str, Any]]) -> tuple[int, float]:
    """The total training budget of a lineage: its decisions, and its minutes to one decimal (the stages' exact
    minutes summed, then rounded once: :func:`shares_rounded`)."""
    return sum(int(s["decisions"]) for s in stages), shares_rounded([s["minutes"] for s in stages])[1]


def _lineage_lines(stages: list[dict[str, Any]]) -> list[str]:
    """The card's lineage section: every stage, then the total budget (rows rounded so that they add up to it,
    :func:`shares_rounded`)."""
    lines = ["## Lineage", "",
             "The shipped run was warm-started from an earlier run's policy, that one perhaps from another: every "
             "stage, oldest first (the minutes are each run's wall time, evaluations included).", "",
             "| stage | command | warm start | league | decisions | minutes |", "|---|---|---|---|---|---|"]
    decisions, minutes = lineage_budget(stages)
    row_minutes = shares_rounded([s["minutes"] for s in stages])[0]
    for i, (st, row) in enumerate(zip(stages, row_minutes, strict=True), 1):
        start = {"none": "none (from scratch)", "equity": "the `equity` clone"}.get(st["warm_start"],
                                                                                  f"`{st['warm_start']}`")
        command = "<br>".join(f"`{c}`" for c in st["commands"])
        lines.append(f"| {i} | {command} | {start} | `{st['league_mix']}` | {st['decisions']:,} | "
                     f"{row:.1f} |")
    lines += ["", f"Total: **{decisions:,} decisions, {minutes:.1f} minutes** of `mus train` on this machine. "
              "Best responses that a stage's league plays (policy files in its `league`) were trained by "
              "`mus exploit`; their time is not in this total."]
    first = stages[0]
    if first["warm_start"] == "none" and first.get("beats_rule"):
        b = first["beats_rule"]
        lines += ["", f"Stage 1 (from scratch, no warm start) first beat `rule` with p < 0.01 in stones and in games "
                  f"at **{b['minutes']:.1f} minutes** ({b['decisions']:,.0f} decisions; {b['stones']:+.2f} "
                  f"stones/hand, game win rate {b['win']:.3f} in its in-training evaluation)."]
    return lines


def _probe_lines(probes: dict[str, Any]) -> list[str]:
    """The card's exploitability section."""
    best, best_win = probes["max"], probes["max_win"]
    lines = ["## Exploitability", "",
             "Best responses trained against the frozen policy by `mus exploit` (each probe's gain is held out: "
             "20,000 duplicate hands and 2,000 games on deals of its own). Every figure is a **lower bound** on "
             "the policy's exploitability: more seeds, starts or training can only find more.", "",
             "| start | seed | decisions | gain, stones/hand | 95% CI | greedy gain | game win rate | 95% CI |",
             "|---|---|---|---|---|---|---|---|"]
    for r in probes["probes"]:
        lines.append(f"| {r['start']} | {r['seed']} | {r['decisions']:,} | {r['stones']:+.3f} | "
                     f"[{r['stones_lo']:+.3f}, {r['stones_hi']:+.3f}] | {r['greedy_stones']:+.3f} | {r['win']:.3f} | "
                     f"[{r['win_lo']:.3f}, {r['win_hi']:.3f}] |")
    lines += ["", f"Largest gain **{best['stones']:+.3f}** stones/hand ({best['start']} start, seed {best['seed']}); "
              f"largest game win rate **{best_win['win']:.3f}** ({best_win['start']} start, seed {best_win['seed']}); "
              f"spread of the gains {probes['spread']:.3f} over {probes['n']} probes.", "", "Commands:", ""]
    return lines + [f"- `{c}`" for c in probes["commands"]]


def previous_agent(path: str | Path, net: Any) -> dict[str, Any] | None:
    """What the card of a newly shipped policy ``net`` compares itself with: the agent in ``path`` that it
    replaces (its command, warm start, budget, evaluation rows and probes). When ``path`` holds these very weights
    (a run shipped again), that file's own ``previous`` is kept. None where there is no readable file there."""
    try:
        blob = load_policy_file(Path(path))
        old = build_net(blob, Path(path))
    except (OSError, ValueError):
        return None
    meta, digest = dict(blob.get("meta") or {}), parameters_digest(old)
    if digest == parameters_digest(net):
        return meta.get("previous")
    args = meta.get("args", {})
    recipe = meta.get("recipe") or {}
    return {"command": recipe.get("command") or meta.get("command", "?"), "warm_start": args.get("warm_start", "?"),
            "decisions": meta.get("decisions"), "minutes": meta.get("minutes"), "made": made_text(meta),
            "evaluation": meta.get("evaluation", []), "exploitability": meta.get("exploitability"),
            "parameters_sha256": digest}


def made_text(meta: dict[str, Any]) -> str:
    """What it took to make a shipped policy, in one line of its card: the whole lineage's budget (``--ancestor``
    stages), the whole recipe's (``mus league``: its training and best responses, all of its minutes), or the run's
    own."""
    if stages := meta.get("lineage"):
        decisions, minutes = lineage_budget(stages)
        return (f"{decisions:,} decisions, {minutes:.1f} minutes in {len(stages)} stages; first warm start "
                f"{stages[0]['warm_start']}")
    if recipe := meta.get("recipe"):
        return (f"{recipe['decisions']:,} decisions of training and {recipe['probe_decisions']:,} of best responses, "
                f"{recipe['minutes']:.1f} minutes in one `mus league` command; first warm start "
                f"{recipe['first_warm_start']}")
    minutes = meta.get("minutes")
    return (f"{meta.get('decisions') or 0:,} decisions, {'?' if minutes is None else format(minutes, '.0f')} "
            f"minutes; warm start {meta.get('args', {}).get('warm_start') or meta.get('warm_start', '?')}")


def _compare_lines(meta: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """The card's before/after section: this policy against the one it replaced, on the same measures."""
    before = meta["previous"]
    old_rows = {(r["play"], r["opponent"]): r for r in before.get("evaluation", [])}

    lines = ["## Compared with the agent it replaced", "",
             f"Before: `{before.get('command', '?')}`. Both evaluated the same way (duplicate, deal seed "
             f"{meta.get('eval_seed', '?')} for this one); probes are lower bounds.", "",
             "| measure | before | now |", "|---|---|---|",
             f"| training | {before.get('made') or made_text(before)} | {made_text(meta)} |"]
    for r in rows:
        old = old_rows.get((r["play"], r["opponent"]))
        if old is not None:
            lines.append(f"| {r['play']} vs {r['opponent']}: stones/hand, game win rate | {old['stones']:+.3f}, "
                         f"{old['win']:.3f} | {r['stones']:+.3f}, {r['win']:.3f} |")

    def probe(p: dict[str, Any] | None, key: str, field: str, fmt: str) -> str:
        if not p:
            return "not probed"
        best = p[key]
        return f"{format(best[field], fmt)} ({best['start']} start, seed {best['seed']}; {p['n']} probes)"

    first = (meta.get("lineage") or [{}])[0]
    if first.get("warm_start") == "none" and first.get("beats_rule"):
        lines.append(f"| from scratch, first ahead of rule with p < 0.01 | "
                     f"{'warm-started' if before.get('warm_start') not in (None, 'none', '?') else '?'} | "
                     f"{first['beats_rule']['minutes']:.1f} minutes (stage 1) |")
    was, now = before.get("exploitability"), meta.get("exploitability")
    old_probes = {(r["start"], r["seed"]): r for r in (was or {}).get("probes", [])}
    for r in (now or {}).get("probes", []):
        old = old_probes.get((r["start"], r["seed"]))
        if old is not None:
            lines.append(f"| probe from the {r['start']} start, seed {r['seed']}: gain, game win rate | "
                         f"{old['stones']:+.3f}, {old['win']:.3f} ({old['decisions']:,} decisions) | "
                         f"{r['stones']:+.3f}, {r['win']:.3f} ({r['decisions']:,} decisions) |")
    lines.append(f"| largest probe gain, stones/hand | {probe(was, 'max', 'stones', '+.3f')} | "
                 f"{probe(now, 'max', 'stones', '+.3f')} |")
    lines.append(f"| largest probe game win rate | {probe(was, 'max_win', 'win', '.3f')} | "
                 f"{probe(now, 'max_win', 'win', '.3f')} |")
    return lines


def _fmt_p(p: float) -> str:
    return "< 1e-6" if p < 1e-6 else f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def _policy_of(meta: dict[str, Any]) -> str:
    """Which policy file of the run was shipped (``--policy`` of the ship command, ``policy.pt`` by default)."""
    words = str(meta.get("ship_command", "")).split()
    return words[words.index("--policy") + 1] if "--policy" in words[:-1] else "policy.pt"


def _warm_start_text(args: dict[str, Any], lineage: bool) -> str:
    """The card's warm-start line: behaviour cloning, none, or an earlier run's policy."""
    start = args.get("warm_start", "?")
    if start == "equity":
        return f"behaviour cloning of `equity` ({args.get('bc_decisions', 0):,} decisions)"
    if start in ("none", "?"):
        return str(start)
    return f"the policy `{start}`" + (" (see the lineage below)" if lineage else "")


def _preset_text(meta: dict[str, Any]) -> str:
    """The card's preset: the one the command named, or none (the command's flags over the trainer's defaults)."""
    if "--preset" in str(meta.get("command", "")).split():
        return f"preset: `{meta.get('run', {}).get('preset', '?')}`"
    return "no preset (the command's flags over the trainer's defaults of its day)"


#: An absolute path of two or more parts in the card's text (a folder of the machine that made the policy).
_ABSOLUTE = re.compile(r"(?<![\w./])/[A-Za-z_][\w.-]*(?:/[\w.-]+)+")


def _kept_lines(text: str, lineage: bool) -> list[str]:
    """The card's section on the files it names that the repository does not keep (none: no section)."""
    paths = sorted(set(_ABSOLUTE.findall(text)))
    if not paths:
        return []
    common = os.path.commonpath(paths)
    which = f"every path under `{common}/`" if common != "/" else f"such as `{paths[0]}`"
    rebuild = ("run the stages' commands in order, each with the policy of the stage before as `--warm-start` and, "
               "in its `--league-mix`, the `--out` folders of `mus exploit` runs against that policy in place of the "
               "best responses it names; then `mus ship-agent RUN --exploit PROBES/exploit_seeds.json --ancestor "
               "EARLIER_RUN ...`" if lineage else
               "run the command above, then `mus ship-agent RUN --exploit PROBES/exploit_seeds.json`")
    return ["## What is kept", "",
            f"The folders named above outside this repository ({which}) were the training machine's and are not "
            "kept. The repository keeps the shipped weights with every command, setting and figure of this card "
            "(`agents/data/ppo.pt`, its `meta`), from which `mus ship-agent --card-only` rewrites the card. To make "
            f"a policy by the same recipe, {rebuild}; `mus league` runs rounds of this kind in one command."]


def _run_lines(meta: dict[str, Any]) -> list[str]:
    """The card's "How it was made" for a policy of one ``mus train`` run (its command, settings and budget)."""
    run = meta.get("run", {})
    args = meta.get("args", {})
    network, game = _network_lines(meta)
    return [
        f"- Command: `{meta.get('command', '?')}`",
        f"- Seed: {args.get('seed', '?')}; {_preset_text(meta)}",
        *([f"- Stopped and resumed (exactly, from its checkpoint) {len(run['sessions']) - 1} time(s): "
           + "; ".join(f"`{x.get('command', '?')}` at update {x.get('from_update', '?')}" for x in run["sessions"][1:])]
          if len(run.get("sessions", [])) > 1 else []),
        f"- Warm start: {_warm_start_text(args, bool(meta.get('lineage')))}",
        network,
        f"- League: `{args.get('league_mix', '?')}`; snapshot every {args.get('snapshot_every', '?')} updates, "
        f"pool of {args.get('pool_size', '?')}",
        f"- Rewards: {args.get('stones_coef', '?')} × stones/target per hand + {args.get('game_coef', '?')} × "
        "game outcome (±1)",
        f"- Training: {meta.get('decisions', 0):,} environment decisions in {meta.get('updates', '?')} updates, "
        f"{meta.get('minutes', float('nan')):.1f} minutes of wall time (evaluations included)",
        f"- Machine: {run.get('machine', '?')}; torch {run.get('torch', '?')}, "
        f"{run.get('torch_threads') or args.get('torch_threads', '?')} torch thread(s)",
        game,
        f"- mus-env observation version: OBS_DIM {meta.get('arch', {}).get('obs_dim', '?')}, "
        f"{meta.get('arch', {}).get('num_actions', '?')} actions", "",
        "Every setting is in `meta[\"args\"]` of `agents/data/ppo.pt` "
        "(`agents.policy.load_policy_file(...)[\"meta\"]`).", ""
    ]


def _network_lines(meta: dict[str, Any]) -> list[str]:
    """The card's lines on the network and the game it was trained for (``meta["args"]`` of its training)."""
    args, arch = meta.get("args", {}), meta.get("arch", {})
    return [f"- Network: MLP {arch.get('obs_dim', '?')} → {' → '.join(map(str, args.get('hidden', [])))} "
            f"→ {arch.get('num_actions', '?')} logits + value; {meta.get('parameters', '?'):,} parameters",
            f"- Game: {args.get('kings', '?')} kings, target {args.get('target', '?')} (training capped mus rounds at "
            f"{args.get('max_mus_rounds', '?')}"
            + (f" and a lance's stake at {args['max_stake']} (`--max-stake`)" if args.get("max_stake") else "")
            + "; evaluation plays uncapped)"]


def _recipe_lines(meta: dict[str, Any]) -> list[str]:
    """The card's "How it was made" for a policy kept by ``mus league`` (:func:`read_recipe`): the one command, its
    wall time, what it trained and probed, and its table of rounds."""
    r = meta["recipe"]
    resumed = "".join(f"; resumed (exactly, step by step) with `{c}`" for c in r.get("resumed_with", []))
    return [
        f"- Command: `{r['command']}`{resumed}",
        f"- Wall time: **{r['minutes']:.1f} minutes** on {r.get('machine', '?')} (every training, probe, meta-game "
        "and report of the recipe" + (f", the {r['replica_minutes_outside']:.1f} minutes of replicas run by a command "
                                      "of their own included" if r.get("replica_minutes_outside") else "")
        + "; the measuring probes below are not included)",
        f"- Trained: {r['train_decisions']:,} decisions of `mus train` in {r['rounds'] + 1} stages (round 0, then "
        f"{r['rounds']} rounds, each warm-started from the one before, its league from the Nash mixture of the "
        "population)" + (f", {r['replicas']} more run(s) of them with other seeds ({r['replica_decisions']:,} "
                         "decisions)" if r.get("replicas") else "")
        + (f" and {r['distill_decisions']:,} decisions of `mus distill`" if r.get("distill_decisions") else "")
        + (f", then {r['refine_decisions']:,} decisions of `mus train` of the distilled network against its own "
           "probes" if r.get("refine_decisions") else "")
        + f"; probed: {r['probe_decisions']:,} decisions of best responses",
        f"- First stage's warm start: {_warm_start_text({'warm_start': r.get('first_warm_start', '?')}, False)}",
        f"- Kept: {r['kept']}, the candidate whose best responses gained least (probes that never trained it)",
        *_network_lines(meta),
        f"- mus-env observation version: OBS_DIM {meta.get('arch', {}).get('obs_dim', '?')}, "
        f"{meta.get('arch', {}).get('num_actions', '?')} actions", "",
        "The recipe's rounds (its `recipe.md`; margins on its own deals, probe gains at the recipe's probe budget"
        + _rival_ppo_text(meta) + "):", "", *r["table"], ""]


def _rival_ppo_text(meta: dict[str, Any]) -> str:
    """What ``ppo`` is in a recipe's rounds table when it was a rival: the agent shipped when the recipe ran (the
    one this policy replaced, when its weights are those)."""
    digest = (meta.get("recipe") or {}).get("rivals", {}).get("ppo")
    if not digest:
        return ""
    replaced = digest == (meta.get("previous") or {}).get("parameters_sha256")
    return ("; `ppo` there is the agent shipped when the recipe ran" + (", the one this policy replaced"
                                                                         if replaced else ""))


def write_card(path: Path, meta: dict[str, Any], rows: list[dict[str, Any]]) -> Path:
    """The model card (markdown) from the shipped file's ``meta`` and the evaluation rows."""
    lines = [
        "# Model card: `ppo`, the shipped mus-env policy", "",
        ("One network fitted by `mus distill` (`experiments/population/distill.py`) to the mixture of masked PPO "
         "policies trained by self-play with a league on `VectorMusEnv` (`experiments/train/ppo.py`)"
         + (", then trained against its own best responses." if (meta.get("recipe") or {}).get("refined") else ".")
         if (meta.get("recipe") or {}).get("distilled") else
         "A masked PPO policy trained by self-play with a league on `VectorMusEnv` (`experiments/train/ppo.py`).")
        + " Load it with `agents.make_agent(\"ppo\")` "
        "(`greedy=True` for argmax play); use it as `ppo` in `mus tournament` and `mus play`.", "",
        "## How it was made", "",
        *(_recipe_lines(meta) if meta.get("recipe") else _run_lines(meta)),
        "## Evaluation", "",
        f"Duplicate, `{meta.get('ship_command', 'mus ship-agent')}` (deal seed "
        f"{meta.get('eval_seed', '?')}, disjoint from training; the weights are the run's "
        f"`{_policy_of(meta)}`): each deal is played twice with the seats swapped. Stones/hand is ppo minus the "
        "baseline (an accepted órdago counts as the stones the winners lacked); the game win rate is over paired "
        "games. 95% confidence intervals; p: two-sided, against 0 stones and 0.5 win rate.", "",
        "| play | opponent | hands | stones/hand | 95% CI | p | games | win rate | 95% CI | p |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['play']} | {r['opponent']} | {r['hands']:,} | {r['stones']:+.3f} | "
                     f"[{r['stones_lo']:+.3f}, {r['stones_hi']:+.3f}] | {_fmt_p(r['stones_p'])} | {r['games']:,} | "
                     f"{r['win']:.3f} | [{r['win_lo']:.3f}, {r['win_hi']:.3f}] | {_fmt_p(r['win_p'])} |")
    lines += ["", "Bidding rates in the duplicate hands (envido and órdago per betting decision, no quiero per answer "
              "to a bet), ppo / the baseline, so that a degenerate bidder is visible:", "",
              "| play | opponent | envido | órdago | no quiero |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['play']} | {r['opponent']} | {r['envido_rate']:.3f} / {r['opp_envido_rate']:.3f} | "
                     f"{r['ordago_rate']:.3f} / {r['opp_ordago_rate']:.3f} | "
                     f"{r['no_quiero_rate']:.3f} / {r['opp_no_quiero_rate']:.3f} |")
    if meta.get("lineage"):
        lines += [""] + _lineage_lines(meta["lineage"])
    if meta.get("exploitability"):
        lines += [""] + _probe_lines(meta["exploitability"])
    if meta.get("previous"):
        lines += [""] + _compare_lines(meta, rows)
    kept = _kept_lines("\n".join(lines), bool(meta.get("lineage")))
    lines += ([""] + kept if kept else []) + ["", "## Limits", "",
              "- Trained and evaluated with 8 kings and a 40-stone game; other variants are untested.",
              "- Beating the baselines is not low exploitability: a best response trained against this policy may "
              "win more than they do.",
              "- Greedy play against itself can raise forever (Mus has no cap on raises); play it sampled in "
              "self-play, or cap the stakes with `MusConfig(max_stake=N)` as training does.", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def read_recipe(folder: Path) -> dict[str, Any] | None:
    """What the card says of a policy kept by ``mus league`` (a recipe's ``--out`` folder, ``recipe.json``): its
    command and the resumes, wall time (with the time of any replica run by a command of its own), machine, what
    it trained (rounds, replicas, distillation: ``decisions`` in all) and probed, which candidate it kept, and the
    table of its ``recipe.md``; with ``stages`` (each round's training folder, decisions and minutes, for the
    curve) and ``args_policy`` (the policy file whose training settings the card gives: the kept round's, or for a
    distilled policy the round it started from). Steps are found under ``folder`` whatever folder the recipe ran
    in. None where ``folder`` holds no ``recipe.json``.

    Raises:
        ValueError: the recipe cannot be read or has not finished (no policy kept yet); the message says how to
            finish it.
    """
    path = folder / STATE_NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        steps, keep = data["steps"], data["steps"]["keep"]
        table = [x for x in (folder / "recipe.md").read_text(encoding="utf-8").splitlines() if x.startswith("|")]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{folder}: not a finished recipe of mus league ({e}); finish it with mus league --resume "
                         f"--out {folder}") from None

    rounds = trained_rounds(steps)
    try:                                # more runs of the rounds whose policies joined the distilled mixture
        replicas = [json.loads((replica_folder(folder, k) / STATE_NAME).read_text(encoding="utf-8"))
                    for k in range(1, int(data["settings"].get("distill_replicas", 1)))]
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{folder}: a replica of the recipe's rounds cannot be read ({e})") from None
    stages = [{"folder": str(folder / f"round{r}/train"), "decisions": int(steps[f"round{r}/train"]["decisions"]),
               "minutes": float(steps[f"round{r}/train"]["minutes"])} for r in rounds]
    distilled = steps.get("distilled/train")
    source = Path(distilled["start"] if keep.get("distilled") else keep["policy"])  # [replicaK/]roundN/train/policy.pt
    runs = [replica_folder(Path(), k).name for k in range(1, len(replicas) + 1)]     # their steps' names too
    tail = 4 if len(source.parts) >= 4 and source.parts[-4] in runs else 3      # a replica's round or the first run's
    args_policy = folder.joinpath(*source.parts[-tail:])
    train, distill = sum(s["decisions"] for s in stages), int(distilled["decisions"]) if distilled else 0
    refine = int(steps["refined/train"]["decisions"]) if "refined/train" in steps else 0
    replica_train = sum(int(v["decisions"]) for x in replicas for k, v in x["steps"].items() if k.endswith("/train"))
    outside = sum(max(0.0, float(steps[name]["minutes"]) - float(steps[name].get("minutes_here", 0.0)))
                  for name in runs)
    members = len(distilled["members"]) if distilled else 0
    mixture = (f"the last {members // (len(replicas) + 1)} rounds' policies of {len(replicas) + 1} runs" if replicas
               else f"the last {members} rounds' policies")
    return {"command": data.get("command", "mus league"), "resumed_with": list(data.get("resumed_with", [])),
            "minutes": float(data.get("seconds", 0.0)) / 60 + outside, "replica_minutes_outside": outside,
            "machine": data.get("machine", "?"),
            "rounds": len(rounds) - 1, "first_warm_start": str(data["settings"]["first"].get("warm_start", "?")),
            "train_decisions": train, "replicas": len(replicas), "replica_decisions": replica_train,
            "distill_decisions": distill, "refine_decisions": refine,
            "decisions": train + replica_train + distill + refine,
            "probe_decisions": sum(int(p["decisions"]) for x in [data, *replicas] for k, v in x["steps"].items()
                                   if k.endswith("/probes") for p in v["probes"]),
            "kept": (f"the network fitted to the mixture of {mixture} (`mus distill`), trained {refine:,} decisions "
                     "more against its own probes" if keep.get("refined") else
                     f"the network fitted to the mixture of {mixture} (`mus distill`)" if keep.get("distilled")
                     else f"round {keep['round']}"),
            "gains": keep["gains"], "wins": keep["wins"], "table": table,
            "distilled": bool(keep.get("distilled") or keep.get("refined")), "refined": bool(keep.get("refined")),
            "stages": stages, "args_policy": str(args_policy), "rivals": dict(data.get("rivals") or {})}


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
    lineage = read_lineage(_stage(train_meta, info, parameters_digest(net)), ancestors) if ancestors else []
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
            shipped = _stage({"args": meta.get("args", {}), "decisions": meta.get("decisions"),
                              "seconds": 60 * float(meta.get("minutes") or 0.0)}, meta.get("run", {}),
                             parameters_digest(net))
            meta["lineage"] = read_lineage(shipped, ancestors)
        save_policy(path, net, blob.get("config"), meta)
    return write_card(Path(dest) / "ppo.md", meta, meta["evaluation"])


def _read_evals(path: Path) -> list[dict[str, float]]:
    """The rows of an ``eval.csv`` as numbers (empty cells left out; no file: no rows)."""
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]


def lineage_evals(run: Path, lineage: Sequence[dict[str, Any]] = ()) -> tuple[list[dict[str, float]],
                                                                              list[tuple[float, float]]]:
    """The in-training evaluations of ``run`` (its ``eval.csv``), or with a ``lineage`` (:func:`read_lineage`,
    whose earlier stages name their ``folder``) of every stage in one list, each stage's ``decisions`` and
    ``minutes`` after the earlier stages' totals; and where each stage after the first starts, as (decisions,
    minutes)."""
    if not lineage:
        return _read_evals(run / "eval.csv"), []
    evals: list[dict[str, float]] = []
    starts: list[tuple[float, float]] = []
    decisions = minutes = 0.0
    for k, stage in enumerate(lineage):
        folder = Path(stage["folder"]) if k < len(lineage) - 1 else run
        if k:
            starts.append((decisions, minutes))
        evals += [{**e, "decisions": e.get("decisions", 0.0) + decisions, "minutes": e.get("minutes", 0.0) + minutes}
                  for e in _read_evals(folder / "eval.csv")]
        decisions, minutes = decisions + stage["decisions"], minutes + stage["minutes"]
    return evals, starts


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
