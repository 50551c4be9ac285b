"""The libraries and the ``mus`` command, in wings by purpose.

* :mod:`experiments.train`: the PPO league trainer (``mus train``), shipping and benchmarking it.
* :mod:`experiments.evaluate`: duplicate matches, deal sets, ratings, tournaments, exploitability, señas value.
* :mod:`experiments.integrations`: SB3, RLlib and Tianshou examples.
* :mod:`experiments.tools`: benchmarks, profiles, table and docs generators.
* :mod:`experiments.cli` (with :mod:`experiments.commands`, :mod:`experiments.play`, :mod:`experiments.replay`):
  the command line, on top. It imports the libraries; they never import it.

Version 0.1 kept every module in this folder. Those module paths (``experiments.tournament``,
``experiments.ppo_selfplay``, ...) still import, as aliases of the moved modules with a ``DeprecationWarning``,
for the 0.2 releases only: :data:`MOVED` lists them. Their ``main`` functions (the command lines) are now the
subcommand modules of :mod:`experiments.commands` (``mus tournament`` is :mod:`experiments.commands.tournament`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

#: Version 0.1 module path -> where the module lives now (aliases kept for the 0.2 releases).
MOVED = {
    "experiments.ppo_selfplay": "experiments.train.ppo",
    "experiments.ship_agent": "experiments.train.ship_agent",
    "experiments.bench_train": "experiments.train.bench_train",
    "experiments.tournament": "experiments.evaluate.tournament",
    "experiments.deals": "experiments.evaluate.deals",
    "experiments.exploit": "experiments.evaluate.exploit",
    "experiments.signals_value": "experiments.evaluate.signals_value",
    "experiments.sign_info": "experiments.evaluate.sign_info",
    "experiments.sb3_maskable_ppo": "experiments.integrations.sb3_maskable_ppo",
    "experiments.rllib_selfplay": "experiments.integrations.rllib_selfplay",
    "experiments.tianshou_example": "experiments.integrations.tianshou_example",
    "experiments.bench_sb3": "experiments.integrations.bench_sb3",
    "experiments.bench": "experiments.tools.bench",
    "experiments.profile_vector": "experiments.tools.profile_vector",
    "experiments.make_equity_tables": "experiments.tools.make_equity_tables",
    "experiments.make_sign_tables": "experiments.tools.make_sign_tables",
    "experiments.update_readme": "experiments.tools.update_docs",
}


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import a 0.1 module path (a key of :data:`MOVED`) as the module that now lives at its new path."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new} in mus-env 0.2; the old path goes in 0.3",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported at its new path."""


if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
    sys.meta_path.append(MovedModuleFinder())
