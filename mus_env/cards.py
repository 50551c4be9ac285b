"""Cards of the Spanish 40-card deck: ids, names, ranks and point values (RULES.md §2).

Card id = ``suit * 10 + k`` with suit 0 oros, 1 copas, 2 espadas, 3 bastos and ``k`` indexing the
numbers ``[1, 2, 3, 4, 5, 6, 7, 10, 11, 12]`` (as, 2..7, sota, caballo, rey).

Names are one rank letter and an optional suit letter: ranks ``A 2 3 4 5 6 7 S C R`` (upper case),
suits ``o c e b`` (lower case), so ``"Rc"`` is the rey de copas and ``"RC"`` is a rey and a caballo.

Rank (grande, chica, pares) and point value (juego, punto) depend on the variant (``kings`` 8 or 4):
with 8 kings every 3 is a rey and every 2 an as for all purposes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "NUM_CARDS", "NUMBERS", "SUITS", "SUIT_NAMES", "RANK_CHARS",
    "card_id", "card_number", "card_suit", "card_rank", "card_value",
    "rank_table", "value_table", "num_ranks", "slot_order_key", "slot_positions", "sort_hand",
    "card_to_string", "hand_to_string", "ranks_to_string", "parse_card", "parse_cards", "parse_rank",
    "deck_from_hands",
]

NUM_CARDS = 40
#: Natural number of each k index (k = card id % 10).
NUMBERS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
#: Suit letters by suit index: oros, copas, espadas, bastos.
SUITS = ("o", "c", "e", "b")
SUIT_NAMES = ("oros", "copas", "espadas", "bastos")
#: Rank letter by k index.
RANK_CHARS = ("A", "2", "3", "4", "5", "6", "7", "S", "C", "R")
_K_OF_CHAR = {c: k for k, c in enumerate(RANK_CHARS)}

# RULES.md §2.2 and §2.3, one row per k index (A 2 3 4 5 6 7 S C R).
_RANK = {8: (1, 1, 8, 2, 3, 4, 5, 6, 7, 8), 4: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)}
_VALUE = {8: (1, 1, 10, 4, 5, 6, 7, 10, 10, 10), 4: (1, 2, 3, 4, 5, 6, 7, 10, 10, 10)}


def num_ranks(kings: int) -> int:
    """Number of distinct ranks: 8 with 8 kings, 10 with 4 kings."""
    return max(_RANK[kings])


def card_id(number: int, suit: int) -> int:
    """Card id of a natural number (1..7, 10, 11, 12) and suit index (0..3)."""
    if number not in NUMBERS:
        raise ValueError(
            f"card number must be one of {NUMBERS} (no 8 or 9 in the Spanish 40-card deck), got {number!r}")
    if suit not in (0, 1, 2, 3):
        raise ValueError(f"suit must be 0 oros, 1 copas, 2 espadas or 3 bastos, got {suit!r}")
    return suit * 10 + NUMBERS.index(number)


def _check_card(c: int) -> int:
    if isinstance(c, bool) or not isinstance(c, (int,)) and not hasattr(c, "__index__"):
        raise ValueError(f"a card id must be an int 0..39, got {c!r}")
    c = int(c)
    if not 0 <= c < NUM_CARDS:
        raise ValueError(f"a card id must be an int 0..39, got {c!r}")
    return c


def card_number(c: int) -> int:
    """Natural number printed on the card (1..7, 10, 11, 12)."""
    return NUMBERS[_check_card(c) % 10]


def card_suit(c: int) -> int:
    """Suit index 0 oros, 1 copas, 2 espadas, 3 bastos."""
    return _check_card(c) // 10


def card_rank(c: int, kings: int = 8) -> int:
    """Rank for grande, chica and pares (RULES.md §2.2); higher is better for grande."""
    return _RANK[kings][_check_card(c) % 10]


def card_value(c: int, kings: int = 8) -> int:
    """Point value for juego and punto (RULES.md §2.3)."""
    return _VALUE[kings][_check_card(c) % 10]


def rank_table(kings: int) -> tuple[int, ...]:
    """Rank of every card id 0..39 for the variant (a 40-tuple)."""
    return tuple(_RANK[kings][c % 10] for c in range(NUM_CARDS))


def value_table(kings: int) -> tuple[int, ...]:
    """Point value of every card id 0..39 for the variant (a 40-tuple)."""
    return tuple(_VALUE[kings][c % 10] for c in range(NUM_CARDS))


def slot_order_key(c: int, kings: int = 8) -> tuple[int, int, int, int]:
    """Sort key of RULES.md §9.2: rank desc, point value desc, natural number desc, suit asc."""
    k = c % 10
    return (-_RANK[kings][k], -_VALUE[kings][k], -NUMBERS[k], c // 10)


def slot_positions(kings: int = 8) -> tuple[int, ...]:
    """Place of every card id 0..39 in hand-slot order (0 = sorts first), for sorting hands as arrays."""
    order = sorted(range(NUM_CARDS), key=lambda c: slot_order_key(c, kings))
    return tuple(order.index(c) for c in range(NUM_CARDS))


def sort_hand(cards: Iterable[int], kings: int = 8) -> list[int]:
    """Cards in hand-slot order (slot 0 first), the order that discard masks refer to."""
    return sorted(cards, key=lambda c: slot_order_key(c, kings))


def card_to_string(c: int) -> str:
    """Short name, rank letter then suit letter: ``"Ro"``, ``"3c"``, ``"Ae"``."""
    c = _check_card(c)
    return RANK_CHARS[c % 10] + SUITS[c // 10]


def hand_to_string(cards: Iterable[int]) -> str:
    """Space-separated short names, e.g. ``"Ro 3c 7e Ab"``."""
    return " ".join(card_to_string(c) for c in cards)


def ranks_to_string(cards: Iterable[int]) -> str:
    """Rank letters only, e.g. ``"R37A"`` (the notation of RULES.md §11)."""
    return "".join(RANK_CHARS[_check_card(c) % 10] for c in cards)


def _tokens(text: str) -> list[tuple[int, int | None]]:
    """Split ``"RC7o A"`` into (k index, suit or None) tokens; spaces are ignored."""
    out: list[tuple[int, int | None]] = []
    i, s = 0, text.replace(" ", "").replace(",", "")
    while i < len(s):
        ch = s[i]
        if ch not in _K_OF_CHAR:
            raise ValueError(
                f"cannot parse card text {text!r}: {ch!r} at position {i} is not a rank letter "
                f"(ranks are {' '.join(RANK_CHARS)}; suits o c e b follow a rank in lower case)")
        suit = None
        if i + 1 < len(s) and s[i + 1] in SUITS:
            suit = SUITS.index(s[i + 1])
            i += 1
        out.append((_K_OF_CHAR[ch], suit))
        i += 1
    return out


_RANK_WORDS = {"as": 1, "rey": 12, "caballo": 11, "sota": 10, "pito": 1, "pitos": 1}


def parse_rank(text: str) -> int:
    """Natural number (1..7, 10, 11, 12) of a rank written as a letter or a Spanish word: ``"R"``, ``"3"``,
    ``"A"``, ``"As"``, ``"Rey"``, ``"Caballo"``, ``"Sota"`` (case-insensitive for words)."""
    t = text.strip()
    if t.lower() in _RANK_WORDS:
        return _RANK_WORDS[t.lower()]
    if len(t) == 1 and t in _K_OF_CHAR:
        return NUMBERS[_K_OF_CHAR[t]]
    raise ValueError(f"cannot parse rank {text!r}: use a letter {' '.join(RANK_CHARS)} or a word "
                     f"({', '.join(sorted(_RANK_WORDS))})")


def parse_card(text: str) -> int:
    """Card id of a name with its suit, e.g. ``parse_card("Ro") == 9``, ``parse_card("3c") == 12``."""
    toks = _tokens(text)
    if len(toks) != 1 or toks[0][1] is None:
        raise ValueError(f"parse_card expects one rank letter and one suit letter such as 'Ro' or '3c', got {text!r}")
    k, suit = toks[0]
    return suit * 10 + k


def parse_cards(text: str) -> list[int]:
    """Card ids of a string of names with suits, e.g. ``"Ro 3c 7e Ab"``."""
    toks = _tokens(text)
    if any(s is None for _, s in toks):
        raise ValueError(f"parse_cards needs a suit letter (o c e b) after every rank, got {text!r}")
    return [s * 10 + k for k, s in toks]


def deck_from_hands(hands: Sequence[str | None], stock: str | Sequence[int] | None = None) -> list[int]:
    """Build a 40-card deck for ``MusGame.from_deck`` from four hands written in RULES.md notation.

    Args:
        hands: four strings, by relative seat (0 = mano, 1, 2, 3 = postre), each four cards such as
            ``"R344"`` (suits chosen for you) or ``"Ro3c4e4b"`` (explicit suits), or None to fill that
            seat with unused cards.
        stock: optional cards to put first in the stock (a string of names or ids); the rest of the stock
            follows in ascending id order.

    Returns:
        A permutation of the 40 ids where ``deck[4 * j + s]`` is the j-th card of relative seat s.

    Raises:
        ValueError: a hand does not have four cards, or asks for a card more often than the deck has it.
    """
    if len(hands) != 4:
        raise ValueError(f"deck_from_hands needs four hands (None for 'any cards'), got {len(hands)}")
    used: set[int] = set()
    parsed: list[list[tuple[int, int | None]] | None] = []
    for seat, h in enumerate(hands):
        if h is None:
            parsed.append(None)
            continue
        toks = _tokens(h)
        if len(toks) != 4:
            raise ValueError(f"hand of relative seat {seat} must have 4 cards, got {len(toks)} in {h!r}")
        parsed.append(toks)

    def take(c: int) -> int:
        if c in used:
            raise ValueError(f"card {card_to_string(c)} is used twice in {list(hands)!r}")
        used.add(c)
        return c

    chosen: list[list[int | None]] = [[None] * 4 if p is None else [None] * len(p) for p in parsed]
    # Explicit suits first so that automatic suits never steal them.
    for seat, toks in enumerate(parsed):
        for j, (k, suit) in enumerate(toks or []):
            if suit is not None:
                chosen[seat][j] = take(suit * 10 + k)
    stock_ids: list[int] = []
    if stock is not None:
        ids = parse_cards(stock) if isinstance(stock, str) else [_check_card(c) for c in stock]
        stock_ids = [take(c) for c in ids]
    for seat, toks in enumerate(parsed):
        for j, (k, suit) in enumerate(toks or []):
            if suit is None:
                free = [s * 10 + k for s in range(4) if s * 10 + k not in used]
                if not free:
                    raise ValueError(f"rank {RANK_CHARS[k]} is asked for more than 4 times in {list(hands)!r}")
                chosen[seat][j] = take(free[0])
    rest = [c for c in range(NUM_CARDS) if c not in used]
    for seat in range(4):
        for j in range(4):
            if chosen[seat][j] is None:
                chosen[seat][j] = rest.pop(0)
                used.add(chosen[seat][j])
    deck = [chosen[s][j] for j in range(4) for s in range(4)]
    deck += stock_ids + [c for c in range(NUM_CARDS) if c not in used]
    assert sorted(deck) == list(range(NUM_CARDS))
    return deck
