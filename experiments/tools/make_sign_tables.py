"""Build the sign tables of :class:`agents.equity.EquityAgent`: lance-win chances given the partner's seña.

For each variant (8 and 4 kings), own hand multiset ``h``, own relative seat ``p`` (S0..S3; ties go to the
seat nearer the mano, as in :mod:`experiments.tools.make_equity_tables`) and partner token ``t``, a Monte Carlo
over deals of the 36 unseen cards (common random numbers across hands) estimates

    ``win[c, p, h, t]`` = P(own team wins the lance | own hand, partner signs ``t`` in the grande window)

and, from the same samples, the unconditional ``base[c, p, h]`` = P(own team wins the lance | own hand).
The partner's token is the one the baseline agents make in the grande window (:func:`partner_token`): the
first of :data:`agents.signs.SIGN_PRIORITY` true for its hand (:func:`mus_env.signals.hand_sign_bits`;
REAL31 is ignored, MUS is not made in the grande window).

Lance contexts ``c`` (:data:`SIGN_CONTEXTS`): 0 grande, 1 chica; 2, 3 pares and 4, 5 juego with the
partner's declaration no / sí (the agent knows it when it bets, and it is correlated with the token); 6
punto. As in the equity tables, pares and juego count holders only and a sample counts only where the lance
is played (a holder on each side); punto only where nobody holds juego.

Each ``(c, p, h, t)`` estimate is shrunk toward ``base`` with :data:`SHRINK` pseudo-samples, so a rare
token reads close to the unconditional value. ``count[h, t]`` is the number of deals in which the partner
signs ``t`` (it sums to ``samples`` for every ``h``); ``n[c, h, t]`` the deals behind each estimate.

Run ``mus make-tables signs`` (:mod:`experiments.commands.make_tables`; about a minute on two cores).
Deterministic for a seed and sample size. Output: ``agents/data/sign_tables_k{8,4}.npz``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from agents.signs import SIGN_PRIORITY
from experiments.tools.make_equity_tables import deal_multisets, progress_bar, team_wins
from mus_env.signals import NUM_SIGNS, Sign, hand_sign_bits
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, get_tables

__all__ = ["FORMAT_VERSION", "SIGN_CONTEXTS", "NUM_SIGN_CONTEXTS", "SHRINK", "DEFAULT_SAMPLES", "partner_token",
           "build_sign_tables", "write_sign_tables"]

FORMAT_VERSION = 1
#: Names of the lance contexts of the sign tables (index = context id).
SIGN_CONTEXTS = ("grande", "chica", "pares: partner no", "pares: partner sí", "juego: partner no",
                 "juego: partner sí", "punto")
NUM_SIGN_CONTEXTS = len(SIGN_CONTEXTS)
#: Pseudo-samples of the unconditional estimate in each (context, seat, hand, token) estimate.
SHRINK = 20
#: Monte Carlo deals per own hand of the shipped tables.
DEFAULT_SAMPLES = 50_000


def partner_token(kings: int) -> npt.NDArray[np.int64]:
    """``(M,)`` the token a baseline agent makes in the grande window for each rank multiset: the first of
    :data:`agents.signs.SIGN_PRIORITY` that is true for it (REAL31 ignored: it needs suits and the config)."""
    bits = hand_sign_bits(kings).astype(np.int64)
    tok = np.full(len(bits), int(Sign.NONE), dtype=np.int64)
    done = np.zeros(len(bits), dtype=bool)
    for s in SIGN_PRIORITY:
        if s in (Sign.REAL31, Sign.MUS):
            continue
        hit = ~done & ((bits >> int(s)) & 1).astype(bool)
        tok[hit] = int(s)
        done |= hit
    return tok


def _monte_carlo(kings: int, samples: int, seed: int, progress: bool) -> dict[str, npt.NDArray]:
    t = get_tables(kings)
    M = t.size
    rank_of_card = np.asarray(t.rank_of_card)
    strength = t.strength.astype(np.int64)                                   # (5, M)
    pares_holder = t.pares_class > 0
    juego_holder = t.juego_rank > 0
    token_of = partner_token(kings)
    C, S = NUM_SIGN_CONTEXTS, NUM_SIGNS
    rng = np.random.default_rng([seed, kings, 0x5349474E])                 # "SIGN"
    perm = np.argsort(rng.random((samples, 36)), axis=1)[:, :12]            # common random numbers
    wins = np.zeros((C, 4, M, S))
    n = np.zeros((C, M, S), dtype=np.int64)
    count = np.zeros((M, S), dtype=np.int64)
    rel = [(p + np.arange(4)) % 4 for p in range(4)]
    bar = progress_bar(M, f"sign tables, {kings} kings", progress)
    for h in range(M):
        idx = deal_multisets(h, t.ranks[h], rank_of_card, perm)
        tok = token_of[idx[:, 2]]                                           # the partner's token (q = 2)
        count[h] = np.bincount(tok, minlength=S)
        holds_p, holds_j = pares_holder[idx], juego_holder[idx]
        for L, elig in ((GRANDE, None), (CHICA, None), (PARES, holds_p), (JUEGO, holds_j), (PUNTO, None)):
            if L in (GRANDE, CHICA):
                ctx = np.full(samples, L)
            elif L == PUNTO:
                ctx = np.where(holds_j.any(axis=1), -1, 6)
            else:
                played = (elig[:, 0] | elig[:, 2]) & (elig[:, 1] | elig[:, 3])
                ctx = np.where(played, (2 if L == PARES else 4) + elig[:, 2], -1)
            sel = ctx >= 0
            key = ctx[sel] * S + tok[sel]
            n[:, h] += np.bincount(key, minlength=C * S).reshape(C, S)
            s = strength[L][idx]
            for p in range(4):
                comp = s * 4 + (3 - rel[p])
                if elig is not None:
                    comp = np.where(elig, comp, -1)
                w = team_wins(comp)[sel]
                wins[:, p, h] += np.bincount(key, weights=w, minlength=C * S).reshape(C, S)
        bar.update(1)
    bar.close()
    n_all = n.sum(axis=2)                                                   # (C, M)
    base = wins.sum(axis=3) / np.maximum(n_all, 1)[:, None, :]              # (C, 4, M)
    shrunk = (wins + SHRINK * base[..., None]) / (n[:, None] + SHRINK)      # (C, 4, M, S)
    return {"win": shrunk, "base": base, "count": count, "n": n}


def build_sign_tables(kings: int, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                      progress: bool = True) -> dict[str, npt.NDArray]:
    """All arrays of one variant's sign-table file (see the module docstring)."""
    mc = _monte_carlo(kings, samples, seed, progress)
    return {
        "format_version": np.array(FORMAT_VERSION), "kings": np.array(kings), "samples": np.array(samples),
        "seed": np.array(seed), "shrink": np.array(SHRINK), "win": mc["win"].astype(np.float16),
        "base": mc["base"].astype(np.float32), "count": mc["count"].astype(np.int32), "n": mc["n"].astype(np.int32),
    }



def write_sign_tables(out_dir: str | Path, kings: int, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                      progress: bool = True) -> Path:
    """Build one variant's sign tables (:func:`build_sign_tables`) and write ``OUT_DIR/sign_tables_k{kings}.npz``
    (the folder made if needed); returns the file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"sign_tables_k{kings}.npz"
    np.savez_compressed(path, **build_sign_tables(kings, samples, seed, progress=progress))
    return path
