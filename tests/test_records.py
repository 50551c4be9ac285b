"""JSON game records: round trips, replay checks every stored field, malformed input is one RecordError,
files are written atomically, and ``mus replay`` prints what it rebuilt."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hang_guards import PROCESS_S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mus_env import MusConfig, MusGame
from mus_env.records import (
    MAX_RECORD_BYTES,
    RecordError,
    format_record,
    game_record,
    load_record,
    rebuild_record,
    replay,
    save_record,
)

ROOT = Path(__file__).resolve().parent.parent


def _random_game(seed: int, cfg: MusConfig, steps: int, mus_p: float = 0.8) -> MusGame:
    """A game of random legal play (long mus phases for reshuffles, envido amounts outside bet_sizes)."""
    rng = np.random.default_rng(seed)
    g = MusGame(cfg, seed=seed)
    for _ in range(steps):
        if g.is_over:
            break
        legal = g.legal_actions()
        if 0 in legal and rng.random() < mus_p:
            g.step(0)
        elif 19 in legal and rng.random() < 0.1:
            g.step_envido(int(rng.integers(2, 30)))
        else:
            g.step(int(rng.choice(legal)))
    return g


def _until(cfg: MusConfig, seed: int, want: Any, mus_p: float = 0.5, steps: int = 100_000) -> MusGame:
    """The first seeded random game from ``seed`` on for which ``want(game)`` holds (searched, so that a test
    does not depend on what one seed deals)."""
    for s in range(seed, seed + 200):
        g = _random_game(s, cfg, steps, mus_p)
        if want(g):
            return g
    raise AssertionError("no game with the wanted property in 200 seeds")


def _stopped_mid_hand(cfg: MusConfig, seed: int) -> MusGame:
    """A game stopped in its third hand, a few decisions in (so the record has pending actions); órdagos
    are rare here, so that the game lasts."""
    for s in range(seed, seed + 200):
        rng = np.random.default_rng(s)
        g = MusGame(cfg, seed=s)
        while not g.is_over and (g.hand_number < 2 or len(g.hand_actions) < 6):
            legal = g.legal_actions()
            calm = [a for a in legal if not 19 <= a <= 26] or legal     # bets and órdagos now and then
            if 19 in legal and rng.random() < 0.1:
                g.step_envido(int(rng.integers(2, 12)))
            else:
                g.step(0 if 0 in legal and rng.random() < 0.7 else int(rng.choice(calm)))
        if not g.is_over and g.hand_number == 2:
            return g
    raise AssertionError("no game stopped in its third hand")


def _tournament_record() -> dict[str, Any]:
    from agents import make_agent
    from experiments.evaluate.tournament import play_record_game

    cfg = MusConfig()
    g = MusGame(cfg, seed=11)
    rule, equity = make_agent("rule"), make_agent("equity")
    return play_record_game({0: rule, 2: rule, 1: equity, 3: equity}, {0: "rule", 2: "rule", 1: "equity",
                            3: "equity"}, g.deck, g.mano, 11, cfg, np.random.default_rng(0), {"deal": 0})


@pytest.fixture(scope="module")
def real_records() -> dict[str, dict[str, Any]]:
    """Records of real games: a finished vaca of two games (game numbers, game winners), one stopped in its
    third hand (pending actions, 4 kings, envido amounts outside bet_sizes), one with the declarations made
    by the players (auto_declare=False), and one of rule against equity as ``mus tournament --records`` plays."""
    vaca = _until(MusConfig(target=30, juegos_to_win_vaca=2), 1,
                  lambda g: g.is_over and len(g.hand_log) >= 4 and any(h.stones and h.mus_rounds >= 2
                                                                        for h in g.hand_log))
    stopped = _stopped_mid_hand(MusConfig(kings=4), 1)
    declared = _until(MusConfig(auto_declare=False, target=30), 3, lambda g: g.is_over and len(g.hand_log) >= 2)
    recs = {"vaca": game_record(vaca, {0: "a", 1: "b", 2: "c", 3: "d"}, {"note": "test"}),
            "stopped": game_record(stopped), "declared": game_record(declared),
            "tournament": _tournament_record()}
    assert recs["vaca"]["hands"][-1]["game_number"] >= 1 and recs["stopped"]["pending_actions"]
    assert any(a[1] in (27, 28, 29, 30) and not a[3] for h in recs["declared"]["hands"] for a in h["actions"])
    assert any(a[1] == 19 and a[2] not in (0, 2) for r in recs.values() for h in r["hands"] for a in h["actions"])
    for r in recs.values():
        replay(r)                                   # each is a true record
    return recs


# ----------------------------------------------------------------------------------------------------
# round trips
@pytest.mark.parametrize("seed", range(12))
def test_records_round_trip(tmp_path: Path, seed: int) -> None:
    cfg = MusConfig(juegos_to_win_vaca=2, target=30, kings=4 if seed % 2 else 8)
    g = _random_game(seed, cfg, steps=40 + 30 * seed)
    rec = game_record(g, {0: "a", 1: "b", 2: "c", 3: "d"}, {"test": seed})
    path = save_record(rec, tmp_path / "r.json")
    loaded = load_record(path)
    again = replay(loaded)
    assert again.scores == g.scores and again.hand_number == g.hand_number and again.hands == g.hands
    assert again.legal_actions() == g.legal_actions() and again.is_over == g.is_over
    assert [h.scores_after for h in again.hand_log] == [h.scores_after for h in g.hand_log]
    assert rebuild_record(loaded) == rec
    text = format_record(rec)
    assert "seat 0: " in text and (("== hand 1" in text) == bool(g.hand_log))


# ----------------------------------------------------------------------------------------------------
# tampering: every stored field
def _leaves(v: Any, path: tuple = ()) -> Iterator[tuple]:
    if type(v) is dict:
        for k, x in v.items():
            yield from _leaves(x, (*path, k))
    elif type(v) is list:
        for k, x in enumerate(v):
            yield from _leaves(x, (*path, k))
    else:
        yield path


def _get(rec: Any, path: tuple) -> Any:
    for k in path:
        rec = rec[k]
    return rec


def _set(rec: Any, path: tuple, value: Any) -> Any:
    out = copy.deepcopy(rec)
    _get(out, path[:-1])[path[-1]] = value
    return out


def _path_text(path: tuple) -> str:
    text = ""
    for k in path:
        text += f"[{k}]" if isinstance(k, int) else (f".{k}" if text else str(k))
    return text


def _changed(v: Any) -> Any:
    """A different value of the same JSON type."""
    if type(v) is bool:
        return not v
    if type(v) is int:
        return v + 1
    if type(v) is float:
        return 0.5 if v != 0.5 else 0.25
    if type(v) is str:
        return v + "x"
    assert v is None
    return 0


def _is_input(rec: dict[str, Any], path: tuple) -> bool:
    """Fields that replay plays rather than checks: the config, the seed, the first deal, and every entry of
    an action the players made (not an automatic declaration). Changing one changes the game that replay
    builds, so it is detected by the first stored result that the change alters, which is what the error
    names; where it alters no result, the changed file is a true record of another game (replay rebuilds
    every stored field of it exactly, asserted below)."""
    if path[0] in ("config", "seed", "deck", "mano", "scores"):
        return True
    if path[0] == "hands" and len(path) >= 4 and path[2] == "actions":
        return not rec["hands"][path[1]]["actions"][path[3]][3]
    if path[0] == "pending_actions" and len(path) >= 2:
        return not rec["pending_actions"][path[1]][3]
    return False


#: Labels that the game never reads: free-form names and metadata, printed by ``mus replay`` as given.
LABELS = ("players", "meta")


def _names(message: str, path: tuple) -> bool:
    """The error's leading field (``hands[2].final_hands[1]: ...``) is the mutated field or contains it."""
    head = message.split(":", 1)[0].split(" ", 1)[0]
    return _path_text(path).startswith(head) and head != ""


@pytest.mark.parametrize("name", ["vaca", "stopped", "declared", "tournament"])
def test_every_stored_field_is_checked(real_records: dict[str, dict[str, Any]], name: str) -> None:
    """Each leaf of a real record, changed to another value of its type one at a time: a stored result is
    refused with a RecordError naming that field; an input (``_is_input``) is refused or gives a record that
    replays to itself in full; a label (players, meta) is accepted and kept."""
    rec = real_records[name]
    detected_inputs, quiet_inputs = [], []
    for path in _leaves(rec):
        bad = _set(rec, path, _changed(_get(rec, path)))
        where = _path_text(path)
        if path[0] in LABELS:
            replay(bad)
            assert rebuild_record(bad)[path[0]] == bad[path[0]], where
        elif _is_input(rec, path):
            try:
                replay(bad)
            except RecordError:
                detected_inputs.append(where)
            else:
                assert rebuild_record(bad) == bad, where
                quiet_inputs.append(where)
        else:
            with pytest.raises(RecordError) as e:
                replay(bad)
            assert _names(str(e.value), path), (where, str(e.value))
    # the inputs that decide the game are caught: the seed deals the later hands, the deck the first
    assert "seed" in detected_inputs and "deck[0]" in detected_inputs and "mano" in detected_inputs
    assert "config.kings" in detected_inputs and "config.bet_sizes[0]" in detected_inputs
    # a quiet input is a switch this game never met (e.g. first_mano when the record gives the mano) or an
    # action changed into another legal one with the same results
    assert len(detected_inputs) > 3 * len(quiet_inputs), quiet_inputs
    # signal_intercept_p with signals off is no config at all (MusConfig refuses it): the record is refused
    assert "config.signal_intercept_p" in detected_inputs


@pytest.mark.parametrize("name", ["vaca", "stopped", "tournament"])
def test_structural_tampering_is_caught(real_records: dict[str, dict[str, Any]], name: str) -> None:
    """Lists cut short or grown, hands dropped, swapped or repeated, cards swapped within a deal."""
    rec = real_records[name]
    cases: list[tuple[str, dict[str, Any]]] = []
    last = len(rec["hands"]) - 1
    drop_last = copy.deepcopy(rec)
    del drop_last["hands"][-1]
    cases.append(("drop the last hand", drop_last))
    drop_first = copy.deepcopy(rec)
    del drop_first["hands"][0]
    cases.append(("drop the first hand", drop_first))
    twice = copy.deepcopy(rec)
    twice["hands"].append(copy.deepcopy(twice["hands"][-1]))
    cases.append(("repeat the last hand", twice))
    swapped = copy.deepcopy(rec)
    swapped["hands"][0], swapped["hands"][1] = swapped["hands"][1], swapped["hands"][0]
    cases.append(("swap two hands", swapped))
    for i in (0, last):
        for field in ("deck", "initial_hands", "final_hands", "actions", "stones", "outcomes", "discards"):
            h = rec["hands"][i][field]
            if len(h) >= 2:
                b = copy.deepcopy(rec)
                b["hands"][i][field] = h[1:] + h[:1]              # rotated
                cases.append((f"hands[{i}].{field} rotated", b))
                b = copy.deepcopy(rec)
                del b["hands"][i][field][-1]
                cases.append((f"hands[{i}].{field} cut", b))
        b = copy.deepcopy(rec)
        d = b["hands"][i]["deck"]
        d[0], d[30] = d[30], d[0]
        cases.append((f"hands[{i}].deck: two cards swapped", b))
    deck = copy.deepcopy(rec)
    deck["deck"][0], deck["deck"][1] = deck["deck"][1], deck["deck"][0]
    cases.append(("first deck: two cards swapped", deck))
    # (pending_actions cut short is not tampering: it is a true record of the same game one action earlier,
    # as mus play writes when the player quits)
    for what, bad in cases:
        with pytest.raises(RecordError):
            replay(bad)
            pytest.fail(f"not caught: {what}")


def test_mus_replay_prints_the_rebuilt_game_not_the_file(tmp_path: Path,
                                                         real_records: dict[str, dict[str, Any]]) -> None:
    rec = copy.deepcopy(real_records["vaca"])
    path = save_record(rec, tmp_path / "g.json")
    ok = _mus("replay", str(path))
    assert ok.returncode == 0, ok.stderr
    assert "== hand 1" in ok.stdout and f"winner: team {rec['winner']}" in ok.stdout
    rec["winner"] = 1 - rec["winner"]                            # a false winner
    rec["hands"][-1]["game_winner"] = rec["winner"]
    save_record(rec, path)
    refused = _mus("replay", str(path))
    assert refused.returncode == 2 and refused.stdout == "" and len(refused.stderr.splitlines()) == 1
    assert "hands[" in refused.stderr and "game_winner" in refused.stderr and "Traceback" not in refused.stderr
    shown = _mus("replay", "--no-check", str(path))              # printed from the rebuilt game
    assert shown.returncode == 0 and f"winner: team {1 - rec['winner']}" in shown.stdout
    assert shown.stdout == ok.stdout
    missing = _mus("replay", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot read record" in missing.stderr and len(missing.stderr.splitlines()) == 1


# ----------------------------------------------------------------------------------------------------
# malformed input: one RecordError naming the field
def _write(tmp_path: Path, data: bytes | str) -> Path:
    path = tmp_path / "x.json"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(("data", "names"), [
    ('{"format":"mus-env-record","version":1}', "config is missing"),
    ('{"format":"mus-env-record","version":2}', "version"),
    ('{"format":"other"}', "format"),
    ("[]", "format"),
    ("{not json", "not JSON"),
    ("[" * 100_000 + "]" * 100_000, "not JSON"),                 # RecursionError inside json
    (b"\xff\xfe{}", "not UTF-8"),
    ('{"format":"mus-env-record","version":1,"x":NaN}', "not JSON"),
    ('{"format":"mus-env-record","version":' + "9" * 5000 + "}", "not JSON"),  # int-string limit
])
def test_unreadable_files_are_one_record_error(tmp_path: Path, data: bytes | str, names: str) -> None:
    with pytest.raises(RecordError, match=names):
        load_record(_write(tmp_path, data))


def test_reading_is_capped() -> None:
    with pytest.raises(RecordError, match=f"larger than {MAX_RECORD_BYTES} bytes"):
        load_record("/dev/zero")


@pytest.mark.parametrize(("path", "value", "names"), [
    (("config",), [], "config must be an object"),
    (("config", "signals"), "truthful", "config"),               # the actions lack the sign decisions
    (("config", "kings"), "8", "config"),
    (("config", "bogus"), 1, "config"),
    (("seed",), -1, "seed"),
    (("seed",), 2**64, "seed"),
    (("seed",), 1.5, "seed"),
    (("deck",), list(range(39)), "deck"),
    (("deck",), [list(range(20)), list(range(20, 40))], "deck"),
    (("deck", 0), True, "deck"),
    (("mano",), 4, "mano"),
    (("mano",), True, "mano"),
    (("scores",), [0], "scores"),
    (("scores", 0), 40, r"scores\[0\]"),
    (("players",), [], "players"),
    (("players", "7"), "x", "players"),
    (("meta",), None, "meta"),
    (("hands",), {}, "hands"),
    (("hands", 0), [], r"hands\[0\]"),
    (("hands", 0, "actions"), None, r"hands\[0\]\.actions"),
    (("hands", 0, "actions", 0), [0, 0, 0], r"hands\[0\]\.actions\[0\]"),
    (("hands", 0, "actions", 0, 1), 31, r"hands\[0\]\.actions\[0\] \(action\)"),
    (("hands", 0, "actions", 0, 2), 2**40, r"hands\[0\]\.actions\[0\] \(amount\)"),
    (("hands", 0, "actions", 0, 3), 0, r"hands\[0\]\.actions\[0\] \(auto\)"),
    (("hands", 0, "extra"), 0, r"hands\[0\]\.\"extra\" is not a field"),
    (("pending_actions",), 0, "pending_actions"),
    (("winner",), "0", "winner"),
    (("over",), 1, "over"),
    (("scores_now",), None, "scores_now"),
])
def test_malformed_fields_are_named(real_records: dict[str, dict[str, Any]], path: tuple, value: Any,
                                    names: str) -> None:
    bad = copy.deepcopy(real_records["vaca"])
    _get(bad, path[:-1])[path[-1]] = value
    with pytest.raises(RecordError, match=names):
        replay(bad)


def test_missing_fields_are_named(real_records: dict[str, dict[str, Any]]) -> None:
    rec = real_records["stopped"]
    for key in rec:
        bad = {k: v for k, v in rec.items() if k != key}
        with pytest.raises(RecordError, match=key):
            replay(bad)
    for key in rec["hands"][0]:
        bad = copy.deepcopy(rec)
        del bad["hands"][0][key]
        with pytest.raises(RecordError, match=rf"hands\[0\]\.{key} is missing"):
            replay(bad)


def _mutations() -> st.SearchStrategy:
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=8)
    return st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["set", "delete", "add", "dup"]),
                              json_values), min_size=1, max_size=4)


def _nodes(v: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if type(v) is dict:
        for k, x in v.items():
            out += _nodes(x, (*path, k))
    elif type(v) is list:
        for k, x in enumerate(v):
            out += _nodes(x, (*path, k))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])
@given(mutations=_mutations(), which=st.sampled_from(["vaca", "stopped", "declared", "tournament"]))
def test_fuzzed_records_raise_only_record_error(real_records: dict[str, dict[str, Any]], mutations: list,
                                                which: str) -> None:
    """Random edits anywhere in a real record (set a node to any JSON value, delete it, add a key or an
    entry, duplicate an entry): replay either accepts the record or raises RecordError, nothing else."""
    rec = copy.deepcopy(real_records[which])
    for pick, op, value in mutations:
        nodes = _nodes(rec)[1:]
        path = nodes[pick % len(nodes)]
        parent = _get(rec, path[:-1])
        key = path[-1]
        if op == "set":
            parent[key] = value
        elif op == "delete":
            del parent[key]
        elif op == "add":
            if type(parent) is dict:
                parent[f"k{pick}"] = value
            else:
                parent.insert(key, value)
        elif type(parent) is list:
            parent.insert(key, copy.deepcopy(parent[key]))
    try:
        replay(rec)
    except RecordError:
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])
@given(data=st.data(), which=st.sampled_from(["vaca", "stopped"]))
def test_fuzzed_files_raise_only_record_error(tmp_path: Path, real_records: dict[str, dict[str, Any]],
                                              data: st.DataObject, which: str) -> None:
    """Random byte edits of a saved record: load_record and replay raise only RecordError."""
    raw = bytearray(json.dumps(real_records[which], indent=1).encode())
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if op == "flip":
            raw[pos] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del raw[pos:pos + data.draw(st.integers(1, 50))]
        else:
            raw[pos:pos] = data.draw(st.binary(max_size=8))
    path = tmp_path / "fuzz.json"
    path.write_bytes(bytes(raw))
    try:
        replay(load_record(path))
    except RecordError:
        pass


# ----------------------------------------------------------------------------------------------------
# atomic writes
def test_save_record_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               real_records: dict[str, dict[str, Any]]) -> None:
    path = save_record(real_records["vaca"], tmp_path / "r.json")
    before = path.read_bytes()
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask                 # not mkstemp's private 0600
    with pytest.raises(ValueError):                             # NaN is not JSON: nothing is written
        save_record({**real_records["vaca"], "meta": {"x": float("nan")}}, path)

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        save_record(real_records["stopped"], path)
    assert path.read_bytes() == before                           # the old record, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]   # no temporary file left behind


# ----------------------------------------------------------------------------------------------------
# the CLI
def _mus(*args: str, timeout: float = PROCESS_S) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


# ----------------------------------------------------------------------------------------------------
# the files of a tournament
def _strict(name: str) -> None:
    raise AssertionError(f"{name} in results.json: not JSON")


def test_tournament_files_are_strict_json_fresh_and_listed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from experiments.commands.tournament import main as tournament_main

    out = tmp_path / "t"
    (out / "records").mkdir(parents=True)
    (out / "records" / "stale-deal9-side0.json").write_text("{}")          # from an earlier run
    tournament_main(["--agents", "rule,rule", "--hands", "1", "--games", "0", "--records", "1", "--out", str(out),
                     "--quiet", "--no-plots", "--tables", "8"])
    results = json.loads((out / "results.json").read_text(), parse_constant=_strict)
    row = results["pairs"][0]
    # one deal: the interval is unbounded and no game was played, so those numbers are null, not NaN/Infinity
    assert row["ci_low"] is None and row["ci_high"] is None and row["game_win_rate"] is None
    assert isinstance(row["mean_diff"], float)
    records = sorted(p.name for p in (out / "records").iterdir())
    assert records == ["rule-vs-rule_2-deal0-side0.json", "rule-vs-rule_2-deal0-side1.json"]
    for name in records:
        rec = load_record(out / "records" / name)
        assert replay(rec).is_over and set(rec["players"].values()) == {"rule", "rule#2"}
    printed = capsys.readouterr().out.splitlines()[-1]
    assert "wrote" in printed and "results.json" in printed and "2 records in" in printed
    assert results["files"] == ["ladder.csv", "pairs.csv", "results.json"]
    assert sorted(p.name for p in out.iterdir()) == ["ladder.csv", "pairs.csv", "records", "results.json"]


def test_mus_play_writes_the_record_when_the_game_crashes(tmp_path: Path) -> None:
    from experiments.play import play_game

    class Crashing:
        name = "crashing"
        calls = 0

        def act(self, obs: Any, mask: Any, rng: Any) -> int:
            self.calls += 1
            if self.calls > 3:
                raise RuntimeError("the terminal went away")
            return int(np.flatnonzero(mask)[0])

    path = tmp_path / "crash.json"
    with pytest.raises(RuntimeError, match="went away"):
        play_game(["rule", "rule", "rule"], 0, MusConfig(), 5, path, human=Crashing(), output_fn=lambda s: None)
    rec = load_record(path)
    assert rec["meta"]["stopped"] is True and "went away" in rec["meta"]["error"]
    assert sum(not a[3] and a[0] == 0 for a in rec["pending_actions"]) + \
        sum(not a[3] and a[0] == 0 for h in rec["hands"] for a in h["actions"]) == 3
    replay(rec)
