"""Masked PPO with a league, on VectorMusEnv: the project's self-play trainer (``mus train``).

One readable file in the manner of CleanRL's ``ppo.py``: a flat typed config (:class:`Args`, presets in
:data:`PRESETS`), a seeding block, rollouts, advantages, the PPO update, evaluation, checkpoints. Read it top
to bottom.

Algorithm
---------
* **One policy for all four seats.** The observation is relative to the acting seat (own hand, partner,
  opponents, position to the mano), so one :class:`~agents.policy.PolicyNet` plays every seat. It has a
  shared MLP trunk, a policy head over the 31 actions (47 with señas) and a value head.
* **Señas** (optional, ``signals="truthful"`` or ``"free"``, RULES.md §8): the games are played with the
  partners' signalling channel, and everything is sized by the config (:func:`mus_env.signals.obs_dim`,
  :func:`~mus_env.signals.num_actions`): the network reads the 477-entry observation (the 345 of the game plus
  the signs seen) and its policy head also chooses the sign token (actions 31..46) at each sign decision, so
  the learner learns what to sign and how to read its partner's (and intercepted) signs. Sign decisions give
  no reward of their own; they are trained through the hands they lead to. The warm start clones EquityAgent's
  signs too (it signs truthfully, also where ``free`` would let it lie), the baselines of the league and of the
  evaluation sign as they do in ``mus tournament --signals``, and the evaluation plays the same signals
  game. ``signal_intercept_p`` is the chance that an opponent sees a sign. The exported policy records the
  config; a checkpoint cannot be resumed with other signals (the network's sizes differ).
* **Masked categorical.** Illegal actions get the logit :data:`~agents.policy.MASKED_LOGIT` before the
  softmax, so their probability is exactly 0: they are never sampled, and they add nothing to the
  log-probability, the entropy or the gradient (``masked_log_probs``).
* **A league.** On each table the learner plays one team (seats {0, 2} or {1, 3}, drawn at random at every
  new game) and the other team is an opponent drawn, per game, from ``league_mix``: ``self`` (the current
  policy: then all four seats are the learner's and both teams' decisions are trained), ``snapshot``
  (a frozen past version of the learner, from a pool refreshed every ``snapshot_every`` updates), or a
  baseline agent (``rule``, ``equity``, ``random``, ``ordago``). Only the learner's decisions are trained.
* **An exploiter** (``exploiter`` in ``league_mix``, AlphaStar's "main exploiter"): a second network, of
  the learner's shape, that plays only against the learner, on the tables where the league draws it, and is
  trained (with its own optimiser and buffer, by the same PPO update) to beat it. The learner trains on those
  tables as on any other, so it meets an opponent that seeks out its current weaknesses, where frozen
  baselines and snapshots only show it the old ones. The exploiter starts as a copy of the learner after the
  warm start and, every ``exploiter_reset_every`` updates (0: never), is reset to a fresh copy. Its result
  against the learner is logged (``exploiter_stones_per_hand``) and its policy written to ``exploiter.pt``.
* **Restricted learners** (``learner_decides``, for ``mus exploit``'s probes): the learner may decide only the
  betting, or the betting of one lance; its other decisions are played by the opposing agent's own policy
  and are not trained (they are not in its trajectories; the rewards they lead to reach the learner's
  pending decision as usual).
* **Centralised critic** (optional, ``central_critic``): the value head also reads every seat's hand
  (:func:`hands_input`, the hidden part of ``MusGame.state()`` made relative to the acting seat), as in
  PerfectDou; the policy head reads only the observation, so the agent that plays is unchanged.
* **Warm start** (optional, ``warm_start="equity"``): before PPO, the policy head is fitted by behaviour
  cloning to ``EquityAgent``'s decisions (all four seats played by it), then ``value_warmup`` updates train
  only the value head while the policy acts, so the first policy updates have a critic that knows the
  game. ``warm_start`` may also be a policy file (``*.pt`` of ``mus train``, of the same network shape):
  the run then starts from its weights, policy and value head, with no cloning (``mus exploit
  --warm-start agent`` starts a best response from the probed policy itself).

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

:class:`TurnBuffer` holds the streams; :func:`turn_based_gae` computes the advantages and is tested against
a hand computation in ``tests/test_training.py``.

Rewards
-------
The environment runs with ``reward="stones"``: after each hand, each seat receives its team's stones minus
the other team's (a game won by an accepted órdago also credits the stones the winners lacked). The
learner's reward is ``stones_coef * stones / target + game_coef * outcome``, where ``outcome`` is +1 / -1 for
both partners when the game ends. Default ``stones_coef = game_coef = 1``: the stones give a signal at every
hand (a game lasts 5-15 hands, so the game outcome alone is a sparse signal) and over a whole game they add
up to about the winner's margin (``(40 - loser's score) / 40``), while the outcome term keeps the objective
on winning games (what the evaluation measures) rather than on stones alone, so the policy stays
score-aware.

Everything the trainer writes goes to ``--out``: ``checkpoint.pt`` (every ``checkpoint_every`` updates;
``--resume`` continues from it exactly: a stopped and resumed run logs the same metrics as an uninterrupted
one), ``policy.pt`` (the current policy, loadable by ``make_agent``), ``best_policy.pt`` (the policy at the
evaluation with the best smallest margin over the evaluation opponents, :func:`eval_score`; self-play
margins against fixed baselines drift, so the last policy is not always the strongest against them: measure
a chosen policy again on fresh deals, as ``experiments.train.ship_agent`` does), ``metrics.csv`` and ``eval.csv``,
TensorBoard events (``charts/``, ``losses/``, ``eval/``), ``learning_curve.png`` and ``args.json``.

Command line: ``mus train`` (the ``default`` preset, about 10 minutes on 2 cores) or
``python -m experiments.train.ppo --preset ship --out runs/ship``; every field of :class:`Args` is a flag.
"""

from __future__ import annotations

import argparse
import copy
import csv
import dataclasses
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mus_env import MusConfig, VectorMusEnv
from mus_env import signals as sig
from mus_env.actions import NUM_ACTIONS, Action
from mus_env.config import SIGNALS_CHOICES
from mus_env.observation import OBS_DIM, OFFSETS
from mus_env.tables import LANCE_NAMES

__all__ = ["Args", "PRESETS", "make_args", "TurnBuffer", "turn_based_gae", "League", "Trainer", "train",
           "CheckpointError", "relative_hands", "hands_input", "HANDS_DIM", "main"]


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
    progress: bool = True
    """show a progress bar"""
    # game
    kings: int = 8
    """8 or 4 kings"""
    target: int = 40
    """stones to win a game"""
    max_mus_rounds: int = 6
    """cap on discard rounds per hand while training (endless mus guard; evaluation plays uncapped)"""
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
    trained only against the learner), a baseline (rule, equity, random, ordago), ppo or a policy file"""
    snapshot_every: int = 10
    """updates between snapshots of the learner added to the pool"""
    pool_size: int = 10
    """snapshots kept (the oldest leaves)"""
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
        """Raise ``ValueError`` naming the first bad field."""
        positive = ("total_decisions", "num_tables", "rollout_steps", "update_epochs", "minibatch_size",
                    "snapshot_every", "pool_size", "checkpoint_every", "eval_hands", "eval_games")
        for name in positive:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"Args.{name} must be an int >= 1, got {v!r}")
        for name in ("bc_decisions", "bc_epochs", "value_warmup", "eval_every", "max_mus_rounds", "torch_threads",
                     "exploiter_reset_every"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Args.{name} must be an int >= 0, got {v!r}")
        for name in ("seed", "eval_seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
                raise ValueError(f"Args.{name} must be an int in 0..{2**32 - 1}, got {v!r}")
        for name in ("learning_rate", "clip_coef", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Args.{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"Args.{name} must be in [0, 1], got {getattr(self, name)!r}")
        for name in ("ent_coef", "vf_coef", "target_kl", "max_minutes", "stones_coef", "game_coef"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"Args.{name} must be >= 0, got {getattr(self, name)!r}")
        if not self.hidden or any(h < 1 for h in self.hidden):
            raise ValueError(f"Args.hidden must be one or more widths >= 1, got {self.hidden!r}")
        if self.warm_start not in ("none", "equity") and not (self.warm_start.endswith(".pt")
                                                             and Path(self.warm_start).is_file()):
            raise ValueError(f"Args.warm_start must be 'none', 'equity' or an existing policy file *.pt, "
                             f"got {self.warm_start!r}")
        mix = parse_mix(self.league_mix)
        for spec in _split(self.eval_opponents):
            if not is_fixed_spec(spec):
                raise ValueError(f"Args.eval_opponents: {spec!r} is not a baseline ({', '.join(BASELINES)}), "
                                 "ppo or a policy file")
        if self.learner_decides not in LEARNER_DECIDES:
            raise ValueError(f"Args.learner_decides must be one of {', '.join(LEARNER_DECIDES)}, "
                             f"got {self.learner_decides!r}")
        if self.learner_decides != "all" and (set(_LEARNING_MEMBERS) & set(mix)):
            raise ValueError("Args.learner_decides: the decisions the learner does not make are played by the "
                             "opposing agent's own policy, so the league_mix must hold frozen agents only "
                             f"(no self, snapshot or exploiter), got {self.league_mix!r}")
        if self.exploiter_reset_every and "exploiter" not in mix:
            raise ValueError(f"Args.exploiter_reset_every={self.exploiter_reset_every} needs an exploiter in the "
                             f"league_mix (e.g. 'exploiter:0.25'), got {self.league_mix!r}")
        if self.signals not in SIGNALS_CHOICES:
            raise ValueError(f"Args.signals must be one of {', '.join(SIGNALS_CHOICES)} (señas, RULES.md §8), "
                             f"got {self.signals!r}")
        p = self.signal_intercept_p
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"Args.signal_intercept_p must be a number in [0, 1], got {p!r}")
        if p and self.signals == "off":
            raise ValueError(f"Args.signal_intercept_p={p!r} has no effect with signals off: give --signals "
                             "truthful or free, or leave --signal-intercept-p at 0")
        self.game_config()

    def game_config(self, training: bool = True) -> MusConfig:
        """The ruleset: training caps the mus rounds, evaluation plays the real game (both with the same
        señas settings)."""
        return MusConfig(kings=self.kings, target=self.target,
                         max_mus_rounds=self.max_mus_rounds if training else None,
                         signals=self.signals, signal_intercept_p=float(self.signal_intercept_p))


def threads_for(args: Args) -> int:
    """The torch thread count a run uses (``torch_threads``, or all cores up to 4 when it is 0)."""
    return args.torch_threads or max(1, min(4, os.cpu_count() or 1))


def machine_text() -> str:
    """A line describing this machine (CPU model, cores, memory), for run records and model cards."""
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
        kb = int(next(ln for ln in lines if ln.startswith("MemTotal")).split()[1])
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return (f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}")


#: Named presets: overrides of :class:`Args`.
PRESETS: dict[str, dict[str, Any]] = {
    # a few updates on a few tables, for tests and smoke runs (seconds)
    "tiny": dict(num_tables=32, rollout_steps=8, total_decisions=32 * 8 * 4, minibatch_size=128, eval_every=2,
                 eval_hands=16, eval_games=4, checkpoint_every=2, snapshot_every=1, pool_size=2, hidden=(32, 32),
                 torch_threads=1, bc_decisions=32 * 8 * 2, bc_epochs=1, value_warmup=1,
                 league_mix="self:0.4,snapshot:0.2,rule:0.2,equity:0.2"),
    # ``mus train``: the defaults of Args, about 10 minutes on 2 cores
    "default": dict(),
    # the shipped agent: the default run made longer (about 1.5 hours on 2 cores with one torch thread)
    "ship": dict(total_decisions=160_000_000, eval_every=100, checkpoint_every=25),
}

#: Baseline agents the league and the evaluation may use.
BASELINES = ("rule", "equity", "random", "ordago")

#: League members that are not frozen agents: the learner itself, its snapshots and its exploiter.
_LEARNING_MEMBERS = ("self", "snapshot", "exploiter")

#: Values of ``Args.learner_decides``.
LEARNER_DECIDES = ("all", "bidding", *LANCE_NAMES)

#: The betting actions (paso .. órdago): what the learner still decides under ``learner_decides="bidding"``.
_BETTING = slice(int(Action.PASO), int(Action.ORDAGO) + 1)


def _split(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def is_fixed_spec(name: str) -> bool:
    """A frozen agent the league and the evaluation can seat: a baseline, the shipped ``ppo``, or a policy file
    (``*.pt`` from ``mus train``, ``*.zip`` from sb3-contrib), as ``agents.make_agent`` reads them."""
    return name in BASELINES or name == "ppo" or name.endswith((".pt", ".zip"))


def policy_obs_dim(agent: Any) -> int | None:
    """The observation length a frozen policy agent reads (its network's input), None for the baselines (they
    read any observation)."""
    net = getattr(agent, "net", None)
    if net is not None and isinstance(getattr(net, "arch", None), dict):
        return int(net.arch["obs_dim"])
    shape = getattr(getattr(getattr(agent, "model", None), "observation_space", None), "shape", None)
    return int(shape[0]) if shape else None


def frozen_agent(spec: str, config: MusConfig) -> Any:
    """``agents.make_agent(spec)`` ready to play games of ``config`` (league opponents and evaluation).

    A policy trained without señas plays a signals game silently (it never signs and sees no sign:
    :class:`agents.signs.SilentAgent`; ``TorchPolicyAgent`` does this itself). A policy trained with señas
    cannot play a game without them.

    Raises:
        ValueError: ``spec`` is a policy whose observation does not fit ``config``; the message says which
            ``--signals`` it needs.
    """
    from agents import make_agent
    from agents.signs import SilentAgent

    agent = make_agent(spec)
    reads, game = policy_obs_dim(agent), sig.obs_dim(config)
    if reads is None or reads == game:
        return agent
    if reads == OBS_DIM:
        return agent if hasattr(agent, "net") else SilentAgent(agent, obs_dim=OBS_DIM)
    raise ValueError(f"opponent {spec!r} reads observations of {reads} entries (a policy trained with señas) but "
                     f"this run plays signals={config.signals!r} ({game} entries): train with --signals truthful "
                     "or free, or choose another opponent")


def learner_free(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], decides: str) -> npt.NDArray[np.bool_]:
    """Which of these decisions the learner makes under ``Args.learner_decides``: all of them, the betting ones
    (``bidding``: paso, envites, quiero, no quiero, órdago), or the betting of one lance (its name)."""
    if decides == "all":
        return np.ones(len(mask), dtype=bool)
    betting = np.asarray(mask)[:, _BETTING].any(axis=1)
    if decides == "bidding":
        return betting
    lance = np.asarray(obs)[:, OFFSETS["lance"]].argmax(axis=1)
    return betting & (lance == LANCE_NAMES.index(decides))


def parse_mix(text: str) -> dict[str, float]:
    """``"self:0.4,snapshot:0.2,rule:0.4"`` -> normalised shares; ``ValueError`` names a bad entry."""
    mix: dict[str, float] = {}
    for item in _split(text):
        name, sep, share = item.rpartition(":")
        if not sep:
            name, share = item, ""
        name = name.strip()
        if name not in _LEARNING_MEMBERS and not is_fixed_spec(name):
            raise ValueError(f"league_mix: unknown opponent {name!r} (use self, snapshot, exploiter, "
                             f"{', '.join(BASELINES)}, "
                             "ppo, or a policy file *.pt / *.zip)")
        try:
            w = float(share) if share else 1.0
        except ValueError:
            raise ValueError(f"league_mix: share of {name!r} must be a number, got {share!r}") from None
        if w < 0 or not np.isfinite(w):
            raise ValueError(f"league_mix: share of {name!r} must be >= 0, got {w}")
        mix[name] = mix.get(name, 0.0) + w
    total = sum(mix.values())
    if total <= 0:
        raise ValueError(f"league_mix {text!r} has no opponent with a positive share")
    return {k: v / total for k, v in mix.items() if v > 0}


def make_args(preset: str = "default", **overrides: Any) -> Args:
    """The :class:`Args` of a preset with some fields changed (``ValueError`` for an unknown name)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    fields = {f.name for f in dataclasses.fields(Args)}
    bad = sorted(set(overrides) - fields)
    if bad:
        raise ValueError(f"unknown Args field(s) {bad}")
    args = Args(**{**PRESETS[preset], **overrides})
    args.hidden = tuple(int(h) for h in args.hidden)
    args.check()
    return args


# ----------------------------------------------------------------------------------------------------
# turn-based trajectories
def turn_based_gae(row_ptr: npt.NDArray[np.int64], stream: npt.NDArray[np.int64], reward: npt.NDArray[np.float32],
                   value: npt.NDArray[np.float32], done: npt.NDArray[np.bool_], open_: npt.NDArray[np.bool_],
                   num_streams: int, gamma: float, lam: float) -> npt.NDArray[np.float32]:
    """GAE along each stream of decisions (a (table, seat) trajectory), walking the rollout backwards.

    Entries are in time order, grouped in rows (one environment step per row; ``row_ptr[r]:row_ptr[r+1]``
    is row r) and a stream appears at most once per row. An entry's successor is the next entry of its
    stream. ``done`` entries end their episode (no bootstrap); ``open_`` entries have no successor yet:
    they are bootstrap points only (their advantage is 0 and they are not trained).

    Returns:
        ``(N,)`` advantages; the value targets are ``advantages + value``.
    """
    adv = np.zeros(len(stream), dtype=np.float32)
    next_value = np.zeros(num_streams, dtype=np.float32)
    next_adv = np.zeros(num_streams, dtype=np.float32)
    for r in range(len(row_ptr) - 2, -1, -1):
        sl = slice(int(row_ptr[r]), int(row_ptr[r + 1]))
        s = stream[sl]
        go_on = (~done[sl]).astype(np.float32)
        delta = reward[sl] + gamma * go_on * next_value[s] - value[sl]
        a = np.where(open_[sl], 0.0, delta + gamma * lam * go_on * next_adv[s]).astype(np.float32)
        adv[sl] = a
        next_value[s] = value[sl]
        next_adv[s] = a
    return adv


class TurnBuffer:
    """The learner's decisions of one rollout, as per-seat streams (see the module docstring).

    Entries are appended in time order, one row per environment step (:meth:`add`); the first row holds the
    decisions carried over from the previous rollout. ``pending[b, s]`` is the index of seat s's latest
    decision on table b (-1: none), which collects that seat's rewards (:meth:`reward`) until the seat
    decides again or the game ends (:meth:`end_games`).
    """

    def __init__(self, num_tables: int, steps: int, obs_dim: int = OBS_DIM, num_actions: int = NUM_ACTIONS) -> None:
        self.B = num_tables
        cap = 4 * num_tables + steps * num_tables
        self.obs = np.zeros((cap, obs_dim), dtype=np.float32)
        self.mask = np.zeros((cap, num_actions), dtype=np.int8)
        self.action = np.zeros(cap, dtype=np.int64)
        self.logp = np.zeros(cap, dtype=np.float32)
        self.value = np.zeros(cap, dtype=np.float32)
        self.reward = np.zeros(cap, dtype=np.float32)
        self.done = np.zeros(cap, dtype=bool)
        self.stream = np.zeros(cap, dtype=np.int64)
        self.hands = np.full((cap, 4, 4), -1, dtype=np.int8)
        self.pending = np.full((num_tables, 4), -1, dtype=np.int64)
        self.n = 0
        self.rows = [0]

    def add(self, tables: npt.NDArray[np.int64], seats: npt.NDArray[np.int64], obs: npt.NDArray[np.float32],
            mask: npt.NDArray[np.int8], action: npt.NDArray[np.int64], logp: npt.NDArray[np.float32],
            value: npt.NDArray[np.float32], hands: npt.NDArray[np.int8] | None = None) -> None:
        """Append one step's learner decisions (distinct tables) as a new row (``hands``: the centralised
        critic's input, :func:`relative_hands`)."""
        k = len(tables)
        sl = slice(self.n, self.n + k)
        if hands is not None:
            self.hands[sl] = hands
        self.obs[sl], self.mask[sl], self.action[sl] = obs, mask, action
        self.logp[sl], self.value[sl] = logp, value
        self.reward[sl] = 0.0
        self.done[sl] = False
        self.stream[sl] = tables * 4 + seats
        self.pending[tables, seats] = np.arange(self.n, self.n + k)
        self.n += k
        self.rows.append(self.n)

    def reward_seats(self, rewards: npt.NDArray[np.float32]) -> None:
        """Add ``rewards (B, 4)`` (by absolute seat) to each seat's pending decision."""
        has = self.pending >= 0
        np.add.at(self.reward, self.pending[has], rewards[has])

    def end_games(self, tables: npt.NDArray[np.int64]) -> None:
        """The games of ``tables`` are over: their pending decisions are final (``done``)."""
        p = self.pending[tables]
        self.done[p[p >= 0]] = True
        self.pending[tables] = -1

    def open_entries(self) -> npt.NDArray[np.bool_]:
        """``(n,)`` True for each stream's pending decision (no successor yet)."""
        o = np.zeros(self.n, dtype=bool)
        p = self.pending[self.pending >= 0]
        o[p] = True
        return o

    def advantages(self, gamma: float, lam: float) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """GAE of every entry and which entries are trainable (all but the open ones)."""
        n = self.n
        open_ = self.open_entries()
        adv = turn_based_gae(np.asarray(self.rows, dtype=np.int64), self.stream[:n], self.reward[:n],
                             self.value[:n], self.done[:n], open_, 4 * self.B, gamma, lam)
        return adv, ~open_

    def carry_over(self) -> None:
        """Start the next rollout: keep only the pending decisions, as its first row."""
        keep = np.sort(self.pending[self.pending >= 0])
        k = len(keep)
        for name in _BUFFER_ARRAYS:
            arr = getattr(self, name)
            arr[:k] = arr[keep]
        new_index = np.full(max(self.n, 1), -1, dtype=np.int64)
        new_index[keep] = np.arange(k)
        has = self.pending >= 0
        self.pending[has] = new_index[self.pending[has]]
        self.n = k
        self.rows = [0, k]

    def state_dict(self) -> dict[str, Any]:
        """The carried-over entries and pending indices (call after :meth:`carry_over`)."""
        n = self.n
        return {"n": n, "pending": self.pending.copy(),
                **{k: getattr(self, k)[:n].copy() for k in _BUFFER_ARRAYS}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        n = int(state["n"])
        for k in _BUFFER_ARRAYS:
            getattr(self, k)[:n] = state[k]
        self.pending[...] = state["pending"]
        self.n = n
        self.rows = [0, n]


#: The per-update counters of the learner's results against the league (reset after each update's log row).
_RECENT = {"games": 0, "learner_wins": 0.0, "learner_stones": 0.0, "hands": 0, "exploiter_stones": 0.0,
           "exploiter_hands": 0}

_BUFFER_ARRAYS = ("obs", "mask", "action", "logp", "value", "reward", "done", "stream", "hands")

#: Size of the centralised critic's extra input: four hands, one-hot over the 40 card ids.
HANDS_DIM = 4 * 40


def relative_hands(hands: npt.NDArray[np.int8], seat: npt.NDArray[np.int64]) -> npt.NDArray[np.int8]:
    """``(n, 4 seats, 4 slots)`` card ids reordered so that row q is the hand of seat ``(seat + q) % 4`` (q: 0
    self, 1 right-hand opponent, 2 partner, 3 left-hand opponent, as in the observation); -1 empty."""
    order = (np.asarray(seat)[:, None] + np.arange(4)[None, :]) % 4
    return np.take_along_axis(np.asarray(hands), order[:, :, None], axis=1)


def hands_input(hands: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
    """``(n, HANDS_DIM)``: each of the four (relative) hands one-hot over the 40 card ids."""
    n = len(hands)
    out = np.zeros((n, 4, 40), dtype=np.float32)
    h = hands.astype(np.int64)
    rows, q, slot = np.nonzero(h >= 0)
    out[rows, q, h[rows, q, slot]] = 1.0
    return out.reshape(n, HANDS_DIM)


# ----------------------------------------------------------------------------------------------------
# the league
class League:
    """Who sits opposite the learner on each table, redrawn at every new game.

    ``kind[b]`` indexes :attr:`members`: 0 is ``self`` (the current policy on both teams), then the
    baselines of the mix, then the ``exploiter`` when the mix has one (:attr:`exploiter_kind`), then one entry
    per snapshot of the pool (from :attr:`first_snapshot`). ``learner[b, s]`` says which seats are the
    learner's.
    """

    def __init__(self, mix: dict[str, float], pool_size: int, num_tables: int,
                 config: MusConfig | None = None) -> None:
        self.mix = mix
        self.pool_size = pool_size
        # the baselines in a fixed order, then any other frozen agents (policy files) in the mix's order
        self.baselines = [name for name in BASELINES if name in mix] + \
            [name for name in mix if name not in (*_LEARNING_MEMBERS, *BASELINES)]
        self.has_exploiter = "exploiter" in mix
        #: kind of the exploiter's tables (-1: no exploiter), and of the pool's first snapshot
        self.exploiter_kind = 1 + len(self.baselines) if self.has_exploiter else -1
        self.first_snapshot = 1 + len(self.baselines) + int(self.has_exploiter)
        self.agents = {name: frozen_agent(name, config or MusConfig()) for name in self.baselines}
        self.pool: list[dict[str, Any]] = []           # snapshot state dicts, oldest first
        self.pool_ids: list[int] = []                  # the update each snapshot was taken at
        self.kind = np.zeros(num_tables, dtype=np.int64)
        self.learner = np.ones((num_tables, 4), dtype=bool)

    @property
    def members(self) -> list[str]:
        return ["self", *self.baselines, *(["exploiter"] if self.has_exploiter else []),
                *(f"snapshot@{u}" for u in self.pool_ids)]

    def draw(self, tables: npt.NDArray[np.int64], rng: np.random.Generator) -> None:
        """New opponents (and learner team) for the games starting on ``tables``."""
        if not len(tables):
            return
        names = list(self.mix)
        shares = np.array([self.mix[n] for n in names])
        pick = rng.choice(len(names), size=len(tables), p=shares)
        team = rng.integers(0, 2, len(tables))
        snap = rng.integers(0, max(len(self.pool), 1), len(tables))
        kind = np.zeros(len(tables), dtype=np.int64)
        for j, name in enumerate(names):
            sel = pick == j
            if name == "snapshot":
                kind[sel] = np.where(len(self.pool) > 0, self.first_snapshot + snap[sel], 0)
            elif name == "exploiter":
                kind[sel] = self.exploiter_kind
            elif name != "self":
                kind[sel] = 1 + self.baselines.index(name)
        self.kind[tables] = kind
        seats = np.arange(4)
        self.learner[tables] = (seats[None, :] % 2 == team[:, None]) | (kind[:, None] == 0)

    def add_snapshot(self, state: dict[str, Any], update: int) -> None:
        """Add a frozen copy of the learner; past ``pool_size`` the oldest leaves (tables that faced it face
        the next oldest until their game ends)."""
        self.pool.append(state)
        self.pool_ids.append(update)
        if len(self.pool) > self.pool_size:
            self.pool.pop(0)
            self.pool_ids.pop(0)
            first = self.first_snapshot
            # tables facing the dropped snapshot now face the next one (the indices shift by one)
            old = self.kind >= first
            self.kind[old] = np.maximum(self.kind[old] - 1, first)


# ----------------------------------------------------------------------------------------------------
# checkpoints
class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: damaged, or made by another configuration."""


#: What a run writes in its folder (``--overwrite`` removes these and nothing else).
_RUN_FILES = ("checkpoint.pt", "policy.pt", "best_policy.pt", "metrics.csv", "eval.csv", "learning_curve.png",
              "args.json", "run.json", "tb", "exploiter.pt")
_RESUMABLE_CHANGES = ("total_decisions", "max_minutes", "progress", "out", "eval_every", "checkpoint_every")


def _to_torch(tree: Any) -> Any:
    """numpy arrays -> tensors (torch's safe loader reads tensors and plain values only)."""
    import torch

    if isinstance(tree, np.ndarray):
        if tree.dtype == np.uint64:
            return {"__uint64__": torch.from_numpy(tree.view(np.int64).copy())}
        return torch.from_numpy(np.ascontiguousarray(tree).copy())
    if isinstance(tree, dict):
        return {k: _to_torch(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_to_torch(v) for v in tree]
    return tree


def _to_numpy(tree: Any) -> Any:
    import torch

    if isinstance(tree, torch.Tensor):
        return tree.numpy().copy()
    if isinstance(tree, dict):
        if set(tree) == {"__uint64__"}:
            return tree["__uint64__"].numpy().view(np.uint64).copy()
        return {k: _to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_to_numpy(v) for v in tree]
    return tree


class RestrictedAgent:
    """The learner where ``Args.learner_decides`` lets it decide, another agent (the opponent's own policy)
    everywhere else: how a restricted probe's policy plays, in training and in evaluation."""

    def __init__(self, learner: Any, proxy: Any, decides: str, name: str | None = None) -> None:
        if decides not in LEARNER_DECIDES:
            raise ValueError(f"decides must be one of {', '.join(LEARNER_DECIDES)}, got {decides!r}")
        self.learner, self.proxy, self.decides = learner, proxy, decides
        self.name = name or f"{getattr(learner, 'name', 'learner')}[{decides}]"

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        obs, masks = np.asarray(obs), np.asarray(masks)
        free = learner_free(obs, masks, self.decides)
        out = np.zeros(len(obs), dtype=np.int64)
        if free.any():
            out[free] = self.learner.act_batch(obs[free], masks[free], rng)
        if (~free).any():
            out[~free] = self.proxy.act_batch(obs[~free], masks[~free], rng)
        return out

    def act(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
            rng: np.random.Generator) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None], rng)[0])

    def __call__(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
                 rng: np.random.Generator) -> int:
        return self.act(observation, action_mask, rng)


class SnapshotBank:
    """The league's frozen snapshots, stacked: one batched forward pass plays every snapshot's tables.

    Each snapshot's rows are gathered into a zero-padded block ``(K, G, obs_dim)`` (K snapshots, G the largest
    group) and pushed through the stacked layers with ``torch.baddbmm``, so a step costs one pass instead of
    one per snapshot; the probabilities equal each snapshot's own ``PolicyNet`` (tested).
    """

    def __init__(self, states: list[dict[str, Any]], key: tuple[int, ...] = ()) -> None:
        import torch

        self.key = key
        self.layers: list[tuple[Any, Any]] = []
        if not states:
            return
        names = sorted({k.rsplit(".", 1)[0] for k in states[0] if k.startswith("trunk.")},
                       key=lambda n: int(n.split(".")[1])) + ["policy_head"]
        for name in names:
            w = torch.stack([st[f"{name}.weight"].detach().float() for st in states]).transpose(1, 2).contiguous()
            b = torch.stack([st[f"{name}.bias"].detach().float() for st in states])[:, None, :].contiguous()
            self.layers.append((w, b))

    def probabilities(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8],
                      which: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """Masked action probabilities of row ``i`` under snapshot ``which[i]``."""
        import torch

        from agents.policy import masked_log_probs

        k = len(self.layers[0][0])
        which = np.asarray(which, dtype=np.int64)
        order = np.argsort(which, kind="stable")
        counts = np.bincount(which, minlength=k)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pos = np.empty(len(which), dtype=np.int64)
        pos[order] = np.arange(len(which)) - np.repeat(starts, counts)
        x = torch.zeros((k, int(counts.max()), obs.shape[1]), dtype=torch.float32)
        x[torch.from_numpy(which), torch.from_numpy(pos)] = torch.from_numpy(np.ascontiguousarray(obs))
        with torch.no_grad():
            for i, (w, b) in enumerate(self.layers):
                x = torch.baddbmm(b, x, w)
                if i < len(self.layers) - 1:
                    x = torch.relu(x)
            logits = x[torch.from_numpy(which), torch.from_numpy(pos)]
            logp = masked_log_probs(logits, torch.from_numpy(np.ascontiguousarray(mask)))
        return logp.exp().numpy()


# ----------------------------------------------------------------------------------------------------
# the trainer
class Trainer:
    """A training run: environment, network, optimiser, league, buffer, logs (see :func:`train`)."""

    def __init__(self, args: Args, resume: bool = False, overwrite: bool = False) -> None:
        import torch

        from agents.policy import PolicyNet

        args.check()
        self.args = args
        self.out = Path(args.out)
        if not resume and (self.out / "checkpoint.pt").exists():
            if not overwrite:
                raise CheckpointError(f"{self.out} already holds a training run (checkpoint.pt): continue it with "
                                      "--resume, start a new one with another --out, or replace it with --overwrite")
            for name in _RUN_FILES:
                target = self.out / name
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
        self.out.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(threads_for(args))
        # seeding: every random choice of the run flows from args.seed
        self.rng = np.random.default_rng([args.seed, 0x7EA1])        # league draws, sampling, minibatches
        torch.manual_seed(args.seed)
        self.cfg = args.game_config(training=True)
        self.env = VectorMusEnv(args.num_tables, self.cfg, seed=args.seed, reward="stones")
        # sized by the config: 345 observations and 31 actions, or 477 and 47 with señas
        self.obs_dim, self.num_actions = sig.obs_dim(self.cfg), sig.num_actions(self.cfg)
        self.net = PolicyNet(self.obs_dim, self.num_actions, hidden=args.hidden,
                             value_dim=HANDS_DIM if args.central_critic else 0)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate, eps=1e-5)
        self.league = League(parse_mix(args.league_mix), args.pool_size, args.num_tables, self.cfg)
        for spec in _split(args.eval_opponents):
            frozen_agent(spec, self.cfg)                 # a policy that cannot play this game: fail now, not later
        self.buffer = TurnBuffer(args.num_tables, args.rollout_steps, self.obs_dim, self.num_actions)
        # the exploiter (league_mix "exploiter"): a second network trained only against the learner, on the tables
        # where the learner faces it, to find and punish its weaknesses while the learner trains against it
        self.exploiter: Any = None
        self.exploiter_opt: Any = None
        self.exploiter_buffer: TurnBuffer | None = None
        self.exploiter_born = -1       # the update the exploiter was last reset to a copy of the learner (-1: not yet)
        if self.league.has_exploiter:
            self.exploiter = PolicyNet(self.obs_dim, self.num_actions, hidden=args.hidden,
                                       value_dim=HANDS_DIM if args.central_critic else 0)
            self.exploiter_opt = torch.optim.Adam(self.exploiter.parameters(), lr=args.learning_rate, eps=1e-5)
            self.exploiter_buffer = TurnBuffer(args.num_tables, args.rollout_steps, self.obs_dim, self.num_actions)
        self.snapshots: SnapshotBank | None = None      # the pool, stacked for batched play
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
        self.recent = dict(_RECENT)
        if resume:
            self.load_checkpoint(self.out / "checkpoint.pt")
        else:
            self.obs, self.mask = self.env.reset()
            self.league.draw(np.arange(args.num_tables), self.rng)
        self._eval_deals: dict[str, Any] = {}

    # -- acting ------------------------------------------------------------------------------------
    def _policy(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], hands: npt.NDArray[np.int8],
                net: Any = None) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Sample the learner's (or ``net``'s) actions: ``(actions, log-probabilities, values)``."""
        import torch

        from agents.policy import masked_log_probs, sample_masked

        if not len(obs):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)
        with torch.no_grad():
            logits, value = (self.net if net is None else net)(torch.from_numpy(obs), self._value_input(hands))
            logp_all = masked_log_probs(logits, torch.from_numpy(mask))
        logp_all = logp_all.numpy()
        action = sample_masked(np.exp(logp_all), self.rng)
        return action, logp_all[np.arange(len(action)), action], value.numpy()

    def _value_input(self, hands: npt.NDArray[np.int8]) -> Any:
        import torch

        return torch.from_numpy(hands_input(hands)) if self.args.central_critic else None

    def reset_exploiter(self) -> None:
        """Make the exploiter a copy of the current learner with a fresh optimiser; its decisions still pending
        (taken by the old exploiter) are dropped, not trained."""
        import torch

        self.exploiter.load_state_dict(copy.deepcopy(self.net.state_dict()))
        self.exploiter_opt = torch.optim.Adam(self.exploiter.parameters(), lr=self.args.learning_rate, eps=1e-5)
        self.exploiter_buffer.pending[...] = -1
        self.exploiter_buffer.n = 0
        self.exploiter_buffer.rows = [0]
        self.exploiter_born = self.update

    def exploiter_seats(self) -> npt.NDArray[np.bool_]:
        """``(B, 4)`` True for the seats the exploiter plays (the opponents' seats of its tables)."""
        return (self.league.kind == self.league.exploiter_kind)[:, None] & ~self.league.learner

    def _snapshot_bank(self) -> SnapshotBank:
        """The league's snapshots stacked for one batched forward pass (rebuilt when the pool changes)."""
        key = tuple(self.league.pool_ids)
        if self.snapshots is None or self.snapshots.key != key:
            self.snapshots = SnapshotBank(self.league.pool, key)
        return self.snapshots

    def _opponent_actions(self, rows: npt.NDArray[np.int64], actions: npt.NDArray[np.int64]) -> None:
        """Fill ``actions[rows]`` with the opponents' choices: each baseline on its tables, and all snapshots
        in one batched forward pass."""
        from agents.policy import sample_masked

        kinds = self.league.kind[rows]
        nb = len(self.league.baselines)
        first = self.league.first_snapshot
        if ((kinds == 0) | (kinds == self.league.exploiter_kind)).any():
            raise AssertionError("a 'self' or 'exploiter' table reached the frozen opponents")
        for kind in np.unique(kinds[kinds <= nb]):
            sel = rows[kinds == kind]
            agent = self.league.agents[self.league.baselines[kind - 1]]
            actions[sel] = agent.act_batch(self.obs[sel], self.mask[sel], self.rng)
        snap = kinds >= first
        if snap.any():
            sel = rows[snap]
            probs = self._snapshot_bank().probabilities(self.obs[sel], self.mask[sel], kinds[snap] - first)
            actions[sel] = sample_masked(probs, self.rng)

    def _learner_rewards(self, rewards: npt.NDArray[np.float32], done: npt.NDArray[np.bool_],
                         info: dict[str, Any]) -> npt.NDArray[np.float32]:
        a = self.args
        r = rewards * (a.stones_coef / self.cfg.target)
        fin = np.flatnonzero(done)
        if fin.size:
            winner = info["winner"][fin].astype(np.int64)
            seat_team = np.arange(4) % 2
            r[fin] += a.game_coef * np.where(seat_team[None, :] == winner[:, None], 1.0, -1.0)
        return r.astype(np.float32)

    def rollout(self) -> dict[str, float]:
        """``rollout_steps`` steps on every table; the learner's decisions go to the buffer."""
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
                self._opponent_actions(opp, actions)
            t2 = time.perf_counter()
            self.obs, self.mask, rewards, done, info = self.env.step(actions)
            t3 = time.perf_counter()
            r = self._learner_rewards(rewards, done, info)
            self.buffer.reward_seats(np.where(self.league.learner, r, 0.0).astype(np.float32))
            if self.exploiter is not None:
                self.exploiter_buffer.reward_seats(np.where(self.exploiter_seats(), r, 0.0).astype(np.float32))
            fin = np.flatnonzero(done)
            if fin.size:
                self.buffer.end_games(fin)
                if self.exploiter is not None:
                    self.exploiter_buffer.end_games(fin)
                self._count_games(fin, info)
                self.league.draw(fin, self.rng)
            hand = np.flatnonzero(info["hand_finished"])
            if hand.size:
                self._count_hands(hand, rewards)
            self.decisions += B
            self.learner_decisions += int(lrn.size)
            t_net += t1 - t0
            t_opp += t2 - t1
            t_env += t3 - t2
        return {"env": t_env, "policy": t_net, "opponents": t_opp}

    def _count_games(self, fin: npt.NDArray[np.int64], info: dict[str, Any]) -> None:
        # learner's results against non-self opponents (self-play games are 50/50 by construction)
        vs = fin[self.league.kind[fin] != 0]
        self.games += int(fin.size)
        if vs.size:
            learner_team = np.argmax(self.league.learner[vs], axis=1) % 2
            self.recent["games"] += int(vs.size)
            self.recent["learner_wins"] += float((info["winner"][vs] == learner_team).sum())

    def _count_hands(self, hand: npt.NDArray[np.int64], rewards: npt.NDArray[np.float32]) -> None:
        vs = hand[self.league.kind[hand] != 0]
        if vs.size:
            learner_seat = np.argmax(self.league.learner[vs], axis=1)
            stones = rewards[vs, learner_seat]
            self.recent["hands"] += int(vs.size)
            self.recent["learner_stones"] += float(stones.sum())
            ex = self.league.kind[vs] == self.league.exploiter_kind
            self.recent["exploiter_hands"] += int(ex.sum())
            self.recent["exploiter_stones"] -= float(stones[ex].sum())

    # -- learning ----------------------------------------------------------------------------------
    def learn(self, value_only: bool = False, exploiter: bool = False) -> dict[str, float]:
        """PPO epochs over the rollout's trainable decisions of the learner (or of the exploiter)."""
        import torch

        from agents.policy import masked_log_probs

        a = self.args
        net, opt, buffer = (self.exploiter, self.exploiter_opt, self.exploiter_buffer) if exploiter else \
            (self.net, self.opt, self.buffer)
        adv, train = buffer.advantages(a.gamma, a.gae_lambda)
        idx = np.flatnonzero(train)
        n = buffer.n
        returns = adv + buffer.value[:n]
        obs = torch.from_numpy(buffer.obs[:n])
        vin = self._value_input(buffer.hands[:n])
        mask = torch.from_numpy(buffer.mask[:n])
        act = torch.from_numpy(buffer.action[:n])
        old_logp = torch.from_numpy(buffer.logp[:n])
        adv_t, ret_t = torch.from_numpy(adv), torch.from_numpy(returns)
        stats: dict[str, list[float]] = {k: [] for k in ("pg", "v", "ent", "kl", "clip")}
        stop = False
        for _ in range(a.update_epochs):
            order = self.rng.permutation(idx)
            for start in range(0, len(order), a.minibatch_size):
                mb = torch.from_numpy(order[start:start + a.minibatch_size])
                logits, value = net(obs[mb], None if vin is None else vin[mb])
                logp_all = masked_log_probs(logits, mask[mb])
                logp = logp_all.gather(1, act[mb][:, None]).squeeze(1)
                log_ratio = logp - old_logp[mb]
                ratio = log_ratio.exp()
                mb_adv = adv_t[mb]
                if len(mb) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - a.clip_coef, 1 + a.clip_coef)).mean()
                v_loss = 0.5 * (value - ret_t[mb]).pow(2).mean()
                entropy = -(logp_all.exp() * logp_all).sum(1).mean()
                loss = a.vf_coef * v_loss if value_only else pg - a.ent_coef * entropy + a.vf_coef * v_loss
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
        return {"policy_loss": float(np.mean(stats["pg"] or [0])), "value_loss": float(np.mean(stats["v"] or [0])),
                "entropy": float(np.mean(stats["ent"] or [0])), "approx_kl": float(np.mean(stats["kl"] or [0])),
                "clipfrac": float(np.mean(stats["clip"] or [0])),
                "explained_variance": 1.0 - resid / var_y if var_y > 0 else 0.0, "trained": int(idx.size)}

    # -- warm start ----------------------------------------------------------------------------------
    def behaviour_cloning(self) -> dict[str, float]:
        """Fit the policy head to EquityAgent's decisions (EquityAgent on all four seats of fresh tables; with
        señas its sign decisions too)."""
        import torch

        from agents import EquityAgent
        from agents.policy import masked_log_probs

        a = self.args
        teacher = EquityAgent()
        env = VectorMusEnv(a.num_tables, self.cfg, seed=a.seed + 0xBC, reward="stones")
        obs, mask = env.reset()
        steps = max(1, a.bc_decisions // a.num_tables)
        X = np.zeros((steps * a.num_tables, self.obs_dim), dtype=np.float32)
        M = np.zeros((steps * a.num_tables, self.num_actions), dtype=np.int8)
        Y = np.zeros(steps * a.num_tables, dtype=np.int64)
        bar = _bar(steps, "cloning equity: playing", self.args.progress)
        for t in range(steps):
            act = teacher.act_batch(obs, mask, self.rng)
            sl = slice(t * a.num_tables, (t + 1) * a.num_tables)
            X[sl], M[sl], Y[sl] = obs, mask, act
            obs, mask, *_ = env.step(act)
            bar.update(1)
        bar.close()
        # only real choices teach anything: skip decisions with a single legal action
        keep = np.flatnonzero(M.sum(axis=1) > 1)
        X_t, M_t, Y_t = torch.from_numpy(X), torch.from_numpy(M), torch.from_numpy(Y)
        bar = _bar(a.bc_epochs * ((len(keep) + a.minibatch_size - 1) // a.minibatch_size), "cloning equity: fitting",
                   self.args.progress)
        opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)
        loss_v = acc = 0.0
        for _ in range(a.bc_epochs):
            order = torch.from_numpy(self.rng.permutation(keep))
            losses, hits = [], []
            for start in range(0, len(order), a.minibatch_size):
                mb = order[start:start + a.minibatch_size]
                logp = masked_log_probs(self.net.logits(X_t[mb]), M_t[mb])
                loss = torch.nn.functional.nll_loss(logp, Y_t[mb])
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
                hits.append((logp.argmax(1) == Y_t[mb]).float().mean().item())
                bar.update(1)
            loss_v, acc = float(np.mean(losses)), float(np.mean(hits))
        bar.close()
        self.bc_done = True
        return {"bc_loss": loss_v, "bc_accuracy": acc, "bc_samples": int(len(keep))}

    def load_warm_start(self, path: str | Path) -> None:
        """Start from the weights (policy and value head) of the policy file ``path``; ``CheckpointError`` if it
        cannot be read or its network is not this run's shape."""
        from agents.policy import PolicyFileError, load_policy_file

        try:
            blob = load_policy_file(path)
        except PolicyFileError as e:
            raise CheckpointError(f"warm start: {e}") from e
        arch = {k: blob.get("arch", {}).get(k, 0 if k == "value_dim" else None) for k in self.net.arch}
        if arch != self.net.arch:
            raise CheckpointError(f"warm start: {path} holds a network {blob.get('arch')}, this run's is "
                                  f"{self.net.arch}: give the same --hidden, --signals and --central-critic")
        self.net.load_state_dict(blob["model"])
        self.bc_done = True

    # -- evaluation --------------------------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        """Duplicate matches of the current policy against the evaluation baselines, on fixed deals."""
        from agents.policy import TorchPolicyAgent
        from experiments.evaluate.deals import make_deals
        from experiments.evaluate.tournament import play_pair

        a = self.args
        cfg = a.game_config(training=False)
        if not self._eval_deals:
            self._eval_deals = {"hands": make_deals(a.eval_hands, a.eval_seed, cfg.target),
                                "games": make_deals(a.eval_games, a.eval_seed + 1, cfg.target)}
        learner = TorchPolicyAgent(self.net, greedy=a.eval_greedy, name="learner")
        row: dict[str, Any] = {"update": self.update, "decisions": self.decisions}
        self.net.eval()
        tables = min(2048, 2 * max(a.eval_hands, a.eval_games))
        for spec in _split(a.eval_opponents):
            opp = frozen_agent(spec, cfg)
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

    # -- checkpoints -------------------------------------------------------------------------------
    def save_checkpoint(self) -> Path:
        import torch

        from agents.policy import CHECKPOINT_FORMAT, FORMAT_VERSION, save_file

        blob = {
            "format": CHECKPOINT_FORMAT, "version": FORMAT_VERSION,
            "args": _args_dict(self.args), "arch": dict(self.net.arch), "config": self.cfg.to_dict(),
            "model": self.net.state_dict(), "optimizer": self.opt.state_dict(),
            "pool": list(self.league.pool), "pool_ids": list(self.league.pool_ids),
            "league": {"kind": self.league.kind, "learner": self.league.learner},
            "rng": json.dumps(self.rng.bit_generator.state), "torch_rng": torch.get_rng_state(),
            "counters": {"update": self.update, "decisions": self.decisions, "games": self.games,
                         "learner_decisions": self.learner_decisions, "elapsed": self.elapsed,
                         "bc_done": self.bc_done},
            "recent": dict(self.recent),
            "history": json.dumps(self.history), "evals": json.dumps(self.evals),
            "env": self.env.state_dict(), "buffer": self.buffer.state_dict(),
            "obs": self.obs.copy(), "mask": self.mask.copy(),
        }
        if self.exploiter is not None:
            blob |= {"exploiter_model": self.exploiter.state_dict(),
                     "exploiter_optimizer": self.exploiter_opt.state_dict(),
                     "exploiter_buffer": self.exploiter_buffer.state_dict(), "exploiter_born": self.exploiter_born}
        # written to a temporary file and renamed: a killed run never leaves half a checkpoint
        return save_file(self.out / "checkpoint.pt", _to_torch(blob))

    def load_checkpoint(self, path: Path) -> None:
        """Continue from ``path``: everything is restored, so the run goes on exactly as if never stopped."""
        import torch

        from agents.policy import CHECKPOINT_FORMAT, PolicyFileError, load_policy_file

        if not path.is_file():
            raise CheckpointError(f"{path}: no checkpoint to resume (train without --resume to start a run)")
        try:
            blob = load_policy_file(path)
        except PolicyFileError as e:
            raise CheckpointError(str(e)) from e
        if blob.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointError(f"{path}: a policy file, not a training checkpoint (it has no optimiser state)")
        try:
            keep = [k for k in ("model", "optimizer", "pool", "torch_rng", "exploiter_model", "exploiter_optimizer")
                    if k in blob]                  # torch state stays torch; the rest becomes numpy
            blob = _to_numpy({k: v for k, v in blob.items() if k not in keep}) | {k: blob[k] for k in keep}
            saved = blob["args"]
            mine = _args_dict(self.args)
            known = _args_dict(Args())            # fields added since the checkpoint was written: their default
            was = {k: saved.get(k, known[k]) for k in ("signals", "signal_intercept_p")}
            if was != {k: mine[k] for k in was}:
                arch = blob["arch"]
                raise CheckpointError(
                    f"{path}: trained with signals={was['signals']!r}, "
                    f"signal_intercept_p={was['signal_intercept_p']!r} "
                    f"(a policy of {arch.get('obs_dim')} observations and {arch.get('num_actions')} actions), "
                    f"now signals={mine['signals']!r}, signal_intercept_p={mine['signal_intercept_p']!r}: resume "
                    f"with --signals {was['signals']} --signal-intercept-p {was['signal_intercept_p']:g}, or start "
                    "a new run in another --out")
            diff = [k for k in mine if k not in _RESUMABLE_CHANGES and saved.get(k, known[k]) != mine[k]]
            if diff:
                raise CheckpointError(f"{path}: made with other settings: " + ", ".join(
                    f"{k}={saved.get(k)!r} (now {mine[k]!r})" for k in diff) + "; resume with the same settings")
            if {k: blob["arch"].get(k) for k in self.net.arch} != self.net.arch:
                raise CheckpointError(f"{path}: its network {blob['arch']} is not this run's {self.net.arch}")
            self.net.load_state_dict(blob["model"])
            self.opt.load_state_dict(blob["optimizer"])
            self.league.pool = [dict(p) for p in blob["pool"]]
            self.league.pool_ids = [int(u) for u in blob["pool_ids"]]
            self.league.kind[...] = blob["league"]["kind"]
            self.league.learner[...] = blob["league"]["learner"]
            self.rng.bit_generator.state = json.loads(blob["rng"])
            torch.set_rng_state(blob["torch_rng"])
            c = blob["counters"]
            self.update, self.decisions, self.games = int(c["update"]), int(c["decisions"]), int(c["games"])
            self.learner_decisions, self.elapsed = int(c["learner_decisions"]), float(c["elapsed"])
            self.bc_done = bool(c["bc_done"])
            self.recent = {k: type(self.recent[k])(v) for k, v in {**_RECENT, **blob["recent"]}.items()}
            self.history, self.evals = json.loads(blob["history"]), json.loads(blob["evals"])
            self.env.load_state_dict(blob["env"])
            self.buffer.load_state_dict(blob["buffer"])
            if self.exploiter is not None:
                self.exploiter.load_state_dict(blob["exploiter_model"])
                self.exploiter_opt.load_state_dict(blob["exploiter_optimizer"])
                self.exploiter_buffer.load_state_dict(blob["exploiter_buffer"])
                self.exploiter_born = int(blob["exploiter_born"])
            self.obs, self.mask = self.env._obs, self.env._mask
            if not (np.array_equal(self.obs, blob["obs"]) and np.array_equal(self.mask, blob["mask"])):
                raise CheckpointError(f"{path}: the environment state does not match its saved observation")
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, json.JSONDecodeError) as e:
            raise CheckpointError(f"{path}: damaged or incomplete checkpoint ({type(e).__name__}: "
                                  f"{str(e).splitlines()[0] if str(e) else ''})") from e

    # -- logs ----------------------------------------------------------------------------------------
    def write_logs(self) -> None:
        """Rewrite ``metrics.csv``, ``eval.csv`` and ``learning_curve.png`` from the run's history."""
        _write_csv(self.out / "metrics.csv", self.history)
        _write_csv(self.out / "eval.csv", self.evals)
        if self.evals:
            learning_curve(self.evals, self.out / "learning_curve.png", _split(self.args.eval_opponents))

    def export_policy(self, meta: dict[str, Any] | None = None, name: str = "policy.pt", net: Any = None) -> Path:
        """Write the current policy (or ``net``, the exploiter) to ``out/name`` (loadable by ``make_agent``)."""
        from agents.policy import save_policy

        info = {"update": self.update, "decisions": self.decisions, "seconds": round(self.elapsed, 1),
                "args": _args_dict(self.args), **(meta or {})}
        return save_policy(self.out / name, self.net if net is None else net,
                           self.args.game_config(training=False).to_dict(), info)


def eval_score(ev: dict[str, Any], opponents: list[str]) -> float:
    """How ``best_policy.pt`` is chosen: the smallest stones/hand margin over the evaluation opponents (the
    policy that beats its hardest baseline by the most)."""
    return min(float(ev[f"{spec}_stones"]) for spec in opponents)


def _args_dict(args: Args) -> dict[str, Any]:
    d = dataclasses.asdict(args)
    d["hidden"] = list(d["hidden"])
    return d


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    keys = list(dict.fromkeys(k for r in rows for k in r))
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def learning_curve(evals: list[dict[str, Any]], path: Path, opponents: list[str]) -> Path:
    """Evaluation stones/hand and game win rate (95% CI bands) against decisions and against wall time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharey="row")
    for col, (xkey, xlabel) in enumerate((("decisions", "environment decisions (millions)"),
                                          ("minutes", "wall time (minutes)"))):
        x = np.array([e[xkey] for e in evals], dtype=float) / (1e6 if xkey == "decisions" else 1.0)
        for row, (key, label, ref) in enumerate((("stones", "stones/hand, learner − baseline", 0.0),
                                                 ("win", "game win rate", 0.5))):
            ax = axes[row, col]
            for spec in opponents:
                y = np.array([e.get(f"{spec}_{key}", np.nan) for e in evals], dtype=float)
                lo = np.array([e.get(f"{spec}_{key}_lo", np.nan) for e in evals], dtype=float)
                hi = np.array([e.get(f"{spec}_{key}_hi", np.nan) for e in evals], dtype=float)
                ax.plot(x, y, marker="o", ms=3, label=f"vs {spec}")
                ax.fill_between(x, lo, hi, alpha=0.2)
            ax.axhline(ref, color="grey", lw=0.8, ls="--")
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label)
            if row == 1:
                ax.set_xlabel(xlabel)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Duplicate evaluation during training (95% CI)")
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path


class _NullBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, desc: str, enabled: bool, initial: int = 0) -> Any:
    if not enabled:
        return _NullBar()
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the tools extra
        return _NullBar()
    return tqdm(total=total, desc=desc, initial=initial, unit_scale=True, dynamic_ncols=True, file=sys.stderr)


def _eval_text(row: dict[str, Any], opponents: list[str]) -> str:
    return " ".join(f"{s} {row[f'{s}_stones']:+.2f}/h {row[f'{s}_win']:.2f}w" for s in opponents)


# ----------------------------------------------------------------------------------------------------
def train(args: Args, resume: bool = False, log: Any = print, max_updates: int | None = None,
          run_info: dict[str, Any] | None = None, overwrite: bool = False) -> Trainer:
    """Run (or resume) a training run to its budget; return the trainer (its ``net``, ``history``, ``evals``).

    Args:
        args: the settings.
        resume: continue the run in ``args.out`` from its checkpoint.
        log: where messages go.
        max_updates: stop this session after this many updates (a checkpoint is written; ``resume``
            continues), like ``args.max_minutes`` but exact.
        run_info: what to record in ``run.json`` (the command line, the preset); the machine, torch
            version and start time are added.
        overwrite: start afresh even if ``args.out`` holds a run (its files are removed first).

    Raises:
        CheckpointError: ``resume`` and the checkpoint is missing, damaged or from other settings; or not
            ``resume`` and ``args.out`` already holds a run (and not ``overwrite``).
    """
    import torch

    t = Trainer(args, resume=resume, overwrite=overwrite)
    a = t.args
    (t.out / "args.json").write_text(json.dumps(_args_dict(a), indent=2))
    record = t.out / "run.json"
    info = json.loads(record.read_text()) if resume and record.is_file() else {}
    session = {**(run_info or {}), "machine": machine_text(), "torch": torch.__version__,
               "torch_threads": threads_for(a), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
               "from_update": t.update}
    info = {**session, **{k: v for k, v in info.items() if k != "sessions"}} if not info else info
    info.setdefault("sessions", []).append(session)
    record.write_text(json.dumps(info, indent=2))
    writer = None
    try:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(t.out / "tb"), purge_step=t.update if resume else None)
    except ImportError:  # pragma: no cover - tensorboard is in the train extra
        log("tensorboard is not installed: no TensorBoard logs (pip install -e '.[train]' in the repository root)")
    opponents = _split(a.eval_opponents)
    session_start = time.perf_counter()
    elapsed_before = t.elapsed

    def clock() -> float:
        return elapsed_before + time.perf_counter() - session_start

    if a.warm_start.endswith(".pt") and not t.bc_done:
        t.load_warm_start(a.warm_start)
        log(f"warm start: the weights of {a.warm_start}")
    if a.warm_start == "equity" and not t.bc_done:
        bc = t.behaviour_cloning()
        t.elapsed = clock()
        log(f"warm start: cloned EquityAgent on {bc['bc_samples']:,} decisions, "
            f"accuracy {bc['bc_accuracy']:.3f}, loss {bc['bc_loss']:.3f}")
        if writer:
            for k, v in bc.items():
                writer.add_scalar(f"warm_start/{k}", v, 0)
    total = t.num_updates * t.batch
    bar = _bar(total, "training", a.progress, initial=min(t.update * t.batch, total))
    last_eval = _eval_text(t.evals[-1], opponents) if t.evals else "-"
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
        rec = t.recent
        row = {"update": t.update, "decisions": t.decisions, "learner_decisions": t.learner_decisions,
               "games": t.games, "minutes": t.elapsed / 60,
               "decisions_per_s": t.batch / (t2 - t0), "lr": t.opt.param_groups[0]["lr"], **stats,
               "vs_league_win_rate": rec["learner_wins"] / rec["games"] if rec["games"] else float("nan"),
               "vs_league_stones_per_hand": rec["learner_stones"] / rec["hands"] if rec["hands"] else float("nan"),
               **({"exploiter_stones_per_hand": rec["exploiter_stones"] / rec["exploiter_hands"]
                   if rec["exploiter_hands"] else float("nan")} if t.exploiter is not None else {}),
               "time_env": timing["env"], "time_policy": timing["policy"], "time_opponents": timing["opponents"],
               "time_update": t2 - t1}
        t.recent = dict(_RECENT)
        t.history.append(row)
        if writer:
            for k in ("decisions_per_s", "lr", "vs_league_win_rate", "vs_league_stones_per_hand", "games",
                      "time_env", "time_policy", "time_opponents", "time_update", "exploiter_stones_per_hand",
                      "exploiter_policy_loss", "exploiter_entropy"):
                if k in row:
                    writer.add_scalar(f"charts/{k}", row[k], t.update)
            for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"):
                writer.add_scalar(f"losses/{k}", row[k], t.update)
        if t.update % a.snapshot_every == 0:
            t.league.add_snapshot(copy.deepcopy(t.net.state_dict()), t.update)
        final = t.update == t.num_updates
        if (a.eval_every and t.update % a.eval_every == 0) or final:
            ev = t.evaluate()
            ev["minutes"] = t.elapsed / 60
            t.evals.append(ev)
            last_eval = _eval_text(ev, opponents)
            if eval_score(ev, opponents) >= max(eval_score(e, opponents) for e in t.evals):
                t.export_policy({"eval": ev, "eval_score": eval_score(ev, opponents)}, name="best_policy.pt")
            if writer:
                for k, v in ev.items():
                    if k not in ("update", "decisions", "minutes"):
                        writer.add_scalar(f"eval/{k}", v, t.update)
            t.elapsed = clock()
        bar.update(t.batch)
        bar.set_postfix_str(f"{row['decisions_per_s'] / 1000:.0f}k dec/s | eval {last_eval}")
        if t.update % a.checkpoint_every == 0 or final:
            _save_all(t)
    bar.close()
    _save_all(t)
    if writer:
        writer.close()
    if stopped:
        log(f"stopped at update {t.update}/{t.num_updates}; "
            f"continue with --resume --out {t.out}")
    return t


def _save_all(t: Trainer) -> None:
    """Checkpoint, logs, ``policy.pt`` (and ``exploiter.pt``, the exploiter's current policy, when there is one)."""
    t.save_checkpoint()
    t.write_logs()
    t.export_policy()
    if t.exploiter is not None:
        t.export_policy({"exploiter_born": t.exploiter_born}, name="exploiter.pt", net=t.exploiter)


def _print_summary(t: Trainer, log: Any = print) -> None:
    if not t.evals:
        return
    ev = t.evals[-1]
    log(f"\nevaluation after {ev['decisions']:,} decisions ({t.elapsed / 60:.1f} min), duplicate, "
        "learner minus baseline:")
    for spec in _split(t.args.eval_opponents):
        log(f"  vs {spec:<7} stones/hand {ev[f'{spec}_stones']:+.3f} [{ev[f'{spec}_stones_lo']:+.3f}, "
            f"{ev[f'{spec}_stones_hi']:+.3f}]  game win rate {ev[f'{spec}_win']:.3f} "
            f"[{ev[f'{spec}_win_lo']:.3f}, {ev[f'{spec}_win_hi']:.3f}]")
    best = max(t.evals, key=lambda e: eval_score(e, _split(t.args.eval_opponents)))
    log(f"best evaluation: update {best['update']} ({best['decisions']:,} decisions), "
        + ", ".join(f"{s} {best[f'{s}_stones']:+.3f}" for s in _split(t.args.eval_opponents))
        + f" stones/hand: {t.out / 'best_policy.pt'}")
    log(f"wrote {t.out / 'checkpoint.pt'}, {t.out / 'policy.pt'}, {t.out / 'best_policy.pt'}, "
        f"{t.out / 'metrics.csv'}, {t.out / 'eval.csv'}, {t.out / 'learning_curve.png'}, {t.out / 'tb'}")


def _parser() -> argparse.ArgumentParser:
    from experiments.cli import ArgumentParser  # one-line errors, exit status 2

    p = ArgumentParser(prog="mus train", description=__doc__.splitlines()[0],
                                epilog="Every value not given comes from the preset; [brackets] show the default "
                                       "preset's value and where the ship preset differs.")
    p.add_argument("--preset", default="default", choices=sorted(PRESETS),
                   help="named settings to start from [default]")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    p.add_argument("--overwrite", action="store_true", help="replace a run already in --out")
    defaults = Args()
    docs = _field_docs()
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        value = getattr(defaults, f.name)
        shown = " ".join(map(str, value)) if isinstance(value, tuple) else value
        doc = f"{docs.get(f.name, '')} [{shown}"
        if f.name in PRESETS["ship"]:
            doc += f"; ship: {PRESETS['ship'][f.name]}"
        doc = (doc + "]").replace("%", "%%")
        if isinstance(value, bool):
            p.add_argument(flag, type=_bool, default=None, metavar="BOOL", help=doc)
        elif f.name == "signals":
            p.add_argument(flag, default=None, choices=SIGNALS_CHOICES, help=doc)
        elif isinstance(value, tuple):
            p.add_argument(flag, type=int, nargs="+", default=None, help=doc)
        else:
            p.add_argument(flag, type=type(value), default=None, help=doc)
    return p


def _bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _field_docs() -> dict[str, str]:
    """The docstring under each field of :class:`Args` (shown by ``--help``)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(Args))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, nxt in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            docs[node.target.id] = str(nxt.value.value)  # type: ignore[union-attr]
    return docs


def main(argv: list[str] | None = None) -> None:
    p = _parser()
    ns = p.parse_args(argv)
    overrides = {k: v for k, v in vars(ns).items() if k not in ("preset", "resume", "overwrite") and v is not None}
    if "hidden" in overrides:
        overrides["hidden"] = tuple(overrides["hidden"])
    try:
        args = make_args(ns.preset, **overrides)
    except ValueError as e:
        p.error(str(e))
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write_test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        p.error(f"argument --out: cannot write into {args.out!r} ({e.strerror or e})")
    command = "mus train " + " ".join(sys.argv[1:]) if argv is None else "mus train " + " ".join(argv)
    try:
        t = train(args, resume=ns.resume, run_info={"command": command, "preset": ns.preset},
                  overwrite=ns.overwrite)
    except CheckpointError as e:
        print(f"mus train: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    _print_summary(t)


if __name__ == "__main__":
    main()
