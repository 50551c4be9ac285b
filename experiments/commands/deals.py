"""``mus deals``: write a seeded deal set (:func:`experiments.evaluate.deals.make_deals`) to an ``.npz`` file."""

from __future__ import annotations

from experiments.commands.options import MAX_DEALS, MAX_TARGET, ArgumentParser, check_writable_file, int_in
from experiments.evaluate.deals import make_deals

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus deals`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus deals",
                       description="Write a seeded deal set (decks, manos, starting scores, game seeds) for "
                                   "duplicate evaluation to an .npz file.")
    p.add_argument("--n", type=int_in(1, MAX_DEALS), default=10_000, help="number of deals")
    p.add_argument("--seed", type=int_in(0, 2**64 - 1), default=0, help="seed naming the deal set")
    p.add_argument("--target", type=int_in(1, MAX_TARGET, "Mus plays to 40 or 30"), default=40,
                   help="game target (bounds random scores)")
    p.add_argument("--random-scores", action="store_true", help="start deals from random scores instead of 0-0")
    p.add_argument("--out", default="deals.npz", help="output .npz path")
    args = p.parse_args(argv)
    check_writable_file(p, "--out", args.out)
    deals = make_deals(args.n, args.seed, args.target, args.random_scores)
    deals.save(args.out)
    print(f"wrote {len(deals)} deals (seed {args.seed}) to {args.out}")


if __name__ == "__main__":
    main()
