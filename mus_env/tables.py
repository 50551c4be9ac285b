"""Hand tables over every 4-card rank multiset, built at import by readable code (RULES.md §4).

Suits never matter for grande, chica, pares, juego or punto (only for the optional 31 real), and with
8 kings a 3 is a rey and a 2 an as, so a hand is evaluated from its multiset of ranks alone: 330
multisets with 8 kings (8 ranks), 715 with 4 kings (10 ranks). Each multiset has a dense index
(:func:`multiset_index`, the combinatorial number system), and every table below is a read-only numpy
array over those indices, so both engines evaluate hands by lookup.

Encodings (ranks are those of RULES.md §2.2, 1 = as ... 8 or 10 = rey):

==================  =======  ============================================================================
table               dtype    meaning
==================  =======  ============================================================================
``grande_key``      int32    ranks sorted descending, packed base 16; higher wins
``chica_key``       int32    ranks sorted ascending, packed base 16; **lower** wins
``pares_class``     int8     0 none, 1 par, 2 medias, 3 duples (two pairs or four of a kind)
``pares_key``       int32    ``class*256 + a*16 + b``: a = pair/trio/higher-pair rank, b = lower pair
                             rank (duples only); 0 = no pares; higher wins
``juego_points``    int8     sum of point values (§2.3), 4..40
``juego_rank``      int8     0 = no juego; 1..8 for 33, 34, 35, 36, 37, 40, 32, 31 (higher wins);
                             the engines use 9 for a 31 real
``punto_key``       int8     the total when it is at most 30 (punto), else 0; higher wins
``pares_bonus``     int8     stones a holder brings to a winning team: par 1, medias 2, duples 3
``juego_bonus``     int8     3 for 31, 2 for any other juego, 0 without juego
==================  =======  ============================================================================

``strength[lance]`` gives one "higher wins" integer per lance (grande, chica, pares, juego, punto) so a
lance winner is ``argmax`` over seats in relative order (first maximum = nearer the mano, §2.4).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations_with_replacement
from math import comb

import numpy as np
import numpy.typing as npt

from .cards import NUM_CARDS, card_number, num_ranks, rank_table, value_table

__all__ = [
    "HandTables", "TABLES", "get_tables", "multiset_index", "JUEGO_ORDER", "REAL31_JUEGO_RANK",
    "GRANDE", "CHICA", "PARES", "JUEGO", "PUNTO", "LANCE_NAMES", "is_real31",
]

# Lance ids, in scoring order; the fourth lance is JUEGO or PUNTO.
GRANDE, CHICA, PARES, JUEGO, PUNTO = 0, 1, 2, 3, 4
LANCE_NAMES = ("grande", "chica", "pares", "juego", "punto")

#: Juego totals from worst to best (RULES.md §4.4: 31 > 32 > 40 > 37 > 36 > 35 > 34 > 33).
JUEGO_ORDER = (33, 34, 35, 36, 37, 40, 32, 31)
#: juego_rank used by the engines for a 31 real (above every ordinary 31).
REAL31_JUEGO_RANK = len(JUEGO_ORDER) + 1


def multiset_index(sorted_ranks: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Dense index of 4-rank multisets (combinatorial number system).

    Args:
        sorted_ranks: ``(..., 4)`` ranks sorted **ascending**, 1-based as in RULES.md §2.2.

    Returns:
        ``(...)`` int64 index in ``0 .. C(R+3, 4) - 1`` for R ranks.
    """
    r = np.asarray(sorted_ranks, dtype=np.int64) - 1
    s = r + np.arange(4)                       # strictly increasing: r0 < r1+1 < r2+2 < r3+3
    return (_BINOM[s[..., 0], 1] + _BINOM[s[..., 1], 2] + _BINOM[s[..., 2], 3] + _BINOM[s[..., 3], 4])


_BINOM = np.array([[comb(n, k) for k in range(5)] for n in range(16)], dtype=np.int64)


def _pack(ranks: tuple[int, ...]) -> int:
    key = 0
    for r in ranks:
        key = key * 16 + r
    return key


def _pares_from_counts(counts: Counter[int]) -> tuple[int, int, int]:
    """(class, a, b) of a rank multiset from its rank counts (RULES.md §4.3)."""
    pairs = sorted((r for r, n in counts.items() if n == 2), reverse=True)
    if 4 in counts.values():                                    # four of a kind = two equal pairs
        r = next(r for r, n in counts.items() if n == 4)
        return 3, r, r
    if len(pairs) == 2:
        return 3, pairs[0], pairs[1]
    if 3 in counts.values():
        return 2, next(r for r, n in counts.items() if n == 3), 0
    if len(pairs) == 1:
        return 1, pairs[0], 0
    return 0, 0, 0


@dataclass(frozen=True, eq=False)
class HandTables:
    """Every per-multiset table of one variant (see the module docstring for the encodings)."""

    kings: int
    num_ranks: int
    rank_of_card: npt.NDArray[np.int8]         # (40,) rank of each card id
    value_of_card: npt.NDArray[np.int8]        # (40,) point value of each card id
    ranks: npt.NDArray[np.int8]                # (M, 4) the multiset, ranks ascending
    grande_key: npt.NDArray[np.int32]
    chica_key: npt.NDArray[np.int32]
    pares_class: npt.NDArray[np.int8]
    pares_key: npt.NDArray[np.int32]
    juego_points: npt.NDArray[np.int8]
    juego_rank: npt.NDArray[np.int8]
    punto_key: npt.NDArray[np.int8]
    pares_bonus: npt.NDArray[np.int8]
    juego_bonus: npt.NDArray[np.int8]
    strength: npt.NDArray[np.int32]            # (5, M) higher wins, per lance id
    index_of_desc_ranks: dict[tuple[int, ...], int]   # ranks sorted descending -> multiset index

    @property
    def size(self) -> int:
        """Number of rank multisets (330 with 8 kings, 715 with 4)."""
        return len(self.ranks)

    def hand_index(self, cards: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Multiset index of hands given as card ids, ``(..., 4)`` -> ``(...)``."""
        r = np.sort(self.rank_of_card[np.asarray(cards)], axis=-1)
        return multiset_index(r)


def _build(kings: int) -> HandTables:
    nr = num_ranks(kings)
    rank_of_card = rank_table(kings)
    value_of_card = value_table(kings)
    # The point value is a function of the rank in both variants; take it from the cards.
    value_of_rank = {rank_of_card[c]: value_of_card[c] for c in range(NUM_CARDS)}
    assert all(value_of_rank[rank_of_card[c]] == value_of_card[c] for c in range(NUM_CARDS))

    # Every multiset as an ascending tuple, placed at its own dense index.
    multisets = sorted(combinations_with_replacement(range(1, nr + 1), 4), key=lambda t: int(multiset_index(t)))
    m = len(multisets)
    ranks = np.array(multisets, dtype=np.int8)
    assert np.array_equal(multiset_index(ranks), np.arange(m)), "multiset_index must be a bijection onto 0..M-1"

    cols: dict[str, list[int]] = {name: [] for name in (
        "grande_key", "chica_key", "pares_class", "pares_key", "juego_points", "juego_rank",
        "punto_key", "pares_bonus", "juego_bonus")}
    for asc in multisets:
        counts = Counter(asc)
        cls, a, b = _pares_from_counts(counts)
        total = sum(value_of_rank[r] for r in asc)
        has_juego = total >= 31
        cols["grande_key"].append(_pack(tuple(reversed(asc))))
        cols["chica_key"].append(_pack(asc))
        cols["pares_class"].append(cls)
        cols["pares_key"].append(cls * 256 + a * 16 + b if cls else 0)
        cols["juego_points"].append(total)
        cols["juego_rank"].append(JUEGO_ORDER.index(total) + 1 if has_juego else 0)
        cols["punto_key"].append(0 if has_juego else total)
        cols["pares_bonus"].append(cls)                       # par 1, medias 2, duples 3
        cols["juego_bonus"].append((3 if total == 31 else 2) if has_juego else 0)

    def arr(name: str, dtype: type) -> np.ndarray:
        a = np.array(cols[name], dtype=dtype)
        a.setflags(write=False)
        return a

    t = {name: arr(name, np.int32 if name.endswith("key") and name != "punto_key" else np.int8) for name in cols}
    chica_max = 16 ** 4
    strength = np.stack([
        t["grande_key"].astype(np.int32),
        (chica_max - t["chica_key"]).astype(np.int32),        # lower chica key wins
        t["pares_key"].astype(np.int32),
        t["juego_rank"].astype(np.int32),
        t["punto_key"].astype(np.int32),
    ])
    strength.setflags(write=False)
    ranks.setflags(write=False)
    roc = np.array(rank_of_card, dtype=np.int8)
    voc = np.array(value_of_card, dtype=np.int8)
    roc.setflags(write=False)
    voc.setflags(write=False)
    return HandTables(
        kings=kings, num_ranks=nr, rank_of_card=roc, value_of_card=voc, ranks=ranks,
        strength=strength, index_of_desc_ranks={tuple(reversed(ms)): i for i, ms in enumerate(multisets)},
        **t,
    )


#: Tables of both variants, keyed by ``kings`` (8 or 4).
TABLES: dict[int, HandTables] = {8: _build(8), 4: _build(4)}


def get_tables(kings: int) -> HandTables:
    """The :class:`HandTables` of a variant (``kings`` 8 or 4)."""
    try:
        return TABLES[kings]
    except KeyError:
        raise ValueError(f"kings must be 8 or 4, got {kings!r}") from None


_SEVEN, _SOTA = 7, 10


def is_real31(cards: npt.ArrayLike, mode: str, kings: int = 8) -> npt.NDArray[np.bool_]:
    """Whether hands are a "31 real" under ``MusConfig.real31 = mode`` (RULES.md §1.2).

    Args:
        cards: ``(..., 4)`` card ids.
        mode: "off", "any10", "sota", "sota_oros" or "sota_4suits".
        kings: the variant (a 3 is a 10-point card only with 8 kings).

    Returns:
        ``(...)`` bool: three 7s plus a 10-point card (any10), a sota (sota), the sota of oros
        (sota_oros), or a sota plus 7s of the three other suits (sota_4suits).
    """
    c = np.asarray(cards)
    if mode == "off":
        return np.zeros(c.shape[:-1], dtype=bool)
    numbers = _NUMBER_OF_CARD[c]
    sevens = (numbers == _SEVEN).sum(axis=-1)
    others = np.where(numbers == _SEVEN, 0, c)                 # the one non-7 card (when sevens == 3)
    other = others.max(axis=-1)
    other_number = _NUMBER_OF_CARD[other]
    three_sevens = sevens == 3
    if mode == "any10":
        return three_sevens & (np.asarray(value_table(kings))[other] == 10)
    if mode == "sota":
        return three_sevens & (other_number == _SOTA)
    if mode == "sota_oros":
        return three_sevens & (other_number == _SOTA) & (other // 10 == 0)
    if mode == "sota_4suits":
        suits = c // 10
        all_suits = np.sort(suits, axis=-1) == np.arange(4)
        return three_sevens & (other_number == _SOTA) & all_suits.all(axis=-1)
    raise ValueError(f"real31 mode must be off, any10, sota, sota_oros or sota_4suits, got {mode!r}")


_NUMBER_OF_CARD = np.array([card_number(c) for c in range(NUM_CARDS)], dtype=np.int64)
_NUMBER_OF_CARD.setflags(write=False)
