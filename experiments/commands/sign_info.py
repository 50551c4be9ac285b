"""``mus sign-info``: how much an agent's señas say about its hand
(:func:`experiments.evaluate.sign_info.sign_mutual_information`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from experiments.commands.options import ArgumentParser, check_agent_specs, check_writable_file, int_in
from experiments.evaluate.sign_info import format_table, sign_mutual_information
from mus_env import MusConfig
from mus_env.vector import warm_up

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus sign-info`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus sign-info",
                       description="Mutual information between a player's hand class and the señas token it "
                                   "makes (plug-in, Miller-Madow, shuffled baseline), per window kind.")
    p.add_argument("agent", metavar="POLICY_OR_SPEC", help="agent spec (rule, equity, random, ...) or a policy file")
    p.add_argument("--signals", choices=("free", "truthful"), default="free",
                   help="free: any token is legal (measures what the agent chooses to say); truthful: true ones only")
    p.add_argument("--signal-intercept-p", "--intercept", dest="intercept", type=float, default=0.0,
                   help="chance that an opponent sees a sign (signal_intercept_p)")
    p.add_argument("--games", type=int_in(1, 10**6), default=200, help="games played, the agent at all four seats")
    p.add_argument("--seed", type=int_in(0, 2**32 - 1), default=0, help="seed of the deals and the sampling")
    p.add_argument("--kings", type=int, choices=(8, 4), default=8, help="8 or 4 kings")
    p.add_argument("--target", type=int_in(1, 1000), default=40, help="stones that win a game")
    p.add_argument("--max-mus-rounds", type=int_in(-1, 1000, "-1: no cap"), default=6,
                   help="cap on discard rounds per hand (guards against an agent that says mus forever)")
    p.add_argument("--shuffles", type=int_in(1, 10_000), default=20, help="permutations of the shuffled baseline")
    p.add_argument("--tables", type=int_in(1, 2**16), default=256, help="tables stepped at once")
    p.add_argument("--out", default=None, help="write the results as JSON to this file")
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    args = p.parse_args(argv)
    if not 0.0 <= args.intercept <= 1.0:
        p.error(f"argument --signal-intercept-p: must be in [0, 1], got {args.intercept}")
    check_agent_specs(p, "POLICY_OR_SPEC", [args.agent])
    if args.out:
        check_writable_file(p, "--out", args.out)
    cfg = MusConfig(kings=args.kings, target=args.target, signals=args.signals, signal_intercept_p=args.intercept,
                    max_mus_rounds=None if args.max_mus_rounds < 0 else args.max_mus_rounds)
    warm_up(log=lambda line: print(f"mus sign-info: {line}", file=sys.stderr))   # the first use compiles
    result = sign_mutual_information(args.agent, cfg, args.games, args.seed, shuffles=args.shuffles,
                                     max_tables=args.tables)
    result["command"] = "mus sign-info " + " ".join(sys.argv[1:] if argv is None else argv)
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text if args.json else format_table(result))
    if args.out and not args.json:
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
