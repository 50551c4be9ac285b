"""The rows of ``mus benchmark``: one algorithm of one framework each, trained by a module of its own.

Each row's module (``experiments.benchmark.row_<name>``) has ``train(out, budget, log) -> Trained`` (the
:class:`~experiments.benchmark.protocol.RowTrainer` contract) and is imported only when its row runs, so a row
needs only its own framework's extra.
"""

from __future__ import annotations

import dataclasses
import importlib

from experiments.benchmark.protocol import RowTrainer

__all__ = ["Row", "ROWS", "row", "trainer"]


@dataclasses.dataclass(frozen=True)
class Row:
    """One row: its trainer's module, what it is, and the extra that installs its framework."""

    name: str
    module: str
    framework: str
    algorithm: str
    extra: str
    """the extra that installs what it needs (``pip install -e ".[train]"`` for ``train``)"""


ROWS: dict[str, Row] = {r.name: r for r in (
    Row("mus-train", "experiments.benchmark.row_mus_train", "mus-env",
        "PPO with a self-play league (mus train --preset scratch)", "train"),
    Row("sb3-maskable-ppo", "experiments.benchmark.row_sb3", "sb3-contrib",
        "MaskablePPO on MusVecEnv against rule", "sb3"),
    Row("rllib-ppo", "experiments.benchmark.row_rllib", "Ray RLlib", "PPO, self-play (one policy, four seats)",
        "rllib"),
    Row("tianshou-dqn", "experiments.benchmark.row_tianshou", "Tianshou", "DQN with action masks", "tianshou"),
    Row("openspiel-nfsp", "experiments.benchmark.row_openspiel", "OpenSpiel",
        "NFSP (PyTorch) on python_mus", "openspiel"),
)}


def row(name: str) -> Row:
    """The row called ``name``.

    Raises:
        ValueError: no such row (the message lists them).
    """
    if name not in ROWS:
        raise ValueError(f"unknown benchmark row {name!r}; the rows are {', '.join(ROWS)}")
    return ROWS[name]


def trainer(name: str) -> RowTrainer:
    """The training function of row ``name`` (its module imported now).

    Raises:
        ValueError: no such row.
        ImportError: its framework is not installed (the message names the extra).
    """
    r = row(name)
    try:
        module = importlib.import_module(r.module)
    except ImportError as e:
        raise ImportError(f"row {name} needs {r.framework}: pip install -e \".[{r.extra}]\" ({e})") from e
    return module.train
