"""The worked examples E1-E27 of RULES.md §11, one test (or one parametrised family) each.

Every game is rigged with ``MusGame.from_deck`` and played with explicit actions; the assertions are the
outcomes RULES.md states (lance winners, stones and when they are paid, final scores, who acts next, legal
sets, stock and pile sizes, mano rotation). No test depends on what a seed deals: where a seed matters at
all it only drives a later hand that the test plays with passes.

Conventions of these tests, as in RULES.md §11: hands are given by **relative** seat (S0 = mano ... S3 =
postre) and team A = {S0, S2}, team B = {S1, S3}. ``by_team`` turns an (A, B) pair into absolute
(team 0, team 1) order, so the same example runs with several manos and exercises the seat mapping
(team 0 = absolute seats 0 and 2).
"""

from __future__ import annotations

import pytest

from mus_env import Action, IllegalActionError, MusConfig, MusGame, Outcome
from mus_env.cards import deck_from_hands, sort_hand
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO

A = Action
PASO, QUIERO, NO_QUIERO, ORDAGO = A.PASO, A.QUIERO, A.NO_QUIERO, A.ORDAGO
E2, E3, E5 = A.ENVIDO_2, A.ENVIDO_3, A.ENVIDO_5

# Legal sets of RULES.md §9.3 (sorted ids).
OPEN = [18, 19, 20, 21, 22, 23, 26]
RESPOND = [19, 20, 21, 22, 23, 24, 25, 26]
RESPOND_ORDAGO = [24, 25]
CONFIRM = [19, 20, 21, 22, 23, 24, 26]

ALL_PASS = [(0, PASO), (1, PASO), (2, PASO), (3, PASO)]
MANOS = [0, 1, 2, 3]

# Hands used by several examples (relative seats S0..S3).
E7_HANDS = ["RC76", "R777", "RCS3", "A456"]     # E6, E7, E19
E9_HANDS = ["RS64", "C774", "S765", "365A"]     # E9, E20
E16_HANDS = ["RC75", "RRS4", "A246", "SS7A"]    # E16, E17 (and betting examples)
E18_HANDS = ["RR55", "CS74", "CCC6", "A467"]    # E18, E21


# ----------------------------------------------------------------------------------------------------
# helpers
def by_team(mano: int, a: int, b: int) -> tuple[int, int]:
    """(team A, team B) of RULES.md §11 -> (team 0, team 1); also the inverse (it is an involution)."""
    return (a, b) if mano % 2 == 0 else (b, a)


def team_of(mano: int, rel: int) -> int:
    """Absolute team (0 or 1) of relative seat ``rel``."""
    return (mano + rel) % 2


def seat(mano: int, rel: int) -> int:
    """Absolute seat of relative seat ``rel``."""
    return (mano + rel) % 4


def new_game(hands: list[str | None], mano: int = 0, scores_ab: tuple[int, int] = (0, 0),
             config: MusConfig | None = None, seed: int = 0) -> MusGame:
    """A game dealt with ``hands`` by relative seat; ``scores_ab`` is (team A, team B)."""
    return MusGame.from_deck(deck_from_hands(hands), mano=mano, scores=by_team(mano, *scores_ab),
                             config=config, seed=seed)


def play(g: MusGame, steps: list[tuple[int, object]]) -> None:
    """Apply ``(relative seat, action)`` steps, asserting that the named seat is the one to act.

    An action ``("envido", k)`` is played with :meth:`MusGame.step_envido`.
    """
    for i, (rel, action) in enumerate(steps):
        expected = seat(g.mano, rel)
        assert g.current_player == expected, (
            f"step {i} {action!r}: expected S{rel} (seat {expected}) to act, got seat {g.current_player} "
            f"in {g.phase_name}")
        if isinstance(action, tuple):
            g.step_envido(action[1])
        else:
            g.step(action)


def cut(g: MusGame) -> None:
    """The mano says NO_MUS: betting starts at grande with S0."""
    play(g, [(0, A.NO_MUS)])


def pass_rest_of_hand(g: MusGame) -> None:
    """Everybody passes every remaining opening round until the hand's showdown is done."""
    h = g.hand_number
    while g.hand_number == h and not g.is_over:
        assert g.betting is not None and g.betting["stake"] == 0, g.describe()
        g.step(PASO)


def stones_ab(rec, lance: str) -> tuple[int, int]:
    """Stones of a finished hand for one lance, as (team A, team B) of that hand."""
    return by_team(rec.mano, *rec.stones_by_lance()[lance])


def events_ab(rec) -> list[tuple[str, str, int, str]]:
    """The hand's ScoreEvents with the team written "A"/"B" (relative to that hand's mano)."""
    return [(ev.lance, "AB"[(ev.team - rec.mano) % 2], ev.stones, ev.reason) for ev in rec.stones]


def showdown_all_pass(hands: list[str | None], mano: int = 0, config: MusConfig | None = None):
    """Cut the mus, pass every lance, and return the finished hand's record."""
    g = new_game(hands, mano=mano, config=config)
    cut(g)
    pass_rest_of_hand(g)
    assert g.hand_number == 1 and len(g.hand_log) == 1
    return g.hand_log[-1]


def winner_ab(rel: int, stones: int) -> tuple[int, int]:
    """(A, B) stones when relative seat ``rel``'s team gets ``stones``."""
    return (stones, 0) if rel % 2 == 0 else (0, stones)


# ----------------------------------------------------------------------------------------------------
# Hand comparisons (E1-E10): driven to the showdown with every lance en paso
@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize(("kings", "winner"), [(8, 0), (4, 1)])
def test_e1_grande_three_is_king(mano, kings, winner):
    # S2, S3 are below both S0 and S1 in either variant.
    rec = showdown_all_pass(["R344", "RCCC", "7654", "765A"], mano, MusConfig(kings=kings))
    assert stones_ab(rec, "grande") == winner_ab(winner, 1)
    assert ("grande", "AB"[winner], 1, "en paso") in events_ab(rec)


@pytest.mark.parametrize("mano", MANOS)
def test_e2_grande_tie_goes_to_seat_nearer_mano(mano):
    # S1 and S3 hold the same ranks (different suits): the lance goes to team B (S1; S3 is its partner, so the
    # seat inside team B is not observable from the score).
    rec = showdown_all_pass(["7654", "RoCo7o5o", "A456", "RcCc7c5c"], mano)
    assert stones_ab(rec, "grande") == (0, 1)


@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize(("hands", "winner"), [
    (["7654", "RC75", "RC75", "A456"], 1),   # S1 = S2 (different teams): S1, nearer the mano
    (["RC75", "RC75", "7654", "A456"], 0),   # S0 = S1: the mano
    (["RC75", "7654", "A456", "RC75"], 0),   # S0 = S3: the mano
])
def test_e2_grande_tie_across_teams(mano, hands, winner):
    rec = showdown_all_pass(hands, mano)
    assert stones_ab(rec, "grande") == winner_ab(winner, 1)


@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize(("hands", "winner"), [
    (["A456", "RRCC", "2A47", "RCSS"], 0),   # RULES E3 as written: S2 beats S0 (team A either way)
    (["A456", "2A47", "RRCC", "RCSS"], 1),   # same two hands on opposite teams: 2A47 beats the mano's A456
    (["2A47", "A456", "RRCC", "RCSS"], 0),
    (["AA5R", "AA5C", "RRCS", "7766"], 1),   # AA5C beats AA5R
    (["AA5C", "AA5R", "RRCS", "7766"], 0),
])
def test_e3_chica(mano, hands, winner):
    rec = showdown_all_pass(hands, mano)
    assert stones_ab(rec, "chica") == winner_ab(winner, 1)
    assert rec.outcomes[1] == "en paso"


@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize(("s0", "s1", "winner", "bonus"), [
    ("AAAR", "CCC5", 1, 2),    # medias (2,7) beats medias (2,1)
    ("CCC5", "AAAR", 0, 2),
    ("CCCC", "RRAA", 1, 3),    # duples (3,8,1) beats duples (3,7,7)
    ("RRAA", "CCCC", 0, 3),
    ("RRAA", "R32A", 0, 3),    # R32A = duples (3,8,1) = RRAA under 8 kings: the tie goes to the mano
    ("R32A", "RRAA", 0, 3),
    ("RR74", "AAA7", 1, 2),    # any medias beats any par (lowest medias vs highest par)
    ("RRR7", "AA22", 1, 3),    # any duples beats any medias (four aces = duples (3,1,1))
])
def test_e4_pares_classes(mano, s0, s1, winner, bonus):
    rec = showdown_all_pass([s0, s1, "S654", "S765"], mano)     # S2, S3: no pares
    assert rec.outcomes[2] == "en paso"
    assert stones_ab(rec, "pares") == winner_ab(winner, bonus)


def test_e4_r32a_has_no_pares_with_four_kings():
    # Under kings=4 R32A is four different ranks: only S1's par counts, uncontested.
    rec = showdown_all_pass(["R32A", "SS74", "C765", "C654"], 1, MusConfig(kings=4))
    assert rec.outcomes[2] == "uncontested"
    assert stones_ab(rec, "pares") == (0, 1)


@pytest.mark.parametrize("mano", MANOS)
def test_e5_pares_tie_kickers_ignored(mano):
    g = new_game(["SS74", "A456", "R765", "SSRC"], mano)
    cut(g)
    play(g, ALL_PASS + ALL_PASS)
    # Pares holders are S0 and S3 only.
    assert g.lance == PARES and g.legal_actions() == OPEN
    play(g, [(0, PASO), (3, PASO)])
    pass_rest_of_hand(g)
    rec = g.hand_log[-1]
    assert stones_ab(rec, "pares") == (1, 0)     # S0's par of sotas (1,6) wins over S3's (1,6)
    assert rec.outcomes[2] == "en paso"


@pytest.mark.parametrize("mano", MANOS)
def test_e6_e7_pares_and_juego_holders_en_paso(mano):
    g = new_game(E7_HANDS, mano)
    cut(g)
    play(g, ALL_PASS + ALL_PASS)
    # E6: pares declared S0 no, S1 yes, S2 yes, S3 no; holders S1, S2 bet.
    pares_decl, _ = g.declarations
    assert [pares_decl[seat(mano, r)] for r in range(4)] == [0, 1, 1, 0]
    play(g, [(1, PASO), (2, PASO)])
    # E7: juego holders S0 (33), S1 (31), S2 (40); S3 (16) does not speak.
    _, juego_decl = g.declarations
    assert [juego_decl[seat(mano, r)] for r in range(4)] == [1, 1, 1, 0]
    assert g.lance == JUEGO
    play(g, [(0, PASO), (1, PASO), (2, PASO)])
    assert g.hand_number == 1
    rec = g.hand_log[-1]
    assert rec.fourth_lance == "juego"
    assert stones_ab(rec, "pares") == (0, 2)    # E6: S1's medias beats S2's par of kings
    assert stones_ab(rec, "juego") == (0, 3)    # E7: S1's 31; S3 has no juego
    assert stones_ab(rec, "grande") == (1, 0)   # S2 RCS3 = (8,8,7,6)
    assert stones_ab(rec, "chica") == (0, 1)    # S3 A456
    assert by_team(mano, *rec.scores_after) == (1, 6)


@pytest.mark.parametrize("mano", [0, 3])
def test_e7_juego_ordago_goes_to_the_31(mano):
    g = new_game(E7_HANDS, mano)
    cut(g)
    play(g, ALL_PASS + ALL_PASS + [(1, PASO), (2, PASO)])
    play(g, [(0, ORDAGO)])
    # Team B's only juego holder is S1 (S3 has 16).
    assert g.current_player == seat(mano, 1) and g.legal_actions() == RESPOND_ORDAGO
    play(g, [(1, QUIERO)])
    assert g.is_over and g.winner == team_of(mano, 1)
    assert g.game_results[-1].by_ordago


# Juego order 31 > 32 > 40 > 37 > 36 > 35 > 34 > 33: each adjacent pair, the better hand at S1 (not mano).
JUEGO_HANDS = {31: "RCSA", 32: "RC75", 40: "RRCC", 37: "RCS7", 36: "RCS6", 35: "RCS5", 34: "RCS4", 33: "RC76"}
JUEGO_ORDER = [31, 32, 40, 37, 36, 35, 34, 33]


@pytest.mark.parametrize("mano", [1, 2])
@pytest.mark.parametrize(("better", "worse"), list(zip(JUEGO_ORDER[:-1], JUEGO_ORDER[1:], strict=True)))
def test_e7_juego_order(mano, better, worse):
    rec = showdown_all_pass([JUEGO_HANDS[worse], JUEGO_HANDS[better], "A456", "A467"], mano)
    assert stones_ab(rec, "juego") == (0, 3 if better == 31 else 2)
    # Swapped seats: the better hand is now the mano's.
    rec = showdown_all_pass([JUEGO_HANDS[better], JUEGO_HANDS[worse], "A456", "A467"], mano)
    assert stones_ab(rec, "juego") == (3 if better == 31 else 2, 0)


@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize(("real31", "s1", "winner"), [
    ("off", "R777", 0),       # 31 vs 31: the mano
    ("any10", "R777", 1),     # R-7-7-7 is a real under any10
    ("sota", "R777", 0),      # ... but not under sota (S1 has no sota)
    ("sota", "S777", 1),      # S-7-7-7 is a real under sota (§1.2)
])
def test_e8_juego_tie_and_real31(mano, real31, s1, winner):
    rec = showdown_all_pass(["RCSA", s1, "A456", "2564"], mano, MusConfig(real31=real31))
    assert stones_ab(rec, "juego") == winner_ab(winner, 3)    # bonus 3 for either 31


@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize(("s0", "winner"), [
    ("RS64", 0),   # 30 beats 28, 28, 22
    ("RS7A", 0),   # S0 28 ties S1 and S2: the mano
    ("RS6A", 1),   # S0 27: S1 and S2 tie at 28, S1 is nearer the mano
])
def test_e9_punto(mano, s0, winner):
    rec = showdown_all_pass([s0] + E9_HANDS[1:], mano)
    assert rec.fourth_lance == "punto" and rec.outcomes[3] == "en paso"
    assert stones_ab(rec, "punto") == winner_ab(winner, 1)


@pytest.mark.parametrize("mano", [0, 3])
def test_e10_four_king_variant(mano):
    hands = ["33RA", "C754", "S64A", "7654"]     # S1..S3: no pares, no juego in either variant
    rec8 = showdown_all_pass(hands, mano, MusConfig(kings=8))
    assert rec8.outcomes[2] == "uncontested" and stones_ab(rec8, "pares") == (2, 0)    # medias of kings
    assert rec8.fourth_lance == "juego" and rec8.outcomes[3] == "uncontested"
    assert stones_ab(rec8, "juego") == (3, 0)                                           # 31
    rec4 = showdown_all_pass(hands, mano, MusConfig(kings=4))
    assert rec4.outcomes[2] == "uncontested" and stones_ab(rec4, "pares") == (1, 0)    # par of threes
    assert rec4.fourth_lance == "punto"                                                 # 17: no juego
    assert stones_ab(rec4, "punto") == (0, 1)                                           # S1's 26 is best


# ----------------------------------------------------------------------------------------------------
# Betting (E11-E16)
@pytest.mark.parametrize("mano", MANOS)
def test_e11_refused_first_bet(mano):
    g = new_game(E18_HANDS, mano)      # team A (S0 RR55) holds the best grande: the refusal decides anyway
    cut(g)
    play(g, [(0, PASO), (1, E2)])
    assert g.current_player == seat(mano, 2) and g.legal_actions() == RESPOND
    play(g, [(2, NO_QUIERO)])
    assert g.current_player == seat(mano, 0) and g.legal_actions() == RESPOND     # S0 decides with the full set
    assert g.scores == (0, 0)
    play(g, [(0, NO_QUIERO)])
    assert by_team(mano, *g.scores) == (0, 1)                                       # B +1 now
    ls = g.lance_state(0)
    assert ls.outcome == Outcome.REFUSED and ls.winner == team_of(mano, 1)
    assert g.lance == CHICA and g.current_player == seat(mano, 0)                       # chica opens at S0
    pass_rest_of_hand(g)
    rec = g.hand_log[-1]
    assert [e for e in events_ab(rec) if e[0] == "grande"] == [("grande", "B", 1, "refused")]


@pytest.mark.parametrize("mano", MANOS)
def test_e12_raise_chain_refused(mano):
    g = new_game(E16_HANDS, mano)
    cut(g)
    play(g, [(0, E2)])
    assert g.betting["stake"] == 2 and g.betting["fallback"] == 1
    play(g, [(1, E2)])
    assert g.betting["stake"] == 4 and g.betting["fallback"] == 2
    play(g, [(2, E3)])      # responders S2, S0: S2 raises
    assert g.betting["stake"] == 7 and g.betting["fallback"] == 4
    assert g.betting["bettor"] == team_of(mano, 0) and g.betting["last"] == seat(mano, 2)
    play(g, [(3, NO_QUIERO)])
    assert g.scores == by_team(mano, 0, 0)
    play(g, [(1, NO_QUIERO)])
    assert by_team(mano, *g.scores) == (4, 0)      # A +4 now, although S1 holds the best grande
    assert g.lance == CHICA and g.current_player == seat(mano, 0)


@pytest.mark.parametrize("mano", MANOS)
def test_e13_partner_upgrade(mano):
    g = new_game(E16_HANDS, mano)
    cut(g)
    play(g, ALL_PASS)
    play(g, [(0, E2), (1, QUIERO)])
    assert g.current_player == seat(mano, 3) and g.legal_actions() == CONFIRM
    play(g, [(3, E2)])
    assert (g.betting["stake"], g.betting["fallback"]) == (4, 2)
    play(g, [(0, E3)])      # responders S0, S2
    assert (g.betting["stake"], g.betting["fallback"]) == (7, 4)
    play(g, [(1, NO_QUIERO), (3, NO_QUIERO)])
    assert by_team(mano, *g.scores) == (4, 0)      # A +4 now (S-CZ's example)
    assert g.lance_state(1).outcome == Outcome.REFUSED


@pytest.mark.parametrize("mano", MANOS)
def test_e13_no_partner_override(mano):
    g = new_game(E16_HANDS, mano, config=MusConfig(partner_override=False))
    cut(g)
    play(g, ALL_PASS)
    play(g, [(0, E2), (1, QUIERO)])
    ls = g.lance_state(1)
    assert ls.outcome == Outcome.ACCEPTED and ls.stake == 2       # closed at 2, S3 never answers
    assert g.lance == PARES and g.current_player == seat(mano, 1)   # pares: holders S1, S2, S3
    assert g.scores == (0, 0)
    pass_rest_of_hand(g)
    rec = g.hand_log[-1]
    assert ("chica", "A", 2, "stake") in events_ab(rec)       # paid at showdown to S2's A246


@pytest.mark.parametrize("mano", MANOS)
def test_e14_opening_from_the_postre(mano):
    g = new_game(E16_HANDS, mano)
    cut(g)
    play(g, [(0, PASO), (1, PASO), (2, PASO), (3, E5)])
    assert g.betting["stake"] == 5 and g.betting["fallback"] == 1
    play(g, [(0, NO_QUIERO)])
    assert g.legal_actions() == RESPOND
    play(g, [(2, QUIERO)])           # final: S2 is the last responder
    ls = g.lance_state(0)
    assert ls.outcome == Outcome.ACCEPTED and ls.stake == 5
    assert g.lance == CHICA and g.current_player == seat(mano, 0) and g.scores == (0, 0)
    pass_rest_of_hand(g)
    rec = g.hand_log[-1]
    assert ("grande", "B", 5, "stake") in events_ab(rec)      # S1 RRS4 holds the best grande


@pytest.mark.parametrize("mano", MANOS)
def test_e15_ordago_refused_after_a_bet(mano):
    g = new_game(E16_HANDS, mano)
    cut(g)
    play(g, ALL_PASS)
    play(g, [(0, E2), (1, ORDAGO)])
    assert g.betting["fallback"] == 2
    assert g.current_player == seat(mano, 2) and g.legal_actions() == RESPOND_ORDAGO
    play(g, [(2, NO_QUIERO)])
    assert g.legal_actions() == RESPOND_ORDAGO
    play(g, [(0, NO_QUIERO)])
    assert by_team(mano, *g.scores) == (0, 2)      # B +2 now
    assert not g.is_over and g.lance_state(1).outcome == Outcome.REFUSED


@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize("lance", [GRANDE, CHICA])
def test_e15_opening_ordago_refused(mano, lance):
    g = new_game(E16_HANDS, mano)
    cut(g)
    if lance == CHICA:
        play(g, ALL_PASS)
    play(g, [(0, ORDAGO)])
    assert g.legal_actions() == RESPOND_ORDAGO
    play(g, [(1, NO_QUIERO), (3, NO_QUIERO)])
    assert by_team(mano, *g.scores) == (1, 0)      # A +1 now
    assert g.lance_state(lance).outcome == Outcome.REFUSED and g.lance == lance + 1


@pytest.mark.parametrize("mano", MANOS)
def test_e16_ordago_accepted_ends_the_game(mano):
    g = new_game(E16_HANDS, mano, scores_ab=(25, 10))
    cut(g)
    play(g, [(0, PASO), (1, ORDAGO)])
    assert g.legal_actions() == RESPOND_ORDAGO
    play(g, [(2, QUIERO)])           # final: facing órdago, S0 does not confirm
    assert g.is_over and g.winner == team_of(mano, 1)          # S1 (8,8,6,2) is the best grande
    assert by_team(mano, *g.scores) == (25, 10)                # scores as they stood
    res = g.game_results[-1]
    assert res.by_ordago and res.winner == team_of(mano, 1) and by_team(mano, *res.scores) == (25, 10)
    rec = g.hand_log[-1]
    assert rec.outcomes == ("órdago", "not played", "not played", "not played") and rec.stones == ()
    with pytest.raises(ValueError):
        g.step(PASO)


@pytest.mark.parametrize("mano", MANOS)
def test_e16_next_game_starts_at_zero_with_next_mano(mano):
    g = new_game(E16_HANDS, mano, scores_ab=(25, 10), config=MusConfig(juegos_to_win_vaca=2))
    cut(g)
    play(g, [(0, PASO), (1, ORDAGO), (2, QUIERO)])
    assert not g.is_over
    assert g.game_number == 1 and g.hand_number == 1
    assert g.scores == (0, 0) and g.mano == (mano + 1) % 4
    assert g.games_won == by_team(mano, 0, 1)
    assert g.current_player == g.mano and g.legal_actions() == [0, 1]


# ----------------------------------------------------------------------------------------------------
# Whole hands and showdown (E17-E23)
@pytest.mark.parametrize("mano", MANOS)
def test_e17_full_hand(mano):
    g = new_game(E16_HANDS, mano)
    cut(g)
    # Grande
    play(g, [(0, PASO), (1, E2), (2, NO_QUIERO), (0, NO_QUIERO)])
    assert by_team(mano, *g.scores) == (0, 1)
    # Chica
    play(g, [(0, E2), (1, QUIERO), (3, QUIERO)])
    assert g.lance_state(1).outcome == Outcome.ACCEPTED and g.lance_state(1).stake == 2
    # Pares: declarations S0 no, S1 yes, S2 yes, S3 yes; holders S1, S2, S3
    pares_decl, _ = g.declarations
    assert [pares_decl[seat(mano, r)] for r in range(4)] == [0, 1, 1, 1]
    play(g, [(1, E2)])
    assert g.current_player == seat(mano, 2)        # team A's only holder
    play(g, [(2, E3)])
    assert (g.betting["stake"], g.betting["fallback"]) == (5, 2)
    play(g, [(3, QUIERO), (1, QUIERO)])
    assert g.lance_state(2).outcome == Outcome.ACCEPTED and g.lance_state(2).stake == 5
    # Juego: declarations S0 yes (32), S1 yes (34), S2 no (12), S3 no (28); holders S0, S1
    _, juego_decl = g.declarations
    assert [juego_decl[seat(mano, r)] for r in range(4)] == [1, 1, 0, 0]
    assert by_team(mano, *g.scores) == (0, 1)       # nothing else paid before the showdown
    play(g, [(0, PASO), (1, PASO)])
    assert g.hand_number == 1
    rec = g.hand_log[-1]
    assert events_ab(rec) == [
        ("grande", "B", 1, "refused"),
        ("chica", "A", 2, "stake"),          # S2 (1,1,2,4)
        ("pares", "B", 7, "stake+bonus"),    # S1's kings: 5 + S1 1 + S3 1
        ("juego", "A", 2, "bonus"),          # S0's 32 beats S1's 34
    ]
    assert by_team(mano, *rec.scores_after) == (4, 8)
    assert by_team(mano, *g.scores) == (4, 8)
    assert g.mano == (mano + 1) % 4


def _e18_bets(g: MusGame) -> None:
    cut(g)
    play(g, ALL_PASS + ALL_PASS)
    # Pares: only team A holds -> no betting; juego holders S1 (31), S2 (36).
    pares_decl, juego_decl = g.declarations
    assert [pares_decl[seat(g.mano, r)] for r in range(4)] == [1, 0, 1, 0]
    assert [juego_decl[seat(g.mano, r)] for r in range(4)] == [0, 1, 1, 0]
    assert g.lance == JUEGO
    play(g, [(1, E2), (2, QUIERO)])          # S2 is team A's only holder: final


@pytest.mark.parametrize("mano", MANOS)
def test_e18_uncontested_pares_juego_accepted(mano):
    g = new_game(E18_HANDS, mano)
    _e18_bets(g)
    assert g.hand_number == 1
    rec = g.hand_log[-1]
    assert rec.outcomes == ("en paso", "en paso", "uncontested", "accepted")
    assert events_ab(rec) == [
        ("grande", "A", 1, "en paso"),
        ("chica", "B", 1, "en paso"),
        ("pares", "A", 5, "bonus"),          # S0 duples 3 + S2 medias 2
        ("juego", "B", 5, "stake+bonus"),    # 2 + S1's 31 (3)
    ]
    assert by_team(mano, *rec.scores_after) == (6, 6)


@pytest.mark.parametrize("mano", MANOS)
def test_e19_juego_refused_bonuses_still_paid(mano):
    g = new_game(E7_HANDS, mano)
    cut(g)
    play(g, ALL_PASS + ALL_PASS + [(1, PASO), (2, PASO)])
    play(g, [(0, PASO), (1, PASO), (2, E2)])
    assert g.current_player == seat(mano, 1)         # S3 holds no juego
    play(g, [(1, NO_QUIERO)])
    rec = g.hand_log[-1]
    assert g.hand_number == 1
    assert events_ab(rec) == [
        ("juego", "A", 1, "refused"),
        ("grande", "A", 1, "en paso"),
        ("chica", "B", 1, "en paso"),
        ("pares", "B", 2, "bonus"),
        ("juego", "A", 4, "bonus"),          # S0 33 -> 2, S2 40 -> 2, although S1's 31 was best
    ]
    assert by_team(mano, *rec.scores_after) == (6, 3)


@pytest.mark.parametrize("mano", MANOS)
def test_e20_punto_accepted(mano):
    g = new_game(E9_HANDS, mano)
    cut(g)
    play(g, ALL_PASS + ALL_PASS)
    pares_decl, juego_decl = g.declarations
    assert [pares_decl[seat(mano, r)] for r in range(4)] == [0, 1, 0, 0]
    assert list(juego_decl) == [0, 0, 0, 0]
    assert g.lance == PUNTO and g.current_player == seat(mano, 0)      # punto: all four bet
    play(g, [(0, E2), (1, E2)])
    assert (g.betting["stake"], g.betting["fallback"]) == (4, 2)
    play(g, [(2, QUIERO), (0, QUIERO)])
    assert g.hand_number == 1
    rec = g.hand_log[-1]
    assert rec.fourth_lance == "punto"
    assert events_ab(rec) == [
        ("grande", "A", 1, "en paso"),
        ("chica", "B", 1, "en paso"),
        ("pares", "B", 1, "bonus"),
        ("punto", "A", 5, "stake+bonus"),
    ]
    assert by_team(mano, *rec.scores_after) == (6, 2)


@pytest.mark.parametrize("mano", MANOS)
def test_e21_game_ends_during_the_count(mano):
    g = new_game(E18_HANDS, mano, scores_ab=(35, 37))
    _e18_bets(g)
    assert g.is_over and g.winner == team_of(mano, 0)
    rec = g.hand_log[-1]
    assert events_ab(rec) == [
        ("grande", "A", 1, "en paso"),
        ("chica", "B", 1, "en paso"),
        ("pares", "A", 5, "bonus"),
    ]                                        # juego (B +5 -> 43) never counted
    assert by_team(mano, *g.scores) == (41, 38)
    assert rec.game_winner == team_of(mano, 0)
    assert by_team(mano, *g.game_results[-1].scores) == (41, 38)


@pytest.mark.parametrize("mano", MANOS)
def test_e22_game_ends_during_betting(mano):
    g = new_game(E16_HANDS, mano, scores_ab=(39, 30))
    cut(g)
    play(g, [(0, E2), (1, NO_QUIERO), (3, NO_QUIERO)])
    assert g.is_over and g.winner == team_of(mano, 0)
    assert by_team(mano, *g.scores) == (40, 30)
    rec = g.hand_log[-1]
    assert events_ab(rec) == [("grande", "A", 1, "refused")]
    assert rec.outcomes == ("refused", "not played", "not played", "not played")
    assert g.current_player == -1 and g.legal_actions() == []


@pytest.mark.parametrize("mano", MANOS)
@pytest.mark.parametrize(("kings", "outcome", "pares"), [(8, "uncontested", (1, 0)), (4, "void", (0, 0))])
def test_e23_pares_void(mano, kings, outcome, pares):
    rec = showdown_all_pass(["RC75", "S764", "A245", "C763"], mano, MusConfig(kings=kings))
    assert rec.outcomes[2] == outcome
    assert stones_ab(rec, "pares") == pares


# ----------------------------------------------------------------------------------------------------
# Mus phase (E24-E26) and rotation (E27)
@pytest.mark.parametrize("mano", MANOS)
def test_e24_mus_cut(mano):
    g = new_game(E16_HANDS, mano)
    hands = g.hands
    play(g, [(0, A.MUS), (1, A.MUS), (2, A.NO_MUS)])
    assert [ev.seat for ev in g.hand_actions] == [seat(mano, r) for r in range(3)]    # S3 never speaks
    assert g.lance == GRANDE and g.current_player == seat(mano, 0) and g.legal_actions() == OPEN
    assert g.hands == hands and g.stock_size == 24 and g.mus_round == 0 and g.discard_pile == ()


def _discard(g: MusGame, rel: int, mask: int) -> list[int]:
    """S``rel`` discards the slots of ``mask``; returns the cards thrown."""
    s = seat(g.mano, rel)
    assert g.current_player == s
    out = [c for i, c in enumerate(g.hands[s]) if mask >> i & 1]
    g.step(A.DISCARD_0 + mask)
    return out


@pytest.mark.parametrize("mano", MANOS)
def test_e25_reshuffle(mano):
    deck = deck_from_hands(E16_HANDS)
    g = MusGame.from_deck(deck, mano=mano, seed=7)
    assert g.stock_size == 24 and g.discard_pile == ()
    # Round 1: all MUS, everyone discards 4.
    play(g, [(r, A.MUS) for r in range(4)])
    for r in range(4):
        _discard(g, r, 0b1111)
    assert g.stock_size == 8 and len(g.discard_pile) == 16 and g.mus_round == 1
    for r in range(4):     # each was served 4 fresh cards from the front of the stock, S0 first
        assert sorted(g.hands[seat(mano, r)]) == sorted(deck[16 + 4 * r: 20 + 4 * r])
    pile1 = set(g.discard_pile)
    # Round 2: discards S0 3, S1 4, S2 2, S3 4 (pile 29).
    play(g, [(r, A.MUS) for r in range(4)])
    out = {0: _discard(g, 0, 0b0111), 1: _discard(g, 1, 0b1111), 2: _discard(g, 2, 0b0011)}
    kept = {r: [c for c in g.hands[seat(mano, r)]] for r in range(3)}
    out[3] = _discard(g, 3, 0b1111)
    assert len(pile1) + sum(len(o) for o in out.values()) == 29
    others = pile1 | set(out[0]) | set(out[1]) | set(out[3])      # the 27 cards reshuffled
    assert len(others) == 27
    assert g.stock_size == 22
    assert sorted(g.discard_pile) == sorted(out[2])                 # pile 2: S2's own discards
    h = {r: g.hands[seat(mano, r)] for r in range(4)}
    assert sorted(h[0]) == sorted(kept[0] + deck[32:35])            # S0: 3 -> stock 5
    assert sorted(h[1]) == sorted(deck[35:39])                      # S1: 4 -> stock 1
    extra = set(h[2]) - set(kept[2]) - {deck[39]}                   # S2: last stock card + 1 new
    assert deck[39] in h[2] and len(extra) == 1 and extra <= others
    assert set(h[3]) <= others                                      # S3 draws from the new stock
    assert set(g.stock) | extra | set(h[3]) == others
    # 16 in hands + 22 + 2 = 40, every card once
    cards = [c for hand in g.hands for c in hand] + list(g.stock) + list(g.discard_pile)
    assert all(len(hand) == 4 for hand in g.hands) and sorted(cards) == list(range(40))
    assert g.discard_counts == (by_rel(mano, (4, 4, 4, 4)), by_rel(mano, (3, 4, 2, 4)))
    assert g.mus_round == 2 and g.current_player == seat(mano, 0) and g.legal_actions() == [0, 1]


def by_rel(mano: int, counts: tuple[int, int, int, int]) -> tuple[int, ...]:
    """Counts given by relative seat -> by absolute seat."""
    return tuple(counts[(s - mano) % 4] for s in range(4))


@pytest.mark.parametrize("mano", [0, 2])
def test_e25_reshuffle_with_own_discards_included(mano):
    g = MusGame.from_deck(deck_from_hands(E16_HANDS), mano=mano, seed=7,
                          config=MusConfig(exclude_own_discards=False))
    for mask_set in ((15, 15, 15, 15), (7, 15, 3, 15)):
        play(g, [(r, A.MUS) for r in range(4)])
        for r, mask in enumerate(mask_set):
            _discard(g, r, mask)
    assert g.stock_size == 24 and g.discard_pile == ()     # 29 reshuffled, S2 takes 1, S3 takes 4
    cards = [c for hand in g.hands for c in hand] + list(g.stock)
    assert sorted(cards) == list(range(40))


@pytest.mark.parametrize("mano", MANOS)
def test_e26_zero_discard_masked_by_default(mano):
    g = new_game(E16_HANDS, mano)
    play(g, [(r, A.MUS) for r in range(4)])
    assert g.legal_actions() == list(range(3, 18))
    assert g.legal_action_mask()[A.DISCARD_0] == 0
    with pytest.raises(IllegalActionError):
        g.step(A.DISCARD_0)
    assert g.current_player == seat(mano, 0) and g.stock_size == 24


@pytest.mark.parametrize("mano", MANOS)
def test_e26_zero_discard_allowed(mano):
    g = new_game(E16_HANDS, mano, config=MusConfig(allow_zero_discard=True))
    play(g, [(r, A.MUS) for r in range(4)])
    assert g.legal_actions() == list(range(2, 18))
    before = g.hands
    play(g, [(0, A.DISCARD_0), (1, A.DISCARD_1), (2, A.DISCARD_0), (3, A.DISCARD_3)])
    assert g.hands[seat(mano, 0)] == before[seat(mano, 0)]      # receives no cards
    assert g.hands[seat(mano, 2)] == before[seat(mano, 2)]
    assert g.stock_size == 24 - 3 and len(g.discard_pile) == 3
    assert g.discard_counts == (by_rel(mano, (0, 1, 0, 2)),)
    assert g.mus_round == 1 and g.current_player == seat(mano, 0)


def test_e27_mano_rotation_within_a_game():
    g = new_game(E16_HANDS, mano=2)
    cut(g)
    pass_rest_of_hand(g)
    assert g.hand_number == 1 and g.mano == 3
    # Hand h+1: seat 3 speaks first, seat 2 is the postre and speaks last.
    order = []
    for _ in range(4):
        order.append(g.current_player)
        g.step(A.MUS)
    assert order == [3, 0, 1, 2]
    assert g.current_player == 3 and g.legal_actions() == list(range(3, 18))


def test_e27_mano_rotation_across_games():
    cfg = MusConfig(juegos_to_win_vaca=2)
    g = new_game(E16_HANDS, mano=2, scores_ab=(39, 30), config=cfg)
    assert g.scores == (39, 30)          # mano 2 is team 0
    cut(g)
    play(g, [(0, E2), (1, NO_QUIERO), (3, NO_QUIERO)])    # team 0 reaches 40: the game ends at once
    assert not g.is_over
    assert g.game_results[-1].winner == 0 and g.game_results[-1].scores == (40, 30)
    assert g.game_number == 1 and g.hand_number == 1 and g.games_won == (1, 0)
    assert g.scores == (0, 0) and g.mano == 3 and g.current_player == 3
    cut(g)
    pass_rest_of_hand(g)
    assert g.hand_number == 2 and g.mano == 0 and g.hand_log[-1].mano == 3
    assert [r.mano for r in g.hand_log] == [2, 3]


def test_helpers_sort_hand_matches_engine_slots():
    # The discard masks above rely on g.hands being in hand-slot order (§9.2).
    g = new_game(E16_HANDS, mano=1)
    assert all(list(h) == sort_hand(h) for h in g.hands)
