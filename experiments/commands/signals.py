"""``mus signals``: the value of the señas channel (:func:`experiments.evaluate.signals_value.signals_value`)."""

from __future__ import annotations

import sys

from experiments.commands.options import (
    MAX_DEALS,
    ArgumentParser,
    agent_list_options,
    check_agent_specs,
    check_writable_dir,
    int_in,
    read_agent_list,
)
from experiments.evaluate.signals_value import markdown_table, save, signals_value
from mus_env.vector import warm_up

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus signals`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus signals", description="Value of the señas channel: agent with truthful signs vs "
                                                        "the same agent without signs, in duplicate.")
    agent_list_options(p, "--agents", "--agent", "rule,equity", "agent specs (each plays its -nosigns twin)")
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
    option, specs = read_agent_list(p, args, "--agents", "--agent", "rule,equity")
    if not specs:
        p.error(f"argument {option}: give at least one agent spec")
    if any(s.lower().endswith("-nosigns") for s in specs):
        p.error(f"argument {option}: give the agents themselves; each plays its -nosigns twin")
    check_agent_specs(p, option, specs)
    try:
        intercepts = [float(x) for x in args.intercept.split(",") if x.strip()]
    except ValueError:
        p.error(f"argument --intercept: comma-separated probabilities in [0, 1], got {args.intercept!r}")
    if not intercepts or not all(0.0 <= x <= 1.0 for x in intercepts):
        p.error(f"argument --intercept: comma-separated probabilities in [0, 1], got {args.intercept!r}")
    if args.hands <= 0 and args.games <= 0:
        p.error("nothing to play: give --hands N and/or --games N (N >= 1)")
    check_writable_dir(p, "--out", args.out)
    warm_up(1, log=None if args.quiet else lambda line: print(f"mus signals: {line}", file=sys.stderr))
    rows = signals_value(specs, intercepts, args.hands, args.games, seed=args.seed, kings=args.kings,
                         target=args.target, max_tables=args.tables, progress=not args.quiet)
    meta = {"command": "mus signals " + " ".join(argv if argv is not None else sys.argv[1:]),
            "kings": args.kings, "target": args.target, "seed": args.seed, "signals": "truthful"}
    json_path, png_path = save(rows, args.out, meta)
    print(markdown_table(rows))
    print(f"wrote {json_path}, {png_path}")


if __name__ == "__main__":
    main()
