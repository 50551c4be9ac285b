"""``mus study``: probes of several agents and the table over them (stub probes and evaluations: the arithmetic and
the bookkeeping, not the training)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from experiments.population.study import (
    MARKDOWN_NAME,
    TABLE_NAME,
    StudyAgent,
    cross_file,
    probe_folder_of,
    run_study,
    study_agents,
)
from experiments.population.study_table import (
    LANCE_PARTS,
    NO_SE,
    kendall_tau,
    mean_se,
    rank_agreement,
    spearman_rho,
    study_markdown,
    study_table,
)

AGENTS = [StudyAgent("s0", "rule"), StudyAgent("s1", "random"), StudyAgent("s2", "ordago")]


def _result(spec: str, seed: int, stones: float, win: float, decisions: int = 1000, start: str = "equity",
            by_lance: dict[str, float] | None = None) -> dict[str, Any]:
    gain = {"stones": stones, "stones_lo": stones - 0.1, "stones_hi": stones + 0.1, "win": win,
            "win_lo": win - 0.02, "win_hi": win + 0.02,
            "by_lance": by_lance if by_lance is not None else {p: stones / len(LANCE_PARTS) for p in LANCE_PARTS},
            "ordago_rate": stones / 10, "opp_ordago_rate": 0.05}
    return {"agent": spec, "learner_decides": "all", "warm_start": start, "seed": seed, "gain": gain,
            "gain_greedy": {**gain, "stones": stones - 0.5}, "budget": {"minutes": 0, "decisions": decisions},
            "trained": {"decisions": decisions, "minutes": 1.0},
            "held_out": {"hands": 100, "games": 10, "eval_seed": 2024}}


#: (agent label, probe seed) -> gain of the fake probes; the per-agent largest: s0 0.9, s1 0.4, s2 1.6.
GAINS = {("s0", 0): 0.9, ("s0", 1): 0.3, ("s1", 0): 0.2, ("s1", 1): 0.4, ("s2", 0): 1.6, ("s2", 1): 1.1}


def _results(decisions: int = 1000, scale: float = 1.0) -> dict[str, list[dict[str, Any]]]:
    return {a.label: [_result(a.spec, k, scale * GAINS[a.label, k], 0.5 + GAINS[a.label, k] / 10, decisions,
                              by_lance={p: (i + 1) * GAINS[a.label, k] for i, p in enumerate(LANCE_PARTS)})
                      for k in (0, 1)] for a in AGENTS}


def test_the_table_s_mean_and_standard_error_are_those_of_the_per_seed_values_it_lists() -> None:
    table = study_table([a.label for a in AGENTS], [a.spec for a in AGENTS], {1000: _results()})
    t = table["lengths"][0]
    g = t["over_agents"]["largest_gain"]
    assert g["values"] == {"s0": 0.9, "s1": 0.4, "s2": 1.6}          # each agent's largest probe
    listed = np.array(list(g["values"].values()))
    assert g["n"] == 3 and g["mean"] == pytest.approx(listed.mean())
    assert g["se"] == pytest.approx(listed.std(ddof=1) / math.sqrt(3))
    assert (g["worst_label"], g["worst"]) == ("s2", 1.6)
    for key, s in t["over_agents"]["by_probe"].items():                 # each probe seed alone, over the agents
        xs = np.array(list(s["values"].values()))
        assert s["se"] == pytest.approx(xs.std(ddof=1) / math.sqrt(len(xs))) and s["mean"] == pytest.approx(xs.mean())
        assert s["values"] == {a.label: GAINS[a.label, int(key[-1])] for a in AGENTS}
    for i, part in enumerate(LANCE_PARTS):                              # the split of each agent's largest probe
        s = t["over_agents"]["by_lance"][part]
        xs = np.array(list(s["values"].values()))
        assert xs == pytest.approx((i + 1) * listed)
        assert s["se"] == pytest.approx(xs.std(ddof=1) / math.sqrt(3))
    r = t["over_agents"]["rates"]                                       # the largest probe's órdago rate
    assert set(r) == {"ordago_rate", "opp_ordago_rate"}
    assert r["ordago_rate"]["mean"] == pytest.approx(listed.mean() / 10)
    assert r["opp_ordago_rate"]["se"] == pytest.approx(0.0)
    w = t["over_agents"]["largest_win"]
    assert w["mean"] == pytest.approx(np.mean([0.59, 0.54, 0.66]))
    assert [a["max"]["probe"] for a in t["agents"]] == ["equity-seed0", "equity-seed1", "equity-seed0"]
    assert table["schema"] == 1 and table["rank_agreement"] == []
    text = study_markdown(table)
    assert f"**{listed.mean():+.3f} ± {listed.std(ddof=1) / math.sqrt(3):.3f}**" in text and "worst s2 +1.600" in text
    # one agent: no standard error, and the page says so
    one = study_table(["s0"], ["rule"], {1000: {"s0": _results()["s0"]}})["lengths"][0]["over_agents"]["largest_gain"]
    assert one["se"] is None and one["se_note"] == NO_SE and mean_se([2.0]) == (2.0, None)
    assert NO_SE in study_markdown(study_table(["s0"], ["rule"], {1000: {"s0": _results()["s0"]}}))
    with pytest.raises(ValueError, match="finite values"):
        mean_se([])


def test_rank_agreement_of_known_orders() -> None:
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)      # 2 concordant pairs, 1 discordant
    assert spearman_rho([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)      # 1 - 6 * 2 / (3 * 8)
    assert kendall_tau([1, 1, 1], [1, 2, 3]) is None and spearman_rho([1, 1], [1, 2]) is None
    r = rank_agreement({"a": 0.1, "b": 0.5, "c": 0.3}, {"a": 0.2, "b": 0.9, "c": 0.4})
    assert r["kendall_tau"] == pytest.approx(1.0) and r["order_short"] == r["order_long"] == ["b", "c", "a"]
    stats = pytest.importorskip("scipy.stats")
    a, b = [0.3, 1.2, 0.7, 0.7, 2.0], [0.1, 0.9, 1.1, 0.5, 0.5]          # ties on both sides: tau-b
    assert kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic)
    assert spearman_rho(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    # in a study of two lengths: the short probes' order against the long ones'
    table = study_table(["s0", "s1", "s2"], ["rule", "random", "ordago"],
                        {100: _results(100, 1.0), 1000: {**_results(1000, 2.0),
                                                         "s1": [_result("random", k, 9.0 + k, 0.9, 1000)
                                                                for k in (0, 1)]}})
    agree = table["rank_agreement"][0]
    assert (agree["short"], agree["long"]) == (100, 1000)
    assert agree["order_short"] == ["s2", "s0", "s1"] and agree["order_long"] == ["s1", "s2", "s0"]
    assert agree["kendall_tau"] == pytest.approx(-1 / 3) and agree["spearman_rho"] == pytest.approx(-0.5)


def _stub(calls: list[tuple[str, int, int, bool]]) -> Any:
    labels = {a.spec: a.label for a in AGENTS}

    def probe(spec: str, out: Path, warm_start: str, seed: int, decisions: int, resume: bool, **kw: Any) -> dict:
        calls.append((labels[spec], decisions, seed, resume))
        r = _result(spec, seed, GAINS[labels[spec], seed] * decisions / 1000, 0.5, decisions, warm_start)
        out.mkdir(parents=True, exist_ok=True)
        (out / "exploit.json").write_text(json.dumps(r))
        return r
    return probe


def test_a_resumed_study_runs_only_the_probes_without_a_result(tmp_path: Path) -> None:
    out = tmp_path / "study"
    done = probe_folder_of(out, "s1", 1000, "equity", 1)
    done.mkdir(parents=True)
    (done / "exploit.json").write_text(json.dumps(_result("random", 1, 0.4, 0.5, 1000)))
    stopped = probe_folder_of(out, "s0", 1000, "equity", 0)             # a probe stopped after a checkpoint
    stopped.mkdir(parents=True)
    (stopped / "checkpoint.pt").write_bytes(b"")
    (probe_folder_of(out, "s2", 1000, "equity", 0)).mkdir(parents=True)   # one stopped before any: a folder only
    calls: list[tuple[str, int, int, bool]] = []
    table = run_study(AGENTS, 2, [1000], out, resume=True, log=lambda s: None, probe_fn=_stub(calls))
    assert calls == [("s0", 1000, 0, True), ("s0", 1000, 1, False), ("s1", 1000, 0, False),
                     ("s2", 1000, 0, False), ("s2", 1000, 1, False)]
    assert json.loads((out / TABLE_NAME).read_text()) == table and (out / MARKDOWN_NAME).is_file()
    calls.clear()                                                       # all done: nothing runs again
    assert run_study(AGENTS, 2, [1000], out, resume=True, log=lambda s: None, probe_fn=_stub(calls)) == table
    assert calls == []
    # a finished probe of another agent in the folder: refused before anything runs
    (done / "exploit.json").write_text(json.dumps(_result("equity", 1, 0.4, 0.5, 1000)))
    with pytest.raises(ValueError, match="is a probe of 'equity'"):
        run_study(AGENTS, 2, [1000], out, resume=True, log=lambda s: None, probe_fn=_stub(calls))
    assert calls == []
    with pytest.raises(ValueError, match="already holds a study"):      # and no silent rerun without --resume
        run_study(AGENTS, 2, [1000], out, log=lambda s: None, probe_fn=_stub(calls))


def test_the_cross_matrix_entry_i_j_is_agent_i_s_probes_against_agent_j(tmp_path: Path) -> None:
    index = {a.spec: n for n, a in enumerate(AGENTS)}
    seen: list[tuple[str, str, str]] = []

    def evaluate(policy: Path, decides: str, trained_on: str, against: str, hands: int, games: int, seed: int,
                 config: Any) -> dict[str, Any]:
        seen.append((policy.parent.name, trained_on, against))
        probe_seed = int(policy.parent.name[-1])
        stones = 10 * index[trained_on] + index[against] + probe_seed / 10
        return {"stones": stones, "win": 0.5 + stones / 100, "trained_on": trained_on}

    out = tmp_path / "study"
    calls: list[tuple[str, int, int, bool]] = []
    table = run_study(AGENTS, 2, [1000], out, cross=True, log=lambda s: None, probe_fn=_stub(calls),
                      evaluate_fn=evaluate, eval_hands=30, eval_games=6)
    c = table["lengths"][0]["cross"]
    assert c["rows"] == c["cols"] == ["s0", "s1", "s2"]
    assert np.array(c["mean"]).shape == (3, 3) == np.array(c["max"]).shape
    for i in range(3):
        for j in range(3):
            assert c["mean"][i][j] == pytest.approx(10 * i + j + 0.05)   # the mean of probe seeds 0 and 1
            assert c["max"][i][j] == pytest.approx(10 * i + j + 0.1)
    assert len(seen) == 2 * 3 * 3 and len(set(seen)) == 18
    assert cross_file(out, 1000, "s1", "equity-seed1", "s2").is_file()
    assert "| s1 | +10.050 [+10.100] | +11.050 [+11.100] | +12.050 [+12.100] |" in study_markdown(table)
    seen.clear()                                                        # resumed: the evaluations are read back
    again = run_study(AGENTS, 2, [1000], out, cross=True, resume=True, log=lambda s: None, probe_fn=_stub(calls),
                      evaluate_fn=evaluate)
    assert seen == [] and again["lengths"][0]["cross"] == c


@pytest.mark.parametrize(("specs", "labels", "kwargs", "words"), [
    (["rule", "nosuchbot"], None, {}, "nosuchbot"),
    (["rule", "equity"], ["a", "a"], {}, "the label 'a' is given to two agents"),
    (["rule", "runs/x/policy.pt"], None, {}, "does not exist"),
    (["rule", "equity"], ["a"], {}, "one per agent"),
    (["rule", "equity"], ["a", "b/c"], {}, "a label is a folder name"),
    ([], None, {}, "at least one agent"),
    (["human"], None, {}, "a human cannot be probed"),
    (["rule", "equity"], None, {"seeds": 0}, "--seeds must be a count >= 1"),
    (["rule", "equity"], None, {"decisions": []}, "--decisions must be ints >= 1"),
    (["rule", "equity"], None, {"decisions": [10, 10]}, "given twice"),
    (["rule", "equity"], None, {"starts": ["clone"]}, "--starts: one or more of"),
    (["rule", "equity"], None, {"starts": ["agent"]}, "needs a torch policy"),
    (["rule"], None, {"cross": True}, "give two agents or more"),
])
def test_bad_input_is_refused_before_anything_runs(tmp_path: Path, specs: list[str], labels: list[str] | None,
                                                    kwargs: dict[str, Any], words: str) -> None:
    calls: list[tuple[str, int, int, bool]] = []

    def run() -> None:
        agents = study_agents(specs, labels)
        run_study(agents, **{"seeds": 2, "decisions": [1000], **kwargs}, out=tmp_path / "s", log=lambda s: None,
                  probe_fn=_stub(calls))

    with pytest.raises(ValueError, match=words):
        run()
    assert calls == [] and not (tmp_path / "s").exists()


def test_two_policy_files_of_one_name_need_labels(tmp_path: Path) -> None:
    """Two policy files both called ``policy.pt`` would share a folder: the default labels refuse them."""
    with pytest.raises(ValueError, match="the label 'policy' is given to two agents; give each its own"):
        study_agents([str(tmp_path / "a" / "policy.pt"), str(tmp_path / "b" / "policy.pt")])
    assert [a.label for a in study_agents(["rule", "equity"], ["s0", "s1"])] == ["s0", "s1"]


def test_mus_study_refuses_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from experiments.commands import study as study_command

    for argv, words in ((["rule", "rule", "--decisions", "1000"], "the label 'rule' is given to two agents"),
                        (["rule", "nosuchbot", "--decisions", "1000"], "nosuchbot"),
                        (["rule", "equity", "--labels", "a,b", "--decisions", "0"], "--decisions")):
        with pytest.raises(SystemExit) as e:
            study_command.main([*argv, "--out", str(tmp_path / "s")])
        err = capsys.readouterr().err
        assert e.value.code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert not (tmp_path / "s").exists()


def test_mus_study_passes_its_options_to_the_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from experiments.commands import study as study_command
    from experiments.population import study

    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    monkeypatch.setattr(study, "run_study", lambda *a, **kw: seen.append((a, kw)))
    study_command.main(["rule", "equity", "--labels", "r,e", "--seeds", "3", "--seed", "5", "--decisions",
                        "13000000,80000000", "--cross", "--starts", "equity,none", "--eval-hands", "30",
                        "--out", str(tmp_path / "s")])
    (agents, seeds, decisions, out, starts), kw = seen[0]
    assert agents == [StudyAgent("r", "rule"), StudyAgent("e", "equity")] and seeds == [5, 6, 7]
    assert decisions == [13000000, 80000000] and out == str(tmp_path / "s") and starts == ["equity", "none"]
    assert kw["cross"] and kw["eval_hands"] == 30 and kw["learner_decides"] == "all"
    assert kw["command"].startswith("mus study rule equity --labels r,e")
