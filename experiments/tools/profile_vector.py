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
    """Median microseconds per step of each part (see the module docstring).

    ``step()`` and ``sample_actions`` are timed on a :class:`VectorMusEnv`; the compiled passes run on a copy of
    its tables taken with the public :meth:`VectorMusEnv.state_dict` (the state rows viewed as
    ``kernel.STATE_DTYPE``), so nothing reads the engine's private arrays.
    """
    venv = VectorMusEnv(batch, seed=seed, num_threads=1)
    venv.reset()
    rng = np.random.default_rng(seed)
    for _ in range(30):
        venv.step(venv.sample_actions(rng))
    copy = venv.state_dict()
    arrays = copy["arrays"]
    state = arrays["state"].view(kernel.STATE_DTYPE).reshape(batch)
    out = arrays["out"].view(kernel.OUT_DTYPE).reshape(batch)
    obs_buf, mask_buf = arrays["obs"], arrays["mask"]
    rules = kernel.make_rules(venv.config, stones_reward=venv.reward_mode == "stones")
    seed_u64 = np.uint64(copy["seed"])
    tables = np.arange(batch)
    acting = np.full(batch, -1, dtype=np.int64)
    obs = np.empty_like(obs_buf)
    mask = np.empty_like(mask_buf)
    actions = np.empty(batch, dtype=np.int64)
    times: dict[str, list[float]] = {k: [] for k in ("step()", "kernel", "observation", "sample_actions",
                                                     "write floor")}
    for _ in range(steps):
        t0 = time.perf_counter()
        a = venv.sample_actions(rng)
        t1 = time.perf_counter()
        venv.step(a)
        t2 = time.perf_counter()
        times["sample_actions"].append(t1 - t0)
        times["step()"].append(t2 - t1)
        kernel.sample_legal(state, rules, rng.random(batch), actions)
        t3 = time.perf_counter()
        kernel.step_tables(state, out, rules, actions, seed_u64, obs_buf, mask_buf, False)
        t4 = time.perf_counter()
        kernel.observe_tables(state, rules, tables, acting, obs, mask)
        t5 = time.perf_counter()
        obs.fill(0.0)
        mask[...] = mask_buf
        times["kernel"].append(t4 - t3)
        times["observation"].append(t5 - t4)
        times["write floor"].append(time.perf_counter() - t5)
    return {k: 1e6 * statistics.median(v) for k, v in times.items()}


def format_profile(res: dict[str, float], batch: int) -> str:
    """The lines ``mus profile`` prints for :func:`profile`'s result at ``batch`` tables."""
    lines = [f"VectorMusEnv, B={batch}, one thread, median µs per step (µs per table in brackets):"]
    for k, v in res.items():
        lines.append(f"  {k:>15}: {v:10.1f}  ({v / batch:.3f})")
    lines.append(f"  {'the game':>15}: {res['kernel'] - res['observation']:10.1f}  "
                 f"({(res['kernel'] - res['observation']) / batch:.3f})   (kernel - observation)")
    return "\n".join(lines)
