"""Where a shipped policy came from: its training stages, their budget and curves, the recipe that kept it, and the
agent it replaces (the facts its model card gives, :mod:`experiments.population.ship_card`).

A policy warm-started from another run's policy (``mus train --warm-start RUN/policy.pt``) has a lineage: the
folders of the earlier runs (``mus ship-agent --ancestor RUN``, any order) are matched to each stage's warm start
by their weights' digest (:func:`read_lineage`), so a run that is not in the chain is refused. A policy kept by
``mus league`` is described by its recipe's folder instead (:func:`read_recipe`).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.policy import build_net, load_policy_file, parameters_digest
from experiments.evaluate.report_card import p_value
from experiments.population.recipe_state import STATE_NAME, replica_folder, trained_rounds

__all__ = ["FIRST_STAGES", "read_evals", "first_beats", "stage_record", "read_lineage", "shares_rounded",
           "lineage_budget", "lineage_evals", "made_text", "previous_agent", "read_recipe"]


#: Warm starts that are not a policy file: the first stage of a lineage.
FIRST_STAGES = ("none", "equity")


def read_evals(path: Path) -> list[dict[str, float]]:
    """The rows of an ``eval.csv`` as numbers (empty cells left out; no file: no rows)."""
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]


def first_beats(eval_csv: Path, opponent: str = "rule", alpha: float = 0.01) -> dict[str, float] | None:
    """The first in-training evaluation of a run (its ``eval.csv``) ahead of ``opponent`` with p < ``alpha`` both
    in stones/hand and in the game win rate: its ``minutes``, ``decisions``, ``stones`` and ``win``. None where
    the file or the opponent's columns are missing, or no evaluation got there."""
    try:
        for r in read_evals(eval_csv):
            x = {k: r[f"{opponent}_{k}"] for k in ("stones", "stones_lo", "stones_hi", "win", "win_lo", "win_hi")}
            if (x["stones"] > 0 and p_value(x["stones"], x["stones_lo"], x["stones_hi"], 0.0) < alpha
                    and x["win"] > 0.5 and p_value(x["win"], x["win_lo"], x["win_hi"], 0.5) < alpha):
                return {"minutes": r["minutes"], "decisions": r["decisions"], "stones": x["stones"], "win": x["win"]}
    except (OSError, KeyError, ValueError):
        return None
    return None


def stage_record(meta: dict[str, Any], info: dict[str, Any], digest: str, folder: Path | None = None) -> dict[str, Any]:
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

    ``shipped``: the last stage, as :func:`stage_record` builds it (its ``warm_start`` names the policy file it started
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
            found[digest] = (folder, {**stage_record(dict(blob.get("meta") or {}), info, digest, folder),
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


def lineage_evals(run: Path, lineage: Sequence[dict[str, Any]] = ()) -> tuple[list[dict[str, float]],
                                                                              list[tuple[float, float]]]:
    """The in-training evaluations of ``run`` (its ``eval.csv``), or with a ``lineage`` (:func:`read_lineage`,
    whose earlier stages name their ``folder``) of every stage in one list, each stage's ``decisions`` and
    ``minutes`` after the earlier stages' totals; and where each stage after the first starts, as (decisions,
    minutes)."""
    if not lineage:
        return read_evals(run / "eval.csv"), []
    evals: list[dict[str, float]] = []
    starts: list[tuple[float, float]] = []
    decisions = minutes = 0.0
    for k, stage in enumerate(lineage):
        folder = Path(stage["folder"]) if k < len(lineage) - 1 else run
        if k:
            starts.append((decisions, minutes))
        evals += [{**e, "decisions": e.get("decisions", 0.0) + decisions, "minutes": e.get("minutes", 0.0) + minutes}
                  for e in read_evals(folder / "eval.csv")]
        decisions, minutes = decisions + stage["decisions"], minutes + stage["minutes"]
    return evals, starts


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
