"""Row ``rllib-ppo`` of ``mus benchmark`` (:mod:`experiments.benchmark.row_rllib`): a tiny run end to end, a
finished run returned as it is, and a stopped run resumed from its checkpoint with its clock."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray")
pytest.importorskip("torch")

from experiments.benchmark.protocol import Budget, Trained  # noqa: E402
from mus_env import MusConfig, MusGame  # noqa: E402

CURVE_KEYS = {"minutes", "decisions", "vs_rule", "vs_rule_lo", "vs_rule_hi"}


@pytest.fixture(scope="module")
def local_ray():
    """One small local Ray for the module (train joins it and leaves it running): Ray's start is paid once."""
    import ray
    import torch
    torch.set_num_threads(1)
    ray.init(address="local", num_cpus=1, object_store_memory=100 * 2**20, include_dashboard=False,
             logging_level="error", log_to_driver=False)
    yield ray
    ray.shutdown()


def _plays_legal_moves(path: str) -> None:
    from agents import make_agent
    agent = make_agent(path)
    rng = np.random.default_rng(1)
    game = MusGame(MusConfig(), seed=5)
    for _ in range(120):
        if game.is_over:
            game = MusGame(MusConfig(), seed=int(rng.integers(1 << 30)))
        obs, mask = game.observe(game.current_player)[None], game.legal_action_mask()[None]
        assert (agent.probabilities(obs, mask)[mask == 0] == 0).all()
        a = int(agent.act_batch(obs, mask, rng)[0])
        assert mask[0, a] == 1
        game.step(a)


def test_tiny_run_end_to_end_then_returned_without_training(local_ray, tmp_path, monkeypatch) -> None:
    from agents import make_agent
    from experiments.benchmark import row_rllib
    from experiments.integrations import rllib_selfplay

    out = tmp_path / "row"
    budget = Budget(minutes=0.08, seed=3, tiny=True, curve_points=2)
    lines: list[str] = []
    trained = row_rllib.train(out, budget, lines.append)

    assert (out / "trained.json").is_file() and Trained.load(out) == trained
    assert trained.decisions > 0 and trained.minutes >= budget.minutes
    assert (out / "checkpoint" / "rllib_checkpoint.json").is_file()
    # the policy file: this mus-env's PolicyNet of the tiny size, playing legal moves only
    assert make_agent(trained.policy).net.arch["hidden"] == [32, 32]
    _plays_legal_moves(trained.policy)
    # the curve: at most one point per curve point, the last at the end of the budget
    assert 1 <= len(trained.curve) <= budget.curve_points
    assert all(set(p) == CURVE_KEYS for p in trained.curve)
    assert all(p["vs_rule_lo"] <= p["vs_rule"] <= p["vs_rule_hi"] for p in trained.curve)
    assert [p["decisions"] for p in trained.curve] == sorted(p["decisions"] for p in trained.curve)
    assert trained.curve[-1]["decisions"] == trained.decisions
    assert trained.curve[-1]["minutes"] >= budget.minutes
    assert set(trained.versions) == {"ray", "torch"}
    s = trained.settings
    assert s["num_env_runners"] == 0 and s["train_batch_size"] == 128 and s["seed"] == 3
    assert s["env_config"]["reward_scale"] == pytest.approx(1 / 40) and s["ray_startup_counted"] is True
    assert s["use_kl_loss"] is False and s["grad_clip"] == 0.5
    assert any("iter    1" in line for line in lines)

    # called again on the finished folder: the saved result, no Ray, no algorithm
    def refuse(*a, **k):
        raise AssertionError("a finished row was trained again")

    monkeypatch.setattr(rllib_selfplay, "make_ppo_config", refuse)
    monkeypatch.setattr(rllib_selfplay, "init_ray", refuse)
    assert row_rllib.train(out, budget, lines.append) == trained


class _Stop(Exception):
    pass


def test_a_stopped_run_resumes_from_its_checkpoint_and_clock(local_ray, tmp_path, monkeypatch) -> None:
    from ray.rllib.algorithms.algorithm import Algorithm

    from experiments.benchmark import row_rllib

    out = tmp_path / "row"
    budget = Budget(minutes=0.5, seed=1, tiny=True, curve_points=2)   # the first iteration ends well before it

    def stop_after_first_checkpoint(line: str) -> None:
        if "checkpoint saved" in line:
            raise _Stop

    with pytest.raises(_Stop):
        row_rllib.train(out, budget, stop_after_first_checkpoint)
    saved = json.loads((out / "clock.json").read_text())
    assert saved["iterations"] == 1 and saved["decisions"] > 0 and 0 < saved["minutes"] < budget.minutes
    assert Trained.load(out) is None and not (out / "policy.pt").exists()

    # another budget's settings (another seed) cannot continue this run
    with pytest.raises(ValueError, match="other settings.*seed"):
        row_rllib.train(out, Budget(minutes=0.1, seed=2, tiny=True, curve_points=2), print)

    # the resume: the checkpoint is restored and the clock goes on from the saved minutes
    restored: list[str] = []
    started_at: list[float] = []
    real_restore = Algorithm.restore_from_path

    def spy_restore(self, path, *a, **k):
        restored.append(str(path))
        return real_restore(self, path, *a, **k)

    class SpyClock(row_rllib.Clock):
        def start(self):
            started_at.append(self.minutes)
            return super().start()

    monkeypatch.setattr(Algorithm, "restore_from_path", spy_restore)
    monkeypatch.setattr(row_rllib, "Clock", SpyClock)
    trained = row_rllib.train(out, budget, lambda line: None)
    assert restored == [str(out / "checkpoint")]
    assert started_at == [pytest.approx(saved["minutes"])]
    assert trained.decisions > saved["decisions"] and trained.minutes >= budget.minutes
    after = json.loads((out / "clock.json").read_text())
    assert after["iterations"] > saved["iterations"]
    assert trained.curve[:len(saved["curve"])] == saved["curve"]     # the first session's points are kept
    assert trained.curve[-1]["decisions"] == trained.decisions
    _plays_legal_moves(trained.policy)


def test_the_row_drops_rllibs_kl_penalty_and_mus_rllib_keeps_it() -> None:
    """The row's PPO is the clipped objective with clipped gradients (RLlib's infinite-KL collapse); ``mus rllib``
    itself keeps RLlib's defaults."""
    from experiments.benchmark.row_rllib import DEFAULTS, GRAD_CLIP, ppo_args
    from experiments.commands.rllib import build_parser
    from experiments.integrations.rllib_selfplay import make_ppo_config

    for tiny in (True, False):
        config = make_ppo_config(ppo_args(Budget(minutes=1, tiny=tiny)))
        assert config.use_kl_loss is False and config.grad_clip == GRAD_CLIP == 0.5
    parsed = vars(build_parser().parse_args([]))
    assert set(DEFAULTS) == set(parsed)                 # the row's options are mus rllib's, named alike
    assert {k: v for k, v in parsed.items() if k in ("lr", "gamma", "entropy_coeff", "reward", "kings")} == \
        {k: v for k, v in DEFAULTS.items() if k in ("lr", "gamma", "entropy_coeff", "reward", "kings")}
    plain = make_ppo_config(build_parser().parse_args([]))
    assert plain.use_kl_loss is True and plain.grad_clip is None
    flagged = make_ppo_config(build_parser().parse_args(["--kl-loss", "false", "--grad-clip", "0.5"]))
    assert flagged.use_kl_loss is False and flagged.grad_clip == 0.5             # mus rllib can do as the row
