"""Benchmark rows ``tianshou-dqn`` (experiments/benchmark/row_tianshou.py) and ``openspiel-nfsp``
(experiments/benchmark/row_openspiel.py): a tiny end-to-end run each, a finished folder handed back untouched,
the exported policy file equal to the trained network, and a resume that continues where it stopped.

Each test takes a few seconds, plus Tianshou's numba compilation (10-30 s) the first time in a process.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from experiments.benchmark.protocol import TRAINED_NAME, Budget, Trained  # noqa: E402

POINT_KEYS = {"minutes", "decisions", "vs_rule", "vs_rule_lo", "vs_rule_hi"}
#: Two curve points 9 s of training apart: a session stopped at the first has room to stop before the second even
#: on a slow machine (one collection and its updates take well under a second here).
BUDGET = Budget(minutes=0.3, seed=1, tiny=True, curve_points=2)


def _tianshou_layers(state: dict[str, Any]) -> list[torch.Tensor]:
    """The online Q-network's weights and biases, in order, from the row's checkpoint (the DQN's state_dict)."""
    return [v for k, v in state["algorithm"].items() if k.startswith("policy.model.")]


def _openspiel_layers(state: dict[str, Any]) -> list[torch.Tensor]:
    """The average-policy network's weights and biases, in order, from the row's checkpoint."""
    return list(state["avg_network"].values())


ROWS = {
    "tianshou-dqn": ("tianshou", "experiments.benchmark.row_tianshou", _tianshou_layers, 20.0),
    "openspiel-nfsp": ("pyspiel", "experiments.benchmark.row_openspiel", _openspiel_layers, 1.0),
}


@pytest.fixture(params=list(ROWS))
def row(request: pytest.FixtureRequest) -> tuple[str, Any, Any, float]:
    framework, module, layers, scale = ROWS[request.param]
    pytest.importorskip(framework)
    return request.param, importlib.import_module(module), layers, scale


class _Stop(Exception):
    """Raised by the log to stop a session after a checkpoint."""


def _stop_after_checkpoints(name: str, n: int) -> Any:
    seen = []

    def log(line: str) -> None:
        if line.startswith(f"{name}: checkpoint"):
            seen.append(line)
            if len(seen) == n:
                raise _Stop(line)
    return log


def _plays_legally(policy: str, decisions: int = 150) -> None:
    from agents import make_agent
    from mus_env import NUM_ACTIONS, MusConfig, MusGame

    agent = make_agent(policy)
    rng = np.random.default_rng(0)
    played, seed = 0, 0
    while played < decisions:
        game = MusGame(MusConfig(), seed=seed)
        seed += 1
        while not game.is_over and played < decisions:
            seat, legal = game.current_player, game.legal_actions()
            mask = np.zeros(NUM_ACTIONS, np.int8)
            mask[legal] = 1
            action = agent.act(game.observe(seat), mask, rng)
            assert action in legal, (action, legal)
            game.step(action)
            played += 1


def _check_export(policy: str, layers: list[torch.Tensor], scale: float) -> None:
    """The policy file's logits are the checkpoint's network's outputs times ``scale``."""
    from agents.policy import build_net, load_policy_file
    from mus_env.observation import OBS_DIM

    net = build_net(load_policy_file(policy))
    x = torch.rand(16, OBS_DIM, generator=torch.Generator().manual_seed(0))
    h = x
    pairs = list(zip(layers[0::2], layers[1::2], strict=True))
    for k, (w, b) in enumerate(pairs):
        h = h @ w.T + b
        if k < len(pairs) - 1:
            h = torch.relu(h)
    with torch.no_grad():
        torch.testing.assert_close(net.logits(x), h * scale, rtol=1e-4, atol=1e-4)


def test_tiny_run_then_finished(row: tuple[str, Any, Any, float], tmp_path: Path) -> None:
    name, module, layers, scale = row
    logs: list[str] = []
    trained = module.train(tmp_path, BUDGET, logs.append)

    assert (tmp_path / TRAINED_NAME).exists()
    assert Trained.load(tmp_path) == Trained(**json.loads(json.dumps(dataclasses.asdict(trained))))
    assert trained.decisions > 0
    assert trained.minutes >= BUDGET.minutes
    assert len(trained.curve) == BUDGET.curve_points
    for point in trained.curve:
        assert set(point) == POINT_KEYS
        assert point["vs_rule_lo"] <= point["vs_rule"] <= point["vs_rule_hi"]
    assert 0 < trained.curve[0]["decisions"] <= trained.curve[1]["decisions"] == trained.decisions
    assert trained.curve[0]["minutes"] < trained.curve[1]["minutes"]
    assert trained.curve[1]["minutes"] >= BUDGET.minutes
    assert "torch" in trained.versions and len(trained.versions) >= 2
    assert trained.settings["tiny"] is True and trained.settings["seed"] == BUDGET.seed
    assert Path(trained.policy) == tmp_path / "policy.pt"
    _plays_legally(trained.policy)
    state = torch.load(tmp_path / module.CHECKPOINT, weights_only=False)
    assert state["decisions"] == trained.decisions
    _check_export(trained.policy, layers(state), scale)

    # Called again on the finished folder: the saved result, nothing trained or written.
    stamps = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    again: list[str] = []
    assert module.train(tmp_path, BUDGET, again.append) == Trained.load(tmp_path)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == stamps
    assert len(again) == 1 and "finished already" in again[0]


def test_resume_continues(row: tuple[str, Any, Any, float], tmp_path: Path) -> None:
    name, module, _, _ = row
    # Session 1 stops right after its first checkpoint (the first curve point's).
    with pytest.raises(_Stop):
        module.train(tmp_path, BUDGET, _stop_after_checkpoints(name, 1))
    assert not (tmp_path / TRAINED_NAME).exists()
    clock1 = json.loads((tmp_path / "clock.json").read_text())
    state1 = torch.load(tmp_path / module.CHECKPOINT, weights_only=False)
    d1, curve1 = state1["decisions"], state1["curve"]
    assert clock1["curve"] == curve1 and len(curve1) == 1 and d1 > 0
    assert BUDGET.minutes / 2 <= clock1["minutes"] < BUDGET.minutes

    # Session 2 continues from it (the clock's minutes, the decisions, the point taken) and stops after the
    # last point's checkpoint, before it writes its result.
    logs: list[str] = []
    stop = _stop_after_checkpoints(name, 1)

    def log(line: str) -> None:
        logs.append(line)
        stop(line)
    with pytest.raises(_Stop):
        module.train(tmp_path, BUDGET, log)
    assert any(f"resuming at {clock1['minutes']:.3f} minutes, {d1} decisions, 1 points" in line for line in logs)
    assert not (tmp_path / TRAINED_NAME).exists()
    clock2 = json.loads((tmp_path / "clock.json").read_text())
    state2 = torch.load(tmp_path / module.CHECKPOINT, weights_only=False)
    d2 = state2["decisions"]
    assert d2 > d1
    assert state2["curve"][0] == curve1[0] and len(state2["curve"]) == 2
    assert state2["curve"][1]["decisions"] == d2
    assert clock2["minutes"] >= BUDGET.minutes

    # Session 3 finds the budget spent and every point taken: it trains nothing more (a clock started again
    # from zero would train a whole budget) and writes the result.
    trained = module.train(tmp_path, BUDGET, lambda line: None)
    assert trained.decisions == d2
    assert trained.curve == state2["curve"]
    assert trained.minutes == pytest.approx(clock2["minutes"], abs=0.01)
    assert (tmp_path / TRAINED_NAME).exists()
    _plays_legally(trained.policy, decisions=40)
