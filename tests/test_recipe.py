"""``mus league`` (experiments.population.recipe): the shipped agent's recipe, run at the tiny preset.

* A tiny recipe of two rounds end to end: the best responses of each round join the population of the next
  meta-game and the league of the next training, and the policy kept is the one whose largest probe gain is the
  smallest (a stub probe makes that the first round: keeping the last would fail).
* The Nash mixture of the population: rock-paper-scissors gives the uniform mixture, a dominated agent gets nothing
  and leaves the league.
* A recipe stopped in the middle of a best response, then in the middle of a round's training, resumes to exactly
  the results of one never stopped; a finished recipe made longer (``--resume --rounds N``) ends as one run with N
  rounds from the start.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.policy import load_policy_file  # noqa: E402
from experiments.evaluate.ratings import nash_mixture  # noqa: E402
from experiments.population import recipe as rc  # noqa: E402
from experiments.population import recipe_run, recipe_state  # noqa: E402
from experiments.population.recipe_run import run_recipe  # noqa: E402
from experiments.population.recipe_state import STATE_NAME  # noqa: E402
from experiments.population.ship_agent import read_recipe, write_card  # noqa: E402
from experiments.train import ppo  # noqa: E402
from experiments.train.session import TrainingInterrupted  # noqa: E402
from mus_env import MusConfig  # noqa: E402

QUIET = dict(log=lambda *a: None, progress=False)


def _stub_probe(gain_of: Callable[[str, str, dict[str, Any]], float]) -> Callable[..., dict[str, Any]]:
    """A probe for ``run_recipe(probe_fn=)`` that trains nothing: its best response is the target's own weights and
    its gain ``gain_of(spec, warm_start, kw)`` (``kw``: the probe's other arguments, ``out`` among them; 95% CI
    +-0.1), written to ``exploit.json`` as a probe's is."""
    def stub(spec: str, out: Path, warm_start: str, seed: int, log: Any, **kw: Any) -> dict[str, Any]:
        gain = gain_of(spec, warm_start, {**kw, "out": out})
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(spec, out / "policy.pt")
        g = {"stones": gain, "stones_lo": gain - 0.1, "stones_hi": gain + 0.1, "win": 0.5, "win_lo": 0.45,
             "win_hi": 0.55}
        r = {"agent": spec, "learner_decides": kw.get("learner_decides", "all"), "warm_start": warm_start, "seed": seed,
             "gain": g,
             "gain_greedy": g, "trained": {"decisions": kw["decisions"]}}
        (out / "exploit.json").write_text(json.dumps(r))
        return r
    return stub


def _round_of(spec: str) -> str:
    """``round1`` for ``OUT/round1/train/policy.pt`` (``distilled`` for the distilled stage's)."""
    return Path(spec).parent.parent.name


def _comparable(data: dict[str, Any]) -> str:
    """A recipe's results without its clocks and its folder."""
    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("minutes", "seconds", "session_seconds", "machine",
                                                                   "command")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x
    return json.dumps(clean(data["steps"]), sort_keys=True)


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("recipe") / "run"
    return out, run_recipe(rc.make_recipe("tiny"), out, **QUIET)


def test_each_round_trains_against_the_nash_shares_of_its_measured_payoff(straight) -> None:
    """A round's meta step holds the league to the population's Nash mixture: the shares it writes are those solved
    from the payoff it measured (rivals capped as stated), its league mix is the one those shares make, and the next
    training plays exactly that league mix (uniform shares, or a league mix from other shares, fail here)."""
    _, data = straight
    recipe = rc.make_recipe("tiny")
    metas = sorted(k for k in data["steps"] if k.endswith("/meta"))
    assert len(metas) == recipe.rounds
    for name in metas:
        meta = data["steps"][name]
        payoff = np.asarray(meta["payoff"])
        solved, _ = nash_mixture(payoff)
        assert np.allclose(meta["mixture"], solved, atol=1e-3), name
        assert solved.max() > 1 / len(solved) + 0.1, "a payoff whose Nash mixture is uniform cannot tell"
        shares = rc.cap_rivals(meta["specs"], payoff, np.asarray(meta["mixture"]), recipe)
        assert np.allclose(meta["shares"], shares, atol=1e-9), name
        assert meta["league_mix"] == rc.league_from_nash(meta["specs"], meta["shares"], recipe), name
        trained = data["steps"][name.replace("/meta", "/train")]
        assert trained["league_mix"] == meta["league_mix"], name


def test_a_tiny_recipe_runs_its_rounds_and_keeps_the_least_exploitable(straight) -> None:
    out, data = straight
    s = data["steps"]
    assert list(s) == ["round0/train", "round0/report", "round1/probes", "round1/meta", "round1/train",
                       "round1/report", "round2/probes", "round2/meta", "round2/train", "round2/report",
                       "final/probes", "keep", "card"]
    # the best responses of round 1 join round 2's population; every population holds the baselines and policies
    r1 = s["round1/probes"]["policies"]
    assert len(r1) == 2 and all(Path(p).is_file() for p in r1)
    assert s["round1/meta"]["specs"] == ["rule", "equity", "ordago", s["round0/train"]["policy"], *r1]   # a rival
    assert set(r1) <= set(s["round2/meta"]["specs"]) and s["round1/train"]["policy"] in s["round2/meta"]["specs"]
    # each round trains against its meta-game's league, from the previous policy
    assert s["round2/train"]["league_mix"] == s["round2/meta"]["league_mix"]
    args = json.loads((out / "round2" / "train" / "args.json").read_text())
    assert args["warm_start"] == s["round1/train"]["policy"] and args["magnet_every"] == 0
    # kept: the smallest largest gain among the probes of the next round (or the final ones)
    gains = [s[k]["max"]["stones"] for k in ("round1/probes", "round2/probes", "final/probes")]
    assert s["keep"]["gains"] == gains and s["keep"]["round"] == int(np.argmin(gains))
    kept = s["keep"]["round"]
    assert s["keep"]["digest"] == s[f"round{kept}/train"]["digest"]
    for name in ("policy.pt", "card.md", "card.json", "recipe.md", "recipe.png", STATE_NAME):
        assert (out / name).stat().st_size > 0, name
    table = (out / "recipe.md").read_text()
    assert f"| {kept} **kept** |" in table and table.count("\n| ") == 4       # the header and three rounds
    # every step's wall time, evaluations included, and their sum in the report
    assert list(data["step_seconds"]) == list(s) and all(v >= 0 for v in data["step_seconds"].values())
    assert "minutes of wall time, evaluations included (trainings" in table
    # every round reports its margin over the rival, as a column of its own
    assert all([row["opponent"] for row in s[f"round{r}/report"]["rows"]][:3] == ["rule", "equity", "ordago"]
               for r in range(3))
    assert "| vs rule | vs equity | vs ordago | vs previous round |" in table
    assert all("ordago:" in s[f"round{r}/train"]["league_mix"] for r in (1, 2))    # its floor in every league
    assert json.loads((out / STATE_NAME).read_text())["steps"]["keep"] == s["keep"]


def test_mus_ship_agent_ships_the_policy_a_recipe_kept_with_its_one_command_and_rounds(tmp_path: Path,
                                                                                        capsys) -> None:
    """``mus ship-agent RECIPE`` (a ``mus league --out`` folder, here moved elsewhere; stub probes make the middle
    round the one kept): the kept weights, the card with the recipe's command, wall time, budget and every row of
    its table, the training settings of the round kept (not the last's), and the rounds' curve; an unfinished
    recipe and ``--ancestor`` are refused before anything is written."""
    from agents.policy import build_net, load_policy_file, parameters_digest
    from experiments.commands import ship_agent as ship_command

    stub = _stub_probe(lambda spec, start, kw: {"round0": 0.9, "round1": 0.2, "round2": 0.5}[_round_of(spec)])
    data = run_recipe(rc.make_recipe("tiny"), tmp_path / "run", probe_fn=stub, **QUIET)
    out = tmp_path / "moved"
    shutil.move(tmp_path / "run", out)
    dest = tmp_path / "ship"
    ship_command.main([str(out), "--hands", "8", "--games", "2", "--dest", str(dest)])
    curve = dest / "ppo_learning_curve.png"                  # no --curve: beside the weights
    blob = load_policy_file(dest / "ppo.pt")
    s, meta = data["steps"], blob["meta"]
    kept = s["keep"]["round"]
    assert kept == 1 and parameters_digest(build_net(blob, dest / "ppo.pt")) == s["keep"]["digest"]
    assert meta["args"]["seed"] == rc.make_recipe("tiny").seed + kept        # the kept round's training settings
    trained = sum(s[f"round{r}/train"]["decisions"] for r in range(3))
    assert meta["recipe"]["train_decisions"] == trained == meta["decisions"]
    card = (dest / "ppo.md").read_text()
    assert f"- Command: `{data['command']}`" in card and f"**{data['seconds'] / 60:.1f} minutes**" in card
    assert f"{trained:,} decisions of `mus train` in 3 stages" in card and f"- Kept: round {kept}," in card
    table = [x for x in (out / "recipe.md").read_text().splitlines() if x.startswith("|")]
    assert len(table) == 5 and all(x in card for x in table)
    assert curve.stat().st_size > 0
    with pytest.raises(SystemExit):
        ship_command.main([str(out), "--dest", str(tmp_path / "no"), "--ancestor", str(out / "round0" / "train")])
    assert "--ancestor is for a run of mus train" in capsys.readouterr().err
    state = json.loads((out / "recipe.json").read_text())
    del state["steps"]["keep"]
    (out / "recipe.json").write_text(json.dumps(state))
    with pytest.raises(SystemExit):
        ship_command.main([str(out), "--dest", str(tmp_path / "no")])
    assert "not a finished recipe" in capsys.readouterr().err and not (tmp_path / "no").exists()


def test_mus_ship_agent_writes_under_the_current_folder_unless_told_where(tmp_path: Path, monkeypatch,
                                                                         capsys) -> None:
    """``mus ship-agent`` without ``--dest`` writes in ``runs/shipped`` under the current folder, never into the
    installed package, and the Python functions take no default destination: ``--card-only`` there rewrites the
    card of a copy of the shipped weights, byte for byte the package's card, and leaves the package alone."""
    from agents.policy import SHIPPED_POLICY
    from experiments.commands import ship_agent as ship_command
    from experiments.population import ship_agent

    package_card = SHIPPED_POLICY.with_suffix(".md")
    before = package_card.stat().st_mtime_ns
    monkeypatch.chdir(tmp_path)
    assert ship_command.parser().parse_args(["run"]).dest == "runs/shipped" and ship_command.parser().parse_args(
        ["run"]).curve is None
    (tmp_path / "runs" / "shipped").mkdir(parents=True)
    shutil.copyfile(SHIPPED_POLICY, tmp_path / "runs" / "shipped" / "ppo.pt")
    ship_command.main(["unused", "--card-only"])
    assert capsys.readouterr().out.strip() == "wrote runs/shipped/ppo.md"
    assert (tmp_path / "runs" / "shipped" / "ppo.md").read_text() == package_card.read_text()
    assert package_card.stat().st_mtime_ns == before
    with pytest.raises(TypeError, match="dest"):
        ship_agent.ship(tmp_path / "run")                    # type: ignore[call-arg]
    with pytest.raises(TypeError, match="dest"):
        ship_agent.rewrite_card()                            # type: ignore[call-arg]


def test_the_kept_round_is_the_least_exploitable_not_the_last(tmp_path: Path) -> None:
    """Stub probes whose gains are set by the policy they probe: round 0's policy is the least exploitable, so it
    is kept although two rounds came after it."""
    targets: list[str] = []

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        targets.append(spec)
        return {"round0": 0.2, "round1": 0.9, "round2": 0.5}[_round_of(spec)] + (0.1 if warm_start == "agent" else 0.0)

    stub = _stub_probe(gain)

    data = run_recipe(rc.make_recipe("tiny"), tmp_path / "run", probe_fn=stub, **QUIET)
    keep = data["steps"]["keep"]
    assert keep["round"] == 0 and keep["gains"] == pytest.approx([0.3, 1.0, 0.6])
    assert len(targets) == 6                                      # 2 starts x (2 rounds + the final probes)
    assert rc.keep_round([0.5, 0.2, 0.2]) == 1 and rc.keep_round([0.4]) == 0


def test_a_long_probe_joins_the_population_and_decides_the_round_kept(tmp_path: Path) -> None:
    """The quick probes find round 1 the less exploitable; the long probe (from the equity clone) finds it the more:
    the long probe counts in the keep rule (round 0 is kept), its best response joins the next meta-game, it runs
    first (the quick ones beside it), and the report gives its gain in a column of its own."""
    calls: list[tuple[str, str, int]] = []
    quick_gain, long_gain = {"round0": 0.2, "round1": 0.1}, {"round0": 0.3, "round1": 0.9}
    budget = 32 * 8 * 16

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        calls.append((_round_of(spec), warm_start, kw["decisions"]))
        return (long_gain if kw["decisions"] == budget else quick_gain)[_round_of(spec)]

    stub = _stub_probe(gain)

    recipe = rc.make_recipe("tiny", rounds=1, long_probe_decisions=budget)
    assert rc.probe_plan(recipe)[-1] == ("long-equity", "equity", 0, budget)
    data = run_recipe(recipe, tmp_path / "run", probe_fn=stub, **QUIET)
    s = data["steps"]
    assert s["keep"]["round"] == 0 and s["keep"]["gains"] == pytest.approx([0.3, 0.9])
    assert s["keep"]["long_gains"] == pytest.approx([0.3, 0.9])
    long_policy = str(tmp_path / "run" / "round1" / "probes" / "long-equity-seed0" / "policy.pt")
    assert s["round1/probes"]["policies"][-1] == long_policy and long_policy in s["round1/meta"]["specs"]
    assert calls == [("round0", "equity", budget), ("round0", "equity", recipe.probe_decisions),
                     ("round0", "agent", recipe.probe_decisions), ("round1", "equity", budget),
                     ("round1", "equity", recipe.probe_decisions), ("round1", "agent", recipe.probe_decisions)]
    table = (tmp_path / "run" / "recipe.md").read_text()
    assert "| long probe's gain |" in table and "| +0.300 | 0.500 | +0.300 |" in table
    # without the long probe the quick probes alone keep round 1
    quick = run_recipe(rc.make_recipe("tiny", rounds=1), tmp_path / "quick", probe_fn=stub, **QUIET)
    assert quick["steps"]["keep"]["round"] == 1 and quick["steps"]["keep"]["long_gains"] == [None, None]
    assert "long probe" not in (tmp_path / "quick" / "recipe.md").read_text()


def test_every_probe_of_the_recipe_trains_at_its_probe_learning_rate(tmp_path: Path) -> None:
    """``probe_learning_rate`` reaches every best response the recipe trains, quick and long; by default they train
    at 3e-4, the rate of the measuring probes."""
    rates: list[tuple[str, float]] = []

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        rates.append((Path(kw["out"]).name, kw["learning_rate"]))
        return 0.1

    stub = _stub_probe(gain)

    recipe = rc.make_recipe("tiny", rounds=0, long_probe_decisions=32 * 8 * 8, long_probe_start="agent",
                            probe_learning_rate=3e-3)
    run_recipe(recipe, tmp_path / "fast", probe_fn=stub, **QUIET)
    assert sorted(rates) == [("agent-seed0", 3e-3), ("equity-seed0", 3e-3), ("long-agent-seed0", 3e-3)]
    rates.clear()
    run_recipe(rc.make_recipe("tiny", rounds=0), tmp_path / "default", probe_fn=stub, **QUIET)
    assert sorted(rates) == [("agent-seed0", ppo.PROBE_LEARNING_RATE), ("equity-seed0", ppo.PROBE_LEARNING_RATE)]


def test_trainings_run_with_train_threads_probes_with_torch_threads_and_a_resume_may_change_both(
        tmp_path: Path) -> None:
    """The steps that run alone (the trainings) use ``train_threads``, each probe ``torch_threads``; neither changes
    what the recipe makes, so a resume with other counts goes on (and records them) where another setting is refused
    (fails if the trainings take the probes' count, or if the resume compares the thread counts)."""
    threads: list[int] = []

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        threads.append(kw["torch_threads"])
        return 0.1

    stub = _stub_probe(gain)
    out = tmp_path / "run"
    recipe = rc.make_recipe("tiny", rounds=0, train_threads=2, torch_threads=1)
    run_recipe(recipe, out, probe_fn=stub, **QUIET)
    assert json.loads((out / "round0" / "train" / "args.json").read_text())["torch_threads"] == 2
    assert threads == [1, 1]
    again = run_recipe(dataclasses.replace(recipe, train_threads=1, torch_threads=3), out, probe_fn=stub,
                          resume=True, **QUIET)
    assert (again["settings"]["train_threads"], again["settings"]["torch_threads"]) == (1, 3)
    with pytest.raises(ValueError, match=r"other settings \(seed\)"):
        run_recipe(dataclasses.replace(recipe, seed=5), out, probe_fn=stub, resume=True, **QUIET)
    with pytest.raises(ValueError, match="Recipe.train_threads must be an int >= 0"):
        rc.make_recipe("tiny", train_threads=-1)


def test_the_nash_shares_of_rock_paper_scissors_and_of_a_dominated_agent() -> None:
    rps = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
    p, gap = nash_mixture(rps)
    assert np.allclose(p, 1 / 3, atol=0.02) and gap < 0.05
    # a fourth agent that loses to everyone gets nothing, and the league leaves it out
    bad = np.zeros((4, 4))
    bad[:3, :3] = rps
    bad[:3, 3], bad[3, :3] = 0.5, -0.5
    p, _ = nash_mixture(bad)
    assert p[3] < 1e-3 and np.allclose(p[:3], 1 / 3, atol=0.02)
    recipe = rc.make_recipe("tiny")
    league = rc.league_from_nash(["a.pt", "b.pt", "c.pt", "loser.pt"], p, recipe)
    shares = {k: float(v) for k, v in (item.rsplit(":", 1) for item in league.split(","))}
    assert "loser.pt" not in shares and shares["self"] == recipe.self_share
    assert shares["a.pt"] == pytest.approx(shares["b.pt"], abs=0.02)
    assert shares["rule"] == shares["equity"] == recipe.baseline_floor      # the baselines' floor
    assert shares["ordago"] == recipe.rival_floor > 0                         # and the rival's


def test_rivals_that_beat_everyone_are_capped_and_the_rest_follows_the_population_nash() -> None:
    """A rival that beats every member takes the whole Nash mixture (``ppo`` in the run of 2026-12-03); with
    ``rival_cap`` it keeps the cap, and the rest goes to the members by their own Nash mixture (rock-paper-scissors
    here: a third each)."""
    payoff = np.zeros((5, 5))
    payoff[:3, :3] = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
    payoff[3, :3], payoff[:3, 3] = 2.0, -2.0            # the rival beats a, b and c
    payoff[4, :4], payoff[:4, 4] = -5.0, 5.0            # a second rival loses to everyone
    specs = ["a.pt", "b.pt", "c.pt", "ppo", "ordago"]
    raw, _ = nash_mixture(payoff)
    assert raw[3] > 0.99                                                    # the rival takes it all
    capped = rc.cap_rivals(specs, payoff, raw, rc.make_recipe("tiny", rivals=("ppo", "ordago"), rival_cap=0.25))
    assert capped.sum() == pytest.approx(1.0)
    assert capped[3] + capped[4] == pytest.approx(0.25, abs=1e-9)
    assert np.allclose(capped[:3], 0.75 / 3, atol=0.02)
    uncapped = rc.cap_rivals(specs, payoff, raw, rc.make_recipe("tiny", rivals=("ppo", "ordago")))
    assert np.array_equal(uncapped, raw)                                   # the default: no cap
    # a rival under the cap keeps its Nash share, and so does everyone else
    mixed = np.array([0.3, 0.3, 0.3, 0.1, 0.0])
    assert np.array_equal(rc.cap_rivals(specs, payoff, mixed, rc.make_recipe("tiny", rivals=("ppo",),
                                                                            rival_cap=0.25)), mixed)


def test_a_resume_takes_a_setting_added_later_at_its_default(tmp_path: Path) -> None:
    """A recipe.json written before ``rival_cap`` existed ran without a cap: its resume is accepted with the
    default and refused with another value (the settings check passes first, then the rival's digest refuses
    the resume, so nothing runs)."""
    recipe = rc.make_recipe("tiny")
    old = {k: v for k, v in recipe.to_dict().items() if k != "rival_cap"}
    out = tmp_path / "run"
    out.mkdir()
    (out / STATE_NAME).write_text(json.dumps({"settings": old, "rivals": {"ordago": "0" * 64}, "steps": {},
                                                 "seconds": 0.0}))
    with pytest.raises(ValueError, match="ordago changed since"):          # past the settings check
        run_recipe(recipe, out, resume=True, **QUIET)
    with pytest.raises(ValueError, match=r"other settings \(rival_cap\)"):
        run_recipe(rc.make_recipe("tiny", rival_cap=0.5), out, resume=True, **QUIET)


def test_a_resume_of_a_recipe_whose_stages_named_no_learning_rate_takes_the_one_it_ran_at(tmp_path: Path) -> None:
    """The ship preset's stages name their learning rate (3e-4) since the trainer's default changed on 2026-12-04;
    a recipe.json written before ran at 3e-4 without naming it: its resume is accepted (past the settings check,
    the rival's digest refuses, so nothing runs), and one whose stages named another rate is refused."""
    recipe = rc.make_recipe("ship")
    old = recipe.to_dict()
    for stage in ("first", "round_train"):
        assert old[stage].pop("learning_rate") == ppo.PROBE_LEARNING_RATE
    out = tmp_path / "run"
    out.mkdir()
    state = {"settings": old, "rivals": {"ppo": "0" * 64, "ordago": None}, "steps": {}, "seconds": 0.0}
    (out / STATE_NAME).write_text(json.dumps(state))
    with pytest.raises(ValueError, match="ppo changed since"):              # past the settings check
        run_recipe(recipe, out, resume=True, **QUIET)
    state["settings"]["first"]["learning_rate"] = 1.5e-3
    (out / STATE_NAME).write_text(json.dumps(state))
    with pytest.raises(ValueError, match=r"other settings \(first\)"):
        run_recipe(recipe, out, resume=True, **QUIET)


def test_the_refine_presets_are_the_ship_rounds_from_the_shipped_weights() -> None:
    """``refine`` changes only round 0 (a warm start from the shipped agent's file, the magnet fixed there) and the
    rivals' cap; ``refine-long`` is two such rounds with a 40M-decision probe in each; every preset's rivals name
    agents that play (the shipped ``ppo``, whose weights digest a recipe records, and ``ordago``)."""
    from agents.policy import SHIPPED_POLICY

    ship, refine = rc.make_recipe("ship"), rc.make_recipe("refine")
    differ = sorted(k for k, v in refine.to_dict().items() if ship.to_dict()[k] != v)
    assert differ == ["first", "rival_cap"] and refine.rival_cap == 0.5
    assert refine.first["warm_start"] == str(SHIPPED_POLICY) and SHIPPED_POLICY.is_file()
    assert refine.first["magnet_every"] == 0
    assert ppo.make_args(refine.trainer_preset, **refine.first).learning_rate == ppo.PROBE_LEARNING_RATE
    wanted = rc.make_recipe("refine-long").to_dict()
    assert wanted == rc.make_recipe("refine", rounds=2, long_probe_decisions=40_000_000).to_dict()
    for name in ("ship", "refine", "refine-long"):
        assert rc.make_recipe(name).rivals == ("ppo", "ordago"), name
    digests = recipe_state.rival_digests(ship)
    assert digests == {"ppo": recipe_state.policy_digest(SHIPPED_POLICY), "ordago": None}


def test_a_stopped_recipe_resumes_to_the_same_results(straight, tmp_path: Path, monkeypatch) -> None:
    """Ctrl-C in the middle of round 1's first best response, then in the middle of round 2's training: each
    resume goes on from the step's own checkpoint, and the recipe ends with the results of one never stopped."""
    out = tmp_path / "run"
    original = ppo.rollout

    def stop_in(folder: str):
        def rollout(s):
            if str(s.out).endswith(folder) and s.update == 3:          # after the checkpoint of update 2
                raise KeyboardInterrupt
            return original(s)
        return rollout

    recipe = rc.make_recipe("tiny")
    monkeypatch.setattr(ppo, "rollout", stop_in("round1/probes/equity-seed0"))
    with pytest.raises(TrainingInterrupted):
        run_recipe(recipe, out, **QUIET)
    assert (out / "round1" / "probes" / "equity-seed0" / "checkpoint.pt").is_file()
    monkeypatch.setattr(ppo, "rollout", stop_in("round2/train"))
    with pytest.raises(TrainingInterrupted):
        run_recipe(recipe, out, resume=True, **QUIET)
    state = json.loads((out / STATE_NAME).read_text())
    assert "round1/probes" in state["steps"] and "round2/train" not in state["steps"]
    monkeypatch.setattr(ppo, "rollout", original)
    resumed = run_recipe(recipe, out, resume=True, **QUIET)
    assert _comparable(resumed).replace(str(out), "OUT") == _comparable(straight[1]).replace(str(straight[0]), "OUT")


def test_the_time_a_stopped_step_ran_counts_in_its_wall_time_after_the_resume(tmp_path: Path, monkeypatch) -> None:
    """Round 1's probes run 100,000 seconds (a moved clock) and are stopped; the resumed recipe counts those seconds in
    that step's ``step_seconds`` and in the recipe's ``seconds`` (fails if the clock starts again at the resume,
    as it did until 2026-12-06)."""
    from experiments.population import recipe_clock

    offset = [0.0]
    monkeypatch.setattr(recipe_clock, "_now", lambda: time.perf_counter() + offset[0])

    def stopped(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        offset[0] += 100_000.0
        raise KeyboardInterrupt

    out, recipe = tmp_path / "run", rc.make_recipe("tiny")
    monkeypatch.setattr(recipe_run, "run_probe_jobs", stopped)
    with pytest.raises(TrainingInterrupted):
        run_recipe(recipe, out, **QUIET)
    assert json.loads((out / recipe_clock.CLOCK_NAME).read_text())["unfinished_seconds"] >= 100_000
    monkeypatch.undo()
    data = run_recipe(recipe, out, resume=True, **QUIET)
    assert data["step_seconds"]["round1/probes"] >= 100_000 and data["seconds"] >= 100_000
    assert all(v < 100_000 for k, v in data["step_seconds"].items() if k != "round1/probes")


def test_the_step_clock_carries_only_into_a_resume_and_restarts_at_each_lap(tmp_path: Path, monkeypatch) -> None:
    """StepClock with a moved clock: a stop writes the unfinished seconds, a resume carries them (a fresh start does
    not), a lap returns them and starts again from zero; the heartbeat writes while it runs."""
    from experiments.population import recipe_clock

    now = [0.0]
    monkeypatch.setattr(recipe_clock, "_now", lambda: now[0])
    clock = recipe_clock.StepClock(tmp_path, resume=False)
    now[0] = 100.0
    clock.stop()                                           # never started: one write
    assert json.loads(clock.path.read_text()) == {"unfinished_seconds": 100.0}
    assert recipe_clock.StepClock(tmp_path, resume=False).carried == 0.0
    again = recipe_clock.StepClock(tmp_path, resume=True)
    now[0] = 130.0
    assert again.elapsed() == 130.0 and again.lap() == 130.0 and again.elapsed() == 0.0
    assert json.loads(clock.path.read_text()) == {"unfinished_seconds": 0.0}
    beating = recipe_clock.StepClock(tmp_path, resume=True, every=0.01)
    now[0] = 145.0
    beating.start()
    for _ in range(2000):                                  # the heartbeat's write, however slow the machine
        if json.loads(clock.path.read_text())["unfinished_seconds"] == 15.0:
            break
        time.sleep(0.01)
    else:
        pytest.fail("the heartbeat never wrote the clock")
    beating.stop()
    assert json.loads(clock.path.read_text()) == {"unfinished_seconds": 15.0}
    clock.path.write_text("{}")
    with pytest.raises(ValueError, match="not a recipe clock"):
        recipe_clock.StepClock(tmp_path, resume=True)


def test_ctrl_c_outside_a_training_says_how_to_resume(tmp_path: Path, monkeypatch, capsys) -> None:
    """Ctrl-C while round 1's probes run as processes (``run_probe_jobs`` lets a bare ``KeyboardInterrupt`` go
    on): ``mus league`` says the finished steps are kept and the command that resumes them (exit status 130), not
    "nothing was written" (fails if the recipe lets the bare interrupt through)."""
    from experiments.commands import league as cmd

    def interrupted(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        raise KeyboardInterrupt

    monkeypatch.setattr(recipe_run, "run_probe_jobs", interrupted)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        cmd.main(["--preset", "tiny", "--out", str(out), "--progress", "false"])
    err = capsys.readouterr().err
    assert e.value.code == 130 and len(err.splitlines()) == 1 and "nothing was written" not in err
    assert f"interrupted after 2 finished step(s), kept in {out / STATE_NAME}" in err
    assert err.rstrip().endswith(f"resume with: mus league --preset tiny --out {out} --progress false --resume")
    assert sorted(json.loads((out / STATE_NAME).read_text())["steps"]) == ["round0/report", "round0/train"]


def test_a_finished_recipe_made_longer_ends_as_one_run_with_the_rounds_from_the_start(straight, tmp_path: Path) -> None:
    """``--resume --rounds 2`` on a finished recipe of one round: its final probes become round 2's probes (moved,
    not trained again), and the recipe ends with the results of the straight two-round run."""
    out = tmp_path / "run"
    run_recipe(rc.make_recipe("tiny", rounds=1), out, **QUIET)
    assert (out / "final" / "probes").is_dir() and not (out / "round2").exists()
    trained: list[str] = []

    def counting_probe(*args: Any, **kwargs: Any) -> dict[str, Any]:
        trained.append(str(kwargs["out"]))
        return recipe_run.probe(*args, **kwargs)

    longer = run_recipe(rc.make_recipe("tiny"), out, resume=True, probe_fn=counting_probe, **QUIET)
    assert longer["settings"]["rounds"] == 2 and longer["extended"] == [{"from": 1, "to": 2}]
    assert len(trained) == 2 and all("/final/probes/" in f for f in trained)          # round 2's were not retrained
    assert all(Path(p).is_file() and "/round2/probes/" in p for p in longer["steps"]["round2/probes"]["policies"])
    assert _comparable(longer).replace(str(out), "OUT") == _comparable(straight[1]).replace(str(straight[0]), "OUT")


def test_refusals_name_the_problem(tmp_path: Path, straight) -> None:
    with pytest.raises(ValueError, match="holds a recipe already"):
        run_recipe(rc.make_recipe("tiny"), straight[0], **QUIET)
    with pytest.raises(ValueError, match="no recipe to resume"):
        run_recipe(rc.make_recipe("tiny"), tmp_path / "none", resume=True, **QUIET)
    with pytest.raises(ValueError, match=r"other settings \(rounds\) \(rounds can only grow"):
        run_recipe(rc.make_recipe("tiny", rounds=1), straight[0], resume=True, **QUIET)
    with pytest.raises(ValueError, match=r"other settings \(rounds, seed\)"):      # longer, but not only longer
        run_recipe(rc.make_recipe("tiny", rounds=3, seed=1), straight[0], resume=True, **QUIET)
    for change, words in (({"rounds": -1}, "Recipe.rounds"), ({"self_share": 1.5}, "Recipe.self_share"),
                          ({"probe_starts": ("clone",)}, "probe_starts"), ({"nope": 1}, "unknown recipe field"),
                          ({"rivals": ("rule",)}, "Recipe.rivals"), ({"rivals": "ppo"}, "Recipe.rivals"),
                          ({"rival_floor": 0.5}, "leave room"), ({"rival_cap": 1.5}, "Recipe.rival_cap"),
                          ({"rival_cap": float("nan")}, "Recipe.rival_cap"),
                          ({"long_probe_decisions": -1}, "Recipe.long_probe_decisions must be an int >= 0"),
                          ({"long_probe_start": "clone"}, "Recipe.long_probe_start"),
                          ({"probe_learning_rate": 0}, "Recipe.probe_learning_rate must be a number in"),
                          ({"probe_learning_rate": float("inf")}, "Recipe.probe_learning_rate")):
        with pytest.raises(ValueError, match=words):
            rc.make_recipe("tiny", **change)
    with pytest.raises(ValueError, match="unknown recipe preset"):
        rc.make_recipe("huge")
    with pytest.raises(ValueError, match="Recipe.rivals: 'nobody' cannot play"):
        run_recipe(rc.make_recipe("tiny", rivals=("nobody",)), tmp_path / "rival", **QUIET)
    assert not (tmp_path / "rival").exists()                  # refused before anything was written


def test_a_resume_refuses_a_rival_whose_weights_changed(tmp_path: Path) -> None:
    """``ppo`` as a rival is whatever is shipped when the recipe runs: recipe.json keeps each rival's digest, and a
    resume against other weights is refused before anything runs."""
    from agents.policy import SHIPPED_POLICY

    rival = tmp_path / "rival.pt"
    shutil.copyfile(SHIPPED_POLICY, rival)
    recipe = rc.make_recipe("tiny", rivals=("ordago", str(rival)))
    digests = recipe_state.rival_digests(recipe)
    assert digests["ordago"] is None and len(digests[str(rival)]) == 64
    out = tmp_path / "run"
    out.mkdir()
    state = {"settings": recipe.to_dict(), "rivals": {**digests, str(rival): "0" * 64}, "steps": {}, "seconds": 0.0}
    (out / STATE_NAME).write_text(json.dumps(state))
    with pytest.raises(ValueError, match="rival.pt changed since"):
        run_recipe(recipe, out, resume=True, **QUIET)
    assert json.loads((out / STATE_NAME).read_text()) == state              # nothing rewritten


def test_the_command_line_passes_its_settings_to_the_recipe(tmp_path: Path, monkeypatch, capsys) -> None:
    """``mus league``'s flags change the preset's fields (a bad one is refused in one line, exit status 2, before
    anything is written)."""
    from experiments.commands import league as cmd

    seen: dict[str, Any] = {}

    def fake_run(settings: rc.Recipe, out: Any, **kw: Any) -> dict[str, Any]:
        seen["settings"] = settings
        return {"steps": {"keep": {"round": 0}}}

    monkeypatch.setattr(cmd, "run_recipe", fake_run)
    cmd.main(["--preset", "refine", "--baseline-floor", "0.2", "--rival-cap", "0.3", "--rounds", "4",
              "--long-probe", "80000000", "--long-probe-start", "agent", "--probe-learning-rate", "0.003",
              "--distill-rounds", "2", "--refine-distilled", "30000000", "--stage-probes", "80000000",
              "--stage-probe-seeds", "3", "--stage-probe-learning-rate", "0.001", "--refine-lance", "pares,juego",
              "--refine-lance-decisions", "20000000", "--refine-lance-learning-rate", "0.002",
              "--stage-probe-starts", "agent", "--train-threads", "2", "--out", str(tmp_path / "a")])
    assert seen["settings"] == rc.make_recipe("refine", baseline_floor=0.2, rival_cap=0.3, rounds=4,
                                              long_probe_decisions=80_000_000, long_probe_start="agent",
                                              probe_learning_rate=0.003, distill_rounds=2,
                                              refine_decisions=30_000_000, stage_probe_decisions=80_000_000,
                                              stage_probe_seeds=3, stage_probe_learning_rate=0.001,
                                              refine_lance="pares,juego", refine_lance_decisions=20_000_000,
                                              refine_lance_learning_rate=0.002, stage_probe_starts=("agent",),
                                              train_threads=2)
    with pytest.raises(SystemExit) as e:
        cmd.main(["--preset", "tiny", "--baseline-floor", "1.5", "--out", str(tmp_path / "b")])
    assert e.value.code == 2 and "Recipe.baseline_floor must be a number in [0, 1)" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_the_distilled_mixture_of_the_last_rounds_is_probed_and_kept_when_least_exploitable(tmp_path: Path) -> None:
    """With ``distill_rounds=2`` the recipe fits one network to the mixture of its last two policies, probes it as a
    round's policy is, and keeps it when its largest gain is the smallest (stub probes: the distilled policy 0.1,
    the rounds 0.3 and more); the report gives it a row of its own."""
    targets: list[str] = []

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        targets.append(spec)
        return {"round0": 0.3, "round1": 0.9, "round2": 0.5, "distilled": 0.1}[_round_of(spec)]

    stub = _stub_probe(gain)

    # a recipe run without the stage, then resumed with it: the rounds are not run again
    plain = run_recipe(rc.make_recipe("tiny"), tmp_path / "run", probe_fn=stub, **QUIET)
    assert plain["steps"]["keep"]["round"] == 0 and not plain["steps"]["keep"]["distilled"]
    recipe = rc.make_recipe("tiny", distill_rounds=2, distill_decisions=2048, distill_epochs=1)
    targets.clear()
    data = run_recipe(recipe, tmp_path / "run", probe_fn=stub, resume=True, command="mus league --distill-rounds 2",
                         **QUIET)
    s = data["steps"]
    assert data["resumed_with"] == ["mus league --distill-rounds 2"]
    assert "resumed with `mus league --distill-rounds 2`" in (tmp_path / "run" / "recipe.md").read_text()
    assert {k: s[k] for k in plain["steps"] if k.startswith("round")} == \
        {k: v for k, v in plain["steps"].items() if k.startswith("round")}
    assert list(s)[-6:] == ["final/probes", "distilled/train", "distilled/report", "distilled/probes", "keep", "card"]
    student = s["distilled/train"]
    assert student["members"] == [s["round1/train"]["policy"], s["round2/train"]["policy"]]
    assert student["start"] == s["round2/train"]["policy"]          # the member with the smaller probe gain
    assert targets[-2:] == [student["policy"]] * 2
    keep = s["keep"]
    assert keep["distilled"] and keep["round"] == 3 and keep["gains"] == pytest.approx([0.3, 0.9, 0.5, 0.1])
    assert keep["digest"] == student["digest"] == recipe_state.policy_digest(tmp_path / "run" / "policy.pt")
    table = (tmp_path / "run" / "recipe.md").read_text()
    assert "| distilled (2 policies) **kept** |" in table and "Kept: the distilled policy" in table
    # resumed with another stage: the first is set aside, not deleted, and the new one fitted to the last round only
    again = run_recipe(dataclasses.replace(recipe, distill_rounds=1), tmp_path / "run", probe_fn=stub, resume=True,
                          **QUIET)
    assert again["steps"]["distilled/train"]["members"] == [s["round2/train"]["policy"]]
    assert (tmp_path / "run" / "distilled-before-1" / "train" / "policy.pt").is_file()
    assert again["settings"]["distill_rounds"] == 1
    with pytest.raises(ValueError, match="distill_rounds: at most the 3 policies"):
        rc.make_recipe("tiny", distill_rounds=4)
def test_a_stage_set_aside_takes_its_wall_time_out_of_the_recipe_s(tmp_path: Path) -> None:
    """The steps of a stage set aside by a resume leave ``step_seconds``, and their seconds leave the recipe's
    ``seconds`` for ``seconds_set_aside``: the recipe's time is that of the steps it is made of (fails if a set-aside
    stage's time stays in, as it did until 2026-12-06)."""
    saved = {"steps": {k: {} for k in ("round1/train", "distilled/train", "distilled/probes", "keep", "card")},
             "step_seconds": {"round1/train": 10.0, "distilled/train": 20.0, "distilled/probes": 30.0, "keep": 1.0,
                              "card": 4.0}, "seconds": 70.0}
    (tmp_path / "distilled").mkdir()
    aside = recipe_state.set_stage_aside(tmp_path, saved, "distilled")
    assert list(aside["steps"]) == list(aside["step_seconds"]) == ["round1/train"]
    assert aside["seconds"] == pytest.approx(15.0) and aside["seconds_set_aside"] == pytest.approx(55.0)
    assert (tmp_path / "distilled-before-1").is_dir() and not (tmp_path / "distilled").exists()
    # a recipe made longer: its final probes become the next round's, their time with them
    shorter = {"settings": {"rounds": 1}, "steps": {"round1/train": {}, "final/probes": {}},
               "step_seconds": {"round1/train": 10.0, "final/probes": 5.0}, "seconds": 15.0}
    longer = recipe_state.extend_rounds(tmp_path, shorter, 2)
    assert longer["step_seconds"] == {"round1/train": 10.0, "round2/probes": 5.0}
    assert longer["seconds"] == pytest.approx(15.0)


def test_the_time_of_a_stopped_step_whose_stage_a_resume_sets_aside_is_set_aside_too(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """The refined stage's probes run 100,000 seconds (a moved clock, far above any real step's time) and are stopped;
    the recipe is resumed with another refined budget, so the stage is set aside: those seconds go to
    ``seconds_set_aside``, not to the next step that finishes (fails if the clock carries them into the new refined
    training, as it did until 2026-12-06)."""
    from experiments.population import recipe_clock

    offset = [0.0]
    monkeypatch.setattr(recipe_clock, "_now", lambda: time.perf_counter() + offset[0])

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        if _round_of(spec) == "refined" and offset[0] == 0.0:
            offset[0] = 100_000.0
            raise KeyboardInterrupt
        return {"round0": 0.3, "round1": 0.9, "round2": 0.5, "distilled": 0.2, "refined": 0.1}[_round_of(spec)]

    out, stub = tmp_path / "run", _stub_probe(gain)
    recipe = rc.make_recipe("tiny", distill_rounds=2, distill_decisions=2048, distill_epochs=1, refine_decisions=1024)
    with pytest.raises(TrainingInterrupted):
        run_recipe(recipe, out, probe_fn=stub, **QUIET)
    assert json.loads((out / recipe_clock.CLOCK_NAME).read_text())["unfinished_seconds"] >= 100_000
    data = run_recipe(dataclasses.replace(recipe, refine_decisions=2048), out, probe_fn=stub, resume=True, **QUIET)
    assert (out / "refined-before-1").is_dir() and data["steps"]["keep"]["refined"]
    assert data["seconds_set_aside"] >= 100_000
    assert all(v < 100_000 for v in data["step_seconds"].values()) and data["seconds"] < 100_000


def test_replicas_of_the_rounds_join_the_distilled_mixture(tmp_path: Path) -> None:
    """``distill_replicas=2``: the rounds run again with the next seed (a recipe of its own in ``OUT/replica1``) and
    the last two policies of both runs make the distilled mixture, started from the member with the smallest probe
    gain (here the replica's round 1); the first run's rounds are not run again; without ``distill_rounds`` it is
    refused; a resume with one replica fits the first run's rounds only (the stage set aside, the replica kept).
    ``mus ship-agent`` counts the replica's training in the card's budget and gives the settings of the replica's
    round the mixture started from."""
    from agents.policy import load_policy_file
    from experiments.commands import ship_agent as ship_command

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        mine = {"round0": 0.3, "round1": 0.9, "round2": 0.5, "round3": 0.4, "distilled": 0.1}
        replica = {"round0": 0.6, "round1": 0.2, "round2": 0.7, "round3": 0.8}
        return (replica if "replica1" in Path(spec).parts else mine)[_round_of(spec)]

    stub = _stub_probe(gain)
    out = tmp_path / "run"
    plain = run_recipe(rc.make_recipe("tiny"), out, probe_fn=stub, **QUIET)
    recipe = rc.make_recipe("tiny", distill_rounds=2, distill_replicas=2, distill_decisions=2048, distill_epochs=1)
    data = run_recipe(recipe, out, probe_fn=stub, resume=True, **QUIET)
    s = data["steps"]
    assert {k: s[k] for k in plain["steps"] if k.startswith("round")} == \
        {k: v for k, v in plain["steps"].items() if k.startswith("round")}
    replica = json.loads((out / "replica1" / STATE_NAME).read_text())
    assert replica["settings"]["seed"] == 1 and replica["settings"]["distill_rounds"] == 0
    assert s["replica1"]["gains"] == pytest.approx([0.6, 0.2, 0.7])
    theirs = [replica["steps"][f"round{r}/train"]["policy"] for r in (1, 2)]
    assert replica["steps"]["round1/train"]["digest"] != s["round1/train"]["digest"]     # another seed, another run
    student = s["distilled/train"]
    assert student["members"] == [s["round1/train"]["policy"], s["round2/train"]["policy"], *theirs]
    assert student["start"] == theirs[0]
    assert s["keep"]["distilled"] and s["keep"]["gains"] == pytest.approx([0.3, 0.9, 0.5, 0.1])
    assert "| distilled (4 policies of 2 runs) **kept** |" in (out / "recipe.md").read_text()
    card = read_recipe(out)                              # what mus ship-agent's card says it took to make
    write_card(tmp_path / "card.md", {"recipe": card, "args": {}, "arch": {}, "parameters": 0}, [])
    assert "One network fitted by `mus distill`" in (tmp_path / "card.md").read_text()
    assert card["replicas"] == 1 and card["replica_decisions"] == sum(
        replica["steps"][f"round{r}/train"]["decisions"] for r in range(3)) > 0
    assert card["probe_decisions"] == sum(p["decisions"] for x in (s, replica["steps"]) for k, v in x.items()
                                          if k.endswith("/probes") for p in v["probes"])
    assert "the last 2 rounds' policies of 2 runs" in card["kept"]
    assert card["minutes"] == data["seconds"] / 60 and card["replica_minutes_outside"] == 0   # the replica ran here
    state = json.loads((out / STATE_NAME).read_text())          # as if it had been run by a command of its own
    state["steps"]["replica1"]["minutes_here"] = 0.0                 # and found done by this recipe
    (out / STATE_NAME).write_text(json.dumps(state))
    alone = read_recipe(out)
    assert alone["minutes"] == pytest.approx((data["seconds"] + replica["seconds"]) / 60)
    write_card(tmp_path / "card.md", {"recipe": alone, "args": {}, "arch": {}, "parameters": 0}, [])
    assert "minutes of replicas run by a command of their own included" in (tmp_path / "card.md").read_text()
    ship_command.main([str(out), "--hands", "8", "--games", "2", "--dest", str(tmp_path / "ship"),
                       "--curve", str(tmp_path / "curve.png")])
    meta = load_policy_file(tmp_path / "ship" / "ppo.pt")["meta"]                 # the shipped card's budget and
    assert meta["decisions"] == card["decisions"] == sum(                            # settings: the replica's start
        v["decisions"] for x in (s, replica["steps"]) for k, v in x.items() if k.endswith("/train")) > 0
    assert meta["args"] == load_policy_file(Path(theirs[0]))["meta"]["args"] != load_policy_file(
        Path(s["round1/train"]["policy"]))["meta"]["args"]
    with pytest.raises(ValueError, match="distill_replicas: 2 runs of the rounds make the distilled mixture only"):
        rc.make_recipe("tiny", distill_replicas=2)
    again = run_recipe(dataclasses.replace(recipe, distill_replicas=1), out, probe_fn=stub, resume=True, **QUIET)
    assert again["steps"]["distilled/train"]["members"] == [s["round1/train"]["policy"], s["round2/train"]["policy"]]
    assert (out / "distilled-before-1").is_dir() and (out / "replica1" / "policy.pt").is_file()
    assert "| distilled (2 policies) **kept** |" in (out / "recipe.md").read_text()
    assert read_recipe(out)["replicas"] == 0                  # the replica is kept, not counted: not in the mixture
    # made longer: the replica's rounds grow too, and the mixture takes the last two of both (rounds 2 and 3)
    longer = run_recipe(dataclasses.replace(recipe, rounds=3), out, probe_fn=stub, resume=True, **QUIET)
    replica = json.loads((out / "replica1" / STATE_NAME).read_text())
    assert replica["settings"]["rounds"] == 3 and "round3/train" in replica["steps"]
    assert [Path(p).parent.parent.name for p in longer["steps"]["distilled/train"]["members"]] == [
        "round2", "round3", "round2", "round3"]




def test_the_distilled_network_refined_against_its_own_probes_is_probed_and_kept_when_least_exploitable(
        tmp_path: Path) -> None:
    """``refine_decisions``: after the distilled stage, its network trains once more from its own weights, the
    magnet fixed there, against a league holding the distilled stage's probes; it is reported and probed as a round
    is, and kept when its largest gain is the smallest (stub probes: refined 0.1, distilled 0.2). Resumed with
    another budget, the refined stage runs again (the first set aside) and the keep rule chooses again (the
    distilled policy, when the refined one concedes more). ``mus ship-agent``'s card counts its decisions."""
    refined_gain = [0.1]

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        return {"round0": 0.3, "round1": 0.9, "round2": 0.5, "distilled": 0.2,
                "refined": refined_gain[0]}[_round_of(spec)]

    stub = _stub_probe(gain)
    out = tmp_path / "run"
    recipe = rc.make_recipe("tiny", distill_rounds=2, distill_decisions=2048, distill_epochs=1,
                            refine_decisions=1024)
    data = run_recipe(recipe, out, probe_fn=stub, **QUIET)
    s = data["steps"]
    assert list(s)[-5:] == ["refined/train", "refined/report", "refined/probes", "keep", "card"]
    args = json.loads((out / "refined" / "train" / "args.json").read_text())
    assert args["warm_start"] == s["distilled/train"]["policy"] and args["magnet_every"] == 0
    assert f"{out / 'distilled' / 'probes'}:0.3000" in rc.refine_league(out / "distilled" / "probes", recipe)
    league = dict(x.rsplit(":", 1) for x in args["league_mix"].split(","))     # the folder, as its best responses
    theirs = {k: float(v) for k, v in league.items() if k.startswith(str(out / "distilled" / "probes"))}
    assert sorted(theirs) == sorted(s["distilled/probes"]["policies"]) and sum(theirs.values()) == pytest.approx(0.3)
    assert float(league["self"]) == pytest.approx(0.3) and float(league["ordago"]) == pytest.approx(0.1)
    assert args["total_decisions"] == 1024 and s["refined/train"]["decisions"] >= 1024
    assert s["refined/probes"]["probes"][0]["stones"] == pytest.approx(0.1)
    keep = s["keep"]
    assert keep["refined"] and not keep["distilled"] and keep["round"] == 4
    assert keep["gains"] == pytest.approx([0.3, 0.9, 0.5, 0.2, 0.1])
    assert keep["digest"] == s["refined/train"]["digest"] == recipe_state.policy_digest(out / "policy.pt")
    table = (out / "recipe.md").read_text()
    assert "| refined (the distilled, against its probes) **kept** |" in table
    assert "Kept: the refined policy" in table
    card = read_recipe(out)
    assert card["refined"] and card["refine_decisions"] == s["refined/train"]["decisions"]
    assert card["decisions"] == sum(v["decisions"] for k, v in s.items() if k.endswith("/train"))
    assert f"trained {card['refine_decisions']:,} decisions more against its own probes" in card["kept"]
    write_card(tmp_path / "card.md", {"recipe": card, "args": {}, "arch": {}, "parameters": 0}, [])
    assert "then trained against its own best responses" in (tmp_path / "card.md").read_text()
    # another budget: the refined stage again, the first set aside; now it concedes more and the distilled is kept
    refined_gain[0] = 0.6
    again = run_recipe(dataclasses.replace(recipe, refine_decisions=2048), out, probe_fn=stub, resume=True,
                          **QUIET)
    assert (out / "refined-before-1" / "train" / "policy.pt").is_file()
    assert again["steps"]["distilled/train"] == s["distilled/train"]              # the distillation is not redone
    assert again["steps"]["keep"]["distilled"] and not again["steps"]["keep"]["refined"]
    assert again["steps"]["keep"]["gains"] == pytest.approx([0.3, 0.9, 0.5, 0.2, 0.6])
    with pytest.raises(ValueError, match="refine_decisions: 1,000 decisions refine the distilled network"):
        rc.make_recipe("tiny", refine_decisions=1000)
    # without rivals, their share is the learner's own
    assert rc.refine_league(Path("p"), rc.make_recipe("tiny", rivals=())).startswith("self:0.4000,snapshot:0.1000")


def test_refine_hidden_trains_a_wider_copy_of_the_distilled_network_and_a_resume_with_it_refines_again(
        tmp_path: Path) -> None:
    """``refine_hidden``: the refined stage trains the distilled network widened (same play at its start,
    ``tests/test_widen.py``); resumed with it, only the refined stage runs again."""
    stub = _stub_probe(lambda spec, warm_start, kw: {"round0": 0.3, "round1": 0.9, "round2": 0.5, "distilled": 0.2,
                                                     "refined": 0.1}[_round_of(spec)])
    out = tmp_path / "run"
    recipe = rc.make_recipe("tiny", distill_rounds=2, distill_decisions=2048, distill_epochs=1, refine_decisions=1024)
    first = run_recipe(recipe, out, probe_fn=stub, **QUIET)["steps"]
    wider = dataclasses.replace(recipe, refine_hidden=(48, 40))
    s = run_recipe(wider, out, probe_fn=stub, resume=True, **QUIET)["steps"]
    assert s["distilled/train"] == first["distilled/train"] and s["distilled/probes"] == first["distilled/probes"]
    assert (out / "refined-before-1" / "train" / "policy.pt").is_file()
    assert json.loads((out / "refined" / "train" / "args.json").read_text())["hidden"] == [48, 40]
    assert load_policy_file(out / "refined" / "train" / "policy.pt")["arch"]["hidden"] == [48, 40]
    assert load_policy_file(out / "distilled" / "train" / "policy.pt")["arch"]["hidden"] == [32, 32]
    assert s["keep"]["refined"] and load_policy_file(out / "policy.pt")["arch"]["hidden"] == [48, 40]
    with pytest.raises(ValueError, match="refine_hidden: the widths \\[256, 256\\] are the refined network's"):
        rc.make_recipe("tiny", distill_rounds=2, refine_hidden=(256, 256))
    with pytest.raises(ValueError, match="Recipe.refine_hidden: 1 to 16 widths"):
        rc.make_recipe("tiny", distill_rounds=2, refine_decisions=1024, refine_hidden=(0, 256))


def test_stage_probes_measure_the_distilled_and_refined_networks_as_the_protocol_does(tmp_path: Path) -> None:
    """``stage_probe_decisions``: the distilled and refined networks are probed by every start with
    ``stage_probe_seeds`` seeds of that budget at ``stage_probe_learning_rate`` (the protocol's kind), the rounds by
    their own plan; the refined stage trains against those probes. Resumed with another stage budget, the distilled
    network stays, its probes and the refined stage run again (the old ones set aside)."""
    seen: list[tuple[str, str, int, float]] = []

    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        folder = Path(kw["out"])
        seen.append((f"{folder.parent.parent.name}/{folder.name}", warm_start, kw["decisions"], kw["learning_rate"]))
        return {"round0": 0.3, "round1": 0.9, "distilled": 0.2, "refined": 0.1}[_round_of(spec)]

    stub = _stub_probe(gain)
    out = tmp_path / "run"
    quick, long = 32 * 8 * 4, 32 * 8 * 8
    recipe = rc.make_recipe("tiny", rounds=1, distill_rounds=2, distill_decisions=2048, distill_epochs=1,
                            refine_decisions=1024, stage_probe_decisions=long, stage_probe_seeds=2,
                            stage_probe_learning_rate=1e-3, long_probe_decisions=long, long_probe_start="agent")
    data = run_recipe(recipe, out, probe_fn=stub, **QUIET)
    s = data["steps"]
    by_step: dict[str, list[tuple[str, str, int, float]]] = {}
    for where, start, decisions, lr in seen:
        by_step.setdefault(where.split("/")[0], []).append((where.split("/")[1], start, decisions, lr))
    assert sorted(by_step["round1"]) == [("agent-seed0", "agent", quick, 3e-4), ("equity-seed0", "equity", quick, 3e-4),
                                         ("long-agent-seed0", "agent", long, 3e-4)]
    stage = sorted([(f"{st}-seed{k}", st, long, 1e-3) for st in ("equity", "agent") for k in (0, 1)])
    assert sorted(by_step["distilled"]) == stage and sorted(by_step["refined"]) == stage
    assert s["distilled/probes"]["labels"] == ["equity", "equity", "agent", "agent"]
    league = json.loads((out / "refined" / "train" / "args.json").read_text())["league_mix"]
    theirs = [x.rsplit(":", 1)[0] for x in league.split(",") if x.startswith(str(out / "distilled" / "probes"))]
    assert sorted(theirs) == sorted(s["distilled/probes"]["policies"]) and len(theirs) == 4
    assert s["keep"]["refined"] and s["keep"]["gains"] == pytest.approx([0.3, 0.9, 0.2, 0.1])
    # the rounds' long probe has a column in recipe.md; the stages, probed without one, leave it empty
    assert s["keep"]["long_gains"] == pytest.approx([0.3, 0.9, None, None])
    rows = [line for line in (out / "recipe.md").read_text().splitlines() if line.startswith("| ")]
    assert rows[-1].startswith("| refined") and rows[-1].endswith("| 0.500 | |") and rows[2].endswith("| +0.900 |")
    # another stage budget: the distilled network is kept, its probes and the refined stage are run again
    seen.clear()
    again = run_recipe(dataclasses.replace(recipe, stage_probe_decisions=quick), out, probe_fn=stub,
                          resume=True, **QUIET)
    assert again["steps"]["distilled/train"] == s["distilled/train"]
    assert (out / "distilled" / "probes-before-1" / "agent-seed1" / "exploit.json").is_file()
    assert (out / "refined-before-1" / "train" / "policy.pt").is_file()
    assert sorted(w.split("/")[0] for w, *_ in seen) == ["distilled"] * 4 + ["refined"] * 4
    assert {d for _, _, d, _ in seen} == {quick}
    with pytest.raises(ValueError, match="stage_probe_decisions: 1,000-decision probes measure the distilled"):
        rc.make_recipe("tiny", stage_probe_decisions=1000)


def _staged_stub(calls: list[dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A :func:`_stub_probe` that records every probe's target round, start and arguments in ``calls``; its gains:
    round 0 +0.3, round 1 +0.9, the distilled network +0.2, the refined one +0.1 (so the refined one is kept)."""
    def gain(spec: str, warm_start: str, kw: dict[str, Any]) -> float:
        calls.append({"round": _round_of(spec), "warm_start": warm_start, **kw})
        return {"round0": 0.3, "round1": 0.9, "distilled": 0.2, "refined": 0.1}[_round_of(spec)]
    return _stub_probe(gain)


def test_a_one_lance_best_response_joins_the_refined_stage_s_league(tmp_path: Path) -> None:
    """``refine_lance``: before the refined stage trains, a best response deciding only the pares betting is
    trained against the distilled network from its weights (at ``refine_lance_learning_rate``), and the refined
    stage's league holds it at a quarter (:data:`REFINE_LANCE_SHARES`), played with the distilled network in its
    other decisions. Resumed with another lance budget, the refined stage runs again with a new lance probe."""
    calls: list[dict[str, Any]] = []
    stub = _staged_stub(calls)
    out = tmp_path / "run"
    recipe = rc.make_recipe("tiny", rounds=1, distill_rounds=2, distill_decisions=2048, distill_epochs=1,
                            refine_decisions=1024, refine_lance="pares", refine_lance_decisions=32 * 8 * 2,
                            refine_lance_learning_rate=2e-3)
    data = run_recipe(recipe, out, probe_fn=stub, **QUIET)
    s = data["steps"]
    [lance] = [c for c in calls if c.get("learner_decides") == "pares"]
    assert lance["round"] == "distilled" and lance["warm_start"] == "agent"
    assert lance["decisions"] == 32 * 8 * 2 and lance["learning_rate"] == 2e-3
    assert list(s).index("refined/lance/probes") < list(s).index("refined/train")
    policy = s["refined/lance/probes"]["policies"][0]
    league = json.loads((out / "refined" / "train" / "args.json").read_text())["league_mix"]
    shares = dict(x.rsplit(":", 1) for x in league.split(","))
    assert float(shares[policy]) == pytest.approx(0.25) and float(shares["self"]) == pytest.approx(0.2)
    assert sum(float(w) for k, w in shares.items() if k.startswith(str(out / "distilled" / "probes"))) == \
        pytest.approx(0.2)
    from experiments.train.league import frozen_agent
    member = frozen_agent(policy, MusConfig())
    assert member.decides == "pares" and member.name == policy
    assert read_recipe(out)["probe_decisions"] >= 32 * 8 * 2
    # another lance budget: the refined stage again, its lance probe too
    calls.clear()
    run_recipe(dataclasses.replace(recipe, refine_lance_decisions=32 * 8 * 4), out, probe_fn=stub, resume=True,
                  **QUIET)
    assert (out / "refined-before-1" / "lance" / "probes").is_dir()
    assert [c["decisions"] for c in calls if c.get("learner_decides") == "pares"] == [32 * 8 * 4]
    with pytest.raises(ValueError, match="refine_lance: a pares best response joins the refined stage's league"):
        rc.make_recipe("tiny", distill_rounds=2, refine_lance="pares")
    with pytest.raises(ValueError, match="Recipe.refine_lance: distinct lances among bidding, ordago, grande"):
        rc.make_recipe("tiny", distill_rounds=2, refine_decisions=1024, refine_lance="envido")


def test_two_one_lance_best_responses_and_agent_start_stage_probes(tmp_path: Path) -> None:
    """``refine_lance="pares,juego"``: one best response per lance, each deciding only its lance's betting against
    the distilled network from its weights, side by side; the refined league holds the first at a quarter and the
    second at ``more_lance``, taken from the learner's own share (the rest as record T's). ``stage_probe_starts``
    ``("agent",)``: the distilled and refined networks are probed from their own weights only, the rounds by their
    plan. Resumed with both starts, the stage probes (and the refined stage) run again."""
    calls: list[dict[str, Any]] = []
    stub = _staged_stub(calls)
    out = tmp_path / "run"
    stage = 32 * 8 * 8
    recipe = rc.make_recipe("tiny", rounds=1, distill_rounds=2, distill_decisions=2048, distill_epochs=1,
                            refine_decisions=1024, refine_lance="pares,juego", refine_lance_decisions=32 * 8 * 2,
                            stage_probe_decisions=stage, stage_probe_starts=("agent",))
    data = run_recipe(recipe, out, probe_fn=stub, **QUIET)
    s = data["steps"]
    lances = {c["learner_decides"]: c for c in calls if c.get("learner_decides", "all") != "all"}
    assert sorted(lances) == ["juego", "pares"]
    assert all(c["round"] == "distilled" and c["warm_start"] == "agent" for c in lances.values())
    assert s["refined/lance/probes"]["labels"] == ["pares", "juego"]
    pares, juego = s["refined/lance/probes"]["policies"]
    assert Path(pares).parent.name == "pares-seed0" and Path(juego).parent.name == "juego-seed0"
    league = json.loads((out / "refined" / "train" / "args.json").read_text())["league_mix"]
    shares = {k: float(w) for k, w in (x.rsplit(":", 1) for x in league.split(","))}
    assert shares[pares] == pytest.approx(0.25) and shares[juego] == pytest.approx(0.1)
    assert shares["self"] == pytest.approx(0.1) and shares["rule"] == pytest.approx(0.1)
    assert sum(shares.values()) == pytest.approx(1.0)
    staged = [c for c in calls if c.get("learner_decides", "all") == "all" and c["round"] in ("distilled", "refined")]
    assert len(staged) == 4 and {c["warm_start"] for c in staged} == {"agent"}
    assert {c["decisions"] for c in staged} == {stage}
    assert s["distilled/probes"]["labels"] == ["agent", "agent"]
    rounds = [c for c in calls if c["round"] == "round0"]
    assert sorted(c["warm_start"] for c in rounds) == ["agent", "equity"]
    # both starts: the distilled network stays, its probes and the refined stage run again
    calls.clear()
    again = run_recipe(dataclasses.replace(recipe, stage_probe_starts=("equity", "agent")), out, probe_fn=stub,
                          resume=True, **QUIET)
    assert again["steps"]["distilled/train"] == s["distilled/train"]
    assert again["steps"]["distilled/probes"]["labels"] == ["equity", "equity", "agent", "agent"]
    assert (out / "distilled" / "probes-before-1" / "agent-seed0" / "exploit.json").is_file()
    with pytest.raises(ValueError, match="at most 3 lances"):
        rc.make_recipe("tiny", distill_rounds=2, refine_decisions=1024, refine_lance="pares,juego,grande,chica")
    with pytest.raises(ValueError, match="distinct lances"):
        rc.make_recipe("tiny", distill_rounds=2, refine_decisions=1024, refine_lance="pares,pares")
    ordago = rc.make_recipe("tiny", distill_rounds=2, refine_decisions=1024, refine_lance="pares,ordago")
    assert rc.refine_lances(ordago) == ["pares", "ordago"]           # an órdago-only best response (--only ordago)
    with pytest.raises(ValueError, match="stage_probe_starts: agent start.s. of the stage probes need"):
        rc.make_recipe("tiny", distill_rounds=2, stage_probe_starts=("agent",))
    with pytest.raises(ValueError, match="stage_probe_starts: a tuple of distinct starts"):
        rc.make_recipe("tiny", distill_rounds=2, stage_probe_decisions=stage, stage_probe_starts=("clone",))


def test_the_plan_lists_the_trainings_and_probes_a_recipe_runs_with_their_decisions(straight) -> None:
    """``mus league --plan`` (:func:`recipe_plan.planned_steps`): the steps a recipe runs, in order, with the
    decisions each training and probe ran (whole updates)."""
    from experiments.population.recipe_plan import planned_steps
    _, data = straight
    s = data["steps"]
    planned = planned_steps(rc.make_recipe("tiny"))
    assert [p.name for p in planned] == [name for name in s if name.endswith(("/train", "/probes"))]
    for p in planned:
        ran = [s[p.name]["decisions"]] if p.kind == "train" else [row["decisions"] for row in s[p.name]["probes"]]
        assert list(p.decisions) == ran, p.name
    staged = rc.make_recipe("tiny", distill_rounds=2, distill_replicas=2, refine_decisions=1024,
                            refine_lance="pares,ordago", stage_probe_decisions=32 * 8 * 8)
    names = [p.name for p in planned_steps(staged)]
    assert names[-6:] == ["replica1", "distilled/train", "distilled/probes", "refined/lance/probes", "refined/train",
                          "refined/probes"]
    assert [len(p.decisions) for p in planned_steps(staged)][-6:] == [3 + 6, 1, 4, 2, 1, 4]


def test_the_plan_s_minutes_run_probes_side_by_side_longest_first() -> None:
    from experiments.population.recipe_plan import PlannedStep, Rates, step_minutes
    r = Rates(train_rate=1000, probe_rate=1000, probe_eval_minutes=0, report_minutes=0, meta_minutes=0)
    three = PlannedStep("distilled/probes", "probes", (60_000,) * 3, 3)
    assert [step_minutes(three, w, r) for w in (1, 2, 3)] == [3, 2, 1]          # whole waves, not decisions / rate
    assert step_minutes(PlannedStep("round1/probes", "probes", (60_000, 60_000, 120_000), 3), 2, r) == 2
    assert step_minutes(PlannedStep("round1/train", "train", (120_000,)), 2, r) == 2
    slow = dataclasses.replace(r, probe_eval_minutes=1.0, meta_minutes=0.5)
    assert step_minutes(PlannedStep("round1/probes", "probes", (60_000,) * 2, 2), 2, slow) == 2.5
    # a one-lance probe trains a few percent of the decisions: its own rate
    lance = PlannedStep("refined/lance/probes", "lance", (120_000,), 1)
    assert step_minutes(lance, 2, dataclasses.replace(r, lance_probe_rate=4000)) == 0.5


def test_mus_league_plan_prints_the_steps_and_writes_nothing(tmp_path: Path, capsys) -> None:
    from experiments.commands import league
    league.main(["--preset", "tiny", "--out", str(tmp_path / "p"), "--plan", "--rates", "1000,500"])
    text = capsys.readouterr().out
    assert "| round0/train | training |" in text and "| final/probes | 2 probes, 2 at once |" in text
    assert "1,000 decisions/s for a training alone and 500 for each of 2 probe(s)" in text
    assert not (tmp_path / "p").exists()
    for bad, says in ((["--plan", "--rates", "1000"], "--rates: two numbers"),
                      (["--plan", "--rates", "0,5"], "must be above 0"), (["--rates", "1,2"], "only with --plan")):
        with pytest.raises(SystemExit) as e:
            league.main(["--preset", "tiny", "--out", str(tmp_path / "p"), *bad])
        assert e.value.code == 2 and says in capsys.readouterr().err
