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
    assert set(report["ratios"]) == {"env / scalar", "raw_env / scalar"}   # no peers: only the engine under env()
    assert report["ratios"]["env / scalar"] == pytest.approx(report["results"]["env"] / report["results"]["scalar"])


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


REPORT = {"results": {"env": 30_000.0, "vector B=4096": 2_000_000.0, "vector B=4096 2 threads": 3_500_000.0,
                      "texas_holdem_v4": 5_000.0, "openspiel bridge": 200_000.0},
          "ratios": {"vector B=4096 / openspiel bridge": 10.0}, "threads": [1, 2], "repeats": 3, "seconds": 2.0,
          "state_bytes_per_table": 512, "buffer_bytes_per_table": 1483, "command": "mus bench --tournaments",
          "kernel_seconds": {"cold": 13.2, "cached": 0.5, "cold_cpu": 13.3, "cached_cpu": 0.7},
          "tournaments": {"rule vs equity": {"hands_per_second": 59_057.0, "runs": [59_508.0, 59_057.0],
                                             "command": "mus tournament --agents rule,equity"},
                          "ladder": None}}


def test_the_docs_tables_and_the_readme_paragraph_come_from_the_bench_output() -> None:
    from experiments.tools.update_docs import bench_markdown, bench_summary

    table = bench_markdown(REPORT)
    assert table.startswith("`mus bench --tournaments` on this 2-core machine")
    assert "| rule vs equity | 59,057 | 59,508, 59,057 | `mus tournament --agents rule,equity` |" in table
    assert "| ladder |" not in table                    # skipped (no torch): no row
    assert "cold compile 13.2 s, load from the cache 0.5 s (13.3 s and 0.7 s of CPU)" in table
    summary = bench_summary(REPORT)
    for words in ("2.00M decisions/s on one core", "10.0× OpenSpiel", "3.50M on 2 cores",
                  "`mus_v0.env()` 6.0× PettingZoo", "59,057 hands/s for `rule` vs `equity`", "compiles once per "
                  "machine in 13 s", "cache in 0.5 s", "(`mus bench --tournaments`, medians"):
        assert words in summary, (words, summary)
    assert "ladder" not in summary
    bare = bench_summary({"results": {"vector B=4096": 1e6}, "ratios": {}, "threads": [1]})
    assert "1.00M decisions/s" in bare and "OpenSpiel" not in bare and "hands/s" not in bare


def test_tournaments_flag_only_with_engine_all(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        bench_command.main(["--engine", "vector", "--tournaments"])
    assert e.value.code == 2 and "--tournaments: only with --engine all" in capsys.readouterr().err


def test_the_aec_group_measures_env_against_texas_in_the_same_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """``mus bench --engine aec`` times MusGame and texas_holdem_v4 in the same run and gives env()'s ratios to them
    (texas here a stand-in peer, so that the test needs no RLCard); without peers it times no peer and gives only the
    ratios to MusGame."""
    from experiments.tools import bench
    from mus_env import mus_v0

    monkeypatch.setattr(bench, "_texas", lambda: mus_v0.raw_env)
    report = bench.run_group("aec", seconds=0.05, repeats=1, log=lambda _m: None)
    res = report["results"]
    assert set(res) == {"scalar", "raw_env", "env", "texas_holdem_v4"}
    assert report["ratios"]["env / texas_holdem_v4"] == pytest.approx(res["env"] / res["texas_holdem_v4"])
    assert report["ratios"]["env / scalar"] == pytest.approx(res["env"] / res["scalar"])
    report = bench.run_group("aec", seconds=0.05, repeats=1, peers=False, log=lambda _m: None)
    assert set(report["results"]) == {"scalar", "raw_env", "env"}
    assert set(report["ratios"]) == {"env / scalar", "raw_env / scalar"}
