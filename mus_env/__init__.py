"""mus-env: the reference reinforcement-learning environment for Mus.

The rules: docs/RULES.md; the architecture: docs/architecture.md.

The rules modules (``config``, ``cards``, ``tables``, ``actions``, ``game``, ``vector``) import no RL framework;
``mus_env.mus_v0`` (PettingZoo), ``mus_env.wrappers`` (Gymnasium), their shared helpers ``mus_env.interfaces`` and
the framework adapters ``mus_env.adapters.sb3`` / ``rllib`` / ``tianshou`` are imported on demand:
``from mus_env import mus_v0``.
"""

from .actions import NUM_ACTIONS, Action, action_to_string, string_to_action
from .config import MusConfig
from .deprecation import register_moved
from .game import HandRecord, IllegalActionError, IllegalChanceError, MusGame, Outcome, Phase
from .observation import OBS_DIM, STATE_DIM
from .rows import TableRows
from .vector import VectorMusEnv

__all__ = [
    "Action", "HandRecord", "IllegalActionError", "IllegalChanceError", "MusConfig", "MusGame", "NUM_ACTIONS",
    "OBS_DIM", "Outcome", "Phase", "STATE_DIM", "TableRows", "VectorMusEnv",
    "action_to_string", "string_to_action",
]

__version__ = "0.2.0"

# the adapters' 0.1 paths (they moved under mus_env.adapters in 0.2): CHANGELOG, "Deprecated"
register_moved({f"mus_env.{name}": f"mus_env.adapters.{name}" for name in ("sb3", "rllib", "tianshou")},
               since="0.2", removed_in="0.4")


def __getattr__(name: str) -> object:
    """Import the RL adapters on first use, so that the rules modules never pull in gymnasium/pettingzoo."""
    if name in ("mus_v0", "wrappers", "records", "interfaces", "adapters"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
