"""``mus tournament --ray``: every pair a Ray task on a local instance, with the single-process run's results.

A stochastic agent (``random``) is in the field, and ``--tables 16`` makes each pair refill its tables many
times, so the check covers the agents' random draws as well as the deal order.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from experiments.deals import make_deals  # noqa: E402
from experiments.tournament import main as tournament_main  # noqa: E402
from experiments.tournament import ray_round_robins  # noqa: E402

TIMINGS = ("seconds", "hands_per_second")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def _pairs_without_timings(path: Path) -> str:
    rows = list(csv.reader(path.read_text().splitlines()))
    col = rows[0].index("seconds")
    return "\n".join(",".join(r[:col] + r[col + 1:]) for r in rows)


def _json_without_timings(path: Path) -> dict:
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
    table = _pairs_without_timings(single / "pairs.csv")
    assert table == _pairs_without_timings(dist / "pairs.csv")
    assert table.count("\n") == 6 and "random" in table               # header + 3 pairs x 2 modes
    assert (single / "ladder.csv").read_text() == (dist / "ladder.csv").read_text()
    assert _json_without_timings(single / "results.json") == _json_without_timings(dist / "results.json")
    # the check sees the random agent's draws: on the same deals, another batch layout (--tables 32) draws
    # them in another order and changes its results (a split of the deal set would do the same)
    other = [*args[:args.index("--tables") + 1], "32", *args[args.index("--tables") + 2:]]
    tournament_main([*other, "--out", str(tmp_path / "other")])
    assert _pairs_without_timings(tmp_path / "other" / "pairs.csv") != table


def test_ray_round_robins_refuses_a_bad_mode(local_ray: None) -> None:
    with pytest.raises(ValueError, match="mode must be 'hands' or 'games'"):
        ray_round_robins(["random", "rule"], [(make_deals(2, seed=0), "sets")], progress=False)
