"""The helpers every interface of the game shares: configs, spaces, rewards, deals, seats and text.

:mod:`mus_env.mus_v0` (PettingZoo), :mod:`mus_env.wrappers` (Gymnasium) and the framework adapters in
:mod:`mus_env.adapters` (Stable-Baselines3, RLlib, Tianshou) build on these public functions, so that each
argument is checked, each space bounded and each reward computed in one place, with the same error messages
everywhere. This module imports gymnasium (for the spaces) and neither pettingzoo nor any training framework.

==========================  =================================================================================
name                        what
==========================  =================================================================================
``REWARD_MODES``            the accepted ``reward=`` values, ``"game"`` and ``"stones"``
``make_config``             a :class:`~mus_env.config.MusConfig` from ``config=`` and MusConfig keywords
``check_reward``            ``reward=`` checked
``check_playable``          a config the engine refuses fails at construction, not at the first reset
``check_learner_seats``     ``learner_seats=`` as a tuple of seats of one team
``chosen_agents``           ``opponents=`` as ``{seat: agent}``
``observation_box``         the ``Box`` of one observation vector (bounds: ``observation.obs_high``)
``state_box``               the ``Box`` of the full-information state
``CompiledObserver``        a game's views written by the batched engine's compiled writer (``MusGame.observe``)
``team_rewards``            team 0's reward for the hands finished since a point (``"game"`` or ``"stones"``)
``hand_stone_difference``   the ``reward="stones"`` signal of one finished hand
``deal_options``            the rigged first deal of ``reset(options={"deck", "mano", "scores"})``
``deal_game``               the :class:`~mus_env.game.MusGame` a ``reset`` starts
``table_text``              a readable table of a game as one seat may see it
``render_table``            ``render()`` for the ``"ansi"`` and ``"human"`` modes
==========================  =================================================================================
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from . import kernel
from .actions import ENVIDO_ACTIONS, action_to_string
from .cards import NUM_CARDS, hand_to_string
from .config import MusConfig, signals_on
from .game import HandRecord, MusGame
from .observation import known_piece, obs_dim, obs_high, piece_high
from .phases import OUTCOME_NAMES, Outcome
from .signals import SIGN_WORDS
from .tables import LANCE_NAMES

__all__ = [
    "REWARD_MODES", "AGENTS", "DEAL_KEYS", "make_config", "check_reward", "check_playable", "check_learner_seats",
    "chosen_agents", "observation_box", "state_box", "piece_high", "known_piece", "team_rewards",
    "hand_stone_difference", "deal_options", "deal_game", "table_text", "render_table", "CompiledObserver",
]

#: Accepted values of ``reward=``.
REWARD_MODES = ("game", "stones")
#: Agent names by absolute seat (PettingZoo's ``mus_v0`` agents; the default seat names of :func:`table_text`).
AGENTS = tuple(f"player_{s}" for s in range(4))


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


def check_reward(reward: Any) -> str:
    """``reward`` if it is one of :data:`REWARD_MODES`.

    Raises:
        ValueError: any other value (the message lists the accepted ones).
    """
    if not isinstance(reward, str) or reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {', '.join(repr(m) for m in REWARD_MODES)}; got {reward!r}")
    return reward


def check_playable(cfg: MusConfig) -> None:
    """Fail at construction (not at the first reset) for configs the engine refuses: builds one game.

    Raises:
        ValueError, NotImplementedError: what ``MusGame(cfg)`` raises for ``cfg``.
    """
    MusGame(cfg, seed=0)


def check_learner_seats(learner_seats: Any) -> tuple[int, ...]:
    """``learner_seats=`` as a tuple of distinct absolute seats of one team: ``1`` -> ``(1,)``, ``(0, 2)``.

    Raises:
        ValueError: not a seat 0..3 or a sequence of distinct seats, or seats of both teams.
    """
    seats = (learner_seats,) if isinstance(learner_seats, (int, np.integer)) else learner_seats
    try:
        seats = tuple(seats)
    except TypeError:
        seats = None
    if (not seats or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s <= 3
                         for s in seats) or len(set(seats)) != len(seats)):
        raise ValueError(f"learner_seats must be one seat 0..3 or distinct seats of one team, e.g. (0,) or (0, 2); "
                         f"got {learner_seats!r}")
    seats = tuple(int(s) for s in seats)
    if len({s % 2 for s in seats}) != 1:
        raise ValueError(f"learner_seats must belong to one team (team 0 = seats 0, 2; team 1 = seats 1, 3), so that "
                         f"the reward is the team's; got {learner_seats!r}")
    return seats


def chosen_agents(opponents: Any, others: list[int]) -> dict[int, Any]:
    """``{seat: agent}`` from ``opponents`` (None, one agent for every seat of ``others``, or a dict of them).

    Raises:
        ValueError: the dict names a seat outside ``others``.
    """
    if opponents is None:
        return {}
    if isinstance(opponents, Mapping):
        bad = sorted(k for k in opponents if k not in others)
        if bad:
            raise ValueError(f"opponents has agents for seat(s) {bad}, but only the non-learner seats {others} "
                             "take agents")
        return dict(opponents)
    return dict.fromkeys(others, opponents)


_FLOAT32 = np.dtype(np.float32)
_observe_view = kernel.observe_view


class CompiledObserver:
    """Writes the views of :class:`~mus_env.game.MusGame` games with the batched engine's compiled writer: the
    vector of ``game.observe(seat)``, bit for bit, from the game's view record (``MusGame.view_state``) through
    ``kernel.observe_view``, the same ``kernel.encode`` that writes every ``VectorMusEnv`` observation.
    ``MusGame.observe`` keeps the readable Python writer (``observation.write``), the reference the tests hold
    this one equal to; this one is about 30 times faster (the envs, which step a compiled table, have the table
    write their views instead). At a chance node of a game with ``explicit_chance=True`` (no seat to act, which
    the batched engine never has) it writes with the Python writer. Only games made with ``view_record=True`` keep
    the record it reads.

    Args:
        config: the ruleset of the games it observes (each call's game must have this config).
    """

    def __init__(self, config: MusConfig) -> None:
        self.config = config
        self._rules = kernel.make_rules(config, stones_reward=False)
        self._dim = obs_dim(config)
        self._shape = (self._dim,)
        self._game: MusGame | None = None
        self._view: np.ndarray | None = None
        self._entry: Callable[..., None] | None = None      # observe_view compiled for writer()'s argument types

    def __call__(self, game: MusGame, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """Absolute ``seat``'s view of ``game`` (``game.observe(seat, out)``): into ``out`` (a float32 array of
        ``observation.obs_dim(config)`` entries, overwritten) or a new array.

        Raises:
            ValueError: ``seat`` is not a seat 0..3, ``out`` is not a float32 array of the right length, the
                game has another config, or it keeps no view record (made without ``view_record=True``).
        """
        if game is not self._game:                     # the game's record is a view of its buffer: kept per game
            if game.config != self.config:
                raise ValueError(f"CompiledObserver: the game's config {game.config} is not the observer's "
                                 f"{self.config}")
            self._game, self._view = game, game.view_state
        if seat.__class__ is not int or not 0 <= seat <= 3:
            if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
                raise ValueError(f"seat must be an absolute seat 0, 1, 2 or 3, got {seat!r}")
            seat = int(seat)
        if out is None:
            out = np.empty(self._dim, dtype=np.float32)
        elif out.__class__ is not np.ndarray or out.dtype is not _FLOAT32 or out.shape != self._shape \
                or out.strides != (4,) or not out.flags.writeable:
            if not (isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == self._shape
                    and out.flags.c_contiguous and out.flags.writeable):
                raise ValueError(f"CompiledObserver: out must be a writable contiguous float32 array of {self._dim} "
                                 f"entries (observation.obs_dim(config)), got {getattr(out, 'shape', out)!r} "
                                 f"{getattr(out, 'dtype', '')}")
        if game.chance_pending:                        # a chance node (explicit_chance): no seat acts, which the
            return game.observe(seat, out)             # batched engine's view never shows; the reference writes it
        _observe_view(self._view, self._rules, seat, out)
        return out

    def writer(self, game: MusGame) -> Callable[[int, np.ndarray], None]:
        """``write(seat, out)``: the call above for one game, its checks of the game done once, for a caller that
        owns ``out`` (a writable contiguous float32 array of ``observation.obs_dim(config)`` entries) and passes
        absolute seats 0..3 (the PettingZoo env, which writes each observation into buffers of its own). ``write``
        checks neither argument: a wrong one writes garbage or raises from the compiled writer.

        Raises:
            ValueError: the game has another config, or it keeps no view record (made without
                ``view_record=True``).
        """
        if game.config is not self.config and game.config != self.config:
            raise ValueError(f"CompiledObserver: the game's config {game.config} is not the observer's {self.config}")
        if game.explicit_chance:                       # chance nodes: the reference writer (see the class docstring)
            return functools.partial(self, game)
        view = game.view_state
        if self._entry is None:                        # the compiled writer for these argument types, found once
            self._entry = kernel.compiled_entry(_observe_view, view, self._rules, 0, np.empty(self._dim, _FLOAT32))
        return functools.partial(self._entry, view, self._rules)

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles forget the game last observed (the record it caches is a view of that game's buffer,
        which a copy of the game does not share) and the compiled writer (found again on first use)."""
        state = self.__dict__.copy()
        state["_game"] = state["_view"] = state["_entry"] = None
        return state


def observation_box(config: MusConfig) -> spaces.Box:
    """The ``Box(0, high, (obs_dim,), float32)`` of one observation vector under ``config``, ``high`` per element
    from the observation's own bounds (``observation.obs_high``: 1 for one-hot and fraction pieces, 4 for rank
    counts, the scaled target, games/vacas to win, and ``inf`` for stakes, raises, stones and scores)."""
    high = obs_high(config)
    return spaces.Box(low=np.zeros(len(high), dtype=np.float32), high=high, dtype=np.float32)


def state_box(config: MusConfig) -> spaces.Box:
    """The ``Box`` of ``state()``: seat 0's observation bounds, then four one-hot hands over 40 card ids."""
    high = np.concatenate([obs_high(config), np.ones(4 * NUM_CARDS, dtype=np.float32)])
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


#: The keys of ``reset(options=...)`` that rig the first deal (:func:`deal_options`).
DEAL_KEYS = ("deck", "mano", "scores")


def deal_game(config: MusConfig, deal: Mapping[str, Any] | None, game_seed: int) -> MusGame:
    """The game ``reset`` starts: ``MusGame(config, seed)``, or the rigged deal checked by :func:`deal_options`
    (``MusGame.from_deck(deal["deck"], deal.get("mano", 0), deal.get("scores", (0, 0)), config, game_seed)``),
    keeping its view record for :class:`CompiledObserver` (``view_record=True``).

    Raises:
        ValueError: a bad deck, mano or scores (``MusGame.from_deck``'s message).
    """
    if deal is None:
        return MusGame(config, seed=game_seed, view_record=True)
    return MusGame.from_deck(deal["deck"], mano=deal.get("mano", 0), scores=deal.get("scores", (0, 0)),
                             config=config, seed=game_seed, view_record=True)


def deal_options(options: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The rigged deal of ``reset(options=...)`` (a mapping with ``"deck"`` and optionally ``"mano"``,
    ``"scores"``), or None when ``options`` rigs nothing (see ``mus_v0.raw_env.reset``). Other keys are ignored
    with a warning.

    Raises:
        ValueError: ``options`` is not a mapping, or has ``mano``/``scores`` without a ``deck``.
    """
    if not options:
        return None
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(set(options) - set(DEAL_KEYS))
    if unknown:
        gymnasium.logger.warn(f"reset options {unknown} are not used by mus_v0 (it reads {', '.join(DEAL_KEYS)})")
    if "deck" not in options:
        if "mano" in options or "scores" in options:
            raise ValueError("reset options 'mano' and 'scores' need a 'deck' (40 card ids) to deal from")
        return None
    return options


# ------------------------------------------------------------------------------------------------------------
# text rendering
def _speech(action: int, amount: int, cfg: MusConfig) -> str:
    """A betting action in Mus words, with the amount of an ENVIDO of any size (``"envido 7"``)."""
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
        if signals_on(cfg):
            seen = game.signs_seen(seat)
            for window in ("mus", "grande"):
                if seen[window]:
                    lines.append(f"signs seen by {names[seat]} ({window} window): " + ", ".join(
                        f"{names[s]} {SIGN_WORDS[t].removeprefix('seña: ')}"
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


