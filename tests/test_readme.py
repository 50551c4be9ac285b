"""The README's generated observation table matches the observation pieces."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.update_readme import section
from mus_env.observation import OBS_DIM, observation_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_observation_table_in_sync() -> None:
    body = section(README.read_text(encoding="utf-8"), "observation-table")
    assert body.strip() == observation_table().strip(), "run: python -m experiments.update_readme"
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
    assert len(blocks) >= 4
    assert sum(".learn(10_000" in b for b in blocks) == 1
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        code = block.replace(".learn(10_000", ".learn(64").replace("n_steps=1024", "n_steps=64")
        code = code.replace("make_deals(1000,", "make_deals(50,")
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    assert (tmp_path / "runs" / "mus_ppo.zip").stat().st_size > 0
