"""The Gymnasium single-agent view ``MusGymEnv``: Gymnasium's env checker, the learner/opponent loop against
the engine, rewards, seeding, bad input, and a MaskablePPO smoke run."""

from __future__ import annotations

import copy
import pickle
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from rulebook import stone_rewards_from_scores

from mus_env import Action, IllegalActionError, MusConfig, MusGame, mus_v0
from mus_env.observation import OBS_DIM
from mus_env.wrappers import ENV_ID, MusGymEnv, uniform_random_policy


def masked(info: dict, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(info["action_mask"])
    return int(legal[rng.integers(len(legal))])


def expected_team_total(game, team: int, reward: str) -> float:
    """The learner team's whole-episode return, recomputed from the finished game alone."""
    if reward == "game":
        return 1.0 if game.winner == team else -1.0
    total = stone_rewards_from_scores(game)
    return total if team == 0 else -total


# ----------------------------------------------------------------------------------------------------------
# Gymnasium conformance


def test_check_env_direct():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(infinity|spec|render modes).*")
        check_env(MusGymEnv(illegal_action="terminate"))
        check_env(MusGymEnv(learner_seats=(1, 3), reward="stones", illegal_action="terminate", kings=4, target=30))


def test_check_env_through_registry_with_render_modes(capsys):
    env = gymnasium.make(ENV_ID, illegal_action="terminate", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*infinity.*")
        check_env(env.unwrapped)           # also renders every declared mode through env.spec.make
    env.close()


def test_gymnasium_make_passes_arguments():
    env = gymnasium.make(ENV_ID, kings=4, learner_seats=(1,), reward="stones")
    obs, info = env.reset(seed=0)
    u = env.unwrapped
    assert isinstance(u, MusGymEnv) and u.config.kings == 4 and u.learner_seats == (1,)
    assert obs.shape == (OBS_DIM,) and obs.dtype == np.float32 and info["seat"] == 1
    assert env.get_wrapper_attr("action_masks")().dtype == bool


def test_spaces():
    env = MusGymEnv(target=30)
    assert env.action_space == gymnasium.spaces.Discrete(31)
    assert env.observation_space == mus_v0.raw_env(target=30).observation_space("player_0")["observation"]


# ----------------------------------------------------------------------------------------------------------
# the loop against the engine


@pytest.mark.parametrize("learners, reward, cfg", [
    ((0,), "game", MusConfig()),
    ((0, 2), "stones", MusConfig(kings=4, target=30)),
    ((3,), "stones", MusConfig(juegos_to_win_vaca=2, target=20)),
    ((1, 3), "game", MusConfig(auto_declare=False, partner_override=False)),
])
def test_episodes_against_the_engine(learners, reward, cfg):
    """The learner acts at its seats; between its turns every other seat's decision is made by that seat's own
    agent, called exactly once for it, on that seat's view, at that seat's turn, and applied as chosen."""
    calls: list[tuple[int, int]] = []                   # (seat, action) of every opponent agent call, in order
    env: MusGymEnv

    def opponent(seat: int):
        def act(obs, mask, rng):
            game = env.game
            assert game.current_player == seat, f"seat {seat}'s agent called at seat {game.current_player}'s turn"
            assert np.array_equal(obs, game.observe(seat)) and np.array_equal(mask, game.legal_action_mask())
            legal = np.flatnonzero(mask)
            a = int(legal[rng.integers(len(legal))])
            calls.append((seat, a))
            return a
        return act

    def decisions(game) -> list[tuple[int, int]]:
        """(seat, action) of every decision of the game so far (the engine's automatic declarations left out)."""
        # once the game is over, hand_actions still holds its last hand, which hand_log has too
        evs = [ev for h in game.hand_log for ev in h.actions] + ([] if game.is_over else list(game.hand_actions))
        return [(ev.seat, ev.action) for ev in evs if not ev.auto]

    env = MusGymEnv(cfg, learner_seats=learners, reward=reward,
                    opponents={s: opponent(s) for s in range(4) if s not in learners})
    rng = np.random.default_rng(4)
    team = learners[0] % 2
    opponent_turns = 0
    for episode in range(150):
        obs, info = env.reset(seed=episode)
        game = env.game
        total, terminated = 0.0, False
        while not terminated:
            seat = info["seat"]
            assert seat in learners and game.current_player == seat
            assert np.array_equal(obs, game.observe(seat))
            assert np.flatnonzero(info["action_mask"]).tolist() == game.legal_actions()
            assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
            assert env.observation_space.contains(obs)
            done_before, calls_before = len(decisions(game)), len(calls)
            action = masked(info, rng)
            obs, reward_, terminated, truncated, info = env.step(action)
            assert truncated is False and terminated is game.is_over
            # this step: the learner's action, then each opponent decision once, as its own agent chose it
            made = decisions(game)[done_before:]
            assert made[0] == (seat, action)
            assert made[1:] == calls[calls_before:]
            assert all(s not in learners for s, _ in made[1:])
            opponent_turns += len(made) - 1
            total += reward_
        assert not info["action_mask"].any() and not env.action_masks().any()
        assert total == expected_team_total(game, team, reward)
        with pytest.raises(ValueError, match="reset"):
            env.step(0)
    assert opponent_turns > 500                          # about 5 per episode, 2-3 opponents


def musgame_episode(cfg: MusConfig, learners: tuple[int, ...], reward: str, seed: int, steps_seed: int) -> list:
    """The seeded episode MusGymEnv's contract describes, played on ``MusGame`` alone (no compiled table): the game
    of ``MusGame(cfg, seed)`` (or the next seed drawn from the generator when the learner would never act), the
    other seats uniformly random from the generator ``reset(seed=seed)`` makes, the learner team's reward of every
    hand finished between its decisions. Each item: (observation bytes, mask, reward, terminated, seat)."""
    from gymnasium.utils import seeding

    from mus_env.interfaces import team_rewards

    rng, _ = seeding.np_random(seed)
    pick, sign = np.random.default_rng(steps_seed), 1.0 if learners[0] % 2 == 0 else -1.0

    def others(game) -> float:
        total = 0.0
        while not game.is_over and game.current_player not in learners:
            before = len(game.hand_log)
            legal = game.legal_actions()
            game.step(legal[int(rng.integers(len(legal)))])
            total += sign * team_rewards(game, before, reward)
        return total

    game_seed = seed
    while True:
        game = MusGame(cfg, seed=game_seed)
        pending = others(game)
        if not game.is_over:
            break
        game_seed = int(rng.integers(0, 2**63 - 1))
    seat = game.current_player
    out = [(game.observe(seat).tobytes(), game.legal_action_mask().tolist(), None, False, seat)]
    while not game.is_over:
        legal = game.legal_actions()
        before = len(game.hand_log)
        game.step(legal[int(pick.integers(len(legal)))])
        r = pending + sign * team_rewards(game, before, reward) + others(game)
        pending = 0.0
        if not game.is_over:
            seat = game.current_player
        mask = [0] * len(out[0][1]) if game.is_over else game.legal_action_mask().tolist()
        out.append((game.observe(seat).tobytes(), mask, r, game.is_over, seat))
    return out


@pytest.mark.parametrize("learners, reward, cfg", [
    ((0,), "stones", MusConfig()),
    ((1, 3), "game", MusConfig(kings=4, target=30)),
    ((2,), "stones", MusConfig(juegos_to_win_vaca=2, target=15, first_mano=1)),
    ((0, 2), "stones", MusConfig(signals="truthful")),
])
def test_the_view_plays_the_musgame_episodes_of_its_contract(learners, reward, cfg):
    """Seeded episodes of MusGymEnv (which steps a compiled table) against the same episodes played on MusGame
    alone: every observation, mask, reward, end and seat equal."""
    env = MusGymEnv(cfg, learner_seats=learners, reward=reward)
    for seed in range(60):
        obs, info = env.reset(seed=seed)
        pick = np.random.default_rng(1000 + seed)
        got = [(obs.tobytes(), info["action_mask"].tolist(), None, False, info["seat"])]
        terminated = False
        while not terminated:
            legal = np.flatnonzero(info["action_mask"])
            obs, r, terminated, _, info = env.step(int(legal[int(pick.integers(len(legal)))]))
            got.append((obs.tobytes(), info["action_mask"].tolist(), r, terminated, info["seat"]))
        assert got == musgame_episode(cfg, learners, reward, seed, 1000 + seed), f"seed {seed}"


def test_learner_never_acting_games_are_skipped():
    # With seat 1 as mano, seat 1 cuts and bets órdago at grande and seat 2 accepts it before seat 0 speaks.
    def cutter(obs, mask, rng):
        return int(Action.NO_MUS) if mask[Action.NO_MUS] else int(Action.ORDAGO) if mask[Action.ORDAGO] else \
            int(np.flatnonzero(mask)[0])

    calls = {"n": 0}

    def accepter_once(obs, mask, rng):                 # accepts the first órdago only
        calls["n"] += 1
        if mask[Action.QUIERO] and calls["n"] == 1:
            return int(Action.QUIERO)
        return int(Action.NO_QUIERO) if mask[Action.NO_QUIERO] else int(np.flatnonzero(mask)[0])

    env = MusGymEnv(first_mano=1, opponents={1: cutter, 2: accepter_once})
    obs, info = env.reset(seed=0)
    assert env.skipped_games == 1 and env.game.current_player == 0 and not env.game.is_over
    always = MusGymEnv(first_mano=1, opponents={1: cutter, 2: lambda o, m, r: int(Action.QUIERO)})
    with pytest.raises(RuntimeError, match="before a learner seat"):
        always.reset(seed=0)


def test_opponent_forms_and_rng():
    class Passer:
        def act(self, obs, mask, rng):
            assert obs.shape == (OBS_DIM,) and mask.dtype == np.int8 and isinstance(rng, np.random.Generator)
            for a in (Action.NO_MUS, Action.PASO, Action.NO_QUIERO, Action.QUIERO):
                if mask[a]:
                    return int(a)
            return int(np.flatnonzero(mask)[0])

    seen = []

    def partner(obs, mask, rng):
        seen.append(obs.copy())
        return uniform_random_policy(obs, mask, rng)

    for opponents in (Passer(), {1: Passer(), 3: Passer(), 2: partner}, {1: Passer()}):
        env = MusGymEnv(opponents=opponents, first_mano=1)
        obs, info = env.reset(seed=2)
        env.step(masked(info, np.random.default_rng(0)))
    assert seen, "the partner's agent was called"


def test_same_seed_same_episode():
    def run(seed):
        env = MusGymEnv(learner_seats=(0, 2), reward="stones")
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = [obs.tobytes()]
        terminated = False
        while not terminated:
            obs, r, terminated, _, info = env.step(masked(info, rng))
            out.append((obs.tobytes(), r))
        return out
    assert run(8) == run(8)
    assert run(8) != run(9)
    a, b = MusGymEnv(seed=5), MusGymEnv()
    assert np.array_equal(a.reset()[0], b.reset(seed=5)[0])


def test_deepcopy_and_pickle_mid_episode():
    env = MusGymEnv(learner_seats=(0, 2), reward="stones", kings=4)
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(3)
    obs, *_, info = env.step(masked(info, rng))
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for c in [env, *copies]:
        r = np.random.default_rng(9)
        i, trace, done = info, [], False
        while not done:
            o, rew, done, _, i = c.step(masked(i, r))
            trace.append((o.tobytes(), rew))
        c.trace = trace
    assert copies[0].trace == env.trace == copies[1].trace


# ----------------------------------------------------------------------------------------------------------
# bad input


def test_illegal_learner_action_raises_and_changes_nothing():
    env = MusGymEnv()
    obs, info = env.reset(seed=0)
    state = env.game.state()
    for bad in (next(a for a in range(31) if not info["action_mask"][a]), 31, -1, "mus", None):
        with pytest.raises(IllegalActionError):
            env.step(bad)
        assert np.array_equal(env.game.state(), state)
    env.step(np.array(masked(info, np.random.default_rng(0))))      # a 0-d array is an action too


def test_illegal_action_terminate_mode():
    env = MusGymEnv(illegal_action="terminate", illegal_reward=-2)
    obs, info = env.reset(seed=0)
    bad = next(a for a in range(31) if not info["action_mask"][a])
    obs2, r, terminated, truncated, info2 = env.step(bad)
    assert (r, terminated, truncated, info2["illegal_action"]) == (-2.0, True, False, True)
    assert np.array_equal(obs, obs2) and not info2["action_mask"].any()
    with pytest.raises(ValueError, match="reset"):
        env.step(0)


def test_illegal_opponent_action_names_the_seat():
    env = MusGymEnv(first_mano=1, opponents={1: lambda o, m, r: 30})
    with pytest.raises(IllegalActionError, match="seat 1"):
        env.reset(seed=0)


def test_bad_constructor_arguments():
    cases = [
        ({"learner_seats": ()}, "learner_seats"), ({"learner_seats": (0, 1)}, "one team"),
        ({"learner_seats": (4,)}, "learner_seats"), ({"learner_seats": (0, 0)}, "learner_seats"),
        ({"learner_seats": "0"}, "learner_seats"), ({"opponents": 3}, "seat"),
        ({"opponents": {0: uniform_random_policy}}, "non-learner"), ({"reward": "points"}, "'game', 'stones'"),
        ({"illegal_action": "ignore"}, "'raise', 'terminate'"),
        ({"kingz": 4}, "accepted fields"), ({"kings": 6}, "MusConfig.kings"), ({"seed": -3}, "seed"),
        ({"illegal_reward": "x"}, "illegal_reward"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            MusGymEnv(**kwargs)
    with pytest.raises(RuntimeError, match="reset"):
        MusGymEnv().step(0)
    with pytest.warns(UserWarning, match="rgb_array.*not supported"):
        assert MusGymEnv(render_mode="rgb_array").render_mode is None


def test_render(capsys):
    env = MusGymEnv(render_mode="ansi", learner_seats=(2,))
    env.reset(seed=0)
    text = env.render()
    assert "cards of player_2" in text and "score" in text
    human = MusGymEnv(render_mode="human")
    human.reset(seed=0)
    assert "score" in capsys.readouterr().out


# ----------------------------------------------------------------------------------------------------------
# MaskablePPO works unchanged


@pytest.mark.filterwarnings("ignore:.*rgb_array")     # make_vec_env asks every env for render_mode="rgb_array"
def test_maskable_ppo_smoke():
    """MaskablePPO trains on MusGymEnv unchanged: it reads the masks (its distribution puts exactly zero on
    illegal actions), collects exactly the steps asked for, finishes episodes whose stone returns reach it,
    and its update moves the network."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env(ENV_ID, n_envs=2, seed=0, env_kwargs={"learner_seats": (0, 2), "reward": "stones"})
    model = sb3_contrib.MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [32]})
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256                           # two rollouts of 64 steps on 2 envs
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    returns = [ep["r"] for ep in model.ep_info_buffer]
    # a few dozen decisions a game: whole episodes finish, and their stone returns are not all zero
    assert len(returns) >= 2 and any(r != 0 for r in returns), returns
    assert all(float(r).is_integer() and abs(r) <= 80 for r in returns), returns
    obs = vec.reset()
    for _ in range(20):
        masks = get_action_masks(vec)
        assert masks.any(axis=1).all()
        dist = model.policy.get_distribution(model.policy.obs_to_tensor(obs)[0], action_masks=masks)
        probs = dist.distribution.probs.detach().numpy()
        assert np.all(probs[~masks] == 0.0) and np.allclose(probs.sum(axis=1), 1.0)
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert all(masks[i, a] for i, a in enumerate(actions))
        obs, *_ = vec.step(actions)


def _calm(obs, mask, rng) -> int:
    """Paso, no quiero, no mus or discard one, else the first legal action: a deterministic opponent."""
    return next((a for a in (18, 25, 1, 2) if mask[a]), int(np.flatnonzero(mask)[0]))


def test_an_opponent_failing_stops_the_episode_at_its_decision_with_nothing_half_applied():
    """An opponent's illegal action after the learner's: the engine refuses it with nothing changed (validate,
    then mutate), so the game stands at that opponent's decision with the learner's action (and the moves after
    it) applied: the position of a game played by hand beside the env, stopped where seat 1 is to act. The episode
    is stopped (``step`` asks for a ``reset``); a reset starts a clean one. No copy of the game is kept."""
    switch = {"bad": False}

    def seat1(obs, mask, rng) -> int:
        return 30 if switch["bad"] else _calm(obs, mask, rng)

    env = MusGymEnv(learner_seats=(0,), opponents={1: seat1, 2: _calm, 3: _calm}, first_mano=0, reward="stones")
    _, info = env.reset(seed=3)
    reference = env.game.clone()                 # the same position, played by hand beside the env

    def others_until(stop: int) -> None:
        while not reference.is_over and reference.current_player not in (0, stop):
            reference.step(_calm(None, reference.legal_action_mask(), None))

    rng = np.random.default_rng(0)
    for k in range(200):
        legal = [x for x in np.flatnonzero(info["action_mask"]) if x != 26] or [26]
        action = int(rng.choice(legal))
        probe = reference.clone()
        probe.step(action)
        while not probe.is_over and probe.current_player in (2, 3):
            probe.step(_calm(None, probe.legal_action_mask(), None))
        if k >= 3 and probe.current_player == 1:            # seat 1 acts next: make it fail now
            switch["bad"] = True
            game = env.game
            with pytest.raises(IllegalActionError, match="seat 1.*stopped at that seat's decision"):
                env.step(action)
            reference.step(action)
            others_until(1)
            assert env.game is game and game.current_player == 1 == reference.current_player
            assert np.array_equal(game.state(), reference.state()) and game.hand_actions == reference.hand_actions
            assert not env.action_masks().any()
            with pytest.raises(ValueError, match="call reset"):
                env.step(action)                            # stopped, not played for seat 1
            switch["bad"] = False
            env.reset(seed=5)
            assert env.game is not game and env.action_masks().any()
            return
        _, _, done, _, info = env.step(action)
        reference.step(action)
        while not reference.is_over and reference.current_player != 0:
            reference.step(_calm(None, reference.legal_action_mask(), None))
        assert not done and np.array_equal(env.game.state(), reference.state())
    pytest.fail("seat 1 never acted right after the learner")


def test_an_opponent_failing_in_reset_leaves_no_episode():
    env = MusGymEnv(first_mano=1, opponents={1: lambda o, m, r: 30})
    with pytest.raises(IllegalActionError, match="seat 1"):
        env.reset(seed=0)
    with pytest.raises(ValueError, match="call reset") as e:
        env.step(0)                             # not played as seat 1
    assert not isinstance(e.value, IllegalActionError)
