"""RuleBasedAgent: how a sound club player bids, as explicit thresholds on hand features.

The agent reads only its observation (through :mod:`agents.features`) and is vectorised: one call of
:meth:`RuleBasedAgent.act_batch` decides a whole batch with numpy. With ``bluff_rate=0`` (the default)
it is deterministic and uses no randomness.

Policy
------
**Hand quality.** For the lance at hand the agent uses ``q``, the position-aware percentile of its own
hand (:attr:`agents.features.Features.beat`): the share of the lance's population that its hand beats
(all hands for grande, chica; holders for pares, juego; hands without juego for punto), counting equal
hands as beaten in proportion to how many seats it sits before (all for the mano, none for the postre:
"a mano wins ties"). Pares and juego add partner awareness from the public declarations: ``+partner_bonus``
when the partner declared pares / juego sí, ``-both_opponents_malus`` when both opponents did.

**Mus ("ley del mus").** Cut (NO_MUS) when the hand holds any of: grande at least ``cut_grande``
(R-R-C-S), chica at least ``cut_chica`` (A-A-4-5), pares of class ``cut_pares_class`` or better (medias,
duples), a par of reyes with juego (``cut_kings_pair_with_juego``), a juego total in ``cut_juego`` (31),
or, after ``cut_after_rounds`` completed mus rounds, any pares or juego. Otherwise MUS.

**Discards.** Each slot gets a keep score: a rey (a 3 with 8 kings) 4; a card of a made pair, trio or
four 3; an as (a 2 with 8 kings) 2 when ``keep_aces``; a caballo next to two or more reyes 1.5 when
``keep_caballo_with_kings``; a 10-point card when the hand holds three or more of them (made or near
juego: R-C-S-7 keeps R-C-S and looks for the as of 31) 1.5; anything else 0. Slots scoring at least 1
are kept, the others discarded; if all four would be kept (a discard of at least one card is compulsory)
the lowest-scoring slot, the last such in slot order (the lowest rank), goes.

**Betting** (thresholds per lance, in the order grande, chica, pares, juego, punto):

* Opening round: ÓRDAGO if ``q >= ordago_open``; else ENVIDO (the smallest bet size, 2 by default) if
  ``q >= bet``, or with probability ``bluff_rate``; else PASO.
* Facing a numeric stake ``s`` (first or second responder): ÓRDAGO if ``q >= ordago_open``; raise by the
  smallest bet size if ``q >= raise_`` and ``s < max_stake``; QUIERO if ``q >= call + call_per_stone * (s - 2)``;
  otherwise NO QUIERO (which, as first responder, hands the decision to the partner when there is one).
* Facing an órdago: QUIERO if ``q >= ordago_call``, else NO QUIERO.
* After the partner's QUIERO (partner confirmation): raise / ÓRDAGO by the same rules, else QUIERO.

Defaults (8 kings): grande bets from 0.88 (R-R-7-A and better), calls 2 stones from 0.65 (R-S-7-6),
raises from 0.965 (R-R-C-7), throws an órdago from 0.997 (R-R-R-C) and accepts one from 0.85; chica
mirrors it (A-A-4-R bets, A-4-R-R calls, A-A-4-5 raises); pares (among holders) bet from 0.70 (medias,
a par of reyes except as the postre), call 2 stones from 0.20 (nearly any pares), accept an órdago from
0.60; juego bets from 0.70 (31 except as the postre), calls from 0.20, raises from 0.88, accepts an
órdago from 0.60; punto bets from 0.85 (29, 30; 28 as the mano), calls from 0.25. The call threshold
rises by ``call_per_stone`` per stone of stake above 2 (0.015 in grande / chica, 0.05 in pares / juego,
0.03 in punto).

**Score awareness** (``own`` / ``other`` stones left to the target ``T``):

* Safe (``T - own <= safe_zone`` and the opponents are further away): play safer. No órdago of its own,
  ``+safe_margin`` on every call threshold and on ``ordago_call``.
* Desperate (``T - other <= desperate_zone`` and at least ``desperate_gap`` stones further away than
  the opponents): take órdago risks: open / raise ÓRDAGO from ``desperate_ordago``, accept one from
  ``desperate_call``.
* When a refusal would hand the opponents the game (``other + fallback >= T``) it accepts; when one
  stone wins it the game (``own + 1 >= T``) it opens every lance it may (any refusal wins).

**Señas** (with signals on, :mod:`agents.signs`): it signs the most useful sign true for its hand; a strong
sign of the partner in the mus window makes it cut the mus; in betting the partner's grande-window sign
raises ``q`` and each intercepted opponent sign lowers it (:data:`agents.signs.SIGN_BONUS`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from mus_env.actions import DISCARD_BASE, ENVIDO_BASE, Action
from mus_env.actions import NUM_ACTIONS as _NUM_ACTIONS
from mus_env.phases import Phase
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES

from .base import Agent
from .compiled import I_PHASE, rule_rows, run_kernel
from .features import DECL_SI, Features, per_lance, read, read_packed, strength_of
from .signs import choose_signs, partner_cut, read_signs, sign_quality_shift

__all__ = ["RuleBasedAgent", "first_legal", "keep_scores", "discard_from_scores"]

_MUS, _NO_MUS = int(Action.MUS), int(Action.NO_MUS)
_PASO, _QUIERO, _NO_QUIERO, _ORDAGO = int(Action.PASO), int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO)
_BITS = 1 << np.arange(4)


def first_legal(masks: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
    """``(B,)`` the lowest legal action id of each row (used for forced and unhandled decisions)."""
    return np.asarray(masks > 0).argmax(axis=1).astype(np.int64)


def keep_scores(f: Features, i: npt.NDArray[np.int64], keep_aces: bool = True,
                keep_caballo_with_kings: bool = True) -> npt.NDArray[np.float64]:
    """``(n, 4)`` keep score of each hand slot of rows ``i`` (see the module docstring, "Discards")."""
    ranks, values, top = f.ranks[i], f.values[i], f.top[i, None]
    count = (ranks[:, :, None] == ranks[:, None, :]).sum(axis=2)              # copies of each slot's rank
    is_king = ranks == top
    kings = is_king.sum(axis=1)[:, None]
    figures = (values == 10).sum(axis=1)[:, None]
    score = np.where((values == 10) & (figures >= 3), 1.5, 0.0)
    if keep_caballo_with_kings:
        score = np.where((ranks == top - 1) & (kings >= 2), np.maximum(score, 1.5), score)
    if keep_aces:
        score = np.where(ranks == 1, 2.0, score)
    score = np.where(count >= 2, 3.0, score)
    return np.where(is_king, 4.0, score)


def discard_from_scores(score: npt.NDArray[np.float64], threshold: float = 1.0) -> npt.NDArray[np.int64]:
    """``(B,)`` discard masks: slots scoring below ``threshold``; never empty (drops the worst slot)."""
    m = ((score < threshold) * _BITS).sum(axis=1)
    worst = 3 - np.argmin(score[:, ::-1], axis=1)                              # last slot with the lowest score
    return np.where(m == 0, 1 << worst, m).astype(np.int64)


class RuleBasedAgent(Agent):
    """Threshold play of a sound club player (the module docstring states the policy).

    Args:
        cut_grande: hand (rank letters) from which grande alone cuts the mus.
        cut_chica: hand (rank letters) from which chica alone cuts the mus.
        cut_pares_class: pares class that cuts the mus (2 medias; 3 duples only; 4 never).
        cut_kings_pair_with_juego: a par of reyes with juego cuts the mus.
        cut_juego: juego totals that cut the mus.
        cut_after_rounds: after this many completed mus rounds any pares or juego cuts.
        keep_aces: discard option: keep aces (module docstring).
        keep_caballo_with_kings: discard option: keep a caballo beside kings (module docstring).
        bet: threshold on ``q`` to open a bet, a number or five (grande, chica, pares, juego, punto).
        call: threshold on ``q`` to accept a bet (a number or five, as ``bet``).
        raise_: threshold on ``q`` to raise (a number or five, as ``bet``).
        ordago_open: threshold on ``q`` to open with an órdago (a number or five, as ``bet``).
        ordago_call: threshold on ``q`` to accept an órdago (a number or five, as ``bet``).
        call_per_stone: added to the call threshold per stone of stake above 2.
        partner_bonus: pares / juego adjustment when the partner declared them.
        both_opponents_malus: pares / juego adjustment when both opponents declared them.
        max_stake: no raise at or above this live stake.
        safe_zone: safe play when the team needs at most this many stones and the opponents need more.
        safe_margin: added, when safe, to every call threshold and to ``ordago_call``.
        desperate_zone: desperate play when the opponents need at most this many stones ...
        desperate_gap: ... and the team needs at least this many more than they do.
        desperate_ordago: when desperate, open or raise ÓRDAGO from this ``q``.
        desperate_call: when desperate, accept an órdago from this ``q``.
        bluff_rate: chance of an opening ENVIDO without the hand for it (uses the rng).
        compiled: decide in one compiled pass (:func:`agents.compiled.rule_rows`, the default); False plays
            :meth:`act_batch_reference`, the numpy code it is held equal to (the same actions, slower).
    """

    name = "rule"

    def __init__(self, *, cut_grande: str = "RRCS", cut_chica: str = "AA45", cut_pares_class: int = 2,
                 cut_kings_pair_with_juego: bool = True, cut_juego: Sequence[int] = (31,),
                 cut_after_rounds: int = 3, keep_aces: bool = True, keep_caballo_with_kings: bool = True,
                 bet: float | Sequence[float] = (0.88, 0.88, 0.70, 0.70, 0.85),
                 call: float | Sequence[float] = (0.65, 0.65, 0.20, 0.20, 0.25),
                 raise_: float | Sequence[float] = (0.965, 0.965, 0.90, 0.88, 0.95),
                 ordago_open: float | Sequence[float] = (0.997, 0.997, 0.99, 0.99, 0.995),
                 ordago_call: float | Sequence[float] = (0.85, 0.85, 0.60, 0.60, 0.80),
                 call_per_stone: float | Sequence[float] = (0.015, 0.015, 0.05, 0.05, 0.03),
                 partner_bonus: float = 0.08, both_opponents_malus: float = 0.05,
                 max_stake: int = 12, safe_zone: int = 5, safe_margin: float = 0.04, desperate_zone: int = 8,
                 desperate_gap: int = 10, desperate_ordago: float = 0.85, desperate_call: float = 0.6,
                 bluff_rate: float = 0.0, compiled: bool = True) -> None:
        self.compiled = bool(compiled)
        self.cut_hands = (cut_grande, cut_chica)
        self.cut_strength = {k: (strength_of(cut_grande, GRANDE, k), strength_of(cut_chica, CHICA, k)) for k in (8, 4)}
        self.cut_pares_class = int(cut_pares_class)
        self.cut_kings_pair_with_juego = bool(cut_kings_pair_with_juego)
        self.cut_juego = np.zeros(41, dtype=bool)
        self.cut_juego[list(cut_juego)] = True
        self.cut_after_rounds = int(cut_after_rounds)
        self.keep_aces, self.keep_caballo_with_kings = bool(keep_aces), bool(keep_caballo_with_kings)
        self.bet, self.call = per_lance("bet", bet), per_lance("call", call)
        self.raise_ = per_lance("raise_", raise_)
        self.ordago_open = per_lance("ordago_open", ordago_open)
        self.ordago_call = per_lance("ordago_call", ordago_call)
        self.call_per_stone = per_lance("call_per_stone", call_per_stone)
        self.partner_bonus = float(partner_bonus)
        self.both_opponents_malus = float(both_opponents_malus)
        self.max_stake = int(max_stake)
        self.safe_zone, self.safe_margin = int(safe_zone), float(safe_margin)
        self.desperate_zone, self.desperate_gap = int(desperate_zone), int(desperate_gap)
        self.desperate_ordago, self.desperate_call = float(desperate_ordago), float(desperate_call)
        if not 0.0 <= bluff_rate <= 1.0:
            raise ValueError(f"bluff_rate must be in [0, 1], got {bluff_rate!r}")
        self.bluff_rate = float(bluff_rate)

    def __repr__(self) -> str:
        return f"RuleBasedAgent(bluff_rate={self.bluff_rate})"

    # ------------------------------------------------------------------------------------------------
    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        if not self.compiled:
            return self.act_batch_reference(obs, masks, rng)
        masks = np.require(masks, np.int8, ["C", "W"])          # (one compiled signature: C-contiguous, writable)
        x, ints, floats = read_packed(obs)
        B = len(ints)
        phase = ints[:, I_PHASE]
        signals = masks.shape[1] > _NUM_ACTIONS
        u = np.full(B, 2.0)                                   # the bluff draws of the betting rows, in row order
        bets = (phase >= Phase.BET_OPEN) & (phase <= Phase.BET_CONFIRM)
        if self.bluff_rate > 0:
            i = np.flatnonzero(bets)
            if i.size:
                u[i] = rng.random(i.size)
        qshift, pcut = np.zeros(B), np.zeros(B, dtype=bool)
        signs = None
        if signals:
            f = Features.from_packed(x, ints, floats)
            signs = read_signs(x)
            i = np.flatnonzero(bets)
            qshift[i] = sign_quality_shift(signs, i, f.lance[i])
            i = np.flatnonzero(phase == Phase.MUS_CALL)
            pcut[i] = partner_cut(signs, i)
        out = np.empty(B, dtype=np.int64)
        cut = np.zeros(B, dtype=bool)
        fp, ip, lanes, cut_strength = self._kernel_parameters(signals)
        run_kernel(rule_rows, ints, floats, masks, fp, ip, lanes, self.cut_juego, cut_strength, u, qshift, pcut, out,
                   cut)
        i = np.flatnonzero(phase == Phase.SIGNAL)
        if i.size and signs is not None:
            out[i] = choose_signs(f.idx[i], f.kings8[i], signs.window[i], ~cut[i], masks[i], signs.free[i])
        return out

    def _kernel_parameters(self, signals: bool) -> tuple[npt.NDArray, ...]:
        """The options as :func:`agents.compiled.rule_rows` takes them (read afresh: they are plain attributes)."""
        fp = np.array([self.partner_bonus, self.both_opponents_malus, self.safe_margin, self.desperate_ordago,
                       self.desperate_call, self.bluff_rate], dtype=np.float64)
        ip = np.array([self.cut_pares_class, self.cut_kings_pair_with_juego, self.cut_after_rounds, self.keep_aces,
                       self.keep_caballo_with_kings, self.max_stake, self.safe_zone, self.desperate_zone,
                       self.desperate_gap, signals], dtype=np.int64)
        lanes = np.stack([self.bet, self.call, self.raise_, self.ordago_open, self.ordago_call,
                          self.call_per_stone]).astype(np.float64)
        cut_strength = np.array([self.cut_strength[8], self.cut_strength[4]], dtype=np.int64)
        return fp, ip, lanes, cut_strength

    def act_batch_reference(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                            rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """:meth:`act_batch` written with numpy on :class:`~agents.features.Features` (:meth:`cuts_mus`,
        :func:`keep_scores`, :meth:`quality`, :meth:`bet_actions`): the readable reference that the compiled
        path (:func:`agents.compiled.rule_rows`) is held equal to, action for action and draw for draw."""
        masks = np.asarray(masks)
        f = read(obs)
        out = first_legal(masks)
        phase = f.phase
        signs = read_signs(f.obs) if masks.shape[1] > _NUM_ACTIONS else None
        i = np.flatnonzero(phase == Phase.SIGNAL)
        if i.size and signs is not None:
            out[i] = choose_signs(f.idx[i], f.kings8[i], signs.window[i], ~self.cuts_mus(f, i), masks[i],
                                  signs.free[i])
        i = np.flatnonzero(phase == Phase.MUS_CALL)
        if i.size:
            cut = self.cuts_mus(f, i)
            if signs is not None:
                cut |= partner_cut(signs, i)
            out[i] = np.where(cut | (masks[i, _MUS] == 0), _NO_MUS, _MUS)
        i = np.flatnonzero(phase == Phase.DISCARD)
        if i.size:
            score = keep_scores(f, i, self.keep_aces, self.keep_caballo_with_kings)
            a = DISCARD_BASE + discard_from_scores(score)
            out[i] = np.where(masks[i, a] > 0, a, out[i])
        i = np.flatnonzero((phase >= Phase.BET_OPEN) & (phase <= Phase.BET_CONFIRM))
        if i.size:
            q = self.quality(f, i)
            if signs is not None:
                q = q + sign_quality_shift(signs, i, f.lance[i])
            bluff = np.zeros(i.size, dtype=bool)
            if self.bluff_rate > 0:
                bluff = rng.random(i.size) < self.bluff_rate
            out[i] = self.bet_actions(f, i, q, masks[i], bluff)
        return out

    # ------------------------------------------------------------------------------------------------
    def cuts_mus(self, f: Features, i: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """``(n,)`` whether rows ``i`` cut the mus (module docstring, "Mus")."""
        k8 = f.kings8[i]
        g_min = np.where(k8, self.cut_strength[8][0], self.cut_strength[4][0])
        c_min = np.where(k8, self.cut_strength[8][1], self.cut_strength[4][1])
        s = f.strength[i]
        pcls = f.pares_class[i]
        juego = f.points[i] >= 31
        cut = (s[:, GRANDE] >= g_min) | (s[:, CHICA] >= c_min) | (pcls >= self.cut_pares_class)
        cut |= self.cut_juego[f.points[i]]
        if self.cut_kings_pair_with_juego:
            kings_pair = ((f.ranks[i] == f.top[i, None]).sum(axis=1) == 2) & (pcls == 1)
            cut |= kings_pair & juego
        cut |= (f.mus_rounds[i] >= self.cut_after_rounds) & ((pcls > 0) | juego)
        return cut

    def quality(self, f: Features, i: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """``(n,)`` q of rows ``i`` for their lance: position-aware percentile with partner awareness."""
        lance = f.lance[i]
        below, equal = f.below[i, lance], f.equal[i, lance]
        q = np.where(below >= 0, below + (3 - f.seat[i]) / 3.0 * equal, -1.0)      # Features.beat of the lance
        for L, decl in ((PARES, f.pares_decl[i]), (JUEGO, f.juego_decl[i])):
            on = lance == L
            partner = decl[:, 2] == DECL_SI
            both = (decl[:, 1] == DECL_SI) & (decl[:, 3] == DECL_SI)
            q = np.where(on, q + self.partner_bonus * partner - self.both_opponents_malus * both, q)
        return q

    def bet_actions(self, f: Features, i: npt.NDArray[np.int64], q: npt.NDArray[np.float64],
                    masks: npt.NDArray[np.int8], bluff: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """Betting decisions of rows ``i`` (opening, response, confirmation) from their quality ``q``."""
        lance = f.lance[i]
        target, own, other = f.target[i], f.own[i], f.other[i]
        own_left, other_left = target - own, target - other
        safe = (own_left <= self.safe_zone) & (other_left > own_left)
        desperate = (other_left <= self.desperate_zone) & (own_left - other_left >= self.desperate_gap)
        ord_open = np.where(desperate, self.desperate_ordago, self.ordago_open[lance])
        ord_open = np.where(safe, np.inf, ord_open)
        ord_call = np.where(desperate, self.desperate_call, self.ordago_call[lance]) + safe * self.safe_margin
        stake = f.stake[i]
        call = self.call[lance] + self.call_per_stone[lance] * np.maximum(stake - 2, 0) + safe * self.safe_margin
        phase = f.phase[i]
        envido = ENVIDO_BASE
        # opening round
        opening = np.where(q >= ord_open, _ORDAGO,
                           np.where((q >= self.bet[lance]) | bluff | (own + 1 >= target), envido, _PASO))
        # facing a numeric stake (respond or confirm)
        refuse_loses = other + f.fallback[i] >= target
        numeric = np.where(q >= ord_open, _ORDAGO,
                           np.where((q >= self.raise_[lance]) & (stake < self.max_stake), envido,
                                    np.where((q >= call) | refuse_loses | (phase == Phase.BET_CONFIRM),
                                             _QUIERO, _NO_QUIERO)))
        facing_ordago = np.where((q >= ord_call) | refuse_loses, _QUIERO, _NO_QUIERO)
        a = np.where(phase == Phase.BET_OPEN, opening, np.where(f.ordago[i], facing_ordago, numeric))
        rows = np.arange(i.size)
        legal = masks[rows, a] > 0
        # an illegal choice cannot happen with the standard action sets; fall back to quiero / paso / first legal
        backup = np.where(masks[:, _QUIERO] > 0, _QUIERO, np.where(masks[:, _PASO] > 0, _PASO, first_legal(masks)))
        return np.where(legal, a, backup).astype(np.int64)
