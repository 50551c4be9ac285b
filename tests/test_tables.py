"""The hand tables, card names and action names against the rulebook-literal functions of ``rulebook.py``.

Entry by entry, for both variants: every value of ``mus_env.tables`` equals the slow function written from
RULES.md, and every integer key orders the rank multisets exactly as the rulebook's tuple keys do (the sign of
the difference of every pair). Plus exact enumeration facts over all C(40, 4) hands (DESIGN/STYLE §11).
"""

from __future__ import annotations

from itertools import combinations, combinations_with_replacement
from math import comb

import numpy as np
import pytest
import rulebook as rb

from mus_env import NUM_ACTIONS, Action, MusConfig, action_to_string, string_to_action
from mus_env import cards as mc
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, get_tables, is_real31, multiset_index

VARIANTS = [8, 4]
EXPECTED_SIZE = {8: 330, 4: 715}   # C(8 + 3, 4), C(10 + 3, 4)
NUM_RANKS = {8: 8, 4: 10}


# ----------------------------------------------------------------------------------------------------------
# shared fixtures


@pytest.fixture(scope="module")
def all_hands() -> np.ndarray:
    """Every 4-card hand of the 40-card deck, (91390, 4)."""
    hands = np.array(list(combinations(range(40), 4)), dtype=np.int64)
    assert len(hands) == comb(40, 4) == 91_390
    return hands


def _number_multiset_representatives() -> list[list[int]]:
    """One card hand for each multiset of natural numbers (715), suits given in order of appearance."""
    reps = []
    for ks in combinations_with_replacement(range(10), 4):
        seen: dict[int, int] = {}
        hand = []
        for k in ks:
            s = seen.get(k, 0)
            seen[k] = s + 1
            hand.append(s * 10 + k)
        reps.append(hand)
    return reps


REPS = _number_multiset_representatives()


def _none_low(key):
    """Sort key placing None (does not take part) below every real key."""
    return (0,) if key is None else (1, key)


def _rulebook_rows(kings: int, real31: str = "off") -> dict[int, dict]:
    """Rulebook values per table index (checking that all hands mapped to one index agree)."""
    t = get_tables(kings)
    rows: dict[int, dict] = {}
    for hand in REPS:
        i = int(t.hand_index(hand))
        row = {
            "ranks": tuple(sorted(rb.ranks(hand, kings))),
            "grande": rb.grande_key(hand, kings),
            "chica": rb.chica_key(hand, kings),
            "pares_class": rb.pares_class(hand, kings),
            "pares": rb.pares_key(hand, kings),
            "pares_bonus": rb.pares_bonus(hand, kings),
            "total": rb.total(hand, kings),
            "juego": rb.juego_key(hand, kings),
            "juego_bonus": rb.juego_bonus(hand, kings),
            "punto": rb.punto_key(hand, kings),
        }
        if i in rows:
            assert rows[i] == row, f"hands {hand} and another hand share table index {i} but differ in the rules"
        rows[i] = row
    return rows


# ----------------------------------------------------------------------------------------------------------
# multiset_index and table layout


@pytest.mark.parametrize("kings", VARIANTS)
def test_multiset_index_is_a_bijection(kings: int) -> None:
    nr = NUM_RANKS[kings]
    multisets = np.array(list(combinations_with_replacement(range(1, nr + 1), 4)))
    assert len(multisets) == EXPECTED_SIZE[kings]
    idx = multiset_index(multisets)
    assert idx.shape == (len(multisets),)
    assert sorted(idx.tolist()) == list(range(EXPECTED_SIZE[kings]))
    # Broadcasts over leading axes.
    assert np.array_equal(multiset_index(multisets.reshape(-1, 5, 4)).ravel(), idx)
    t = get_tables(kings)
    assert t.size == EXPECTED_SIZE[kings]
    assert t.num_ranks == nr
    # The table's multiset of index i is the one multiset_index sends to i.
    assert np.array_equal(multiset_index(t.ranks), np.arange(t.size))
    assert np.all(np.diff(t.ranks, axis=1) >= 0)


@pytest.mark.parametrize("kings", VARIANTS)
def test_card_rank_and_value_tables_match_rules(kings: int) -> None:
    t = get_tables(kings)
    for c in range(40):
        assert t.rank_of_card[c] == rb.RANK[kings][rb.number(c)], c
        assert t.value_of_card[c] == rb.VALUE[kings][rb.number(c)], c
        assert mc.card_rank(c, kings) == rb.RANK[kings][rb.number(c)]
        assert mc.card_value(c, kings) == rb.VALUE[kings][rb.number(c)]
        assert mc.card_number(c) == rb.number(c)
        assert mc.card_suit(c) == rb.suit(c)


@pytest.mark.parametrize("kings", VARIANTS)
def test_hand_index_ignores_suits_and_covers_every_multiset(kings: int, all_hands: np.ndarray) -> None:
    t = get_tables(kings)
    idx = t.hand_index(all_hands)
    assert idx.shape == (len(all_hands),)
    assert set(np.unique(idx).tolist()) == set(range(t.size))
    # Each hand's index equals the index of its natural-number multiset's representative.
    numbers = np.sort(all_hands % 10, axis=1)
    code = numbers @ np.array([1000, 100, 10, 1])
    rep_code = {int(np.sort(np.array(h) % 10) @ np.array([1000, 100, 10, 1])): int(t.hand_index(h)) for h in REPS}
    expected = np.array([rep_code[int(c)] for c in code])
    assert np.array_equal(idx, expected)
    # Order of the cards in the hand does not matter.
    assert np.array_equal(t.hand_index(all_hands[:, ::-1]), idx)


# ----------------------------------------------------------------------------------------------------------
# values, entry by entry


@pytest.mark.parametrize("kings", VARIANTS)
def test_table_values_equal_rulebook(kings: int) -> None:
    t = get_tables(kings)
    rows = _rulebook_rows(kings)
    assert sorted(rows) == list(range(t.size))
    for i, row in rows.items():
        assert tuple(t.ranks[i].tolist()) == row["ranks"], i
        assert t.pares_class[i] == row["pares_class"], (i, row)
        assert t.pares_bonus[i] == row["pares_bonus"], (i, row)
        assert t.juego_points[i] == row["total"], (i, row)
        assert t.juego_bonus[i] == row["juego_bonus"], (i, row)
        assert (t.juego_rank[i] > 0) == (row["juego"] is not None), (i, row)
        assert (t.pares_key[i] > 0) == (row["pares"] is not None), (i, row)
        expected_punto = 0 if row["punto"] is None else row["punto"]
        assert t.punto_key[i] == expected_punto, (i, row)


@pytest.mark.parametrize("kings", VARIANTS)
def test_table_values_on_every_hand(kings: int, all_hands: np.ndarray) -> None:
    """The lookups through hand_index agree with the rulebook on all 91,390 real hands."""
    t = get_tables(kings)
    idx = t.hand_index(all_hands)
    by_numbers = {}
    for h in REPS:
        key = tuple(sorted(c % 10 for c in h))
        by_numbers[key] = (rb.pares_class(h, kings), rb.total(h, kings), rb.pares_bonus(h, kings),
                           rb.juego_bonus(h, kings))
    expected = np.array([by_numbers[tuple(sorted(int(c) % 10 for c in h))] for h in all_hands])
    assert np.array_equal(t.pares_class[idx], expected[:, 0])
    assert np.array_equal(t.juego_points[idx], expected[:, 1])
    assert np.array_equal(t.pares_bonus[idx], expected[:, 2])
    assert np.array_equal(t.juego_bonus[idx], expected[:, 3])


@pytest.mark.parametrize("kings", VARIANTS)
def test_totals_range(kings: int) -> None:
    """§2.3: totals lie in 4..40 and 38, 39 never occur."""
    totals = {rb.total(h, kings) for h in REPS}
    assert min(totals) >= 4 and max(totals) == 40
    assert 38 not in totals and 39 not in totals
    assert set(get_tables(kings).juego_points.tolist()) == totals


# ----------------------------------------------------------------------------------------------------------
# orders: integer keys vs tuple keys, all pairs


def _dense_rank(keys: list) -> np.ndarray:
    """Dense integer rank of tuple keys (equal keys -> equal rank), None lowest."""
    distinct = sorted({_none_low(k) for k in keys})
    pos = {k: r for r, k in enumerate(distinct)}
    return np.array([pos[_none_low(k)] for k in keys], dtype=np.int64)


def _assert_same_order(int_key: np.ndarray, tuple_rank: np.ndarray, what: str, flip: bool = False) -> None:
    a = np.asarray(int_key, dtype=np.int64)
    got = np.sign(a[:, None] - a[None, :])
    want = np.sign(tuple_rank[:, None] - tuple_rank[None, :])
    if flip:
        want = -want
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{what}: {len(bad)} pairs ordered differently, first {bad[0].tolist()}"


@pytest.mark.parametrize("kings", VARIANTS)
def test_integer_keys_order_like_tuple_keys(kings: int) -> None:
    t = get_tables(kings)
    rows = _rulebook_rows(kings)
    order = [rows[i] for i in range(t.size)]
    grande = _dense_rank([r["grande"] for r in order])
    chica = _dense_rank([r["chica"] for r in order])
    pares = _dense_rank([r["pares"] for r in order])
    juego = _dense_rank([r["juego"] for r in order])
    punto = _dense_rank([r["punto"] for r in order])
    # grande: one distinct key per multiset; chica likewise.
    assert len(set(grande.tolist())) == t.size and len(set(chica.tolist())) == t.size
    _assert_same_order(t.grande_key, grande, "grande_key")
    _assert_same_order(t.chica_key, chica, "chica_key (lower wins in both)")
    _assert_same_order(t.pares_key, pares, "pares_key")
    _assert_same_order(t.juego_rank, juego, "juego_rank")
    _assert_same_order(t.punto_key, punto, "punto_key")
    # strength: one "higher wins" integer per lance.
    _assert_same_order(t.strength[GRANDE], grande, "strength[GRANDE]")
    _assert_same_order(t.strength[CHICA], chica, "strength[CHICA]", flip=True)
    _assert_same_order(t.strength[PARES], pares, "strength[PARES]")
    _assert_same_order(t.strength[JUEGO], juego, "strength[JUEGO]")
    _assert_same_order(t.strength[PUNTO], punto, "strength[PUNTO]")


def test_rulebook_examples_from_rules() -> None:
    """A few keys of RULES.md §11 (E1, E3, E4, E10), to pin the rulebook module itself."""
    def h(text: str) -> list[int]:
        out, used = [], set()
        for ch in text:
            n = {"A": 1, "S": 10, "C": 11, "R": 12}.get(ch) or int(ch)
            c = next(s * 10 + rb.NUMBERS.index(n) for s in range(4) if s * 10 + rb.NUMBERS.index(n) not in used)
            used.add(c)
            out.append(c)
        return out

    assert rb.grande_key(h("R344")) == (8, 8, 2, 2)
    assert rb.grande_key(h("RCCC")) == (8, 7, 7, 7)
    assert rb.grande_key(h("R344"), 4) == (10, 4, 4, 3)
    assert rb.chica_key(h("A456")) == (1, 2, 3, 4) and rb.chica_key(h("2A47")) == (1, 1, 2, 5)
    assert rb.pares_key(h("CCC5")) == (2, 7) and rb.pares_key(h("AAAR")) == (2, 1)
    assert rb.pares_key(h("RRAA")) == (3, 8, 1) and rb.pares_key(h("CCCC")) == (3, 7, 7)
    assert rb.pares_key(h("R32A")) == (3, 8, 1)
    assert rb.pares_key(h("33RA")) == (2, 8) and rb.total(h("33RA")) == 31
    assert rb.pares_key(h("33RA"), 4) == (1, 3) and rb.total(h("33RA"), 4) == 17
    assert rb.total(h("RC76")) == 33 and rb.total(h("RCS3")) == 40 and rb.total(h("A456")) == 16


# ----------------------------------------------------------------------------------------------------------
# exact enumeration facts (8 kings), computed with the tables


def test_exact_enumeration_facts_8_kings(all_hands: np.ndarray) -> None:
    t = get_tables(8)
    idx = t.hand_index(all_hands)
    n = len(all_hands)

    def pct(mask: np.ndarray) -> float:
        return round(100.0 * int(mask.sum()) / n, 3)

    assert pct(t.pares_class[idx] > 0) == 56.582
    assert pct(t.juego_points[idx] >= 31) == 26.747
    assert pct(t.juego_points[idx] == 31) == 9.174
    assert pct(t.pares_class[idx] == 3) == 3.814
    # juego_rank / juego_bonus agree with the totals on every hand.
    assert np.array_equal(t.juego_rank[idx] > 0, t.juego_points[idx] >= 31)
    assert np.array_equal(t.juego_bonus[idx] == 3, t.juego_points[idx] == 31)


# ----------------------------------------------------------------------------------------------------------
# 31 real


def _c(name: str) -> int:
    return mc.parse_card(name)


@pytest.mark.parametrize(("hand", "expected"), [
    # hand                  off    any10  sota   sota_oros sota_4suits
    ("7o 7c 7e Sb",        (False, True, True, False, True)),
    ("7c 7e 7b So",        (False, True, True, True, True)),
    ("7o 7c 7e So",        (False, True, True, True, False)),
    ("7o 7c 7e Rb",        (False, True, False, False, False)),
    ("7o 7c 7b Ce",        (False, True, False, False, False)),
    ("7o 7c 7e 3b",        (False, True, False, False, False)),   # 3 is a 10-point card with 8 kings
    ("7o 7c Sb So",        (False, False, False, False, False)),
    ("7o 7c 7e 7b",        (False, False, False, False, False)),
    ("Ro Co Sb Ab",        (False, False, False, False, False)),  # an ordinary 31
    ("7o 7c 7e 4b",        (False, False, False, False, False)),
])
def test_is_real31_hand_built(hand: str, expected: tuple[bool, ...]) -> None:
    cards = mc.parse_cards(hand)
    for mode, want in zip(rb.REAL31_MODES, expected, strict=True):
        assert bool(is_real31(cards, mode, 8)) is want, (hand, mode)
        assert rb.is_real31(cards, mode, 8) is want, (hand, mode)


def test_is_real31_four_kings_three_is_not_ten() -> None:
    cards = mc.parse_cards("7o 7c 7e 3b")
    assert not bool(is_real31(cards, "any10", 4))
    assert bool(is_real31(mc.parse_cards("7o 7c 7e Rb"), "any10", 4))
    assert bool(is_real31(mc.parse_cards("7o 7c 7e Sb"), "sota_4suits", 4))


@pytest.mark.parametrize("kings", VARIANTS)
def test_is_real31_matches_rulebook_on_all_hands(kings: int, all_hands: np.ndarray) -> None:
    three_sevens = [list(s) + [c] for s in combinations([6, 16, 26, 36], 3) for c in range(40) if c % 10 != 6]
    for mode in rb.REAL31_MODES:
        got = is_real31(np.array(three_sevens), mode, kings)
        want = np.array([rb.is_real31(h, mode, kings) for h in three_sevens])
        assert np.array_equal(got, want), mode
        # Vectorised over every hand: a real needs three 7s, so nothing else qualifies.
        everywhere = is_real31(all_hands, mode, kings)
        sevens = (all_hands % 10 == 6).sum(axis=1)
        assert not np.any(everywhere & (sevens != 3)), mode
        assert int(everywhere.sum()) == int(want.sum()), mode
    with pytest.raises(ValueError, match="real31"):
        is_real31(three_sevens[0], "bogus", kings)


# ----------------------------------------------------------------------------------------------------------
# cards: parsing and printing


def test_card_id_encoding_and_names() -> None:
    # §2.1: id = suit*10 + k, k indexes [1..7, 10, 11, 12].
    assert mc.parse_card("Ro") == 0 * 10 + rb.NUMBERS.index(12) == 9
    assert mc.parse_card("3c") == 1 * 10 + rb.NUMBERS.index(3) == 12
    assert mc.parse_card("Ae") == 20 and mc.parse_card("Sb") == 37
    for c in range(40):
        assert mc.card_id(rb.number(c), rb.suit(c)) == c
        name = mc.card_to_string(c)
        assert mc.parse_card(name) == c
        assert len(name) == 2 and name[1] == "oceb"[rb.suit(c)]
    assert len({mc.card_to_string(c) for c in range(40)}) == 40


def test_hand_strings_round_trip() -> None:
    deck = list(range(40))
    for start in range(0, 40, 4):
        hand = deck[start:start + 4][::-1]
        text = mc.hand_to_string(hand)
        assert mc.parse_cards(text) == hand
        assert mc.parse_cards(text.replace(" ", "")) == hand
        assert len(mc.ranks_to_string(hand)) == 4
    assert mc.parse_cards(mc.hand_to_string(deck)) == deck
    assert mc.ranks_to_string(mc.parse_cards("Ro 3c 7e Ab")) == "R37A"


@pytest.mark.parametrize("bad", ["X", "R", "Rx", "", "RoC", "8o", "ro"])
def test_parse_card_rejects_bad_text(bad: str) -> None:
    with pytest.raises(ValueError):
        mc.parse_card(bad)


@pytest.mark.parametrize("bad", [-1, 40, 1.5, "Ro", True])
def test_card_functions_reject_bad_ids(bad) -> None:
    with pytest.raises(ValueError):
        mc.card_to_string(bad)


def test_parse_cards_needs_suits() -> None:
    with pytest.raises(ValueError):
        mc.parse_cards("Ro 3")
    with pytest.raises(ValueError):
        mc.card_id(8, 0)
    with pytest.raises(ValueError):
        mc.card_id(1, 4)


@pytest.mark.parametrize("kings", VARIANTS)
def test_sort_hand_is_rules_slot_order(kings: int, all_hands: np.ndarray) -> None:
    for h in all_hands[::37].tolist():
        assert mc.sort_hand(h, kings) == rb.slot_sort(h, kings)
        assert mc.sort_hand(h[::-1], kings) == rb.slot_sort(h, kings)
    # §9.2: under 8 kings R before 3 and 2 before A.
    assert mc.ranks_to_string(mc.sort_hand(mc.parse_cards("3o Ro Ac 2c"), 8)) == "R32A"


def test_deck_from_hands() -> None:
    deck = mc.deck_from_hands(["R344", "RCCC", None, "Rb3c4e4b"])
    assert sorted(deck) == list(range(40))
    hands = [[deck[4 * j + s] for j in range(4)] for s in range(4)]
    assert sorted(rb.number(c) for c in hands[0]) == [3, 4, 4, 12]
    assert sorted(rb.number(c) for c in hands[1]) == [11, 11, 11, 12]
    assert hands[3] == mc.parse_cards("Rb 3c 4e 4b")
    with pytest.raises(ValueError):
        mc.deck_from_hands(["RRRRR", None, None, None])
    with pytest.raises(ValueError):
        mc.deck_from_hands(["RRRR", "RRRR", "RRRR", None])   # only 4 reyes
    with pytest.raises(ValueError):
        mc.deck_from_hands([None, None, None])


# ----------------------------------------------------------------------------------------------------------
# actions


def test_action_ids_are_those_of_rules() -> None:
    """RULES.md §9.1."""
    assert NUM_ACTIONS == 31
    assert (Action.MUS, Action.NO_MUS, Action.PASO) == (0, 1, 18)
    assert [Action[f"DISCARD_{m}"] for m in range(16)] == list(range(2, 18))
    assert (Action.ENVIDO_2, Action.ENVIDO_3, Action.ENVIDO_4, Action.ENVIDO_5, Action.ENVIDO_10) == (
        19, 20, 21, 22, 23)
    assert (Action.QUIERO, Action.NO_QUIERO, Action.ORDAGO) == (24, 25, 26)
    assert (Action.PARES_SI, Action.PARES_NO, Action.JUEGO_SI, Action.JUEGO_NO) == (27, 28, 29, 30)


@pytest.mark.parametrize("config", [MusConfig(), MusConfig(bet_sizes=(2, 4, 6, 8, 20))], ids=["default", "sizes"])
def test_action_string_round_trip(config: MusConfig) -> None:
    names = set()
    for a in range(NUM_ACTIONS):
        name = action_to_string(a, config)
        names.add(name)
        assert string_to_action(name, config) == a
        assert string_to_action(name.lower(), config) == a
        assert isinstance(action_to_string(a, config, words=True), str)
    assert len(names) == NUM_ACTIONS
    for i, k in enumerate(config.bet_sizes):
        assert action_to_string(19 + i, config) == f"ENVIDO_{k}"


@pytest.mark.parametrize("bad", [-1, 31, 999, 1.5, True, "0", None])
def test_action_to_string_rejects_bad_ids(bad) -> None:
    with pytest.raises(ValueError):
        action_to_string(bad)


@pytest.mark.parametrize("bad", ["", "FOO", "ENVIDO_7", "ENVIDO_x", "DISCARD_16"])
def test_string_to_action_rejects_bad_names(bad: str) -> None:
    with pytest.raises(ValueError):
        string_to_action(bad)


def test_parse_rank_letters_and_words() -> None:
    from mus_env.cards import parse_rank

    assert [parse_rank(t) for t in ("R", "3", "A", "As", "rey", "Caballo", "SOTA", "7")] == [12, 3, 1, 1, 12, 11, 10, 7]
    with pytest.raises(ValueError, match="cannot parse rank"):
        parse_rank("8")
