"""Property tests (hypothesis): lance orders, seat tie rule, score monotonicity, card conservation.

Deals are hypothesis-chosen permutations given to ``MusGame.from_deck``, and games are driven by
hypothesis-chosen indices into ``legal_actions()``, so every failure shrinks to a small deal and action list.
Expected lance winners come from the rulebook-literal functions of ``rulebook.py``.
"""

from __future__ import annotations

import numpy as np
import rulebook as rb
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mus_env import Action, MusConfig, MusGame, Phase
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, get_tables

LANCE_IDS = {rb.GRANDE: GRANDE, rb.CHICA: CHICA, rb.PARES: PARES, rb.JUEGO: JUEGO, rb.PUNTO: PUNTO}
ALL_LANCES = (rb.GRANDE, rb.CHICA, rb.PARES, rb.JUEGO, rb.PUNTO)
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


def profile(max_examples: int) -> settings:
    """Hypothesis settings of these tests: no deadline (games vary in length), ``max_examples`` examples."""
    return settings(max_examples=max_examples, deadline=None, suppress_health_check=_HEALTH)


# Hands worth planting so that ties and 31 reals show up often (the rest of the deck is random).
SPECIAL_HANDS = [
    [6, 16, 26, 37],     # 7o 7c 7e Sb: a 31 real in every mode but sota_oros
    [16, 26, 36, 7],     # 7c 7e 7b So: a 31 real in every mode
    [6, 16, 36, 9],      # 7o 7c 7b Ro: real only for any10
    [9, 18, 27, 0],      # Ro Cc Se Ao: an ordinary 31
    [19, 38, 17, 30],    # Rc Cb Sc Ab: another ordinary 31 (ties the previous one everywhere)
    [2, 12, 3, 13],      # 3o 3c 4o 4c: duples, 3s are kings with 8 kings
    [22, 32, 23, 33],    # 3e 3b 4e 4b: same ranks as the previous one
]


@st.composite
def deals(draw, plant: bool = True) -> list[int]:
    """A deck (permutation of 0..39); sometimes with special hands planted at random relative seats."""
    perm = draw(st.permutations(list(range(40))))
    if not plant or not draw(st.booleans()):
        return list(perm)
    specials = draw(st.lists(st.sampled_from(SPECIAL_HANDS), min_size=1, max_size=3))
    seats = draw(st.permutations([0, 1, 2, 3]))
    hands: list[list[int] | None] = [None] * 4
    used: set[int] = set()
    for seat, hand in zip(seats, specials, strict=False):
        if used.isdisjoint(hand):
            hands[seat] = list(hand)
            used.update(hand)
    rest = [c for c in perm if c not in used]
    for seat in range(4):
        if hands[seat] is None:
            hands[seat] = [rest.pop(0) for _ in range(4)]
    deck = [hands[s][j] for j in range(4) for s in range(4)] + rest
    assert sorted(deck) == list(range(40))
    return deck


def relative_hands(deck: list[int]) -> list[list[int]]:
    """Hands by relative seat: deck[i] for i < 16 goes to relative seat i % 4 (DESIGN, from_deck)."""
    return [[deck[4 * j + s] for j in range(4)] for s in range(4)]


def deck_of(hands: list[list[int]], rest: list[int]) -> list[int]:
    return [hands[s][j] for j in range(4) for s in range(4)] + list(rest)


def beats(lance: str, key_p, key_q, p: int, q: int) -> bool:
    """Seat p beats seat q for the lance: strictly better key, or equal key and lower relative seat (§2.4)."""
    if key_p == key_q:
        return p < q
    return key_p < key_q if lance == rb.CHICA else key_p > key_q


# ----------------------------------------------------------------------------------------------------------
# lance orders


@profile(150)
@given(deck=deals(), kings=st.sampled_from([8, 4]), sigma=st.permutations([0, 1, 2, 3]))
def test_lances_are_total_orders_with_the_mano_tie_rule(deck: list[int], kings: int, sigma: list[int]) -> None:
    hands = relative_hands(deck)
    t = get_tables(kings)
    idx = [int(t.hand_index(h)) for h in hands]
    for lance in ALL_LANCES:
        keys = [rb.lance_key(h, lance, kings) for h in hands]
        elig = [p for p in range(4) if keys[p] is not None]
        # Exactly one eligible seat beats every other eligible seat.
        winners = [p for p in elig if all(beats(lance, keys[p], keys[q], p, q) for q in elig if q != p)]
        assert len(winners) == (1 if elig else 0), (lance, keys)
        w = rb.lance_winner(hands, lance, kings)
        assert winners == ([w] if elig else [])
        # The tables agree: the first maximum of the strength over eligible seats.
        if elig:
            strength = [int(t.strength[LANCE_IDS[lance]][i]) for i in idx]
            best = max(strength[p] for p in elig)
            assert min(p for p in elig if strength[p] == best) == w, (lance, strength, keys)
        # Permute which relative seat holds which hand: the winning hand moves with it, ties go to the lowest seat.
        moved = [hands[sigma[p]] for p in range(4)]
        w2 = rb.lance_winner(moved, lance, kings)
        if not elig:
            assert w2 is None
            continue
        best_key = keys[w]
        tied = [p for p in range(4) if rb.lance_key(moved[p], lance, kings) == best_key]
        assert w2 == min(tied)
        if sum(k == best_key for k in keys) == 1:
            assert sigma[w2] == w


def _contested(hands: list[list[int]], lance: str, kings: int, punto: bool = True) -> bool:
    """Whether the lance is bet (both teams hold pares/juego; punto when nobody has juego)."""
    if lance in (rb.GRANDE, rb.CHICA):
        return True
    if lance == rb.PARES:
        return {p % 2 for p in range(4) if rb.pares_key(hands[p], kings) is not None} == {0, 1}
    juego_teams = {p % 2 for p in range(4) if rb.has_juego(hands[p], kings)}
    if lance == rb.JUEGO:
        return juego_teams == {0, 1}
    return punto and not juego_teams


def _ordago_at(g: MusGame, lance_id: int) -> None:
    """From the first mus call: cut the mus, pass every lance before ``lance_id``, órdago there, accepted."""
    hand = g.hand_number
    g.step(Action.NO_MUS)
    while g.lance != lance_id:
        assert g.phase == Phase.BET_OPEN and g.hand_number == hand, g.describe()
        g.step(Action.PASO)
    assert g.phase == Phase.BET_OPEN
    g.step(Action.ORDAGO)
    assert g.legal_actions() == [Action.QUIERO, Action.NO_QUIERO]
    g.step(Action.QUIERO)


@profile(100)
@given(deck=deals(), kings=st.sampled_from([8, 4]), mano=st.integers(0, 3),
       real31=st.sampled_from(rb.REAL31_MODES), sigma=st.permutations([0, 1, 2, 3]))
def test_engine_ordago_winner_follows_the_rulebook(deck: list[int], kings: int, mano: int, real31: str,
                                                   sigma: list[int]) -> None:
    """An accepted órdago in a lance is won by the team of the rulebook's lance winner, for any seating."""
    cfg = MusConfig(kings=kings, real31=real31)
    hands = relative_hands(deck)
    for seating in (hands, [hands[sigma[p]] for p in range(4)]):
        for lance in ALL_LANCES:
            if not _contested(seating, lance, kings):
                continue
            event(f"{lance} órdago")
            g = MusGame.from_deck(deck_of(seating, deck[16:]), mano=mano, config=cfg)
            for rel in range(4):
                assert sorted(g.hands[(mano + rel) % 4]) == sorted(seating[rel])
            _ordago_at(g, LANCE_IDS[lance])
            w = rb.lance_winner(seating, lance, kings, real31)
            assert g.is_over and g.current_player == -1
            assert g.winner == (mano + w) % 2, (lance, seating, w)
            assert g.game_results[-1].by_ordago
            assert g.scores == (0, 0)


# ----------------------------------------------------------------------------------------------------------
# random play: scores, cards, hand order


def _all_cards(g: MusGame) -> list[int]:
    return [c for h in g.hands for c in h] + list(g.stock) + list(g.discard_pile)


configs = st.builds(
    MusConfig,
    kings=st.sampled_from([8, 4]),
    target=st.sampled_from([40, 30, 12]),
    allow_zero_discard=st.booleans(),
    partner_override=st.booleans(),
    holders_only_speak=st.booleans(),
    exclude_own_discards=st.booleans(),
    punto=st.booleans(),
    real31=st.sampled_from(rb.REAL31_MODES),
    auto_declare=st.booleans(),
    max_mus_rounds=st.none() | st.integers(0, 3),
    juegos_to_win_vaca=st.sampled_from([1, 1, 2]),
)


@profile(120)
@given(data=st.data(), cfg=configs, deck=deals(plant=False), mano=st.integers(0, 3),
       start=st.tuples(st.integers(0, 11), st.integers(0, 11)), seed=st.integers(0, 2**32 - 1))
def test_random_play_keeps_cards_and_scores(data, cfg: MusConfig, deck: list[int], mano: int,
                                            start: tuple[int, int], seed: int) -> None:
    g = MusGame.from_deck(deck, mano=mano, scores=start, config=cfg, seed=seed)
    last_game, last_scores, last_hand, last_mano = g.game_number, g.scores, g.hand_number, g.mano
    for _ in range(300):
        cards = _all_cards(g)
        assert sorted(cards) == list(range(40)), g.describe()
        for h in g.hands:
            assert list(h) == rb.slot_sort(h, cfg.kings)
        if g.game_number == last_game:
            assert g.scores[0] >= last_scores[0] and g.scores[1] >= last_scores[1]
        else:
            assert g.game_number == last_game + 1
        if g.hand_number != last_hand:
            assert g.hand_number == last_hand + 1
            assert g.mano == (last_mano + 1) % 4          # §7 rotation
        last_game, last_scores, last_hand, last_mano = g.game_number, g.scores, g.hand_number, g.mano
        if g.is_over:
            assert g.legal_actions() == [] and g.current_player == -1
            event("game over")
            return
        legal = g.legal_actions()
        assert legal and legal == sorted(set(legal))
        g.step(legal[data.draw(st.integers(0, len(legal) - 1), label="action index")])


@profile(40)
@given(data=st.data(), deck=deals(plant=False), seed=st.integers(0, 2**32 - 1))
def test_clone_is_independent(data, deck: list[int], seed: int) -> None:
    g = MusGame.from_deck(deck, mano=0, config=MusConfig(target=20), seed=seed)
    for _ in range(data.draw(st.integers(0, 20))):
        if g.is_over:
            break
        legal = g.legal_actions()
        g.step(legal[data.draw(st.integers(0, len(legal) - 1))])
    before = (g.hands, g.scores, g.current_player, g.legal_actions(), g.hand_actions, g.stock, g.discard_pile)
    c = g.clone()
    for _ in range(30):
        if c.is_over:
            break
        legal = c.legal_actions()
        c.step(legal[data.draw(st.integers(0, len(legal) - 1))])
    after = (g.hands, g.scores, g.current_player, g.legal_actions(), g.hand_actions, g.stock, g.discard_pile)
    assert before == after
    assert np.array_equal(g.legal_action_mask().nonzero()[0], np.array(g.legal_actions(), dtype=np.int64))
