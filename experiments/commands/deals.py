"""``mus deals``: write a seeded deal set (:func:`experiments.evaluate.deals.make_deals`) to an ``.npz`` file,
under exactly the name ``--out`` gives."""

from __future__ import annotations

from pathlib import Path

from experiments.commands.options import MAX_DEALS, MAX_TARGET, ArgumentParser, check_creatable_dir, int_in
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
    p.add_argument("--out", default="deals.npz",
                   help="output file (an .npz archive, written under exactly this name; its folder is made if needed)")
    args = p.parse_args(argv)
    out = Path(args.out)
    if out.is_dir():
        p.error(f"argument --out: {args.out!r} is a folder; give a file path")
    check_creatable_dir(p, "--out", out.parent)
    deals = make_deals(args.n, args.seed, args.target, args.random_scores)
    try:
        path = deals.save(out)
    except OSError as e:
        p.error(f"argument --out: cannot write to {args.out!r}: {e.strerror or e}; give a path you can write to")
    print(f"wrote {len(deals)} deals (seed {args.seed}) to {path}")


if __name__ == "__main__":
    main()
