"""The README: its generated observation table matches the observation pieces, its examples and the commands of
its library section run as written (with smaller budgets)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.tools.update_docs import section
from mus_env.observation import OBS_DIM, observation_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_sign_tables_in_sync() -> None:
    from mus_env.signals import sign_table

    text = README.read_text(encoding="utf-8")
    assert section(text, "sign-table").strip() == sign_table().strip(), "run: python -m experiments.tools.update_docs"
    assert section(text, "signal-observation-table").strip() == observation_table(signals=True).strip(), \
        "run: python -m experiments.tools.update_docs"


def test_observation_table_in_sync() -> None:
    body = section(README.read_text(encoding="utf-8"), "observation-table")
    assert body.strip() == observation_table().strip(), "run: python -m experiments.tools.update_docs"
    assert f"**{OBS_DIM}**" in body


def test_quick_start_has_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.strip().splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2
    assert ".ci/run" in commands[1] and "mus train" in commands[0]
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -q -n 2" in ci and "python -m pytest -q -n 2" in text


def _python_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python example of the README runs as written (the training example with fewer steps, its files
    written under a temporary folder)."""
    blocks = _python_blocks()
    assert len(blocks) >= 7
    assert sum(".learn(10_000" in b for b in blocks) == 1 and sum(".learn(200_000)" in b for b in blocks) == 1
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        code = block.replace(".learn(10_000", ".learn(64").replace("n_steps=1024", "n_steps=64")
        code = code.replace("make_deals(1000,", "make_deals(50,")
        # the MusVecEnv example: 8 tables x 8 steps, one rollout
        code = code.replace("MusVecEnv(64,", "MusVecEnv(8,")
        code = code.replace("n_steps=64, batch_size=1024", "n_steps=8, batch_size=64")
        code = code.replace(".learn(200_000)", ".learn(64)")
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    assert (tmp_path / "runs" / "mus_ppo.zip").stat().st_size > 0
    assert (tmp_path / "runs" / "sb3" / "model.zip").stat().st_size > 0


#: Extra flags that shrink each library command's budget (argparse keeps the last value of a repeated flag).
_SMALLER = {
    "sb3": ["--timesteps", "512", "--tables", "8", "--n-steps", "16", "--batch-size", "64", "--n-epochs", "1",
            "--eval-deals", "20"],
    "rllib": ["--num-env-runners", "0", "--envs-per-runner", "4", "--train-batch-size", "128", "--minibatch-size",
              "64", "--num-epochs", "1", "--hidden", "32,32", "--eval-deals", "10"],
    "tianshou": ["--epochs", "1", "--epoch-steps", "200", "--eval-games", "10", "--envs", "2"],
    "tournament": ["--hands", "20", "--no-plots", "--quiet"],
}


def _library_commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    part = text.split("## Using with other libraries", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in part.split("```bash\n")[1:]:
        for line in block.split("```", 1)[0].splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                commands.append(shlex.split(line))
    return commands


def test_library_section_commands_run(tmp_path: Path) -> None:
    """Every command of the README's library section runs as written, in order, in one folder (later commands
    use earlier ones' files), with the budgets made smaller: ``--iterations N`` of ``mus rllib`` becomes 1, then 2
    for the resumed run, and each command gets the flags of :data:`_SMALLER` appended. The cluster commands
    (``ray start``, in a ``text`` block) need several machines and are not run."""
    pytest.importorskip("ray")
    pytest.importorskip("tianshou")
    pytest.importorskip("sb3_contrib")
    commands = _library_commands()
    assert [c[:2] for c in commands] == [["mus", "sb3"], ["mus", "tournament"], ["mus", "rllib"], ["mus", "rllib"],
                                         ["mus", "rllib"], ["mus", "tournament"], ["mus", "tianshou"],
                                         ["mus", "tianshou"], ["mus", "tournament"]]
    iterations = iter(["1", "2"])
    for words in commands:
        name = words[1]
        argv = list(words[1:])
        if "--iterations" in argv:
            argv[argv.index("--iterations") + 1] = next(iterations)
        if name != "rllib" or "--export" not in argv:
            argv += _SMALLER[name]
        if name == "tournament" and "--games" in argv and argv[argv.index("--games") + 1] != "0":
            argv += ["--games", "4"]
        run = subprocess.run([sys.executable, "-m", "experiments.cli", *argv], cwd=tmp_path, capture_output=True,
                             text=True, timeout=600)
        assert run.returncode == 0, (words, run.stdout[-2000:], run.stderr[-4000:])
    runs = tmp_path / "runs"
    for produced in ("sb3/model.zip", "sb3/run.json", "sb3/tournament/results.json", "rllib/policy.pt",
                     "rllib/exported.pt", "rllib/tournament/results.json", "t_ray/results.json"):
        assert (runs / produced).stat().st_size > 0, produced
    progress = (runs / "rllib" / "progress.json").read_text(encoding="utf-8")
    assert '"iterations": 2' in progress
