"""The magnet term of ``mus train`` (``magnet_coef``, ``magnet_every``): magnetic mirror descent / R-NaD-style
regularisation toward a reference policy (experiments.train.ppo's module docstring)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from agents.policy import MASKED_LOGIT  # noqa: E402
from experiments.train.checkpoint import CheckpointError  # noqa: E402
from experiments.train.ppo import clipped_surrogate, learn, magnet_kl, make_args, rollout, start, train  # noqa: E402


def _masked(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.masked_fill(~legal, MASKED_LOGIT), dim=-1)


def test_the_term_is_zero_with_no_gradient_at_the_magnet_and_pulls_toward_it() -> None:
    g = torch.Generator().manual_seed(0)
    legal = torch.rand(64, 31, generator=g) < 0.5
    legal[:, 0] = True
    ref_logits = torch.randn(64, 31, generator=g)
    ref = _masked(ref_logits, legal)
    at = ref_logits.clone().requires_grad_(True)
    kl = magnet_kl(_masked(at, legal), ref)
    kl.backward()
    assert abs(kl.item()) < 1e-6 and at.grad.abs().max().item() < 1e-6
    # away from the magnet: positive, and gradient steps on the term alone bring the policy to it
    theta = torch.randn(64, 31, generator=g).requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=0.1)
    first = magnet_kl(_masked(theta, legal), ref).item()
    for _ in range(300):
        opt.zero_grad()
        magnet_kl(_masked(theta, legal), ref).backward()
        opt.step()
    last = magnet_kl(_masked(theta, legal), ref).item()
    assert first > 0.1 and last < 0.01 * first
    p, rho = _masked(theta, legal).exp(), ref.exp()
    assert (p - rho).abs().max().item() < 0.05
    assert p[~legal].max().item() == 0.0                     # illegal actions stay at probability 0


# a biased rock-paper-scissors (zero-sum, symmetric; Nash (1/4, 1/2, 1/4), value 0), payoff to the row player
RPS = torch.tensor([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])


def _self_play(magnet_coef: float, iters: int = 600, seed: int = 0) -> float:
    """Self-play with the trainer's loss functions: each iteration samples actions from the policy, takes their
    advantage against the current policy (the opponent is itself, frozen for the iteration) and runs two Adam
    steps of the clipped surrogate (+ the magnet term toward the uniform policy). Returns the final policy's
    exploitability, the best response's value against it."""
    g = torch.Generator().manual_seed(seed)
    theta = torch.tensor([1.0, 0.0, -0.5], requires_grad=True)
    opt = torch.optim.Adam([theta], lr=0.02)
    magnet = torch.log_softmax(torch.zeros(3), -1)[None]
    for _ in range(iters):
        with torch.no_grad():
            p = torch.softmax(theta, -1)
            a = torch.multinomial(p, 4096, replacement=True, generator=g)
            q = RPS @ p
            adv = q[a] - (p * q).sum()
            old = torch.log_softmax(theta, -1)[a]
        for _ in range(2):
            logp_all = torch.log_softmax(theta, -1)
            loss = clipped_surrogate((logp_all[a] - old).exp(), adv, 0.2)
            if magnet_coef:
                loss = loss + magnet_coef * magnet_kl(logp_all[None], magnet)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return float((RPS @ torch.softmax(theta.detach(), -1)).max())


def test_the_magnet_stops_self_play_from_cycling_away_from_the_equilibrium() -> None:
    plain, regularised = _self_play(0.0), _self_play(1.0)
    assert plain > 0.8, plain                   # plain self-play spirals out (exploitability about 1.0)
    assert regularised < 0.3, regularised       # the magnet holds it near the equilibrium (about 0.12)


def _digest(net: torch.nn.Module) -> str:
    return hashlib.sha256(b"".join(v.numpy().tobytes() for v in net.state_dict().values())).hexdigest()


def test_a_magnet_run_resumes_exactly_and_refreshes_on_schedule(tmp_path: Path) -> None:
    kw = dict(progress=False, magnet_coef=0.5, magnet_every=3, total_decisions=32 * 8 * 8, eval_every=0)
    straight = train(make_args("tiny", out=str(tmp_path / "a"), **kw), log=lambda *x: None)
    train(make_args("tiny", out=str(tmp_path / "b"), **kw), log=lambda *x: None, max_updates=4)
    resumed = train(make_args("tiny", out=str(tmp_path / "b"), **kw), log=lambda *x: None, resume=True)
    assert _digest(resumed.net) == _digest(straight.net) and _digest(resumed.magnet) == _digest(straight.magnet)
    assert straight.magnet_born == 6                        # taken at updates 0, 3 and 6 of 8
    assert [r["magnet_kl"] >= 0 for r in straight.history[1:]] == [True] * 7
    plain = train(make_args("tiny", out=str(tmp_path / "c"), **{**kw, "magnet_coef": 0.0}), log=lambda *x: None)
    assert plain.magnet is None and "magnet_kl" not in plain.history[-1]
    assert _digest(plain.net) != _digest(straight.net)      # the term changes the training


def test_a_forged_magnet_in_a_checkpoint_is_refused(tmp_path: Path) -> None:
    from agents.policy import load_policy_file, save_file

    kw = dict(progress=False, magnet_coef=0.5, total_decisions=32 * 8 * 8, eval_every=0)
    out = tmp_path / "run"
    train(make_args("tiny", out=str(out), **kw), log=lambda *x: None, max_updates=2)
    blob = load_policy_file(out / "checkpoint.pt")
    blob["magnet_born"] = 99
    save_file(out / "checkpoint.pt", blob)
    with pytest.raises(CheckpointError, match="magnet was taken at update 99"):
        train(make_args("tiny", out=str(out), **kw), log=lambda *x: None, resume=True)


def test_bad_magnet_settings_name_the_field() -> None:
    for field, value, words in (("magnet_coef", -0.1, "Args.magnet_coef must be a finite number"),
                                ("magnet_coef", float("nan"), "Args.magnet_coef"),
                                ("magnet_every", -1, "Args.magnet_every must be an int >= 0")):
        with pytest.raises(ValueError, match=words):
            make_args("tiny", **{field: value})


def _kl_to(net: torch.nn.Module, magnet: torch.nn.Module, obs: torch.Tensor, legal: torch.Tensor) -> float:
    with torch.no_grad():
        return magnet_kl(_masked(net.logits(obs), legal), _masked(magnet.logits(obs), legal)).item()


def test_the_trainers_update_pulls_the_policy_toward_the_magnet(tmp_path: Path) -> None:
    """The trainer's own use of the term (``ppo.learn``), not the term alone: with every other force off (no
    advantage: zero rewards and values; no entropy bonus; no value loss), an update moves the policy toward the
    magnet, here a different network, so the KL to it falls. The wrong sign (``- magnet_coef * KL``) makes it
    rise."""
    args = make_args("tiny", out=str(tmp_path / "run"), progress=False, warm_start="none", magnet_coef=5.0,
                     ent_coef=0.0, vf_coef=0.0, learning_rate=1e-2, target_kl=0.0)
    t = start(args, log=lambda *x: None)                   # nothing is written: train() would open the folder
    rollout(t)
    n = t.buffer.n
    t.buffer.reward[:n] = 0.0
    t.buffer.value[:n] = 0.0
    t.magnet = t.new_net()                                  # another network, far from the learner's
    t.magnet.requires_grad_(False)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        head = t.magnet.policy_head
        head.weight.copy_(torch.randn(head.weight.shape, generator=g) * 0.3)
        head.bias.copy_(torch.randn(head.bias.shape, generator=g))
    obs = torch.from_numpy(t.buffer.obs[:n].copy())
    legal = torch.from_numpy(t.buffer.mask[:n].copy()) != 0
    before = _kl_to(t.net, t.magnet, obs, legal)
    stats = learn(t)
    after = _kl_to(t.net, t.magnet, obs, legal)
    assert stats["trained"] > 0 and before > 0.01, (stats, before)
    assert after < 0.7 * before, (before, after)
