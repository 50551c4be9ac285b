"""``mus ship-agent RUN [--dest DIR]``: evaluate a training run's policy on fresh deals and write it as the ``ppo``
agent, with its model card, into DIR (``runs/shipped`` by default; :func:`experiments.population.ship_agent.ship`)."""

from __future__ import annotations

from experiments.commands.options import MAX_DEALS, ArgumentParser, int_in
from experiments.population import ship_agent

__all__ = ["parser", "main", "DEST"]

#: Where ``mus ship-agent`` writes by default: a folder under the current directory, never the installed package.
DEST = "runs/shipped"


def parser() -> ArgumentParser:
    """The ``mus ship-agent`` parser (defaults shown in ``-h``)."""
    p = ArgumentParser(prog="mus ship-agent", description=ship_agent.__doc__.splitlines()[0])
    p.add_argument("run", help="a training run's folder (mus train --out), or a recipe's (mus league --out: the "
                                "policy it kept, with its one command and its rounds in the card)")
    p.add_argument("--policy", default="policy.pt",
                   help="which of the run's policies: policy.pt (the last) or best_policy.pt")
    p.add_argument("--hands", type=int_in(1, MAX_DEALS), default=20000, help="duplicate deals played as single hands")
    p.add_argument("--games", type=int_in(1, MAX_DEALS), default=2000, help="duplicate deals played as whole games")
    p.add_argument("--seed", type=int, default=7, help="seed of the evaluation deal sets")
    p.add_argument("--dest", default=DEST,
                   help="the folder ppo.pt, ppo.md and the learning curve are written to (the package's agent: "
                        "agents/data in a checkout, with --curve docs/ppo_learning_curve.png)")
    p.add_argument("--curve", default=None,
                   help=f"where the run's learning curve goes (default: DEST/{ship_agent.CURVE_NAME})")
    p.add_argument("--card-only", action="store_true",
                   help="only rewrite DEST/ppo.md from the evaluation stored in DEST/ppo.pt (RUN is not read)")
    p.add_argument("--exploit", action="append", default=[], metavar="REPORT",
                   help="a probe report of this policy for the card: exploit_seeds.json of mus exploit --seeds, or "
                        "one probe's exploit.json (repeat for several; with --card-only, stored in DEST/ppo.pt)")
    p.add_argument("--ancestor", action="append", default=[], metavar="RUN",
                   help="the folder of a run this policy was warm-started from, directly or through others (repeat "
                        "for each, any order): the card gives the whole lineage and its budget")
    return p


def main(argv: list[str] | None = None) -> None:
    """``mus ship-agent RUN [options]``; a run folder without the policy, a damaged policy file (or one with NaN
    weights) or a destination that cannot be written is one line on stderr, exit status 2."""
    p = parser()
    a = p.parse_args(argv)
    try:
        if a.card_only:
            print(f"wrote {ship_agent.rewrite_card(a.dest, exploit=a.exploit, ancestors=a.ancestor)}")
            return
        written = ship_agent.ship(a.run, a.policy, a.hands, a.games, a.seed, dest=a.dest, curve=a.curve,
                                  exploit=a.exploit, ancestors=a.ancestor)
    except (OSError, ValueError) as e:                 # no policy, a damaged one (PolicyFileError), an unwritable dest
        p.error(str(e))
    print("wrote " + ", ".join(map(str, written)))


if __name__ == "__main__":
    main()
