"""The discrete action space of RULES.md §9.1: 31 integer ids, named once here.

====  ===============  ===========================================================================
id    action           meaning
====  ===============  ===========================================================================
0     MUS              ask to draw (mus round continues)
1     NO_MUS           cut the mus ("no hay mus"); betting starts with the mano
2-17  DISCARD_m        discard the hand slots whose bit is set in m (bit i = slot i, §9.2)
18    PASO             no bet (opening round only)
19-23 ENVIDO_k         open with a stake of k, or raise the live stake by k; k = ``bet_sizes[id-19]``
24    QUIERO           accept the live stake
25    NO_QUIERO        refuse the live stake
26    ORDAGO           stake the whole game
27-30 PARES_SI/NO,     the forced declarations (automatic with ``auto_declare=True``)
      JUEGO_SI/NO
31-46 SIGN_<token>     a seña (RULES.md §8): token ``t`` (:class:`Sign`) is id ``SIGNAL_BASE + t``; these ids
                       exist only with ``MusConfig(signals="truthful" or "free")``
====  ===============  ===========================================================================

With the default ``bet_sizes = (2, 3, 4, 5, 10)`` the ENVIDO ids are named ENVIDO_2 ... ENVIDO_10;
with other sizes id ``19 + i`` means ``bet_sizes[i]`` and :func:`action_to_string` says so.

This module owns the whole id space: the 31 ids of §9.1 (:data:`NUM_ACTIONS`, which never changes) and the
16 sign ids appended after them (:data:`SIGNAL_BASE`, :data:`NUM_SIGNS`, :func:`is_sign_action`,
:func:`sign_of_action`), so that :func:`num_actions` is 31 with signals off and 47 with signals on. What the
tokens mean, who may make them and who sees them is :mod:`mus_env.signals`, which imports this module (never
the reverse).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from .config import MusConfig, signals_on

__all__ = [
    "Action", "NUM_ACTIONS", "DISCARD_BASE", "ENVIDO_BASE", "ENVIDO_ACTIONS", "DISCARD_ACTIONS",
    "action_to_string", "string_to_action", "discard_action", "discard_mask", "envido_amount",
    "Sign", "NUM_SIGNS", "SIGNAL_BASE", "SIGN_NAMES", "SIGN_WORDS", "num_actions", "is_sign_action",
    "sign_of_action", "ACTION_ROWS", "action_table",
]


class Action(IntEnum):
    """Action ids of RULES.md §9.1."""

    MUS = 0
    NO_MUS = 1
    DISCARD_0 = 2
    DISCARD_1 = 3
    DISCARD_2 = 4
    DISCARD_3 = 5
    DISCARD_4 = 6
    DISCARD_5 = 7
    DISCARD_6 = 8
    DISCARD_7 = 9
    DISCARD_8 = 10
    DISCARD_9 = 11
    DISCARD_10 = 12
    DISCARD_11 = 13
    DISCARD_12 = 14
    DISCARD_13 = 15
    DISCARD_14 = 16
    DISCARD_15 = 17
    PASO = 18
    ENVIDO_2 = 19
    ENVIDO_3 = 20
    ENVIDO_4 = 21
    ENVIDO_5 = 22
    ENVIDO_10 = 23
    QUIERO = 24
    NO_QUIERO = 25
    ORDAGO = 26
    PARES_SI = 27
    PARES_NO = 28
    JUEGO_SI = 29
    JUEGO_NO = 30


NUM_ACTIONS = len(Action)
DISCARD_BASE = int(Action.DISCARD_0)
ENVIDO_BASE = int(Action.ENVIDO_2)
DISCARD_ACTIONS = tuple(range(DISCARD_BASE, DISCARD_BASE + 16))
ENVIDO_ACTIONS = tuple(range(ENVIDO_BASE, ENVIDO_BASE + 5))
_DEFAULT_CONFIG = MusConfig()


class Sign(IntEnum):
    """Sign tokens of the señas channel (RULES.md §8); token ``t`` is action id ``SIGNAL_BASE + t``.

    Their meanings, gestures and legality are in :mod:`mus_env.signals` (``SIGN_MEANINGS``, ``legal_signs``).
    """

    NONE = 0
    DOS_REYES = 1
    TRES_REYES = 2
    DOS_ASES = 3
    TRES_ASES = 4
    MEDIAS = 5
    DUPLES = 6
    PAR = 7
    JUEGO = 8
    TREINTA_Y_UNA = 9
    TREINTA = 10
    VEINTINUEVE = 11
    CIEGO = 12
    REAL31 = 13
    SOLOMILLO = 14
    MUS = 15


#: Number of sign tokens (and of sign action ids).
NUM_SIGNS = len(Sign)
#: Action id of token 0 (the first id after the 31 of RULES.md §9.1).
SIGNAL_BASE = NUM_ACTIONS
#: Action names of the sign ids: ``SIGN_NONE``, ``SIGN_DOS_REYES`` ... (by token).
SIGN_NAMES = tuple(f"SIGN_{s.name}" for s in Sign)
#: Mus words of each token (by token), as :func:`action_to_string` gives them with ``words=True``.
SIGN_WORDS = ("sin seña", "seña: dos reyes", "seña: tres reyes", "seña: dos ases", "seña: tres ases",
              "seña: medias", "seña: duples", "seña: par", "seña: juego", "seña: 31", "seña: 30 de punto",
              "seña: 29", "seña: ciego", "seña: 31 real", "seña: solomillo", "seña: mus")


def num_actions(config: MusConfig) -> int:
    """Size of the action space under ``config``: 31, or 31 + 16 sign ids with signals on."""
    return NUM_ACTIONS + (NUM_SIGNS if signals_on(config) else 0)


def is_sign_action(action: int) -> bool:
    """Whether an action id is a sign id (31..46)."""
    return SIGNAL_BASE <= action < SIGNAL_BASE + NUM_SIGNS


def sign_of_action(action: int) -> Sign:
    """The token of a sign action id (``action - SIGNAL_BASE``).

    Raises:
        ValueError: ``action`` is not a sign id 31..46.
    """
    if not is_sign_action(action):
        raise ValueError(f"action {action!r} is not a sign ({SIGNAL_BASE}..{SIGNAL_BASE + NUM_SIGNS - 1})")
    return Sign(action - SIGNAL_BASE)

_WORDS = {
    Action.MUS: "mus", Action.NO_MUS: "no hay mus", Action.PASO: "paso", Action.QUIERO: "quiero",
    Action.NO_QUIERO: "no quiero", Action.ORDAGO: "órdago", Action.PARES_SI: "pares sí",
    Action.PARES_NO: "pares no", Action.JUEGO_SI: "juego sí", Action.JUEGO_NO: "juego no",
}


def discard_action(mask: int) -> int:
    """Action id of the discard mask ``m`` (0..15; bit i = hand slot i)."""
    if isinstance(mask, bool) or not isinstance(mask, int) or not 0 <= mask <= 15:
        raise ValueError(f"a discard mask is an int 0..15 (bit i = hand slot i), got {mask!r}")
    return DISCARD_BASE + mask


def discard_mask(action: int) -> int:
    """Discard mask (0..15) of a DISCARD action id."""
    if action not in DISCARD_ACTIONS:
        raise ValueError(f"action {action!r} is not a DISCARD action ({DISCARD_BASE}..{DISCARD_BASE + 15})")
    return int(action) - DISCARD_BASE


def envido_amount(action: int, config: MusConfig = _DEFAULT_CONFIG) -> int:
    """Stones offered by an ENVIDO action id under ``config.bet_sizes``."""
    if action not in ENVIDO_ACTIONS:
        raise ValueError(f"action {action!r} is not an ENVIDO action ({ENVIDO_BASE}..{ENVIDO_BASE + 4})")
    return config.bet_sizes[int(action) - ENVIDO_BASE]


def action_to_string(action: int, config: MusConfig = _DEFAULT_CONFIG, *, words: bool = False) -> str:
    """Name of an action id: ``"ENVIDO_2"``, ``"DISCARD_5"``; ``words=True`` gives Mus words ("envido 2").

    With signals on (``config.signals`` "truthful" or "free") the sign ids 31..46 are named too:
    ``"SIGN_DOS_REYES"``, in words "seña: dos reyes" (:data:`SIGN_NAMES`, :data:`SIGN_WORDS`).
    ``string_to_action(action_to_string(a)) == a`` for every id (with the same config).
    """
    n = num_actions(config)
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and SIGNAL_BASE <= action < n:
        t = int(action) - SIGNAL_BASE
        return SIGN_WORDS[t] if words else SIGN_NAMES[t]
    if isinstance(action, np.integer):
        action = int(action)
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        extra = ("" if n > NUM_ACTIONS
                 else " (the sign ids 31..46 exist only with MusConfig(signals='truthful' or 'free'))")
        raise ValueError(f"action must be an int 0..{n - 1}, got {action!r}{extra}")
    a = Action(action)
    if a in ENVIDO_ACTIONS:
        k = envido_amount(a, config)
        return f"envido {k}" if words else f"ENVIDO_{k}"
    if a in DISCARD_ACTIONS:
        m = discard_mask(a)
        if words:
            slots = [str(i) for i in range(4) if m >> i & 1]
            return f"descarta {len(slots)} (slots {','.join(slots)})" if slots else "descarta 0"
        return a.name
    return _WORDS[a] if words else a.name


def string_to_action(name: str, config: MusConfig = _DEFAULT_CONFIG) -> int:
    """Inverse of :func:`action_to_string` (names only, case-insensitive)."""
    key = name.strip().upper()
    if key.startswith("SIGN_"):
        if key in SIGN_NAMES and signals_on(config):
            return SIGNAL_BASE + SIGN_NAMES.index(key)
        if key in SIGN_NAMES:
            raise ValueError(f"{name!r} is a sign: signs exist only with MusConfig(signals='truthful' or 'free')")
    if key.startswith("ENVIDO_"):
        try:
            k = int(key[len("ENVIDO_"):])
        except ValueError:
            k = -1
        if k in config.bet_sizes:
            return ENVIDO_BASE + config.bet_sizes.index(k)
        raise ValueError(f"{name!r}: no ENVIDO action offers {key[7:]} stones; bet_sizes are {config.bet_sizes}")
    try:
        return int(Action[key])
    except KeyError:
        raise ValueError(f"unknown action name {name!r}; names are {', '.join(a.name for a in Action)}") from None


#: Rows of :func:`action_table`: (first id, last id, name, meaning); ENVIDO's meaning takes the bet sizes.
ACTION_ROWS = (
    (int(Action.MUS), int(Action.MUS), "MUS", "ask to draw"),
    (int(Action.NO_MUS), int(Action.NO_MUS), "NO_MUS", 'cut the mus ("no hay mus"); betting starts with the mano'),
    (DISCARD_BASE, DISCARD_BASE + 15, "DISCARD_m",
     "discard the hand slots whose bit is set in m (slot order: rank, value, number desc, suit)"),
    (int(Action.PASO), int(Action.PASO), "PASO", "no bet (opening round)"),
    (ENVIDO_BASE, ENVIDO_BASE + 4, "ENVIDO_k",
     "open with k, or raise by k; k = `bet_sizes` = {sizes} (`MusGame.step_envido(k)` takes any k ≥ 2)"),
    (int(Action.QUIERO), int(Action.QUIERO), "QUIERO", "accept"),
    (int(Action.NO_QUIERO), int(Action.NO_QUIERO), "NO_QUIERO", "refuse (the bettor scores the fallback at once)"),
    (int(Action.ORDAGO), int(Action.ORDAGO), "ORDAGO", "stake the whole game"),
    (int(Action.PARES_SI), int(Action.JUEGO_NO), "PARES_SI/NO, JUEGO_SI/NO",
     "forced declarations, applied automatically by default"),
    (SIGNAL_BASE, SIGNAL_BASE + NUM_SIGNS - 1, "SIGN_NONE, SIGN_DOS_REYES, …",
     'señas, only with `MusConfig(signals="truthful" or "free")`'),
)


def action_table(config: MusConfig = _DEFAULT_CONFIG) -> str:
    """The action id space as a markdown table (the docs' table is generated from it)."""
    sizes = ", ".join(str(k) for k in config.bet_sizes)
    lines = ["| id | action | meaning |", "|---|---|---|"]
    for first, last, name, meaning in ACTION_ROWS:
        ids = str(first) if first == last else f"{first}–{last}"
        lines.append(f"| {ids} | {name} | {meaning.format(sizes=sizes)} |")
    return "\n".join(lines)
