"""``mus signals``: what the señas channel is worth to an agent (RULES.md §8), by duplicate play.

For each agent and each interception probability ``p``, the agent with truthful signs (it signs its hand,
reads its partner's signs and the rival signs it intercepts) plays the same agent without signs
(``<agent>-nosigns``: it never signs, and reads the rival signs it intercepts) on the same deals, both
seatings, in a game with ``signals="truthful"`` and ``signal_intercept_p = p``. The gain is the signing
team's stones per hand minus the silent team's (single hands from 0-0 or random scores) and its share of
whole games won, with 95 % confidence intervals over deals. At ``p = 0`` it is what the partners learn from
each other; at ``p > 0`` the silent rivals also read a share of the signing team's signs, which costs it.

:func:`save` writes ``signals_value.json`` and ``signals_value.png`` (the gains with their intervals) to a folder,
and :func:`markdown_table` gives the table the command prints (the README's "value of information" table is made
from the JSON by ``python -m experiments.tools.update_docs --signals FILE``).

Example (:mod:`experiments.commands.signals`):
    mus signals --agents rule,equity --intercept 0,0.3 --hands 20000 --games 2000
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents import spec_label
from experiments.evaluate.deals import make_deals
from mus_env import MusConfig

__all__ = ["signals_value", "markdown_table", "plot", "save"]


def signals_value(agents: Sequence[str], intercepts: Sequence[float], hands: int, games: int, seed: int = 0,
                  kings: int = 8, target: int = 40, max_tables: int = 2048,
                  progress: bool = True) -> list[dict[str, Any]]:
    """Duplicate results of ``agent`` (truthful signs) vs ``agent-nosigns`` for every agent and ``p``.

    Returns:
        One dict per (agent, p): ``agent``, ``intercept``, ``hands`` and ``games`` (deals), ``stones`` /
        ``stones_low`` / ``stones_high`` (stones per hand, signs minus no signs, 95 % CI), ``win_rate`` /
        ``win_low`` / ``win_high`` (the signing side's share of games), ``seconds``.
    """
    from agents import make_agent
    from experiments.evaluate.duplicate import play_pair

    hand_deals = make_deals(hands, seed, target) if hands > 0 else None
    game_deals = make_deals(games, seed + 1, target) if games > 0 else None
    rows: list[dict[str, Any]] = []
    for spec in agents:
        for p in intercepts:
            cfg = MusConfig(kings=kings, target=target, signals="truthful", signal_intercept_p=float(p))
            a, b = make_agent(spec), make_agent(f"{spec}-nosigns")
            t0 = time.perf_counter()
            row: dict[str, Any] = {"agent": spec, "intercept": float(p), "hands": hands, "games": games}
            if hand_deals is not None:
                res = play_pair(a, b, hand_deals, mode="hands", config=cfg, max_tables=max_tables, seed=seed)
                row["stones"], row["stones_low"], row["stones_high"] = res.mean_diff()
            if game_deals is not None:
                res = play_pair(a, b, game_deals, mode="games", config=cfg, max_tables=max_tables, seed=seed)
                row["win_rate"], row["win_low"], row["win_high"] = res.game_win_rate()
            row["seconds"] = time.perf_counter() - t0
            rows.append(row)
            if progress:
                print(f"{spec} p={p:g}: " + ", ".join(
                    f"{k} {row[k]:+.3f}" for k in ("stones", "win_rate") if k in row) + f" ({row['seconds']:.0f} s)",
                    flush=True)
    return rows


def _fmt(row: dict[str, Any], key: str, low: str, high: str, pct: bool = False) -> str:
    if key not in row:
        return "-"
    if pct:
        return f"{100 * row[key]:.1f} % [{100 * row[low]:.1f}, {100 * row[high]:.1f}]"
    return f"{row[key]:+.2f} [{row[low]:+.2f}, {row[high]:+.2f}]"


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The results as a Markdown table (one line per agent and interception probability)."""
    lines = ["| agent | intercept p | stones/hand, signs − no signs [95 % CI] | games won with signs [95 % CI] |",
             "|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r['agent']}` | {r['intercept']:g} | {_fmt(r, 'stones', 'stones_low', 'stones_high')} | "
                     f"{_fmt(r, 'win_rate', 'win_low', 'win_high', pct=True)} |")
    return "\n".join(lines)


def plot(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Bar chart of the stones-per-hand gains with their intervals, one group per agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if "stones" in r]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(6, 3.5))
    labels = [f"{spec_label(r['agent'], 24)}\np={r['intercept']:g}" for r in rows]
    y = [r["stones"] for r in rows]
    err = [[r["stones"] - r["stones_low"] for r in rows], [r["stones_high"] - r["stones"] for r in rows]]
    ax.bar(range(len(rows)), y, yerr=err, capsize=4, color=["C0" if r["intercept"] == 0 else "C1" for r in rows])
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(range(len(rows)), labels)
    ax.set_ylabel("stones/hand, signs − no signs")
    ax.set_title("Value of truthful señas (duplicate, 95 % CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save(rows: Sequence[dict[str, Any]], out: str | Path, meta: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``{"meta": meta, "rows": rows}`` to ``OUT/signals_value.json`` and the bar chart to
    ``OUT/signals_value.png`` (made if needed; the chart only when some row has hands); returns both paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "signals_value.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    plot(rows, out / "signals_value.png")
    return out / "signals_value.json", out / "signals_value.png"
