"""What a tournament shows and leaves behind: progress bars, the printed tables, the run folder's files and plots.

* :func:`print_tables`: the ladder (saying what it is fitted on, and any head-to-head it reverses) and the pair
  results, as rich tables (plain text without rich);
* :func:`write_outputs`: ``pairs.csv`` (one :meth:`~experiments.evaluate.duplicate.PairResult.summary` row per pair
  and mode), ``ladder.csv``, ``results.json`` and the plots ``ladder.png`` and ``lances.png``, each written
  atomically;
* :class:`ProgressBar`: the rich progress bar of the round robins.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import spec_label
from experiments.evaluate.duplicate import PairResult
from experiments.evaluate.ratings import Ladder
from mus_env.observation import SLOT_NAMES
from mus_env.records import write_atomic, write_text_atomic

__all__ = ["ProgressBar", "write_outputs", "per_agent_lance_stones", "print_tables"]


class ProgressBar:
    """A rich progress bar of ``total`` steps (or nothing when disabled or rich is missing), used as a context
    manager: ``with ProgressBar(n, "hands") as bar: ... bar.advance(k)``."""

    def __init__(self, total: int, description: str, enabled: bool = True) -> None:
        self.total, self.description, self.enabled = total, description, enabled
        self._progress = None
        self._task = None

    def __enter__(self) -> ProgressBar:
        if self.enabled:
            try:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
            except ImportError:
                return self
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeRemainingColumn(), transient=False)
            self._progress.__enter__()
            self._task = self._progress.add_task(self.description, total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def advance(self, k: int) -> None:
        """Count ``k`` more steps done."""
        if self._progress is not None and k:
            self._progress.advance(self._task, k)

    def describe(self, text: str) -> None:
        """Replace the bar's description."""
        if self._progress is not None:
            self._progress.update(self._task, description=text)


def write_outputs(out: Path, names: Sequence[str], hand_results: list[PairResult],
                  game_results: list[PairResult], ladder: Ladder,
                  meta: dict[str, Any], plots: bool = True) -> dict[str, Path]:
    """Write ``pairs.csv``, ``ladder.csv``, ``results.json`` and (optionally) ``ladder.png``, ``lances.png``.

    Each file is written atomically (a temporary file, then a rename): a reader sees the previous file or the
    new one whole. ``results.json`` is strict JSON: a number that is not finite (the interval of one deal, a
    win rate with no games) is ``null``. Returns the files written, which ``results.json`` lists too.
    """
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for p in hand_results:
        rows.append({"mode": "hands", **p.summary()})
    for p in game_results:
        rows.append({"mode": "games", **p.summary()})
    files = {}
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("mode", "a", "b"), k))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys)
    w.writeheader()
    for r in rows:
        w.writerow(r)
    files["pairs"] = write_text_atomic(out / "pairs.csv", buf.getvalue())
    lance = per_agent_lance_stones(names, hand_results)
    order = ladder.order()
    buf = io.StringIO()
    w = csv.writer(buf)
    col = "elo" if ladder.unit == "Elo" else "stones_per_hand"
    w.writerow(["rank", "agent", col, f"{col}_se", *(f"{s}_stones_per_hand" for s in SLOT_NAMES)])
    for rank, n in enumerate(order, 1):
        digits = 1 if ladder.unit == "Elo" else 3
        w.writerow([rank, n, round(ladder[n][0], digits), round(ladder[n][1], digits),
                    *(round(float(v), 4) for v in lance.get(n, np.zeros(4)))])
    files["ladder"] = write_text_atomic(out / "ladder.csv", buf.getvalue())
    if plots:
        files.update(_plots(out, order, ladder, lance))
    files["json"] = out / "results.json"
    results = {"meta": meta, "rating": ladder.to_json(),
               "ladder": {n: {"rating": ladder[n][0], "se": ladder[n][1]} for n in order},
               "pairs": rows, "lance_stones_per_hand": {n: list(map(float, v)) for n, v in lance.items()},
               "files": sorted(str(f.name) for f in files.values())}
    write_text_atomic(files["json"], json.dumps(_strict_json(results), indent=2, allow_nan=False))
    return files


def _strict_json(v: Any) -> Any:
    """``v`` with numpy scalars made plain and every non-finite float replaced by None (JSON ``null``)."""
    if isinstance(v, dict):
        return {k: _strict_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_strict_json(x) for x in v]
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    return v


def per_agent_lance_stones(names: Sequence[str], results: list[PairResult]) -> dict[str, npt.NDArray[np.float64]]:
    """Mean stones per hand won by each agent's team in each lance slot, over all its hand matches."""
    acc: dict[str, list[npt.NDArray[np.float64]]] = {n: [] for n in names}
    for p in results:
        if not len(p.lance_stones):
            continue
        acc[p.a].append(p.lance_stones[..., 0].reshape(-1, 4))
        acc[p.b].append(p.lance_stones[..., 1].reshape(-1, 4))
    return {n: np.concatenate(v).mean(axis=0) for n, v in acc.items() if v}


def _plots(out: Path, order: Sequence[str], ladder: Ladder,
           lance: dict[str, npt.NDArray[np.float64]]) -> dict[str, Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = {}
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.5 * len(order)))
    y = np.arange(len(order))[::-1]
    ax.errorbar([ladder[n][0] for n in order], y, xerr=[1.96 * ladder[n][1] for n in order], fmt="o", capsize=4)
    ax.set_yticks(y, [spec_label(n) for n in order])         # whole specs in the tables, short ones here
    ax.set_xlabel(f"{ladder.unit} from duplicate {ladder.source}, 95% bootstrap interval")
    ax.set_title(f"mus-env ladder: {ladder.method}", fontsize=8, wrap=True)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    files["ladder_png"] = write_atomic(out / "ladder.png", lambda tmp: fig.savefig(tmp, dpi=120))
    plt.close(fig)
    if lance:
        names = [n for n in order if n in lance]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        width = 0.8 / max(len(names), 1)
        x = np.arange(4)
        for k, n in enumerate(names):
            ax.bar(x + k * width - 0.4 + width / 2, lance[n], width, label=spec_label(n))
        ax.set_xticks(x, ["grande", "chica", "pares", "juego/punto"])
        ax.set_ylabel("stones per hand won by the agent's team")
        ax.set_title("Stones per lance (duplicate hands)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        files["lances_png"] = write_atomic(out / "lances.png", lambda tmp: fig.savefig(tmp, dpi=120))
        plt.close(fig)
    return files


def print_tables(names: Sequence[str], hand_results: list[PairResult], game_results: list[PairResult],
                 ladder: Ladder) -> None:
    """Print the ladder (saying what it is fitted on, and any head-to-head it reverses) and the pair results
    (rich tables; plain text if rich is missing)."""
    notes = [f"Rating: {ladder.method}."]
    if ladder.contradictions:
        notes.append("The ladder reverses these head-to-head results (a cycle no single rating fits): "
                     + "; ".join(ladder.contradictions) + ".")
    if ladder.nash:
        notes.append(ladder.nash_text())
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is in the tools extra
        for n in ladder.order():
            print(f"{n:>12} {ladder[n][0]:8.2f} ± {1.96 * ladder[n][1]:.2f} {ladder.unit}")
        print("\n".join(notes))
        return
    console = Console()
    t = Table(title=f"Ladder: {ladder.unit} from duplicate {ladder.source}")
    for c in ("rank", "agent", ladder.unit, "95% CI"):
        t.add_column(c, justify="right", overflow="fold")
    fmt = ".0f" if ladder.unit == "Elo" else "+.2f"
    for rank, n in enumerate(ladder.order(), 1):
        r, se = ladder[n]
        t.add_row(str(rank), n, f"{r:{fmt}}", f"± {1.96 * se:{fmt.lstrip('+')}}")
    console.print(t)
    for note in notes:
        console.print(note, highlight=False)
    if hand_results:
        # narrow enough for an 80-column terminal; a cell that still does not fit folds, never loses digits
        t = Table(title="Duplicate hands: stones per hand, A minus B (rates A/B)")
        for c in ("A", "B", "deals", "A−B ± 95% CI", "envido", "órdago", "no quiero"):
            t.add_column(c, justify="right", overflow="fold")

        def rates(s: dict[str, Any], key: str) -> str:
            return "/".join(f"{s[f'{key}_{x}']:.2f}".removeprefix("0") for x in "ab")

        for p in hand_results:
            s = p.summary()
            t.add_row(p.a, p.b, str(s["deals"]), f"{s['mean_diff']:+.2f} ± {(s['ci_high'] - s['ci_low']) / 2:.2f}",
                      rates(s, "envido_rate"), rates(s, "ordago_rate"), rates(s, "no_quiero_rate"))
        console.print(t)
    if game_results:
        t = Table(title="Duplicate games: A's win rate over paired games")
        for c in ("A", "B", "deals", "win rate", "95% CI", "hands/game"):
            t.add_column(c, justify="right", overflow="fold")
        for p in game_results:
            w, lo, hi = p.game_win_rate()
            t.add_row(p.a, p.b, str(len(p.game_wins)), f"{w:.3f}", f"[{lo:.3f}, {hi:.3f}]",
                      f"{p.game_hands.mean():.1f}")
        console.print(t)
