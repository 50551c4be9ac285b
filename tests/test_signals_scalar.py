"""The señas channel (RULES.md §8, mus_env.signals) in the scalar engine MusGame: windows, masks, interception,
the observation's signal block, clone, records; and signals="off" unchanged (the recorded digests)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mus_env import MusConfig, MusGame
from mus_env.game import ActionEvent, IllegalActionError, Phase
from mus_env.observation import (
    OBS_DIM,
    OFFSETS,
    SIGNAL_OBS_OFFSETS,
    decode,
    encode,
    encode_state,
    obs_dim,
    observation_table,
    state_dim,
)
from mus_env.records import RecordError, format_record, game_record, load_record, replay, save_record
from mus_env.signals import (
    ALL_SIGNS,
    NUM_SIGNS,
    SIGNAL_BASE,
    SIGNAL_DIM,
    WINDOW_GRANDE,
    WINDOW_MUS,
    Sign,
    legal_signs,
    num_actions,
    sees_sign,
    true_signs,
)

TRUTHFUL = MusConfig(signals="truthful", target=40)
FREE = MusConfig(signals="free", target=40, signal_intercept_p=0.5)
#: Configs that reach every kind of window: 4 kings, a 31 real (REAL31 token), a capped mus (forced NO_MUS).
CONFIGS = {
    "truthful8": TRUTHFUL,
    "truthful4_real31": MusConfig(signals="truthful", kings=4, real31="any10", target=40, signal_intercept_p=0.3),
    "free_capped": MusConfig(signals="free", target=40, max_mus_rounds=1, signal_intercept_p=1.0),
    "truthful_declare": MusConfig(signals="truthful", auto_declare=False, target=40, max_mus_rounds=0),
}


def _policy(rng: np.random.Generator, mus_p: float = 0.6) -> Callable[[MusGame], int]:
    """Random legal play with long mus phases and few órdagos (games of several hands)."""
    def act(g: MusGame) -> int:
        legal = g.legal_actions()
        if 0 in legal and rng.random() < mus_p:
            return 0
        if 18 in legal and rng.random() < 0.7:                  # paso
            return 18
        if 24 in legal and rng.random() < 0.9:                  # quiero / no quiero, seldom a raise
            return 25 if 25 in legal and rng.random() < 0.5 else 24
        calm = [a for a in legal if a != 26] or legal
        return int(rng.choice(calm))
    return act


def _play(cfg: MusConfig, seed: int, on_decision: Callable[[MusGame], None] | None = None,
          mus_p: float = 0.6, max_steps: int = 100_000) -> MusGame:
    rng = np.random.default_rng(seed)
    act = _policy(rng, mus_p)
    g = MusGame(cfg, seed=seed)
    for _ in range(max_steps):
        if g.is_over:
            break
        if on_decision is not None:
            on_decision(g)
        g.step(act(g))
    return g


def _bits(legal: list[int]) -> int:
    return sum(1 << (a - SIGNAL_BASE) for a in legal)


def _views(g: MusGame) -> tuple:
    """Everything a step could change: all four observations, the state, the mask, the public record."""
    return (tuple(g.observe(s).tobytes() for s in range(4)), g.state().tobytes(), g.legal_action_mask().tobytes(),
            g.current_player, g.phase, g.sign_window, g.sign_window_counter, g.hand_actions, g.scores,
            tuple(repr(g.signs_seen(s)) for s in range(4)), repr(g.signs_made()), g.hands)


# ----------------------------------------------------------------------------------------------------------
# windows


def _check_hand_actions(actions: tuple[ActionEvent, ...], mano: int, mus_rounds: int) -> None:
    """A hand's actions follow the window pattern of the spec: 4 signs (mano first) before each mus-call
    round and 4 before grande, and no sign anywhere else."""
    signs = [e for e in actions if e.action >= SIGNAL_BASE]
    assert len(signs) == 4 * (mus_rounds + 1) + 4
    seq = list(actions)
    i = 0
    for r in range(mus_rounds + 1):
        assert [e.seat for e in seq[i:i + 4]] == [(mano + k) % 4 for k in range(4)]
        assert all(e.action >= SIGNAL_BASE and not e.auto for e in seq[i:i + 4])
        i += 4
        if r < mus_rounds:                  # four MUS, four discards
            assert [e.action for e in seq[i:i + 4]] == [0, 0, 0, 0]
            assert all(2 <= e.action <= 17 for e in seq[i + 4:i + 8])
            i += 8
    while seq[i].action == 0:               # mus calls until the cut
        i += 1
    assert seq[i].action == 1
    i += 1
    assert [e.seat for e in seq[i:i + 4]] == [(mano + k) % 4 for k in range(4)]
    assert all(e.action >= SIGNAL_BASE for e in seq[i:i + 4])
    assert all(e.action < SIGNAL_BASE for e in seq[i + 4:])


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_windows_open_where_the_spec_says(name: str) -> None:
    cfg = CONFIGS[name]
    seen_kinds = set()
    hands = 0
    for seed in range(6):

        def on(g: MusGame) -> None:
            if g.phase == Phase.SIGNAL:
                kind = g.sign_window
                # the counter: discard rounds completed (mus window), + 1 for the grande window
                assert g.sign_window_counter == g.mus_round + (kind == WINDOW_GRANDE)
                assert g.phase_name == f"seña ({'mus' if kind == WINDOW_MUS else 'grande'} window)"
                assert g.lance == -1 and g.betting is None
                assert all(a >= SIGNAL_BASE for a in g.legal_actions())
                seen_kinds.add(kind)
            else:
                assert g.sign_window is None and g.sign_window_counter is None
                assert all(a < SIGNAL_BASE for a in g.legal_actions())

        g = _play(cfg, seed, on)
        for h in g.hand_log:
            _check_hand_actions(h.actions, h.mano, h.mus_rounds)
            if cfg.max_mus_rounds is not None:
                assert h.mus_rounds <= cfg.max_mus_rounds
            hands += 1
    assert seen_kinds == {WINDOW_MUS, WINDOW_GRANDE} and hands >= 6


def test_capped_mus_still_has_its_window() -> None:
    """max_mus_rounds=0: the deal's mus window, then the forced NO_MUS, then the grande window."""
    g = MusGame(MusConfig(signals="free", max_mus_rounds=0, first_mano=2), seed=4)
    for k in range(4):
        assert g.phase == Phase.SIGNAL and g.current_player == (2 + k) % 4 and g.sign_window == WINDOW_MUS
        g.step(SIGNAL_BASE + Sign.MUS)
    assert g.phase == Phase.MUS_CALL and g.current_player == 2 and g.legal_actions() == [1]
    g.step(1)
    assert g.phase == Phase.SIGNAL and g.sign_window == WINDOW_GRANDE and g.sign_window_counter == 1
    assert g.current_player == 2


def test_sign_decisions_are_recorded_and_score_nothing() -> None:
    g = MusGame(MusConfig(signals="free", first_mano=1), seed=8)
    before = (g.scores, g.hand_stones)
    for t in (Sign.DUPLES, Sign.NONE, Sign.CIEGO, Sign.MUS):
        g.step(SIGNAL_BASE + t)
    assert g.hand_actions == tuple(ActionEvent((1 + k) % 4, SIGNAL_BASE + t) for k, t in
                                   enumerate((Sign.DUPLES, Sign.NONE, Sign.CIEGO, Sign.MUS)))
    assert (g.scores, g.hand_stones) == before
    assert g.signs_made() == {"mus": {1: Sign.DUPLES, 2: Sign.NONE, 3: Sign.CIEGO, 0: Sign.MUS}, "grande": {}}


# ----------------------------------------------------------------------------------------------------------
# masks


@pytest.mark.parametrize("kings", [8, 4])
def test_truthful_masks_are_the_current_hands_true_signs(kings: int) -> None:
    cfg = MusConfig(signals="truthful", kings=kings, real31="any10", target=40)
    met: set[int] = set()
    after_discard = 0

    def on(g: MusGame) -> None:
        nonlocal after_discard
        if g.phase != Phase.SIGNAL:
            return
        hand = g.hands[g.current_player]
        legal = g.legal_actions()
        bits = _bits(legal)
        assert bits == legal_signs(hand, cfg, g.sign_window) == true_signs(hand, cfg, g.sign_window)
        assert bits & (1 << Sign.NONE)
        assert bool(bits & (1 << Sign.MUS)) == (g.sign_window == WINDOW_MUS)
        mask = g.legal_action_mask()
        assert mask.shape == (47,) and mask.dtype == np.int8
        assert list(np.flatnonzero(mask)) == legal
        met.update(t for t in range(NUM_SIGNS) if bits >> t & 1)
        if g.mus_round and g.sign_window == WINDOW_MUS:
            after_discard += 1

    for seed in range(30):
        _play(cfg, seed, on)
    assert after_discard > 0
    # the games met most tokens (the rare ones need luck: SOLOMILLO, TRES_ASES, REAL31)
    assert len(met) >= 12, sorted(met)


def test_truthful_masks_follow_the_hand_after_a_discard() -> None:
    """A mus window after a discard round offers the tokens of the new hand, not of the dealt one."""
    changed = 0
    for seed in range(40):
        g = MusGame(TRUTHFUL, seed=seed)
        dealt = g.hands
        while g.phase == Phase.SIGNAL:
            g.step(SIGNAL_BASE)
        for _ in range(4):
            g.step(0)
        for _ in range(4):
            g.step(17)                                          # discard all four cards
        for _ in range(4):
            seat = g.current_player
            assert g.phase == Phase.SIGNAL and g.sign_window_counter == 1
            bits = _bits(g.legal_actions())
            assert bits == true_signs(g.hands[seat], TRUTHFUL, WINDOW_MUS)
            changed += bits != true_signs(dealt[seat], TRUTHFUL, WINDOW_MUS)
            g.step(SIGNAL_BASE)
    assert changed > 20


def test_free_masks_have_all_sixteen_tokens() -> None:
    def on(g: MusGame) -> None:
        if g.phase == Phase.SIGNAL:
            assert g.legal_actions() == list(range(SIGNAL_BASE, SIGNAL_BASE + 16))
            assert _bits(g.legal_actions()) == ALL_SIGNS
            assert g.legal_action_mask()[SIGNAL_BASE:].all() and not g.legal_action_mask()[:SIGNAL_BASE].any()
        else:
            assert g.legal_action_mask().shape == (47,) and not g.legal_action_mask()[SIGNAL_BASE:].any()

    for seed in range(4):
        _play(FREE, seed, on)


def test_action_space_size() -> None:
    assert MusGame(TRUTHFUL, seed=1).num_actions == num_actions(TRUTHFUL) == 47
    off = MusGame(MusConfig(), seed=1)
    assert off.num_actions == 31 and off.legal_action_mask().shape == (31,)
    assert off.observe(0).shape == (OBS_DIM,)


# ----------------------------------------------------------------------------------------------------------
# illegal actions


def _illegal_cases(g: MusGame) -> list[int]:
    if g.phase == Phase.SIGNAL:
        masked = [SIGNAL_BASE + t for t in range(NUM_SIGNS) if SIGNAL_BASE + t not in g.legal_actions()]
        return [0, 1, 2, 18, 24, 26, 27, 30, 47, 100, -1] + masked
    return list(range(SIGNAL_BASE, SIGNAL_BASE + NUM_SIGNS)) + [47]


@pytest.mark.parametrize("cfg", [TRUTHFUL, FREE], ids=["truthful", "free"])
def test_illegal_signs_raise_and_change_nothing(cfg: MusConfig) -> None:
    # sign: a non-sign id at a sign decision; masked: a masked-out token; other: a sign id elsewhere
    checked = {"sign": 0, "masked": 0, "other": 0}

    def on(g: MusGame) -> None:
        if checked["other"] > 30 and g.phase != Phase.SIGNAL:
            return
        before = _views(g)
        for a in _illegal_cases(g):
            with pytest.raises(IllegalActionError, match=f"seat {g.current_player}"):
                g.step(a)
            assert _views(g) == before, a
            if g.phase != Phase.SIGNAL:
                checked["other"] += 1
            elif SIGNAL_BASE <= a < SIGNAL_BASE + NUM_SIGNS:
                checked["masked"] += 1
            else:
                checked["sign"] += 1
        if g.phase == Phase.SIGNAL:
            with pytest.raises(IllegalActionError):
                g.step_envido(7)
            assert _views(g) == before

    for seed in range(3):
        _play(cfg, seed, on)
    assert checked["sign"] > 0 and checked["other"] > 0
    assert (checked["masked"] > 0) == (cfg.signals == "truthful")


def test_illegal_messages_name_signs() -> None:
    g = MusGame(TRUTHFUL, seed=2)
    with pytest.raises(IllegalActionError, match=r"seña \(mus window\).*legal actions: 31 SIGN_NONE"):
        g.step(0)
    while g.phase == Phase.SIGNAL:
        g.step(SIGNAL_BASE)
    with pytest.raises(IllegalActionError, match=r"action 46 \(SIGN_MUS\) is not legal .* mus call"):
        g.step(46)
    with pytest.raises(IllegalActionError, match=r"out of range 0\.\.46"):
        g.step(47)
    off = MusGame(MusConfig(), seed=2)
    with pytest.raises(IllegalActionError, match=r"out of range 0\.\.30"):
        off.step(SIGNAL_BASE)


# ----------------------------------------------------------------------------------------------------------
# interception and the observation's signal block


def _block(obs: np.ndarray, name: str) -> np.ndarray:
    return obs[SIGNAL_OBS_OFFSETS[name]].reshape(4, NUM_SIGNS)


def _check_seen(g: MusGame) -> int:
    """The signal block of every seat agrees with sees_sign (the spec's counter) and with signs_seen;
    returns the number of (sign, opponent) pairs checked."""
    made = g.signs_made()
    p = g.config.signal_intercept_p
    pairs = 0
    for o in range(4):
        obs = g.observe(o)
        seen = g.signs_seen(o)
        d = decode(obs)
        for kind in ("mus", "grande"):
            block = _block(obs, f"signs_{kind}")
            for s in range(4):
                q = (s - o) % 4
                t = made[kind].get(s)
                if t is None:
                    assert not block[q].any() and s not in seen[kind]
                    continue
                # the latest mus window opened after the last discard round; the grande window counts one more
                w = g.mus_round if kind == "mus" else g.mus_round + 1
                expect = sees_sign(g.seed, g.hand_number, w, s, o, p)
                if (s - o) % 2 == 0:
                    assert expect
                else:
                    pairs += 1
                assert (s in seen[kind]) == expect
                assert d[f"signs_{kind}"][q] == (t if expect else None)
                if expect:
                    assert block[q, t] == 1.0 and block[q].sum() == 1.0
                else:
                    assert not block[q].any()
    return pairs


@pytest.mark.parametrize("p", [0.0, 1.0, 0.3])
def test_interception_follows_sees_sign(p: float) -> None:
    cfg = MusConfig(signals="free", target=40, signal_intercept_p=p)
    pairs = 0
    later_hands = 0

    def on(g: MusGame) -> None:
        nonlocal pairs, later_hands
        if g.phase == Phase.SIGNAL or g.phase == Phase.MUS_CALL:
            pairs += _check_seen(g)
            later_hands += g.hand_number > 0

    for seed in range(3):
        g = _play(cfg, seed, on)
        _check_seen(g)                                   # the terminal view keeps the last hand's signs
        assert g.signs_made()["grande"]
    assert pairs > 50 and later_hands > 10
    if p == 0.0:
        # p = 0: partner always, opponents never
        g = _play(cfg, 5)
        for o in range(4):
            assert set(g.signs_seen(o)["grande"]) == {o, (o + 2) % 4}
    if p == 1.0:
        g = _play(cfg, 5)
        for o in range(4):
            assert set(g.signs_seen(o)["grande"]) == {0, 1, 2, 3}


@pytest.mark.parametrize("p", [0.0, 0.4, 1.0])
def test_hand_actions_seen_hide_the_signs_not_intercepted(p: float) -> None:
    cfg = MusConfig(signals="free", target=40, signal_intercept_p=p, max_mus_rounds=3)
    hidden = 0

    def on(g: MusGame) -> None:
        nonlocal hidden
        for o in range(4):
            seen = g.hand_actions_seen(o)
            everything = g.hand_actions
            assert [e for e in everything if e.action < SIGNAL_BASE] == [e for e in seen if e.action < SIGNAL_BASE]
            own = [e for e in everything if e.action >= SIGNAL_BASE and (e.seat - o) % 2 == 0]
            assert own == [e for e in seen if e.action >= SIGNAL_BASE and (e.seat - o) % 2 == 0]
            opp = [e for e in seen if e.action >= SIGNAL_BASE and (e.seat - o) % 2]
            if p == 0.0:
                assert not opp
            if p == 1.0:
                assert seen == everything
            hidden += len(everything) - len(seen)
            # seen is everything less some signs (a subsequence): flag each action of the hand seen or not
            flags, k = [], 0
            for e in everything:
                flags.append(k < len(seen) and seen[k] == e)
                k += flags[-1]
            assert k == len(seen)
            # the signs of the latest mus window and of the grande window are those of signs_seen
            latest = g.signs_seen(o)
            if g.sign_window is None and g.phase != Phase.DISCARD:
                n_grande = len(g.signs_made()["grande"])
                signs = [(e, f) for e, f in zip(everything, flags, strict=True) if e.action >= SIGNAL_BASE]
                grande = signs[len(signs) - n_grande:]
                mus = signs[len(signs) - n_grande - 4:len(signs) - n_grande]
                assert {e.seat: e.action - SIGNAL_BASE for e, f in mus if f} == latest["mus"]
                assert {e.seat: e.action - SIGNAL_BASE for e, f in grande if f} == latest["grande"]
        assert MusGame(MusConfig(), seed=1).hand_actions_seen(0) == ()

    for seed in range(3):
        _play(cfg, seed, on)
    assert (hidden > 0) == (p < 1.0)


def test_interception_rate_is_p() -> None:
    p = 0.3
    cfg = MusConfig(signals="free", target=10, signal_intercept_p=p)
    seen = trials = 0
    for seed in range(150):
        g = _play(cfg, seed, mus_p=0.3)
        made = g.signs_made()["grande"]
        for o in range(4):
            got = g.signs_seen(o)["grande"]
            for s in made:
                if (s - o) % 2:
                    trials += 1
                    seen += s in got
    bound = 5 * math.sqrt(p * (1 - p) / trials)
    assert trials >= 1000
    assert abs(seen / trials - p) < bound, (seen, trials)


def _mask_opponent_slots(obs: np.ndarray) -> np.ndarray:
    """A view without what depends on p: the opponents' slots (q = 1, 3) of the sign blocks and p itself."""
    x = obs.copy()
    for name in ("signs_mus", "signs_grande"):
        b = x[SIGNAL_OBS_OFFSETS[name]].reshape(4, NUM_SIGNS)
        b[1] = 0.0
        b[3] = 0.0
        x[SIGNAL_OBS_OFFSETS[name]] = b.ravel()
    x[SIGNAL_OBS_OFFSETS["sign_config"].start + 1] = 0.0
    return x


def test_own_view_does_not_depend_on_being_intercepted() -> None:
    """The same seed and actions under p = 0, 0.3, 1: each seat's view differs only in the opponents' slots
    (what it intercepted) and p; its own token and its partner's are the same whoever saw them."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        games = [MusGame(MusConfig(signals="free", target=40, signal_intercept_p=p), seed=seed)
                 for p in (0.0, 0.3, 1.0)]
        steps = intercepted = 0
        while not games[0].is_over and steps < 400:
            for s in range(4):
                views = [_mask_opponent_slots(g.observe(s)) for g in games]
                assert all(np.array_equal(views[0], v) for v in views[1:])
                team = {s, (s + 2) % 4}
                own = [{k: {x: t for x, t in g.signs_seen(s)[k].items() if x in team} for k in ("mus", "grande")}
                       for g in games]
                assert own[0] == own[1] == own[2]
                # what differs is real: p = 0 shows no opponent's token, p = 1 every one
                assert all(x in team for k in ("mus", "grande") for x in games[0].signs_seen(s)[k])
                assert games[2].signs_seen(s) == games[2].signs_made()
                intercepted += len(games[2].signs_made()["mus"]) > len(games[0].signs_seen(s)["mus"])
            a = int(rng.choice(games[0].legal_actions()))
            for g in games:
                g.step(a)
            steps += 1
        assert intercepted > 0


def test_interception_is_reproducible_from_the_seed() -> None:
    cfg = MusConfig(signals="free", target=40, signal_intercept_p=0.5)
    a, b = _play(cfg, 11), _play(cfg, 11)
    assert [h.actions for h in a.hand_log] == [h.actions for h in b.hand_log]
    for s in range(4):
        assert np.array_equal(a.observe(s), b.observe(s)) and a.signs_seen(s) == b.signs_seen(s)
    # another seed at the same actions sees other interceptions somewhere
    other = _replay_actions(cfg, 12, [e for h in a.hand_log for e in h.actions if not e.auto])
    assert other is None or any(other.signs_seen(s) != a.signs_seen(s) for s in range(4))


def _replay_actions(cfg: MusConfig, seed: int, actions: list[ActionEvent]) -> MusGame | None:
    """The actions of a game replayed on another seed (None if they stop being legal there)."""
    g = MusGame(cfg, seed=seed)
    for e in actions:
        if g.is_over or e.action not in g.legal_actions():
            return None
        g.step(e.action)
    return g


def test_signal_block_layout_and_decode() -> None:
    cfg = MusConfig(signals="free", signal_intercept_p=0.25, first_mano=3)
    g = MusGame(cfg, seed=7)
    assert obs_dim(cfg) == OBS_DIM + SIGNAL_DIM == 477 and state_dim(cfg) == 477 + 160
    obs = g.observe(3)
    assert obs.shape == (477,) and obs.dtype == np.float32 and g.state().shape == (637,)
    assert encode_state(g).shape == (637,) and np.array_equal(encode_state(g), g.state())
    # a sign decision: no phase, lance or responder; the window one-hot; the config
    for name in ("phase", "lance", "responder"):
        assert not obs[OFFSETS[name]].any(), name
    assert list(obs[SIGNAL_OBS_OFFSETS["sign_window"]]) == [1.0, 0.0]
    assert list(obs[SIGNAL_OBS_OFFSETS["sign_config"]]) == [1.0, 0.25]
    assert obs[OFFSETS["acting"]][0] == 1.0                      # seat 3 itself (q = 0) signs first
    d = decode(obs)
    assert d["phase"] == Phase.SIGNAL and d["sign_window"] == WINDOW_MUS and d["lance"] == -1
    assert d["sign_config"] == {"free": True, "intercept_p": 0.25}
    assert d["signs_mus"] == [None] * 4 and d["signs_grande"] == [None] * 4
    g.step(SIGNAL_BASE + Sign.DUPLES)
    d = decode(g.observe(3))
    assert d["signs_mus"] == [int(Sign.DUPLES), None, None, None] and d["acting"] == 1
    assert decode(g.observe(1))["signs_mus"][2] == Sign.DUPLES     # the partner
    while g.phase == Phase.SIGNAL:
        g.step(SIGNAL_BASE)
    d = decode(g.observe(3))
    assert d["phase"] == Phase.MUS_CALL and d["sign_window"] == -1
    assert not g.observe(0)[SIGNAL_OBS_OFFSETS["sign_window"]].any()
    # truthful: config piece 0; an OBS_DIM-long vector decodes as before, without signal keys
    t = MusGame(TRUTHFUL, seed=7).observe(0)
    assert decode(t)["sign_config"] == {"free": False, "intercept_p": 0.0}
    plain = decode(MusGame(MusConfig(), seed=7).observe(0))
    assert "sign_window" not in plain and "signs_mus" not in plain
    with pytest.raises(ValueError, match="477"):
        decode(np.zeros(400, dtype=np.float32))
    with pytest.raises(ValueError, match="477"):
        encode(g, 0, np.zeros(OBS_DIM, dtype=np.float32))
    out = np.ones(477, dtype=np.float32)
    assert encode(g, 2, out) is out and np.array_equal(out, g.observe(2))


def test_grande_window_keeps_mus_signs_and_a_new_mus_window_clears_them() -> None:
    g = MusGame(MusConfig(signals="free", first_mano=0), seed=3)
    for t in (Sign.MUS, Sign.NONE, Sign.PAR, Sign.CIEGO):
        g.step(SIGNAL_BASE + t)
    assert g.signs_seen(0)["mus"] == {0: Sign.MUS, 2: Sign.PAR}
    for _ in range(4):
        g.step(0)
    for _ in range(4):
        g.step(3)                                           # discard slot 0
    assert g.phase == Phase.SIGNAL and g.signs_made() == {"mus": {}, "grande": {}}
    assert not _block(g.observe(0), "signs_mus").any()
    for t in (Sign.DUPLES, Sign.NONE, Sign.NONE, Sign.NONE):
        g.step(SIGNAL_BASE + t)
    g.step(1)                                               # cut the mus: the grande window
    assert g.sign_window == WINDOW_GRANDE and g.signs_seen(2)["mus"] == {0: Sign.DUPLES, 2: Sign.NONE}
    for t in (Sign.JUEGO, Sign.NONE, Sign.NONE, Sign.NONE):
        g.step(SIGNAL_BASE + t)
    assert g.signs_seen(2) == {"mus": {0: Sign.DUPLES, 2: Sign.NONE}, "grande": {0: Sign.JUEGO, 2: Sign.NONE}}
    hand = g.hand_number
    while g.hand_number == hand and not g.is_over:
        g.step(g.legal_actions()[0])
    if not g.is_over:                                       # a new hand clears everything
        assert g.signs_made() == {"mus": {}, "grande": {}}


def test_first_entries_are_those_of_a_game_without_signs() -> None:
    """Outside sign decisions the first OBS_DIM entries equal the signals-off game's (same seed, same non-sign
    actions); during one they differ from the next decision's only by phase and acting."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        on = MusGame(MusConfig(signals="free", target=40, signal_intercept_p=0.5), seed=seed)
        off = MusGame(MusConfig(target=40), seed=seed)
        while not off.is_over:
            if on.phase == Phase.SIGNAL:
                on.step(int(rng.choice(on.legal_actions())))
                continue
            assert on.phase == off.phase and on.current_player == off.current_player
            for s in range(4):
                assert np.array_equal(on.observe(s)[:OBS_DIM], off.observe(s))
            assert np.array_equal(on.state()[:OBS_DIM], off.state()[:OBS_DIM])
            assert np.array_equal(on.state()[477:], off.state()[OBS_DIM:])
            assert np.array_equal(on.legal_action_mask()[:SIGNAL_BASE], off.legal_action_mask())
            a = int(rng.choice(off.legal_actions()))
            on.step(a)
            off.step(a)
        assert on.is_over and on.scores == off.scores and on.winner == off.winner


# ----------------------------------------------------------------------------------------------------------
# clone, records


def test_clone_is_independent() -> None:
    g = MusGame(MusConfig(signals="free", signal_intercept_p=0.5), seed=9)
    g.step(SIGNAL_BASE + Sign.MEDIAS)
    g.step(SIGNAL_BASE + Sign.NONE)
    c = g.clone()
    before = _views(g)
    assert _views(c) == before
    c.step(SIGNAL_BASE + Sign.DOS_REYES)
    c.step(SIGNAL_BASE + Sign.MUS)
    c.step(1)
    for _ in range(4):
        c.step(SIGNAL_BASE + Sign.JUEGO)
    assert _views(g) == before
    # the original goes on exactly as the clone did
    for a in (SIGNAL_BASE + Sign.DOS_REYES, SIGNAL_BASE + Sign.MUS, 1, *[SIGNAL_BASE + Sign.JUEGO] * 4):
        g.step(a)
    assert _views(g) == _views(c)
    d = g.clone()
    while not d.is_over:
        d.step(d.legal_actions()[-1])
    assert _views(g) == _views(c)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_records_replay_signals_games(tmp_path: Path, name: str) -> None:
    cfg = CONFIGS[name]
    for seed in range(2):
        g = _play(cfg, seed)
        stopped = _play(cfg, seed + 100, max_steps=60)
        for game in (g, stopped):
            rec = game_record(game, {0: "a", 1: "b", 2: "c", 3: "d"})
            assert any(a[1] >= SIGNAL_BASE for h in rec["hands"] for a in h["actions"]) or rec["pending_actions"]
            loaded = load_record(save_record(rec, tmp_path / "r.json"))
            again = replay(loaded)
            assert [h for h in again.hand_log] == [h for h in game.hand_log]
            assert _views(again) == _views(game)
            assert json.dumps(game_record(again, {0: "a", 1: "b", 2: "c", 3: "d"})) == json.dumps(rec)
        assert "seña:" in format_record(rec)


def test_records_refuse_signs_that_do_not_match_the_config() -> None:
    g = _play(TRUTHFUL, 1)
    rec = game_record(g)
    off = json.loads(json.dumps(rec))
    off["config"]["signals"] = "off"
    with pytest.raises(RecordError, match=r"hands\[0\]\.actions\[0\] \(action\) must be an int in 0\.\.30"):
        replay(off)
    no_signs = json.loads(json.dumps(game_record(_play(MusConfig(target=40), 1))))
    no_signs["config"]["signals"] = "truthful"
    with pytest.raises(RecordError, match=r"hands\[0\]\.actions\[0\].*config\.signals is 'truthful'"):
        replay(no_signs)
    bad = json.loads(json.dumps(rec))
    first = bad["hands"][0]["actions"][0]
    first[1] = next(a for a in range(SIGNAL_BASE, SIGNAL_BASE + NUM_SIGNS)
                    if not legal_signs(g.hand_log[0].initial_hands[first[0]], TRUTHFUL, WINDOW_MUS) >> (a - 31) & 1)
    with pytest.raises(RecordError, match=r"hands\[0\]\.actions\[0\]: action \d+ \(SIGN_"):
        replay(bad)
    bad = json.loads(json.dumps(rec))
    bad["hands"][0]["actions"][0][1] = 47
    with pytest.raises(RecordError, match=r"\(action\) must be an int in 0\.\.46"):
        replay(bad)


def test_observation_table_with_signals() -> None:
    default = observation_table()
    assert "sign_window" not in default and f"**{OBS_DIM}**" in default
    table = observation_table(signals=True)
    for name, sl in SIGNAL_OBS_OFFSETS.items():
        assert f"| `{name}` | {sl.start} | {sl.stop - sl.start} |" in table
    assert "**477**" in table


# ----------------------------------------------------------------------------------------------------------
# signals off: nothing changed


def test_signals_off_scalar_games_match_the_recorded_digests() -> None:
    from tests import recorded_games as r

    stored = json.loads(r.DATA.read_text())
    for name, cfg in r.CONFIGS.items():
        assert cfg.signals == "off"
        for s in r.SEEDS:
            assert r.scalar_digest(cfg, s) == stored[name][f"scalar_{s}"], (name, s)
