"""A mixture of policies (agents/mixture.py) and its distillation into one network (experiments/population/distill.py,
``mus distill``).

* The mixture plays the weighted average of its members' probabilities; a member of weight 0 plays nothing.
* Distillation pulls the student toward the mixture (held-out KL falls) and writes a plain policy file.
* A distillation stopped after a pass resumes to exactly the weights of one never stopped.
* Bad members, numbers and resumes are refused with a message that names them, before anything is written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.mixture import MixtureAgent, parse_members  # noqa: E402
from agents.policy import PolicyNet, TorchPolicyAgent, load_policy_file, parameters_digest, save_policy  # noqa: E402
from experiments.population import distill as ds  # noqa: E402
from experiments.population import exploit  # noqa: E402
from mus_env import MusConfig, VectorMusEnv  # noqa: E402

QUIET = dict(progress=False, log=lambda *a: None)
SMALL = dict(decisions=4096, num_tables=64, minibatch_size=256, torch_threads=1)


def _policies(tmp_path: Path, n: int = 2, hidden: tuple[int, ...] = (16,)) -> list[str]:
    """``n`` random networks of different seeds saved as policy files."""
    paths = []
    for i in range(n):
        torch.manual_seed(100 + i)
        net = PolicyNet(hidden=hidden)
        with torch.no_grad():                     # sharper than the initial near-uniform policy: members differ
            net.policy_head.weight.mul_(300.0)
        paths.append(str(save_policy(tmp_path / f"m{i}.pt", net, MusConfig().to_dict())))
    return paths


def _batch(n_steps: int = 6, tables: int = 32) -> tuple[np.ndarray, np.ndarray]:
    env = VectorMusEnv(tables, seed=3, num_threads=1)
    obs, mask = env.reset()
    rng = np.random.default_rng(0)
    O, M = [obs], [mask]
    for _ in range(n_steps):
        obs, mask, *_ = env.step(env.sample_actions(rng))
        O.append(obs)
        M.append(mask)
    return np.concatenate(O), np.concatenate(M)


def test_the_mixture_plays_the_weighted_average_of_its_members(tmp_path: Path) -> None:
    a, b = (TorchPolicyAgent.from_file(p) for p in _policies(tmp_path))
    obs, mask = _batch()
    pa, pb = a.probabilities(obs, mask), b.probabilities(obs, mask)
    assert np.abs(pa - pb).max() > 0.1                                 # the members really differ
    mix = MixtureAgent([a, b], weights=[3, 1])
    np.testing.assert_allclose(mix.probabilities(obs, mask), 0.75 * pa + 0.25 * pb, atol=1e-6)
    assert (mix.probabilities(obs, mask)[mask == 0] == 0).all()
    # a member of weight 0 plays nothing: the mixture is the other member
    only_b = MixtureAgent([a, b], weights=[0, 2])
    np.testing.assert_allclose(only_b.probabilities(obs, mask), pb, atol=1e-6)
    acts = mix.act_batch(obs, mask, np.random.default_rng(1))
    assert mask[np.arange(len(acts)), acts].all()
    greedy = MixtureAgent([a, b], weights=[3, 1], greedy=True).act_batch(obs, mask, np.random.default_rng(1))
    np.testing.assert_array_equal(greedy, np.where(mask > 0, 0.75 * pa + 0.25 * pb, -1).argmax(axis=1))


def test_member_lists_and_weights_are_read_and_checked() -> None:
    assert parse_members("a.pt:2, b.pt") == (["a.pt", "b.pt"], [2 / 3, 1 / 3])
    assert parse_members("runs/x/policy.pt") == (["runs/x/policy.pt"], [1.0])
    for bad, words in (("", "at least one policy file"), ("a.pt:x", "must be a number"),
                       ("a.pt:-1,b.pt", ">= 0"), ("a.pt:0", "must not all be 0")):
        with pytest.raises(ValueError, match=words):
            parse_members(bad)
    rule = make_agent("rule")
    rule.probabilities = lambda obs, masks: None                    # anything with the method is a member
    with pytest.raises(ValueError, match="needs 2 weights"):
        MixtureAgent([rule, rule], weights=[1.0])
    with pytest.raises(ValueError, match="no probabilities"):
        MixtureAgent([make_agent("equity")])
    with pytest.raises(ValueError, match="at least one member"):
        MixtureAgent([])


def test_distillation_pulls_the_student_toward_the_mixture(tmp_path: Path) -> None:
    a, b = _policies(tmp_path)
    out = tmp_path / "d"
    r = ds.distill(f"{a}:1,{b}:1", out, epochs=3, learning_rate=3e-3, **SMALL, **QUIET)
    assert len(r["kl"]) == 4 and r["kl"][-1] < 0.5 * r["kl"][0], r["kl"]        # the held-out KL falls
    blob = load_policy_file(out / "policy.pt")                       # a plain policy file, the mixture recorded
    assert blob["meta"]["distilled"]["members"] == [a, b] and blob["meta"]["distilled"]["weights"] == [0.5, 0.5]
    assert r["member_digests"] == [parameters_digest(TorchPolicyAgent.from_file(p).net) for p in (a, b)]
    assert json.loads((out / "distill.json").read_text())["kl"] == r["kl"]
    # the student plays closer to the mixture than the member it started from, on positions it never saw
    obs, mask = _batch()
    teacher = MixtureAgent.from_files([a, b]).probabilities(obs, mask)
    start, student = (TorchPolicyAgent.from_file(p).probabilities(obs, mask) for p in (a, out / "policy.pt"))
    assert np.abs(student - teacher).sum(axis=1).mean() < 0.5 * np.abs(start - teacher).sum(axis=1).mean()


def test_a_distillation_stopped_after_a_pass_resumes_exactly(tmp_path: Path) -> None:
    a, b = _policies(tmp_path)
    members, kw = f"{a}:2,{b}:1", dict(epochs=2, learning_rate=3e-3, **SMALL)
    whole = ds.distill(members, tmp_path / "whole", **kw, **QUIET)

    def stop_after_first_pass(line: str) -> None:
        if "pass 1/2" in line:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ds.distill(members, tmp_path / "cut", **kw, progress=False, log=stop_after_first_pass)
    assert not (tmp_path / "cut" / "policy.pt").exists()
    again = ds.distill(members, tmp_path / "cut", **kw, resume=True, **QUIET)
    assert again["kl"] == whole["kl"] and again["train_kl"] == whole["train_kl"]
    w1, w2 = (load_policy_file(tmp_path / f / "policy.pt")["model"] for f in ("whole", "cut"))
    assert all(torch.equal(w1[k], w2[k]) for k in w1)
    with pytest.raises(ValueError, match=r"other settings \(seed\)"):
        ds.distill(members, tmp_path / "cut", **kw, seed=5, resume=True, **QUIET)


def test_bad_distillations_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    (a,) = _policies(tmp_path, 1)
    signals = tmp_path / "signals.pt"
    save_policy(signals, PolicyNet(obs_dim=477, num_actions=35, hidden=(8,)), MusConfig(signals="truthful").to_dict())
    out = tmp_path / "d"
    for kw, words in ((dict(members=f"{tmp_path}/nothing.pt"), "no such policy file"),
                      (dict(members=str(signals)), "trained with señas"),
                      (dict(members=a, epochs=0), "epochs must be an int >= 1"),
                      (dict(members=a, learning_rate=2.0), "learning_rate must be a number in"),
                      (dict(members=a, rival_share=1.5), "rival_share must be a number in"),
                      (dict(members=a, resume=True), "no checkpoint to resume")):
        with pytest.raises(ValueError, match=words):
            ds.distill(out=out, **{**SMALL, **kw}, **QUIET)
        assert not out.exists()


def test_mus_distill_refuses_a_bad_member_in_one_line(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "distill", "a.pt:x", "--out", str(tmp_path / "d")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0 and "weight after the last ':' must be a number" in r.stderr
    assert not (tmp_path / "d").exists()


@pytest.mark.filterwarnings("ignore:play_pair")
def test_a_mixture_spec_plays_and_is_probed_from_its_first_members_weights(tmp_path: Path) -> None:
    a, b = _policies(tmp_path)
    spec = f"{a}+{b}"
    mix = make_agent(spec)
    obs, mask = _batch()
    assert isinstance(mix, MixtureAgent) and mix.name == "mixture"
    np.testing.assert_allclose(mix.probabilities(obs, mask), MixtureAgent.from_files([a, b]).probabilities(obs, mask))
    assert exploit.policy_file_of(spec) == a and exploit.default_out(spec).name == "mixture"
    with pytest.raises(ValueError, match="no such policy file"):
        make_agent(f"{a}+{tmp_path}/missing.pt")
    r = exploit.probe(spec, tmp_path / "probe", minutes=0, decisions=64 * 8 * 2, warm_start="agent", eval_hands=64,
                      eval_games=8, preset="tiny", num_tables=64, rollout_steps=8, progress=False,
                      log=lambda *a: None)
    assert r["agent"] == spec and r["frozen"]["unchanged"] and r["trained"]["updates"] == 2
    assert json.loads((tmp_path / "probe" / "args.json").read_text())["warm_start"] == a
