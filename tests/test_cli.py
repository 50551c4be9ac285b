"""The ``mus`` command: every bad argument is one line on stderr naming it and what is accepted, exit status 2,
no traceback; help shows the real program name and the defaults; ``mus --version``; install hints that work."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hang_guards import PROCESS_S

from experiments.cli import main as mus
from experiments.tools import bench

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> tuple[str, set[str]]:
    """pyproject.toml's version and extras (read by hand: tomllib is Python 3.11+, the package 3.10+)."""
    text = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return version, set(re.findall(r"^(\w+) = \[", section, re.M))


def _unwritable(tmp_path: Path) -> str:
    """A folder path that cannot be created even as root: its parent is a plain file."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return str(blocker / "out")


#: (argv, the argument the message must name, a word of the accepted values it must give)
BAD = [
    (["tournament", "--agents", "bogus,rule"], "--agents", "use one of random, rule"),
    (["tournament", "--agents", "rule,missing.pt"], "--agents", "does not exist"),
    (["tournament", "--agents", "rule,human"], "--agents", "use one of random, rule"),
    (["tournament", "--agents", "rule"], "--agents", "at least two"),
    (["tournament", "--target", "0"], "--target", "an int in 1..1000"),
    (["tournament", "--target", "x"], "--target", "an int in 1..1000"),
    (["tournament", "--seed", "-1"], "--seed", "an int in 0..2**64 - 1"),
    (["tournament", "--out", "UNWRITABLE"], "--out", "cannot write"),
    (["tournament", "--random-scores", "--target", "100000"], "--target", "an int in 1..1000"),
    (["tournament", "--tables", "0"], "--tables", "an int in 2.."),
    (["tournament", "--hands", "-5"], "--hands", "an int in 0.."),
    (["tournament", "--hands", "9" * 5000], "--hands", "an int in 0.."),          # Python's int-string limit
    (["tournament", "--kings", "6"], "--kings", "choose from 8, 4"),
    (["play", "--seat", "5"], "--seat", "choose from 0, 1, 2, 3"),
    (["play", "--target", "0"], "--target", "an int in 1..1000"),
    (["play", "--record", "UNWRITABLE/x.json"], "--record", "cannot write"),
    (["play", "--record", "."], "--record", "is a folder"),
    (["play", "--bots", "rule,rule"], "--bots", "three agent specs"),
    (["play", "--bots", "rule,human,rule"], "--bots", "use one of random, rule"),
    (["play", "--bots", "rule,rule,nope"], "--bots", "use one of random, rule"),
    (["bench", "--seconds", "0"], "--seconds", "a number > 0"),
    (["bench", "--seconds", "-1"], "--seconds", "a number > 0"),
    (["bench", "--seconds", "nan"], "--seconds", "a number > 0"),
    (["bench", "--seconds", "inf"], "--seconds", "a number > 0"),
    (["bench", "--repeats", "0"], "--repeats", "an int >= 1"),
    (["bench", "--batches", "0"], "--batches", "comma-separated ints"),
    (["bench", "--batches", "x"], "--batches", "comma-separated ints"),
    (["bench", "--batches", "64 128"], "--batches", "comma-separated ints"),
    (["bench", "--batches", ""], "--batches", "comma-separated ints"),
    (["bench", "--processes", "0"], "--processes", "an int in 1.."),
    (["deals", "--n", "0"], "--n", "an int in 1.."),
    (["deals", "--out", "UNWRITABLE/d.npz"], "--out", "cannot write"),
    (["train", "--out", "UNWRITABLE/run"], "--out", "cannot write"),
    (["train", "--seed", "-5"], "seed", "an int in 0.."),
    (["train", "--num-tables", "0"], "num_tables", "an int >= 1"),
    (["train", "--preset", "bogus"], "--preset", "choose from"),
    (["exploit", "rule", "--minutes", "-1"], "--minutes", ">= 0"),
    (["exploit", "rule", "--lance", "foo"], "--lance", "choose from"),
    (["replay"], "file", "required"),
    (["fly"], "subcommand", "one of train, exploit, study, league, distill, tournament"),
]


@pytest.mark.parametrize(("argv", "names", "accepted"), BAD, ids=[" ".join(a)[:60] for a, _, _ in BAD])
def test_bad_arguments_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture, argv: list[str],
                                           names: str, accepted: str) -> None:
    argv = [a.replace("UNWRITABLE", _unwritable(tmp_path)) for a in argv]
    with pytest.raises(SystemExit) as e:
        mus(argv)
    out, err = capsys.readouterr()
    assert e.value.code == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and names in lines[0] and accepted in lines[0], lines[0]
    assert lines[0].startswith("mus")


@pytest.mark.parametrize("argv", [["tournament", "--seed", "-1"], ["bench", "--batches", "64 128"],
                                  ["play", "--seat", "5"]])
def test_bad_arguments_exit_2_as_a_process(argv: list[str]) -> None:
    r = subprocess.run([sys.executable, "-m", "experiments.cli", *argv], capture_output=True, text=True,
                       timeout=PROCESS_S, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr


def test_help_names_the_command_and_shows_defaults(capsys: pytest.CaptureFixture) -> None:
    helps = {}
    for name in ("tournament", "play", "replay", "bench", "deals"):
        with pytest.raises(SystemExit) as e:
            mus([name, "--help"])
        assert e.value.code == 0
        helps[name] = capsys.readouterr().out
        assert helps[name].startswith(f"usage: mus {name} "), helps[name][:80]
        assert "``" not in helps[name] and ":func:" not in helps[name]          # no raw reST
    flat = {k: " ".join(v.split()) for k, v in helps.items()}
    assert "(default: 40)" in flat["tournament"] and "(default: random,rule,equity,ordago)" in flat["tournament"]
    assert "(default: 1,16,256,4096,16384)" in flat["bench"] and "(default: 10000)" in flat["deals"]
    assert "(default: False)" not in flat["tournament"]                       # flags are not cluttered
    for option in ("--kings {8,4} 8 kings", "--target TARGET stones that win a game",
                   "--no-plots do not draw"):
        assert option in flat["tournament"], option
    assert "--kings {8,4} 8 kings" in flat["play"] and "--target TARGET stones that win" in flat["play"]


def test_version(capsys: pytest.CaptureFixture) -> None:
    expected = _pyproject()[0]
    mus(["--version"])
    assert capsys.readouterr().out.strip() == f"mus-env {expected}"


def test_install_hints_work_from_a_checkout() -> None:
    """The package is installed from a checkout (it is not on PyPI): hints say ``pip install -e ".[extra]"``
    with an extra that pyproject.toml defines."""
    extras = _pyproject()[1]
    assert {"train", "dev", "bench"} <= extras
    assert re.search(r'pip install -e "\.\[bench\]"', bench.PEERS_HINT) and "bench" in extras
    for folder in ("experiments", "agents", "mus_env"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"pip install '?mus-env\[", text), path
            for extra in re.findall(r"pip install -e ['\"]\.\[(\w+)\]", text):
                assert extra in extras, (path, extra)


def test_the_license_file_is_the_one_pyproject_names() -> None:
    declared = re.search(r'^license = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    text = (ROOT / "LICENSE").read_text()
    assert declared == "MIT" and text.startswith("MIT License") and "mus-env contributors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text


@pytest.mark.parametrize(("command", "package", "extra"),
                         [("rllib", "ray", "rllib"), ("tianshou", "tianshou", "tianshou"),
                          ("sb3", "sb3_contrib", "dev")])
def test_a_subcommand_without_its_extra_names_the_install(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture, command: str,
                                                          package: str, extra: str) -> None:
    """A library subcommand whose library is missing says which extra installs it (one line, exit 2)."""
    import importlib

    from experiments import cli

    def missing(name: str) -> None:
        assert name == cli.COMMANDS[command][0]
        raise ModuleNotFoundError(f"No module named '{package}'", name=f"{package}.submodule")

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(SystemExit) as e:
        mus([command, "--help"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"mus {command}:" in err and f"'.[{extra}]'" in err and package in err
    extras = _pyproject()[1]
    assert extra in extras


def test_library_subcommands_show_their_help(capsys: pytest.CaptureFixture) -> None:
    for command in ("sb3", "rllib", "tianshou"):
        with pytest.raises(SystemExit) as e:
            mus([command, "--help"])
        assert e.value.code == 0
        assert f"usage: mus {command}" in capsys.readouterr().out


def test_training_subcommands_show_their_help(capsys: pytest.CaptureFixture) -> None:
    """mus train, exploit, ship-agent and bench-train: the command lines over experiments.train and exploit."""
    helps = {}
    for command in ("train", "exploit", "ship-agent", "bench-train"):
        with pytest.raises(SystemExit) as e:
            mus([command, "--help"])
        assert e.value.code == 0
        helps[command] = " ".join(capsys.readouterr().out.split())
        assert helps[command].startswith(f"usage: mus {command} "), helps[command][:80]
    # every Args field is a flag whose help is the field's docstring, with the default and the ship preset's value
    assert "--league-mix LEAGUE_MIX opponent kinds and their shares" in helps["train"]
    assert "--total-decisions TOTAL_DECISIONS training budget in environment decisions" in helps["train"]
    assert "[36000000; ship: 160000000]" in helps["train"]
    assert "scratch (600M decisions from a random network, about 100 minutes)" in helps["train"]
    assert "--progress BOOL show a progress bar [True]" in helps["train"]
    assert "--lance {grande,chica,pares,juego,punto}" in helps["exploit"]
    assert "--card-only" in helps["ship-agent"] and "--no-snapshots" in helps["bench-train"]


def test_train_bool_flags_take_true_or_false(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as e:
        mus(["train", "--progress", "maybe"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "mus train: error: argument --progress: expected true or false, got 'maybe' (mus train -h for help)"


def test_the_libraries_never_import_the_command_line() -> None:
    """The wings of experiments (train, evaluate, integrations, tools) import neither experiments.cli, the
    subcommands' modules (experiments.commands), experiments.play nor experiments.replay, and hold no argparse code:
    the command line sits on top of the libraries and takes their plain Python values."""
    import ast

    command_line = ("experiments.cli", "experiments.commands", "experiments.play", "experiments.replay", "argparse")
    for wing in ("train", "evaluate", "integrations", "tools"):
        for path in sorted((ROOT / "experiments" / wing).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                else:
                    continue
                bad = [n for n in names if any(n == c or n.startswith(c + ".") for c in command_line)]
                assert not bad, f"{path.relative_to(ROOT)}:{node.lineno} imports {bad}"


def test_every_help_is_formatted_text(capsys: pytest.CaptureFixture) -> None:
    """Every subcommand's help is what argparse formats: no doubled percent sign (``95%%`` in a description,
    which argparse does not format), no raw reST."""
    from experiments.cli import COMMANDS

    for name in COMMANDS:
        with pytest.raises(SystemExit) as e:
            mus([name, "--help"])
        out = capsys.readouterr().out
        assert e.value.code == 0 and out.startswith(f"usage: mus {name}"), (name, out[:200])
        assert "%%" not in out and "``" not in out, (name, out)
