"""``mus bench``: decisions/s of the engines and of peer environments (:mod:`experiments.tools.bench`)."""

from __future__ import annotations

import json
import os
import shlex
import sys

from experiments.commands.options import ArgumentParser, int_in, int_list, positive_float
from experiments.tools.bench import ENGINE_GROUPS, print_table, run_group, tournament_rows
from mus_env.vector import warm_up

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus bench`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus bench", description="Decisions/s of the engines and peer environments.")
    p.add_argument("--seconds", type=positive_float, default=2.0, help="seconds per timed run (a number > 0)")
    p.add_argument("--repeats", type=int_in(1), default=3, help="timed runs per entry (the median is reported)")
    p.add_argument("--batches", type=int_list(1, 2**20), default="1,16,256,4096,16384",
                   help="VectorMusEnv batch sizes, comma-separated")
    p.add_argument("--threads", type=int_list(1, 1024), default=None,
                   help="thread counts of the batched kernel, comma-separated (default: 1 and all cores)")
    p.add_argument("--compile", action="store_true",
                   help="also time the kernel's cold compile and cached load (fresh processes, about a minute)")
    p.add_argument("--engine", choices=ENGINE_GROUPS, default="all",
                   help="run only one group (tournament, not part of all: whole mus tournament runs in hands/s, "
                        "--repeats fresh processes each)")
    p.add_argument("--tournaments", action="store_true",
                   help="with --engine all: also the whole mus tournament runs of --engine tournament (the docs' "
                        "performance table is made with it)")
    p.add_argument("--no-peers", action="store_true", help="skip texas_holdem_v4 and OpenSpiel")
    p.add_argument("--processes", type=int_in(1, 1024), default=os.cpu_count() or 1,
                   help="also run the largest batch split over this many concurrent processes (1: skip)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = p.parse_args(argv)
    import numba

    cores = numba.config.NUMBA_NUM_THREADS
    threads = tuple(sorted({1, cores})) if args.threads is None else tuple(args.threads)
    if max(threads) > cores:
        p.error(f"argument --threads: at most {cores} (numba's thread pool on this machine), got {max(threads)}")
    log = (lambda s: print(s, file=sys.stderr)) if not args.json else (lambda s: None)
    if args.engine in ("all", "vector"):              # the first use on a machine compiles the kernel: say so
        warm_up(max(threads), log=lambda line: print(f"mus bench: {line}", file=sys.stderr))
    if args.tournaments and args.engine != "all":
        p.error("argument --tournaments: only with --engine all (--engine tournament runs them alone)")
    report = run_group(args.engine, args.seconds, args.repeats, args.batches, threads=threads,
                       processes=args.processes, peers=not args.no_peers, compile_times=args.compile, log=log)
    if args.tournaments:
        report["tournaments"] = tournament_rows(args.repeats, log)
    report["command"] = "mus bench " + shlex.join(argv if argv is not None else sys.argv[1:])
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
