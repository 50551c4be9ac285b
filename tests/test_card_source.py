"""MusGame's card source hook (``MusGame(cards=...)``, ``clone(cards=...)``, ``arrange_stock``): a source that deals
what the seeded one deals plays the same game; every deck and reshuffle a custom source returns is checked; the
stock can be put in another order, and only in an order of its own cards."""

from __future__ import annotations

import random

import pytest

from mus_env import MusConfig, MusGame
from mus_env.actions import Action
from mus_env.shuffle import CardSource, SeededCards, deal_decks, reshuffle_order

CFG = MusConfig(target=10, max_mus_rounds=4, max_stake=20)


class Recorder:
    """The seeded source, recording every call."""

    def __init__(self, seed: int) -> None:
        self.inner = SeededCards(seed)
        self.calls: list[tuple] = []

    def deal(self, hand_number: int) -> list[int]:
        self.calls.append(("deal", hand_number))
        return self.inner.deal(hand_number)

    def reshuffle(self, hand_number: int, reshuffle_number: int, cards: list[int]) -> list[int]:
        self.calls.append(("reshuffle", hand_number, reshuffle_number, sorted(cards)))
        return self.inner.reshuffle(hand_number, reshuffle_number, cards)


def _play(game: MusGame, rng: random.Random) -> list[tuple]:
    trace = []
    while not game.is_over:
        legal = game.legal_actions()
        a = rng.choices(legal, [8.0 if x == Action.MUS else 0.05 if x == Action.ORDAGO else 1.0 for x in legal])[0]
        trace.append((game.current_player, a, game.hands, game.scores))
        game.step(a)
    return trace


def test_the_seeded_source_is_the_default() -> None:
    assert isinstance(SeededCards(3), CardSource)
    assert SeededCards(3).deal(2) == deal_decks(3, 2).tolist()
    assert SeededCards(3).reshuffle(1, 0, [5, 9, 2]) == reshuffle_order(3, 1, 0, [5, 9, 2])


def test_a_source_dealing_the_seeded_cards_plays_the_seeded_game() -> None:
    reshuffles = 0
    for seed in range(60):
        source = Recorder(seed)
        a = MusGame(CFG, seed=seed)
        b = MusGame(CFG, seed=seed, cards=source)
        assert _play(a, random.Random(seed)) == _play(b, random.Random(seed))
        assert a.hand_log == b.hand_log
        deals = [c[1] for c in source.calls if c[0] == "deal"]
        assert deals == list(range(len(b.hand_log)))
        reshuffles += sum(c[0] == "reshuffle" for c in source.calls)
    assert reshuffles > 0


class Fixed:
    def __init__(self, deck: object, order: object = None) -> None:
        self.deck, self.order = deck, order

    def deal(self, hand_number: int) -> object:
        return self.deck

    def reshuffle(self, hand_number: int, reshuffle_number: int, cards: list[int]) -> object:
        return self.order if self.order is not None else cards[::-1]

    def __repr__(self) -> str:
        return "Fixed"


@pytest.mark.parametrize("deck", [list(range(39)), [0] * 40, "cards", list(range(1, 41))])
def test_a_bad_deck_from_a_source_is_refused(deck: object) -> None:
    with pytest.raises(ValueError, match="Fixed dealt a bad deck for hand 0"):
        MusGame(CFG, seed=0, cards=Fixed(deck))


def test_a_bad_reshuffle_from_a_source_is_refused() -> None:
    game = MusGame(MusConfig(first_mano=0), seed=0, cards=Fixed(list(range(40)), order=[0, 1]))
    with pytest.raises(ValueError, match="the reshuffle of Fixed must hold exactly"):
        for _ in range(20):                        # everybody discards four cards: the stock runs out in round 2
            game.step(int(Action.MUS)) if game.legal_actions()[0] == Action.MUS else game.step(game.legal_actions()[-1])


def test_not_a_source_is_refused() -> None:
    with pytest.raises(ValueError, match="card source"):
        MusGame(CFG, cards=object())
    with pytest.raises(ValueError, match="card source"):
        MusGame(CFG).clone(cards=[1, 2])


def test_a_clone_can_take_its_own_source() -> None:
    for seed in range(5):
        game = MusGame(CFG, seed=seed)
        source = Recorder(seed)
        copy = game.clone(cards=source)
        assert _play(game.clone(), random.Random(seed)) == _play(copy, random.Random(seed))
        assert [c for c in source.calls if c[0] == "deal"] == [("deal", h) for h in range(1, len(copy.hand_log))]
        assert game.hand_log == [] and len(copy.hand_log) >= 1


def test_arrange_stock_puts_the_chosen_cards_first() -> None:
    game = MusGame(MusConfig(first_mano=0), seed=7)
    stock = list(game.stock)
    order = stock[::-1]
    game.arrange_stock(order)
    assert list(game.stock) == order and game.stock_size == len(stock)
    for _ in range(4):
        game.step(int(Action.MUS))
    hands = game.hands
    for _ in range(4):
        game.step(int(Action.DISCARD_0) + 0b1)                 # each seat changes its first card
    assert [(set(game.hands[s]) - set(hands[s])).pop() for s in range(4)] == order[:4]    # served from the mano
    assert game.hand_log == [] and game.deck == MusGame(MusConfig(first_mano=0), seed=7).deck


@pytest.mark.parametrize("order", [[], "x", [0] * 24, "same but one"])
def test_arrange_stock_refuses_other_cards(order: object) -> None:
    game = MusGame(MusConfig(first_mano=0), seed=7)
    stock = game.stock
    if order == "same but one":
        order = [*stock[:-1], game.hands[0][0]]
    with pytest.raises(ValueError, match="arrange_stock"):
        game.arrange_stock(order)
    assert game.stock == stock
