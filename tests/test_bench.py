"""``mus bench``: every entry runs and reports positive rates (tiny timings; the figures are not checked)."""

from __future__ import annotations

import json

import pytest

from experiments.commands import bench as bench_command
from experiments.tools import bench


def test_vector_entries_and_processes(capsys: pytest.CaptureFixture[str]) -> None:
    bench_command.main(["--engine", "vector", "--batches", "1,64", "--threads", "1,2", "--seconds", "0.05",
                "--repeats", "1", "--processes", "2", "--json"])
    report = json.loads(capsys.readouterr().out)
    res = report["results"]
    # threaded rows only where the kernel runs threaded (B >= vector.PARALLEL_MIN_TABLES = 64)
    assert set(res) == {"vector B=1", "vector B=64", "vector B=64 2 threads", "vector B=64 in 2 processes"}
    assert all(v > 0 for v in res.values())
    assert report["state_bytes_per_table"] > 0


def test_run_all_without_peers_has_every_engine() -> None:
    report = bench.run_all(seconds=0.05, repeats=1, batches=(4,), peers=False, log=lambda s: None)
    assert set(report["results"]) == {"scalar", "raw_env", "env", "vector B=4"}
    assert all(v > 0 for v in report["results"].values())
    # the kernel writes the acting seat's observation straight into the output: no per-seat cache (4 x 345 floats)
    assert 0 < report["state_bytes_per_table"] + report["buffer_bytes_per_table"] < 4 * 345 * 4
    assert report["ratios"] == {}                                   # no peers, no ratios


def test_profile_times_every_part_and_leaves_the_engine_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """``mus profile``: every part is timed (positive medians); the compiled passes run on a copy of the tables."""
    from experiments.commands import profile as profile_command
    from experiments.tools.profile_vector import profile

    res = profile(batch=64, steps=4, seed=1)
    assert set(res) == {"step()", "kernel", "observation", "sample_actions", "write floor"}
    assert all(v > 0 for v in res.values())
    profile_command.main(["--batch", "64", "--steps", "3"])
    out = capsys.readouterr().out
    assert "B=64" in out and "the game" in out
