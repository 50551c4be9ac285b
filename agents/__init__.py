"""Baseline agents behind one interface (:class:`agents.base.Agent`), and :func:`make_agent` for specs.

Specs (command line and tournaments): ``random``, ``rule``, ``equity``, ``ordago``, ``human``, or the
path of a policy checkpoint (``*.pt``, from the training issue).
"""

from __future__ import annotations

from pathlib import Path

from .base import Agent, OrdagoAgent, RandomAgent, uniform_legal
from .equity import EquityAgent
from .human import HumanAgent, QuitGame
from .rule import RuleBasedAgent

__all__ = ["Agent", "RandomAgent", "RuleBasedAgent", "EquityAgent", "OrdagoAgent", "HumanAgent", "QuitGame",
           "make_agent", "AGENT_SPECS", "uniform_legal"]

#: Agent specs understood by :func:`make_agent` (besides checkpoint paths).
AGENT_SPECS = ("random", "rule", "equity", "ordago", "human")


def make_agent(spec: str, **kwargs: object) -> Agent:
    """Build an agent from a spec: ``random``, ``rule``, ``equity``, ``ordago``, ``human`` or a ``.pt`` path.

    Raises:
        ValueError: an unknown spec (the message lists the accepted ones).
    """
    name = spec.strip().lower()
    if name == "random":
        return RandomAgent(**kwargs)
    if name == "ordago":
        return OrdagoAgent(**kwargs)
    if name == "rule":
        return RuleBasedAgent(**kwargs)
    if name == "equity":
        return EquityAgent(**kwargs)
    if name == "human":
        return HumanAgent(**kwargs)
    if spec.endswith(".pt"):
        if not Path(spec).exists():
            raise ValueError(f"agent checkpoint {spec!r} does not exist")
        raise ValueError(f"agent spec {spec!r}: policy checkpoints need the training extra and the neural agent, "
                         "which are not part of this release yet")
    raise ValueError(f"unknown agent spec {spec!r}; use one of {', '.join(AGENT_SPECS)} or a checkpoint path (*.pt)")
