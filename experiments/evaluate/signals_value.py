"""``mus signals``: what the señas channel is worth to an agent (RULES.md §8), by duplicate play.

For each agent and each interception probability ``p``, the agent with truthful signs (it signs its hand,
reads its partner's signs and the rival signs it intercepts) plays the same agent without signs
(``<agent>-nosigns``: it never signs, and reads the rival signs it intercepts) on the same deals, both
seatings, in a game with ``signals="truthful"`` and ``signal_intercept_p = p``. The gain is the signing
team's stones per hand minus the silent team's (single hands from 0-0 or random scores) and its share of
whole games won, with 95 % confidence intervals over deals. At ``p = 0`` it is what the partners learn from
each other; at ``p > 0`` the silent rivals also read a share of the signing team's signs, which costs it.

Writes ``signals_value.json`` and ``signals_value.png`` (the gains with their intervals) to ``--out``, and
prints a Markdown table (the README's "value of information" table is made from the JSON by
``python -m experiments.tools.update_docs --signals FILE``).

Example:
    mus signals --agents rule,equity --intercept 0,0.3 --hands 20000 --games 2000
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.cli import MAX_DEALS, ArgumentParser, check_agent_specs, check_writable_dir, int_in
from experiments.evaluate.deals import make_deals
from mus_env import MusConfig

__all__ = ["signals_value", "markdown_table", "main"]


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
    from experiments.evaluate.tournament import play_pair

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
    labels = [f"{r['agent']}\np={r['intercept']:g}" for r in rows]
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


def main(argv: list[str] | None = None) -> None:
    p = ArgumentParser(prog="mus signals", description="Value of the señas channel: agent with truthful signs vs "
                                                        "the same agent without signs, in duplicate.")
    p.add_argument("--agents", default="rule,equity", help="comma-separated agent specs (each plays its -nosigns twin)")
    p.add_argument("--intercept", default="0,0.3",
                   help="comma-separated interception probabilities (signal_intercept_p) to compare")
    p.add_argument("--hands", type=int_in(0, MAX_DEALS), default=20000, help="duplicate deals played as single hands")
    p.add_argument("--games", type=int_in(0, MAX_DEALS), default=2000, help="duplicate deals played as whole games")
    p.add_argument("--seed", type=int_in(0, 2**64 - 1), default=0, help="seed of the deal sets")
    p.add_argument("--kings", type=int, choices=(8, 4), default=8, help="8 or 4 kings")
    p.add_argument("--target", type=int_in(1, 1000), default=40, help="stones that win a game")
    p.add_argument("--tables", type=int_in(2, 2**20), default=2048, help="tables stepped at once")
    p.add_argument("--out", default="runs/signals", help="output directory (JSON, PNG)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    args = p.parse_args(argv)
    specs = [s.strip() for s in args.agents.split(",") if s.strip()]
    if not specs:
        p.error("argument --agents: give at least one agent spec")
    if any(s.lower().endswith("-nosigns") for s in specs):
        p.error("argument --agents: give the agents themselves; each plays its -nosigns twin")
    check_agent_specs(p, "--agents", specs)
    try:
        intercepts = [float(x) for x in args.intercept.split(",") if x.strip()]
    except ValueError:
        p.error(f"argument --intercept: comma-separated probabilities in [0, 1], got {args.intercept!r}")
    if not intercepts or not all(0.0 <= x <= 1.0 for x in intercepts):
        p.error(f"argument --intercept: comma-separated probabilities in [0, 1], got {args.intercept!r}")
    if args.hands <= 0 and args.games <= 0:
        p.error("nothing to play: give --hands N and/or --games N (N >= 1)")
    check_writable_dir(p, "--out", args.out)
    rows = signals_value(specs, intercepts, args.hands, args.games, seed=args.seed, kings=args.kings,
                         target=args.target, max_tables=args.tables, progress=not args.quiet)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"command": "mus signals " + " ".join(argv if argv is not None else __import__("sys").argv[1:]),
            "kings": args.kings, "target": args.target, "seed": args.seed, "signals": "truthful"}
    (out / "signals_value.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    plot(rows, out / "signals_value.png")
    print(markdown_table(rows))
    print(f"wrote {out / 'signals_value.json'}, {out / 'signals_value.png'}")


if __name__ == "__main__":
    main()
