"""What a bidding-style profile splits decisions by besides lance, role and strength: the score and the señas.

Score situations
    A betting decision is counted by the deciding team's **lead** (:data:`SCORE_LEADS`: ``behind``, ``level`` or
    ``ahead`` in stones of the current game, as its observation shows them, stones already paid this hand
    included) and by whether the game is **near the end** (:func:`near_end`): a team needs at most
    :func:`near_end_stones` more stones to win, ``target // 8`` (5 of 40, 3 of 30, at least 1). The profile reports
    :data:`SCORE_SITUATIONS`: the three leads (which split every decision) and ``near end`` (whatever the lead).

Señas
    With signals on (``MusConfig(signals="truthful")`` or ``"free"``), each sign decision is counted by the kind
    of its window (:data:`SIGN_WINDOWS`: a mus window, before a mus call, or the grande window, after the mus is
    cut; :mod:`mus_env.signals`), the hand class held when signing (the mus phase's classes) and the token made
    (:data:`SIGN_TOKENS`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mus_env.signals import NUM_SIGNS, WINDOW_NAMES, Sign

__all__ = ["SCORE_LEADS", "SCORE_SITUATIONS", "NEAR_END_DIVISOR", "near_end_stones", "near_end", "score_lead",
           "SIGN_WINDOWS", "SIGN_TOKENS"]

#: The deciding team's lead, in the order of the counts' first score axis.
SCORE_LEADS = ("behind", "level", "ahead")
#: The score situations a profile reports: the leads, and near the end of the game (any lead).
SCORE_SITUATIONS = ("ahead", "level", "behind", "near end")
#: Near the end: a team needs at most ``target // NEAR_END_DIVISOR`` stones (at least 1) to win.
NEAR_END_DIVISOR = 8
#: Kinds of sign window, in the order of the sign counts' first axis.
SIGN_WINDOWS = WINDOW_NAMES
#: The tokens, in the order of the sign counts' last axis: ``none``, ``dos_reyes``, ... (``Sign`` names).
SIGN_TOKENS = tuple(s.name.lower() for s in Sign)
assert len(SIGN_TOKENS) == NUM_SIGNS


def near_end_stones(target: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The stones a team may still need with the game near its end: ``target // 8``, at least 1."""
    return np.maximum(np.asarray(target, dtype=np.int64) // NEAR_END_DIVISOR, 1)


def near_end(own: npt.ArrayLike, other: npt.ArrayLike, target: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``(n,)`` whether either team needs at most :func:`near_end_stones` stones to win."""
    own, other, target = (np.asarray(x, dtype=np.int64) for x in (own, other, target))
    return target - np.maximum(own, other) <= near_end_stones(target)


def score_lead(own: npt.ArrayLike, other: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``(n,)`` index in :data:`SCORE_LEADS` of the deciding team's lead (own stones against the other team's)."""
    return (np.sign(np.asarray(own, dtype=np.int64) - np.asarray(other, dtype=np.int64)) + 1).astype(np.int64)
