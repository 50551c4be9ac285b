"""Masked PPO with a league, on VectorMusEnv: the project's self-play trainer (``mus train``).

One readable file in the manner of CleanRL's ``ppo.py``: a flat typed config (:class:`Args`, presets in
:data:`PRESETS`), a seeding block, the environment, rollouts, turn-based advantages, the PPO update, evaluation
and the training loop (:func:`train`). Read it top to bottom. Beside it: :mod:`~experiments.train.league` (the
league, its snapshots and frozen agents), :mod:`~experiments.train.buffer` (the turn-based streams),
:mod:`~experiments.train.warm_start`, :mod:`~experiments.train.checkpoint` (checkpoints, policy files, the run's
folder) and :mod:`~experiments.train.report` (CSV logs, learning curve, run record, progress bar).

Algorithm
---------
* **One policy for all four seats.** The observation is relative to the acting seat (own hand, partner,
  opponents, position to the mano), so one :class:`~agents.policy.PolicyNet` plays every seat. It has a
  shared MLP trunk, a policy head over the 31 actions (47 with señas) and a value head.
* **Señas** (optional, ``signals="truthful"`` or ``"free"``, RULES.md §8): everything is sized by the config
  (477 observation entries, 47 actions); the learner also chooses its sign tokens, trained through the hands they
  lead to. The warm start clones EquityAgent's signs; a checkpoint cannot be resumed with other signals.
* **Masked categorical.** Illegal actions get the logit :data:`~agents.policy.MASKED_LOGIT` before the
  softmax, so their probability is exactly 0: they are never sampled, and they add nothing to the
  log-probability, the entropy or the gradient (written out where it is used).
* **A league** (:class:`~experiments.train.league.League`). On each table the learner plays one team (seats
  {0, 2} or {1, 3}, drawn at random at every new game) and the other team is an opponent drawn, per game, from
  ``league_mix``: ``self`` (the current policy: then all four seats are the learner's and both teams' decisions
  are trained), ``snapshot`` (a frozen past version of the learner, from a pool refreshed every
  ``snapshot_every`` updates), or a baseline agent (``rule``, ``equity``, ``random``, ``ordago``). Only the
  learner's decisions are trained.
* **An exploiter** (``exploiter`` in ``league_mix``, AlphaStar's "main exploiter"): a second network, of the
  learner's shape, that plays only against the learner on the tables where the league draws it, trained (own
  optimiser and buffer, the same PPO update) to beat it, so the learner meets an opponent that seeks out its
  current weaknesses, where baselines and snapshots only show it the old ones. It starts as a copy of the
  learner after the warm start and is reset to a fresh copy every ``exploiter_reset_every`` updates (0: never).
  Its result is logged (``exploiter_stones_per_hand``) and its policy written to ``exploiter.pt``.
* **Past exploiters join the league** (``responses`` in ``league_mix``, with ``exploiter_reset_every``): when
  the exploiter is reset, the outgoing one is frozen into a pool of past exploiters (the last ``pool_size``
  kept), which the league draws like snapshots. Each is an approximate best response to the learner of its
  time; keeping them as opponents is the step of PSRO (Lanctot et al., 2017, "A unified game-theoretic approach
  to multiagent reinforcement learning") in which a best response joins the population, so a weakness found
  once stays punished after the exploiter that found it has moved on.
* **Probes join the league** (a ``mus exploit`` output folder in ``league_mix``): the outer loop of PSRO, with
  strong best responses. ``mus exploit AGENT --seeds N --out PROBES`` trains best responses to a frozen
  ``AGENT``; ``mus train --warm-start AGENT --league-mix "self:0.7,PROBES:0.3"`` then trains on from the agent
  against them (the folder's share split among its probes,
  :func:`~experiments.train.league.expand_probe_folders`), and the next round probes the result.
* **Restricted learners** (``learner_decides``, for ``mus exploit``'s probes): the learner may decide only the
  betting, or the betting of one lance; its other decisions are played by the opposing agent's own policy
  and are not trained (they are not in its trajectories; the rewards they lead to reach the learner's
  pending decision as usual).
* **Centralised critic** (optional, ``central_critic``): the value head also reads every seat's hand
  (:func:`~experiments.train.buffer.hands_input`, the hidden part of ``MusGame.state()`` relative to the acting
  seat), as in PerfectDou; the policy head reads only the observation, so the agent that plays is unchanged.
* **Warm start** (optional, ``warm_start="equity"``): before PPO, the policy head is fitted by behaviour
  cloning to ``EquityAgent``'s decisions (all four seats played by it), then ``value_warmup`` updates train
  only the value head while the policy acts, so the first policy updates have a critic that knows the
  game. ``warm_start`` may also be a policy file (``*.pt`` of ``mus train``, of the same network shape):
  the run then starts from its weights, with no cloning (``mus exploit --warm-start agent``).

Turn-based trajectories (how rewards and bootstrapping work)
------------------------------------------------------------
Mus is turn-based: at each step of a table only its current player acts, and stones are scored at the end
of a hand, usually on another player's step. So every (table, seat) of the learner is its own trajectory
("stream") made only of that seat's decisions:

1. A decision of seat s at step t is appended to stream (table, s). It stays that stream's *pending*
   decision until the seat decides again.
2. Every reward the environment pays seat s (after anyone's action) is added to the reward of stream
   (table, s)'s pending decision. Team rewards reach both partners' streams when they happen, whoever acted.
3. When the game ends, every pending decision of that table is marked ``done`` (no bootstrap).
4. Otherwise a decision's successor is the same seat's next decision: the TD error is
   ``delta_k = r_k + gamma * V(o_{k+1}) - V(o_k)`` and the advantage is GAE along the stream,
   ``A_k = delta_k + gamma * lambda * A_{k+1}``, with ``gamma`` and ``lambda`` counted in the seat's own
   decisions.
5. At the end of a rollout each stream's pending decision has no successor yet: it is not trained in this
   update but serves as the bootstrap value of its predecessor (``A = 0`` at the boundary, as CleanRL
   bootstraps from the next observation), and it is carried into the next rollout, where it receives the
   rest of its reward and is trained once its own successor is known.

:class:`~experiments.train.buffer.TurnBuffer` holds the streams; :func:`~experiments.train.buffer.turn_based_gae`
computes the advantages and is tested against a hand computation in ``tests/test_training.py``.

Rewards
-------
The environment runs with ``reward="stones"``: after each hand, each seat receives its team's stones minus
the other team's (a game won by an accepted órdago also credits the stones the winners lacked). The
learner's reward is ``stones_coef * stones / target + game_coef * outcome``, where ``outcome`` is +1 / -1 for
both partners when the game ends. Default ``stones_coef = game_coef = 1``: the stones give a signal at every
hand (a game lasts 5-15 hands, so the game outcome alone is a sparse signal) and over a whole game they add
up to about the winner's margin (``(40 - loser's score) / 40``), while the outcome term keeps the objective
on winning games (what the evaluation measures), so the policy stays score-aware.

The PPO update (losses)
-----------------------
``update_epochs`` passes over the rollout's trainable decisions, in shuffled minibatches of ``minibatch_size``
with the advantages ``A`` normalised per minibatch; ``ratio = pi(a|o) / pi_old(a|o)`` under the masked
categorical. **Policy loss** ``pg = mean(max(-A * ratio, -A * clip(ratio, 1 - clip_coef, 1 + clip_coef)))``
(the clipped surrogate); **value loss** ``v_loss = 0.5 * mean((V(o) - R)^2)`` with the returns
``R = A + V_old(o)`` (unclipped); **entropy bonus** ``entropy = mean(-sum_a pi(a|o) log pi(a|o))`` over the legal
actions. The loss is ``pg - ent_coef * entropy + vf_coef * v_loss`` (only ``vf_coef * v_loss`` in the first
``value_warmup`` updates); gradients are clipped to ``max_grad_norm``; Adam's learning rate decays linearly to
0 (``anneal_lr``); the epochs stop early past ``target_kl`` (approximate KL ``mean((ratio - 1) - log ratio)``)
when it is set. The exploiter is updated the same way on its own decisions.

**Magnet** (optional, ``magnet_coef > 0``; off by default until its value is measured on Mus): the learner's
loss adds ``magnet_coef * KL(pi || rho)``, the reverse KL from the policy to a *magnet* policy ``rho``,
computed exactly over the legal actions of each decision of the minibatch (:func:`magnet_kl`). This is the
regularisation of magnetic mirror descent (Sokota et al., 2022, "A unified approach to reinforcement learning,
quantal response equilibria, and two-player zero-sum games"), written as an extra term of an otherwise ordinary
PPO update, and the reward transformation of regularised Nash dynamics (R-NaD, Perolat et al., 2022, DeepNash)
in its policy-gradient form: self-play chases its own last policy and can cycle in a game of bluff; the pull
toward a slowly moving reference damps the cycle, so the last iterate approaches an equilibrium instead of
orbiting it. The magnet is a frozen copy of the learner taken when PPO starts (after the warm start), refreshed
to the current learner every ``magnet_every`` updates (0: never; R-NaD's reference moves in such steps). On a
biased rock-paper-scissors played in self-play with these same loss functions (``tests/test_magnet.py``), plain
PPO spirals out to an exploitability of about 1.0 and the magnet holds it near 0.1-0.2. The magnet's weights are
in the checkpoint, so ``--resume`` continues exactly; the exploiter is not regularised (it is a best response).

Everything the trainer writes goes to ``--out`` (:mod:`~experiments.train.checkpoint` lists the files):
``checkpoint.pt`` (``--resume`` continues from it exactly), ``policy.pt``, ``best_policy.pt`` (best
:func:`eval_score`), ``metrics.csv``, ``eval.csv``, TensorBoard events, ``learning_curve.png``, ``args.json``,
``run.json``.

Command line (:mod:`experiments.commands.train`): ``mus train`` (the ``default`` preset, about 10 minutes on 2
cores) or ``mus train --preset ship --out runs/ship``; every field of :class:`Args` is a flag.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch.utils.tensorboard import SummaryWriter

from agents.policy import MASKED_LOGIT, PolicyNet, TorchPolicyAgent, resolve_device, sample_masked
from experiments.evaluate.deals import make_deals
from experiments.evaluate.tournament import play_pair
from experiments.train import checkpoint, report
from experiments.train.buffer import HANDS_DIM, TurnBuffer, hands_input, relative_hands, turn_based_gae
from experiments.train.checkpoint import CheckpointError
from experiments.train.league import (
    League,
    RestrictedAgent,
    SnapshotBank,
    expand_probe_folders,
    learner_free,
    split_specs,
)
from experiments.train.report import eval_score
from experiments.train.session import RunSession, TrainingDiverged, TrainingInterrupted, check_finite, check_run_folder
from experiments.train.settings import SettingsError, build_league, check_args
from experiments.train.warm_start import behaviour_cloning, load_warm_start
from mus_env import MusConfig, VectorMusEnv
from mus_env.actions import num_actions
from mus_env.observation import obs_dim
from mus_env.vector import warm_up

__all__ = ["Args", "PRESETS", "make_args", "threads_for", "Trainer", "train", "eval_score", "TurnBuffer",
           "turn_based_gae", "League", "SnapshotBank", "CheckpointError", "SettingsError", "TrainingInterrupted",
           "TrainingDiverged", "relative_hands", "hands_input", "HANDS_DIM", "cpu_weights", "clipped_surrogate",
           "magnet_kl"]


# ----------------------------------------------------------------------------------------------------
# configuration
@dataclass
class Args:
    """Every setting of a training run (each is a ``--flag`` of the command line)."""

    # run
    seed: int = 0
    """seeds the environment, the league draws, the sampling and the network initialisation"""
    out: str = "runs/train"
    """output folder: checkpoint, policy, logs, learning curve"""
    total_decisions: int = 24_000_000
    """training budget in environment decisions (all seats, learner and opponents)"""
    max_minutes: float = 0.0
    """stop (with a checkpoint) after this many minutes of this process, 0: no limit; a stopped run resumes"""
    torch_threads: int = 0
    """torch intra-op threads; 0: all cores, at most 4 (fastest on an idle machine); use 1 when other jobs share
    the cores (on a busy 2-core machine 2 threads made the forward pass 10x slower)"""
    device: str = "auto"
    """where the networks run: auto (a CUDA GPU when torch sees one, else the CPU), cpu, cuda or cuda:N; the engine
    and the baselines always run on the CPU cores (one transfer to the device per step and back)"""
    progress: bool = True
    """show a progress bar"""
    # game
    kings: int = 8
    """8 or 4 kings"""
    target: int = 40
    """stones to win a game"""
    max_mus_rounds: int = 6
    """cap on discard rounds per hand while training (endless mus guard; evaluation plays uncapped)"""
    max_stake: int = 40
    """cap on a lance's stake while training (``MusConfig.max_stake``: once reached, the bet can only be answered),
    so that policies that always re-raise cannot bet forever (raise-war guard; evaluation plays uncapped); 0: none"""
    signals: str = "off"
    """señas (RULES.md §8): off, truthful (only signs true for the hand) or free (any sign, cheap talk); with
    signals on the policy reads 477 observation entries and chooses among 47 actions (signs 31..46)"""
    signal_intercept_p: float = 0.0
    """chance in [0, 1] that an opponent sees a sign (needs signals truthful or free)"""
    # rollout
    num_tables: int = 2048
    """tables stepped at once"""
    rollout_steps: int = 32
    """environment steps per table per rollout"""
    # PPO
    learning_rate: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over the run"""
    gamma: float = 0.99
    """discount per decision of a seat"""
    gae_lambda: float = 0.95
    """GAE lambda along a seat's decisions"""
    update_epochs: int = 2
    """passes over each rollout"""
    minibatch_size: int = 8192
    """decisions per gradient step"""
    clip_coef: float = 0.2
    """PPO ratio clip"""
    ent_coef: float = 0.01
    """entropy bonus"""
    magnet_coef: float = 0.0
    """weight of the reverse KL from the policy to the magnet policy (magnetic mirror descent / R-NaD; see the
    module docstring); 0: off"""
    magnet_every: int = 0
    """updates between refreshes of the magnet to a copy of the learner; 0: it stays the policy PPO started from"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    target_kl: float = 0.0
    """stop an update's epochs early past this approximate KL (0: never)"""
    hidden: tuple[int, ...] = (128, 128)
    """widths of the network's trunk"""
    central_critic: bool = False
    """the value head also reads all four hands (full information, seat-relative; the policy never does)"""
    # rewards
    stones_coef: float = 1.0
    """weight of the stones of each hand (divided by the target)"""
    game_coef: float = 1.0
    """weight of the game outcome (+1 / -1)"""
    # league
    league_mix: str = "self:0.4,snapshot:0.2,rule:0.2,equity:0.2"
    """opponent kinds and their shares, drawn per game on each table: self, snapshot, exploiter (a second network
    trained only against the learner), responses (past exploiters, frozen at each reset), a baseline (rule,
    equity, random, ordago), ppo, a policy file, or the --out folder of a mus exploit probe (its best responses,
    the share split among them: a PSRO step)"""
    snapshot_every: int = 10
    """updates between snapshots of the learner added to the pool"""
    pool_size: int = 10
    """snapshots kept (the oldest leaves); also the number of past exploiters kept for ``responses``"""
    exploiter_reset_every: int = 0
    """with ``exploiter`` in the league_mix: updates between resets of the exploiter to a copy of the learner
    (0: never; it starts as a copy of the learner after the warm start)"""
    learner_decides: str = "all"
    """which of its decisions the learner makes: all, bidding (betting only), or one lance (grande, chica, pares,
    juego, punto); the others are played by the opposing agent's own policy (probes of mus exploit)"""
    # warm start
    warm_start: str = "equity"
    """'none', 'equity' (behaviour cloning of EquityAgent before PPO) or a policy file *.pt of the same network
    shape (start from its weights)"""
    bc_decisions: int = 2_000_000
    """decisions of EquityAgent self-play to clone"""
    bc_epochs: int = 3
    """passes over the cloning data"""
    value_warmup: int = 5
    """first PPO updates that train only the value head"""
    # evaluation and checkpoints
    eval_every: int = 50
    """updates between duplicate evaluations (0: only at the end)"""
    eval_opponents: str = "rule,equity"
    """baselines of the evaluation"""
    eval_hands: int = 2000
    """duplicate deals played as single hands per opponent (stones/hand)"""
    eval_games: int = 300
    """duplicate deals played as whole games per opponent (game win rate)"""
    eval_seed: int = 12345
    """seed of the fixed evaluation deal sets (never the training deals)"""
    eval_greedy: bool = False
    """evaluate the argmax policy instead of the sampled one"""
    checkpoint_every: int = 10
    """updates between checkpoints"""

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad field (:func:`experiments.train.settings.check_args`: types,
        finite values, ranges, the fields that go together)."""
        check_args(self)

    def game_config(self, training: bool = True) -> MusConfig:
        """The ruleset: training caps the mus rounds, evaluation plays the real game (both with the same
        señas settings)."""
        return MusConfig(kings=self.kings, target=self.target,
                         max_mus_rounds=self.max_mus_rounds if training else None,
                         max_stake=(self.max_stake or None) if training else None,
                         signals=self.signals, signal_intercept_p=float(self.signal_intercept_p))

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values (``hidden`` a list), as ``args.json``, checkpoints and policy files hold them."""
        d = dataclasses.asdict(self)
        d["hidden"] = list(d["hidden"])
        return d


def threads_for(args: Args) -> int:
    """The torch thread count a run uses (``torch_threads``, or all cores up to 4 when it is 0)."""
    return args.torch_threads or max(1, min(4, os.cpu_count() or 1))


def cpu_weights(net: PolicyNet) -> dict[str, torch.Tensor]:
    """A copy of ``net``'s weights on the CPU (the league's snapshots play there, wherever the learner trains)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()}


def clipped_surrogate(ratio: torch.Tensor, adv: torch.Tensor, clip: float) -> torch.Tensor:
    """PPO's clipped policy loss ``mean(max(-A * ratio, -A * clip(ratio, 1 - clip, 1 + clip)))``, where
    ``ratio = pi(a|o) / pi_old(a|o)`` (Schulman et al., 2017)."""
    return torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()


def magnet_kl(logp_all: torch.Tensor, magnet_logp_all: torch.Tensor) -> torch.Tensor:
    """The mean over decisions of ``KL(pi || rho) = sum_a pi(a) (log pi(a) - log rho(a))``: the magnet term.

    Both arguments are ``(B, A)`` masked log-probabilities (:func:`agents.policy.masked_log_probs` or the
    trainer's ``log_softmax`` of ``MASKED_LOGIT``-filled logits): an illegal action has ``pi(a) = 0`` exactly, so
    it adds nothing. It is 0, with a zero gradient, where ``pi`` equals ``rho``, and its gradient moves ``pi``
    toward ``rho`` (``tests/test_magnet.py``).
    """
    return (logp_all.exp() * (logp_all - magnet_logp_all)).sum(-1).mean()


#: Named presets: overrides of :class:`Args`.
PRESETS: dict[str, dict[str, Any]] = {
    # a few updates on a few tables, for tests and smoke runs (seconds)
    "tiny": dict(num_tables=32, rollout_steps=8, total_decisions=32 * 8 * 4, minibatch_size=128, eval_every=2,
                 eval_hands=16, eval_games=4, checkpoint_every=2, snapshot_every=1, pool_size=2, hidden=(32, 32),
                 torch_threads=1, bc_decisions=32 * 8 * 2, bc_epochs=1, value_warmup=1,
                 league_mix="self:0.4,snapshot:0.2,rule:0.2,equity:0.2"),
    # ``mus train``: the defaults of Args, about 10 minutes on 2 cores
    "default": dict(),
    # the agent shipped until 2026-12: the default run made longer (about 1.5 hours on 2 cores, one torch thread)
    "ship": dict(total_decisions=160_000_000, eval_every=100, checkpoint_every=25),
    # PPO from a random network (no warm start), 600M decisions with the learning rate annealed over all of them
    # (about 100 minutes on 2 cores): candidate C of docs/exploitability.md, the first stage of the shipped ppo
    # (two PSRO-like rounds warm-started from it followed; its model card lists the three commands)
    "scratch": dict(warm_start="none", total_decisions=600_000_000, eval_every=100, checkpoint_every=25),
}


def make_args(preset: str = "default", **overrides: Any) -> Args:
    """The :class:`Args` of a preset with some fields changed (``ValueError`` for an unknown name); a folder of
    ``mus exploit`` probes in ``league_mix`` becomes its best responses (:func:`league.expand_probe_folders`)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    fields = {f.name for f in dataclasses.fields(Args)}
    bad = sorted(set(overrides) - fields)
    if bad:
        raise ValueError(f"unknown Args field(s) {bad}")
    args = Args(**{**PRESETS[preset], **overrides})
    args.league_mix = expand_probe_folders(args.league_mix)     # a folder of probes: its best responses
    if isinstance(args.hidden, list):
        args.hidden = tuple(args.hidden)
    args.check()
    return args


# ----------------------------------------------------------------------------------------------------
# the trainer
class Trainer:
    """A training run: environment, network, optimiser, league, turn buffers, counters (see :func:`train`)."""

    def __init__(self, args: Args, resume: bool = False, overwrite: bool = False,
                 log: Callable[[str], object] | None = None, agents: Mapping[str, Any] | None = None) -> None:
        # every setting, agent, policy file and the checkpoint are checked here, before the run's folder is touched
        # (train() opens it): a refusal (SettingsError, CheckpointError) writes nothing
        args.check()
        self.args = args
        self.out = Path(args.out)
        try:
            self.device = resolve_device(args.device)   # the networks' device; the engine stays on the CPU
        except ValueError as e:
            raise SettingsError(f"Args.{e}") from None
        check_run_folder(self.out, resume, overwrite)
        torch.set_num_threads(threads_for(args))
        # seeding: every random choice of the run flows from args.seed
        self.rng = np.random.default_rng([args.seed, 0x7EA1])        # league draws, sampling, minibatches
        torch.manual_seed(args.seed)
        # the environment: the training game (capped mus rounds), stones paid to every seat after each hand
        self.cfg = args.game_config(training=True)
        warm_up(None, log=log)         # the first run on a machine compiles the engine (~15 s): one line says so
        self.env = VectorMusEnv(args.num_tables, self.cfg, seed=args.seed, reward="stones")
        # sized by the config: 345 observations and 31 actions, or 477 and 47 with señas
        self.obs_dim, self.num_actions = obs_dim(self.cfg), num_actions(self.cfg)
        self.net = self.new_net()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate, eps=1e-5)
        # every league and evaluation agent built once and checked (``agents``: specs the caller built already)
        self.league, self.eval_agents = build_league(args, self.cfg, agents)
        self.buffer = TurnBuffer(args.num_tables, args.rollout_steps, self.obs_dim, self.num_actions)
        # the exploiter (league_mix "exploiter"): a second network trained only against the learner, on the tables
        # where the learner faces it, to find and punish its weaknesses while the learner trains against it
        self.exploiter: PolicyNet | None = None
        self.exploiter_opt: torch.optim.Adam | None = None
        self.exploiter_buffer: TurnBuffer | None = None
        self.exploiter_born = -1       # the update the exploiter was last reset to a copy of the learner (-1: not yet)
        # the magnet (magnet_coef > 0): a frozen copy of the learner, taken when PPO starts and every magnet_every
        self.magnet: PolicyNet | None = None
        self.magnet_born = -1          # the update the magnet was last copied from the learner (-1: not yet)
        if self.league.has_exploiter:
            self.exploiter = self.new_net()
            self.exploiter_opt = torch.optim.Adam(self.exploiter.parameters(), lr=args.learning_rate, eps=1e-5)
            self.exploiter_buffer = TurnBuffer(args.num_tables, args.rollout_steps, self.obs_dim, self.num_actions)
        self.batch = args.num_tables * args.rollout_steps
        self.num_updates = max(1, args.total_decisions // self.batch)
        self.update = 0                # updates done
        self.decisions = 0             # environment decisions (all seats)
        self.learner_decisions = 0
        self.games = 0
        self.bc_done = False
        self.elapsed = 0.0             # seconds of training over all sessions of this run
        self.history: list[dict[str, Any]] = []      # one row per update (metrics.csv)
        self.evals: list[dict[str, Any]] = []        # one row per evaluation (eval.csv)
        if resume:
            checkpoint.load_checkpoint(self, self.out / "checkpoint.pt")
        else:
            if args.warm_start.endswith(".pt"):
                self.load_warm_start(args.warm_start)
            self.obs, self.mask = self.env.reset()
            self.league.draw(np.arange(args.num_tables), self.rng)
        self._eval_deals: dict[str, Any] = {}

    def new_net(self) -> PolicyNet:
        """A fresh network of this run's shape on its device (the learner, the exploiter, the magnet)."""
        return PolicyNet(self.obs_dim, self.num_actions, hidden=self.args.hidden,
                         value_dim=HANDS_DIM if self.args.central_critic else 0).to(self.device)

    # -- rollout -------------------------------------------------------------------------------------
    def _policy(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], hands: npt.NDArray[np.int8] | None,
                net: PolicyNet | None = None,
                ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Sample the learner's (or ``net``'s) actions: ``(actions, log-probabilities, values)``."""
        if not len(obs):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)
        dev = self.device
        with torch.no_grad():
            logits, value = (self.net if net is None else net)(torch.from_numpy(obs).to(dev), self._value_input(hands))
            # masked categorical: an illegal action's logit is MASKED_LOGIT, so its probability is exactly 0
            logp_all = torch.log_softmax(logits.masked_fill(torch.from_numpy(mask).to(dev) == 0, MASKED_LOGIT), dim=-1)
        logp_all = logp_all.cpu().numpy()           # sampled on the CPU from the run's numpy generator
        action = sample_masked(np.exp(logp_all), self.rng)
        return action, logp_all[np.arange(len(action)), action], value.cpu().numpy()

    def _value_input(self, hands: npt.NDArray[np.int8] | None) -> torch.Tensor | None:
        """The centralised critic's extra input (every seat's hand), None without it."""
        return torch.from_numpy(hands_input(hands)).to(self.device) if self.args.central_critic else None

    def _learner_rewards(self, rewards: npt.NDArray[np.float32], done: npt.NDArray[np.bool_],
                         info: dict[str, Any]) -> npt.NDArray[np.float32]:
        """``(B, 4)`` rewards by seat: ``stones_coef * stones / target``, plus ``game_coef * (+1 / -1)`` at a
        game's end."""
        a = self.args
        r = rewards * (a.stones_coef / self.cfg.target)
        fin = np.flatnonzero(done)
        if fin.size:
            winner = info["winner"][fin].astype(np.int64)
            seat_team = np.arange(4) % 2
            r[fin] += a.game_coef * np.where(seat_team[None, :] == winner[:, None], 1.0, -1.0)
        return r.astype(np.float32)

    def rollout(self) -> dict[str, float]:
        """``rollout_steps`` steps on every table; the learner's decisions go to the buffer (the exploiter's to
        its own). Returns the seconds spent in the environment, the learner's policy and the opponents."""
        B = self.args.num_tables
        tables = np.arange(B)
        actions = np.zeros(B, dtype=np.int64)
        t_env = t_net = t_opp = 0.0
        for _ in range(self.args.rollout_steps):
            seat = self.env.current_player.astype(np.int64)
            is_learner = self.league.learner[tables, seat]
            lrn = np.flatnonzero(is_learner)
            proxy = lrn[:0]
            if self.args.learner_decides != "all":
                # decisions the learner does not make: the opposing agent plays them for it, untrained
                free = learner_free(self.obs[lrn], self.mask[lrn], self.args.learner_decides)
                lrn, proxy = lrn[free], lrn[~free]
            t0 = time.perf_counter()
            obs, mask = self.obs[lrn], self.mask[lrn]
            hands = relative_hands(self.env.hands[lrn], seat[lrn]) if self.args.central_critic else None
            act, logp, val = self._policy(obs, mask, hands)
            actions[lrn] = act
            self.buffer.add(lrn, seat[lrn], obs, mask, act, logp, val, hands)
            t1 = time.perf_counter()
            opp = np.flatnonzero(~is_learner)
            if self.exploiter is not None:
                on = self.league.kind[opp] == self.league.exploiter_kind
                ex, opp = opp[on], opp[~on]
                hands = relative_hands(self.env.hands[ex], seat[ex]) if self.args.central_critic else None
                act, logp, val = self._policy(self.obs[ex], self.mask[ex], hands, net=self.exploiter)
                actions[ex] = act
                self.exploiter_buffer.add(ex, seat[ex], self.obs[ex], self.mask[ex], act, logp, val, hands)
            if proxy.size:
                opp = np.concatenate([opp, proxy])
            if opp.size:
                self.league.opponent_actions(opp, self.obs, self.mask, self.rng, actions)
            t2 = time.perf_counter()
            self.obs, self.mask, rewards, done, info = self.env.step(actions)
            t3 = time.perf_counter()
            # every seat's reward goes to its pending decision, in the learner's (or the exploiter's) streams
            r = self._learner_rewards(rewards, done, info)
            self.buffer.reward_seats(np.where(self.league.learner, r, 0.0).astype(np.float32))
            if self.exploiter is not None:
                self.exploiter_buffer.reward_seats(np.where(self.exploiter_seats(), r, 0.0).astype(np.float32))
            fin = np.flatnonzero(done)
            if fin.size:
                self.buffer.end_games(fin)
                if self.exploiter is not None:
                    self.exploiter_buffer.end_games(fin)
                self.games += int(fin.size)
                self.league.count_games(fin, info["winner"])
                self.league.draw(fin, self.rng)
            hand = np.flatnonzero(info["hand_finished"])
            if hand.size:
                self.league.count_hands(hand, rewards)
            self.decisions += B
            self.learner_decisions += int(lrn.size)
            t_net += t1 - t0
            t_opp += t2 - t1
            t_env += t3 - t2
        return {"env": t_env, "policy": t_net, "opponents": t_opp}

    # -- the PPO update --------------------------------------------------------------------------------
    def learn(self, value_only: bool = False, exploiter: bool = False) -> dict[str, float]:
        """PPO epochs over the rollout's trainable decisions of the learner (or of the exploiter)."""
        a = self.args
        net, opt, buffer = (self.exploiter, self.exploiter_opt, self.exploiter_buffer) if exploiter else \
            (self.net, self.opt, self.buffer)
        # turn-based GAE along each (table, seat) stream; a stream's pending decision has no successor yet: it
        # only bootstraps its predecessor, and is trained in a later update (carried over below)
        n = buffer.n
        pending = buffer.open_entries()
        adv = turn_based_gae(np.asarray(buffer.rows, dtype=np.int64), buffer.stream[:n], buffer.reward[:n],
                             buffer.value[:n], buffer.done[:n], pending, 4 * a.num_tables, a.gamma, a.gae_lambda)
        idx = np.flatnonzero(~pending)
        returns = adv + buffer.value[:n]
        # the rollout on the networks' device, once (a no-op on the CPU)
        dev = self.device
        obs = torch.from_numpy(buffer.obs[:n]).to(dev)
        vin = self._value_input(buffer.hands[:n])
        illegal = torch.from_numpy(buffer.mask[:n]).to(dev) == 0
        act = torch.from_numpy(buffer.action[:n]).to(dev)
        old_logp = torch.from_numpy(buffer.logp[:n]).to(dev)
        adv_t, ret_t = torch.from_numpy(adv).to(dev), torch.from_numpy(returns).to(dev)
        stats: dict[str, list[float]] = {k: [] for k in ("pg", "v", "ent", "kl", "clip", "magnet_kl")}
        magnet = None if exploiter or not a.magnet_coef else self.magnet
        stop = False
        for _ in range(a.update_epochs):
            order = self.rng.permutation(idx)
            for start in range(0, len(order), a.minibatch_size):
                mb = torch.from_numpy(order[start:start + a.minibatch_size]).to(dev)
                logits, value = net(obs[mb], None if vin is None else vin[mb])
                # masked categorical: illegal actions get probability exactly 0, and no gradient
                logp_all = torch.log_softmax(logits.masked_fill(illegal[mb], MASKED_LOGIT), dim=-1)
                logp = logp_all.gather(1, act[mb][:, None]).squeeze(1)
                log_ratio = logp - old_logp[mb]
                ratio = log_ratio.exp()
                mb_adv = adv_t[mb]
                if len(mb) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg = clipped_surrogate(ratio, mb_adv, a.clip_coef)
                v_loss = 0.5 * (value - ret_t[mb]).pow(2).mean()
                entropy = -(logp_all.exp() * logp_all).sum(1).mean()
                loss = a.vf_coef * v_loss if value_only else pg - a.ent_coef * entropy + a.vf_coef * v_loss
                if magnet is not None and not value_only:
                    with torch.no_grad():
                        ref = torch.log_softmax(magnet.logits(obs[mb]).masked_fill(illegal[mb], MASKED_LOGIT), dim=-1)
                    to_magnet = magnet_kl(logp_all, ref)
                    loss = loss + a.magnet_coef * to_magnet
                    stats["magnet_kl"].append(to_magnet.item())
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), a.max_grad_norm)
                opt.step()
                with torch.no_grad():
                    kl = ((ratio - 1) - log_ratio).mean().item()
                    stats["kl"].append(kl)
                    stats["clip"].append(((ratio - 1).abs() > a.clip_coef).float().mean().item())
                stats["pg"].append(pg.item())
                stats["v"].append(v_loss.item())
                stats["ent"].append(entropy.item())
                if a.target_kl and kl > a.target_kl:
                    stop = True
                    break
            if stop:
                break
        var_y = float(np.var(returns[idx])) if idx.size else 0.0
        resid = float(np.var(returns[idx] - buffer.value[:n][idx])) if idx.size else 0.0
        buffer.carry_over()
        out = {"policy_loss": float(np.mean(stats["pg"] or [0])), "value_loss": float(np.mean(stats["v"] or [0])),
               "entropy": float(np.mean(stats["ent"] or [0])), "approx_kl": float(np.mean(stats["kl"] or [0])),
               "clipfrac": float(np.mean(stats["clip"] or [0])),
               "explained_variance": 1.0 - resid / var_y if var_y > 0 else 0.0, "trained": int(idx.size)}
        if magnet is not None:
            out["magnet_kl"] = float(np.mean(stats["magnet_kl"] or [0]))
        # a NaN or infinite loss or weight stops the run here, before anything of this update is saved
        check_finite(net, {k: out[k] for k in ("policy_loss", "value_loss", "entropy")}, self.update + 1, a,
                     "exploiter" if exploiter else "learner")
        return out

    # -- the exploiter -------------------------------------------------------------------------------
    def reset_exploiter(self) -> None:
        """Make the exploiter a copy of the current learner with a fresh optimiser; its decisions still pending
        (taken by the old exploiter) are dropped, not trained. With ``responses`` in the league_mix the outgoing
        exploiter (if it has trained) first joins the league's pool of past exploiters, frozen."""
        if "responses" in self.league.mix and 0 <= self.exploiter_born < self.update:
            self.league.add_response(cpu_weights(self.exploiter), self.update)
        self.exploiter.load_state_dict(copy.deepcopy(self.net.state_dict()))
        self.exploiter_opt = torch.optim.Adam(self.exploiter.parameters(), lr=self.args.learning_rate, eps=1e-5)
        self.exploiter_buffer.clear()
        self.exploiter_born = self.update

    def exploiter_seats(self) -> npt.NDArray[np.bool_]:
        """``(B, 4)`` True for the seats the exploiter plays (the opponents' seats of its tables)."""
        return self.league.exploiter_seats()

    # -- the magnet ----------------------------------------------------------------------------------
    def refresh_magnet(self) -> None:
        """Make the magnet a frozen copy of the current learner (see the module docstring)."""
        if self.magnet is None:
            self.magnet = self.new_net()
            self.magnet.requires_grad_(False)
            self.magnet.eval()
        self.magnet.load_state_dict(self.net.state_dict())
        self.magnet_born = self.update

    # -- warm start ----------------------------------------------------------------------------------
    def behaviour_cloning(self) -> dict[str, float]:
        """Fit the policy head to EquityAgent's decisions (:func:`~experiments.train.warm_start.behaviour_cloning`
        on ``bc_decisions`` decisions of fresh tables, ``bc_epochs`` passes)."""
        a = self.args
        stats = behaviour_cloning(self.net, self.cfg, self.rng, a.bc_decisions, a.bc_epochs, a.minibatch_size,
                                  a.num_tables, seed=a.seed + 0xBC, progress=a.progress)
        self.bc_done = True
        return stats

    def load_warm_start(self, path: str | Path) -> None:
        """Start from the weights (policy and value head) of the policy file ``path``; ``CheckpointError`` if it
        cannot be read or its network is not this run's shape."""
        load_warm_start(self.net, path)
        self.bc_done = True

    # -- evaluation --------------------------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        """Duplicate matches of the current policy against the evaluation baselines, on fixed deals."""
        a = self.args
        cfg = a.game_config(training=False)
        if not self._eval_deals:
            self._eval_deals = {"hands": make_deals(a.eval_hands, a.eval_seed, cfg.target),
                                "games": make_deals(a.eval_games, a.eval_seed + 1, cfg.target)}
        learner = TorchPolicyAgent(self.net, greedy=a.eval_greedy, name="learner")
        row: dict[str, Any] = {"update": self.update, "decisions": self.decisions}
        self.net.eval()
        tables = min(2048, 2 * max(a.eval_hands, a.eval_games))
        for spec, opp in self.eval_agents.items():
            me = learner if a.learner_decides == "all" else RestrictedAgent(learner, opp, a.learner_decides)
            h = play_pair(me, opp, self._eval_deals["hands"], mode="hands", config=cfg, max_tables=tables,
                          seed=a.eval_seed, names=("learner", spec))
            g = play_pair(me, opp, self._eval_deals["games"], mode="games", config=cfg, max_tables=tables,
                          seed=a.eval_seed, names=("learner", spec))
            m, lo, hi = h.mean_diff()
            w, wlo, whi = g.game_win_rate()
            s = h.summary()
            row.update({f"{spec}_stones": m, f"{spec}_stones_lo": lo, f"{spec}_stones_hi": hi,
                        f"{spec}_win": w, f"{spec}_win_lo": wlo, f"{spec}_win_hi": whi,
                        f"{spec}_envido_rate": s["envido_rate_a"], f"{spec}_ordago_rate": s["ordago_rate_a"],
                        f"{spec}_no_quiero_rate": s["no_quiero_rate_a"]})
        self.net.train()
        return row


# ----------------------------------------------------------------------------------------------------
# the training loop
def train(args: Args, resume: bool = False, log: Any = print, max_updates: int | None = None,
          run_info: dict[str, Any] | None = None, overwrite: bool = False,
          agents: Mapping[str, Any] | None = None) -> Trainer:
    """Run (or resume) a training run to its budget; return the trainer (its ``net``, ``history``, ``evals``).

    Every setting, agent and the checkpoint are checked before the run's folder is touched; the session then runs
    in a :class:`~experiments.train.session.RunSession`: an old run is replaced only by the new one's first
    checkpoint, and a session that fails before its first checkpoint leaves the folder as it was.

    Args:
        args: the settings.
        resume: continue the run in ``args.out`` from its checkpoint (a run already at its budget: nothing to do,
            nothing written).
        log: where messages go.
        max_updates: stop this session after this many updates (a checkpoint is written; ``resume``
            continues), like ``args.max_minutes`` but exact.
        run_info: what to record in ``run.json`` (the command line, the preset); the machine, torch
            version and start time are added.
        overwrite: start afresh even if ``args.out`` holds a run (its files are replaced at the first checkpoint).
        agents: agents of ``league_mix`` or ``eval_opponents`` already built, by spec (a probe's frozen agent):
            the league plays these very objects instead of building its own.

    Raises:
        SettingsError: a bad setting, agent or policy file, or an output folder that cannot be used; and its
            subclass CheckpointError: ``resume`` and the checkpoint is missing, damaged, forged or from other
            settings; or not ``resume`` and ``args.out`` already holds a run (and not ``overwrite``). Nothing is
            written then.
        TrainingInterrupted: Ctrl-C (a ``KeyboardInterrupt``); the message says where the last checkpoint is.
        TrainingDiverged: a loss or a weight became NaN or infinite; the last good checkpoint is kept.
    """
    t = Trainer(args, resume=resume, overwrite=overwrite, log=log, agents=agents)
    if resume and t.update >= t.num_updates:
        log(f"the run in {t.out} is complete (update {t.update} of {t.num_updates}): nothing to do (give a larger "
            "--total-decisions to train on)")
        return t
    with RunSession(t, resume) as run:
        _run(t, run, log, max_updates, run_info, resume)
    return t


def _run(t: Trainer, run: RunSession, log: Any, max_updates: int | None, run_info: dict[str, Any] | None,
         resume: bool) -> None:
    """The session of :func:`train`, inside its :class:`~experiments.train.session.RunSession`."""
    a = t.args
    report.write_run_record(t.out, a.to_dict(), run_info, resume, threads_for(a), t.update)
    writer = run.track(SummaryWriter(str(t.out / "tb"), purge_step=t.update if resume else None))
    opponents = split_specs(a.eval_opponents)
    session_start = time.perf_counter()
    elapsed_before = t.elapsed

    def clock() -> float:
        """Seconds of training of this run, over all its sessions."""
        return elapsed_before + time.perf_counter() - session_start

    if a.warm_start.endswith(".pt") and not resume:
        log(f"warm start: the weights of {a.warm_start}")         # loaded (and checked) by the Trainer
    if a.warm_start == "equity" and not t.bc_done:
        bc = t.behaviour_cloning()
        check_finite(t.net, {"bc_loss": bc["bc_loss"]}, 0, a)
        t.elapsed = clock()
        log(f"warm start: cloned EquityAgent on {bc['bc_samples']:,} decisions, "
            f"accuracy {bc['bc_accuracy']:.3f}, loss {bc['bc_loss']:.3f}")
        for k, v in bc.items():
            writer.add_scalar(f"warm_start/{k}", v, 0)
    total = t.num_updates * t.batch
    bar = run.track(report.progress_bar(total, "training", a.progress, initial=min(t.update * t.batch, total)))
    last_eval = report.eval_text(t.evals[-1], opponents) if t.evals else "-"
    stopped = False
    first_update = t.update
    while t.update < t.num_updates:
        if (a.max_minutes and time.perf_counter() - session_start > 60 * a.max_minutes) or \
                (max_updates is not None and t.update - first_update >= max_updates):
            stopped = True
            break
        t0 = time.perf_counter()
        if t.exploiter is not None and (t.exploiter_born < 0 or (
                a.exploiter_reset_every and t.update - t.exploiter_born >= a.exploiter_reset_every)):
            t.reset_exploiter()
        if a.magnet_coef and (t.magnet is None or (
                a.magnet_every and t.update - t.magnet_born >= a.magnet_every)):
            t.refresh_magnet()
        lr = a.learning_rate * (1.0 - t.update / t.num_updates) if a.anneal_lr else a.learning_rate
        for opt in (t.opt, t.exploiter_opt):
            if opt is not None:
                opt.param_groups[0]["lr"] = lr
        timing = t.rollout()
        t1 = time.perf_counter()
        stats = t.learn(value_only=t.update < a.value_warmup)
        if t.exploiter is not None:
            ex = t.learn(value_only=t.update < a.value_warmup, exploiter=True)
            stats |= {"exploiter_policy_loss": ex["policy_loss"], "exploiter_entropy": ex["entropy"],
                      "exploiter_trained": ex["trained"]}
        t2 = time.perf_counter()
        t.update += 1
        t.elapsed = clock()
        rec = t.league.take_recent()
        row = {"update": t.update, "decisions": t.decisions, "learner_decisions": t.learner_decisions,
               "games": t.games, "minutes": t.elapsed / 60,
               "decisions_per_s": t.batch / (t2 - t0), "lr": t.opt.param_groups[0]["lr"], **stats,
               "vs_league_win_rate": rec["learner_wins"] / rec["games"] if rec["games"] else float("nan"),
               "vs_league_stones_per_hand": rec["learner_stones"] / rec["hands"] if rec["hands"] else float("nan"),
               **({"exploiter_stones_per_hand": rec["exploiter_stones"] / rec["exploiter_hands"]
                   if rec["exploiter_hands"] else float("nan")} if t.exploiter is not None else {}),
               "time_env": timing["env"], "time_policy": timing["policy"], "time_opponents": timing["opponents"],
               "time_update": t2 - t1}
        t.history.append(row)
        for k in ("decisions_per_s", "lr", "vs_league_win_rate", "vs_league_stones_per_hand", "games",
                  "time_env", "time_policy", "time_opponents", "time_update", "exploiter_stones_per_hand",
                  "exploiter_policy_loss", "exploiter_entropy"):
            if k in row:
                writer.add_scalar(f"charts/{k}", row[k], t.update)
        for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance", "magnet_kl"):
            if k in row:
                writer.add_scalar(f"losses/{k}", row[k], t.update)
        if t.update % a.snapshot_every == 0:
            t.league.add_snapshot(cpu_weights(t.net), t.update)
        final = t.update == t.num_updates
        if (a.eval_every and t.update % a.eval_every == 0) or final:
            ev = t.evaluate()
            ev["minutes"] = t.elapsed / 60
            t.evals.append(ev)
            last_eval = report.eval_text(ev, opponents)
            if eval_score(ev, opponents) >= max(eval_score(e, opponents) for e in t.evals):
                checkpoint.export_policy(t, {"eval": ev, "eval_score": eval_score(ev, opponents)},
                                         name="best_policy.pt")
            for k, v in ev.items():
                if k not in ("update", "decisions", "minutes"):
                    writer.add_scalar(f"eval/{k}", v, t.update)
            t.elapsed = clock()
        bar.update(t.batch)
        bar.set_postfix_str(f"{row['decisions_per_s'] / 1000:.0f}k dec/s | eval {last_eval}")
        if t.update % a.checkpoint_every == 0 or final:
            run.save(t)
    bar.close()
    if run.saved_update != t.update or not run.committed:
        run.save(t)
    if stopped:
        log(f"stopped at update {t.update}/{t.num_updates}; continue with --resume --out {t.out}")
