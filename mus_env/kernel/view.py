"""A seat's view of one table, written straight into the output rows: its observation and the legal mask.

The observation of a seat is written by :func:`encode`, a transcription of :func:`mus_env.observation.write`
(the pieces of :mod:`mus_env.observation`), with the señas' block (:func:`encode_signs`) after ``OBS_DIM`` when
signals are on; nothing is cached per seat. It reads a table's state row, or alike a ``MusGame``'s view record
(``observation.VIEW_FIELDS``: state fields of the same names), for ``drivers.observe_view``.
The legal mask (:func:`write_mask`) and the legality check of an action
(:func:`is_illegal`) read the pending decision's Legal set and, during a sign decision, its legal tokens
(``handlers.pending_sign_bits``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from ..phases import NUM_OUTCOMES, ORDAGO_STAKE
from ..tables import PUNTO
from .handlers import intercept_uniform, multiset_of, pending_sign_bits
from .layout import (
    BET_CONFIRM,
    BET_OPEN,
    C_KINGS,
    C_SIGNALS,
    C_TARGET,
    DECLARE,
    DISCARD_ROUNDS_,
    GAME_OVER,
    NUM_ACTIONS_,
    NUM_SIGNS_,
    O_ACTING,
    O_BETTOR,
    O_DISCARDS,
    O_FALLBACK,
    O_GAMES_WON,
    O_HAND_STONES,
    O_JUEGO_DECL,
    O_KINGS8,
    O_LANCE,
    O_LAST,
    O_MANO,
    O_MUS_ROUNDS,
    O_NUMBERS,
    O_ORDAGO,
    O_OUTCOME,
    O_PARES_CLASS,
    O_PARES_DECL,
    O_PHASE,
    O_POINTS,
    O_PREV_COUNTS,
    O_PREV_SHOWN,
    O_PREV_STONES,
    O_PUNTO,
    O_RAISED,
    O_RANK_COUNTS,
    O_RESPONDER,
    O_SCORES,
    O_SIGN_CONFIG,
    O_SIGN_WINDOW,
    O_SIGNS_GRANDE,
    O_SIGNS_MUS,
    O_SPEECH,
    O_STAKE,
    O_SUITS,
    O_TARGET,
    O_VACAS_WON,
    O_WINNER,
    ROUNDS_SCALE_,
    SIGNAL,
    SIGNAL_BASE_,
    SIGNALS_FREE,
    STAKE_SCALE_,
    TARGET_SCALE_,
)


# ---------------------------------------------------------------------------------------------------
# Observation (mus_env.observation.write, transcribed)
@njit(cache=True)
def encode(st, R, seat: int, row: npt.NDArray[np.float32]) -> None:
    """Write absolute ``seat``'s view of the table into ``row``, exactly as ``MusGame.observe``: ``(OBS_DIM,)``,
    or with signals on ``(observation.obs_dim(config),)``, the signal block (:func:`encode_signs`) after OBS_DIM.
    During a sign decision the ``phase`` one-hot (and ``lance``, ``responder``) are zeros."""
    row[:] = 0.0
    me = seat % 2
    mano = st.mano
    # own hand (numbers, suits, rank counts; pares class and points once the hand is full)
    hand = st.hands[seat]
    full = True
    for j in range(4):
        c = hand[j]
        if c < 0:
            full = False
            continue
        row[O_NUMBERS + 10 * j + c % 10] = 1.0
        row[O_SUITS + 4 * j + c // 10] = 1.0
        row[O_RANK_COUNTS + R.rank_of_card[c] - 1] += 1.0
    if full:
        idx = multiset_of(hand, R)
        row[O_PARES_CLASS + R.pares_class[idx]] = 1.0
        row[O_POINTS] = R.juego_points[idx] / 40.0
    # who, what, where
    row[O_MANO + (mano - seat) % 4] = 1.0
    if R.cfg[C_KINGS] == 8:
        row[O_KINGS8] = 1.0
    phase = st.phase
    if phase != SIGNAL:                                # (Phase.SIGNAL has no entry: its kind is in sign_window)
        row[O_PHASE + phase] = 1.0
    if phase != GAME_OVER:
        row[O_ACTING + (mano + st.rel - seat) % 4] = 1.0
    if DECLARE <= phase <= BET_CONFIRM:
        row[O_LANCE + st.ls_lance[st.slot]] = 1.0
        if phase >= BET_OPEN:
            row[O_RESPONDER + (0 if phase == BET_OPEN else st.resp_i + 1)] = 1.0
    # betting record of each lance slot
    for sl in range(4):
        row[O_OUTCOME + NUM_OUTCOMES * sl + st.ls_outcome[sl]] = 1.0
        if st.ls_winner[sl] >= 0:
            row[O_WINNER + 2 * sl + (1 if st.ls_winner[sl] != me else 0)] = 1.0
        stake = st.ls_stake[sl]
        if stake == ORDAGO_STAKE:
            row[O_ORDAGO + sl] = 1.0
        elif stake:
            row[O_STAKE + sl] = stake / STAKE_SCALE_
        if st.ls_fallback[sl]:
            row[O_FALLBACK + sl] = st.ls_fallback[sl] / STAKE_SCALE_
        if st.ls_bettor[sl] >= 0:
            row[O_BETTOR + 2 * sl + (1 if st.ls_bettor[sl] != me else 0)] = 1.0
        if st.ls_last[sl] >= 0:
            row[O_LAST + 4 * sl + (st.ls_last[sl] - seat) % 4] = 1.0
        for s in range(4):
            q = (s - seat) % 4
            if st.ls_said[sl, s] >= 0:
                row[O_SPEECH + 20 * sl + 5 * q + st.ls_said[sl, s]] = 1.0
            if st.ls_raised[sl, s]:
                row[O_RAISED + 4 * sl + q] = st.ls_raised[sl, s] / STAKE_SCALE_
    if st.ls_lance[3] == PUNTO:
        row[O_PUNTO] = 1.0
    # declarations (by absolute seat)
    for s in range(4):
        q = (s - seat) % 4
        if st.decl[0, s] >= 0:
            row[O_PARES_DECL + 2 * q + 1 - st.decl[0, s]] = 1.0
        if st.decl[1, s] >= 0:
            row[O_JUEGO_DECL + 2 * q + 1 - st.decl[1, s]] = 1.0
    # mus phase summary
    if st.mus_round:
        row[O_MUS_ROUNDS] = st.mus_round / ROUNDS_SCALE_
        for j in range(min(st.mus_round, DISCARD_ROUNDS_)):
            for s in range(4):
                if st.disc_hist[j, s]:
                    row[O_DISCARDS + 4 * j + (s - seat) % 4] = st.disc_hist[j, s] / 4.0
    # stones, scores, games
    target = R.cfg[C_TARGET]
    for k in range(2):
        team = me if k == 0 else 1 - me
        row[O_HAND_STONES + k] = st.hand_stones[team] / target
        row[O_SCORES + k] = st.scores[team] / target
        row[O_GAMES_WON + k] = st.games_won[team]
        row[O_VACAS_WON + k] = st.vacas_won[team]
        row[O_PREV_STONES + k] = st.prev_stones[team] / target
    row[O_TARGET] = target / TARGET_SCALE_
    if st.prev_shown:
        row[O_PREV_SHOWN] = 1.0
        for s in range(4):
            q = (s - seat) % 4
            for r in range(10):
                row[O_PREV_COUNTS + 10 * q + r] = st.prev_counts[s, r]
    if R.cfg[C_SIGNALS]:
        encode_signs(st, R, seat, row)


@njit(cache=True, inline="always")
def sees_sign(st, R, window: int, signer: int, observer: int) -> bool:
    """``signals.sees_sign`` in the current hand: the signer and its partner always, an opponent when the
    interception draw of (hand, window, signer, observer) is below ``intercept_p``."""
    if (observer - signer) % 2 == 0:
        return True
    p = R.intercept_p
    if p <= 0.0:                                       # (u >= 0: never below 0; skip the hash)
        return False
    return intercept_uniform(st.game_seeds, st.hand_number, window, signer, observer) < p


@njit(cache=True)
def encode_signs(st, R, seat: int, row: npt.NDArray[np.float32]) -> None:
    """The signal block of ``seat``'s view (signals.SIGNAL_PIECES, after OBS_DIM): the pending window's kind,
    the tokens it sees of the latest mus window and of the grande window (per seat q relative to it),
    and the channel's settings."""
    if st.phase == SIGNAL:
        row[O_SIGN_WINDOW + st.sig_window] = 1.0
    w = st.mus_round
    for s in range(4):
        q = (s - seat) % 4
        t = st.sig_mus[s]
        if t >= 0 and sees_sign(st, R, w, s, seat):
            row[O_SIGNS_MUS + NUM_SIGNS_ * q + t] = 1.0
        t = st.sig_grande[s]
        if t >= 0 and sees_sign(st, R, w + 1, s, seat):
            row[O_SIGNS_GRANDE + NUM_SIGNS_ * q + t] = 1.0
    row[O_SIGN_CONFIG] = 1.0 if R.cfg[C_SIGNALS] == SIGNALS_FREE else 0.0
    row[O_SIGN_CONFIG + 1] = R.intercept_p


@njit(cache=True, inline="always")
def write_mask(st, R, mask: npt.NDArray[np.int8], k: int) -> None:
    """The legal mask of the pending decision into ``mask[k]``: NUM_ACTIONS columns, or with signals on
    ``actions.num_actions(config)``, the sign ids' columns from :func:`pending_sign_bits`."""
    for a in range(NUM_ACTIONS_):                      # (a loop: array-to-array assignment compiles slowly)
        mask[k, a] = R.legal_masks[st.legal, a]
    if mask.shape[1] > NUM_ACTIONS_:
        bits = pending_sign_bits(st, R)
        for t in range(NUM_SIGNS_):
            mask[k, SIGNAL_BASE_ + t] = (bits >> t) & 1


@njit(cache=True, inline="always")
def is_illegal(st, R, a: int) -> bool:
    """Whether action id ``a`` is not legal for the pending decision: a non-sign id outside its Legal set
    (during a sign decision the set is Legal.NONE), or a sign id outside a sign decision or not among
    its legal tokens."""
    if 0 <= a < NUM_ACTIONS_ and R.legal_masks[st.legal, a] != 0:
        return False
    if SIGNAL_BASE_ <= a < SIGNAL_BASE_ + NUM_SIGNS_:
        return (pending_sign_bits(st, R) >> (a - SIGNAL_BASE_)) & 1 == 0
    return True


@njit(cache=True)
def write_view(S, R, b: int, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> None:
    """The acting seat's observation and legal mask of table ``b`` into the output rows."""
    st = S[b]
    encode(st, R, (st.mano + st.rel) % 4, obs[b])
    write_mask(st, R, mask, b)
