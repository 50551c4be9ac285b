"""Batched readers of the observation vector, shared by the rule-based and equity agents.

Agents see only their observation (:mod:`mus_env.observation`) and the legal-action mask. This module
turns a whole ``(B, OBS_DIM)`` batch into named per-row arrays with a few numpy operations (slices at
:data:`~mus_env.observation.OFFSETS` / :data:`~mus_env.observation.LANCE_OFFSETS`, no per-row
``decode``), and adds hand features looked up in :mod:`mus_env.tables`:

* the own hand: card number per slot, rank per slot (slot order is rank descending, RULES.md §9.2),
  the rank multiset index, pares class, juego total, lance strengths and lance **percentiles**;
* the situation: phase, lance and its slot, responder index, own relative seat (S0 = mano .. S3 = postre),
  the live stake / órdago / fallback of the lance being bet, what each seat said, declarations, scores.

Percentiles (:func:`percentile_table`) rank a hand for one lance among all 4-card hands of the deck,
weighted by how many card sets give each rank multiset: the fraction of hands strictly worse plus half
of the equal ones. For pares and juego the population is the holders only (only holders bet), for
punto the hands without juego. Non-holders get -1. They are hand features (no opponent modelling).

Seats in the observation are ``q`` (0 self, 1 right-hand opponent, 2 partner, 3 left-hand opponent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from math import comb

import numpy as np
import numpy.typing as npt

from mus_env.cards import NUM_CARDS, RANK_CHARS, rank_table, value_table
from mus_env.observation import LANCE_OFFSETS, OBS_DIM, OFFSETS, ROUNDS_SCALE, STAKE_SCALE, TARGET_SCALE
from mus_env.phases import Phase
from mus_env.signals import SIGNAL_OFFSETS
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, get_tables, multiset_index

__all__ = [
    "Features", "read", "percentile_table", "hand_weights", "strength_of", "rank_of_k", "value_of_k",
    "DECL_SI", "DECL_NO", "DECL_UNKNOWN", "SPEECH_PASO", "SPEECH_ENVIDO", "SPEECH_QUIERO", "SPEECH_NO_QUIERO",
    "SPEECH_ORDAGO", "SPEECH_NONE",
]

DECL_SI, DECL_NO, DECL_UNKNOWN = 1, 0, -1
SPEECH_PASO, SPEECH_ENVIDO, SPEECH_QUIERO, SPEECH_NO_QUIERO, SPEECH_ORDAGO, SPEECH_NONE = 0, 1, 2, 3, 4, -1


@lru_cache(maxsize=2)
def rank_of_k(kings: int) -> npt.NDArray[np.int64]:
    """``(10,)`` rank (RULES.md §2.2) of each card number index k (A 2 3 4 5 6 7 S C R)."""
    return np.array(rank_table(kings)[:10], dtype=np.int64)


@lru_cache(maxsize=2)
def value_of_k(kings: int) -> npt.NDArray[np.int64]:
    """``(10,)`` point value (RULES.md §2.3) of each card number index k."""
    return np.array(value_table(kings)[:10], dtype=np.int64)


@lru_cache(maxsize=2)
def hand_weights(kings: int) -> npt.NDArray[np.float64]:
    """``(M,)`` number of 4-card sets of the 40-card deck with each rank multiset (sums to C(40, 4))."""
    t = get_tables(kings)
    in_deck = np.bincount(np.asarray(t.rank_of_card, dtype=np.int64), minlength=t.num_ranks + 1)
    counts = (t.ranks[:, :, None] == np.arange(t.num_ranks + 1)).sum(axis=1)          # (M, R+1)
    w = np.ones(t.size)
    for r in range(1, t.num_ranks + 1):
        w *= np.array([comb(int(in_deck[r]), int(c)) for c in counts[:, r]], dtype=np.float64)
    assert int(w.sum()) == comb(NUM_CARDS, 4)
    return w


@lru_cache(maxsize=2)
def percentile_table(kings: int) -> npt.NDArray[np.float64]:
    """``(2, 5, M)``: per lance (grande, chica, pares, juego, punto) and rank multiset, the fraction of the
    lance's population (all hands; pares / juego holders; punto: hands without juego) that is strictly
    weaker (``[0]``) and that is equal (``[1]``); -1 outside the population (both).
    """
    t = get_tables(kings)
    w = hand_weights(kings)
    out = np.full((2, 5, t.size), -1.0)
    pops = {GRANDE: np.ones(t.size, bool), CHICA: np.ones(t.size, bool), PARES: t.pares_class > 0,
            JUEGO: t.juego_rank > 0, PUNTO: t.juego_rank == 0}
    for lance, pop in pops.items():
        s = t.strength[lance].astype(np.int64)
        ws = np.where(pop, w, 0.0)
        total = ws.sum()
        order = np.argsort(s, kind="stable")
        uniq, start = np.unique(s[order], return_index=True)
        cum = np.concatenate([[0.0], np.cumsum(ws[order])])
        end = np.append(start[1:], len(order))
        pos = np.searchsorted(uniq, s)
        out[0, lance] = np.where(pop, cum[start][pos] / total, -1.0)
        out[1, lance] = np.where(pop, (cum[end] - cum[start])[pos] / total, -1.0)
    out.setflags(write=False)
    return out


def strength_of(hand: str, lance: int, kings: int = 8) -> int:
    """Strength (``tables.strength[lance]``, higher wins) of a hand written by rank letters, e.g. "RRCS".

    Used to state thresholds as hands ("at least R-R-C-S for grande").
    """
    ks = [RANK_CHARS.index(ch) for ch in hand.replace(" ", "").upper().replace("AS", "A")]
    if len(ks) != 4:
        raise ValueError(f"a threshold hand has four rank letters (A 2..7 S C R), got {hand!r}")
    ranks = np.sort(rank_of_k(kings)[ks])
    return int(get_tables(kings).strength[lance, int(multiset_index(ranks))])


@dataclass
class Features:
    """Per-row features of a batch of observations (every array has the batch axis first).

    Attributes:
        kings8: ``(B,)`` bool, the 8-kings variant.
        k: ``(B, 4)`` card number index per hand slot (0 A .. 9 R).
        ranks: ``(B, 4)`` rank per slot (descending; 1 = as, 8 or 10 = rey).
        values: ``(B, 4)`` point value per slot.
        idx: ``(B,)`` rank multiset index (:func:`mus_env.tables.multiset_index`).
        top: ``(B,)`` rank of a rey (8 or 10).
        pares_class: ``(B,)`` 0 none, 1 par, 2 medias, 3 duples.
        points: ``(B,)`` juego total.
        strength: ``(B, 5)`` strength per lance id (higher wins).
        below, equal: ``(B, 5)`` per lance id, the fraction of the lance's population strictly weaker /
            equal (:func:`percentile_table`; -1 outside the population).
        seat: ``(B,)`` own relative seat: 0 mano .. 3 postre.
        phase, lance, slot, responder: ``(B,)`` decision kind (``Phase``; ``Phase.SIGNAL`` for a sign
            decision with signals on), lance id (-1), lance slot 0..3 (-1),
            0 opening / 1 first responder / 2 second responder (-1).
        stake, ordago, fallback: ``(B,)`` of the lance being bet: numeric live stake (0 before a bet),
            bool órdago live, stones the bettor gets if refused.
        bettor_own, speech, raised: read on demand (properties below).
        pares_decl, juego_decl: ``(B, 4)`` per seat q: DECL_SI, DECL_NO, DECL_UNKNOWN.
        own, other: ``(B,)`` game scores in stones; target ``(B,)`` stones to win.
        mus_rounds: ``(B,)`` completed discard rounds this hand.
        obs: ``(B, OBS_DIM)`` the observations themselves (longer with signals on: :mod:`agents.signs`
            reads the signal block).
    """

    kings8: npt.NDArray[np.bool_]
    k: npt.NDArray[np.int64]
    ranks: npt.NDArray[np.int64]
    values: npt.NDArray[np.int64]
    idx: npt.NDArray[np.int64]
    top: npt.NDArray[np.int64]
    pares_class: npt.NDArray[np.int64]
    points: npt.NDArray[np.int64]
    strength: npt.NDArray[np.int64]
    below: npt.NDArray[np.float64]
    equal: npt.NDArray[np.float64]
    seat: npt.NDArray[np.int64]
    phase: npt.NDArray[np.int64]
    lance: npt.NDArray[np.int64]
    slot: npt.NDArray[np.int64]
    responder: npt.NDArray[np.int64]
    stake: npt.NDArray[np.int64]
    ordago: npt.NDArray[np.bool_]
    fallback: npt.NDArray[np.int64]
    pares_decl: npt.NDArray[np.int64]
    juego_decl: npt.NDArray[np.int64]
    own: npt.NDArray[np.int64]
    other: npt.NDArray[np.int64]
    target: npt.NDArray[np.int64]
    mus_rounds: npt.NDArray[np.int64]
    obs: npt.NDArray[np.float32]

    # The betting record of the lance being bet is read on demand (few agents need it).
    def _slot_piece(self, cols: npt.NDArray[np.int64], weights: npt.NDArray[np.float32],
                    starts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        ok = self.slot >= 0
        rows = np.arange(len(ok))[:, None]
        v = np.add.reduceat(self.obs[rows, cols[np.maximum(self.slot, 0)]] * weights, starts, axis=1)
        return np.where(ok[:, None], np.rint(v), 0).astype(np.int64)

    @cached_property
    def bettor_own(self) -> npt.NDArray[np.bool_]:
        """``(B,)`` the last bet or raise of the lance being bet was by the own team."""
        return (self.slot >= 0) & (self.obs[np.arange(len(self.slot)), _BETTOR_COL[np.maximum(self.slot, 0)]] > 0.5)

    @cached_property
    def speech(self) -> npt.NDArray[np.int64]:
        """``(B, 4)`` per seat q, what it said last in the lance being bet (SPEECH_* codes, -1 nothing)."""
        v = self._slot_piece(_SPEECH_COLS, _SPEECH_W, _SPEECH_STARTS) - 1
        return np.where((self.slot >= 0)[:, None], v, SPEECH_NONE)

    @cached_property
    def raised(self) -> npt.NDArray[np.int64]:
        """``(B, 4)`` per seat q, stones it has bet or raised in the lance being bet."""
        return self._slot_piece(_RAISED_COLS, np.full(4, STAKE_SCALE, dtype=np.float32), np.arange(4))

    @property
    def n_kings(self) -> npt.NDArray[np.int64]:
        """``(B,)`` number of reyes (with 8 kings, 3s included)."""
        return (self.ranks == self.top[:, None]).sum(axis=1)

    @property
    def n_aces(self) -> npt.NDArray[np.int64]:
        """``(B,)`` number of ases (with 8 kings, 2s included)."""
        return (self.ranks == 1).sum(axis=1)

    @property
    def pct(self) -> npt.NDArray[np.float64]:
        """``(B, 5)`` percentile per lance: strictly weaker plus half the equal hands (-1 outside)."""
        return np.where(self.below >= 0, self.below + 0.5 * self.equal, -1.0)

    @property
    def beat(self) -> npt.NDArray[np.float64]:
        """``(B, 5)`` position-aware percentile: strictly weaker plus the equal hands this seat beats when
        the other hand sits at a uniformly random other seat (all of them for the mano, none for the
        postre: ``(3 - seat) / 3``); -1 outside the population."""
        share = (3 - self.seat)[:, None] / 3.0
        return np.where(self.below >= 0, self.below + share * self.equal, -1.0)

    @property
    def juego(self) -> npt.NDArray[np.bool_]:
        """``(B,)`` the hand has juego (31 or more)."""
        return self.points >= 31


def _segments(names: tuple[str, ...]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """Columns, weights and segment starts that turn one-hot pieces into ``index + 1`` (0 when empty)."""
    cols, w, starts = [], [], []
    for name in names:
        sl = OFFSETS[name]
        starts.append(len(cols))
        cols.extend(range(sl.start, sl.stop))
        w.extend(range(1, sl.stop - sl.start + 1))
    return np.array(cols), np.array(w, dtype=np.float32), np.array(starts)


# The small one-hot pieces, read by one gather and one weighted reduceat.
_SMALL = _segments(("mano", "phase", "lance", "responder"))
# Per lance slot, the columns of the lance being bet.
_STAKE_COL = np.array([lo["stake"] for lo in LANCE_OFFSETS])
_ORDAGO_COL = np.array([lo["ordago"] for lo in LANCE_OFFSETS])
_FALLBACK_COL = np.array([lo["fallback"] for lo in LANCE_OFFSETS])
_BETTOR_COL = np.array([lo["bettor"] for lo in LANCE_OFFSETS])
_SPEECH_COLS = np.array([np.arange(lo["speech"], lo["speech"] + 20) for lo in LANCE_OFFSETS])
_SPEECH_W = np.tile(np.arange(1, 6), 4).astype(np.float32)
_SPEECH_STARTS = np.arange(0, 20, 5)
_RAISED_COLS = np.array([np.arange(lo["raised"], lo["raised"] + 4) for lo in LANCE_OFFSETS])
_AR4 = np.arange(4)


def _tables_by_variant() -> dict[int, tuple[npt.NDArray, ...]]:
    out = {}
    for kings in (8, 4):
        t = get_tables(kings)
        out[kings] = (rank_of_k(kings), value_of_k(kings), t.pares_class.astype(np.int64),
                      t.juego_points.astype(np.int64), t.strength.T.astype(np.int64).copy(),
                      percentile_table(kings).transpose(2, 0, 1).copy())
    return out


_VARIANT = _tables_by_variant()


def read(obs: npt.ArrayLike) -> Features:
    """Features of a batch of observations ``(B, OBS_DIM)`` (or one ``(OBS_DIM,)``, read as B = 1)."""
    x = np.asarray(obs, dtype=np.float32)
    if x.ndim == 1:
        x = x[None]
    B = x.shape[0]
    kings8 = x[:, _O_KINGS8] > 0.5
    if B and kings8.all() != kings8.any():                     # mixed variants: read each part alone
        parts = [read(x[kings8 == val]) for val in (True, False)]
        f = {name: np.empty((B,) + getattr(parts[0], name).shape[1:], dtype=getattr(parts[0], name).dtype)
             for name in Features.__dataclass_fields__}
        for part, sel in zip(parts, (kings8, ~kings8), strict=True):
            for name in f:
                f[name][sel] = getattr(part, name)
        return Features(**f)
    rows = np.arange(B)
    rk, vk, pcls, pts, strg, pct = _VARIANT[8 if (B == 0 or kings8[0]) else 4]
    k = x[:, _O_HAND].reshape(B, 4, 10).argmax(axis=2)
    ranks, values = rk[k], vk[k]
    idx = multiset_index(ranks[:, ::-1])
    c_small, w_small, st_small = _SMALL
    small = np.rint(np.add.reduceat(x[:, c_small] * w_small, st_small, axis=1)).astype(np.int64) - 1
    mano_q, phase, lance, responder = small[:, 0], small[:, 1], small[:, 2], small[:, 3]
    if x.shape[1] >= _SIGN_WINDOW.stop:                          # signals on: a sign decision has no phase one-hot
        phase = np.where(x[:, _SIGN_WINDOW].max(axis=1) > 0.5, Phase.SIGNAL, phase)
    seat = (-mano_q) % 4
    slot = np.where(lance >= 0, np.minimum(lance, 3), -1)
    ok = slot >= 0
    sl = np.maximum(slot, 0)
    stake = np.where(ok, np.rint(x[rows, _STAKE_COL[sl]] * STAKE_SCALE), 0).astype(np.int64)
    fallback = np.where(ok, np.rint(x[rows, _FALLBACK_COL[sl]] * STAKE_SCALE), 0).astype(np.int64)
    ordago = ok & (x[rows, _ORDAGO_COL[sl]] > 0.5)
    d = x[:, _O_DECL] if _O_DECL is not None else x[:, _C_DECL]
    decl = np.rint(2.0 * d[:, 0::2] + d[:, 1::2]).astype(np.int64) - 1            # sí 1, no 0, unknown -1
    target = np.rint(x[:, _O_TARGET] * TARGET_SCALE).astype(np.int64)
    sc = x[:, _O_SCORES] * target[:, None]
    return Features(
        kings8=kings8, k=k, ranks=ranks, values=values, idx=idx, top=np.full(B, rk[9]), pares_class=pcls[idx],
        points=pts[idx], strength=strg[idx], below=pct[idx, 0], equal=pct[idx, 1], seat=seat, phase=phase, lance=lance,
        slot=slot, responder=responder, stake=stake, ordago=ordago, fallback=fallback, pares_decl=decl[:, :4],
        juego_decl=decl[:, 4:], own=np.rint(sc[:, 0]).astype(np.int64), other=np.rint(sc[:, 1]).astype(np.int64),
        target=target,
        mus_rounds=np.rint(x[:, _O_ROUNDS] * ROUNDS_SCALE).astype(np.int64), obs=x,
    )


_O_KINGS8 = OFFSETS["kings8"].start
_SIGN_WINDOW = slice(OBS_DIM + SIGNAL_OFFSETS["sign_window"].start, OBS_DIM + SIGNAL_OFFSETS["sign_window"].stop)
_O_HAND = OFFSETS["hand_numbers"]
_C_DECL = np.r_[OFFSETS["pares_decl"], OFFSETS["juego_decl"]]
_O_DECL = (slice(OFFSETS["pares_decl"].start, OFFSETS["juego_decl"].stop)
           if OFFSETS["pares_decl"].stop == OFFSETS["juego_decl"].start else None)
_O_TARGET = OFFSETS["target"].start
_O_SCORES = OFFSETS["scores"]
_O_ROUNDS = OFFSETS["mus_rounds"].start


def per_lance(name: str, v: float | Sequence[float]) -> npt.NDArray[np.float64]:
    """An agent option given as one number or five (grande, chica, pares, juego, punto), as a (5,) array."""
    a = np.full(5, float(v)) if np.isscalar(v) else np.asarray(v, dtype=np.float64)
    if a.shape != (5,):
        raise ValueError(f"{name} must be a number or 5 numbers (grande, chica, pares, juego, punto), got {v!r}")
    return a
