"""docs/research/tools/env_ratio.py: its usage and the figures it prints (not their values: speed is the machine's)."""

from __future__ import annotations

import re

from scripts import research_tool

env_ratio = research_tool("env_ratio")


def test_bad_arguments_are_refused_with_the_usage(capsys):
    for argv in (["x"], ["0"], ["10", "2", "3"], ["-5"]):
        assert env_ratio.main(argv) == 2
        assert "usage: env_ratio.py" in capsys.readouterr().err


def test_help_prints_the_docstring(capsys):
    assert env_ratio.main(["-h"]) == 0
    assert "CPU time" in capsys.readouterr().out


def test_a_tiny_run_prints_every_ratio(capsys):
    assert env_ratio.main(["300", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"best of 1: MusGame [\d,]+ decisions/s; env\(\) \d+\.\d{3}x, raw_env \d+\.\d{3}x", out), out
    assert re.search(r"^against MusGame\(view_record=True\), [\d,]+ decisions/s: env\(\) \d+\.\d{3}x, "
                     r"raw_env \d+\.\d{3}x$", out, re.M), out
    for name in ("env", "raw_env"):
        ratio = r"\d+\.\d{3}"
        assert re.search(rf"^{name} / MusGame per repeat: median {ratio} \[{ratio}, {ratio}\]$", out, re.M)


def test_the_rates_count_the_decisions_asked_for(monkeypatch):
    """Each loop plays at least the decisions asked for (whole games) and divides by the CPU time it measured."""
    clock = iter([1.0, 3.0, 10.0, 12.0])
    monkeypatch.setattr(env_ratio.time, "process_time", lambda: next(clock))
    scalar = env_ratio.scalar_rate(50)
    aec = env_ratio.aec_rate(env_ratio.mus_v0.env, 50)
    assert 25 <= scalar < 200 and 25 <= aec < 200            # >= 50 decisions in 2 s, fewer than a few games' more


def test_the_fourth_loop_plays_games_that_keep_the_view_record(monkeypatch):
    made, original = [], env_ratio.MusGame

    def musgame(*args, **kwargs):
        made.append(kwargs.get("view_record"))
        return original(*args, **kwargs)

    monkeypatch.setattr(env_ratio, "MusGame", musgame)
    env_ratio.scalar_rate(30, view_record=True)
    env_ratio.scalar_rate(30)
    assert made and True in made and False in made
    assert made[:made.index(False)] == [True] * made.index(False)        # the first call's games all keep it
