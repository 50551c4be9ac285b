"""The RLlib adapter (mus_env/rllib.py) and the RLlib self-play script (experiments/integrations/rllib_selfplay.py).

Skipped when ray is not installed. The adapter tests play random games on the env alone; the training tests
share one local Ray (``ray.init`` once for the module) and run PPO iterations with tiny batches.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hang_guards import PROCESS_S

pytest.importorskip("ray")
torch = pytest.importorskip("torch")

from mus_env import NUM_ACTIONS, OBS_DIM, Action, IllegalActionError, MusConfig, MusGame  # noqa: E402
from mus_env.actions import ENVIDO_ACTIONS  # noqa: E402
from mus_env.adapters.rllib import (  # noqa: E402
    AGENT_IDS,
    SHARED_POLICY,
    TEAM_POLICIES,
    MusMultiAgentEnv,
    shared_policy_mapping,
    team_policy_mapping,
)

torch.set_num_threads(1)


def _random_action(obs: dict, rng: np.random.Generator, calm: bool) -> int:
    """A uniformly random legal action; ``calm``: no órdago and (nine times in ten) no envido when another
    action is legal, so that games last several hands."""
    legal = np.flatnonzero(obs["action_mask"])
    if calm:
        quiet = [a for a in legal if a != Action.ORDAGO and a not in ENVIDO_ACTIONS]
        if quiet and rng.random() < 0.9:
            legal = np.array(quiet)
    return int(rng.choice(legal))


def _play(env: MusMultiAgentEnv, seed: int, rng: np.random.Generator, calm: bool = False) -> dict:
    """One episode with random legal actions, checking the step protocol; returns what it saw."""
    obs, infos = env.reset(seed=seed)
    totals = dict.fromkeys(AGENT_IDS, 0.0)
    handed_to_other = 0        # rewards that reached an agent on another agent's step
    while True:
        assert len(obs) == 1 and list(infos) == list(obs)
        (agent, o), = obs.items()
        assert agent == AGENT_IDS[env.game.current_player]
        assert o["action_mask"].dtype == np.float32 and o["observations"].dtype == np.float32
        assert o["observations"].shape == (OBS_DIM,) and o["action_mask"].shape == (NUM_ACTIONS,)
        np.testing.assert_array_equal(o["action_mask"], env.game.legal_action_mask())
        np.testing.assert_array_equal(o["observations"], env.game.observe(env.game.current_player))
        assert env.observation_spaces[agent].contains(o)
        obs, rewards, terminateds, truncateds, infos = env.step({agent: _random_action(o, rng, calm)})
        assert set(rewards) == set(obs)
        for a, r in rewards.items():
            assert isinstance(r, float)
            totals[a] += r
            if r and a != agent:
                handed_to_other += 1
        if terminateds["__all__"]:
            assert set(obs) == set(AGENT_IDS) and all(terminateds[a] for a in AGENT_IDS)
            assert not truncateds["__all__"] and not any(truncateds[a] for a in AGENT_IDS)
            assert all(not o["action_mask"].any() for o in obs.values())
            assert env.pending_rewards == (0.0, 0.0, 0.0, 0.0)
            return {"totals": totals, "handed_to_other": handed_to_other, "game": env.game}
        assert set(obs) == {AGENT_IDS[env.game.current_player]} and terminateds == {"__all__": False}
        # the agent that observes has been paid everything it earned so far
        assert env.pending_rewards[env.game.current_player] == 0.0


def _true_team0(game: MusGame, mode: str) -> float:
    """Team 0's return from the finished game itself: +1/-1 by winner, or its stones minus the other team's
    (the final scores from 0-0, and an accepted órdago worth the stones the winners still lacked)."""
    assert game.is_over
    if mode == "game":
        return 1.0 if game.winner == 0 else -1.0
    s = list(game.scores)
    if game.game_results[-1].by_ordago:
        s[game.winner] = max(s[game.winner], game.config.target)
    return float(s[0] - s[1])


# ----------------------------------------------------------------------------------------------------------
# the adapter
@pytest.mark.parametrize("mode", ["game", "stones"])
def test_each_agent_receives_its_true_return(mode: str) -> None:
    rng = np.random.default_rng(7)
    env = MusMultiAgentEnv({"reward": mode, "target": 20})
    handed_to_other = 0
    hands = []
    for i in range(200):
        seen = _play(env, seed=1000 + i, rng=rng, calm=i % 2 == 1)
        t0 = _true_team0(seen["game"], mode)
        expected = {a: t0 if s % 2 == 0 else -t0 for s, a in enumerate(AGENT_IDS)}
        assert seen["totals"] == pytest.approx(expected), f"game {i}"
        handed_to_other += seen["handed_to_other"]
        hands.append(len(seen["game"].hand_log))
    # the games were varied (some of several hands), and stones scored on one agent's step were paid to others:
    # an adapter paying only the acting agent would fail the totals above and this count
    assert max(hands) >= 3 and min(hands) == 1
    assert handed_to_other > 100


def test_reward_scale_multiplies_every_reward() -> None:
    plain = MusMultiAgentEnv({"reward": "stones"})
    scaled = MusMultiAgentEnv({"reward": "stones", "reward_scale": 0.025})
    for i in range(20):
        a = _play(plain, seed=i, rng=np.random.default_rng(i), calm=True)["totals"]
        b = _play(scaled, seed=i, rng=np.random.default_rng(i), calm=True)["totals"]
        assert b == pytest.approx({k: 0.025 * v for k, v in a.items()})
    with pytest.raises(ValueError, match="reward_scale"):
        MusMultiAgentEnv({"reward_scale": 0})


def test_rigged_deal_and_seeding_are_reproducible() -> None:
    def trace(env: MusMultiAgentEnv, seed: int | None, n: int = 40) -> list:
        obs, _ = env.reset(seed=seed) if seed is not None else env.reset()
        rng = np.random.default_rng(0)
        out = []
        for _ in range(n):
            (agent, o), = obs.items()
            out.append((agent, o["observations"].tobytes()))
            obs, _r, term, _t, _i = env.step({agent: _random_action(o, rng, calm=True)})
            if term["__all__"]:
                break
        return out

    a, b = MusMultiAgentEnv({"reward": "stones"}), MusMultiAgentEnv({"reward": "stones"})
    assert trace(a, 5) == trace(b, 5)
    assert trace(a, None) == trace(b, None)           # unseeded resets follow the last seeded one
    assert trace(a, 5) != trace(a, 6)
    # the same deal as MusGame and mus_v0 for that seed
    env = MusMultiAgentEnv({})
    env.reset(seed=11)
    assert env.game.hands == MusGame(MusConfig(), seed=11).hands
    deck = list(range(40))
    env.reset(seed=0, options={"deck": deck, "mano": 2})
    assert env.game.mano == 2 and set(env.game.hands[2]) == {0, 4, 8, 12} and set(env.game.hands[3]) == {1, 5, 9, 13}


def test_truncation_gives_every_agent_a_last_observation() -> None:
    env = MusMultiAgentEnv({"max_decisions": 3, "first_mano": 0})
    obs, _ = env.reset(seed=0)
    for step in range(3):  # noqa: B007 - its last value is checked
        (agent, o), = obs.items()
        obs, rewards, term, trunc, _ = env.step({agent: Action.MUS})
    assert step == 2 and trunc["__all__"] and not term["__all__"]
    assert set(obs) == set(rewards) == set(AGENT_IDS) and all(trunc[a] for a in AGENT_IDS)
    with pytest.raises(ValueError, match="episode is over"):
        env.step({"seat_3": 0})


def test_bad_config_and_actions_are_refused_with_nothing_changed() -> None:
    with pytest.raises(ValueError, match="unknown key.*'targte'"):
        MusMultiAgentEnv({"targte": 30})
    with pytest.raises(ValueError, match="reward"):
        MusMultiAgentEnv({"reward": "points"})
    with pytest.raises(ValueError, match="max_decisions"):
        MusMultiAgentEnv({"max_decisions": 0})
    with pytest.raises(ValueError, match="kings"):
        MusMultiAgentEnv({"kings": 5})
    env = MusMultiAgentEnv({"first_mano": 0, "kings": 4, "target": 30})
    assert env.config == MusConfig(first_mano=0, kings=4, target=30)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"seat_0": 0})
    obs, _ = env.reset(seed=3)
    before = (env.game.current_player, env.game.observe(0).tobytes(), env.pending_rewards)
    with pytest.raises(ValueError, match="seat_0"):
        env.step({"seat_1": 0})
    with pytest.raises(ValueError, match="seat_0"):
        env.step({"seat_0": 0, "seat_1": 0})
    with pytest.raises(IllegalActionError):
        env.step({"seat_0": int(Action.QUIERO)})
    with pytest.raises(ValueError, match="int action id"):
        env.step({"seat_0": 0.5})
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    assert (env.game.current_player, env.game.observe(0).tobytes(), env.pending_rewards) == before
    env.step({"seat_0": np.int64(Action.MUS)})            # numpy ints, as RLlib sends them, are accepted


def test_mus_env_imports_ray_only_on_demand() -> None:
    code = ("import sys\nimport mus_env, mus_env.mus_v0, mus_env.wrappers\n"
            "bad = sorted(m for m in ('ray', 'torch') if m in sys.modules)\nprint(bad)\nsys.exit(1 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PROCESS_S,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, f"import mus_env pulled in {out.stdout.strip()} {out.stderr[-2000:]}"


def test_policy_mappings() -> None:
    assert [shared_policy_mapping(a) for a in AGENT_IDS] == [SHARED_POLICY] * 4
    assert [team_policy_mapping(a, None) for a in AGENT_IDS] == [TEAM_POLICIES[s % 2] for s in range(4)]
    with pytest.raises(ValueError, match="player_0"):
        team_policy_mapping("player_0")


def test_rl_module_masks_illegal_actions_and_matches_policy_net() -> None:
    from ray.rllib.core.columns import Columns

    from agents.policy import MASKED_LOGIT, PolicyNet
    from experiments.integrations.rllib_selfplay import MusPolicyRLModule

    env = MusMultiAgentEnv({})
    module = MusPolicyRLModule(observation_space=env.observation_spaces["seat_0"], action_space=env.action_spaces[
        "seat_0"], model_config={"hidden": [32, 16]})
    assert isinstance(module.net, PolicyNet) and module.net.arch["hidden"] == [32, 16]
    rng = np.random.default_rng(0)
    obs = []
    for s in range(6):
        o, _ = env.reset(seed=s)
        (_, o), = o.items()
        obs.append(o)
        env.step({AGENT_IDS[env.game.current_player]: _random_action(o, rng, calm=True)})
    x = torch.as_tensor(np.stack([o["observations"] for o in obs]))
    m = torch.as_tensor(np.stack([o["action_mask"] for o in obs]))
    batch = {Columns.OBS: {"observations": x, "action_mask": m}}
    with torch.no_grad():
        out = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        train = module.forward_train(batch)
        values = module.compute_values(batch)
    assert (out[m == 0] == MASKED_LOGIT).all()
    torch.testing.assert_close(out[m > 0], module.net.logits(x)[m > 0])
    torch.testing.assert_close(train[Columns.ACTION_DIST_INPUTS], out)
    torch.testing.assert_close(values, module.net(x)[1])
    torch.testing.assert_close(module.compute_values(batch, train[Columns.EMBEDDINGS]), values)
    with pytest.raises(ValueError, match="observations"):
        module.forward_exploration({Columns.OBS: x})


# ----------------------------------------------------------------------------------------------------------
# training with RLlib (one local Ray for the module)
@pytest.fixture(scope="module")
def local_ray():
    import ray
    ray.init(address="local", num_cpus=2, object_store_memory=100 * 2**20, include_dashboard=False,
             logging_level="error", log_to_driver=False)
    yield ray
    ray.shutdown()


TINY = ["--num-env-runners", "0", "--envs-per-runner", "4", "--train-batch-size", "128", "--minibatch-size", "64",
        "--num-epochs", "1", "--hidden", "32,32", "--eval-deals", "10"]


def test_train_export_play_and_resume(local_ray, tmp_path, capsys) -> None:
    from agents import RuleBasedAgent, make_agent
    from experiments.commands.rllib import main
    from experiments.evaluate.deals import make_deals
    from experiments.evaluate.tournament import play_pair

    out = tmp_path / "run"
    main(["--iterations", "1", "--out", str(out), *TINY])
    printed = capsys.readouterr().out
    assert "iter    1" in printed and "vs rule" in printed
    progress = json.loads((out / "progress.json").read_text())
    assert progress["iterations"] == 1 and progress["env_steps"] >= 128
    assert (out / "checkpoint" / "rllib_checkpoint.json").is_file()
    agent = make_agent(str(out / "policy.pt"))
    assert agent.net.arch["hidden"] == [32, 32] and agent.meta["iterations"] == 1
    # the exported network plays legal actions only, on positions of its own game and in a duplicate match
    rng = np.random.default_rng(1)
    game = MusGame(MusConfig(), seed=5)
    for _ in range(200):
        if game.is_over:
            game = MusGame(MusConfig(), seed=int(rng.integers(1 << 30)))
        obs, mask = game.observe(game.current_player)[None], game.legal_action_mask()[None]
        p = agent.probabilities(obs, mask)
        assert (p[mask == 0] == 0).all()
        a = int(agent.act_batch(obs, mask, rng)[0])
        assert mask[0, a] == 1
        game.step(a)
    result = play_pair(agent, RuleBasedAgent(), make_deals(20, seed=3))
    assert len(result.hand_diff) == 20

    # resume: counters continue from the checkpoint, metrics gain a row, the policy is re-exported
    main(["--iterations", "2", "--out", str(out), "--resume", *TINY])
    progress2 = json.loads((out / "progress.json").read_text())
    assert progress2["iterations"] == 2 and progress2["env_steps"] >= progress["env_steps"] + 128
    assert len((out / "metrics.csv").read_text().splitlines()) == 3
    agent2 = make_agent(str(out / "policy.pt"))
    assert agent2.meta["iterations"] == 2
    assert any(not torch.equal(p1, p2) for p1, p2 in zip(agent.net.parameters(), agent2.net.parameters(), strict=True))

    # --export writes the same network as the one written at the end of training
    main(["--export", str(out / "checkpoint"), "--to", str(tmp_path / "x.pt")])
    agent3 = make_agent(str(tmp_path / "x.pt"))
    assert all(torch.equal(p2, p3) for p2, p3 in zip(agent2.net.parameters(), agent3.net.parameters(), strict=True))


def test_rllib_own_action_masking_module_trains_on_the_env(local_ray) -> None:
    """The observation layout is the one RLlib's example ActionMaskingTorchRLModule reads (the PettingZoo
    wrapper's is not: KeyError 'observations')."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    config = (PPOConfig()
              .environment(MusMultiAgentEnv, env_config={"reward": "stones", "reward_scale": 0.025},
                           disable_env_checking=True)
              .env_runners(num_env_runners=0, num_envs_per_env_runner=4)
              .multi_agent(policies={SHARED_POLICY}, policy_mapping_fn=shared_policy_mapping)
              .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                                     model_config={"fcnet_hiddens": [32, 32]}))
              .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1)
              .debugging(seed=0))
    algo = config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 128
    assert np.isfinite(result["learners"][SHARED_POLICY]["policy_loss"])


def test_policy_per_team_exports_two_policies(local_ray, tmp_path) -> None:
    from agents import make_agent
    from experiments.commands.rllib import main

    out = tmp_path / "teams"
    main(["--iterations", "1", "--out", str(out), "--policy-per-team", "--reward", "game", *TINY,
          "--eval-deals", "0"])
    nets = [make_agent(str(out / f"policy_team_{t}.pt")).net for t in (0, 1)]
    assert any(not torch.equal(a, b) for a, b in zip(nets[0].parameters(), nets[1].parameters(), strict=True))
    assert sorted(p.name for p in (out / "checkpoint" / "learner_group" / "learner" / "rl_module").iterdir()
                  if p.is_dir()) == ["team_0", "team_1"]


# ----------------------------------------------------------------------------------------------------------
# bad arguments
@pytest.mark.parametrize("argv, message", [
    (["--minibatch-size", "512", "--train-batch-size", "256"], "--minibatch-size: 512 is larger"),
    (["--export", "somewhere"], "give both"),
    (["--hidden", "0,4"], "--hidden"),
    (["--reward", "points"], "--reward"),
    (["--module", "team_0"], "--module: only with --export"),
    (["--address", "auto", "--num-cpus", "2"], "--num-cpus: only for a local Ray"),
    (["--resume", "--overwrite"], "not with --overwrite"),
    (["--resume"], "no run to resume"),
    (["--address", "127.0.0.1:1"], "--address: nothing answers at '127.0.0.1:1'"),
])
def test_bad_arguments_are_one_line_errors(tmp_path, capsys, argv, message) -> None:
    from experiments.commands.rllib import main

    with pytest.raises(SystemExit) as e:
        main([*argv, "--out", str(tmp_path / "r")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_existing_runs_and_bad_checkpoints_are_refused(tmp_path, capsys) -> None:
    from experiments.commands.rllib import main

    out = tmp_path / "r"
    out.mkdir()
    (out / "progress.json").write_text(json.dumps({"iterations": 3, "settings": {"policy_per_team": True}}))
    (out / "checkpoint").mkdir()
    for argv, message in [
        ([], "already holds a run (progress.json)"),
        (["--resume", "--iterations", "5"], "--policy-per-team True -> False"),
        (["--resume", "--iterations", "2", "--policy-per-team"], "has done 3 iterations already"),
        (["--export", str(out / "checkpoint"), "--to", str(tmp_path / "p.pt")], "not an RLlib algorithm checkpoint"),
    ]:
        with pytest.raises(SystemExit):
            main([*argv, "--out", str(out)])
        assert message in capsys.readouterr().err
    assert (out / "progress.json").is_file() and not (tmp_path / "p.pt").exists()


def test_an_overwrite_that_fails_before_its_first_checkpoint_keeps_the_old_run(tmp_path, capsys) -> None:
    """``--overwrite`` replaces a run only at the new run's first checkpoint (the trainer's FolderSession): a new
    run that cannot start (nothing answers at its Ray address) leaves the old run's files as they were."""
    from experiments.commands.rllib import main

    out = tmp_path / "r"
    out.mkdir()
    old = {"progress.json": json.dumps({"iterations": 3, "settings": {}}), "metrics.csv": "iteration\n1\n",
           "notes.txt": "mine"}
    for name, text in old.items():
        (out / name).write_text(text)
    (out / "checkpoint").mkdir()
    with pytest.raises(SystemExit):
        main(["--overwrite", "--address", "127.0.0.1:1", "--out", str(out)])
    assert "nothing answers" in capsys.readouterr().err
    assert {p.name for p in out.iterdir()} == {*old, "checkpoint"}
    assert all((out / name).read_text() == text for name, text in old.items())
