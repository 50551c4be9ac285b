"""Señas (RULES.md §8): the partners' signalling channel, its tokens, their meanings, and who sees them.

This module is the one definition both engines, the observation and the agents use. Nothing here runs
unless ``MusConfig(signals="truthful")`` or ``"free"``; with the default ``signals="off"`` the action
space (31 ids), the observation and every game are exactly those of an engine without signs.

Windows
    A sign window opens before each mus-call round (at the deal, and after every discard round's
    replacements) and once before grande (after the mus is cut). In a window every player, in turn order
    from the mano (S0, S1, S2, S3), makes one sign decision: a token, :attr:`Sign.NONE` or a sign. The
    window counter ``w`` of a hand is the number of discard rounds completed for a mus window (0 = the
    deal's window) and that number + 1 for the grande window.

Actions
    Token ``t`` is action id ``SIGNAL_BASE + t`` (31..46), appended after the 31 ids of §9.1, which
    never change. ``num_actions(config)`` is 31 with signals off, 47 with signals on. The id space is
    :mod:`mus_env.actions`' (``Sign``, ``NUM_SIGNS``, ``SIGNAL_BASE``, ``SIGN_NAMES``, ``SIGN_WORDS``,
    ``num_actions``, ``is_sign_action``, ``sign_of_action`` are defined there and re-exported here);
    this module imports it, never the reverse.

Masks
    ``free``: every token is legal. ``truthful``: a token is legal when its meaning is true for the hand
    held at that window (:func:`true_signs`); NONE is always legal.

Who sees a token
    The signer and its partner always; each opponent independently with probability
    ``config.signal_intercept_p``, decided by :func:`intercepted`, a pure function of the game seed, the
    hand number, the window counter, the signer and the observer (stream :data:`STREAM_SIGNAL` of
    :mod:`mus_env.shuffle`), so both engines agree. A seat is never told whether its own sign was seen.

Observation
    ``obs_dim(config)`` and ``state_dim(config)`` are :mod:`mus_env.observation`'s (which imports this
    module; this module never imports it).
    With signals on, :data:`SIGNAL_PIECES` are appended after :data:`mus_env.observation.PIECES`
    (so every existing offset is unchanged): which kind of window is pending, the tokens this seat has
    seen in the latest mus window and in the grande window of the current hand (per seat ``q``
    relative to the observer; ``q = 0`` is its own token), and the channel's settings.

Meanings (one token per row of the §8 table; "kings" are cards of the top rank, so with 8 kings the 3s
too, "aces" rank 1, so with 8 kings the 2s too):

=====  ===============  ===============================  ==========================================
token  name             gesture                          true when the hand has
=====  ===============  ===============================  ==========================================
0      NONE             (no sign)                        always
1      DOS_REYES        bite centre of lower lip         exactly two kings, or four (the sign twice)
2      TRES_REYES       bite lower lip at one side       exactly three kings
3      DOS_ASES         show tip of tongue               exactly two aces, or four (the sign twice)
4      TRES_ASES        tongue out to one side           exactly three aces
5      MEDIAS           twist closed lips to one side    medias (pares class 2)
6      DUPLES           raise eyebrows                   duples (pares class 3)
7      PAR              tilt head to one side            a single par (pares class 1; S-RU's meaning)
8      JUEGO            push closed lips forward         juego other than 31 (32..40 points)
9      TREINTA_Y_UNA    wink                             31 points
10     TREINTA          shrug both shoulders             30 points
11     VEINTINUEVE      shrug one shoulder               29 points
12     CIEGO            close both eyes                  none of the hand signs 1-11, 13, 14
13     REAL31           touch ear lobe                   a 31 real under ``config.real31`` (never when off)
14     SOLOMILLO        blow a kiss                      R-R-R-A: three kings and one ace
15     MUS              mouth the word "mus"             the wish to discard: true in mus windows only
=====  ===============  ===============================  ==========================================
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from .actions import (
    NUM_SIGNS,
    SIGN_NAMES,
    SIGN_WORDS,
    SIGNAL_BASE,
    Sign,
    is_sign_action,
    num_actions,
    sign_of_action,
)
from .cards import NUM_CARDS
from .config import MusConfig, signals_on
from .shuffle import STREAM_SIGNAL, event_hash
from .tables import get_tables, is_real31

__all__ = [
    "Sign", "NUM_SIGNS", "SIGNAL_BASE", "SIGN_NAMES", "SIGN_WORDS", "SIGN_GESTURES", "WINDOW_MUS",
    "WINDOW_GRANDE", "WINDOW_NAMES", "SIGNAL_PIECES", "SIGNAL_DIM", "SIGNAL_OFFSETS", "ALL_SIGNS",
    "signals_on", "num_actions", "sign_of_action", "is_sign_action", "hand_sign_bits",
    "true_signs", "legal_signs", "intercepted", "intercept_uniform", "sees_sign", "SIGN_MEANINGS", "sign_table",
]


#: Bitmask with every token set (the legal set of ``signals="free"``).
ALL_SIGNS = (1 << NUM_SIGNS) - 1
SIGN_GESTURES = ("no sign", "bites the centre of the lower lip", "bites the lower lip at one side",
                 "shows the tip of the tongue", "puts the tongue out to one side", "twists the closed lips",
                 "raises the eyebrows", "tilts the head", "pushes the closed lips forward", "winks",
                 "shrugs both shoulders", "shrugs one shoulder", "closes both eyes", "touches an ear lobe",
                 "blows a kiss", "mouths the word mus")

#: When each token is true (the truthful mask), in words.
SIGN_MEANINGS = ("always", "exactly two kings, or four (the sign made twice)", "exactly three kings",
                 "exactly two aces, or four (the sign made twice)", "exactly three aces", "medias",
                 "duples", "a single par", "juego other than 31 (32..40)", "31 points", "30 points (punto)",
                 "29 points", "none of the hand signs 1-11, 13, 14", "a 31 real under config.real31 (never when off)",
                 "R-R-R-A (three kings and an ace)", "the wish to discard: in mus windows only")

#: Kinds of sign window.
WINDOW_MUS, WINDOW_GRANDE = 0, 1
WINDOW_NAMES = ("mus", "grande")

#: Observation pieces appended after ``observation.PIECES`` when signals are on: (name, size, meaning).
SIGNAL_PIECES: tuple[tuple[str, int, str], ...] = (
    ("sign_window", 2, "a sign decision is pending: in a mus window, in the grande window"),
    ("signs_mus", 4 * NUM_SIGNS, "per seat q, one-hot token seen in the latest mus window of this hand "
                                 "(q = 0 own; zeros: not signed yet, or not seen)"),
    ("signs_grande", 4 * NUM_SIGNS, "per seat q, one-hot token seen in the grande window (as signs_mus)"),
    ("sign_config", 2, "1 if signs are free (cheap talk), 0 if truthful; signal_intercept_p"),
)
SIGNAL_DIM = sum(size for _, size, _ in SIGNAL_PIECES)
#: Offsets of the signal pieces relative to the start of the signal block (add ``observation.OBS_DIM``).
SIGNAL_OFFSETS: dict[str, slice] = {}
_o = 0
for _name, _size, _ in SIGNAL_PIECES:
    SIGNAL_OFFSETS[_name] = slice(_o, _o + _size)
    _o += _size
del _o, _name, _size


@lru_cache(maxsize=2)
def hand_sign_bits(kings: int) -> npt.NDArray[np.int32]:
    """``(M,)`` bitmask per rank multiset (``tables.multiset_index``) of the signs true for it, without
    REAL31 (it depends on suits and the config) and MUS (it depends on the window); NONE always set.

    CIEGO is set when no other hand sign is; a 31 real has 31 points, so TREINTA_Y_UNA is set for it
    and CIEGO is right without knowing about REAL31.
    """
    t = get_tables(kings)
    top = t.num_ranks
    bits = np.zeros(t.size, dtype=np.int32)
    for m in range(t.size):
        ranks = [int(r) for r in t.ranks[m]]
        kings_n, aces_n = ranks.count(top), ranks.count(1)
        points = int(t.juego_points[m])
        pc = int(t.pares_class[m])
        true = {
            Sign.DOS_REYES: kings_n in (2, 4), Sign.TRES_REYES: kings_n == 3,
            Sign.DOS_ASES: aces_n in (2, 4), Sign.TRES_ASES: aces_n == 3,
            Sign.MEDIAS: pc == 2, Sign.DUPLES: pc == 3, Sign.PAR: pc == 1,
            Sign.JUEGO: 32 <= points <= 40, Sign.TREINTA_Y_UNA: points == 31, Sign.TREINTA: points == 30,
            Sign.VEINTINUEVE: points == 29, Sign.SOLOMILLO: kings_n == 3 and aces_n == 1,
        }
        b = 1 << Sign.NONE
        for s, ok in true.items():
            if ok:
                b |= 1 << s
        if b == 1 << Sign.NONE:
            b |= 1 << Sign.CIEGO
        bits[m] = b
    bits.setflags(write=False)
    return bits


def true_signs(hand: npt.ArrayLike, config: MusConfig, window: int) -> int:
    """Bitmask (bit t = token t) of the tokens whose meaning is true for a 4-card ``hand`` in a window
    of kind ``window`` (:data:`WINDOW_MUS` or :data:`WINDOW_GRANDE`). NONE is always true."""
    cards = [int(c) for c in hand]
    if len(cards) != 4 or not all(0 <= c < NUM_CARDS for c in cards):
        raise ValueError(f"a hand is 4 card ids 0..39, got {hand!r}")
    b = int(hand_sign_bits(config.kings)[int(get_tables(config.kings).hand_index(cards))])
    if bool(is_real31(cards, config.real31, config.kings)):
        b |= 1 << Sign.REAL31
    if window == WINDOW_MUS:
        b |= 1 << Sign.MUS
    return b


def legal_signs(hand: npt.ArrayLike, config: MusConfig, window: int) -> int:
    """Bitmask of the legal tokens: all with ``signals="free"``, :func:`true_signs` with "truthful"."""
    if config.signals == "free":
        return ALL_SIGNS
    if config.signals == "truthful":
        return true_signs(hand, config, window)
    raise ValueError("legal_signs: signals are off in this config (MusConfig(signals='truthful' or 'free'))")


def intercept_uniform(seed: int, hand_number: int, window: int, signer: int, observer: int) -> float:
    """The uniform number in [0, 1) that decides whether ``observer`` sees ``signer``'s token in window
    counter ``window`` of hand ``hand_number`` of the game ``seed`` (absolute seats).

    ``u = (event_hash(seed, STREAM_SIGNAL, hand_number, 16 * window + 4 * signer + observer) >> 11) / 2**53``.
    """
    h = int(event_hash(int(seed), STREAM_SIGNAL, int(hand_number), 16 * int(window) + 4 * signer + observer))
    return (h >> 11) * (1.0 / 9007199254740992.0)


def intercepted(seed: int, hand_number: int, window: int, signer: int, observer: int, p: float) -> bool:
    """Whether opponent ``observer`` sees ``signer``'s token (probability ``p``; see :func:`intercept_uniform`)."""
    return intercept_uniform(seed, hand_number, window, signer, observer) < p


def sees_sign(seed: int, hand_number: int, window: int, signer: int, observer: int, p: float) -> bool:
    """Whether ``observer`` sees ``signer``'s token: itself and its partner always, an opponent if intercepted."""
    if (observer - signer) % 2 == 0:
        return True
    return intercepted(seed, hand_number, window, signer, observer, p)


def sign_table() -> str:
    """The tokens as a Markdown table (action id, name, gesture, when it is true); the README shows it."""
    lines = ["| id | action | gesture | legal with `truthful` when the hand has |", "|---|---|---|---|"]
    for t in Sign:
        lines.append(f"| {SIGNAL_BASE + t} | {SIGN_NAMES[t]} | {SIGN_GESTURES[t]} | {SIGN_MEANINGS[t]} |")
    return "\n".join(lines)
