"""Row ``tianshou-dqn`` of ``mus benchmark``: Tianshou 2.x DQN with action masks, from scratch, against ``rule``.

The setup is the worked example's (:mod:`experiments.integrations.tianshou_example`): Tianshou's multi-agent
off-policy pipeline over :class:`mus_env.adapters.tianshou.MusTianshouEnv`, the learner at seat 0 and ``rule``
at seats 1, 2 and 3 (its partner too) played inside the env, so every row of the replay buffer is a learner
decision and the problem is an exact single-agent one (not self-play). The reward is ``"stones"``: each hand's
stone difference, paid to the learner on its own rows. Tianshou's DQN masks illegal actions in its greedy
choice, its exploration and its bootstrap target (the ``mask`` of the observation).

The loop is ours, not Tianshou's trainer (whose epochs do not stop on a wall clock): collect
``collect_steps`` env steps with ε-greedy exploration, then ``updates_per_step`` gradient steps per collected
step, until the budget is spent; curve points (and checkpoints) on the clock's pauses.

Settings for a 30-minute budget on two CPU cores (``budget.tiny``: the small ones of :func:`settings`):

======================  ============================================================================
network                 Tianshou ``Net``: ReLU MLP 345 → 256 → 256 → 31 (the Q-values)
optimiser               Adam, learning rate 5e-4
discount                0.99, 1-step returns; target network copied every 500 gradient steps
replay                  50,000 rows (Tianshou ``VectorReplayBuffer`` over 4 envs), batch 128;
                        learning starts after 2,000 rows
collection              4 ``DummyVectorEnv`` envs, 64 env steps per collection, then 16 gradient
                        steps (0.25 per step)
exploration             ε-greedy over the legal actions, ε from 0.3 down to 0.05, linear over the
                        first 40% of the budget's minutes; 0 at evaluation
export                  the Q-network's layers, ``logit_scale`` 20: the policy file plays a softmax of
                        the Q-values at temperature 0.05 stones (near-greedy)
======================  ============================================================================

Measured on the two shared cores (another training running): about 265 learner decisions/s overall with these
settings (a 1-minute run: 15,900 decisions, 3,500 gradient steps), so some 450,000 decisions and 110,000
gradient steps in 30 minutes; collection alone runs at about 400 env steps/s (4 envs), and a gradient step
(batch 128) takes about 15 ms, half of it Tianshou's multi-agent dispatch. Tianshou compiles its
replay buffer's numba functions at every start (10-30 s, most of it when the buffer is made, before the clock
starts; a few seconds in the first collection and gradient step, on the clock).

Checkpoints (at every curve point): ``checkpoint.pt`` (the DQN algorithm's ``state_dict``, its optimiser's
state included; the DQN's, not the multi-agent wrapper's: in Tianshou 2.0.1 the wrapper's ``load_state_dict``
rejects the inner optimiser's state that its ``state_dict`` writes; the decisions, the curve and the generators'
state) and ``buffer.pkl`` (the replay buffer, pickled). Not kept: the games in progress in the envs (a resumed
session starts new games; the envs are reseeded with ``seed + decisions``), and the DQN's count of steps toward
its next target-network copy (a private field, left out of its ``state_dict``: a resumed session counts from 0,
so its first copy may come up to ``target_every`` steps later than in a run never stopped).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiments.benchmark import session
from experiments.benchmark.export import export_mlp, linear_layers
from experiments.benchmark.protocol import Budget, Clock, Trained

__all__ = ["Settings", "settings", "train", "CHECKPOINT", "BUFFER"]

CHECKPOINT = "checkpoint.pt"
BUFFER = "buffer.pkl"
LEARNER_SEAT = 0


@dataclasses.dataclass(frozen=True)
class Settings:
    """The row's hyper-parameters (see the module's table)."""

    opponent: str = "rule"
    reward: str = "stones"
    hidden: tuple[int, ...] = (256, 256)
    lr: float = 5e-4
    gamma: float = 0.99
    target_update_freq: int = 500
    buffer: int = 50_000
    batch_size: int = 128
    warmup: int = 2_000
    envs: int = 4
    collect_steps: int = 64
    updates_per_step: float = 0.25
    eps_start: float = 0.3
    eps_end: float = 0.05
    eps_fraction: float = 0.4
    logit_scale: float = 20.0


def settings(budget: Budget) -> Settings:
    """The settings for ``budget`` (tiny nets and buffers for a smoke run)."""
    if budget.tiny:
        return Settings(hidden=(32,), buffer=2_000, batch_size=32, warmup=64, envs=2, collect_steps=32,
                        target_update_freq=50)
    return Settings()


def _epsilon(s: Settings, fraction: float) -> float:
    """ε after ``fraction`` of the budget."""
    t = min(1.0, fraction / s.eps_fraction) if s.eps_fraction > 0 else 1.0
    return s.eps_start + t * (s.eps_end - s.eps_start)


def _make_env(s: Settings, seed: int | None = None) -> Any:
    from agents import make_agent
    from mus_env.adapters.tianshou import MusTianshouEnv

    fixed = {seat: make_agent(s.opponent) for seat in range(4) if seat != LEARNER_SEAT}
    return MusTianshouEnv(reward=s.reward, fixed=fixed, seed=seed)


def train(out: Path, budget: Budget, log: Callable[[str], None]) -> Trained:
    """Train the row in ``out`` for ``budget`` (continuing a checkpoint found there); see the module."""
    from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    finished = Trained.load(out)
    if finished is not None:
        log(f"tianshou-dqn: {out} is finished already ({finished.decisions} decisions)")
        return finished
    s = settings(budget)
    torch.set_num_threads(budget.threads)
    # Tianshou 2.0.1 warns on every multi-agent return vector of its collection stats.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    torch.manual_seed(budget.seed)
    np.random.seed(budget.seed)  # noqa: NPY002 (Tianshou's ε-greedy draws from numpy's global generator)

    env = _make_env(s)
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=int(env.action_space.n),
              hidden_sizes=list(s.hidden))
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=s.eps_start,
                                     eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=s.lr), gamma=s.gamma,
              target_update_freq=s.target_update_freq)
    algo = MultiAgentOffPolicyAlgorithm(algorithms=[dqn], env=env)      # one learning agent: player_0

    decisions, updates = 0, 0
    curve: list[dict[str, float]] = []
    buffer = VectorReplayBuffer(s.buffer, s.envs)
    ckpt = out / CHECKPOINT
    if ckpt.exists():
        state = session.load_checkpoint(ckpt, dataclasses.asdict(s))
        dqn.load_state_dict(state["algorithm"])
        decisions, updates, curve = int(state["decisions"]), int(state["updates"]), list(state["curve"])
        session.set_rng_state(state["rng"])
        if (out / BUFFER).exists():
            buffer = session.load_pickle(out / BUFFER)
    elif (out / "clock.json").exists():      # a clock without its checkpoint: nothing to continue
        (out / "clock.json").unlink()
    clock = Clock(out, budget)
    clock.curve = curve                      # the points the checkpoint holds (its clock saved with it)
    if ckpt.exists():
        log(f"tianshou-dqn: resuming at {clock.minutes:.3f} minutes, {decisions} decisions, {len(curve)} points")

    envs = DummyVectorEnv([lambda: _make_env(s) for _ in range(s.envs)])
    envs.seed(budget.seed + decisions)
    collector = Collector(algo, envs, buffer, exploration_noise=True)
    collector.reset(reset_buffer=False)

    def export(path: Path) -> Path:
        return export_mlp(path, linear_layers(net), logit_scale=s.logit_scale,
                          meta={"row": "tianshou-dqn", "decisions": decisions, "minutes": clock.minutes})

    def checkpoint() -> None:
        state = {"algorithm": dqn.state_dict(), "decisions": decisions,
                 "updates": updates, "curve": curve, "rng": session.rng_state(), "settings": dataclasses.asdict(s)}
        session.save_pickle(out / BUFFER, collector.buffer)
        session.write_atomic(ckpt, lambda tmp: torch.save(state, tmp))
        clock.save()
        log(f"tianshou-dqn: checkpoint at {clock.minutes:.3f} minutes, {decisions} decisions")

    log(f"tianshou-dqn: training {budget.minutes} minutes (seed {budget.seed}, "
        f"{session.curve_deals(budget)} deals a point)")
    clock.start()
    while True:
        if clock.point_due():
            with clock.paused():
                session.take_point(out, clock, export, decisions, curve, log)
                checkpoint()
            continue
        if clock.done:
            break
        policy.set_eps_training(_epsilon(s, clock.minutes / budget.minutes))
        with policy_within_training_step(algo.policy):
            stats = collector.collect(n_step=s.collect_steps)
            decisions += int(stats.n_collected_steps)
            if len(collector.buffer) >= max(s.warmup, s.batch_size):
                for _ in range(max(1, round(s.updates_per_step * stats.n_collected_steps))):
                    algo.update(sample_size=s.batch_size, buffer=collector.buffer)
                    updates += 1

    policy_file = export(out / "policy.pt")
    trained = Trained(policy=str(policy_file), decisions=decisions, minutes=round(clock.minutes, 4), curve=curve,
                      versions={"tianshou": version("tianshou"), "torch": version("torch"),
                                "numpy": version("numpy")},
                      settings={**dataclasses.asdict(s), "algorithm": "DQN (Tianshou 2.x, masked)",
                                "learner_seat": LEARNER_SEAT, "opponents": f"{s.opponent} at seats 1, 2, 3",
                                "gradient_steps": updates, "seed": budget.seed, "threads": budget.threads,
                                "tiny": budget.tiny})
    trained.save(out)
    log(f"tianshou-dqn: done, {decisions} decisions, {updates} gradient steps, {clock.minutes:.2f} minutes")
    return trained
