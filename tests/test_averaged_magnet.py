"""The averaged magnet (``magnet_ema``: the magnet an exponential moving average of the learner's weights, kept as
``magnet.pt`` and evaluated beside the learner) and the entropy floor (``entropy_floor``) of ``mus train``
(experiments/train/regularisers.py and the trainer's use of them)."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.policy import MASKED_LOGIT, load_policy_file  # noqa: E402
from experiments.commands import train as train_command  # noqa: E402
from experiments.train import report  # noqa: E402
from experiments.train.ppo import learn, make_args, rollout, start, train  # noqa: E402
from experiments.train.regularisers import average_weights, entropy_floor_loss  # noqa: E402
from mus_env import MusConfig, VectorMusEnv  # noqa: E402


def _quiet(*_: object) -> None:
    pass


def _entropy(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits.masked_fill(~legal, MASKED_LOGIT), dim=-1)
    return -(logp.exp() * logp).sum(-1).mean()


# ----------------------------------------------------------------------------------------------------
# the averaged magnet moves toward the learner at its rate
def test_one_update_moves_the_averaged_magnet_toward_the_learner_at_its_rate(tmp_path: Path) -> None:
    rate = 0.25
    t = start(make_args("tiny", out=str(tmp_path / "run"), progress=False, warm_start="none", magnet_coef=0.5,
                        magnet_ema=rate), log=_quiet)           # nothing is written: train() would open the folder
    t.refresh_magnet()                                          # as the loop does when PPO starts
    rollout(t)
    learn(t)                                                    # the learner moves, the magnet does not (yet)
    old = {k: v.clone() for k, v in t.magnet.state_dict().items()}
    learner = t.net.state_dict()
    assert any(not torch.equal(old[k], learner[k]) for k in old)
    t.average_magnet()
    for k, v in t.magnet.state_dict().items():
        want = (1 - rate) * old[k] + rate * learner[k]
        assert torch.allclose(v, want, rtol=0, atol=1e-7), k
        assert not torch.equal(v, old[k]) or torch.equal(old[k], learner[k]), k
    assert not any(p.requires_grad for p in t.magnet.parameters())          # still frozen
    # rate 0 does not move it; nor does a run without magnet_ema
    before = copy.deepcopy(t.magnet.state_dict())
    average_weights(t.magnet, t.net, 0.0)
    assert all(torch.equal(before[k], v) for k, v in t.magnet.state_dict().items())
    t.args.magnet_ema = 0.0
    t.average_magnet()
    assert all(torch.equal(before[k], v) for k, v in t.magnet.state_dict().items())


def test_buffers_are_averaged_and_counters_copied() -> None:
    avg, net = torch.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        net.weight.fill_(3.0)
        net.running_mean.fill_(2.0)
    net.num_batches_tracked.fill_(7)
    average_weights(avg, net, 0.5)
    assert torch.equal(avg.weight, torch.full((3,), 2.0)) and torch.equal(avg.running_mean, torch.full((3,), 1.0))
    assert int(avg.num_batches_tracked) == 7
    with pytest.raises(ValueError, match="rate must be in"):
        average_weights(avg, net, 1.5)


def test_in_a_run_the_magnet_is_averaged_after_every_update(tmp_path: Path) -> None:
    """Rate 1 makes the average the learner itself after each update (the last included); a small rate keeps it
    between the start and the learner, and the magnet term then sees a magnet that moves."""
    kw = dict(progress=False, magnet_coef=0.5, total_decisions=32 * 8 * 3, eval_every=0)
    whole = train(make_args("tiny", out=str(tmp_path / "one"), magnet_ema=1.0, **kw), log=_quiet)
    assert all(torch.equal(v, whole.net.state_dict()[k]) for k, v in whole.magnet.state_dict().items())
    slow = train(make_args("tiny", out=str(tmp_path / "slow"), magnet_ema=0.01, **kw), log=_quiet)
    fixed = train(make_args("tiny", out=str(tmp_path / "fixed"), **kw), log=_quiet)   # magnet_every 0: fixed
    assert slow.magnet_born == fixed.magnet_born == 0
    assert slow.history[0]["magnet_kl"] == fixed.history[0]["magnet_kl"]   # the same first update
    assert any(not torch.equal(v, fixed.magnet.state_dict()[k]) for k, v in slow.magnet.state_dict().items())
    assert not (tmp_path / "fixed" / "magnet.pt").exists()                 # only the averaged magnet is a policy


# ----------------------------------------------------------------------------------------------------
# saved and resumed exactly; the magnet's policy file plays and is evaluated
def _rows(path: Path) -> list[dict[str, str]]:
    with open(path) as f:
        return [{k: v for k, v in r.items() if k not in ("minutes", "decisions_per_s") and not k.startswith("time_")}
                for r in csv.DictReader(f)]


def test_an_averaged_magnet_run_resumes_exactly_and_its_magnet_is_a_policy_evaluated(tmp_path: Path) -> None:
    kw = dict(progress=False, magnet_coef=0.5, magnet_ema=0.2, entropy_floor=1.5, total_decisions=32 * 8 * 6,
              eval_every=2, checkpoint_every=2)
    straight = train(make_args("tiny", out=str(tmp_path / "a"), **kw), log=_quiet)
    train(make_args("tiny", out=str(tmp_path / "b"), **kw), log=_quiet, max_updates=3)
    blob = load_policy_file(tmp_path / "b" / "checkpoint.pt")
    assert blob["counters"]["update"] == 3 and "magnet_model" in blob
    resumed = train(make_args("tiny", out=str(tmp_path / "b"), **kw), log=_quiet, resume=True)
    for a, b in ((straight.net, resumed.net), (straight.magnet, resumed.magnet)):
        assert all(torch.equal(v, b.state_dict()[k]) for k, v in a.state_dict().items())
    for name in ("metrics.csv", "eval.csv"):
        assert _rows(tmp_path / "a" / name) == _rows(tmp_path / "b" / name), name
    # magnet.pt: the averaged magnet's weights, a policy file make_agent plays
    out = tmp_path / "a"
    saved = load_policy_file(out / "magnet.pt")
    assert saved["format"] == load_policy_file(out / "policy.pt")["format"]
    assert all(torch.equal(v, saved["model"][k]) for k, v in straight.magnet.state_dict().items())
    assert saved["meta"]["magnet_ema"] == 0.2
    agent = make_agent(str(out / "magnet.pt"))
    cfg = MusConfig()
    env = VectorMusEnv(8, cfg, seed=0)
    obs, mask = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        act = agent.act_batch(obs, mask, rng)
        assert mask[np.arange(8), act].all()
        obs, mask, *_ = env.step(act)
    # every evaluation also played the magnet, on the same deals and opponents
    for ev in straight.evals:
        for spec in ("rule", "equity"):
            assert np.isfinite(ev[f"magnet_{spec}_stones"]) and 0 <= ev[f"magnet_{spec}_win"] <= 1


def test_the_magnets_columns_are_the_matches_the_learner_would_play_with_its_weights(tmp_path: Path) -> None:
    """An evaluation's ``magnet_*`` columns are what the learner's columns become when the learner is given the
    magnet's weights: the same deals, seeds and opponents, played by the averaged magnet (here made unlike the
    learner, so that the two differ)."""
    t = start(make_args("tiny", out=str(tmp_path / "run"), progress=False, warm_start="none", magnet_coef=0.5,
                        magnet_ema=0.3), log=_quiet)            # nothing is written: train() would open the folder
    t.refresh_magnet()
    with torch.no_grad():
        head = t.magnet.policy_head
        head.bias.copy_(torch.randn(head.bias.shape, generator=torch.Generator().manual_seed(0)) * 3)
    both = report.evaluate(t)
    t.net.load_state_dict(t.magnet.state_dict())
    as_learner = report.evaluate(t)
    cols = [k for k in as_learner if k.startswith(("rule_", "equity_"))]
    assert cols and all(both[f"magnet_{k}"] == as_learner[k] for k in cols)
    assert any(both[f"magnet_{k}"] != both[k] for k in cols)      # the learner's own columns are its own


# ----------------------------------------------------------------------------------------------------
# the entropy floor pulls the right way
def test_the_entropy_floor_raises_entropy_below_it_and_is_silent_above() -> None:
    g = torch.Generator().manual_seed(0)
    legal = torch.rand(32, 31, generator=g) < 0.5
    legal[:, :2] = True
    peaked = (torch.randn(32, 31, generator=g) * 8).requires_grad_(True)
    low = _entropy(peaked, legal)
    floor = low.item() + 0.5
    entropy_floor_loss(low, floor, 1.0).backward()
    assert peaked.grad.abs().max() > 0
    with torch.no_grad():
        stepped = peaked - 0.5 * peaked.grad
    assert _entropy(stepped, legal).item() > low.item()        # a step down the term's gradient raises the entropy
    assert entropy_floor_loss(low, floor, 2.0).item() == pytest.approx(2.0 * 0.5)
    flat = torch.zeros(32, 31, requires_grad=True)            # above the floor: no loss, no gradient
    high = _entropy(flat, legal)
    loss = entropy_floor_loss(high, high.item() - 0.1, 1.0)
    loss.backward()
    assert loss.item() == 0.0 and flat.grad.abs().max().item() == 0.0


def test_the_trainers_update_holds_the_entropy_up_to_its_floor(tmp_path: Path) -> None:
    """With every other force off (zero advantages, no entropy bonus, no value loss, no magnet), an update with a
    floor above the policy's entropy raises it; with the floor below, the update changes nothing."""
    def entropy_after(floor: float) -> tuple[float, float, bool]:
        args = make_args("tiny", out=str(tmp_path / "run"), progress=False, warm_start="none", ent_coef=0.0,
                         vf_coef=0.0, learning_rate=0.05, update_epochs=4, entropy_floor=floor)
        t = start(args, log=_quiet)
        with torch.no_grad():            # a peaked policy (a fresh one is near uniform over the legal actions)
            head = t.net.policy_head
            head.bias.copy_(torch.randn(head.bias.shape, generator=torch.Generator().manual_seed(0)) * 4)
        rollout(t)
        n = t.buffer.n
        t.buffer.reward[:n] = 0.0
        t.buffer.value[:n] = 0.0
        obs = torch.from_numpy(t.buffer.obs[:n].copy())
        legal = torch.from_numpy(t.buffer.mask[:n].copy()) != 0
        before_w = copy.deepcopy(t.net.state_dict())
        with torch.no_grad():
            before = _entropy(t.net.logits(obs), legal).item()
        learn(t)
        with torch.no_grad():
            after = _entropy(t.net.logits(obs), legal).item()
        moved = any(not torch.equal(v, before_w[k]) for k, v in t.net.state_dict().items())
        return before, after, moved

    before, after, moved = entropy_after(1.5)
    assert before < 1.3 and after > before + 0.1 and moved, (before, after)
    before, after, moved = entropy_after(0.01)
    assert not moved and after == before


# ----------------------------------------------------------------------------------------------------
# settings and options
def test_bad_averaged_magnet_and_floor_settings_are_refused() -> None:
    for overrides, words in (({"magnet_ema": 0.1, "magnet_every": 5}, "give --magnet-every 0 with --magnet-ema"),
                             ({"magnet_ema": -0.1}, "Args.magnet_ema must be a finite number in"),
                             ({"magnet_ema": 1.5}, "Args.magnet_ema must be a finite number in"),
                             ({"entropy_floor": -1.0}, "Args.entropy_floor must be a finite number"),
                             ({"entropy_floor": 9.0}, "Args.entropy_floor must be at most 3.434 nats"),
                             ({"entropy_floor": 0.5, "entropy_floor_coef": 0.0}, "has no effect")):
        with pytest.raises(ValueError, match=words):
            make_args("tiny", **overrides)
    with pytest.raises(ValueError, match="give --magnet-every 0"):
        make_args("default", magnet_ema=0.01)                   # the default run refreshes every 50 updates
    args = make_args("default", magnet_ema=0.01, magnet_every=0)
    assert (args.magnet_ema, args.entropy_floor, args.entropy_floor_coef) == (0.01, 0.0, 1.0)


def test_mus_train_has_the_options_with_what_they_do() -> None:
    p = train_command.parser()
    ns = p.parse_args(["--magnet-ema", "0.02", "--magnet-every", "0", "--entropy-floor", "0.3",
                       "--entropy-floor-coef", "2"])
    assert (ns.magnet_ema, ns.magnet_every, ns.entropy_floor, ns.entropy_floor_coef) == (0.02, 0, 0.3, 2.0)
    text = " ".join(p.format_help().split())
    assert "the magnet averages the learner" in text and "magnet.pt" in text
    assert "a floor on the mean entropy" in text


def test_a_shipped_curve_takes_the_learners_opponents_not_the_magnets(tmp_path: Path, monkeypatch) -> None:
    from experiments.population import ship_agent

    row = {"update": 1, "decisions": 10, "minutes": 0.1}
    for prefix in ("", "magnet_"):
        for spec in ("rule", "equity"):
            row |= {f"{prefix}{spec}_{k}": 0.5 for k in ("stones", "stones_lo", "stones_hi", "win", "win_lo", "win_hi")}
    report.write_csv(tmp_path / "eval.csv", [row])
    seen: list[list[str]] = []
    monkeypatch.setattr(ship_agent, "learning_curve", lambda evals, dest, opponents, **_: seen.append(opponents))
    ship_agent.draw_curve(tmp_path, tmp_path / "curve.png")
    assert seen == [["rule", "equity"]]
