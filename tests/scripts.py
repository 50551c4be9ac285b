"""Scripts that are not part of the package (the research tools of docs/research/tools/, the CI's wheel rules),
imported by the tests from their files."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str) -> ModuleType:
    """The Python file at ``relative`` (to the repository root), imported as a module of its own."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def research_tool(name: str) -> ModuleType:
    """A script of docs/research/tools/ (research tools, not part of the package)."""
    return load_script(f"docs/research/tools/{name}.py")
