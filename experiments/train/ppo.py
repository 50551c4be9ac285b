"""Masked PPO with a league, on VectorMusEnv: the project's self-play trainer (``mus train``).

One readable file in the manner of CleanRL's ``ppo.py``, to read top to bottom: a flat typed config (:class:`Args`,
:data:`PRESETS`), the losses, acting and rollouts, the PPO update, the setup (:func:`start`: seeding, the engine,
the networks, the league) and the training loop (:func:`train`). Every piece of the loop's state is one typed
:class:`~experiments.train.state.TrainState`. Beside it: :mod:`~experiments.train.league` (who the learner plays),
:mod:`~experiments.train.buffer` (turn-based trajectories: how rewards reach decisions and how GAE runs along a
seat's own decisions), :mod:`~experiments.train.warm_start`, :mod:`~experiments.train.checkpoint`,
:mod:`~experiments.train.session` (the run's folder) and :mod:`~experiments.train.report` (evaluations, logs).

Algorithm
---------
* **One policy for all four seats**: the observation is relative to the acting seat, so one
  :class:`~agents.policy.PolicyNet` (an MLP trunk, a policy head over the 31 actions, 47 with señas, and a value
  head) plays every seat. With señas (``signals``) it also chooses its sign tokens.
* **Masked categorical**: an illegal action's logit is :data:`~agents.policy.MASKED_LOGIT`, so its probability
  is exactly 0: never sampled, nothing in the log-probability, the entropy or the gradient.
* **A league** (:class:`~experiments.train.league.League`, whose docstring tells the members): on each table the
  learner plays one team (drawn at every new game) against an opponent drawn per game from ``league_mix``:
  itself, a snapshot of its past, a baseline or policy file, an **exploiter** (a second network trained only to
  beat it), **past exploiters** or the best responses of ``mus exploit`` probes (a PSRO step). Only the
  learner's decisions are trained; ``learner_decides`` restricts them (the probes' variants).
* **Centralised critic** (``central_critic``): the value head also reads every seat's hand, as in PerfectDou;
  the policy head reads only the observation.
* **Warm start** (``warm_start="equity"``): the policy head is first fitted by behaviour cloning to
  ``EquityAgent``, then ``value_warmup`` updates train only the value head; or a policy file's weights.
* **Rewards**: ``stones_coef * stones / target`` after every hand (own team's stones minus the other's) plus
  ``game_coef * (+1 / -1)`` at the game's end: a signal at every hand, an objective on winning games.

The PPO update (losses)
-----------------------
``update_epochs`` passes over the rollout's trainable decisions in shuffled minibatches of ``minibatch_size``,
advantages normalised per minibatch, ``ratio = pi(a|o) / pi_old(a|o)``. Policy loss: the clipped surrogate
``mean(max(-A * ratio, -A * clip(ratio, 1 - clip_coef, 1 + clip_coef)))``; value loss
``0.5 * mean((V(o) - R)^2)`` with ``R = A + V_old(o)``; entropy over the legal actions. The loss is ``pg - ent_coef *
entropy + vf_coef * v_loss``, plus ``entropy_floor_coef * relu(entropy_floor - entropy)`` with an ``entropy_floor``
(only the value term for ``value_warmup`` updates), gradients clipped to ``max_grad_norm``, the rate annealed to 0
(``anneal_lr``), epochs stopped past ``target_kl``.

**Magnet** (``magnet_coef``, on by default): the loss adds ``magnet_coef * KL(pi || rho)`` (:func:`magnet_kl`,
exact over the legal actions) toward a frozen copy ``rho`` of the learner taken when PPO starts and refreshed every
``magnet_every`` updates: magnetic mirror descent (Sokota et al., 2022), R-NaD's regularisation in policy-gradient
form. It damps the cycles of self-play in a game of bluff (on a biased rock-paper-scissors, ``tests/test_magnet.py``,
it holds an exploitability near 0.1-0.2 where plain PPO spirals out to 1.0) and keeps what the warm start knew.
``magnet_ema``: the magnet averages the learner's weights (:mod:`~experiments.train.regularisers`), saved as magnet.pt.

Everything goes to ``--out`` (:mod:`~experiments.train.checkpoint` lists the files): ``checkpoint.pt`` (exact resume),
``policy.pt`` (the last policy, or the best when the end fell: :func:`~experiments.train.checkpoint.settle_policy`),
``best_policy.pt``, logs, ``learning_curve.png``. ``mus train`` (:mod:`experiments.commands.train`): every field of
:class:`Args` is a flag.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch.utils.tensorboard import SummaryWriter

from agents.policy import MASKED_LOGIT, PolicyNet, resolve_device, sample_masked
from experiments.train import checkpoint, report
from experiments.train.buffer import HANDS_DIM, TurnBuffer, hands_input, relative_hands, turn_based_gae
from experiments.train.checkpoint import CheckpointError
from experiments.train.league import League, SnapshotBank, expand_probe_folders, split_specs
from experiments.train.regularisers import entropy_floor_loss, magnet_kl
from experiments.train.report import eval_score
from experiments.train.session import RunSession, TrainingDiverged, TrainingInterrupted, check_finite, check_run_folder
from experiments.train.settings import SettingsError, build_league, check_args, engine_threads_for, threads_for
from experiments.train.state import TrainState, cpu_weights, new_buffer, new_net, new_optimizer
from experiments.train.warm_start import behaviour_cloning, load_warm_start
from mus_env import MusConfig, VectorMusEnv
from mus_env.actions import num_actions
from mus_env.observation import obs_dim
from mus_env.vector import warm_up

__all__ = ["Args", "PRESETS", "make_args", "threads_for", "engine_threads_for", "TrainState", "start", "train",
           "rollout", "learn", "act", "eval_score", "TurnBuffer", "turn_based_gae", "League", "SnapshotBank",
           "CheckpointError", "SettingsError", "TrainingInterrupted", "TrainingDiverged", "relative_hands",
           "hands_input", "HANDS_DIM", "cpu_weights", "clipped_surrogate", "magnet_kl"]


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
    total_decisions: int = 36_000_000
    """training budget in environment decisions (all seats, learner and opponents)"""
    max_minutes: float = 0.0
    """stop (with a checkpoint) after this many minutes of this process, 0: no limit; a stopped run resumes"""
    torch_threads: int = 0
    """torch's intra-op threads and the engine's; 0: all cores, at most 4 (fastest on an idle machine); use 1 when
    other jobs share the cores (on a busy 2-core machine, 2 threads: a forward pass 10x, a step 2x slower)"""
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
    learning_rate: float = 1.5e-3
    """Adam learning rate (3e-4 for probes and for the ``tiny``, ``ship`` and ``scratch`` presets)"""
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
    entropy_floor: float = 0.0
    """a floor on the mean entropy (nats, as logged): below it the loss adds entropy_floor_coef * (floor - entropy)"""
    entropy_floor_coef: float = 1.0
    """weight of the entropy floor's term"""
    magnet_coef: float = 0.1
    """weight of the reverse KL from the policy to the magnet policy (magnetic mirror descent / R-NaD); 0: off"""
    magnet_every: int = 50
    """updates between refreshes of the magnet to a copy of the learner; 0: it stays the policy PPO started from"""
    magnet_ema: float = 0.0
    """0: off; else the magnet averages the learner, magnet <- (1 - rate) * magnet + rate * learner after each update,
    saved as magnet.pt and evaluated beside the learner (needs magnet_every 0; magnet_coef 0: kept, no pull)"""
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
    league_mix: str = "self:0.1,snapshot:0.1,rule:0.2,equity:0.6"
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
    exploiter_learning_rate: float = 0.0
    """with ``exploiter`` in the league_mix: its learning rate, annealed as the learner's (0: the learner's)"""
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


def clipped_surrogate(ratio: torch.Tensor, adv: torch.Tensor, clip: float) -> torch.Tensor:
    """PPO's clipped policy loss ``mean(max(-A * ratio, -A * clip(ratio, 1 - clip, 1 + clip)))``, where
    ``ratio = pi(a|o) / pi_old(a|o)`` (Schulman et al., 2017)."""
    return torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()


PROBE_LEARNING_RATE = 3e-4
"""The learning rate of best-response probes (``mus exploit``'s default, the measuring protocol's) and of the presets
and recipe stages that train at it."""
#: Plain self-play (the ``tiny``, ``ship``, ``scratch`` presets): no magnet, a self-play-heavy league, the probe rate.
_PLAIN_SELF_PLAY = dict(magnet_coef=0.0, magnet_every=0, league_mix="self:0.4,snapshot:0.2,rule:0.2,equity:0.2",
                        learning_rate=PROBE_LEARNING_RATE)

#: Named presets: overrides of :class:`Args`.
PRESETS: dict[str, dict[str, Any]] = {
    # a few updates on a few tables, for tests and smoke runs (seconds)
    "tiny": dict(num_tables=32, rollout_steps=8, total_decisions=32 * 8 * 4, minibatch_size=128, eval_every=2,
                 eval_hands=16, eval_games=4, checkpoint_every=2, snapshot_every=1, pool_size=2, hidden=(32, 32),
                 torch_threads=1, bc_decisions=32 * 8 * 2, bc_epochs=1, value_warmup=1, **_PLAIN_SELF_PLAY),
    # ``mus train``: the defaults of Args, about 8 minutes on 2 cores (measured to rise and hold: docs/training.md)
    "default": dict(),
    # plain self-play from the equity clone, 160M decisions (about 1.5 hours on 2 cores)
    "ship": dict(total_decisions=160_000_000, eval_every=100, checkpoint_every=25, **_PLAIN_SELF_PLAY),
    # PPO from a random network (no warm start), 600M decisions with the learning rate annealed over all of them
    # (about 100 minutes on 2 cores; its origin: docs/research/index.md)
    "scratch": dict(warm_start="none", total_decisions=600_000_000, eval_every=100, checkpoint_every=25,
                    **_PLAIN_SELF_PLAY),
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
# acting: the learner's (or the exploiter's) decisions, the rewards, a rollout
def act(s: TrainState, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], hands: npt.NDArray[np.int8] | None,
        net: PolicyNet | None = None) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Sample the learner's (or ``net``'s) actions: ``(actions, log-probabilities, values)``."""
    if not len(obs):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)
    dev = s.device
    with torch.no_grad():
        logits, value = (s.net if net is None else net)(torch.from_numpy(obs).to(dev), value_input(s, hands))
        # masked categorical: an illegal action's logit is MASKED_LOGIT, so its probability is exactly 0
        logp_all = torch.log_softmax(logits.masked_fill(torch.from_numpy(mask).to(dev) == 0, MASKED_LOGIT), dim=-1)
    logp_all = logp_all.cpu().numpy()           # sampled on the CPU from the run's numpy generator
    action = sample_masked(np.exp(logp_all), s.rng)
    return action, logp_all[np.arange(len(action)), action], value.cpu().numpy()


def value_input(s: TrainState, hands: npt.NDArray[np.int8] | None) -> torch.Tensor | None:
    """The centralised critic's extra input (every seat's hand), None without it."""
    return torch.from_numpy(hands_input(hands)).to(s.device) if s.args.central_critic else None


def learner_rewards(s: TrainState, rewards: npt.NDArray[np.float32], done: npt.NDArray[np.bool_],
                    info: dict[str, Any]) -> npt.NDArray[np.float32]:
    """``(B, 4)`` rewards by seat: ``stones_coef * stones / target``, plus ``game_coef * (+1 / -1)`` at a
    game's end."""
    a = s.args
    r = rewards * (a.stones_coef / s.cfg.target)
    fin = np.flatnonzero(done)
    if fin.size:
        winner = info["winner"][fin].astype(np.int64)
        seat_team = np.arange(4) % 2
        r[fin] += a.game_coef * np.where(seat_team[None, :] == winner[:, None], 1.0, -1.0)
    return r.astype(np.float32)


def rollout(s: TrainState) -> dict[str, float]:
    """``rollout_steps`` steps on every table; the learner's decisions go to the buffer (the exploiter's to
    its own). Returns the seconds spent in the environment, the learner's policy and the opponents."""
    B = s.args.num_tables
    tables = np.arange(B)
    actions = np.zeros(B, dtype=np.int64)
    t_env = t_net = t_opp = 0.0
    for _ in range(s.args.rollout_steps):
        seat = s.env.current_player.astype(np.int64)
        is_learner = s.league.learner[tables, seat]
        # under learner_decides, the opposing agent plays the learner's other decisions for it (proxy), untrained
        table_rows = s.env.table_rows() if s.league.wants_rows else None      # for frozen agents that play by game
        lrn, proxy, mask = s.league.learner_turns(np.flatnonzero(is_learner), s.obs, s.mask, s.args.learner_decides,
                                                  s.rng, actions, table_rows)
        t0 = time.perf_counter()
        obs = s.obs[lrn]
        hands = relative_hands(s.env.hands[lrn], seat[lrn]) if s.args.central_critic else None
        chosen, logp, val = act(s, obs, mask, hands)
        actions[lrn] = chosen
        s.buffer.add(lrn, seat[lrn], obs, mask, chosen, logp, val, hands)
        t1 = time.perf_counter()
        opp = np.flatnonzero(~is_learner)
        if s.exploiter is not None:
            on = s.league.kind[opp] == s.league.exploiter_kind
            ex, opp = opp[on], opp[~on]
            hands = relative_hands(s.env.hands[ex], seat[ex]) if s.args.central_critic else None
            chosen, logp, val = act(s, s.obs[ex], s.mask[ex], hands, net=s.exploiter)
            actions[ex] = chosen
            s.exploiter_buffer.add(ex, seat[ex], s.obs[ex], s.mask[ex], chosen, logp, val, hands)
        if proxy.size:
            opp = np.concatenate([opp, proxy])
        if opp.size:
            s.league.opponent_actions(opp, s.obs, s.mask, s.rng, actions, table_rows)
        t2 = time.perf_counter()
        s.obs, s.mask, rewards, done, info = s.env.step(actions)
        t3 = time.perf_counter()
        # every seat's reward goes to its pending decision, in the learner's (or the exploiter's) streams
        r = learner_rewards(s, rewards, done, info)
        s.buffer.reward_seats(np.where(s.league.learner, r, 0.0).astype(np.float32))
        if s.exploiter is not None:
            s.exploiter_buffer.reward_seats(np.where(s.league.exploiter_seats(), r, 0.0).astype(np.float32))
        fin = np.flatnonzero(done)
        if fin.size:
            s.buffer.end_games(fin)
            if s.exploiter is not None:
                s.exploiter_buffer.end_games(fin)
            s.games += int(fin.size)
            s.league.count_games(fin, info["winner"])
            s.league.draw(fin, s.rng)
        hand = np.flatnonzero(info["hand_finished"])
        if hand.size:
            s.league.count_hands(hand, rewards)
        s.decisions += B
        s.learner_decisions += int(lrn.size)
        t_net += t1 - t0
        t_opp += t2 - t1
        t_env += t3 - t2
    return {"env": t_env, "policy": t_net, "opponents": t_opp}


# ----------------------------------------------------------------------------------------------------
# the PPO update
def learn(s: TrainState, value_only: bool = False, exploiter: bool = False) -> dict[str, float]:
    """PPO epochs over the rollout's trainable decisions of the learner (or of the exploiter)."""
    a = s.args
    net, opt, buffer = (s.exploiter, s.exploiter_opt, s.exploiter_buffer) if exploiter else \
        (s.net, s.opt, s.buffer)
    # turn-based GAE along each (table, seat) stream; a stream's pending decision has no successor yet: it
    # only bootstraps its predecessor, and is trained in a later update (carried over below)
    n = buffer.n
    pending = buffer.open_entries()
    adv = turn_based_gae(np.asarray(buffer.rows, dtype=np.int64), buffer.stream[:n], buffer.reward[:n],
                         buffer.value[:n], buffer.done[:n], pending, 4 * a.num_tables, a.gamma, a.gae_lambda)
    idx = np.flatnonzero(~pending)
    returns = adv + buffer.value[:n]
    # the rollout on the networks' device, once (a no-op on the CPU)
    dev = s.device
    obs = torch.from_numpy(buffer.obs[:n]).to(dev)
    vin = value_input(s, buffer.hands[:n])
    illegal = torch.from_numpy(buffer.mask[:n]).to(dev) == 0
    act = torch.from_numpy(buffer.action[:n]).to(dev)
    old_logp = torch.from_numpy(buffer.logp[:n]).to(dev)
    adv_t, ret_t = torch.from_numpy(adv).to(dev), torch.from_numpy(returns).to(dev)
    stats: dict[str, list[float]] = {k: [] for k in ("pg", "v", "ent", "kl", "clip", "magnet_kl")}
    magnet = None if exploiter or not a.magnet_coef else s.magnet
    stop = False
    for _ in range(a.update_epochs):
        order = s.rng.permutation(idx)
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
            if a.entropy_floor and not value_only:      # zero, with no gradient, while the entropy is above it
                loss = loss + entropy_floor_loss(entropy, a.entropy_floor, a.entropy_floor_coef)
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
    check_finite(net, {k: out[k] for k in ("policy_loss", "value_loss", "entropy")}, s.update + 1, a,
                 "exploiter" if exploiter else "learner")
    return out


# ----------------------------------------------------------------------------------------------------
# setup: the run's state, checked before anything is written
def start(args: Args, resume: bool = False, overwrite: bool = False, log: Any = None,
          agents: Mapping[str, Any] | None = None) -> TrainState:
    """The run's state at its start, or at its checkpoint with ``resume``. Every setting, agent, policy file and the
    checkpoint are checked here, before the run's folder is touched (:func:`train` opens it): a refusal
    (``SettingsError``, ``CheckpointError``) writes nothing. ``agents``: specs of the league or of the evaluation
    already built (a probe's frozen agent)."""
    args.check()
    try:
        device = resolve_device(args.device)           # the networks' device; the engine stays on the CPU
    except ValueError as e:
        raise SettingsError(f"Args.{e}") from None
    check_run_folder(Path(args.out), resume, overwrite)
    # seeding: every random choice of the run flows from args.seed
    rng = np.random.default_rng([args.seed, 0x7EA1])    # league draws, sampling, minibatches
    torch.manual_seed(args.seed)
    # the environment: the training game (capped mus rounds and stakes), stones paid to every seat after each hand
    cfg = args.game_config(training=True)
    warm_up(engine_threads_for(args), log=log)   # the first run on a machine compiles the engine (~15 s): one line
    env = VectorMusEnv(args.num_tables, cfg, seed=args.seed, reward="stones", num_threads=engine_threads_for(args))
    torch.set_num_threads(threads_for(args))  # after warm_up: numba's OpenMP pool, once started, sets torch's too
    net = new_net(args, cfg, device)                    # 345 observations and 31 actions (477 and 47 with señas)
    league, eval_agents = build_league(args, cfg, agents)   # every agent built once and checked
    batch = args.num_tables * args.rollout_steps
    s = TrainState(args=args, out=Path(args.out), device=device, cfg=cfg, env=env,
                   obs=np.zeros((args.num_tables, obs_dim(cfg)), np.float32),
                   mask=np.zeros((args.num_tables, num_actions(cfg)), np.int8), net=net,
                   opt=new_optimizer(net, args), buffer=new_buffer(args, cfg), league=league, eval_agents=eval_agents,
                   rng=rng, batch=batch, num_updates=max(1, args.total_decisions // batch))
    if league.has_exploiter:       # a second network trained only against the learner, where the league draws it
        s.exploiter = s.new_net()
        s.exploiter_opt, s.exploiter_buffer = new_optimizer(s.exploiter, args), new_buffer(args, cfg)
    if resume:
        checkpoint.load_checkpoint(s, s.out / "checkpoint.pt")
        return s
    if args.warm_start.endswith(".pt"):
        load_warm_start(s.net, args.warm_start)
        s.bc_done = True
    s.obs, s.mask = env.reset()
    league.draw(np.arange(args.num_tables), rng)
    return s


# ----------------------------------------------------------------------------------------------------
# the training loop
def train(args: Args, resume: bool = False, log: Any = print, max_updates: int | None = None,
          run_info: dict[str, Any] | None = None, overwrite: bool = False,
          agents: Mapping[str, Any] | None = None) -> TrainState:
    """Run (or resume) a training run to its budget; return its state (its ``net``, ``history``, ``evals``).

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
    t = start(args, resume=resume, overwrite=overwrite, log=log, agents=agents)
    if resume and t.update >= t.num_updates:
        log(f"the run in {t.out} is complete (update {t.update} of {t.num_updates}): nothing to do (give a larger "
            "--total-decisions to train on)")
        return t
    with RunSession(t, resume) as run:
        _run(t, run, log, max_updates, run_info, resume)
    return t


def _run(t: TrainState, run: RunSession, log: Any, max_updates: int | None, run_info: dict[str, Any] | None,
         resume: bool) -> None:
    """The session of :func:`train`, inside its :class:`~experiments.train.session.RunSession`."""
    a = t.args
    report.write_run_record(t.out, a.to_dict(), run_info, resume, threads_for(a), t.update)
    writer = run.track(SummaryWriter(str(t.out / "tb"), purge_step=t.update if resume else None))
    opponents = split_specs(a.eval_opponents)
    session_start = time.perf_counter()
    elapsed_before = t.elapsed

    def clock() -> float:           # seconds of training of this run, over all its sessions
        return elapsed_before + time.perf_counter() - session_start

    if a.warm_start.endswith(".pt") and not resume:
        log(f"warm start: the weights of {a.warm_start}")         # loaded (and checked) by start()
    if a.warm_start == "equity" and not t.bc_done:
        bc = behaviour_cloning(t.net, t.cfg, t.rng, a.bc_decisions, a.bc_epochs, a.minibatch_size, a.num_tables,
                               seed=a.seed + 0xBC, progress=a.progress, num_threads=engine_threads_for(a))
        t.bc_done = True
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
        if (a.magnet_coef or a.magnet_ema) and (t.magnet is None or (
                a.magnet_every and t.update - t.magnet_born >= a.magnet_every)):
            t.refresh_magnet()
        for opt, rate in ((t.opt, a.learning_rate), (t.exploiter_opt, a.exploiter_learning_rate or a.learning_rate)):
            if opt is not None:
                opt.param_groups[0]["lr"] = rate * (1.0 - t.update / t.num_updates if a.anneal_lr else 1.0)
        timing = rollout(t)
        t1 = time.perf_counter()
        stats = learn(t, value_only=t.update < a.value_warmup)
        if t.exploiter is not None:
            ex = learn(t, value_only=t.update < a.value_warmup, exploiter=True)
            stats |= {"exploiter_policy_loss": ex["policy_loss"], "exploiter_entropy": ex["entropy"],
                      "exploiter_trained": ex["trained"]}
        t.average_magnet()              # with magnet_ema: the averaged magnet moves toward the learner
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
            ev = report.evaluate(t)
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
    else:
        checkpoint.settle_policy(t, log)        # policy.pt: the last policy, or the best when the end fell
