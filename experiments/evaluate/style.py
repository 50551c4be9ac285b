"""How an agent bids: its decisions read from what it saw, counted by lance, role and hand strength.

Where the duplicate matches (:mod:`experiments.evaluate.duplicate`) say who wins and by how much, a bidding-style
profile says how: the poker trackers' VPIP, aggression factor and fold-to-bet, per lance and by hand strength.

* :func:`decisions_of` reads each decision of a batch from the observation and the mask alone (:class:`Decisions`):
  the phase, the lance, the **role** (its team is the mano's side or the postre's; it speaks in the opening round,
  answers a bet, confirms its partner's quiero, or faces an órdago), the hand's **strength** for that lance (its
  percentile among all hands for the lance, :attr:`agents.features.Features.pct`; holders only for pares and juego,
  hands without juego for punto), the scores, the sign window, and the action.
* :class:`StyleCounts` holds the counts those decisions add up to: per lance, side, situation and strength
  bucket (:data:`BUCKET_EDGES`), how often each betting action was taken and how often it was legal; in the mus
  phase, cuts and discards by hand class (:data:`HAND_CLASSES`); the betting decisions again by score situation
  (:mod:`experiments.evaluate.style_situations`: the team's lead, near the end of the game); with señas on, the
  signs made by window and hand class. Everything else (the rates, their Wilson intervals, the JSON file) is read
  from these counts (:mod:`experiments.evaluate.style_profile`).

:mod:`experiments.evaluate.style_play` gathers the counts: an agent played on a versioned deal set, or the seats
of a JSON hand record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.features import read
from agents.signs import read_signs
from experiments.evaluate.style_situations import SCORE_LEADS, SIGN_WINDOWS, near_end, score_lead
from mus_env.actions import DISCARD_BASE, ENVIDO_ACTIONS, NUM_ACTIONS, Action
from mus_env.phases import Phase
from mus_env.signals import NUM_SIGNS, SIGNAL_BASE
from mus_env.tables import LANCE_NAMES

__all__ = ["LANCES", "SIDES", "SITUATIONS", "BET_ACTIONS", "BET_ACTION_NAMES", "BUCKET_EDGES", "HAND_CLASSES",
           "Decisions", "decisions_of", "StyleCounts", "bucket_of"]

#: The lances, in the order of the counts' first axis (lance ids of :mod:`mus_env.tables`).
LANCES = LANCE_NAMES
#: Which side the deciding seat's team is on: the mano's team (the mano and its partner) or the postre's.
SIDES = ("mano", "postre")
#: What the decision answers: ``open`` the opening round (nobody has bet the lance yet), ``answer`` a numeric
#: bet (the first or second responder, who may refuse), ``confirm`` the partner's quiero (a second responder who
#: may only accept or raise), ``ordago`` a live órdago (accept or refuse).
SITUATIONS = ("open", "answer", "confirm", "ordago")
#: The betting actions counted, in the order of the counts' last axis.
BET_ACTIONS = (int(Action.PASO), *ENVIDO_ACTIONS, int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO))
#: Their names (the action ids' names: ``envido_2`` .. ``envido_10`` for the five bet sizes of the default config).
BET_ACTION_NAMES = tuple(Action(a).name.lower() for a in BET_ACTIONS)
#: Strength buckets: a hand of percentile ``p`` falls in bucket ``i`` when ``EDGES[i] <= p < EDGES[i + 1]`` (the
#: last bucket holds 1.0 too). Finer at the top, where the bets are.
BUCKET_EDGES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.0)
_PARES = ("no pares", "par", "medias", "duples")
_JUEGO = ("no juego", "31", "juego")
#: Hand classes of the mus phase: pares class (none, par, medias, duples) and juego (none, 31, another juego).
HAND_CLASSES = tuple(f"{p}, {j}" for p in _PARES for j in _JUEGO)
_NB = len(BUCKET_EDGES) - 1
_IDX = np.full(NUM_ACTIONS, -1, dtype=np.int64)
_IDX[list(BET_ACTIONS)] = np.arange(len(BET_ACTIONS))
_BITS = np.int64(1) << np.arange(NUM_ACTIONS, dtype=np.int64)


def bucket_of(pct: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``(n,)`` strength bucket (:data:`BUCKET_EDGES`) of percentiles ``pct`` in [0, 1]."""
    return np.searchsorted(np.asarray(BUCKET_EDGES[1:-1]), np.asarray(pct, dtype=np.float64), side="right")


@dataclass
class Decisions:
    """One row per decision, read from the observation and the mask alone (every array ``(n,)``).

    Attributes:
        phase: ``Phase`` code of the decision.
        lance: lance id (0 grande .. 4 punto) of a betting decision, else -1.
        side: 0 the decider's team is the mano's, 1 the postre's.
        seat: the decider's seat relative to the mano (0 mano .. 3 postre).
        situation: index in :data:`SITUATIONS` of a betting decision, else -1.
        pct: the hand's percentile for the lance (:attr:`agents.features.Features.pct`), -1 outside a betting
            decision or outside the lance's population.
        beat: the position-aware percentile (:attr:`agents.features.Features.beat`; what ``rule`` thresholds).
        action: the action id taken.
        legal: the legal actions among the 31 base ids, as bits (``1 << id``).
        hand_class: index in :data:`HAND_CLASSES` of the own hand.
        stake, fallback: the live stake and the refusal's stones of the lance being bet (0 outside).
        own, other, target: the game scores in stones and the target.
        mus_rounds: completed discard rounds this hand.
        window: the kind of sign window (index in :data:`~experiments.evaluate.style_situations.SIGN_WINDOWS`)
            of a sign decision, else -1.
        sign: the token of a sign decision (``action - SIGNAL_BASE``), else -1.
        sign_legal: the legal tokens of a sign decision, as bits (``1 << token``), else 0.
    """

    phase: npt.NDArray[np.int64]
    lance: npt.NDArray[np.int64]
    side: npt.NDArray[np.int64]
    seat: npt.NDArray[np.int64]
    situation: npt.NDArray[np.int64]
    pct: npt.NDArray[np.float64]
    beat: npt.NDArray[np.float64]
    action: npt.NDArray[np.int64]
    legal: npt.NDArray[np.int64]
    hand_class: npt.NDArray[np.int64]
    stake: npt.NDArray[np.int64]
    fallback: npt.NDArray[np.int64]
    own: npt.NDArray[np.int64]
    other: npt.NDArray[np.int64]
    target: npt.NDArray[np.int64]
    mus_rounds: npt.NDArray[np.int64]
    window: npt.NDArray[np.int64]
    sign: npt.NDArray[np.int64]
    sign_legal: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.action)

    def is_legal(self, action: int) -> npt.NDArray[np.bool_]:
        """``(n,)`` whether ``action`` was legal at each decision."""
        return (self.legal >> np.int64(action)) & 1 == 1

    @classmethod
    def concat(cls, parts: Sequence[Decisions]) -> Decisions:
        """The rows of ``parts`` one after the other."""
        if not parts:
            return decisions_of(np.zeros((0, 1), np.float32), np.zeros((0, NUM_ACTIONS), np.int8), np.zeros(0))
        return cls(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)})


def decisions_of(obs: npt.ArrayLike, masks: npt.ArrayLike, actions: npt.ArrayLike) -> Decisions:
    """The :class:`Decisions` of a batch: observations ``(B, OBS_DIM)``, masks ``(B, num_actions)``, actions
    ``(B,)``."""
    actions = np.asarray(actions, dtype=np.int64).reshape(-1)
    masks = np.asarray(masks)
    n = len(actions)
    if n == 0:
        return Decisions(**{f.name: np.zeros(0, dtype=np.float64 if f.name in ("pct", "beat") else np.int64)
                            for f in fields(Decisions)})
    f = read(obs)
    rows = np.arange(n)
    lance = np.where((f.phase >= Phase.BET_OPEN) & (f.phase <= Phase.BET_CONFIRM), f.lance, -1)
    safe = np.maximum(lance, 0)
    pct = np.where(lance >= 0, f.pct[rows, safe], -1.0)
    beat = np.where(lance >= 0, f.beat[rows, safe], -1.0)
    situation = np.select([f.phase == Phase.BET_OPEN, f.ordago, f.phase == Phase.BET_RESPOND,
                           f.phase == Phase.BET_CONFIRM], [0, 3, 1, 2], -1)
    situation = np.where(lance >= 0, situation, -1)
    juego = np.where(f.points < 31, 0, np.where(f.points == 31, 1, 2))
    legal = ((np.asarray(masks[:, :NUM_ACTIONS]) > 0) * _BITS).sum(axis=1).astype(np.int64)
    betting = lance >= 0
    signing = f.phase == Phase.SIGNAL
    window = np.where(signing, read_signs(obs).window, -1)
    sign = np.where(signing, actions - SIGNAL_BASE, -1)
    if masks.shape[1] >= SIGNAL_BASE + NUM_SIGNS:
        tokens = (masks[:, SIGNAL_BASE:SIGNAL_BASE + NUM_SIGNS] > 0) * _BITS[:NUM_SIGNS]
        sign_legal = np.where(signing, tokens.sum(axis=1), 0)
    else:
        sign_legal = np.zeros(n, dtype=np.int64)
    return Decisions(
        phase=f.phase.astype(np.int64), lance=lance.astype(np.int64), side=(f.seat % 2).astype(np.int64),
        seat=f.seat.astype(np.int64), situation=situation.astype(np.int64), pct=pct, beat=beat, action=actions,
        legal=legal, hand_class=(f.pares_class * len(_JUEGO) + juego).astype(np.int64),
        stake=np.where(betting, f.stake, 0).astype(np.int64),
        fallback=np.where(betting, f.fallback, 0).astype(np.int64),
        own=f.own.astype(np.int64), other=f.other.astype(np.int64), target=f.target.astype(np.int64),
        mus_rounds=f.mus_rounds.astype(np.int64), window=window.astype(np.int64), sign=sign.astype(np.int64),
        sign_legal=sign_legal.astype(np.int64))


def _zeros(*shape: int) -> npt.NDArray[np.int64]:
    return np.zeros(shape, dtype=np.int64)


_BET_SHAPE = (len(LANCES), len(SIDES), len(SITUATIONS), _NB)
_SCORE_SHAPE = (len(SCORE_LEADS), 2, len(LANCES), len(SITUATIONS))
_SIGN_SHAPE = (len(SIGN_WINDOWS), len(HAND_CLASSES))


@dataclass
class StyleCounts:
    """What a profile is made of: counts of decisions (all int64, the shapes below).

    Attributes:
        bet_n: ``(5 lances, 2 sides, 4 situations, buckets)`` betting decisions.
        bet_k: ``(..., 9 actions)`` of them, how many took each of :data:`BET_ACTIONS`.
        bet_legal: ``(..., 9 actions)`` of them, how many had each action legal.
        unrated: betting decisions with no percentile (a hand outside the lance's population; none expected).
        mus_n: ``(12 classes,)`` mus calls where MUS was legal (a real choice), by hand class.
        mus_cut: ``(12,)`` of them, cuts (NO_MUS).
        discard_k: ``(12 classes, 16 masks)`` discards, by the discard mask taken.
        discard_legal: ``(12, 16)`` discards where each mask was legal.
        score_n: ``(3 leads, 2: not near the end / near it, 5 lances, 4 situations)`` the betting decisions of
            ``bet_n`` again, by score situation (:mod:`experiments.evaluate.style_situations`).
        score_k, score_legal: ``(..., 9 actions)`` of them, each action taken, legal.
        sign_n: ``(2 windows, 12 classes)`` sign decisions, by window kind and hand class.
        sign_k, sign_legal: ``(2, 12, 16 tokens)`` of them, each token made, legal.
        other: decisions of no kind counted above (forced mus calls, declarations).
    """

    bet_n: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_BET_SHAPE))
    bet_k: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_BET_SHAPE, len(BET_ACTIONS)))
    bet_legal: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_BET_SHAPE, len(BET_ACTIONS)))
    unrated: int = 0
    mus_n: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES)))
    mus_cut: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES)))
    discard_k: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES), 16))
    discard_legal: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES), 16))
    score_n: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_SCORE_SHAPE))
    score_k: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_SCORE_SHAPE, len(BET_ACTIONS)))
    score_legal: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_SCORE_SHAPE, len(BET_ACTIONS)))
    sign_n: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_SIGN_SHAPE))
    sign_k: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_SIGN_SHAPE, NUM_SIGNS))
    sign_legal: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_SIGN_SHAPE, NUM_SIGNS))
    other: int = 0

    ARRAYS = ("bet_n", "bet_k", "bet_legal", "mus_n", "mus_cut", "discard_k", "discard_legal", "score_n", "score_k",
              "score_legal", "sign_n", "sign_k", "sign_legal")

    def add(self, d: Decisions) -> None:
        """Count the decisions ``d``."""
        bet = (d.situation >= 0) & (d.pct >= 0)
        self.unrated += int(((d.situation >= 0) & (d.pct < 0)).sum())
        i = np.flatnonzero(bet)
        cell = np.ravel_multi_index((d.lance[i], d.side[i], d.situation[i], bucket_of(d.pct[i])), _BET_SHAPE)
        np.add.at(self.bet_n.reshape(-1), cell, 1)
        a = _IDX[d.action[i]]
        ok = a >= 0
        np.add.at(self.bet_k.reshape(-1, len(BET_ACTIONS)), (cell[ok], a[ok]), 1)
        legal = (d.legal[i, None] >> np.array(BET_ACTIONS, dtype=np.int64)) & 1
        self.bet_legal.reshape(-1, len(BET_ACTIONS))[...] += np.array(
            [np.bincount(cell, weights=legal[:, j], minlength=int(np.prod(_BET_SHAPE))) for j in
             range(len(BET_ACTIONS))], dtype=np.int64).T
        mus = (d.phase == Phase.MUS_CALL) & d.is_legal(int(Action.MUS))
        np.add.at(self.mus_n, d.hand_class[mus], 1)
        np.add.at(self.mus_cut, d.hand_class[mus & (d.action == int(Action.NO_MUS))], 1)
        disc = np.flatnonzero((d.phase == Phase.DISCARD) & (d.action >= DISCARD_BASE) & (d.action < DISCARD_BASE + 16))
        np.add.at(self.discard_k, (d.hand_class[disc], d.action[disc] - DISCARD_BASE), 1)
        self.discard_legal += np.array([np.bincount(d.hand_class[disc], weights=d.is_legal(DISCARD_BASE + m)[disc],
                                                    minlength=len(HAND_CLASSES)) for m in range(16)],
                                       dtype=np.int64).T
        score = np.ravel_multi_index((score_lead(d.own[i], d.other[i]),
                                      near_end(d.own[i], d.other[i], d.target[i]).astype(np.int64),
                                      d.lance[i], d.situation[i]), _SCORE_SHAPE)
        np.add.at(self.score_n.reshape(-1), score, 1)
        np.add.at(self.score_k.reshape(-1, len(BET_ACTIONS)), (score[ok], a[ok]), 1)
        self.score_legal.reshape(-1, len(BET_ACTIONS))[...] += np.array(
            [np.bincount(score, weights=legal[:, j], minlength=int(np.prod(_SCORE_SHAPE))) for j in
             range(len(BET_ACTIONS))], dtype=np.int64).T
        s = np.flatnonzero(d.window >= 0)
        cell = np.ravel_multi_index((d.window[s], d.hand_class[s]), _SIGN_SHAPE)
        np.add.at(self.sign_n.reshape(-1), cell, 1)
        np.add.at(self.sign_k.reshape(-1, NUM_SIGNS), (cell, d.sign[s]), 1)
        tokens = (d.sign_legal[s, None] >> np.arange(NUM_SIGNS, dtype=np.int64)) & 1
        self.sign_legal.reshape(-1, NUM_SIGNS)[...] += np.array(
            [np.bincount(cell, weights=tokens[:, t], minlength=int(np.prod(_SIGN_SHAPE))) for t in
             range(NUM_SIGNS)], dtype=np.int64).T
        self.other += int(len(d) - (d.situation >= 0).sum() - mus.sum() - disc.size - s.size)

    def __iadd__(self, other: StyleCounts) -> StyleCounts:
        for name in self.ARRAYS:
            getattr(self, name)[...] += getattr(other, name)
        self.unrated += other.unrated
        self.other += other.other
        return self

    def decisions(self) -> int:
        """Every decision counted (betting, mus, discards, signs and the rest)."""
        return int(self.bet_n.sum() + self.unrated + self.mus_n.sum() + self.discard_k.sum() + self.sign_n.sum()
                   + self.other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StyleCounts):
            return NotImplemented
        return all(np.array_equal(getattr(self, n), getattr(other, n)) for n in self.ARRAYS) and \
            (self.unrated, self.other) == (other.unrated, other.other)

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """The counts as JSON values (nested lists of ints)."""
        out: dict[str, Any] = {n: getattr(self, n).tolist() for n in self.ARRAYS}
        out["unrated"], out["other"] = int(self.unrated), int(self.other)
        return out

    @classmethod
    def from_dict(cls, d: Any, where: str = "counts") -> StyleCounts:
        """Counts read back from :meth:`to_dict`'s values.

        Raises:
            ValueError: a field missing, of the wrong shape, or not a non-negative int; the message names it.
        """
        if not isinstance(d, dict):
            raise ValueError(f"{where}: expected an object of counts, got {type(d).__name__}")
        blank = cls()
        kw: dict[str, Any] = {}
        for name in cls.ARRAYS:
            if name not in d:
                raise ValueError(f"{where}.{name}: missing")
            want = getattr(blank, name).shape
            try:
                a = np.array(d[name], dtype=object)
                ok = a.shape == want and all(type(v) is int and v >= 0 for v in a.reshape(-1))
            except (ValueError, TypeError):
                ok = False
            if not ok:
                raise ValueError(f"{where}.{name}: expected non-negative ints of shape {want}")
            kw[name] = np.array(d[name], dtype=np.int64)
        for name in ("unrated", "other"):
            v = d.get(name)
            if type(v) is not int or v < 0:
                raise ValueError(f"{where}.{name}: expected a non-negative int, got {v!r}")
            kw[name] = v
        return cls(**kw)
