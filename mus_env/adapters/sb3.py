"""Stable-Baselines3 ``VecEnv`` over the batched engine: :class:`MusVecEnv`, MusGymEnv's view at batch speed.

:class:`~mus_env.wrappers.MusGymEnv` steps one scalar game per env, so SB3 (``DummyVecEnv``) plays a few hundred
learner decisions per second. :class:`MusVecEnv` is one SB3 ``VecEnv`` of ``num_envs`` tables backed by ONE
:class:`~mus_env.vector.VectorMusEnv`: the learner plays one team (one seat, or both seats sharing the policy) on
every table, the other seats are played by agents stepped in batch inside it, and each ``step`` returns when
every table has a learner seat to act again. Imported on demand (``from mus_env.adapters.sb3 import MusVecEnv``; the
old path ``mus_env.sb3`` is a deprecated alias); it needs ``stable-baselines3`` (and ``sb3-contrib`` for
``MaskablePPO``).

==================  ==========================================================================================
item                specification
==================  ==========================================================================================
creation            ``MusVecEnv(num_envs, config=None, learner_seats=(0, 2), opponents=None, reward="game",
                    seed=None, **config_kwargs)``
learner             ``learner_seats``: one seat, or both seats of a team sharing one policy (``(0, 2)``)
other seats         ``opponents``: None (uniform random legal actions), one agent for every other seat, or a
                    dict ``{seat: agent}`` (missing seats random). An agent has ``act_batch(obs, masks, rng)``
                    (``agents.Agent``): it is called once per agent per engine step on the rows of every table
                    where one of its seats acts. A plain callable ``(obs, mask, rng) -> action`` or an object
                    with only ``.act`` also works, one row at a time (slow). An agent that plays by game
                    (``wants_rows``, ``agents.team``) gets ``act_rows(obs, masks, rng, rows)`` with each row's
                    table, game, hand and seat (``VectorMusEnv.table_rows``)
observation         ``(N, OBS_DIM)`` float32 in ``observation_box(config)``: row i is the view of the learner
                    seat to act on table i (``infos[i]["seat"]``)
action              ``(N,)`` action ids, one per table, legal for that seat; :meth:`MusVecEnv.action_masks` gives
                    the ``(N, NUM_ACTIONS)`` bool masks (what sb3-contrib's ``MaskablePPO`` reads through
                    ``env_method("action_masks")``)
reward              MusGymEnv's, per table: at each learner decision, what the learner's team earned since its
                    previous decision (for the first one, since the deal), ``"game"`` (+1/-1 at the end) or
                    ``"stones"`` (own minus other team's stones of every hand finished meanwhile)
episode end         ``dones[i]``: the episode of table i ended in this step; the table is already restarted
                    (SB3's auto-reset): ``infos[i]["terminal_observation"]`` is the last view of the seat that
                    acted, as MusGymEnv's last observation, ``infos[i]["winner"]`` the winning team. An episode
                    in which the learner would never act (an accepted órdago before it speaks) is skipped, as in
                    MusGymEnv (counted in :attr:`MusVecEnv.skipped_games`)
seeding             table i's e-th episode is ``MusGame(config, seed=shuffle.table_seeds(seed, i, e))``;
                    ``infos[i]["game_seed"]`` is the seed of the episode now played on table i, so
                    ``MusGymEnv(...).reset(seed=game_seed)`` replays it (with deterministic agents). The
                    opponents' ``rng`` is a numpy Generator owned by the env, seeded from the env's seed.
                    ``seed(s)`` (SB3's ``VecEnv.seed``) takes effect at the next ``reset()``
errors              bad arguments and illegal learner actions: ``ValueError`` naming the problem, nothing
                    changed. An opponent agent's illegal action (or exception) raises in the middle of a step:
                    the tables are then inconsistent and ``step`` asks for a ``reset()``
==================  ==========================================================================================

How a step runs (all numpy over tables, one compiled engine call per round): the learner's actions are applied on
every table; then, while some table has a non-learner seat to act, each opponent agent chooses for the rows of the
tables where one of its seats acts and those tables (only) are stepped together (``VectorMusEnv.step_tables``).
The engine (``VectorMusEnv(auto_reset=False)``) keeps a finished table at its game-over state until its terminal
view is read, then this env restarts it from the next table seed (``VectorMusEnv.new_episodes``). It uses only the
engine's public API.

Example:
    >>> from mus_env.adapters.sb3 import MusVecEnv
    >>> venv = MusVecEnv(4, learner_seats=(0, 2), seed=0)
    >>> obs = venv.reset()
    >>> obs.shape, venv.action_masks().shape
    ((4, 345), (4, 31))
    >>> obs, rewards, dones, infos = venv.step(venv.action_masks().argmax(axis=1))
    >>> rewards.shape, dones.dtype, sorted(infos[0])
    ((4,), dtype('bool'), ['game_seed', 'seat'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from ..actions import NUM_ACTIONS, action_to_string
from ..config import MusConfig, playable_config
from ..interfaces import (
    check_learner_seats,
    check_playable,
    check_reward,
    chosen_agents,
    make_config,
    observation_box,
)
from ..shuffle import check_seed, normalize_seed, random_seed, table_seeds
from ..vector import VectorMusEnv

__all__ = ["MusVecEnv", "MAX_SKIPS"]

#: A step gives up (RuntimeError) after this many consecutive episodes of one table in which the learner would
#: never act (as ``MusGymEnv.reset``).
MAX_SKIPS = 1000
_RANDOM = -1          # seat agent index: uniform random legal actions
_LEARNER = -2         # seat agent index: a learner seat


class _RowAgent:
    """``act_batch`` over a per-row policy ``(obs, mask, rng) -> action`` (``.act`` or a plain callable)."""

    def __init__(self, policy: Any, agent: Any) -> None:
        self.policy = policy
        self.agent = agent

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return np.array([self.policy(o, m, rng) for o, m in zip(obs, masks, strict=True)], dtype=np.int64)

    def __repr__(self) -> str:
        return repr(self.agent)


def _uniform_legal(masks: npt.NDArray[np.int8], rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """One uniformly random legal action per row of ``masks`` (every row has one)."""
    return (rng.random(masks.shape) * (masks > 0)).argmax(axis=1)


def _batch_agent(agent: Any, seat: int) -> Any:
    if callable(getattr(agent, "act_batch", None)):
        return agent
    act = getattr(agent, "act", None)
    if callable(act):
        return _RowAgent(act, agent)
    if callable(agent):
        return _RowAgent(agent, agent)
    raise ValueError(f"the agent for seat {seat} must have act_batch(obs, masks, rng) (agents.Agent), .act(obs, "
                     f"mask, rng) or be a callable (obs, mask, rng) -> action; got {agent!r}")


class MusVecEnv(VecEnv):
    """SB3 ``VecEnv`` of ``num_envs`` Mus tables: one learner team against agents stepped in batch (see the
    module docstring).

    Args:
        num_envs: number of tables N (>= 1).
        config: the ruleset (a :class:`MusConfig`, a dict of its fields, or None for RULES.md §1.1).
        learner_seats: the learner's seat(s), all in one team: ``(0, 2)`` (default), ``(0,)``, ``1`` ...
        opponents: None, one agent for all other seats, or ``{seat: agent}`` (missing seats random).
        reward: ``"game"`` or ``"stones"`` (as in :mod:`mus_env.mus_v0` and MusGymEnv).
        seed: seed of the first ``reset()`` (None: a random one). Tables' games and the opponents' rng
            derive from it.
        **config_kwargs: MusConfig fields overriding ``config`` (``first_mano=0``, ``target=30`` ...).

    Attributes:
        engine: the :class:`~mus_env.vector.VectorMusEnv` (its tables stop at game over until this env
            restarts them; read it, do not step it).
        learner_seats: the learner's seats.
        skipped_games: ``(N,)`` episodes skipped on each table because the learner would never have acted.
        seed_value: the master seed of the current run (set by ``reset``).
        decisions: decisions played in the engine since construction, every seat (the learner's and the others').

    Raises:
        ValueError: any argument out of its accepted values (the message names it).
    """

    def __init__(self, num_envs: int = 64, config: MusConfig | Mapping[str, Any] | None = None,
                 learner_seats: Any = (0, 2), opponents: Any = None, reward: str = "game",
                 seed: int | None = None, **config_kwargs: Any) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if seed is not None:
            check_seed(seed)                    # 0..2**64 - 1: nothing wraps
        cfg = make_config(config, config_kwargs)
        playable_config(cfg)                     # signals: not yet (its buffers are 31 actions wide)
        check_playable(cfg)
        self.reward_mode = check_reward(reward)
        self.learner_seats = check_learner_seats(learner_seats)
        self._agents, self._seat_agent = self._resolve_opponents(opponents)
        self.config = cfg
        self.render_mode = None
        n = int(num_envs)
        # finished tables wait at game over (their terminal view is read) until restarted here
        self.engine = VectorMusEnv(n, cfg, seed=0, reward=reward, num_threads=1, auto_reset=False)
        super().__init__(n, observation_box(cfg), spaces.Discrete(NUM_ACTIONS))
        self._is_learner = np.zeros(4, dtype=bool)
        self._is_learner[list(self.learner_seats)] = True
        self._reward_seat = self.learner_seats[0]
        self._rows = np.arange(n, dtype=np.int64)
        self._acts = np.zeros(n, dtype=np.int64)
        self._pending = np.zeros(n, dtype=np.float64)      # earned in the current episode before a decision
        self._seat = np.zeros(n, dtype=np.int64)           # learner seat to act (acted last, in a step)
        self._masks = np.zeros((n, NUM_ACTIONS), dtype=bool)
        self._skip_run = np.zeros(n, dtype=np.int64)
        self._terminal = np.zeros((n, self.observation_space.shape[0]), dtype=np.float32)
        self._winner = np.full(n, -1, dtype=np.int64)
        self.skipped_games = np.zeros(n, dtype=np.int64)
        self.decisions = 0
        self._next_seed: int | None = random_seed() if seed is None else normalize_seed(seed)
        self.seed_value = self._next_seed
        self._rng = np.random.default_rng()
        self._actions: npt.NDArray[np.int64] | None = None
        self._ready = False                                # reset() was called and no step failed since
        # the engine's observation and mask buffers, as its reset, step_tables and new_episodes return them
        self._engine_obs: npt.NDArray[np.float32] | None = None
        self._engine_mask: npt.NDArray[np.int8] | None = None

    # ------------------------------------------------------------------------------------------------
    def _resolve_opponents(self, opponents: Any) -> tuple[list[Any], npt.NDArray[np.int64]]:
        """The distinct batch agents, and for each seat its agent's index (or _RANDOM / _LEARNER)."""
        others = [s for s in range(4) if s not in self.learner_seats]
        chosen = chosen_agents(opponents, others)
        agents: list[Any] = []
        ids: dict[int, int] = {}
        seat_agent = np.full(4, _LEARNER, dtype=np.int64)
        for s in others:
            agent = chosen.get(s)
            if agent is None:
                seat_agent[s] = _RANDOM
                continue
            if id(agent) not in ids:
                ids[id(agent)] = len(agents)
                agents.append(_batch_agent(agent, s))
            seat_agent[s] = ids[id(agent)]
        return agents, seat_agent

    # ------------------------------------------------------------------------------------------------
    # VecEnv API
    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the next ``reset()`` (None: a random seed).

        Returns:
            The game seed of each table's first episode after that reset (before any skipped episode).
        """
        if seed is not None:
            check_seed(seed)                    # 0..2**64 - 1: nothing wraps
        self._next_seed = random_seed() if seed is None else normalize_seed(seed)
        return [int(s) for s in table_seeds(self._next_seed, self._rows, 0)]

    def reset(self) -> npt.NDArray[np.float32]:
        """Start a new episode on every table and play the other seats until a learner seat acts.

        The seed is the one given to :meth:`seed` or the constructor, if not used yet; otherwise one drawn from
        the env's generator (so a second ``reset()`` deals new games).

        Returns:
            ``(N, OBS_DIM)`` float32 observations (``reset_infos[i]`` has ``seat`` and ``game_seed``).
        """
        if self._next_seed is None:
            self._next_seed = int(self._rng.integers(0, 2**63 - 1))
        seed, self._next_seed = self._next_seed, None
        self._ready = False
        self.seed_value = seed
        self._rng = np.random.default_rng([seed, 0x5B3])
        self._engine_obs, self._engine_mask = self.engine.reset(seed)
        self._pending[:] = 0.0
        self._skip_run[:] = 0
        self.skipped_games[:] = 0
        waiting = np.ones(self.num_envs, dtype=bool)        # no learner decision yet in these episodes
        self._advance(np.zeros(self.num_envs), waiting)
        self._ready = True
        obs = self._publish()
        self.reset_infos = self._infos()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Check and store the learner's actions (``(N,)`` ints, legal for the seat to act on each table).

        Raises:
            ValueError: wrong shape or dtype, or an illegal action (the message names the first bad table);
                nothing changes.
            RuntimeError: ``reset()`` was not called (or a failed step left the tables inconsistent).
        """
        if not self._ready:
            raise RuntimeError("call reset() before step() (a failed step also asks for a reset)")
        a = np.asarray(actions)
        if a.shape not in ((self.num_envs,), (self.num_envs, 1)):
            raise ValueError(f"actions must have shape ({self.num_envs},), one per table; got {a.shape}")
        if a.dtype.kind not in "iu":
            if a.dtype.kind == "f" and np.array_equal(a, np.round(a)) and np.isfinite(a).all():
                a = a.astype(np.int64)
            else:
                raise ValueError(f"actions must be integer action ids, got dtype {a.dtype}")
        a = a.reshape(self.num_envs).astype(np.int64)
        ok = (a >= 0) & (a < NUM_ACTIONS)
        ok[ok] = self._masks[self._rows[ok], a[ok]]
        if not ok.all():
            b = int(np.flatnonzero(~ok)[0])
            act = int(a[b])
            what = (f"{act} ({action_to_string(act, self.config)})" if 0 <= act < NUM_ACTIONS
                    else f"{act} (out of range 0..{NUM_ACTIONS - 1})")
            legal = ", ".join(f"{x} {action_to_string(int(x), self.config)}" for x in np.flatnonzero(self._masks[b]))
            raise ValueError(f"illegal learner action on {int((~ok).sum())} table(s); first: table {b}, action {what} "
                             f"for seat {int(self._seat[b])}; legal actions: {legal}")
        self._actions = a

    def step_wait(self) -> VecEnvStepReturn:
        """Play the stored actions, then the other seats until every table has a learner seat to act.

        Returns:
            ``obs (N, OBS_DIM)`` float32, ``rewards (N,)`` float32, ``dones (N,)`` bool and ``infos`` (one dict per
            table: ``seat``, ``game_seed``; for a finished episode also ``terminal_observation`` and ``winner``).
        """
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        actions, self._actions = self._actions, None
        self._ready = False
        reward = self._pending.copy()
        self._pending[:] = 0.0
        self._skip_run[:] = 0
        done = np.zeros(self.num_envs, dtype=bool)
        self._acts[:] = actions
        self._apply(self._rows, reward, done)
        self._advance(reward, done)
        self._ready = True
        obs = self._publish()
        infos = self._infos()
        for i in np.flatnonzero(done).tolist():
            infos[i]["terminal_observation"] = self._terminal[i].copy()
            infos[i]["winner"] = int(self._winner[i])
        return obs, reward.astype(np.float32), done, infos

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """``(N, NUM_ACTIONS)`` bool: the legal actions of the learner seat to act on each table."""
        return self._masks.copy()

    def close(self) -> None:
        """Nothing to release."""
        self.engine.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of this env once per table of ``indices`` (the tables share one env object)."""
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of this env (shared by every table, whatever ``indices``)."""
        self._indices(indices)
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Call a method of this env. ``"action_masks"`` gives each table's own ``(NUM_ACTIONS,)`` row (what
        sb3-contrib's ``get_action_masks`` stacks); any other method is called once and its result repeated."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self._masks
            return [masks[i] for i in idx]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """No table is a gymnasium env, so none is wrapped."""
        return [False] * len(self._indices(indices))

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        idx = [indices] if isinstance(indices, (int, np.integer)) else list(indices)
        if any(isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs
               for i in idx):
            raise ValueError(f"indices must be table numbers in 0..{self.num_envs - 1}, got {indices!r}")
        return [int(i) for i in idx]

    # ------------------------------------------------------------------------------------------------
    @property
    def game_seeds(self) -> npt.NDArray[np.uint64]:
        """``(N,)`` seed of the episode now played on each table (``MusGame(config, seed=s)`` deals it)."""
        return self.engine.game_seeds.copy()

    @property
    def episodes(self) -> npt.NDArray[np.int64]:
        """``(N,)`` episodes started on each table since the last reset, minus one (skipped ones included):
        table i now plays ``table_seeds(seed_value, i, episodes[i])``."""
        return self.engine.episode.copy()

    # ------------------------------------------------------------------------------------------------
    # the hot path
    def _current_seats(self) -> npt.NDArray[np.int64]:
        e = self.engine
        return (e.mano.astype(np.int64) + e.rel) % 4

    def _advance(self, reward: npt.NDArray[np.float64], done: npt.NDArray[np.bool_]) -> None:
        """Step the other seats, in batch, until every table has a learner seat to act."""
        while True:
            seats = self._current_seats()
            rows = np.flatnonzero(~self._is_learner[seats])
            if not rows.size:
                break
            self._opponent_actions(rows, seats[rows])
            self._apply(rows, reward, done)
        self._seat = seats

    def _opponent_actions(self, rows: npt.NDArray[np.int64], seats: npt.NDArray[np.int64]) -> None:
        """``self._acts[rows]``: each opponent agent's choices on the rows where one of its seats acts."""
        obs, mask = self._engine_obs, self._engine_mask
        kinds = self._seat_agent[seats]
        first = kinds[0]
        groups = [(first, rows)] if (kinds == first).all() else [(k, rows[kinds == k]) for k in np.unique(kinds)]
        for k, sel in groups:
            m = mask[sel]
            if k == _RANDOM:
                self._acts[sel] = _uniform_legal(m, self._rng)
                continue
            agent = self._agents[k]
            try:
                if getattr(agent, "wants_rows", False):      # an agent that plays by game gets each row's identity
                    act = np.asarray(agent.act_rows(obs[sel], m, self._rng, self.engine.table_rows(sel)))
                else:
                    act = np.asarray(agent.act_batch(obs[sel], m, self._rng))
            except BaseException:
                self._ready = False
                raise
            if act.shape != sel.shape or act.dtype.kind not in "iu":
                self._ready = False
                raise ValueError(f"the opponent agent {agent!r} returned {act.shape} {act.dtype} actions for "
                                 f"{sel.size} rows; act_batch must return ({sel.size},) ints")
            self._acts[sel] = act

    def _apply(self, rows: npt.NDArray[np.int64], reward: npt.NDArray[np.float64],
               done: npt.NDArray[np.bool_]) -> None:
        """Step tables ``rows`` with ``self._acts``; book the learner team's rewards (into ``reward`` while its
        episode runs, into the next episode's pending reward once it is done); read terminal views and
        restart finished tables (a finish before the learner's first decision is a skip)."""
        e = self.engine
        acts = self._acts[rows]
        try:
            self._engine_obs, self._engine_mask = e.step_tables(rows, acts)
        except ValueError as err:                          # nothing applied; name who chose the illegal action
            self._ready = False
            ok = (acts >= 0) & (acts < NUM_ACTIONS)
            ok[ok] = self._engine_mask[rows[ok], acts[ok]] == 1
            b = int(rows[np.flatnonzero(~ok)[0]]) if not ok.all() else int(rows[0])
            seat = int(self._current_seats()[b])
            act = int(self._acts[b])
            k = self._seat_agent[seat]
            who = "the learner" if k == _LEARNER else "uniform random" if k == _RANDOM else repr(self._agents[k])
            raise ValueError(f"table {b}: {who} at seat {seat} chose the illegal action {act}; the tables are now "
                             "inconsistent: call reset()") from err
        self.decisions += rows.size
        r = e.last_rewards[rows, self._reward_seat].astype(np.float64)
        waiting = done[rows]
        reward[rows] += np.where(waiting, 0.0, r)
        self._pending[rows] += np.where(waiting, r, 0.0)
        fin = e.last_finished[rows]
        if not fin.any():
            return
        fin_rows = rows[fin]
        skipped = fin_rows[done[fin_rows]]
        ended = fin_rows[~done[fin_rows]]
        if ended.size:
            self._terminal[ended] = e.observe(ended, self._seat[ended])[0]
            self._winner[ended] = e.last_winner[ended]
            done[ended] = True
        if skipped.size:
            self._pending[skipped] = 0.0
            self.skipped_games[skipped] += 1
            self._skip_run[skipped] += 1
            if (self._skip_run[skipped] >= MAX_SKIPS).any():
                self._ready = False
                raise RuntimeError(f"the other seats ended {MAX_SKIPS} games in a row before a learner seat "
                                   f"{self.learner_seats} could act; check the opponents and the config")
        self._engine_obs, self._engine_mask = e.new_episodes(fin_rows)

    def _publish(self) -> npt.NDArray[np.float32]:
        """The learner's observations (a copy) and masks after a reset or a step."""
        self._masks = self._engine_mask.astype(bool)
        return self._engine_obs.copy()

    def _infos(self) -> list[dict[str, Any]]:
        seeds = self.engine.game_seeds.tolist()
        return [{"seat": s, "game_seed": g} for s, g in zip(self._seat.tolist(), seeds, strict=True)]

    def __repr__(self) -> str:
        return (f"MusVecEnv(num_envs={self.num_envs}, learner_seats={self.learner_seats}, "
                f"reward={self.reward_mode!r}, config={self.config!r})")
