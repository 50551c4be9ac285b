"""The own-hand pieces of the observation (one shared table for both engines) against a plain computation."""

from __future__ import annotations

import numpy as np
import pytest

from mus_env.cards import NUMBERS, card_rank, card_value, sort_hand
from mus_env.observation import HAND_DIM, OFFSETS, decode, full_hand_keys, hand_key, hand_keys, hand_table


def _plain_hand_pieces(cards: list[int], kings: int) -> np.ndarray:
    row = np.zeros(HAND_DIM, dtype=np.float32)
    hand = sort_hand(cards, kings)
    for s, c in enumerate(hand):
        row[OFFSETS["hand_numbers"].start + 10 * s + NUMBERS.index(NUMBERS[c % 10])] = 1
        row[OFFSETS["hand_suits"].start + 4 * s + c // 10] = 1
        row[OFFSETS["rank_counts"].start + card_rank(c, kings) - 1] += 1
    if len(hand) == 4:
        counts = sorted((sum(card_rank(x, kings) == card_rank(c, kings) for x in hand) for c in hand), reverse=True)
        cls = 3 if counts[0] == 4 or counts == [2, 2, 2, 2] else 2 if counts[0] == 3 else 1 if counts[0] == 2 else 0
        row[OFFSETS["pares_class"].start + cls] = 1
        row[OFFSETS["points"].start] = sum(card_value(c, kings) for c in hand) / 40.0
    return row


@pytest.mark.parametrize("kings", [8, 4])
def test_hand_table_rows(kings: int) -> None:
    rng = np.random.default_rng(kings)
    table = hand_table(kings)
    for _ in range(600):
        k = int(rng.integers(0, 5))
        cards = [int(c) for c in rng.choice(40, size=k, replace=False)]
        row = table[hand_key(cards)]
        assert np.array_equal(row, _plain_hand_pieces(cards, kings)), (cards, kings)
        padded = np.array([sort_hand(cards, kings) + [-1] * (4 - k)])
        assert hand_keys(padded)[0] == hand_key(cards)


def test_decode_reads_the_hand_back() -> None:
    cards = [9, 12, 26, 30]
    obs = np.zeros(345, dtype=np.float32)
    obs[:HAND_DIM] = hand_table(8)[hand_key(cards)]
    assert sorted(decode(obs)["hand"]) == sorted(cards)


def test_full_hand_keys_match_hand_key() -> None:
    """The batched engine's fast path for four-card hands gives the same rows as the general key."""
    rng = np.random.default_rng(0)
    hands = np.array([rng.permutation(40)[:4] for _ in range(2000)], dtype=np.int8)
    fast = full_hand_keys(hands)
    assert np.array_equal(fast, hand_keys(hands))
    assert [hand_key(tuple(int(c) for c in h)) for h in hands[:50]] == fast[:50].tolist()
    assert np.unique(fast).size == np.unique(np.sort(hands, axis=1), axis=0).shape[0]


class _PublicOnly:
    """A MusGame seen through its public names only: reading ``_anything`` fails."""

    def __init__(self, game: object) -> None:
        object.__setattr__(self, "game", game)

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(f"the observation writer read the private attribute {name!r}")
        return getattr(object.__getattribute__(self, "game"), name)


@pytest.mark.parametrize("signals", ["off", "truthful", "free"])
def test_the_writer_reads_the_games_public_state_only(signals: str) -> None:
    """observation.write works on a game whose private attributes cannot be read, and writes what observe does."""
    from mus_env import MusConfig, MusGame
    from mus_env.observation import write

    cfg = MusConfig(signals=signals, signal_intercept_p=0.5 if signals != "off" else 0.0)
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(100):
        game = MusGame(cfg, seed=seed)
        while not game.is_over and checked < 400:
            for seat in range(4):
                assert np.array_equal(write(_PublicOnly(game), seat), game.observe(seat))
            checked += 1
            game.step(int(rng.choice(game.legal_actions())))
    assert checked == 400


def test_lance_records_are_read_only_views() -> None:
    """lance_state / lance_records give copies the caller cannot change the game through; a bad slot is refused."""
    from mus_env import Action, MusGame

    game = MusGame(seed=1)
    while game.lance < 0:                                    # play through the mus phase to grande
        game.step(int(Action.NO_MUS) if int(Action.NO_MUS) in game.legal_actions() else game.legal_actions()[0])
    game.step(game.legal_actions()[1])                       # a bet or a paso: the history has one entry
    record = game.lance_state(0)
    assert record == game.lance_records[0] and len(record.history) == 1
    with pytest.raises(AttributeError):
        record.stake = 99                                    # type: ignore[misc]
    with pytest.raises(ValueError, match="lance slot"):
        game.lance_state(4)
    assert game.lance_state(0) == record
