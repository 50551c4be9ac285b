"""Mus as an OpenSpiel game: ``pyspiel.load_game("python_mus")`` once this module is imported.

Imported on demand only (``import mus_env.adapters.openspiel``): it imports ``pyspiel`` and registers the game
:data:`GAME_NAME` with ``pyspiel.register_game``. The game is a thin adapter over
:class:`~mus_env.game.MusGame` (the reference engine, as behind ``mus_v0``): the same action ids, the same
legal actions and the same returns, with every random event an explicit chance node.

==================  ==========================================================================================
item                specification
==================  ==========================================================================================
loading             ``pyspiel.load_game("python_mus")``, or with parameters
                    ``pyspiel.load_game("python_mus", {"target": 5})`` / ``"python_mus(target=5)"``
                    (:data:`DEFAULT_PARAMS`). Type: sequential, explicit stochastic, imperfect information,
                    zero-sum, 4 players
parameters          the :class:`~mus_env.MusConfig` fields ``target``, ``kings``, ``juegos_to_win_vaca``,
                    ``vacas_to_win_match``, ``real31``, ``punto``, ``allow_zero_discard``, ``partner_override``,
                    ``holders_only_speak``, ``exclude_own_discards``, ``auto_declare`` (defaults: MusConfig's),
                    ``bet_sizes`` (a string, ``"2/3/4/5/10"``: a comma would end the parameter in
                    OpenSpiel's game strings), and ``max_mus_rounds`` (6) and ``max_stake``
                    (40): the two RL caps of MusConfig, which default to None (no cap) there and to the PPO
                    trainer's values here, because an OpenSpiel game must be finite (mus rounds and raises could
                    repeat for ever without them); ``first_mano`` (-1: a chance node picks the first mano
                    uniformly; 0..3: that seat); ``reward`` (``"game"`` or ``"stones"``). The señas
                    (``signals``) are not offered: their interceptions would be chance events too
players             absolute seats 0..3; team 0 = players 0 and 2
actions             ``num_distinct_actions() == NUM_ACTIONS`` (31), the ids of RULES.md §9.1, legal exactly when
                    ``MusGame.legal_actions()`` has them; an illegal one raises the engine's
                    ``IllegalActionError`` and changes nothing
chance              ``max_chance_outcomes() == 40``; a chance outcome is a card id 0..39, uniform over the cards
                    it can be: the deal of each hand is 16 chance nodes (``deck[i]`` goes to relative seat
                    ``i % 4``, as in ``MusGame.from_deck``), each over the cards not dealt yet; every
                    replacement card is one chance node, over the cards left in the stock (after the stock runs
                    out, over the reshuffled discards, RULES.md §3.4). With ``first_mano=-1`` the first node
                    picks the first mano (outcomes 0..3). These are the engine's own chance events
                    (``MusGame(explicit_chance=True)``: ``chance_event``, ``chance_outcomes()``,
                    ``apply_chance``), so the adapter holds no rule of dealing or serving;
                    ``state.chance_event`` says what the next chance node deals
returns             ``reward="game"``: +1 to both players of the winning team, -1 to the others, at the end
                    (terminal rewards). ``reward="stones"``: after every finished hand, its team's stones minus
                    the other team's (``HandRecord.stone_difference``, as in ``mus_v0``). ``rewards()``: what
                    the last player action earned. The chance nodes that follow an action (after the round's
                    last discard, the serve; after an action that ends a hand, the next deal) pay 0, and that
                    action's reward waits for them: ``returns()`` counts it and ``rewards()`` shows it once the
                    last of them is applied, at the next decision
information state   ``information_state_string(p)``: perfect recall, the record of everything player ``p`` has
                    seen: its own cards (dealt and drawn), every call, bet and declaration, the number (not the
                    cards) of the others' discards, each hand's stones and the hands shown at showdowns.
                    ``information_state_tensor(p)``: the project's observation vector ``MusGame.observe(p)``
                    (``OBS_DIM`` = 345 floats), a summary of this hand and the match, *not* a perfect-recall
                    encoding
observation         ``observation_tensor(p)`` = ``MusGame.observe(p)``; ``observation_string(p)`` =
                    ``interfaces.table_text(game, p)``. At a chance node the tensor is the engine's view as it
                    stands (the action before the node played, the cards dealt or served so far; zeros before
                    the first mano is drawn) and the string names the chance event.
                    ``make_observation(game, IIGObservationType(...))``:
                    ``private_info=NONE`` zeroes the own-hand pieces (``observation.HAND_DIM``) and shows no
                    cards, ``ALL_PLAYERS`` adds the four hands by relative seat; ``public_info=False`` keeps the
                    own-hand pieces only
game length         ``max_game_length()``: a sound bound on player decisions from the rules (every hand but the
                    last of a game scores at least 2 stones, so a game has at most ``target`` hands; per hand,
                    ``8 * max_mus_rounds + 4`` mus decisions, 8 declarations without ``auto_declare``, and per
                    lance 3 passes plus 3 decisions per bet, ``ceil(max_stake / bet_sizes[0]) + 1`` bets):
                    :func:`bounds`
cloning, saving     ``state.clone()`` copies the engine (``MusGame.clone``), not the history, so it stays cheap
                    in a long match; ``pyspiel.serialize_game_and_state`` pickles the state as its list of
                    actions and replays it
==================  ==========================================================================================

Example:
    >>> import pyspiel
    >>> import mus_env.adapters.openspiel
    >>> game = pyspiel.load_game("python_mus", {"first_mano": 0})
    >>> state = game.new_initial_state()
    >>> state.is_chance_node(), len(state.chance_outcomes()), state.chance_event
    (True, 40, ('deal', 0))
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pyspiel

from ..actions import NUM_ACTIONS, action_to_string
from ..cards import NUM_CARDS, card_to_string, hand_to_string
from ..config import MusConfig
from ..game import HandRecord, MusGame
from ..interfaces import REWARD_MODES, table_text, team_rewards
from ..observation import HAND_DIM, OBS_DIM
from ..phases import Phase

__all__ = ["GAME_NAME", "DEFAULT_PARAMS", "CONFIG_PARAMS", "MusSpielGame", "MusSpielState", "MusObserver",
           "Settings", "parse_params", "bounds"]

#: The name the game is registered under: ``pyspiel.load_game(GAME_NAME)``.
GAME_NAME = "python_mus"
#: The MusConfig fields that are game parameters under their own names (defaults: ``MusConfig()``'s).
CONFIG_PARAMS = ("target", "kings", "juegos_to_win_vaca", "vacas_to_win_match", "real31", "punto",
                 "allow_zero_discard", "partner_override", "holders_only_speak", "exclude_own_discards",
                 "auto_declare")
_DEFAULT_CONFIG = MusConfig()
#: Every game parameter and its default. ``max_mus_rounds`` and ``max_stake`` are the PPO trainer's caps
#: (``experiments.train.ppo.Args``), not MusConfig's None: the game must be finite for OpenSpiel.
DEFAULT_PARAMS: dict[str, Any] = {
    **{name: getattr(_DEFAULT_CONFIG, name) for name in CONFIG_PARAMS},
    "bet_sizes": "/".join(str(k) for k in _DEFAULT_CONFIG.bet_sizes),
    "max_mus_rounds": 6,
    "max_stake": 40,
    "first_mano": -1,
    "reward": "game",
}

_CHANCE, _TERMINAL = int(pyspiel.PlayerId.CHANCE), int(pyspiel.PlayerId.TERMINAL)


class Settings(NamedTuple):
    """A game's parameters, checked: the engine's config, the reward mode and the first mano (-1: by chance)."""

    config: MusConfig
    reward: str
    first_mano: int


def parse_params(params: Mapping[str, Any] | None) -> Settings:
    """The :class:`Settings` of a game's parameters (missing ones take :data:`DEFAULT_PARAMS`).

    Raises:
        ValueError: an unknown parameter, a bad MusConfig value (MusConfig's message), a cap that is not an
            int (``max_mus_rounds >= 0``, ``max_stake >= 2``), a bad ``bet_sizes`` string (``"2/3/4/5/10"``),
            ``first_mano`` not in -1..3 or ``reward`` not one of ``"game"``, ``"stones"``.
    """
    p = dict(DEFAULT_PARAMS)
    params = dict(params or {})
    unknown = sorted(set(params) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(f"{GAME_NAME}: unknown parameter(s) {unknown}; accepted: {sorted(DEFAULT_PARAMS)}")
    p.update(params)
    for name in ("max_mus_rounds", "max_stake", "first_mano"):
        if isinstance(p[name], bool) or not isinstance(p[name], int):
            raise ValueError(f"{GAME_NAME}: {name} must be an int, got {p[name]!r}")
    if p["max_mus_rounds"] < 0 or p["max_stake"] < 2:
        raise ValueError(f"{GAME_NAME}: the game must be finite: max_mus_rounds must be >= 0 and max_stake >= 2 "
                         f"(got {p['max_mus_rounds']}, {p['max_stake']})")
    if p["first_mano"] not in (-1, 0, 1, 2, 3):
        raise ValueError(f"{GAME_NAME}: first_mano must be -1 (chosen by a chance node) or a seat 0..3, "
                         f"got {p['first_mano']!r}")
    if p["reward"] not in REWARD_MODES:
        raise ValueError(f"{GAME_NAME}: reward must be one of {', '.join(map(repr, REWARD_MODES))}, "
                         f"got {p['reward']!r}")
    try:
        sizes = tuple(int(k) for k in str(p["bet_sizes"]).split("/"))
    except ValueError:
        raise ValueError(f"{GAME_NAME}: bet_sizes must be five ints separated by '/', such as '2/3/4/5/10' (a comma "
                         f"would end the parameter in OpenSpiel's game strings), got {p['bet_sizes']!r}") from None
    config = MusConfig(**{name: p[name] for name in CONFIG_PARAMS}, bet_sizes=sizes,
                       max_mus_rounds=p["max_mus_rounds"], max_stake=p["max_stake"],
                       first_mano="random" if p["first_mano"] < 0 else p["first_mano"])
    return Settings(config, p["reward"], p["first_mano"])


def bounds(config: MusConfig) -> dict[str, int]:
    """Upper bounds of a game under ``config`` (``max_mus_rounds`` and ``max_stake`` set), from the rules.

    Returns:
        ``hands``: hands in an episode; a game (juego) has at most ``target`` hands, since every hand that does
        not end it scores at least 2 stones (grande and chica each score at least 1: en paso, refused or
        accepted), and an episode at most ``(2 * juegos_to_win_vaca - 1) * (2 * vacas_to_win_match - 1)`` games.
        ``decisions_per_hand``: ``8 * max_mus_rounds + 4`` mus calls and discards, 8 declarations unless
        ``auto_declare``, and per lance slot 3 passes plus 3 decisions (the bet and two answers) per bet, with at
        most ``ceil(max_stake / bet_sizes[0])`` numeric bets (a raise needs a stake below the cap, and each bet
        adds at least ``bet_sizes[0]``) and one órdago. ``decisions``: ``hands * decisions_per_hand``
        (``max_game_length``). ``chance_nodes``: 1 (the first mano) + per hand 16 deal nodes and at most 16
        replacement cards per mus round. ``stones_per_game``: a bound on one game's ``|stone difference|``:
        ``target - 1`` plus what one hand can score for a team (four stakes of at most
        ``max_stake - 1 + bet_sizes[-1]``, 6 for pares, 6 for juego, 1 for punto). ``games``.
    """
    if config.max_mus_rounds is None or config.max_stake is None:
        raise ValueError("bounds need MusConfig.max_mus_rounds and max_stake (without them a hand can go on for ever)")
    games = (2 * config.juegos_to_win_vaca - 1) * (2 * config.vacas_to_win_match - 1)
    hands = games * config.target
    bets = math.ceil(config.max_stake / config.bet_sizes[0]) + 1
    per_hand = 8 * config.max_mus_rounds + 4 + (0 if config.auto_declare else 8) + 4 * (3 + 3 * bets)
    one_hand = 4 * (config.max_stake - 1 + config.bet_sizes[-1]) + 6 + 6 + 1
    return {"games": games, "hands": hands, "decisions_per_hand": per_hand, "decisions": hands * per_hand,
            "chance_nodes": 1 + hands * (16 + 16 * config.max_mus_rounds),
            "stones_per_game": config.target - 1 + one_hand}


def _game_type(reward: str) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Mus (mus-env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=(pyspiel.GameType.RewardModel.TERMINAL if reward == "game"
                      else pyspiel.GameType.RewardModel.REWARDS),
        max_num_players=4,
        min_num_players=4,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=DEFAULT_PARAMS)


class MusSpielGame(pyspiel.Game):
    """The OpenSpiel game (``pyspiel.load_game(GAME_NAME, params)`` makes one; see the module docstring).

    Attributes:
        settings: the checked parameters (:class:`Settings`): ``settings.config`` is the engine's MusConfig.
    """

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        settings = parse_params(params)
        b = bounds(settings.config)
        utility = 1.0 if settings.reward == "game" else float(b["games"] * b["stones_per_game"])
        info = pyspiel.GameInfo(num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=NUM_CARDS, num_players=4,
                                min_utility=-utility, max_utility=utility, utility_sum=0.0,
                                max_game_length=b["decisions"])
        super().__init__(_game_type(settings.reward), info, dict(params or {}))
        self.settings = settings
        self._chance_nodes = b["chance_nodes"]

    def new_initial_state(self) -> MusSpielState:
        """A new episode, at its first chance node (the first mano or the first card of the deal)."""
        return MusSpielState(self)

    def max_chance_nodes_in_history(self) -> int:
        """A bound on the chance nodes of an episode (:func:`bounds`)."""
        return self._chance_nodes

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None,
                         params: Mapping[str, Any] | None = None) -> MusObserver:
        """The observer of ``iig_obs_type`` (default: a player's observation; perfect recall: its information
        state); see :class:`MusObserver`."""
        return MusObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


# --------------------------------------------------------------------------------------------------------------
#: One line of the record the information states are read from: (the text everybody sees or None, the text each
#: seat sees instead or None per seat, or None when all see the public text).
_Line = tuple[str | None, tuple[str | None, ...] | None]


class _Core:
    """The whole state of one episode (a :class:`MusSpielState` holds one): the engine, with its chance events
    explicit (``MusGame(explicit_chance=True)``), the record behind the information states, the returns. Copied by
    ``clone`` (``__deepcopy__``: the engine's ``clone``, the record shared) and pickled as its settings and actions
    (``__reduce__``: replayed)."""

    def __init__(self, settings: Settings, copy_of: _Core | None = None) -> None:
        self.settings = settings
        if copy_of is not None:
            self.game = copy_of.game.clone()
            self.returns0, self.reward0, self.held = copy_of.returns0, copy_of.reward0, copy_of.held
            self.logged = copy_of.logged
            self.record, self.actions = copy_of.record, copy_of.actions
            return
        self.game = MusGame(settings.config, seed=0, explicit_chance=True)
        self.returns0 = 0.0                               # team 0's return so far
        self.reward0 = 0.0                                # team 0's reward from the last player action
        self.held = 0.0                                   # that reward while the chance events after it run
        self.logged = (-1, 0)                             # (hand number, mus round) whose cards the record holds
        self.record: tuple | None = None                  # linked list (previous, _Line) of the record
        self.actions: tuple | None = None                 # linked list (previous, action) of every action

    # copying ------------------------------------------------------------------------------------------------
    def __deepcopy__(self, memo: dict) -> _Core:
        return _Core(self.settings, copy_of=self)

    def action_list(self) -> list[int]:
        """Every action applied so far, chance outcomes included, in order."""
        out, node = [], self.actions
        while node is not None:
            node, a = node
            out.append(a)
        return out[::-1]

    def __reduce__(self) -> tuple:
        return (_replay, (self.settings, self.action_list()))

    # reading --------------------------------------------------------------------------------------------------
    def current_player(self) -> int:
        game = self.game
        if game.chance_pending:
            return _CHANCE
        return _TERMINAL if game.is_over else game.current_player

    def lines(self, seat: int | None, everything: bool = False) -> list[str]:
        """The record as ``seat`` sees it (None: the public part only; ``everything``: every seat's too)."""
        entries, node = [], self.record
        while node is not None:
            node, entry = node
            entries.append(entry)
        out = []
        for public, private in reversed(entries):
            if everything and private is not None:
                out += [f"[seat {s}] {text}" for s, text in enumerate(private) if text is not None]
            elif private is not None and seat is not None and private[seat] is not None:
                out.append(private[seat])
            elif public is not None:
                out.append(public)
        return out

    # acting ---------------------------------------------------------------------------------------------------
    def apply(self, action: int) -> None:
        game = self.game
        if game.chance_pending:
            game.apply_chance(action)                     # the engine's IllegalChanceError; nothing changes
            if not game.chance_pending:                   # the cards are out: the action before them pays now
                self._log_cards()
                self.reward0, self.held = self.held, 0.0
                self.returns0 += self.reward0
        else:
            self._play(action)
        self.actions = (self.actions, action)

    def _log(self, public: str | None, private: tuple[str | None, ...] | None = None) -> None:
        self.record = (self.record, (public, private))

    def _play(self, action: int) -> None:
        game = self.game
        action = game.check_action(action)              # the engine's IllegalActionError; nothing changes
        cfg = self.settings.config
        seat, events_before, hands_before = game.current_player, len(game.hand_actions), len(game.hand_log)
        discarding = game.phase == Phase.DISCARD
        hand = game.hand_of(seat) if discarding else ()
        game.step(action)
        if discarding:                                  # the serve waits for its chance events: the rest was put down
            kept = game.hand_of(seat)
            cards = [c for c in hand if c not in kept]
            self._log(f"seat {seat}: discards {len(cards)}",
                      tuple(f"seat {seat}: discards {hand_to_string(cards) or 'nothing'}" if s == seat else None
                            for s in range(4)))
        else:
            self._log(f"seat {seat}: {action_to_string(action, cfg, words=True)}")
        ended = len(game.hand_log) > hands_before
        events = game.hand_log[-1].actions if ended else game.hand_actions
        for e in events[events_before + 1:]:                 # the engine's automatic declarations
            self._log(f"seat {e.seat}: {action_to_string(e.action, cfg, words=True)}")
        if ended:
            self._log_hand_end(game.hand_log[-1])
        reward = team_rewards(game, hands_before, self.settings.reward)
        if game.chance_pending:                         # a serve or the next deal: paid once the cards are out
            self.reward0, self.held = 0.0, reward
        else:
            self.reward0 = reward
            self.returns0 += reward
            self._log_cards()

    def _log_cards(self) -> None:
        """Once the chance events are over: each seat's cards of a new hand, or after a mus round's serve."""
        game = self.game
        if game.is_over:
            return
        hand, rounds = game.hand_number, game.mus_round
        if hand != self.logged[0]:
            self._log(f"hand {hand + 1} (game {game.game_number + 1}): mano seat {game.mano}, score "
                      f"{game.scores[0]}-{game.scores[1]}")
            self._log(None, tuple(f"seat {s}: dealt {hand_to_string(game.hand_of(s))}" for s in range(4)))
        elif rounds != self.logged[1]:
            self._log(None, tuple(f"seat {s}: holds {hand_to_string(game.hand_of(s))}" for s in range(4)))
        self.logged = (hand, rounds)

    def _log_hand_end(self, rec: HandRecord) -> None:
        stones = ", ".join(f"{lance} {a}-{b}" for lance, (a, b) in rec.stones_by_lance().items())
        self._log(f"hand {rec.hand_number + 1} ends: {stones}; score {rec.scores_after[0]}-{rec.scores_after[1]}")
        if rec.shown:
            self._log("shown: " + "; ".join(f"seat {s} {hand_to_string(h)}" for s, h in enumerate(rec.final_hands)))
        if rec.game_winner is not None:
            self._log(f"team {rec.game_winner} wins game {rec.game_number + 1}"
                      + (" by órdago" if rec.by_ordago else ""))

    def describe(self) -> str:
        g = self.game
        return "\n".join([f"{GAME_NAME}: returns team 0 {self.returns0:+g}" + (
            f" (then {self.held:+g} after the chance events)" if self.held else ""),
            f"hand {g.hand_number}, game {g.game_number}, games won {g.games_won}, vacas won {g.vacas_won}, "
            f"stock {hand_to_string(g.stock)}, pile {hand_to_string(g.discard_pile)}", g.describe()])


def _replay(settings: Settings, actions: list[int]) -> _Core:
    """A :class:`_Core` after ``actions`` (unpickling)."""
    core = _Core(settings)
    for a in actions:
        core.apply(a)
    return core


# --------------------------------------------------------------------------------------------------------------
class MusSpielState(pyspiel.State):
    """A state of :class:`MusSpielGame` (``game.new_initial_state()``). Besides OpenSpiel's API:
    :attr:`mus_game` (the engine) and :attr:`chance_event` (what the next chance node deals)."""

    def __init__(self, game: MusSpielGame) -> None:
        super().__init__(game)
        self._core = _Core(game.settings)

    # OpenSpiel's API ------------------------------------------------------------------------------------------
    def current_player(self) -> int:
        """The absolute seat to act, ``pyspiel.PlayerId.CHANCE`` or ``pyspiel.PlayerId.TERMINAL``."""
        return self._core.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        game = self._core.game
        return game.legal_actions() if player == game.current_player else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(card id, probability) of each card the next chance node can deal, uniform; seats 0..3 for the first
        mano: the engine's ``MusGame.chance_outcomes()``."""
        game = self._core.game
        if not game.chance_pending:
            raise ValueError(f"{GAME_NAME}: chance_outcomes() at a state that is not a chance node")
        return game.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self._core.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player != _CHANCE:
            return action_to_string(int(action), self._core.settings.config)
        event = self._core.game.chance_event
        if event is None or event[0] == "mano":
            return f"first mano: seat {action}" if 0 <= action <= 3 else f"card {card_to_string(int(action))}"
        return f"{event[0]} {card_to_string(int(action))} to seat {event[1]}"

    def is_terminal(self) -> bool:
        """Whether the episode (one game by default, else the match) is over."""
        return self._core.current_player() == _TERMINAL

    def returns(self) -> list[float]:
        """Each player's return so far: its team's (+1 / -1 at the end, or the stones difference)."""
        r = self._core.returns0
        return [r, -r, r, -r]

    def rewards(self) -> list[float]:
        """What the last action earned each player: 0 at a chance node; an action that chance nodes follow (the
        round's last discard, the end of a hand) pays after the last of them, at the next decision or the end."""
        r = self._core.reward0
        return [r, -r, r, -r]

    def __str__(self) -> str:
        return self._core.describe()

    # Mus --------------------------------------------------------------------------------------------------------
    @property
    def mus_game(self) -> MusGame:
        """The engine (``MusGame(explicit_chance=True)``; during a deal it holds the cards dealt so far). Read it;
        never step it nor apply chance to it (the state would no longer know what happened)."""
        return self._core.game

    @property
    def chance_event(self) -> tuple[str, int] | None:
        """What the next chance node deals: ``("mano", -1)``, ``("deal", seat)`` or ``("draw", seat)`` (the seat
        that gets the card); None at a player's decision or the end (``MusGame.chance_event``)."""
        return self._core.game.chance_event

    def record_lines(self, seat: int | None, everything: bool = False) -> list[str]:
        """The record the information state strings are made of, as absolute ``seat`` saw it (None: what everybody
        saw; ``everything``: each seat's private lines too)."""
        return self._core.lines(seat, everything)


class MusObserver:
    """The observer of OpenSpiel's ``make_observation`` / ``information_state_*`` / ``observation_*``
    (``pyspiel.IIGObservationType``): pieces ``observation`` (``OBS_DIM``, :meth:`MusGame.observe`) and, with
    ``private_info=ALL_PLAYERS``, ``hands`` (4 x 40, the hands by relative seat); ``public_info=False`` gives the
    own-hand piece ``hand`` (``HAND_DIM``) only. Strings: the table (``interfaces.table_text``), or with perfect
    recall the record (:meth:`MusSpielState.record_lines`)."""

    def __init__(self, iig_obs_type: pyspiel.IIGObservationType, params: Mapping[str, Any] | None) -> None:
        if params:
            raise ValueError(f"{GAME_NAME}: observation parameters are not supported, got {dict(params)}")
        private = iig_obs_type.private_info
        self.private = ("single" if private == pyspiel.PrivateInfoType.SINGLE_PLAYER
                        else "all" if private == pyspiel.PrivateInfoType.ALL_PLAYERS else "none")
        self.public = bool(iig_obs_type.public_info)
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        pieces: list[tuple[str, int, tuple[int, ...]]] = []
        if self.public:
            pieces.append(("observation", OBS_DIM, (OBS_DIM,)))
            if self.private == "all":
                pieces.append(("hands", 4 * NUM_CARDS, (4, NUM_CARDS)))
        elif self.private != "none":
            pieces.append(("hand", HAND_DIM, (HAND_DIM,)))
        self.tensor: npt.NDArray[np.float32] = np.zeros(sum(size for _, size, _ in pieces), np.float32)
        self.dict: dict[str, npt.NDArray[np.float32]] = {}
        start = 0
        for name, size, shape in pieces:
            self.dict[name] = self.tensor[start:start + size].reshape(shape)
            start += size

    def set_from(self, state: MusSpielState, player: int) -> None:
        """Write ``player``'s view of ``state`` into :attr:`tensor` (and the views of :attr:`dict`)."""
        self.tensor.fill(0.0)
        game = state.mus_game
        if game.chance_event == ("mano", -1):            # before the first hand: nothing to see
            return
        if "observation" in self.dict:
            game.observe(player, self.dict["observation"])
            if self.private == "none":
                self.dict["observation"][:HAND_DIM] = 0.0
        if "hands" in self.dict:
            for s in range(4):
                self.dict["hands"][(s - player) % 4, list(game.hand_of(s))] = 1.0
        if "hand" in self.dict:
            self.dict["hand"][:] = game.observe(player)[:HAND_DIM]

    def string_from(self, state: MusSpielState, player: int) -> str:
        """``player``'s view of ``state`` as text: the table, or the record with perfect recall."""
        seat = player if self.private == "single" else None
        if self.perfect_recall:
            if self.public:
                lines = state.record_lines(seat, everything=self.private == "all")
            elif seat is not None:                       # its own cards only: as dealt, and after each serve
                own = (f"seat {player}: dealt ", f"seat {player}: holds ")
                lines = [line for line in state.record_lines(player) if line.startswith(own)]
            else:
                lines = []
            return "\n".join([f"player {player}"] + lines)
        game = state.mus_game
        if not self.public:
            return f"cards of player {player}: {hand_to_string(game.hand_of(player))}" if seat is not None else ""
        event = game.chance_event
        if event is not None:
            kind, to = event
            return (f"Mus hand {game.hand_number + 1}, game {game.game_number + 1}: chance node, "
                    + ("the first mano" if kind == "mano" else f"{kind} a card to seat {to}"))
        text = table_text(game, seat)
        if self.private == "all":
            text += "\n" + "\n".join(f"hand of player {s}: {hand_to_string(game.hand_of(s))}" for s in range(4))
        return text


pyspiel.register_game(_game_type("game"), MusSpielGame)
