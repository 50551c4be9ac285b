"""Duplicate matches: two agents play every deal of a deal set twice, the teams' seats swapped.

Format (DESIGN.md, "Evaluation protocol"): every deal of a seeded deal set (deck, mano, starting scores,
game seed; :mod:`experiments.evaluate.deals`) is played twice, once with agent A on team 0 (seats 0 and 2) and
B on team 1, once with the teams swapped. Two units are measured:

* hands (``mode="hands"``): each deal is one hand; the result is A's stones minus B's stones, averaged over
  the two seatings (the duplicate difference), reported as a mean per hand with a 95% confidence
  interval over deals; a hand ended by an accepted órdago also counts the stones the winners still
  lacked to reach the target (the environments' ``reward="stones"`` rule: an órdago stakes the game).
  Stones per lance, envido / órdago / no-quiero rates ride along.
* games (``mode="games"``): each deal starts a whole game from 0-0 (later hands come from the deal's seed,
  so both seatings see the same cards hand by hand); the result is A's game win rate over paired games.

:func:`play_pair` plays one pair on a :class:`~mus_env.VectorMusEnv` into a :class:`PairResult`.

Large deal sets are played in chunks of :data:`DEAL_CHUNK` deals (:func:`play_pair_in_chunks`), each chunk a
:func:`play_pair` call with its own agents' seed (:func:`chunk_seed`; the first chunk keeps the given seed, so a
deal set of up to ``DEAL_CHUNK`` deals is one ``play_pair`` call exactly), merged in order
(:func:`merge_pair_results`). The chunks are fixed by the deal set alone, never by the number of tables or of
workers, so a Ray run (:mod:`experiments.evaluate.ray_shards`) can play every chunk as a task of its own and still
give the single-process results.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import Agent, act_rows, wants_rows
from experiments.evaluate.deals import DealSet
from mus_env import Action, MusConfig, TableRows, VectorMusEnv
from mus_env.actions import NUM_ACTIONS
from mus_env.observation import SLOT_NAMES
from mus_env.phases import NUM_PHASES, Phase
from mus_env.signals import NUM_SIGNS

__all__ = ["PairResult", "DEAL_CHUNK", "MAX_HAND_DECISIONS", "play_pair", "play_pair_in_chunks", "chunk_seed",
           "chunk_bounds", "chunk_of", "check_deal_chunk", "merge_pair_results", "agent_labels"]

DEAL_CHUNK = 65_536
"""Deals per chunk (:func:`play_pair_in_chunks`, the tournaments' ``round_robin`` and ``ray_round_robins``): chunk
``k`` is deals ``k*C .. (k+1)*C - 1``, played by one :func:`play_pair` call with agents' seed ``chunk_seed(seed, k)``
(one Ray task with ``--ray``). A constant, as the results of stochastic agents depend on it; those functions take
``deal_chunk=`` to override it, and read this one when called (so patching it here changes their default)."""

_ENVIDO = np.zeros(NUM_ACTIONS + NUM_SIGNS, dtype=bool)          # sign ids 31..46 too (signals on)
_ENVIDO[int(Action.ENVIDO_2):int(Action.ENVIDO_10) + 1] = True
_NUM_PHASES = max(NUM_PHASES, int(Phase.SIGNAL) + 1)        # phase codes of the decision counters
_NUM_SLOTS = len(SLOT_NAMES) + 1                             # the counters' slot axis: the lance slots, then "no lance"


@dataclass
class PairResult:
    """Raw per-deal results of agent ``a`` against agent ``b`` (side 0: a on team 0; side 1: swapped).

    Attributes:
        hand_diff: ``(n,)`` per deal, a's result minus b's averaged over the two seatings (hands mode): the
            stones of the hand, and for a hand ended by an accepted órdago also the stones the winners
            still lacked to reach the target (the ``reward="stones"`` rule, so an órdago is worth a game).
        hand_value: ``(n, 2 sides)`` that result in each seating.
        hand_stones: ``(n, 2 sides, 2)`` stones of (a, b) in each seating (refusals and showdown only).
        lance_stones: ``(n, 2 sides, 4 slots, 2)`` stones of (a, b) per lance slot.
        game_wins: ``(m, 2 sides)`` 1 where a won the game (games mode).
        game_hands: ``(m, 2 sides)`` hands the game lasted.
        stats: per agent name, counts of ``bets`` (betting decisions), ``envido``, ``ordago``,
            ``responses`` (answers to a bet), ``no_quiero``, ``decisions``; and per lance slot ``<lance>_opens``
            (decisions of its opening round), ``<lance>_bets`` (envido or órdago there), ``<lance>_responses``,
            ``<lance>_no_quiero`` and ``<lance>_raises`` (an envido or órdago answering a bet), as
            :meth:`PairResult.rates_by_lance` reads them.
        abandoned: deals dropped because a hand of one of their seatings passed ``max_hand_decisions`` (two
            agents that keep re-raising: Mus has no cap on raises, RULES.md §5.2); the arrays above hold the
            other deals only.
    """

    a: str
    b: str
    hand_diff: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    hand_value: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 2)))
    hand_stones: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros((0, 2, 2), dtype=np.int32))
    lance_stones: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros((0, 2, 4, 2), dtype=np.int32))
    game_wins: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int8))
    game_hands: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int32))
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0
    abandoned: int = 0

    # summaries -----------------------------------------------------------------------------------
    def mean_diff(self) -> tuple[float, float, float]:
        """Mean duplicate stones-per-hand difference (a - b) and its 95% confidence interval."""
        return _mean_ci(self.hand_diff)

    def game_win_rate(self) -> tuple[float, float, float]:
        """a's win rate over paired games, with a 95% confidence interval over deals."""
        if not len(self.game_wins):
            return (float("nan"),) * 3
        return _mean_ci(self.game_wins.mean(axis=1))

    def stones_by_lance(self) -> dict[str, float]:
        """Where a's duplicate margin comes from (hands mode): per hand, a's stones minus b's in each lance slot
        (``grande``, ``chica``, ``pares``, ``juego``: the fourth slot, punto when nobody has juego) and
        ``ordago_credit``, what accepted órdagos that ended the game added beyond their lance's stones (the rest of
        the target, see ``hand_diff``). The five add up to :meth:`mean_diff`'s mean; empty without hands."""
        if not len(self.hand_diff):
            return {}
        per = self.lance_stones.mean(axis=(0, 1))                   # (4 slots, 2)
        out = {name: float(per[s, 0] - per[s, 1]) for s, name in enumerate(SLOT_NAMES)}
        stones = (self.hand_stones[..., 0] - self.hand_stones[..., 1]).mean()
        out["ordago_credit"] = float(self.hand_value.mean() - stones)
        return out

    def rates_by_lance(self, who: str) -> dict[str, dict[str, float]]:
        """How agent ``who`` (``a`` or ``b``'s name) bet in each lance slot: ``bet`` (share of its opening-round
        decisions that were an envido or an órdago), ``no_quiero`` and ``raise`` (shares of its answers to a bet that
        refused it or raised it), and the counts ``opens`` and ``responses`` they are shares of."""
        st = self.stats.get(who, {})
        out = {}
        for lance in SLOT_NAMES:
            opens, responses = st.get(f"{lance}_opens", 0), st.get(f"{lance}_responses", 0)
            out[lance] = {"bet": st.get(f"{lance}_bets", 0) / max(opens, 1),
                          "no_quiero": st.get(f"{lance}_no_quiero", 0) / max(responses, 1),
                          "raise": st.get(f"{lance}_raises", 0) / max(responses, 1),
                          "opens": opens, "responses": responses}
        return out

    def match_scores(self) -> npt.NDArray[np.float64]:
        """Per deal, a's score in [0, 1] over the two paired games, for the Elo fit (games mode only)."""
        if not len(self.game_wins):
            raise ValueError(f"{self.a} vs {self.b}: Elo is fitted on games and this pair played none "
                             "(rate hands with stones_ladder)")
        return self.game_wins.mean(axis=1).astype(np.float64)

    def summary(self) -> dict[str, Any]:
        """One flat row: deals, the means with their 95% CIs, stones per lance slot (``grande_a``, ...) and the
        órdago credit (:meth:`stones_by_lance`), the envido / órdago / no-quiero rates of each side, ``seconds`` and
        ``abandoned`` (``pairs.csv``'s columns)."""
        m, lo, hi = self.mean_diff()
        w, wlo, whi = self.game_win_rate()
        out = {"a": self.a, "b": self.b, "deals": int(len(self.hand_diff)), "games_deals": int(len(self.game_wins)),
               "mean_diff": m, "ci_low": lo, "ci_high": hi, "game_win_rate": w, "win_ci_low": wlo,
               "win_ci_high": whi, "seconds": self.seconds, "abandoned": self.abandoned}
        if len(self.lance_stones):
            per = self.lance_stones.mean(axis=(0, 1))               # (4 slots, 2)
            for s, name in enumerate(SLOT_NAMES):
                out[f"{name}_a"] = float(per[s, 0])
                out[f"{name}_b"] = float(per[s, 1])
            out["ordago_credit"] = self.stones_by_lance()["ordago_credit"]
        for who in (self.a, self.b):
            st = self.stats.get(who, {})
            key = "a" if who == self.a else "b"
            out[f"envido_rate_{key}"] = st.get("envido", 0) / max(st.get("bets", 0), 1)
            out[f"ordago_rate_{key}"] = st.get("ordago", 0) / max(st.get("bets", 0), 1)
            out[f"no_quiero_rate_{key}"] = st.get("no_quiero", 0) / max(st.get("responses", 0), 1)
        return out


#: Decisions after which :func:`play_pair` gives up a hand as an endless raise war (a normal hand takes about 15; no
#: hand of ``random``, ``rule``, ``equity``, ``ordago`` or ``ppo`` passed 100 in 4,000 seatings). Each dropped deal
#: costs its table this many steps.
MAX_HAND_DECISIONS = 1_000


def _mean_ci(x: npt.ArrayLike) -> tuple[float, float, float]:
    x = np.asarray(x, dtype=np.float64)
    if not len(x):
        return (float("nan"),) * 3
    m = float(x.mean())
    half = 1.96 * float(x.std(ddof=1)) / float(np.sqrt(len(x))) if len(x) > 1 else float("inf")
    return m, m - half, m + half


def play_pair(agent_a: Agent, agent_b: Agent, deals: DealSet, *, mode: str = "hands",
              config: MusConfig | None = None, max_tables: int = 2048, seed: int = 0,
              names: tuple[str, str] | None = None,
              progress: Callable[[int], None] | None = None,
              max_hand_decisions: int = MAX_HAND_DECISIONS, idle_tables: str = "agents",
              first_deal: int = 0) -> PairResult:
    """Play every deal twice (seats swapped) between two agents on a VectorMusEnv.

    Args:
        agent_a: the first agent (team 0 in the first seating).
        agent_b: the second agent (may be the same object as ``agent_a``).
        deals: the deal set.
        mode: "hands" (one hand per deal) or "games" (a whole game per deal).
        config: the ruleset (its target bounds the deal scores).
        max_tables: tables stepped at once (two per deal in flight).
        seed: seeds the agents' random generator.
        names: names of a and b in the result (default: the agents' ``name``).
        progress: called with the number of deals (both seatings) completed since the last call.
        max_hand_decisions: a hand still going after this many decisions is a raise war that may never end
            (Mus has no cap on raises): its deal is dropped from the result (both seatings, so the duplicate
            pairing holds), counted in ``PairResult.abandoned`` and reported by a warning.
        idle_tables: who moves a table that has finished its deals while others still play (its game goes on, or a
            new one starts, outside the result): ``"agents"``, or ``"first_legal"``, its lowest legal action, so
            that the agents see the deals' own decisions only (what a recording agent needs).
        first_deal: the index of ``deals[0]`` in the whole deal set (a chunk's start). An agent that plays by
            game (``agents.base.wants_rows``) sees deal ``d``'s seating ``s`` (0: ``agent_a`` on team 0) as table
            ``2 * (first_deal + d) + s``, game 0: the same deal and seating give it the same identity however the
            deals are batched.
    """
    if mode not in ("hands", "games"):
        raise ValueError(f"mode must be 'hands' or 'games', got {mode!r}")
    if idle_tables not in ("agents", "first_legal"):
        raise ValueError(f"idle_tables must be 'agents' or 'first_legal', got {idle_tables!r}")
    cfg = MusConfig() if config is None else config
    n = len(deals)
    pairs = max(1, min(n, max_tables // 2))
    B = 2 * pairs
    # one thread: the agents' numpy work and the kernel alternate, and a second thread pool only spins against them
    # (on a busy machine a threaded step waits for its slowest thread); results are the same on any number
    venv = VectorMusEnv(B, cfg, seed=seed, reward="stones", num_threads=1)
    rng = np.random.default_rng([seed, 0xA6E27])
    name_a, name_b = names or (agent_a.name, agent_b.name)
    agents = (agent_a, agent_b)
    by_game = wants_rows(agent_a) or wants_rows(agent_b)     # an agent that plays by game gets each row's identity
    # table 2k: a on team 0, table 2k+1: a on team 1; the seat's team (seat % 2) then gives the agent: side ^ team
    side = np.arange(B) % 2
    next_deal = np.arange(B) // 2                       # pair k plays deals k, k + pairs, ...
    current = next_deal.copy()
    active = current < n
    games = mode == "games"
    scores = np.zeros((n, 2), dtype=np.int64) if games else deals.scores.astype(np.int64)
    res = PairResult(name_a, name_b)
    hand_stones = np.zeros((n, 2, 2), dtype=np.int32)
    hand_value = np.zeros((n, 2), dtype=np.float64)
    lance_stones = np.zeros((n, 2, 4, 2), dtype=np.int32)
    wins = np.zeros((n, 2), dtype=np.int8)
    hands_played = np.zeros((n, 2), dtype=np.int32)
    done_count = np.zeros(n, dtype=np.int8)
    # decisions counted per (agent, lance slot, phase, action) of the tables still playing a deal; stats are read from
    # it at the end
    width = venv.num_actions
    decisions = np.zeros(2 * _NUM_SLOTS * _NUM_PHASES * width, dtype=np.int64)
    start_idx = np.where(active, current, 0)
    obs, mask = venv.reset_from_decks(deals.decks[start_idx], deals.mano[start_idx], scores[start_idx],
                                      deals.seeds[start_idx])
    t0 = time.perf_counter()
    actions = np.zeros(B, dtype=np.int64)
    hand_len = np.zeros(B, dtype=np.int64)             # decisions of each table's current hand
    dropped = np.zeros(n, dtype=bool)
    while active.any():
        who = (venv.current_player & 1) ^ side
        phase = venv.phase.astype(np.int64)
        slot = np.where(venv.slot < 0, _NUM_SLOTS - 1, venv.slot).astype(np.int64)
        moved = active if idle_tables == "first_legal" else np.ones(B, dtype=bool)
        if idle_tables == "first_legal":
            actions[~active] = mask[~active].argmax(axis=1)
        rows = None
        if by_game:
            rows = TableRows(2 * (first_deal + current) + side, np.zeros(B, dtype=np.int64), venv.hand_number,
                             venv.current_player)
        for k in (0, 1):
            sel = np.flatnonzero((who == k) & moved)
            if sel.size:
                actions[sel] = act_rows(agents[k], obs.take(sel, axis=0), mask.take(sel, axis=0), rng,
                                        rows.take(sel) if rows is not None else None)
        obs, mask, rewards, done, info = venv.step(actions)          # (refuses an illegal action, naming it)
        decisions += np.bincount((((who * _NUM_SLOTS + slot) * _NUM_PHASES + phase) * width + actions)[active],
                                 minlength=decisions.size)
        hand_len += 1
        hand_len[info["hand_finished"]] = 0
        endless = active & (hand_len > max_hand_decisions)
        dropped[current[endless]] = True
        ended = ((done if games else info["hand_finished"]) | endless) & active
        idx = np.flatnonzero(ended)
        if games:
            fin_hand = np.flatnonzero(info["hand_finished"] & active)
            np.add.at(hands_played, (current[fin_hand], side[fin_hand]), 1)
        if idx.size:
            d, s = current[idx], side[idx]
            a_team = s                                   # side 0: a is team 0
            if games:
                wins[d, s] = info["winner"][idx] == a_team
            else:
                hs = info["hand_stones"][idx]
                hand_value[d, s] = rewards[idx, a_team]          # seat a_team belongs to a's team
                hand_stones[d, s, 0] = hs[np.arange(idx.size), a_team]
                hand_stones[d, s, 1] = hs[np.arange(idx.size), 1 - a_team]
                ls = info["lance_stones"][idx]
                lance_stones[d, s, :, 0] = ls[np.arange(idx.size), :, a_team]
                lance_stones[d, s, :, 1] = ls[np.arange(idx.size), :, 1 - a_team]
            np.add.at(done_count, d, 1)                  # both seatings of a deal may end in the same step
            if progress is not None:
                progress(int((done_count[np.unique(d)] == 2).sum()))
            current[idx] += pairs
            more = current[idx] < n
            active[idx[~more]] = False
            r = idx[more]
            hand_len[idx] = 0
            if r.size:
                dd = current[r]
                obs, mask = venv.reset_tables(r, deals.decks[dd], deals.mano[dd], scores[dd], deals.seeds[dd])
    stats = {k: {"decisions": 0, "bets": 0, "envido": 0, "ordago": 0, "responses": 0, "no_quiero": 0}
             for k in (name_a, name_b)}
    raising = _ENVIDO[:width].copy()
    raising[Action.ORDAGO] = True
    for k, by_slot in enumerate(decisions.reshape(2, _NUM_SLOTS, _NUM_PHASES, width)):
        st = stats[(name_a, name_b)[k]]
        for s, lance in enumerate(SLOT_NAMES):                       # (the last slot, "no lance", has no bets)
            c = by_slot[s]
            answers = c[Phase.BET_RESPOND] + c[Phase.BET_CONFIRM]
            st[f"{lance}_opens"] = int(c[Phase.BET_OPEN].sum())
            st[f"{lance}_bets"] = int(c[Phase.BET_OPEN, raising].sum())
            st[f"{lance}_responses"] = int(answers.sum())
            st[f"{lance}_no_quiero"] = int(answers[Action.NO_QUIERO])
            st[f"{lance}_raises"] = int(answers[raising].sum())
        counts = by_slot.sum(axis=0)
        bets = counts[Phase.BET_OPEN:Phase.BET_CONFIRM + 1].sum(axis=0)
        st["decisions"] += int(counts.sum())
        st["bets"] += int(bets.sum())
        st["envido"] += int(bets[_ENVIDO[:width]].sum())
        st["ordago"] += int(bets[Action.ORDAGO])
        st["responses"] += int(counts[Phase.BET_RESPOND].sum())
        st["no_quiero"] += int(counts[Phase.BET_RESPOND, Action.NO_QUIERO])
    res.seconds = time.perf_counter() - t0
    res.stats = stats
    keep = ~dropped
    res.abandoned = int(dropped.sum())
    if res.abandoned:
        warnings.warn(f"play_pair: {res.abandoned} of {n} deals dropped from {name_a} vs {name_b}: a hand passed "
                      f"{max_hand_decisions:,} decisions (the agents keep re-raising, and Mus has no cap on raises; a "
                      "training's max_stake is not a rule); the result covers the other deals", RuntimeWarning,
                      stacklevel=2)
    wins, hands_played, hand_stones = wins[keep], hands_played[keep], hand_stones[keep]
    lance_stones, hand_value = lance_stones[keep], hand_value[keep]
    if games:
        res.game_wins = wins
        res.game_hands = hands_played
    else:
        res.hand_stones = hand_stones
        res.lance_stones = lance_stones
        res.hand_value = hand_value
        res.hand_diff = hand_value.mean(axis=1)
    return res


def chunk_seed(seed: int, k: int) -> int:
    """The agents' seed of chunk ``k`` of a deal set in a tournament seeded by ``seed``.

    Chunk 0 keeps ``seed`` (so a deal set of one chunk plays exactly as one :func:`play_pair` call with ``seed``);
    chunk ``k > 0`` gets ``SeedSequence([seed, k])``'s first 64-bit word, in ``0 .. 2**64 - 1`` like ``seed``.

    Raises:
        ValueError: if ``seed`` or ``k`` is not a non-negative int.
    """
    for name, v in (("seed", seed), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"chunk_seed: {name} must be a non-negative int, got {v!r}")
    if k == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(k)]).generate_state(1, dtype=np.uint64)[0])


_PER_DEAL_FIELDS = ("hand_diff", "hand_value", "hand_stones", "lance_stones", "game_wins", "game_hands")


def merge_pair_results(parts: Sequence[PairResult]) -> PairResult:
    """One :class:`PairResult` from the results of consecutive chunks of a deal set (same pair, same mode).

    The per-deal arrays are concatenated in the order given, the decision counters of ``stats`` summed per
    agent name, and ``seconds`` summed (the time spent playing, not the wall-clock time of a parallel run).
    Every summary (:meth:`PairResult.summary`, the ladders) is then that of the deals of all the parts.

    Raises:
        ValueError: for no parts, or parts of different pairs (names ``a``, ``b``).
    """
    if not parts:
        raise ValueError("merge_pair_results needs at least one PairResult, got none")
    first = parts[0]
    for p in parts[1:]:
        if (p.a, p.b) != (first.a, first.b):
            raise ValueError(f"merge_pair_results: parts of different pairs: {first.a} vs {first.b} and "
                             f"{p.a} vs {p.b}")
    stats: dict[str, dict[str, int]] = {}
    for p in parts:
        for who, counts in p.stats.items():
            acc = stats.setdefault(who, {})
            for key, v in counts.items():
                acc[key] = acc.get(key, 0) + int(v)
    arrays = {f: np.concatenate([getattr(p, f) for p in parts]) for f in _PER_DEAL_FIELDS}
    return PairResult(first.a, first.b, **arrays, stats=stats, seconds=float(sum(p.seconds for p in parts)),
                      abandoned=sum(p.abandoned for p in parts))


def chunk_bounds(n: int, chunk: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of the chunks of ``n`` deals, ``chunk`` deals each (the last may be shorter)."""
    return [(s, min(s + chunk, n)) for s in range(0, n, chunk)]


def check_deal_chunk(deal_chunk: int | None) -> int:
    """``deal_chunk``, or :data:`DEAL_CHUNK` (read now, so a patched module constant counts) for None.

    Raises:
        ValueError: unless it is a positive int.
    """
    c = DEAL_CHUNK if deal_chunk is None else deal_chunk
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
        raise ValueError(f"deal_chunk must be a positive int (deals per chunk), got {c!r}")
    return int(c)


def chunk_of(deals: DealSet, start: int, stop: int) -> DealSet:
    """Deals ``start .. stop - 1`` of ``deals``: the deal set itself when that is all of it, else a subset."""
    return deals if (start, stop) == (0, len(deals)) else deals.subset(start, stop)


def play_pair_in_chunks(agent_a: Agent, agent_b: Agent, deals: DealSet, *, mode: str = "hands",
                        config: MusConfig | None = None, max_tables: int = 2048, seed: int = 0,
                        names: tuple[str, str] | None = None, progress: Callable[[int], None] | None = None,
                        deal_chunk: int | None = None) -> PairResult:
    """:func:`play_pair` on each chunk of ``deal_chunk`` deals (default :data:`DEAL_CHUNK`), merged in order.

    Chunk ``k`` is deals ``k*C .. (k+1)*C - 1`` played with seed ``chunk_seed(seed, k)``; up to ``deal_chunk``
    deals this is one ``play_pair`` call with ``seed``. The other arguments are :func:`play_pair`'s.

    Raises:
        ValueError: a bad ``deal_chunk`` or ``mode``.
    """
    chunk = check_deal_chunk(deal_chunk)
    parts = [play_pair(agent_a, agent_b, chunk_of(deals, start, stop), mode=mode, config=config,
                       max_tables=max_tables, seed=chunk_seed(seed, k), names=names, progress=progress,
                       first_deal=start)
             for k, (start, stop) in enumerate(chunk_bounds(len(deals), chunk))]
    return parts[0] if len(parts) == 1 else merge_pair_results(parts)


def agent_labels(specs: Sequence[str]) -> list[str]:
    """Distinct labels for agent specs: a repeated spec gets ``#2``, ``#3``... (self-play in a round robin)."""
    seen: dict[str, int] = {}
    labels = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return labels
