"""Mus as an RLlib ``MultiAgentEnv`` (new API stack), for self-play with action masking.

Imported on demand only (``from mus_env.adapters.rllib import MusMultiAgentEnv``): it imports ray. The env is a thin
adapter over :class:`~mus_env.game.MusGame` (the reference engine, as behind ``mus_v0``):

==================  ==========================================================================================
item                specification
==================  ==========================================================================================
creation            ``MusMultiAgentEnv(env_config)``; ``env_config`` holds any :class:`~mus_env.MusConfig` field
                    (``{"kings": 4, "target": 30}``), or ``"config"`` (a MusConfig or a dict of its fields),
                    ``"reward"`` (``"game"``, default, or ``"stones"``), ``"reward_scale"`` (a factor on every
                    reward, default 1; ``1 / target`` keeps stone rewards near [-1, 1] for PPO's clipped value
                    loss) and ``"max_decisions"`` (None, default, or a cap after which every agent is
                    truncated). Anything else is a ``ValueError`` naming it. RLlib:
                    ``config.environment(MusMultiAgentEnv, env_config={...})``
agents              ``seat_0 .. seat_3`` at the absolute seats; team 0 = ``seat_0``, ``seat_2``
action space        ``Discrete(NUM_ACTIONS)`` per agent (the ids of RULES.md §9.1)
observation         per agent ``Dict({"observations": Box(0, high, (OBS_DIM,), float32), "action_mask":
                    Box(0, 1, (NUM_ACTIONS,), float32)})``: the keys and the float mask that RLlib's
                    action-masking RLModules read (``ActionMaskingTorchRLModule``). Only the agent to act gets
                    an observation at each step (its mask has at least one 1)
rewards             ``reward="game"``: +1 to both players of the winning team, -1 to the others, at the end.
                    ``reward="stones"``: after every finished hand, its team's stones minus the other team's
                    (``HandRecord.stone_difference``, as in ``mus_v0``). In Mus most stones are scored on
                    another player's step, so the env keeps each agent's reward until that agent's next
                    observation (or the end) and hands it over then: summed over an episode, every agent
                    receives exactly its team's return, whoever acted when it was scored
episode end         when the game (or match) is over: every agent gets a last observation (mask all zeros), its
                    remaining reward and ``terminated=True``; with ``max_decisions`` reached first, the same
                    with ``truncated=True``
illegal actions     :class:`~mus_env.game.IllegalActionError` (a ``ValueError``) naming the action, seat and
                    the legal ones; nothing changes. An action for an agent that is not to act is a
                    ``ValueError``. RLlib's env checker steps a random (usually illegal) action, so RLlib
                    configs using this env set ``disable_env_checking=True`` (``tests/test_rllib.py`` runs
                    the API checks of its own)
seeding             ``reset(seed=s)`` plays ``MusGame(config, seed=s)`` (the deals of the engine and of
                    ``mus_v0`` for the same seed); ``reset()`` draws the next game seed from the env's
                    generator, seeded by the last seeded reset, so an RLlib run with ``debugging(seed=...)``
                    is reproducible. ``reset(options={"deck": ..., "mano": ..., "scores": ...})`` rigs the
                    first deal as in ``mus_v0``
==================  ==========================================================================================

Policy mapping helpers for self-play: :func:`shared_policy_mapping` (all seats -> ``"shared"``) and
:func:`team_policy_mapping` (``"team_0"`` / ``"team_1"``).

Example:
    >>> from mus_env.adapters.rllib import MusMultiAgentEnv
    >>> env = MusMultiAgentEnv({"reward": "stones", "first_mano": 0})
    >>> obs, infos = env.reset(seed=0)
    >>> list(obs), sorted(obs["seat_0"])
    (['seat_0'], ['action_mask', 'observations'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from ..actions import NUM_ACTIONS
from ..config import MusConfig, playable_config
from ..game import MusGame
from ..interfaces import (
    REWARD_MODES,
    deal_game,
    deal_options,
    make_config,
    observation_box,
    table_text,
    team_rewards,
)

__all__ = ["MusMultiAgentEnv", "AGENT_IDS", "ENV_KEYS", "env_creator", "register_env", "shared_policy_mapping",
           "team_policy_mapping", "parse_env_config", "SHARED_POLICY", "TEAM_POLICIES"]

#: Agent ids by absolute seat.
AGENT_IDS = tuple(f"seat_{s}" for s in range(4))
#: The ``env_config`` keys other than MusConfig fields.
ENV_KEYS = ("config", "reward", "reward_scale", "max_decisions")
#: Module id of the one policy all seats share (:func:`shared_policy_mapping`).
SHARED_POLICY = "shared"
#: Module ids of the two team policies (:func:`team_policy_mapping`), by team.
TEAM_POLICIES = ("team_0", "team_1")

_SEAT_OF = {a: s for s, a in enumerate(AGENT_IDS)}


def parse_env_config(env_config: Mapping[str, Any] | None) -> tuple[MusConfig, str, float, int | None]:
    """``(MusConfig, reward mode, reward scale, max_decisions)`` from an RLlib ``env_config``.

    Raises:
        ValueError: a key that is neither a MusConfig field nor one of :data:`ENV_KEYS`, a bad reward mode,
            reward scale or ``max_decisions``, or a bad MusConfig value (the message names it).
    """
    env_config = dict(env_config or {})
    fields = [f.name for f in dataclasses.fields(MusConfig)]
    unknown = sorted(set(env_config) - set(fields) - set(ENV_KEYS), key=str)
    if unknown:
        raise ValueError(f"env_config has unknown key(s) {unknown}; accepted: {list(ENV_KEYS)} and the MusConfig "
                         f"fields {fields}")
    reward = env_config.pop("reward", "game")
    if not isinstance(reward, str) or reward not in REWARD_MODES:
        raise ValueError(f"env_config['reward'] must be one of {', '.join(map(repr, REWARD_MODES))}; got {reward!r}")
    scale = env_config.pop("reward_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
        raise ValueError(f"env_config['reward_scale'] must be a finite number > 0, got {scale!r}")
    max_decisions = env_config.pop("max_decisions", None)
    if max_decisions is not None and (isinstance(max_decisions, bool) or not isinstance(max_decisions, int)
                                      or max_decisions < 1):
        raise ValueError(f"env_config['max_decisions'] must be None or an int >= 1, got {max_decisions!r}")
    config = env_config.pop("config", None)
    cfg = make_config(config, env_config)
    playable_config(cfg)                     # signals: not yet (the spaces are 31 actions wide)
    MusGame(cfg, seed=0)                     # a config the engine refuses fails here, not at the first reset
    return cfg, reward, float(scale), max_decisions


class MusMultiAgentEnv(MultiAgentEnv):
    """Mus for RLlib: four agents, one acting at a time, rewards handed over at each agent's next turn.

    See the module docstring for the specification.

    Args:
        env_config: MusConfig fields and/or ``config``, ``reward``, ``max_decisions`` (RLlib passes its
            ``EnvContext``, a dict).

    Raises:
        ValueError: an unknown key or a bad value (the message names it).

    Attributes:
        game: the :class:`MusGame` being played (None before the first ``reset``).
        config: the ruleset; reward_mode: ``"game"`` or ``"stones"``; reward_scale: the factor on every reward;
        max_decisions: the truncation cap.
    """

    metadata = {"render_modes": [], "name": "mus_rllib_v0"}

    def __init__(self, env_config: Mapping[str, Any] | None = None) -> None:
        self.config, self.reward_mode, self.reward_scale, self.max_decisions = parse_env_config(env_config)
        self.possible_agents = list(AGENT_IDS)
        self.agents = list(AGENT_IDS)
        super().__init__()
        box = observation_box(self.config)
        space = spaces.Dict({
            "observations": spaces.Box(box.low, box.high, dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), dtype=np.float32),
        })
        self.observation_spaces = dict.fromkeys(AGENT_IDS, space)
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENT_IDS}
        self.observation_space = space           # the same for every agent (old-API-stack attributes)
        self.action_space = self.action_spaces[AGENT_IDS[0]]
        self.game: MusGame | None = None
        self._rng: np.random.Generator | None = None
        self._rng_seed: int | None = None
        self._pending = [0.0, 0.0, 0.0, 0.0]      # rewards earned by each seat and not yet handed over
        self._decisions = 0
        self._done = True

    # --------------------------------------------------------------------------------------------------------
    @property
    def np_random(self) -> np.random.Generator:
        """Draws the game seed of every ``reset()`` without a seed; seeded by the last ``reset(seed=s)``."""
        if self._rng is None:
            self._rng, self._rng_seed = seeding.np_random(self._rng_seed)
        return self._rng

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, dict[str, npt.NDArray[np.float32]]], dict[str, dict[str, Any]]]:
        """Start a game: ``MusGame(config, seed)`` (or a rigged first deal from ``options``).

        Returns:
            ``({agent: observation}, {agent: {}})`` for the one agent to act.

        Raises:
            ValueError: a bad seed, options, deck, mano or scores (the env is left as it was).
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
        deal = deal_options(options)
        game_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**63 - 1))
        game = deal_game(self.config, deal, game_seed)
        if seed is not None:
            self._rng, self._rng_seed = None, int(seed)
        self.game = game
        self.agents = list(AGENT_IDS)
        self._pending = [0.0, 0.0, 0.0, 0.0]
        self._decisions = 0
        self._done = False
        agent = AGENT_IDS[game.current_player]
        return {agent: self._observe(game.current_player)}, {agent: {}}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Apply the acting agent's action; see the module docstring for what comes back.

        Returns:
            ``(observations, rewards, terminateds, truncateds, infos)``, RLlib's multi-agent dicts
            (``"__all__"`` in the terminated/truncated ones).

        Raises:
            IllegalActionError: the action is not legal now (nothing changes).
            ValueError: the dict is not ``{acting agent: action id}``, or the episode is over.
            RuntimeError: ``reset`` was never called.
        """
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise ValueError("the episode is over; call reset()")
        seat = game.current_player
        agent = AGENT_IDS[seat]
        if not isinstance(action_dict, Mapping) or list(action_dict) != [agent]:
            got = sorted(map(str, action_dict)) if isinstance(action_dict, Mapping) else type(action_dict).__name__
            raise ValueError(f"step needs {{{agent!r}: action}} for the one agent to act ({agent}), got {got}")
        action = action_dict[agent]
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"the action of {agent} must be an int action id, got {action!r}")
        hands_before = len(game.hand_log)
        game.step(int(action))                    # IllegalActionError with nothing changed
        self._decisions += 1
        if len(game.hand_log) != hands_before:
            r = team_rewards(game, hands_before, self.reward_mode) * self.reward_scale
            if r:
                for s in range(4):
                    self._pending[s] += r if s % 2 == 0 else -r
        over = game.is_over
        cut = not over and self.max_decisions is not None and self._decisions >= self.max_decisions
        if over or cut:
            self._done = True
            self.agents = []
            obs = {a: self._observe(s) for s, a in enumerate(AGENT_IDS)}
            rewards = {a: self._pending[s] for s, a in enumerate(AGENT_IDS)}
            self._pending = [0.0, 0.0, 0.0, 0.0]
            terminateds = {a: over for a in AGENT_IDS} | {"__all__": over}
            truncateds = {a: cut for a in AGENT_IDS} | {"__all__": cut}
            info = {"scores": game.scores, "winner": game.winner, "decisions": self._decisions}
            return obs, rewards, terminateds, truncateds, {a: dict(info) for a in AGENT_IDS}
        nxt = game.current_player
        nxt_agent = AGENT_IDS[nxt]
        reward = self._pending[nxt]
        self._pending[nxt] = 0.0
        return ({nxt_agent: self._observe(nxt)}, {nxt_agent: reward}, {"__all__": False}, {"__all__": False},
                {nxt_agent: {}})

    def _observe(self, seat: int) -> dict[str, npt.NDArray[np.float32]]:
        game = self.game
        mask = (game.legal_action_mask() if game.current_player == seat else np.zeros(NUM_ACTIONS, np.int8))
        return {"observations": game.observe(seat), "action_mask": mask.astype(np.float32)}

    @property
    def pending_rewards(self) -> tuple[float, float, float, float]:
        """Rewards earned by each seat (0..3) and not handed over yet (for tests and debugging)."""
        return tuple(self._pending)

    def render(self) -> str | None:
        """The table as text (all hands hidden), or None before the first reset."""
        if self.game is None:
            return None
        return table_text(self.game, None, AGENT_IDS)


def env_creator(env_config: Mapping[str, Any] | None = None) -> MusMultiAgentEnv:
    """``MusMultiAgentEnv(env_config)``: the creator to register with ``ray.tune.register_env``."""
    return MusMultiAgentEnv(env_config)


def register_env(name: str = "mus") -> str:
    """Register :func:`env_creator` under ``name`` in Ray's env registry (``config.environment(name)``)."""
    from ray.tune.registry import register_env as _register
    _register(name, env_creator)
    return name


def shared_policy_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib ``policy_mapping_fn``: every seat plays the one shared policy (:data:`SHARED_POLICY`)."""
    if agent_id not in _SEAT_OF:
        raise ValueError(f"unknown agent id {agent_id!r}; agents are {list(AGENT_IDS)}")
    return SHARED_POLICY


def team_policy_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib ``policy_mapping_fn``: one policy per team (``team_0`` for seats 0 and 2, ``team_1`` for 1 and 3)."""
    try:
        return TEAM_POLICIES[_SEAT_OF[agent_id] % 2]
    except KeyError:
        raise ValueError(f"unknown agent id {agent_id!r}; agents are {list(AGENT_IDS)}") from None

