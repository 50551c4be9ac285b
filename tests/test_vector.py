"""VectorMusEnv: held equal to MusGame (differential test), batched fuzz, and bad input.

The differential test plays the same decks, manos, scores, seeds and actions through both engines and
compares, at every step, masks, observations (bit for bit), rewards, scores, episode ends, winners and
final scores. Random play is biased toward MUS in some configs so that long mus phases reshuffle the
discard pile (§3.4), and some tables start near the target so that games end during the count.
"""

from __future__ import annotations

import numpy as np
import pytest

from mus_env import MusConfig, MusGame
from mus_env.observation import OBS_DIM, OFFSETS, PIECES
from mus_env.vector import VectorMusEnv

CONFIGS = {
    "default": (MusConfig(), 0.3),
    "kings4_target30": (MusConfig(kings=4, target=30), 0.6),
    "no_override_long_mus": (MusConfig(partner_override=False), 0.93),
    "zero_discard_all_speak_real31_no_punto": (
        MusConfig(allow_zero_discard=True, holders_only_speak=False, real31="any10", punto=False), 0.93),
    "manual_declare_match_cap_keep_discards": (
        MusConfig(auto_declare=False, juegos_to_win_vaca=2, vacas_to_win_match=2, max_mus_rounds=4,
                  exclude_own_discards=False, kings=4, target=30), 0.95),
    "real31_sota_bets": (MusConfig(real31="sota_4suits", bet_sizes=(2, 4, 6, 8, 20), first_mano=2), 0.5),
}


def _piece_of(k: int) -> str:
    return next(name for name, _, _ in PIECES if OFFSETS[name].start <= k < OFFSETS[name].stop)


def _expected_rewards(game: MusGame, hands_before: int, mode: str) -> np.ndarray:
    exp = np.zeros(4, dtype=np.float32)
    if mode == "stones" and len(game.hand_log) > hands_before:
        d = game.hand_log[-1].stone_difference(game.config.target)
        exp[:] = (d, -d, d, -d)
    if game.is_over and mode == "game":
        exp[:] = (1, -1, 1, -1) if game.winner == 0 else (-1, 1, -1, 1)
    return exp


def run_differential(cfg: MusConfig, mus_bias: float, n_games: int, B: int, seed: int, reward: str) -> dict:
    """Play both engines side by side until ``n_games`` episodes have finished; return coverage counts."""
    rng = np.random.default_rng(seed)
    venv = VectorMusEnv(B, cfg, seed=seed, reward=reward)
    decks = np.stack([rng.permutation(40) for _ in range(B)])
    mano = rng.integers(0, 4, B)
    near = rng.random(B) < 0.5                           # half the tables start close to the target
    scores = np.where(near[:, None], rng.integers(cfg.target - 8, cfg.target, (B, 2)),
                      rng.integers(0, cfg.target // 2, (B, 2)))
    seeds = rng.integers(0, 2**62, B)
    obs, mask = venv.reset_from_decks(decks, mano, scores, seeds)
    games = [MusGame.from_deck(decks[b], int(mano[b]), tuple(int(s) for s in scores[b]), cfg, int(seeds[b]))
             for b in range(B)]
    cover = {"episodes": 0, "ordago_end": 0, "count_end": 0, "refusal_end": 0, "reshuffles": 0, "hands": 0}
    steps = 0
    while cover["episodes"] < n_games:
        steps += 1
        assert steps < 200_000, "differential run did not finish"
        actions = np.empty(B, dtype=np.int64)
        for b, g in enumerate(games):
            assert g.current_player == venv.current_player[b]
            m = g.legal_action_mask()
            assert np.array_equal(m, mask[b]), (b, g.describe(), np.flatnonzero(mask[b]))
            o = g.observe(g.current_player)
            if not np.array_equal(o, obs[b]):
                bad = np.flatnonzero(o != obs[b])
                raise AssertionError(f"table {b}: observation differs in "
                                     f"{[(int(k), _piece_of(k), float(o[k]), float(obs[b][k])) for k in bad[:8]]}"
                                     f"\n{g.describe()}")
            legal = np.flatnonzero(m)
            actions[b] = 0 if (m[0] and rng.random() < mus_bias) else rng.choice(legal)
        reshuffles_before = venv.reshuffles.copy()
        obs, mask, rewards, done, info = venv.step(actions)
        cover["reshuffles"] += int((venv.reshuffles > reshuffles_before).sum())
        for b in range(B):
            g = games[b]
            before = len(g.hand_log)
            g.step(int(actions[b]))
            assert np.array_equal(rewards[b], _expected_rewards(g, before, reward)), (b, rewards[b])
            assert bool(info["hand_finished"][b]) == (len(g.hand_log) > before)
            if len(g.hand_log) > before:
                cover["hands"] += 1
                assert tuple(info["hand_stones"][b]) == g.last_hand_stones
            assert bool(done[b]) == g.is_over
            if g.is_over:
                assert info["winner"][b] == g.winner
                assert tuple(info["final_scores"][b]) == g.scores
                last = g.game_results[-1]
                rec = g.hand_log[-1]
                cover["episodes"] += 1
                if last.by_ordago:
                    cover["ordago_end"] += 1
                elif rec.shown:
                    cover["count_end"] += 1
                else:
                    cover["refusal_end"] += 1
                games[b] = MusGame(cfg, seed=int(venv.game_seeds[b]))
            else:
                assert tuple(venv.scores[b]) == g.scores
                assert venv.hand_number[b] == g.hand_number
    return cover


@pytest.mark.parametrize("name", list(CONFIGS))
def test_differential(name: str) -> None:
    cfg, bias = CONFIGS[name]
    cover = run_differential(cfg, bias, n_games=350, B=48, seed=hash(name) % 1000, reward="game")
    # the run must have exercised the rare paths, or it proves little
    assert cover["ordago_end"] > 0 and cover["count_end"] > 0 and cover["refusal_end"] > 0, cover
    if bias > 0.9:
        assert cover["reshuffles"] > 0, cover


@pytest.mark.parametrize("name", ["default", "zero_discard_all_speak_real31_no_punto"])
def test_differential_stones_reward(name: str) -> None:
    cfg, bias = CONFIGS[name]
    cover = run_differential(cfg, bias, n_games=100, B=32, seed=7, reward="stones")
    assert cover["hands"] > 100


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_differential_long(name: str) -> None:
    cfg, bias = CONFIGS[name]
    run_differential(cfg, bias, n_games=100_000 // len(CONFIGS), B=256, seed=1, reward="stones")


def _batched_fuzz(n_games: int, B: int, cfg: MusConfig, seed: int) -> int:
    venv = VectorMusEnv(B, cfg, seed=seed, reward="stones")
    obs, mask = venv.reset()
    rng = np.random.default_rng(seed)
    finished = 0
    steps = 0
    while finished < n_games:
        steps += 1
        assert steps < 100_000
        assert (mask.sum(axis=1) >= 1).all(), "a table has no legal action"
        assert np.isfinite(obs).all() and obs.shape == (B, OBS_DIM)
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)
        prev_scores, prev_game = venv.scores, venv.game_number.copy()
        obs, mask, rewards, done, info = venv.step(actions)
        # zero-sum, partners equal
        assert np.all(rewards[:, 0] == -rewards[:, 1]) and np.all(rewards[:, 0] == rewards[:, 2])
        assert np.all(rewards[:, 1] == rewards[:, 3])
        hs = info["hand_stones"]
        fin = info["hand_finished"] & ~done                 # (a game won by órdago adds the stones lacking)
        assert np.array_equal(rewards[fin, 0], (hs[fin, 0] - hs[fin, 1]).astype(np.float32))
        # scores never decrease within a game; a new game starts at 0-0
        same = ~done & (venv.game_number == prev_game)
        assert np.all(venv.scores[same] >= prev_scores[same])
        assert np.all(info["winner"][done] >= 0) and np.all(info["winner"][~done] == -1)
        # cards: 40 distinct ids across hands, stock and pile of every table
        cards = np.zeros((B, 40), dtype=np.int64)
        h = venv.hands.reshape(B, -1).astype(np.int64)
        np.add.at(cards, (np.repeat(np.arange(B), 16)[h.ravel() >= 0], h.ravel()[h.ravel() >= 0]), 1)
        pos = np.arange(40)[None, :]
        in_stock = (pos >= venv.stock_pos[:, None]) & (pos < venv.stock_len[:, None])
        s = venv.stock.astype(np.int64)
        np.add.at(cards, (np.repeat(np.arange(B), 40)[in_stock.ravel()], s.ravel()[in_stock.ravel()]), 1)
        cards += venv.pile
        assert np.all(cards == 1), "cards are not conserved"
        finished += int(done.sum())
    return finished


def test_batched_fuzz_default() -> None:
    """At least 100,000 complete games in CI over four configs (random legal play, invariants every step)."""
    total = 0
    for k, cfg in enumerate((MusConfig(), MusConfig(kings=4, target=30), MusConfig(partner_override=False),
                             MusConfig(allow_zero_discard=True, target=30))):
        total += _batched_fuzz(25_000, 2048, cfg, seed=k)
    assert total >= 100_000


@pytest.mark.slow
def test_batched_fuzz_million() -> None:
    assert _batched_fuzz(1_000_000, 4096, MusConfig(), seed=11) >= 1_000_000


def test_seeds_reproduce_and_match_musgame() -> None:
    a, b = VectorMusEnv(4, seed=5), VectorMusEnv(4, seed=5)
    oa, _ = a.reset()
    ob, _ = b.reset()
    assert np.array_equal(oa, ob) and np.array_equal(a.game_seeds, b.game_seeds)
    for i in range(4):
        g = MusGame(MusConfig(), seed=int(a.game_seeds[i]))
        assert g.hands == tuple(tuple(int(c) for c in h) for h in a.hands[i])
        assert g.mano == a.mano[i]
    c = VectorMusEnv(4, seed=6)
    c.reset()
    assert not np.array_equal(c.game_seeds, a.game_seeds)


def test_every_piece_written() -> None:
    """The observation buffer is written densely: no stale value survives a step."""
    venv = VectorMusEnv(16, seed=3)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(50):
        venv._obs.fill(np.nan)
        obs, mask = venv._observe()
        assert np.isfinite(obs).all()
        venv.step((rng.random(mask.shape) * mask).argmax(axis=1))


def test_reset_tables_midgame_and_observe_rows_match_musgame() -> None:
    """Tables restarted mid-run by reset_tables play on exactly like MusGame; observe(tables) gives the
    same rows as the last step, and the other tables are not disturbed."""
    B = 12
    cfg = MusConfig()
    venv = VectorMusEnv(B, cfg, seed=4)
    venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(40):
        venv.step(venv.sample_actions(rng))
    games: dict[int, MusGame] = {}
    t = np.array([1, 5, 6, 11])
    decks = np.stack([rng.permutation(40) for _ in t])
    mano, scores, seeds = rng.integers(0, 4, t.size), rng.integers(0, 30, (t.size, 2)), rng.integers(0, 2**40, t.size)
    others = np.setdiff1d(np.arange(B), t)
    before = venv.observe()[0][others].copy()
    obs, mask = venv.reset_tables(t, decks, mano, scores, seeds)
    assert np.array_equal(obs[others], before)
    for k, b in enumerate(t):
        games[b] = MusGame.from_deck(decks[k], int(mano[k]), tuple(int(x) for x in scores[k]), cfg, int(seeds[k]))
    for _ in range(300):
        for b in t:
            g = games[b]
            assert np.array_equal(g.observe(g.current_player), obs[b]) and np.array_equal(g.legal_action_mask(),
                                                                                          mask[b])
        a = venv.sample_actions(rng)
        obs, mask, _, done, _ = venv.step(a)
        rows, row_mask = venv.observe(t)
        assert np.array_equal(rows[t], obs[t]) and np.array_equal(row_mask[t], mask[t])
        for b in t:
            games[b].step(int(a[b]))
            if done[b]:
                assert games[b].is_over
                games[b] = MusGame(cfg, seed=int(venv.game_seeds[b]))


def test_sample_actions_legal_and_uniform() -> None:
    """sample_actions draws every legal action of each table's legal set with equal probability."""
    venv = VectorMusEnv(256, MusConfig(max_mus_rounds=3), seed=1)
    venv.reset()
    rng = np.random.default_rng(0)
    counts: dict[tuple[int, ...], np.ndarray] = {}
    for _ in range(300):
        _, mask = venv.observe()
        a = venv.sample_actions(rng)
        assert a.dtype == np.int64 and a.shape == (256,)
        assert mask[np.arange(256), a].all(), "sampled an illegal action"
        for row, act in zip(mask, a, strict=True):
            key = tuple(np.flatnonzero(row))
            counts.setdefault(key, np.zeros(31, dtype=np.int64))[act] += 1
        venv.step(a)
    checked = 0
    for key, c in counts.items():
        n = c.sum()
        if n < 2000 or len(key) < 2:
            continue
        p = 1.0 / len(key)
        sd = np.sqrt(n * p * (1 - p))
        assert (np.abs(c[list(key)] - n * p) < 5 * sd).all(), (key, c[list(key)], n)
        checked += 1
    assert checked >= 3                                    # mus call, opening round, responses at least


def test_sample_actions_before_reset_and_bad_rng() -> None:
    venv = VectorMusEnv(2, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        venv.sample_actions(0)
    venv.reset()
    with pytest.raises(TypeError, match="Generator"):
        venv.sample_actions(np.random.RandomState(0))
    assert np.array_equal(venv.sample_actions(7), venv.sample_actions(np.random.default_rng(7)))


# ----------------------------------------------------------------------------------------------------
# bad input: a clear error, state unchanged
def _snapshot(venv: VectorMusEnv) -> dict:
    return {k: v.copy() for k, v in vars(venv).items() if isinstance(v, np.ndarray) and not k.startswith("_")}


def _assert_unchanged(venv: VectorMusEnv, snap: dict) -> None:
    for k, v in snap.items():
        assert np.array_equal(getattr(venv, k), v), f"{k} changed"


def test_step_rejects_bad_actions() -> None:
    venv = VectorMusEnv(4, seed=0)
    obs, mask = venv.reset()
    snap = _snapshot(venv)
    legal = mask.argmax(axis=1)
    with pytest.raises(ValueError, match="shape"):
        venv.step(legal[:3])
    with pytest.raises(ValueError, match="integer"):
        venv.step(legal.astype(np.float32))
    bad = legal.copy()
    bad[2] = 31
    with pytest.raises(ValueError, match="table 2.*out of range"):
        venv.step(bad)
    bad = legal.copy()
    bad[1] = 24                                            # QUIERO is never legal at a mus call
    with pytest.raises(ValueError, match=r"table 1, action 24 \(QUIERO\) for seat \d in phase mus call; legal"):
        venv.step(bad)
    _assert_unchanged(venv, snap)
    venv.step(legal)                                       # still usable


def test_reset_from_decks_rejects_bad_input() -> None:
    venv = VectorMusEnv(2, seed=0)
    venv.reset()
    snap = _snapshot(venv)
    good = np.stack([np.arange(40), np.arange(40)[::-1]])
    with pytest.raises(ValueError, match="decks must have shape"):
        venv.reset_from_decks(good[:, :39], [0, 1])
    dup = good.copy()
    dup[1, 0] = dup[1, 1]
    with pytest.raises(ValueError, match=r"decks\[1\] is not a permutation"):
        venv.reset_from_decks(dup, [0, 1])
    with pytest.raises(ValueError, match="integer"):
        venv.reset_from_decks(good.astype(float), [0, 1])
    with pytest.raises(ValueError, match=r"mano\[1\] = 4"):
        venv.reset_from_decks(good, [0, 4])
    with pytest.raises(ValueError, match=r"scores\[0\]"):
        venv.reset_from_decks(good, [0, 1], [[40, 0], [0, 0]])
    with pytest.raises(ValueError, match=r"scores\[1\]"):
        venv.reset_from_decks(good, [0, 1], [[0, 0], [-1, 0]])
    with pytest.raises(ValueError, match="seeds"):
        venv.reset_from_decks(good, [0, 1], None, [1, -2])
    _assert_unchanged(venv, snap)


def test_constructor_errors() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VectorMusEnv(0)
    with pytest.raises(ValueError, match="reward"):
        VectorMusEnv(2, reward="points")
    with pytest.raises(NotImplementedError, match="signals"):
        VectorMusEnv(2, MusConfig(signals="free"))
    with pytest.raises(RuntimeError, match="reset"):
        VectorMusEnv(2).step(np.zeros(2, dtype=np.int64))


def test_engine_imports_no_rl_framework() -> None:
    import subprocess
    import sys

    code = ("import sys, mus_env.vector, mus_env.game; "
            "bad = [m for m in ('gymnasium', 'pettingzoo', 'torch') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0
