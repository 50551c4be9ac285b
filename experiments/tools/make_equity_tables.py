"""Generate the win-probability tables of the equity agent (``agents/data/equity_tables_k{8,4}.npz``).

For every own hand (rank multiset: 330 with 8 kings, 715 with 4) a seeded Monte Carlo deals the 36 unseen
cards to the other three seats (right-hand opponent, partner, left-hand opponent) and records, for each
own relative seat S0..S3 (S0 = mano; ties go to the seat nearer the mano), whether the own team wins
each lance. Every sample is a fresh uniformly random deal of the unseen cards; the same random
permutations are reused for every own hand (common random numbers), which keeps the tables smooth.

Stored per variant (arrays over ``ctx`` x ``seat`` x ``hand`` x ``tau``):

* ``acc[c, p, h, j]`` = P(opponents' best percentile >= tau[j] | context c), and
* ``win[c, p, h, j]`` = P(own team wins the lance and opponents' best percentile >= tau[j] | c),

where an opponent's percentile is that of its hand for the lance among the lance's population
(:func:`agents.features.percentile_table`: strictly weaker plus half the equal) and only eligible hands
count. ``win[..., 0]`` is the plain P(win). Each context is shrunk toward the lance's pooled estimate with
50 pseudo-samples, so rare declaration patterns (a few samples) read close to the pooled value. The agent
conditions on "the opponents bet / accepted" by assuming the best opponent hand is above a threshold tau,
using ``win / acc``.

Contexts (:data:`agents.equity.CONTEXTS`): 0 grande, 1 chica (no conditioning); 2..7 pares and 8..13 juego,
given that the own hand holds pares (juego), by the public declarations: partner sí/no (x3) times which
opponents hold (right only, left only, both); 14 punto (nobody holds juego). ``count[c, h]`` is the number
of samples behind each context.

Also stored: ``ev[slot, p, h]``, the expected net stones of each lance slot when everything is en paso
(grande/chica 1 stone, pares and juego bonuses, punto 1); ``disc[slot, p, h, m]``, the same expectation
after discarding the slots of mask ``m`` (hand-slot order) and drawing replacements from the 36 unseen
cards (exact enumeration over the rank multisets of the draw; ``m = 0`` keeps the hand); the mean
pares / juego bonus of a holder; and ``hand_pmf[x, y]``, the distribution of the stones both teams win
in one hand in rule-based self-play (which the agent turns into game-win probabilities).

Run ``mus make-tables equity`` (:mod:`experiments.commands.make_tables`; about ten minutes on two cores;
``--quick`` for a small, noisy version in seconds). The output is deterministic for a given seed and sample size.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import comb
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agents.features import hand_weights, percentile_table
from mus_env.cards import NUM_CARDS
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, get_tables, multiset_index

__all__ = ["TAU", "NUM_CONTEXTS", "FORMAT_VERSION", "DEFAULT_SAMPLES", "DEFAULT_SELFPLAY_HANDS", "QUICK_SAMPLES",
           "QUICK_SELFPLAY_HANDS", "build_tables", "write_tables", "deal_multisets", "progress_bar", "team_wins"]

#: Thresholds on the opponents' best percentile.
TAU = np.array([0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99])
NUM_CONTEXTS = 15
FORMAT_VERSION = 1
_CTX_GRANDE, _CTX_CHICA, _CTX_PARES, _CTX_JUEGO, _CTX_PUNTO = 0, 1, 2, 8, 14
#: Monte Carlo deals per own hand, and rule-based self-play hands for ``hand_pmf``: the shipped tables' and
#: ``--quick``'s (small and noisy: for tests and trials).
DEFAULT_SAMPLES, DEFAULT_SELFPLAY_HANDS = 200_000, 40_000
QUICK_SAMPLES, QUICK_SELFPLAY_HANDS = 2_000, 2_000
_PMF_MAX = 40                       # hand stones above this are lumped into the last bin
_SHRINK = 50                        # pseudo-samples of the pooled estimate in each context


def progress_bar(total: int, desc: str, enabled: bool):  # noqa: ANN202 - tqdm or a no-op
    """A tqdm bar of ``total`` steps (``update(n)``, ``close()``), or one that does nothing when disabled or
    tqdm is missing."""
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm(total=total, desc=desc, unit="hand")
        except ImportError:
            pass

    class _Null:
        def update(self, n: int = 1) -> None:
            pass

        def close(self) -> None:
            pass

    return _Null()


def _representative(ranks_asc: npt.NDArray[np.int8], rank_of_card: npt.NDArray[np.int8]) -> list[int]:
    """Card ids of one hand with the given ranks (suits do not matter)."""
    used: list[int] = []
    for r in ranks_asc:
        c = next(c for c in range(NUM_CARDS) if rank_of_card[c] == r and c not in used)
        used.append(c)
    return used


def team_wins(comp: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Own team wins, from per-player composite keys ``comp`` (N, 4) in q order (higher wins)."""
    return np.maximum(comp[:, 0], comp[:, 2]) > np.maximum(comp[:, 1], comp[:, 3])


def _declaration_context(holds: npt.NDArray[np.bool_], base: int) -> npt.NDArray[np.int64]:
    """Pares / juego context of each sample (-1 when the own hand does not bet: no holding, or no opponent holds).

    ``holds`` is (N, 4) in q order (0 me, 1 right, 2 partner, 3 left); the context is
    ``base + 3 * partner_holds + (0 right only, 1 left only, 2 both)``.
    """
    pattern = np.where(holds[:, 1] & holds[:, 3], 2, np.where(holds[:, 3], 1, 0))
    valid = holds[:, 0] & (holds[:, 1] | holds[:, 3])
    return np.where(valid, base + 3 * holds[:, 2] + pattern, -1)


def _monte_carlo(kings: int, samples: int, seed: int, progress: bool) -> dict[str, npt.NDArray]:
    t = get_tables(kings)
    M = t.size
    rank_of_card = np.asarray(t.rank_of_card)
    pct = percentile_table(kings)
    mid = np.where(pct[0] >= 0, pct[0] + 0.5 * pct[1], -1.0)              # (5, M)
    strength = t.strength.astype(np.int64)                                   # (5, M)
    pares_holder = t.pares_class > 0
    juego_holder = t.juego_rank > 0
    pares_bonus = t.pares_bonus.astype(np.int64)
    juego_bonus = t.juego_bonus.astype(np.int64)
    rng = np.random.default_rng([seed, kings, 0x455159])                    # "EQY"
    perm = np.argsort(rng.random((samples, 36)), axis=1)[:, :12]            # common random numbers
    n_tau = len(TAU)
    acc = np.zeros((NUM_CONTEXTS, 4, M, n_tau))
    win = np.zeros((NUM_CONTEXTS, 4, M, n_tau))
    count = np.zeros((NUM_CONTEXTS, M), dtype=np.int64)
    ev = np.zeros((4, 4, M))
    bar = progress_bar(M, f"equity tables, {kings} kings", progress)
    for h in range(M):
        idx = deal_multisets(h, t.ranks[h], rank_of_card, perm)
        holds_p = pares_holder[idx]                                         # (N, 4) in q order
        holds_j = juego_holder[idx]
        any_juego = holds_j.any(axis=1)
        # contexts of the declarations, from the own point of view (q: 0 me, 1 right, 2 partner, 3 left)
        lance_ctx = {GRANDE: np.full(samples, _CTX_GRANDE), CHICA: np.full(samples, _CTX_CHICA),
                     PARES: _declaration_context(holds_p, _CTX_PARES), JUEGO: _declaration_context(holds_j, _CTX_JUEGO),
                     PUNTO: np.where(~any_juego, _CTX_PUNTO, -1)}
        juego_part = np.zeros(4)
        elig = {GRANDE: None, CHICA: None, PARES: holds_p, JUEGO: holds_j, PUNTO: None}
        for L in (GRANDE, CHICA, PARES, JUEGO, PUNTO):
            ctx = lance_ctx[L]
            sel = ctx >= 0
            u = mid[L][idx[:, [1, 3]]]                                       # opponents' percentiles
            if elig[L] is not None:
                u = np.where(elig[L][:, [1, 3]], u, -1.0)
            level = np.searchsorted(TAU, u.max(axis=1), side="right")        # number of taus <= best
            key = ctx[sel] * (n_tau + 1) + level[sel]
            hist_n = np.bincount(key, minlength=NUM_CONTEXTS * (n_tau + 1)).reshape(NUM_CONTEXTS, n_tau + 1)
            count[:, h] += hist_n.sum(axis=1)
            ge_n = np.cumsum(hist_n[:, ::-1], axis=1)[:, ::-1][:, 1:]       # (C, n_tau): level > j
            s = strength[L][idx]
            for p in range(4):
                rel = (p + np.arange(4)) % 4
                comp = s * 4 + (3 - rel)
                if elig[L] is not None:
                    comp = np.where(elig[L], comp, -1)
                w = team_wins(comp)
                hist_w = np.bincount(key, weights=w[sel], minlength=NUM_CONTEXTS * (n_tau + 1))
                ge_w = np.cumsum(hist_w.reshape(NUM_CONTEXTS, n_tau + 1)[:, ::-1], axis=1)[:, ::-1][:, 1:]
                acc[:, p, h] += ge_n
                win[:, p, h] += ge_w
                # en-paso expectation of the lance slot (all samples, not only the betting contexts)
                if L in (GRANDE, CHICA):
                    ev[L, p, h] = (2.0 * w - 1.0).mean()
                elif L == PARES:
                    team = np.where(w, (pares_bonus[idx] * holds_p)[:, [0, 2]].sum(axis=1),
                                    -(pares_bonus[idx] * holds_p)[:, [1, 3]].sum(axis=1))
                    ev[2, p, h] = np.where(holds_p.any(axis=1), team, 0).mean()
                elif L == JUEGO:
                    jb = juego_bonus[idx]
                    team = np.where(w, jb[:, [0, 2]].sum(axis=1), -jb[:, [1, 3]].sum(axis=1))
                    juego_part[p] = np.where(any_juego, team, 0).mean()
                else:
                    ev[3, p, h] = juego_part[p] + np.where(~any_juego, 2.0 * w - 1.0, 0.0).mean()
        bar.update(1)
    bar.close()
    # Contexts with few samples (rare declaration patterns) are shrunk toward the lance's pooled estimate:
    # (sum + K * pooled) / (n + K), so that an empty context reads as the pooled one.
    acc_p, win_p = np.empty_like(acc), np.empty_like(win)
    for ctxs in (range(_CTX_GRANDE, _CTX_GRANDE + 1), range(_CTX_CHICA, _CTX_CHICA + 1), range(_CTX_PARES, _CTX_JUEGO),
                 range(_CTX_JUEGO, _CTX_PUNTO), range(_CTX_PUNTO, _CTX_PUNTO + 1)):
        c = list(ctxs)
        n_pool = np.maximum(count[c].sum(axis=0), 1)[None, :, None]                  # (1, M, 1)
        for arr, out in ((acc, acc_p), (win, win_p)):
            pooled = arr[c].sum(axis=0) / n_pool                                      # (4, M, T)
            out[c] = (arr[c] + _SHRINK * pooled[None]) / (count[c][:, None, :, None] + _SHRINK)
    hw = hand_weights(kings)
    holder_bonus = np.array([(pares_bonus * hw)[pares_holder].sum() / hw[pares_holder].sum(),
                             (juego_bonus * hw)[juego_holder].sum() / hw[juego_holder].sum()])
    return {"acc": acc_p, "win": win_p, "count": count, "ev": ev, "holder_bonus": holder_bonus}


def _draw_table(num_ranks: int, k: int) -> npt.NDArray[np.int64]:
    """``(D, num_ranks + 1)`` rank counts of every multiset of ``k`` ranks (column 0 unused)."""
    rows = []
    for ms in combinations_with_replacement(range(1, num_ranks + 1), k):
        c = np.zeros(num_ranks + 1, dtype=np.int64)
        for r in ms:
            c[r] += 1
        rows.append(c)
    return np.array(rows, dtype=np.int64).reshape(len(rows), num_ranks + 1)


def discard_values(kings: int, ev: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``(4 slots, 4 seats, M, 16)`` expected en-paso stones after discarding mask m (exact enumeration)."""
    t = get_tables(kings)
    R = t.num_ranks
    M = t.size
    in_deck = np.bincount(np.asarray(t.rank_of_card, dtype=np.int64), minlength=R + 1)
    binom = np.array([[comb(n, j) for j in range(5)] for n in range(9)], dtype=np.float64)
    draws = {k: _draw_table(R, k) for k in range(5)}
    # index of a full hand from its rank counts (base-5 code -> multiset index)
    counts_all = (t.ranks[:, :, None] == np.arange(R + 1)).sum(axis=1)               # (M, R+1)
    base = 5 ** np.arange(R + 1)
    codes = counts_all @ base
    order = np.argsort(codes)
    sorted_codes = codes[order]
    out = np.zeros((4, 4, M, 16))
    for h in range(M):
        slots = t.ranks[h][::-1]                                                      # hand-slot order: rank desc
        deck = in_deck - counts_all[h]
        for m in range(16):
            kept = np.zeros(R + 1, dtype=np.int64)
            for s in range(4):
                if not m >> s & 1:
                    kept[slots[s]] += 1
            k = bin(m).count("1")
            d = draws[k]
            prob = np.prod(binom[deck[None, :], d], axis=1) / comb(36, k)
            new = (kept[None, :] + d) @ base
            pos = np.searchsorted(sorted_codes, new)
            nidx = order[np.minimum(pos, M - 1)]
            ok = (prob > 0)
            assert np.all(sorted_codes[np.minimum(pos, M - 1)][ok] == new[ok])
            out[:, :, h, m] = ev[:, :, nidx[ok]] @ prob[ok]
    return out


def selfplay_pmf(kings: int, hands: int, seed: int, progress: bool) -> npt.NDArray[np.float64]:
    """``(41, 41)`` distribution of (team0, team1) stones per hand in rule-based self-play, symmetrised."""
    from agents.rule import RuleBasedAgent
    from mus_env import MusConfig, VectorMusEnv

    B = min(1024, hands)
    venv = VectorMusEnv(B, MusConfig(kings=kings), seed=seed, reward="stones")
    agent = RuleBasedAgent()
    rng = np.random.default_rng([seed, kings, 0x504D46])
    obs, mask = venv.reset()
    pmf = np.zeros((_PMF_MAX + 1, _PMF_MAX + 1))
    seen = 0
    bar = progress_bar(hands, f"self-play hands, {kings} kings", progress)
    while seen < hands:
        obs, mask, _, _, info = venv.step(agent.act_batch(obs, mask, rng))
        fin = np.flatnonzero(info["hand_finished"])[: hands - seen]
        if fin.size:
            hs = np.minimum(info["hand_stones"][fin], _PMF_MAX)
            np.add.at(pmf, (hs[:, 0], hs[:, 1]), 1.0)
            seen += fin.size
            bar.update(int(fin.size))
    bar.close()
    pmf = pmf + pmf.T
    return pmf / pmf.sum()


def deal_multisets(h: int, ranks_h: npt.NDArray, rank_of_card: npt.NDArray, perm: npt.NDArray) -> npt.NDArray[np.int64]:
    """``(N, 4)`` rank-multiset indices in q order (0 own hand ``h``, 1 right, 2 partner, 3 left) of the N deals
    ``perm`` (``(N, 12)`` positions among the 36 cards unseen by a representative hand of ``h``)."""
    own = _representative(ranks_h, rank_of_card)
    rest = np.array([c for c in range(NUM_CARDS) if c not in own])
    ranks = np.sort(rank_of_card[rest][perm].reshape(len(perm), 3, 4), axis=2)
    idx = np.empty((len(perm), 4), dtype=np.int64)
    idx[:, 0] = h
    idx[:, 1:] = multiset_index(ranks)
    return idx


def build_tables(kings: int, samples: int, seed: int, selfplay_hands: int,
                 progress: bool = True) -> dict[str, npt.NDArray]:
    """All arrays of one variant's table file (see the module docstring)."""
    mc = _monte_carlo(kings, samples, seed, progress)
    return {
        "format_version": np.array(FORMAT_VERSION), "kings": np.array(kings), "samples": np.array(samples),
        "seed": np.array(seed), "tau": TAU,
        "acc": mc["acc"].astype(np.float16), "win": mc["win"].astype(np.float16), "count": mc["count"].astype(np.int32),
        "ev": mc["ev"].astype(np.float32), "disc": discard_values(kings, mc["ev"]).astype(np.float32),
        "holder_bonus": mc["holder_bonus"], "hand_pmf": selfplay_pmf(kings, selfplay_hands, seed, progress),
    }



def write_tables(out_dir: str | Path, kings: int, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                 selfplay_hands: int = DEFAULT_SELFPLAY_HANDS, progress: bool = True) -> Path:
    """Build one variant's tables (:func:`build_tables`) and write ``OUT_DIR/equity_tables_k{kings}.npz`` (the
    folder made if needed); returns the file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"equity_tables_k{kings}.npz"
    np.savez_compressed(path, **build_tables(kings, samples, seed, selfplay_hands, progress=progress))
    return path
