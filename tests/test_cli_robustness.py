"""The command line under bad input, interruption and concurrent runs (issue 22): a refusal is one line on stderr,
exit status 2, no traceback, and the folder tree byte for byte as it was; Ctrl-C is one line, exit status 130,
saying what was kept; a closed pipe ends quietly; a missing library names its extra and makes nothing; two
tournaments on one folder never mix their files."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hang_guards import APPEAR_S, PROCESS_S

from experiments.cli import main as mus
from experiments.evaluate.run_folder import STAGE_PREFIX, RunFolder, RunFolderBusy
from mus_env.interrupts import HELD_NOTE

ROOT = Path(__file__).resolve().parent.parent


def _tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` (folders too, hidden ones included) with a hash of its bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def _earlier_run(folder: Path) -> None:
    """A folder holding an earlier run's files and a file of the user's."""
    (folder / "records").mkdir(parents=True)
    (folder / "records" / "old-deal0-side0.json").write_text("{}")
    for name in ("pairs.csv", "ladder.csv", "results.json", "ladder.png"):
        (folder / name).write_text(f"earlier {name}")
    (folder / "notes.txt").write_text("mine")


def _one_line_refusal(capsys: pytest.CaptureFixture, argv: list[str], code: int = 2) -> str:
    with pytest.raises(SystemExit) as e:
        mus(argv)
    out, err = capsys.readouterr()
    assert e.value.code == code, err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"mus {argv[0]}"), lines[0]
    return lines[0]


def _mus(*args: str, timeout: float = PROCESS_S, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, **kwargs)


# ----------------------------------------------------------------------------------------------------------
# mus tournament: a refusal creates and changes nothing
TOURNAMENT_REFUSALS = [
    (["--intercept", "0.3"], "--intercept", "needs --signals"),
    (["--intercept", "nan", "--signals", "free"], "--intercept", "a probability in [0, 1]"),
    (["--intercept", "nan"], "--intercept", "a probability in [0, 1]"),
    (["--intercept", "1.5", "--signals", "truthful"], "--intercept", "a probability in [0, 1]"),
    (["--agents", "rule,bogus"], "--agents", "--agent SPEC"),
    (["--agents", "rule"], "--agents", "at least two"),
    (["--agent", "rule"], "--agent", "at least two"),
    (["--agents", "rule,random", "--agent", "rule"], "--agent", "not with --agents"),
    (["--agents", 'rule,"random'], "--agents", "quote it"),
    (["--hands", "0", "--games", "0"], "nothing to play", "--hands"),
]


@pytest.mark.parametrize("existing", [False, True], ids=["new-folder", "earlier-run"])
@pytest.mark.parametrize(("extra", "names", "says"), TOURNAMENT_REFUSALS,
                         ids=[" ".join(a)[:40] for a, _, _ in TOURNAMENT_REFUSALS])
def test_tournament_refusals_leave_the_tree_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture, extra: list[str],
                                                      names: str, says: str, existing: bool) -> None:
    out = tmp_path / "runs" / "t"
    if existing:
        _earlier_run(out)
    before = _tree(tmp_path)
    line = _one_line_refusal(capsys, ["tournament", "--hands", "2", "--games", "0", "--quiet", "--out", str(out),
                                      *extra])
    assert names in line and says in line, line
    assert _tree(tmp_path) == before
    assert out.exists() == existing


def test_tournament_refuses_an_unwritable_folder_without_making_parents(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "a-file").write_text("")
    before = _tree(tmp_path)
    line = _one_line_refusal(capsys, ["tournament", "--hands", "2", "--games", "0", "--out",
                                      str(tmp_path / "a-file" / "x" / "y")])
    assert "--out" in line and "cannot write" in line and "not a folder" in line
    assert _tree(tmp_path) == before


def test_a_spec_with_a_comma_is_given_with_agent_or_quoted(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A valid agent file whose name has a comma: ``--agents`` splits it (and the error says how to give it);
    ``--agent`` repeated, or quoting in ``--agents``, plays it."""
    bot = tmp_path / "my,bot.py"
    bot.write_text("from agents import make_agent\nbot = make_agent('random')\n")
    spec = f"{bot}:bot"
    line = _one_line_refusal(capsys, ["tournament", "--agents", f"rule,{spec}", "--out", str(tmp_path / "x")])
    assert "--agent SPEC" in line and "quote it" in line and not (tmp_path / "x").exists()
    for how in (["--agent", "rule", "--agent", spec], ["--agents", f'rule,"{spec}"'],
                ["--agents", f'rule, "{spec}"']):
        out = tmp_path / f"t{len(how)}"
        mus(["tournament", *how, "--hands", "2", "--games", "0", "--quiet", "--no-plots", "--tables", "4",
             "--out", str(out)])
        results = json.loads((out / "results.json").read_text())
        assert results["meta"]["agents"] == ["rule", spec]
        capsys.readouterr()


def test_mus_play_and_mus_signals_take_repeated_agent_options_too(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``mus play --bot`` and ``mus signals --agent``, repeated, as ``mus tournament --agent``: a spec with a comma
    is one agent; giving both forms is one line."""
    bot = tmp_path / "my,bot.py"
    bot.write_text("from agents import make_agent\nbot = make_agent('random')\n")
    spec = f"{bot}:bot"
    record = tmp_path / "game.json"
    monkeypatch.setattr("sys.stdin", io.StringIO(""))          # the player quits at the first prompt
    mus(["play", "--bot", "rule", "--bot", spec, "--bot", "equity", "--record", str(record), "--seed", "1"])
    assert json.loads(record.read_text())["meta"]["bots"] == ["rule", spec, "equity"]
    out = tmp_path / "signals"
    mus(["signals", "--agent", "rule", "--agent", "equity", "--hands", "4", "--games", "0", "--intercept", "0",
         "--quiet", "--out", str(out)])
    assert [r["agent"] for r in json.loads((out / "signals_value.json").read_text())["rows"]] == ["rule", "equity"]
    capsys.readouterr()
    for argv in (["play", "--bots", "rule,rule,rule", "--bot", "rule"],
                 ["signals", "--agents", "rule", "--agent", "x"]):
        line = _one_line_refusal(capsys, argv)
        assert "not with" in line and "give the list one way" in line


# ----------------------------------------------------------------------------------------------------------
# the run folder: one run at a time, its files replaced together
def test_a_run_replaces_the_earlier_runs_files_together_and_keeps_the_users(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "t"
    _earlier_run(out)
    mus(["tournament", "--agents", "random,rule", "--hands", "2", "--games", "0", "--no-plots", "--quiet",
         "--tables", "4", "--out", str(out)])
    names = sorted(p.name for p in out.iterdir())
    # no stale plot nor records of the earlier run; the user's file is untouched; no staging folder left
    assert names == ["ladder.csv", "notes.txt", "pairs.csv", "results.json"], names
    assert (out / "notes.txt").read_text() == "mine"
    assert json.loads((out / "results.json").read_text())["files"] == ["ladder.csv", "pairs.csv", "results.json"]
    assert "wrote" in capsys.readouterr().out


def test_run_folder_lock_stage_and_cleanup(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    with RunFolder(out, owned=("x.txt", "y.txt")) as rf:
        assert rf.stage.is_dir() and rf.stage.name.startswith(STAGE_PREFIX)
        with pytest.raises(RunFolderBusy, match="another run is writing"), RunFolder(out):
            pass
        assert rf.stage.is_dir()                                # the refused one changed nothing
        (rf.stage / "x.txt").write_text("1")
    assert not (tmp_path / "a").exists()                        # no commit: what the entry made is removed
    out.mkdir(parents=True)
    (out / "y.txt").write_text("old")
    (out / "z.txt").write_text("user")
    with RunFolder(out, owned=("x.txt", "y.txt")) as rf:
        (rf.stage / "x.txt").write_text("1")
        assert rf.commit() == [out / "x.txt"]
    assert sorted(p.name for p in out.iterdir()) == ["x.txt", "z.txt"]
    with RunFolder(out, owned=("x.txt",)):                       # the lock went with the last run
        pass


def _start_tournament(out: Path, *extra: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-m", "experiments.cli", "tournament", "--agents", "random,rule",
                          "--hands", "1000000", "--games", "0", "--quiet", "--out", str(out), *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # even if ours ignores it
    deadline = time.monotonic() + APPEAR_S
    while not (out.is_dir() and any(n.startswith(STAGE_PREFIX) for n in os.listdir(out))):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the tournament never started"
        time.sleep(0.05)
    return p


def _past_held_note(err: str) -> str:
    """Standard error without the line that says a Ctrl-C waits for a compile in progress (a cold numba cache, as
    in CI: mus_env.interrupts); it comes at most once, first."""
    lines = err.splitlines(keepends=True)
    return "".join(lines[1:]) if lines and lines[0].rstrip("\n") == HELD_NOTE else err


def _interrupt(p: subprocess.Popen) -> tuple[int, str, str]:
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=PROCESS_S)
    finally:
        p.kill()                                                # (a no-op once it has exited)
    return p.returncode, out, err


@pytest.mark.parametrize("existing", [False, True], ids=["new-folder", "earlier-run"])
def test_ctrl_c_during_a_tournament_is_one_line_and_writes_nothing(tmp_path: Path, existing: bool) -> None:
    out = tmp_path / "runs" / "t"
    if existing:
        _earlier_run(out)
    before = _tree(tmp_path)
    code, _, err = _interrupt(_start_tournament(out))
    err = _past_held_note(err)
    assert code == 130 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("mus tournament: interrupted") and "no results written" in err and str(out) in err
    assert _tree(tmp_path) == before


def test_a_second_tournament_on_a_busy_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "t"
    _earlier_run(out)
    first = _start_tournament(out)
    try:
        before = _tree(tmp_path)
        second = _mus("tournament", "--agents", "random,rule", "--hands", "2", "--games", "0", "--quiet",
                      "--out", str(out))
        assert second.returncode == 2 and len(second.stderr.splitlines()) == 1, second.stderr
        assert "another run is writing" in second.stderr and "Traceback" not in second.stderr
        assert _tree(tmp_path) == before
    finally:
        code, _, err = _interrupt(first)
    # The first run's Ctrl-C is the cleanup of this test (its exit status is the subject of
    # test_ctrl_c_during_a_tournament_is_one_line_and_writes_nothing). Here, on busy machines, it has twice (in
    # about forty full runs) printed its one line and still ended by SIGINT (-2) instead of 130: a known rare
    # issue whose cause is not found (mus_env/interrupts.py records the same symptom), accepted here only.
    assert code in (130, -signal.SIGINT) and "mus tournament: interrupted" in err, (code, err)
    assert (out / "pairs.csv").read_text() == "earlier pairs.csv"          # nothing of either run mixed in


# ----------------------------------------------------------------------------------------------------------
# the dispatcher's fallbacks: Ctrl-C, a closed pipe, a missing library
def test_ctrl_c_in_any_subcommand_is_one_line_exit_130(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture) -> None:
    from experiments.commands import deals

    def interrupted(argv: list[str]) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(deals, "main", interrupted)
    line = _one_line_refusal(capsys, ["deals"], code=130)
    assert "interrupted" in line


def test_a_closed_pipe_ends_mus_replay_quietly(tmp_path: Path) -> None:
    """``mus replay FILE | head -3`` once head has gone: no BrokenPipeError traceback, exit status 141."""
    from mus_env import MusGame
    from mus_env.records import game_record, save_record

    game = MusGame(seed=3)
    while not game.is_over:
        game.step(game.legal_actions()[-1])
    path = save_record(game_record(game, {s: "x" for s in range(4)}), tmp_path / "g.json")
    read, write = os.pipe()
    os.close(read)                                              # the reader is gone before anything is written
    try:
        r = subprocess.run([sys.executable, "-m", "experiments.cli", "replay", str(path)], stdout=write,
                           stderr=subprocess.PIPE, text=True, timeout=PROCESS_S, cwd=ROOT)
    finally:
        os.close(write)
    assert r.returncode == 141 and r.stderr == "", r.stderr


@pytest.mark.parametrize(("command", "package", "extra", "argv"),
                         [("sb3", "sb3_contrib", "dev", ["--timesteps", "8", "--out", "OUT"]),
                          ("sb3", "stable_baselines3", "dev", ["--timesteps", "8", "--out", "OUT"]),
                          ("tianshou", "tianshou", "tianshou", ["--epochs", "1"])])
def test_a_missing_library_names_its_extra_and_makes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture, command: str,
                                                             package: str, extra: str, argv: list[str]) -> None:
    pytest.importorskip("torch")
    monkeypatch.setitem(sys.modules, package, None)             # import package -> ModuleNotFoundError
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    line = _one_line_refusal(capsys, [command, *[a.replace("OUT", str(tmp_path / "run")) for a in argv]])
    assert f"needs {package}" in line and f"pip install -e '.[{extra}]'" in line, line
    assert _tree(tmp_path) == before


# ----------------------------------------------------------------------------------------------------------
# mus deals and mus replay
def test_mus_deals_writes_the_file_it_names(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from experiments.evaluate.deals import DealSet

    for name in ("d", "d.npz", "sub/dir/deals.bin"):
        mus(["deals", "--n", "3", "--out", str(tmp_path / name)])
        said = capsys.readouterr().out.strip()
        assert said.endswith(f"to {tmp_path / name}"), said
        assert len(DealSet.load(tmp_path / name)) == 3
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == \
        ["d", "d.npz", "sub/dir/deals.bin"]


def test_mus_deals_refusals_make_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "a-file").write_text("")
    (tmp_path / "folder").mkdir()
    before = _tree(tmp_path)
    for out in ("a-file/x/d.npz", "folder"):
        line = _one_line_refusal(capsys, ["deals", "--n", "2", "--out", str(tmp_path / out)])
        assert "--out" in line
    assert _tree(tmp_path) == before


def test_mus_replay_refuses_a_bad_record_like_every_command(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1}')
    line = _one_line_refusal(capsys, ["replay", str(bad)])
    assert "argument file" in line
    line = _one_line_refusal(capsys, ["replay", str(tmp_path / "missing.json")])
    assert "cannot read record" in line
