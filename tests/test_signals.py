"""The señas channel's definitions (mus_env.signals, RULES.md §8) and the signals-off guarantee.

The meanings are checked against an independent reading of the cards (numbers, suits and point values
counted here, not the hand tables the module uses), for every rank multiset of both king variants and for
random hands; the interception draws against their probability; and ``signals="off"`` against games
recorded before the channel existed (``tests/recorded_games.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
import recorded_games

from mus_env import MusConfig
from mus_env.actions import NUM_ACTIONS, action_to_string, string_to_action
from mus_env.cards import NUM_CARDS, card_number, parse_cards
from mus_env.config import playable_config
from mus_env.observation import OBS_DIM, obs_dim, state_dim
from mus_env.signals import (
    ALL_SIGNS,
    NUM_SIGNS,
    SIGN_NAMES,
    SIGNAL_BASE,
    SIGNAL_DIM,
    SIGNAL_OFFSETS,
    SIGNAL_PIECES,
    WINDOW_GRANDE,
    WINDOW_MUS,
    Sign,
    intercept_uniform,
    intercepted,
    legal_signs,
    num_actions,
    sees_sign,
    sign_of_action,
    true_signs,
)

# ---------------------------------------------------------------------------------------------------
# An independent reading of a hand, from card numbers (1-7, 10 sota, 11 caballo, 12 rey) and suits.


def _reading(hand: list[int], kings: int) -> dict[str, int]:
    numbers = [card_number(c) for c in hand]
    if kings == 8:
        king = sum(n in (12, 3) for n in numbers)
        ace = sum(n in (1, 2) for n in numbers)
        rank = [12 if n == 3 else 1 if n == 2 else n for n in numbers]
    else:
        king = numbers.count(12)
        ace = numbers.count(1)
        rank = numbers
    points = sum(10 if r >= 10 else r for r in rank)
    groups = sorted(Counter(rank).values(), reverse=True)
    pares = ("duples" if groups[0] == 4 or groups[:2] == [2, 2] else "medias" if groups[0] == 3
             else "par" if groups[0] == 2 else "none")
    return {"kings": king, "aces": ace, "points": points, "pares": pares}


def _expected(hand: list[int], config: MusConfig, window: int) -> set[Sign]:
    r = _reading(hand, config.kings)
    true = {Sign.NONE}
    if r["kings"] in (2, 4):
        true.add(Sign.DOS_REYES)
    if r["kings"] == 3:
        true.add(Sign.TRES_REYES)
    if r["aces"] in (2, 4):
        true.add(Sign.DOS_ASES)
    if r["aces"] == 3:
        true.add(Sign.TRES_ASES)
    true |= {"medias": {Sign.MEDIAS}, "duples": {Sign.DUPLES}, "par": {Sign.PAR}, "none": set()}[r["pares"]]
    p = r["points"]
    if 32 <= p <= 40:
        true.add(Sign.JUEGO)
    true |= {31: {Sign.TREINTA_Y_UNA}, 30: {Sign.TREINTA}, 29: {Sign.VEINTINUEVE}}.get(p, set())
    if r["kings"] == 3 and r["aces"] == 1:
        true.add(Sign.SOLOMILLO)
    numbers = sorted(card_number(c) for c in hand)
    if config.real31 == "sota" and numbers == [7, 7, 7, 10]:
        true.add(Sign.REAL31)
    if true == {Sign.NONE} or true == {Sign.NONE, Sign.REAL31}:
        true.add(Sign.CIEGO)
    if window == WINDOW_MUS:
        true.add(Sign.MUS)
    return true


def _tokens(bits: int) -> set[Sign]:
    return {Sign(t) for t in range(NUM_SIGNS) if bits >> t & 1}


@pytest.mark.parametrize("kings", [8, 4])
@pytest.mark.parametrize("window", [WINDOW_MUS, WINDOW_GRANDE])
def test_truthful_masks_are_exactly_the_true_signs(kings: int, window: int) -> None:
    """Every hand whose numbers differ (all number multisets, one suit pattern each) and 3,000 random hands."""
    cfg = MusConfig(kings=kings, signals="truthful", real31="sota")
    hands: list[list[int]] = []
    by_numbers: dict[tuple[int, ...], list[int]] = {}
    for hand in combinations(range(NUM_CARDS), 4):
        by_numbers.setdefault(tuple(sorted(card_number(c) for c in hand)), list(hand))
    hands += by_numbers.values()
    rng = np.random.default_rng(kings * 10 + window)
    hands += [list(rng.choice(NUM_CARDS, 4, replace=False)) for _ in range(3000)]
    seen_classes = set()
    for hand in hands:
        want = _expected(hand, cfg, window)
        got = _tokens(legal_signs(hand, cfg, window))
        assert got == want, (hand, sorted(got), sorted(want))
        seen_classes.add(frozenset(want))
    assert len(seen_classes) > 25          # the check covered many different sign sets


def test_worked_examples_of_meanings() -> None:
    cfg = MusConfig(real31="sota", signals="truthful")
    cases = {
        "Ro Rc Re Ab": {Sign.TRES_REYES, Sign.MEDIAS, Sign.TREINTA_Y_UNA, Sign.SOLOMILLO},
        "7o 7c 7e So": {Sign.MEDIAS, Sign.TREINTA_Y_UNA, Sign.REAL31},
        "4o 5o 6o So": {Sign.CIEGO},
        "Ro 3c Sc Cc": {Sign.DOS_REYES, Sign.PAR, Sign.JUEGO},         # a 3 is a rey with 8 kings
        "Ro 3c Ao 2c": {Sign.DOS_REYES, Sign.DOS_ASES, Sign.DUPLES},
        "Ro Rc Re Rb": {Sign.DOS_REYES, Sign.DUPLES, Sign.JUEGO},       # four kings: the two-kings sign twice
        "Co Sc 4e 5b": {Sign.VEINTINUEVE},
    }
    for text, signs in cases.items():
        got = _tokens(true_signs(parse_cards(text), cfg, WINDOW_GRANDE))
        assert got == signs | {Sign.NONE}, text
    # with 4 kings a 3 is a 3: "Ro 3c Sc Cc" is no longer two kings nor a par (33 points: juego)
    got = _tokens(true_signs(parse_cards("Ro 3c Sc Cc"), MusConfig(kings=4), WINDOW_GRANDE))
    assert got == {Sign.NONE, Sign.JUEGO}
    # 31 real is never true with real31 off
    assert Sign.REAL31 not in _tokens(true_signs(parse_cards("7o 7c 7e So"), MusConfig(), WINDOW_MUS))


def test_free_allows_every_token_and_off_has_no_signs() -> None:
    hand = parse_cards("4o 5o 6o So")
    assert legal_signs(hand, MusConfig(signals="free"), WINDOW_GRANDE) == ALL_SIGNS
    with pytest.raises(ValueError, match="signals are off"):
        legal_signs(hand, MusConfig(), WINDOW_GRANDE)
    with pytest.raises(ValueError, match="4 card ids"):
        true_signs([1, 2, 3], MusConfig(), WINDOW_GRANDE)


def test_sizes_and_action_names() -> None:
    off, on = MusConfig(), MusConfig(signals="truthful")
    assert (num_actions(off), num_actions(on)) == (NUM_ACTIONS, NUM_ACTIONS + NUM_SIGNS)
    assert (obs_dim(off), obs_dim(on)) == (OBS_DIM, OBS_DIM + SIGNAL_DIM)
    assert state_dim(on) == obs_dim(on) + 4 * NUM_CARDS
    assert SIGNAL_DIM == sum(size for _, size, _ in SIGNAL_PIECES) == SIGNAL_OFFSETS["sign_config"].stop
    for a in range(num_actions(on)):
        assert string_to_action(action_to_string(a, on), on) == a
    assert action_to_string(SIGNAL_BASE + Sign.CIEGO, on) == "SIGN_CIEGO"
    assert action_to_string(SIGNAL_BASE, on, words=True) == "sin seña"
    assert sign_of_action(SIGNAL_BASE + 3) == Sign.DOS_ASES
    with pytest.raises(ValueError, match="signals='truthful' or 'free'"):
        action_to_string(SIGNAL_BASE, off)
    with pytest.raises(ValueError, match="signs exist only"):
        string_to_action(SIGN_NAMES[1], off)
    with pytest.raises(ValueError, match="not a sign"):
        sign_of_action(30)


def test_interception_rate_matches_p_and_partners_always_see() -> None:
    """Over 40,000 (game, window, signer, opponent) draws the seen rate is within 4.5 standard errors of p."""
    for p in (0.0, 0.3, 1.0):
        seen = n = 0
        for seed in range(500):
            for w in range(4):
                for signer in range(4):
                    for observer in ((signer + 1) % 4, (signer + 3) % 4):
                        seen += intercepted(seed, seed % 7, w, signer, observer, p)
                        n += 1
                    assert sees_sign(seed, 0, w, signer, (signer + 2) % 4, p)
                    assert sees_sign(seed, 0, w, signer, signer, p)
        rate = seen / n
        assert abs(rate - p) <= 4.5 * np.sqrt(max(p * (1 - p), 1e-12) / n) + 1e-12, (p, rate)


def test_interceptions_are_independent_and_reproducible() -> None:
    """The two opponents' draws, and draws of different windows, are not the same coin."""
    u = np.array([[intercept_uniform(seed, 0, w, 0, 1), intercept_uniform(seed, 0, w, 0, 3)]
                  for seed in range(2000) for w in range(2)])
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 0.1
    assert abs(np.corrcoef(u[0::2, 0], u[1::2, 0])[0, 1]) < 0.1
    assert intercept_uniform(123, 4, 1, 2, 3) == intercept_uniform(123, 4, 1, 2, 3)
    assert intercept_uniform(123, 4, 1, 2, 3) != intercept_uniform(124, 4, 1, 2, 3)


def test_interfaces_without_signs_refuse_a_signals_config() -> None:
    with pytest.raises(NotImplementedError, match="señas"):
        playable_config(MusConfig(signals="free"))
    assert playable_config(MusConfig(signals="free"), signals=True).signals == "free"


def test_signals_off_replays_the_games_recorded_before_the_channel() -> None:
    """Both engines, three configs: every observation, mask and reward digest as recorded at 8b30f17."""
    recorded = json.loads(recorded_games.DATA.read_text())
    now = recorded_games.digests()
    differ = [f"{cfg}/{game}" for cfg in recorded for game in recorded[cfg] if now[cfg][game] != recorded[cfg][game]]
    assert not differ, f"signals='off' games changed: {differ[:10]} ({len(differ)} in all)"
    assert sum(len(v) for v in recorded.values()) == 3 * (40 + 3)
