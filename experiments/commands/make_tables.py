"""``mus make-tables equity|signs`` (maintainers): rebuild the equity agent's table files in ``agents/data``
(:mod:`experiments.tools.make_equity_tables`, :mod:`experiments.tools.make_sign_tables`)."""

from __future__ import annotations

import time

from agents.equity import DATA_DIR
from experiments.commands.options import ArgumentParser, int_in
from experiments.tools import make_equity_tables, make_sign_tables

__all__ = ["main", "build_parser"]


def build_parser() -> ArgumentParser:
    """The options of ``mus make-tables``: one sub-command per kind of table file."""
    p = ArgumentParser(prog="mus make-tables",
                       description="Rebuild the table files of the equity agent (agents/data): its win-probability "
                                   "tables (equity) or its sign tables (signs).")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="{equity,signs}")
    eq = kinds.add_parser("equity", help="win-probability tables, equity_tables_k{8,4}.npz (about ten minutes)",
                          description="Generate the win-probability tables of the equity agent "
                                      "(agents/data/equity_tables_k{8,4}.npz).")
    eq.add_argument("--samples", type=int_in(1), default=None,
                    help=f"Monte Carlo deals per own hand (default {make_equity_tables.DEFAULT_SAMPLES:,})")
    eq.add_argument("--selfplay-hands", type=int_in(1), default=None,
                    help=f"rule-based self-play hands for hand_pmf (default "
                         f"{make_equity_tables.DEFAULT_SELFPLAY_HANDS:,})")
    eq.add_argument("--seed", type=int_in(0), default=0, help="seed of the deals")
    eq.add_argument("--kings", type=int, nargs="+", default=[8, 4], choices=[8, 4], help="the variants to build")
    eq.add_argument("--quick", action="store_true",
                    help=f"small and noisy defaults ({make_equity_tables.QUICK_SAMPLES:,} samples, "
                         f"{make_equity_tables.QUICK_SELFPLAY_HANDS:,} hands): for tests and trials")
    eq.add_argument("--out-dir", default=str(DATA_DIR), help="folder of the table files")
    eq.add_argument("--no-progress", action="store_true", help="no progress bars")
    sg = kinds.add_parser("signs", help="sign tables, sign_tables_k{8,4}.npz (about a minute)",
                          description="Build the sign tables of the equity agent: lance-win chances given the "
                                      "partner's seña (agents/data/sign_tables_k{8,4}.npz).")
    sg.add_argument("--samples", type=int_in(1), default=make_sign_tables.DEFAULT_SAMPLES,
                    help="Monte Carlo deals per own hand")
    sg.add_argument("--seed", type=int_in(0), default=0, help="seed of the deals")
    sg.add_argument("--kings", type=int, nargs="+", default=[8, 4], choices=[8, 4], help="the variants to build")
    sg.add_argument("--out-dir", default=str(DATA_DIR), help="folder of the table files")
    sg.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def main(argv: list[str] | None = None) -> None:
    """Run ``mus make-tables`` with ``argv`` (default: the process's arguments)."""
    args = build_parser().parse_args(argv)
    for kings in args.kings:
        t0 = time.perf_counter()
        if args.kind == "equity":
            samples = args.samples or (make_equity_tables.QUICK_SAMPLES if args.quick
                                       else make_equity_tables.DEFAULT_SAMPLES)
            hands = args.selfplay_hands or (make_equity_tables.QUICK_SELFPLAY_HANDS if args.quick
                                            else make_equity_tables.DEFAULT_SELFPLAY_HANDS)
            path = make_equity_tables.write_tables(args.out_dir, kings, samples, args.seed, hands,
                                                   progress=not args.no_progress)
            size = f"{path.stat().st_size / 1e6:.2f} MB"
        else:
            samples = args.samples
            path = make_sign_tables.write_sign_tables(args.out_dir, kings, samples, args.seed,
                                                      progress=not args.no_progress)
            size = f"{path.stat().st_size / 1e3:.0f} KB"
        print(f"wrote {path} ({size}, {samples} samples per hand, {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
