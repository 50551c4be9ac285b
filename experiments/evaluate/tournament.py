"""Duplicate tournaments between agents on VectorMusEnv: pair results, an Elo ladder, tables and plots.

Format (DESIGN.md, "Evaluation protocol"): every deal of a seeded deal set (deck, mano, starting scores,
game seed) is played twice, once with agent A on team 0 (seats 0 and 2) and B on team 1, once with the
teams swapped. Two units are measured:

* hands (``--hands N``): each deal is one hand; the result is A's stones minus B's stones, averaged over
  the two seatings (the duplicate difference), reported as a mean per hand with a 95% confidence
  interval over deals; a hand ended by an accepted órdago also counts the stones the winners still
  lacked to reach the target (the environments' ``reward="stones"`` rule: an órdago stakes the game).
  Stones per lance, envido / órdago / no-quiero rates ride along.
* games (``--games N``): each deal starts a whole game from 0-0 (later hands come from the deal's seed,
  so both seatings see the same cards hand by hand); the result is A's game win rate over paired games.

The ladder (:func:`make_ladder`) rates what wins: when games are played (the default), an Elo fit
(Bradley-Terry) of the paired game results, ``random`` = 1000; with hands only, a stones rating, the weighted
least-squares fit of each pair's mean duplicate stones per hand (weights: deals over the variance), ``random``
= 0, in stones per hand. The sign of a hand is never rated: winning most hands by little while losing a few by
much loses games. Both carry bootstrap errors, and the ladder lists the head-to-head results (95% CI clear of
a tie) whose order it reverses, as one rating per agent cannot fit a cycle (``ordago`` loses to ``random`` on
stones but costs the strong agents little).

Command line: ``mus tournament --agents random,rule,equity,ordago --hands 4000 --games 1000 --out runs/ladder``;
``--ray`` plays every pair as a task on a local Ray instance (``--ray ADDRESS``: on a running cluster) with the
same results (:func:`ray_round_robins`).

Large deal sets are played in chunks of :data:`DEAL_CHUNK` deals, each chunk a :func:`play_pair` call with its
own agents' seed (:func:`chunk_seed`; the first chunk keeps the tournament's seed, so a deal set of up to
``DEAL_CHUNK`` deals is one ``play_pair`` call exactly as before), merged in order (:func:`merge_pair_results`).
The chunks are fixed by the deal set alone, never by ``--tables`` or the number of workers, so ``--ray`` can run
every chunk as a task of its own and still give the single-process results.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import Agent, make_agent
from experiments.cli import MAX_DEALS, MAX_TARGET, ArgumentParser, check_agent_specs, check_writable_dir, int_in
from experiments.evaluate.deals import DealSet, make_deals
from mus_env import Action, MusConfig, VectorMusEnv
from mus_env.actions import NUM_ACTIONS
from mus_env.observation import SLOT_NAMES
from mus_env.phases import Phase
from mus_env.records import write_atomic, write_text_atomic
from mus_env.signals import NUM_SIGNS

__all__ = ["PairResult", "Ladder", "DEAL_CHUNK", "play_pair", "chunk_seed", "merge_pair_results", "round_robin",
           "ray_round_robins", "elo_ladder", "stones_ladder", "make_ladder", "main"]

DEAL_CHUNK = 65_536
"""Deals per chunk in :func:`round_robin` and :func:`ray_round_robins`: chunk ``k`` is deals ``k*C .. (k+1)*C - 1``,
played by one :func:`play_pair` call with agents' seed ``chunk_seed(seed, k)`` (one Ray task with ``--ray``). A
constant, as the results of stochastic agents depend on it; both functions take ``deal_chunk=`` to override it."""

_ENVIDO = np.zeros(NUM_ACTIONS + NUM_SIGNS, dtype=bool)          # sign ids 31..46 too (signals on)
_ENVIDO[int(Action.ENVIDO_2):int(Action.ENVIDO_10) + 1] = True


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
            ``responses`` (answers to a bet), ``no_quiero``, ``decisions``.
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

    def match_scores(self) -> npt.NDArray[np.float64]:
        """Per deal, a's score in [0, 1] over the two paired games, for the Elo fit (games mode only)."""
        if not len(self.game_wins):
            raise ValueError(f"{self.a} vs {self.b}: Elo is fitted on games and this pair played none "
                             "(rate hands with stones_ladder)")
        return self.game_wins.mean(axis=1).astype(np.float64)

    def summary(self) -> dict[str, Any]:
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
        for who in (self.a, self.b):
            st = self.stats.get(who, {})
            key = "a" if who == self.a else "b"
            out[f"envido_rate_{key}"] = st.get("envido", 0) / max(st.get("bets", 0), 1)
            out[f"ordago_rate_{key}"] = st.get("ordago", 0) / max(st.get("bets", 0), 1)
            out[f"no_quiero_rate_{key}"] = st.get("no_quiero", 0) / max(st.get("responses", 0), 1)
        return out


#: Decisions after which :func:`play_pair` gives up a hand as an endless raise war (a normal hand takes about 15).
MAX_HAND_DECISIONS = 10_000

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
              max_hand_decisions: int = MAX_HAND_DECISIONS) -> PairResult:
    """Play every deal twice (seats swapped) between two agents on a VectorMusEnv.

    Args:
        agent_a, agent_b: the agents (may be the same object).
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
    """
    if mode not in ("hands", "games"):
        raise ValueError(f"mode must be 'hands' or 'games', got {mode!r}")
    cfg = MusConfig() if config is None else config
    n = len(deals)
    pairs = max(1, min(n, max_tables // 2))
    B = 2 * pairs
    venv = VectorMusEnv(B, cfg, seed=seed, reward="stones")
    rng = np.random.default_rng([seed, 0xA6E27])
    name_a, name_b = names or (agent_a.name, agent_b.name)
    agents = (agent_a, agent_b)
    # team_agent[t, team] = 0 for a, 1 for b; table 2k: a on team 0, table 2k+1: a on team 1.
    side = np.arange(B) % 2
    team_agent = np.stack([side, 1 - side], axis=1)
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
    stats = {k: {"decisions": 0, "bets": 0, "envido": 0, "ordago": 0, "responses": 0, "no_quiero": 0}
             for k in (name_a, name_b)}
    start_idx = np.where(active, current, 0)
    obs, mask = venv.reset_from_decks(deals.decks[start_idx], deals.mano[start_idx], scores[start_idx],
                                      deals.seeds[start_idx])
    rows = np.arange(B)
    t0 = time.perf_counter()
    actions = np.zeros(B, dtype=np.int64)
    hand_len = np.zeros(B, dtype=np.int64)             # decisions of each table's current hand
    dropped = np.zeros(n, dtype=bool)
    while active.any():
        seat = venv.current_player.astype(np.int64)
        who = team_agent[rows, seat % 2]
        phase = venv.phase
        for k in (0, 1):
            sel = np.flatnonzero(who == k)
            if not sel.size:
                continue
            act = np.asarray(agents[k].act_batch(obs[sel], mask[sel], rng), dtype=np.int64)
            actions[sel] = act
            counted = active[sel]
            st = stats[(name_a, name_b)[k]]
            ph = phase[sel][counted]
            ac = act[counted]
            betting = (ph >= Phase.BET_OPEN) & (ph <= Phase.BET_CONFIRM)
            st["decisions"] += int(counted.sum())
            st["bets"] += int(betting.sum())
            st["envido"] += int((betting & _ENVIDO[ac]).sum())
            st["ordago"] += int((betting & (ac == Action.ORDAGO)).sum())
            resp = ph == Phase.BET_RESPOND
            st["responses"] += int(resp.sum())
            st["no_quiero"] += int((resp & (ac == Action.NO_QUIERO)).sum())
        obs, mask, rewards, done, info = venv.step(actions)
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
    res.seconds = time.perf_counter() - t0
    res.stats = stats
    keep = ~dropped
    res.abandoned = int(dropped.sum())
    if res.abandoned:
        warnings.warn(f"play_pair: {res.abandoned} of {n} deals dropped from {name_a} vs {name_b}: a hand passed "
                      f"{max_hand_decisions:,} decisions (the agents keep re-raising; Mus has no cap on raises); "
                      "the result covers the other deals", RuntimeWarning, stacklevel=2)
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



def _chunk_bounds(n: int, chunk: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of the chunks of ``n`` deals, ``chunk`` deals each (the last may be shorter)."""
    return [(s, min(s + chunk, n)) for s in range(0, n, chunk)]


def _check_deal_chunk(deal_chunk: int | None) -> int:
    """``deal_chunk``, or :data:`DEAL_CHUNK` (read now, so a patched module constant counts) for None."""
    c = DEAL_CHUNK if deal_chunk is None else deal_chunk
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
        raise ValueError(f"deal_chunk must be a positive int (deals per chunk), got {c!r}")
    return int(c)


def elo_ladder(names: Sequence[str], results: Sequence[PairResult], *, bootstrap: int = 200,
               seed: int = 0, anchor: str = "random") -> dict[str, tuple[float, float]]:
    """Bradley-Terry (Elo scale) ratings of ``names`` from pairwise duplicate game results.

    Each deal scores a in [0, 1] (its wins over the two paired games); a half-win prior each way keeps the
    ratings finite. Hand results are refused (ValueError): a hand's sign is not what wins a game.

    Returns:
        ``{name: (rating, standard error)}``; ``anchor`` (if present) is fixed at 1000, else the mean is.
    """
    idx = {n: i for i, n in enumerate(names)}
    rng = np.random.default_rng(seed)

    def fit(samples: list[tuple[int, int, npt.NDArray[np.float64]]]) -> npt.NDArray[np.float64]:
        k = len(names)
        wins = np.full((k, k), 0.5)                      # a half-win prior each way keeps ratings finite
        np.fill_diagonal(wins, 0.0)
        games = wins + wins.T
        for i, j, s in samples:
            if i == j:
                continue
            wins[i, j] += s.sum()
            wins[j, i] += len(s) - s.sum()
            games[i, j] += len(s)
            games[j, i] += len(s)
        gamma = np.ones(k)
        for _ in range(2000):
            denom = (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
            new = wins.sum(axis=1) / denom
            new /= np.exp(np.log(new).mean())
            if np.allclose(new, gamma, rtol=1e-10, atol=0):
                gamma = new
                break
            gamma = new
        r = 400.0 * np.log10(gamma)
        return r - (r[idx[anchor]] - 1000.0 if anchor in idx else r.mean() - 1000.0)

    samples = [(idx[p.a], idx[p.b], p.match_scores()) for p in results]
    point = fit(samples)
    boots = []
    for _ in range(bootstrap):
        boots.append(fit([(i, j, s[rng.integers(0, len(s), len(s))]) for i, j, s in samples if len(s)]))
    se = np.std(boots, axis=0, ddof=1) if bootstrap > 1 else np.zeros(len(names))
    return {n: (float(point[i]), float(se[i])) for n, i in idx.items()}


def stones_ladder(names: Sequence[str], results: Sequence[PairResult], *, bootstrap: int = 200,
                  seed: int = 0, anchor: str = "random") -> dict[str, tuple[float, float]]:
    """Ratings in stones per hand: the weighted least-squares fit of ``r_a - r_b`` to each pair's mean duplicate
    stones per hand (a minus b), each pair weighted by its deals over the variance of its per-deal results.

    With consistent results (``m_ab + m_bc = m_ac``) the fit is exact, so ``r_a - r_b`` is the pairs table's
    mean; in a cycle it is the compromise that the precise pairs pull hardest on.

    Returns:
        ``{name: (rating, standard error)}`` (bootstrap over deals); ``anchor`` (if present) is fixed at 0,
        else the mean is.
    """
    idx = {n: i for i, n in enumerate(names)}
    rng = np.random.default_rng(seed)
    samples = [(idx[p.a], idx[p.b], np.asarray(p.hand_diff, dtype=np.float64)) for p in results
               if p.a != p.b and len(p.hand_diff)]

    def fit(samples: list[tuple[int, int, npt.NDArray[np.float64]]]) -> npt.NDArray[np.float64]:
        k = len(names)
        rows, rhs = [], []
        for i, j, d in samples:
            var = float(d.var(ddof=1)) if len(d) > 1 else 0.0
            w = np.sqrt(len(d) / max(var, 1e-6))
            row = np.zeros(k)
            row[i], row[j] = w, -w
            rows.append(row)
            rhs.append(w * float(d.mean()))
        if not rows:
            return np.zeros(k)
        r = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]   # minimum norm: mean 0 per component
        return r - (r[idx[anchor]] if anchor in idx else r.mean())

    point = fit(samples)
    boots = [fit([(i, j, d[rng.integers(0, len(d), len(d))]) for i, j, d in samples]) for _ in range(bootstrap)]
    se = np.std(boots, axis=0, ddof=1) if bootstrap > 1 else np.zeros(len(names))
    return {n: (float(point[i]), float(se[i])) for n, i in idx.items()}


@dataclass(frozen=True)
class Ladder:
    """One rating per agent and what it is fitted on (see :func:`make_ladder`).

    Attributes:
        ratings: ``{name: (rating, standard error)}``.
        source: ``"games"`` or ``"hands"``: the results the ratings are fitted on.
        unit: ``"Elo"`` or ``"stones/hand"``.
        method: one line saying what the rating is and how it was fitted (printed under the table and plot).
        contradictions: the head-to-head results (95% CI clear of a tie) whose order the ladder reverses.
    """

    ratings: dict[str, tuple[float, float]]
    source: str
    unit: str
    method: str
    contradictions: tuple[str, ...] = ()

    def __getitem__(self, name: str) -> tuple[float, float]:
        return self.ratings[name]

    def order(self) -> list[str]:
        """Agent names, best first."""
        return sorted(self.ratings, key=lambda n: -self.ratings[n][0])

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "unit": self.unit, "method": self.method,
                "contradictions": list(self.contradictions)}


def make_ladder(names: Sequence[str], hand_results: Sequence[PairResult], game_results: Sequence[PairResult], *,
                bootstrap: int = 200, seed: int = 0) -> Ladder:
    """The tournament's ladder: Elo on the games when any were played, else the stones rating on the hands."""
    if game_results:
        ratings = elo_ladder(names, game_results, bootstrap=bootstrap, seed=seed)
        anchor = " random = 1000," if "random" in ratings else ""
        lad = Ladder(ratings, "games", "Elo", f"Elo from duplicate game wins (Bradley-Terry,{anchor} "
                                              "bootstrap errors)")
        checks = [(p.a, p.b, p.game_win_rate(), 0.5, "game win rate") for p in game_results]
    elif hand_results:
        ratings = stones_ladder(names, hand_results, bootstrap=bootstrap, seed=seed)
        anchor = " random = 0," if "random" in ratings else ""
        lad = Ladder(ratings, "hands", "stones/hand",
                     f"stones per hand from duplicate hands (weighted least squares on the pairs' means,{anchor} "
                     "bootstrap errors)")
        checks = [(p.a, p.b, p.mean_diff(), 0.0, "stones/hand") for p in hand_results]
    else:
        raise ValueError("no results to rate")
    bad = []
    for a, b, (m, lo, hi), tie, what in checks:
        if a == b or not (lo > tie or hi < tie):
            continue
        if (m > tie) != (ratings[a][0] > ratings[b][0]):
            sign = "+" if tie == 0.0 else ""
            bad.append(f"{a} vs {b}: {what} {m:{sign}.3f} [{lo:{sign}.3f}, {hi:{sign}.3f}]")
    return Ladder(lad.ratings, lad.source, lad.unit, lad.method, tuple(bad))


def round_robin(agent_specs: Sequence[str], deals: DealSet, *, mode: str = "hands",
                config: MusConfig | None = None, max_tables: int = 2048, seed: int = 0,
                progress: bool = True, use_ray: bool = False, deal_chunk: int | None = None) -> list[PairResult]:
    """Every pair of agents plays the whole deal set (duplicate). A spec given twice plays itself: its
    copies are labelled ``rule``, ``rule#2``... (see :func:`agent_labels`).

    A pair plays the deal set in chunks of ``deal_chunk`` deals (default :data:`DEAL_CHUNK`): chunk ``k`` is
    :func:`play_pair` on deals ``k*C .. (k+1)*C - 1`` with seed ``chunk_seed(seed, k)``, and the chunks' results
    are merged in order (:func:`merge_pair_results`). Up to ``deal_chunk`` deals this is one ``play_pair`` call
    with ``seed``.

    With ``use_ray`` every chunk of every pair is a Ray task (see :func:`ray_round_robins`; Ray must be
    initialised); the results are the same as without.
    """
    chunk = _check_deal_chunk(deal_chunk)
    if use_ray:
        return ray_round_robins(agent_specs, [(deals, mode)], config=config, max_tables=max_tables, seed=seed,
                                progress=progress, deal_chunk=chunk)[0]
    if mode not in ("hands", "games"):
        raise ValueError(f"mode must be 'hands' or 'games', got {mode!r}")
    agents = {label: make_agent(spec) for label, spec in zip(agent_labels(agent_specs), agent_specs, strict=True)}
    agent_specs = list(agents)
    pairs = list(itertools.combinations(agent_specs, 2))
    bounds = _chunk_bounds(len(deals), chunk)
    results: list[PairResult] = []
    bar = _Progress(len(pairs) * len(deals), f"{mode}", enabled=progress)
    with bar:
        for a, b in pairs:
            bar.describe(f"{a} vs {b} ({mode})")
            parts = [play_pair(agents[a], agents[b], deals if len(bounds) == 1 else deals.subset(start, stop),
                               mode=mode, config=config, max_tables=max_tables, seed=chunk_seed(seed, k),
                               names=(a, b), progress=bar.advance)
                     for k, (start, stop) in enumerate(bounds)]
            results.append(parts[0] if len(parts) == 1 else merge_pair_results(parts))
    return results


def _chunk_task(spec_a: str, spec_b: str, names: tuple[str, str], deals: DealSet, start: int, stop: int,
                mode: str, config: MusConfig | None, max_tables: int, seed: int) -> PairResult:
    """One chunk of one pair of :func:`round_robin` as a Ray task runs it: the agents built from their specs,
    then :func:`play_pair` on deals ``start .. stop - 1`` with the arguments of the single-process run (``seed``
    is the chunk's, :func:`chunk_seed`)."""
    part = deals if (start, stop) == (0, len(deals)) else deals.subset(start, stop)
    return play_pair(make_agent(spec_a), make_agent(spec_b), part, mode=mode, config=config,
                     max_tables=max_tables, seed=seed, names=names)


def ray_round_robins(agent_specs: Sequence[str], rounds: Sequence[tuple[DealSet, str]], *,
                     config: MusConfig | None = None, max_tables: int = 2048, seed: int = 0,
                     progress: bool = True, deal_chunk: int | None = None) -> list[list[PairResult]]:
    """:func:`round_robin` for each ``(deals, mode)`` of ``rounds``, every chunk of every pair of every round one
    Ray task, all submitted at once; returns one list of results per round, in :func:`round_robin`'s order.

    The unit of work is a chunk of a pair, exactly as :func:`round_robin` splits it: deals ``k*C ..
    (k+1)*C - 1`` with ``C = deal_chunk`` (default :data:`DEAL_CHUNK`, read in this process and passed to the
    tasks, so a patched constant reaches them). A task builds both agents from their specs and calls
    :func:`play_pair` on its chunk with exactly the arguments of the single-process run (mode, ruleset,
    ``max_tables``, and the chunk's seed :func:`chunk_seed`); ``play_pair`` draws from its own generator seeded
    by that seed alone, and the chunks' results are merged in order (:func:`merge_pair_results`), so the
    results are those of the single-process run, bit for bit (timings apart; a pair's ``seconds`` is the sum
    of its tasks'). With 2 agents and 1,000,000 hands that is 16 tasks (of 65,536 deals), not 1. A task runs the
    kernel on one thread (``NUMBA_NUM_THREADS=1``; results do not depend on it) and takes one CPU; each task
    builds its agents anew, so a costly agent to load pays that once per chunk.

    Ray must be initialised (``ray.init(...)``). The workers import ``agents`` and ``experiments``, so
    mus-env must be installed where they run, and a policy file given as a spec must be readable there at the
    same path.
    """
    import ray

    if not ray.is_initialized():
        raise ValueError("ray_round_robins needs an initialised Ray (call ray.init() first)")
    chunk = _check_deal_chunk(deal_chunk)
    for _, mode in rounds:
        if mode not in ("hands", "games"):
            raise ValueError(f"mode must be 'hands' or 'games', got {mode!r}")
    labels = agent_labels(agent_specs)
    spec_of = dict(zip(labels, agent_specs, strict=True))
    pairs = list(itertools.combinations(labels, 2))
    task = ray.remote(num_cpus=1, runtime_env={"env_vars": {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}})(
        _chunk_task)
    cfg = ray.put(config)
    refs: list[list[list[Any]]] = []                    # refs[round][pair][chunk]
    sizes: dict[Any, int] = {}
    for deals, mode in rounds:
        deals_ref = ray.put(deals)
        bounds = _chunk_bounds(len(deals), chunk)
        row = []
        for a, b in pairs:
            chunks = [task.remote(spec_of[a], spec_of[b], (a, b), deals_ref, start, stop, mode, cfg, max_tables,
                                  chunk_seed(seed, k)) for k, (start, stop) in enumerate(bounds)]
            sizes.update({r: stop - start for r, (start, stop) in zip(chunks, bounds, strict=True)})
            row.append(chunks)
        refs.append(row)
    total = sum(len(deals) for deals, _ in rounds) * len(pairs)
    with _Progress(total, f"{len(sizes)} Ray tasks", enabled=progress) as bar:
        pending = list(sizes)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            ray.get(ready)                                  # raises a task's error here
            bar.advance(sizes[ready[0]])
    out = []
    for row in refs:
        merged = []
        for chunks in row:
            parts = ray.get(chunks)
            merged.append(parts[0] if len(parts) == 1 else merge_pair_results(parts))
        out.append(merged)
    return out


def agent_labels(specs: Sequence[str]) -> list[str]:
    """Distinct labels for agent specs: a repeated spec gets ``#2``, ``#3``... (self-play in a round robin)."""
    seen: dict[str, int] = {}
    labels = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return labels


class _Progress:
    """A rich progress bar (or nothing when disabled / rich is missing)."""

    def __init__(self, total: int, description: str, enabled: bool = True) -> None:
        self.total, self.description, self.enabled = total, description, enabled
        self._progress = None
        self._task = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            try:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
            except ImportError:
                return self
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeRemainingColumn(), transient=False)
            self._progress.__enter__()
            self._task = self._progress.add_task(self.description, total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def advance(self, k: int) -> None:
        if self._progress is not None and k:
            self._progress.advance(self._task, k)

    def describe(self, text: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=text)


# ------------------------------------------------------------------------------------------------------
# output: table, CSV, JSON, plots
def write_outputs(out: Path, names: Sequence[str], hand_results: list[PairResult],
                  game_results: list[PairResult], ladder: Ladder,
                  meta: dict[str, Any], plots: bool = True) -> dict[str, Path]:
    """Write ``pairs.csv``, ``ladder.csv``, ``results.json`` and (optionally) ``ladder.png``, ``lances.png``.

    Each file is written atomically (a temporary file, then a rename): a reader sees the previous file or the
    new one whole. ``results.json`` is strict JSON: a number that is not finite (the interval of one deal, a
    win rate with no games) is ``null``. Returns the files written, which ``results.json`` lists too.
    """
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for p in hand_results:
        rows.append({"mode": "hands", **p.summary()})
    for p in game_results:
        rows.append({"mode": "games", **p.summary()})
    files = {}
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("mode", "a", "b"), k))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys)
    w.writeheader()
    for r in rows:
        w.writerow(r)
    files["pairs"] = write_text_atomic(out / "pairs.csv", buf.getvalue())
    lance = per_agent_lance_stones(names, hand_results)
    order = ladder.order()
    buf = io.StringIO()
    w = csv.writer(buf)
    col = "elo" if ladder.unit == "Elo" else "stones_per_hand"
    w.writerow(["rank", "agent", col, f"{col}_se", *(f"{s}_stones_per_hand" for s in SLOT_NAMES)])
    for rank, n in enumerate(order, 1):
        digits = 1 if ladder.unit == "Elo" else 3
        w.writerow([rank, n, round(ladder[n][0], digits), round(ladder[n][1], digits),
                    *(round(float(v), 4) for v in lance.get(n, np.zeros(4)))])
    files["ladder"] = write_text_atomic(out / "ladder.csv", buf.getvalue())
    if plots:
        files.update(_plots(out, order, ladder, lance))
    files["json"] = out / "results.json"
    results = {"meta": meta, "rating": ladder.to_json(),
               "ladder": {n: {"rating": ladder[n][0], "se": ladder[n][1]} for n in order},
               "pairs": rows, "lance_stones_per_hand": {n: list(map(float, v)) for n, v in lance.items()},
               "files": sorted(str(f.name) for f in files.values())}
    write_text_atomic(files["json"], json.dumps(_strict_json(results), indent=2, allow_nan=False))
    return files


def _strict_json(v: Any) -> Any:
    """``v`` with numpy scalars made plain and every non-finite float replaced by None (JSON ``null``)."""
    if isinstance(v, dict):
        return {k: _strict_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_strict_json(x) for x in v]
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    return v


def per_agent_lance_stones(names: Sequence[str], results: list[PairResult]) -> dict[str, npt.NDArray[np.float64]]:
    """Mean stones per hand won by each agent's team in each lance slot, over all its hand matches."""
    acc: dict[str, list[npt.NDArray[np.float64]]] = {n: [] for n in names}
    for p in results:
        if not len(p.lance_stones):
            continue
        acc[p.a].append(p.lance_stones[..., 0].reshape(-1, 4))
        acc[p.b].append(p.lance_stones[..., 1].reshape(-1, 4))
    return {n: np.concatenate(v).mean(axis=0) for n, v in acc.items() if v}


def _plots(out: Path, order: Sequence[str], ladder: Ladder,
           lance: dict[str, npt.NDArray[np.float64]]) -> dict[str, Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = {}
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.5 * len(order)))
    y = np.arange(len(order))[::-1]
    ax.errorbar([ladder[n][0] for n in order], y, xerr=[1.96 * ladder[n][1] for n in order], fmt="o", capsize=4)
    ax.set_yticks(y, order)
    ax.set_xlabel(f"{ladder.unit} from duplicate {ladder.source}, 95% bootstrap interval")
    ax.set_title(f"mus-env ladder: {ladder.method}", fontsize=8, wrap=True)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    files["ladder_png"] = write_atomic(out / "ladder.png", lambda tmp: fig.savefig(tmp, dpi=120))
    plt.close(fig)
    if lance:
        names = [n for n in order if n in lance]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        width = 0.8 / max(len(names), 1)
        x = np.arange(4)
        for k, n in enumerate(names):
            ax.bar(x + k * width - 0.4 + width / 2, lance[n], width, label=n)
        ax.set_xticks(x, ["grande", "chica", "pares", "juego/punto"])
        ax.set_ylabel("stones per hand won by the agent's team")
        ax.set_title("Stones per lance (duplicate hands)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        files["lances_png"] = write_atomic(out / "lances.png", lambda tmp: fig.savefig(tmp, dpi=120))
        plt.close(fig)
    return files


def print_tables(names: Sequence[str], hand_results: list[PairResult], game_results: list[PairResult],
                 ladder: Ladder) -> None:
    """Print the ladder (saying what it is fitted on, and any head-to-head it reverses) and the pair results
    (rich tables; plain text if rich is missing)."""
    notes = [f"Rating: {ladder.method}."]
    if ladder.contradictions:
        notes.append("The ladder reverses these head-to-head results (a cycle no single rating fits): "
                     + "; ".join(ladder.contradictions) + ".")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is in the tools extra
        for n in ladder.order():
            print(f"{n:>12} {ladder[n][0]:8.2f} ± {1.96 * ladder[n][1]:.2f} {ladder.unit}")
        print("\n".join(notes))
        return
    console = Console()
    t = Table(title=f"Ladder: {ladder.unit} from duplicate {ladder.source}")
    for c in ("rank", "agent", ladder.unit, "95% CI"):
        t.add_column(c, justify="right", overflow="fold")
    fmt = ".0f" if ladder.unit == "Elo" else "+.2f"
    for rank, n in enumerate(ladder.order(), 1):
        r, se = ladder[n]
        t.add_row(str(rank), n, f"{r:{fmt}}", f"± {1.96 * se:{fmt.lstrip('+')}}")
    console.print(t)
    for note in notes:
        console.print(note, highlight=False)
    if hand_results:
        # narrow enough for an 80-column terminal; a cell that still does not fit folds, never loses digits
        t = Table(title="Duplicate hands: stones per hand, A minus B (rates A/B)")
        for c in ("A", "B", "deals", "A−B ± 95% CI", "envido", "órdago", "no quiero"):
            t.add_column(c, justify="right", overflow="fold")

        def rates(s: dict[str, Any], key: str) -> str:
            return "/".join(f"{s[f'{key}_{x}']:.2f}".removeprefix("0") for x in "ab")

        for p in hand_results:
            s = p.summary()
            t.add_row(p.a, p.b, str(s["deals"]), f"{s['mean_diff']:+.2f} ± {(s['ci_high'] - s['ci_low']) / 2:.2f}",
                      rates(s, "envido_rate"), rates(s, "ordago_rate"), rates(s, "no_quiero_rate"))
        console.print(t)
    if game_results:
        t = Table(title="Duplicate games: A's win rate over paired games")
        for c in ("A", "B", "deals", "win rate", "95% CI", "hands/game"):
            t.add_column(c, justify="right", overflow="fold")
        for p in game_results:
            w, lo, hi = p.game_win_rate()
            t.add_row(p.a, p.b, str(len(p.game_wins)), f"{w:.3f}", f"[{lo:.3f}, {hi:.3f}]",
                      f"{p.game_hands.mean():.1f}")
        console.print(t)


def play_record_game(agents: dict[int, Agent], names: dict[int, str], deck: npt.ArrayLike, mano: int,
                     seed: int, config: MusConfig, rng: np.random.Generator,
                     meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play one whole game on MusGame from a deal, ``agents[seat]`` at each seat; return its JSON record."""
    from mus_env import MusGame
    from mus_env.records import game_record

    game = MusGame.from_deck(np.asarray(deck, dtype=np.int64), int(mano), (0, 0), config, int(seed))
    while not game.is_over:
        seat = game.current_player
        game.step(int(agents[seat].act(game.observe(seat), game.legal_action_mask(), rng)))
    return game_record(game, names, meta)


def write_tournament_records(out: Path, specs: Sequence[str], config: MusConfig, n: int, seed: int) -> list[Path]:
    """JSON records of ``n`` duplicate games (both seatings) per pair of agents, played on MusGame.

    A spec given twice plays itself (labelled as in :func:`agent_labels`). The records are written to a
    fresh folder that then replaces ``out`` whole, so ``out`` never mixes records of two runs and a reader
    never sees half of one. Returns the files written.
    """
    from mus_env.records import save_record

    labels = agent_labels(specs)
    deals = make_deals(n, seed + 2, config.target)
    agents = {label: make_agent(spec) for label, spec in zip(labels, specs, strict=True)}
    rng = np.random.default_rng([seed, 0x5EC])
    out.parent.mkdir(parents=True, exist_ok=True)
    fresh = out.parent / f".{out.name}.new.{uuid.uuid4().hex[:12]}"
    fresh.mkdir()
    written: list[str] = []
    try:
        for k, (a, b) in enumerate(itertools.combinations(labels, 2)):
            stem = f"{_safe(a)}-vs-{_safe(b)}"
            if any(w.startswith(stem + "-deal") for w in written):
                stem = f"pair{k}-{stem}"                # two specs with the same file name stem
            for d in range(n):
                for side, (t0, t1) in enumerate(((a, b), (b, a))):
                    seats = {0: t0, 2: t0, 1: t1, 3: t1}
                    rec = play_record_game({s: agents[x] for s, x in seats.items()}, seats, deals.decks[d],
                                           int(deals.mano[d]), int(deals.seeds[d]), config, rng,
                                           {"tournament_seed": seed, "deal": d, "side": side})
                    name = f"{stem}-deal{d}-side{side}.json"
                    save_record(rec, fresh / name)
                    written.append(name)
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old.{uuid.uuid4().hex[:12]}"
            os.replace(out, old)
        os.replace(fresh, out)
        if old is not None:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return [out / w for w in written]


def _start_ray(p: ArgumentParser, address: str) -> bool:
    """Connect to Ray for ``--ray [ADDRESS]``; True when this call started it.

    ``""`` starts a fresh local instance (``ray.init(address="local")``): Ray's own default would join the
    cluster named by ``RAY_ADDRESS`` or by the last ``ray start`` on this machine (``/tmp/ray/ray_current_cluster``,
    which may name a cluster long gone, and then ``ray.init`` retries for minutes); ``--ray auto`` asks for that
    discovery. An already initialised Ray (a caller's ``ray.init``) is used as it is. Errors are one-line parser
    errors.
    """
    try:
        import ray
    except ImportError:
        p.error("argument --ray: Ray is not installed (pip install -e '.[rllib]')")
    if ray.is_initialized():
        return False
    try:
        if address:
            ray.init(address=address, logging_level="WARNING")
        else:
            ray.init(address="local", include_dashboard=False, logging_level="WARNING")
    except Exception as e:  # noqa: BLE001 - any failure to connect is reported as the option's error
        p.error(f"argument --ray: cannot start or reach Ray{' at ' + repr(address) if address else ''}: {e}")
    return True


def _safe(label: str) -> str:
    name = Path(label).name
    for ext in (".pt", ".zip"):
        name = name.replace(ext, "")
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def main(argv: list[str] | None = None) -> None:
    p = ArgumentParser(prog="mus tournament", description="Duplicate round-robin tournament between agents.")
    p.add_argument("--agents", default="random,rule,equity,ordago",
                   help="comma-separated agent specs: random, rule, equity, ordago, ppo, a policy file (*.pt) or "
                        "an sb3-contrib model (*.zip); a spec given twice plays itself")
    p.add_argument("--hands", type=int_in(0, MAX_DEALS), default=4000,
                   help="duplicate deals played as single hands (0: none)")
    p.add_argument("--games", type=int_in(0, MAX_DEALS), default=1000,
                   help="duplicate deals played as whole games; the ladder is Elo on them (0: none, and the ladder "
                        "rates the hands' stones per hand instead)")
    p.add_argument("--seed", type=int_in(0, 2**64 - 1), default=0,
                   help="seed of the deal sets and the agents' randomness")
    p.add_argument("--kings", type=int, default=8, choices=(8, 4),
                   help="8 kings (every 3 is a rey, every 2 an as) or 4 kings")
    p.add_argument("--target", type=int_in(1, MAX_TARGET, "Mus plays to 40 or 30"), default=40,
                   help="stones that win a game")
    p.add_argument("--random-scores", action="store_true", help="hand deals start from random scores, not 0-0")
    p.add_argument("--signals", choices=("off", "truthful", "free"), default="off",
                   help="the señas channel (RULES.md §8): off, truthful (only true signs are legal) or free; "
                        "add -nosigns to a spec for that agent without signs (rule-nosigns)")
    p.add_argument("--intercept", type=float, default=0.0, metavar="P",
                   help="with --signals: chance that an opponent sees a sign (signal_intercept_p, 0..1)")
    p.add_argument("--tables", type=int_in(2, 2**20), default=2048,
                   help="tables stepped at once (two per deal in flight)")
    p.add_argument("--out", default="runs/tournament", help="output directory (CSV, JSON, PNG)")
    p.add_argument("--records", type=int_in(0, 10_000), default=0,
                   help="also write JSON records of this many duplicate games per pair (played on MusGame) into "
                        "OUT/records, replacing an earlier run's")
    p.add_argument("--no-plots", action="store_true", help="do not draw ladder.png and lances.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help=f"play each pair, in chunks of {DEAL_CHUNK:,} deals, as Ray tasks: on a new local Ray "
                        "instance, or with ADDRESS on that cluster (ray.init(address=ADDRESS); 'auto': the one "
                        "RAY_ADDRESS or the last 'ray start' names); the tables and ladder are those of a run without "
                        "--ray")
    args = p.parse_args(argv)
    specs = [s.strip() for s in args.agents.split(",") if s.strip()]
    if len(specs) < 2:
        p.error(f"argument --agents: needs at least two agents (a spec given twice plays itself), got {specs}")
    if args.hands <= 0 and args.games <= 0:
        p.error("nothing to play: give --hands N and/or --games N (N >= 1)")
    check_agent_specs(p, "--agents", specs)             # fail early on a bad spec
    check_writable_dir(p, "--out", args.out)
    if not 0.0 <= args.intercept <= 1.0:
        p.error(f"argument --intercept: a probability in [0, 1], got {args.intercept}")
    if args.intercept and args.signals == "off":
        p.error("argument --intercept: needs --signals truthful or free (there are no signs to intercept)")
    cfg = MusConfig(kings=args.kings, target=args.target, signals=args.signals, signal_intercept_p=args.intercept)
    hand_results: list[PairResult] = []
    game_results: list[PairResult] = []
    started_ray = _start_ray(p, args.ray) if args.ray is not None else False
    t0 = time.perf_counter()
    hand_deals = make_deals(args.hands, args.seed, cfg.target, args.random_scores) if args.hands > 0 else None
    game_deals = make_deals(args.games, args.seed + 1, cfg.target) if args.games > 0 else None
    try:
        if args.ray is not None:
            rounds = [(d, m) for d, m in ((hand_deals, "hands"), (game_deals, "games")) if d is not None]
            played = dict(zip((m for _, m in rounds), ray_round_robins(
                specs, rounds, config=cfg, max_tables=args.tables, seed=args.seed, progress=not args.quiet),
                strict=True))
            hand_results, game_results = played.get("hands", []), played.get("games", [])
        else:
            if hand_deals is not None:
                hand_results = round_robin(specs, hand_deals, mode="hands", config=cfg, max_tables=args.tables,
                                           seed=args.seed, progress=not args.quiet)
            if game_deals is not None:
                game_results = round_robin(specs, game_deals, mode="games", config=cfg, max_tables=args.tables,
                                           seed=args.seed, progress=not args.quiet)
    finally:
        if started_ray:
            import ray
            ray.shutdown()
    labels = agent_labels(specs)
    ladder = make_ladder(labels, hand_results, game_results, seed=args.seed)
    elapsed = time.perf_counter() - t0
    hands_played = sum(2 * len(r.hand_diff) for r in hand_results) + sum(int(r.game_hands.sum()) for r in game_results)
    meta = {"agents": specs, "hands": args.hands, "games": args.games, "seed": args.seed,
            "config": cfg.to_dict(), "seconds": elapsed, "hands_played": hands_played,
            "hands_per_second": hands_played / elapsed if elapsed else None,
            "rating_from": ladder.source}
    print_tables(labels, hand_results, game_results, ladder)
    files = write_outputs(Path(args.out), labels, hand_results, game_results, ladder, meta, plots=not args.no_plots)
    written = [str(f) for f in files.values()]
    if args.records > 0:
        records = write_tournament_records(Path(args.out) / "records", specs, cfg, args.records, args.seed)
        written.append(f"{len(records)} records in {Path(args.out) / 'records'}")
    print(f"{hands_played} hands in {elapsed:.1f} s ({hands_played / elapsed:,.0f} hands/s); "
          f"wrote {', '.join(written)}")

if __name__ == "__main__":
    main()
