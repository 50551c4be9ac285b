"""The state of a training run: one typed object that :mod:`experiments.train.ppo`'s loop owns.

:class:`TrainState` holds everything a run changes as it trains, each field typed and described: the engine and
its current observations, the learner (network, optimiser, turn buffer), the league and the evaluation opponents,
the exploiter and the magnet when the run has them, the random generator, the counters and the logs.
:func:`experiments.train.ppo.start` builds it (every setting, agent, policy file and checkpoint checked before the
run's folder is touched); :mod:`~experiments.train.checkpoint` saves and loads it whole; the session
(:mod:`~experiments.train.session`) and the report (:mod:`~experiments.train.report`) read it through its fields.
Nothing else is kept between updates. This module imports none of those: they all import it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from agents.policy import PolicyNet
from experiments.train.buffer import HANDS_DIM, TurnBuffer
from experiments.train.league import League
from experiments.train.regularisers import average_weights
from mus_env import MusConfig, VectorMusEnv
from mus_env.actions import num_actions
from mus_env.observation import obs_dim

__all__ = ["TrainState", "cpu_weights", "new_net", "new_optimizer", "new_buffer"]


def cpu_weights(net: PolicyNet) -> dict[str, torch.Tensor]:
    """A copy of ``net``'s weights on the CPU (the league's snapshots play there, wherever the learner trains)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()}


@dataclass(eq=False)
class TrainState:
    """Everything a training run changes as it trains (see the module docstring); built by
    :func:`experiments.train.ppo.start`."""

    # the run's settings and where it lives
    args: Any
    """the settings (:class:`experiments.train.ppo.Args`, the script's own dataclass)"""
    out: Path
    """the run's folder"""
    device: torch.device
    """where the networks run (the engine and the baselines stay on the CPU)"""
    cfg: MusConfig
    """the training game: capped mus rounds and stakes (the evaluation plays ``args.game_config(False)``)"""
    # the environment
    env: VectorMusEnv
    """``num_tables`` tables, stones paid to every seat after each hand"""
    obs: npt.NDArray[np.float32]
    """``(B, obs_dim)`` the view of the seat to act on each table"""
    mask: npt.NDArray[np.int8]
    """``(B, num_actions)`` its legal actions"""
    # the learner
    net: PolicyNet
    """the policy being trained (plays every learner seat)"""
    opt: torch.optim.Adam
    """its optimiser"""
    buffer: TurnBuffer
    """its turn-based trajectories (decisions still pending are carried over between updates)"""
    # who it plays
    league: League
    """the opponents per table, the snapshot pool, the past exploiters"""
    eval_agents: dict[str, Any]
    """the evaluation opponents, by spec, built once"""
    rng: np.random.Generator
    """every random choice of the run after the seeding (league draws, sampling, minibatches)"""
    # the budget
    batch: int
    """decisions per update (``num_tables * rollout_steps``)"""
    num_updates: int
    """updates of the whole run"""
    # the exploiter (``exploiter`` in the league mix): a second network trained only against the learner
    exploiter: PolicyNet | None = None
    exploiter_opt: torch.optim.Adam | None = None
    exploiter_buffer: TurnBuffer | None = None
    exploiter_born: int = -1
    """the update the exploiter was last reset to a copy of the learner (-1: not yet)"""
    # the magnet (``magnet_coef > 0`` or ``magnet_ema > 0``): a frozen copy of the learner, taken when PPO starts and
    # every magnet_every updates, or (``magnet_ema``) an average of the learner's weights, moved after each update
    magnet: PolicyNet | None = None
    magnet_born: int = -1
    """the update the magnet was last copied from the learner (-1: not yet; the averaged magnet's start)"""
    # counters
    update: int = 0
    """updates done"""
    decisions: int = 0
    """environment decisions (all seats)"""
    learner_decisions: int = 0
    """decisions the learner made (and trains on)"""
    games: int = 0
    """games finished"""
    elapsed: float = 0.0
    """seconds of training over all sessions of the run"""
    bc_done: bool = False
    """the warm start is done (cloned, or loaded from a policy file)"""
    # logs
    history: list[dict[str, Any]] = field(default_factory=list)
    """one row per update (``metrics.csv``)"""
    evals: list[dict[str, Any]] = field(default_factory=list)
    """one row per evaluation (``eval.csv``)"""
    eval_deals: dict[str, Any] = field(default_factory=dict)
    """the fixed evaluation deal sets, made at the first evaluation (not saved: they are a function of the seed)"""

    def new_net(self) -> PolicyNet:
        """A fresh network of this run's shape on its device (the learner, the exploiter, the magnet)."""
        return new_net(self.args, self.cfg, self.device)

    # -- what the loop changes besides the learner ------------------------------------------------
    def reset_exploiter(self) -> None:
        """Make the exploiter a copy of the current learner with a fresh optimiser; its decisions still pending
        (taken by the old exploiter) are dropped, not trained. With ``responses`` in the league_mix the outgoing
        exploiter (if it has trained) first joins the league's pool of past exploiters, frozen."""
        if "responses" in self.league.mix and 0 <= self.exploiter_born < self.update:
            self.league.add_response(cpu_weights(self.exploiter), self.update)
        self.exploiter.load_state_dict(copy.deepcopy(self.net.state_dict()))
        self.exploiter_opt = new_optimizer(self.exploiter, self.args)
        self.exploiter_buffer.clear()
        self.exploiter_born = self.update

    def refresh_magnet(self) -> None:
        """Make the magnet a frozen copy of the current learner (:mod:`experiments.train.ppo`, "Magnet")."""
        if self.magnet is None:
            self.magnet = self.new_net()
            self.magnet.requires_grad_(False)
            self.magnet.eval()
        self.magnet.load_state_dict(self.net.state_dict())
        self.magnet_born = self.update

    def average_magnet(self) -> None:
        """With ``magnet_ema``, move the averaged magnet toward the learner after an update:
        ``magnet <- (1 - magnet_ema) * magnet + magnet_ema * learner``, every weight
        (:func:`~experiments.train.regularisers.average_weights`); without it, nothing."""
        if self.args.magnet_ema:
            average_weights(self.magnet, self.net, self.args.magnet_ema)


def new_net(args: Any, cfg: MusConfig, device: torch.device) -> PolicyNet:
    """A fresh network of the run's shape (``args.hidden``, a central critic's input) for ``cfg``'s observations and
    actions, on ``device``."""
    return PolicyNet(obs_dim(cfg), num_actions(cfg), hidden=args.hidden,
                     value_dim=HANDS_DIM if args.central_critic else 0).to(device)


def new_optimizer(net: PolicyNet, args: Any) -> torch.optim.Adam:
    """Adam over ``net``'s parameters at the run's learning rate."""
    return torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)


def new_buffer(args: Any, cfg: MusConfig) -> TurnBuffer:
    """An empty turn buffer for the run's tables and rollout."""
    return TurnBuffer(args.num_tables, args.rollout_steps, obs_dim(cfg), num_actions(cfg))
