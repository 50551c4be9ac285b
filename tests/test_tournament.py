"""Duplicate tournaments, the Elo fit, records round trips, and the mus CLI (replay, play with scripted input)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import OrdagoAgent, RandomAgent, make_agent
from experiments.deals import DealSet, make_deals
from experiments.tournament import PairResult, elo_ladder, play_pair
from experiments.tournament import main as tournament_main
from mus_env import VectorMusEnv
from mus_env.records import load_record, replay

ROOT = Path(__file__).resolve().parent.parent


def test_deal_sets_are_seeded_and_valid(tmp_path: Path) -> None:
    a, b, c = make_deals(50, seed=3), make_deals(50, seed=3), make_deals(50, seed=4)
    assert np.array_equal(a.decks, b.decks) and np.array_equal(a.seeds, b.seeds)
    assert not np.array_equal(a.decks, c.decks)
    assert (np.sort(a.decks, axis=1) == np.arange(40)).all()
    a.save(tmp_path / "d.npz")
    d = DealSet.load(tmp_path / "d.npz")
    assert np.array_equal(d.decks, a.decks) and np.array_equal(d.mano, a.mano)
    with pytest.raises(ValueError, match="at least one deal"):
        make_deals(0)


@pytest.mark.parametrize("mode", ["hands", "games"])
def test_every_deal_is_played_twice_with_seats_swapped(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    deals = make_deals(30, seed=1)
    seen: list[tuple[int, tuple[int, ...]]] = []         # (table, deck) of every deal put on a table
    original = VectorMusEnv.reset_tables

    def spy(self, tables, decks, mano, scores=None, seeds=None):
        for t, d in zip(np.asarray(tables), np.asarray(decks), strict=True):
            seen.append((int(t), tuple(int(c) for c in d)))
        return original(self, tables, decks, mano, scores, seeds)

    monkeypatch.setattr(VectorMusEnv, "reset_tables", spy)
    res = play_pair(RandomAgent(), OrdagoAgent(), deals, mode=mode, max_tables=16, seed=0)
    by_deck: dict[tuple[int, ...], list[int]] = {}
    for t, d in seen:
        by_deck.setdefault(d, []).append(t)
    assert set(by_deck) == {tuple(int(c) for c in d) for d in deals.decks}
    for tables in by_deck.values():
        # each deal on exactly two tables, one of each seating (even table: a on team 0; odd: a on team 1)
        assert len(tables) == 2 and sorted(t % 2 for t in tables) == [0, 1]
    n = len(res.hand_diff) if mode == "hands" else len(res.game_wins)
    assert n == len(deals)


def test_self_play_difference_contains_zero_and_is_reproducible() -> None:
    deals = make_deals(400, seed=11)
    agent = make_agent("rule")
    r1 = play_pair(agent, agent, deals, seed=5, names=("rule_a", "rule_b"))
    mean, lo, hi = r1.mean_diff()
    assert lo <= 0.0 <= hi, (mean, lo, hi)
    r2 = play_pair(agent, agent, deals, seed=5, names=("rule_a", "rule_b"))
    assert np.array_equal(r1.hand_diff, r2.hand_diff) and np.array_equal(r1.lance_stones, r2.lance_stones)
    r3 = play_pair(agent, agent, deals, seed=6, names=("rule_a", "rule_b"))
    assert r3.stats["rule_a"]["decisions"] > 0


def test_hand_results_add_up() -> None:
    res = play_pair(RandomAgent(), RandomAgent(), make_deals(200, seed=2), seed=0, names=("r1", "r2"))
    # per-lance stones add up to the hand stones; the duplicate difference is the mean of the two seatings'
    # results, which equal the stone difference except where an accepted órdago adds the stones lacking
    assert np.array_equal(res.lance_stones.sum(axis=2), res.hand_stones)
    assert np.allclose(res.hand_value.mean(axis=1), res.hand_diff)
    stones = res.hand_stones[:, :, 0] - res.hand_stones[:, :, 1]
    extra = res.hand_value - stones
    assert np.all(np.abs(extra) <= 40) and (extra == 0).any() and (extra != 0).any()
    s = res.summary()
    assert 0.0 <= s["envido_rate_a"] <= 1.0 and s["deals"] == 200


def test_elo_orders_agents_by_results() -> None:
    n = 300
    strong = PairResult("strong", "weak", hand_diff=np.full(n, 1.0))
    mid = PairResult("mid", "weak", hand_diff=np.where(np.arange(n) % 4 == 0, -1.0, 1.0))
    close = PairResult("strong", "mid", hand_diff=np.where(np.arange(n) % 3 == 0, -1.0, 1.0))
    ladder = elo_ladder(["weak", "mid", "strong"], [strong, mid, close], bootstrap=20, anchor="weak")
    assert ladder["weak"][0] == pytest.approx(1000.0)
    assert ladder["strong"][0] > ladder["mid"][0] > ladder["weak"][0]


def test_tournament_command_writes_outputs(tmp_path: Path) -> None:
    out = tmp_path / "t"
    tournament_main(["--agents", "random,ordago,rule", "--hands", "60", "--games", "20", "--seed", "3",
                     "--out", str(out), "--quiet", "--records", "1", "--tables", "64"])
    results = json.loads((out / "results.json").read_text())
    assert set(results["ladder"]) == {"random", "ordago", "rule"}
    assert (out / "pairs.csv").read_text().count("\n") == 1 + 3 + 3
    assert (out / "ladder.png").stat().st_size > 1000 and (out / "lances.png").stat().st_size > 1000
    records = sorted((out / "records").glob("*.json"))
    assert len(records) == 3 * 2
    for path in records:
        rec = load_record(path)
        game = replay(rec)
        assert game.is_over and list(game.scores) == rec["scores_now"] and game.winner == rec["winner"]


def test_tournament_rejects_bad_arguments() -> None:
    with pytest.raises(SystemExit):
        tournament_main(["--agents", "random", "--hands", "10"])
    with pytest.raises(SystemExit):
        tournament_main(["--agents", "random,rule", "--hands", "0", "--games", "0"])
    with pytest.raises(SystemExit) as e:
        tournament_main(["--agents", "random,nonsense", "--hands", "10", "--quiet"])
    assert e.value.code == 2


# (records: tests/test_records.py)


# ----------------------------------------------------------------------------------------------------
# the CLI
def _mus(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_cli_help_and_unknown_command() -> None:
    assert "tournament" in _mus().stdout
    bad = _mus("fly")
    assert bad.returncode == 2 and "unknown subcommand" in bad.stderr


def _drive_mus_play(args: list[str], rng: np.random.Generator, timeout: float = 240) -> tuple[int, str]:
    """Run ``mus play`` and answer each prompt like a (clumsy) person: sometimes garbage, an illegal number or
    an empty line first, then one of the legal choices it printed."""
    import os
    import re
    import selectors
    import time

    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "play", *args], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    out, pending, deadline, answered = "", "", time.monotonic() + timeout, 0
    bad_inputs = ["banana", "99", "", "-1", "envido 7", "?"]
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"mus play did not finish:\n{out[-3000:]}"
        if not sel.select(timeout=1.0):
            continue
        chunk = os.read(proc.stdout.fileno(), 65536).decode()
        if not chunk:
            break
        out += chunk
        pending += chunk
        if pending.endswith("your action> "):
            choices = re.findall(r"(\d+): ", out.rsplit("Choose (number or words): ", 1)[-1].splitlines()[0])
            last_menu = out.rfind("Choose (number or words): ")
            last_discard = out.rfind("Discard: type the slots")
            if last_discard > last_menu:
                choices = re.findall(r"^\s+(\d+)\s+descarta", out[last_discard:], re.M)
            assert choices, out[-2000:]
            bad = answered == 0 or rng.random() < 0.25
            answer = bad_inputs[answered % len(bad_inputs)] if bad else rng.choice(choices)
            answered += 1
            proc.stdin.write(answer + "\n")
            proc.stdin.flush()
            pending = ""
    out += proc.stdout.read() or ""
    proc.wait(timeout=30)
    return proc.returncode, out


def test_mus_play_with_scripted_input(tmp_path: Path) -> None:
    """A whole game against three bots, answering every prompt (with bad input mixed in): it ends with a
    winner, never crashes, and its record replays."""
    record = tmp_path / "play.json"
    code, out = _drive_mus_play(["--bots", "rule,rule,rule", "--seed", "7", "--record", str(record)],
                                np.random.default_rng(0))
    assert code == 0, out[-3000:]
    assert "GAME OVER" in out and "Record written" in out
    assert "Did not understand" in out or "is not one of the legal actions" in out
    rec = load_record(record)
    assert rec["over"] and not rec["meta"]["stopped"]
    game = replay(rec)
    assert game.is_over and list(game.scores) == rec["scores_now"] and game.winner == rec["winner"]


def test_mus_play_stops_cleanly_on_end_of_input(tmp_path: Path) -> None:
    record = tmp_path / "stop.json"
    out = _mus("play", "--bots", "rule,rule,rule", "--seed", "1", "--record", str(record), stdin="")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "stopped" in out.stdout.lower()
    rec = load_record(record)
    assert rec["meta"]["stopped"] is True
    replay(rec)


def test_self_play_round_robin(tmp_path: Path) -> None:
    out = tmp_path / "self"
    tournament_main(["--agents", "rule,rule", "--hands", "300", "--out", str(out), "--quiet", "--no-plots"])
    results = json.loads((out / "results.json").read_text())
    assert set(results["ladder"]) == {"rule", "rule#2"}
    pair = results["pairs"][0]
    assert pair["ci_low"] <= 0.0 <= pair["ci_high"]
