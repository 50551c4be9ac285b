"""The README and the docs pages: the front door stays short and its links resolve; every generated block is
in sync with the code and the measurement files, and the research notes' candidate tables with their data file;
every figure quoted in the prose equals the results file it comes from (:data:`QUOTED`); every Python example runs
as written (with smaller budgets); the tutorial's bot and the integrations' commands run; the old module paths
still import.

A fenced block preceded by ``<!-- file: NAME -->`` is written to ``NAME`` in the example's folder (later
blocks of the same page import it); one preceded by ``<!-- skip: WHY -->`` is not run.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import shutil
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hang_guards import PROCESS_S
from scripts import research_tool

from experiments.tools.update_docs import BLOCKS, REFERENCE_LADDER, code_blocks, section, update_docs

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: The guide pages (what is true now) and the research notes (dated history, figures of their day).
GUIDES = sorted((ROOT / "docs").glob("*.md"))
RESEARCH = sorted((ROOT / "docs" / "research").glob("*.md"))
PAGES = GUIDES + RESEARCH
#: The measurement files that generated blocks are rebuilt from (copied with the pages in the sync tests).
MEASURED = ("docs/ladder_results.json", "docs/bench.json", "docs/exploit_results.json", "docs/benchmark_results.json",
            REFERENCE_LADDER)

#: Replacements that shrink an example's budget, per page: each must match at least once in that page's code.
SMALLER = {
    "integrations.md": [(".learn(10_000", ".learn(64"), ("n_steps=1024", "n_steps=64"),
                        ("make_deals(1000,", "make_deals(50,"), ("MusVecEnv(64,", "MusVecEnv(8,"),
                        ("n_steps=64, batch_size=1024", "n_steps=8, batch_size=64"), (".learn(200_000)", ".learn(64)")],
    "evaluation.md": [("make_deals(500,", "make_deals(50,")],
}
#: Libraries of optional extras: a block that imports one that is missing is skipped.
OPTIONAL = ("sb3_contrib", "stable_baselines3", "ray", "tianshou", "torch", "pyspiel", "open_spiel")


def test_readme_is_a_short_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: long sections belong in docs/"
    text = "\n".join(lines)
    for heading in ("## Install", "## Quick start", "## Hello world", "## Interfaces", "## Results", "## Commands",
                    "## Layout", "## Tests and docs"):
        assert heading in text, heading


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    """Every relative link of the README and the pages names a file that exists (mkdocs checks the pages' links
    and anchors again in ``mkdocs build --strict``)."""
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.exists(), f"{page.name}: broken link {target}"


def _pip_extras(command: str) -> set[str]:
    """The extras of every ``pip install -e ".[a,b]"`` in a command line."""
    return {e.strip() for group in re.findall(r"pip install -e \S*\.\[([^\]]*)\]", command) for e in group.split(",")}


def test_quick_start_has_two_commands() -> None:
    """The README's quick start is two commands, train and test, and the test command works anywhere: no root
    (no ``sudo``, no ``apt-get``, not CI's ``.ci/run``, which installs Chromium as root), the ``dev`` extra
    installed (pytest, xdist) and the same pytest line that CI runs; Getting started gives the same two."""
    text = README.read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 2, commands
    train, test = commands
    assert "mus train" in train and "train" in _pip_extras(train), train
    for forbidden in ("sudo", "apt-get", "apt ", ".ci/run"):
        assert forbidden not in test, f"the README's test command needs root or CI's script: {test!r}"
    assert {"dev", "train"} <= _pip_extras(test), f"the test command must install the dev extra: {test!r}"
    assert test.endswith("python -m pytest -q -n 2"), test
    started = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert train in started and test in started, "docs/getting-started.md gives other quick-start commands"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -q -n 2" in ci
    assert "mkdocs build --strict" in ci


def test_generated_blocks_are_in_sync(tmp_path: Path) -> None:
    """Regenerating every block from the code and the measurement files (:data:`MEASURED`: the ladder, the
    bench, the probes of the exploitability page, the benchmark's rows, the reference ladder that labels the ladder)
    changes nothing."""
    for path in [*set(BLOCKS.values()), *MEASURED]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    changed = update_docs(root=tmp_path)
    assert changed == [], f"out of date: {changed}; run: mus update-docs"
    # and the check can fail: a stale table is rewritten
    env = tmp_path / "docs" / "environments.md"
    env.write_text(env.read_text(encoding="utf-8").replace("| 24 | QUIERO |", "| 24 | QUIERO? |"), encoding="utf-8")
    assert update_docs(root=tmp_path) == [env]


def _research_tool(name: str) -> Any:
    return research_tool(name)


def test_the_research_tables_are_what_the_data_file_gives(tmp_path: Path) -> None:
    """Every candidate table of the research notes (``docs/research/tools/candidates.py``'s blocks) is what the
    renderer makes from ``docs/research/candidates.json``; a figure edited in a page, or in the data file, fails."""
    tool = _research_tool("candidates")
    data = tool.load(ROOT)
    assert data["version"] == 1 and len(data["candidates"]) >= 30
    blocks = tool.render(data)
    pages = {page: (ROOT / page).read_text(encoding="utf-8") for page in set(tool.BLOCKS.values())}
    for name, page in tool.BLOCKS.items():
        assert tool.section(pages[page], name).rstrip("\n") == blocks[name], \
            f"{page}: block {name} is not what the data file gives; run: python docs/research/tools/candidates.py"
    text = json.dumps(data)
    for machine_path in ("/tmp/", "/work/"):
        assert machine_path not in text, f"the data file names a path of one machine ({machine_path})"
    # and the check can fail: one figure of the before/after table edited in its page is found
    page = tool.BLOCKS["candidates-before-after"]
    edited = pages[page].replace("| +0.73 (2) |", "| +0.74 (2) |", 1)
    assert edited != pages[page]
    assert tool.section(edited, "candidates-before-after").rstrip("\n") != blocks["candidates-before-after"]
    # and the renderer follows the data: AD's largest protocol probe, changed in the file, changes the table
    ad = next(c for c in data["candidates"] if c["label"] == "AD")
    next(p for p in ad["probes"] if p["kind"] == "protocol" and p["weights"] == "kept")["stones"] = 9.0
    assert "| +9.00 (2) |" in tool.render(data)["candidates-before-after"]


def test_a_ladder_is_labelled_as_the_reference_only_when_it_is_the_reference() -> None:
    """The ladder's tables name the reference ladder's version only when its ratings are the ladder's, and the
    probes' names are shown without changing the results they come from."""
    from experiments.tools.update_docs import ladder_summary, ladder_version, renamed_probes

    results = json.loads((ROOT / "docs" / "ladder_results.json").read_text(encoding="utf-8"))
    reference = json.loads((ROOT / REFERENCE_LADDER).read_text(encoding="utf-8"))
    assert ladder_version(results, reference) == reference["version"]
    assert f"reference ladder {reference['version']}" in ladder_summary(results, reference["version"])
    moved = dict(reference, ratings=dict(reference["ratings"], ppo=reference["ratings"]["ppo"] + 3))
    assert ladder_version(results, moved) is None and ladder_version(results, None) is None
    assert "reference ladder" not in ladder_summary(results, None)
    probes = json.loads((ROOT / "docs" / "exploit_results.json").read_text(encoding="utf-8"))
    before = json.dumps(probes["results"])
    shown = renamed_probes(probes["results"], probes["names"])
    assert json.dumps(probes["results"]) == before
    assert {r["agent"] for r in shown} == {"ppo"} and all("/tmp/" not in r["command"]
                                                           for rep in shown for r in rep["results"])


def test_a_bad_input_changes_nothing(tmp_path: Path) -> None:
    """Every input is read before anything is written: a new bench output with a missing exploit file leaves the
    pages and docs/bench.json as they were."""
    for path in [*set(BLOCKS.values()), "docs/ladder_results.json", "docs/bench.json"]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    bench = tmp_path / "new_bench.json"
    bench.write_text((ROOT / "docs" / "bench.json").read_text(encoding="utf-8").replace('"mus bench', '"mus bench X'))
    before[bench] = bench.read_bytes()
    with pytest.raises(OSError):
        update_docs(bench=bench, exploit=[tmp_path / "missing.json"], root=tmp_path)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_every_block_has_its_markers() -> None:
    for name, path in BLOCKS.items():
        assert section((ROOT / path).read_text(encoding="utf-8"), name).strip(), (name, path)


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def _figure_sources() -> dict[str, Any]:
    """Every file the pages' prose quotes, read once: ``docs/bench.json``, the reference ladder, the shipped
    policy's ``meta`` (its evaluation, probes, lineage and the agent it replaced: what its card prints), the
    trainer's defaults, and the default run's minutes, stated once in ``docs/training.md`` (its run folder is
    not kept)."""
    pytest.importorskip("torch")
    from agents.policy import load_policy_file
    from experiments.population.ship_agent import lineage_budget, shares_rounded
    from experiments.train.ppo import Args

    meta = load_policy_file(ROOT / "agents" / "data" / "ppo.pt")["meta"]
    stages = meta["lineage"]
    training = _collapsed((ROOT / "docs" / "training.md").read_text(encoding="utf-8"))
    return {"bench": json.loads((ROOT / "docs" / "bench.json").read_text(encoding="utf-8")),
            "reference": json.loads((ROOT / REFERENCE_LADDER).read_text(encoding="utf-8"))["ratings"],
            "ppo": meta, "rows": {(r["play"], r["opponent"]): r for r in meta["evaluation"]},
            "old_rows": {(r["play"], r["opponent"]): r for r in meta["previous"]["evaluation"]},
            "probes": meta["exploitability"], "old_probes": meta["previous"]["exploitability"],
            "stages": stages, "stage_minutes": shares_rounded([s["minutes"] for s in stages])[0],
            "budget": lineage_budget(stages), "args": Args(),
            "default_minutes": float(re.search(r"\(2026-12-04\): ([\d.]+) minutes wall", training).group(1)),
            "default_run": _default_run_figures(training),
            "benchmark": {(r["row"], r["seed"]): r for r in json.loads(
                (ROOT / "docs" / "benchmark_results.json").read_text(encoding="utf-8"))},
            "ladder_pairs": {(p["a"], p["b"]): p for p in json.loads(
                (ROOT / "docs" / "ladder_results.json").read_text(encoding="utf-8"))["pairs"] if p["mode"] == "hands"},
            "research": {c["label"]: c for c in _research_tool("candidates").load(ROOT)["candidates"]},
            "recipe_spread": json.loads((ROOT / "docs/research/recipe_spread.json").read_text(encoding="utf-8")),
            "team_mixture": json.loads((ROOT / "docs/research/team_mixture.json").read_text(encoding="utf-8")),
            "rates": _plan_rates()}


def _default_run_figures(training: str) -> dict[str, str]:
    """The default run's held-out figures, stated once in docs/training.md's "The default run" (its run folder is
    not kept): the margins over ``rule`` and ``equity`` of seeds 0 and 1 and the quick probe's gain."""
    m = re.search(r"it beats `rule` by \*\*([+-][\d.]+) \[.*?\]\*\* and `equity` by \*\*([+-][\d.]+) \[.*?"
                  r"seed 1 \(`mus train --seed 1`\): ([+-][\d.]+) \[.*?\] and ([+-][\d.]+) \[.*?"
                  r"about 5 minutes\) gains \*\*([+-][\d.]+) \[", training)
    assert m, "docs/training.md's default run no longer states its held-out figures as QUOTED reads them"
    return dict(zip(("rule", "equity", "rule1", "equity1", "probe"), m.groups(), strict=True))


def _plan_rates() -> Any:
    from experiments.population.recipe_plan import Rates

    return Rates()


def _research_probes(s: dict[str, Any], label: str, rate: float) -> list[dict[str, Any]]:
    """The whole-game probes of candidate ``label``'s own weights at ``rate`` (the research data file)."""
    return [p for p in s["research"][label]["probes"] if p["weights"] == "kept" and p["learner_decides"] == "all"
            and p["learning_rate"] == rate and p["decisions"] > 70_000_000]


def _largest(probes: list[dict[str, Any]]) -> dict[str, Any]:
    return max(probes, key=lambda p: p["stones"])


def _round_probe_range(s: dict[str, Any]) -> tuple[str, str]:
    """The smallest and largest of the recipes' round probes (40M at 3e-3 from the round's own weights)."""
    gains = [r["stones"] for c in s["research"].values() for r in c["round_probes"]
             if (r["step"].startswith("round") or r["step"] == "final/probes") and r["learning_rate"] == 3e-3
             and r["start"] == "agent"]
    return f"{min(gains):+.2f}", f"{max(gains):+.2f}"


def _quick_minutes(s: dict[str, Any]) -> tuple[str]:
    """A quick probe's minutes as the pages round them: the median training time of the research data's quick
    probes plus the plan's held-out measurement (``Rates.probe_eval_minutes``)."""
    import statistics

    minutes = [p["minutes"] for c in s["research"].values() for p in c["probes"] if p["kind"] == "quick"]
    return (f"{statistics.median(minutes) + s['rates'].probe_eval_minutes:.0f}",)


def _bench_row(s: dict[str, Any], row: str, side: str) -> tuple[str, str]:
    return tuple(f"{s['benchmark'][row, seed][side]['stones']:+.2f}" for seed in (0, 1))


def _bench_decisions(s: dict[str, Any]) -> tuple[str, ...]:
    """Millions of decisions: mus-train's and SB3's two seeds, then the smallest and largest of the other rows."""
    rows = s["benchmark"]
    named = tuple(f"{rows[row, seed]['decisions'] / 1e6:.1f}" for row in ("mus-train", "sb3-maskable-ppo")
                  for seed in (0, 1))
    others = [r["decisions"] for (row, _), r in rows.items() if row not in ("mus-train", "sb3-maskable-ppo")]
    return named + (f"{min(others) / 1e6:.1f}", f"{max(others) / 1e6:.1f}")


def _fast_probes_of_ppo(s: dict[str, Any]) -> tuple[str, ...]:
    """``ppo``'s (candidate E's) 80M probes from its own weights at 3e-3 (seeds 0, 1: gain and CI), the game win rate
    of the larger, and the same probes at 3e-4."""
    fast = sorted(_research_probes(s, "E", 3e-3), key=lambda p: p["seed"])
    slow = sorted((p for p in _research_probes(s, "E", 3e-4) if p["start"] == "agent"), key=lambda p: p["seed"])
    return (tuple(f"{x:+.2f}" for p in fast for x in (p["stones"], p["stones_lo"], p["stones_hi"]))
            + (f"{_largest(fast)['win']:.3f}",) + tuple(f"{p['stones']:+.2f}" for p in slow))


def _three_draws(s: dict[str, Any]) -> tuple[str, ...]:
    """The largest protocol probe from its own weights of records AC, AD and AE (one command, three runs)."""
    def own(label: str) -> list[dict[str, Any]]:
        return [p for p in s["research"][label]["probes"]
                if p["weights"] == "kept" and p["kind"] == "protocol" and p["start"] == "agent"]

    return tuple(f"{_largest(own(c))['stones']:+.2f}" for c in ("AC", "AD", "AE"))


def _probe_fit(s: dict[str, Any]) -> tuple[str, ...]:
    tool = _research_tool("probe_games")
    fit = tool.fit_game_wins(tool.probe_points(tool.DATA))
    low, high = fit["intervals"]["per_stone"]
    return (f"{fit['n']}", f"{fit['stones']['intercept']:.3f}", f"{fit['stones']['per_stone']:.3f}", f"{low:.3f}",
            f"{high:.3f}", f"{fit['win_at_half_a_stone']:.3f}")


def _stones(r: dict[str, Any]) -> tuple[str, str, str]:
    return f"{r['stones']:+.2f}", f"{r['stones_lo']:+.2f}", f"{r['stones_hi']:+.2f}"


def _default_minutes(s: dict[str, Any]) -> tuple[str]:
    return (f"{s['default_minutes']:.0f}",)


def _bridge(s: dict[str, Any]) -> tuple[str]:
    return (f"{s['bench']['ratios']['vector B=4096 / openspiel bridge']:.0f}",)


def _compile(s: dict[str, Any]) -> tuple[str, str]:
    return f"{s['bench']['kernel_seconds']['cold']:.0f}", f"{s['bench']['kernel_seconds']['cached']:.1f}"


def _stage(i: int) -> Callable[[dict[str, Any]], tuple[str, str]]:
    return lambda s: (f"{s['stages'][i]['decisions'] / 1e6:.0f}", f"{s['stage_minutes'][i]:.1f}")


_NUM = r"([+−-]?[\d.,]+)"
#: Figures quoted in the prose of the README and the guide pages, each with its source: (page, pattern,
#: expected). ``pattern`` is matched on the page with its whitespace collapsed to single spaces; its groups are
#: the figures as printed, and ``expected(sources)`` (:func:`_figure_sources`) gives them as the page prints them.
#: Every pattern matches at least once, and every match equals its source: a figure that moves or changes fails
#: here until the page and this table agree. The generated blocks are checked by ``test_generated_blocks_are_in_sync``;
#: the research notes' prose keeps the figures of its day (their candidate tables are checked against the data file
#: by ``test_the_research_tables_are_what_the_data_file_gives``).
QUOTED: list[tuple[str, str, Callable[[dict[str, Any]], tuple[str, ...]]]] = [
    # the engine's speed: docs/bench.json
    ("README.md", rf"a batched engine \(4,096 tables per call\) that takes {_NUM}× as many decisions per second on one "
     r"core as OpenSpiel's `bridge` game \(a card game\) stepped from Python", _bridge),
    ("docs/index.md", rf"On one core, 4,096 tables per call take about {_NUM}× as many decisions per second as "
     r"OpenSpiel's `bridge` game \(a card game\) stepped from Python", _bridge),
    ("docs/getting-started.md", rf"compiles the engine's kernel \({_NUM} s on the project's 2-core machine, "
     rf"\[Performance\]\(performance.md\); the `mus` commands say so when it happens\); numba caches it, so later "
     rf"runs load it in {_NUM} s", _compile),
    ("docs/environments.md", rf"compiles the kernel \({_NUM} s on the project's 2-core machine, "
     rf"\[Performance\]\(performance.md\)\); numba caches it, so later processes load it in {_NUM} s", _compile),
    # the shipped ppo: agents/data/ppo.pt's meta (its card)
    ("README.md", rf"\*\*{_NUM} \[{_NUM}, {_NUM}\] against `rule`\*\*",
     lambda s: _stones(s["rows"]["sampled", "rule"])),
    ("README.md", rf"\*\*{_NUM} \[{_NUM}, {_NUM}\] against `equity`\*\*",
     lambda s: _stones(s["rows"]["sampled", "equity"])),
    ("README.md", rf"\*\*{_NUM} against `ordago`\*\*", lambda s: _stones(s["rows"]["sampled", "ordago"])[:1]),
    ("README.md", rf"winning {_NUM} %, {_NUM} % and {_NUM} % of the games",
     lambda s: tuple(f"{100 * s['rows']['sampled', o]['win']:.0f}" for o in ("rule", "equity", "ordago"))),
    ("README.md", rf"wins \*\*{_NUM} stones/hand\*\* and {_NUM} % of the games",
     lambda s: (f"{s['probes']['max']['stones']:+.2f}", f"{100 * s['probes']['max_win']['win']:.0f}")),
    ("README.md", rf"the same probes at ten times the learning rate find up to {_NUM} \({_NUM} % of the games\) from "
     r"`ppo`'s own weights",
     lambda s: (f"{_largest(_research_probes(s, 'E', 3e-3))['stones']:+.2f}",
                f"{100 * _largest(_research_probes(s, 'E', 3e-3))['win']:.0f}")),
    # the default run: docs/training.md's statement of its held-out figures (its run folder is not kept)
    ("README.md", rf"held out on 20,000 deals it beats them by {_NUM} and {_NUM} stones/hand \(seed 1: {_NUM} and "
     rf"{_NUM}\), but it is easy to exploit: a quick probe from its weights gains {_NUM}\.",
     lambda s: tuple(s["default_run"][k] for k in ("rule", "equity", "rule1", "equity1", "probe"))),
    # the benchmark: docs/benchmark_results.json (and the ladder's random player for scale)
    ("README.md", rf"in the half hour `mus train` took {_NUM}M and {_NUM}M decisions, MaskablePPO {_NUM}M and {_NUM}M, "
     rf"the others {_NUM}M to {_NUM}M\.",
     lambda s: _bench_decisions(s)),
    ("README.md", rf"ahead of both baselines on both seeds \({_NUM} / {_NUM} over `rule`, {_NUM} / {_NUM} over "
     rf"`equity`, probe {_NUM} / {_NUM}\)",
     lambda s: _bench_row(s, "mus-train", "vs_rule") + _bench_row(s, "mus-train", "vs_equity")
     + _bench_row(s, "mus-train", "probe")),
    ("README.md", rf"MaskablePPO beats `rule` by {_NUM} / {_NUM} but `equity` by only {_NUM} / {_NUM}",
     lambda s: _bench_row(s, "sb3-maskable-ppo", "vs_rule") + _bench_row(s, "sb3-maskable-ppo", "vs_equity")),
    ("README.md", rf"RLlib's PPO \({_NUM} / {_NUM} over `rule`", lambda s: _bench_row(s, "rllib-ppo", "vs_rule")),
    ("README.md", rf"Tianshou's DQN \({_NUM} / {_NUM} over `rule`, {_NUM} / {_NUM} over `equity`\)",
     lambda s: _bench_row(s, "tianshou-dqn", "vs_rule") + _bench_row(s, "tianshou-dqn", "vs_equity")),
    ("README.md", rf"NFSP \({_NUM} / {_NUM} over `rule`, about what a random player gets: {_NUM}\)",
     lambda s: _bench_row(s, "openspiel-nfsp", "vs_rule")
     + (f"{s['ladder_pairs']['random', 'rule']['mean_diff']:+.2f}",)),
    ("docs/benchmarks.md", rf"a uniformly random player loses by about {_NUM} stones/hand to `rule` and {_NUM} to "
     r"`equity`",
     lambda s: tuple(f"{-s['ladder_pairs']['random', o]['mean_diff']:.1f}" for o in ("rule", "equity"))),
    ("docs/benchmarks.md", rf"past a uniformly random player against `equity` \({_NUM}\), not against `rule` "
     rf"\({_NUM}\)",
     lambda s: tuple(f"{s['ladder_pairs']['random', o]['mean_diff']:.1f}" for o in ("equity", "rule"))),
    # the research data file (docs/research/candidates.json) and the recipe's plan
    ("docs/exploitability.md", rf"best response gains {_NUM} \[{_NUM}, {_NUM}\] stones/hand \(seed 0\) and "
     rf"\*\*{_NUM} \[{_NUM}, {_NUM}\]\*\* \(seed 1, game win \*\*{_NUM}\*\*\), against {_NUM} and {_NUM} at 3e-4",
     lambda s: _fast_probes_of_ppo(s)),
    ("docs/exploitability.md", rf"over the {_NUM} full probes of the research notes' data file that recorded their "
     rf"stones by lance, a probe's game win rate is about {_NUM} \+ {_NUM} × its gain in stones/hand \(95% interval "
     rf"of the slope {_NUM} to {_NUM}\), so \+0.5 stones/hand is a game win rate of about {_NUM}", _probe_fit),
    ("docs/training.md", rf"the same command run three times conceded {_NUM}, {_NUM} and {_NUM} "
     r"to the 80M probe from its own weights",
     lambda s: _three_draws(s)),
    ("docs/training.md", rf"its largest of the four protocol probes was {_NUM}, {_NUM} and {_NUM}, each run leaking",
     lambda s: tuple(f"{v:+.2f}" for v in s["recipe_spread"]["over_seeds"]["largest_of_4"]["each"].values())),
    ("docs/training.md", rf"less exploitable over three\s+teams \(largest probe {_NUM} ± {_NUM}\)",
     lambda s: (f"{s['team_mixture']['teams_as_seeds']['largest_of_4']['mean']:+.2f}",
                f"{s['team_mixture']['teams_as_seeds']['largest_of_4']['se']:.2f}")),
    ("docs/exploitability.md", rf"\(for one recipe\'s agent: \+0.94 against {_NUM} and {_NUM}\)",
     lambda s: tuple(f"{p['stones']:+.2f}" for p in sorted((p for p in _research_probes(s, "H", 3e-4)
                                                           if p["start"] == "agent"), key=lambda p: p["seed"]))),
    ("docs/training.md", rf"against \*\*{_NUM}\*\* against the round alone",
     lambda s: (f"{_largest([p for p in _research_probes(s, 'I', 3e-4) if p['start'] == 'agent'])['stones']:+.2f}",)),
    ("docs/training.md", rf"the recipe's rounds made conceded {_NUM} to {_NUM} stones/hand to the round's 40M-decision "
     r"probe at 3e-3 from its own weights", _round_probe_range),
    ("docs/training.md", rf"about {_NUM} minutes\) gains \*\*", _quick_minutes),
    ("docs/glossary.md", rf"such as 13M decisions \(about {_NUM} minutes on 2 cores\)", _quick_minutes),
    ("docs/training.md", rf"against {_NUM} for the shipped `ppo` \(seed 0\)",
     lambda s: (f"{s['research']['E']['quick_probes']['0']:+.2f}",)),
    ("docs/training.md", rf"\(a training alone {_NUM} decisions/s, each of two probes side by side {_NUM}\)",
     lambda s: (f"{s['rates'].train_rate:,.0f}", f"{s['rates'].probe_rate:,.0f}")),
    ("README.md", rf"on 2 cores, {_NUM} minutes in all: {_NUM}M decisions from a random network",
     lambda s: (f"{s['budget'][1]:.1f}", f"{s['stages'][0]['decisions'] / 1e6:.0f}")),
    ("docs/exploitability.md",
     rf"The largest gain is \*\*{_NUM} stones/hand\*\*, with a game win rate of \*\*{_NUM}\*\*",
     lambda s: (f"{s['probes']['max']['stones']:+.2f}", f"{s['probes']['max_win']['win']:.3f}")),
    ("docs/exploitability.md", rf"conceded up to \*\*{_NUM}\*\* stones/hand and \*\*{_NUM}\*\* of the games",
     lambda s: (f"{s['old_probes']['max']['stones']:+.2f}", f"{s['old_probes']['max_win']['win']:.3f}")),
    ("docs/training.md", rf"each warm-started from the last, {_NUM} billion decisions and {_NUM} minutes",
     lambda s: (f"{s['budget'][0] / 1e9:.2f}", f"{s['budget'][1]:.1f}")),
    ("docs/training.md", rf"`mus train --preset scratch` \({_NUM}M decisions, {_NUM} minutes; it beat `rule` with p "
     rf"< 0.01 in stones and games after {_NUM} minutes\)",
     lambda s: _stage(0)(s) + (f"{s['stages'][0]['beats_rule']['minutes']:.1f}",)),
    ("docs/training.md", rf"--learning-rate 1e-4`, {_NUM}M decisions, {_NUM} minutes", _stage(1)),
    ("docs/training.md", rf"best responses to stage 2 in the league, {_NUM}M decisions, {_NUM} minutes", _stage(2)),
    ("docs/training.md", rf"`ppo` still concedes {_NUM} stones/hand and {_NUM} % of the games",
     lambda s: (f"{s['probes']['max']['stones']:+.2f}", f"{100 * s['probes']['max_win']['win']:.0f}")),
    ("docs/training.md", rf"ahead of `equity` by less than the agent it replaced \({_NUM} against {_NUM} stones/hand\)",
     lambda s: (_stones(s["rows"]["sampled", "equity"])[0], _stones(s["old_rows"]["sampled", "equity"])[0])),
    # the reference ladder v2: experiments/evaluate/reference_ladder.json
    ("docs/evaluation.md", rf"reference ladder\*\* \(`v2`: .*?; `ppo` {_NUM}, `equity` {_NUM}, `rule` {_NUM}, "
     rf"`random` {_NUM}, `ordago` {_NUM}\)",
     lambda s: tuple(f"{s['reference'][a]:.0f}" for a in ("ppo", "equity", "rule", "random", "ordago"))),
    ("docs/glossary.md", rf"\*\*reference ladder v2\*\*: .*?\(`ppo` {_NUM}, `equity` {_NUM}, `rule` {_NUM}\)",
     lambda s: tuple(f"{s['reference'][a]:.0f}" for a in ("ppo", "equity", "rule"))),
    # the default mus train: the trainer's defaults (experiments/train/ppo.py's Args) and its measured minutes
    ("README.md", rf"beats the baseline bots in about {_NUM} minutes on 2 cores", _default_minutes),
    ("README.md", rf"mus train # train an agent \(about {_NUM} min on 2 cores\)", _default_minutes),
    ("docs/getting-started.md", rf"mus train # train an agent \(about {_NUM} min on 2 cores\)", _default_minutes),
    ("docs/index.md", rf"mus train # about {_NUM} minutes on 2 cores", _default_minutes),
    ("README.md", rf"\*\*The default `mus train`\*\* \(about {_NUM} minutes on 2 cores: the `equity` clone, then "
     rf"{_NUM}M decisions of PPO with a magnet refreshed every {_NUM} updates",
     lambda s: _default_minutes(s) + (f"{s['args'].total_decisions / 1e6:.0f}", f"{s['args'].magnet_every}")),
    ("docs/training.md", rf"mus train # the default preset: {_NUM}M decisions, about {_NUM} minutes on 2 cores",
     lambda s: (f"{s['args'].total_decisions / 1e6:.0f}",) + _default_minutes(s)),
    ("docs/training.md", rf"`mus train` with no flag: the `equity` clone, then {_NUM}M decisions of PPO with a magnet "
     rf"\(`--magnet-coef {_NUM} --magnet-every {_NUM}`\) and a league weighted to the baselines "
     r"\(`([^`]+)`\)",
     lambda s: (f"{s['args'].total_decisions / 1e6:.0f}", f"{s['args'].magnet_coef:g}", f"{s['args'].magnet_every}",
                s["args"].league_mix)),
    ("docs/training.md", r"by the shares of `--league-mix` \(default `([^`]+)`;", lambda s: (s["args"].league_mix,)),
    ("docs/training.md", rf"\(`--magnet-coef C`, default {_NUM};", lambda s: (f"{s['args'].magnet_coef:g}",)),
    ("docs/training.md", rf"`--magnet-every N` updates \(default {_NUM};", lambda s: (f"{s['args'].magnet_every}",)),
    ("docs/training.md", rf"every `--checkpoint-every` updates, {_NUM} by default",
     lambda s: (f"{s['args'].checkpoint_every}",)),
    ("docs/training.md", rf"behaviour cloning of `EquityAgent` on {_NUM} of its decisions \(about a minute\), then "
     rf"{_NUM} updates that train only the value head",
     lambda s: (f"{s['args'].bc_decisions:,}", f"{s['args'].value_warmup}")),
    ("docs/training.md", rf"a duplicate match against `rule` and `equity` \({_NUM} hands and {_NUM} games",
     lambda s: (f"{s['args'].eval_hands:,}", f"{s['args'].eval_games:,}")),
    ("docs/glossary.md", r"The default is `([^`]+)` \(\[Training\]", lambda s: (s["args"].league_mix,)),
    ("docs/glossary.md", rf"`mus train`'s default is {_NUM} every {_NUM} updates",
     lambda s: (f"{s['args'].magnet_coef:g}", f"{s['args'].magnet_every}")),
    ("docs/glossary.md", rf"`--snapshot-every` updates \({_NUM}\) into a pool of the last `--pool-size` \({_NUM}\)",
     lambda s: (f"{s['args'].snapshot_every}", f"{s['args'].pool_size}")),
]


def figure_mismatches(texts: dict[str, str], sources: dict[str, Any]) -> list[str]:
    """Every way the pages' ``texts`` (page -> markdown) disagree with :data:`QUOTED`: a pattern that matches
    nothing, or a match whose figures are not its source's."""
    problems = []
    for page, pattern, expected in QUOTED:
        want = tuple(expected(sources))
        found = [m.groups() for m in re.finditer(pattern, _collapsed(texts[page]))]
        if not found:
            problems.append(f"{page}: nothing matches {pattern!r} (a figure moved: update the page or QUOTED)")
        problems += [f"{page}: prints {got}, its source says {want} ({pattern!r})" for got in found if got != want]
    return problems


def test_quoted_figures_equal_their_sources() -> None:
    """One number per fact: every figure of :data:`QUOTED` is the one its results file gives, as printed."""
    sources = _figure_sources()
    texts = {page: (ROOT / page).read_text(encoding="utf-8") for page in {p for p, _, _ in QUOTED}}
    assert figure_mismatches(texts, sources) == []
    # and the check can fail: one figure changed in one page is found, and only that one
    readme = texts["README.md"].replace("wins **+0.93 stones/hand**", "wins **+0.94 stones/hand**")
    assert readme != texts["README.md"]
    [problem] = figure_mismatches(dict(texts, **{"README.md": readme}), sources)
    assert "README.md" in problem and "+0.94" in problem
    # a figure of the README's default run or benchmark, edited, is found as well
    for old, new, figure in (("it beats them by +2.06", "it beats them by +2.16", "+2.16"),
                             ("(+0.85 / +0.97 over", "(+0.86 / +0.97 over", "+0.86")):
        readme = texts["README.md"].replace(old, new)
        assert readme != texts["README.md"], old
        [problem] = figure_mismatches(dict(texts, **{"README.md": readme}), sources)
        assert "README.md" in problem and figure in problem


def test_the_research_tools_live_in_the_notes_and_every_figure_file_is_used() -> None:
    """The research tools are scripts of the notes, not modules of the package that the wheel ships (no page cites a
    folder of one machine either: tests/test_product.py scans every file), and every image in docs/ is shown by some
    page."""
    # the research tools are scripts of the notes, not modules of the package that the wheel ships
    for name in ("candidates", "probe_games", "temper"):
        assert not (ROOT / "experiments" / "tools" / f"{name}.py").exists(), name
        assert (ROOT / "docs" / "research" / "tools" / f"{name}.py").is_file(), name
    shown = "\n".join(p.read_text(encoding="utf-8") for p in [README, *(ROOT / "docs").rglob("*.md")])
    for image in (ROOT / "docs").rglob("*.png"):
        assert image.name in shown, f"{image.relative_to(ROOT)} is shown by no page: delete it or show it"


def _examples(page: Path) -> list[tuple[str, str]]:
    return code_blocks(page.read_text(encoding="utf-8"), "python")


@pytest.mark.parametrize("page", [p for p in [README, *PAGES] if _examples(p)], ids=lambda p: p.name)
def test_python_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python block of the page runs as written, in order, in one folder (later blocks import the files of
    earlier ones), with the budgets of :data:`SMALLER` made smaller."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    shrink = SMALLER.get(page.name, [])
    used = set()
    ran = 0
    for marker, code in _examples(page):
        if marker.startswith("skip:"):
            continue
        if marker.startswith("file:"):
            (tmp_path / marker.split(":", 1)[1].strip()).write_text(code, encoding="utf-8")
            compile(code, marker, "exec")
            continue
        missing = [m for m in OPTIONAL if re.search(rf"^\s*(from|import) {m}\b", code, re.M) and not _has(m)]
        if missing:
            continue
        for old, new in shrink:
            if old in code:
                code, _ = code.replace(old, new), used.add(old)
        with warnings.catch_warnings(record=True) as caught, _time_limit(EXAMPLE_SECONDS, page.name):
            warnings.simplefilter("always", DeprecationWarning)
            exec(compile(code, f"{page.name}", "exec"), {"__name__": f"docs_example_{page.stem}"})
        moved = [str(w.message) for w in caught if "moved to" in str(w.message)]
        assert not moved, f"{page.name} uses an old import path: {moved}"
        ran += 1
    assert ran >= 1
    assert used == {old for old, _ in shrink}, f"budget replacements that match nothing: {set(dict(shrink)) - used}"


#: Wall-clock limit of one example (an example that never ends, such as a game where every seat always says
#: MUS, fails instead of hanging the suite; minutes, so that a slow machine never fails a finite one).
EXAMPLE_SECONDS = PROCESS_S


@contextlib.contextmanager
def _time_limit(seconds: int, what: str) -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise TimeoutError(f"an example of {what} ran for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _bash_commands(page: Path) -> list[list[str]]:
    commands = []
    for _, block in code_blocks(page.read_text(encoding="utf-8"), "bash"):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                commands.append(shlex.split(line))
    return commands


def _mus(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=PROCESS_S)


def test_tutorial_bot_plays_a_duplicate_tournament(tmp_path: Path) -> None:
    """The tutorial's ``my_bot.py`` and its ``mus tournament`` command, with fewer hands: the bot is rated."""
    page = ROOT / "docs" / "tutorial-bot.md"
    files = [(m, c) for m, c in _examples(page) if m.startswith("file:")]
    assert len(files) == 1 and len(files[0][1].strip().splitlines()) <= 40
    (tmp_path / "my_bot.py").write_text(files[0][1], encoding="utf-8")
    [command] = [c for c in _bash_commands(page) if c[:2] == ["mus", "tournament"]]
    assert "my_bot.py:KingsBot" in command[command.index("--agents") + 1]
    argv = command[1:] + ["--hands", "60", "--games", "4", "--no-plots", "--quiet"]
    run = _mus(argv, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / command[command.index("--out") + 1] / "results.json"
    results = json.loads(out.read_text(encoding="utf-8"))
    assert "my_bot.py:KingsBot" in results["ladder"]
    assert {(p["a"], p["b"]) for p in results["pairs"]} >= {("rule", "my_bot.py:KingsBot")}


#: Extra flags that shrink each library command's budget (argparse keeps the last value of a repeated flag).
_SMALLER_COMMANDS = {
    "sb3": ["--timesteps", "512", "--tables", "8", "--n-steps", "16", "--batch-size", "64", "--n-epochs", "1",
            "--eval-deals", "20"],
    "rllib": ["--num-env-runners", "0", "--envs-per-runner", "4", "--train-batch-size", "128", "--minibatch-size",
              "64", "--num-epochs", "1", "--hidden", "32,32", "--eval-deals", "10"],
    "tianshou": ["--epochs", "1", "--epoch-steps", "200", "--eval-games", "10", "--envs", "2"],
    "tournament": ["--hands", "20", "--no-plots", "--quiet"],
}


def test_integration_commands_run(tmp_path: Path) -> None:
    """Every command of the integrations page and the Ray tournament of the scaling page runs as written, in
    order, in one folder (later commands use earlier ones' files), with smaller budgets: ``--iterations N`` of
    ``mus rllib`` becomes 1, then 2 for the resumed run, and each command gets the flags of
    :data:`_SMALLER_COMMANDS` appended. The cluster commands (``ray start``, in a ``text`` block) need several
    machines and are not run."""
    pytest.importorskip("ray")
    pytest.importorskip("tianshou")
    pytest.importorskip("sb3_contrib")
    commands = _bash_commands(ROOT / "docs" / "integrations.md") + _bash_commands(ROOT / "docs" / "scaling.md")
    assert [c[:2] for c in commands] == [["mus", "sb3"], ["mus", "tournament"], ["mus", "rllib"], ["mus", "rllib"],
                                         ["mus", "rllib"], ["mus", "tournament"], ["mus", "tianshou"],
                                         ["mus", "tianshou"], ["mus", "tournament"]]
    iterations = iter(["1", "2"])
    for words in commands:
        name = words[1]
        argv = list(words[1:])
        if "--iterations" in argv:
            argv[argv.index("--iterations") + 1] = next(iterations)
        if name != "rllib" or "--export" not in argv:
            argv += _SMALLER_COMMANDS[name]
        if name == "tournament" and "--games" in argv and argv[argv.index("--games") + 1] != "0":
            argv += ["--games", "4"]
        run = _mus(argv, tmp_path)
        assert run.returncode == 0, (words, run.stdout[-2000:], run.stderr[-4000:])
    runs = tmp_path / "runs"
    for produced in ("sb3/model.zip", "sb3/run.json", "sb3/tournament/results.json", "rllib/policy.pt",
                     "rllib/exported.pt", "rllib/tournament/results.json", "t_ray/results.json"):
        assert (runs / produced).stat().st_size > 0, produced
    progress = (runs / "rllib" / "progress.json").read_text(encoding="utf-8")
    assert '"iterations": 2' in progress


def test_old_module_paths_still_import() -> None:
    """Every moved module's old path (the 0.1 paths, the adapters' and 0.3's) imports, with a DeprecationWarning
    that names the new path and the version that removes the old one, as the very module at its new path."""
    import importlib

    import experiments  # noqa: F401 - registers its moves
    from mus_env.deprecation import moved_modules

    moves = moved_modules()
    assert {"mus_env.sb3", "experiments.tournament", "experiments.evaluate.exploit",
            "experiments.train.ship_agent"} <= set(moves)
    for old, move in moves.items():
        if old.startswith("mus_env.") and importlib.util.find_spec({"sb3": "stable_baselines3", "rllib": "ray",
                                                                    "tianshou": "tianshou"}[old[8:]]) is None:
            continue                                           # that framework's extra is not installed
        with pytest.warns(DeprecationWarning, match=re.escape(f"moved to {move.new}") + ".*goes in " +
                          re.escape(move.removed_in)):
            sys.modules.pop(old, None)
            module = importlib.import_module(old)
        assert module is importlib.import_module(move.new), old


#: A Python block, the word "prints", and a text block: what the code prints, shown on the page.
_PRINTS = re.compile(r"```python\n(?P<code>(?:(?!```).)*)```\s*\nprints\s*\n\s*"
                     r"```text\n(?P<out>(?:(?!```).)*)```", re.S)


@pytest.mark.parametrize("page", [p for p in [README, *PAGES] if _PRINTS.search(p.read_text(encoding="utf-8"))],
                         ids=lambda p: p.name)
def test_printed_outputs_are_what_the_code_prints(page: Path, tmp_path: Path) -> None:
    """A page that shows what a block prints shows exactly that (a change of the engine or the decoder that changes
    the output fails here until the page is updated)."""
    for m in _PRINTS.finditer(page.read_text(encoding="utf-8")):
        script = tmp_path / "block.py"
        script.write_text(m["code"], encoding="utf-8")
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=PROCESS_S,
                           cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout == m["out"], f"{page.name}: the page shows\n{m['out']}\nthe code prints\n{r.stdout}"


#: What each shell line of the README and Getting started needs, by its command (first words): every line a
#: newcomer may copy is listed here, and none of them needs root.
SHELL_NEEDS = {
    "pip install -e": "write access to the Python environment (a venv or --user), no root",
    "python -m pytest": "the dev extra (pytest, pytest-xdist); browser tests skip without Chromium",
    "mus train": "the train extra (torch)",
    "mus tournament": "the tools extra (and train for a .pt policy)",
    "mus play": "a terminal (it asks for moves), the train extra for a .pt policy",
    "mkdocs serve": "the docs extra; it serves until Ctrl-C",
}


def _shell_lines(page: Path) -> list[str]:
    """Every command of the page's bash blocks, comments dropped, split at ``&&``."""
    out = []
    for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            out += [part.strip() for part in line.split("&&") if part.strip()]
    return out


@pytest.mark.parametrize("page", [README, ROOT / "docs" / "getting-started.md"], ids=lambda p: p.name)
def test_every_first_step_says_what_it_needs_and_none_needs_root(page: Path) -> None:
    """Each shell line of the first steps is a command of :data:`SHELL_NEEDS` (so the test says what it needs),
    needs no root, installs only extras that exist, and names only ``mus`` subcommands that exist."""
    import tomllib

    from experiments.cli import COMMANDS

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
                 ["optional-dependencies"])
    lines = _shell_lines(page)
    assert lines, f"{page.name} has no shell block"
    for line in lines:
        assert not re.search(r"\b(sudo|apt-get|apt|su)\b", line) and ".ci/run" not in line, \
            f"{page.name}: {line!r} needs root or CI's script"
        need = next((need for cmd, need in SHELL_NEEDS.items() if line.startswith(cmd)), None)
        assert need, f"{page.name}: {line!r} is not in SHELL_NEEDS: say what it needs"
        assert _pip_extras(line) <= extras, f"{page.name}: {line!r} installs an extra pyproject.toml lacks"
        if line.startswith("mus "):
            assert line.split()[1] in COMMANDS, f"{page.name}: {line!r}: no such mus subcommand"
