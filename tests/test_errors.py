"""Illegal input: every error the public API raises, its class and message, and that nothing changes.

Games are built with ``MusGame.from_deck`` on fixed decks and driven to each decision kind (mus call, discard,
opening round, response, response to an órdago, partner confirmation, manual declaration, game over).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hang_guards import PROCESS_S

from mus_env import Action, IllegalActionError, MusConfig, MusGame, Phase, action_to_string

DECK = list(range(40))
# Relative seat s holds DECK[s], DECK[s + 4], ...: S0 = {Ao, 5o, Ac, 5c}: pares (AA, 55), the others too.


def snapshot(g: MusGame) -> tuple:
    """Everything observable about a game that an illegal step must leave unchanged."""
    return (g.hands, g.scores, g.current_player, g.legal_actions(), g.legal_action_mask().tolist(), g.hand_actions,
            g.stock, g.discard_pile, g.phase, g.phase_name, g.hand_number, g.game_number, g.mus_round, g.betting,
            g.declarations, g.hand_stones, g.is_over, g.winner, len(g.hand_log), len(g.game_results),
            g.discard_counts)


def _game(actions: list[int], **cfg) -> MusGame:
    g = MusGame.from_deck(DECK, mano=1, config=MusConfig(**cfg), seed=7)
    for a in actions:
        g.step(a)
    return g


PASO, ENV2, QUIERO, NO_QUIERO, ORDAGO = (int(Action.PASO), int(Action.ENVIDO_2), int(Action.QUIERO),
                                         int(Action.NO_QUIERO), int(Action.ORDAGO))
STATES = {
    "mus call": ([], {}),
    "discard": ([0, 0, 0, 0], {}),
    "discard, second player": ([0, 0, 0, 0, int(Action.DISCARD_15)], {}),
    "grande opening": ([1], {}),
    "grande response": ([1, ENV2], {}),
    "grande response after r1 no quiero": ([1, ENV2, NO_QUIERO], {}),
    "response to órdago": ([1, ORDAGO], {}),
    "partner confirmation": ([1, ENV2, QUIERO], {}),
    "chica opening": ([1, PASO, PASO, PASO, PASO], {}),
    "manual pares declaration": ([1] + [PASO] * 8, {"auto_declare": False}),
    "forced no mus": ([], {"max_mus_rounds": 0}),
}
EXPECTED_PHASE = {
    "mus call": Phase.MUS_CALL, "discard": Phase.DISCARD, "discard, second player": Phase.DISCARD,
    "grande opening": Phase.BET_OPEN, "grande response": Phase.BET_RESPOND,
    "grande response after r1 no quiero": Phase.BET_RESPOND, "response to órdago": Phase.BET_RESPOND,
    "partner confirmation": Phase.BET_CONFIRM, "chica opening": Phase.BET_OPEN,
    "manual pares declaration": Phase.DECLARE, "forced no mus": Phase.MUS_CALL,
}


@pytest.fixture(params=sorted(STATES))
def state(request) -> MusGame:
    actions, cfg = STATES[request.param]
    g = _game(actions, **cfg)
    assert g.phase == EXPECTED_PHASE[request.param], (request.param, g.describe())
    return g


def _assert_message(msg: str, g: MusGame, action_text: str) -> None:
    assert action_text in msg, msg
    assert re.search(rf"\bseat {g.current_player}\b", msg), msg
    assert g.phase_name in msg, msg
    for a in g.legal_actions():
        assert action_to_string(a, g.config) in msg, (a, msg)


# ----------------------------------------------------------------------------------------------------------
# step


def test_every_illegal_action_id_is_refused(state: MusGame) -> None:
    g = state
    legal = set(g.legal_actions())
    assert legal
    before = snapshot(g)
    for a in range(31):
        if a in legal:
            continue
        with pytest.raises(IllegalActionError) as info:
            g.step(a)
        assert isinstance(info.value, ValueError)
        msg = str(info.value)
        _assert_message(msg, g, action_to_string(a, g.config))
        assert re.search(rf"\b{a}\b", msg), msg
        assert snapshot(g) == before, a


@pytest.mark.parametrize("bad", [-1, 31, 999, 1.5, "0", None, True, False, np.True_, np.float64(0.0), [0], 2**70])
def test_non_actions_are_refused(state: MusGame, bad) -> None:
    g = state
    before = snapshot(g)
    with pytest.raises(IllegalActionError) as info:
        g.step(bad)
    assert isinstance(info.value, ValueError)
    _assert_message(str(info.value), g, str(bad) if not isinstance(bad, str) else repr(bad))
    assert snapshot(g) == before


def test_numpy_integer_actions_are_accepted() -> None:
    g = _game([])
    g.step(np.int64(Action.MUS))
    g.step(np.int8(Action.NO_MUS))
    assert g.phase == Phase.BET_OPEN


def test_step_after_game_over() -> None:
    g = _game([1, ORDAGO, QUIERO])
    assert g.is_over and g.current_player == -1 and g.legal_actions() == []
    assert not g.legal_action_mask().any()
    before = snapshot(g)
    for a in (0, 1, 18, 24, 26, -1, 31, 1.5, None):
        with pytest.raises(ValueError) as info:
            g.step(a)
        assert "over" in str(info.value), str(info.value)
    with pytest.raises(ValueError):
        g.step_envido(2)
    assert snapshot(g) == before


def test_step_envido_errors() -> None:
    g = _game([1])                     # grande opening: envidos legal
    before = snapshot(g)
    for bad in (1, 0, -2, 2.5, "3", None, True):
        with pytest.raises(IllegalActionError):
            g.step_envido(bad)
        assert snapshot(g) == before
    m = _game([])                      # mus call: no envido
    before = snapshot(m)
    with pytest.raises(IllegalActionError) as info:
        m.step_envido(7)
    assert "envido 7" in str(info.value) and m.phase_name in str(info.value)
    assert snapshot(m) == before
    g.step_envido(7)                   # any int >= 2 is accepted where envido is legal
    assert g.betting["stake"] == 7


# ----------------------------------------------------------------------------------------------------------
# from_deck


@pytest.mark.parametrize("deck", [
    list(range(39)),
    list(range(41)),
    [0] + list(range(1, 39)) + [0],
    list(range(1, 41)),
    [-1] + list(range(1, 40)),
    [float(c) for c in range(40)],
    np.arange(40, dtype=np.float64),
    [str(c) for c in range(40)],
    [],
    None,
    np.arange(40).reshape(4, 10).tolist()[:3],
], ids=["39 ids", "41 ids", "duplicate", "id 40", "id -1", "floats", "float array", "strings", "empty", "None",
        "ragged"])
def test_from_deck_rejects_non_permutations(deck) -> None:
    with pytest.raises(ValueError, match="deck"):
        MusGame.from_deck(deck)


def test_from_deck_accepts_any_int_permutation() -> None:
    rng = np.random.default_rng(0)
    for dtype in (np.int8, np.int64, np.uint8):
        deck = rng.permutation(40).astype(dtype)
        g = MusGame.from_deck(deck, mano=2)
        for rel in range(4):
            assert sorted(g.hands[(2 + rel) % 4]) == sorted(int(c) for c in deck[rel:16:4])
        assert g.stock == tuple(int(c) for c in deck[16:])


@pytest.mark.parametrize("mano", [4, -1, "0", 1.5, None, True])
def test_from_deck_rejects_bad_mano(mano) -> None:
    with pytest.raises(ValueError, match="mano"):
        MusGame.from_deck(DECK, mano=mano)


@pytest.mark.parametrize(("scores", "target"), [
    ((-1, 0), 40), ((0, -5), 40),
    ((40, 0), 40), ((0, 40), 40), ((41, 3), 40), ((30, 0), 30), ((0, 99), 30),
    ((1.5, 0), 40), (("1", 0), 40), ((1, 2, 3), 40), ((1,), 40), (None, 40), ((True, 0), 40),
])
def test_from_deck_rejects_bad_scores(scores, target) -> None:
    with pytest.raises(ValueError, match="score"):
        MusGame.from_deck(DECK, scores=scores, config=MusConfig(target=target))


def test_from_deck_accepts_scores_just_below_target() -> None:
    g = MusGame.from_deck(DECK, scores=(39, 39))
    assert g.scores == (39, 39)
    g = MusGame.from_deck(DECK, scores=(29, 0), config=MusConfig(target=30))
    assert g.scores == (29, 0)


@pytest.mark.parametrize("seed", [1.5, "0", True, [1]])
def test_bad_seed(seed) -> None:
    with pytest.raises(ValueError, match="seed"):
        MusGame(seed=seed)
    with pytest.raises(ValueError, match="seed"):
        MusGame.from_deck(DECK, seed=seed)


@pytest.mark.parametrize("seed", [-1, 2**64, 2**64 + 5, -(2**64), 10**30])
def test_seeds_outside_64_bits_are_refused_not_wrapped(seed: int) -> None:
    """``seed=2**64`` would deal the game of ``0`` and ``-1`` that of ``2**64 - 1``: both engines refuse them,
    naming the range; the bounds themselves are fine."""
    from mus_env import VectorMusEnv

    for make in (lambda: MusGame(seed=seed), lambda: MusGame.from_deck(DECK, seed=seed),
                 lambda: VectorMusEnv(2, seed=seed)):
        with pytest.raises(ValueError, match=r"seed must be an int in 0\.\.2\*\*64 - 1"):
            make()
    venv = VectorMusEnv(2, seed=3)
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=seed)
    assert venv.seed == 3
    assert MusGame(seed=2**64 - 1).seed == 2**64 - 1 and MusGame(seed=0).seed == 0
    assert VectorMusEnv(2, seed=2**64 - 1).seed == 2**64 - 1
    assert MusGame(seed=np.uint64(2**64 - 1)).seed == 2**64 - 1


def test_bad_config_object() -> None:
    with pytest.raises(ValueError, match="config"):
        MusGame(config={"kings": 8})


# ----------------------------------------------------------------------------------------------------------
# MusConfig

BAD_CONFIG_VALUES = {
    "kings": [5, 0, "8", True, None, [8]],
    "target": [0, -5, 40.0, "40", True, None],
    "juegos_to_win_vaca": [0, 4, "2", True, None],
    "vacas_to_win_match": [0, 4, "1", True, None],
    "real31": ["on", "", None, True, "SOTA"],
    "punto": ["maybe", 1, 0, None, "ON"],
    "allow_zero_discard": [1, 0, "True", None],
    "partner_override": [0, "yes", None],
    "holders_only_speak": [None, "False", 1],
    "exclude_own_discards": [1, "on", None],
    "bet_sizes": [(2, 3, 4, 5), (2, 3, 4, 5, 10, 20), (1, 2, 3, 4, 5), (2, 2, 3, 4, 5), (3, 2, 4, 5, 10), 5,
                  (2, 3, 4, 5, 10.0), (2, 3, 4, 5, True), "23456", None],
    "max_mus_rounds": [-1, 1.5, "3", True],
    "max_stake": [1, 0, -1, 40.0, "40", True, 10**7],
    "signals": ["on", "", None, "false", "TRUTHFUL"],
    "signal_intercept_p": [-0.1, 1.5, "0.5", None, True, float("nan")],
    "auto_declare": [1, "on", None],
    "first_mano": [4, -1, "0", "Random", True, None],
}


def test_bad_config_table_covers_every_field() -> None:
    assert set(BAD_CONFIG_VALUES) == {f.name for f in dataclasses.fields(MusConfig)}


@pytest.mark.parametrize(("field", "value"), [(f, v) for f, vs in BAD_CONFIG_VALUES.items() for v in vs])
def test_bad_config_value_names_the_field(field: str, value) -> None:
    with pytest.raises(ValueError, match=rf"\b{field}\b"):
        MusConfig(**{field: value})
    with pytest.raises(ValueError, match=rf"\b{field}\b"):
        MusConfig().replace(**{field: value})


@pytest.mark.parametrize(("field", "value"), [("kings", 8.0), ("kings", 4.0), ("juegos_to_win_vaca", 2.0),
                                              ("vacas_to_win_match", 1.0), ("first_mano", 1.0)])
def test_integral_floats_are_not_ints(field: str, value: float) -> None:
    """``target=40.0`` and ``max_mus_rounds=1.0`` are refused; the other int fields must refuse floats too."""
    with pytest.raises(ValueError, match=rf"\b{field}\b"):
        MusConfig(**{field: value})


@pytest.mark.parametrize("p", [0.3, 1, 1.0, 1e-9])
def test_intercept_needs_signals(p: float) -> None:
    """``signal_intercept_p`` is a probability of seeing a sign: with ``signals="off"`` there is none, and the
    config refuses a non-zero one as ``mus train`` and ``mus tournament`` do (naming both fields)."""
    with pytest.raises(ValueError, match=r"signal_intercept_p.*signals='off'"):
        MusConfig(signal_intercept_p=p)
    with pytest.raises(ValueError, match="signal_intercept_p"):
        MusConfig(signals="truthful", signal_intercept_p=p).replace(signals="off")
    with pytest.raises(ValueError, match="signal_intercept_p"):
        MusConfig.from_dict({"signals": "off", "signal_intercept_p": p})
    assert MusConfig(signals="free", signal_intercept_p=p).signal_intercept_p == float(p)
    assert MusConfig(signals="off", signal_intercept_p=0).signal_intercept_p == 0.0


def test_good_config_values_are_accepted() -> None:
    cfg = MusConfig(kings=4, target=30, juegos_to_win_vaca=3, vacas_to_win_match=2, real31="sota_4suits",
                    punto="off", allow_zero_discard=True, partner_override=False, holders_only_speak=False,
                    exclude_own_discards=False, bet_sizes=[2, 4, 8, 16, 32], max_mus_rounds=0, max_stake=2,
                    signals="free", signal_intercept_p=1, auto_declare=False, first_mano=3)
    assert cfg.punto is False and cfg.bet_sizes == (2, 4, 8, 16, 32) and cfg.signal_intercept_p == 1.0
    assert MusConfig(punto="on").punto is True
    assert MusConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="bogus"):
        MusConfig.from_dict({"bogus": 1})
    for not_a_dict in ([], [("kings", 4)], None, "kings=4", 40):
        with pytest.raises(ValueError, match="needs a dict"):
            MusConfig.from_dict(not_a_dict)
    with pytest.raises(ValueError, match="unknown MusConfig field"):
        MusConfig.from_dict({1: 2, "kings": 8})                  # a key that is not even a string


def test_make_agent_rejects_a_spec_that_is_not_a_string() -> None:
    from agents import make_agent

    for spec in (None, 3, ["rule"], b"rule"):
        with pytest.raises(ValueError, match="an agent spec is a string"):
            make_agent(spec)


def test_interfaces_without_signs_refuse_signals_configs() -> None:
    """The engines play señas; the batched SB3 VecEnv does not yet, and says so instead of misbehaving."""
    cfg = MusConfig(signals="truthful")
    assert MusGame(cfg, seed=0).num_actions == 47
    assert MusGame.from_deck(DECK, config=cfg).legal_action_mask().shape == (47,)
    sb3 = pytest.importorskip("mus_env.adapters.sb3")
    with pytest.raises(NotImplementedError, match="señas"):
        sb3.MusVecEnv(4, config=cfg)


# ----------------------------------------------------------------------------------------------------------
# dependency direction (DESIGN.md, STYLE.md 1)


def test_rules_modules_import_no_rl_framework() -> None:
    code = (
        "import sys\n"
        "import mus_env.game, mus_env.tables, mus_env.cards, mus_env.config, mus_env.actions, mus_env.shuffle\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('gymnasium', 'pettingzoo', 'torch'))\n"
        "print(','.join(bad))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PROCESS_S, cwd=repo)
    assert out.returncode == 0, f"rules modules imported: {out.stdout.strip()} {out.stderr[-2000:]}"


# ----------------------------------------------------------------------------------------------------
# numbers at the edges (issue 11)
def test_amounts_are_bounded_to_what_the_engines_represent() -> None:
    from mus_env.config import MAX_BET, MAX_TARGET

    with pytest.raises(ValueError, match="bet_sizes"):
        MusConfig(bet_sizes=(2, 3, 4, 5, 2**30))
    with pytest.raises(ValueError, match="target"):
        MusConfig(target=MAX_TARGET + 1)
    MusConfig(bet_sizes=(2, 3, 4, 5, MAX_BET), target=MAX_TARGET)          # the bounds themselves are fine
    g = MusGame(MusConfig(first_mano=0), seed=0)
    g.step(1)                                                               # no mus: grande opens
    before = g.observe(g.current_player)
    with pytest.raises(IllegalActionError, match="envido amount"):
        g.step_envido(10**40)
    assert np.array_equal(g.observe(g.current_player), before)


def test_vector_reset_takes_its_own_uint64_game_seeds() -> None:
    from mus_env import VectorMusEnv

    venv = VectorMusEnv(4, seed=5)
    venv.reset()
    big = np.array([2**63, 2**64 - 1, 7, 2**63 + 12345], dtype=np.uint64)
    decks = np.tile(np.arange(40), (4, 1))
    venv.reset_from_decks(decks, np.zeros(4, dtype=int), seeds=big)
    assert np.array_equal(venv.game_seeds, big)
    g = MusGame.from_deck(decks[1], 0, seed=2**64 - 1)
    assert np.array_equal(venv.observe([1], [0])[0][0], g.observe(0))
    with pytest.raises(ValueError, match="non-negative"):
        venv.reset_from_decks(decks, np.zeros(4, dtype=int), seeds=[-1, 0, 0, 0])


def test_from_deck_refuses_a_nested_deck() -> None:
    with pytest.raises(ValueError, match="flat sequence of 40"):
        MusGame.from_deck(np.arange(40).reshape(2, 20))


def test_vector_huge_unsigned_action_is_named_as_given() -> None:
    from mus_env import VectorMusEnv

    venv = VectorMusEnv(2, seed=0)
    venv.reset()
    state = venv.state()
    with pytest.raises(ValueError, match=str(2**64 - 1)):
        venv.step(np.array([2**64 - 1, 0], dtype=np.uint64))
    assert np.array_equal(venv.state(), state)


def test_vector_observe_checks_its_tables() -> None:
    from mus_env import VectorMusEnv

    venv = VectorMusEnv(2, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        venv.observe()
    venv.reset()
    for bad in ([0.5], [-1], [2]):
        with pytest.raises(ValueError, match="tables"):
            venv.observe(bad)
    with pytest.raises(ValueError, match="seats"):
        venv.observe([0], [4])
