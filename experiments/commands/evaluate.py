"""``mus evaluate AGENT``: the agent's report card (:mod:`experiments.evaluate.report_card`) as JSON and markdown."""

from __future__ import annotations

import re
import shlex
import sys

from experiments.commands.options import (
    MAX_DEALS,
    ArgumentParser,
    apply_torch_threads,
    check_agent_specs,
    check_creatable_dir,
    int_in,
    split_specs,
    torch_threads_option,
)
from experiments.evaluate.report_card import DEAL_SETS, OPPONENTS, card_markdown, report_card, save_card
from mus_env.vector import warm_up

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus evaluate`` with ``argv`` (default: the process's arguments)."""
    argv = sys.argv[1:] if argv is None else argv
    p = ArgumentParser(prog="mus evaluate",
                       description="The standard report card of an agent: duplicate results against every baseline "
                                   "and ppo on a versioned deal set (stones/hand and game win rate with 95% CIs and "
                                   "p-values, bidding rates), its place in the reference ladder, optionally an "
                                   "exploitability probe; written as card.json and card.md.")
    p.add_argument("agent", help="any agent spec: rule, equity, ppo, runs/train/policy.pt, model.zip, my_bot.py:MyBot")
    p.add_argument("--deal-set", choices=tuple(DEAL_SETS), default="v1",
                   help="the versioned deal set: " + ", ".join(f"{k} ({h:,} hands, {g:,} games, seed {s})"
                                                              for k, (s, h, g) in DEAL_SETS.items()))
    p.add_argument("--hands", type=int_in(1, MAX_DEALS), default=None,
                   help="deals played as single hands (default: the deal set's; another size makes a custom card)")
    p.add_argument("--games", type=int_in(1, MAX_DEALS), default=None, help="deals played as whole games")
    p.add_argument("--opponents", default=",".join(OPPONENTS), help="comma-separated opponent specs")
    p.add_argument("--kings", type=int, choices=(8, 4), default=8, help="8 or 4 kings")
    p.add_argument("--target", type=int_in(1, 1000), default=40, help="stones to win a game")
    p.add_argument("--probe-decisions", type=int_in(0), default=0,
                   help="also train a best response for this many decisions and report its gain (a lower bound "
                        "on exploitability; needs the train extra; 0: no probe)")
    p.add_argument("--out", default=None, help="output folder (default runs/evaluate/AGENT)")
    torch_threads_option(p)
    args = p.parse_args(argv)
    try:
        opponents = split_specs(args.opponents)
    except ValueError as e:
        p.error(f"argument --opponents: {e}")
    check_agent_specs(p, "agent", [args.agent])
    check_agent_specs(p, "--opponents", opponents)
    out = args.out or "runs/evaluate/" + (re.sub(r"[^A-Za-z0-9._-]+", "_", args.agent).strip("_") or "agent")
    check_creatable_dir(p, "--out", out)
    apply_torch_threads(args.torch_threads)
    # the first use on a machine compiles the batched engine: one line, not a silent wait
    warm_up(1, log=lambda line: print(f"mus evaluate: {line}", file=sys.stderr))
    card = report_card(args.agent, deal_set=args.deal_set, opponents=opponents, kings=args.kings, target=args.target,
                       hands=args.hands, games=args.games, style=True, command="mus evaluate " + shlex.join(argv))
    if args.probe_decisions:
        from experiments.population.exploit import card_probe  # the train extra (torch): only when asked

        card_probe(card, args.probe_decisions)
    paths = save_card(card, out)
    print(card_markdown(card))
    print("wrote " + ", ".join(str(x) for x in paths))


if __name__ == "__main__":
    main()
