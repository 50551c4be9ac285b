"""Counter-based shuffles shared by both engines: deals and reshuffles as pure functions of a seed.

Every random event of a Mus game (the deal of each hand, each reshuffle of the discard pile when the
stock runs out, §3.4, and the first mano) is a deterministic function of the game's ``seed`` and its
position in the game (hand number, reshuffle number). Each card gets a 64-bit hash key and the cards
are ordered by key, which is a uniformly random order for independent keys. Because nothing depends
on an RNG stream that other events advance, ``MusGame`` and ``VectorMusEnv`` produce the same decks
and reshuffles for the same seed, and the differential test covers reshuffles and later hands too.

All functions take numpy arrays and broadcast, so the batched engine calls them for many tables at once.

Where the cards of :class:`~mus_env.game.MusGame` come from is a *card source* (:class:`CardSource`): an object
with ``deal(hand_number)`` and ``reshuffle(hand_number, reshuffle_number, cards)``. The default,
:class:`SeededCards`, is these seeded functions; a caller that must fix the cards of later hands passes its own
with ``MusGame(config, cards=...)``. A caller that draws every card itself (the chance nodes of
:mod:`mus_env.adapters.openspiel`) uses ``MusGame(config, explicit_chance=True)`` and ``apply_chance`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["table_seeds", "card_keys", "deal_decks", "reshuffle_order", "first_mano", "normalize_seed", "check_seed",
           "random_seed", "MAX_SEED", "event_hash", "STREAM_DEAL", "STREAM_RESHUFFLE", "STREAM_MANO", "STREAM_TABLE",
           "STREAM_SIGNAL", "SPLITMIX_GOLDEN", "SPLITMIX_M1", "SPLITMIX_M2", "CardSource", "SeededCards"]

_MASK64 = (1 << 64) - 1
#: The largest game seed: seeds are 64-bit unsigned ints, 0..2**64 - 1 (:func:`check_seed`).
MAX_SEED = _MASK64
#: SplitMix64's constants (Steele, Lea and Flood 2014): the increment (the golden ratio), the two multipliers. The
#: batched kernel uses these very numbers (as uint64) for the same hash.
SPLITMIX_GOLDEN, SPLITMIX_M1, SPLITMIX_M2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_GOLDEN, _M1, _M2 = np.uint64(SPLITMIX_GOLDEN), np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)

# Streams: one per kind of random event, so that they never share keys.
STREAM_DEAL, STREAM_RESHUFFLE, STREAM_MANO, STREAM_TABLE = 1, 2, 3, 4
#: Sign interceptions (mus_env.signals.intercept_uniform).
STREAM_SIGNAL = 5
_CARDS = np.arange(40, dtype=np.uint64)


def _mix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64 finaliser (wrapping uint64 arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


def normalize_seed(seed: int) -> int:
    """Any Python int (negative or huge) reduced to a 64-bit unsigned seed."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int (or None for a random one), got {seed!r}")
    return int(seed) & _MASK64


def check_seed(seed: int, name: str = "seed") -> int:
    """``seed`` as a Python int if it is an int in ``0..2**64 - 1`` (the engines' game seeds); else ValueError.

    Unlike :func:`normalize_seed` nothing wraps: ``2**64`` would deal the game of ``0``, ``-1`` that of
    ``2**64 - 1``, so both are refused.
    """
    if seed.__class__ is int and 0 <= seed <= _MASK64:        # the common case, in one test
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= _MASK64:
        text = repr(seed) if len(repr(seed)) <= 40 else repr(seed)[:37] + "..."
        hint = " (or None for a random one)" if name == "seed" else ""
        raise ValueError(f"{name} must be an int in 0..2**64 - 1{hint}, got {text}")
    return int(seed)


def random_seed() -> int:
    """A fresh 63-bit seed from the operating system's entropy."""
    return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0]) & ((1 << 63) - 1)


def _mix_int(x: int) -> int:
    """:func:`_mix` on one Python int (bit-identical; cheaper than numpy for a scalar)."""
    x = (x + SPLITMIX_GOLDEN) & _MASK64
    x = ((x ^ (x >> 30)) * SPLITMIX_M1) & _MASK64
    x = ((x ^ (x >> 27)) * SPLITMIX_M2) & _MASK64
    return x ^ (x >> 31)


def event_hash(seed: npt.ArrayLike, stream: int, a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """The 64-bit hash of one random event: ``mix(mix(mix(mix(seed) ^ stream) ^ a) ^ (b << 32))`` (SplitMix64).

    Args:
        seed: the game's seed (uint64; arrays broadcast).
        stream: the kind of event (``STREAM_DEAL`` ... ``STREAM_SIGNAL``).
        a: the event's first coordinate (the hand number, for a deal or a reshuffle).
        b: the event's second coordinate (0 for a deal; the reshuffle number for a reshuffle).

    Returns:
        ``np.uint64`` (an array of them for array arguments); Python ints give the same value as arrays.
    """
    if type(seed) is int and type(a) is int and type(b) is int:
        h = _mix_int(_mix_int(_mix_int(_mix_int(seed & _MASK64) ^ stream) ^ (a & _MASK64)) ^ ((b << 32) & _MASK64))
        return np.uint64(h)
    with np.errstate(over="ignore"):
        h = _mix(np.asarray(seed, dtype=np.uint64))
        h = _mix(h ^ np.uint64(stream))
        h = _mix(h ^ np.asarray(a, dtype=np.uint64))
        return _mix(h ^ (np.asarray(b, dtype=np.uint64) << np.uint64(32)))


def card_keys(seed: npt.ArrayLike, stream: int, a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """``(..., 40)`` hash keys of the 40 cards for the event (seed, stream, a, b), broadcast over ``(...)``."""
    h = event_hash(seed, stream, a, b)
    with np.errstate(over="ignore"):
        return _mix(h[..., None] ^ (_CARDS * _GOLDEN))


def deal_decks(seed: npt.ArrayLike, hand_number: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """``(..., 40)`` deck of each hand: a uniformly random permutation of the card ids."""
    # the 40 keys of a deck are distinct (64-bit hashes), so every sort algorithm gives the same order
    return np.argsort(card_keys(seed, STREAM_DEAL, hand_number, 0), axis=-1).astype(np.int8)


def reshuffle_order(seed: int, hand_number: int, reshuffle_number: int, cards: list[int]) -> list[int]:
    """The new stock made from ``cards`` at the ``reshuffle_number``-th reshuffle of a hand (§3.4).

    The order depends on the set of cards only (not on their order in the discard pile).
    """
    keys = card_keys(seed, STREAM_RESHUFFLE, hand_number, reshuffle_number)
    return sorted(cards, key=lambda c: int(keys[c]))


def first_mano(seed: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Mano of the first hand when ``first_mano="random"``: a seat 0..3 derived from the seed."""
    return (event_hash(seed, STREAM_MANO, 0, 0) % np.uint64(4)).astype(np.int64)


def table_seeds(seed: int, table: npt.ArrayLike, episode: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """Game seeds of a batched engine: one per (table index, episode number), derived from its ``seed``."""
    return event_hash(np.uint64(normalize_seed(seed)), STREAM_TABLE, table, episode)


@runtime_checkable
class CardSource(Protocol):
    """Where a :class:`~mus_env.game.MusGame` gets its cards: each hand's deck and each reshuffle's new stock.

    The engine calls ``deal`` once per hand (the first hand included) and ``reshuffle`` each time the stock runs
    out while replacement cards are served (RULES.md §3.4), nothing else; it checks what a source other than
    :class:`SeededCards` returns (a ``ValueError`` naming the source otherwise).
    """

    def deal(self, hand_number: int) -> Sequence[int]:
        """The deck of hand ``hand_number`` (0 = first): a permutation of the 40 card ids; ``deck[i]`` for
        ``i < 16`` goes to relative seat ``i % 4`` (0 = mano), the stock is ``deck[16:]``, drawn from the front."""
        ...

    def reshuffle(self, hand_number: int, reshuffle_number: int, cards: list[int]) -> list[int]:
        """The new stock made from ``cards`` (the discard pile the reshuffle takes, RULES.md §3.4) at the
        ``reshuffle_number``-th reshuffle of hand ``hand_number``: a permutation of ``cards``, next card first."""
        ...


class SeededCards:
    """The default card source of a game of seed ``seed``: :func:`deal_decks` and :func:`reshuffle_order`, so
    ``MusGame(config, seed)`` deals the same cards as ``VectorMusEnv`` for the same game seed.

    Example:
        >>> SeededCards(7).deal(0) == deal_decks(7, 0).tolist()
        True
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def deal(self, hand_number: int) -> list[int]:
        """``deal_decks(seed, hand_number)`` as a list."""
        return deal_decks(self.seed, hand_number).tolist()

    def reshuffle(self, hand_number: int, reshuffle_number: int, cards: list[int]) -> list[int]:
        """``reshuffle_order(seed, hand_number, reshuffle_number, cards)``."""
        return reshuffle_order(self.seed, hand_number, reshuffle_number, cards)

    def __repr__(self) -> str:
        return f"SeededCards({self.seed})"
