"""``mus tournament --ray``: every chunk of every pair a Ray task on a local instance, with the single-process
run's results.

A stochastic agent (``random``) is in the field, and ``--tables 16`` makes each pair refill its tables many
times, so the check covers the agents' random draws as well as the deal order. With the chunk size patched to
16 deals, each pair's deal set is several tasks (the chunk size reaches the workers as an argument).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

import experiments.evaluate.duplicate as duplicate  # noqa: E402
from experiments.commands.tournament import main as tournament_main  # noqa: E402
from experiments.evaluate.deals import make_deals  # noqa: E402
from experiments.evaluate.tournament import ray_round_robins, round_robin  # noqa: E402

TIMINGS = ("seconds", "hands_per_second")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # address="local": a new instance even where RAY_ADDRESS or an earlier `ray start` names a cluster
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def pairs_without_timings(path: Path) -> str:
    rows = list(csv.reader(path.read_text().splitlines()))
    col = rows[0].index("seconds")
    return "\n".join(",".join(r[:col] + r[col + 1:]) for r in rows)


def json_without_timings(path: Path) -> dict:
    data = json.loads(path.read_text())
    for key in TIMINGS:
        data["meta"].pop(key)
    for row in data["pairs"]:
        row.pop("seconds")
    return data


def test_ray_tournament_equals_single_process_run(local_ray: None, tmp_path: Path) -> None:
    args = ["--agents", "random,rule,ordago", "--hands", "60", "--games", "12", "--seed", "5", "--tables", "16",
            "--quiet", "--no-plots"]
    tournament_main([*args, "--out", str(tmp_path / "single")])
    tournament_main([*args, "--out", str(tmp_path / "ray"), "--ray"])
    single, dist = tmp_path / "single", tmp_path / "ray"
    table = pairs_without_timings(single / "pairs.csv")
    assert table == pairs_without_timings(dist / "pairs.csv")
    assert table.count("\n") == 6 and "random" in table               # header + 3 pairs x 2 modes
    assert (single / "ladder.csv").read_text() == (dist / "ladder.csv").read_text()
    assert json_without_timings(single / "results.json") == json_without_timings(dist / "results.json")
    # the check sees the random agent's draws: on the same deals, another batch layout (--tables 32) draws
    # them in another order and changes its results (a split of the deal set would do the same)
    other = [*args[:args.index("--tables") + 1], "32", *args[args.index("--tables") + 2:]]
    tournament_main([*other, "--out", str(tmp_path / "other")])
    assert pairs_without_timings(tmp_path / "other" / "pairs.csv") != table


def test_ray_tournament_in_chunks_equals_single_process_run(local_ray: None, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """16-deal chunks: 60 hands are 4 tasks per pair (the last one of 12 deals) and 20 games 2, each chunk
    with its own seed; the tables still equal the single-process run's, which plays the same chunks."""
    monkeypatch.setattr(duplicate, "DEAL_CHUNK", 16)
    args = ["--agents", "random,rule", "--hands", "60", "--games", "20", "--seed", "5", "--tables", "8",
            "--quiet", "--no-plots"]
    tournament_main([*args, "--out", str(tmp_path / "single")])
    tournament_main([*args, "--out", str(tmp_path / "ray"), "--ray"])
    single, dist = tmp_path / "single", tmp_path / "ray"
    table = pairs_without_timings(single / "pairs.csv")
    assert table == pairs_without_timings(dist / "pairs.csv") and table.count("\n") == 2
    assert (single / "ladder.csv").read_text() == (dist / "ladder.csv").read_text()
    assert json_without_timings(single / "results.json") == json_without_timings(dist / "results.json")


def test_ray_round_robins_passes_the_chunk_size_to_its_tasks(local_ray: None) -> None:
    """The workers' own DEAL_CHUNK is the default 65,536: results that equal round_robin's with 16-deal chunks,
    and differ from one play_pair call over all 40 deals, come from tasks that were told the chunk size."""
    deals = make_deals(40, seed=3)
    kw = {"max_tables": 8, "seed": 2, "progress": False}
    (got,) = ray_round_robins(["random", "rule"], [(deals, "hands")], deal_chunk=16, **kw)[0]
    (want,) = round_robin(["random", "rule"], deals, deal_chunk=16, **kw)
    (whole,) = round_robin(["random", "rule"], deals, **kw)
    assert np.array_equal(got.hand_value, want.hand_value) and np.array_equal(got.lance_stones, want.lance_stones)
    assert got.stats == want.stats and len(got.hand_diff) == 40
    assert not np.array_equal(got.hand_value, whole.hand_value)


def test_ray_round_robins_refuses_a_bad_mode(local_ray: None) -> None:
    with pytest.raises(ValueError, match="mode must be 'hands' or 'games'"):
        ray_round_robins(["random", "rule"], [(make_deals(2, seed=0), "sets")], progress=False)


def test_bare_ray_option_starts_a_local_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--ray`` without ADDRESS asks for a new local instance: Ray's default would join the cluster named by
    RAY_ADDRESS or a stale /tmp/ray/ray_current_cluster (and retry for minutes where it is gone)."""
    from experiments.cli import ArgumentParser
    from experiments.commands.tournament import _start_ray

    calls: list[dict] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw))
    monkeypatch.setenv("RAY_ADDRESS", "192.0.2.1:6379")
    p = ArgumentParser(prog="mus tournament")
    assert _start_ray(p, "") and _start_ray(p, "auto")
    assert calls[0]["address"] == "local" and calls[1]["address"] == "auto"
