"""The observation of one seat: named pieces declared once, an encoder, and a decoder.

Everything is relative to the observing seat. Seats are written ``q = (other - me) % 4``: 0 self,
1 right-hand opponent (speaks after me), 2 partner, 3 left-hand opponent; teams as "own" and "other".
Nothing private to another seat is ever encoded: own cards, then only public events (calls, bets,
declarations, discard counts, stones), and the hands shown at the previous hand's showdown.

The pieces are :data:`PIECES`, a tuple of ``(name, size, meaning)``; :data:`OBS_DIM` is their sum and
:data:`OFFSETS` maps each name to its slice. The README's observation table is generated from them by
:func:`observation_table`. :func:`decode` turns a vector back into named, readable values, so rule-based
agents read their hand, the phase and the stake from the vector alone.

Scales: stakes and bet amounts are divided by :data:`STAKE_SCALE`, scores and stones by the target,
the target by :data:`TARGET_SCALE`, mus rounds by :data:`ROUNDS_SCALE`; counts are raw.

The full-information ``state`` (for centralised critics) is seat 0's observation followed by the four
hands by absolute seat, one-hot over card ids (:data:`STATE_DIM`).

With signals on (``MusConfig(signals="truthful")`` or ``"free"``, RULES.md §8) the vector is
:func:`obs_dim` ``(config)`` long: the :data:`PIECES` above, encoded as without signals except that during a
sign decision ``phase``, ``lance`` and ``responder`` are all zeros, then the signal block
:data:`mus_env.signals.SIGNAL_PIECES` (their offsets in the vector: :data:`SIGNAL_OBS_OFFSETS`): the pending window, the
tokens this seat has seen in the latest mus window and in the grande window, and the channel's settings.
An opponent's token is written only when this seat intercepted it (``signals.sees_sign``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations
from math import comb
from typing import Any

import numpy as np
import numpy.typing as npt

from .actions import ENVIDO_BASE, Action
from .cards import NUM_CARDS, SUITS, slot_positions
from .config import MusConfig, signals_on
from .phases import NUM_OUTCOMES, NUM_PHASES, ORDAGO_STAKE, OUTCOME_NAMES, PHASE_NAMES, Phase
from .signals import NUM_SIGNS, SIGNAL_DIM, SIGNAL_PIECES
from .signals import SIGNAL_OFFSETS as _SIGNAL_REL_OFFSETS
from .tables import LANCE_NAMES, PUNTO, get_tables, multiset_index

__all__ = [
    "PIECES", "OBS_DIM", "OFFSETS", "STATE_DIM", "SLOT_NAMES", "SPEECH_NAMES", "STAKE_SCALE", "TARGET_SCALE",
    "ROUNDS_SCALE", "DISCARD_ROUNDS", "LANCE_OFFSETS", "encode", "write", "encode_state", "decode",
    "observation_table", "speech_of", "OBSERVER_PIECES", "OBSERVER_DIM", "HAND_DIM", "hand_key", "hand_keys",
    "full_hand_keys", "cached_hand_key", "hand_table", "SIGNAL_OBS_OFFSETS", "obs_dim", "state_dim",
    "piece_high", "known_piece", "obs_high", "VIEW_FIELDS", "VIEW_DTYPE", "VIEW_INDEX", "VIEW_SIZE",
]

STAKE_SCALE = 10.0
TARGET_SCALE = 100.0
ROUNDS_SCALE = 10.0
#: Number of most recent mus rounds whose discard counts are encoded.
DISCARD_ROUNDS = 3
#: Lance slots of a hand; slot 3 is juego, or punto when nobody holds juego (piece ``punto``).
SLOT_NAMES = ("grande", "chica", "pares", "juego")
#: Speech categories of the betting pieces (what a seat said last in a lance).
SPEECH_NAMES = ("paso", "envido", "quiero", "no quiero", "órdago")
_SPEECH_OF_ACTION = {int(Action.PASO): 0, int(Action.QUIERO): 2, int(Action.NO_QUIERO): 3, int(Action.ORDAGO): 4}
_SPEECH_OF_ACTION.update({a: 1 for a in range(ENVIDO_BASE, ENVIDO_BASE + 5)})


def speech_of(action: int) -> int:
    """Speech category (index into :data:`SPEECH_NAMES`) of a betting action id."""
    return _SPEECH_OF_ACTION[action]


_LANCE_PIECES = (
    ("outcome", NUM_OUTCOMES, "outcome one-hot (" + ", ".join(OUTCOME_NAMES) + ")"),
    ("stake", 1, "live or final numeric stake / STAKE_SCALE (0 before a bet and for an órdago)"),
    ("ordago", 1, "1 once an órdago is live or accepted"),
    ("fallback", 1, "stones the bettor gets if refused / STAKE_SCALE"),
    ("bettor", 2, "team of the last bettor or raiser: own, other (zeros before any bet)"),
    ("last", 4, "seat q of the last bettor or raiser"),
    ("speech", 20, "per seat q, one-hot of what it said last: " + ", ".join(SPEECH_NAMES)),
    ("raised", 4, "per seat q, stones it has bet or raised / STAKE_SCALE"),
    ("winner", 2, "team known to have won the lance: own, other (refused, uncontested, órdago)"),
)

def _lance_piece(name: str) -> tuple[str, int, str]:
    size, meaning = next((sz, m) for n, sz, m in _LANCE_PIECES if n == name)
    return (f"lance_{name}", 4 * size, f"per lance slot ({', '.join(SLOT_NAMES)}), {size} each: {meaning}")


#: The pieces that depend on who observes (own hand, seat- and team-relative records), first and contiguous:
#: the batched engine keeps them per observer and copies the observer's block in one go.
OBSERVER_PIECES: tuple[tuple[str, int, str], ...] = (
    ("hand_numbers", 40, "own hand: slot s (hand-slot order, the bits of a discard mask) x card number "
                         "A 2 3 4 5 6 7 S C R, one-hot, 4x10"),
    ("hand_suits", 16, "own hand: slot s x suit o c e b, one-hot, 4x4"),
    ("rank_counts", 10, "own hand: count of each rank 1..10 of the variant (8 kings use ranks 1..8)"),
    ("pares_class", 4, "own pares: none, par, medias, duples (zeros while discarding)"),
    ("points", 1, "own juego total / 40 (0 while discarding)"),
    _lance_piece("bettor"),
    _lance_piece("last"),
    _lance_piece("speech"),
    _lance_piece("raised"),
    _lance_piece("winner"),
    ("pares_decl", 8, "per seat q: declared pares sí, pares no (zeros before declaring)"),
    ("juego_decl", 8, "per seat q: declared juego sí, juego no"),
    ("discards", 4 * DISCARD_ROUNDS, "cards discarded / 4 per seat q in the last 3 mus rounds, most recent first"),
    ("prev_rank_counts", 40, "previous hand's final hands, per seat q x rank counts 1..10 (when shown)"),
)

PIECES: tuple[tuple[str, int, str], ...] = OBSERVER_PIECES + (
    ("kings8", 1, "1 with 8 kings (3 = rey, 2 = as), 0 with 4 kings"),
    ("mano", 4, "seat q of the mano of this hand"),
    ("acting", 4, "seat q of the player to act (zeros once the game is over)"),
    ("phase", NUM_PHASES, "one-hot decision kind: " + ", ".join(PHASE_NAMES)),
    ("lance", 5, "lance being bet or declared: " + ", ".join(LANCE_NAMES)),
    ("responder", 3, "during betting: opening round, first responder, second responder (partner has answered)"),
    _lance_piece("outcome"),
    _lance_piece("stake"),
    _lance_piece("ordago"),
    _lance_piece("fallback"),
    ("punto", 1, "1 when the fourth lance is punto (nobody holds juego)"),
    ("mus_rounds", 1, "completed discard rounds this hand / ROUNDS_SCALE"),
    ("hand_stones", 2, "stones won in this hand so far: own, other / target"),
    ("scores", 2, "game score: own, other / target"),
    ("target", 1, "stones to win a game / TARGET_SCALE"),
    ("games_won", 2, "games won in this vaca: own, other"),
    ("vacas_won", 2, "vacas won in the match: own, other"),
    ("prev_shown", 1, "1 if the previous hand's cards were shown (showdown or órdago)"),
    ("prev_stones", 2, "stones won in the previous hand: own, other / target"),
)
assert sorted(n for n, _, _ in PIECES if n.startswith("lance_")) == sorted(f"lance_{n}" for n, _, _ in _LANCE_PIECES)

OFFSETS: dict[str, slice] = {}
_o = 0
for _name, _size, _ in PIECES:
    OFFSETS[_name] = slice(_o, _o + _size)
    _o += _size
OBS_DIM = _o
#: Width of the observer-dependent block at the start of the vector (:data:`OBSERVER_PIECES`).
OBSERVER_DIM = sum(size for _, size, _ in OBSERVER_PIECES)
STATE_DIM = OBS_DIM + 4 * NUM_CARDS

del _o, _name, _size

#: Offsets of the signal pieces (``signals.SIGNAL_PIECES``) in a signals-on observation vector: those of
#: ``signals.SIGNAL_OFFSETS`` (relative to the signal block) + OBS_DIM.
SIGNAL_OBS_OFFSETS: dict[str, slice] = {name: slice(OBS_DIM + sl.start, OBS_DIM + sl.stop)
                                        for name, sl in _SIGNAL_REL_OFFSETS.items()}
_PHASE_SIGNAL = Phase.SIGNAL
_S_WINDOW, _S_MUS, _S_GRANDE, _S_CONFIG = (SIGNAL_OBS_OFFSETS[name].start
                                           for name in ("sign_window", "signs_mus", "signs_grande", "sign_config"))


#: The public state a seat's view is written from, as one record (name, dtype, shape, meaning): what was dealt to
#: each seat (a view reads only its own row of ``hands``), said and shown at the table. The scalar engine keeps it
#: up to date as it plays (``MusGame.public_view``), so that the batched engine's compiled writer
#: (``kernel.encode``, which reads these names from a table's state row) writes its views without a Python pass;
#: the names, dtypes' kinds and meanings are those of ``kernel.STATE_FIELDS``. Every entry but the seed is int32,
#: so the record is also a flat int32 array (:data:`VIEW_INDEX`).
VIEW_FIELDS: tuple[tuple[str, str, tuple[int, ...], str], ...] = (
    ("game_seeds", "u8", (), "the game's seed (drives the señas' interceptions, signals.sees_sign)"),
    ("hand_number", "i4", (), "hands dealt in this episode, 0-based"),
    ("mano", "i4", (), "absolute seat of the mano"),
    ("hands", "i4", (4, 4), "[seat, slot] card id in hand-slot order; -1 empty (sorted last)"),
    ("phase", "i4", (), "Phase of the pending decision"),
    ("rel", "i4", (), "relative seat to act"),
    ("slot", "i4", (), "lance slot being declared or bet (0..3), -1 in the mus phase"),
    ("resp_i", "i4", (), "which responder is acting (0 = r1, 1 = r2)"),
    ("ls_lance", "i4", (4,), "[slot] lance id (slot 3: JUEGO, or PUNTO when nobody holds juego)"),
    ("ls_outcome", "i4", (4,), "[slot] Outcome id"),
    ("ls_stake", "i4", (4,), "[slot] live or final stake; ORDAGO_STAKE (-1) for an órdago"),
    ("ls_fallback", "i4", (4,), "[slot] stones the bettor's team gets if the live stake is refused"),
    ("ls_bettor", "i4", (4,), "[slot] team of the last bettor or raiser; -1 before any bet"),
    ("ls_winner", "i4", (4,), "[slot] team known to have won the lance; -1 unknown"),
    ("ls_last", "i4", (4,), "[slot] absolute seat of the last bettor or raiser; -1"),
    ("ls_said", "i4", (4, 4), "[slot, seat] speech category said last (SPEECH_NAMES); -1 silent"),
    ("ls_raised", "i4", (4, 4), "[slot, seat] stones bet or raised in all"),
    ("decl", "i4", (2, 4), "[pares/juego, seat] declared 1 yes, 0 no, -1 not yet"),
    ("mus_round", "i4", (), "completed discard rounds in this hand"),
    ("disc_hist", "i4", (DISCARD_ROUNDS, 4), "[j, seat] discards of the j-th latest mus round"),
    ("hand_stones", "i4", (2,), "[team] stones won in the current hand"),
    ("scores", "i4", (2,), "[team] stones in the current game"),
    ("games_won", "i4", (2,), "[team] games won in the current vaca"),
    ("vacas_won", "i4", (2,), "[team] vacas won in the match"),
    ("prev_shown", "i4", (), "1: the previous hand's cards were shown"),
    ("prev_counts", "i4", (4, 10), "[seat, rank - 1] previous hand's final rank counts (zeros if not shown)"),
    ("prev_stones", "i4", (2,), "[team] stones won in the previous hand"),
    ("sig_window", "i4", (), "kind of the window of the pending sign decision; -1 when none is pending"),
    ("sig_mus", "i4", (4,), "[seat] token signed in the latest mus window of this hand; -1 none"),
    ("sig_grande", "i4", (4,), "[seat] token signed in the grande window of this hand; -1 none"),
)
VIEW_DTYPE = np.dtype([(name, dt, shape) for name, dt, shape, _ in VIEW_FIELDS], align=True)
#: Index of each field's first entry in the record read as a flat int32 array (``game_seeds`` is entries 0 and 1).
VIEW_INDEX: dict[str, int] = {name: VIEW_DTYPE.fields[name][1] // 4 for name, _, _, _ in VIEW_FIELDS}
#: Length of the record as a flat int32 array.
VIEW_SIZE = VIEW_DTYPE.itemsize // 4
assert VIEW_DTYPE.itemsize % 8 == 0 and VIEW_DTYPE.fields["game_seeds"][1] == 0
assert all(dt == "i4" for name, dt, _, _ in VIEW_FIELDS if name != "game_seeds")


def obs_dim(config: MusConfig) -> int:
    """Length of an observation vector under ``config``: :data:`OBS_DIM` (345), + ``signals.SIGNAL_DIM``
    (477 in all) with signals on."""
    return OBS_DIM + SIGNAL_DIM if signals_on(config) else OBS_DIM


def state_dim(config: MusConfig) -> int:
    """Length of the full-information state under ``config``: seat 0's observation (:func:`obs_dim`), then the
    four hands one-hot over the 40 card ids."""
    return obs_dim(config) + 4 * NUM_CARDS


# The upper bound of each piece, by name (every piece is >= 0): 1 for one-hot and fraction pieces, 4 for rank
# counts, config-derived ones, and none (inf) for stakes, raises and stones, which have no upper limit in the rules
# (RULES.md §5.1), and for the mus rounds without a cap (§3.1). tests/test_mus_v0.py asks that every piece be
# listed (known_piece), so that a new piece gets its bound on purpose.
_ONE_PIECES = frozenset((
    "hand_numbers", "hand_suits", "pares_class", "points", "kings8", "mano", "acting", "phase", "lance",
    "responder", "punto", "pares_decl", "juego_decl", "discards", "prev_shown",
))
_SIGNAL_PIECE_NAMES = frozenset(n for n, _, _ in SIGNAL_PIECES)   # one-hots, flags and a probability
_FOUR_PIECES = frozenset(("rank_counts", "prev_rank_counts"))         # four cards of one rank at most
_UNBOUNDED_PIECES = frozenset(("mus_rounds", "hand_stones", "scores", "prev_stones"))
# Betting record of each lance slot, named "lance_<name>" (all slots in one piece) or "<slot>_<name>".
_LANCE_ONE = frozenset(("outcome", "ordago", "bettor", "last", "speech", "winner"))
_LANCE_UNBOUNDED = frozenset(("stake", "fallback", "raised"))
_LANCE_PREFIXES = ("lance_",) + tuple(f"{slot}_" for slot in SLOT_NAMES)


def _lance_field(name: str) -> str | None:
    """``"stake"`` for ``"lance_stake"`` or ``"grande_stake"``; None for other pieces."""
    for prefix in _LANCE_PREFIXES:
        if name.startswith(prefix) and name[len(prefix):] in _LANCE_ONE | _LANCE_UNBOUNDED:
            return name[len(prefix):]
    return None


def piece_high(name: str, cfg: MusConfig) -> float | None:
    """Upper bound of every entry of observation piece ``name`` (:data:`PIECES` or ``signals.SIGNAL_PIECES``)
    under ``cfg``; None when it has none (stakes, stones, scores: no upper limit in the rules) or the piece is not
    listed (see :func:`known_piece`)."""
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
    if _lance_field(name) in _LANCE_ONE:
        return 1.0
    return None                                               # stakes, stones, scores, uncapped mus rounds


def known_piece(name: str) -> bool:
    """Whether :func:`piece_high` bounds (or leaves unbounded) piece ``name`` on purpose: a piece added to the
    observation must be listed, else it silently gets no bound (``tests/test_mus_v0.py`` checks every piece)."""
    return (name in _ONE_PIECES | _FOUR_PIECES | _UNBOUNDED_PIECES | _SIGNAL_PIECE_NAMES
            or name in ("target", "games_won", "vacas_won")
            or _lance_field(name) is not None)


def obs_high(config: MusConfig) -> npt.NDArray[np.float32]:
    """Upper bound of every entry of an observation under ``config`` (:func:`obs_dim` entries; the lower bound
    is 0 everywhere): :func:`piece_high` of each piece, ``inf`` where a piece has none. The Gymnasium and
    PettingZoo spaces (``interfaces.observation_box``) are built from it."""
    high = np.full(obs_dim(config), np.inf, dtype=np.float32)
    for name, _size, _meaning in PIECES:
        h = piece_high(name, config)
        if h is not None:
            high[OFFSETS[name]] = h
    if signals_on(config):
        for name, _size, _meaning in SIGNAL_PIECES:
            high[SIGNAL_OBS_OFFSETS[name]] = piece_high(name, config)
    return high


_O = {name: sl.start for name, sl in OFFSETS.items()}
#: Offset of each lance piece of slot i: ``LANCE_OFFSETS[i]["stake"]``.
LANCE_OFFSETS = [{name: _O[f"lance_{name}"] + i * size for name, size, _ in _LANCE_PIECES} for i in range(4)]
_LANCE_O = LANCE_OFFSETS
_RANK = {k: [int(r) for r in get_tables(k).rank_of_card] for k in (8, 4)}


def encode(game: Any, seat: int, out: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float32]:
    """Encode the view of absolute ``seat`` of a :class:`~mus_env.game.MusGame`: ``game.observe(seat, out)``
    (which checks ``seat`` and calls :func:`write`).

    Args:
        game: the game (nothing hidden from ``seat`` is used).
        seat: observing absolute seat 0..3.
        out: optional float32 array of :func:`obs_dim` entries to fill (it is zeroed first).

    Returns:
        ``(OBS_DIM,)`` float32; ``(OBS_DIM + signals.SIGNAL_DIM,)`` with signals on.

    Raises:
        ValueError: ``seat`` is not a seat 0..3, or ``out`` has the wrong length for the game's config.
    """
    return game.observe(seat, out)


# The own-hand pieces (hand_numbers .. points, contiguous from 0) as one table row per set of cards.
HAND_DIM = _O["points"] + 1
assert [n for n, _, _ in PIECES[:5]] == ["hand_numbers", "hand_suits", "rank_counts", "pares_class", "points"]
_BINOM40 = [[comb(n, k) for k in range(5)] for n in range(41)]
_SET_OFFSET = [sum(comb(NUM_CARDS, j) for j in range(k)) for k in range(5)]   # first row of the k-card sets


def hand_key(cards: Sequence[int]) -> int:
    """Row of :func:`hand_table` for a hand of 0..4 cards: colex index of the sorted card set per set size."""
    key = _SET_OFFSET[len(cards)]
    for j, c in enumerate(sorted(cards)):
        key += _BINOM40[c][j + 1]
    return key


@lru_cache(maxsize=1 << 17)
def cached_hand_key(cards: tuple[int, ...]) -> int:
    """:func:`hand_key` of a hand given as a tuple, memoised (the scalar engine's hot path)."""
    return hand_key(cards)


def hand_keys(hands: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """:func:`hand_key` of ``(n, 4)`` hands whose empty slots are -1 (the batched engine's layout)."""
    h = np.sort(hands.astype(np.int64), axis=1)                          # empty (-1) first
    k = (h >= 0).sum(axis=1)
    j = np.arange(4)[None, :] - (4 - k)[:, None]                         # rank of each card in its set
    binom = np.asarray(_BINOM40, dtype=np.int64)
    terms = np.where(j >= 0, binom[np.maximum(h, 0), np.clip(j + 1, 0, 4)], 0)
    return np.asarray(_SET_OFFSET, dtype=np.int64)[k] + terms.sum(axis=1)


# _FULL_TERMS[4 * card + j]: the colex term of ``card`` as the j-th smallest card of a 4-card set
_FULL_TERMS = np.array([[_BINOM40[c][j + 1] for j in range(4)] for c in range(NUM_CARDS)], dtype=np.int64).ravel()


def full_hand_keys(hands: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """:func:`hand_keys` of ``(n, 4)`` hands of four cards each (no empty slot): a faster path."""
    h = np.sort(hands, axis=1).astype(np.int64)
    return _SET_OFFSET[4] + np.take(_FULL_TERMS, h * 4 + np.arange(4)).sum(axis=1)


@lru_cache(maxsize=2)
def hand_table(kings: int) -> npt.NDArray[np.float32]:
    """The own-hand pieces of every set of 0..4 cards in hand-slot order, one row per :func:`hand_key`.

    About 29 MB per variant, built once per process on first use (a fraction of a second).
    """
    t = get_tables(kings)
    rank = _RANK[kings]
    slot_pos = np.array(slot_positions(kings))                           # card id -> place in slot order
    blocks = []
    for k in range(5):
        sets = np.array(list(combinations(range(NUM_CARDS), k)), dtype=np.int64).reshape(comb(NUM_CARDS, k), k)
        hands = np.full((len(sets), 4), -1, dtype=np.int64)
        hands[:, :k] = np.take_along_axis(sets, np.argsort(slot_pos[sets], axis=1), axis=1)
        blocks.append(hands)
    hands = np.concatenate(blocks)
    keys = hand_keys(hands)
    assert np.array_equal(np.sort(keys), np.arange(len(hands)))
    table = np.zeros((len(hands), HAND_DIM), dtype=np.float32)
    present = hands >= 0
    r = np.arange(len(hands))[:, None]
    spare = HAND_DIM - 1                                                 # "points", rewritten below
    table[r, np.where(present, _O["hand_numbers"] + 10 * np.arange(4) + hands % 10, spare)] = 1.0
    table[r, np.where(present, _O["hand_suits"] + 4 * np.arange(4) + hands // 10, spare)] = 1.0
    ranks = np.where(present, np.asarray(rank)[np.maximum(hands, 0)], 0)
    table[:, OFFSETS["rank_counts"]] = (ranks[:, :, None] == np.arange(1, 11)).sum(axis=1)
    full = present.all(axis=1)
    idx = multiset_index(np.sort(np.where(present, ranks, 1), axis=1))
    table[:, OFFSETS["pares_class"]] = (t.pares_class[idx][:, None] == np.arange(4)) & full[:, None]
    table[:, _O["points"]] = np.where(full, t.juego_points[idx] / 40.0, 0.0)
    out = np.empty_like(table)
    out[keys] = table
    out.setflags(write=False)
    return out


def encode_state(game: Any, out: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float32]:
    """Full-information vector ``(STATE_DIM,)``: seat 0's observation, then each absolute seat's hand
    one-hot over the 40 card ids (for centralised critics; never give it to a policy). With signals on it is
    :func:`state_dim` ``(config)`` long (seat 0's observation has the signal block)."""
    n = OBS_DIM + SIGNAL_DIM if game.config.signals != "off" else OBS_DIM
    if out is None:
        out = np.zeros(n + 4 * NUM_CARDS, dtype=np.float32)
    game.observe(0, out[:n])
    out[n:] = 0.0
    for s, hand in enumerate(game.hands):
        for c in hand:
            out[n + NUM_CARDS * s + c] = 1.0
    return out


def write(game: Any, seat: int, out: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float32]:
    """Write absolute ``seat``'s view of ``game`` (a :class:`~mus_env.game.MusGame`) in the layout of
    :data:`PIECES` (+ the signal block with signals on), from the game's public properties only: ``seat``'s own
    hand (:meth:`~mus_env.game.MusGame.hand_of`), then what was said and shown at the table. The batched
    engine's kernel writes the same vector from its table rows (``mus_env.kernel``); the differential tests hold
    the two equal.

    This is the readable reference writer (``MusGame.observe``). The PettingZoo and Gymnasium envs write their
    vectors with the kernel's compiled writer instead, from the game's view record (:data:`VIEW_FIELDS`,
    ``interfaces.CompiledObserver``); ``tests/test_observation_compiled.py`` holds it equal to this one.

    One row of :func:`hand_table` gives the own-hand pieces; every other entry is gathered as (index, value) and
    written in one scatter (list-to-array conversions dominate the cost). ``seat`` is not checked here
    (``MusGame.observe`` checks it).

    Raises:
        ValueError: ``out`` has the wrong length for the game's config.
    """
    cfg = game.config
    signals = cfg.signals != "off"
    n = OBS_DIM + SIGNAL_DIM if signals else OBS_DIM
    if out is None:
        out = np.zeros(n, dtype=np.float32)
    else:
        if out.shape != (n,):
            raise ValueError(f"encode: the observation has {n} entries under this config "
                             f"(observation.obs_dim(config)); out has shape {out.shape}")
        out.fill(0.0)
    kings = cfg.kings
    target = cfg.target
    me = seat % 2
    mano = game.mano
    out[:HAND_DIM] = hand_table(kings)[cached_hand_key(game.hand_of(seat))]
    ones = [_O["mano"] + (mano - seat) % 4]
    vi: list[int] = []                                     # other values: indices and values
    vv: list[float] = []
    if kings == 8:
        ones.append(_O["kings8"])
    phase = game.phase
    if phase != _PHASE_SIGNAL:                             # a sign decision has no phase one-hot (phases.py)
        ones.append(_O["phase"] + phase)
    cur = game.current_player
    if cur >= 0:
        ones.append(_O["acting"] + (cur - seat) % 4)
    lances = game.lance_records
    if 2 <= phase <= 5:                                    # declaration or betting
        ones.append(_O["lance"] + lances[game.lance_slot].lance)
        if phase >= 3:
            ones.append(_O["responder"] + game.responder)
    _write_lances(lances, seat, me, ones, vi, vv)
    if lances[3].lance == PUNTO:
        ones.append(_O["punto"])
    if game.lance_slot >= 2:                               # declarations have started
        for o, decl in zip((_O["pares_decl"], _O["juego_decl"]), game.declarations, strict=True):
            for s in range(4):
                if decl[s] >= 0:
                    ones.append(o + 2 * ((s - seat) % 4) + (1 - decl[s]))
    counts = game.discard_counts                           # the mus phase's summary
    if counts:
        vi.append(_O["mus_rounds"])
        vv.append(len(counts) / ROUNDS_SCALE)
        o = _O["discards"]
        for j, row in enumerate(reversed(counts[-DISCARD_ROUNDS:])):
            for s in range(4):
                if row[s]:
                    vi.append(o + 4 * j + (s - seat) % 4)
                    vv.append(row[s] / 4.0)
    hs, sc, gw, vw = game.hand_stones, game.scores, game.games_won, game.vacas_won
    o1, o2, o3, o4 = _O["hand_stones"], _O["scores"], _O["games_won"], _O["vacas_won"]
    vi += [o1, o1 + 1, o2, o2 + 1, _O["target"], o3, o3 + 1, o4, o4 + 1]
    vv += [hs[me] / target, hs[1 - me] / target, sc[me] / target, sc[1 - me] / target, target / TARGET_SCALE,
           gw[me], gw[1 - me], vw[me], vw[1 - me]]
    if game.hand_log:
        _write_previous_hand(game.hand_log[-1], seat, me, target, _RANK[kings], ones, vi, vv)
    if signals:
        _write_signals(game, seat, ones, vi, vv)
    vi += ones
    vv += [1.0] * len(ones)
    out[vi] = vv
    return out


def _write_lances(lances: Sequence[Any], seat: int, me: int, ones: list[int], vi: list[int],
                  vv: list[float]) -> None:
    """The betting record of each lance slot (the ``lance_*`` pieces) into the scatter lists of :func:`write`."""
    for i, ls in enumerate(lances):
        lo = _LANCE_O[i]
        ones.append(lo["outcome"] + ls.outcome)
        if ls.winner >= 0:
            ones.append(lo["winner"] + (ls.winner != me))
        if not ls.history:
            continue
        if ls.stake == ORDAGO_STAKE:
            ones.append(lo["ordago"])
        elif ls.stake:
            vi.append(lo["stake"])
            vv.append(ls.stake / STAKE_SCALE)
        if ls.fallback:
            vi.append(lo["fallback"])
            vv.append(ls.fallback / STAKE_SCALE)
        if ls.bettor >= 0:
            ones.append(lo["bettor"] + (ls.bettor != me))
        last = -1
        said = {}
        raised: dict[int, int] = {}
        for s, a, amount in ls.history:
            q = (s - seat) % 4
            cat = _SPEECH_OF_ACTION[a]
            said[q] = cat
            if cat == 1 or cat == 4:                       # envido or órdago: a bet or a raise
                last = q
                raised[q] = raised.get(q, 0) + amount
        o = lo["speech"]
        for q, cat in said.items():
            ones.append(o + 5 * q + cat)
        o = lo["raised"]
        for q, r in raised.items():
            if r:
                vi.append(o + q)
                vv.append(r / STAKE_SCALE)
        if last >= 0:
            ones.append(lo["last"] + last)


def _write_previous_hand(prev: Any, seat: int, me: int, target: int, rank: Sequence[int], ones: list[int],
                         vi: list[int], vv: list[float]) -> None:
    """The previous hand's stones and, when it was shown, its final hands' rank counts (``prev_*`` pieces)."""
    o = _O["prev_stones"]
    st = prev.scores_after[0] - prev.scores_before[0], prev.scores_after[1] - prev.scores_before[1]
    vi += [o, o + 1]
    vv += [st[me] / target, st[1 - me] / target]
    if prev.shown:
        ones.append(_O["prev_shown"])
        o = _O["prev_rank_counts"] - 1
        cnt: dict[int, int] = {}
        for s in range(4):
            base = o + 10 * ((s - seat) % 4)
            for c in prev.final_hands[s]:
                k = base + rank[c]
                cnt[k] = cnt.get(k, 0) + 1
        vi.extend(cnt)
        vv.extend(cnt.values())


def _write_signals(game: Any, seat: int, ones: list[int], vi: list[int], vv: list[float]) -> None:
    """The signal block (``signals.SIGNAL_PIECES``): the pending window, the tokens ``seat`` has seen (per signer
    q relative to it) and the channel's settings."""
    cfg = game.config
    window = game.sign_window
    if window is not None:
        ones.append(_S_WINDOW + window)
    seen = game.signs_seen(seat)
    for base, tokens in ((_S_MUS, seen["mus"]), (_S_GRANDE, seen["grande"])):
        for s, t in tokens.items():
            ones.append(base + NUM_SIGNS * ((s - seat) % 4) + t)
    if cfg.signals == "free":
        ones.append(_S_CONFIG)
    if cfg.signal_intercept_p:
        vi.append(_S_CONFIG + 1)
        vv.append(cfg.signal_intercept_p)


def _onehot(v: npt.NDArray[np.float32]) -> int:
    """Index of the 1 in a one-hot piece, -1 when all zeros."""
    nz = np.flatnonzero(v > 0.5)
    return int(nz[0]) if len(nz) else -1


def decode(obs: npt.ArrayLike) -> dict[str, Any]:
    """Named, readable pieces of an observation vector (seats as q: 0 self, 1 right opp, 2 partner, 3 left opp).

    A vector of ``OBS_DIM + signals.SIGNAL_DIM`` entries (signals on) also gives ``sign_window``
    (``signals.WINDOW_MUS``, ``WINDOW_GRANDE``, or -1 when no sign decision is pending), ``signs_mus`` and
    ``signs_grande`` (per q the token seen, an int 0..15, or None: not signed yet, or not seen) and
    ``sign_config`` (``{"free": bool, "intercept_p": float}``); during a sign decision ``phase`` is
    ``Phase.SIGNAL`` (7), read from ``sign_window`` (the ``phase`` one-hot itself is all zeros then).

    Returns:
        A dict with ``hand`` (card ids in slot order), ``rank_counts``, ``pares_class``, ``points``,
        ``kings``, ``mano`` (q), ``acting`` (q or -1), ``phase`` (Phase id), ``lance`` (lance id or -1),
        ``responder`` (0 opening, 1, 2, or -1), ``lances`` (four dicts: ``outcome``, ``stake`` (int, or
        "ordago"), ``fallback``, ``bettor`` / ``winner`` ("own", "other" or None), ``last`` (q or -1),
        ``speech`` (per q a name of :data:`SPEECH_NAMES` or None), ``raised`` (per q)), ``punto``,
        ``pares_decl`` / ``juego_decl`` (per q: True, False or None), ``mus_rounds``, ``discards``
        (recent rounds first, per q), ``hand_stones``, ``scores``, ``target``, ``games_won``,
        ``vacas_won`` (own, other), ``prev_shown``, ``prev_rank_counts`` (per q), ``prev_stones``.
    """
    x = np.asarray(obs, dtype=np.float32)
    if x.shape not in ((OBS_DIM,), (OBS_DIM + SIGNAL_DIM,)):
        raise ValueError(f"decode expects one observation of shape ({OBS_DIM},), or ({OBS_DIM + SIGNAL_DIM},) "
                         f"with signals on, got {x.shape}")

    def piece(name: str) -> npt.NDArray[np.float32]:
        return x[OFFSETS[name]]

    target = int(round(float(piece("target")[0]) * TARGET_SCALE))
    nums = piece("hand_numbers").reshape(4, 10)
    suits = piece("hand_suits").reshape(4, 4)
    hand = [int(_onehot(suits[s])) * 10 + _onehot(nums[s]) for s in range(4) if nums[s].any()]

    def team(v: npt.NDArray[np.float32]) -> str | None:
        i = _onehot(v)
        return None if i < 0 else ("own", "other")[i]

    def pair(name: str, scale: float = 1.0) -> tuple[int, int]:
        v = piece(name)
        return int(round(float(v[0]) * scale)), int(round(float(v[1]) * scale))

    lances = []
    for i in range(4):
        p = {name: x[_LANCE_O[i][name]:_LANCE_O[i][name] + size] for name, size, _ in _LANCE_PIECES}
        speech = p["speech"].reshape(4, 5)
        lances.append({
            "outcome": OUTCOME_NAMES[_onehot(p["outcome"])],
            "stake": "ordago" if p["ordago"][0] > 0.5 else int(round(float(p["stake"][0]) * STAKE_SCALE)),
            "fallback": int(round(float(p["fallback"][0]) * STAKE_SCALE)),
            "bettor": team(p["bettor"]),
            "winner": team(p["winner"]),
            "last": _onehot(p["last"]),
            "speech": [SPEECH_NAMES[i] if i >= 0 else None for i in (_onehot(speech[q]) for q in range(4))],
            "raised": [int(round(float(v) * STAKE_SCALE)) for v in p["raised"]],
        })

    def decl(name: str) -> list[bool | None]:
        v = piece(name).reshape(4, 2)
        return [True if v[q, 0] > 0.5 else False if v[q, 1] > 0.5 else None for q in range(4)]

    out = {
        "hand": hand,
        "hand_string": " ".join(
            "A234567SCR"[c % 10] + SUITS[c // 10] for c in hand),
        "rank_counts": [int(v) for v in piece("rank_counts")],
        "pares_class": _onehot(piece("pares_class")),
        "points": int(round(float(piece("points")[0]) * 40)),
        "kings": 8 if piece("kings8")[0] > 0.5 else 4,
        "mano": _onehot(piece("mano")),
        "acting": _onehot(piece("acting")),
        "phase": _onehot(piece("phase")),
        "lance": _onehot(piece("lance")),
        "responder": _onehot(piece("responder")),
        "lances": lances,
        "punto": bool(piece("punto")[0] > 0.5),
        "pares_decl": decl("pares_decl"),
        "juego_decl": decl("juego_decl"),
        "mus_rounds": int(round(float(piece("mus_rounds")[0]) * ROUNDS_SCALE)),
        "discards": [[int(round(float(v) * 4)) for v in row] for row in piece("discards").reshape(DISCARD_ROUNDS, 4)],
        "hand_stones": pair("hand_stones", target),
        "scores": pair("scores", target),
        "target": target,
        "games_won": pair("games_won"),
        "vacas_won": pair("vacas_won"),
        "prev_shown": bool(piece("prev_shown")[0] > 0.5),
        "prev_rank_counts": [[int(v) for v in row] for row in piece("prev_rank_counts").reshape(4, 10)],
        "prev_stones": pair("prev_stones", target),
    }
    if len(x) > OBS_DIM:
        out.update(_decode_signals(x))
        if out["sign_window"] >= 0:
            out["phase"] = _PHASE_SIGNAL
    return out


def _decode_signals(x: npt.NDArray[np.float32]) -> dict[str, Any]:
    """The signal pieces of a signals-on observation (see :func:`decode`)."""
    def tokens(name: str) -> list[int | None]:
        v = x[SIGNAL_OBS_OFFSETS[name]].reshape(4, NUM_SIGNS)
        return [t if t >= 0 else None for t in (_onehot(v[q]) for q in range(4))]

    conf = x[SIGNAL_OBS_OFFSETS["sign_config"]]
    return {
        "sign_window": _onehot(x[SIGNAL_OBS_OFFSETS["sign_window"]]),
        "signs_mus": tokens("signs_mus"),
        "signs_grande": tokens("signs_grande"),
        "sign_config": {"free": bool(conf[0] > 0.5), "intercept_p": float(conf[1])},
    }


def observation_table(signals: bool = False) -> str:
    """Markdown table of the pieces (name, offset, size, meaning), as shown in the README.

    Args:
        signals: False (default): the :data:`PIECES` of every observation. True: the signal block that
            follows them with signals on (``signals.SIGNAL_PIECES``, absolute offsets from :data:`OBS_DIM`),
            and the total length with signals on.
    """
    rows = ["| piece | offset | size | meaning |", "|---|---|---|---|"]
    if signals:
        for name, size, meaning in SIGNAL_PIECES:
            rows.append(f"| `{name}` | {SIGNAL_OBS_OFFSETS[name].start} | {size} | {meaning} |")
        rows.append(f"| **total with signals** | | **{OBS_DIM + SIGNAL_DIM}** | |")
        return "\n".join(rows)
    for name, size, meaning in PIECES:
        rows.append(f"| `{name}` | {OFFSETS[name].start} | {size} | {meaning} |")
    rows.append(f"| **total** | | **{OBS_DIM}** | |")
    return "\n".join(rows)
