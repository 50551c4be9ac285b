"""VectorMusEnv: held equal to MusGame (differential test), batched fuzz, and bad input.

The differential test plays the same decks, manos, scores, seeds and actions through both engines and
compares, at every step, masks, observations (bit for bit), the full-information state, any seat's
observation (``observe(tables, seats)``), rewards, scores, episode ends, winners and final scores.

Actions come from a mix of seeded policies (:data:`POLICIES`): uniform random play, which ends most hands
by an accepted órdago, and "calm", "bettor" and "refuser" players that rarely órdago, so that showdowns,
en paso lances, refusals at every depth and partner overrides all happen. Each run counts the scoring paths
it reached (read from ``MusGame.hand_log`` and its public state) and the tests assert minimum counts, so a
path that stops being exercised fails the test instead of silently weakening it. Random play is biased
toward MUS in some configs so that long mus phases reshuffle the discard pile (§3.4), and half the tables
start near the target so that games end during the count.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
import pytest

from mus_env import MusConfig, MusGame
from mus_env.actions import DISCARD_BASE, ENVIDO_ACTIONS, Action
from mus_env.observation import OBS_DIM, OFFSETS, PIECES, obs_dim, state_dim
from mus_env.phases import ORDAGO_STAKE, Phase
from mus_env.signals import SIGNAL_OFFSETS, SIGNAL_PIECES, num_actions
from mus_env.tables import get_tables
from mus_env.vector import PARALLEL_MIN_TABLES, VectorMusEnv


class Diff(NamedTuple):
    """A differential configuration: rules, probability of MUS at a mus call (high values give long mus
    phases that reshuffle the discard pile), the run's fixed seed, and its number of steps in CI."""

    config: MusConfig
    mus_bias: float
    seed: int
    ci_steps: int


CONFIGS = {
    "default": Diff(MusConfig(), 0.3, 101, 190),
    "kings4_target30": Diff(MusConfig(kings=4, target=30), 0.6, 202, 190),
    "no_override_long_mus": Diff(MusConfig(partner_override=False), 0.93, 303, 340),
    "zero_discard_all_speak_real31_no_punto": Diff(
        MusConfig(allow_zero_discard=True, holders_only_speak=False, real31="any10", punto=False), 0.93, 404, 340),
    "manual_declare_match_cap_keep_discards": Diff(
        MusConfig(auto_declare=False, juegos_to_win_vaca=2, vacas_to_win_match=2, max_mus_rounds=4,
                  exclude_own_discards=False, kings=4, target=30), 0.95, 505, 450),
    "real31_sota_bets": Diff(MusConfig(real31="sota_4suits", bet_sizes=(2, 4, 6, 8, 20), first_mano=2), 0.5, 606, 190),
    "stake_cap": Diff(MusConfig(max_stake=7, target=30), 0.5, 707, 190),
}

_PASO, _QUIERO, _NO_QUIERO, _ORDAGO = int(Action.PASO), int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO)
_ENVIDOS = np.array(ENVIDO_ACTIONS)

# Betting policies. "uniform" draws uniformly from the legal set everywhere; the others (mus calls as every
# policy: MUS with the config's mus_bias; discards and declarations uniform) bet with these probabilities:
#   opening round: paso, órdago (the rest: an envido of random size);
#   answering a numeric stake: quiero, no quiero, órdago (the rest: a raise of random size);
#   answering an órdago: quiero (the rest: no quiero);
#   partner confirmation (after the partner's quiero): quiero, órdago (the rest: a raise).
POLICIES = ("uniform", "calm", "bettor", "refuser")
_BETTING = {
    #           opening      numeric stake        órdago   confirmation
    #           paso  órdago quiero  noq   órdago  quiero  quiero órdago
    "calm":    (0.80, 0.005, 0.70, 0.20, 0.005,  0.30,   0.80, 0.005),
    "bettor":  (0.25, 0.02,  0.30, 0.15, 0.02,   0.50,   0.40, 0.02),
    "refuser": (0.50, 0.005, 0.15, 0.75, 0.005,  0.10,   0.90, 0.0),
}
# Per table (re-drawn at each new episode): one policy for the four seats, or "mixed" (one per seat).
_TABLE_POLICY_P = {"uniform": 0.1, "calm": 0.35, "bettor": 0.15, "refuser": 0.15, "mixed": 0.25}


def _draw_policies(rng: np.random.Generator) -> list[str]:
    kind = list(_TABLE_POLICY_P)[int(rng.choice(len(_TABLE_POLICY_P), p=list(_TABLE_POLICY_P.values())))]
    if kind == "mixed":
        return [POLICIES[i] for i in rng.integers(0, len(POLICIES), 4)]
    return [str(kind)] * 4


def _choose(policy: str, g: MusGame, mask: np.ndarray, mus_bias: float, rng: np.random.Generator) -> int:
    """One action of ``policy`` for the current player of ``g`` (legal set ``mask``)."""
    legal = np.flatnonzero(mask)
    phase = g.phase
    if phase == Phase.MUS_CALL:
        return 0 if (mask[0] and rng.random() < mus_bias) else int(legal[rng.integers(legal.size)])
    if policy == "uniform" or phase not in (Phase.BET_OPEN, Phase.BET_RESPOND, Phase.BET_CONFIRM):
        return int(legal[rng.integers(legal.size)])       # discards (any size), declarations, uniform play
    p_paso, p_open_ord, p_q, p_nq, p_resp_ord, p_q_ord, p_conf_q, p_conf_ord = _BETTING[policy]
    u = rng.random()
    if phase == Phase.BET_OPEN:
        if u < p_paso:
            return _PASO
        return _ORDAGO if u < p_paso + p_open_ord else int(_ENVIDOS[rng.integers(_ENVIDOS.size)])
    if phase == Phase.BET_RESPOND and not mask[_ORDAGO]:                # an órdago is live
        return _QUIERO if u < p_q_ord else _NO_QUIERO
    capped = not mask[_ENVIDOS[0]]                                     # max_stake reached: no raises, órdago instead
    if phase == Phase.BET_RESPOND:
        if u < p_q:
            return _QUIERO
        if u < p_q + p_nq:
            return _NO_QUIERO
        if capped or u < p_q + p_nq + p_resp_ord:
            return _ORDAGO
        return int(_ENVIDOS[rng.integers(_ENVIDOS.size)])
    if u < p_conf_q:                                              # partner confirmation
        return _QUIERO
    return _ORDAGO if capped or u < p_conf_q + p_conf_ord else int(_ENVIDOS[rng.integers(_ENVIDOS.size)])


def _piece_of(k: int) -> str:
    if k >= OBS_DIM:                                   # the señas block (signals on)
        return next(name for name, _, _ in SIGNAL_PIECES
                    if SIGNAL_OFFSETS[name].start <= k - OBS_DIM < SIGNAL_OFFSETS[name].stop)
    return next(name for name, _, _ in PIECES if OFFSETS[name].start <= k < OFFSETS[name].stop)


def _same(expected: np.ndarray, got: np.ndarray) -> bool:
    """Bit for bit (so -0.0 and 0.0, or two NaNs, are told apart), same shape and dtype."""
    return expected.shape == got.shape and expected.dtype == got.dtype and expected.tobytes() == got.tobytes()


def _assert_same_obs(expected: np.ndarray, got: np.ndarray, g: MusGame, what: str) -> None:
    """``got`` is ``expected`` bit for bit; else an error naming the observation pieces that differ."""
    if _same(expected, got):
        return
    assert expected.shape == got.shape and expected.dtype == got.dtype, (what, got.shape, got.dtype)
    bad = np.flatnonzero(expected.view(np.uint32) != got.view(np.uint32))
    n = obs_dim(g.config)
    where = [(int(k), _piece_of(k) if k < n else f"hand of seat {(k - n) // 40}",
              float(expected[k]), float(got[k])) for k in bad[:8]]
    raise AssertionError(f"{what} differs in {where}\n{g.describe()}")


def _expected_rewards(game: MusGame, hands_before: int, mode: str) -> np.ndarray:
    exp = np.zeros(4, dtype=np.float32)
    if mode == "stones" and len(game.hand_log) > hands_before:
        d = game.hand_log[-1].stone_difference(game.config.target)
        exp[:] = (d, -d, d, -d)
    if game.is_over and mode == "game":
        exp[:] = (1, -1, 1, -1) if game.winner == 0 else (-1, 1, -1, 1)
    return exp


_PARES_NAMES = {1: "par", 2: "medias", 3: "duples"}
# Coverage counts of a run. Per finished hand: how a game ended in it (an accepted órdago, the target reached
# during the showdown count, or refusal stones during the betting); showdowns (shown, no órdago) and, in them,
# the lances that scored: each pares class and juego (31 or other) held by the team paid pares or juego
# bonuses, punto, each lance counted en paso, stakes paid, uncontested pares/juego; refusals at the first bet
# (1 stone) and after a raise. Per decision: no quiero to an órdago, partner confirmations (and raises there),
# the second responder answering after the first one's no quiero. Per mus round: reshuffles of the pile. Per
# game: games won without ending the episode (juegos_to_win_vaca > 1).
COVER_KEYS = (
    "episodes", "hands", "ordago_end", "count_end", "refusal_end", "games_mid_episode", "reshuffles",
    "showdowns", "pares_par", "pares_medias", "pares_duples", "juego_31", "juego_other", "punto",
    "en_paso_grande", "en_paso_chica", "en_paso_pares", "en_paso_juego", "en_paso_punto", "stake_paid",
    "uncontested", "refused_first_bet", "refused_after_raise", "ordago_no_quiero",
    "confirm", "confirm_raise", "r2_after_no_quiero", "capped",
)


def _count_hand(cover: dict[str, int], g: MusGame) -> None:
    """Count the scoring paths of the hand ``g`` just finished (its HandRecord)."""
    rec = g.hand_log[-1]
    t = get_tables(g.config.kings)
    cover["hands"] += 1
    if rec.game_winner is not None:
        key = "ordago_end" if rec.by_ordago else ("count_end" if rec.shown else "refusal_end")
        cover[key] += 1
    idx = t.hand_index(np.array(rec.final_hands))
    for ev in rec.stones:
        if ev.reason == "refused":
            # the fallback of a refusal is 1 at the first bet, the stake before the raise (>= 2) after one
            cover["refused_first_bet" if ev.stones == 1 else "refused_after_raise"] += 1
    if not rec.shown or rec.by_ordago:
        return
    cover["showdowns"] += 1
    scored = {ev.lance: ev for ev in rec.stones if ev.reason != "refused"}
    for slot, lance in enumerate(("grande", "chica", "pares", rec.fourth_lance)):
        if rec.outcomes[slot] == "en paso" and lance in scored:
            cover[f"en_paso_{lance}"] += 1
        if rec.outcomes[slot] == "accepted" and lance in scored:
            cover["stake_paid"] += 1
        if rec.outcomes[slot] == "uncontested" and lance in scored:
            cover["uncontested"] += 1
    seats_of = {team: [s for s in range(4) if s % 2 == team] for team in (0, 1)}
    if "pares" in scored:
        for s in seats_of[scored["pares"].team]:
            c = int(t.pares_class[idx[s]])
            if c:
                cover[f"pares_{_PARES_NAMES[c]}"] += 1
    if "juego" in scored:
        for s in seats_of[scored["juego"].team]:
            pts = int(t.juego_points[idx[s]])
            if t.juego_rank[idx[s]]:
                cover["juego_31" if pts == 31 else "juego_other"] += 1
    if "punto" in scored:
        cover["punto"] += 1


def run_differential(cfg: MusConfig, mus_bias: float, B: int, seed: int, reward: str, *, n_steps: int | None = None,
                     n_games: int | None = None, check_views: bool = True,
                     num_threads: int | None = None) -> dict[str, int]:
    """Play both engines side by side for ``n_steps`` steps, or until ``n_games`` games (juegos) have finished;
    return the coverage counts (:data:`COVER_KEYS`, plus ``steps``).

    Every step compares each table's acting seat, legal mask and observation (bit for bit), then the rewards,
    hand ends, hand stones, episode ends, winners, final scores, scores and hand numbers. With ``check_views``
    it also compares ``venv.state()`` with ``MusGame.state()`` for every table and ``venv.observe(tables, seats)``
    with ``MusGame.observe(seat)`` (and the mask, zeros unless the seat acts) for a random seat of each of a
    random subset of tables.
    """
    assert (n_steps is None) != (n_games is None)
    rng = np.random.default_rng(seed)
    kw = {} if num_threads is None else {"num_threads": num_threads}
    venv = VectorMusEnv(B, cfg, seed=seed, reward=reward, **kw)
    decks = np.stack([rng.permutation(40) for _ in range(B)])
    mano = rng.integers(0, 4, B)
    near = rng.random(B) < 0.5                           # half the tables start close to the target
    scores = np.where(near[:, None], rng.integers(cfg.target - 8, cfg.target, (B, 2)),
                      rng.integers(0, cfg.target // 2, (B, 2)))
    seeds = rng.integers(0, 2**62, B)
    obs, mask = venv.reset_from_decks(decks, mano, scores, seeds)
    games = [MusGame.from_deck(decks[b], int(mano[b]), tuple(int(s) for s in scores[b]), cfg, int(seeds[b]))
             for b in range(B)]
    policies = [_draw_policies(rng) for _ in range(B)]
    cover = dict.fromkeys(COVER_KEYS, 0)
    steps = games_done = 0
    while (steps < n_steps) if n_steps is not None else (games_done < n_games):
        steps += 1
        assert steps < 1_000_000, "differential run did not finish"
        actions = np.empty(B, dtype=np.int64)
        current = venv.current_player
        seen: list[dict[int, np.ndarray]] = []               # observations of MusGame computed this step
        for b, g in enumerate(games):
            cur = g.current_player
            assert cur == current[b], (b, cur, current[b])
            m = g.legal_action_mask()
            assert _same(m, mask[b]), (b, g.describe(), np.flatnonzero(mask[b]))
            if g.phase in (Phase.BET_RESPOND, Phase.BET_CONFIRM) and g.betting["stake"] != ORDAGO_STAKE:
                cover["capped"] += not m[_ENVIDOS].any()          # max_stake reached: an answer without raises
            o = g.observe(cur)
            _assert_same_obs(o, obs[b], g, f"table {b}: observation")
            seen.append({cur: o})
            actions[b] = _choose(policies[b][cur], g, m, mus_bias, rng)
        if check_views:
            state = venv.state()
            assert state.shape == (B, state_dim(cfg)) and state.dtype == np.float32, (state.shape, state.dtype)
            for b, g in enumerate(games):
                s = g.state()
                _assert_same_obs(s, state[b], g, f"table {b}: state()")
                seen[b].setdefault(0, s[:obs_dim(cfg)])
            tables = rng.permutation(B)[:rng.integers(1, B + 1)]
            seats = rng.integers(0, 4, tables.size)
            rows, row_masks = venv.observe(tables, seats)
            assert rows.shape == (tables.size, obs_dim(cfg)) and rows.dtype == np.float32, (rows.shape, rows.dtype)
            assert row_masks.shape == (tables.size, num_actions(cfg)) and row_masks.dtype == np.int8
            for k, (b, s) in enumerate(zip(tables.tolist(), seats.tolist(), strict=True)):
                g = games[b]
                o = seen[b].get(s)
                if o is None:
                    o = g.observe(s)
                _assert_same_obs(o, rows[k], g, f"table {b}: observe(seat {s})")
                exp_mask = mask[b] if s == g.current_player else np.zeros(num_actions(cfg), np.int8)
                assert np.array_equal(row_masks[k], exp_mask), (b, s, g.describe(), np.flatnonzero(row_masks[k]))
        obs, mask, rewards, done, info = venv.step(actions)
        expected = np.zeros((B, 4), dtype=np.float32)
        for b in range(B):
            g = games[b]
            before, games_before, a = len(g.hand_log), len(g.game_results), int(actions[b])
            phase, pile_before = g.phase, len(g.discard_pile)
            if phase == Phase.BET_CONFIRM:
                cover["confirm"] += 1
                cover["confirm_raise"] += a != _QUIERO
            elif phase == Phase.BET_RESPOND:
                cover["r2_after_no_quiero"] += g.betting["responder"] == 2
                cover["ordago_no_quiero"] += a == _NO_QUIERO and g.betting["stake"] == ORDAGO_STAKE
            g.step(a)
            if phase == Phase.DISCARD and g.phase != Phase.DISCARD and len(g.hand_log) == before:
                # the round's replacements were served: without a reshuffle the pile only grew
                cover["reshuffles"] += len(g.discard_pile) < pile_before + bin(a - DISCARD_BASE).count("1")
            expected[b] = _expected_rewards(g, before, reward)
            assert bool(info["hand_finished"][b]) == (len(g.hand_log) > before), (b, "hand_finished", g.describe())
            if len(g.hand_log) > before:
                _count_hand(cover, g)
                assert tuple(info["hand_stones"][b]) == g.last_hand_stones, \
                    (b, "hand_stones", tuple(info["hand_stones"][b]), g.hand_log[-1])
            games_done += len(g.game_results) - games_before
            if len(g.game_results) > games_before and not g.is_over:
                cover["games_mid_episode"] += 1
            assert bool(done[b]) == g.is_over, (b, "done", bool(done[b]), g.hand_log[-1])
            if g.is_over:
                assert info["winner"][b] == g.winner, (b, "winner", info["winner"][b], g.hand_log[-1])
                assert tuple(info["final_scores"][b]) == g.scores, (b, "final_scores", info["final_scores"][b],
                                                                   g.hand_log[-1])
                cover["episodes"] += 1
                games[b] = MusGame(cfg, seed=int(venv.game_seeds[b]))
                policies[b] = _draw_policies(rng)
            else:
                assert tuple(venv.scores[b]) == g.scores, (b, "scores", tuple(venv.scores[b]), g.scores)
                assert venv.hand_number[b] == g.hand_number, (b, "hand_number", venv.hand_number[b], g.hand_number)
        assert rewards.shape == (B, 4) and rewards.dtype == np.float32, (rewards.shape, rewards.dtype)
        if not np.array_equal(expected, rewards):
            bad = np.flatnonzero((expected != rewards).any(axis=1))
            raise AssertionError(f"rewards differ at tables {bad.tolist()}: expected {expected[bad].tolist()}, "
                                 f"got {rewards[bad].tolist()}")
    cover["steps"] = steps
    return cover


def _minimum_cover(d: Diff) -> tuple[dict[str, int], tuple[str, ...]]:
    """Minimum counts of a CI run of ``d`` (about half the smallest count of ten seeds, see below), and the
    paths the config makes impossible (asserted to be 0, which also checks the counters)."""
    cfg = d.config
    mins = dict(MIN_COVER)
    zero: list[str] = []
    if not cfg.punto:
        zero += ["punto", "en_paso_punto"]
    if not cfg.partner_override:
        zero += ["confirm", "confirm_raise"]
    if cfg.max_stake is None:
        zero.append("capped")
    else:
        mins["capped"] = 50
    if cfg.juegos_to_win_vaca == 1:
        zero.append("games_mid_episode")
    else:
        mins["games_mid_episode"] = 50
    if d.mus_bias > 0.9:
        mins["reshuffles"] = 100
    elif d.mus_bias >= 0.5:
        mins["reshuffles"] = 3
    for k in zero:
        mins.pop(k, None)
    return mins, tuple(zero)


# Minimum counts of each CI run (``CI_TABLES`` tables, ``Diff.ci_steps`` steps): about half the smallest count
# reached over ten seeds per config (the rarest: en paso juego 4-11 with kings4_target30, 5-15 with
# zero_discard_all_speak_real31_no_punto, 6-15 with manual_declare_match_cap_keep_discards; pares medias and
# duples 15-33 with 4 kings; games ended by refusal stones 6-15 in the long-mus configs). The fixed seeds pass
# with margin, and a change that stops exercising a path (a policy, a config, the counters) fails.
MIN_COVER = {
    "episodes": 10, "hands": 200, "ordago_end": 10, "count_end": 30, "refusal_end": 3, "showdowns": 150,
    "pares_par": 100, "pares_medias": 8, "pares_duples": 8, "juego_31": 15, "juego_other": 50, "punto": 25,
    "en_paso_grande": 25, "en_paso_chica": 20, "en_paso_pares": 15, "en_paso_juego": 2, "en_paso_punto": 3,
    "stake_paid": 150, "uncontested": 80, "refused_first_bet": 50, "refused_after_raise": 20,
    "ordago_no_quiero": 15, "confirm": 150, "confirm_raise": 50, "r2_after_no_quiero": 100,
}


def _check_cover(d: Diff, cover: dict[str, int], scale: float = 1.0) -> None:
    mins, zero = _minimum_cover(d)
    low = {k: (cover[k], int(v * scale)) for k, v in mins.items() if cover[k] < v * scale}
    assert not low, f"paths exercised too rarely (count, minimum): {low}\nall counts: {cover}"
    nonzero = {k: cover[k] for k in zero if cover[k]}
    assert not nonzero, f"impossible paths counted: {nonzero}"


# Tables of the CI differential runs: enough for the kernel's threaded path (with num_threads > 1, the
# default on a machine with several cores), so that path is held equal to MusGame too.
CI_TABLES = 64

#: Señas on (RULES.md §8): both modes, interceptions off and at 0.3, both variants.
SIGNAL_CONFIGS = {
    "truthful_p0": Diff(MusConfig(signals="truthful"), 0.5, 707, 260),
    "truthful_p03_kings4": Diff(MusConfig(signals="truthful", signal_intercept_p=0.3, kings=4, target=30,
                                          real31="sota"), 0.6, 808, 260),
    "free_p0_kings4": Diff(MusConfig(signals="free", kings=4), 0.5, 909, 260),
    "free_p03_cap": Diff(MusConfig(signals="free", signal_intercept_p=0.3, max_mus_rounds=2,
                                   auto_declare=False), 0.9, 1010, 260),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_differential(name: str) -> None:
    """MusGame and VectorMusEnv agree at every step of a mixed-policy run, which reached every scoring path."""
    assert CI_TABLES >= PARALLEL_MIN_TABLES
    d = CONFIGS[name]
    cover = run_differential(d.config, d.mus_bias, B=CI_TABLES, seed=d.seed, reward="game", n_steps=d.ci_steps)
    _check_cover(d, cover)


@pytest.mark.parametrize("name", list(SIGNAL_CONFIGS))
def test_differential_signals(name: str) -> None:
    """With señas on the engines still agree at every step: sign masks, the signal block of every view
    (interceptions included), and the games around the windows."""
    d = SIGNAL_CONFIGS[name]
    cover = run_differential(d.config, d.mus_bias, B=CI_TABLES, seed=d.seed, reward="stones", n_steps=d.ci_steps)
    assert cover["hands"] >= 40 and cover["showdowns"] >= 20, cover


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SIGNAL_CONFIGS))
def test_differential_signals_long(name: str) -> None:
    d = SIGNAL_CONFIGS[name]
    cover = run_differential(d.config, d.mus_bias, B=256, seed=d.seed + 1, reward="game", n_games=5_000)
    assert cover["hands"] >= 5_000, cover


@pytest.mark.parametrize("name", ["default", "zero_discard_all_speak_real31_no_punto"])
def test_differential_stones_reward(name: str) -> None:
    d = CONFIGS[name]
    cover = run_differential(d.config, d.mus_bias, B=CI_TABLES, seed=7, reward="stones", n_steps=d.ci_steps // 3)
    assert cover["hands"] >= 60 and cover["showdowns"] >= 40 and cover["stake_paid"] >= 40, cover


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_differential_long(name: str) -> None:
    """100,000 games (juegos) over the configs, at other seeds than CI's; every path many times over."""
    d = CONFIGS[name]
    cover = run_differential(d.config, d.mus_bias, B=256, seed=d.seed + 1, reward="stones",
                             n_games=100_000 // len(CONFIGS))
    _check_cover(d, cover, scale=5.0)


def test_differential_one_thread() -> None:
    """The single-threaded kernel is held equal to MusGame too (the other runs use every core)."""
    d = CONFIGS["default"]
    cover = run_differential(d.config, d.mus_bias, B=CI_TABLES, seed=17, reward="stones", n_steps=60,
                             num_threads=1)
    assert cover["showdowns"] > 20, cover


def test_same_trajectories_whatever_num_threads() -> None:
    """The same seeded run gives identical observations, masks, rewards, ends, infos, state and any seat's
    observation with 1 and 2 threads."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has a single thread here")
    B = 2 * PARALLEL_MIN_TABLES
    cfg = MusConfig(kings=4, target=30)
    envs = [VectorMusEnv(B, cfg, seed=23, reward="stones", num_threads=n) for n in (1, 2)]
    outs = [e.reset() for e in envs]
    rng = np.random.default_rng(5)
    for _ in range(300):
        for k in range(2):
            assert _same(outs[0][k], outs[1][k])
        assert _same(envs[0].state(), envs[1].state())
        tables, seats = rng.integers(0, B, 20), rng.integers(0, 4, 20)
        for x, y in zip(envs[0].observe(tables, seats), envs[1].observe(tables, seats), strict=True):
            assert _same(x, y)
        actions = envs[0].sample_actions(rng)
        outs = [e.step(actions) for e in envs]
        for k in range(4):
            assert _same(outs[0][k], outs[1][k])
        assert outs[0][4].keys() == outs[1][4].keys()
        for key in outs[0][4]:
            assert _same(np.asarray(outs[0][4][key]), np.asarray(outs[1][4][key])), key
        assert np.array_equal(envs[0].scores, envs[1].scores)
        assert np.array_equal(envs[0].game_seeds, envs[1].game_seeds)


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
    obs, mask = venv.observe()                            # the engine's buffers
    for _ in range(50):
        obs.fill(np.nan)
        obs, mask = venv.observe()
        assert np.isfinite(obs).all()
        obs.fill(np.nan)
        obs, mask, *_ = venv.step((rng.random(mask.shape) * mask).argmax(axis=1))
        assert np.isfinite(obs).all()


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


@pytest.mark.parametrize("big", [2**63, 2**64, -(2**63) - 1, 10**30])
def test_a_list_of_ints_too_big_for_int64_is_named(big: int) -> None:
    """``step([2**63, ...])``: numpy makes such a list float64 (or object); the error names the int and its index,
    never "got dtype float64", and nothing changes. ``step_tables`` says the same."""
    venv = VectorMusEnv(4, seed=0)
    _, mask = venv.reset()
    snap = _snapshot(venv)
    actions = [int(a) for a in mask.argmax(axis=1)]
    actions[2] = big
    with pytest.raises(ValueError, match=rf"actions: {big} \(at index 2\) is out of range") as e:
        venv.step(actions)
    assert "dtype" not in str(e.value)
    with pytest.raises(ValueError, match=rf"actions: {big} \(at index 1\) is out of range"):
        venv.step_tables([0, 2], [actions[0], big])
    with pytest.raises(ValueError, match="integer array, got dtype (float64|object)"):
        venv.step([0.0, 0, 0, big])                         # a float in the list: not a list of ints
    _assert_unchanged(venv, snap)


def test_a_list_of_uint64_seeds_is_taken_as_given() -> None:
    """Game seeds are uint64: Python ints >= 2**63 in a list are seeds, not floats; outside 0..2**64-1 refused."""
    venv = VectorMusEnv(2, seed=0)
    venv.reset()
    decks = np.stack([np.arange(40), np.arange(40)[::-1]])
    venv.reset_from_decks(decks, [0, 1], None, [2**63 + 1, 5])
    assert venv.game_seeds.tolist() == [2**63 + 1, 5]
    snap = _snapshot(venv)
    for bad, where in (([2**64, 0], 0), ([2**63, -1], 1)):
        with pytest.raises(ValueError, match=rf"seeds\[{where}\] must be an int in 0\.\.2\*\*64 - 1"):
            venv.reset_from_decks(decks, [0, 1], None, bad)
    _assert_unchanged(venv, snap)


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
    with pytest.raises(ValueError, match="MusConfig.signals"):
        VectorMusEnv(2, MusConfig(signals="loud"))
    with pytest.raises(RuntimeError, match="reset"):
        VectorMusEnv(2).step(np.zeros(2, dtype=np.int64))


def test_engine_imports_no_rl_framework() -> None:
    import subprocess
    import sys

    code = ("import sys, mus_env.vector, mus_env.game; "
            "bad = [m for m in ('gymnasium', 'pettingzoo', 'torch') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


# ----------------------------------------------------------------------------------------------------
# subsets of tables and auto_reset=False (the public API mus_env.adapters.sb3 steps the engine with)
def _arrays(venv: VectorMusEnv) -> dict[str, np.ndarray]:
    return venv.state_dict()["arrays"]


def _assert_same_arrays(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k]), f"{k} differs"


@pytest.mark.parametrize("cfg", [MusConfig(), MusConfig(signals="truthful", signal_intercept_p=0.5, kings=4)],
                         ids=["default", "signals"])
def test_step_tables_in_parts_is_step(cfg: MusConfig) -> None:
    """Stepping every table as two disjoint subsets, in any order, leaves the engine exactly as one step does:
    state, views, rewards and episode ends (auto-resets included)."""
    B = 24
    whole, parts = VectorMusEnv(B, cfg, seed=8, num_threads=1), VectorMusEnv(B, cfg, seed=8, num_threads=1)
    whole.reset()
    parts.reset()
    rng = np.random.default_rng(3)
    finished = 0
    for _ in range(400):
        actions = whole.sample_actions(rng)
        _, _, rewards, done, info = whole.step(actions)
        order = rng.permutation(B)
        cut = int(rng.integers(0, B + 1))
        for tables in (order[:cut], order[cut:]):
            obs, mask = parts.step_tables(tables, actions[tables])
        _assert_same_arrays(_arrays(whole), _arrays(parts))
        assert np.array_equal(parts.last_rewards, rewards) and np.array_equal(parts.last_finished, done)
        assert np.array_equal(parts.last_winner, info["winner"])
        assert obs.shape == (B, parts.obs_dim) and mask.shape == (B, parts.num_actions)
        finished += int(done.sum())
    assert finished >= 10, finished


def test_without_auto_reset_a_finished_table_waits_at_game_over() -> None:
    """auto_reset=False: a finished table stays at Phase.GAME_OVER (no legal action, its outputs readable) until
    new_episodes; then it is exactly the table an auto-resetting engine has."""
    B = 16
    auto, kept = VectorMusEnv(B, seed=5), VectorMusEnv(B, seed=5, auto_reset=False)
    assert (auto.auto_reset, kept.auto_reset) == (True, False)
    auto.reset()
    kept.reset()
    rng = np.random.default_rng(0)
    waited = 0
    for _ in range(300):
        actions = auto.sample_actions(rng)
        _, _, rewards, done, info = auto.step(actions)
        _, kmask, krewards, kdone, kinfo = kept.step(actions)
        assert np.array_equal(krewards, rewards) and np.array_equal(kdone, done)
        assert np.array_equal(kinfo["winner"], info["winner"])
        fin = np.flatnonzero(done)
        if not fin.size:
            _assert_same_arrays(_arrays(auto), _arrays(kept))
            continue
        waited += fin.size
        assert (kept.phase[fin] == Phase.GAME_OVER).all() and not kmask[fin].any()
        assert (auto.phase[fin] != Phase.GAME_OVER).all()
        assert (kept.last_winner[fin] >= 0).all() and kept.last_finished[fin].all()
        assert (kept.sample_actions(rng)[fin] == -1).all()
        view, view_mask = kept.observe(fin, kept.current_player[fin])
        assert not view[:, OFFSETS["acting"]].any() and (view[:, OFFSETS["phase"]][:, Phase.GAME_OVER] == 1).all()
        assert not view_mask.any()
        snap = _arrays(kept)
        with pytest.raises(ValueError, match=rf"table {fin[0]}, .*game over.*auto_reset is off.*legal actions: none"):
            kept.step(auto.sample_actions(rng))
        with pytest.raises(ValueError, match=rf"table {fin[0]},"):
            kept.step_tables(fin, np.zeros(fin.size, dtype=np.int64))
        _assert_same_arrays(snap, _arrays(kept))
        episodes = kept.episode[fin].copy()
        kept.new_episodes(fin)
        assert np.array_equal(kept.episode[fin], episodes + 1) and (kept.phase[fin] != Phase.GAME_OVER).all()
        _assert_same_arrays(_arrays(auto), _arrays(kept))
    assert waited >= 5, waited


def test_new_episodes_restarts_only_the_given_tables() -> None:
    venv = VectorMusEnv(6, seed=2)
    venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(5):
        venv.step(venv.sample_actions(rng))
    before = _arrays(venv)
    seeds, episodes = venv.game_seeds.copy(), venv.episode.copy()
    obs, mask = venv.new_episodes([4, 1])
    assert np.array_equal(venv.episode, episodes + np.isin(np.arange(6), [4, 1]))
    from mus_env.shuffle import table_seeds
    assert np.array_equal(venv.game_seeds[[1, 4]], table_seeds(2, [1, 4], episodes[[1, 4]] + 1))
    for b in (0, 2, 3, 5):
        assert venv.game_seeds[b] == seeds[b]
        assert np.array_equal(before["state"][b], _arrays(venv)["state"][b])
        assert np.array_equal(before["obs"][b], obs[b])
    g = MusGame(MusConfig(), seed=int(venv.game_seeds[4]))
    assert np.array_equal(obs[4], g.observe(g.current_player)) and np.array_equal(mask[4], g.legal_action_mask())
    venv.new_episodes([])                                       # nothing to do


def test_subset_calls_reject_bad_input_and_change_nothing() -> None:
    venv = VectorMusEnv(4, seed=0)
    for call in (lambda: venv.step_tables([0], [0]), lambda: venv.new_episodes([0])):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    obs, mask = venv.reset()
    legal = mask.argmax(axis=1)
    snap = _arrays(venv)
    for tables, actions, match in (
            ([0, 0], legal[[0, 0]], "distinct"), ([4], legal[:1], r"0\.\.3"), ([-1], legal[:1], r"0\.\.3"),
            ([[0, 1]], legal[:2], "shape"), ([0, 1], legal[:1], r"actions must have shape \(2,\)"),
            ([0.0], legal[:1], "integer"), ([0, 1], legal[:2].astype(float), "integer"),
            ([2, 3], [int(legal[2]), 24], r"illegal action on 1 table\(s\); first: table 3, action 24 \(QUIERO\)"),
            ([1], [99], r"table 1, action 99 \(out of range")):
        with pytest.raises(ValueError, match=match):
            venv.step_tables(tables, actions)
        _assert_same_arrays(snap, _arrays(venv))
    for tables, match in (([1, 1], "distinct"), ([7], r"0\.\.3"), ([0.5], "integer")):
        with pytest.raises(ValueError, match=match):
            venv.new_episodes(tables)
        _assert_same_arrays(snap, _arrays(venv))
    venv.step_tables([2, 0], legal[[2, 0]])                     # still usable; the other tables untouched
    assert np.array_equal(_arrays(venv)["state"][[1, 3]], snap["state"][[1, 3]])
    with pytest.raises(ValueError, match="auto_reset must be True or False"):
        VectorMusEnv(2, auto_reset="no")


def test_last_outputs_are_read_only_views() -> None:
    venv = VectorMusEnv(3, seed=1)
    venv.reset()
    _, _, rewards, done, info = venv.step(venv.sample_actions(0))
    for arr, shape, dtype in ((venv.last_rewards, (3, 4), np.float32), (venv.last_finished, (3,), np.bool_),
                              (venv.last_winner, (3,), np.int8)):
        assert arr.shape == shape and arr.dtype == dtype and not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1
    assert np.array_equal(venv.last_rewards, rewards) and np.array_equal(venv.last_finished, done)


def test_state_dict_knows_auto_reset() -> None:
    kept = VectorMusEnv(2, seed=1, auto_reset=False)
    kept.reset()
    state = kept.state_dict()
    assert state["auto_reset"] is False
    auto = VectorMusEnv(2, seed=1)
    with pytest.raises(ValueError, match="auto_reset is False, this engine has True"):
        auto.load_state_dict(state)
    VectorMusEnv(2, seed=1, auto_reset=False).load_state_dict(state)
    old = auto.state_dict()
    del old["auto_reset"]                                         # saved before the option existed: auto-reset
    auto.load_state_dict(old)
    with pytest.raises(ValueError, match="auto_reset is True, this engine has False"):
        kept.load_state_dict(old)


@pytest.mark.parametrize("bad_key", ["out", "obs", "mask"])
def test_a_refused_load_with_a_bad_later_array_changes_nothing(bad_key: str) -> None:
    """load_state_dict checks every array before it copies any: a state whose ``state`` array is good but a later
    array (``out``, ``obs``, ``mask``) has the wrong dtype is refused with the engine exactly as it was (an engine
    that copied each array as soon as it was checked would already have overwritten its state rows)."""
    saved = VectorMusEnv(4, seed=2)
    saved.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        saved.step(saved.sample_actions(rng))
    state = saved.state_dict()
    target = VectorMusEnv(4, seed=5)
    target.reset()
    before = _arrays(target)
    assert not np.array_equal(before["state"], state["arrays"]["state"])     # a load would change the state rows
    bad = dict(state, arrays=dict(state["arrays"]))
    bad["arrays"][bad_key] = bad["arrays"][bad_key].astype(np.float64)
    assert list(bad["arrays"]).index(bad_key) > list(bad["arrays"]).index("state")
    with pytest.raises(ValueError, match=f"array '{bad_key}'"):
        target.load_state_dict(bad)
    _assert_same_arrays(before, _arrays(target))
    target.step(target.sample_actions(np.random.default_rng(1)))             # still a working engine


# ----------------------------------------------------------------------------------------------------------
# one table at a time (mus_v0's engine)


def test_one_table_calls_play_the_seeded_game_and_refuse_without_change():
    """``start_episode`` deals table b the game of ``MusGame(config, seed)`` (the other tables untouched),
    ``step_one`` plays it as ``MusGame.step`` or refuses an illegal action changing nothing, ``observe_seat``
    writes any seat's view."""
    cfg = MusConfig(kings=4)
    v = VectorMusEnv(3, cfg, seed=1, auto_reset=False, num_threads=1)
    v.start_episode(2, 9)                           # a first call: every table gets a game, table 2 its next
    assert v.episode.tolist() == [0, 0, 1] and v.game_seeds[2] == 9
    obs, mask = v.reset()
    others = v.state()[[0, 2]]
    v.start_episode(1, 2**64 - 5)
    assert np.array_equal(v.state()[[0, 2]], others) and v.game_seeds[1] == 2**64 - 5
    game = MusGame(cfg, seed=2**64 - 5)
    rng = np.random.default_rng(0)
    buf = np.zeros(v.obs_dim, dtype=np.float32)
    while not game.is_over:
        assert np.array_equal(mask[1], game.legal_action_mask())
        assert np.array_equal(obs[1], game.observe(game.current_player))
        seat = int(rng.integers(4))
        v.observe_seat(1, seat, buf)
        assert np.array_equal(buf, game.observe(seat))
        illegal = int(np.flatnonzero(mask[1] == 0)[0])
        rows = v.state_dict()["arrays"]["state"]
        assert v.step_one(1, illegal) is False
        assert np.array_equal(v.state_dict()["arrays"]["state"], rows)
        a = int(rng.choice(np.flatnonzero(mask[1])))
        assert v.step_one(1, a) is True
        game.step(a)
    assert v.last_finished[1] and v.last_winner[1] == game.winner and v.phase[1] == Phase.GAME_OVER
    before = v.state_dict()["arrays"]["state"]
    for table, seed in ((3, 0), (-1, 0), (0, -1), (0, 2**64), (0, 1.5)):
        with pytest.raises(ValueError):
            v.start_episode(table, seed)
    assert np.array_equal(v.state_dict()["arrays"]["state"], before)
