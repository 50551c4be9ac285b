"""``mus benchmark``: which algorithm learns Mus best, on one protocol (:mod:`experiments.benchmark`).

    mus benchmark rows                                       # the rows and the extra each needs
    mus benchmark run mus-train --seed 0 --minutes 30        # one row: train, report card, quick probe
    mus benchmark run sb3-maskable-ppo --seed 1 --minutes 30 # again with the same arguments: it continues
    mus benchmark all --seeds 2 --minutes 30                 # every row and seed in turn (about 7 hours)
    mus benchmark table --out runs/benchmark                 # the table and the curves of the finished rows
    mus benchmark table --docs                               # ... copied into the docs (docs/benchmarks.md)

Exit status: 0 done, 1 a row of ``all`` failed (the others ran), 2 refused (one line: an unknown row, a framework
not installed), 130 interrupted (run the same command again to continue).
"""

from __future__ import annotations

import json
import sys

from experiments.benchmark.protocol import Budget
from experiments.benchmark.rows import ROWS
from experiments.commands.options import ArgumentParser, boolean, int_in, positive_float
from mus_env.interrupts import terminate_as_ctrl_c

__all__ = ["parser", "main"]


def parser() -> ArgumentParser:
    """The ``mus benchmark`` parser."""
    p = ArgumentParser(prog="mus benchmark", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="action", required=True)
    sub.add_parser("rows", help="list the rows")
    r = sub.add_parser("run", help="train one row for the budget, then evaluate it (continues a stopped one)")
    r.add_argument("row", choices=list(ROWS))
    r.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0,
                   help="the row's seed (its training; the evaluation's deal set is the same for every seed)")
    r.add_argument("--minutes", type=positive_float, default=30.0, help="wall-clock training budget")
    r.add_argument("--out", default="runs/benchmark", help="the benchmark's folder (one subfolder per row and seed)")
    r.add_argument("--torch-threads", type=int_in(1, 64), default=1,
                   help="torch's intra-op threads (1: the protocol's; on 2 cores more was measured slower)")
    r.add_argument("--tiny", type=boolean, default=False, metavar="BOOL",
                   help="a smoke run: the smallest sizes and a tiny evaluation (its figures mean nothing)")
    s = sub.add_parser("all", help="every row (or --rows) for every seed, one after the other, each as its own "
                       "process; again with the same arguments: it continues")
    s.add_argument("--rows", nargs="+", choices=list(ROWS), default=list(ROWS), metavar="ROW")
    s.add_argument("--seeds", type=int_in(1, 100), default=2, help="seeds 0..N-1 of each row")
    s.add_argument("--minutes", type=positive_float, default=30.0, help="wall-clock training budget of each run")
    s.add_argument("--out", default="runs/benchmark", help="the benchmark's folder (one subfolder per row and seed)")
    s.add_argument("--torch-threads", type=int_in(1, 64), default=1,
                   help="torch's intra-op threads of each run (1: the protocol's)")
    s.add_argument("--tiny", type=boolean, default=False, metavar="BOOL", help="smoke runs (figures mean nothing)")
    t = sub.add_parser("table", help="the table and the learning curves of the finished rows")
    t.add_argument("--out", default="runs/benchmark", help="the benchmark's folder")
    t.add_argument("--docs", type=boolean, default=False, metavar="BOOL",
                   help="also copy the results to docs/benchmark_results.json and regenerate docs/benchmarks.md")
    return p


def main(argv: list[str] | None = None) -> None:
    """``mus benchmark rows|run|all|table``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parser().parse_args(argv)
    if a.action == "rows":
        for row in ROWS.values():
            print(f"{row.name:<18} {row.framework}: {row.algorithm}  (pip install -e \".[{row.extra}]\")")
        return
    if a.action == "run":
        from experiments.benchmark.run import EVALUATION, TINY_EVALUATION, run_row

        budget = Budget(minutes=a.minutes, seed=a.seed, tiny=a.tiny, threads=a.torch_threads)
        try:
            with terminate_as_ctrl_c():
                run_row(a.row, budget, a.out, TINY_EVALUATION if a.tiny else EVALUATION,
                        command="mus benchmark " + " ".join(argv))
        except (ValueError, ImportError) as e:
            print(f"mus benchmark: error: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        except KeyboardInterrupt:
            print("mus benchmark: interrupted; the same command continues the row", file=sys.stderr)
            raise SystemExit(130) from None
        return
    if a.action == "all":
        from experiments.benchmark.schedule import run_all

        try:
            ran = run_all(a.rows, range(a.seeds), a.out, a.minutes, a.torch_threads, a.tiny)
        except (ValueError, ImportError) as e:
            print(f"mus benchmark: error: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        if any(status == 130 for *_, status in ran):
            raise SystemExit(130)
        failed = [f"{name} seed {seed}" for name, seed, status in ran if status != 0]
        if failed:
            print(f"mus benchmark: failed: {', '.join(failed)}", file=sys.stderr)
            raise SystemExit(1)
        a.docs = False                                  # then the table of what is done
    from pathlib import Path

    from experiments.benchmark.table import FIGURE, benchmark_markdown, collect, curves_figure

    try:
        results = collect(a.out)
    except ValueError as e:
        print(f"mus benchmark: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    print(benchmark_markdown(results, figure=None))
    if results:
        print(f"curves: {curves_figure(results, Path(a.out) / 'curves.png')}")
    if a.docs:
        from experiments.tools.update_docs import BENCHMARK_RESULTS, update_docs

        BENCHMARK_RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        if results:
            print(f"curves: {curves_figure(results, BENCHMARK_RESULTS.parent / FIGURE)}")
        for path in update_docs():
            print(f"updated {path}")


if __name__ == "__main__":
    main()
