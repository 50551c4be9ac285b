"""The trainer's throughput: decisions per second of ``mus train``'s loop (environment, network, update), split.

``mus bench-train --updates 10 --torch-threads 2`` (:func:`bench`) builds a trainer with the default preset
(no warm start and no evaluation, which do not change the loop's cost), runs ``--warmup`` updates with a snapshot
taken at every update so that the league's pool is full, as in a long run, then times ``--updates`` more and
prints the medians per update: environment steps, the learner's forward pass and sampling, the league's
opponents (baselines and snapshots), and the PPO update. ``--no-snapshots`` leaves the pool empty (the
snapshot share then plays as the learner itself). Figures are medians because this machine is shared and noisy.
"""

from __future__ import annotations

import statistics
import tempfile
import time

from experiments.train.ppo import cpu_weights, learn, make_args, rollout, start

__all__ = ["bench"]


def bench(updates: int = 10, warmup: int = 12, torch_threads: int = 0, snapshots: bool = True,
          **overrides: object) -> dict[str, float]:
    """Median seconds per update of each part (``env``, ``policy``, ``opponents``, ``update``, ``total``), the
    decisions per second of the whole loop (``decisions_per_s``) and the decisions per update (``batch``);
    ``overrides`` change fields of the default preset's ``Args``."""
    with tempfile.TemporaryDirectory() as out:
        args = make_args("default", out=out, warm_start="none", eval_every=0, progress=False, value_warmup=0,
                         torch_threads=torch_threads, snapshot_every=1 if snapshots else 10**9, **overrides)
        t = start(args)
        rows = []
        for i in range(warmup + updates):
            t0 = time.perf_counter()
            timing = rollout(t)
            t1 = time.perf_counter()
            learn(t)
            t2 = time.perf_counter()
            t.update += 1
            if snapshots:
                t.league.add_snapshot(cpu_weights(t.net), t.update)
            if i >= warmup:
                rows.append({**timing, "update": t2 - t1, "total": t2 - t0})
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        med["decisions_per_s"] = t.batch / med["total"]
        med["batch"] = t.batch
        return med
