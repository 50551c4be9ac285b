"""Where a VectorMusEnv step goes (``mus profile [--batch 4096] [--steps 200]``, for maintainers).

Times, per step of ``--batch`` tables on one thread with uniform random legal actions (medians over
``--steps`` steps, after a warm-up):

* ``step()``: the whole public call (checks, the compiled pass, the info dict);
* ``kernel``: the compiled pass alone (``kernel.step_tables``: legality check, the rules, the observation and
  mask written for the acting seat);
* ``observation``: writing every table's acting-seat observation and mask alone (``kernel.observe_tables``);
* ``sample_actions``: drawing the random actions (not part of a step, but part of ``mus bench``);
* ``write floor``: filling the ``(B, OBS_DIM)`` float32 buffer with zeros and copying the mask buffer, the
  memory traffic that any engine writing this observation pays.

The difference ``kernel - observation`` is the game itself (decisions, transitions, deals, showdowns).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from mus_env import VectorMusEnv, kernel

__all__ = ["profile", "format_profile"]


def profile(batch: int = 4096, steps: int = 200, seed: int = 0) -> dict[str, float]:
    """Median microseconds per step of each part (see the module docstring)."""
    venv = VectorMusEnv(batch, seed=seed, num_threads=1)
    venv.reset()
    rng = np.random.default_rng(seed)
    for _ in range(30):
        venv.step(venv.sample_actions(rng))
    tables = np.arange(batch)
    acting = np.full(batch, -1, dtype=np.int64)
    obs = np.empty_like(venv._obs)
    mask = np.empty_like(venv._mask)
    times: dict[str, list[float]] = {k: [] for k in ("step()", "kernel", "observation", "sample_actions",
                                                     "write floor")}
    seed_u64 = np.uint64(venv.seed)
    for i in range(steps):
        t0 = time.perf_counter()
        a = venv.sample_actions(rng)
        t1 = time.perf_counter()
        if i % 2:
            venv.step(a)
            times["step()"].append(time.perf_counter() - t1)
        else:
            kernel.step_tables(venv._state, venv._out, venv._rules, a, seed_u64, venv._obs, venv._mask, False)
            times["kernel"].append(time.perf_counter() - t1)
        times["sample_actions"].append(t1 - t0)
        t2 = time.perf_counter()
        kernel.observe_tables(venv._state, venv._rules, tables, acting, obs, mask)
        t3 = time.perf_counter()
        obs.fill(0.0)
        mask[...] = venv._mask
        times["observation"].append(t3 - t2)
        times["write floor"].append(time.perf_counter() - t3)
    return {k: 1e6 * statistics.median(v) for k, v in times.items()}



def format_profile(res: dict[str, float], batch: int) -> str:
    """The lines ``mus profile`` prints for :func:`profile`'s result at ``batch`` tables."""
    lines = [f"VectorMusEnv, B={batch}, one thread, median µs per step (µs per table in brackets):"]
    for k, v in res.items():
        lines.append(f"  {k:>15}: {v:10.1f}  ({v / batch:.3f})")
    lines.append(f"  {'the game':>15}: {res['kernel'] - res['observation']:10.1f}  "
                 f"({(res['kernel'] - res['observation']) / batch:.3f})   (kernel - observation)")
    return "\n".join(lines)
