"""Señas (RULES.md §8, :mod:`mus_env.signals`) in the batched engine (VectorMusEnv and mus_env.kernel).

The tests hold the engine to an independent model of the channel built from the actions played and the
public flow only (:class:`SignModel`): where the windows open (hand start, after each discard round, after
the mus is cut), the turn order S0..S3 in each, the window counter ``w`` (mus windows opened in the hand - 1;
the grande window one more), the clearing of the latest mus window's tokens, the truthful / free masks
(``signals.legal_signs``), and every entry of the signal block of every seat's observation (interceptions
from ``signals.sees_sign``). They also check that the windows change nothing else (a signals-on engine
plays the same games as a signals-off one once the sign decisions are skipped), that the numba
interception draw is ``signals.intercept_uniform`` bit for bit, that illegal signs are refused with the
tables unchanged, and that with ``signals="off"`` the recorded digests still hold.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mus_env import MusConfig, VectorMusEnv, kernel, observation, signals
from mus_env.actions import NUM_ACTIONS, Action
from mus_env.cards import NUM_CARDS
from mus_env.observation import OBS_DIM, OFFSETS
from mus_env.phases import Phase
from mus_env.signals import SIGNAL_BASE, SIGNAL_DIM, SIGNAL_OFFSETS, WINDOW_GRANDE, WINDOW_MUS, Sign

_W = slice(OBS_DIM + SIGNAL_OFFSETS["sign_window"].start, OBS_DIM + SIGNAL_OFFSETS["sign_window"].stop)
_MUS = OBS_DIM + SIGNAL_OFFSETS["signs_mus"].start
_GRANDE = OBS_DIM + SIGNAL_OFFSETS["signs_grande"].start
_CONFIG = OBS_DIM + SIGNAL_OFFSETS["sign_config"].start
_MUS_A, _NO_MUS_A = int(Action.MUS), int(Action.NO_MUS)
_DISCARD = Phase.DISCARD


def _sign_ids(bits: int) -> np.ndarray:
    return np.array([SIGNAL_BASE + t for t in range(signals.NUM_SIGNS) if bits >> t & 1], dtype=np.int64)


def _bits_of(mask_row: np.ndarray) -> int:
    return sum(1 << t for t in range(signals.NUM_SIGNS) if mask_row[SIGNAL_BASE + t])


# ---------------------------------------------------------------------------------------------------------
# An independent model of the channel, fed with the actions and the public flow.
class SignModel:
    """What each table's signal channel must be, from the actions played only.

    Per table: the kind of the open window (or None) and how many seats have signed in it, the tokens of
    the latest mus window and of the grande window by absolute seat, and how many mus windows the hand has
    opened (so its window counters). ``expect_after`` says which decision must come next.
    """

    def __init__(self, venv: VectorMusEnv) -> None:
        B = venv.num_envs
        self.venv = venv
        self.window: list[int | None] = [None] * B
        self.signed = [0] * B
        self.tok_mus = np.full((B, 4), -1, dtype=np.int64)
        self.tok_grande = np.full((B, 4), -1, dtype=np.int64)
        self.mus_windows = [0] * B
        self.counts = {"mus_windows": 0, "grande_windows": 0, "later_mus_windows": 0, "hands": 0, "episodes": 0}
        for b in range(B):
            self._new_hand(b)

    def _open(self, b: int, kind: int) -> None:
        self.window[b] = kind
        self.signed[b] = 0
        if kind == WINDOW_MUS:
            self.tok_mus[b] = -1
            self.mus_windows[b] += 1
            self.counts["mus_windows"] += 1
            self.counts["later_mus_windows"] += self.mus_windows[b] > 1
        else:
            self.counts["grande_windows"] += 1

    def _new_hand(self, b: int) -> None:
        self.tok_mus[b] = -1
        self.tok_grande[b] = -1
        self.mus_windows[b] = 0
        self._open(b, WINDOW_MUS)

    def w_mus(self, b: int) -> int:
        return self.mus_windows[b] - 1

    def before_step(self, actions: np.ndarray) -> list[tuple[int, int, int]]:
        """Book the actions about to be played; returns (phase, rel, action) per table for after_step."""
        v = self.venv
        pre = []
        for b in range(v.num_envs):
            ph, rel, a = int(v.phase[b]), int(v.rel[b]), int(actions[b])
            pre.append((ph, rel, a))
            if ph == Phase.SIGNAL:
                seat = (int(v.mano[b]) + rel) % 4
                (self.tok_mus if self.window[b] == WINDOW_MUS else self.tok_grande)[b, seat] = a - SIGNAL_BASE
        return pre

    def after_step(self, pre: list[tuple[int, int, int]], hand_before: np.ndarray, done: np.ndarray) -> None:
        """Advance the model and check the engine's next decision against it."""
        v = self.venv
        for b, (ph, rel, a) in enumerate(pre):
            new_hand = bool(done[b]) or int(v.hand_number[b]) != int(hand_before[b])
            if new_hand:
                self.counts["hands"] += 1
                self.counts["episodes"] += bool(done[b])
                self._new_hand(b)
                expect = (Phase.SIGNAL, 0)
            elif ph == Phase.SIGNAL:
                self.signed[b] += 1
                if self.signed[b] < 4:
                    expect = (Phase.SIGNAL, self.signed[b])
                else:
                    kind, self.window[b] = self.window[b], None
                    expect = (Phase.MUS_CALL, 0) if kind == WINDOW_MUS else (Phase.BET_OPEN, 0)
            elif ph == Phase.MUS_CALL and a == _NO_MUS_A:
                self._open(b, WINDOW_GRANDE)
                expect = (Phase.SIGNAL, 0)
            elif ph == _DISCARD and rel == 3:
                self._open(b, WINDOW_MUS)
                expect = (Phase.SIGNAL, 0)
            else:
                expect = None                                      # anything but a sign decision
            got = (int(v.phase[b]), int(v.rel[b]))
            if expect is None:
                assert got[0] != Phase.SIGNAL, f"table {b}: a sign decision after phase {ph} action {a}"
            else:
                assert got == expect, f"table {b}: after phase {ph} action {a}, expected {expect}, got {got}"
            if self.window[b] is not None:
                assert int(v.sig_window[b]) == self.window[b], (b, int(v.sig_window[b]), self.window[b])

    def expected_block(self, b: int, o: int) -> np.ndarray:
        """The signal block of absolute seat ``o``'s view of table ``b``."""
        v, cfg = self.venv, self.venv.config
        blk = np.zeros(SIGNAL_DIM, dtype=np.float32)
        if self.window[b] is not None:
            blk[SIGNAL_OFFSETS["sign_window"].start + self.window[b]] = 1.0
        seed, hand, p = int(v.game_seeds[b]), int(v.hand_number[b]), cfg.signal_intercept_p
        for s in range(4):
            q = (s - o) % 4
            for tokens, piece, w in ((self.tok_mus, "signs_mus", self.w_mus(b)),
                                     (self.tok_grande, "signs_grande", self.w_mus(b) + 1)):
                t = int(tokens[b, s])
                if t >= 0 and signals.sees_sign(seed, hand, w, s, o, p):
                    blk[SIGNAL_OFFSETS[piece].start + 16 * q + t] = 1.0
        blk[SIGNAL_OFFSETS["sign_config"].start] = 1.0 if cfg.signals == "free" else 0.0
        blk[SIGNAL_OFFSETS["sign_config"].start + 1] = p
        return blk


def _policy(venv: VectorMusEnv, rng: np.random.Generator, mus_bias: float) -> np.ndarray:
    """Uniform legal actions, with MUS at a mus call with probability ``mus_bias`` (long mus phases)."""
    actions = venv.sample_actions(rng)
    mus = (venv.phase == Phase.MUS_CALL) & (venv.legal == 1) & (rng.random(venv.num_envs) < mus_bias)
    actions[mus] = _MUS_A
    return actions


def run_model(cfg: MusConfig, B: int, steps: int, seed: int, mus_bias: float = 0.6,
              check_views: bool = True) -> dict[str, int]:
    """Play ``steps`` steps on ``B`` tables, checking masks, flow and every seat's signal block each step."""
    rng = np.random.default_rng(seed)
    venv = VectorMusEnv(B, cfg, seed=seed, reward="stones", num_threads=1)
    obs, mask = venv.reset()
    model = SignModel(venv)
    counts = dict(model.counts, sign_decisions=0, truthful_masked=0, seen_opp=0, unseen_opp=0, real31=0)
    tables = np.repeat(np.arange(B), 4)
    seats = np.tile(np.arange(4), B)
    for _ in range(steps):
        assert obs.shape == (B, observation.obs_dim(cfg)) and mask.shape == (B, signals.num_actions(cfg))
        acting = venv.current_player
        for b in range(B):
            if int(venv.phase[b]) == Phase.SIGNAL:
                counts["sign_decisions"] += 1
                hand = venv.hands[b, acting[b]]
                want = signals.legal_signs(hand, cfg, model.window[b])
                assert _bits_of(mask[b]) == want, (b, hand.tolist(), model.window[b], _bits_of(mask[b]), want)
                assert not mask[b, :NUM_ACTIONS].any(), f"table {b}: a non-sign action legal in a sign decision"
                counts["truthful_masked"] += want != signals.ALL_SIGNS
                counts["real31"] += bool(want >> Sign.REAL31 & 1)
                # the first OBS_DIM entries during a sign decision: no phase, lance or responder; acting seat
                for piece in ("phase", "lance", "responder"):
                    assert not obs[b, OFFSETS[piece]].any(), f"table {b}: {piece} written in a sign decision"
                assert obs[b, OFFSETS["acting"]].tolist() == [1, 0, 0, 0]
            else:
                assert not mask[b, SIGNAL_BASE:].any(), f"table {b}: a sign legal outside a sign decision"
                assert mask[b, :NUM_ACTIONS].any()
                assert obs[b, OFFSETS["phase"]].sum() == 1
        if check_views:
            rows, row_masks = venv.observe(tables, seats)
            for k in range(4 * B):
                b, o = int(tables[k]), int(seats[k])
                exp = model.expected_block(b, o)
                got = rows[k, OBS_DIM:]
                assert np.array_equal(got, exp), (
                    f"table {b} seat {o}: signal block differs at "
                    f"{[(int(i), float(exp[i]), float(got[i])) for i in np.flatnonzero(got != exp)[:6]]}")
                if o == acting[b]:
                    assert np.array_equal(rows[k], obs[b]) and np.array_equal(row_masks[k], mask[b])
                for s in range(4):
                    if (s - o) % 2 and model.tok_mus[b, s] >= 0:
                        seen = rows[k, _MUS + 16 * ((s - o) % 4):_MUS + 16 * ((s - o) % 4) + 16].any()
                        counts["seen_opp" if seen else "unseen_opp"] += 1
        actions = _policy(venv, rng, mus_bias)
        pre = model.before_step(actions)
        hand_before = venv.hand_number.copy()
        obs, mask, rewards, done, info = venv.step(actions)
        for b, (ph, _, _) in enumerate(pre):
            if ph == Phase.SIGNAL:
                assert not rewards[b].any() and not info["hand_finished"][b], f"table {b}: a sign scored"
        model.after_step(pre, hand_before, done)
    counts.update(model.counts)
    return counts


MODEL_CONFIGS = {
    "truthful_k8_real31_p05": MusConfig(signals="truthful", signal_intercept_p=0.5, real31="any10"),
    "free_k4_cap1_p03": MusConfig(signals="free", signal_intercept_p=0.3, kings=4, target=30, max_mus_rounds=1),
    "truthful_k4_p1_manual": MusConfig(signals="truthful", signal_intercept_p=1.0, kings=4, auto_declare=False,
                                       real31="sota"),
    "free_k8_p0": MusConfig(signals="free", signal_intercept_p=0.0, allow_zero_discard=True),
}


@pytest.mark.parametrize("name", list(MODEL_CONFIGS))
def test_engine_follows_the_model(name: str) -> None:
    """Windows, turn order, masks, tokens, window counters and every seat's signal block, every step."""
    cfg = MODEL_CONFIGS[name]
    c = run_model(cfg, B=24, steps=500, seed=hash(name) % 1000)
    assert c["mus_windows"] > 200 and c["grande_windows"] > 100 and c["later_mus_windows"] > 40, c
    assert c["hands"] > 50 and c["episodes"] >= 1, c
    if cfg.signals == "truthful":
        assert c["truthful_masked"] == c["sign_decisions"] > 0, c
    p = cfg.signal_intercept_p
    if p == 0.0:
        assert c["seen_opp"] == 0 and c["unseen_opp"] > 100, c
    elif p == 1.0:
        assert c["unseen_opp"] == 0 and c["seen_opp"] > 100, c
    else:
        assert c["seen_opp"] > 50 and c["unseen_opp"] > 50, c


# ---------------------------------------------------------------------------------------------------------
# the interception draw and the truthful bits, function by function
def test_numba_interception_is_signals_intercept_uniform() -> None:
    rng = np.random.default_rng(7)
    seeds = np.concatenate([rng.integers(0, 2**63, 3000, dtype=np.uint64) * np.uint64(2)
                            + rng.integers(0, 2, 3000, dtype=np.uint64),
                            np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1], dtype=np.uint64)])
    for k, seed in enumerate(seeds):
        hand, w = int(rng.integers(0, 5000)), int(rng.integers(0, 40))
        signer, observer = int(rng.integers(0, 4)), int(rng.integers(0, 4))
        if k % 7 == 0:
            hand, w = int(rng.integers(0, 2**31 - 1)), int(rng.integers(0, 2**20))
        want = signals.intercept_uniform(int(seed), hand, w, signer, observer)
        got = kernel.intercept_uniform(np.uint64(seed), hand, w, signer, observer)
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (int(seed), hand, w, signer, observer)
        assert 0.0 <= got < 1.0


@pytest.mark.parametrize("kings", [8, 4])
@pytest.mark.parametrize("real31", ["off", "any10", "sota", "sota_oros", "sota_4suits"])
def test_kernel_legal_sign_bits_are_signals_legal_signs(kings: int, real31: str) -> None:
    rng = np.random.default_rng(kings * 10 + len(real31))
    sevens = [6, 16, 26, 36]
    hands = [rng.permutation(40)[:4] for _ in range(1500)]
    for ten in (7, 8, 9, 17, 2, 12):                       # 31 reales (and near misses) of every mode
        for drop in range(4):
            hands.append(np.array([s for i, s in enumerate(sevens) if i != drop] + [ten]))
    for mode in ("truthful", "free"):
        cfg = MusConfig(kings=kings, real31=real31, signals=mode)
        R = kernel.make_rules(cfg, stones_reward=False)[0]
        for hand in hands:
            for window in (WINDOW_MUS, WINDOW_GRANDE):
                want = signals.legal_signs(hand, cfg, window)
                got = kernel.legal_sign_bits(np.asarray(hand, dtype=np.int8), R, window)
                assert got == want, (mode, hand.tolist(), window, got, want)


# ---------------------------------------------------------------------------------------------------------
# the windows change nothing else
@pytest.mark.parametrize("cfg_kw", [{"kings": 8, "real31": "sota"}, {"kings": 4, "max_mus_rounds": 2, "target": 20}])
@pytest.mark.parametrize("mode", ["truthful", "free"])
def test_same_games_as_signals_off_once_signs_are_skipped(mode: str, cfg_kw: dict) -> None:
    """Same seed, same non-sign actions: every non-sign decision has the observation (first OBS_DIM entries),
    mask, rewards, episode ends and state of the signals-off engine."""
    on = VectorMusEnv(1, MusConfig(signals=mode, signal_intercept_p=0.5, **cfg_kw), seed=3, reward="stones")
    off = VectorMusEnv(1, MusConfig(**cfg_kw), seed=3, reward="stones")
    rng = np.random.default_rng(3)
    o_on, m_on = on.reset()
    o_off, m_off = off.reset()
    episodes = signs = 0
    for _ in range(3000):
        while int(on.phase[0]) == Phase.SIGNAL:
            o_on, m_on, r, d, _ = on.step(on.sample_actions(rng))
            signs += 1
            assert not r.any() and not d.any()
        assert np.array_equal(o_on[0, :OBS_DIM], o_off[0]), np.flatnonzero(o_on[0, :OBS_DIM] != o_off[0])
        assert np.array_equal(m_on[0, :NUM_ACTIONS], m_off[0]) and not m_on[0, NUM_ACTIONS:].any()
        s_on, s_off = on.state()[0], off.state()[0]
        assert np.array_equal(s_on[:OBS_DIM], s_off[:OBS_DIM])
        assert np.array_equal(s_on[-4 * NUM_CARDS:], s_off[-4 * NUM_CARDS:])
        assert s_on.shape == (observation.state_dim(on.config),)
        assert np.array_equal(s_on[:on.obs_dim], on.observe([0], [0])[0][0])
        a = _policy(off, rng, 0.5)
        o_on, m_on, r_on, d_on, _ = on.step(a)
        o_off, m_off, r_off, d_off, _ = off.step(a)
        assert np.array_equal(r_on, r_off) and np.array_equal(d_on, d_off)
        episodes += int(d_off[0])
    assert episodes >= 3 and signs > 500, (episodes, signs)


# ---------------------------------------------------------------------------------------------------------
# illegal signs
def _snapshot(venv: VectorMusEnv) -> dict:
    return venv.state_dict()["arrays"]


def _assert_unchanged(venv: VectorMusEnv, snap: dict) -> None:
    for k, v in venv.state_dict()["arrays"].items():
        assert np.array_equal(v, snap[k]), f"{k} changed"


def test_illegal_signs_are_refused_and_change_nothing() -> None:
    venv = VectorMusEnv(4, MusConfig(signals="truthful"), seed=5)
    obs, mask = venv.reset()                                  # every table: S0's sign in the deal's window
    assert (venv.phase == Phase.SIGNAL).all()
    snap = _snapshot(venv)
    legal = venv.sample_actions(0)
    masked = [SIGNAL_BASE + int(np.flatnonzero(mask[b, SIGNAL_BASE:] == 0)[0]) for b in range(4)]
    for b, bad_action, match in (
            (1, masked[1], r"table 1, action \d+ \(SIGN_\w+\) for seat \d in phase mus window: seña "
                           r"\(signals='truthful': that sign is not true for this hand in a mus window\); legal"),
            (2, _MUS_A, r"table 2, action 0 \(MUS\) .* \(a sign decision takes a sign id 31..46\)"),
            (3, 47, r"table 3, action 47 \(out of range 0..46\)"),
            (0, -1, r"table 0, action -1")):
        bad = legal.copy()
        bad[b] = bad_action
        with pytest.raises(ValueError, match=match):
            venv.step(bad)
        _assert_unchanged(venv, snap)
        # the subset entry MusVecEnv uses (step_tables) refuses it as well, before touching any table
        rows = np.array([3, 0, 2, 1])
        with pytest.raises(ValueError, match=match):
            venv.step_tables(rows, bad[rows])
        _assert_unchanged(venv, snap)
    venv.step(legal)                                          # still usable
    # a sign outside a sign decision: S0's mus call, once S1..S3 have signed
    rng = np.random.default_rng(1)
    for _ in range(3):
        venv.step(venv.sample_actions(rng))
    assert (venv.phase == Phase.MUS_CALL).all() and (venv.rel == 0).all()
    snap = _snapshot(venv)
    bad = venv.sample_actions(rng)
    bad[0] = SIGNAL_BASE
    with pytest.raises(ValueError,
                       match=r"table 0, action 31 \(SIGN_NONE\) .* \(a sign is legal only in a sign decision\)"):
        venv.step(bad)
    _assert_unchanged(venv, snap)
    # free: every sign is legal in a sign decision, nothing else
    free = VectorMusEnv(2, MusConfig(signals="free"), seed=5)
    _, fmask = free.reset()
    assert (fmask[:, SIGNAL_BASE:] == 1).all() and not fmask[:, :SIGNAL_BASE].any()
    with pytest.raises(ValueError, match="a sign decision takes a sign id"):
        free.step(np.array([SIGNAL_BASE, _NO_MUS_A]))
    free.step(np.array([SIGNAL_BASE + 15, SIGNAL_BASE + 3]))
    # signals off: the sign ids do not exist
    plain = VectorMusEnv(2, seed=5)
    plain.reset()
    with pytest.raises(ValueError, match=r"action 31 \(out of range 0..30; the sign ids 31..46 exist only"):
        plain.step(np.array([SIGNAL_BASE, 0]))


# ---------------------------------------------------------------------------------------------------------
# who sees what
def _play_same(ps: tuple[float, ...], steps: int, seed: int, kings: int = 8):
    """Engines that differ only in signal_intercept_p, stepped with the same actions (p changes no mask);
    yields them after each step."""
    envs = [VectorMusEnv(16, MusConfig(signals="free", signal_intercept_p=p, kings=kings), seed=seed) for p in ps]
    for e in envs:
        e.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        a = _policy(envs[0], rng, 0.5)
        for e in envs:
            e.step(a)
        yield envs


def _views(venv: VectorMusEnv) -> np.ndarray:
    """``(B, 4, obs_dim)``: every seat's view of every table."""
    B = venv.num_envs
    rows, _ = venv.observe(np.repeat(np.arange(B), 4), np.tile(np.arange(4), B))
    return rows.reshape(B, 4, -1)


def _block(view: np.ndarray, piece: str, q: int) -> np.ndarray:
    start = _MUS if piece == "signs_mus" else _GRANDE
    return view[start + 16 * q:start + 16 * q + 16]


@pytest.mark.parametrize("kings", [8, 4])
def test_partner_always_sees_opponents_per_p_own_view_independent_of_p(kings: int) -> None:
    n = {"partner": 0, "p0_hidden": 0, "p1_seen": 0, "own": 0}
    for e0, e_half, e1 in _play_same((0.0, 0.5, 1.0), steps=250, seed=11 + kings, kings=kings):
        v0, vh, v1 = _views(e0), _views(e_half), _views(e1)
        for b in range(e0.num_envs):
            for piece, tokens in (("signs_mus", e0.sig_mus[b]), ("signs_grande", e0.sig_grande[b])):
                for s in range(4):
                    t = int(tokens[s])
                    onehot = np.zeros(16, dtype=np.float32)
                    if t >= 0:
                        onehot[t] = 1.0
                    for o in range(4):
                        q = (s - o) % 4
                        if q % 2 == 0:                        # itself and its partner: always, whatever p
                            for v in (v0, vh, v1):
                                assert np.array_equal(_block(v[b, o], piece, q), onehot), (b, piece, s, o)
                            n["own" if q == 0 else "partner"] += t >= 0
                        else:
                            assert not _block(v0[b, o], piece, q).any(), (b, piece, s, o)
                            assert np.array_equal(_block(v1[b, o], piece, q), onehot), (b, piece, s, o)
                            n["p0_hidden"] += t >= 0
                            n["p1_seen"] += t >= 0
            # a seat's view depends on p only through the opponents' blocks and the p entry
            keep = np.ones(e0.obs_dim, dtype=bool)
            keep[_CONFIG + 1] = False
            for q in (1, 3):
                for start in (_MUS, _GRANDE):
                    keep[start + 16 * q:start + 16 * q + 16] = False
            assert np.array_equal(v0[b][:, keep], vh[b][:, keep]) and np.array_equal(v0[b][:, keep], v1[b][:, keep])
            assert v0[b, 0, _CONFIG + 1] == 0.0 and vh[b, 0, _CONFIG + 1] == 0.5 and v1[b, 0, _CONFIG + 1] == 1.0
    assert min(n.values()) > 100, n


# ---------------------------------------------------------------------------------------------------------
# random play, both modes, both variants
@pytest.mark.parametrize("kings", [8, 4])
@pytest.mark.parametrize("mode", ["truthful", "free"])
def test_random_play_many_episodes(mode: str, kings: int) -> None:
    B = 256
    cfg = MusConfig(signals=mode, kings=kings, signal_intercept_p=0.25, target=20)
    venv = VectorMusEnv(B, cfg, seed=kings, num_threads=1)
    obs, mask = venv.reset()
    rng = np.random.default_rng(kings)
    episodes = signs = 0
    while episodes < 600:
        assert (mask.sum(axis=1) >= 1).all(), "a table without a legal action"
        signing = venv.phase == Phase.SIGNAL
        assert (mask[signing, :SIGNAL_BASE] == 0).all() and (mask[~signing, SIGNAL_BASE:] == 0).all()
        if mode == "truthful":
            for b in np.flatnonzero(signing):
                hand = venv.hands[b, venv.current_player[b]]
                assert _bits_of(mask[b]) == signals.legal_signs(hand, cfg, int(venv.sig_window[b]))
        actions = venv.sample_actions(rng)
        assert mask[np.arange(B), actions].all()
        signs += int(signing.sum())
        obs, mask, rewards, done, info = venv.step(actions)
        episodes += int(done.sum())
        assert np.isfinite(obs).all() and obs.shape == (B, venv.obs_dim)
    assert signs > 10 * episodes


def test_sample_actions_uniform_over_signs() -> None:
    """sample_actions draws each table's sign uniformly among its legal tokens (NONE and MUS are always
    legal in the deal's window, so their expected counts are sum(1 / n) over the tables)."""
    venv = VectorMusEnv(4000, MusConfig(signals="truthful"), seed=2)
    _, mask = venv.reset()
    n = mask[:, SIGNAL_BASE:].sum(axis=1)
    assert n.min() >= 3 and n.max() > n.min()
    counts = np.zeros(signals.NUM_SIGNS)
    draws = 5
    for k in range(draws):
        a = venv.sample_actions(k)
        assert mask[np.arange(venv.num_envs), a].all()
        np.add.at(counts, a - SIGNAL_BASE, 1)
    expected = draws * (1.0 / n).sum()
    for token in (Sign.NONE, Sign.MUS):
        assert abs(counts[token] - expected) < 5 * np.sqrt(expected), (token, counts[token], expected)


# ---------------------------------------------------------------------------------------------------------
# checkpoints
def test_state_dict_round_trip_mid_window() -> None:
    cfg = MusConfig(signals="truthful", signal_intercept_p=0.5)
    a, b = VectorMusEnv(8, cfg, seed=9), VectorMusEnv(8, cfg, seed=1)
    a.reset()
    b.reset()
    rng = np.random.default_rng(0)
    for _ in range(37):
        a.step(_policy(a, rng, 0.6))
    assert (a.phase == Phase.SIGNAL).any()
    saved = a.state_dict()
    assert "sig_mus:i1[4]" in saved["layout"] and "sig_window:i1[]" in saved["layout"]
    b.load_state_dict(saved)
    for _ in range(60):
        acts = _policy(a, rng, 0.6)
        ra, rb = a.step(acts), b.step(acts)
        for x, y in zip(ra[:4], rb[:4], strict=True):
            assert np.array_equal(x, y)
        assert np.array_equal(_views(a), _views(b))
    with pytest.raises(ValueError, match="config"):
        VectorMusEnv(8, MusConfig(signals="free"), seed=9).load_state_dict(saved)


def test_public_sizes() -> None:
    for mode in ("off", "truthful", "free"):
        cfg = MusConfig(signals=mode)
        v = VectorMusEnv(3, cfg, seed=0)
        obs, mask = v.reset()
        assert (v.obs_dim, v.num_actions, v.state_dim) == (observation.obs_dim(cfg), signals.num_actions(cfg),
                                                           observation.state_dim(cfg))
        assert obs.shape == (3, v.obs_dim) and mask.shape == (3, v.num_actions) and v.state().shape == (3, v.state_dim)
        rows, masks = v.observe([0, 2], [1, 3])
        assert rows.shape == (2, v.obs_dim) and masks.shape == (2, v.num_actions)
        assert v.buffer_bytes() == 4 * v.obs_dim + v.num_actions + kernel.OUT_DTYPE.itemsize


# ---------------------------------------------------------------------------------------------------------
# signals off: the recorded games (vector part)
def test_signals_off_vector_digests_unchanged() -> None:
    import tests.recorded_games as rec

    recorded = json.loads(rec.DATA.read_text())
    for name, cfg in rec.CONFIGS.items():
        assert cfg.signals == "off"
        for s in range(3):
            assert rec.vector_digest(cfg, s) == recorded[name][f"vector_{s}"], (name, s)
