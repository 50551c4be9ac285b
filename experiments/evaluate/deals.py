"""Deal sets: seeded, reproducible lists of first deals for duplicate evaluation.

A deal is a deck (a permutation of the 40 card ids), a mano, starting scores and a game seed (which
drives reshuffles and every later hand). Playing a deal twice with the teams' seats swapped is the
duplicate format: luck of the cards cancels and only the play differs.

Run ``mus deals --n 50000 --seed 0 --out deals.npz`` to write one; tournaments make theirs the same way from
``--seed``, so a seed names a deal set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mus_env.records import write_atomic

__all__ = ["DealSet", "make_deals", "MAX_DEALS", "MAX_TARGET"]

#: Largest deal set the commands make at once (``make_deals`` holds ``40 * n`` float64 keys while it shuffles).
MAX_DEALS = 10**6
#: Largest game target the commands accept: Mus plays to 40 or 30, and the equity agent's table of win
#: probabilities grows as the square of the target.
MAX_TARGET = 1000


@dataclass(frozen=True)
class DealSet:
    """``n`` deals: ``decks (n, 40)`` int8, ``mano (n,)`` int8, ``scores (n, 2)`` int16, ``seeds (n,)`` int64."""

    decks: npt.NDArray[np.int8]
    mano: npt.NDArray[np.int8]
    scores: npt.NDArray[np.int16]
    seeds: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.mano)

    def subset(self, start: int, stop: int) -> DealSet:
        """Deals ``start .. stop - 1`` as a deal set (views of these arrays, not copies).

        Raises:
            ValueError: unless ``0 <= start < stop <= len(self)`` (a deal set is never empty).
        """
        n = len(self)
        if isinstance(start, bool) or isinstance(stop, bool) or not isinstance(start, (int, np.integer)) \
                or not isinstance(stop, (int, np.integer)):
            raise ValueError(f"subset bounds must be ints, got start={start!r}, stop={stop!r}")
        if not 0 <= start < stop <= n:
            raise ValueError(f"subset needs 0 <= start < stop <= {n} (the deal set's size), "
                             f"got start={start}, stop={stop}")
        return DealSet(self.decks[start:stop], self.mano[start:stop], self.scores[start:stop],
                       self.seeds[start:stop])

    def save(self, path: str | Path) -> Path:
        """Write the deal set to ``path`` (an ``.npz`` archive, under exactly that name: ``"d"`` is written as
        ``d``, not ``d.npz``), atomically (:func:`mus_env.records.write_atomic`); returns the path."""
        def write(tmp: str) -> None:
            with open(tmp, "wb") as f:                     # a file object: numpy adds no ".npz" to the name
                np.savez_compressed(f, decks=self.decks, mano=self.mano, scores=self.scores, seeds=self.seeds)

        return write_atomic(path, write)

    @classmethod
    def load(cls, path: str | Path) -> DealSet:
        """Read a deal set written by :meth:`save`."""
        with np.load(path) as f:
            return cls(f["decks"], f["mano"], f["scores"], f["seeds"])


def make_deals(n: int, seed: int = 0, target: int = 40, random_scores: bool = False) -> DealSet:
    """``n`` uniformly random deals from ``seed``.

    Args:
        n: number of deals.
        seed: names the deal set (the same seed always gives the same deals).
        target: the game target (bounds the random starting scores).
        random_scores: start each deal from scores drawn uniformly in ``0 .. target - 1`` (so that
            score-aware play is exercised) instead of 0-0.
    """
    if n < 1:
        raise ValueError(f"a deal set needs at least one deal, got n={n}")
    rng = np.random.default_rng([seed, 0x6D7573])          # "mus"
    decks = np.argsort(rng.random((n, 40)), axis=1).astype(np.int8)
    mano = rng.integers(0, 4, n).astype(np.int8)
    scores = (rng.integers(0, target, (n, 2)) if random_scores else np.zeros((n, 2))).astype(np.int16)
    seeds = rng.integers(0, 2**62, n, dtype=np.int64)
    return DealSet(decks, mano, scores, seeds)

