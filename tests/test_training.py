"""The self-play trainer (experiments/train/ppo.py and its parts, mus train and mus ship-agent) and the policy
agents (agents/policy.py, agents/sb3.py).

Turn-based returns are checked against sums written out by hand; a tiny run is stopped, resumed and
compared with an uninterrupted one metric for metric; damaged checkpoints and policy files give errors that
name the file.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.policy import (  # noqa: E402
    MASKED_LOGIT,
    PolicyFileError,
    PolicyNet,
    TorchPolicyAgent,
    build_net,
    load_policy_file,
    masked_log_probs,
    sample_masked,
    save_file,
    save_policy,
)
from experiments.commands import ship_agent as ship_command  # noqa: E402
from experiments.commands import train as train_command  # noqa: E402
from experiments.population import ship_agent, ship_card  # noqa: E402
from experiments.train import ppo as ps  # noqa: E402
from experiments.train.buffer import HANDS_DIM, TurnBuffer, hands_input, relative_hands  # noqa: E402
from experiments.train.league import SnapshotBank, frozen_agent, split_specs  # noqa: E402
from mus_env import MusConfig, MusGame, VectorMusEnv  # noqa: E402
from mus_env.actions import NUM_ACTIONS  # noqa: E402
from mus_env.observation import OBS_DIM  # noqa: E402

GAMMA, LAM = 0.9, 0.8


# ----------------------------------------------------------------------------------------------------
# turn-based returns on a hand-made trajectory
def _hand_made_buffer(split: bool) -> tuple[TurnBuffer, dict[str, float]]:
    """One table, all four seats learners. Steps (seat acting, then rewards paid by seat after the step):

    step 0: seat 0 acts (e0, V=0.1)
    step 1: seat 1 acts (e1, V=0.2)
    step 2: seat 2 acts (e2, V=0.3); the hand ends: rewards (+1, -1, +1, -1)
    step 3: seat 0 acts (e3, V=0.4)
    step 4: seat 3 acts (e4, V=0.5); the hand ends: rewards (-2, +2, -2, +2); the game goes on
    step 5: seat 0 acts (e5, V=0.6); the game ends: rewards (+3, -3, +3, -3)
    step 6: seat 1 acts (e6, V=0.7) in the next game (its first decision there)

    With ``split`` the rollout ends after step 3 and the rest is a second rollout (the carry-over path).
    """
    buf = TurnBuffer(num_tables=1, steps=8, obs_dim=3, num_actions=2)
    values = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    seats = [0, 1, 2, 0, 3, 0, 1]
    pay = {2: [1, -1, 1, -1], 4: [-2, 2, -2, 2], 5: [3, -3, 3, -3]}
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for t, (seat, v) in enumerate(zip(seats, values, strict=True)):
        buf.add(np.array([0]), np.array([seat]), np.zeros((1, 3), np.float32), np.ones((1, 2), np.int8),
                np.array([0]), np.zeros(1, np.float32), np.array([v], np.float32))
        if t in pay:
            buf.reward_seats(np.array([pay[t]], dtype=np.float32))
        if t == 5:
            buf.end_games(np.array([0]))
        if split and t == 3:
            adv, train = buf.advantages(GAMMA, LAM)
            out.append((buf.value[:buf.n].copy(), adv, train))
            buf.carry_over()
    adv, train = buf.advantages(GAMMA, LAM)
    out.append((buf.value[:buf.n].copy(), adv, train))
    # collect the trained entries' advantages by their value (values are distinct labels)
    got = {}
    for value, a, tr in out:
        for v, x in zip(value[tr], a[tr], strict=True):
            got[f"{v:.1f}"] = float(x)
    return buf, got


def _by_hand(split: bool) -> dict[str, float]:
    g, lam = GAMMA, LAM
    # seat 0: e0 -> e3 -> e5 (done). Step 2 pays +1 while e0 is pending, step 4 pays -2 while e3 is
    # pending, step 5 pays +3 to e5 and ends the game.
    d5 = 3.0 - 0.6
    d3 = -2.0 + g * 0.6 - 0.4
    d0 = 1.0 + g * 0.4 - 0.1
    a5 = d5
    a3 = d3 + g * lam * a5
    # split: the first rollout ends with e3 open, so e0 bootstraps from V(e3) and its GAE stops there
    a0 = d0 if split else d0 + g * lam * a3
    # seat 1: e1 (pays -1 at step 2, +2 at step 4, -3 at step 5: game over) -> done; e6 is open (next game)
    a1 = (-1.0 + 2.0 - 3.0) - 0.2
    # seat 2: e2 (+1 at step 2, -2 at step 4, +3 at step 5) -> done
    a2 = (1.0 - 2.0 + 3.0) - 0.3
    # seat 3: e4 pending from step 4: +2 at step 4, -3 at step 5 -> done (its step-2 reward had no decision)
    a4 = (2.0 - 3.0) - 0.5
    return {"0.1": a0, "0.2": a1, "0.3": a2, "0.4": a3, "0.5": a4, "0.6": a5}


@pytest.mark.parametrize("split", [False, True])
def test_turn_based_advantages_equal_hand_computation(split: bool) -> None:
    buf, got = _hand_made_buffer(split)
    want = _by_hand(split)
    assert set(got) == set(want)                      # e6 (seat 1's open decision) is not trained
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=1e-6), k
    assert buf.open_entries().sum() == 1               # e6 waits for its successor


def test_open_entry_bootstraps_its_predecessor() -> None:
    # one seat decides twice and the rollout ends: the first is trained with the second's value as bootstrap
    buf = TurnBuffer(num_tables=1, steps=4, obs_dim=1, num_actions=2)
    for v in (0.5, 2.0):
        buf.add(np.array([0]), np.array([1]), np.zeros((1, 1), np.float32), np.ones((1, 2), np.int8),
                np.array([0]), np.zeros(1, np.float32), np.array([v], np.float32))
        buf.reward_seats(np.array([[0.0, 1.0, 0.0, 0.0]], dtype=np.float32))
    adv, train = buf.advantages(GAMMA, LAM)
    assert train.tolist() == [True, False]
    assert adv[0] == pytest.approx(1.0 + GAMMA * 2.0 - 0.5)


# ----------------------------------------------------------------------------------------------------
# the masked categorical
def test_masked_policy_never_samples_a_masked_action() -> None:
    rng = np.random.default_rng(0)
    logits = torch.from_numpy(rng.normal(0, 5, (4000, NUM_ACTIONS)).astype(np.float32))
    logits[:, 3] = 50.0                                   # a huge logit on an action that is often masked
    mask = (rng.random((4000, NUM_ACTIONS)) < 0.2).astype(np.int8)
    mask[np.arange(4000), rng.integers(0, NUM_ACTIONS, 4000)] = 1
    probs = masked_log_probs(logits, torch.from_numpy(mask)).exp().numpy()
    assert (probs[mask == 0] == 0).all()
    for seed in range(5):
        a = sample_masked(probs, np.random.default_rng(seed))
        assert (mask[np.arange(4000), a] == 1).all()
    # and the sampler follows the probabilities
    p = np.tile(np.array([[0.0, 0.25, 0.0, 0.75]], dtype=np.float32), (20000, 1))
    a = sample_masked(p, np.random.default_rng(1))
    assert set(np.unique(a)) == {1, 3}
    assert abs((a == 3).mean() - 0.75) < 0.02


def test_masked_logits_do_not_enter_the_loss() -> None:
    rng = np.random.default_rng(1)
    logits = torch.tensor(rng.normal(0, 1, (64, NUM_ACTIONS)).astype(np.float32), requires_grad=True)
    mask = torch.from_numpy((rng.random((64, NUM_ACTIONS)) < 0.5).astype(np.int8))
    mask[:, 0] = 1
    logp = masked_log_probs(logits, mask)
    entropy = -(logp.exp() * logp).sum(1).mean()
    chosen = logp[:, 0].mean()
    (chosen + 0.1 * entropy).backward()
    assert torch.isfinite(entropy)
    grad = logits.grad.numpy()
    assert (grad[mask.numpy() == 0] == 0).all()
    assert (np.abs(grad[mask.numpy() == 1]) > 0).any()
    # the value of a masked logit changes nothing
    other = logits.detach().clone()
    other[mask == 0] = 123.0
    assert torch.equal(masked_log_probs(other, mask)[mask == 1], logp.detach()[mask == 1])
    assert MASKED_LOGIT < -1e8


# ----------------------------------------------------------------------------------------------------
# a tiny run, stopped and resumed
def _tiny(tmp_path, name: str, **kw) -> ps.Args:
    return ps.make_args("tiny", out=str(tmp_path / name), progress=False, **kw)


_TIMING = {"minutes", "decisions_per_s", "time_env", "time_policy", "time_opponents", "time_update"}


def _rows(path) -> list[dict[str, str]]:
    with open(path) as f:
        return [{k: v for k, v in r.items() if k not in _TIMING} for r in csv.DictReader(f)]


def test_tiny_run_writes_everything_and_resume_equals_uninterrupted(tmp_path) -> None:
    full = ps.train(_tiny(tmp_path, "full"), log=lambda *a: None)
    out = tmp_path / "full"
    for f in ("checkpoint.pt", "policy.pt", "best_policy.pt", "metrics.csv", "eval.csv", "learning_curve.png",
              "args.json"):
        assert (out / f).is_file(), f
    assert any((out / "tb").iterdir())
    assert full.update == full.num_updates == 4
    assert len(full.evals) == 2                           # eval_every=2 over 4 updates
    # stop after 3 updates (checkpoints at 2), resume to the end
    ps.train(_tiny(tmp_path, "cut"), log=lambda *a: None, max_updates=3)
    with pytest.raises(ps.CheckpointError, match="other settings"):
        ps.train(_tiny(tmp_path, "cut", gamma=0.5), resume=True, log=lambda *a: None)
    resumed = ps.train(_tiny(tmp_path, "cut"), resume=True, log=lambda *a: None)
    assert resumed.update == 4
    assert _rows(out / "metrics.csv") == _rows(tmp_path / "cut" / "metrics.csv")
    assert _rows(out / "eval.csv") == _rows(tmp_path / "cut" / "eval.csv")
    for k, v in full.net.state_dict().items():
        assert torch.equal(v, resumed.net.state_dict()[k]), k
    # with signals off (the default) the run is the game without señas: a 345-input, 31-action policy
    blob = load_policy_file(out / "policy.pt")
    assert (blob["arch"]["obs_dim"], blob["arch"]["num_actions"]) == (OBS_DIM, NUM_ACTIONS) == (345, 31)
    assert blob["config"] == MusConfig(max_mus_rounds=None).to_dict() and blob["config"]["signals"] == "off"
    # the exported policy plays through make_agent, batched and single, legal moves only
    agent = make_agent(str(out / "policy.pt"))
    _plays_legal(agent)
    _plays_legal(make_agent(str(out / "checkpoint.pt"), greedy=True))
    # best_policy.pt is the policy of the evaluation with the best smallest margin (the latest on ties)
    opponents = split_specs(full.args.eval_opponents)
    scores = [min(e[f"{s}_stones"] for s in opponents) for e in full.evals]
    meta = load_policy_file(out / "best_policy.pt")["meta"]
    assert meta["eval_score"] == pytest.approx(max(scores))
    assert meta["update"] == max(e["update"] for e, v in zip(full.evals, scores, strict=True) if v == max(scores))


def test_eval_score_is_the_smallest_margin() -> None:
    ev = {"rule_stones": 1.5, "equity_stones": -0.25, "random_stones": 9.0}
    assert ps.eval_score(ev, ["rule", "equity"]) == -0.25
    assert ps.eval_score(ev, ["rule", "random"]) == 1.5


def test_resume_without_checkpoint_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ps.CheckpointError, match="no checkpoint"):
        ps.start(_tiny(tmp_path, "none"), resume=True)


def test_a_new_run_does_not_silently_replace_an_old_one(tmp_path) -> None:
    args = _tiny(tmp_path, "run", total_decisions=32 * 8)
    ps.train(args, log=lambda *a: None)
    ck = tmp_path / "run" / "checkpoint.pt"
    stamp = ck.stat().st_mtime_ns
    with pytest.raises(ps.CheckpointError, match="--resume"):
        ps.train(args, log=lambda *a: None)
    assert ck.stat().st_mtime_ns == stamp
    (tmp_path / "run" / "notes.txt").write_text("mine")
    ps.train(args, log=lambda *a: None, overwrite=True)
    assert (tmp_path / "run" / "notes.txt").read_text() == "mine"     # only the run's own files are replaced
    assert len(list(csv.DictReader(open(tmp_path / "run" / "metrics.csv")))) == 1


def _corrupt(path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(b"not a checkpoint at all" * 10)
    elif how == "flipped":                      # every bit of the middle tenth inverted (data and structure)
        b = bytearray(data)
        lo, hi = int(len(b) * 0.45), int(len(b) * 0.55)
        b[lo:hi] = bytes(x ^ 0xFF for x in b[lo:hi])
        path.write_bytes(bytes(b))


@pytest.mark.parametrize("how", ["truncated", "garbage", "flipped"])
def test_damaged_checkpoint_is_a_clear_error(tmp_path, how: str) -> None:
    args = _tiny(tmp_path, "run", total_decisions=32 * 8 * 2)
    ps.train(args, log=lambda *a: None)
    ck = tmp_path / "run" / "checkpoint.pt"
    _corrupt(ck, how)
    with pytest.raises((ps.CheckpointError, PolicyFileError)) as err:
        ps.start(args, resume=True)
    assert "checkpoint.pt" in str(err.value)
    with pytest.raises(PolicyFileError, match="checkpoint.pt"):
        make_agent(str(ck))


def test_a_changed_weight_is_detected_by_the_digest(tmp_path) -> None:
    path = save_policy(tmp_path / "p.pt", PolicyNet(hidden=(8,)))
    blob = torch.load(path, weights_only=True)
    blob["model"]["policy_head.bias"][3] += 1e-3          # one number changed, the file still well formed
    torch.save(blob, path)
    with pytest.raises(PolicyFileError, match="digest"):
        make_agent(str(path))


def test_pickled_object_is_refused(tmp_path) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"format": "mus-env-policy", "version": 1, "arch": {}, "model": {}, "x": object()}, path)
    with pytest.raises(PolicyFileError, match="safe loader"):
        make_agent(str(path))


def test_policy_file_for_another_observation_is_refused(tmp_path) -> None:
    path = save_policy(tmp_path / "small.pt", PolicyNet(obs_dim=10, hidden=(8,)))
    with pytest.raises(PolicyFileError, match="observations of 10"):
        make_agent(str(path))
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(str(tmp_path / "missing.pt"))


def test_bad_args_name_the_field() -> None:
    with pytest.raises(ValueError, match="num_tables"):
        ps.make_args("tiny", num_tables=0)
    with pytest.raises(ValueError, match="league_mix"):
        ps.make_args("tiny", league_mix="self:1,grandma:1")
    with pytest.raises(ValueError, match="preset"):
        ps.make_args("huge")
    with pytest.raises(ValueError, match="warm_start"):
        ps.make_args("tiny", warm_start="bridge")


# ----------------------------------------------------------------------------------------------------
# the policy agents
def _plays_legal(agent, kings: int = 8) -> None:
    # capped mus rounds: an untrained greedy policy may say MUS forever (all four seats)
    cfg = MusConfig(kings=kings, max_mus_rounds=4)
    venv = VectorMusEnv(64, cfg, seed=3)
    obs, mask = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        a = agent.act_batch(obs, mask, rng)
        assert a.shape == (64,) and (mask[np.arange(64), a] == 1).all()
        obs, mask, *_ = venv.step(a)
    g = MusGame(cfg, seed=5)
    for _ in range(300):                 # bounded: a greedy policy against itself may raise forever
        if g.is_over:
            break
        s = g.current_player
        a = agent.act(g.observe(s), g.legal_action_mask(), rng)
        assert a in g.legal_actions()
        g.step(a)


def test_shipped_agent_loads_and_plays_legal_moves() -> None:
    agent = make_agent("ppo")
    assert isinstance(agent, TorchPolicyAgent) and agent.name == "ppo"
    assert agent.meta.get("command"), "the shipped policy file must say how it was made"
    _plays_legal(agent)
    _plays_legal(make_agent("ppo", greedy=True), kings=8)


def test_greedy_agent_takes_the_most_likely_legal_action() -> None:
    torch.manual_seed(0)
    agent = TorchPolicyAgent(PolicyNet(hidden=(16,)), greedy=True)
    obs = np.random.default_rng(0).random((50, OBS_DIM)).astype(np.float32)
    mask = np.zeros((50, NUM_ACTIONS), dtype=np.int8)
    mask[:, [18, 19, 26]] = 1
    p = agent.probabilities(obs, mask)
    a = agent.act_batch(obs, mask, np.random.default_rng(0))
    assert np.array_equal(a, np.array([18, 19, 26])[p[:, [18, 19, 26]].argmax(1)])


def test_sb3_model_loads_and_plays_legal_moves(tmp_path) -> None:
    sb3 = pytest.importorskip("sb3_contrib")
    from mus_env.wrappers import MusGymEnv

    env = MusGymEnv(learner_seats=(0, 2), reward="stones", seed=0)
    model = sb3.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                            policy_kwargs={"net_arch": [16]})
    model.learn(64)
    path = tmp_path / "model.zip"
    model.save(path)
    agent = make_agent(str(path))
    _plays_legal(agent)
    _plays_legal(make_agent(str(path), greedy=True))


# ----------------------------------------------------------------------------------------------------
# the engine snapshot the checkpoints rely on
def test_vector_state_dict_continues_exactly() -> None:
    venv = VectorMusEnv(32, MusConfig(), seed=11, reward="stones")
    venv.reset()
    rng = np.random.default_rng(2)
    for _ in range(40):
        venv.step(venv.sample_actions(rng))
    snap = venv.state_dict()
    acts = []
    outs = []
    for _ in range(80):
        a = venv.sample_actions(rng)
        acts.append(a)
        obs, mask, r, d, info = venv.step(a)
        outs.append((obs.copy(), mask.copy(), r, d, info["final_scores"]))
    other = VectorMusEnv(32, MusConfig(), seed=999, reward="stones")
    other.reset()
    other.load_state_dict(snap)
    for a, (obs, mask, r, d, fs) in zip(acts, outs, strict=True):
        o2, m2, r2, d2, i2 = other.step(a)
        assert np.array_equal(o2, obs) and np.array_equal(m2, mask) and np.array_equal(r2, r)
        assert np.array_equal(d2, d) and np.array_equal(i2["final_scores"], fs)
    with pytest.raises(ValueError, match="num_envs"):
        VectorMusEnv(8).load_state_dict(snap)
    with pytest.raises(ValueError, match="config"):
        VectorMusEnv(32, MusConfig(kings=4), reward="stones").load_state_dict(snap)
    bad = dict(snap, arrays=dict(snap["arrays"], state=np.zeros((32, 3), np.uint8)))
    fresh = VectorMusEnv(32, MusConfig(), seed=1, reward="stones")
    fresh.reset()
    before = fresh.scores
    with pytest.raises(ValueError, match="'state'"):
        fresh.load_state_dict(bad)
    with pytest.raises(ValueError, match="layout"):
        fresh.load_state_dict(dict(snap, layout="hands:i1[4, 4]"))
    assert np.array_equal(fresh.scores, before)


def test_central_critic_input_is_the_hidden_state_relative_to_the_seat() -> None:
    from mus_env.observation import STATE_DIM

    venv = VectorMusEnv(16, MusConfig(), seed=4)
    venv.reset()
    rng = np.random.default_rng(0)
    for step in range(30):
        seat = venv.current_player.astype(np.int64)
        got = hands_input(relative_hands(venv.hands, seat)).reshape(16, 4, 40)
        for b in range(16):
            g = MusGame(MusConfig(), seed=int(venv.game_seeds[b]))
            state_hands = None
            if step == 0:                                   # fresh deals: MusGame with the same seed agrees
                state_hands = g.state()[OBS_DIM:STATE_DIM].reshape(4, 40)
            for q in range(4):
                cards = venv.hands[b, (seat[b] + q) % 4]
                assert sorted(np.flatnonzero(got[b, q])) == sorted(c for c in cards if c >= 0)
                if state_hands is not None:
                    assert np.array_equal(got[b, q], state_hands[(seat[b] + q) % 4])
        venv.step(venv.sample_actions(rng))


def test_central_critic_run_and_policy_ignores_the_hands(tmp_path) -> None:
    t = ps.train(_tiny(tmp_path, "cc", central_critic=True, total_decisions=32 * 8 * 2), log=lambda *a: None)
    assert t.net.arch["value_dim"] == HANDS_DIM
    obs = torch.rand(8, OBS_DIM)
    h1, h2 = torch.rand(8, HANDS_DIM), torch.rand(8, HANDS_DIM)
    l1, v1 = t.net(obs, h1)
    l2, v2 = t.net(obs, h2)
    assert torch.equal(l1, l2) and not torch.equal(v1, v2)
    _plays_legal(make_agent(str(tmp_path / "cc" / "policy.pt")))


def test_the_scratch_preset_is_the_default_run_from_a_random_network_for_600m_decisions() -> None:
    """``mus train --preset scratch`` is the default run from a random network: the defaults but these."""
    default, scratch = ps.make_args("default").to_dict(), ps.make_args("scratch").to_dict()
    changed = {k: scratch[k] for k in scratch if scratch[k] != default[k]}
    assert changed == {"warm_start": "none", "total_decisions": 600_000_000, "eval_every": 100,
                       "checkpoint_every": 25, "magnet_coef": 0.0, "magnet_every": 0,
                       "league_mix": "self:0.4,snapshot:0.2,rule:0.2,equity:0.2",
                       "learning_rate": ps.PROBE_LEARNING_RATE}


def test_args_round_trip_through_json(tmp_path) -> None:
    args = _tiny(tmp_path, "j")
    d = json.loads(json.dumps(args.to_dict()))
    assert ps.make_args("tiny", **{**d, "hidden": tuple(d["hidden"])}) == args


def test_ship_agent_writes_weights_card_and_curve(tmp_path, capsys) -> None:
    ps.train(_tiny(tmp_path, "run"), log=lambda *a: None)
    dest, curve = tmp_path / "ship", tmp_path / "curve.png"
    ship_command.main([str(tmp_path / "run"), "--policy", "best_policy.pt", "--hands", "12", "--games", "4",
                     "--dest", str(dest), "--curve", str(curve)])
    assert curve.is_file()
    blob = load_policy_file(dest / "ppo.pt")
    rows = blob["meta"]["evaluation"]
    assert [(r["play"], r["opponent"]) for r in rows] == (
        [("sampled", s) for s in ship_agent.EVAL_OPPONENTS] + [("greedy", "rule"), ("greedy", "equity")])
    card = (dest / "ppo.md").read_text()
    for r in rows:                                    # every evaluation row is in the card, with its figure
        assert f"| {r['play']} | {r['opponent']} | 12 | {r['stones']:+.3f} |" in card
    assert "--policy best_policy.pt" in card and "the run's `best_policy.pt`" in card
    _plays_legal(make_agent(str(dest / "ppo.pt")))
    (dest / "ppo.md").write_text("stale")
    ship_command.main(["unused", "--card-only", "--dest", str(dest)])     # the card again, from the stored meta
    assert (dest / "ppo.md").read_text() == card
    with pytest.raises(SystemExit):
        ship_command.main([str(tmp_path / "nothing")])
    assert "does not exist" in capsys.readouterr().err


def test_ship_agent_cards_the_probes_of_the_shipped_weights_only(tmp_path, capsys) -> None:
    from agents.policy import parameters_digest

    ps.train(_tiny(tmp_path, "run"), log=lambda *a: None)
    dest = tmp_path / "ship"
    ship_command.main([str(tmp_path / "run"), "--hands", "8", "--games", "2", "--dest", str(dest),
                       "--curve", str(tmp_path / "c.png")])
    shipped = load_policy_file(dest / "ppo.pt")
    digest = parameters_digest(build_net(shipped, dest / "ppo.pt"))

    def probe(stones: float, start: str, seed: int, sha: str = digest) -> dict:
        gain = {"stones": stones, "stones_lo": stones - 0.1, "stones_hi": stones + 0.1, "win": 0.5 + stones / 10,
                "win_lo": 0.45, "win_hi": 0.6}
        return {"agent": "ppo", "learner_decides": "all", "warm_start": start, "seed": seed, "gain": gain,
                "gain_greedy": {**gain, "stones": stones + 0.2}, "trained": {"decisions": 80_000_000},
                "frozen": {"parameters_sha256": sha}, "command": f"mus exploit ppo --starts {start} --seed {seed}"}

    seeds = tmp_path / "exploit_seeds.json"
    seeds.write_text(json.dumps({"results": [probe(0.7, "equity", 0), probe(1.25, "equity", 1)]}))
    one = tmp_path / "exploit.json"
    one.write_text(json.dumps(probe(0.4, "agent", 0)))
    ship_command.main(["unused", "--card-only", "--dest", str(dest), "--exploit", str(seeds), "--exploit", str(one)])
    card = (dest / "ppo.md").read_text()
    assert "| equity | 1 | 80,000,000 | +1.250 | [+1.150, +1.350] | +1.450 | 0.625 |" in card
    assert "| agent | 0 | 80,000,000 | +0.400 |" in card
    assert "Largest gain **+1.250** stones/hand (equity start, seed 1)" in card and "lower bound" in card
    assert "- `mus exploit ppo --starts agent --seed 0`" in card
    after = load_policy_file(dest / "ppo.pt")               # the probes are stored, the weights unchanged
    assert after["meta"]["exploitability"]["max"]["stones"] == 1.25
    assert all(torch.equal(after["model"][k], v) for k, v in shipped["model"].items())
    # the card is rebuilt from the file alone
    (dest / "ppo.md").write_text("stale")
    ship_command.main(["unused", "--card-only", "--dest", str(dest)])
    assert (dest / "ppo.md").read_text() == card
    # a probe of other weights, or a file that is no probe report, is refused and nothing changes
    other = tmp_path / "other.json"
    other.write_text(json.dumps(probe(3.0, "equity", 2, sha="0" * 64)))
    for bad, says in ((other, "played other weights"), (tmp_path / "run" / "args.json", "not a probe report")):
        with pytest.raises(SystemExit):
            ship_command.main(["unused", "--card-only", "--dest", str(dest), "--exploit", str(bad)])
        assert says in capsys.readouterr().err
        assert (dest / "ppo.md").read_text() == card
        assert load_policy_file(dest / "ppo.pt")["meta"]["exploitability"]["max"]["stones"] == 1.25


def test_a_shipped_agent_card_compares_it_with_the_agent_it_replaced(tmp_path) -> None:
    """Shipping over an agent keeps that agent's figures in ``meta["previous"]`` and the card compares the two;
    shipping the same weights again keeps the comparison with the older agent, not with itself."""
    ps.train(_tiny(tmp_path, "a"), log=lambda *a: None)
    ps.train(_tiny(tmp_path, "b", seed=5), max_updates=2, log=lambda *a: None)          # b: stopped, resumed
    ps.train(_tiny(tmp_path, "b", seed=5), resume=True, log=lambda *a: None, run_info={"command": "again"})
    dest = tmp_path / "ship"

    def ship(run: str) -> str:
        ship_command.main([str(tmp_path / run), "--hands", "8", "--games", "2", "--dest", str(dest),
                           "--curve", str(tmp_path / "c.png")])
        return (dest / "ppo.md").read_text()

    first = ship("a")
    assert "Compared with the agent it replaced" not in first and "a lance's stake at 40" in first
    old = load_policy_file(dest / "ppo.pt")["meta"]["evaluation"]
    card = ship("b")
    new = load_policy_file(dest / "ppo.pt")["meta"]
    assert json.dumps(new["previous"]["evaluation"]) == json.dumps(old)          # (json: a p-value may be NaN)
    assert json.dumps(new["evaluation"]) != json.dumps(old)
    row = {(r["play"], r["opponent"]): r for r in new["evaluation"]}
    for r in old:
        now = row[(r["play"], r["opponent"])]
        assert (f"| {r['play']} vs {r['opponent']}: stones/hand, game win rate | {r['stones']:+.3f}, {r['win']:.3f} "
                f"| {now['stones']:+.3f}, {now['win']:.3f} |") in card
    assert "| largest probe gain, stones/hand | not probed | not probed |" in card
    assert "- Stopped and resumed (exactly, from its checkpoint) 1 time(s): `again` at update 2" in card
    assert ship("b") == card                              # the same weights again: still compared with a's
    (dest / "ppo.md").write_text("stale")
    ship_command.main(["unused", "--card-only", "--dest", str(dest)])
    assert (dest / "ppo.md").read_text() == card


def test_a_shipped_agent_card_gives_its_lineage_of_warm_starts(tmp_path, capsys) -> None:
    """``--ancestor`` (any order) puts every stage of a chain of warm starts in the card, oldest first, with the
    total budget; an ancestor outside the chain, or a chain with a missing link, is refused and nothing is
    written."""
    quiet = dict(log=lambda *a: None)
    ps.train(_tiny(tmp_path, "a", warm_start="none"), **quiet)
    ps.train(_tiny(tmp_path, "b", seed=2, warm_start=str(tmp_path / "a" / "policy.pt")), **quiet)
    ps.train(_tiny(tmp_path, "c", seed=3, warm_start=str(tmp_path / "b" / "policy.pt")), **quiet)
    ps.train(_tiny(tmp_path, "x", seed=9, warm_start="none"), **quiet)
    # each stage's wall time, fixed (the runs' own clocks depend on the machine): 20.4 s is 0.34 minutes, so
    # the rows rounded alone would give 0.3 + 0.3 + 0.3 = 0.9 against an exact total of 1.02 -> 1.0
    for policy in (tmp_path / r / n for r in "abc" for n in ("policy.pt", "best_policy.pt")):
        blob = load_policy_file(policy)
        save_file(policy, {**blob, "meta": {**blob["meta"], "seconds": 20.4}})
    dest, common = tmp_path / "ship", ["--hands", "8", "--games", "2", "--curve", str(tmp_path / "c.png")]

    def ship(*ancestors: str) -> None:
        ship_command.main([str(tmp_path / "c"), *common, "--dest", str(dest),
                           *[w for a in ancestors for w in ("--ancestor", str(tmp_path / a))]])

    ship("b", "a")
    meta = load_policy_file(dest / "ppo.pt")["meta"]
    stages = meta["lineage"]
    assert [s["warm_start"] for s in stages] == ["none", str(tmp_path / "a" / "policy.pt"),
                                                 str(tmp_path / "b" / "policy.pt")]
    blobs = [load_policy_file(tmp_path / r / "policy.pt")["meta"] for r in "abc"]
    assert [s["decisions"] for s in stages] == [b["decisions"] for b in blobs]
    card = (dest / "ppo.md").read_text()
    assert "## Lineage" in card and "(see the lineage below)" in card
    total = sum(b["decisions"] for b in blobs)
    assert f"Total: **{total:,} decisions, 1.0 minutes**" in card
    section = card.split("## Lineage")[1].split("\n## ")[0]
    row_minutes = [float(line.rstrip(" |").rsplit("|", 1)[1]) for line in section.splitlines()
                   if line.startswith("| ") and line[2].isdigit()]
    assert len(row_minutes) == 3 and round(sum(row_minutes), 1) == 1.0, row_minutes   # rows add up to the total
    assert section.index("\n| 1 | ") < section.index("\n| 2 | ") < section.index("\n| 3 | ")
    assert "\n| 4 | " not in section
    assert f"| `{tmp_path / 'b' / 'policy.pt'}` |" in card and "| none (from scratch) |" in card
    assert f"--ancestor {tmp_path / 'b'} --ancestor {tmp_path / 'a'}" in meta["ship_command"]
    # the learning curve is every stage's evaluations, one after the other
    evals, starts = ship_agent.lineage_evals(tmp_path / "c", stages)
    rows = [_rows(tmp_path / r / "eval.csv") for r in "abc"]
    assert len(evals) == sum(map(len, rows)) and len(starts) == 2
    assert starts[0][0] == blobs[0]["decisions"] and starts[1][0] == blobs[0]["decisions"] + blobs[1]["decisions"]
    assert evals[len(rows[0])]["decisions"] == starts[0][0] + float(rows[1][0]["decisions"])
    assert [e["decisions"] for e in evals] == sorted(e["decisions"] for e in evals)
    assert (tmp_path / "c.png").stat().st_size > 0
    # the card is rebuilt from the stored meta alone; card-only adds a lineage to a file shipped without one
    (dest / "ppo.md").write_text("stale")
    ship_command.main(["unused", "--card-only", "--dest", str(dest)])
    assert (dest / "ppo.md").read_text() == card
    plain = tmp_path / "plain"
    ship_command.main([str(tmp_path / "c"), *common, "--dest", str(plain)])
    assert "## Lineage" not in (plain / "ppo.md").read_text()
    ship_command.main(["unused", "--card-only", "--dest", str(plain), "--ancestor", str(tmp_path / "a"),
                       "--ancestor", str(tmp_path / "b")])
    assert load_policy_file(plain / "ppo.pt")["meta"]["lineage"] == stages
    # refusals: a run outside the chain, a missing link, a folder without a policy; nothing changes
    before = (dest / "ppo.pt").read_bytes(), (dest / "ppo.md").read_text()
    for ancestors, says in ((("b", "a", "x"), "not in the warm-start chain"), (("a",), "no --ancestor holds"),
                            (("b", "nothing"), "no policy.pt in it")):
        with pytest.raises(SystemExit):
            ship(*ancestors)
        assert says in capsys.readouterr().err
        assert ((dest / "ppo.pt").read_bytes(), (dest / "ppo.md").read_text()) == before


def test_the_card_compares_probe_by_probe_and_the_lineage_budget(tmp_path) -> None:
    """The before/after section: each probe (start, seed) that both agents had, the whole lineage's budget, and
    the from-scratch time to beat ``rule``; a probe only one of them had gets no row."""
    def probes(*gains: tuple[str, int, float]) -> dict:
        rows = [{"start": st, "seed": sd, "stones": g, "win": 0.5 + g / 10, "decisions": 80_000_000}
                for st, sd, g in gains]
        best = max(rows, key=lambda r: r["stones"])
        return {"probes": rows, "max": best, "max_win": best, "n": len(rows)}

    row = {"play": "sampled", "opponent": "rule", "stones": 1.5, "win": 0.64}
    stage = {"warm_start": "none", "decisions": 600, "minutes": 90.0, "beats_rule": {"minutes": 12.4}}
    meta = {"args": {"warm_start": "/x/d.pt"}, "decisions": 100, "minutes": 30.0,
            "lineage": [stage, {**stage, "warm_start": "/x/c.pt", "decisions": 100, "minutes": 30.25}],
            "exploitability": probes(("equity", 0, 0.75), ("agent", 1, 0.93), ("agent", 7, 0.5)),
            "previous": {"warm_start": "equity", "decisions": 160, "minutes": 89.0,
                         "evaluation": [{**row, "stones": 1.39, "win": 0.647}],
                         "exploitability": probes(("equity", 0, 2.33), ("agent", 1, 1.58))}}
    lines = ship_card.compare_lines(meta, [row])
    assert "| probe from the equity start, seed 0: gain, game win rate | +2.330, 0.733 (80,000,000 decisions) | " \
           "+0.750, 0.575 (80,000,000 decisions) |" in lines
    assert any(x.startswith("| probe from the agent start, seed 1:") and "+1.580" in x and "+0.930" in x
               for x in lines)
    assert not any("seed 7" in x for x in lines)
    assert any("| 700 decisions, 120.2 minutes in 2 stages" in x for x in lines)
    assert "| from scratch, first ahead of rule with p < 0.01 | warm-started | 12.4 minutes (stage 1) |" in lines
    assert "| sampled vs rule: stones/hand, game win rate | +1.390, 0.647 | +1.500, 0.640 |" in lines
    # a recipe's policy over a lineage's: each side's whole budget, the replaced one's as it was when shipped
    recipe = {"decisions": 161_876_224, "probe_decisions": 597_557_248, "minutes": 122.07,
              "first_warm_start": "/x/e.pt"}
    over = {**meta, "lineage": None, "recipe": recipe,
            "previous": {**meta["previous"], "made": ship_agent.made_text(meta)}}
    assert ("| training | 700 decisions, 120.2 minutes in 2 stages; first warm start none | 161,876,224 decisions of "
            "training and 597,557,248 of best responses, 122.1 minutes in one `mus league` command; first warm "
            "start /x/e.pt |") in ship_card.compare_lines(over, [row])


def test_a_recipe_card_says_which_ppo_its_rounds_played() -> None:
    """A recipe whose rivals included ``ppo`` measured its rounds against the agent shipped then: the card says so,
    and that it is the agent replaced when the digests agree; without ``ppo`` among the rivals, nothing is said."""
    meta = {"recipe": {"rivals": {"ppo": "ab" * 32, "ordago": None}}, "previous": {"parameters_sha256": "ab" * 32}}
    assert ship_card.rival_ppo_text(meta).endswith("when the recipe ran, the one this policy replaced")
    meta["previous"]["parameters_sha256"] = "cd" * 32
    assert ship_card.rival_ppo_text(meta).endswith("`ppo` there is the agent shipped when the recipe ran")
    assert ship_card.rival_ppo_text({"recipe": {"rivals": {"psro_e": "ab" * 32}}}) == ""
    assert ship_card.rival_ppo_text({"recipe": {}}) == ""


def test_first_beats_is_the_first_evaluation_ahead_with_p_below_alpha(tmp_path) -> None:
    """The from-scratch figure of a lineage: the first row of eval.csv ahead of ``rule`` with p < 0.01 in stones
    and in games (a row ahead in one only does not count)."""
    path = tmp_path / "eval.csv"
    head = "update,decisions,rule_stones,rule_stones_lo,rule_stones_hi,rule_win,rule_win_lo,rule_win_hi,minutes"
    rows = ["1,100,-0.5,-0.7,-0.3,0.45,0.42,0.48,1.0",
            "2,200,0.3,0.1,0.5,0.52,0.49,0.55,2.0",           # ahead in stones (p ~ 0.003), not in games
            "3,300,0.3,0.05,0.55,0.56,0.53,0.59,3.0",         # p ~ 0.019 in stones: not yet
            "4,400,0.4,0.2,0.6,0.56,0.53,0.59,4.0",           # both p < 0.01
            "5,500,0.9,0.7,1.1,0.6,0.57,0.63,5.0"]
    path.write_text("\n".join([head, *rows]) + "\n")
    got = ship_agent.first_beats(path)
    assert got == {"minutes": 4.0, "decisions": 400.0, "stones": 0.4, "win": 0.56}
    assert ship_agent.first_beats(path, alpha=0.05)["minutes"] == 3.0
    path.write_text("\n".join([head, *rows[:3]]) + "\n")
    assert ship_agent.first_beats(path) is None
    assert ship_agent.first_beats(path, opponent="equity") is None          # no such columns
    assert ship_agent.first_beats(tmp_path / "missing.csv") is None


def test_snapshot_bank_equals_each_snapshot_net() -> None:
    torch.manual_seed(0)
    nets = [PolicyNet(hidden=(16, 8)) for _ in range(3)]
    bank = SnapshotBank([n.state_dict() for n in nets])
    rng = np.random.default_rng(0)
    env = VectorMusEnv(40, seed=1)
    obs, mask = env.reset()
    which = rng.integers(0, 3, len(obs))
    which[:3] = 2                                   # uneven groups, one snapshot possibly absent from a step
    probs = bank.probabilities(obs, mask, which)
    for k, net in enumerate(nets):
        rows = np.flatnonzero(which == k)
        if rows.size:
            expected = TorchPolicyAgent(net).probabilities(obs[rows], mask[rows])
            np.testing.assert_allclose(probs[rows], expected, rtol=1e-5, atol=1e-6)
    assert (probs[mask == 0] == 0).all()


# ----------------------------------------------------------------------------------------------------
# training with señas (signals truthful / free)
def test_signals_default_is_off_and_the_config_unchanged() -> None:
    args = ps.Args()
    assert (args.signals, args.signal_intercept_p) == ("off", 0.0)
    assert args.game_config() == MusConfig(max_mus_rounds=6, max_stake=40)   # the config before señas
    assert args.game_config(training=False) == MusConfig()
    on = ps.make_args("tiny", signals="truthful", signal_intercept_p=0.3)
    for training in (True, False):
        cfg = on.game_config(training=training)
        assert (cfg.signals, cfg.signal_intercept_p) == ("truthful", 0.3)


def test_bad_signal_args_are_clear_errors(capsys) -> None:
    with pytest.raises(ValueError, match="Args.signals must be one of off, truthful, free"):
        ps.make_args("tiny", signals="loud")
    with pytest.raises(ValueError, match=r"signal_intercept_p must be a number in \[0, 1\]"):
        ps.make_args("tiny", signals="free", signal_intercept_p=1.5)
    with pytest.raises(ValueError, match="no effect with signals off"):
        ps.make_args("tiny", signal_intercept_p=0.2)
    for argv in (["--signals", "loud"], ["--signal-intercept-p", "0.5"]):
        with pytest.raises(SystemExit) as e:
            train_command.main(["--preset", "tiny", *argv])
        assert e.value.code == 2
        assert "signal" in capsys.readouterr().err


def _plays_signals_game(agent, signals: str) -> int:
    """``agent`` at all four seats of a MusGame with señas: legal moves only; returns the signs it made."""
    cfg = MusConfig(signals=signals, max_mus_rounds=4)
    rng = np.random.default_rng(0)
    signs = 0
    for seed in (5, 6):
        g = MusGame(cfg, seed=seed)
        for _ in range(400):
            if g.is_over:
                break
            mask = g.legal_action_mask()
            assert mask.shape == (47,)
            a = agent.act(g.observe(g.current_player), mask, rng)
            assert a in g.legal_actions()
            signs += a >= NUM_ACTIONS
            g.step(a)
    venv = VectorMusEnv(32, cfg, seed=3)
    obs, mask = venv.reset()
    for _ in range(40):
        a = agent.act_batch(obs, mask, rng)
        assert (mask[np.arange(32), a] == 1).all()
        obs, mask, *_ = venv.step(a)
    return signs


def test_signals_run_writes_a_477_47_policy_that_signs_and_resumes_only_with_its_signals(tmp_path, capsys) -> None:
    out = tmp_path / "free"
    base = ["--preset", "tiny", "--out", str(out), "--progress", "false", "--total-decisions", str(32 * 8 * 2)]
    train_command.main([*base, "--signals", "free", "--signal-intercept-p", "0.25"])
    for name in ("policy.pt", "best_policy.pt", "checkpoint.pt"):
        blob = load_policy_file(out / name)
        assert (blob["arch"]["obs_dim"], blob["arch"]["num_actions"]) == (477, 47), name
        assert (blob["config"]["signals"], blob["config"]["signal_intercept_p"]) == ("free", 0.25), name
    rows = list(csv.DictReader(open(out / "eval.csv")))
    assert rows and all(np.isfinite(float(r["rule_stones"])) for r in rows)   # evaluated in the signals game
    agent = make_agent(str(out / "policy.pt"))
    assert _plays_signals_game(agent, "free") > 0
    assert _plays_signals_game(make_agent(str(out / "policy.pt"), greedy=True), "truthful") > 0
    capsys.readouterr()
    # resuming with other señas settings fails and says which ones the run needs (a flag not given takes the
    # run's own value: --signals free alone is the run's game)
    for other in (["--signals", "off"], ["--signals", "free", "--signal-intercept-p", "0"],
                  ["--signals", "truthful", "--signal-intercept-p", "0.25"]):
        with pytest.raises(SystemExit) as e:
            train_command.main([*base, "--resume", *other])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "trained with signals='free', signal_intercept_p=0.25" in err and "477 observations" in err, err
        assert "resume with --signals free --signal-intercept-p 0.25" in err, err
    with pytest.raises(ps.CheckpointError, match="now signals='off'"):
        ps.start(ps.make_args("tiny", out=str(out), progress=False, total_decisions=32 * 8 * 2), resume=True)
    # with the same settings it resumes (a larger budget: one more update)
    train_command.main([*base[:-1], str(32 * 8 * 3), "--resume", "--signals", "free", "--signal-intercept-p", "0.25"])
    assert len(list(csv.DictReader(open(out / "metrics.csv")))) == 3
    # a policy trained with señas cannot sit in a run without them; one trained without plays a signals run
    with pytest.raises(ValueError, match="trained with señas"):
        ps.start(ps.make_args("tiny", out=str(tmp_path / "off"), progress=False,
                                league_mix=f"{out / 'policy.pt'}:1"))
    opp = frozen_agent("ppo", MusConfig(signals="free"))
    obs, mask = VectorMusEnv(4, MusConfig(signals="free"), seed=1).reset()
    assert (mask[np.arange(4), opp.act_batch(obs, mask, np.random.default_rng(0))] == 1).all()


def test_sign_info_rule_signs_carry_information_random_ones_do_not(tmp_path, capsys) -> None:
    from experiments.commands import sign_info as sign_info_command
    from experiments.evaluate import sign_info

    cfg = MusConfig(signals="free", max_mus_rounds=6)
    path = tmp_path / "rule.json"
    sign_info_command.main(["rule", "--games", "60", "--seed", "0", "--shuffles", "5", "--out", str(path)])
    assert "MI plug-in" in capsys.readouterr().out
    rule = json.loads(path.read_text())
    rnd = sign_info.sign_mutual_information("random", cfg, games=1000, seed=1, shuffles=10)
    for w in ("mus", "grande"):
        r, x = rule["windows"][w], rnd["windows"][w]
        assert r["n"] > 500 and x["n"] > 2000, (w, r["n"], x["n"])
        # a truthful signer: its token is (nearly) a function of the hand class and of its wish to discard
        assert r["mi_miller_madow"] > x["mi_miller_madow"] + 1.0, (w, r, x)
        assert r["shuffled_plugin"] < 0.25 < r["mi_plugin"] - 1.0
        # a random signer: nothing beyond the noise floor, and about 0 once the bias is corrected
        assert abs(x["mi_plugin"] - x["shuffled_plugin"]) < 4 * x["shuffled_plugin_sd"] + 0.01, (w, x)
        assert abs(x["mi_miller_madow"]) < 0.04 < x["mi_plugin"], (w, x)
    assert rule["windows"]["grande"]["mi_miller_madow"] > 2.5
    silent = sign_info.sign_mutual_information("rule-nosigns", cfg, games=20, seed=0, shuffles=2)
    assert silent["windows"]["grande"]["token_counts"] == {"NONE": silent["windows"]["grande"]["n"]}
    assert silent["windows"]["grande"]["mi_plugin"] == 0.0
    with pytest.raises(ValueError, match="needs a game with señas"):
        sign_info.sign_mutual_information("rule", MusConfig(), games=2, seed=0)


def test_mutual_information_estimates_known_values() -> None:
    from experiments.evaluate.sign_info import mutual_information

    x = np.repeat(np.arange(4), 50)
    same = mutual_information(x, x)
    assert same["mi_plugin"] == pytest.approx(2.0) and same["h_x"] == pytest.approx(2.0)
    assert same["mi_miller_madow"] == pytest.approx(2.0 + 3 / (2 * 200 * np.log(2)))
    grid = mutual_information(np.repeat(np.arange(4), 8), np.tile(np.arange(8), 4))     # exactly independent
    assert grid["mi_plugin"] == pytest.approx(0.0, abs=1e-12)
    assert grid["mi_miller_madow"] == pytest.approx((3 + 7 - 31) / (2 * 32 * np.log(2)))
    half = mutual_information([0, 0, 1, 1], [0, 1, 0, 0])            # H(x)=1, H(y)=0.811, H(x,y)=1.5
    assert half["mi_plugin"] == pytest.approx(1.0 + 0.8112781 - 1.5, abs=1e-6)


def test_cloning_data_is_stored_coded_and_read_back_bit_for_bit() -> None:
    """The behaviour cloning's observations: one byte per entry (a quarter of float32), decoded exactly; past 256
    distinct values the store falls back to float32 rows, keeping what it held."""
    from experiments.train.warm_start import CodedObservations

    env = VectorMusEnv(64, MusConfig(max_mus_rounds=6), seed=3)
    obs, _ = env.reset()
    steps = 30
    store = CodedObservations(steps * 64, obs.shape[1])
    raw = []
    for t in range(steps):
        store.put(slice(t * 64, (t + 1) * 64), obs)
        raw.append(obs.copy())
        obs, *_ = env.step(env.sample_actions(t))
    raw = np.concatenate(raw)
    assert store.codes is not None and store.floats is None and 2 <= len(store.values) <= 256
    assert store.nbytes < raw.nbytes / 3
    idx = np.random.default_rng(0).permutation(len(raw))[:500]
    assert np.array_equal(store.take(idx).numpy().view(np.uint32), raw[idx].view(np.uint32))    # the same bits
    # many distinct values: the store becomes plain float32, rows stored before included
    noisy = np.random.default_rng(1).random((64, obs.shape[1]), dtype=np.float32)
    store.put(slice(0, 64), noisy)
    assert store.codes is None and store.floats is not None
    both = np.concatenate([noisy, raw[64:]])
    assert np.array_equal(store.take(np.arange(len(raw))).numpy(), both)
    # so does a store whose very first rows hold more than 256 values
    fresh = CodedObservations(128, obs.shape[1])
    fresh.put(slice(0, 64), noisy)
    fresh.put(slice(64, 128), raw[:64])
    assert fresh.codes is None and np.array_equal(fresh.take(np.arange(128)).numpy(), np.concatenate([noisy, raw[:64]]))


def test_the_exploiter_signal_is_its_margin_averaged_over_recent_updates() -> None:
    from experiments.train.report import exploiter_signal

    history = [{"decisions": 100 * k, "minutes": 0.1 * k, "exploiter_stones_per_hand": v}
               for k, v in enumerate([1.0, 3.0, float("nan"), 5.0, 7.0], start=1)]
    d, m, y = exploiter_signal(history, window=2)
    assert d.tolist() == [100, 200, 400, 500] and np.allclose(m, [0.1, 0.2, 0.4, 0.5])
    assert y.tolist() == [1.0, 2.0, 4.0, 6.0]                # NaN updates (no exploiter games) left out
    assert all(len(a) == 0 for a in exploiter_signal([{"decisions": 1, "minutes": 0.0}]))


#: A tiny run's weights (``make_args("tiny", total_decisions=1536)``, seed 0, the equity warm start), recorded on the
#: project's machines: first (2026-12-01, an AMD EPYC with AVX-512) before the speed and memory work of issue 23
#: (compiled baselines, coded cloning data, the device path) and unchanged by it; then (2026-12-06) on an Intel Xeon
#: with AVX-512, where the same torch build gives other weights (MKL takes other code paths on another vendor's CPU).
#: Floating point differs across CPU vendors, instruction sets and torch builds, so the digests are compared only where
#: all three match a recording. ``weights`` is that run without the stake cap (``max_stake=0``, as before it existed);
#: ``weights_capped`` the same run with the default cap of 40, which the tiny run reaches.
PINNED_TINY_RUNS = (
    {"torch": "2.13.0+cpu", "cpu_capability": "AVX512", "cpu_vendor": "AuthenticAMD", "weights": "868356c2cee4be05",
     "weights_capped": "8ce87f5b23f72f88"},
    {"torch": "2.13.0+cpu", "cpu_capability": "AVX512", "cpu_vendor": "GenuineIntel", "weights": "33176fefeb9d4140",
     "weights_capped": "5d64522509186cf5"},
)


def test_a_tiny_run_is_bit_for_bit_the_recorded_one(tmp_path) -> None:
    import hashlib

    import torch

    from experiments.train.report import cpuinfo_field

    here = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "cpu_vendor": cpuinfo_field("vendor_id") or "unknown"}
    pinned = next((r for r in PINNED_TINY_RUNS if all(r[k] == v for k, v in here.items())), None)
    if pinned is None:
        pytest.skip(f"recorded on {[{k: r[k] for k in here} for r in PINNED_TINY_RUNS]}, this machine is {here}: "
                    "floating point may differ")
    for cap, key in ((0, "weights"), (40, "weights_capped")):
        t = ps.train(ps.make_args("tiny", out=str(tmp_path / f"run{cap}"), progress=False,
                                  total_decisions=32 * 8 * 6, max_stake=cap), log=lambda *a: None)
        h = hashlib.sha256()
        for v in t.net.state_dict().values():
            h.update(v.cpu().numpy().tobytes())
        assert h.hexdigest()[:16] == pinned[key], cap


def test_the_shipped_card_is_the_one_its_weights_make(tmp_path) -> None:
    """agents/data/ppo.md is what ``mus ship-agent --card-only`` writes from agents/data/ppo.pt's meta (no
    hand-edited or stale card), its lineage ends with these very weights and starts from a random network, and the
    agent it replaced is described by its figures (``meta["previous"]``: its weights are not kept)."""
    from agents.policy import parameters_digest

    data = Path(__file__).resolve().parents[1] / "agents" / "data"
    blob = load_policy_file(data / "ppo.pt")
    meta = blob["meta"]
    digest = parameters_digest(build_net(blob, data / "ppo.pt"))
    written = ship_agent.write_card(tmp_path / "ppo.md", meta, meta["evaluation"]).read_text()
    assert written == (data / "ppo.md").read_text()
    # its run folders (runs/X, relative) are said not to be kept, and its stages to have been run by hand
    assert "runs/candE" in written and "## What is kept" in written and "The stages were run by hand" in written
    assert meta["lineage"][-1]["parameters_sha256"] == digest
    assert meta["lineage"][0]["warm_start"] == "none"
    previous = meta["previous"]
    assert len(previous["parameters_sha256"]) == 64 and previous["parameters_sha256"] != digest
    assert {r["opponent"] for r in previous["evaluation"]} >= {"rule", "equity"}
    _plays_legal(make_agent("ppo"))


def _ev(update: int, rule: float, equity: float, half: float = 0.2) -> dict[str, float]:
    row: dict[str, float] = {"update": update}
    for o, m in (("rule", rule), ("equity", equity)):
        row |= {f"{o}_stones": m, f"{o}_stones_lo": m - half, f"{o}_stones_hi": m + half}
    return row


def test_policy_pt_is_the_best_policy_when_the_end_fell_below_it(tmp_path) -> None:
    """The stated rule (checkpoint.end_fell): the best evaluation's smallest margin beats the end's by more than the
    end's 95% CI half-width -> policy.pt is the best policy and last_policy.pt the last; within the CI, the last."""
    from types import SimpleNamespace

    from experiments.train.checkpoint import end_fell, settle_policy

    def run(evals: list[dict[str, float]]) -> SimpleNamespace:
        out = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        out.mkdir()
        (out / "policy.pt").write_bytes(b"last")
        (out / "best_policy.pt").write_bytes(b"best")
        return SimpleNamespace(out=out, evals=evals, args=SimpleNamespace(eval_opponents="rule,equity"))

    lines: list[str] = []
    fell = run([_ev(1, 1.0, 0.2), _ev(2, 1.9, 1.0), _ev(3, 1.2, 0.6)])     # best min 1.0, end min 0.6 (+0.2 CI)
    assert settle_policy(fell, lines.append)["update"] == 2
    assert (fell.out / "policy.pt").read_bytes() == b"best" and (fell.out / "last_policy.pt").read_bytes() == b"last"
    assert "best evaluation (update 2" in lines[0] and "last_policy.pt" in lines[0]
    held = run([_ev(1, 1.0, 0.2), _ev(2, 1.9, 1.0), _ev(3, 1.8, 0.85)])    # 1.0 vs 0.85 + 0.2: within the CI
    assert settle_policy(held, lines.append) is None and len(lines) == 1
    assert (held.out / "policy.pt").read_bytes() == b"last" and not (held.out / "last_policy.pt").exists()
    assert end_fell(_ev(2, 1.9, 1.0), _ev(3, 1.2, 0.6), ["rule", "equity"])
    assert not end_fell(_ev(2, 1.9, 1.0), _ev(3, 1.2, 0.6, half=0.5), ["rule", "equity"])


def test_a_run_told_one_thread_steps_its_engine_on_one_thread(tmp_path) -> None:
    """The recipe's parallel probes run with ``torch_threads=1``: their engines must not start a second numba
    thread each (two such runs on 2 cores stepped half as fast)."""
    import numba
    s = ps.start(_tiny(tmp_path, "one", torch_threads=1), log=lambda *a: None)
    assert s.env.num_threads == 1
    every = ps.make_args("tiny", torch_threads=0)
    assert ps.engine_threads_for(every) == min(ps.threads_for(every), numba.config.NUMBA_NUM_THREADS)


def test_a_one_thread_run_keeps_torch_on_one_thread_through_its_warm_start(tmp_path) -> None:
    """numba's OpenMP pool, when a threaded engine step first starts it, sets OpenMP's thread count, which torch
    reads: a run told one thread that cloned ``equity`` on a threaded engine went on with two torch threads (10x
    slower next to another job). In a fresh process with a pool of two, a tiny run with the warm start on 64
    tables (a threaded size) must end with torch on one thread."""
    import os
    import subprocess
    import sys

    script = ("import torch\n"
              "from experiments.train import ppo\n"
              f"a = ppo.make_args('tiny', out={str(tmp_path / 'run')!r}, progress=False, torch_threads=1,\n"
              "                   num_tables=64, warm_start='equity', bc_decisions=64 * 4)\n"
              "ppo.train(a, log=lambda *x: None)\n"
              "print('torch threads', torch.get_num_threads())\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NUMBA_NUM_THREADS": "2"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "torch threads 1" in out.stdout, out.stdout


def test_the_learning_curve_names_a_long_opponent_spec_shortly(tmp_path: Path) -> None:
    import warnings

    from experiments.train.report import learning_curve

    members = ("psro_e", "psro_h", "psro_i", "distill_n", "refine_ac", "refine_y", "recipe_ad", "recipe_ae")
    team = "team:" + "+".join(f"runs/members/{m}/policy.pt=1" for m in members)
    evals = [{"decisions": d, "minutes": d / 1e6, f"{team}_stones": 0.1 * k, f"{team}_stones_lo": 0.0,
              f"{team}_stones_hi": 0.2, f"{team}_win": 0.5, f"{team}_win_lo": 0.4, f"{team}_win_hi": 0.6}
             for k, d in enumerate((1e6, 2e6, 3e6))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = learning_curve(evals, tmp_path / "curve.png", [team])
    assert path.stat().st_size > 1000
    assert not [str(w.message) for w in caught if "layout" in str(w.message).lower()]
