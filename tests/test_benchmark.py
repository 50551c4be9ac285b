"""``mus benchmark`` (issue 36): the protocol's pieces, the rows end to end at a tiny budget (results files with
every column the table needs), resumes, the table and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from experiments.benchmark import protocol
from experiments.benchmark.protocol import Budget, Clock, Trained
from experiments.benchmark.run import COLUMNS, TINY_EVALUATION, run_row
from experiments.benchmark.table import benchmark_markdown, collect, curves_figure, ranking

torch = pytest.importorskip("torch")


class FakeTime:
    """perf_counter for the clock: advanced by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_clock_counts_training_only_and_survives_a_resume(tmp_path: Path, monkeypatch) -> None:
    fake = FakeTime()
    monkeypatch.setattr(protocol.time, "perf_counter", fake)
    budget = Budget(minutes=10.0, curve_points=5)
    clock = Clock(tmp_path, budget).start()
    fake.now += 120                                     # 2 minutes of training
    assert clock.minutes == pytest.approx(2.0) and clock.point_due() and not clock.done
    with clock.paused():
        fake.now += 600                                 # a long measurement: not training
    assert clock.minutes == pytest.approx(2.0)
    clock.add_point({"minutes": 2.0, "vs_rule": -1.0})
    assert not clock.point_due() and clock.next_point == pytest.approx(4.0)
    clock.save()
    fake.now += 60                                      # trained after the save, then the process stops
    again = Clock(tmp_path, budget).start()
    assert again.minutes == pytest.approx(2.0) and again.curve == [{"minutes": 2.0, "vs_rule": -1.0}]
    fake.now += 8 * 60
    assert again.done and again.minutes == pytest.approx(10.0)
    with pytest.raises(ValueError, match="positive number of minutes"):
        Budget(minutes=0)


def test_an_exported_mlp_plays_as_the_network_it_came_from(tmp_path: Path) -> None:
    from agents.policy import build_net, load_policy_file
    from mus_env import NUM_ACTIONS
    from mus_env.observation import OBS_DIM

    g = torch.Generator().manual_seed(0)
    layers = [(torch.randn(48, OBS_DIM, generator=g) * 0.1, torch.randn(48, generator=g) * 0.1),
              (torch.randn(24, 48, generator=g) * 0.1, torch.randn(24, generator=g) * 0.1),
              (torch.randn(NUM_ACTIONS, 24, generator=g), torch.randn(NUM_ACTIONS, generator=g))]
    from experiments.benchmark.export import export_mlp

    path = export_mlp(tmp_path / "p.pt", layers, logit_scale=20.0)
    net = build_net(load_policy_file(path), path)
    x = torch.rand(5, OBS_DIM, generator=g)
    expected = x
    for k, (w, b) in enumerate(layers):
        expected = expected @ w.T + b
        if k < len(layers) - 1:
            expected = torch.relu(expected)
    logits, values = net(x)
    assert torch.allclose(logits, 20.0 * expected, atol=1e-4) and torch.all(values == 0)
    with pytest.raises(ValueError, match="do not chain"):
        export_mlp(tmp_path / "q.pt", [layers[0], layers[2]])


@pytest.mark.parametrize("name", ["mus-train", "sb3-maskable-ppo"])
def test_a_row_end_to_end_writes_every_column_and_a_second_run_trains_nothing(tmp_path: Path, name: str,
                                                                                monkeypatch) -> None:
    if name == "sb3-maskable-ppo":
        pytest.importorskip("sb3_contrib")
    budget = Budget(minutes=0.08, tiny=True, curve_points=2)
    results = run_row(name, budget, tmp_path, TINY_EVALUATION, log=lambda m: None)
    saved = json.loads((tmp_path / f"{name}-seed0" / "results.json").read_text())
    assert sorted(set(COLUMNS) - set(saved)) == []
    assert saved["decisions"] > 0 and saved["train_minutes"] >= budget.minutes and saved["curve"]
    assert set(saved["curve"][0]) == {"minutes", "decisions", "vs_rule", "vs_rule_lo", "vs_rule_hi"}
    for key in ("vs_rule", "vs_equity", "probe"):
        assert set(saved[key]) >= {"stones", "stones_lo", "stones_hi", "win", "hands", "abandoned"}
    assert saved["tiny"] is True
    from agents import make_agent
    from mus_env import MusGame

    agent = make_agent(saved["policy"])
    game, rng = MusGame(seed=3), np.random.default_rng(0)
    for _ in range(20):
        if game.is_over:
            break
        a = agent.act(game.observe(game.current_player), game.legal_action_mask(), rng)
        assert a in game.legal_actions()
        game.step(int(a))
    # done stages are never run again
    import experiments.evaluate.report_card as card_module
    import experiments.population.exploit as exploit_module

    def refuse(*args, **kwargs):
        raise AssertionError("a finished stage ran again")
    monkeypatch.setattr(card_module, "report_card", refuse)
    monkeypatch.setattr(exploit_module, "probe", refuse)
    monkeypatch.setattr(protocol, "curve_point", refuse)
    assert run_row(name, budget, tmp_path, TINY_EVALUATION, log=lambda m: None)["vs_rule"] == results["vs_rule"]


def test_a_row_stopped_in_its_probe_finishes_the_probe_when_run_again(tmp_path: Path, monkeypatch) -> None:
    """The probe stage is done when its result is written (``probe/exploit.json``), not when its folder exists: a
    row stopped while probing (the folder begun, no result) probes again when run again, and writes its results."""
    import experiments.population.exploit as exploit_module

    real = exploit_module.probe
    calls = []

    def stopped_in_the_probe(*args, **kwargs):
        calls.append(kwargs.get("resume"))
        if len(calls) == 1:
            Path(kwargs["out"]).mkdir(parents=True)
            (Path(kwargs["out"]) / "args.json").write_text("{}")
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(exploit_module, "probe", stopped_in_the_probe)
    budget = Budget(minutes=0.05, tiny=True, curve_points=1)
    with pytest.raises(KeyboardInterrupt):
        run_row("mus-train", budget, tmp_path, TINY_EVALUATION, log=lambda m: None)
    assert (tmp_path / "mus-train-seed0" / "probe").is_dir()
    assert not (tmp_path / "mus-train-seed0" / "results.json").exists()
    results = run_row("mus-train", budget, tmp_path, TINY_EVALUATION, log=lambda m: None)
    assert len(calls) == 2 and results["probe"]["hands"] > 0
    assert (tmp_path / "mus-train-seed0" / "probe" / "exploit.json").is_file()


def test_a_stopped_row_continues_with_its_minutes_and_curve(tmp_path: Path, monkeypatch) -> None:
    """A row stopped after its first curve point resumes from it: the point kept, the clock's minutes not reset,
    more decisions trained."""
    import experiments.benchmark.row_sb3 as row

    pytest.importorskip("sb3_contrib")
    budget = Budget(minutes=0.2, tiny=True, curve_points=2)     # 6 s between the points, on any machine
    real = row.curve_point
    calls = []

    def stop_after_one(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(row, "curve_point", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        row.train(tmp_path, budget, log=lambda m: None)
    first = json.loads((tmp_path / "clock.json").read_text())
    assert len(first["curve"]) == 1 and first["minutes"] > 0 and Trained.load(tmp_path) is None
    monkeypatch.setattr(row, "curve_point", real)
    done = row.train(tmp_path, budget, log=lambda m: None)
    assert done.curve[0] == first["curve"][0] and len(done.curve) == 2
    assert done.minutes >= budget.minutes and done.decisions > first["curve"][0]["decisions"]


def _fake(row: str, seed: int, vs_rule: float, vs_equity: float | None = None) -> dict:
    m = {"stones": vs_rule, "stones_lo": vs_rule - 0.1, "stones_hi": vs_rule + 0.1, "win": 0.6}
    e = m if vs_equity is None else {**m, "stones": vs_equity}
    return {"row": row, "seed": seed, "framework": "f", "algorithm": "a", "budget_minutes": 30, "train_minutes": 30,
            "decisions": 1000, "policy": "p.pt",
            "vs_rule": m, "vs_equity": e, "probe": m, "wall_minutes": {"train": 30, "card": 2},
            "curve": [{"minutes": 15, "decisions": 500, "vs_rule": vs_rule - 1, "vs_rule_lo": vs_rule - 1.2,
                       "vs_rule_hi": vs_rule - 0.8}], "versions": {"torch": "x"}, "settings": {},
            "commands": {"row": "mus benchmark run"}, "evaluation": {}}


def test_the_table_ranks_the_rows_by_their_mean_over_seeds(tmp_path: Path) -> None:
    for row, seed, v in (("sb3-maskable-ppo", 0, 1.0), ("sb3-maskable-ppo", 1, 3.0), ("mus-train", 0, 1.5),
                         ("mus-train", 1, 1.5)):
        (tmp_path / f"{row}-seed{seed}").mkdir()
        (tmp_path / f"{row}-seed{seed}" / "results.json").write_text(json.dumps(_fake(row, seed, v)))
    results = collect(tmp_path)
    assert [(r["row"], r["seed"]) for r in results] == [("mus-train", 0), ("mus-train", 1),
                                                       ("sb3-maskable-ppo", 0), ("sb3-maskable-ppo", 1)]
    assert [x["row"] for x in ranking(results)] == ["sb3-maskable-ppo", "mus-train"]      # 2.0 before 1.5
    text = benchmark_markdown(results)
    assert "| 1 | sb3-maskable-ppo | 2 | +2.00 | +2.00 | **+2.00** |" in text and "+1.00 [+0.90, +1.10]" in text
    assert "dropped" not in text
    # a probe that lost deals to endless raises says so beside its gain
    results[0]["probe"] = {**results[0]["probe"], "abandoned": 1234}
    assert "+1.50 [+1.40, +1.60] (1,234 deals dropped: endless raises)" in benchmark_markdown(results)
    assert curves_figure(results, tmp_path / "c.png").stat().st_size > 5000
    # the footer names each package's version once, whether a row recorded its local label or not
    results[1]["versions"], results[2]["versions"] = {"torch": "2.13.0+cpu"}, {"torch": "2.13.0"}
    assert benchmark_markdown(results).count("torch 2.13.0") == 1
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text(json.dumps({"row": "x"}))
    with pytest.raises(ValueError, match="not a benchmark results file"):
        collect(tmp_path)


def test_a_row_that_beats_one_baseline_only_ranks_below_one_that_beats_both() -> None:
    results = [_fake("sb3-maskable-ppo", 0, vs_rule=2.7, vs_equity=0.2), _fake("mus-train", 0, 0.85, 0.96),
               _fake("rllib-ppo", 0, -1.76, -0.58)]
    ranked = ranking(results)
    assert [x["row"] for x in ranked] == ["mus-train", "sb3-maskable-ppo", "rllib-ppo"]
    assert [x["worse"] for x in ranked] == [0.85, 0.2, -1.76]
    assert "| 1 | mus-train | 1 | +0.85 | +0.96 | **+0.85** | +0.85 |" in benchmark_markdown(results)
    # a row without its margin over equity has no weaker baseline to rank by: it goes last, however it did vs rule
    results.append({**_fake("tianshou-dqn", 0, 3.0), "vs_equity": {}})
    assert ranking(results)[-1]["row"] == "tianshou-dqn"


def test_the_command_line_lists_the_rows_and_refuses_an_unknown_one(capsys) -> None:
    from experiments.cli import main

    main(["benchmark", "rows"])
    out = capsys.readouterr().out
    assert "mus-train" in out and "openspiel-nfsp" in out and '".[sb3]"' in out
    with pytest.raises(SystemExit) as e:
        main(["benchmark", "run", "no-such-row"])
    assert e.value.code == 2


def test_the_schedule_runs_what_is_not_done_seeds_outermost_and_continues(tmp_path: Path) -> None:
    from experiments.benchmark.run import row_folder
    from experiments.benchmark.schedule import pending, run_all

    calls: list[list[str]] = []

    def finish(argv: list[str]) -> int:            # a row that ends: its results file with the budget
        calls.append(argv)
        name, seed = argv[argv.index("run") + 1], int(argv[argv.index("--seed") + 1])
        folder = row_folder(tmp_path, name, seed)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "results.json").write_text(json.dumps({"budget_minutes": float(argv[argv.index("--minutes") + 1]),
                                                         "tiny": False}))
        return 0

    rows = ["mus-train", "sb3-maskable-ppo"]
    ran = run_all(rows, (0, 1), tmp_path, 2.0, run=finish, log=lambda s: None)
    assert [(n, s) for n, s, _ in ran] == [("mus-train", 0), ("sb3-maskable-ppo", 0), ("mus-train", 1),
                                          ("sb3-maskable-ppo", 1)]
    assert pending(rows, (0, 1), tmp_path, 2.0) == []
    assert run_all(rows, (0, 1), tmp_path, 2.0, run=finish, log=lambda s: None) == []   # nothing left to run
    # another budget is another schedule; an interrupted row stops it, a failed one does not
    statuses = iter([1, 130])
    ran = run_all(rows, (0, 1), tmp_path, 3.0, run=lambda argv: next(statuses), log=lambda s: None)
    assert ran == [("mus-train", 0, 1), ("sb3-maskable-ppo", 0, 130)]
    with pytest.raises(ValueError, match="unknown benchmark row"):
        pending(["no-such-row"], (0,), tmp_path, 2.0)


def test_mus_benchmark_all_runs_a_tiny_row_as_its_own_process(tmp_path: Path, capsys) -> None:
    from experiments.cli import main

    args = ["benchmark", "all", "--rows", "mus-train", "--seeds", "1", "--minutes", "0.02", "--tiny", "true",
            "--out", str(tmp_path)]
    main(args)
    results = json.loads((tmp_path / "mus-train-seed0" / "results.json").read_text())
    assert results["tiny"] is True and results["budget_minutes"] == 0.02 and set(COLUMNS) <= set(results)
    assert "| mus-train |" in capsys.readouterr().out       # the table of what is done follows
    main(args)
    assert "0 run(s) of 0.02 minutes to go, 1 done" in capsys.readouterr().out
