"""Batched readers of the observation vector, shared by the rule-based and equity agents.

Agents see only their observation (:mod:`mus_env.observation`) and the legal-action mask. This module
turns a whole ``(B, OBS_DIM)`` batch into named per-row arrays in one compiled pass
(:func:`agents.compiled.read_rows`: the pieces at :data:`~mus_env.observation.OFFSETS` /
:data:`~mus_env.observation.LANCE_OFFSETS`, no per-row ``decode``; :func:`read_packed` gives its packed tables,
which the baselines' compiled decisions read), and adds hand features looked up in :mod:`mus_env.tables`:

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
from mus_env.observation import LANCE_OFFSETS, STAKE_SCALE
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, get_tables, multiset_index

from .compiled import (
    I_FALLBACK,
    I_IDX,
    I_JUEGO_DECL,
    I_K,
    I_KINGS8,
    I_LANCE,
    I_MUS_ROUNDS,
    I_ORDAGO,
    I_OTHER,
    I_OWN,
    I_PARES_CLASS,
    I_PARES_DECL,
    I_PHASE,
    I_POINTS,
    I_RANKS,
    I_RESPONDER,
    I_SEAT,
    I_SLOT,
    I_STAKE,
    I_STRENGTH,
    I_TARGET,
    I_TOP,
    I_VALUES,
    NUM_FLOAT,
    NUM_INT,
    read_rows,
    run_kernel,
)

__all__ = [
    "Features", "read", "read_packed", "percentile_table", "hand_weights", "strength_of", "rank_of_k", "value_of_k",
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

    @classmethod
    def from_packed(cls, x: npt.NDArray[np.float32], ints: npt.NDArray[np.int64],
                    floats: npt.NDArray[np.float64]) -> Features:
        """The features of :func:`read_packed`'s tables (most arrays are views of their columns)."""
        c = ints.T
        return cls(
            kings8=c[I_KINGS8] != 0, k=ints[:, I_K:I_K + 4], ranks=ints[:, I_RANKS:I_RANKS + 4],
            values=ints[:, I_VALUES:I_VALUES + 4], idx=c[I_IDX], top=c[I_TOP], pares_class=c[I_PARES_CLASS],
            points=c[I_POINTS], strength=ints[:, I_STRENGTH:I_STRENGTH + 5], below=floats[:, :5], equal=floats[:, 5:],
            seat=c[I_SEAT], phase=c[I_PHASE], lance=c[I_LANCE], slot=c[I_SLOT], responder=c[I_RESPONDER],
            stake=c[I_STAKE], ordago=c[I_ORDAGO] != 0, fallback=c[I_FALLBACK],
            pares_decl=ints[:, I_PARES_DECL:I_PARES_DECL + 4], juego_decl=ints[:, I_JUEGO_DECL:I_JUEGO_DECL + 4],
            own=c[I_OWN], other=c[I_OTHER], target=c[I_TARGET], mus_rounds=c[I_MUS_ROUNDS], obs=x)

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


# Per lance slot, the columns of the betting record of the lance being bet (read on demand).
_BETTOR_COL = np.array([lo["bettor"] for lo in LANCE_OFFSETS])
_SPEECH_COLS = np.array([np.arange(lo["speech"], lo["speech"] + 20) for lo in LANCE_OFFSETS])
_SPEECH_W = np.tile(np.arange(1, 6), 4).astype(np.float32)
_SPEECH_STARTS = np.arange(0, 20, 5)
_RAISED_COLS = np.array([np.arange(lo["raised"], lo["raised"] + 4) for lo in LANCE_OFFSETS])


def _variant_tables() -> tuple[npt.NDArray, ...]:
    """The hand tables of both variants (index 0: 8 kings, 1: 4 kings) as :func:`agents.compiled.read_rows` takes
    them, padded to the larger variant's number of rank multisets."""
    ts = [get_tables(k) for k in (8, 4)]
    m = max(t.size for t in ts)
    rank_k = np.stack([rank_of_k(k) for k in (8, 4)])
    value_k = np.stack([value_of_k(k) for k in (8, 4)])
    pares_class = np.zeros((2, m), dtype=np.int64)
    points = np.zeros((2, m), dtype=np.int64)
    strength = np.zeros((2, m, 5), dtype=np.int64)
    below = np.zeros((2, m, 5))
    equal = np.zeros((2, m, 5))
    for v, (kings, t) in enumerate(zip((8, 4), ts, strict=True)):
        pares_class[v, :t.size] = t.pares_class
        points[v, :t.size] = t.juego_points
        strength[v, :t.size] = t.strength.T
        pct = percentile_table(kings)
        below[v, :t.size] = pct[0].T
        equal[v, :t.size] = pct[1].T
    binom = np.array([[comb(n, k) for k in range(5)] for n in range(16)], dtype=np.int64)
    out = (rank_k, value_k, pares_class, points, strength, below, equal, binom)
    for a in out:
        a.setflags(write=False)
    return out


_TABLES = _variant_tables()


def read_packed(obs: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The compiled reader behind :func:`read`: ``(x, ints, floats)``, the observations as a C-contiguous
    ``(B, obs_dim)`` float32 array and their features packed in an int64 ``(B, compiled.NUM_INT)`` table
    (columns ``agents.compiled.I_*``) and a float64 ``(B, 10)`` one (strictly weaker per lance, then equal).
    :meth:`Features.from_packed` names them."""
    x = np.require(obs, np.float32, ["C", "W"])                # (one compiled signature: C-contiguous, writable)
    if x.ndim == 1:
        x = x[None]
    if x.ndim != 2:
        raise ValueError(f"observations must have shape (B, obs_dim), got {x.shape}")
    ints = np.empty((x.shape[0], NUM_INT), dtype=np.int64)
    floats = np.empty((x.shape[0], NUM_FLOAT))
    run_kernel(read_rows, x, *_TABLES, ints, floats)
    return x, ints, floats


def read(obs: npt.ArrayLike) -> Features:
    """Features of a batch of observations ``(B, OBS_DIM)`` (or one ``(OBS_DIM,)``, read as B = 1)."""
    return Features.from_packed(*read_packed(obs))


def per_lance(name: str, v: float | Sequence[float]) -> npt.NDArray[np.float64]:
    """An agent option given as one number or five (grande, chica, pares, juego, punto), as a (5,) array."""
    a = np.full(5, float(v)) if np.isscalar(v) else np.asarray(v, dtype=np.float64)
    if a.shape != (5,):
        raise ValueError(f"{name} must be a number or 5 numbers (grande, chica, pares, juego, punto), got {v!r}")
    return a
