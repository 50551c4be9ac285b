"""VectorMusEnv: the batched engine, B tables stepped at once with exactly the rules of MusGame.

Every table's state is one row of a numpy structured array (fields documented in
:data:`mus_env.kernel.STATE_FIELDS`; each field is also an attribute of the engine, a ``(B, ...)`` view,
e.g. ``venv.hands``, ``venv.mano``, ``venv.phase``). A step is one compiled pass over the tables
(:mod:`mus_env.kernel`, numba ``njit``, ``prange`` over tables when ``num_threads > 1``): each table
dispatches its decision exactly as ``MusGame`` does, runs the automatic transitions (declarations,
showdown, next deal) and writes the acting seat's observation and legal mask straight into the output
buffers. Results do not depend on the number of threads. Randomness comes from :mod:`mus_env.shuffle`
(a pure function of each game's seed and position), so a table of this engine and a
:class:`~mus_env.game.MusGame` with the same seed, deck and actions play the same game
(``tests/test_vector.py`` holds them equal: masks, observations, state, rewards, scores).

Each step takes one action per table for its :attr:`current_player` and returns that seat's next
observation and mask. Finished episodes auto-reset: ``info["finished"]`` marks them, with the winner
and final scores; the returned observation is the first one of the new episode.

Subsets of tables (for wrappers that step only the tables where some seat acts, such as
``mus_env.adapters.sb3.MusVecEnv``): :meth:`VectorMusEnv.step_tables` steps some tables (all or none),
:meth:`VectorMusEnv.new_episodes` restarts some, and :attr:`VectorMusEnv.last_rewards`,
:attr:`~VectorMusEnv.last_finished`, :attr:`~VectorMusEnv.last_winner` read what each table's latest step
reported. With ``auto_reset=False`` a finished table stays at its game-over state (``Phase.GAME_OVER``, no
legal action; its final views can be read with :meth:`VectorMusEnv.observe`) until :meth:`new_episodes`
starts its next episode.

With ``MusConfig(signals="truthful" or "free")`` the tables play the señas channel of RULES.md §8
(:mod:`mus_env.signals`): sign windows with one ``Phase.SIGNAL`` decision per seat, actions 31..46,
observations of ``observation.obs_dim(config)`` entries, masks of ``actions.num_actions(config)`` columns
and ``state()`` rows of ``observation.state_dim(config)`` (attributes ``obs_dim``, ``num_actions``,
``state_dim``). The tokens signed in the current hand are the state fields ``sig_mus`` and ``sig_grande``
(by absolute seat, -1 none), the pending window's kind ``sig_window``. With ``signals="off"`` (the
default) nothing differs from an engine without signs.

Example:
    >>> import numpy as np
    >>> from mus_env import VectorMusEnv
    >>> venv = VectorMusEnv(num_envs=8, seed=0)
    >>> obs, mask = venv.reset()
    >>> rng = np.random.default_rng(0)
    >>> actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    >>> obs, mask, rewards, done, info = venv.step(actions)
    >>> obs.shape, mask.shape, rewards.shape
    ((8, 345), (8, 31), (8, 4))
"""

from __future__ import annotations

import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from . import kernel
from .actions import NUM_ACTIONS, action_to_string, is_sign_action, num_actions
from .cards import NUM_CARDS
from .config import MusConfig, playable_config
from .interrupts import ctrl_c_held
from .observation import obs_dim, state_dim
from .phases import PHASE_NAMES, SIGNAL_PHASE_NAME, Phase
from .rows import TableRows
from .shuffle import check_seed, random_seed, table_seeds
from .signals import WINDOW_NAMES
from .tables import LANCE_NAMES

__all__ = ["VectorMusEnv", "kernel_is_cached", "warm_up", "COMPILE_SECONDS"]

_INT64 = np.dtype(np.int64)
#: Below this many tables a step runs on one thread whatever ``num_threads`` is (thread start-up costs more).
PARALLEL_MIN_TABLES = 64
# The state layout, as saved in state_dict (fields, dtypes, shapes).
_LAYOUT = ";".join(f"{n}:{d}{list(sh)}" for n, d, sh, _ in kernel.STATE_FIELDS)
#: The compiled entry points of the one-table calls (``VectorMusEnv._one``): every engine's arguments have the same
#: types (the state, output and rules dtypes are fixed; the buffers are float32 and int8 C arrays).
_ONE_TABLE_ENTRIES: dict[str, Callable[..., Any]] = {}


class VectorMusEnv:
    """B independent Mus games stepped together (the fast path for training and tournaments).

    Args:
        num_envs: number of tables B (>= 1).
        config: the ruleset (every switch MusGame supports).
        seed: master seed, an int in ``0..2**64 - 1``; game ``i``'s e-th episode uses
            ``shuffle.table_seeds(seed, i, e)``. None draws one.
        reward: "game" (+1/-1 per team at the end of an episode) or "stones" (each finished hand, the
            team's stones minus the other team's; a game won by an accepted órdago also credits the
            stones the winners still lacked, as ``HandRecord.stone_difference``).
        num_threads: threads of the compiled kernel (None: numba's default, all cores). Results are the
            same for any value; batches below :data:`PARALLEL_MIN_TABLES` tables always run on one thread.
            The first threaded step of a process starts numba's OpenMP pool, which sets OpenMP's thread
            count, and torch (same OpenMP) then uses it: call ``torch.set_num_threads`` after that step, or
            give ``num_threads=1`` where torch must stay on one thread.
        auto_reset: True (default): a table whose episode ends in a step starts its next episode in that
            step (the next table seed). False: it stays at its game-over state (``Phase.GAME_OVER``, no legal
            action, :attr:`current_player` unchanged) until :meth:`new_episodes` restarts it.

    Attributes:
        num_envs: B.
        config: the ruleset.
        obs_dim: length of an observation (``observation.obs_dim(config)``: OBS_DIM, or more with signals on).
        num_actions: columns of a mask (``actions.num_actions(config)``: 31, or 47 with signals on).
        state_dim: length of a :meth:`state` row (``observation.state_dim(config)``).
        num_threads: the threads a step may use.
        auto_reset: whether finished tables restart in the step that ends them.
        game_seeds: ``(B,)`` uint64 seed of each table's current episode (``MusGame(config, seed)``
            with that seed plays the same game).
        hands, mano, phase, legal, ...: ``(B, ...)`` views of the state fields
            (:data:`mus_env.kernel.STATE_FIELDS`); read them, do not write them.
    """

    def __init__(self, num_envs: int, config: MusConfig | None = None, seed: int | None = None,
                 reward: str = "game", num_threads: int | None = None, auto_reset: bool = True) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        cfg = playable_config(config, signals=True)
        if reward not in ("game", "stones"):
            raise ValueError(f"reward must be 'game' or 'stones', got {reward!r}")
        max_threads = numba.config.NUMBA_NUM_THREADS
        if num_threads is None:
            num_threads = max_threads
        if (isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer))
                or not 1 <= num_threads <= max_threads):
            raise ValueError(f"num_threads must be an int in 1..{max_threads} (numba's thread pool), "
                             f"or None for all of them; got {num_threads!r}")
        if not isinstance(auto_reset, (bool, np.bool_)):
            raise ValueError(f"auto_reset must be True or False, got {auto_reset!r}")
        self.num_envs = int(num_envs)
        self.config = cfg
        self.reward_mode = reward
        self.num_threads = int(num_threads)
        self.auto_reset = bool(auto_reset)
        self.obs_dim = obs_dim(cfg)
        self.num_actions = num_actions(cfg)
        self.state_dim = state_dim(cfg)
        self._set_seed(random_seed() if seed is None else seed)
        self._rules = kernel.make_rules(cfg, stones_reward=reward == "stones", keep_over=not self.auto_reset)
        self._parallel = self.num_threads > 1 and self.num_envs >= PARALLEL_MIN_TABLES
        self._state = np.zeros(self.num_envs, dtype=kernel.STATE_DTYPE)
        self._out = np.zeros(self.num_envs, dtype=kernel.OUT_DTYPE)
        self._out["winner"] = -1
        self._obs = np.zeros((self.num_envs, self.obs_dim), dtype=np.float32)
        self._mask = np.zeros((self.num_envs, self.num_actions), dtype=np.int8)
        for name, *_ in kernel.STATE_FIELDS:                # every field as a (B, ...) view
            setattr(self, "scores_" if name == "scores" else name, self._state[name])
        self._rows = np.arange(self.num_envs)
        self._last: dict[str, np.ndarray] = {}                # read-only views of the step outputs
        for name in ("rewards", "finished", "winner"):
            view = self._out[name].view()
            view.setflags(write=False)
            self._last[name] = view
        self._started = False

    def _set_seed(self, seed: int) -> None:
        self.seed = check_seed(seed)
        self._seed_u64 = np.uint64(self.seed)

    # ------------------------------------------------------------------------------------------------
    def state_bytes(self) -> int:
        """Bytes of game state per table (one row of the state array)."""
        return kernel.STATE_DTYPE.itemsize

    def buffer_bytes(self) -> int:
        """Bytes per table of the output buffers (observation, mask, step outputs); there is no per-seat cache."""
        return self._obs.itemsize * self.obs_dim + self.num_actions + kernel.OUT_DTYPE.itemsize

    def _arrays(self) -> dict[str, np.ndarray]:
        """The engine's arrays as plain numeric arrays (structured rows as raw bytes, for safe loaders)."""
        B = self.num_envs
        return {"state": self._state.view(np.uint8).reshape(B, -1), "out": self._out.view(np.uint8).reshape(B, -1),
                "obs": self._obs, "mask": self._mask}

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly where the engine is (training checkpoints).

        Returns:
            ``{"num_envs", "config", "reward", "auto_reset", "seed", "started", "layout", "arrays": {name:
            ndarray copy}}``:
            plain values and numeric numpy arrays (the state rows and step outputs as raw bytes, the
            observation buffers), no objects; ``layout`` names the state fields, so that a state saved by
            another version of the engine is refused.
        """
        return {"num_envs": self.num_envs, "config": self.config.to_dict(), "reward": self.reward_mode,
                "auto_reset": self.auto_reset, "seed": int(self.seed), "started": bool(self._started),
                "layout": _LAYOUT, "arrays": {k: v.copy() for k, v in self._arrays().items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the same ``num_envs``, config, reward mode and
        ``auto_reset``; a state without ``auto_reset``, saved before it existed, is an auto-reset engine's).

        Raises:
            ValueError: the state belongs to another engine (size, config, reward mode, auto_reset, state layout)
                or an array is missing or has the wrong shape or dtype; the message names it, and nothing changes.
        """
        if not isinstance(state, dict) or not isinstance(state.get("arrays"), dict):
            raise ValueError("not a VectorMusEnv state_dict (expected a dict with 'arrays')")
        for key, mine in (("num_envs", self.num_envs), ("config", self.config.to_dict()), ("reward", self.reward_mode),
                          ("auto_reset", self.auto_reset), ("layout", _LAYOUT)):
            theirs = state.get(key, True) if key == "auto_reset" else state.get(key)
            if theirs != mine:
                raise ValueError(f"VectorMusEnv state_dict: {key} is {theirs!r}, this engine has {mine!r}"
                                 + (" (saved by another version of the engine)" if key == "layout" else ""))
        arrays = state["arrays"]
        mine_all = self._arrays()
        for k, mine in mine_all.items():
            theirs = arrays.get(k)
            if not isinstance(theirs, np.ndarray) or theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                got = ("missing" if theirs is None
                       else f"{getattr(theirs, 'shape', '?')} {getattr(theirs, 'dtype', '?')}")
                raise ValueError(f"VectorMusEnv state_dict: array {k!r} should be {mine.shape} {mine.dtype}, got {got}")
        for k, mine in mine_all.items():
            mine[...] = arrays[k]
        self._set_seed(int(state["seed"]))
        self._started = bool(state["started"])

    # ------------------------------------------------------------------------------------------------
    # public API
    @property
    def current_player(self) -> npt.NDArray[np.int8]:
        """``(B,)`` absolute seat whose view the last obs/mask are."""
        return ((self.mano + self.rel) % 4).astype(np.int8)

    def table_rows(self, tables: npt.ArrayLike | None = None) -> TableRows:
        """Which table, game and hand each table's current decision is, and the seat to decide
        (:class:`~mus_env.rows.TableRows`: ``table`` the table index, ``game`` the table's :attr:`episode` serial,
        ``hand`` its ``hand_number``, ``seat`` :attr:`current_player`), for the agents that play by game.

        Args:
            tables: ``(n,)`` table indices (default: every table, in order).

        Raises:
            ValueError: table indices out of range or repeated.
        """
        t = self._rows if tables is None else self._table_indices(tables)
        return TableRows(t, self.episode[t], self.hand_number[t], self.current_player[t])

    @property
    def scores(self) -> npt.NDArray[np.int32]:
        """``(B, 2)`` stones of team 0 and team 1 in each table's current game (a copy)."""
        return self.scores_.copy()

    @property
    def last_rewards(self) -> npt.NDArray[np.float32]:
        """``(B, 4)`` float32, read-only: the reward of each absolute seat in each table's latest step (``rewards``
        of :meth:`step`). A table that :meth:`step_tables` did not step keeps the value of its own latest step;
        the array is the engine's buffer, rewritten by the next step: copy it to keep it."""
        return self._last["rewards"]

    @property
    def last_finished(self) -> npt.NDArray[np.bool_]:
        """``(B,)`` bool, read-only: whether each table's episode ended in its latest step (``info["finished"]``;
        with ``auto_reset=False`` such a table now waits at game over). Rows of tables not stepped by the latest
        :meth:`step_tables` keep their older values; the engine's buffer, rewritten by the next step."""
        return self._last["finished"]

    @property
    def last_winner(self) -> npt.NDArray[np.int8]:
        """``(B,)`` int8, read-only: the team (0 or 1) that won the episode a table's latest step ended, -1 if that
        step ended none (``info["winner"]``). As :attr:`last_finished`, per table's own latest step."""
        return self._last["winner"]

    def reset(self, seed: int | None = None) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start a fresh episode on every table (deals from ``shuffle.table_seeds``).

        Returns:
            ``obs (B, obs_dim)`` float32 and ``mask (B, num_actions)`` int8 for each table's first player.
        """
        if seed is not None:
            self._set_seed(seed)
        self.episode[:] = -1
        kernel.new_episodes(self._state, self._rules, self._rows, self._seed_u64, self._obs, self._mask)
        self._started = True
        return self._obs, self._mask

    def reset_from_decks(self, decks: npt.ArrayLike, mano: npt.ArrayLike, scores: npt.ArrayLike | None = None,
                         seeds: npt.ArrayLike | None = None) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start every table from a given first deal (duplicate tournaments, differential tests).

        Args:
            decks: ``(B, 40)`` permutations of the card ids, dealt as in ``MusGame.from_deck``.
            mano: ``(B,)`` absolute seat of each first hand's mano.
            scores: ``(B, 2)`` starting stones, each in ``0 .. target - 1``; zeros if None.
            seeds: ``(B,)`` non-negative game seeds for reshuffles and later hands; by default
                ``table_seeds(seed, i, episode)`` as for :meth:`reset`.

        Raises:
            ValueError: a bad shape, dtype or value (the message names the first bad table); nothing changes.
        """
        return self.reset_tables(self._rows, decks, mano, scores, seeds)

    def reset_tables(self, tables: npt.ArrayLike, decks: npt.ArrayLike, mano: npt.ArrayLike,
                     scores: npt.ArrayLike | None = None, seeds: npt.ArrayLike | None = None,
                     ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start a new episode on some tables from given deals; the other tables are untouched.

        Args:
            tables: ``(n,)`` distinct table indices.
            decks: ``(n, 40)``, as in :meth:`reset_from_decks`.
            mano: ``(n,)``, as in :meth:`reset_from_decks`.
            scores: ``(n, 2)`` or None, as in :meth:`reset_from_decks`.
            seeds: ``(n,)`` or None, as in :meth:`reset_from_decks`.

        Returns:
            The observation and mask buffers, with the reset tables' rows refreshed.
        """
        t = self._table_indices(tables)
        n = t.size
        d = self._int_array("decks", decks, (n, NUM_CARDS))
        bad = np.flatnonzero((np.sort(d, axis=1) != np.arange(NUM_CARDS)).any(axis=1))
        if bad.size:
            raise ValueError(f"decks[{bad[0]}] is not a permutation of the 40 card ids 0..39 "
                             f"({bad.size} bad row(s)): {d[bad[0]].tolist()}")
        m = self._int_array("mano", mano, (n,))
        bad = np.flatnonzero((m < 0) | (m > 3))
        if bad.size:
            raise ValueError(f"mano[{bad[0]}] = {m[bad[0]]} is not a seat 0..3")
        s = np.zeros((n, 2), dtype=np.int64) if scores is None else self._int_array("scores", scores, (n, 2))
        bad = np.flatnonzero(((s < 0) | (s >= self.config.target)).any(axis=1))
        if bad.size:
            raise ValueError(
                f"scores[{bad[0]}] = {s[bad[0]].tolist()}: each score must be in 0..{self.config.target - 1}")
        if seeds is not None:
            sd = np.asarray(seeds)
            if sd.dtype.kind in "fO" and not isinstance(seeds, np.ndarray) and sd.shape == (n,):
                # Python ints, some >= 2**63 (numpy makes them float64 or object): uint64 if all are seeds
                given = list(np.asarray(seeds, dtype=object))
                if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in given):
                    sd = np.array([check_seed(x, f"seeds[{i}]") for i, x in enumerate(given)], dtype=np.uint64)
            if sd.dtype.kind != "u":                        # uint64 seeds (game_seeds) may be >= 2**63
                sd = self._int_array("seeds", sd, (n,))
                if (sd < 0).any():
                    raise ValueError(f"seeds must be non-negative (uint64 game seeds), got {sd[sd < 0][0]}")
            elif sd.shape != (n,):
                raise ValueError(f"seeds must have shape {(n,)}, got {sd.shape}")
        if not self._started and n < self.num_envs:
            self.reset()                                    # the other tables need a game too
        if not self._started:
            self.episode[:] = -1
        if seeds is None:
            sd = table_seeds(self.seed, t, self.episode[t] + 1)
        kernel.reset_tables(self._state, self._rules, t, d.astype(np.int8), m.astype(np.int8), s,
                            sd.astype(np.uint64), self._obs, self._mask)
        self._started = True
        return self._obs, self._mask

    def step(self, actions: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8],
                                                     npt.NDArray[np.float32], npt.NDArray[np.bool_], dict]:
        """Apply one action per table for its current player.

        Args:
            actions: ``(B,)`` integer action ids, each legal for its table.

        Returns:
            ``obs (B, obs_dim)``, ``mask (B, num_actions)`` of the next player of each table; ``rewards
            (B, 4)`` float32 by absolute seat; ``done (B,)`` bool (episode finished: the table restarted, or with
            ``auto_reset=False`` waits at game over, where no action is legal until :meth:`new_episodes`);
            ``info`` with ``finished``, ``winner`` (team, -1), ``final_scores`` (B, 2), ``hand_finished``,
            ``hand_stones`` (B, 2) and ``lance_stones`` (B, 4 slots, 2 teams) of hands that ended this step.
            ``obs`` and ``mask`` are the engine's buffers, overwritten by the next call: copy them to keep them.

        Raises:
            ValueError: bad shape or dtype, or an action illegal on some table (the message names the
                table, seat, phase and legal actions); nothing changes.
        """
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before step()")
        a = actions
        if not (type(a) is np.ndarray and a.dtype == np.int64 and a.shape == (self.num_envs,)
                and a.flags.c_contiguous):
            a = np.ascontiguousarray(self._int_array("actions", actions, (self.num_envs,)))
        if self._parallel and numba.get_num_threads() != self.num_threads:
            numba.set_num_threads(self.num_threads)
        bad = kernel.step_tables(self._state, self._out, self._rules, a, self._seed_u64, self._obs, self._mask,
                                 self._parallel)
        if bad >= 0:
            self._check_actions(a)                          # raises, naming the table, seat and phase
            raise RuntimeError(f"VectorMusEnv: the kernel refused table {bad}'s action {a[bad]} that the "
                               "Python check accepts (engine bug); nothing was applied")
        out = self._out.view(np.uint8).copy().view(kernel.OUT_DTYPE).reshape(self.num_envs)   # a memcpy
        info = {k: out[k] for k in ("finished", "winner", "final_scores", "hand_finished", "hand_stones",
                                    "lance_stones")}
        return self._obs, self._mask, np.ascontiguousarray(out["rewards"]), out["finished"].copy(), info

    def step_tables(self, tables: npt.ArrayLike, actions: npt.ArrayLike,
                    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Apply one action on each of some tables, for its current player; the other tables are untouched.

        All or nothing: if any action is illegal, no table is stepped. What each stepped table's step reported is
        in :attr:`last_rewards`, :attr:`last_finished` and :attr:`last_winner` (and finished tables restart, or
        with ``auto_reset=False`` wait at game over, as in :meth:`step`). Always on one thread.

        Args:
            tables: ``(n,)`` distinct table indices in ``0..B-1`` (n may be 0).
            actions: ``(n,)`` integer action ids; ``actions[k]`` is played on table ``tables[k]``.

        Returns:
            The observation and mask buffers ``(B, obs_dim)`` float32 and ``(B, num_actions)`` int8, the stepped
            tables' rows refreshed (the next player's view); overwritten by the next call: copy them to keep them.

        Raises:
            ValueError: bad shapes or dtypes, table indices out of range or repeated, or an action illegal on some
                table (the message names the table, seat, phase and legal actions, as :meth:`step`'s); nothing
                changes.
            RuntimeError: neither :meth:`reset` nor :meth:`reset_from_decks` was called.
        """
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before step_tables()")
        t, a = tables, actions
        if not (type(t) is np.ndarray and t.dtype is _INT64 and t.ndim == 1):          # (the hot path: as given)
            t = np.asarray(tables)
            t = self._int_array("tables", t, (t.size,)) if t.size else np.zeros(0, dtype=np.int64)
        if not (type(a) is np.ndarray and a.dtype is _INT64 and a.shape == t.shape):
            a = self._int_array("actions", actions, (t.size,))
        bad = kernel.step_subset(self._state, self._out, self._rules, t, a, self._seed_u64, self._obs, self._mask)
        if bad <= -2:                                       # a bad table index (checked in the kernel)
            self._table_indices(t)                          # raises, naming the accepted range
        if bad >= 0:
            self._check_actions(a, t)                       # raises, naming the table, seat and phase
        if bad != -1:
            raise RuntimeError(f"VectorMusEnv: the kernel refused tables {t.tolist()} / actions {a.tolist()} that "
                               "the Python checks accept (engine bug); nothing was applied")
        return self._obs, self._mask

    def new_episodes(self, tables: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start the next episode on some tables (each from its next table seed, ``table_seeds(seed, b, e + 1)``
        for a table on its e-th episode), whatever state they are in; the other tables are untouched.

        With ``auto_reset=False`` this is how a table that waits at game over goes on.

        Args:
            tables: ``(n,)`` distinct table indices in ``0..B-1`` (n may be 0).

        Returns:
            The observation and mask buffers, the restarted tables' rows refreshed (their first player's view).

        Raises:
            ValueError: table indices out of range or repeated; nothing changes.
            RuntimeError: neither :meth:`reset` nor :meth:`reset_from_decks` was called.
        """
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before new_episodes()")
        t = self._table_indices(tables)
        kernel.new_episodes(self._state, self._rules, t, self._seed_u64, self._obs, self._mask)
        return self._obs, self._mask

    def sample_actions(self, rng: np.random.Generator | int | None = None) -> npt.NDArray[np.int64]:
        """One uniformly random legal action per table, for its current player (random play, exploration).

        Args:
            rng: a ``numpy.random.Generator``, or a seed for one (None: fresh entropy).

        Returns:
            ``(B,)`` int64 action ids, legal for :meth:`step`; -1 for a table that waits at game over
            (``auto_reset=False``), where no action is legal.

        Examples:
            >>> venv = VectorMusEnv(4, seed=0); _ = venv.reset()
            >>> actions = venv.sample_actions(np.random.default_rng(0))
            >>> bool(venv.observe()[1][np.arange(4), actions].all())
            True
        """
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before sample_actions()")
        if not (rng is None or isinstance(rng, (np.random.Generator, int, np.integer))) or isinstance(rng, bool):
            raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        actions = np.empty(self.num_envs, dtype=np.int64)
        kernel.sample_legal(self._state, self._rules, gen.random(self.num_envs), actions)
        return actions

    def observe(self, tables: npt.ArrayLike | None = None, seats: npt.ArrayLike | None = None,
                ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Observations and masks, of the acting seats (into the engine's buffers) or of any seats.

        Args:
            tables: table indices (None: all tables).
            seats: None: rewrite the buffers' rows of ``tables`` with each acting seat's view and return
                the buffers ``(B, obs_dim)``, ``(B, num_actions)``. Given (one absolute seat 0..3 per
                table of ``tables``): new arrays ``(n, obs_dim)`` and ``(n, num_actions)``; row k is seat
                ``seats[k]``'s view of table ``tables[k]`` (equal to ``MusGame.observe(seat)``), its mask
                the legal mask when that seat is to act, else zeros.

        Raises:
            ValueError: a table index out of range, a seat not in 0..3, or shapes that do not match.
        """
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before observe()")
        if tables is None:
            t = self._rows
        else:
            t = np.asarray(tables)
            t = self._int_array("tables", t, (t.size,)) if t.size else np.zeros(0, dtype=np.int64)
            if ((t < 0) | (t >= self.num_envs)).any():
                raise ValueError(f"tables must be indices in 0..{self.num_envs - 1}, got {t.tolist()}")
        if seats is None:
            obs = np.empty((t.size, self.obs_dim), dtype=np.float32)
            mask = np.empty((t.size, self.num_actions), dtype=np.int8)
            kernel.observe_tables(self._state, self._rules, t, np.full(t.size, -1, dtype=np.int64), obs, mask)
            self._obs[t] = obs
            self._mask[t] = mask
            return self._obs, self._mask
        s = self._int_array("seats", seats, (t.size,))
        if ((s < 0) | (s > 3)).any():
            raise ValueError(f"seats must be absolute seats 0..3, got {s.tolist()}")
        obs = np.empty((t.size, self.obs_dim), dtype=np.float32)
        mask = np.empty((t.size, self.num_actions), dtype=np.int8)
        kernel.observe_tables(self._state, self._rules, t, s, obs, mask)
        return obs, mask

    def state(self) -> npt.NDArray[np.float32]:
        """``(B, state_dim)`` float32 full-information vectors (``MusGame.state()`` of each table: seat 0's
        view, then the four hands one-hot), for centralised critics; never give it to a policy."""
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before state()")
        out = np.empty((self.num_envs, self.state_dim), dtype=np.float32)
        kernel.state_rows(self._state, self._rules, out)
        return out

    # ------------------------------------------------------------------------------------------------
    # one table at a time (the one-game surfaces: ``mus_v0`` plays one table of a one-table engine)
    def start_episode(self, table: int, seed: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start table ``table``'s next episode with the game of seed ``seed``: dealt as ``MusGame(config, seed)``
        deals it, so that the table and that game play the same game for the same actions.

        Returns:
            The observation and mask buffers, the table's row refreshed (its first player's view).

        Raises:
            ValueError: ``table`` is not a table index or ``seed`` not an int in ``0..2**64 - 1``; nothing changes.
        """
        if not (table.__class__ is int and 0 <= table < self.num_envs):
            table = int(self._table_indices([table])[0])   # raises, naming the accepted range
        game_seed = np.uint64(check_seed(seed))
        if not self._started:
            if self.num_envs > 1:
                self.reset()                                # the other tables need a game too
            else:
                self.episode[:] = -1                        # (so that this first episode is episode 0)
        self._one("seed_table")(self._state, self._rules, table, game_seed, self._obs, self._mask)
        self._started = True
        return self._obs, self._mask

    def observe_buffers(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """The observation and mask buffers ``(B, obs_dim)`` float32 and ``(B, num_actions)`` int8 that every reset
        and step returns (each table's row: its current player's view and legal mask), for a caller that keeps
        them; read them, do not write them."""
        return self._obs, self._mask

    def step_one(self, table: int, action: int) -> bool:
        """One decision on one table with the least work from Python: when ``action`` is legal for the table's
        current player it is played (returns True; what the step reported is in :attr:`last_rewards`,
        :attr:`last_finished` and :attr:`last_winner`, and the table's rows of the buffers that :meth:`reset`
        returned hold its next player's view), otherwise nothing changes (False: :meth:`step_tables` names why).

        Nothing else is checked: ``table`` must be an int table index and ``action`` an int in ``0..2**63 - 1``,
        and a reset must have started the engine (a wrong argument steps garbage or raises from the compiled code).
        """
        return self._one("step_one")(self._state, self._out, self._rules, table, action, self._seed_u64, self._obs,
                                     self._mask)

    def observe_seat(self, table: int, seat: int, out: npt.NDArray[np.float32]) -> None:
        """Absolute seat ``seat``'s view of table ``table`` written into ``out``, a writable contiguous float32
        array of :attr:`obs_dim` entries the caller owns (no mask). Unchecked, as :meth:`step_one`: ``seat`` must
        be an int 0..3 (:meth:`observe` checks its arguments)."""
        self._one("observe_seat")(self._state, self._rules, table, seat, out)

    def _one(self, name: str) -> Callable[..., Any]:
        """The compiled entry point ``kernel.<name>`` for this engine's argument types, found once per process
        (``kernel.compiled_entry``: a call skips numba's choice of a compiled version by the arguments' types)."""
        entry = _ONE_TABLE_ENTRIES.get(name)
        if entry is None:
            example = {"seed_table": (self._state, self._rules, 0, np.uint64(0), self._obs, self._mask),
                       "step_one": (self._state, self._out, self._rules, 0, 0, self._seed_u64, self._obs, self._mask),
                       "observe_seat": (self._state, self._rules, 0, 0, self._obs[0])}[name]
            entry = _ONE_TABLE_ENTRIES[name] = kernel.compiled_entry(getattr(kernel, name), *example)
        return entry

    # ------------------------------------------------------------------------------------------------
    # validation
    @staticmethod
    def _int_array(name: str, value: npt.ArrayLike, shape: tuple[int, ...]) -> npt.NDArray[np.int64]:
        arr = np.asarray(value)
        if arr.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
        if arr.dtype.kind in "fO" and not isinstance(value, np.ndarray):
            # a list of Python ints some of which do not fit int64 becomes float64 or object: name the int
            flat = np.asarray(value, dtype=object).reshape(-1)
            if flat.size and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in flat):
                i = next(k for k, x in enumerate(flat) if not -(2**63) <= x < 2**63)
                raise ValueError(f"{name}: {flat[i]} (at index {i}) is out of range")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}")
        if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{name}: {int(arr.max())} is out of range")
        return arr.astype(np.int64)

    def _table_indices(self, tables: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """``tables`` as an ``(n,)`` int64 array of distinct indices in 0..B-1.

        Raises:
            ValueError: not a flat integer array, an index out of range, or a repeated one.
        """
        t = tables
        if not (type(t) is np.ndarray and t.dtype is _INT64 and t.ndim == 1):          # (the hot path: as given)
            t = np.asarray(tables)
            t = self._int_array("tables", t, (t.size,)) if t.size else np.zeros(0, dtype=np.int64)
        if kernel.first_bad_table(t, self.num_envs) >= 0:
            raise ValueError(f"tables must be distinct indices in 0..{self.num_envs - 1}, got {t.tolist()}")
        return t

    def _check_actions(self, actions: npt.ArrayLike, tables: npt.NDArray[np.int64] | None = None,
                       ) -> npt.NDArray[np.int64]:
        """``actions`` (one per table of ``tables``, None: every table) as int64 if each is legal on its table.

        Raises:
            ValueError: the first illegal action, naming its table, the seat, the phase and the legal actions.
        """
        rows = self._rows if tables is None else tables
        a = self._int_array("actions", actions, (rows.size,))
        masks = self._legal_masks()[rows]
        ok = np.zeros(rows.size, dtype=bool)
        in_range = (a >= 0) & (a < self.num_actions)
        ok[in_range] = masks[in_range, a[in_range]] == 1
        bad = np.flatnonzero(~ok)
        if bad.size:
            k = int(bad[0])
            b = int(rows[k])
            act = int(a[k])
            what = (f"{act} ({action_to_string(act, self.config)})" if 0 <= act < self.num_actions
                    else f"{act} (out of range 0..{self.num_actions - 1}"
                         + (")" if self.num_actions > NUM_ACTIONS else
                            "; the sign ids 31..46 exist only with MusConfig(signals='truthful' or 'free'))"))
            signing = int(self.phase[b]) == Phase.SIGNAL
            why = ""
            if int(self.phase[b]) == Phase.GAME_OVER:
                why = (" (its episode is over and auto_reset is off: no action is legal until new_episodes "
                       "starts the next one)")
            elif signing and not is_sign_action(act):
                why = " (a sign decision takes a sign id 31..46)"
            elif signing and act < self.num_actions:
                why = (f" (signals='truthful': that sign is not true for this hand in a "
                       f"{WINDOW_NAMES[self.sig_window[b]]} window)")
            elif is_sign_action(act) and act < self.num_actions:
                why = " (a sign is legal only in a sign decision)"
            legal = ", ".join(f"{x} {action_to_string(int(x), self.config)}"
                              for x in np.flatnonzero(masks[k])) or "none"
            raise ValueError(
                f"illegal action on {bad.size} table(s); first: table {b}, action {what} for seat "
                f"{int(self.current_player[b])} in phase {self._phase_name(b)}{why}; legal actions: {legal}")
        return a

    def _legal_masks(self) -> npt.NDArray[np.int8]:
        """``(B, num_actions)`` legal masks of every table's pending decision (computed afresh: the output
        buffers belong to the caller)."""
        masks = np.empty((self.num_envs, self.num_actions), dtype=np.int8)
        kernel.legal_masks(self._state, self._rules, masks)
        return masks

    def _phase_name(self, b: int) -> str:
        ph = int(self.phase[b])
        if ph == Phase.SIGNAL:
            return f"{WINDOW_NAMES[self.sig_window[b]]} window: {SIGNAL_PHASE_NAME}"
        if ph in (Phase.BET_OPEN, Phase.BET_RESPOND, Phase.BET_CONFIRM):
            return f"{LANCE_NAMES[self.ls_lance[b, self.slot[b]]]}: {PHASE_NAMES[ph]}"
        if ph == Phase.DECLARE:
            return f"{'pares' if self.slot[b] == 2 else 'juego'}: declaration"
        return PHASE_NAMES[ph]

    def _observe(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Observation and mask of every table's acting seat, written into the buffers."""
        return self.observe()

    def close(self) -> None:
        """Nothing to release (kept for the usual env interface)."""

    # ------------------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (f"VectorMusEnv(num_envs={self.num_envs}, config={self.config!r}, reward={self.reward_mode!r}, "
                f"num_threads={self.num_threads})")


# ----------------------------------------------------------------------------------------------------------------
# The first compile (numba compiles the kernel on first use and caches it on disk, per machine)
#: Roughly how long the first use of the kernel on a machine takes to compile it (every entry point, serial and
#: threaded, on the project's 2-core machine; a busy machine takes longer). Later processes load it in about 1 s.
COMPILE_SECONDS = 17
#: The kernel's entry points a VectorMusEnv calls from Python: on one thread, and the threaded step.
_SERIAL_ENTRIES = ("new_episodes", "reset_tables", "step_serial", "step_subset", "first_bad_table", "sample_legal",
                   "observe_tables", "state_rows", "seed_table", "step_one", "observe_seat")
_THREADED_ENTRIES = ("step_parallel",)


def kernel_is_cached(threaded: bool = False) -> bool:
    """Whether numba's on-disk cache holds the compiled kernel of the current ``mus_env/kernel/`` files: every
    entry point a VectorMusEnv calls on one thread (and with ``threaded`` the threaded step too). When it does, the
    first VectorMusEnv of a process loads the kernel in about a second; when not, it compiles it (about
    :data:`COMPILE_SECONDS`). Looks at numba's index files only (one per function, written with the compile,
    beginning with the numba version, named after the file that defines the function) and at the stamp of the
    sources they were compiled from (``kernel.drop_stale_cache`` deleted them on import if those changed):
    compiles, loads and prints nothing."""
    names = _SERIAL_ENTRIES + (_THREADED_ENTRIES if threaded else ())
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    digest = kernel.sources_digest()
    for name in names:
        dispatcher = getattr(kernel, name)
        if dispatcher.signatures:                       # compiled (or loaded) in this process already
            continue
        folder = Path(dispatcher.stats.cache_path)
        try:
            if (folder / kernel.CACHE_STAMP).read_text(encoding="utf-8") != digest:
                return False
        except OSError:
            return False
        stem = Path(dispatcher.py_func.__code__.co_filename).stem        # numba names the index after that file
        found = False
        for index in folder.glob(f"{stem}.{name}-*.{tag}*.nbi"):
            try:
                with open(index, "rb") as f:
                    found = found or pickle.load(f) == numba.__version__   # numba's index starts with its version
            except Exception:  # noqa: BLE001 - unreadable or half-written: numba will compile
                continue
        if not found:
            return False
    return True


def warm_up(num_threads: int | None = None, log: Callable[[str], None] | None = None) -> float:
    """Compile the kernel now (or load it from numba's cache), before anything is timed or shown.

    Runs every entry point a VectorMusEnv calls once on a small engine: on one thread, and threaded when
    ``num_threads`` (None: numba's thread pool, all cores) is above 1. Commands call it before their first
    VectorMusEnv so that the one-off compile is announced instead of stalling a progress bar.

    Args:
        num_threads: the threads the caller's engines will use (the threaded step is compiled only above 1).
        log: called with one line before a compile ("compiling the batched engine once ...") and one after
            it; not called when the kernel is already cached. Nothing is printed otherwise.

    Returns:
        Seconds spent (about :data:`COMPILE_SECONDS` for a compile; 0.0 when the kernel was cached, in which case
        nothing is loaded here: each engine loads what it uses).
    """
    max_threads = numba.config.NUMBA_NUM_THREADS
    threaded = (max_threads if num_threads is None else min(int(num_threads), max_threads)) > 1
    if kernel_is_cached(threaded):
        return 0.0
    if log is not None:
        log(f"compiling the batched engine once for this machine (about {COMPILE_SECONDS} s; later runs load it "
            "in about a second) ...")
    t0 = time.perf_counter()
    B = PARALLEL_MIN_TABLES
    with ctrl_c_held():                     # a Ctrl-C midway through numba's compiler breaks it: raised after
        for threads in ((1, max_threads) if threaded else (1,)):
            v = VectorMusEnv(B, seed=0, num_threads=threads)
            v.reset()
            v.step(v.sample_actions(0))
            if threads == 1:
                v.step_tables(np.arange(2), v.sample_actions(0)[:2])
                v.observe([0], [1])
                v.state()
                v.reset_from_decks(np.tile(np.arange(NUM_CARDS), (B, 1)), np.zeros(B, dtype=np.int64))
                v.new_episodes([0])
                v.start_episode(0, 1)
                v.step_one(0, int(v.sample_actions(0)[0]))
                v.observe_seat(0, 1, np.zeros(v.obs_dim, dtype=np.float32))
    seconds = time.perf_counter() - t0
    if log is not None:
        log(f"compiled in {seconds:.0f} s")
    return seconds
