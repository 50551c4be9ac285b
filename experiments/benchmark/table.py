"""The benchmark's table and learning curves, drawn from the rows' results files only.

:func:`collect` reads every ``OUT/<row>-seed<k>/results.json``; :func:`benchmark_markdown` writes the table
(one line per row and seed, then the rows ranked by their mean margin over the baseline they play worse
against); :func:`curves_figure` draws every row's learning curve against wall-clock minutes on one plot.
``mus update-docs`` renders the copy kept in ``docs/benchmark_results.json`` into docs/benchmarks.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from experiments.benchmark.rows import ROWS

__all__ = ["collect", "benchmark_markdown", "curves_figure", "ranking", "FIGURE"]


def collect(folder: str | Path) -> list[dict[str, Any]]:
    """Every finished row in ``folder`` (its ``*/results.json``), in the rows' order, then by seed.

    Raises:
        ValueError: a results file lacks a column the table needs (it names the file and the column).
    """
    from experiments.benchmark.run import COLUMNS, RESULTS_NAME

    out = []
    for path in sorted(Path(folder).glob(f"*/{RESULTS_NAME}")):
        data = json.loads(path.read_text(encoding="utf-8"))
        missing = [c for c in COLUMNS if c not in data]
        if missing:
            raise ValueError(f"{path}: not a benchmark results file (no {', '.join(missing)})")
        out.append(data)
    order = {name: k for k, name in enumerate(ROWS)}
    return sorted(out, key=lambda r: (order.get(r["row"], len(order)), r["row"], r["seed"]))


def _margin(m: dict[str, float]) -> str:
    if not m:
        return "–"
    dropped = int(m.get("abandoned", 0))
    return (f"{m['stones']:+.2f} [{m['stones_lo']:+.2f}, {m['stones_hi']:+.2f}]"
            + (f" ({dropped:,} deals dropped: endless raises)" if dropped else ""))


def _win(m: dict[str, float]) -> str:
    return f"{m['win']:.3f}" if m else "–"


def _wall(r: dict[str, Any]) -> str:
    w = r["wall_minutes"]
    return f"{w.get('train', 0):.0f} + {w.get('card', 0) + w.get('probe', 0):.0f}"


def ranking(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows ranked by the margin over the baseline each plays worse against: ``[{"row", "seeds", "vs_rule",
    "vs_equity", "worse", "probe"}]`` (means of the seeds' figures; ``worse`` is the lower of the two means, NaN
    when either is missing, and such a row ranks last).

    A row that learned only to beat one baseline (a best response to ``rule``) must not rank above one that
    beats both: the lower margin is the one a stranger's strategy would find first.
    """
    by_row: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_row.setdefault(r["row"], []).append(r)

    def mean(rs: list[dict[str, Any]], key: str) -> float:
        xs = [r[key]["stones"] for r in rs if r[key]]
        return float(np.mean(xs)) if xs else float("nan")

    rows = []
    for name, rs in by_row.items():
        vs_rule, vs_equity = mean(rs, "vs_rule"), mean(rs, "vs_equity")
        rows.append({"row": name, "seeds": len(rs), "vs_rule": vs_rule, "vs_equity": vs_equity,
                     "worse": float(np.minimum(vs_rule, vs_equity)), "probe": mean(rs, "probe")})
    return sorted(rows, key=lambda x: -x["worse"] if x["worse"] == x["worse"] else np.inf)


#: The learning curves' figure beside the docs page (drawn by ``mus benchmark table --docs``).
FIGURE = "benchmark-curves.png"


def benchmark_markdown(results: Sequence[dict[str, Any]], figure: str | None = FIGURE) -> str:
    """The table of the docs page (markdown), with the curves' ``figure`` under it when there are results."""
    if not results:
        return ("No row has been measured yet: `mus benchmark run ROW` runs one, `mus benchmark table --docs` puts "
                "it here.\n")
    budgets = sorted({r["budget_minutes"] for r in results})
    lines = ["| row | seed | decisions | vs `rule` (stones/hand, 95% CI) | win | vs `equity` | win | "
             "quick probe's gain | minutes (train + evaluation) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['row']}{' (tiny)' if r.get('tiny') else ''} | {r['seed']} | {r['decisions']:,} | "
                     f"{_margin(r['vs_rule'])} | {_win(r['vs_rule'])} | {_margin(r['vs_equity'])} | "
                     f"{_win(r['vs_equity'])} | {_margin(r['probe'])} | {_wall(r)} |")
    lines += ["", "Mean over seeds, ranked by the margin over the baseline each row plays worse against:", "",
              "| rank | row | seeds | vs `rule` | vs `equity` | the worse of the two | probe's gain |",
              "|---|---|---|---|---|---|---|"]
    for k, x in enumerate(ranking(results), 1):
        lines.append(f"| {k} | {x['row']} | {x['seeds']} | {x['vs_rule']:+.2f} | {x['vs_equity']:+.2f} | "
                     f"**{x['worse']:+.2f}** | {x['probe']:+.2f} |")
    # one entry per package: a local label ("2.13.0+cpu", as some rows record torch) is not another version
    versions = sorted({f"{k} {str(v).split('+')[0]}" for r in results for k, v in r["versions"].items()})
    lines += ["", f"Budget: {', '.join(f'{b:g}' for b in budgets)} minutes of training per run. Versions: "
              f"{', '.join(versions)}. Each row's command is in its results file (`commands`)."]
    if figure:
        lines += ["", f"![learning curves of every run against wall-clock minutes]({figure})"]
    return "\n".join(lines) + "\n"


def curves_figure(results: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Every run's learning curve (stones per hand against ``rule``, 95% band) against training minutes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.8), dpi=120)
    ax = fig.add_subplot()
    colors: dict[str, Any] = {}
    cycle = iter([f"C{k}" for k in range(10)])
    for r in results:
        color = colors.setdefault(r["row"], next(cycle, "k"))
        c = r["curve"]
        if not c:
            continue
        x = [p["minutes"] for p in c]
        y = [p["vs_rule"] for p in c]
        ax.plot(x, y, marker="o", ms=3, color=color, ls="-" if r["seed"] == 0 else "--",
                label=f"{r['row']} (seed {r['seed']})")
        ax.fill_between(x, [p["vs_rule_lo"] for p in c], [p["vs_rule_hi"] for p in c], color=color, alpha=0.12)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("training minutes (wall clock, 2 cores)")
    ax.set_ylabel("stones per hand vs rule (duplicate)")
    ax.set_title("mus benchmark: learning curves")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    return path
