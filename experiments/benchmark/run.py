"""One row of ``mus benchmark`` end to end: train it (:mod:`experiments.benchmark.rows`), evaluate the result the
same way as every other row, and write its results file.

Stages, each kept in the row's folder (``OUT/<row>-seed<k>/``) and skipped when it is done, so that a stopped
row continues where it stopped (``mus benchmark run`` again with the same arguments):

1. ``train/``: the row's training for the budget (its own resume inside);
2. ``card.json``: ``mus evaluate``'s report card of the trained policy against ``rule`` and ``equity`` on the
   versioned deal set (``v1``: 20,000 deals as hands and 2,000 as games, each twice, seats swapped);
3. ``probe/``: the quick probe, a best response trained from the policy's own weights for 13M decisions
   (``mus exploit POLICY --warm-start agent --decisions 13000000``), measured on held-out deals;
4. ``results.json``: every column of the table (:data:`COLUMNS`), with the commands, versions and budget.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.benchmark.protocol import Budget
from experiments.benchmark.rows import row, trainer

__all__ = ["Evaluation", "EVALUATION", "TINY_EVALUATION", "run_row", "row_folder", "COLUMNS", "RESULTS_NAME"]

RESULTS_NAME = "results.json"
#: The columns of a results file the table reads.
COLUMNS = ("row", "seed", "framework", "algorithm", "budget_minutes", "train_minutes", "decisions", "policy",
           "vs_rule", "vs_equity", "probe", "wall_minutes", "curve", "versions", "settings", "commands", "evaluation")


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """How every row is measured."""

    deal_set: str = "v1"
    hands: int | None = None
    """None: the deal set's own sizes"""
    games: int | None = None
    opponents: tuple[str, ...] = ("rule", "equity")
    probe_decisions: int = 13_000_000
    probe_preset: str = "default"
    probe_hands: int = 20_000
    probe_games: int = 2_000
    probe_seed: int = 0


#: The benchmark's evaluation; :data:`TINY_EVALUATION` runs in seconds (tests).
EVALUATION = Evaluation()
TINY_EVALUATION = Evaluation(hands=16, games=4, probe_decisions=32 * 8 * 4, probe_preset="tiny", probe_hands=16,
                             probe_games=4)


def row_folder(out: str | Path, name: str, seed: int) -> Path:
    """Where row ``name`` with ``seed`` keeps its stages."""
    return Path(out) / f"{name}-seed{seed}"


def _card_row(card: dict[str, Any], opponent: str) -> dict[str, float]:
    rows = [r for r in card["rows"] if r["play"] == "sampled" and r["opponent"] == opponent]
    if not rows:
        return {}
    keys = ("stones", "stones_lo", "stones_hi", "stones_p", "win", "win_lo", "win_hi", "win_p", "hands", "abandoned")
    return {k: rows[0][k] for k in keys}


def run_row(name: str, budget: Budget, out: str | Path = "runs/benchmark", evaluation: Evaluation = EVALUATION,
            log: Callable[[str], None] = print, command: str | None = None) -> dict[str, Any]:
    """Train, evaluate and probe row ``name`` (continuing what a stopped run left), and write its results.

    Returns:
        The results (also in ``OUT/<row>-seed<k>/results.json``).

    Raises:
        ValueError: an unknown row or a bad budget.
        ImportError: the row's framework is not installed (the message names the extra).
    """
    from experiments.evaluate.report_card import report_card
    from experiments.population.exploit import probe

    info = row(name)
    train = trainer(name)
    folder = row_folder(out, name, budget.seed)
    folder.mkdir(parents=True, exist_ok=True)
    wall_path = folder / "wall.json"
    wall = json.loads(wall_path.read_text()) if wall_path.exists() else {}

    def timed(stage: str, work: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        result = work()
        if stage not in wall:
            wall[stage] = (time.perf_counter() - t0) / 60
            wall_path.write_text(json.dumps(wall))
        return result

    log(f"{name} (seed {budget.seed}): training for {budget.minutes:g} minutes")
    trained = timed("train", lambda: train(folder / "train", budget, log))
    card_path = folder / "card.json"
    if not card_path.exists():
        log(f"{name}: the report card ({evaluation.deal_set}) against {', '.join(evaluation.opponents)}")
        card = timed("card", lambda: report_card(trained.policy, deal_set=evaluation.deal_set,
                                                 opponents=evaluation.opponents, hands=evaluation.hands,
                                                 games=evaluation.games, name=name, log=log))
        card_path.write_text(json.dumps(card, indent=1))
    card = json.loads(card_path.read_text())
    probe_dir = folder / "probe"
    if not (probe_dir / "exploit.json").exists():
        log(f"{name}: the quick probe ({evaluation.probe_decisions:,} decisions from its own weights)")
        timed("probe", lambda: probe(trained.policy, out=probe_dir, decisions=evaluation.probe_decisions,
                                     warm_start="agent", seed=evaluation.probe_seed, preset=evaluation.probe_preset,
                                     eval_hands=evaluation.probe_hands, eval_games=evaluation.probe_games,
                                     resume=(probe_dir / "checkpoint.pt").exists(), log=log,
                                     torch_threads=budget.threads, progress=False))
    gain = json.loads((probe_dir / "exploit.json").read_text())["gain"]
    results = {
        "row": name, "seed": budget.seed, "framework": info.framework, "algorithm": info.algorithm,
        "budget_minutes": budget.minutes, "train_minutes": trained.minutes, "decisions": trained.decisions,
        "policy": trained.policy,
        "vs_rule": _card_row(card, "rule"), "vs_equity": _card_row(card, "equity"),
        "probe": {k: gain[k] for k in ("stones", "stones_lo", "stones_hi", "win", "hands", "abandoned") if k in gain},
        "wall_minutes": dict(wall), "curve": trained.curve, "versions": trained.versions,
        "settings": trained.settings,
        "commands": {"row": command or " ".join(["mus", "benchmark", "run", name, "--seed", str(budget.seed),
                                                  "--minutes", f"{budget.minutes:g}", "--out", shlex.quote(str(out))]),
                     "python": sys.version.split()[0]},
        "evaluation": dataclasses.asdict(evaluation), "tiny": budget.tiny,
        "when": time.strftime("%Y-%m-%d %H:%M"),
    }
    (folder / RESULTS_NAME).write_text(json.dumps(results, indent=1) + "\n")
    log(f"{name} (seed {budget.seed}): vs rule {results['vs_rule'].get('stones', float('nan')):+.3f}, vs equity "
        f"{results['vs_equity'].get('stones', float('nan')):+.3f}, probe gain {results['probe'].get('stones'):+.3f}; "
        f"wrote {folder / RESULTS_NAME}")
    return results
