"""Ratings from duplicate results: one number per agent, fitted on what wins.

:func:`make_ladder` rates what wins: when games were played, an Elo fit (Bradley-Terry, :func:`elo_ladder`) of the
paired game results, ``random`` = 1000; with hands only, a stones rating (:func:`stones_ladder`), the weighted
least-squares fit of each pair's mean duplicate stones per hand (weights: deals over the variance), ``random`` = 0,
in stones per hand. The sign of a hand is never rated: winning most hands by little while losing a few by much
loses games. Both carry bootstrap errors, and the :class:`Ladder` lists the head-to-head results (95% CI clear of
a tie) whose order it reverses, as one rating per agent cannot fit a cycle (``ordago`` loses to ``random`` on
stones but costs the strong agents little).

Where the results cycle, :func:`nash_mixture` says what a rating cannot: the Nash equilibrium of the meta-game
whose pure strategies are the agents (Nash averaging, Balduzzi et al., 2018, "Re-evaluating evaluation"). An agent
with mass in it is one that no mixture of the others makes redundant; the mixture is also the opponent mix
PSRO trains the next best response against (``mus train --league-mix``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from experiments.evaluate.duplicate import PairResult

__all__ = ["Ladder", "elo_ladder", "stones_ladder", "nash_mixture", "make_ladder"]


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


def nash_mixture(payoff: npt.ArrayLike, iterations: int = 4000) -> tuple[npt.NDArray[np.float64], float]:
    """A Nash equilibrium of the symmetric zero-sum game ``payoff`` (``payoff[i, j]``: what agent i wins from agent
    j, with ``payoff[j, i] == -payoff[i, j]``), by regret matching+ with linear averaging (Tammelin, 2014) for both
    players, symmetrised.

    Returns:
        ``(p, gap)``: the mixture (non-negative, summing to 1) and its gap ``max_i (payoff @ p)_i`` (what the best
        single agent wins against it; 0 at an exact equilibrium, the game's value being 0).

    Raises:
        ValueError: ``payoff`` is not square and antisymmetric (within 1e-9), or is not finite.
    """
    a = np.asarray(payoff, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or not a.size:
        raise ValueError(f"payoff must be a square matrix, got shape {a.shape}")
    if not np.isfinite(a).all() or not np.allclose(a, -a.T, atol=1e-9, rtol=0):
        raise ValueError("payoff must be finite and antisymmetric (payoff[j, i] == -payoff[i, j])")
    k = len(a)
    regret_x, regret_y = np.zeros(k), np.zeros(k)
    sum_x, sum_y = np.zeros(k), np.zeros(k)

    def strategy(regret: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        total = regret.sum()
        return regret / total if total > 0 else np.full(k, 1.0 / k)

    for t in range(1, iterations + 1):                # alternating updates: the column player sees the new x
        x, y = strategy(regret_x), strategy(regret_y)
        u = a @ y                                   # the row player's payoff of each agent
        regret_x = np.maximum(regret_x + u - x @ u, 0.0)
        v = -(strategy(regret_x) @ a)               # the column player's payoff of each agent
        regret_y = np.maximum(regret_y + v - v @ y, 0.0)
        sum_x += t * x
        sum_y += t * y
    p = (sum_x / sum_x.sum() + sum_y / sum_y.sum()) / 2
    return p, float(max((a @ p).max(), 0.0))


@dataclass(frozen=True)
class Ladder:
    """One rating per agent and what it is fitted on (see :func:`make_ladder`).

    Attributes:
        ratings: ``{name: (rating, standard error)}``.
        source: ``"games"`` or ``"hands"``: the results the ratings are fitted on.
        unit: ``"Elo"`` or ``"stones/hand"``.
        method: one line saying what the rating is and how it was fitted (printed under the table and plot).
        contradictions: the head-to-head results (95% CI clear of a tie) whose order the ladder reverses.
        nash: the Nash mixture of the meta-game on the same results (:func:`nash_mixture`; on games the payoff is
            the game win rate minus 0.5, on hands the stones per hand), ``{name: mass}`` for every agent.
        nash_gap: what the best single agent wins against that mixture (0 at an exact equilibrium).
    """

    ratings: dict[str, tuple[float, float]]
    source: str
    unit: str
    method: str
    contradictions: tuple[str, ...] = ()
    nash: dict[str, float] = field(default_factory=dict)
    nash_gap: float = 0.0

    def __getitem__(self, name: str) -> tuple[float, float]:
        """``(rating, standard error)`` of an agent."""
        return self.ratings[name]

    def order(self) -> list[str]:
        """Agent names, best first."""
        return sorted(self.ratings, key=lambda n: -self.ratings[n][0])

    def to_json(self) -> dict[str, Any]:
        """What the ratings are (``source``, ``unit``, ``method``, ``contradictions``), for ``results.json``."""
        return {"source": self.source, "unit": self.unit, "method": self.method,
                "contradictions": list(self.contradictions), "nash": dict(self.nash), "nash_gap": self.nash_gap}

    def nash_text(self) -> str:
        """One line: the agents with mass in the Nash mixture, largest first (what a cycle leaves standing)."""
        kept = sorted(((m, n) for n, m in self.nash.items() if m >= 0.005), reverse=True)
        what = "game win rate" if self.source == "games" else "stones per hand"
        return (f"Nash mixture of the agents (the meta-game on {what}; Nash averaging): "
                + ", ".join(f"{n} {m:.2f}" for m, n in kept) + ".")


def make_ladder(names: Sequence[str], hand_results: Sequence[PairResult], game_results: Sequence[PairResult], *,
                bootstrap: int = 200, seed: int = 0) -> Ladder:
    """The tournament's ladder: Elo on the games when any were played, else the stones rating on the hands.

    Raises:
        ValueError: no results at all.
    """
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
    idx = {n: i for i, n in enumerate(names)}
    payoff = np.zeros((len(names), len(names)))
    for a, b, (m, _, _), tie, _ in checks:
        if a != b:
            payoff[idx[a], idx[b]], payoff[idx[b], idx[a]] = m - tie, tie - m
    mixture, gap = nash_mixture(payoff)
    bad = []
    for a, b, (m, lo, hi), tie, what in checks:
        if a == b or not (lo > tie or hi < tie):
            continue
        if (m > tie) != (ratings[a][0] > ratings[b][0]):
            sign = "+" if tie == 0.0 else ""
            bad.append(f"{a} vs {b}: {what} {m:{sign}.3f} [{lo:{sign}.3f}, {hi:{sign}.3f}]")
    return Ladder(lad.ratings, lad.source, lad.unit, lad.method, tuple(bad),
                  {n: float(mixture[idx[n]]) for n in names}, gap)
