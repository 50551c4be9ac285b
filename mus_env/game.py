"""MusGame: the scalar engine, the whole game of RULES.md written plainly (the reference).

One object plays one episode: hands are dealt, the mus phase (§3) runs until somebody cuts, the four
lances are bet (§4, §5) with refusal stones paid at once, the showdown counts stones lance by lance with
the target checked after every addition (§6), and the next hand follows with the mano rotated (§7),
across games, vacas and the match set by :class:`~mus_env.config.MusConfig`.

Every decision point waits for :meth:`MusGame.step`; by default the chance events (the first mano, each card
of the deal, each replacement card, RULES.md §2.5, §3.3, §3.4) and the forced pares/juego declarations are applied
by the engine. Randomness comes only from :mod:`mus_env.shuffle` (a pure function of ``seed`` and the position in
the game), so the same seed and actions give the same game in this engine and in
:class:`~mus_env.vector.VectorMusEnv`. With ``MusGame(config, explicit_chance=True)`` the engine stops at every
chance event instead (:attr:`MusGame.chance_pending`, :meth:`MusGame.chance_outcomes`,
:meth:`MusGame.apply_chance`), as game-tree search and OpenSpiel's chance nodes want
(:mod:`mus_env.adapters.openspiel`); both ways deal and serve with the same code.

Seats are absolute 0..3 (team 0 = seats 0 and 2, team 1 = seats 1 and 3). Inside a hand the rules speak
of relative seats ``p = (seat - mano) % 4``: S0 mano, S1, S2, S3 postre; the code below does the same.

With ``MusConfig(signals="truthful")`` or ``"free"`` the señas channel of RULES.md §8 is played
(:mod:`mus_env.signals`): a sign window opens before every mus-call round (at the deal and after each
discard round) and once before grande (after the mus is cut); in a window S0..S3 each make one sign
decision (phase :attr:`Phase.SIGNAL`, action ids ``SIGNAL_BASE + token``, 31..46). Signs score nothing;
who saw which sign is :meth:`MusGame.signs_seen`. With the default ``signals="off"`` nothing of this exists.

Example:
    >>> from mus_env import MusGame, MusConfig
    >>> g = MusGame(MusConfig(first_mano=0), seed=1)
    >>> g.current_player, g.legal_actions()
    (0, [0, 1])
"""

from __future__ import annotations

import copy
import sys
from array import array
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from . import observation
from .actions import (
    DISCARD_BASE,
    ENVIDO_BASE,
    NUM_ACTIONS,
    NUM_SIGNS,
    SIGN_NAMES,
    SIGNAL_BASE,
    Action,
    action_to_string,
)
from .cards import NUM_CARDS, hand_to_string, slot_order_key
from .config import MAX_BET, MusConfig, playable_config
from .phases import (
    LEGAL_MASKS,
    LEGAL_SETS,
    ORDAGO_STAKE,
    OUTCOME_NAMES,
    PHASE_NAMES,
    SIGNAL_PHASE_NAME,
    Legal,
    Outcome,
    Phase,
)
from .rows import TableRows
from .shuffle import CardSource, SeededCards, check_seed, first_mano, random_seed
from .signals import (
    WINDOW_GRANDE,
    WINDOW_MUS,
    WINDOW_NAMES,
    legal_signs,
    sees_sign,
)
from .tables import CHICA, GRANDE, JUEGO, LANCE_NAMES, PARES, PUNTO, REAL31_JUEGO_RANK, get_tables, is_real31

__all__ = [
    "MusGame", "IllegalActionError", "IllegalChanceError", "CHANCE_EVENTS", "HandRecord", "GameResult", "ActionEvent",
    "ScoreEvent", "Phase", "Outcome", "PHASE_NAMES", "OUTCOME_NAMES", "ORDAGO_STAKE",
]


class IllegalActionError(ValueError):
    """An action that is not legal now (or not an action id at all). The game is left unchanged."""


class IllegalChanceError(ValueError):
    """A chance outcome that is not pending now (:meth:`MusGame.apply_chance`). The game is left unchanged."""


#: The kinds of chance event (:attr:`MusGame.chance_event`): the first mano (with ``first_mano="random"``), a card of
#: the deal (RULES.md §2.5), a replacement card served after a discard round (§3.3, §3.4).
CHANCE_EVENTS = ("mano", "deal", "draw")
_CHANCE_NAMES = {"mano": "first mano", "deal": "deal", "draw": "draw"}


# Legal action tuples of each decision kind, and their sets and masks.
_MUS, _FORCED_NO_MUS, _DISCARD, _DISCARD_ZERO = (LEGAL_SETS[Legal.MUS_CALL], LEGAL_SETS[Legal.FORCED_NO_MUS],
                                                 LEGAL_SETS[Legal.DISCARD], LEGAL_SETS[Legal.DISCARD_ZERO])
_OPEN, _RESPOND, _RESPOND_ORDAGO, _CONFIRM = (LEGAL_SETS[Legal.OPEN], LEGAL_SETS[Legal.RESPOND],
                                              LEGAL_SETS[Legal.RESPOND_ORDAGO], LEGAL_SETS[Legal.CONFIRM])
_RESPOND_CAPPED, _CONFIRM_CAPPED = LEGAL_SETS[Legal.RESPOND_CAPPED], LEGAL_SETS[Legal.CONFIRM_CAPPED]
_LEGAL_SETS = {t: frozenset(t) for t in LEGAL_SETS}
_MASKS = {t: LEGAL_MASKS[k] for k, t in enumerate(LEGAL_SETS)}

_NO_MUS_A = int(Action.NO_MUS)
_PASO_A, _QUIERO_A, _NO_QUIERO_A, _ORDAGO_A = (int(Action.PASO), int(Action.QUIERO), int(Action.NO_QUIERO),
                                               int(Action.ORDAGO))
_PARES_SI, _PARES_NO, _JUEGO_SI, _JUEGO_NO = 27, 28, 29, 30
# What each betting action says (observation.SPEECH_NAMES), for the view record's ls_said.
_SAYS_PASO, _SAYS_QUIERO, _SAYS_NO_QUIERO = (observation.speech_of(a) for a in (_PASO_A, _QUIERO_A, _NO_QUIERO_A))
_SAYS_ENVIDO, _SAYS_ORDAGO = observation.speech_of(ENVIDO_BASE), observation.speech_of(_ORDAGO_A)

# The view record (observation.VIEW_FIELDS) as a flat int32 array: the index of each field's first entry.
(_V_HAND_NUMBER, _V_MANO, _V_HANDS, _V_PHASE, _V_REL, _V_SLOT, _V_RESP_I, _V_LANCE, _V_OUTCOME, _V_STAKE,
 _V_FALLBACK, _V_BETTOR, _V_WINNER, _V_LAST, _V_SAID, _V_RAISED, _V_DECL, _V_MUS_ROUND, _V_DISC, _V_HAND_STONES,
 _V_SCORES, _V_GAMES_WON, _V_VACAS_WON, _V_PREV_SHOWN, _V_PREV_COUNTS, _V_PREV_STONES, _V_SIG_WINDOW, _V_SIG_MUS,
 _V_SIG_GRANDE) = (observation.VIEW_INDEX[name] for name in (
    "hand_number", "mano", "hands", "phase", "rel", "slot", "resp_i", "ls_lance", "ls_outcome", "ls_stake",
    "ls_fallback", "ls_bettor", "ls_winner", "ls_last", "ls_said", "ls_raised", "decl", "mus_round", "disc_hist",
    "hand_stones", "scores", "games_won", "vacas_won", "prev_shown", "prev_counts", "prev_stones", "sig_window",
    "sig_mus", "sig_grande"))
_V_HAND_END = _V_HAND_STONES + 2       # ls_lance .. hand_stones: the entries every hand starts afresh


def _check_view_record(view_record: bool) -> bool:
    if not isinstance(view_record, (bool, np.bool_)):
        raise ValueError(f"view_record must be True or False, got {view_record!r}")
    return bool(view_record)


def _new_hand_view() -> array:
    """Entries ``_V_LANCE:_V_HAND_END`` of the view record when a hand is dealt: the four lance slots unplayed
    and silent, nothing declared, no discard round, no stone."""
    rec = np.zeros(1, dtype=observation.VIEW_DTYPE)
    r = rec[0]
    r["ls_lance"] = (GRANDE, CHICA, PARES, JUEGO)
    r["ls_outcome"] = Outcome.NOT_PLAYED
    for name in ("ls_bettor", "ls_winner", "ls_last", "ls_said", "decl"):
        r[name] = -1
    flat = array("i", rec.view(np.int32)[_V_LANCE:_V_HAND_END].tolist())
    names = [n for n, _, _, _ in observation.VIEW_FIELDS]
    assert names[names.index("ls_lance"):names.index("hand_stones") + 1] == [
        "ls_lance", "ls_outcome", "ls_stake", "ls_fallback", "ls_bettor", "ls_winner", "ls_last", "ls_said",
        "ls_raised", "decl", "mus_round", "disc_hist", "hand_stones"]
    return flat


assert array("i").itemsize == 4
_NEW_HAND_VIEW = _new_hand_view()
_NO_SIGNS = array("i", [-1, -1, -1, -1])
_NO_CARDS = array("i", [-1] * 16)
_NO_COUNTS = array("i", bytes(4 * 40))
_NUM_ACTIONS_SIGNALS = NUM_ACTIONS + NUM_SIGNS


class _SignalMasks(dict):
    """Legal masks of length 47 (signals on), one per legal tuple, made on first use."""

    def __missing__(self, legal: tuple[int, ...]) -> npt.NDArray[np.int8]:
        mask = np.zeros(_NUM_ACTIONS_SIGNALS, dtype=np.int8)
        mask[list(legal)] = 1
        mask.setflags(write=False)
        self[legal] = mask
        return mask


_SIGNAL_MASKS = _SignalMasks()


def _deck_list(deck: npt.ArrayLike) -> list[int]:
    """``deck`` as a list of ints if it is a permutation of the 40 card ids, else ValueError saying what is wrong."""
    try:
        arr = np.asarray(deck)
        if arr.dtype.kind not in "iu" or arr.ndim != 1:
            raise TypeError
        d = [int(c) for c in arr]
    except (TypeError, ValueError):
        raise ValueError(f"deck must be a flat sequence of 40 int card ids, got {deck!r}") from None
    if len(d) != NUM_CARDS or sorted(d) != list(range(NUM_CARDS)):
        missing = sorted(set(range(NUM_CARDS)) - set(d))
        dup = sorted({c for c in d if d.count(c) > 1})
        raise ValueError(
            f"deck must be a permutation of the 40 card ids 0..39; got {len(d)} ids"
            + (f", missing {missing}" if missing else "") + (f", repeated {dup}" if dup else "")
            + (f", out of range {sorted(c for c in d if not 0 <= c < NUM_CARDS)}"
               if any(not 0 <= c < NUM_CARDS for c in d) else ""))
    return d


def _permutation_of(order: object, cards: list[int], what: str) -> list[int]:
    """``order`` as a list of ints if it holds exactly ``cards`` (in any order), else ValueError naming ``what``."""
    try:
        new = [int(c) for c in order]                                   # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a sequence of int card ids, got {order!r}") from None
    if sorted(new) != sorted(cards):
        raise ValueError(f"{what} must hold exactly the cards {sorted(cards)} (in any order), got {new}")
    return new


def _card_source(cards: object) -> CardSource:
    if not (callable(getattr(cards, "deal", None)) and callable(getattr(cards, "reshuffle", None))):
        raise ValueError(f"cards must be a card source (shuffle.CardSource: deal(hand_number) and "
                         f"reshuffle(hand_number, reshuffle_number, cards)), got {cards!r}")
    return cards                                                        # type: ignore[return-value]


@cache
def _sign_legal(bits: int) -> tuple[tuple[int, ...], frozenset[int]]:
    """Legal action ids (sorted) and their set for a bitmask of legal tokens (``signals.legal_signs``)."""
    legal = tuple(SIGNAL_BASE + t for t in range(NUM_SIGNS) if bits >> t & 1)
    return legal, frozenset(legal)


def _sign_counters(events: list[ActionEvent]) -> list[int]:
    """For each action of a hand, the window counter ``w`` of its sign window if it is a sign decision, else
    -1: signs before the first mus-call round have w = 0, after k discard rounds w = k, after the cut
    (NO_MUS) the grande window's w = rounds + 1."""
    out = []
    rounds = discards = 0
    w = 0
    for e in events:
        a = e.action
        if a >= SIGNAL_BASE:
            out.append(w)
            continue
        out.append(-1)
        if DISCARD_BASE <= a < DISCARD_BASE + 16:
            discards += 1
            if discards == 4:
                rounds += 1
                discards = 0
                w = rounds
        elif a == _NO_MUS_A:
            w = rounds + 1
    return out


@lru_cache(maxsize=2)
def _variant_lists(kings: int) -> tuple:
    """Plain-Python copies of the tables of a variant (list lookups are the scalar engine's hot path)."""
    t = get_tables(kings)
    return ([int(r) for r in t.rank_of_card], [slot_order_key(c, kings) for c in range(NUM_CARDS)],
            t.strength.tolist(), t.index_of_desc_ranks, t.pares_bonus.tolist(), t.juego_bonus.tolist())


@cache
def _responders(elig: tuple[int, ...], last: int) -> tuple[int, ...]:
    """Relative seats answering a bet by relative seat ``last``: eligible seats of the other team (odd
    distance from ``last``) in cyclic turn order after it (RULES.md §5.3)."""
    return tuple(p for p in ((last + 1) % 4, (last + 2) % 4, (last + 3) % 4) if p in elig and (p - last) % 2 == 1)


class ActionEvent(NamedTuple):
    """One action of a hand: absolute seat, action id, stones for ENVIDO (else 0), and whether the engine
    made it (the automatic declarations)."""

    seat: int
    action: int
    amount: int = 0
    auto: bool = False


class ScoreEvent(NamedTuple):
    """Stones added to a team: lance name, team, stones, and why ("refused", "stake", "en paso",
    "bonus" or a combination such as "stake+bonus")."""

    lance: str
    team: int
    stones: int
    reason: str


@dataclass(frozen=True)
class HandRecord:
    """One finished hand, as kept in :attr:`MusGame.hand_log`.

    Attributes:
        hand_number: index of the hand in the episode (0 = first).
        game_number: index of the game (juego) the hand belongs to.
        mano: absolute seat of the mano.
        deck: the 40 card ids as dealt (``deck[i]``, i < 16, went to relative seat ``i % 4``).
        seed: the game's seed (drives reshuffles), so ``MusGame.from_deck`` can replay the hand.
        scores_before: (team 0, team 1) when the hand started.
        scores_after: (team 0, team 1) when it ended (the game's final score if it ended the game).
        initial_hands, final_hands: 4 tuples of card ids by absolute seat, in hand-slot order.
        actions: every action with its seat, in order (automatic declarations flagged ``auto``); with
            signals on the sign decisions too, every token (hidden information, as the hands are).
        mus_rounds: completed discard rounds.
        discards: per mus round, the number of cards discarded by each absolute seat.
        stones: every addition to the score, in scoring order (refusals first, then the showdown).
        outcomes: outcome name of the four lance slots (slot 3 is juego or punto).
        fourth_lance: "juego" or "punto".
        game_winner: the team that won the game in this hand, or None.
        shown: whether the hands were revealed (a showdown or an accepted órdago); a hand that ended
            the game on refusal stones during the betting shows nothing.
        by_ordago: whether an accepted órdago ended the game in this hand.
    """

    hand_number: int
    game_number: int
    mano: int
    deck: tuple[int, ...]
    seed: int
    scores_before: tuple[int, int]
    scores_after: tuple[int, int]
    initial_hands: tuple[tuple[int, ...], ...]
    final_hands: tuple[tuple[int, ...], ...]
    actions: tuple[ActionEvent, ...]
    mus_rounds: int
    discards: tuple[tuple[int, int, int, int], ...]
    stones: tuple[ScoreEvent, ...]
    outcomes: tuple[str, ...]
    fourth_lance: str
    game_winner: int | None
    shown: bool
    by_ordago: bool = False

    def stone_difference(self, target: int) -> int:
        """Team 0's stones minus team 1's in this hand: the ``reward="stones"`` signal of the environments.

        Stones are every addition of the hand (refusals and showdown). A hand that ended the game with an
        accepted órdago also credits the winning team with the stones it still lacked to reach ``target``
        (an órdago stakes "the whole game", RULES.md §5.5), so winning one is worth as much as reaching
        the target by stones from the same score.
        """
        s = [self.scores_after[0] - self.scores_before[0], self.scores_after[1] - self.scores_before[1]]
        if self.by_ordago and self.game_winner is not None:
            s[self.game_winner] += max(0, target - self.scores_after[self.game_winner])
        return s[0] - s[1]

    def stones_by_lance(self) -> dict[str, tuple[int, int]]:
        """Stones of each team per lance name (refusals and showdown together)."""
        out = {name: [0, 0] for name in ("grande", "chica", "pares", self.fourth_lance)}
        for ev in self.stones:
            out.setdefault(ev.lance, [0, 0])[ev.team] += ev.stones
        return {k: (v[0], v[1]) for k, v in out.items()}


@dataclass(frozen=True)
class GameResult:
    """A finished game (juego): its number, winner, final scores and whether an órdago decided it."""

    game_number: int
    winner: int
    scores: tuple[int, int]
    by_ordago: bool
    last_hand: int


class LanceRecord(NamedTuple):
    """Betting record of one lance slot of the current hand, as :meth:`MusGame.lance_state` gives it (public:
    everything in it was said aloud at the table)."""

    lance: int                     #: GRANDE, CHICA, PARES, JUEGO or PUNTO
    outcome: int                   #: an :class:`Outcome`
    stake: int                     #: live or final stake; ORDAGO_STAKE once an órdago is live
    fallback: int                  #: stones the bettor gets if refused
    bettor: int                    #: team of the last bettor or raiser, -1 before any bet
    winner: int                    #: team known to have won the lance (refused, uncontested, órdago), else -1
    history: tuple[tuple[int, int, int], ...]   #: (absolute seat, action id, amount) in order


@dataclass
class _LanceState:
    """Betting record of one lance slot of the current hand, as the engine updates it (:class:`LanceRecord` is
    its read-only view)."""

    lance: int = GRANDE
    outcome: int = Outcome.NOT_PLAYED
    stake: int = 0                 # live or final stake; ORDAGO_STAKE once an órdago is live
    fallback: int = 0
    bettor: int = -1               # team of the last bettor/raiser, -1 before any bet
    winner: int = -1               # team that won the lance (known for refused/uncontested/órdago)
    history: list[tuple[int, int, int]] = field(default_factory=list)   # (abs seat, action id, amount)


class MusGame:
    """One episode of Mus under a :class:`MusConfig` (RULES.md), stepped one decision at a time.

    Args:
        config: the ruleset; ``MusConfig()`` is RULES.md §1.1.
        seed: drives every deal and reshuffle (and the first mano when ``first_mano="random"``), an int in
            ``0..2**64 - 1``; None draws a fresh one (kept in :attr:`seed`).
        cards: where the cards come from (:class:`~mus_env.shuffle.CardSource`): None, the default, is
            ``SeededCards(seed)`` (:func:`~mus_env.shuffle.deal_decks` and :func:`~mus_env.shuffle.reshuffle_order`);
            a caller that chooses whole decks and reshuffles passes its own (one that chooses each card passes
            ``explicit_chance=True`` instead, as :mod:`mus_env.adapters.openspiel` does for its chance nodes). The
            engine checks every deck and reshuffle such a source returns. The seed still
            drives the first mano and the señas' interceptions. Hand records keep each deck as dealt, so
            ``MusGame.from_deck`` replays a hand's deal whatever the source, but its reshuffles only for the default.
        explicit_chance: False (the default): the engine applies every chance event itself, from ``cards``. True:
            it stops at each one (:attr:`chance_pending`; no seat acts, :attr:`current_player` is -1) until
            :meth:`apply_chance` gives its outcome, one of :meth:`chance_outcomes`: the first mano (with
            ``first_mano="random"``), each of the 16 cards of a deal, each replacement card (from the stock, and
            once it runs out from the reshuffled discards, RULES.md §3.4). Not with ``cards``. The seed then drives
            the señas' interceptions only.
        view_record: keep :attr:`view_state`, the state the compiled observation writer reads, up to date as the
            game is played (the PettingZoo and Gymnasium envs make their games so). False, the default, skips it:
            the game plays faster, and :attr:`view_state` refuses.

    With signals on (``config.signals`` "truthful" or "free") the game has sign decisions (RULES.md §8,
    :mod:`mus_env.signals`), 47 action ids and longer observations (``observation.obs_dim(config)``).
    """

    def __init__(self, config: MusConfig | None = None, seed: int | None = None,
                 cards: CardSource | None = None, explicit_chance: bool = False, view_record: bool = False) -> None:
        cfg = playable_config(config, signals=True)
        if not isinstance(explicit_chance, (bool, np.bool_)):
            raise ValueError(f"explicit_chance must be True or False, got {explicit_chance!r}")
        if explicit_chance and cards is not None:
            raise ValueError("explicit_chance=True takes no card source (cards): apply_chance gives every card")
        self._init_common(cfg, random_seed() if seed is None else check_seed(seed), cards, bool(explicit_chance),
                          _check_view_record(view_record))
        if cfg.first_mano != "random":
            self._start_hand(int(cfg.first_mano))
        elif self._explicit:
            self._new_hand_state(0)                     # nothing dealt, nobody mano yet
            self._pend("mano")
        else:
            self._start_hand(int(first_mano(self.seed)))

    @classmethod
    def from_deck(cls, deck: npt.ArrayLike, mano: int = 0, scores: tuple[int, int] = (0, 0),
                  config: MusConfig | None = None, seed: int = 0, view_record: bool = False) -> MusGame:
        """A game whose first hand is dealt from ``deck`` (for tests, records and duplicate deals).

        Args:
            deck: a permutation of the 40 card ids. ``deck[i]`` for i < 16 goes to relative seat ``i % 4``
                (relative 0 = mano); the stock is ``deck[16:]``, drawn from the front.
            mano: absolute seat (0..3) of the mano of this hand.
            scores: (team 0, team 1) stones at the start, each in ``0 .. target - 1``.
            config: the ruleset.
            seed: drives reshuffles in this hand and every later hand (an int in ``0..2**64 - 1``).
            view_record: keep :attr:`view_state` up to date (as ``MusGame(..., view_record=True)``).

        Raises:
            ValueError: the deck is not a permutation of 0..39, the mano is not a seat, a score is
                negative, not an int, or already at the target, the seed is not in ``0..2**64 - 1``, or
                ``view_record`` is not a bool.
        """
        cfg = playable_config(config, signals=True)
        d = _deck_list(deck)
        if isinstance(mano, bool) or not isinstance(mano, (int, np.integer)) or not 0 <= int(mano) <= 3:
            raise ValueError(f"mano must be a seat 0, 1, 2 or 3, got {mano!r}")
        try:
            s0, s1 = scores
        except (TypeError, ValueError):
            raise ValueError(f"scores must be a pair (team 0, team 1) of ints, got {scores!r}") from None
        for s in (s0, s1):
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
                raise ValueError(f"scores must be a pair of ints, got {scores!r}")
            if s < 0:
                raise ValueError(f"scores cannot be negative, got {scores!r}")
            if s >= cfg.target:
                raise ValueError(
                    f"scores must be below the target {cfg.target} (the game would be over), got {scores!r}")
        game = cls.__new__(cls)
        game._init_common(cfg, check_seed(seed), view_record=_check_view_record(view_record))
        game._scores = [int(s0), int(s1)]
        game._start_hand(int(mano), d)
        return game

    # ------------------------------------------------------------------------------------------------
    # state set-up
    def _init_common(self, cfg: MusConfig, seed: int, cards: CardSource | None = None,
                     explicit: bool = False, view_record: bool = False) -> None:
        self.config = cfg
        self.seed = seed
        self._explicit = explicit                       # chance events wait for apply_chance
        self._chance: str | None = None                 # the pending chance event's kind (CHANCE_EVENTS), or None
        self._custom_cards = cards is not None          # a source other than the seeded one: its cards are checked
        self._cards = SeededCards(seed) if cards is None else _card_source(cards)
        t = get_tables(cfg.kings)
        self._tables = t
        (self._rank, self._slot_key, self._strength, self._index, self._pares_bonus,
         self._juego_bonus) = _variant_lists(cfg.kings)
        self._bet_sizes = cfg.bet_sizes
        self._discard_legal = _DISCARD_ZERO if cfg.allow_zero_discard else _DISCARD
        self._scores = [0, 0]
        self._games_won = [0, 0]
        self._vacas_won = [0, 0]
        self._game_number = 0
        self._hand_number = 0
        self._winner: int | None = None
        self.hand_log: list[HandRecord] = []
        self.game_results: list[GameResult] = []
        self._last_hand_stones: tuple[int, int] = (0, 0)
        # señas (RULES.md §8): the windows and tokens stay empty with signals off
        self._signals = cfg.signals != "off"
        self._num_actions = _NUM_ACTIONS_SIGNALS if self._signals else NUM_ACTIONS
        self._mask_table = _SIGNAL_MASKS if self._signals else _MASKS
        self._sign_window = -1            # kind of the pending window (WINDOW_MUS / WINDOW_GRANDE), -1 none
        self._sign_w = -1                 # its window counter w (signals.intercept_uniform)
        # per absolute signer: token of the latest mus window / of the grande window (-1 none yet), and the
        # bitmask of the absolute observers that see it (signals.sees_sign)
        self._signs_mus = [-1, -1, -1, -1]
        self._seen_mus = [0, 0, 0, 0]
        self._signs_grande = [-1, -1, -1, -1]
        self._seen_grande = [0, 0, 0, 0]
        # The view record (observation.VIEW_FIELDS, read by view_state), as a flat int32 array kept up to date by
        # the handlers below wherever what it records changes (a Python array: its items are set fast); None for a
        # game made without view_record=True, whose handlers then skip it.
        if not view_record:
            self._view = None
            return
        self._view = v = array("i", bytes(4 * observation.VIEW_SIZE))
        memoryview(v).cast("B")[0:8] = seed.to_bytes(8, sys.byteorder)        # game_seeds, a uint64
        v[_V_SIG_WINDOW] = -1
        v[_V_SIG_MUS:_V_SIG_MUS + 4] = _NO_SIGNS
        v[_V_SIG_GRANDE:_V_SIG_GRANDE + 4] = _NO_SIGNS

    def _start_hand(self, mano: int, deck: list[int] | None = None) -> None:
        """A new hand with ``mano``: its deal (``deck``, else the card source's, else chance events), then the mus
        phase (RULES.md §2.5, §3.1)."""
        self._new_hand_state(mano)
        if deck is None:
            if self._explicit:
                self._pend("deal")
                return
            deck = self._deal(self._hand_number)
        self._deal_cards(deck[:16], deck[16:])

    def _new_hand_state(self, mano: int) -> None:
        """The state of a hand of ``mano`` before its first card is dealt."""
        self._deck: tuple[int, ...] = ()
        self._mano = mano
        self._hands: list[list[int]] = [[], [], [], []]
        self._dealt: list[int] = []                      # the cards of the deal so far, in order
        self._initial_hands: tuple[tuple[int, ...], ...] = ((), (), (), ())
        self._stock: list[int] = []
        self._stock_pos = 0
        self._serve_rel = -1                             # relative seat being served, -1 before the first
        self._serve_need = 0                             # cards still owed to it
        self._pile: list[int] = []
        self._round_discards: list[list[int]] = [[], [], [], []]   # by relative seat, current round
        self._discard_counts: list[tuple[int, int, int, int]] = []  # per round, by absolute seat
        self._mus_round = 0
        self._reshuffles = 0
        self._scores_before = (self._scores[0], self._scores[1])
        self._hand_stones = [0, 0]
        self._events: list[ActionEvent] = []
        self._score_events: list[ScoreEvent] = []
        self._lances = [_LanceState(GRANDE), _LanceState(CHICA), _LanceState(PARES), _LanceState(JUEGO)]
        self._slot = -1                   # lance slot being bet (0..3), -1 during the mus phase
        self._declared_pares: list[int] = [-1, -1, -1, -1]  # by relative seat: 1 yes, 0 no, -1 not yet
        self._declared_juego: list[int] = [-1, -1, -1, -1]
        self._shown = False
        self._phase = Phase.MUS_CALL
        v = self._view
        if v is not None:
            v[_V_HAND_NUMBER] = self._hand_number
            v[_V_MANO] = mano
            v[_V_HANDS:_V_HANDS + 16] = _NO_CARDS
            v[_V_SLOT] = -1
            v[_V_LANCE:_V_HAND_END] = _NEW_HAND_VIEW
            v[_V_SCORES], v[_V_SCORES + 1] = self._scores
            v[_V_GAMES_WON], v[_V_GAMES_WON + 1] = self._games_won
            v[_V_VACAS_WON], v[_V_VACAS_WON + 1] = self._vacas_won
        if self._signals:
            self._signs_mus = [-1, -1, -1, -1]
            self._seen_mus = [0, 0, 0, 0]
            self._signs_grande = [-1, -1, -1, -1]
            self._seen_grande = [0, 0, 0, 0]
            if v is not None:
                v[_V_SIG_GRANDE:_V_SIG_GRANDE + 4] = _NO_SIGNS

    def _deal_cards(self, cards: list[int], stock: list[int] | None = None) -> None:
        """Deal ``cards`` one at a time, from the seat after the last one dealt (the mano first, RULES.md §2.5): the
        whole deal with its ``stock`` (``deck[16:]``) from a deck, or one chance outcome. With the 16th card the
        stock is what is left (sorted, under explicit chance) and the mus phase opens."""
        hands, dealt, m = self._hands, self._dealt, self._mano
        for c in cards:
            hands[(m + len(dealt)) % 4].append(c)
            dealt.append(c)
        key = self._slot_key.__getitem__
        for h in hands:
            h.sort(key=key)
        if self._view is not None:
            self._view_hands()
        if len(dealt) < 16:
            self._pend("deal")
            return
        if stock is None:
            held = set(dealt)
            stock = [c for c in range(NUM_CARDS) if c not in held]
        self._deck = tuple(dealt) + tuple(stock)
        self._initial_hands = tuple(tuple(h) for h in hands)
        self._stock = list(stock)
        self._stock_pos = 0
        if self._signals:
            self._open_window(WINDOW_MUS)
        else:
            self._set_mus_call(0)

    # ------------------------------------------------------------------------------------------------
    # public read-only state
    @property
    def current_player(self) -> int:
        """Absolute seat to act, -1 once the game is over (and while a chance event is pending:
        :attr:`chance_pending`)."""
        return self._cur

    @property
    def phase(self) -> int:
        """Current decision kind (:class:`Phase`)."""
        return self._phase

    @property
    def phase_name(self) -> str:
        """Readable phase, e.g. ``"grande: response"``; ``"seña (mus window)"`` or ``"seña (grande window)"``
        during a sign decision."""
        if self._phase in (Phase.BET_OPEN, Phase.BET_RESPOND, Phase.BET_CONFIRM):
            return f"{LANCE_NAMES[self._lances[self._slot].lance]}: {PHASE_NAMES[self._phase]}"
        if self._phase == Phase.DECLARE:
            return f"{'pares' if self._slot == PARES else 'juego'}: declaration"
        if self._chance is not None:
            return f"{_CHANCE_NAMES[self._chance]} (chance)"
        if self._phase == Phase.SIGNAL:
            return f"{SIGNAL_PHASE_NAME} ({WINDOW_NAMES[self._sign_window]} window)"
        return PHASE_NAMES[self._phase]

    @property
    def lance(self) -> int:
        """Lance being bet (GRANDE, CHICA, PARES, JUEGO or PUNTO), or -1 in the mus phase, during a sign
        decision (the grande window comes before grande is opened) and once the game is over."""
        if self._phase in (Phase.MUS_CALL, Phase.DISCARD, Phase.GAME_OVER, Phase.SIGNAL):
            return -1
        return self._lances[self._slot].lance

    @property
    def num_actions(self) -> int:
        """Length of the action space: 31, or 47 with signals on (``actions.num_actions(config)``)."""
        return self._num_actions

    @property
    def sign_window(self) -> int | None:
        """Kind of the pending sign window (``signals.WINDOW_MUS`` or ``WINDOW_GRANDE``) while a sign decision
        is to be made, else None (always None with signals off)."""
        return self._sign_window if self._sign_window >= 0 else None

    @property
    def sign_window_counter(self) -> int | None:
        """Window counter ``w`` of the pending sign window (``signals.intercept_uniform``): the discard rounds
        completed when a mus window opened, that number + 1 for the grande window; None when none is pending."""
        return self._sign_w if self._sign_window >= 0 else None

    def signs_seen(self, seat: int) -> dict[str, dict[int, int]]:
        """The sign tokens absolute ``seat`` has seen in the current hand (its own, its partner's, and those of
        opponents it intercepted), as ``{"mus": {signer: token}, "grande": {signer: token}}`` with absolute
        signer seats: ``"mus"`` is the latest mus window, ``"grande"`` the grande window (empty until signed).

        A seat is never told whether its own sign was seen, so the result does not depend on it. Once the
        game is over the last hand's signs stay. Empty dicts with signals off.
        """
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
            raise ValueError(f"seat must be an absolute seat 0, 1, 2 or 3, got {seat!r}")
        bit = 1 << int(seat)
        return {"mus": {s: t for s, t in enumerate(self._signs_mus) if t >= 0 and self._seen_mus[s] & bit},
                "grande": {s: t for s, t in enumerate(self._signs_grande) if t >= 0 and self._seen_grande[s] & bit}}

    def signs_made(self) -> dict[str, dict[int, int]]:
        """Every sign of the current hand, seen or not, as :meth:`signs_seen` (hidden information: for tests,
        debugging and full-information tools; never give it to a player)."""
        return {"mus": {s: t for s, t in enumerate(self._signs_mus) if t >= 0},
                "grande": {s: t for s, t in enumerate(self._signs_grande) if t >= 0}}

    @property
    def is_over(self) -> bool:
        """True once the episode (one game by default; the match otherwise) has ended."""
        return self._phase == Phase.GAME_OVER

    @property
    def winner(self) -> int | None:
        """Team (0 or 1) that won the episode, None while it is running."""
        return self._winner

    @property
    def scores(self) -> tuple[int, int]:
        """(team 0, team 1) stones in the current game (the final ones once the episode is over)."""
        return (self._scores[0], self._scores[1])

    @property
    def games_won(self) -> tuple[int, int]:
        """Games won by each team in the current vaca."""
        return (self._games_won[0], self._games_won[1])

    @property
    def vacas_won(self) -> tuple[int, int]:
        """Vacas won by each team in the match."""
        return (self._vacas_won[0], self._vacas_won[1])

    @property
    def hand_number(self) -> int:
        """0 for the first hand; +1 each time a new hand is dealt."""
        return self._hand_number

    @property
    def game_number(self) -> int:
        """0 for the first game (juego) of the episode."""
        return self._game_number

    def table_rows(self, table: int | None = None) -> TableRows:
        """The current decision's identity for the agents that play by game (:class:`~mus_env.rows.TableRows`, one
        row): table ``table`` (default: the episode's seed modulo 2**63, so that every dealt game has its own),
        game 0 (this object is one episode), hand :attr:`hand_number`, seat :attr:`current_player`.

        Raises:
            ValueError: the game is over (nobody decides).
        """
        if self.is_over:
            raise ValueError("the game is over: no seat decides")
        return TableRows.one(self.seed % 2**63 if table is None else int(table), 0, self._hand_number,
                             self.current_player)

    @property
    def mano(self) -> int:
        """Absolute seat of the mano of the current hand (0 while the first mano is a pending chance event)."""
        return self._mano

    @property
    def hands(self) -> tuple[tuple[int, ...], ...]:
        """The four hands by absolute seat, each in hand-slot order (RULES.md §9.2)."""
        return tuple(tuple(h) for h in self._hands)

    @property
    def mus_round(self) -> int:
        """Completed discard rounds in the current hand."""
        return self._mus_round

    @property
    def deck(self) -> tuple[int, ...]:
        """The 40 card ids the current hand was dealt from (``deck[i]``, i < 16, went to relative seat ``i % 4``;
        the stock was ``deck[16:]``), as ``HandRecord.deck`` once the hand is over. Hidden information: for
        records, tests and debugging."""
        return self._deck

    @property
    def scores_before(self) -> tuple[int, int]:
        """(team 0, team 1) stones when the current hand started (``HandRecord.scores_before``)."""
        return self._scores_before

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return len(self._stock) - self._stock_pos

    @property
    def stock(self) -> tuple[int, ...]:
        """The stock, next card first (hidden information: for tests and debugging)."""
        return tuple(self._stock[self._stock_pos:])

    def arrange_stock(self, order: npt.ArrayLike) -> None:
        """Put the cards of the stock in ``order``, next card first (a permutation of :attr:`stock`).

        For callers that choose the replacement cards themselves: before the discard that makes the serve, they put
        the cards they chose first (``explicit_chance=True`` makes each card a chance event of the engine instead:
        :meth:`apply_chance`). Nothing else changes (``HandRecord.deck`` keeps the deck as dealt).

        Raises:
            ValueError: ``order`` is not a permutation of the stock; nothing is changed.
        """
        self._stock = _permutation_of(order, self._stock[self._stock_pos:], "arrange_stock's order")
        self._stock_pos = 0

    @property
    def discard_pile(self) -> tuple[int, ...]:
        """The discard pile (hidden information: for tests and debugging)."""
        return tuple(self._pile)

    @property
    def discard_counts(self) -> tuple[tuple[int, int, int, int], ...]:
        """Per completed mus round of this hand, the cards discarded by each absolute seat (public)."""
        return tuple(self._discard_counts)

    @property
    def hand_stones(self) -> tuple[int, int]:
        """Stones each team has scored so far in the current hand."""
        return (self._hand_stones[0], self._hand_stones[1])

    @property
    def last_hand_stones(self) -> tuple[int, int]:
        """Stones each team scored in the last finished hand (for the ``reward="stones"`` mode)."""
        return self._last_hand_stones

    @property
    def hand_actions(self) -> tuple[ActionEvent, ...]:
        """Actions of the current hand so far, automatic declarations included. They are public, except
        that with signals on the sign decisions are in it too, every token: a player's view is
        :meth:`hand_actions_seen`."""
        return tuple(self._events)

    def hand_actions_seen(self, seat: int) -> tuple[ActionEvent, ...]:
        """:attr:`hand_actions` as absolute ``seat`` knows them: without the sign decisions of opponents
        whose sign it did not intercept (``signals.sees_sign``). The same as :attr:`hand_actions` with
        signals off."""
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
            raise ValueError(f"seat must be an absolute seat 0, 1, 2 or 3, got {seat!r}")
        if not self._signals:
            return tuple(self._events)
        seat = int(seat)
        p = self.config.signal_intercept_p
        out = []
        for e, w in zip(self._events, _sign_counters(self._events), strict=True):
            if w < 0 or sees_sign(self.seed, self._hand_number, w, e.seat, seat, p):
                out.append(e)
        return tuple(out)

    @property
    def declarations(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(pares, juego) declarations by absolute seat: 1 yes, 0 no, -1 not declared yet."""
        m = self._mano                                  # relative seat r is absolute seat (r + m) % 4
        p, j = self._declared_pares, self._declared_juego
        return (tuple(p[-m:] + p[:-m]), tuple(j[-m:] + j[:-m])) if m else (tuple(p), tuple(j))

    def lance_state(self, slot: int) -> LanceRecord:
        """Betting record of lance slot 0..3 of the current hand (a read-only :class:`LanceRecord`)."""
        if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= slot <= 3:
            raise ValueError(f"slot must be a lance slot 0 (grande), 1 (chica), 2 (pares) or 3 (juego/punto), "
                             f"got {slot!r}")
        ls = self._lances[slot]
        return LanceRecord(ls.lance, ls.outcome, ls.stake, ls.fallback, ls.bettor, ls.winner, tuple(ls.history))

    @property
    def lance_records(self) -> tuple[LanceRecord, ...]:
        """The betting records of the four lance slots of the current hand (:meth:`lance_state` of 0..3)."""
        new = tuple.__new__                             # LanceRecord(...) without NamedTuple's Python-level __new__
        return tuple([new(LanceRecord, (ls.lance, ls.outcome, ls.stake, ls.fallback, ls.bettor, ls.winner,
                                        tuple(ls.history))) for ls in self._lances])

    @property
    def lance_slot(self) -> int:
        """Lance slot 0..3 (grande, chica, pares, juego or punto) the hand has reached: the one being bet or
        declared, the last one reached once the lances are over; 0 in the mus phase."""
        return self._slot

    @property
    def responder(self) -> int:
        """During betting: 0 in the opening round, 1 for the first responder of the answering team, 2 for the
        second (after the first has answered); -1 outside betting."""
        phase = self._phase
        if phase == Phase.BET_OPEN:
            return 0
        if phase == Phase.BET_RESPOND or phase == Phase.BET_CONFIRM:
            return self._resp_i + 1
        return -1

    def hand_of(self, seat: int) -> tuple[int, ...]:
        """The hand of absolute ``seat`` in hand-slot order (``hands[seat]`` without building the other three;
        hidden from the other seats)."""
        return tuple(self._hands[seat])

    @property
    def view_state(self) -> npt.NDArray[np.void]:
        """The state the seats' views are written from, as a read-only ``(1,)`` record array of
        ``observation.VIEW_DTYPE`` (its fields: ``observation.VIEW_FIELDS``): the four hands (hidden information:
        a seat's view reads only its own row) and what was said and shown at the table. It is a view of the game's
        own buffer, kept up to date as the game is played (it changes with every step). ``kernel.encode``, the
        batched engine's compiled writer, writes :meth:`observe`'s vector from it (``interfaces.CompiledObserver``).

        Only a game made with ``view_record=True`` keeps it (``mus_v0`` and ``MusGymEnv`` make theirs so).

        Raises:
            ValueError: the game was made without ``view_record=True``.
        """
        if self._view is None:
            raise ValueError("this game keeps no view record: make it with MusGame(..., view_record=True) (or "
                             "MusGame.from_deck(..., view_record=True)) to read view_state")
        rec = np.frombuffer(self._view, dtype=observation.VIEW_DTYPE)
        rec.flags.writeable = False
        return rec

    @property
    def betting(self) -> dict[str, int] | None:
        """Live betting state of the current lance, or None outside betting.

        Keys: ``lance``, ``stake`` (``ORDAGO_STAKE`` for a live órdago; 0 before any bet), ``fallback``,
        ``bettor`` (team, -1 before any bet), ``last`` (absolute seat of the last bettor, -1), ``responder``
        (1 or 2: which responder of the team is acting, 0 in the opening round).
        """
        if self._phase not in (Phase.BET_OPEN, Phase.BET_RESPOND, Phase.BET_CONFIRM):
            return None
        ls = self._lances[self._slot]
        return {"lance": ls.lance, "stake": ls.stake, "fallback": ls.fallback, "bettor": ls.bettor,
                "last": -1 if self._phase == Phase.BET_OPEN else (self._last + self._mano) % 4,
                "responder": 0 if self._phase == Phase.BET_OPEN else self._resp_i + 1}

    def observe(self, seat: int, out: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float32]:
        """``(OBS_DIM,)`` float32: the private view of absolute ``seat`` (the pieces of :mod:`mus_env.observation`);
        ``(observation.obs_dim(config),)`` with signals on. Nothing hidden from ``seat`` is used.

        Args:
            seat: observing absolute seat 0..3.
            out: optional float32 array of ``observation.obs_dim(config)`` entries to fill (zeroed first)
                and return, instead of a new array.

        Raises:
            ValueError: ``seat`` is not a seat 0..3, or ``out`` has the wrong length for the config.
        """
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
            raise ValueError(f"seat must be an absolute seat 0, 1, 2 or 3, got {seat!r}")
        return observation.write(self, int(seat), out)

    def state(self) -> npt.NDArray[np.float32]:
        """``(STATE_DIM,)`` float32 full-information vector (all four hands), for centralised critics;
        ``(observation.state_dim(config),)`` with signals on."""
        return observation.encode_state(self)

    # ------------------------------------------------------------------------------------------------
    # the observation (mus_env.observation's pieces; kernel.encode is the batched engine's transcription)
    # ------------------------------------------------------------------------------------------------
    # acting
    def legal_actions(self) -> list[int]:
        """Sorted legal action ids for :attr:`current_player` (empty once the game is over)."""
        return list(self._legal)

    def legal_action_mask(self) -> npt.NDArray[np.int8]:
        """``(NUM_ACTIONS,)`` int8, 1 where the action is legal; ``(47,)`` with signals on
        (``actions.num_actions(config)``)."""
        return self._mask_table[self._legal].copy()

    def step(self, action: int) -> None:
        """Apply ``action`` for :attr:`current_player`.

        With signals on, a sign decision (phase :attr:`Phase.SIGNAL`) takes only sign ids
        ``SIGNAL_BASE + token`` among :meth:`legal_actions`, and sign ids are illegal anywhere else.

        Raises:
            IllegalActionError: the action is not an int, out of range, or not legal now (including any
                action once the game is over); the message names the action, the seat, the phase and the
                legal actions; nothing is changed.
        """
        if action.__class__ is not int:
            action = self._coerce(action)
        if action not in self._legal_set:
            raise self._illegal(action)
        self._dispatch[self._phase](self, action, 0)

    def check_action(self, action: object) -> int:
        """``action`` as an int if :meth:`step` would take it now; else the :class:`IllegalActionError` that
        :meth:`step` would raise (naming the action, the seat, the phase and the legal actions). Changes nothing.
        """
        if action.__class__ is not int:
            action = self._coerce(action)
        if action not in self._legal_set:
            raise self._illegal(action)
        return action

    def step_envido(self, amount: int) -> None:
        """Bet or raise by any number of stones ``amount >= 2`` (the ENVIDO actions offer ``bet_sizes``).

        Legal exactly when an ENVIDO action is; errors as in :meth:`step`.
        """
        if self._phase == Phase.GAME_OVER:
            raise self._illegal(ENVIDO_BASE)
        if isinstance(amount, bool) or not isinstance(amount, (int, np.integer)) or not 2 <= amount <= MAX_BET:
            raise IllegalActionError(f"an envido amount must be an int in 2..{MAX_BET} (RULES.md §5.1; "
                                     f"config.MAX_BET), got {amount!r}")
        if ENVIDO_BASE not in self._legal_set:
            raise self._illegal(ENVIDO_BASE, what=f"envido {amount}")
        self._dispatch[self._phase](self, ENVIDO_BASE, int(amount))

    def _coerce(self, action: object) -> int:
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            return int(action)
        raise IllegalActionError(
            f"action must be an int action id 0..{self._num_actions - 1}, got {action!r} ({type(action).__name__}); "
            f"seat {self._cur}, phase {self.phase_name}; legal actions: {self._legal_string()}")

    def _legal_string(self) -> str:
        return ", ".join(f"{a} {action_to_string(a, self.config)}" for a in self._legal) or "none"

    def _illegal(self, action: int, what: str | None = None) -> Exception:
        if self._phase == Phase.GAME_OVER:
            return IllegalActionError(
                f"the game is over (team {self._winner} won, scores {self.scores}); no action is legal. "
                "Start a new MusGame (or reset the environment).")
        if what is None:
            what = (f"{action} ({action_to_string(action, self.config)})" if 0 <= action < self._num_actions
                    else f"{action} (out of range 0..{self._num_actions - 1})")
        if self._chance is not None:
            kind, seat = self.chance_event                             # type: ignore[misc]
            return IllegalActionError(
                f"action {what} is not legal: a chance event is pending ({_CHANCE_NAMES[kind]}"
                + (f" to seat {seat}" if seat >= 0 else "") + "); apply_chance(outcome) comes first, "
                "chance_outcomes() lists the outcomes")
        return IllegalActionError(
            f"action {what} is not legal for seat {self._cur} in phase {self.phase_name}; "
            f"legal actions: {self._legal_string()}")

    # ------------------------------------------------------------------------------------------------
    # decision set-up helpers
    def _set_decision(self, phase: int, rel: int, legal: tuple[int, ...]) -> None:
        self._phase = phase
        self._rel = rel
        self._cur = (self._mano + rel) % 4
        self._legal = legal
        self._legal_set = _LEGAL_SETS[legal]
        v = self._view
        if v is not None:
            v[_V_PHASE] = phase
            v[_V_REL] = rel

    def _set_mus_call(self, rel: int) -> None:
        cap = self.config.max_mus_rounds
        legal = _FORCED_NO_MUS if cap is not None and self._mus_round >= cap else _MUS
        self._set_decision(Phase.MUS_CALL, rel, legal)

    # ------------------------------------------------------------------------------------------------
    # señas (RULES.md §8, mus_env.signals)
    def _open_window(self, kind: int) -> None:
        """Open a sign window of ``kind`` (WINDOW_MUS or WINDOW_GRANDE): S0..S3 will each sign once."""
        self._sign_window = kind
        v = self._view
        if v is not None:
            v[_V_SIG_WINDOW] = kind
        if kind == WINDOW_MUS:
            self._sign_w = self._mus_round
            self._signs_mus = [-1, -1, -1, -1]
            self._seen_mus = [0, 0, 0, 0]
            if v is not None:
                v[_V_SIG_MUS:_V_SIG_MUS + 4] = _NO_SIGNS
        else:
            self._sign_w = self._mus_round + 1
        self._set_sign_decision(0)

    def _set_sign_decision(self, rel: int) -> None:
        seat = (self._mano + rel) % 4
        self._phase = Phase.SIGNAL
        self._rel = rel
        self._cur = seat
        v = self._view
        if v is not None:
            v[_V_PHASE] = Phase.SIGNAL
            v[_V_REL] = rel
        self._legal, self._legal_set = _sign_legal(legal_signs(self._hands[seat], self.config, self._sign_window))

    def _on_sign(self, action: int, _amount: int) -> None:
        seat = self._cur
        self._events.append(ActionEvent(seat, action))
        kind = self._sign_window
        tokens, seen = ((self._signs_mus, self._seen_mus) if kind == WINDOW_MUS
                        else (self._signs_grande, self._seen_grande))
        tokens[seat] = action - SIGNAL_BASE
        v = self._view
        if v is not None:
            v[(_V_SIG_MUS if kind == WINDOW_MUS else _V_SIG_GRANDE) + seat] = action - SIGNAL_BASE
        p = self.config.signal_intercept_p
        seen[seat] = sum(1 << o for o in range(4)
                         if sees_sign(self.seed, self._hand_number, self._sign_w, seat, o, p))
        if self._rel < 3:
            self._set_sign_decision(self._rel + 1)
            return
        self._sign_window = -1
        self._sign_w = -1
        if v is not None:
            v[_V_SIG_WINDOW] = -1
        if kind == WINDOW_MUS:
            self._set_mus_call(0)
        else:
            self._begin_lances()

    # ------------------------------------------------------------------------------------------------
    # mus phase (RULES.md §3)
    def _on_mus_call(self, action: int, _amount: int) -> None:
        self._events.append(ActionEvent(self._cur, action))
        if action == _NO_MUS_A:
            if self._signals:
                self._open_window(WINDOW_GRANDE)
            else:
                self._begin_lances()
        elif self._rel < 3:
            self._set_mus_call(self._rel + 1)
        else:
            self._round_discards = [[], [], [], []]
            self._set_decision(Phase.DISCARD, 0, self._discard_legal)

    def _on_discard(self, action: int, _amount: int) -> None:
        self._events.append(ActionEvent(self._cur, action))
        mask = action - DISCARD_BASE
        hand = self._hands[self._cur]
        out = [c for i, c in enumerate(hand) if mask >> i & 1]
        if out:
            kept = self._hands[self._cur] = [c for i, c in enumerate(hand) if not mask >> i & 1]
            self._pile.extend(out)
            if self._view is not None:
                o = _V_HANDS + 4 * self._cur
                self._view[o:o + 4] = array("i", kept + [-1] * len(out))
        self._round_discards[self._rel] = out
        if self._rel < 3:
            self._set_decision(Phase.DISCARD, self._rel + 1, self._discard_legal)
            return
        m = self._mano
        counts = tuple(len(self._round_discards[(s - m) % 4]) for s in range(4))
        self._discard_counts.append(counts)
        self._mus_round += 1
        v = self._view
        if v is not None:
            v[_V_MUS_ROUND] = self._mus_round
            v[_V_DISC + 4:_V_DISC + 12] = v[_V_DISC:_V_DISC + 8]          # one round older
            v[_V_DISC:_V_DISC + 4] = array("i", counts)
        self._serve_rel, self._serve_need = -1, 0
        self._serve()

    def _serve(self) -> None:
        """The postre serves S0..S3 their replacement cards from the top of the stock, reshuffling the discard pile
        when it runs out (RULES.md §3.3, §3.4), from where the serve stands: to the end, or under explicit chance
        up to the next card (a pending "draw"). Then the next mus-call round (or its sign window)."""
        rd = self._round_discards
        while True:
            need = self._serve_need
            if not need:
                rel = self._serve_rel + 1
                if rel == 4:
                    break
                self._serve_rel, self._serve_need = rel, len(rd[rel])
                continue
            left = len(self._stock) - self._stock_pos
            if not left:
                self._reshuffle(self._serve_rel)
                left = len(self._stock)
            if self._explicit:
                self._pend("draw")
                return
            self._give(self._stock[self._stock_pos:self._stock_pos + min(need, left)])
        if self._view is not None:
            self._view_hands()
        if self._signals:
            self._open_window(WINDOW_MUS)
        else:
            self._set_mus_call(0)

    def _view_hands(self) -> None:
        """The view record's hands: each seat's cards in slot order, -1 for a slot not dealt yet."""
        self._view[_V_HANDS:_V_HANDS + 16] = array("i", [c for h in self._hands for c in h + [-1] * (4 - len(h))])

    def _give(self, cards: list[int]) -> None:
        """The seat being served takes ``cards``, the next cards of the stock."""
        hand = self._hands[(self._mano + self._serve_rel) % 4]
        hand.extend(cards)
        hand.sort(key=self._slot_key.__getitem__)
        self._stock_pos += len(cards)
        self._serve_need -= len(cards)

    def _reshuffle(self, rel: int) -> None:
        """The stock ran out while relative seat ``rel`` is served (RULES.md §3.4): the discard pile, without the
        seat's own discards of this round (``exclude_own_discards``), is shuffled into the new stock (in the card
        source's order; sorted under explicit chance, where each card drawn is a chance event), those set aside
        are the new pile."""
        own = self._round_discards[rel] if self.config.exclude_own_discards else []
        own_set = set(own)
        others = [c for c in self._pile if c not in own_set]
        if self._explicit:
            self._stock = sorted(others)
        else:
            self._stock = self._cards.reshuffle(self._hand_number, self._reshuffles, others)
            if self._custom_cards:
                self._stock = _permutation_of(self._stock, others, f"the reshuffle of {self._cards!r}")
        self._stock_pos = 0
        self._pile = list(own)
        self._reshuffles += 1

    # ------------------------------------------------------------------------------------------------
    # chance events (explicit_chance=True)
    def _pend(self, kind: str) -> None:
        """Stop at a chance event of ``kind``: no seat acts until :meth:`apply_chance`."""
        self._chance = kind
        self._cur = -1
        self._rel = -1
        if self._view is not None:
            self._view[_V_REL] = -1
        self._legal = ()
        self._legal_set = _LEGAL_SETS[()]

    @property
    def explicit_chance(self) -> bool:
        """Whether the chance events wait for :meth:`apply_chance` (``MusGame(..., explicit_chance=True)``)."""
        return self._explicit

    @property
    def chance_pending(self) -> bool:
        """True while a chance event waits for :meth:`apply_chance` (only with ``explicit_chance=True``); no seat
        acts then (:attr:`current_player` is -1, :meth:`legal_actions` is empty)."""
        return self._chance is not None

    @property
    def chance_event(self) -> tuple[str, int] | None:
        """The pending chance event as (kind, absolute seat): ``("mano", -1)`` picks the mano of the first hand,
        ``("deal", seat)`` deals the next card of the deal to ``seat`` (16 of them, from the mano on, RULES.md
        §2.5), ``("draw", seat)`` serves ``seat`` its next replacement card (§3.3, §3.4); None when none is
        pending."""
        kind = self._chance
        if kind is None:
            return None
        if kind == "mano":
            return ("mano", -1)
        if kind == "deal":
            return ("deal", (self._mano + len(self._dealt)) % 4)
        return ("draw", (self._mano + self._serve_rel) % 4)

    def _chance_values(self) -> list[int]:
        kind = self._chance
        if kind == "mano":
            return [0, 1, 2, 3]
        if kind == "deal":
            held = set(self._dealt)
            return [c for c in range(NUM_CARDS) if c not in held]
        return sorted(self._stock[self._stock_pos:])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The outcomes of the pending chance event with their probabilities, uniform, in increasing order: the
        seats 0..3 for ``"mano"``; for ``"deal"`` the card ids not dealt yet; for ``"draw"`` the cards of the stock
        (after it ran out, of the discards reshuffled into it, RULES.md §3.4). Hidden information: the cards that
        can come are all those a seat has not seen, and more.

        Raises:
            IllegalChanceError: no chance event is pending.
        """
        if self._chance is None:
            raise IllegalChanceError(self._no_chance())
        values = self._chance_values()
        p = 1.0 / len(values)
        return [(v, p) for v in values]

    def apply_chance(self, outcome: int) -> None:
        """Apply ``outcome`` (a seat for ``"mano"``, a card id otherwise) to the pending chance event: the hand
        begins with that mano, the card goes to the seat :attr:`chance_event` names; play goes on to the next chance
        event or decision.

        Raises:
            IllegalChanceError: no chance event is pending, or ``outcome`` is not one of :meth:`chance_outcomes`
                (the message lists them); nothing is changed.
        """
        kind = self._chance
        if kind is None:
            raise IllegalChanceError(self._no_chance())
        values = self._chance_values()
        if (isinstance(outcome, (bool, np.bool_)) or not isinstance(outcome, (int, np.integer))
                or int(outcome) not in values):
            event = self.chance_event
            raise IllegalChanceError(
                f"chance outcome {outcome!r} is not possible for the pending {_CHANCE_NAMES[kind]} event"
                + (f" (to seat {event[1]})" if event and event[1] >= 0 else "")
                + f"; possible outcomes: {values}")
        outcome = int(outcome)
        self._chance = None
        if kind == "mano":
            self._start_hand(outcome)
        elif kind == "deal":
            self._deal_cards([outcome])
        else:
            stock, pos = self._stock, self._stock_pos
            i = stock.index(outcome, pos)
            stock[pos], stock[i] = stock[i], stock[pos]
            self._give([outcome])
            self._serve()

    def _no_chance(self) -> str:
        if not self._explicit:
            return ("no chance event is pending: this game applies its chance events itself "
                    "(MusGame(..., explicit_chance=True) stops at each one)")
        return f"no chance event is pending (seat {self._cur} to act, phase {self.phase_name})"

    # ------------------------------------------------------------------------------------------------
    # lances (RULES.md §4)
    def _begin_lances(self) -> None:
        """Evaluate the four hands once (table lookups) and open grande."""
        m, rank, index = self._mano, self._rank, self._index
        idx = []
        for rel in range(4):
            hand = self._hands[(m + rel) % 4]
            idx.append(index[(rank[hand[0]], rank[hand[1]], rank[hand[2]], rank[hand[3]])])
        self._idx = idx                                                   # by relative seat
        st = self._strength
        self._str = [[st[lance][i] for i in idx] for lance in range(5)]   # [lance][relative seat]
        self._pares_b = [self._pares_bonus[i] for i in idx]
        self._juego_b = [self._juego_bonus[i] for i in idx]
        if self.config.real31 != "off":
            for rel in range(4):
                if self._tables.juego_points[idx[rel]] == 31 and is_real31(
                        self._hands[(m + rel) % 4], self.config.real31, self.config.kings):
                    self._str[JUEGO][rel] = REAL31_JUEGO_RANK
        self._has_pares = [b > 0 for b in self._pares_b]
        self._has_juego = [b > 0 for b in self._juego_b]
        self._open_lance(0, GRANDE, (0, 1, 2, 3))

    def _open_lance(self, slot: int, lance: int, elig: tuple[int, ...]) -> None:
        self._slot = slot
        self._lances[slot].lance = lance
        v = self._view
        if v is not None:
            v[_V_SLOT] = slot
            v[_V_LANCE + slot] = lance
        self._elig = elig
        self._open_i = 0
        self._set_decision(Phase.BET_OPEN, elig[0], _OPEN)

    def _after_lance(self) -> None:
        """Move on from the lance slot that just closed (without ending the game)."""
        slot = self._slot
        if slot == 0:
            self._open_lance(1, CHICA, (0, 1, 2, 3))
        elif slot == 1:
            self._slot = 2
            if self._view is not None:
                self._view[_V_SLOT] = 2
            self._declare(2, 0)
        elif slot == 2:
            self._slot = 3
            if self._view is not None:
                self._view[_V_SLOT] = 3
            self._declare(3, 0)
        else:
            self._do_showdown()

    def _declare(self, slot: int, rel: int) -> None:
        """Forced pares (slot 2) or juego (slot 3) declarations from relative seat ``rel`` on (§4.3, §4.4)."""
        has = self._has_pares if slot == 2 else self._has_juego
        decl = self._declared_pares if slot == 2 else self._declared_juego
        si, no = (_PARES_SI, _PARES_NO) if slot == 2 else (_JUEGO_SI, _JUEGO_NO)
        if not self.config.auto_declare:
            self._set_decision(Phase.DECLARE, rel, (si,) if has[rel] else (no,))
            return
        m = self._mano
        o, v = _V_DECL + 4 * (slot - 2), self._view
        for p in range(rel, 4):
            decl[p] = 1 if has[p] else 0
            if v is not None:
                v[o + (m + p) % 4] = decl[p]
            self._events.append(ActionEvent((m + p) % 4, si if has[p] else no, 0, True))
        self._start_declared_lance(slot)

    def _on_declare(self, action: int, _amount: int) -> None:
        self._events.append(ActionEvent(self._cur, action))
        slot = self._slot
        decl = self._declared_pares if slot == 2 else self._declared_juego
        decl[self._rel] = 1 if action in (_PARES_SI, _JUEGO_SI) else 0
        if self._view is not None:
            self._view[_V_DECL + 4 * (slot - 2) + self._cur] = decl[self._rel]
        if self._rel < 3:
            self._declare(slot, self._rel + 1)
        else:
            self._start_declared_lance(slot)

    def _start_declared_lance(self, slot: int) -> None:
        has = self._has_pares if slot == 2 else self._has_juego
        ls = self._lances[slot]
        holders = tuple(p for p in range(4) if has[p])
        teams = {(p + self._mano) % 2 for p in holders}
        v = self._view
        if slot == 3 and not holders:
            ls.lance = PUNTO
            if v is not None:
                v[_V_LANCE + 3] = PUNTO
            if self.config.punto:
                self._open_lance(3, PUNTO, (0, 1, 2, 3))
            else:
                ls.outcome = Outcome.VOID
                if v is not None:
                    v[_V_OUTCOME + 3] = Outcome.VOID
                self._after_lance()
            return
        if not holders:
            ls.outcome = Outcome.VOID
            if v is not None:
                v[_V_OUTCOME + slot] = Outcome.VOID
            self._after_lance()
        elif len(teams) == 1:
            ls.outcome = Outcome.UNCONTESTED
            ls.winner = teams.pop()
            if v is not None:
                v[_V_OUTCOME + slot] = Outcome.UNCONTESTED
                v[_V_WINNER + slot] = ls.winner
            self._after_lance()
        else:
            self._open_lance(slot, ls.lance, holders if self.config.holders_only_speak else (0, 1, 2, 3))

    # ------------------------------------------------------------------------------------------------
    # betting (RULES.md §5, pseudo-code §9.4)
    def _amount(self, action: int, amount: int) -> int:
        return amount if amount else self._bet_sizes[action - ENVIDO_BASE]

    def _on_open(self, action: int, amount: int) -> None:
        ls = self._lances[self._slot]
        seat = self._cur
        if action == _PASO_A:
            self._events.append(ActionEvent(seat, action))
            ls.history.append((seat, action, 0))
            v = self._view
            if v is not None:
                v[_V_SAID + 4 * self._slot + seat] = _SAYS_PASO
            self._open_i += 1
            if self._open_i < len(self._elig):
                self._set_decision(Phase.BET_OPEN, self._elig[self._open_i], _OPEN)
            else:
                ls.outcome = Outcome.EN_PASO
                if v is not None:
                    v[_V_OUTCOME + self._slot] = Outcome.EN_PASO
                self._after_lance()
            return
        ls.fallback = 1
        self._bet(ls, action, amount, stake_before=0)

    def _bet(self, ls: _LanceState, action: int, amount: int, stake_before: int) -> None:
        """An opening bet, raise or órdago by the current seat; the other team's responders answer."""
        seat = self._cur
        if action == _ORDAGO_A:
            ls.stake = ORDAGO_STAKE
            amount = 0
        else:
            amount = self._amount(action, amount)
            ls.stake = stake_before + amount
        self._events.append(ActionEvent(seat, action, amount))
        ls.history.append((seat, action, amount))
        ls.bettor = seat % 2
        last = self._rel
        self._last = last
        self._resp = _responders(self._elig, last)
        self._resp_i = 0
        v = self._view
        if v is not None:
            slot = self._slot
            v[_V_STAKE + slot] = ls.stake
            v[_V_FALLBACK + slot] = ls.fallback
            v[_V_BETTOR + slot] = seat % 2
            v[_V_LAST + slot] = seat
            v[_V_SAID + 4 * slot + seat] = _SAYS_ORDAGO if action == _ORDAGO_A else _SAYS_ENVIDO
            v[_V_RAISED + 4 * slot + seat] += amount
            v[_V_RESP_I] = 0
        self._set_decision(Phase.BET_RESPOND, self._resp[0], _RESPOND_ORDAGO if ls.stake == ORDAGO_STAKE
                           else _RESPOND_CAPPED if self._capped(ls) else _RESPOND)

    def _capped(self, ls: _LanceState) -> bool:
        """Whether the live numeric stake has reached ``config.max_stake`` (an RL cap: no more raises)."""
        cap = self.config.max_stake
        return cap is not None and ls.stake >= cap

    def _on_respond(self, action: int, amount: int) -> None:
        ls = self._lances[self._slot]
        seat = self._cur
        has_r2 = self._resp_i == 0 and len(self._resp) > 1
        if action == _QUIERO_A:
            self._events.append(ActionEvent(seat, action))
            ls.history.append((seat, action, 0))
            v = self._view
            if v is not None:
                v[_V_SAID + 4 * self._slot + seat] = _SAYS_QUIERO
            if has_r2 and ls.stake != ORDAGO_STAKE and self.config.partner_override:
                self._resp_i = 1
                if v is not None:
                    v[_V_RESP_I] = 1
                self._set_decision(Phase.BET_CONFIRM, self._resp[1], _CONFIRM_CAPPED if self._capped(ls) else _CONFIRM)
            else:
                self._accept(ls)
        elif action == _NO_QUIERO_A:
            self._events.append(ActionEvent(seat, action))
            ls.history.append((seat, action, 0))
            v = self._view
            if v is not None:
                v[_V_SAID + 4 * self._slot + seat] = _SAYS_NO_QUIERO
            if has_r2:
                self._resp_i = 1
                if v is not None:
                    v[_V_RESP_I] = 1
                self._set_decision(Phase.BET_RESPOND, self._resp[1], self._legal)
            else:
                self._refuse(ls)
        else:
            self._raise(ls, action, amount)

    def _on_confirm(self, action: int, amount: int) -> None:
        ls = self._lances[self._slot]
        if action == _QUIERO_A:
            self._events.append(ActionEvent(self._cur, action))
            ls.history.append((self._cur, action, 0))
            if self._view is not None:
                self._view[_V_SAID + 4 * self._slot + self._cur] = _SAYS_QUIERO
            self._accept(ls)
        else:
            self._raise(ls, action, amount)

    def _raise(self, ls: _LanceState, action: int, amount: int) -> None:
        ls.fallback = ls.stake
        self._bet(ls, action, amount, stake_before=ls.stake)

    def _accept(self, ls: _LanceState) -> None:
        v = self._view
        if ls.stake != ORDAGO_STAKE:
            ls.outcome = Outcome.ACCEPTED
            if v is not None:
                v[_V_OUTCOME + self._slot] = Outcome.ACCEPTED
            self._after_lance()
            return
        # Accepted órdago: compare this lance only, among its eligible hands (§6.3).
        ls.outcome = Outcome.ORDAGO
        ls.winner = (self._lance_winner(ls.lance) + self._mano) % 2
        if v is not None:
            v[_V_OUTCOME + self._slot] = Outcome.ORDAGO
            v[_V_WINNER + self._slot] = ls.winner
        self._shown = True
        self._end_game(ls.winner, by_ordago=True)

    def _refuse(self, ls: _LanceState) -> None:
        ls.outcome = Outcome.REFUSED
        ls.winner = ls.bettor
        v = self._view
        if v is not None:
            v[_V_OUTCOME + self._slot] = Outcome.REFUSED
            v[_V_WINNER + self._slot] = ls.bettor
        if self._add_stones(LANCE_NAMES[ls.lance], ls.bettor, ls.fallback, "refused"):
            return
        self._after_lance()

    # ------------------------------------------------------------------------------------------------
    # scoring (RULES.md §6)
    def _add_stones(self, lance: str, team: int, stones: int, reason: str) -> bool:
        """Add stones to a team; True (and the game ended) if it reached the target (§6.1)."""
        self._scores[team] += stones
        self._hand_stones[team] += stones
        v = self._view
        if v is not None:
            v[_V_SCORES + team] = self._scores[team]
            v[_V_HAND_STONES + team] = self._hand_stones[team]
        self._score_events.append(ScoreEvent(lance, team, stones, reason))
        if self._scores[team] >= self.config.target:
            self._end_game(team, by_ordago=False)
            return True
        return False

    def _lance_winner(self, lance: int) -> int:
        """Relative seat with the best hand for ``lance`` among its eligible hands (mano wins ties)."""
        strength = self._str[lance]
        if lance == PARES:
            elig = [p for p in range(4) if self._has_pares[p]]
        elif lance == JUEGO:
            elig = [p for p in range(4) if self._has_juego[p]]
        else:
            elig = [0, 1, 2, 3]
        best = elig[0]
        for p in elig[1:]:
            if strength[p] > strength[best]:
                best = p
        return best

    def _do_showdown(self) -> None:
        """Count the four lances in order, checking the target after each (§6.2); then the next hand."""
        self._shown = True
        m = self._mano
        for slot, ls in enumerate(self._lances):
            if ls.outcome == Outcome.VOID:
                continue
            lance = ls.lance
            if ls.outcome in (Outcome.REFUSED, Outcome.UNCONTESTED):
                team, base = ls.winner, 0
            else:
                team = (self._lance_winner(lance) + m) % 2
                ls.winner = team
                if self._view is not None:
                    self._view[_V_WINNER + slot] = team
                if ls.outcome == Outcome.ACCEPTED:
                    base = ls.stake
                else:  # en paso
                    base = 1 if lance in (GRANDE, CHICA) else 0
            if lance == PARES:
                bonus = sum(self._pares_b[p] for p in range(4) if (p + m) % 2 == team)
            elif lance == JUEGO:
                bonus = sum(self._juego_bonus_of(p) for p in range(4) if (p + m) % 2 == team)
            elif lance == PUNTO:
                bonus = 1
            else:
                bonus = 0
            total = base + bonus
            if total:
                reason = "+".join(r for r, v in (
                    ({Outcome.ACCEPTED: "stake", Outcome.EN_PASO: "en paso"}.get(ls.outcome, ""), base),
                    ("bonus", bonus)) if v)
                if self._add_stones(LANCE_NAMES[lance], team, total, reason):
                    return
        self._finish_hand(game_winner=None)
        self._next_hand()

    def _juego_bonus_of(self, rel: int) -> int:
        if self._str[JUEGO][rel] == REAL31_JUEGO_RANK:
            return 3
        return self._juego_b[rel]

    # ------------------------------------------------------------------------------------------------
    # hands, games, vacas (RULES.md §7)
    def _finish_hand(self, game_winner: int | None, by_ordago: bool = False) -> None:
        self._last_hand_stones = (self._hand_stones[0], self._hand_stones[1])
        v = self._view
        if v is not None:
            v[_V_PREV_STONES], v[_V_PREV_STONES + 1] = self._hand_stones
            v[_V_PREV_SHOWN] = self._shown
            if self._shown:
                counts = [0] * 40
                rank = self._rank
                for s, hand in enumerate(self._hands):
                    for c in hand:
                        counts[10 * s + rank[c] - 1] += 1
                v[_V_PREV_COUNTS:_V_PREV_COUNTS + 40] = array("i", counts)
            else:
                v[_V_PREV_COUNTS:_V_PREV_COUNTS + 40] = _NO_COUNTS
        self.hand_log.append(HandRecord(
            hand_number=self._hand_number, game_number=self._game_number, mano=self._mano, deck=self._deck,
            seed=self.seed, scores_before=self._scores_before, scores_after=self.scores,
            initial_hands=self._initial_hands, final_hands=self.hands, actions=tuple(self._events),
            mus_rounds=self._mus_round, discards=tuple(self._discard_counts), stones=tuple(self._score_events),
            outcomes=tuple(OUTCOME_NAMES[ls.outcome] for ls in self._lances),
            fourth_lance=LANCE_NAMES[self._lances[3].lance], game_winner=game_winner, shown=self._shown,
            by_ordago=by_ordago))

    def _next_hand(self) -> None:
        self._hand_number += 1
        self._start_hand((self._mano + 1) % 4)

    def _deal(self, hand_number: int) -> list[int]:
        """The deck of hand ``hand_number`` from the card source (checked when it is not the seeded one)."""
        if not self._custom_cards:
            return self._cards.deal(hand_number)
        try:
            return _deck_list(self._cards.deal(hand_number))
        except ValueError as e:
            raise ValueError(f"the card source {self._cards!r} dealt a bad deck for hand {hand_number}: {e}") from None

    def _end_game(self, team: int, by_ordago: bool) -> None:
        self._finish_hand(game_winner=team, by_ordago=by_ordago)
        self.game_results.append(GameResult(self._game_number, team, self.scores, by_ordago, self._hand_number))
        cfg = self.config
        self._games_won[team] += 1
        if self._games_won[team] >= cfg.juegos_to_win_vaca:
            self._vacas_won[team] += 1
            self._games_won = [0, 0]
            if self._vacas_won[team] >= cfg.vacas_to_win_match:
                self._winner = team
                self._phase = Phase.GAME_OVER
                v = self._view
                if v is not None:
                    v[_V_PHASE] = Phase.GAME_OVER
                    v[_V_REL] = -1
                    v[_V_GAMES_WON], v[_V_GAMES_WON + 1] = self._games_won
                    v[_V_VACAS_WON], v[_V_VACAS_WON + 1] = self._vacas_won
                self._cur = -1
                self._rel = -1
                self._legal = ()
                self._legal_set = _LEGAL_SETS[()]
                return
        self._game_number += 1
        self._scores = [0, 0]
        self._next_hand()

    # ------------------------------------------------------------------------------------------------
    def clone(self, cards: CardSource | None = None) -> MusGame:
        """An independent copy (for search); finished hand records are shared, being immutable.

        Args:
            cards: the card source of the copy (:class:`~mus_env.shuffle.CardSource`); None shares this game's
                (the seeded default is stateless, so sharing it is harmless). An adapter whose source holds
                state of its own gives each copy its own source.
        """
        g = copy.copy(self)
        if cards is not None:
            if self._explicit:
                raise ValueError("a game with explicit_chance=True takes no card source (cards)")
            g._cards = _card_source(cards)
            g._custom_cards = True
        g._scores = list(self._scores)
        g._games_won = list(self._games_won)
        g._vacas_won = list(self._vacas_won)
        g.hand_log = list(self.hand_log)
        g.game_results = list(self.game_results)
        g._hands = [list(h) for h in self._hands]
        g._dealt = list(self._dealt)
        g._stock = list(self._stock)
        g._pile = list(self._pile)
        g._round_discards = [list(d) for d in self._round_discards]
        g._discard_counts = list(self._discard_counts)
        g._hand_stones = list(self._hand_stones)
        g._events = list(self._events)
        g._score_events = list(self._score_events)
        g._lances = [_LanceState(ls.lance, ls.outcome, ls.stake, ls.fallback, ls.bettor, ls.winner,
                                 list(ls.history)) for ls in self._lances]
        g._declared_pares = list(self._declared_pares)
        g._declared_juego = list(self._declared_juego)
        g._view = None if self._view is None else array("i", self._view)
        if hasattr(self, "_str"):
            g._str = [list(s) for s in self._str]
        if self._signals:
            g._signs_mus = list(self._signs_mus)
            g._seen_mus = list(self._seen_mus)
            g._signs_grande = list(self._signs_grande)
            g._seen_grande = list(self._seen_grande)
        return g

    def __repr__(self) -> str:
        return (f"MusGame(hand={self._hand_number}, mano={self._mano}, scores={self.scores}, "
                f"phase={self.phase_name!r}, current_player={self._cur})")

    def describe(self) -> str:
        """Multi-line readable summary of the whole state (all hands shown: for debugging)."""
        lines = [repr(self)]
        for s in range(4):
            lines.append(f"  seat {s} (team {s % 2}{', mano' if s == self._mano else ''}): "
                         f"{hand_to_string(self._hands[s])}")
        if self._signals:
            made = self.signs_made()
            lines.append("  signs: " + "; ".join(
                f"{kind}: " + (", ".join(f"seat {s} {SIGN_NAMES[t]}" for s, t in made[kind].items()) or "none")
                for kind in ("mus", "grande")))
        if self._chance is not None:
            lines.append(f"  chance: {self.chance_event}, {len(self._chance_values())} outcomes")
        lines.append(f"  legal: {self._legal_string()}")
        return "\n".join(lines)

    _dispatch = {
        Phase.MUS_CALL: _on_mus_call,
        Phase.DISCARD: _on_discard,
        Phase.DECLARE: _on_declare,
        Phase.BET_OPEN: _on_open,
        Phase.BET_RESPOND: _on_respond,
        Phase.BET_CONFIRM: _on_confirm,
        Phase.SIGNAL: _on_sign,
    }
