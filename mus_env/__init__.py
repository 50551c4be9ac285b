"""mus-env: the reference reinforcement-learning environment for Mus (RULES.md, DESIGN.md).

The rules modules (``config``, ``cards``, ``tables``, ``actions``, ``game``) import no RL framework.
"""

from .actions import NUM_ACTIONS, Action, action_to_string, string_to_action
from .config import MusConfig
from .game import HandRecord, IllegalActionError, MusGame, Outcome, Phase

__all__ = [
    "Action", "HandRecord", "IllegalActionError", "MusConfig", "MusGame", "NUM_ACTIONS", "Outcome", "Phase",
    "action_to_string", "string_to_action",
]

__version__ = "0.1.0"
