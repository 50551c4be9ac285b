"""MusGame's chance events as public API (``MusGame(config, explicit_chance=True)``: ``chance_pending``,
``chance_event``, ``chance_outcomes()``, ``apply_chance(outcome)``).

* Applying, at every chance event, the outcome the seeded game chose (its first mano, its deck's cards, the cards it
  served) reproduces ``MusGame(config, seed)`` decision by decision, reshuffles and later hands included: the same
  seat, legal actions, hands, stock, scores, observations and hand records. The seeded game's choice is always
  among the outcomes listed, which are uniform and in increasing order.
* An outcome that is not pending is refused with ``IllegalChanceError`` naming the event and the possible outcomes,
  and the game is left unchanged; without a pending event ``apply_chance`` and ``chance_outcomes`` refuse too, and
  ``step`` refuses while one is pending.
"""

from __future__ import annotations

import random

import pytest

from mus_env import MusConfig, MusGame
from mus_env.actions import DISCARD_BASE, Action
from mus_env.game import CHANCE_EVENTS, IllegalActionError, IllegalChanceError
from mus_env.phases import Phase

VARIANTS = [
    MusConfig(target=10),
    MusConfig(target=10, first_mano=2, exclude_own_discards=False, allow_zero_discard=True),
    MusConfig(target=5, kings=4, auto_declare=False, juegos_to_win_vaca=2, real31="any10"),
    MusConfig(target=10, signals="truthful", signal_intercept_p=0.3),
    MusConfig(target=10, max_mus_rounds=1),
]


def _choose(rng: random.Random, legal: list[int]) -> int:
    """Random legal actions that call MUS often (so the stock runs out and is reshuffled), órdago seldom."""
    return rng.choices(legal, [8.0 if a == Action.MUS else 0.05 if a == Action.ORDAGO else 1.0 for a in legal])[0]


def _replay(cfg: MusConfig, seed: int, stats: dict[str, int]) -> None:
    ref = MusGame(cfg, seed=seed)
    game = MusGame(cfg, seed=seed, explicit_chance=True)
    assert not ref.chance_pending and game.explicit_chance and not ref.explicit_chance
    rng = random.Random(seed)
    dealt, drawn = 0, {}
    while True:
        while game.chance_pending:
            kind, seat = game.chance_event
            outcomes = game.chance_outcomes()
            values = [v for v, _ in outcomes]
            assert kind in CHANCE_EVENTS and values == sorted(values) and game.current_player == -1
            assert all(p == 1 / len(values) for _, p in outcomes) and game.legal_actions() == []
            if kind == "mano":
                assert (values, seat, game.hand_number) == ([0, 1, 2, 3], -1, 0)
                v = ref.mano
            elif kind == "deal":
                assert seat == (ref.mano + dealt) % 4
                assert values == sorted(set(range(40)) - {c for h in game.hands for c in h})
                v, dealt = ref.deck[dealt], dealt + 1
            else:
                assert set(values) == set(game.stock)
                v = next(c for c in drawn[seat] if c in values)       # the seeded game served them in stock order
                drawn[seat].remove(v)
            assert v in values, (kind, seat, v, values)
            game.apply_chance(v)
            stats[kind] += 1
        dealt = 0
        assert not any(drawn.values())
        assert (game.current_player, game.legal_actions(), game.hands, game.scores, game.hand_number, game.mano,
                sorted(game.stock), sorted(game.discard_pile), game.phase_name) == (
            ref.current_player, ref.legal_actions(), ref.hands, ref.scores, ref.hand_number, ref.mano,
            sorted(ref.stock), sorted(ref.discard_pile), ref.phase_name)
        if ref.is_over:
            break
        p = ref.current_player
        assert (game.observe(p) == ref.observe(p)).all()
        action = _choose(rng, ref.legal_actions())
        last_discard = ref.phase == Phase.DISCARD and (p - ref.mano) % 4 == 3
        if last_discard:
            mask = action - DISCARD_BASE
            kept = {s: set(ref.hand_of(s)) for s in range(4)}
            kept[p] = {c for i, c in enumerate(ref.hand_of(p)) if not mask >> i & 1}
        hands = len(ref.hand_log)
        ref.step(action)
        game.step(action)
        stats["decisions"] += 1
        if last_discard:
            drawn = {s: sorted(set(ref.hand_of(s)) - kept[s]) for s in range(4)}
        if len(ref.hand_log) > hands and sum(map(sum, ref.hand_log[-1].discards)) > 24:
            stats["reshuffled hands"] += 1
    assert game.is_over and game.winner == ref.winner
    for a, b in zip(game.hand_log, ref.hand_log, strict=True):
        # the same hand, but the deck as dealt: the explicit game's stock is not in the seeded order
        assert (a.deck[:16], a.actions, a.stones, a.outcomes, a.initial_hands, a.final_hands, a.scores_after) == (
            b.deck[:16], b.actions, b.stones, b.outcomes, b.initial_hands, b.final_hands, b.scores_after)
        assert sorted(a.deck) == list(range(40))


def test_applying_the_seeded_outcomes_reproduces_the_seeded_game() -> None:
    stats = dict.fromkeys(("mano", "deal", "draw", "decisions", "reshuffled hands"), 0)
    for k, cfg in enumerate(VARIANTS):
        for seed in range(40):
            _replay(cfg, 1000 * k + seed, stats)
    assert stats["mano"] > 100 and stats["deal"] > 16 * 200 and stats["draw"] > 2000, stats
    assert stats["reshuffled hands"] > 10, stats


def _explicit_at(kind: str, seed: int = 3) -> MusGame:
    """An explicit-chance game stopped at a chance event of ``kind``; for "draw", the last seat's card in the second
    mus round of four-card discards, after the stock ran out at the third seat and the pile was reshuffled."""
    cfg = MusConfig(first_mano="random" if kind == "mano" else 0)
    game = MusGame(cfg, seed=seed, explicit_chance=True)
    rng = random.Random(seed)
    while True:
        if game.chance_pending:
            event = game.chance_event[0]
            if event == kind and (kind != "draw" or game.mus_round == 2 and game.chance_event[1] == 3):
                return game
            game.apply_chance(rng.choice(game.chance_outcomes())[0])
            continue
        legal = game.legal_actions()
        game.step(int(Action.MUS) if Action.MUS in legal else DISCARD_BASE + 15 if DISCARD_BASE + 15 in legal
                  else legal[0])


def _snapshot(game: MusGame) -> tuple:
    return (game.describe(), game.chance_event, game.chance_outcomes(), game.hands, game.stock, game.discard_pile,
            game.deck, game.hand_actions)


@pytest.mark.parametrize("kind", ["mano", "deal", "draw"])
def test_an_outcome_not_pending_is_refused_and_changes_nothing(kind: str) -> None:
    game = _explicit_at(kind)
    before = _snapshot(game)
    values = [v for v, _ in game.chance_outcomes()]
    held = [c for h in game.hands for c in h]
    bad = [4, -1, 40, True, 2.0, "3", None] if kind == "mano" else [*held[:3], 40, -1, True, float(values[0]), "x"]
    if kind == "draw":
        bad.append(next(c for c in range(40) if c not in values and c not in held))       # in the discard pile
    for outcome in bad:
        with pytest.raises(IllegalChanceError, match=r"not possible for the pending .*possible outcomes: \[") as e:
            game.apply_chance(outcome)
        assert str(values) in str(e.value)
        assert _snapshot(game) == before, outcome
    with pytest.raises(IllegalActionError, match="chance event is pending"):
        game.step(int(Action.MUS))
    with pytest.raises(IllegalActionError, match="chance event is pending"):
        game.check_action(int(Action.PASO))
    assert _snapshot(game) == before
    game.apply_chance(values[-1])                                # a pending one is taken
    assert _snapshot(game) != before


def test_no_chance_event_pending() -> None:
    seeded = MusGame(MusConfig(), seed=1)
    assert not seeded.chance_pending and seeded.chance_event is None
    for g, match in ((seeded, "applies its chance events itself"),
                     (_explicit_at("deal"), "")):
        if g.chance_pending:                                     # deal the rest: a decision is next
            while g.chance_pending:
                g.apply_chance(g.chance_outcomes()[0][0])
            match = "no chance event is pending"
        before = g.describe()
        with pytest.raises(IllegalChanceError, match=match):
            g.apply_chance(0)
        with pytest.raises(IllegalChanceError, match=match):
            g.chance_outcomes()
        assert g.describe() == before and g.chance_event is None


def test_explicit_chance_takes_no_card_source_and_clones_alike() -> None:
    from mus_env.shuffle import SeededCards

    with pytest.raises(ValueError, match="no card source"):
        MusGame(MusConfig(), seed=0, cards=SeededCards(0), explicit_chance=True)
    with pytest.raises(ValueError, match="explicit_chance"):
        MusGame(MusConfig(), seed=0, explicit_chance="yes")
    game = _explicit_at("draw")
    with pytest.raises(ValueError, match="no card source"):
        game.clone(cards=SeededCards(0))
    copy = game.clone()
    before = _snapshot(game)
    rng = random.Random(0)
    while not copy.is_over:
        if copy.chance_pending:
            copy.apply_chance(rng.choice(copy.chance_outcomes())[0])
        else:
            copy.step(rng.choice(copy.legal_actions()))
    assert _snapshot(game) == before
