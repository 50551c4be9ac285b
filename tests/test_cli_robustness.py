"""The command line under bad input, interruption and concurrent runs (issue 22): a refusal is one line on stderr,
exit status 2, no traceback, and the folder tree byte for byte as it was; Ctrl-C is one line, exit status 130,
saying what was kept; a closed pipe ends quietly; a missing library names its extra and makes nothing; two
tournaments on one folder never mix their files."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.cli import main as mus

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


def _one_line_refusal(capsys: pytest.CaptureFixture, argv: list[str], code: int = 2) -> str:
    with pytest.raises(SystemExit) as e:
        mus(argv)
    out, err = capsys.readouterr()
    assert e.value.code == code, err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"mus {argv[0]}"), lines[0]
    return lines[0]


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
                           stderr=subprocess.PIPE, text=True, timeout=120, cwd=ROOT)
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
