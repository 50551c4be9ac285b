"""Gymnasium single-agent view of Mus: one learner seat (or a team) against fixed agents.

:class:`MusGymEnv` plays one episode at a time; the learner decides at its seats, every other seat is played
by a given agent, and ``step`` returns when a learner seat is to act again or the episode is over. It works with
any Gymnasium learner, and with sb3-contrib's ``MaskablePPO`` unchanged through :meth:`MusGymEnv.action_masks`.
It plays the PettingZoo env's engine (:class:`mus_env.one_table.OneTable`: one table of the batched engine's compiled
kernel, which plays ``MusGame``'s rules, stepped a decision at a time); :attr:`MusGymEnv.game` is the same game as a
:class:`~mus_env.game.MusGame`, replayed from the moves when read. For many games at once, SB3's ``VecEnv`` over
the batched engine is :class:`mus_env.adapters.sb3.MusVecEnv`.

==================  ==========================================================================================
item                specification
==================  ==========================================================================================
creation            ``MusGymEnv(config, learner_seats=(0,), opponents=None, reward="game")`` or
                    ``gymnasium.make("mus_env/Mus-v0", ...)`` (registered when this module is imported)
learner             ``learner_seats``: one seat, or both seats of a team sharing one policy (``(0, 2)``)
other seats         ``opponents``: None (uniform random legal actions), one agent for every other seat, or a
                    dict ``{seat: agent}`` (missing seats play uniform random). An agent is a callable
                    ``(obs, mask, rng) -> action`` or an object with ``.act(obs, mask, rng)`` (``agents.Agent``);
                    ``rng`` is the env's :attr:`np_random`, so a seeded reset replays the whole episode. An agent
                    that plays by game (``wants_rows``, ``agents.team``) gets ``act_rows(obs[None], mask[None],
                    rng, env.table_rows())`` (:meth:`MusGame.table_rows`: the game's identity)
observation         ``Box(0, high, (OBS_DIM,), float32)``: the acting learner seat's private view (the same vector
                    and bounds as ``mus_v0``); ``info["action_mask"]`` is the ``(NUM_ACTIONS,)`` int8 mask and
                    ``info["seat"]`` the learner seat it belongs to
action space        ``Discrete(NUM_ACTIONS)`` (RULES.md §9.1); 47 with signals on (the sign tokens,
                    :mod:`mus_env.signals`)
reward              per learner decision: what the learner's team earned since its previous decision (for the
                    first one: since the deal), in the ``reward`` mode of ``mus_v0`` (``"game"``: +1/-1 at the
                    end; ``"stones"``: own minus other team's stones of every hand finished meanwhile), so the
                    rewards of an episode add up to the team's return
episode end         ``terminated`` when the engine's episode is over; never truncated. An episode in which the
                    learner would never act (the other seats end the game first, e.g. an accepted órdago before the
                    learner speaks) is skipped at ``reset``: the next game seed is drawn and dealt instead
illegal actions     ``illegal_action="raise"`` (default): :class:`~mus_env.game.IllegalActionError`, nothing changed
                    (the engine refuses an action before it changes anything, ``MusGame.step``'s contract).
                    An opponent agent's illegal action (or error) is raised naming its seat; the engine refused
                    that action, so the game stands at that seat's decision, every earlier move (the learner's
                    included) applied and nothing half-applied, and the episode is stopped: ``step`` asks for a
                    ``reset`` (the wrapper keeps no copy of the game to undo anything with).
                    ``illegal_action="terminate"``: the episode ends with ``illegal_reward`` (default -1) and
                    ``info["illegal_action"] = True``, like PettingZoo's ``TerminateIllegalWrapper``; use it for
                    ``gymnasium.utils.env_checker.check_env``, which steps ``action_space.sample()`` unmasked
seeding             ``reset(seed=s)`` deals ``MusGame(config, seed=s)`` first; later games and the opponents' ``rng``
                    come from ``np_random``; the constructor's ``seed`` is used by the first unseeded ``reset``
==================  ==========================================================================================

Examples:
    >>> from mus_env.wrappers import MusGymEnv
    >>> env = MusGymEnv(learner_seats=(0, 2), first_mano=0)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape == env.observation_space.shape, info["seat"], info["action_mask"][:2].tolist()
    (True, 0, [1, 1])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from .actions import num_actions
from .config import MusConfig
from .game import IllegalActionError, MusGame
from .interfaces import (
    REWARD_MODES,
    check_learner_seats,
    check_playable,
    check_reward,
    chosen_agents,
    make_config,
    observation_box,
    render_table,
)
from .one_table import OneTable
from .rows import TableRows

__all__ = ["MusGymEnv", "ENV_ID", "ILLEGAL_ACTION_MODES", "REWARD_MODES", "uniform_random_policy", "Policy"]

#: Gymnasium id (``gymnasium.make(ENV_ID)`` after ``import mus_env.wrappers``).
ENV_ID = "mus_env/Mus-v0"
#: ``reset`` gives up after this many consecutive games in which the learner would never act.
_MAX_SKIPS = 1000
#: Accepted values of ``illegal_action=``.
ILLEGAL_ACTION_MODES = ("raise", "terminate")

#: An agent as a plain callable: ``(observation (OBS_DIM,) float32, mask (NUM_ACTIONS,) int8, rng) -> action id``.
Policy = Callable[[npt.NDArray[np.float32], npt.NDArray[np.int8], np.random.Generator], int]


def uniform_random_policy(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], rng: np.random.Generator) -> int:
    """A uniformly random legal action (the default for every non-learner seat)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def _as_policy(agent: Any, seat: int, env: MusGymEnv) -> Policy:
    if getattr(agent, "wants_rows", False):           # an agent that plays by game: it gets the game's identity
        def by_game(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], rng: np.random.Generator) -> int:
            return int(agent.act_rows(obs[None], mask[None], rng, env.table_rows())[0])

        return by_game
    act = getattr(agent, "act", None)
    if callable(act):
        return act
    if callable(agent):
        return agent
    raise ValueError(f"the agent for seat {seat} must be a callable (obs, mask, rng) -> action or an object with "
                     f".act(obs, mask, rng); got {agent!r}")



class MusGymEnv(gymnasium.Env):
    """Mus for one learner (a seat, or a team sharing one policy) against fixed agents (see the module docstring).

    Args:
        config: the ruleset (a :class:`MusConfig`, a dict of its fields, or None for RULES.md §1.1).
        learner_seats: the learner's seat(s), all in one team: ``(0,)``, ``(0, 2)``, ``1`` ...
        opponents: None, one agent for all other seats, or ``{seat: agent}`` (missing seats random).
        reward: ``"game"`` or ``"stones"`` (as in :mod:`mus_env.mus_v0`).
        render_mode: None, ``"ansi"`` or ``"human"``; another mode (SB3's ``make_vec_env`` asks for
            ``"rgb_array"``) turns rendering off with a warning, as ``gymnasium.make`` does.
        seed: seed of the first ``reset()`` called without one.
        illegal_action: ``"raise"`` or ``"terminate"`` (see the module docstring).
        illegal_reward: the learner's reward when ``illegal_action="terminate"`` ends an episode.
        **config_kwargs: MusConfig fields overriding ``config``.

    Raises:
        ValueError: any argument out of its accepted values (the message names it and the accepted values).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, config: MusConfig | Mapping[str, Any] | None = None, learner_seats: Any = (0,),
                 opponents: Any = None, reward: str = "game", render_mode: str | None = None,
                 seed: int | None = None, illegal_action: str = "raise", illegal_reward: float = -1.0,
                 **config_kwargs: Any) -> None:
        self.config = make_config(config, config_kwargs)
        check_playable(self.config)
        self.reward_mode = check_reward(reward)
        self.learner_seats = check_learner_seats(learner_seats)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            # Like gymnasium.make, warn rather than fail: SB3's make_vec_env asks every env for "rgb_array".
            gymnasium.logger.warn(f"render_mode {render_mode!r} is not supported (only "
                                  f"{self.metadata['render_modes']}); rendering is off")
            render_mode = None
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {', '.join(map(repr, ILLEGAL_ACTION_MODES))}; "
                             f"got {illegal_action!r}")
        if isinstance(illegal_reward, bool) or not isinstance(illegal_reward, (int, float)):
            raise ValueError(f"illegal_reward must be a number, got {illegal_reward!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._policies = self._resolve_opponents(opponents)
        self.observation_space = observation_box(self.config)
        self.action_space = spaces.Discrete(num_actions(self.config))
        self._table = OneTable(self.config, self.reward_mode)      # the compiled table and its MusGame replay
        self._sign = 1.0 if self.learner_seats[0] % 2 == 0 else -1.0   # the table's rewards are team 0's
        self._learner_set = frozenset(self.learner_seats)
        self._seat = self.learner_seats[0]      # learner seat that acts next (or acted last, once over)
        self._done = True
        self._pending_reward = 0.0
        self._initial_seed = None if seed is None else int(seed)
        #: Episodes skipped by ``reset`` because the learner would never have acted in them.
        self.skipped_games = 0

    def _resolve_opponents(self, opponents: Any) -> list[Policy | None]:
        """One policy per seat (None for learner seats and for the built-in uniform random agent)."""
        others = [s for s in range(4) if s not in self.learner_seats]
        chosen = chosen_agents(opponents, others)
        policies: list[Policy | None] = [None] * 4
        for s in others:
            agent = chosen.get(s)
            if agent is not None and agent is not uniform_random_policy:
                policies[s] = _as_policy(agent, s, self)
        return policies

    # --------------------------------------------------------------------------------------------------------
    @property
    def game(self) -> MusGame | None:
        """The game being played as a :class:`~mus_env.game.MusGame` (None before the first ``reset``): the table's
        game (:attr:`mus_env.one_table.OneTable.game`), replayed from the episode's moves when first read in an
        episode and stepped with the env from then on, so a reference kept across steps stays the live game. Read it,
        do not step it: stepping it does not step the env."""
        return self._table.game

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Deal a new episode and play the other seats until a learner seat is to act (``options`` is unused)."""
        if seed is None and self._initial_seed is not None:
            seed, self._initial_seed = self._initial_seed, None
        super().reset(seed=seed)
        game_seed = int(seed) if seed is not None else self._draw_seed()
        table = self._table
        for _ in range(_MAX_SKIPS):
            table.start(game_seed)              # the game of MusGame(config, seed=game_seed)
            # Stones scored before the learner's first decision are paid with its first step's reward.
            self._done = True                   # until the other seats have played: an agent may fail
            self._pending_reward = self._play_others()
            self._done = False
            if not table.over:
                break
            self.skipped_games += 1         # the learner never acted: not an episode for it
            game_seed = self._draw_seed()
        else:
            self._done = True
            raise RuntimeError(f"the other seats ended {_MAX_SKIPS} games in a row before a learner seat "
                               f"{self.learner_seats} could act; check the opponents and the config")
        self._seat = table.acting
        obs = self._observe_learner()
        if self.render_mode == "human":
            self.render()
        return obs, self._info()

    def _draw_seed(self) -> int:
        return int(self.np_random.integers(0, 2**63 - 1))

    def _observe_learner(self) -> npt.NDArray[np.float32]:
        """The learner seat's view (the caller's copy)."""
        table = self._table
        if table.acting == self._seat:
            return table.obs[0].copy()
        obs = np.empty(table.obs.shape[1], dtype=np.float32)
        table.observe_into(self._seat, obs)        # the last learner seat's view of the final position
        return obs

    def step(self, action: int) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the other seats until a learner seat acts or the episode ends.

        Raises:
            IllegalActionError: with ``illegal_action="raise"``, the action is not legal now (nothing changed);
                also when an opponent agent returns an illegal action (the message names its seat): the engine
                refused it with nothing changed, so :attr:`game` stands at that seat's decision with the
                learner's action and the moves before it applied; the episode is stopped (``reset``). Any other
                error of an opponent agent stops the episode the same way.
            ValueError: the episode is over or stopped (call ``reset``).
            RuntimeError: ``reset`` was never called.
        """
        table = self._table
        if not table.started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise ValueError("the episode is over (or stopped by an opponent's error); call reset()")
        if isinstance(action, np.ndarray) and action.size == 1:
            action = action.item()
        try:
            table.play(action)                  # refused with nothing changed, or applied whole
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            return self._observe_learner(), self.illegal_reward, True, False, info
        try:
            reward = self._pending_reward + self._sign * table.team0_reward + self._play_others()
        except BaseException as e:
            self._done = True                   # stopped at the failing seat's decision: reset() starts anew
            if isinstance(e, IllegalActionError):
                raise IllegalActionError(f"{e} (after the learner's action {action!r}; the episode is stopped at "
                                         "that seat's decision: call reset())") from None
            raise
        self._pending_reward = 0.0
        terminated = table.over
        if terminated:
            self._done = True
        else:
            self._seat = table.acting
        obs = self._observe_learner()
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, False, self._info()

    def _play_others(self) -> float:
        """Let the non-learner seats act until a learner seat is to act or the game is over; their rewards."""
        table, learners, policies = self._table, self._learner_set, self._policies
        rng = self.np_random
        total = 0.0
        while table.acting >= 0 and table.acting not in learners:
            seat = table.acting
            policy = policies[seat]
            if policy is None:
                legal = np.flatnonzero(table.mask[0])
                table.play(int(legal[int(rng.integers(len(legal)))]))
            else:
                action = policy(table.obs[0].copy(), table.mask[0].copy(), rng)     # the agent's own copies
                if isinstance(action, np.ndarray) and action.size == 1:
                    action = action.item()
                try:
                    table.play(action)
                except IllegalActionError as e:
                    raise IllegalActionError(f"the agent at seat {seat} ({policy!r}) chose an illegal action: {e}") \
                        from None
            total += table.team0_reward
        return self._sign * total

    def table_rows(self) -> TableRows:
        """The current decision's identity for the agents that play by game (``game.table_rows()``, read from the
        table without the replay: :meth:`mus_env.one_table.OneTable.table_rows`).

        Raises:
            RuntimeError: ``reset`` was never called.
            ValueError: the game is over (nobody decides).
        """
        return self._table.table_rows()

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask(), "seat": self._seat}

    def _mask(self) -> npt.NDArray[np.int8]:
        if self._done or not self._table.started:
            return np.zeros(self.action_space.n, dtype=np.int8)
        return self._table.mask[0].copy()           # an episode going on stands at a learner seat's decision

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """``(NUM_ACTIONS,)`` bool: the legal actions of the acting learner seat (all False once over).

        The method sb3-contrib's ``MaskablePPO`` looks for.
        """
        return self._mask().astype(bool)

    def render(self) -> str | None:
        """The table as the acting learner seat sees it (``"ansi"``: returned; ``"human"``: printed)."""
        seat = None if not self._table.started or self._table.over else self._seat
        return render_table(self.game, seat, self.render_mode)

    def close(self) -> None:
        """Nothing to release."""


def _register() -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:MusGymEnv")


_register()
