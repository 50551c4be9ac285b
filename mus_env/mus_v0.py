"""PettingZoo AEC environment for Mus: ``raw_env`` and ``env`` (the rules are in RULES.md).

Four agents ``player_0 .. player_3`` sit at the absolute seats 0..3; team 0 is ``player_0`` and ``player_2``,
team 1 is ``player_1`` and ``player_3``. The env is a thin adapter over :class:`~mus_env.game.MusGame`:
the engine deals, applies the forced declarations and scores; this module maps seats to agents, builds
the observation dict and hands out rewards.

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
                    With signals on the vector has the signal block appended (``signals.obs_dim(config)``).
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
                    ``env()`` adds PettingZoo's ``TerminateIllegalWrapper`` (the offender gets -1, everybody is
                    terminated), ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``
seeding             ``reset(seed=s)`` plays ``MusGame(config, seed=s)`` (same deals as the engine); ``reset()``
                    draws the next game seed from the env's own generator, seeded by the last seeded reset
rigged deals        ``reset(seed=s, options={"deck": ids, "mano": m, "scores": (a, b)})`` deals the first hand
                    with ``MusGame.from_deck`` (duplicate tournaments, tests)
speed               observations are encoded lazily, once per state and seat; ``step`` computes nothing else
                    unless a hand ended
render modes        ``"ansi"`` (returns the table as text), ``"human"`` (prints it, also after every step)
==================  ==========================================================================================

Registered as ``"mus_env/mus_v0"`` in PettingZoo's registry when the installed PettingZoo has one
(``pettingzoo.make("aec", "mus_env/mus_v0")`` after ``import mus_env.mus_v0``).

Version history:
    * v0: initial release (mus-env 0.1.0).

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

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import observation as _observation
from . import signals as _signals
from .actions import ENVIDO_ACTIONS, action_to_string
from .cards import NUM_CARDS, hand_to_string
from .config import MusConfig
from .game import HandRecord, MusGame
from .observation import OBS_DIM, OFFSETS, ROUNDS_SCALE, TARGET_SCALE
from .phases import OUTCOME_NAMES, Outcome
from .tables import LANCE_NAMES

__all__ = [
    "env", "raw_env", "REWARD_MODES", "AGENTS", "ENV_ID", "observation_box", "state_box",
    "hand_stone_difference", "team_rewards", "table_text", "make_config",
]

#: Accepted values of ``reward=``.
REWARD_MODES = ("game", "stones")
#: Agent names by absolute seat.
AGENTS = tuple(f"player_{s}" for s in range(4))
#: Id in PettingZoo's registry (PettingZoo normalises it to ``mus_env/mus-v0``).
ENV_ID = "mus_env/mus_v0"
_NORMALIZED_ID = "mus_env/mus-v0"


# Upper bound of each observation piece, by name (every piece is >= 0): 1 for one-hot and fraction pieces, 4 for
# rank counts, config-derived ones, and no bound (inf) for stakes, raises and stones, which have no upper limit
# (RULES.md §5.1), and for the mus rounds without a cap (§3.1). A piece missing here gets inf (safe);
# tests/test_mus_v0.py asks that every piece be listed, so that a new piece gets its bound.
_ONE_PIECES = frozenset((
    "hand_numbers", "hand_suits", "pares_class", "points", "kings8", "mano", "acting", "phase", "lance",
    "responder", "punto", "pares_decl", "juego_decl", "discards", "prev_shown",
))
_SIGNAL_PIECE_NAMES = frozenset(n for n, _, _ in _signals.SIGNAL_PIECES)   # one-hots, flags and a probability
_FOUR_PIECES = frozenset(("rank_counts", "prev_rank_counts"))         # four cards of one rank at most
_UNBOUNDED_PIECES = frozenset(("mus_rounds", "hand_stones", "scores", "prev_stones"))
# Betting record of each lance slot, named "lance_<name>" (all slots in one piece) or "<slot>_<name>".
_LANCE_ONE = frozenset(("outcome", "ordago", "bettor", "last", "speech", "winner"))
_LANCE_UNBOUNDED = frozenset(("stake", "fallback", "raised"))
_LANCE_PREFIXES = ("lance_",) + tuple(f"{slot}_" for slot in _observation.SLOT_NAMES)


def _lance_piece(name: str) -> str | None:
    """``"stake"`` for ``"lance_stake"`` or ``"grande_stake"``; None for other pieces."""
    for prefix in _LANCE_PREFIXES:
        if name.startswith(prefix) and name[len(prefix):] in _LANCE_ONE | _LANCE_UNBOUNDED:
            return name[len(prefix):]
    return None


def _piece_high(name: str, cfg: MusConfig) -> float | None:
    """Upper bound of observation piece ``name`` under ``cfg``; ``None`` when it has none."""
    if name in _ONE_PIECES or name in _SIGNAL_PIECE_NAMES:
        return 1.0
    if name in _FOUR_PIECES:
        return 4.0
    if name == "target":
        return cfg.target / TARGET_SCALE
    if name == "games_won":
        return float(cfg.juegos_to_win_vaca)
    if name == "vacas_won":
        return float(cfg.vacas_to_win_match)
    if name == "mus_rounds" and cfg.max_mus_rounds is not None:
        return max(cfg.max_mus_rounds, 1) / ROUNDS_SCALE
    if _lance_piece(name) in _LANCE_ONE:
        return 1.0
    return None                                               # stakes, stones, scores, uncapped mus rounds


def _known_piece(name: str) -> bool:
    """Whether ``_piece_high`` bounds ``name`` on purpose (for the test that new pieces get a bound)."""
    return (name in _ONE_PIECES | _FOUR_PIECES | _UNBOUNDED_PIECES | _SIGNAL_PIECE_NAMES
            or name in ("target", "games_won", "vacas_won")
            or _lance_piece(name) is not None)


def observation_box(config: MusConfig) -> spaces.Box:
    """The ``Box(0, high, (OBS_DIM,), float32)`` of one observation vector under ``config``.

    ``high`` is per element: 1 for one-hot and fraction pieces, 4 for rank counts, the scaled target,
    games/vacas to win, and ``inf`` for stakes, raises, stones and scores (no upper limit in the rules).
    """
    n = _signals.obs_dim(config)
    high = np.full(n, np.inf, dtype=np.float32)
    for name, _size, _meaning in _observation.PIECES:
        h = _piece_high(name, config)
        if h is not None:
            high[OFFSETS[name]] = h
    if _signals.signals_on(config):
        for name, _size, _meaning in _signals.SIGNAL_PIECES:
            sl = _signals.SIGNAL_OFFSETS[name]
            high[OBS_DIM + sl.start:OBS_DIM + sl.stop] = _piece_high(name, config)
    return spaces.Box(low=np.zeros(n, dtype=np.float32), high=high, dtype=np.float32)


def state_box(config: MusConfig) -> spaces.Box:
    """The ``Box`` of ``state()``: seat 0's observation bounds, then four one-hot hands over 40 card ids."""
    obs = observation_box(config)
    high = np.concatenate([obs.high, np.ones(4 * NUM_CARDS, dtype=np.float32)])
    return spaces.Box(low=np.zeros(len(high), dtype=np.float32), high=high, dtype=np.float32)


def hand_stone_difference(record: HandRecord, target: int) -> int:
    """Team 0's stones minus team 1's in one finished hand (the ``reward="stones"`` signal); see
    :meth:`mus_env.game.HandRecord.stone_difference` (an accepted órdago credits the stones still lacking)."""
    return record.stone_difference(target)


def team_rewards(game: MusGame, hands_before: int, reward: str) -> float:
    """Team 0's reward for what happened since ``game.hand_log`` had ``hands_before`` records (team 1 gets
    the negative).

    ``reward="game"``: +1 / -1 once the episode is over, else 0. ``reward="stones"``: the sum of
    :func:`hand_stone_difference` over the hands finished since (normally zero or one hand per decision).
    """
    if reward == "game":
        if game.is_over:
            return 1.0 if game.winner == 0 else -1.0
        return 0.0
    target = game.config.target
    return float(sum(hand_stone_difference(rec, target) for rec in game.hand_log[hands_before:]))


def make_config(config: MusConfig | Mapping[str, Any] | None, config_kwargs: Mapping[str, Any]) -> MusConfig:
    """The env's :class:`MusConfig` from ``config`` (a MusConfig, a dict of fields or None) and field keywords.

    Raises:
        ValueError: ``config`` is of another type, a keyword is not a MusConfig field (the message lists the
            fields), or a value is invalid (MusConfig's message names the field).
    """
    names = [f.name for f in dataclasses.fields(MusConfig)]
    unknown = sorted(set(config_kwargs) - set(names))
    if unknown:
        raise ValueError(f"unknown keyword argument(s) {unknown}: not MusConfig fields; accepted fields: {names} "
                         "(and config=, reward=, render_mode=)")
    if config is None:
        return MusConfig(**config_kwargs)
    if isinstance(config, Mapping):
        return MusConfig.from_dict({**config, **config_kwargs})
    if not isinstance(config, MusConfig):
        raise ValueError(f"config must be a MusConfig, a dict of its fields or None, got {type(config).__name__}")
    return config.replace(**config_kwargs) if config_kwargs else config


def _check_reward(reward: Any) -> str:
    if not isinstance(reward, str) or reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {', '.join(repr(m) for m in REWARD_MODES)}; got {reward!r}")
    return reward


def _check_playable(cfg: MusConfig) -> None:
    """Fail at construction (not at the first reset) for configs the engine refuses."""
    MusGame(cfg, seed=0)


# ------------------------------------------------------------------------------------------------------------
# text rendering
def _speech(action: int, amount: int, cfg: MusConfig) -> str:
    if action in ENVIDO_ACTIONS and amount:
        return f"envido {amount}"
    return action_to_string(action, cfg, words=True)


def table_text(game: MusGame, seat: int | None = None, names: tuple[str, ...] = AGENTS) -> str:
    """A readable table of ``game`` as ``seat`` may see it (the cards of ``seat`` only; None shows no cards).

    Shows scores, mano, hand and game numbers (from 1, as ``mus replay`` counts), the phase and who acts, the
    mus calls and discard counts, the betting of each lance so far in Mus words, the pares/juego declarations,
    and the last finished hand: all four hands when they were shown, and its stones per lance.
    """
    cfg = game.config
    sc = game.scores
    lines = [
        f"Mus  hand {game.hand_number + 1}, game {game.game_number + 1}   target {cfg.target}, {cfg.kings} kings",
        f"score  team 0 ({names[0]}, {names[2]}) {sc[0]} - {sc[1]} team 1 ({names[1]}, {names[3]})"
        + (f"   games {game.games_won[0]}-{game.games_won[1]}" if cfg.juegos_to_win_vaca > 1 else "")
        + (f"   vacas {game.vacas_won[0]}-{game.vacas_won[1]}" if cfg.vacas_to_win_match > 1 else ""),
        f"mano   {names[game.mano]}",
    ]
    if game.is_over:
        lines.append(f"GAME OVER: team {game.winner} wins")
    else:
        lines.append(f"phase  {game.phase_name}; {names[game.current_player]} to act")
    if seat is not None and not game.is_over:
        lines.append(f"cards of {names[seat]}: {hand_to_string(game.hands[seat])}")
        if _signals.signals_on(cfg):
            seen = game.signs_seen(seat)
            for window in ("mus", "grande"):
                if seen[window]:
                    lines.append(f"signs seen by {names[seat]} ({window} window): " + ", ".join(
                        f"{names[s]} {_signals.SIGN_WORDS[t].removeprefix('seña: ')}"
                        for s, t in sorted(seen[window].items())))
    if not game.is_over:
        calls = [f"{names[ev.seat]} {action_to_string(ev.action, cfg, words=True)}"
                 for ev in game.hand_actions if ev.action in (0, 1)]
        if calls:
            lines.append("mus    " + ", ".join(calls))
        for r, row in enumerate(game.discard_counts):
            lines.append(f"  discards, round {r + 1}: " + ", ".join(f"{names[s]} {row[s]}" for s in range(4)))
        for slot in range(4):
            ls = game.lance_state(slot)
            if ls.outcome == Outcome.NOT_PLAYED and not ls.history:
                continue
            stake = "órdago" if ls.stake < 0 else str(ls.stake)
            said = ", ".join(f"{names[s]} {_speech(a, amount, cfg)}" for s, a, amount in ls.history)
            state = "betting" if ls.outcome == Outcome.NOT_PLAYED else OUTCOME_NAMES[ls.outcome]
            lines.append(f"{LANCE_NAMES[ls.lance]:<7}[{state}, stake {stake}] {said}".rstrip())
        pares, juego = game.declarations
        for what, decl in (("pares", pares), ("juego", juego)):
            if any(d >= 0 for d in decl):
                lines.append(f"{what:<7}" + ", ".join(
                    f"{names[s]} {'sí' if decl[s] == 1 else 'no'}" for s in range(4) if decl[s] >= 0))
    if game.hand_log:
        rec = game.hand_log[-1]
        lines.append(f"last hand {rec.hand_number + 1} (mano {names[rec.mano]}), score {rec.scores_before[0]}-"
                     f"{rec.scores_before[1]} -> {rec.scores_after[0]}-{rec.scores_after[1]}"
                     + (f", won the game for team {rec.game_winner}" if rec.game_winner is not None else ""))
        if rec.shown:
            for s in range(4):
                lines.append(f"  {names[s]}: {hand_to_string(rec.final_hands[s])}")
        else:
            lines.append("  cards not shown")
        by_lance = rec.stones_by_lance()
        lines.append("  stones " + ", ".join(f"{k} {v[0]}-{v[1]}" for k, v in by_lance.items())
                     + f"   ({', '.join(rec.outcomes)})")
    return "\n".join(lines)


def render_table(game: MusGame | None, seat: int | None, render_mode: str | None) -> str | None:
    """Render ``game`` as ``seat`` sees it: the text for ``"ansi"``, printed for ``"human"`` (then None);
    warns and returns None without a render mode (the PettingZoo and Gymnasium convention)."""
    if render_mode is None:
        gymnasium.logger.warn("You are calling render method without specifying any render mode.")
        return None
    text = "Mus: call reset() to deal" if game is None else table_text(game, seat)
    if render_mode == "human":
        print(text + "\n")
        return None
    return text


_DEAL_KEYS = ("deck", "mano", "scores")


def deal_game(config: MusConfig, deal: dict[str, Any] | None, game_seed: int) -> MusGame:
    """The game ``reset`` starts: ``MusGame(config, seed)``, or the rigged deal checked by ``_deal_options``."""
    if deal is None:
        return MusGame(config, seed=game_seed)
    return MusGame.from_deck(deal["deck"], mano=deal.get("mano", 0), scores=deal.get("scores", (0, 0)),
                             config=config, seed=game_seed)


def _deal_options(options: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The rigged deal of ``reset(options=...)``, or None (see :meth:`raw_env.reset`)."""
    if not options:
        return None
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(set(options) - set(_DEAL_KEYS))
    if unknown:
        gymnasium.logger.warn(f"reset options {unknown} are not used by mus_v0 (it reads {', '.join(_DEAL_KEYS)})")
    if "deck" not in options:
        if "mano" in options or "scores" in options:
            raise ValueError("reset options 'mano' and 'scores' need a 'deck' (40 card ids) to deal from")
        return None
    return options


# ------------------------------------------------------------------------------------------------------------
def env(**kwargs: Any) -> AECEnv:
    """``raw_env(**kwargs)`` with PettingZoo's standard wrappers (as in its classic envs).

    ``TerminateIllegalWrapper(illegal_reward=-1)`` ends the game on an illegal action (the offender gets -1,
    nobody else is paid), ``AssertOutOfBoundsWrapper`` rejects ids outside ``Discrete(NUM_ACTIONS)``, and
    ``OrderEnforcingWrapper`` checks that ``reset`` comes first.
    """
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


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
        game: the :class:`MusGame` being played (None before the first ``reset``).
        config: the ruleset.
        reward_mode: ``"game"`` or ``"stones"``.
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "mus_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, config: MusConfig | Mapping[str, Any] | None = None, reward: str = "game",
                 render_mode: str | None = None, **config_kwargs: Any) -> None:
        super().__init__()
        self.reward_mode = _check_reward(reward)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.config = make_config(config, config_kwargs)
        _check_playable(self.config)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._seat_of = {a: s for s, a in enumerate(AGENTS)}
        obs_box = observation_box(self.config)
        n_actions = _signals.num_actions(self.config)
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(obs_box.low, obs_box.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n_actions,), dtype=np.int8),
            }) for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in AGENTS}
        self._zero_mask = np.zeros(n_actions, dtype=np.int8)
        self.state_space = state_box(self.config)
        self.game: MusGame | None = None
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None
        self._version = 0                      # bumped by every reset and step: keys the observation cache
        self._obs_buf = [np.zeros(len(obs_box.low), dtype=np.float32) for _ in range(4)]   # per seat, private
        self._obs_version = [-1, -1, -1, -1]
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
            seed: seed of the game (every deal and reshuffle), and of :attr:`np_random` for later resets.
            options: optional rigged first deal (duplicate tournaments, tests): ``{"deck": 40 card ids,
                "mano": seat (default 0), "scores": (team 0, team 1) (default (0, 0))}``, dealt with
                ``MusGame.from_deck`` (the seed then drives reshuffles and later hands). Other keys are ignored
                with a warning.

        Raises:
            ValueError: a bad seed, or a bad deck, mano or scores (the env is left as it was).
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
        deal = _deal_options(options)
        if seed is not None:
            game_seed = int(seed)
        else:
            game_seed = int(self.np_random.integers(0, 2**63 - 1))
        game = deal_game(self.config, deal, game_seed)
        if seed is not None:
            self._np_random, self._np_random_seed = None, int(seed)
        self.game = game
        self._version += 1
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self._rewards_set = False
        self._skip_agent_selection = None
        self.agent_selection = AGENTS[self.game.current_player]

    def step(self, action: int | None) -> None:
        """Apply ``action`` for :attr:`agent_selection` (None for a terminated agent, PettingZoo's dead step).

        Raises:
            IllegalActionError: the action is not legal now (the message names it, the seat and the legal
                actions); nothing is changed.
            ValueError: a terminated agent was given an action other than None, or no agent is left.
            RuntimeError: ``reset`` was never called.
        """
        agent = self.agent_selection if self.agents else None
        if agent is None:
            if self.game is None:
                raise RuntimeError("call reset() before step()")
            raise ValueError("the episode is over and every agent has been removed; call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        hands_before = len(game.hand_log)
        game.step(action)                          # raises IllegalActionError with nothing changed
        self._version += 1
        self._cumulative_rewards[agent] = 0.0
        rewards = self.rewards
        if self._rewards_set:                      # rewards are of the last step only
            for a in rewards:
                rewards[a] = 0.0
            self._rewards_set = False
        if len(game.hand_log) != hands_before:     # a hand (maybe the game) ended: rewards, terminations
            r = team_rewards(game, hands_before, self.reward_mode)
            if r:
                for a in rewards:
                    rewards[a] = r if self._seat_of[a] % 2 == 0 else -r
                self._rewards_set = True
                self._accumulate_rewards()
            if game.is_over:
                self.terminations = dict.fromkeys(self.agents, True)
        seat = game.current_player
        self.agent_selection = AGENTS[seat if seat >= 0 else (self._seat_of[agent] + 1) % 4]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, npt.NDArray]:
        """``{"observation": (OBS_DIM,) float32, "action_mask": (NUM_ACTIONS,) int8}`` for ``agent``.

        The mask is all zeros unless ``agent`` is the one to act. Arrays are fresh copies the caller owns;
        the vector is encoded once per state and seat however often it is asked for.
        """
        try:
            seat = self._seat_of[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {agent!r}; agents are {list(AGENTS)}") from None
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before observe()")
        buf = self._obs_buf[seat]
        if self._obs_version[seat] != self._version:
            _observation.encode(game, seat, buf)
            self._obs_version[seat] = self._version
        mask = game.legal_action_mask() if game.current_player == seat else self._zero_mask.copy()
        return {"observation": buf.copy(), "action_mask": mask}

    def state(self) -> npt.NDArray[np.float32]:
        """``(STATE_DIM,)`` float32 full-information vector (all four hands): for centralised critics only."""
        if self.game is None:
            raise RuntimeError("call reset() before state()")
        return self.game.state()

    def render(self) -> str | None:
        """The table as text (``"ansi"``: returned; ``"human"``: printed), showing the acting seat's cards."""
        seat = None if self.game is None or self.game.current_player < 0 else self.game.current_player
        return render_table(self.game, seat, self.render_mode)

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
