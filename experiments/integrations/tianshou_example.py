"""Tianshou 2.x worked example: a masked DQN learns seat 0 of Mus against fixed agents.

The pipeline is Tianshou's multi-agent one (as in its tic-tac-toe example) over
:class:`mus_env.adapters.tianshou.MusTianshouEnv`, which pays every learning agent its whole reward on its own rows
(Tianshou's own ``PettingZooEnv`` hands an agent only the rewards of the steps it acted on; see
``mus_env/tianshou.py``). Seats 1, 2 and 3 (the partner too) are ``--opponent`` agents played inside the env,
so every row of the buffer is the learner's decision and a row's ``obs_next`` is the learner's next decision:
an exact single-agent problem. The reward is ``"stones"`` (each hand's stone difference) by default.

At the end it plays ``--eval-games`` whole games in the same setup, the greedy learner at seat 0 and then a
uniformly random policy at seat 0 on the same seeds, and prints the mean return per game (stone difference,
or +1/-1 with ``--reward game``) with a 95% interval, and the share of games won.

Run (:mod:`experiments.commands.tianshou`; under two minutes on two shared cores with the defaults, 20-30 s of it
Tianshou compiling its replay buffer's numba functions, which it does not cache; more training with ``--epochs``)::

    mus tianshou                                        # seat 0 with rule at seats 1-3
    mus tianshou --epochs 5 --eval-games 500 --opponent random
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from experiments.integrations import require

__all__ = ["Args", "check_installed", "train", "summary_line"]


@dataclass
class Args:
    """Options of the example (the flags of ``mus tianshou``, in the same order)."""

    seed: int = 0
    opponent: str = "rule"               # agent spec for seats 1, 2, 3
    reward: str = "stones"               # "stones" (per hand) or "game" (+1/-1 at the end)
    epochs: int = 2
    epoch_steps: int = 2000              # env steps (learner decisions) per epoch
    collect_steps: int = 64              # env steps between updates
    updates_per_step: float = 0.25       # gradient steps per collected step (under 20 per collection: see train)
    batch_size: int = 64
    lr: float = 1e-3
    gamma: float = 0.95
    eps: float = 0.1                     # exploration while training (greedy in evaluation)
    hidden: int = 128
    buffer: int = 20_000
    envs: int = 4
    eval_games: int = 200


def check_installed() -> None:
    """Check that Tianshou is installed (before anything is made).

    Raises:
        ModuleNotFoundError: it is missing (the message names the extra that installs it).
    """
    require("tianshou")


def _make_env(args: Args, seed: int | None = None) -> Any:
    from agents import make_agent
    from mus_env.adapters.tianshou import MusTianshouEnv

    fixed = {seat: make_agent(args.opponent) for seat in (1, 2, 3)}
    return MusTianshouEnv(reward=args.reward, fixed=fixed, seed=seed)


def _evaluate(policy: Any, args: Args, seed: int) -> np.ndarray:
    """Per-game returns of ``policy`` at seat 0 over ``args.eval_games`` games (one env, seeded)."""
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv

    envs = DummyVectorEnv([lambda: _make_env(args)])
    envs.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 (Tianshou's random policy and epsilon draw from numpy's global generator)
    stats = Collector(policy, envs).collect(n_episode=args.eval_games, reset_before_collect=True)
    return np.asarray(stats.returns, dtype=np.float64).reshape(-1)


def train(args: Args) -> dict[str, Any]:
    """Train the DQN, evaluate it and a random policy at seat 0, and return the figures (see the module)."""
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    torch.set_num_threads(1)
    # Tianshou 2.0.1 quirks: its stats warn on every multi-agent return vector, and its trainer shows a progress
    # bar (whatever show_progress says) when one collection step asks for 20 gradient steps or more.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    np.random.seed(args.seed)  # noqa: NPY002 (Tianshou's epsilon-greedy draws from numpy's global generator)
    torch.manual_seed(args.seed)
    env = _make_env(args)
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=int(env.action_space.n),
              hidden_sizes=[args.hidden, args.hidden])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=args.eps,
                                     eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=args.lr), gamma=args.gamma,
              target_update_freq=200)
    algo = MultiAgentOffPolicyAlgorithm(algorithms=[dqn], env=env)      # one learning agent: player_0
    train_envs = DummyVectorEnv([lambda: _make_env(args) for _ in range(args.envs)])
    train_envs.seed(args.seed)
    collector = Collector(algo, train_envs, VectorReplayBuffer(args.buffer, args.envs), exploration_noise=True)
    collector.reset()
    t0 = time.perf_counter()
    algo.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=args.epochs, epoch_num_steps=args.epoch_steps,
        collection_step_num_env_steps=args.collect_steps, batch_size=args.batch_size,
        update_step_num_gradient_steps_per_sample=args.updates_per_step, test_collector=None,
        multi_agent_return_reduction=lambda rews: rews[:, 0], show_progress=False, verbose=False))
    seconds = time.perf_counter() - t0
    learner = _evaluate(algo, args, seed=10_000 + args.seed)
    rnd = MultiAgentOffPolicyAlgorithm(algorithms=[MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space)],
                                       env=env)
    random_returns = _evaluate(rnd, args, seed=10_000 + args.seed)
    return {"train_seconds": seconds, "train_steps": args.epochs * args.epoch_steps,
            "learner_returns": learner, "random_returns": random_returns, "algorithm": algo}


def summary_line(name: str, r: np.ndarray) -> str:
    """One line of the evaluation: the mean return per game of ``r`` with its 95% interval and the share won."""
    half = 1.96 * r.std(ddof=1) / np.sqrt(len(r)) if len(r) > 1 else float("inf")
    return f"{name:<14} {r.mean():+8.2f} ± {half:5.2f} per game, won {np.mean(r > 0):.1%} of {len(r)} games"

