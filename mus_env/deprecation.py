"""The one way a module of mus-env moves: its old path keeps importing, with a warning, for one minor version.

A moved module leaves no file behind. Its package registers the move (:func:`register_moved`, old path -> new
path, with the versions); importing the old path then warns with a ``DeprecationWarning`` that names the new
path and the version that removes the old one, and gives the very module object of the new path (an attribute
set or monkeypatched through one name is seen through the other). The CHANGELOG's "Deprecated" section lists
every move and when it goes.

This is PettingZoo's ``deprecated_module`` done once for the whole project: ``mus_env`` registers its moved
adapters, ``experiments`` its moved libraries; nothing else renames a module.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from dataclasses import dataclass
from types import ModuleType

__all__ = ["Move", "register_moved", "moved_modules"]


@dataclass(frozen=True)
class Move:
    """A module that moved: ``old`` imports as ``new`` (since version ``since``) until version ``removed_in``."""

    old: str
    new: str
    since: str
    removed_in: str

    def message(self) -> str:
        """The warning of an import of the old path."""
        return f"{self.old} moved to {self.new} in mus-env {self.since}; the old path goes in {self.removed_in}"


_MOVES: dict[str, Move] = {}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a registered old path (only when no module lives there) and loads it as the module of its new path."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _MOVES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        move = _MOVES[spec.name]
        warnings.warn(move.message(), DeprecationWarning, stacklevel=2)
        return importlib.import_module(move.new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported at its new path."""


def register_moved(moves: dict[str, str], since: str, removed_in: str) -> None:
    """Keep each old module path of ``moves`` (old -> new) importable as its new path, with a warning, until
    ``removed_in``. Registering a path again replaces its entry; the import hook is installed once."""
    for old, new in moves.items():
        _MOVES[old] = Move(old, new, since, removed_in)
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())


def moved_modules() -> dict[str, Move]:
    """Every registered move, by old path (what the CHANGELOG and the docs list)."""
    return dict(_MOVES)
