"""The compiled observation writer (``interfaces.CompiledObserver``: ``kernel.observe_view`` over
``MusGame.view_state``) against the readable Python writer (``MusGame.observe``, ``observation.write``).

Every seat's view at every decision of many random games, signals off and on, under several rulesets: the two
writers give the same float32 vector bit for bit. The PettingZoo and Gymnasium envs observe through the compiled
one, so these tests are what keeps them equal to ``MusGame.observe`` (and, through the differential tests, to
``VectorMusEnv``).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from mus_env import MusConfig, MusGame, kernel, mus_v0, observation
from mus_env.interfaces import CompiledObserver
from mus_env.wrappers import MusGymEnv

CONFIGS = {
    "default": MusConfig(),
    "signals truthful": MusConfig(signals="truthful", signal_intercept_p=0.5),
    "signals free, 4 kings": MusConfig(signals="free", kings=4, signal_intercept_p=1.0),
    "declarations, vacas": MusConfig(auto_declare=False, juegos_to_win_vaca=2, vacas_to_win_match=2, target=15,
                                     punto=False, real31="any10"),
    "capped": MusConfig(max_mus_rounds=2, max_stake=6, partner_override=False, holders_only_speak=False,
                        allow_zero_discard=True, exclude_own_discards=False, bet_sizes=(2, 5, 7, 9, 20)),
}


def _play(cfg: MusConfig, seed: int, rnd: random.Random) -> MusGame:
    """A game of random legal play, yielding it before each decision and once over."""
    g = MusGame(cfg, seed=seed, view_record=True)
    while True:
        yield g
        if g.is_over:
            return
        legal = g.legal_actions()
        g.step(legal[rnd.randrange(len(legal))])


def _first_difference(cfg: MusConfig, games: int) -> str | None:
    """The first view where the compiled writer differs from the Python one, over ``games`` random games."""
    compiled = CompiledObserver(cfg)
    rnd = random.Random(0)
    out = np.empty(observation.obs_dim(cfg), dtype=np.float32)
    for seed in range(games):
        for g in _play(cfg, seed, rnd):
            for seat in range(4):
                want = g.observe(seat)
                got = compiled(g, seat, out)
                if want.tobytes() != got.tobytes():
                    where = np.flatnonzero(want.view(np.uint32) != got.view(np.uint32))
                    return (f"game {seed}, seat {seat}, {g.phase_name}: entries {where.tolist()} are "
                            f"{got[where].tolist()}, MusGame.observe has {want[where].tolist()}")
    return None


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_compiled_writer_is_the_python_writer(name: str) -> None:
    assert _first_difference(CONFIGS[name], games=150) is None


def test_the_compiled_writer_is_the_python_writer_under_explicit_chance() -> None:
    """Games whose cards come as chance outcomes (``MusGame(explicit_chance=True)``, as the OpenSpiel adapter plays):
    at every chance node and decision, both writers give the same vector (the view record follows the cards dealt
    and served one at a time)."""
    for name in ("default", "signals truthful"):
        cfg = CONFIGS[name]
        compiled, rnd = CompiledObserver(cfg), random.Random(1)
        for _ in range(8):
            g = MusGame(cfg, explicit_chance=True, view_record=True)
            for _ in range(400):
                if g.is_over:
                    break
                for seat in range(4):
                    assert g.observe(seat).tobytes() == compiled(g, seat).tobytes(), (name, g.phase_name, seat)
                if g.chance_pending:
                    outcomes = [o for o, _ in g.chance_outcomes()]
                    g.apply_chance(outcomes[rnd.randrange(len(outcomes))])
                else:
                    legal = g.legal_actions()
                    g.step(legal[rnd.randrange(len(legal))])


def test_the_comparison_sees_a_wrong_view_record() -> None:
    """The check can fail: a game whose view record says another score gives another vector."""
    cfg = MusConfig()
    g = MusGame(cfg, seed=3, view_record=True)
    compiled = CompiledObserver(cfg)
    assert np.array_equal(compiled(g, 0), g.observe(0))
    wrong = g.view_state.copy()
    wrong[0]["scores"] = (7, 0)
    row = np.empty(observation.OBS_DIM, dtype=np.float32)
    kernel.observe_view(wrong, kernel.make_rules(cfg, stones_reward=False), 0, row)
    assert not np.array_equal(row, g.observe(0))
    assert observation.decode(row)["scores"] == (7, 0)


def test_the_view_record_is_read_only_and_follows_the_game() -> None:
    g = MusGame(MusConfig(first_mano=0), seed=1, view_record=True)
    rec = g.view_state
    assert rec.shape == (1,) and rec.dtype == observation.VIEW_DTYPE
    with pytest.raises(ValueError, match="read-only"):
        rec[0]["phase"] = 3
    assert int(rec[0]["game_seeds"]) == g.seed and int(rec[0]["mano"]) == 0
    assert [list(h) for h in rec[0]["hands"]] == [list(h) for h in g.hands]
    g.step(g.legal_actions()[0])
    assert int(rec[0]["rel"]) == 1                             # a view of the game's own buffer
    clone = g.clone()
    clone.step(clone.legal_actions()[0])
    assert int(rec[0]["rel"]) == 1 and int(clone.view_state[0]["rel"]) == 2     # a clone has its own


def test_the_compiled_observer_checks_its_arguments() -> None:
    cfg = MusConfig()
    compiled = CompiledObserver(cfg)
    g = MusGame(cfg, seed=0, view_record=True)
    for seat in (-1, 4, True, 1.0, "0"):
        with pytest.raises(ValueError, match="seat"):
            compiled(g, seat)
    assert np.array_equal(compiled(g, np.int64(2)), g.observe(2))
    with pytest.raises(ValueError, match="float32"):
        compiled(g, 0, np.empty(observation.OBS_DIM, dtype=np.float64))
    with pytest.raises(ValueError, match="entries"):
        compiled(g, 0, np.empty(observation.OBS_DIM - 1, dtype=np.float32))
    frozen = np.empty(observation.OBS_DIM, dtype=np.float32)
    frozen.flags.writeable = False
    for bad in (frozen, np.empty(2 * observation.OBS_DIM, dtype=np.float32)[::2], [0.0] * observation.OBS_DIM):
        with pytest.raises(ValueError, match="writable contiguous float32"):
            compiled(g, 0, bad)
    with pytest.raises(ValueError, match="config"):
        compiled(MusGame(MusConfig(kings=4), seed=0), 0)


@pytest.mark.parametrize("name", ["default", "signals truthful"])
def test_the_envs_observe_what_musgame_observes(name: str) -> None:
    """mus_v0.env() and MusGymEnv give MusGame.observe's vectors (they write them with the compiled writer)."""
    cfg = CONFIGS[name]
    env = mus_v0.env(config=cfg)
    rnd = random.Random(1)
    for ep in range(20):
        env.reset(seed=ep)
        game = env.unwrapped.game
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            seat = int(agent.split("_")[1])
            assert np.array_equal(obs["observation"], game.observe(seat))
            other = f"player_{(seat + 1) % 4}"
            assert np.array_equal(env.observe(other)["observation"], game.observe((seat + 1) % 4))
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rnd.randrange(len(legal))]))
    gym = MusGymEnv(cfg, learner_seats=(0, 2))
    for ep in range(20):
        obs, info = gym.reset(seed=ep)
        done = False
        while not done:
            assert np.array_equal(obs, gym.game.observe(info["seat"]))
            legal = np.flatnonzero(info["action_mask"])
            obs, _, done, _, info = gym.step(int(legal[rnd.randrange(len(legal))]))
        assert np.array_equal(obs, gym.game.observe(info["seat"]))


def _trace(g: MusGame, rnd: random.Random) -> list:
    """What random legal play shows of ``g``, decision by decision: the seat, its legal actions, every seat's
    view (the Python writer) and the score, then the hands' records."""
    seen = []
    while not g.is_over:
        legal = g.legal_actions()
        seen.append((g.current_player, tuple(legal), b"".join(g.observe(s).tobytes() for s in range(4)), g.scores))
        g.step(legal[rnd.randrange(len(legal))])
    return seen + [g.hand_log, g.winner]


@pytest.mark.parametrize("name", ["default", "signals truthful", "declarations, vacas"])
def test_a_game_without_the_view_record_plays_the_same(name: str) -> None:
    """``view_record=False`` (the default) skips the record's upkeep and nothing else: the same seeds give the same
    decisions, views and records with and without it (the record-keeping game's compiled views equal its Python
    views, test above); a record-less game's ``view_state`` and the compiled observer refuse it by name."""
    cfg = CONFIGS[name]
    for seed in range(40):
        with_record = _trace(MusGame(cfg, seed=seed, view_record=True), random.Random(seed))
        without = _trace(MusGame(cfg, seed=seed), random.Random(seed))
        assert with_record == without, (name, seed)
    deck = list(range(40))
    assert _trace(MusGame.from_deck(deck, 1, (3, 4), cfg, seed=5, view_record=True), random.Random(0)) == \
        _trace(MusGame.from_deck(deck, 1, (3, 4), cfg, seed=5), random.Random(0))
    g = MusGame(cfg, seed=0)
    with pytest.raises(ValueError, match="view_record=True"):
        _ = g.view_state
    with pytest.raises(ValueError, match="view_record=True"):
        CompiledObserver(cfg)(g, 0)
    with pytest.raises(ValueError, match="view_record=True"):
        CompiledObserver(cfg).writer(g)
    assert g.clone().observe(1).tobytes() == g.observe(1).tobytes()
    with pytest.raises(ValueError, match="view_record must be True or False"):
        MusGame(cfg, seed=0, view_record="yes")
    rec = MusGame(cfg, seed=0, view_record=True).clone().view_state           # a clone keeps the record
    assert int(rec[0]["game_seeds"]) == 0
