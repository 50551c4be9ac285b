"""How an agent bids: its decisions recorded on a fixed deal set, counted by lance, role and hand strength.

Where the duplicate matches (:mod:`experiments.evaluate.duplicate`) say who wins and by how much, a bidding-style
profile says how: the poker trackers' VPIP, aggression factor and fold-to-bet, per lance and by hand strength.

* :class:`StyleRecorder` wraps an agent's ``act_batch`` and records each decision it makes, from the observation
  alone (:func:`decisions_of`): the phase, the lance, the **role** (its team is the mano's side or the postre's;
  it speaks in the opening round, answers a bet, confirms its partner's quiero, or faces an órdago), the hand's
  **strength** for that lance (its percentile among all hands for the lance, :attr:`agents.features.Features.pct`;
  holders only for pares and juego, hands without juego for punto) and the action.
* :class:`StyleCounts` holds the counts those decisions add up to: per lance, side, situation and strength
  bucket (:data:`BUCKET_EDGES`), how often each betting action was taken and how often it was legal; in the mus
  phase, cuts and discards by hand class (:data:`HAND_CLASSES`). Everything else (the rates, their Wilson
  intervals, the JSON file) is read from these counts (:mod:`experiments.evaluate.style_profile`).
* :func:`play_style` plays an agent on a versioned deal set (:data:`STYLE_DEAL_SETS`, single hands from 0-0,
  each deal twice with the seats swapped) against a field (:data:`DEFAULT_FIELD`: ``rule``, ``equity`` and
  itself), recording its decisions only; :func:`counts_from_record` rebuilds the same counts from a JSON hand
  record (:mod:`mus_env.records`) by replaying it on :class:`~mus_env.MusGame`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import Agent, TableRows, act_rows, make_agent
from agents.features import read
from experiments.evaluate.deals import DealSet, make_deals
from experiments.evaluate.duplicate import play_pair
from mus_env import MusConfig, MusGame
from mus_env.actions import DISCARD_BASE, ENVIDO_ACTIONS, ENVIDO_BASE, NUM_ACTIONS, Action
from mus_env.phases import Phase
from mus_env.records import replay
from mus_env.tables import LANCE_NAMES

__all__ = ["LANCES", "SIDES", "SITUATIONS", "BET_ACTIONS", "BET_ACTION_NAMES", "BUCKET_EDGES", "HAND_CLASSES",
           "STYLE_DEAL_SETS", "DEFAULT_FIELD", "SELF", "Decisions", "decisions_of", "StyleCounts", "StyleRecorder",
           "style_deals", "field_members", "play_style", "counts_from_record", "bucket_of"]

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
#: Versioned deal sets of the profiles: ``(seed, deals)``; deals are ``make_deals(deals, seed, target)``, played
#: as single hands from 0-0 (so no score-aware play), each twice with the seats swapped.
STYLE_DEAL_SETS: dict[str, tuple[int, int]] = {"v1": (23, 20_000)}
#: The field word for the profiled agent itself (a second, unrecorded copy plays the other team).
SELF = "self"
#: The default field: two sound bidders and the agent itself.
DEFAULT_FIELD = ("rule", "equity", SELF)

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
        z = np.zeros(0, dtype=np.int64)
        return Decisions(z, z, z, z, z, z.astype(float), z.astype(float), z, z, z, z, z, z, z, z, z)
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
    return Decisions(
        phase=f.phase.astype(np.int64), lance=lance.astype(np.int64), side=(f.seat % 2).astype(np.int64),
        seat=f.seat.astype(np.int64), situation=situation.astype(np.int64), pct=pct, beat=beat, action=actions,
        legal=legal, hand_class=(f.pares_class * len(_JUEGO) + juego).astype(np.int64),
        stake=np.where(betting, f.stake, 0).astype(np.int64),
        fallback=np.where(betting, f.fallback, 0).astype(np.int64),
        own=f.own.astype(np.int64), other=f.other.astype(np.int64), target=f.target.astype(np.int64),
        mus_rounds=f.mus_rounds.astype(np.int64))


def _zeros(*shape: int) -> npt.NDArray[np.int64]:
    return np.zeros(shape, dtype=np.int64)


_BET_SHAPE = (len(LANCES), len(SIDES), len(SITUATIONS), _NB)


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
        other: decisions of no kind counted above (forced mus calls, declarations, señas).
    """

    bet_n: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_BET_SHAPE))
    bet_k: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_BET_SHAPE, len(BET_ACTIONS)))
    bet_legal: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(*_BET_SHAPE, len(BET_ACTIONS)))
    unrated: int = 0
    mus_n: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES)))
    mus_cut: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES)))
    discard_k: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES), 16))
    discard_legal: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(len(HAND_CLASSES), 16))
    other: int = 0

    ARRAYS = ("bet_n", "bet_k", "bet_legal", "mus_n", "mus_cut", "discard_k", "discard_legal")

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
        self.other += int(len(d) - (d.situation >= 0).sum() - mus.sum() - disc.size)

    def __iadd__(self, other: StyleCounts) -> StyleCounts:
        for name in self.ARRAYS:
            getattr(self, name)[...] += getattr(other, name)
        self.unrated += other.unrated
        self.other += other.other
        return self

    def decisions(self) -> int:
        """Every decision counted (betting, mus, discards and the rest)."""
        return int(self.bet_n.sum() + self.unrated + self.mus_n.sum() + self.discard_k.sum() + self.other)

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


class StyleRecorder(Agent):
    """An agent that plays as ``agent`` and counts every decision it makes (:attr:`counts`).

    Args:
        agent: the agent to record; its ``act_batch`` gets the same observations, masks and generator, so the
            recorded agent plays exactly as it would unwrapped.
        keep_rows: also keep each decision's :class:`Decisions` row (:meth:`rows`; for tests and studies).
    """

    def __init__(self, agent: Agent, keep_rows: bool = False) -> None:
        self.agent = agent
        self.name = agent.name
        self.counts = StyleCounts()
        self.keep_rows = bool(keep_rows)
        self._rows: list[Decisions] = []

    @property
    def wants_rows(self) -> bool:  # type: ignore[override]
        """As the recorded agent: one that plays by game still gets each row's identity."""
        return bool(getattr(self.agent, "wants_rows", False))

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return self.act_rows(obs, masks, rng, None)  # type: ignore[arg-type]

    def act_rows(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], rng: np.random.Generator,
                 rows: TableRows | None) -> npt.NDArray[np.int64]:
        actions = act_rows(self.agent, obs, masks, rng, rows)
        d = decisions_of(obs, masks, actions)
        self.counts.add(d)
        if self.keep_rows:
            self._rows.append(d)
        return actions

    def rows(self) -> Decisions:
        """Every decision recorded so far (``keep_rows=True``), in order."""
        return Decisions.concat(self._rows)

    def __repr__(self) -> str:
        return f"StyleRecorder({self.agent!r})"


def style_deals(deal_set: str = "v1", deals: int | None = None, seed: int | None = None,
                target: int = 40) -> tuple[DealSet, str]:
    """The deal set of a profile and its name: ``deal_set`` (:data:`STYLE_DEAL_SETS`) at its own size and seed,
    or ``"<deal_set>-custom"`` when ``deals`` or ``seed`` differ.

    Raises:
        ValueError: an unknown deal set or fewer than one deal.
    """
    if deal_set not in STYLE_DEAL_SETS:
        raise ValueError(f"deal_set must be one of {', '.join(STYLE_DEAL_SETS)}, got {deal_set!r}")
    set_seed, n = STYLE_DEAL_SETS[deal_set]
    deals = n if deals is None else int(deals)
    seed = set_seed if seed is None else int(seed)
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    name = deal_set if (deals, seed) == (n, set_seed) else f"{deal_set}-custom"
    return make_deals(deals, seed, target), name


def field_members(field_specs: Iterable[str | Agent], spec: str | None = None) -> list[str | Agent]:
    """The field as played: a spec equal to ``spec`` is :data:`SELF`, and each member plays once (first
    place kept)."""
    out: list[str | Agent] = []
    for opp in field_specs:
        opp = SELF if isinstance(opp, str) and spec is not None and opp == spec else opp
        if opp not in out:
            out.append(opp)
    return out


def play_style(agent: Agent, deals: DealSet, field_specs: Iterable[str | Agent] = DEFAULT_FIELD, *,
               spec: str | None = None, name: str | None = None, config: MusConfig | None = None, seed: int = 0,
               keep_rows: bool = False,
               progress: Callable[[int], None] | None = None,
               log: Callable[[str], None] | None = None) -> tuple[StyleCounts, Decisions | None]:
    """Play ``agent`` in duplicate against each member of the field on ``deals`` and count its decisions.

    Args:
        agent: the profiled agent.
        deals: the deal set (single hands; each deal twice, seats swapped).
        field_specs: the opponents: ``make_agent`` specs, agents, or :data:`SELF` (the agent itself, unrecorded
            on the other team; with ``spec`` given, an opponent equal to it means the same).
        spec: the agent's spec, to read a field member equal to it as :data:`SELF`.
        name: the agent's name in the matches (default: its ``name``).
        config: the ruleset.
        seed: the agents' seed of every match.
        keep_rows: also return every decision's row.
        progress: called with the deals completed (``len(deals)`` per field member in all).
        log: called with one line per field member played.

    Returns:
        The counts, and the decisions' rows (None unless ``keep_rows``).
    """
    rec = StyleRecorder(agent, keep_rows=keep_rows)
    name = name or agent.name
    for opp in field_members(field_specs, spec):
        if opp == SELF:
            other, label = agent, SELF
        elif isinstance(opp, str):
            other, label = make_agent(opp), opp
        else:
            other, label = opp, opp.name
        r = play_pair(rec, other, deals, mode="hands", config=config, seed=seed,
                      names=(name, f"{label} (field)"), progress=progress)
        if log is not None:
            log(f"{name} vs {label}: {len(r.hand_diff):,} deals, {r.mean_diff()[0]:+.3f} stones/hand")
    return rec.counts, (rec.rows() if keep_rows else None)


def counts_from_record(record: dict[str, Any], seats: Iterable[int] | None = None, player: str | None = None,
                       keep_rows: bool = False) -> tuple[StyleCounts, Decisions | None]:
    """The counts of the decisions made at some seats of a JSON hand record (:mod:`mus_env.records`).

    The record is first replayed and checked (:func:`mus_env.records.replay`); then it is played again on
    :class:`~mus_env.MusGame` from its first deal, and before each of its non-automatic actions made at one of
    the seats, that seat's observation and legal-action mask are read, as an agent saw them.

    Args:
        record: a record (:func:`mus_env.records.load_record`).
        seats: absolute seats whose decisions count.
        player: or the name of a player (``record["players"]``): the seats it sat at.
        keep_rows: also return the decisions' rows.

    Raises:
        ValueError: neither or both of ``seats`` and ``player``, an unknown player, a seat outside 0..3;
            :class:`mus_env.records.RecordError` for a record that does not replay.
    """
    if (seats is None) == (player is None):
        raise ValueError("give the seats or the player whose decisions count (one of the two)")
    if player is not None:
        names = {int(k): v for k, v in record.get("players", {}).items()}
        chosen = {s for s, v in names.items() if v == player}
        if not chosen:
            raise ValueError(f"player {player!r} sat at no seat of the record (players: {names or 'none named'})")
    else:
        chosen = {int(s) for s in seats}  # type: ignore[union-attr]
        if not chosen <= {0, 1, 2, 3}:
            raise ValueError(f"seats must be in 0..3, got {sorted(chosen)}")
    cfg = replay(record).config                       # checked; the config as the game plays it
    game = MusGame.from_deck(record["deck"], record["mano"], tuple(record["scores"]), cfg, record["seed"])
    events = [e for h in record["hands"] for e in h["actions"]] + list(record["pending_actions"])
    obs, masks, actions = [], [], []
    for seat, action, amount, auto in events:
        if auto:
            continue
        if seat in chosen:
            obs.append(game.observe(seat))
            masks.append(game.legal_action_mask())
            actions.append(action)
        if action in ENVIDO_ACTIONS and amount and amount != cfg.bet_sizes[action - ENVIDO_BASE]:
            game.step_envido(amount)
        else:
            game.step(action)
    counts = StyleCounts()
    if not actions:
        return counts, (Decisions.concat([]) if keep_rows else None)
    d = decisions_of(np.stack(obs), np.stack(masks), np.array(actions))
    counts.add(d)
    return counts, (d if keep_rows else None)
