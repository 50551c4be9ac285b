"""Duplicate tournaments, the Elo fit, records round trips, and the mus CLI (replay, play with scripted input)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hang_guards import PROCESS_S

import experiments.evaluate.duplicate as duplicate
from agents import Agent, RandomAgent, RuleBasedAgent, make_agent, spec_label
from experiments.commands.tournament import main as tournament_main
from experiments.evaluate.deals import DealSet, make_deals
from experiments.evaluate.ratings import nash_mixture
from experiments.evaluate.report import ProgressBar
from experiments.evaluate.tournament import (
    PairResult,
    chunk_seed,
    elo_ladder,
    make_ladder,
    merge_pair_results,
    play_pair,
    round_robin,
    stones_ladder,
    tournament_agent,
)
from mus_env import Action, VectorMusEnv
from mus_env.observation import SLOT_NAMES
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


class _Lowest(Agent):
    """Always the smallest legal id (told apart from _Highest wherever two actions are legal)."""

    def act_batch(self, obs, masks, rng):
        return np.argmax(masks > 0, axis=1).astype(np.int64)


class _Highest(Agent):
    """Always the largest legal id."""

    def act_batch(self, obs, masks, rng):
        return (masks.shape[1] - 1 - np.argmax(masks[:, ::-1] > 0, axis=1)).astype(np.int64)


@pytest.mark.parametrize("mode", ["hands", "games"])
def test_every_deal_is_played_twice_with_seats_swapped(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """Each deal is put on two tables; at one agent a holds team 0 (seats 0 and 2) and b team 1, at the other
    the teams are swapped. Checked from the engine's side: every decision with two or more legal actions
    tells a (lowest id) from b (highest id), and the seat that made it must belong to that agent's team."""
    deals = make_deals(30, seed=1)
    on_table: dict[int, tuple[int, ...]] = {}           # table -> deck now dealt there
    mask_now: dict[str, np.ndarray] = {}
    seatings: dict[tuple[int, ...], set[tuple[int, str, int]]] = {}   # deck -> {(table, agent, team)}
    orig_reset_decks, orig_reset_tables, orig_step = (VectorMusEnv.reset_from_decks, VectorMusEnv.reset_tables,
                                                      VectorMusEnv.step)

    def spy_reset_decks(self, decks, mano, scores=None, seeds=None):
        on_table.update({t: tuple(int(c) for c in d) for t, d in enumerate(np.asarray(decks))})
        obs, mask = orig_reset_decks(self, decks, mano, scores, seeds)
        mask_now["m"] = mask.copy()
        return obs, mask

    def spy_reset_tables(self, tables, decks, mano, scores=None, seeds=None):
        on_table.update({int(t): tuple(int(c) for c in d)
                         for t, d in zip(np.asarray(tables), np.asarray(decks), strict=True)})
        obs, mask = orig_reset_tables(self, tables, decks, mano, scores, seeds)
        mask_now["m"] = mask.copy()
        return obs, mask

    def spy_step(self, actions):
        seats, acts, mask = self.current_player.copy(), np.asarray(actions).copy(), mask_now["m"]
        for t in range(len(acts)):
            legal = np.flatnonzero(mask[t])
            if len(legal) >= 2:
                assert acts[t] in (legal[0], legal[-1])
                who = "a" if acts[t] == legal[0] else "b"
                seatings.setdefault(on_table[t], set()).add((t, who, int(seats[t]) % 2))
        out = orig_step(self, actions)
        mask_now["m"] = out[1].copy()
        return out

    monkeypatch.setattr(VectorMusEnv, "reset_from_decks", spy_reset_decks)
    monkeypatch.setattr(VectorMusEnv, "reset_tables", spy_reset_tables)
    monkeypatch.setattr(VectorMusEnv, "step", spy_step)
    res = play_pair(_Lowest(), _Highest(), deals, mode=mode, max_tables=16, seed=0)
    decks = {tuple(int(c) for c in d) for d in deals.decks}
    assert decks <= set(seatings)
    for deck in decks:
        tables = sorted({t for t, _, _ in seatings[deck]})
        assert len(tables) == 2 and tables[0] % 2 != tables[1] % 2, tables
        # (agent, team) at each of the two tables: a on team 0 at one, on team 1 at the other; b opposite
        teams = {t: {(who, team) for tt, who, team in seatings[deck] if tt == t} for t in tables}
        assert {frozenset(v) for v in teams.values()} == {frozenset({("a", 0), ("b", 1)}),
                                                           frozenset({("a", 1), ("b", 0)})}, teams
    n = len(res.hand_diff) if mode == "hands" else len(res.game_wins)
    assert n == len(deals)


def test_self_play_difference_is_zero_deal_by_deal_and_reproducible() -> None:
    """rule is deterministic: against itself each deal's two seatings mirror each other, so every duplicate
    difference is exactly 0, the two names' counts are equal, and the agents' seed changes nothing. random
    draws from that seed: the same seed repeats its results, another changes them."""
    deals = make_deals(400, seed=11)
    agent = make_agent("rule")
    r1 = play_pair(agent, agent, deals, seed=5, names=("rule_a", "rule_b"))
    assert np.array_equal(r1.hand_diff, np.zeros(len(deals)))
    assert np.array_equal(r1.hand_value[:, 0], -r1.hand_value[:, 1]) and r1.hand_value.any()
    assert r1.stats["rule_a"] == r1.stats["rule_b"] and r1.stats["rule_a"]["decisions"] >= 8 * len(deals)
    r3 = play_pair(agent, agent, deals, seed=6, names=("rule_a", "rule_b"))
    assert np.array_equal(r1.hand_value, r3.hand_value) and r1.stats == r3.stats
    rnd = RandomAgent()
    x1, x2, x3 = (play_pair(rnd, rnd, deals, seed=s, names=("r1", "r2")) for s in (5, 5, 6))
    assert np.array_equal(x1.hand_value, x2.hand_value) and np.array_equal(x1.lance_stones, x2.lance_stones)
    assert not np.array_equal(x1.hand_value, x3.hand_value)
    mean, lo, hi = x1.mean_diff()
    assert lo <= 0.0 <= hi, (mean, lo, hi)


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


def test_stones_by_lance_say_where_the_margin_comes_from() -> None:
    """The four lances' differences and the órdago credit add up to the duplicate margin, each lance is a's
    stones minus b's there, and the credit is what órdagos added beyond their lance (random plays órdago often)."""
    deals = make_deals(300, seed=4)
    res = play_pair(make_agent("ordago"), RandomAgent(), deals, seed=1, names=("ordago", "random"))
    where = res.stones_by_lance()
    assert list(where) == ["grande", "chica", "pares", "juego", "ordago_credit"]
    assert np.isclose(sum(where.values()), res.mean_diff()[0])
    pares = (res.lance_stones[:, :, 2, 0] - res.lance_stones[:, :, 2, 1]).mean()
    assert np.isclose(where["pares"], pares)
    credit = (res.hand_value - (res.hand_stones[:, :, 0] - res.hand_stones[:, :, 1])).mean()
    assert abs(where["ordago_credit"]) > 0.1 and np.isclose(where["ordago_credit"], credit)
    assert res.summary()["ordago_credit"] == where["ordago_credit"]
    assert PairResult("a", "b").stones_by_lance() == {}


def test_rates_by_lance_count_each_betting_decision_in_its_lance() -> None:
    """ordago bets (órdago) at every opening and never refuses; every betting decision is an opening or an answer
    in one lance, and a merge of two chunks sums the counts."""
    deals = make_deals(200, seed=4)
    res = play_pair(make_agent("ordago"), make_agent("rule"), deals, seed=1, names=("ordago", "rule"))
    rates = res.rates_by_lance("ordago")
    assert set(rates) == {"grande", "chica", "pares", "juego"}
    assert all(r["bet"] == 1.0 and r["no_quiero"] == 0.0 for r in rates.values() if r["opens"])
    assert rates["grande"]["opens"] > 0 and rates["pares"]["opens"] > 0
    for who in ("ordago", "rule"):
        st, per = res.stats[who], res.rates_by_lance(who)
        assert sum(r["opens"] + r["responses"] for r in per.values()) == st["bets"]
        assert sum(st[f"{k}_no_quiero"] for k in per) == st["no_quiero"]
    rule = res.rates_by_lance("rule")
    assert 0 < rule["grande"]["no_quiero"] < 1 and rule["grande"]["responses"] > 0
    both = merge_pair_results([res, res])
    assert both.rates_by_lance("rule")["pares"]["opens"] == 2 * rule["pares"]["opens"]


def test_elo_orders_agents_by_game_results() -> None:
    n = 300

    def wins(rate: int) -> npt.NDArray[np.int8]:
        return np.stack([np.arange(n) % 100 < rate] * 2, axis=1).astype(np.int8)

    strong = PairResult("strong", "weak", game_wins=wins(90))
    mid = PairResult("mid", "weak", game_wins=wins(75))
    close = PairResult("strong", "mid", game_wins=wins(75))
    ladder = elo_ladder(["weak", "mid", "strong"], [strong, mid, close], bootstrap=20, anchor="weak")
    assert ladder["weak"][0] == pytest.approx(1000.0)
    assert ladder["strong"][0] > ladder["mid"][0] > ladder["weak"][0]
    # consistent rates: 75 % is 191 Elo (400 log10 3) per step and 90 % is 382 (400 log10 9); the half-win
    # prior pulls each a little toward 0
    assert 350 < ladder["strong"][0] - ladder["weak"][0] < 382
    assert 175 < ladder["mid"][0] - ladder["weak"][0] < 191


def _hands(a: str, b: str, diffs: npt.ArrayLike) -> PairResult:
    d = np.asarray(diffs, dtype=np.float64)
    return PairResult(a, b, hand_diff=d, hand_value=np.stack([d, d], axis=1))


def test_hands_ladder_rates_stones_not_the_sign_of_hands() -> None:
    """'hustler' wins 70 % of the deals by one stone and loses 30 % by five: -0.8 stones a hand against 'solid'.
    Rating the sign of each hand put it ahead; the ladder must agree with the pairs table."""
    n = 1000
    diffs = np.where(np.arange(n) % 10 < 7, 1.0, -5.0)
    pair = _hands("hustler", "solid", diffs)
    assert pair.mean_diff()[0] == pytest.approx(-0.8) and pair.mean_diff()[2] < 0
    ladder = make_ladder(["hustler", "solid"], [pair], [], bootstrap=20)
    assert (ladder.source, ladder.unit) == ("hands", "stones/hand")
    assert ladder.order() == ["solid", "hustler"]
    assert ladder["hustler"][0] - ladder["solid"][0] == pytest.approx(-0.8)
    assert "stones per hand" in ladder.method and not ladder.contradictions
    with pytest.raises(ValueError, match="Elo is fitted on games"):
        elo_ladder(["hustler", "solid"], [pair])             # the old sign-of-hand Elo is gone


def test_stones_ladder_is_exact_on_consistent_pairs_and_weights_precise_ones() -> None:
    rng = np.random.default_rng(0)
    true = {"random": 0.0, "mid": 4.0, "strong": 6.5}
    pairs = []
    for a, b in (("random", "mid"), ("random", "strong"), ("mid", "strong")):
        noise = rng.normal(0.0, 3.0, 500)
        pairs.append(_hands(a, b, true[a] - true[b] + noise - noise.mean()))   # each pair's mean is exact
    ladder = stones_ladder(list(true), pairs, bootstrap=20)
    for name, value in true.items():
        assert ladder[name][0] == pytest.approx(value, abs=1e-9)
    assert 0.0 < ladder["strong"][1] < 0.5                                     # a bootstrap error, not zero
    # an inconsistent triangle: the precise pair (small spread) wins the compromise
    precise = _hands("x", "y", np.full(400, 1.0) + np.tile([-0.1, 0.1], 200))
    loose_xz = _hands("x", "z", np.tile([-40.0, 40.0], 200) + 0.0)
    loose_yz = _hands("y", "z", np.tile([-40.0, 40.0], 200) + 5.0)
    fit = stones_ladder(["x", "y", "z"], [precise, loose_xz, loose_yz], bootstrap=0, anchor="x")
    assert fit["x"][0] - fit["y"][0] == pytest.approx(1.0, abs=0.01)


def test_ladder_rates_games_when_played_and_names_the_cycles_it_reverses() -> None:
    n = 400
    hands = [_hands("a", "b", np.full(n, -1.0) + np.tile([-0.5, 0.5], n // 2))]   # b ahead on stones
    games = [PairResult("a", "b", game_wins=np.ones((n, 2), dtype=np.int8) * (np.arange(n) % 10 < 7)[:, None])]
    ladder = make_ladder(["a", "b"], hands, games, bootstrap=0)
    assert (ladder.source, ladder.unit) == ("games", "Elo") and ladder.order() == ["a", "b"]
    assert "game wins" in ladder.method
    # a cycle on stones (a > b > c > a, each pair clear of a tie): one rating must reverse a pair, and says so
    cycle = [_hands("a", "b", np.tile([0.0, 2.0], n)), _hands("b", "c", np.tile([0.0, 2.0], n)),
             _hands("c", "a", np.tile([0.0, 2.0], n))]
    ladder = make_ladder(["a", "b", "c"], cycle, [], bootstrap=0)
    assert len(ladder.contradictions) >= 1 and "stones/hand +1.000" in ladder.contradictions[0]


def test_the_nash_mixture_of_a_cycle_keeps_every_agent_and_of_a_chain_only_the_best() -> None:
    """Nash averaging: rock-paper-scissors keeps all three at 1/3, a biased cycle its known equilibrium, and an
    agent that beats every other takes all the mass; a dominated fourth agent gets none. The gap (what the best
    single agent wins against the mixture) is about 0 at each."""
    rps = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]], dtype=float)
    for payoff, expected in ((rps, [1 / 3] * 3),
                             (np.array([[0, 1, -2], [-1, 0, 1], [2, -1, 0]], dtype=float), [0.25, 0.5, 0.25]),
                             (np.block([[rps, np.full((3, 1), 0.5)], [np.full((1, 3), -0.5), np.zeros((1, 1))]]),
                              [1 / 3, 1 / 3, 1 / 3, 0.0])):
        p, gap = nash_mixture(payoff)
        assert p == pytest.approx(expected, abs=2e-3) and p.sum() == pytest.approx(1.0) and 0 <= gap < 2e-3
    for bad in (np.ones((2, 2)), np.zeros((2, 3)), np.array([[0, np.nan], [np.nan, 0]])):
        with pytest.raises(ValueError, match="payoff must be"):
            nash_mixture(bad)
    # from a tournament's results: a stones cycle keeps all three agents; a chain (a > b > c) only a
    n = 400
    cycle = [_hands("a", "b", np.tile([0.0, 2.0], n)), _hands("b", "c", np.tile([0.0, 2.0], n)),
             _hands("c", "a", np.tile([0.0, 2.0], n))]
    ladder = make_ladder(["a", "b", "c"], cycle, [], bootstrap=0)
    assert ladder.nash == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, abs=2e-3)
    assert "a 0.33" in ladder.nash_text() and ladder.to_json()["nash"] == ladder.nash
    chain = [_hands("a", "b", np.tile([0.0, 2.0], n)), _hands("b", "c", np.tile([0.0, 2.0], n)),
             _hands("a", "c", np.tile([0.0, 2.0], n))]
    ladder = make_ladder(["a", "b", "c"], chain, [], bootstrap=0)
    assert ladder.nash["a"] == pytest.approx(1.0, abs=1e-3) and ladder.nash_text().endswith("a 1.00.")


def test_tournament_command_writes_outputs(tmp_path: Path) -> None:
    out = tmp_path / "t"
    tournament_main(["--agents", "random,ordago,rule", "--hands", "60", "--games", "20", "--seed", "3",
                     "--out", str(out), "--quiet", "--records", "1", "--tables", "64"])
    results = json.loads((out / "results.json").read_text())
    assert set(results["ladder"]) == {"random", "ordago", "rule"}
    assert results["rating"]["source"] == "games" and results["rating"]["unit"] == "Elo"
    assert set(results["rating"]["nash"]) == {"random", "ordago", "rule"}
    assert sum(results["rating"]["nash"].values()) == pytest.approx(1.0)
    assert (out / "ladder.csv").read_text().startswith("rank,agent,elo,elo_se,")
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
def _mus(*args: str, stdin: str = "", timeout: float = PROCESS_S) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_cli_help_and_unknown_command() -> None:
    assert "tournament" in _mus().stdout
    bad = _mus("fly")
    assert bad.returncode == 2 and "unknown subcommand" in bad.stderr


def _drive_mus_play(args: list[str], rng: np.random.Generator, timeout: float = PROCESS_S) -> tuple[int, str]:
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
            if last_discard > last_menu:                   # the menu lists slot lists ("0 2") and their cards
                choices = re.findall(r"^  ([0-3](?: [0-3])*) +\S", out[last_discard:], re.M)
            assert choices, out[-2000:]
            bad = answered == 0 or rng.random() < 0.25
            answer = bad_inputs[answered % len(bad_inputs)] if bad else rng.choice(choices)
            answered += 1
            proc.stdin.write(answer + "\n")
            proc.stdin.flush()
            pending = ""
    out += proc.stdout.read() or ""
    proc.wait(timeout=PROCESS_S)
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


def test_mus_play_screen_speaks_mus() -> None:
    """The screen of a whole game: a card legend; of the rivals' and partner's discards only how many cards;
    of yours the cards thrown; every bet with its lance; the declarations as they happen; hands counted from
    1 in the table, the banners and the replay alike."""
    import re

    from experiments.play import play_game

    out: list[str] = []
    game = play_game(["rule", "equity", "rule"], seat=1, seed=5, human=make_agent("rule"), output_fn=out.append)
    text = "\n".join(out)
    assert game.is_over
    assert text.startswith("You sit at seat 1 (team 1); your partner is partner-3 (rule), the rivals "
                           "rival-0 (rule) and rival-2 (equity).")
    assert "Cards: number then suit" in text and "every 3 is a rey (R) and every 2 an as (A)" in text
    moves = [m.groups() for m in map(re.compile(r"^  (you|rival-\d \(\w+\)|partner-\d \(\w+\)): (.*)$").match, out)
             if m]
    discards = [(who, what) for who, what in moves if what.startswith("descarta")]
    assert any(who == "you" for who, _ in discards) and any(who != "you" for who, _ in discards)
    for who, what in discards:
        if who == "you":                                   # "descarta 2: Se Ac": the count and your cards
            k, cards = re.fullmatch(r"descarta (\d): ((?:\w\w ?)+)", what).groups()
            assert len(cards.split()) == int(k)
        else:
            assert re.fullmatch(r"descarta \d", what), what    # never which slots
    bets = [what for _, what in moves if re.search(r"paso|envido|quiero|órdago", what)]
    assert bets and all(re.match(r"\[(grande|chica|pares|juego|punto)\] ", b) for b in bets), bets
    declared = [who for who, what in moves if re.fullmatch(r"(pares|juego) (sí|no)", what)]
    assert {"you", "rival-0 (rule)", "rival-2 (equity)", "partner-3 (rule)"} <= set(declared)
    headers = [int(h) for h in re.findall(r"^Mus  hand (\d+), game 1 ", text, re.M)]
    ends = [int(h) for h in re.findall(r"^--- end of hand (\d+):", text, re.M)]
    lasts = {int(h) for h in re.findall(r"^last hand (\d+) ", text, re.M)}
    assert headers[0] == 1 and ends == list(range(1, len(game.hand_log) + 1))
    assert set(headers) <= set(ends) and lasts <= set(ends) and lasts
    assert "hand 0" not in text


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
    tournament_main(["--agents", "rule,rule", "--hands", "300", "--games", "0", "--out", str(out), "--quiet",
                     "--no-plots"])
    results = json.loads((out / "results.json").read_text())
    assert set(results["ladder"]) == {"rule", "rule#2"}
    assert results["rating"]["unit"] == "stones/hand"
    # the stones rating of two agents is their pair's mean difference, exactly
    diff = results["ladder"]["rule"]["rating"] - results["ladder"]["rule#2"]["rating"]
    assert diff == pytest.approx(results["pairs"][0]["mean_diff"])
    pair = results["pairs"][0]
    assert pair["ci_low"] <= 0.0 <= pair["ci_high"]


def test_default_tournament_rates_games(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Without --games the tournament plays 1000 duplicate games and its ladder is Elo on them, and says so
    (random against ordago: each game is one hand, so this is quick)."""
    out = tmp_path / "d"
    tournament_main(["--agents", "random,ordago", "--hands", "50", "--out", str(out), "--quiet", "--no-plots"])
    results = json.loads((out / "results.json").read_text())
    assert results["meta"]["games"] == 1000 and results["rating"]["source"] == "games"
    assert [p["games_deals"] for p in results["pairs"] if p["mode"] == "games"] == [1000]
    printed = capsys.readouterr().out
    assert "Ladder: Elo from duplicate games" in printed and "Rating: Elo from duplicate game wins" in printed


# ---------------------------------------------------------------------------------------------------------
# deal sets in chunks: round_robin plays chunk k of a pair as play_pair(deals[k*C:(k+1)*C], seed=chunk_seed(seed, k))
def _same_result(x: PairResult, y: PairResult) -> None:
    """x and y agree in every field but the timing, arrays in dtype and shape as well as in value."""
    for f in dataclasses.fields(PairResult):
        if f.name == "seconds":
            continue
        u, v = getattr(x, f.name), getattr(y, f.name)
        if isinstance(u, np.ndarray):
            assert u.dtype == v.dtype and u.shape == v.shape and np.array_equal(u, v), f.name
        else:
            assert u == v, f.name


def test_deal_set_subset_is_a_slice_and_refuses_bad_bounds() -> None:
    deals = make_deals(10, seed=4, random_scores=True)
    part = deals.subset(3, 7)
    assert len(part) == 4
    for name in ("decks", "mano", "scores", "seeds"):
        assert np.array_equal(getattr(part, name), getattr(deals, name)[3:7]), name
    assert len(deals.subset(0, 10)) == 10
    for start, stop in ((5, 5), (-1, 3), (0, 11), (7, 3)):
        with pytest.raises(ValueError, match="subset needs 0 <= start < stop <= 10"):
            deals.subset(start, stop)
    with pytest.raises(ValueError, match="subset bounds must be ints"):
        deals.subset(0, 2.5)  # type: ignore[arg-type]


def test_chunk_seed_keeps_the_seed_for_the_first_chunk() -> None:
    assert chunk_seed(5, 0) == 5 and chunk_seed(2**64 - 1, 0) == 2**64 - 1
    later = [chunk_seed(5, k) for k in range(1, 6)]
    assert len(set(later)) == 5 and 5 not in later and all(0 <= s < 2**64 for s in later)
    assert later == [chunk_seed(5, k) for k in range(1, 6)] and chunk_seed(6, 1) != chunk_seed(5, 1)
    for seed, k in ((-1, 0), (0, -1), (True, 1), (1.0, 1)):
        with pytest.raises(ValueError, match="chunk_seed: (seed|k) must be a non-negative int"):
            chunk_seed(seed, k)  # type: ignore[arg-type]


@pytest.mark.parametrize(("mode", "n", "chunk"), [("hands", 30, 7), ("games", 10, 4)])
def test_round_robin_in_chunks_is_play_pair_on_each_chunk_merged(monkeypatch: pytest.MonkeyPatch, mode: str,
                                                                   n: int, chunk: int) -> None:
    """random draws from the agents' seed, so the chunks' seeds and borders show in its results: round_robin
    with a small chunk size is play_pair on each chunk with chunk_seed, merged, and not one play_pair call."""
    deals = make_deals(n, seed=9)
    monkeypatch.setattr(duplicate, "DEAL_CHUNK", chunk)
    (got,) = round_robin(["random", "rule"], deals, mode=mode, max_tables=8, seed=3, progress=False)
    bounds = [(s, min(s + chunk, n)) for s in range(0, n, chunk)]
    assert len(bounds) >= 3 and bounds[-1][1] - bounds[-1][0] < chunk          # a short last chunk too
    agents = (make_agent("random"), make_agent("rule"))
    parts = [play_pair(*agents, deals.subset(s, e), mode=mode, max_tables=8, seed=chunk_seed(3, k),
                       names=("random", "rule")) for k, (s, e) in enumerate(bounds)]
    _same_result(got, merge_pair_results(parts))
    # the merge lays the chunks end to end and adds up their counters
    per_deal = got.hand_value if mode == "hands" else got.game_wins
    assert len(per_deal) == n and got.summary()["deals" if mode == "hands" else "games_deals"] == n
    for (s, e), part in zip(bounds, parts, strict=True):
        assert np.array_equal(per_deal[s:e], part.hand_value if mode == "hands" else part.game_wins)
    for who in ("random", "rule"):
        for key, v in got.stats[who].items():
            assert v == sum(p.stats[who][key] for p in parts), (who, key)
            assert v > 0 or key.split("_")[0] in SLOT_NAMES, (who, key)   # a lance may see none in 30 deals
    if mode == "hands":
        assert got.summary()["grande_a"] == pytest.approx(
            sum(p.summary()["grande_a"] * len(p.hand_diff) for p in parts) / n)
    else:
        assert np.array_equal(got.game_hands, np.concatenate([p.game_hands for p in parts]))
    # a chunked run is not one play_pair call: the chunks' own seeds change random's draws
    whole = play_pair(*agents, deals, mode=mode, max_tables=8, seed=3, names=("random", "rule"))
    assert not np.array_equal(per_deal, whole.hand_value if mode == "hands" else whole.game_wins)
    # an explicit deal_chunk overrides the module's constant
    monkeypatch.setattr(duplicate, "DEAL_CHUNK", 10**6)
    (again,) = round_robin(["random", "rule"], deals, mode=mode, max_tables=8, seed=3, progress=False,
                           deal_chunk=chunk)
    _same_result(again, got)


@pytest.mark.parametrize("n", [40, 64])
def test_round_robin_up_to_one_chunk_is_one_play_pair_call(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Up to the chunk size (64 here; the default 65,536 is too many for a unit test), round_robin's result is
    today's single play_pair call with the tournament's seed, bit for bit."""
    monkeypatch.setattr(duplicate, "DEAL_CHUNK", 64)
    deals = make_deals(n, seed=12)
    (got,) = round_robin(["random", "ordago"], deals, max_tables=16, seed=7, progress=False)
    _same_result(got, play_pair(make_agent("random"), make_agent("ordago"), deals, max_tables=16, seed=7,
                                names=("random", "ordago")))


def test_round_robin_progress_counts_every_deal_of_every_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    advanced: list[int] = []
    monkeypatch.setattr(ProgressBar, "advance", lambda self, k: advanced.append(k))
    round_robin(["random", "rule", "ordago"], make_deals(25, seed=1), max_tables=8, progress=False, deal_chunk=10)
    assert sum(advanced) == 3 * 25


def test_merge_refuses_nothing_and_other_pairs() -> None:
    deals = make_deals(6, seed=0)
    x = play_pair(RandomAgent(), RandomAgent(), deals.subset(0, 3), names=("r1", "r2"))
    y = play_pair(RandomAgent(), RandomAgent(), deals.subset(3, 6), names=("r1", "r3"))
    with pytest.raises(ValueError, match="at least one PairResult"):
        merge_pair_results([])
    with pytest.raises(ValueError, match="parts of different pairs: r1 vs r2 and r1 vs r3"):
        merge_pair_results([x, y])
    assert len(merge_pair_results([x]).hand_diff) == 3
    for bad in (0, -5, 2.0, True):
        with pytest.raises(ValueError, match="deal_chunk must be a positive int"):
            round_robin(["random", "rule"], deals, progress=False, deal_chunk=bad)  # type: ignore[arg-type]


class _RaiseForever:
    """Raises (ENVIDO 10) whenever it may, else the first legal action: two of them never end a hand."""

    name = "raiser"

    def act_batch(self, obs, masks, rng):
        masks = np.asarray(masks)
        raise_ = masks[:, int(Action.ENVIDO_10)].astype(bool)
        return np.where(raise_, int(Action.ENVIDO_10), masks.argmax(axis=1))


def test_an_endless_raise_war_is_dropped_not_a_hang() -> None:
    deals = make_deals(6, 3, 40)
    with pytest.warns(RuntimeWarning, match="6 of 6 deals dropped.*keep re-raising"):
        res = play_pair(_RaiseForever(), _RaiseForever(), deals, mode="hands", max_hand_decisions=200)
    assert res.abandoned == 6 and len(res.hand_diff) == 0
    # against an agent that answers, every hand ends: nothing is dropped, and the two seatings stay paired
    res = play_pair(_RaiseForever(), RuleBasedAgent(), deals, mode="games", max_hand_decisions=200)
    assert res.abandoned == 0 and res.game_wins.shape == (6, 2)
    assert res.summary()["abandoned"] == 0
    with pytest.warns(RuntimeWarning, match="dropped"):
        dropped = play_pair(_RaiseForever(), _RaiseForever(), deals, mode="hands", max_hand_decisions=200,
                            names=("a", "b"))
    played = play_pair(_RaiseForever(), RuleBasedAgent(), deals, mode="hands", max_hand_decisions=200,
                       names=("a", "b"))
    merged = merge_pair_results([dropped, played])
    assert merged.abandoned == 6 and len(merged.hand_diff) == 6
    assert np.array_equal(merged.hand_diff, played.hand_diff)


def test_tournament_agents_act_on_one_torch_thread() -> None:
    """A tournament's policy agents act on one torch thread (the agents and the engine take turns in one process);
    other agents are built as make_agent builds them, and make_agent leaves torch's thread count alone."""
    assert isinstance(tournament_agent("rule"), RuleBasedAgent)
    pytest.importorskip("torch")
    assert tournament_agent("ppo").threads == 1
    assert make_agent("ppo").threads is None
    assert make_agent("ppo", threads=3).threads == 3


def test_bench_times_tournaments_in_fresh_processes(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``mus bench --engine tournament``: :func:`bench_tournament` runs ``mus tournament`` in fresh processes and
    reports the median of the hands/s they print (a tiny tournament here), the command and the load."""
    from experiments.commands import bench as bench_command
    from experiments.tools import bench

    r = bench.bench_tournament(("--agents", "random,ordago", "--hands", "30", "--games", "0"), repeats=2)
    assert len(r["runs"]) == 2 and all(x > 0 for x in r["runs"])
    assert r["hands_per_second"] == float(np.median(r["runs"]))
    assert r["command"] == "mus tournament --agents random,ordago --hands 30 --games 0 --seed 0 --quiet --no-plots"
    assert len(r["load"]["before"]) == 3
    assert set(bench.TOURNAMENTS) == {"rule vs equity", "ladder"}
    monkeypatch.setattr(bench, "TOURNAMENTS", {"tiny": ("--agents", "rule,ordago", "--hands", "10", "--games", "0")})
    bench_command.main(["--engine", "tournament", "--repeats", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["results"] == {} and report["tournaments"]["tiny"]["hands_per_second"] > 0


@pytest.mark.parametrize("trained, game, words", [(True, [], "trained with señas"),
                                                  (False, ["--signals", "truthful"], "trained without señas")])
def test_a_policy_of_the_other_game_is_refused_before_anything(tmp_path, capsys, trained, game, words) -> None:
    """A policy file whose network reads the other observation length (señas on/off) is one line naming the
    flag to use, before any folder is made."""
    pytest.importorskip("torch")
    from agents.policy import PolicyNet, save_policy
    from experiments.commands.tournament import main as tournament_main

    net = PolicyNet(477 if trained else 345, 47 if trained else 31, (8,))
    save_policy(tmp_path / "p.pt", net, config={"signals": "truthful" if trained else "off"})
    with pytest.raises(SystemExit) as e:
        tournament_main(["--agents", f"rule,{tmp_path / 'p.pt'}", "--hands", "10", "--games", "0", *game,
                         "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and words in err and "--signals" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_default_cap_drops_a_raise_war_and_no_normal_hand() -> None:
    """``MAX_HAND_DECISIONS`` is finite and applied by default (a raise war is dropped without a ``max_hand_decisions``
    argument), and it is at least ten times what the baselines' hands take: random against random, whose hands
    are the longest, drops nothing at a tenth of it."""
    from experiments.evaluate.duplicate import MAX_HAND_DECISIONS

    deals = make_deals(3, 5, 40)
    with pytest.warns(RuntimeWarning, match=f"3 of 3 deals dropped.*passed {MAX_HAND_DECISIONS:,} decisions"):
        assert play_pair(_RaiseForever(), _RaiseForever(), deals, mode="hands").abandoned == 3
    many = make_deals(500, 6, 40)
    res = play_pair(make_agent("random"), make_agent("random"), many, mode="hands",
                    max_hand_decisions=MAX_HAND_DECISIONS // 10)
    assert res.abandoned == 0 and len(res.hand_diff) == 500


#: A team spec long enough that its whole text does not fit a figure's margin.
_LONG_TEAM = ("team:rule-nosigns=1+random-nosigns=1+equity-nosigns=1+ordago-nosigns=1+rule-blind=1+random-blind=1"
              "+equity-blind=1")


def test_a_long_agent_spec_gets_a_short_name_in_the_figures_and_its_whole_text_in_the_files(tmp_path: Path) -> None:
    out = tmp_path / "t"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tournament_main(["--agent", _LONG_TEAM, "--agent", "rule", "--hands", "40", "--games", "0", "--seed", "3",
                         "--out", str(out), "--quiet", "--tables", "64"])
    layout = [str(w.message) for w in caught if "layout" in str(w.message).lower()]
    assert not layout, layout                   # matplotlib could lay the ladder and lance figures out
    results = json.loads((out / "results.json").read_text())
    assert set(results["ladder"]) == {_LONG_TEAM, "rule"}
    assert (out / "ladder.png").stat().st_size > 1000


def test_spec_label_shortens_paths_mixtures_and_teams() -> None:
    assert spec_label("rule") == "rule"
    assert spec_label("runs/a/policy.pt") == "a/policy" and spec_label("runs/members/psro_h.pt") == "psro_h"
    assert spec_label("runs/a.pt+runs/b.pt") == "mix(a, b)"
    assert spec_label("team:runs/m/psro_h.pt=1+runs/m/refine_y.pt=1") == "team(psro_h, refine_y)"
    assert spec_label("team-hand:ppo=0.6+rule=0.4") == "team-hand(ppo 0.6, rule 0.4)"
    cut = spec_label(_LONG_TEAM, 30)
    assert len(cut) == 30 and cut.startswith("team(rule-nos") and cut.endswith("equity-blind)") and "…" in cut
