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
                    picks the first mano (outcomes 0..3). The engine gets these cards through its public card
                    source hook (``MusGame(cards=...)``, ``arrange_stock``); ``state.chance_event`` says what
                    the next chance node deals
returns             ``reward="game"``: +1 to both players of the winning team, -1 to the others, at the end
                    (terminal rewards). ``reward="stones"``: after every finished hand, its team's stones minus
                    the other team's (``HandRecord.stone_difference``, as in ``mus_v0``). ``rewards()``: what
                    the last player action earned. An action waiting for chance nodes (the round's last
                    discard, or one that ends a hand: the next hand is dealt first) is played by the engine
                    after them, so at those chance nodes ``rewards()`` is 0 and ``returns()`` does not count it
                    yet; it is counted at the next decision (or the end)
information state   ``information_state_string(p)``: perfect recall, the record of everything player ``p`` has
                    seen: its own cards (dealt and drawn), every call, bet and declaration, the number (not the
                    cards) of the others' discards, each hand's stones and the hands shown at showdowns.
                    ``information_state_tensor(p)``: the project's observation vector ``MusGame.observe(p)``
                    (``OBS_DIM`` = 345 floats), a summary of this hand and the match, *not* a perfect-recall
                    encoding
observation         ``observation_tensor(p)`` = ``MusGame.observe(p)``; ``observation_string(p)`` =
                    ``interfaces.table_text(game, p)``. At a chance node both show the last decision's table (the
                    action that is waiting for its cards is not in them yet); before the first deal, zeros and
                    ``"Mus: dealing the first hand"``. ``make_observation(game, IIGObservationType(...))``:
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

from ..actions import DISCARD_BASE, NUM_ACTIONS, action_to_string
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
_BETTING = frozenset((Phase.DECLARE, Phase.BET_OPEN, Phase.BET_RESPOND, Phase.BET_CONFIRM))


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
# the engine's cards: what the chance nodes chose
class _Cards:
    """The card source (``shuffle.CardSource``) of one state's engine: the deck and the reshuffled stocks its
    chance nodes chose, handed over when the engine asks. While ``probing`` it deals a placeholder deck and notes
    that a deal was asked for (a probe step on a copy of the engine, thrown away: see ``_Core._play``)."""

    def __init__(self) -> None:
        self.deck: list[int] | None = None
        self.reshuffles: list[tuple[list[int], list[int]]] = []      # (the cards, the order), in serving order
        self.probing = False
        self.asked = False

    def deal(self, hand_number: int) -> list[int]:
        if self.probing:
            self.asked = True
            return list(range(NUM_CARDS))
        if self.deck is None:
            raise RuntimeError(f"{GAME_NAME}: the engine asked for the deck of hand {hand_number} before the chance "
                               "nodes chose it")
        deck, self.deck = self.deck, None
        return deck

    def reshuffle(self, hand_number: int, reshuffle_number: int, cards: list[int]) -> list[int]:
        if not self.reshuffles or sorted(cards) != self.reshuffles[0][0]:
            raise RuntimeError(f"{GAME_NAME}: the engine reshuffled {sorted(cards)} in hand {hand_number}, which "
                               "the chance nodes did not foresee")
        return self.reshuffles.pop(0)[1]

    def __repr__(self) -> str:
        return "openspiel chance cards"


class _Plan:
    """The chance nodes still to come before the pending player action (or the first hand) can be played.

    ``kind`` is "mano", "deal" or "draw"; ``slots[i]`` is (seat the card goes to, pool) for the i-th card; a pool
    is the set of cards it is drawn from (the deck, the stock, a reshuffled pile); ``picks`` the cards chosen.
    """

    def __init__(self, kind: str, slots: list[tuple[int, int]], pools: list[list[int]], action: int = -1,
                 picks: list[int] | None = None) -> None:
        self.kind = kind
        self.slots = slots
        self.pools = pools                      # sorted card lists, the chosen cards removed
        self.action = action                    # the pending player action, -1 for the first deal
        self.picks = picks if picks is not None else []

    def copy(self) -> _Plan:
        return _Plan(self.kind, self.slots, [list(p) for p in self.pools], self.action, list(self.picks))

    def outcomes(self) -> list[int]:
        if self.kind == "mano":
            return [0, 1, 2, 3]
        return self.pools[self.slots[len(self.picks)][1]]


#: One line of the record the information states are read from: (the text everybody sees or None, the text each
#: seat sees instead or None per seat, or None when all see the public text).
_Line = tuple[str | None, tuple[str | None, ...] | None]


class _Core:
    """The whole state of one episode (a :class:`MusSpielState` holds one): the engine, the chance plan, the
    record behind the information states, the returns. Copied by ``clone`` (``__deepcopy__``: the engine's
    ``clone``, the record shared) and pickled as its settings and actions (``__reduce__``: replayed)."""

    def __init__(self, settings: Settings, copy_of: _Core | None = None) -> None:
        self.settings = settings
        self.cards = _Cards()
        if copy_of is not None:
            self.game = None if copy_of.game is None else copy_of.game.clone(cards=self.cards)
            self.mano = copy_of.mano
            self.plan = None if copy_of.plan is None else copy_of.plan.copy()
            self.round_discards = dict(copy_of.round_discards)
            self.returns0, self.reward0 = copy_of.returns0, copy_of.reward0
            self.record, self.actions = copy_of.record, copy_of.actions
            return
        self.game: MusGame | None = None
        self.mano = settings.first_mano
        self.plan: _Plan | None = (_Plan("mano", [], []) if settings.first_mano < 0
                                   else self._deal_plan(settings.first_mano))
        self.round_discards: dict[int, list[int]] = {}   # absolute seat -> cards it discarded this mus round
        self.returns0 = 0.0                               # team 0's return so far
        self.reward0 = 0.0                                # team 0's reward from the last player action
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
        if self.plan is not None:
            return _CHANCE
        assert self.game is not None
        return _TERMINAL if self.game.is_over else self.game.current_player

    def chance_event(self) -> tuple[str, int] | None:
        plan = self.plan
        if plan is None:
            return None
        if plan.kind == "mano":
            return ("mano", -1)
        return (plan.kind, plan.slots[len(plan.picks)][0])

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
        if self.plan is not None:
            self._choose(action)
        else:
            self._play(action)
        self.actions = (self.actions, action)

    def _log(self, public: str | None, private: tuple[str | None, ...] | None = None) -> None:
        self.record = (self.record, (public, private))

    def _deal_plan(self, mano: int, action: int = -1) -> _Plan:
        return _Plan("deal", [((mano + i) % 4, 0) for i in range(16)], [list(range(NUM_CARDS))], action)

    def _choose(self, card: int) -> None:
        plan = self.plan
        assert plan is not None
        outcomes = plan.outcomes()
        if card not in outcomes:
            raise ValueError(f"{GAME_NAME}: chance outcome {card} is not possible here; possible: {outcomes}")
        if plan.kind == "mano":
            self.mano = card
            self.plan = self._deal_plan(card)
            return
        outcomes.remove(card)
        plan.picks.append(card)
        if len(plan.picks) < len(plan.slots):
            return
        self.plan = None
        if plan.kind == "deal":
            rest = sorted(set(range(NUM_CARDS)) - set(plan.picks))
            self.cards.deck = plan.picks + rest
            if self.game is None:
                self.game = MusGame(self.settings.config.replace(first_mano=self.mano), seed=0, cards=self.cards)
                self._log_new_hand()
            else:
                self._step(plan.action)
        else:
            game = self.game
            assert game is not None
            by_pool: list[list[int]] = [[] for _ in plan.pools]
            for (_, pool), c in zip(plan.slots, plan.picks, strict=True):
                by_pool[pool].append(c)
            game.arrange_stock(by_pool[0] + plan.pools[0])
            self.cards.reshuffles = [(sorted(drawn + left), drawn + left)
                                     for drawn, left in zip(by_pool[1:], plan.pools[1:], strict=True)]
            self._step(plan.action)

    def _play(self, action: int) -> None:
        game = self.game
        assert game is not None
        action = game.check_action(action)              # the engine's IllegalActionError; nothing changes
        phase, seat = game.phase, game.current_player
        if phase == Phase.DISCARD:
            hand = game.hand_of(seat)
            mask = action - DISCARD_BASE
            self.round_discards[seat] = [c for i, c in enumerate(hand) if mask >> i & 1]
            if (seat - game.mano) % 4 == 3:
                plan = self._draw_plan(game, action)
                if plan.slots:
                    self.plan, self.reward0 = plan, 0.0
                    return
        elif phase in _BETTING:
            # Does this action end the hand, so that the next one is dealt? Play it on a copy whose card source
            # only notes the question: if it asks, the deal's chance nodes come first and the action waits.
            probe = game.clone()
            hands_before = len(game.hand_log)
            self.cards.probing, self.cards.asked = True, False
            try:
                probe.step(action)
            finally:
                self.cards.probing = False
            if not self.cards.asked:
                self._commit(probe, seat, action, len(game.hand_actions), hands_before, game.hand_number)
                return
            self.plan, self.reward0 = self._deal_plan(probe.mano, action), 0.0
            return
        self._step(action)

    def _draw_plan(self, game: MusGame, action: int) -> _Plan:
        """The replacement cards the serve after this (the round's last) discard deals, RULES.md §3.3-3.4: seat by
        seat from the mano, from the stock, and when it runs out from the discards reshuffled (without the
        served seat's own discards of the round with ``exclude_own_discards``), as ``MusGame`` serves them."""
        m = game.mano
        pile = list(game.discard_pile) + self.round_discards[game.current_player]
        pools = [sorted(game.stock)]
        left = len(pools[0])
        slots: list[tuple[int, int]] = []
        for rel in range(4):
            seat = (m + rel) % 4
            own = self.round_discards.get(seat, [])
            need = len(own)
            if left < need:
                slots += [(seat, len(pools) - 1)] * left
                need -= left
                kept = own if self.settings.config.exclude_own_discards else []
                pools.append(sorted(c for c in pile if c not in kept))
                pile = list(kept)
                left = len(pools[-1])
                if left < need:
                    raise RuntimeError(f"{GAME_NAME}: too few cards to serve seat {seat} (a rules bug)")
            slots += [(seat, len(pools) - 1)] * need
            left -= need
        return _Plan("draw", slots, pools, action)

    def _step(self, action: int) -> None:
        game = self.game
        assert game is not None
        seat, events, hands, hand_number = (game.current_player, len(game.hand_actions), len(game.hand_log),
                                            game.hand_number)
        game.step(action)
        self._commit(game, seat, action, events, hands, hand_number)

    def _commit(self, game: MusGame, seat: int, action: int, events_before: int, hands_before: int,
                hand_number: int) -> None:
        """``game`` has played ``action`` of ``seat``: keep it, record what each seat saw, count the reward."""
        cfg = self.settings.config
        self.game = game
        served = False
        if DISCARD_BASE <= action < DISCARD_BASE + 16:
            cards = self.round_discards[seat]
            self._log(f"seat {seat}: discards {len(cards)}",
                      tuple(f"seat {seat}: discards {hand_to_string(cards) or 'nothing'}" if s == seat else None
                            for s in range(4)))
            served = (seat - game.mano) % 4 == 3 and game.hand_number == hand_number
        else:
            self._log(f"seat {seat}: {action_to_string(action, cfg, words=True)}")
        ended = len(game.hand_log) > hands_before
        events = game.hand_log[-1].actions if ended else game.hand_actions
        for e in events[events_before + 1:]:                 # the engine's automatic declarations
            self._log(f"seat {e.seat}: {action_to_string(e.action, cfg, words=True)}")
        if served:
            self.round_discards = {}
            self._log(None, tuple(f"seat {s}: holds {hand_to_string(game.hand_of(s))}" for s in range(4)))
        if ended:
            self._log_hand_end(game.hand_log[-1])
            self.round_discards = {}
        reward = team_rewards(game, hands_before, self.settings.reward)
        self.reward0 = reward
        self.returns0 += reward
        if ended and not game.is_over:
            self._log_new_hand()

    def _log_new_hand(self) -> None:
        game = self.game
        assert game is not None
        self._log(f"hand {game.hand_number + 1} (game {game.game_number + 1}): mano seat {game.mano}, score "
                  f"{game.scores[0]}-{game.scores[1]}")
        self._log(None, tuple(f"seat {s}: dealt {hand_to_string(game.hand_of(s))}" for s in range(4)))

    def _log_hand_end(self, rec: HandRecord) -> None:
        stones = ", ".join(f"{lance} {a}-{b}" for lance, (a, b) in rec.stones_by_lance().items())
        self._log(f"hand {rec.hand_number + 1} ends: {stones}; score {rec.scores_after[0]}-{rec.scores_after[1]}")
        if rec.shown:
            self._log("shown: " + "; ".join(f"seat {s} {hand_to_string(h)}" for s, h in enumerate(rec.final_hands)))
        if rec.game_winner is not None:
            self._log(f"team {rec.game_winner} wins game {rec.game_number + 1}"
                      + (" by órdago" if rec.by_ordago else ""))

    def describe(self) -> str:
        head = [f"{GAME_NAME}: returns team 0 {self.returns0:+g}"]
        if self.plan is not None:
            plan = self.plan
            head.append(f"chance: {plan.kind}, picked {hand_to_string(plan.picks) or 'none'}"
                        + (f", then action {plan.action}" if plan.action >= 0 else "")
                        + (f", mano {self.mano}" if plan.kind == "deal" and self.game is None else ""))
        if self.game is None:
            return "\n".join(head)
        g = self.game
        head.append(f"hand {g.hand_number}, game {g.game_number}, games won {g.games_won}, vacas won {g.vacas_won}, "
                    f"stock {hand_to_string(g.stock)}, pile {hand_to_string(g.discard_pile)}")
        return "\n".join(head + [g.describe()])


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
        return game.legal_actions() if game is not None and player == game.current_player else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(card id, probability) of each card the next chance node can deal, uniform; seats 0..3 for the first
        mano."""
        plan = self._core.plan
        if plan is None:
            raise ValueError(f"{GAME_NAME}: chance_outcomes() at a state that is not a chance node")
        outcomes = plan.outcomes()
        return [(c, 1.0 / len(outcomes)) for c in outcomes]

    def _apply_action(self, action: int) -> None:
        self._core.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player != _CHANCE:
            return action_to_string(int(action), self._core.settings.config)
        event = self._core.chance_event()
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
        """What the last player action earned each player (kept through the chance nodes that follow it)."""
        r = self._core.reward0
        return [r, -r, r, -r]

    def __str__(self) -> str:
        return self._core.describe()

    # Mus --------------------------------------------------------------------------------------------------------
    @property
    def mus_game(self) -> MusGame | None:
        """The engine (None before the first hand is dealt). Read it; never step it (the state would no longer
        know what happened)."""
        return self._core.game

    @property
    def chance_event(self) -> tuple[str, int] | None:
        """What the next chance node deals: ``("mano", -1)``, ``("deal", seat)`` or ``("draw", seat)`` (the seat
        that gets the card); None at a player's decision or the end."""
        return self._core.chance_event()

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
        if game is None:
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
        if game is None:
            return "Mus: dealing the first hand"
        if not self.public:
            return f"cards of player {player}: {hand_to_string(game.hand_of(player))}" if seat is not None else ""
        text = table_text(game, seat)
        if self.private == "all":
            text += "\n" + "\n".join(f"hand of player {s}: {hand_to_string(game.hand_of(s))}" for s in range(4))
        return text


pyspiel.register_game(_game_type("game"), MusSpielGame)
