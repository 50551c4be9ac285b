"""PettingZoo AEC environment for Mus: ``raw_env`` and ``env`` (the rules are in RULES.md).

Four agents ``player_0 .. player_3`` sit at the absolute seats 0..3; team 0 is ``player_0`` and ``player_2``,
team 1 is ``player_1`` and ``player_3``. The env plays one table of the batched engine's compiled kernel
(:class:`~mus_env.one_table.OneTable`: a one-table :class:`~mus_env.vector.VectorMusEnv` stepped a decision at a
time), which plays exactly ``MusGame``'s rules (the differential tests hold them equal): the engine deals, applies
the forced declarations and scores; this module maps seats to agents, builds the observation dict and hands out
rewards.
:attr:`raw_env.game` is the same game as a :class:`~mus_env.game.MusGame`, replayed from the actions when read.

==================  ==========================================================================================
item                specification
==================  ==========================================================================================
creation            ``mus_v0.env(config=MusConfig(...), reward="game", render_mode="ansi")``, or any MusConfig
                    field as a keyword: ``mus_v0.env(kings=4, target=30)``
agents              ``player_0 .. player_3`` (absolute seats; the mano rotates every hand)
action space        ``Discrete(NUM_ACTIONS)``: the 31 ids of RULES.md §9.1 (:mod:`mus_env.actions`); with
                    ``signals="truthful"`` or ``"free"`` 47 (the 16 sign tokens 31..46, :mod:`mus_env.signals`)
observation         ``{"observation": Box(0, high, (OBS_DIM,), float32), "action_mask": Box(0, 1,
                    (NUM_ACTIONS,), int8)}``; the vector is the seat's private view (:mod:`mus_env.observation`),
                    ``high`` is per element (:func:`observation_box`; ``inf`` for stakes and stones, which
                    have no upper limit, RULES.md §5.1). The mask is all zeros for a seat that is not acting.
                    With signals on the vector has the signal block appended (``observation.obs_dim(config)``).
state               ``state()``: ``(STATE_DIM,)`` float32 full-information vector (all four hands), with
                    ``state_space``, for centralised critics only
rewards             ``reward="game"`` (default): +1 to both players of the winning team and -1 to the other two
                    when the episode ends (one game by default; the whole vaca/match when the config asks for
                    more). ``reward="stones"``: after every finished hand each player gets its team's stones in
                    that hand minus the other team's (:func:`hand_stone_difference`; a hand that ends the game
                    with an accepted órdago credits the winners with the stones they lacked to reach the target).
                    Always zero-sum between the teams and equal within a team.
episode end         all four agents are terminated when the engine says the episode is over (no truncation)
illegal actions     ``raw_env.step`` raises :class:`~mus_env.game.IllegalActionError` and changes nothing;
                    ``env()`` adds PettingZoo's ``TerminateIllegalWrapper`` (a legal id that is illegal now: the
                    offender gets -1, everybody is terminated), :class:`ActionSpaceWrapper` (in place of
                    PettingZoo's ``AssertOutOfBoundsWrapper``: an id outside the action space, or anything but an
                    int, raises ``raw_env``'s ``IllegalActionError``, also under ``python -O``) and
                    ``OrderEnforcingWrapper``
seeding             ``reset(seed=s)`` plays the game of ``MusGame(config, seed=s)`` (same deals); ``reset()``
                    draws the next game seed from the env's own generator, seeded by the last seeded reset
rigged deals        ``reset(seed=s, options={"deck": ids, "mano": m, "scores": (a, b)})`` deals the first hand
                    with ``MusGame.from_deck`` (duplicate tournaments, tests)
speed               a step is one compiled call, which also writes the next player's observation and mask;
                    another seat's observation is encoded lazily, once per state and seat, by the same writer
render modes        ``"ansi"`` (returns the table as text), ``"human"`` (prints it, also after every step)
==================  ==========================================================================================

Registered as ``"mus_env/mus_v0"`` in PettingZoo's registry when the installed PettingZoo has one
(``pettingzoo.make("aec", "mus_env/mus_v0")`` after ``import mus_env.mus_v0``).

Version history:
    * v0: initial release (mus-env 0.1.0); unchanged in 0.2.0.

Example:
    >>> from mus_env import mus_v0
    >>> e = mus_v0.env(first_mano=0)
    >>> e.reset(seed=3)
    >>> e.agent_selection
    'player_0'
    >>> obs, reward, terminated, truncated, info = e.last()
    >>> obs["action_mask"].nonzero()[0].tolist()      # MUS, NO_MUS
    [0, 1]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import BaseWrapper
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable

from .actions import num_actions
from .config import MusConfig
from .game import IllegalActionError, MusGame
from .interfaces import (
    AGENTS,
    REWARD_MODES,
    check_playable,
    check_reward,
    deal_game,
    deal_options,
    hand_stone_difference,
    make_config,
    observation_box,
    render_table,
    state_box,
    table_text,
    team_rewards,
)
from .one_table import OneTable
from .rows import TableRows
from .shuffle import check_seed

__all__ = [
    "env", "raw_env", "ActionSpaceWrapper", "REWARD_MODES", "AGENTS", "ENV_ID", "observation_box", "state_box",
    "hand_stone_difference", "team_rewards", "table_text", "make_config", "render_table", "deal_game",
]

#: Id in PettingZoo's registry (PettingZoo normalises it to ``mus_env/mus-v0``).
ENV_ID = "mus_env/mus_v0"
_NORMALIZED_ID = "mus_env/mus-v0"


# ------------------------------------------------------------------------------------------------------------
def env(**kwargs: Any) -> AECEnv:
    """``raw_env(**kwargs)`` with the standard wrappers of PettingZoo's classic envs.

    ``TerminateIllegalWrapper(illegal_reward=-1)`` ends the game on an action id that is illegal now (the
    offender gets -1, nobody else is paid); :class:`ActionSpaceWrapper` refuses an id outside
    ``Discrete(num_actions)`` or a non-int with ``raw_env``'s :class:`~mus_env.game.IllegalActionError` (where
    PettingZoo's ``AssertOutOfBoundsWrapper`` gives a bare ``AssertionError``); ``OrderEnforcingWrapper`` checks
    that ``reset`` comes first.
    """
    e = raw_env(**kwargs)
    e = TerminateIllegalWrapper(e, illegal_reward=-1)
    e = ActionSpaceWrapper(e)
    e = OrderEnforcingWrapper(e)
    return e


#: The raw env's attributes that PettingZoo's loop reads at every decision (``agent_iter``, ``last``, ``step``).
_PER_STEP = ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos")


def _read_through(cls: type, before_reset: bool = False) -> type:
    """Give a wrapper class the raw env's per-step attributes (:data:`_PER_STEP`) as read-only properties that read
    the raw env (``self._raw``) at once; with ``before_reset`` they raise ``AttributeError`` until ``reset``, as
    ``OrderEnforcingWrapper.__getattr__`` does. PettingZoo's ``BaseWrapper.__getattr__`` finds them by walking the
    wrappers, one ``__getattr__`` per layer and read (about 30 reads a decision): most of ``env()``'s cost."""
    for name in _PER_STEP:
        if before_reset:
            def read(self: Any, name: str = name) -> Any:
                if not self._has_reset:
                    raise AttributeError(f"{name} cannot be accessed before reset")
                return getattr(self._raw, name)
        else:
            def read(self: Any, name: str = name) -> Any:
                return getattr(self._raw, name)
        setattr(cls, name, property(read, doc=f"The raw env's ``{name}``."))
    return cls


@_read_through
class TerminateIllegalWrapper(wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper``, unchanged in behaviour, reading the raw env's per-step attributes
    directly; ``observe`` and a legal ``step`` take a short path (the same checks, fewer Python calls)."""

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward=illegal_reward)
        self._raw = env.unwrapped

    def observe(self, agent: str) -> dict[str, npt.NDArray] | None:
        """The wrapped env's observation; the acting agent's is kept, to check its next action against its mask."""
        obs = self.env.observe(agent)
        raw = self._raw
        if agent == raw.agent_selection:
            self._prev_obs = obs
            infos = raw.infos
            self._prev_info = infos[agent] if agent in infos else {}
        return obs

    def step(self, action: int | None) -> None:
        """PettingZoo's ``step``; when no illegal action has ended the game and the acting agent's observation is
        kept, a done agent's step, or an action its kept mask allows, goes to the wrapped env at once (what
        PettingZoo's checks come to in those cases)."""
        prev = self._prev_obs
        raw = self._raw
        agent = raw.agent_selection
        if prev.__class__ is dict and not self._terminated:
            if raw.terminations[agent] or raw.truncations[agent]:
                self._prev_obs = self._prev_info = None        # a done agent's step: the wrapped env's
                self.env.step(action)
                return
            if action is not None and prev["action_mask"][action]:
                self._prev_obs = self._prev_info = None
                self.env.step(action)
                return
        super().step(action)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``, unchanged (the per-step attributes still raise ``AttributeError``
    before ``reset``), reading the raw env's per-step attributes directly; ``last`` asks the raw env once."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def last(self, observe: bool = True) -> tuple[dict[str, npt.NDArray] | None, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``: the observation through the wrappers (``TerminateIllegalWrapper`` keeps the mask it
        checks the next action against), the reward, flags and info from the raw env."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        raw = self._raw
        _, reward, terminated, truncated, info = raw.last(False)
        return (self.env.observe(raw.agent_selection) if observe else None,      # (reset has been called)
                reward, terminated, truncated, info)

    def step(self, action: int | None) -> None:
        """PettingZoo's ``step`` (errors before ``reset``, a warning once no agent is left), in fewer calls."""
        if self._has_reset and self._raw.agents:
            self._has_updated = True
            self.env.step(action)
            return
        super().step(action)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        """PettingZoo's ``agent_iter`` (an error before ``reset``; an ``AssertionError`` when a turn is taken
        without a ``step`` since the last one), its turns yielded by :meth:`turns`."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Turns(self, max_iter)

    def turns(self, max_iter: int = 2**63) -> Iterator[str]:
        """The agents to act, one per ``step``, as PettingZoo's order-enforcing iterator yields them: up to
        ``max_iter`` of them, until no agent is left."""
        raw = self._raw
        for _ in range(max_iter):
            if not raw.agents:
                return
            if not self._has_updated:
                raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
            self._has_updated = False
            yield raw.agent_selection

    def __str__(self) -> str:
        return str(self.env)


_read_through(OrderEnforcingWrapper, before_reset=True)


class _Turns(AECOrderEnforcingIterable):
    """``agent_iter``'s iterable: each ``iter()`` of it is a new :meth:`OrderEnforcingWrapper.turns`."""

    def __iter__(self) -> Iterator[str]:
        return self.env.turns(self.max_iter)


@_read_through
class ActionSpaceWrapper(BaseWrapper):
    """Refuses an action outside the action space before the wrappers below see it.

    An int (or numpy integer) id in ``0..num_actions - 1`` passes through (legal or not: an illegal one is for
    ``TerminateIllegalWrapper``), and None for an agent that is done (PettingZoo's dead step). Anything else (an
    id out of range, ``38.0``, ``"38"``, ``True``, None for an agent still playing) raises the
    :class:`~mus_env.game.IllegalActionError` (a ``ValueError``) that ``raw_env.step`` raises for it, naming the
    action, the seat, the phase and the legal actions; nothing changes. A non-None action for an agent that is
    done raises ``ValueError``. The check is explicit, so ``python -O`` keeps it.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped
        self._num_actions = env.unwrapped.action_space(AGENTS[0]).n
        self.observe = env.observe                 # passed through as they are (one call fewer per decision)
        self.reset = env.reset

    def step(self, action: int | None) -> None:
        """Check ``action`` as the class docstring says, then step the wrapped env."""
        cls = action.__class__
        if (cls is int or isinstance(action, np.integer)) and 0 <= action < self._num_actions:
            self.env.step(action)                  # in the action space (the fast path)
            return
        raw = self._raw
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            if action is None:
                self.env.step(action)
                return
            raise ValueError(f"{agent} is done (terminated or truncated): its only action is None, got {action!r}")
        raw.game.check_action(action)              # raises raw_env's IllegalActionError, naming the legal ids
        raise IllegalActionError(f"action {action!r} is not in the action space Discrete({self._num_actions})")


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's conventional name)
    """Mus as a PettingZoo AEC environment (see the module docstring for the specification).

    Args:
        config: the ruleset (a :class:`MusConfig`, a dict of its fields, or None for RULES.md §1.1).
        reward: ``"game"`` (+1/-1 per team at the end) or ``"stones"`` (stone difference per hand).
        render_mode: None, ``"ansi"`` or ``"human"``.
        **config_kwargs: MusConfig fields overriding ``config`` (``kings=4, target=30``).

    Raises:
        ValueError: a bad ``reward``, ``render_mode``, config type, field name or field value.

    Attributes:
        game: the game being played as a :class:`MusGame` (None before the first ``reset``). The env steps a
            compiled table, which plays the same game; the first read of ``game`` in an episode replays the
            episode's actions into a ``MusGame``, and from then on each step also steps it (a ``MusGame`` step
            more per decision), so a reference kept across steps stays the live game. Read it, do not step it:
            stepping it does not step the env. :meth:`table_rows` gives the agents' rows without it.
        config: the ruleset.
        reward_mode: ``"game"`` or ``"stones"``.
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "mus_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, config: MusConfig | Mapping[str, Any] | None = None, reward: str = "game",
                 render_mode: str | None = None, **config_kwargs: Any) -> None:
        super().__init__()
        self.reward_mode = check_reward(reward)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.config = make_config(config, config_kwargs)
        check_playable(self.config)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._seat_of = {a: s for s, a in enumerate(AGENTS)}
        obs_box = observation_box(self.config)
        n_actions = num_actions(self.config)
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(obs_box.low, obs_box.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n_actions,), dtype=np.int8),
            }) for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in AGENTS}
        self._zero_mask = np.zeros(n_actions, dtype=np.int8)
        self.state_space = state_box(self.config)
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None
        self._version = 0                      # bumped by every reset and step: keys the observation cache
        self._obs_buf = [np.zeros(len(obs_box.low), dtype=np.float32) for _ in range(4)]   # per seat, private
        self._obs_version = [-1, -1, -1, -1]
        self._table = OneTable(self.config, self.reward_mode)      # the compiled table and its MusGame replay
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self._rewards_set = False              # whether self.rewards holds non-zero values to clear

    # --------------------------------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        """The (cached) Dict space of ``agent``'s observation."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The (cached) ``Discrete(NUM_ACTIONS)`` space of ``agent``."""
        return self.action_spaces[agent]

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator: draws the game seed of every ``reset()`` without a seed.

        Seeded by the last ``reset(seed=s)`` (built on first use, so seeded resets stay cheap), else from
        fresh entropy.
        """
        if self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(self._np_random_seed)
        return self._np_random

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new episode: ``MusGame(config, seed)``; without a seed, one drawn from :attr:`np_random`.

        Args:
            seed: seed of the game (every deal and reshuffle), an int in ``0..2**64 - 1``, and of
                :attr:`np_random` for later resets.
            options: optional rigged first deal (duplicate tournaments, tests): ``{"deck": 40 card ids,
                "mano": seat (default 0), "scores": (team 0, team 1) (default (0, 0))}``, dealt with
                ``MusGame.from_deck`` (the seed then drives reshuffles and later hands). Other keys are ignored
                with a warning.

        Raises:
            ValueError: a bad seed, or a bad deck, mano or scores (the env is left as it was).
        """
        if seed is not None:
            check_seed(seed)                           # an int in 0..2**64 - 1, nothing wraps
        deal = deal_options(options)
        if seed is not None:
            game_seed = int(seed)
        else:
            game_seed = int(self.np_random.integers(0, 2**63 - 1))
        self._table.start(game_seed, deal)        # checks the deal (ValueError, nothing changed)
        if seed is not None:
            self._np_random, self._np_random_seed = None, int(seed)
        self._version += 1
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self._rewards_set = False
        self._skip_agent_selection = None
        self.agent_selection = AGENTS[self._table.acting]

    def step(self, action: int | None) -> None:
        """Apply ``action`` for :attr:`agent_selection` (None for a terminated agent, PettingZoo's dead step).

        Raises:
            IllegalActionError: the action is not legal now (the message names it, the seat and the legal
                actions); nothing is changed.
            ValueError: a terminated agent was given an action other than None, or no agent is left.
            RuntimeError: ``reset`` was never called.
        """
        agent = self.agent_selection if self.agents else None
        table = self._table
        if agent is None:
            if not table.started:
                raise RuntimeError("call reset() before step()")
            raise ValueError("the episode is over and every agent has been removed; call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        table.play(action)                         # IllegalActionError with nothing changed, or played whole
        self._version += 1
        self._cumulative_rewards[agent] = 0.0
        rewards = self.rewards
        if self._rewards_set:                      # rewards are of the last step only
            for a in rewards:
                rewards[a] = 0.0
            self._rewards_set = False
        r = table.team0_reward                     # +-1 when the game ends, or a hand's stones
        if r:
            for a in rewards:
                rewards[a] = r if self._seat_of[a] % 2 == 0 else -r
            self._rewards_set = True
            self._accumulate_rewards()
        seat = table.acting
        if seat < 0:                               # the game is over
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = AGENTS[(self._seat_of[agent] + 1) % 4]
        else:
            self.agent_selection = AGENTS[seat]
        if self.render_mode == "human":
            self.render()

    @property
    def game(self) -> MusGame | None:
        """The game being played as a :class:`MusGame`, replayed up to the env's position and stepped with it from
        then on (see the class's Attributes); None before the first ``reset``."""
        return self._table.game

    def table_rows(self) -> TableRows:
        """The current decision's identity for the agents that play by game: ``game.table_rows()`` (table the
        game's seed modulo 2**63, game 0, the hand number, the seat to act), read from the table without the
        replay.

        Raises:
            RuntimeError: ``reset`` was never called.
            ValueError: the game is over (nobody decides).
        """
        return self._table.table_rows()

    def _was_dead_step(self, action: None) -> None:
        """PettingZoo's ``AECEnv._was_dead_step`` (the step of a done agent: it leaves :attr:`agents` and the
        per-agent dicts; the next done agent, else the agent skipped for them, is selected; rewards are cleared),
        in fewer calls.

        Raises:
            ValueError: ``action`` is not None.
        """
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        terminations, truncations = self.terminations, self.truncations
        del terminations[agent], truncations[agent], self.rewards[agent], self._cumulative_rewards[agent]
        del self.infos[agent]
        agents = self.agents
        agents.remove(agent)
        for other in agents:
            if terminations[other] or truncations[other]:
                if self._skip_agent_selection is None:
                    self._skip_agent_selection = agent
                self.agent_selection = other
                break
        else:
            if self._skip_agent_selection is not None:
                self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None
        self._clear_rewards()
        self._rewards_set = False

    def observe(self, agent: str) -> dict[str, npt.NDArray]:
        """``{"observation": (OBS_DIM,) float32, "action_mask": (NUM_ACTIONS,) int8}`` for ``agent``.

        The mask is all zeros unless ``agent`` is the one to act. Arrays are fresh copies the caller owns;
        the vector is encoded once per state and seat however often it is asked for.
        """
        try:
            seat = self._seat_of[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {agent!r}; agents are {list(AGENTS)}") from None
        table = self._table
        if not table.started:
            raise RuntimeError("call reset() before observe()")
        if table.acting == seat:                   # the step wrote this seat's view and mask
            return {"observation": table.obs[0].copy(), "action_mask": table.mask[0].copy()}
        buf = self._obs_buf[seat]
        if self._obs_version[seat] != self._version:
            table.observe_into(seat, buf)
            self._obs_version[seat] = self._version
        return {"observation": buf.copy(), "action_mask": self._zero_mask.copy()}

    def last(self, observe: bool = True) -> tuple[dict[str, npt.NDArray] | None, float, bool, bool, dict[str, Any]]:
        """``(observation, cumulative reward, terminated, truncated, info)`` of :attr:`agent_selection`.

        Raises:
            RuntimeError: ``reset`` was never called.
        """
        if not self._table.started:
            raise RuntimeError("call reset() before last()")
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent], self.terminations[agent],
                self.truncations[agent], self.infos[agent])

    def state(self) -> npt.NDArray[np.float32]:
        """``(STATE_DIM,)`` float32 full-information vector (all four hands): for centralised critics only."""
        if not self._table.started:
            raise RuntimeError("call reset() before state()")
        return self._table.state()

    def render(self) -> str | None:
        """The table as text (``"ansi"``: returned; ``"human"``: printed), showing the acting seat's cards."""
        acting = self._table.acting
        return render_table(self.game, None if acting < 0 else acting, self.render_mode)

    def close(self) -> None:
        """Nothing to release (text rendering only)."""


def _register() -> None:
    """Add ``mus_env/mus_v0`` to PettingZoo's registry when the installed version has one (1.27+)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # older PettingZoo: no registry
        return
    if ENV_ID not in aec_registry and _NORMALIZED_ID not in aec_registry:
        register("aec", ENV_ID, entry_point=f"{__name__}:env")


_register()
