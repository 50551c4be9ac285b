"""MusVecEnv (mus_env/sb3.py), the SB3 VecEnv over one VectorMusEnv: the VecEnv contract and SB3's wrappers, equality
with MusGymEnv episode by episode (observations, masks, rewards, dones, terminal observations, skipped episodes),
MaskablePPO on it and the saved model as an agent, the training command, and bad arguments."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from agents import OrdagoAgent, RandomAgent, RuleBasedAgent, make_agent  # noqa: E402
from mus_env import NUM_ACTIONS, OBS_DIM, Action, VectorMusEnv  # noqa: E402
from mus_env.adapters.sb3 import MusVecEnv  # noqa: E402
from mus_env.shuffle import table_seeds  # noqa: E402
from mus_env.wrappers import MusGymEnv  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)


def _choose(obs: np.ndarray, mask: np.ndarray) -> int:
    """A deterministic learner: a legal action picked by a hash of the observation (the same in both envs)."""
    legal = np.flatnonzero(mask)
    return int(legal[zlib.crc32(obs.tobytes()) % len(legal)])


class Aggressive:
    """Cuts the mus, bets the minimum when it opens and accepts every bet: without the partner's override, whole
    hands can pass without the learner at seat 3 speaking, so stones are scored before its first decision."""

    name = "aggressive"

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.asarray(masks).argmax(axis=1)
        for a in (Action.ENVIDO_2, Action.QUIERO, Action.NO_MUS):     # the last legal one in this list wins
            out = np.where(masks[:, a] > 0, int(a), out)
        return out.astype(np.int64)

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(obs[None], mask[None], rng)[0])


def _record(venv: MusVecEnv, steps: int) -> list[list[tuple[int, list[tuple]]]]:
    """Play ``steps`` VecEnv steps with :func:`_choose`; per table, its episodes as (game seed, [(obs, mask,
    action, reward, done, terminal observation)])."""
    obs = venv.reset()
    masks = venv.action_masks()
    current = [(info["game_seed"], []) for info in venv.reset_infos]
    episodes: list[list[tuple[int, list[tuple]]]] = [[] for _ in range(venv.num_envs)]
    for _ in range(steps):
        actions = np.array([_choose(o, m) for o, m in zip(obs, masks, strict=True)])
        new_obs, rewards, dones, infos = venv.step(actions)
        for i in range(venv.num_envs):
            current[i][1].append((obs[i], masks[i], int(actions[i]), float(rewards[i]), bool(dones[i]),
                                  infos[i].get("terminal_observation")))
            if dones[i]:
                episodes[i].append(current[i])
                current[i] = (infos[i]["game_seed"], [])
        obs, masks = new_obs, venv.action_masks()
    for i in range(venv.num_envs):
        if current[i][1]:
            episodes[i].append(current[i])
    return episodes


def _assert_same_as_gym(episodes: list, make_gym: callable) -> dict[str, int]:
    """Replay every recorded episode on MusGymEnv with ``reset(seed=game_seed)``; everything must be equal."""
    count = {"episodes": 0, "steps": 0, "terminal": 0}
    for table, eps in enumerate(episodes):
        for game_seed, steps in eps:
            env = make_gym()
            obs, info = env.reset(seed=game_seed)
            assert env.skipped_games == 0, f"table {table}: MusGymEnv skips game {game_seed}, MusVecEnv played it"
            for k, (v_obs, v_mask, action, v_reward, v_done, v_terminal) in enumerate(steps):
                where = f"table {table}, game {game_seed}, decision {k}"
                assert np.array_equal(obs, v_obs), f"{where}: observation differs"
                assert np.array_equal(info["action_mask"] > 0, v_mask), f"{where}: mask differs"
                obs, reward, terminated, truncated, info = env.step(action)
                assert reward == v_reward, f"{where}: reward {v_reward}, MusGymEnv {reward}"
                assert terminated == v_done and not truncated, f"{where}: done {v_done}, MusGymEnv {terminated}"
                if terminated:
                    assert v_terminal is not None and np.array_equal(obs, v_terminal), \
                        f"{where}: terminal observation differs"
                    count["terminal"] += 1
                count["steps"] += 1
            count["episodes"] += 1
    return count


# ----------------------------------------------------------------------------------------------------------
# (a) the VecEnv contract
def test_vecenv_contract_and_auto_reset() -> None:
    venv = MusVecEnv(8, learner_seats=(0, 2), opponents=RuleBasedAgent(), seed=1)
    assert venv.num_envs == 8 and venv.observation_space.shape == (OBS_DIM,)
    assert venv.action_space.n == NUM_ACTIONS
    obs = venv.reset()
    assert obs.shape == (8, OBS_DIM) and obs.dtype == np.float32
    assert [i["seat"] for i in venv.reset_infos] == venv._seat.tolist()
    rng = np.random.default_rng(0)
    finished = 0
    infos = venv.reset_infos
    for _ in range(150):
        masks = venv.action_masks()
        assert masks.shape == (8, NUM_ACTIONS) and masks.dtype == np.bool_ and masks.any(axis=1).all()
        seats = np.array([i["seat"] for i in infos])
        assert set(seats.tolist()) <= {0, 2}
        # each row is the acting learner seat's own view, with its legal actions
        view, view_mask = venv.engine.observe(np.arange(8), seats)
        assert np.array_equal(view, obs) and np.array_equal(view_mask > 0, masks)
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, rewards, dones, infos = venv.step(actions)
        assert obs.shape == (8, OBS_DIM) and obs.dtype == np.float32
        assert rewards.shape == (8,) and rewards.dtype == np.float32
        assert dones.shape == (8,) and dones.dtype == np.bool_
        assert isinstance(infos, list) and len(infos) == 8
        for i in range(8):
            assert venv.observation_space.contains(obs[i])
            if dones[i]:
                finished += 1
                term = infos[i]["terminal_observation"]
                assert term.shape == (OBS_DIM,) and term.dtype == np.float32
                assert not np.array_equal(term, obs[i])             # the new episode's first view is elsewhere
                assert rewards[i] in (1.0, -1.0) and infos[i]["winner"] in (0, 1)
                assert rewards[i] == (1.0 if infos[i]["winner"] == 0 else -1.0)
            else:
                assert "terminal_observation" not in infos[i] and rewards[i] == 0.0
    assert finished >= 5


def test_sb3_wrappers_and_mask_helpers() -> None:
    from stable_baselines3.common.vec_env import VecCheckNan, VecMonitor

    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    base = MusVecEnv(6, learner_seats=(1,), opponents=RuleBasedAgent(), reward="stones", seed=2)
    venv = VecCheckNan(VecMonitor(base), raise_exception=True)
    assert is_masking_supported(venv)
    obs = venv.reset()
    assert obs.shape == (6, OBS_DIM)
    returns = []
    for _ in range(120):
        masks = get_action_masks(venv)
        assert np.array_equal(masks, base.action_masks())
        obs, rewards, dones, infos = venv.step(masks.argmax(axis=1))
        returns += [infos[i]["episode"]["r"] for i in np.flatnonzero(dones)]
    assert returns and all(float(r).is_integer() for r in returns)
    assert venv.get_attr("learner_seats") == [(1,)] * 6
    assert venv.get_attr("reward_mode", indices=[0, 3]) == ["stones", "stones"]
    assert venv.env_is_wrapped(VecMonitor) == [False] * 6
    rows = venv.env_method("action_masks", indices=[1, 4])
    assert len(rows) == 2 and np.array_equal(rows[1], base.action_masks()[4])
    venv.set_attr("some_flag", 3)
    assert base.some_flag == 3
    assert sb3_contrib is not None


def test_seeding_reproduces_and_names_the_games() -> None:
    a = MusVecEnv(5, opponents=RuleBasedAgent(), seed=7)
    b = MusVecEnv(5, opponents=RuleBasedAgent(), seed=99)
    assert b.seed(7) == [int(s) for s in table_seeds(7, np.arange(5), 0)]
    obs_a, obs_b = a.reset(), b.reset()
    assert np.array_equal(obs_a, obs_b)
    # each table's first game is table_seeds(seed, i, episode), episode 0 unless the first games were skipped
    for i, info in enumerate(a.reset_infos):
        assert info["game_seed"] == int(table_seeds(7, i, a.episodes[i]))
    rng = np.random.default_rng(0)
    for _ in range(40):
        masks = a.action_masks()
        act = (rng.random(masks.shape) * masks).argmax(axis=1)
        ra, rb = a.step(act), b.step(act)
        assert np.array_equal(ra[0], rb[0]) and np.array_equal(ra[1], rb[1]) and np.array_equal(ra[2], rb[2])
    # a second reset() without a seed deals new games; seed() then reset() replays the first ones
    again = a.reset()
    assert not np.array_equal(again, obs_a)
    a.seed(7)
    assert np.array_equal(a.reset(), obs_a)


# ----------------------------------------------------------------------------------------------------------
# (b) equal to MusGymEnv, episode by episode
@pytest.mark.parametrize("seats,reward", [((0, 2), "game"), ((0, 2), "stones"), ((1,), "game"), ((1,), "stones"),
                                          ((3,), "stones")])
def test_equals_musgymenv_against_rule(seats: tuple[int, ...], reward: str) -> None:
    rule = RuleBasedAgent()
    assert rule.bluff_rate == 0.0                       # deterministic: its choices depend on the observation only
    venv = MusVecEnv(6, learner_seats=seats, opponents=rule, reward=reward, seed=3)
    episodes = _record(venv, 120)
    count = _assert_same_as_gym(episodes, lambda: MusGymEnv(learner_seats=seats, opponents=RuleBasedAgent(),
                                                            reward=reward))
    assert count["steps"] == 6 * 120 and count["terminal"] >= 10, count


def test_reward_before_the_first_decision_equals_musgymenv() -> None:
    """Stones scored before the learner's first decision are paid with its first reward, as in MusGymEnv.

    The check can fail: the same comparison with the pending reward dropped finds a difference."""
    def make_venv(cls: type = MusVecEnv) -> MusVecEnv:
        return cls(8, learner_seats=(3,), opponents=Aggressive(), reward="stones", seed=5, first_mano=0,
                   partner_override=False)

    def make_gym() -> MusGymEnv:
        return MusGymEnv(learner_seats=(3,), opponents=Aggressive(), reward="stones", first_mano=0,
                         partner_override=False)

    probe = make_venv()
    probe.reset()
    assert (probe._pending != 0).sum() >= 3, probe._pending     # the case is exercised: stones before a decision
    _assert_same_as_gym(_record(make_venv(), 60), make_gym)

    class DropsPending(MusVecEnv):
        def step_wait(self):  # noqa: ANN202
            self._pending[:] = 0.0
            return super().step_wait()

    with pytest.raises(AssertionError, match="reward"):
        _assert_same_as_gym(_record(make_venv(DropsPending), 60), make_gym)


# ----------------------------------------------------------------------------------------------------------
# (c) skipped episodes
def test_skipped_episodes_match_musgymenv() -> None:
    """Against órdago players, the learner at seat 1 never acts in the games where an órdago is accepted before
    its turn: MusVecEnv skips exactly the games MusGymEnv skips, and plays the others identically."""
    seed, n = 11, 12
    venv = MusVecEnv(n, learner_seats=(1,), opponents=OrdagoAgent(), seed=seed)
    episodes = _record(venv, 30)
    played = {(t, s) for t, eps in enumerate(episodes) for s, _ in eps}
    played |= {(t, int(s)) for t, s in enumerate(venv.game_seeds)}     # the games now waiting for a decision
    skipped = []
    for t in range(n):
        for e in range(int(venv.episodes[t]) + 1):
            s = int(table_seeds(seed, t, e))
            if (t, s) not in played:
                skipped.append(s)
    assert len(skipped) == int(venv.skipped_games.sum()) >= 10
    for s in skipped:
        env = MusGymEnv(learner_seats=(1,), opponents=OrdagoAgent())
        env.reset(seed=s)
        assert env.skipped_games >= 1, f"game {s}: MusVecEnv skipped it, MusGymEnv plays it"
    count = _assert_same_as_gym(episodes, lambda: MusGymEnv(learner_seats=(1,), opponents=OrdagoAgent()))
    assert count["episodes"] >= n


# ----------------------------------------------------------------------------------------------------------
# (d) MaskablePPO on MusVecEnv; the saved model is an agent
def test_maskable_ppo_trains_and_the_model_plays_legal_moves(tmp_path) -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch
    from stable_baselines3.common.vec_env import VecMonitor

    from experiments.evaluate.deals import make_deals
    from experiments.evaluate.tournament import play_pair

    venv = VecMonitor(MusVecEnv(32, opponents=RuleBasedAgent(), reward="stones", seed=0))
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=256, n_epochs=2, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [32]})
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=3 * 32 * 32)
    assert model.num_timesteps == 3 * 32 * 32
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    assert len(model.ep_info_buffer) >= 10
    path = tmp_path / "model.zip"
    model.save(path)
    agent = make_agent(str(path))
    res = play_pair(agent, RuleBasedAgent(), make_deals(64, 0), mode="hands", seed=0)   # VectorMusEnv refuses
    assert len(res.hand_diff) == 64 and res.stats[agent.name]["decisions"] > 0
    greedy = make_agent(str(path), greedy=True)
    env = VectorMusEnv(64, seed=1)
    obs, mask = env.reset()
    for _ in range(30):                                  # every phase: legal choices only
        a = greedy.act_batch(obs, mask, np.random.default_rng(0))
        assert mask[np.arange(64), a].all()
        obs, mask, *_ = env.step(a)


def test_training_command(tmp_path, capsys) -> None:
    pytest.importorskip("sb3_contrib")
    from experiments.commands import sb3 as cmd

    out = tmp_path / "run"
    cmd.main(["--opponents", "rule", "--tables", "8", "--timesteps", "256", "--n-steps", "16", "--batch-size", "64",
              "--n-epochs", "1", "--net-arch", "16", "--eval-deals", "20", "--out", str(out)])
    run = json.loads((out / "run.json").read_text())
    assert run["decisions"] == 256 and run["final_eval"]["deals"] == run["final_eval_greedy"]["deals"] == 20
    assert run["settings"]["learner_seats"] == [0, 2]
    assert "stones/hand" in capsys.readouterr().out
    make_agent(str(out / "model.zip"))
    for bad, words in ((["--opponents", "0=rule,2=rule"], "non-learner seats"),
                       (["--opponents", "nonsense"], "nonsense"), (["--learner-seats", "0,1"], "one team"),
                       (["--opponents", "human"], "human"), (["--tables", "0"], "--tables")):
        with pytest.raises(SystemExit) as e:
            cmd.main([*bad, "--out", str(tmp_path / "bad")])
        assert e.value.code == 2
        assert words in capsys.readouterr().err, bad


# ----------------------------------------------------------------------------------------------------------
# (e) bad arguments
@pytest.mark.parametrize("kwargs,words", [
    ({"num_envs": 0}, "num_envs"), ({"num_envs": True}, "num_envs"), ({"learner_seats": (0, 1)}, "one team"),
    ({"learner_seats": (4,)}, "learner_seats"), ({"opponents": {0: RandomAgent()}}, "non-learner seats"),
    ({"opponents": 3}, "seat 1"), ({"reward": "points"}, "reward"), ({"seed": -1}, "seed"), ({"seed": 2**64}, "seed"),
    ({"target": 0}, "target"), ({"colour": "red"}, "colour"),
])
def test_bad_arguments(kwargs: dict, words: str) -> None:
    kwargs = {"num_envs": 2, **kwargs}
    with pytest.raises(ValueError, match=words):
        MusVecEnv(**kwargs)


def test_bad_steps_change_nothing() -> None:
    venv = MusVecEnv(4, opponents=RuleBasedAgent(), seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(4, dtype=np.int64))
    obs = venv.reset()
    masks = venv.action_masks()
    state = venv.engine.state_dict()["arrays"]
    illegal = masks.argmin(axis=1)
    for actions, words in ((np.zeros(3, dtype=np.int64), "shape"), (illegal, "illegal learner action on 4 table"),
                           (np.full(4, 99), "out of range"), (np.full(4, 0.5), "integer")):
        with pytest.raises(ValueError, match=words):
            venv.step(actions)
        after = venv.engine.state_dict()["arrays"]
        assert all(np.array_equal(after[k], state[k]) for k in state) and np.array_equal(venv.action_masks(), masks)
    with pytest.raises(ValueError, match="indices"):
        venv.get_attr("reward_mode", indices=[4])
    with pytest.raises(ValueError, match="seed"):
        venv.seed(-3)
    new_obs, *_ = venv.step(masks.argmax(axis=1))           # still usable
    assert new_obs.shape == obs.shape


def test_a_failing_opponent_asks_for_a_reset() -> None:
    class Cheat:
        def act_batch(self, obs, masks, rng):  # noqa: ANN001, ANN202
            return np.full(len(masks), 99)

    venv = MusVecEnv(4, learner_seats=(0,), opponents={1: Cheat()}, seed=0, first_mano=0)
    venv.reset()                                         # seat 0 is mano: the learner speaks first
    with pytest.raises(ValueError, match="seat 1 chose the illegal action 99"):
        venv.step(venv.action_masks().argmax(axis=1))
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(4, dtype=np.int64))
