"""How fast SB3 trains on Mus: MaskablePPO on MusVecEnv (one batched engine) against MusGymEnv in a DummyVecEnv.

Prints learner decisions per second of:

* the raw :class:`mus_env.adapters.sb3.MusVecEnv` (uniformly random legal learner actions, the opponents in
  batch), with the engine's decisions per second of every seat beside it;
* sb3-contrib ``MaskablePPO`` training (rollouts and updates) on MusVecEnv at each ``--tables``;
* the same MaskablePPO settings on ``DummyVecEnv`` of ``--gym-envs`` MusGymEnv (the same rollout size), and
  MaskablePPO with SB3's default settings on one MusGymEnv (the baseline of the comparison, about 600 decisions/s);

each training measured over ``--rollouts`` whole rollouts after one warm-up rollout, on ``--threads`` torch threads.
A benchmark, not a test: figures depend on the machine and its load.

Command line (:mod:`experiments.commands.bench_sb3`)::

    mus bench-sb3 --tables 64,256 --opponents rule
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

__all__ = ["raw_rate", "ppo_rate", "run"]


def raw_rate(tables: int, opponent: str = "rule", seconds: float = 3.0, seed: int = 0) -> dict[str, float]:
    """Learner decisions/s of MusVecEnv stepped with uniformly random legal learner actions (no network)."""
    from agents import make_agent
    from mus_env.adapters.sb3 import MusVecEnv

    venv = MusVecEnv(tables, opponents=make_agent(opponent), seed=seed)
    venv.reset()
    rng = np.random.default_rng(seed)
    for _ in range(5):                                      # warm-up
        m = venv.action_masks()
        venv.step((rng.random(m.shape) * m).argmax(axis=1))
    steps, d0, t0 = 0, venv.decisions, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        m = venv.action_masks()
        venv.step((rng.random(m.shape) * m).argmax(axis=1))
        steps += tables
    dt = time.perf_counter() - t0
    return {"steps_per_s": steps / dt, "engine_decisions_per_s": (venv.decisions - d0) / dt}


def ppo_rate(env: Any, rollouts: int, seed: int = 0, **ppo: Any) -> float:
    """Learner decisions/s of ``MaskablePPO(**ppo).learn`` over ``rollouts`` whole rollouts after a warm-up one."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **ppo)
    size = model.n_steps * env.num_envs
    model.learn(size)
    t0 = time.perf_counter()
    model.learn(rollouts * size, reset_num_timesteps=False)
    return rollouts * size / (time.perf_counter() - t0)


def run(tables: tuple[int, ...] = (64, 256), opponent: str = "rule", n_steps: int = 32, batch_size: int = 1024,
        n_epochs: int = 4, rollouts: int = 3, gym_envs: int = 8, raw_seconds: float = 3.0, threads: int = 1,
        baseline: bool = True, log: Any = print) -> list[dict[str, Any]]:
    """Measure everything (module docstring); returns one row per measurement."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from agents import make_agent
    from mus_env.adapters.sb3 import MusVecEnv
    from mus_env.wrappers import MusGymEnv

    torch.set_num_threads(threads)
    rows: list[dict[str, Any]] = []

    def add(name: str, rate: float, **extra: Any) -> None:
        rows.append({"setting": name, "steps_per_s": rate, **extra})
        log(f"{name:<62} {rate:>10,.0f} decisions/s" + "".join(f"  {k} {v:,.0f}" for k, v in extra.items()))

    for n in tables:
        r = raw_rate(n, opponent, raw_seconds)
        add(f"raw MusVecEnv N={n} (random learner, {opponent} opponents)", r["steps_per_s"],
            engine_decisions_per_s=r["engine_decisions_per_s"])
    ppo = {"n_steps": n_steps, "batch_size": batch_size, "n_epochs": n_epochs}
    for n in tables:
        env = VecMonitor(MusVecEnv(n, opponents=make_agent(opponent), seed=0))
        add(f"MaskablePPO on MusVecEnv N={n}", ppo_rate(env, rollouts, **ppo))
    if gym_envs:
        size = n_steps * tables[-1]
        env = VecMonitor(DummyVecEnv([lambda: MusGymEnv(learner_seats=(0, 2), opponents=make_agent(opponent))]
                                     * gym_envs))
        add(f"MaskablePPO on DummyVecEnv({gym_envs} x MusGymEnv), same rollout size",
            ppo_rate(env, 1, **{**ppo, "n_steps": max(1, size // gym_envs)}))
    if baseline:
        env = VecMonitor(DummyVecEnv([lambda: MusGymEnv(learner_seats=(0, 2), opponents=make_agent(opponent))]))
        add("MaskablePPO on 1 x MusGymEnv, SB3 defaults (the issue's baseline)", ppo_rate(env, 1))
    base = {r["setting"]: r["steps_per_s"] for r in rows}
    ref = [v for k, v in base.items() if k.startswith("MaskablePPO on DummyVecEnv")]
    if ref:
        log("speed-up of MaskablePPO on MusVecEnv over DummyVecEnv(MusGymEnv), same PPO settings: "
            + ", ".join(f"N={n} {base[f'MaskablePPO on MusVecEnv N={n}'] / ref[0]:.1f}x" for n in tables))
    return rows

