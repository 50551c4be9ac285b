"""docs/research/tools/temper.py (a research script, imported from its file): a policy file played at temperature T
plays softmax(logits / T), nothing else changes, and a bad request writes nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scripts import research_tool

from agents.policy import PolicyNet, TorchPolicyAgent, load_policy_file, save_policy
from mus_env.actions import NUM_ACTIONS
from mus_env.observation import OBS_DIM

temper = research_tool("temper")


@pytest.fixture()
def policy_file(tmp_path):
    torch.manual_seed(0)
    net = PolicyNet(hidden=(32, 32))
    with torch.no_grad():
        for p in net.parameters():          # away from the init's near-zero head, as a trained policy is
            p.add_(0.3 * torch.randn_like(p))
    return save_policy(tmp_path / "policy.pt", net, meta={"note": "a test policy"})


def _inputs(n: int = 256, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    obs = rng.random((n, OBS_DIM), dtype=np.float32)
    masks = (rng.random((n, NUM_ACTIONS)) < 0.4).astype(np.int8)
    masks[np.arange(n), rng.integers(0, NUM_ACTIONS, n)] = 1          # every row has a legal action
    return obs, masks


@pytest.mark.parametrize("temperature", [0.5, 1.4])
def test_a_tempered_file_plays_the_softmax_of_its_logits_divided_by_the_temperature(policy_file, tmp_path,
                                                                                      temperature):
    out = temper.write_tempered(policy_file, tmp_path / "tempered.pt", temperature)
    obs, masks = _inputs()
    original = TorchPolicyAgent.from_file(policy_file)
    tempered = TorchPolicyAgent.from_file(out)
    with torch.no_grad():
        logits = original.net.logits(torch.from_numpy(obs)).numpy().astype(np.float64)
    want = np.where(masks == 1, logits / temperature, -np.inf)
    want = np.exp(want - want.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    got = tempered.probabilities(obs, masks)
    np.testing.assert_allclose(got, want, atol=1e-5)
    # and it is another policy: sharper below 1, softer above (the mean entropy moves the right way)
    entropy = lambda p: float(-(p * np.log(np.clip(p, 1e-12, 1))).sum(axis=1).mean())  # noqa: E731
    before = entropy(original.probabilities(obs, masks))
    assert (entropy(got) < before) if temperature < 1 else (entropy(got) > before)


def test_only_the_policy_head_changes_and_the_temperature_is_recorded(policy_file, tmp_path):
    once = temper.write_tempered(policy_file, tmp_path / "once.pt", 0.5)
    twice = temper.write_tempered(once, tmp_path / "twice.pt", 3.0)
    a, b, c = (load_policy_file(p) for p in (policy_file, once, twice))
    for key, value in a["model"].items():
        if key in temper.HEAD_KEYS:
            torch.testing.assert_close(b["model"][key], value / 0.5)
            torch.testing.assert_close(c["model"][key], value / 1.5)
        else:
            assert torch.equal(b["model"][key], value), key
    assert math.isclose(b["meta"]["temperature"], 0.5) and math.isclose(c["meta"]["temperature"], 1.5)
    assert b["meta"]["tempered_from"] == str(policy_file) and c["meta"]["tempered_from"] == str(policy_file)
    assert b["meta"]["note"] == "a test policy" and "temperature" not in a["meta"]
    assert b["digest"] != a["digest"]


@pytest.mark.parametrize("temperature", [0, -1.0, float("nan"), float("inf"), True, "2"])
def test_a_bad_temperature_is_refused_and_nothing_is_written(policy_file, tmp_path, temperature):
    with pytest.raises(ValueError, match="temperature must be a finite number above 0"):
        temper.write_tempered(policy_file, tmp_path / "tempered.pt", temperature)
    assert not (tmp_path / "tempered.pt").exists()


def test_the_command_refuses_to_overwrite_its_source_and_a_file_that_is_no_policy(policy_file, tmp_path, capsys):
    before = policy_file.read_bytes()
    assert temper.main([str(policy_file), "2", str(policy_file)]) == 2
    assert "is the policy file itself" in capsys.readouterr().err
    assert policy_file.read_bytes() == before
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a torch file")
    assert temper.main([str(junk), "2", str(tmp_path / "t.pt")]) == 2
    assert "junk.pt" in capsys.readouterr().err and not (tmp_path / "t.pt").exists()
    assert temper.main([str(policy_file), "warm", str(tmp_path / "t.pt")]) == 2
    assert "TEMPERATURE must be a number" in capsys.readouterr().err and not (tmp_path / "t.pt").exists()
    assert temper.main([str(policy_file), "0.5"]) == 2 and "usage:" in capsys.readouterr().err
    assert temper.main([str(policy_file), "0.5", str(tmp_path / "t.pt")]) == 0
    assert "at temperature 0.5" in capsys.readouterr().out and (tmp_path / "t.pt").is_file()
