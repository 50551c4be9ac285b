"""Trainer throughput: decisions per second of ``mus train``'s loop (environment, network, update), with the split.

``python -m experiments.train.bench_train --updates 10 --torch-threads 2`` builds a trainer with the default preset
(no warm start and no evaluation, which do not change the loop's cost), runs ``--warmup`` updates with a snapshot
taken at every update so that the league's pool is full, as in a long run, then times ``--updates`` more and
prints the medians per update: environment steps, the learner's forward pass and sampling, the league's
opponents (baselines and snapshots), and the PPO update. ``--no-snapshots`` leaves the pool empty (the
snapshot share then plays as the learner itself). Figures are medians because this machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import tempfile
import time

from experiments.train import ppo as ps


def bench(updates: int = 10, warmup: int = 12, torch_threads: int = 0, snapshots: bool = True,
          **overrides: object) -> dict[str, float]:
    """Median seconds per update of each part, and the decisions per second of the whole loop."""
    with tempfile.TemporaryDirectory() as out:
        args = ps.make_args("default", out=out, warm_start="none", eval_every=0, progress=False, value_warmup=0,
                            torch_threads=torch_threads, snapshot_every=1 if snapshots else 10**9, **overrides)
        t = ps.Trainer(args)
        rows = []
        for i in range(warmup + updates):
            t0 = time.perf_counter()
            timing = t.rollout()
            t1 = time.perf_counter()
            t.learn()
            t2 = time.perf_counter()
            t.update += 1
            if snapshots:
                t.league.add_snapshot(copy.deepcopy(t.net.state_dict()), t.update)
            if i >= warmup:
                rows.append({**timing, "update": t2 - t1, "total": t2 - t0})
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        med["decisions_per_s"] = t.batch / med["total"]
        med["batch"] = t.batch
        return med


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m experiments.train.bench_train", description=__doc__.splitlines()[0])
    p.add_argument("--updates", type=int, default=10, help="timed updates")
    p.add_argument("--warmup", type=int, default=12, help="untimed updates first (they fill the snapshot pool)")
    p.add_argument("--torch-threads", type=int, default=0, help="0: all cores, at most 4")
    p.add_argument("--no-snapshots", action="store_true", help="keep the league's snapshot pool empty")
    p.add_argument("--hidden", type=int, nargs="+", default=None, help="MLP widths (default preset's if omitted)")
    a = p.parse_args(argv)
    extra = {"hidden": tuple(a.hidden)} if a.hidden else {}
    m = bench(a.updates, a.warmup, a.torch_threads, not a.no_snapshots, **extra)
    print(f"{m['decisions_per_s']:,.0f} decisions/s (median update of {m['batch']:,} decisions: {m['total']:.3f} s)")
    for k, label in (("env", "environment"), ("policy", "learner forward + sampling"),
                     ("opponents", "league opponents"), ("update", "PPO update")):
        print(f"  {label:<28} {m[k]:.3f} s  {100 * m[k] / m['total']:4.1f} %")


if __name__ == "__main__":
    main()
