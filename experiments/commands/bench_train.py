"""``mus bench-train``: the trainer's decisions per second and where they go (environment, learner, league
opponents, PPO update), medians over a few updates (:func:`experiments.train.bench_train.bench`; maintainers)."""

from __future__ import annotations

from experiments.commands.options import ArgumentParser, int_in
from experiments.train import bench_train

__all__ = ["parser", "main"]


def parser() -> ArgumentParser:
    """The ``mus bench-train`` parser (defaults shown in ``-h``)."""
    p = ArgumentParser(prog="mus bench-train", description=bench_train.__doc__.splitlines()[0])
    p.add_argument("--updates", type=int_in(1, 10_000), default=10, help="timed updates")
    p.add_argument("--warmup", type=int_in(0, 10_000), default=12,
                   help="untimed updates first (they fill the snapshot pool)")
    p.add_argument("--torch-threads", type=int_in(0, 1_024), default=0, help="0: all cores, at most 4")
    p.add_argument("--no-snapshots", action="store_true", help="keep the league's snapshot pool empty")
    p.add_argument("--hidden", type=int_in(1, 16_384), nargs="+", default=None,
                   help="MLP widths (default preset's if omitted)")
    return p


def main(argv: list[str] | None = None) -> None:
    """``mus bench-train [options]``: run the benchmark and print decisions/s and the split per part."""
    p = parser()
    a = p.parse_args(argv)
    extra = {"hidden": tuple(a.hidden)} if a.hidden else {}
    try:
        m = bench_train.bench(a.updates, a.warmup, a.torch_threads, not a.no_snapshots, **extra)
    except ValueError as e:                      # a setting the trainer refuses (experiments.train.settings)
        p.error(str(e))
    print(f"{m['decisions_per_s']:,.0f} decisions/s (median update of {m['batch']:,} decisions: {m['total']:.3f} s)")
    for k, label in (("env", "environment"), ("policy", "learner forward + sampling"),
                     ("opponents", "league opponents"), ("update", "PPO update")):
        print(f"  {label:<28} {m[k]:.3f} s  {100 * m[k] / m['total']:4.1f} %")


if __name__ == "__main__":
    main()
