"""The baselines' compiled paths (numba): the observation reader and the rule-based and equity decisions.

:func:`agents.features.read`, :class:`agents.rule.RuleBasedAgent` and :class:`agents.equity.EquityAgent` run their
hot paths here, one compiled pass over the rows of a batch, each row handled by plain loops as the engine's kernel
handles a table (:mod:`mus_env.kernel`). The numpy code beside each agent stays the readable reference: every
function here is a transcription of a numpy one (named in its docstring), with the same operations in the same
order, so the same observations, masks and random draws give the same actions bit for bit
(``tests/test_agent_digests.py`` pins every action on fixed deal sets; ``tests/test_agents.py`` holds the
compiled and the reference paths equal on random batches). Randomness stays outside: the callers draw from their
``numpy`` generator exactly as the reference does and pass the draws in.

The reader packs a batch's features into two tables, one row per observation: ``ints`` ``(B, NUM_INT)`` int64
with the columns ``I_*`` below and ``floats`` ``(B, 10)`` float64 (the lance percentiles: strictly weaker per
lance ``0..4``, equal per lance ``5..9``). Everything is compiled on first use and cached on disk (``cache=True``),
as the engine's kernel is.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mus_env.actions import DISCARD_BASE, ENVIDO_BASE, NUM_ACTIONS, Action
from mus_env.interrupts import ctrl_c_held
from mus_env.observation import LANCE_OFFSETS, OBS_DIM, OFFSETS, ROUNDS_SCALE, STAKE_SCALE, TARGET_SCALE
from mus_env.phases import Phase
from mus_env.signals import SIGNAL_OFFSETS
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO

__all__ = ["I_KINGS8", "I_K", "I_RANKS", "I_VALUES", "I_IDX", "I_TOP", "I_PARES_CLASS", "I_POINTS", "I_STRENGTH",
           "I_SEAT", "I_PHASE", "I_LANCE", "I_SLOT", "I_RESPONDER", "I_STAKE", "I_ORDAGO", "I_FALLBACK",
           "I_PARES_DECL", "I_JUEGO_DECL", "I_OWN", "I_OTHER", "I_TARGET", "I_MUS_ROUNDS", "NUM_INT", "NUM_FLOAT",
           "read_rows", "rule_rows", "equity_rows", "equity_values", "RULE_FLOATS", "RULE_INTS", "RULE_LANCES",
           "EQUITY_FLOATS", "EQUITY_LANCES", "run_kernel"]

# ---------------------------------------------------------------------------------------------------
# The packed feature table (columns of ``ints``; agents.features.Features names the same things).
I_KINGS8 = 0            # 1: the 8-kings variant
I_K = 1                 # 4 columns: card number index per slot (0 A .. 9 R)
I_RANKS = 5             # 4 columns: rank per slot
I_VALUES = 9            # 4 columns: point value per slot
I_IDX = 13              # rank multiset index
I_TOP = 14              # rank of a rey
I_PARES_CLASS = 15
I_POINTS = 16
I_STRENGTH = 17         # 5 columns: strength per lance id
I_SEAT = 22             # own relative seat, 0 mano .. 3 postre
I_PHASE = 23
I_LANCE = 24
I_SLOT = 25
I_RESPONDER = 26
I_STAKE = 27
I_ORDAGO = 28
I_FALLBACK = 29
I_PARES_DECL = 30       # 4 columns, per seat q
I_JUEGO_DECL = 34       # 4 columns, per seat q
I_OWN = 38
I_OTHER = 39
I_TARGET = 40
I_MUS_ROUNDS = 41
NUM_INT = 42
NUM_FLOAT = 10          # below[5], equal[5]

# observation columns
_O_HAND = OFFSETS["hand_numbers"].start
_O_KINGS8 = OFFSETS["kings8"].start
_O_MANO, _N_MANO = OFFSETS["mano"].start, OFFSETS["mano"].stop - OFFSETS["mano"].start
_O_PHASE, _N_PHASE = OFFSETS["phase"].start, OFFSETS["phase"].stop - OFFSETS["phase"].start
_O_LANCE, _N_LANCE = OFFSETS["lance"].start, OFFSETS["lance"].stop - OFFSETS["lance"].start
_O_RESP, _N_RESP = OFFSETS["responder"].start, OFFSETS["responder"].stop - OFFSETS["responder"].start
_O_PARES_DECL = OFFSETS["pares_decl"].start
_O_JUEGO_DECL = OFFSETS["juego_decl"].start
_O_TARGET = OFFSETS["target"].start
_O_SCORES = OFFSETS["scores"].start
_O_ROUNDS = OFFSETS["mus_rounds"].start
_STAKE_COL = np.array([lo["stake"] for lo in LANCE_OFFSETS], dtype=np.int64)
_ORDAGO_COL = np.array([lo["ordago"] for lo in LANCE_OFFSETS], dtype=np.int64)
_FALLBACK_COL = np.array([lo["fallback"] for lo in LANCE_OFFSETS], dtype=np.int64)
_O_SIGN_WINDOW = OBS_DIM + SIGNAL_OFFSETS["sign_window"].start
_SIGN_WINDOW_STOP = OBS_DIM + SIGNAL_OFFSETS["sign_window"].stop
_STAKE_SCALE = np.float32(STAKE_SCALE)
_TARGET_SCALE = np.float32(TARGET_SCALE)
_ROUNDS_SCALE = np.float32(ROUNDS_SCALE)
_TWO = np.float32(2.0)
_HALF = np.float32(0.5)

_MUS_CALL, _DISCARD, _BET_OPEN = int(Phase.MUS_CALL), int(Phase.DISCARD), int(Phase.BET_OPEN)
_BET_CONFIRM, _SIGNAL = int(Phase.BET_CONFIRM), int(Phase.SIGNAL)
_MUS, _NO_MUS = int(Action.MUS), int(Action.NO_MUS)
_PASO, _QUIERO, _NO_QUIERO, _ORDAGO = int(Action.PASO), int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO)
_DECL_SI = 1


@njit(cache=True)
def _one_hot(x, b, start, n):  # noqa: ANN001, ANN202 - numba
    """``index + 1`` of a one-hot piece (0 when empty): the weighted float32 sum ``features.read`` rounds."""
    s = np.float32(0.0)
    for j in range(n):
        s += x[b, start + j] * np.float32(j + 1)
    return np.int64(np.rint(s))


@njit(cache=True)
def read_rows(x, rank_k, value_k, pares_class, points, strength, below, equal, binom, ints, floats):  # noqa: ANN001, ANN201
    """:func:`agents.features.read` of every row of ``x`` ``(B, obs_dim)`` float32 into ``ints`` / ``floats``.

    The variant tables are indexed by variant (0: 8 kings, 1: 4 kings): ``rank_k``, ``value_k`` ``(2, 10)``;
    ``pares_class``, ``points`` ``(2, M)``; ``strength`` ``(2, M, 5)``; ``below``, ``equal`` ``(2, M, 5)``
    (``M`` the larger variant's size); ``binom`` ``(16, 5)`` binomial coefficients.
    """
    B, D = x.shape
    signals = D >= _SIGN_WINDOW_STOP
    for b in range(B):
        k8 = x[b, _O_KINGS8] > 0.5
        v = 0 if k8 else 1
        row = ints[b]
        row[I_KINGS8] = 1 if k8 else 0
        for s in range(4):                                  # argmax of each slot's 10 card numbers
            best, kb = x[b, _O_HAND + 10 * s], 0
            for j in range(1, 10):
                if x[b, _O_HAND + 10 * s + j] > best:
                    best, kb = x[b, _O_HAND + 10 * s + j], j
            row[I_K + s] = kb
            row[I_RANKS + s] = rank_k[v, kb]
            row[I_VALUES + s] = value_k[v, kb]
        idx = 0
        for s in range(4):                                  # multiset index of the ranks, ascending
            idx += binom[row[I_RANKS + 3 - s] - 1 + s, s + 1]
        row[I_IDX] = idx
        row[I_TOP] = rank_k[v, 9]
        row[I_PARES_CLASS] = pares_class[v, idx]
        row[I_POINTS] = points[v, idx]
        for lance in range(5):
            row[I_STRENGTH + lance] = strength[v, idx, lance]
            floats[b, lance] = below[v, idx, lance]
            floats[b, 5 + lance] = equal[v, idx, lance]
        mano_q = _one_hot(x, b, _O_MANO, _N_MANO) - 1
        phase = _one_hot(x, b, _O_PHASE, _N_PHASE) - 1
        lance = _one_hot(x, b, _O_LANCE, _N_LANCE) - 1
        if signals and max(x[b, _O_SIGN_WINDOW], x[b, _O_SIGN_WINDOW + 1]) > 0.5:
            phase = _SIGNAL
        row[I_SEAT] = (-mano_q) % 4
        row[I_PHASE] = phase
        row[I_LANCE] = lance
        row[I_RESPONDER] = _one_hot(x, b, _O_RESP, _N_RESP) - 1
        slot = min(lance, 3) if lance >= 0 else -1
        row[I_SLOT] = slot
        if slot >= 0:
            row[I_STAKE] = np.int64(np.rint(x[b, _STAKE_COL[slot]] * _STAKE_SCALE))
            row[I_FALLBACK] = np.int64(np.rint(x[b, _FALLBACK_COL[slot]] * _STAKE_SCALE))
            row[I_ORDAGO] = 1 if x[b, _ORDAGO_COL[slot]] > 0.5 else 0
        else:
            row[I_STAKE] = 0
            row[I_FALLBACK] = 0
            row[I_ORDAGO] = 0
        for q in range(4):                                  # sí 1, no 0, unknown -1
            o = _O_PARES_DECL + 2 * q
            row[I_PARES_DECL + q] = np.int64(np.rint(_TWO * x[b, o] + x[b, o + 1])) - 1
            o = _O_JUEGO_DECL + 2 * q
            row[I_JUEGO_DECL + q] = np.int64(np.rint(_TWO * x[b, o] + x[b, o + 1])) - 1
        target = np.int64(np.rint(x[b, _O_TARGET] * _TARGET_SCALE))
        row[I_TARGET] = target
        row[I_OWN] = np.int64(np.rint(np.float64(x[b, _O_SCORES]) * np.float64(target)))
        row[I_OTHER] = np.int64(np.rint(np.float64(x[b, _O_SCORES + 1]) * np.float64(target)))
        row[I_MUS_ROUNDS] = np.int64(np.rint(x[b, _O_ROUNDS] * _ROUNDS_SCALE))


@njit(cache=True)
def _first_legal(masks, b, n):  # noqa: ANN001, ANN202
    """The lowest legal action id among the first ``n`` columns of row ``b`` (``rule.first_legal``)."""
    for a in range(n):
        if masks[b, a] > 0:
            return a
    return 0


@njit(cache=True)
def _clip(x, lo, hi):  # noqa: ANN001, ANN202
    """``np.clip`` of one number: ``min(max(x, lo), hi)``."""
    return min(max(x, lo), hi)


# ---------------------------------------------------------------------------------------------------
# RuleBasedAgent (agents.rule)

#: Indices of ``rule_rows``' float parameters.
RULE_FLOATS = ("partner_bonus", "both_opponents_malus", "safe_margin", "desperate_ordago", "desperate_call",
               "bluff_rate")
#: Indices of its int parameters (bools as 0 / 1; ``signals``: add the señas' shift of q).
RULE_INTS = ("cut_pares_class", "cut_kings_pair_with_juego", "cut_after_rounds", "keep_aces",
             "keep_caballo_with_kings", "max_stake", "safe_zone", "desperate_zone", "desperate_gap", "signals")
#: Rows of its per-lance thresholds ``(6, 5)``.
RULE_LANCES = ("bet", "call", "raise_", "ordago_open", "ordago_call", "call_per_stone")


@njit(cache=True)
def _rule_cuts(row, ip, cut_juego, cut_strength):  # noqa: ANN001, ANN202
    """``RuleBasedAgent.cuts_mus`` of one row."""
    v = 0 if row[I_KINGS8] else 1
    pcls = row[I_PARES_CLASS]
    juego = row[I_POINTS] >= 31
    cut = (row[I_STRENGTH + GRANDE] >= cut_strength[v, 0]) or (row[I_STRENGTH + CHICA] >= cut_strength[v, 1]) \
        or (pcls >= ip[0])
    cut = cut or cut_juego[row[I_POINTS]]
    if ip[1]:
        kings = 0
        for s in range(4):
            if row[I_RANKS + s] == row[I_TOP]:
                kings += 1
        cut = cut or (kings == 2 and pcls == 1 and juego)
    return cut or (row[I_MUS_ROUNDS] >= ip[2] and (pcls > 0 or juego))


@njit(cache=True)
def _rule_discard(row, keep_aces, keep_caballo):  # noqa: ANN001, ANN202
    """``discard_from_scores(keep_scores(...))`` of one row: the discard bit mask."""
    top = row[I_TOP]
    kings, figures = 0, 0
    for s in range(4):
        if row[I_RANKS + s] == top:
            kings += 1
        if row[I_VALUES + s] == 10:
            figures += 1
    m, worst, low = 0, 0, np.inf
    for s in range(4):
        r = row[I_RANKS + s]
        count = 0
        for t in range(4):
            if row[I_RANKS + t] == r:
                count += 1
        score = 1.5 if (row[I_VALUES + s] == 10 and figures >= 3) else 0.0
        if keep_caballo and r == top - 1 and kings >= 2:
            score = max(score, 1.5)
        if keep_aces and r == 1:
            score = 2.0
        if count >= 2:
            score = 3.0
        if r == top:
            score = 4.0
        if score < 1.0:
            m |= 1 << s
        if score <= low:                                    # the last slot with the lowest score
            worst, low = s, score
    return m if m != 0 else 1 << worst


@njit(cache=True)
def _rule_bet(b, row, floats, masks, fp, ip, lanes, q, bluff):  # noqa: ANN001, ANN202
    """``RuleBasedAgent.bet_actions`` of one row of quality ``q``."""
    lance = row[I_LANCE]
    target, own, other = row[I_TARGET], row[I_OWN], row[I_OTHER]
    own_left, other_left = target - own, target - other
    safe = own_left <= ip[6] and other_left > own_left
    desperate = other_left <= ip[7] and own_left - other_left >= ip[8]
    ord_open = fp[3] if desperate else lanes[3, lance]
    if safe:
        ord_open = np.inf
    ord_call = (fp[4] if desperate else lanes[4, lance]) + (1.0 if safe else 0.0) * fp[2]
    stake = row[I_STAKE]
    call = lanes[1, lance] + lanes[5, lance] * max(stake - 2, 0) + (1.0 if safe else 0.0) * fp[2]
    phase = row[I_PHASE]
    if phase == _BET_OPEN:
        if q >= ord_open:
            a = _ORDAGO
        elif q >= lanes[0, lance] or bluff or own + 1 >= target:
            a = ENVIDO_BASE
        else:
            a = _PASO
    else:
        refuse_loses = other + row[I_FALLBACK] >= target
        if row[I_ORDAGO]:
            a = _QUIERO if (q >= ord_call or refuse_loses) else _NO_QUIERO
        elif q >= ord_open:
            a = _ORDAGO
        elif q >= lanes[2, lance] and stake < ip[5]:
            a = ENVIDO_BASE
        elif q >= call or refuse_loses or phase == _BET_CONFIRM:
            a = _QUIERO
        else:
            a = _NO_QUIERO
    if masks[b, a] > 0:
        return a
    if masks[b, _QUIERO] > 0:
        return _QUIERO
    if masks[b, _PASO] > 0:
        return _PASO
    return _first_legal(masks, b, masks.shape[1])


@njit(cache=True)
def rule_rows(ints, floats, masks, fp, ip, lanes, cut_juego, cut_strength, u, qshift, pcut, out, cut):  # noqa: ANN001, ANN201
    """``RuleBasedAgent.act_batch`` of every row but the sign decisions: ``out`` the actions, ``cut`` whether
    a mus call or sign row's hand cuts the mus (``cuts_mus``). ``u`` holds the bluff draws of the betting
    rows (2.0 where none was drawn), ``qshift`` the señas' shift of q and ``pcut`` the partner's strong sign."""
    for b in range(ints.shape[0]):
        row = ints[b]
        phase = row[I_PHASE]
        out[b] = _first_legal(masks, b, masks.shape[1])
        if phase == _SIGNAL or phase == _MUS_CALL:
            cut[b] = _rule_cuts(row, ip, cut_juego, cut_strength)
            if phase == _MUS_CALL:
                out[b] = _NO_MUS if (cut[b] or pcut[b] or masks[b, _MUS] == 0) else _MUS
        elif phase == _DISCARD:
            a = DISCARD_BASE + _rule_discard(row, ip[3], ip[4])
            if masks[b, a] > 0:
                out[b] = a
        elif _BET_OPEN <= phase <= _BET_CONFIRM:
            lance = row[I_LANCE]
            below, equal = floats[b, lance], floats[b, 5 + lance]
            q = below + (3 - row[I_SEAT]) / 3.0 * equal if below >= 0 else -1.0
            if lance == PARES or lance == JUEGO:
                d = I_PARES_DECL if lance == PARES else I_JUEGO_DECL
                partner = 1.0 if row[d + 2] == _DECL_SI else 0.0
                both = 1.0 if (row[d + 1] == _DECL_SI and row[d + 3] == _DECL_SI) else 0.0
                q = q + fp[0] * partner - fp[1] * both
            if ip[9]:
                q = q + qshift[b]
            out[b] = _rule_bet(b, row, floats, masks, fp, ip, lanes, q, u[b] < fp[5])


# ---------------------------------------------------------------------------------------------------
# EquityAgent (agents.equity)

#: Indices of the equity kernels' float parameters.
EQUITY_FLOATS = ("tau_accept_per_stone", "tau_accept_max", "opp_bluff", "opp_ordago_bluff", "opp_call",
                 "max_stake", "ordago_margin", "ordago_call_margin", "mus_margin", "bluff_rate", "score_aware",
                 "stone_value", "hb_pares", "hb_juego", "adjust")
#: Rows of their per-lance opponent model ``(5, 5)``.
EQUITY_LANCES = ("tau_bet", "tau_raise", "tau_accept", "tau_ordago", "tau_ordago_accept")


@njit(cache=True)
def _interp_both(tau, acc, win, x):  # noqa: ANN001, ANN202
    """``EquityAgent._interp`` of ``acc`` and ``win`` (float32 rows on the grid ``tau``) at ``x``: both values."""
    n = tau.shape[0]
    x = _clip(x, tau[0], tau[n - 1])
    j = 0
    while j < n and tau[j] <= x:                             # searchsorted(side="right")
        j += 1
    j = min(max(j - 1, 0), n - 2)
    w = (x - tau[j]) / (tau[j + 1] - tau[j])
    return acc[j] * (1.0 - w) + acc[j + 1] * w, win[j] * (1.0 - w) + win[j + 1] * w


@njit(cache=True)
def _gain(x, own, other, T, tab, fp):  # noqa: ANN001, ANN202
    """The game-win probability after the own team wins ``x`` more stones (``gain`` in ``_bet_values``)."""
    if fp[10] == 0.0:
        return 0.5 + fp[11] * x
    a = min(own + x, T)
    a0 = np.int64(np.floor(a))
    fr = a - a0
    return tab[a0 * (T + 1) + other] * (1 - fr) + tab[min(a0 + 1, T) * (T + 1) + other] * fr


@njit(cache=True)
def _lose(y, own, other, T, tab, fp):  # noqa: ANN001, ANN202
    """The game-win probability after the other team wins ``y`` more stones (``lose`` in ``_bet_values``)."""
    if fp[10] == 0.0:
        return 0.5 - fp[11] * y
    b = min(other + y, T)
    b0 = np.int64(np.floor(b))
    fr = b - b0
    return tab[own * (T + 1) + b0] * (1 - fr) + tab[own * (T + 1) + min(b0 + 1, T)] * fr


@njit(cache=True)
def _equity_bet_values(b, row, masks, acc, win, tau, tab, fp, lanes, bet_sizes, shift, p_u, p_t, vals, work):  # noqa: ANN001, ANN202
    """``EquityAgent._bet_values`` of one row into ``vals`` ``(31,)`` (-inf where illegal); ``work``: (4, 7) scratch."""
    lance = row[I_LANCE]
    ctx = 14 if lance == PUNTO else lance
    if lance == PARES or lance == JUEGO:
        d = I_PARES_DECL if lance == PARES else I_JUEGO_DECL
        right, left = row[d + 1] == _DECL_SI, row[d + 3] == _DECL_SI
        pattern = 2 if (right and left) else (1 if left else 0)
        ctx = (2 if lance == PARES else 8) + 3 * (1 if row[d + 2] == _DECL_SI else 0) + pattern
    p, h = row[I_SEAT], row[I_IDX]
    acc_r, win_r = acc[ctx, p, h], win[ctx, p, h]
    own_bonus, opp_bonus = 0.0, 0.0
    if lance == PARES or lance == JUEGO:
        d = I_PARES_DECL if lance == PARES else I_JUEGO_DECL
        hb = fp[12] if lance == PARES else fp[13]
        opp = (1.0 if row[d + 1] == _DECL_SI else 0.0) + (1.0 if row[d + 3] == _DECL_SI else 0.0)
        partner = 1.0 if row[d + 2] == _DECL_SI else 0.0
        if lance == PARES:
            own_bonus = row[I_PARES_CLASS] + hb * partner
        else:
            pts = row[I_POINTS]
            own_bonus = (3.0 if pts == 31 else (2.0 if pts >= 31 else 0.0)) + hb * partner
        opp_bonus = hb * opp
    elif lance == PUNTO:
        own_bonus, opp_bonus = 1.0, 1.0
    base = 1.0 if lance <= 1 else 0.0
    T = row[I_TARGET]
    own, other = min(row[I_OWN], T), min(row[I_OTHER], T)

    stake = np.float64(row[I_STAKE])
    fallback = np.float64(row[I_FALLBACK])
    ordago_live = row[I_ORDAGO] != 0
    opening = row[I_PHASE] == _BET_OPEN
    tau_prev = 0.0 if opening else (lanes[0, lance] if fallback <= 1 else lanes[1, lance])
    if ordago_live:
        tau_prev = lanes[3, lance]
    new_fall = 1.0 if opening else stake
    game_if_refused = own + new_fall >= T
    s_new, x, acc_x, win_x = work[0], work[1], work[2], work[3]
    x[0] = tau_prev
    for k in range(5):
        s_new[k] = np.float64(bet_sizes[k]) if opening else stake + bet_sizes[k]
        t_acc = min(lanes[2, lance] + fp[0] * (s_new[k] - 2), fp[1])
        x[1 + k] = tau_prev if game_if_refused else max(tau_prev, t_acc)
    x[6] = max(tau_prev, lanes[4, lance])
    for j in range(7):
        acc_x[j], win_x[j] = _interp_both(tau, acc_r, win_r, x[j])
    a_prev = max(acc_x[0], 1e-6)
    p_any = np.float64(win_r[0])
    eps = 0.0 if opening else (fp[3] if ordago_live else fp[2])
    p_range = _clip(win_x[0] / a_prev, 0.0, 1.0)
    p_w = _clip((1 - eps) * p_range + eps * p_any, 0.0, 1.0)
    if fp[14] != 0.0:                                        # the señas' adjustments (_bet_values' partner, shift)
        ratio = p_t / max(p_u, 1e-6)
        p_range = _clip(p_range * ratio, 0.0, 1.0)
        p_w = _clip(p_w * ratio, 0.0, 1.0)
        for j in range(7):
            if acc_x[j] > 0:
                win_x[j] = _clip(win_x[j] / max(acc_x[j], 1e-9) * ratio, 0.0, 1.0) * acc_x[j]
        p_range = _clip(p_range + shift, 0.0, 1.0)
        p_w = _clip(p_w + shift, 0.0, 1.0)
        for j in range(7):
            win_x[j] = _clip(win_x[j] + shift * acc_x[j], 0.0, acc_x[j])

    gamma = fp[4]
    for a in range(NUM_ACTIONS):
        vals[a] = -np.inf
    vals[_PASO] = (p_w * _gain(base + own_bonus, own, other, T, tab, fp)
                   + (1 - p_w) * _lose(base + opp_bonus, own, other, T, tab, fp))
    vals[_QUIERO] = (p_w * _gain(stake + own_bonus, own, other, T, tab, fp)
                     + (1 - p_w) * _lose(stake + opp_bonus, own, other, T, tab, fp))
    vals[_NO_QUIERO] = _lose(fallback + opp_bonus, own, other, T, tab, fp)
    g_fall = _gain(new_fall + own_bonus, own, other, T, tab, fp)
    for k in range(5):
        pa = _clip(acc_x[1 + k] / a_prev, 0.0, 1.0)
        pw = _clip(win_x[1 + k] / a_prev, 0.0, pa)
        pa, pw = (1 - gamma) * pa + gamma, (1 - gamma) * pw + gamma * p_range
        v = ((1 - pa) * g_fall + pw * _gain(s_new[k] + own_bonus, own, other, T, tab, fp)
             + (pa - pw) * _lose(s_new[k] + opp_bonus, own, other, T, tab, fp))
        vals[ENVIDO_BASE + k] = v if (opening or stake < fp[5]) else -np.inf
    pa = _clip(acc_x[6] / a_prev, 0.0, 1.0)
    pw = _clip(win_x[6] / a_prev, 0.0, pa)
    pa, pw = (1 - gamma) * pa + gamma, (1 - gamma) * pw + gamma * p_range
    vals[_ORDAGO] = (1 - pa) * g_fall + pw - fp[6]
    if ordago_live:
        vals[_QUIERO] = p_w - fp[7]
    for a in range(NUM_ACTIONS):
        if not masks[b, a] > 0:
            vals[a] = -np.inf


@njit(cache=True)
def equity_values(rows, ints, masks, acc, win, tau, tabs, tix, fp, lanes, bet_sizes, shift, p_u, p_t, out):  # noqa: ANN001, ANN201
    """``EquityAgent._bet_values`` of the betting rows ``rows`` into ``out[rows, :31]``; row ``b`` values the
    game at its target with the win-probability table ``tabs[tix[b]]``."""
    vals = np.empty(NUM_ACTIONS)
    work = np.empty((4, 7))
    for b in rows:
        _equity_bet_values(b, ints[b], masks, acc, win, tau, tabs[tix[b]], fp, lanes, bet_sizes, shift[b], p_u[b],
                           p_t[b], vals, work)
        for a in range(NUM_ACTIONS):
            out[b, a] = vals[a]


@njit(cache=True)
def equity_rows(rows, ints, masks, value, disc, drift, acc, win, tau, tabs, tix, fp, lanes, bet_sizes, u, shift,  # noqa: ANN001, ANN201
                p_u, p_t, pcut, out, cut):
    """``EquityAgent._decide`` of rows ``rows`` (one variant) but their sign decisions: ``out`` the actions,
    ``cut`` whether a mus call or sign row's hand cuts the mus. ``value``, ``disc``, ``drift`` are the variant's
    hand values, ``acc``, ``win``, ``tau`` its tables; ``u`` the bluff draws of the betting rows (2.0 where none
    was drawn), ``shift``, ``p_u``, ``p_t`` the señas' adjustments, ``pcut`` the partner's strong sign."""
    vals = np.empty(NUM_ACTIONS)
    work = np.empty((4, 7))
    for b in rows:
        row = ints[b]
        phase = row[I_PHASE]
        out[b] = _first_legal(masks, b, masks.shape[1])
        p, h = row[I_SEAT], row[I_IDX]
        if phase == _SIGNAL or phase == _MUS_CALL:
            best = disc[p, h, 1]
            for m in range(2, 16):
                best = max(best, disc[p, h, m])
            cut[b] = value[p, h] >= best - drift[p] + fp[8]
            if phase == _MUS_CALL:
                out[b] = _NO_MUS if (cut[b] or pcut[b] or masks[b, _MUS] == 0) else _MUS
        elif phase == _DISCARD:
            best, m_best = -np.inf, 0
            for m in range(16):
                d = disc[p, h, m] if masks[b, DISCARD_BASE + m] > 0 else -np.inf
                if d > best:
                    best, m_best = d, m
            out[b] = DISCARD_BASE + m_best
        elif _BET_OPEN <= phase <= _BET_CONFIRM:
            _equity_bet_values(b, row, masks, acc, win, tau, tabs[tix[b]], fp, lanes, bet_sizes, shift[b], p_u[b],
                               p_t[b], vals, work)
            a = 0
            for c in range(1, NUM_ACTIONS):                    # np.argmax: the first largest (or the first NaN)
                if np.isnan(vals[a]):
                    break
                if vals[c] > vals[a] or np.isnan(vals[c]):
                    a = c
            if phase == _BET_OPEN and u[b] < fp[9] and a == _PASO and masks[b, ENVIDO_BASE] > 0:
                a = ENVIDO_BASE
            out[b] = a if masks[b, a] > 0 else _first_legal(masks, b, NUM_ACTIONS)


def run_kernel(kernel, *args) -> None:  # noqa: ANN001 - a numba dispatcher and its arguments
    """Call one of this module's kernels; its first call in a process (a compile, or a load from numba's cache)
    holds Ctrl-C until it returns (:func:`mus_env.interrupts.ctrl_c_held`: numba's compiler is not safe against
    an interrupt midway)."""
    if kernel.signatures:
        kernel(*args)
        return
    with ctrl_c_held():
        kernel(*args)
