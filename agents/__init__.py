"""Baseline agents behind one interface (:class:`agents.base.Agent`), and :func:`make_agent` for specs.

Specs (command line and tournaments): ``random``, ``rule``, ``equity``, ``ordago``, ``human``, ``ppo`` (the
shipped trained agent), the path of a policy file or training checkpoint (``*.pt``, written by
``mus train``), or an sb3-contrib ``MaskablePPO`` model trained on ``MusGymEnv`` (``*.zip``). The last three
need the ``train`` extra (torch); ``TorchPolicyAgent`` and ``SB3PolicyAgent`` are imported on first use, so
``import agents`` works without torch. Any spec followed by ``-nosigns`` (``rule-nosigns``) is that agent
never signing (it still reads the rival signs it intercepts), ``-blind`` never signing and seeing no sign
(:class:`agents.signs.SilentAgent`), for games with signals on.
"""

from __future__ import annotations

from pathlib import Path

from .base import Agent, OrdagoAgent, RandomAgent, uniform_legal
from .equity import EquityAgent
from .human import HumanAgent, QuitGame
from .rule import RuleBasedAgent
from .signs import SilentAgent

#: Spec suffix for an agent that never signs (``rule-nosigns``; RULES.md §8); it still reads intercepted signs.
NOSIGNS_SUFFIX = "-nosigns"
#: Spec suffix for an agent that never signs and sees no sign at all (``rule-blind``).
BLIND_SUFFIX = "-blind"

__all__ = ["Agent", "RandomAgent", "RuleBasedAgent", "EquityAgent", "OrdagoAgent", "HumanAgent", "QuitGame",
           "TorchPolicyAgent", "SB3PolicyAgent", "SilentAgent", "make_agent", "AGENT_SPECS", "NOSIGNS_SUFFIX",
           "BLIND_SUFFIX", "uniform_legal"]

#: Agent specs understood by :func:`make_agent` (besides ``*.pt`` and ``*.zip`` paths).
AGENT_SPECS = ("random", "rule", "equity", "ordago", "ppo", "human")


def __getattr__(name: str) -> object:
    # the policy agents need torch: imported on first use only
    if name == "TorchPolicyAgent":
        return _torch_module().TorchPolicyAgent
    if name == "SB3PolicyAgent":
        from .sb3 import SB3PolicyAgent

        return SB3PolicyAgent
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


def _torch_module():  # noqa: ANN202 - the agents.policy module
    try:
        from . import policy
    except ImportError as e:
        raise ImportError("policy agents need torch: pip install -e '.[train]' in the repository root "
                          "(on a machine without a GPU, install a CPU build of torch first)") from e
    return policy


def make_agent(spec: str, **kwargs: object) -> Agent:
    """Build an agent from a spec: ``random``, ``rule``, ``equity``, ``ordago``, ``ppo``, ``human``, a policy
    file or checkpoint (``*.pt``) or an sb3-contrib MaskablePPO model (``*.zip``).

    Keyword arguments go to the agent's constructor (``greedy=True`` for the policy agents). A spec ending
    in ``-nosigns`` (no signs made) or ``-blind`` (none made or seen) wraps the agent in
    :class:`agents.signs.SilentAgent`.

    Raises:
        ValueError: an unknown spec (the message lists the accepted ones), or a file that cannot be used
            (``agents.policy.PolicyFileError``, a ``ValueError``, names the file and the problem).
    """
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'rule' or 'runs/train/policy.pt', got {spec!r}")
    name = spec.strip().lower()
    for suffix, blind in ((NOSIGNS_SUFFIX, False), (BLIND_SUFFIX, True)):
        if name.endswith(suffix) and len(name) > len(suffix):
            return SilentAgent(make_agent(spec.strip()[:-len(suffix)], **kwargs), blind=blind)
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
    if name == "ppo":
        policy = _torch_module()
        if not policy.SHIPPED_POLICY.is_file():
            raise ValueError(f"the shipped agent's weights {policy.SHIPPED_POLICY} are missing from this install")
        kwargs.setdefault("name", "ppo")
        return policy.TorchPolicyAgent.from_file(policy.SHIPPED_POLICY, **kwargs)  # type: ignore[arg-type]
    path = Path(spec.strip())
    if path.suffix.lower() in (".pt", ".zip"):
        if not path.is_file():
            raise ValueError(f"agent file {spec!r} does not exist")
        if path.suffix.lower() == ".pt":
            return _torch_module().TorchPolicyAgent.from_file(path, **kwargs)  # type: ignore[arg-type]
        from .sb3 import SB3PolicyAgent

        return SB3PolicyAgent.from_file(path, **kwargs)  # type: ignore[arg-type]
    raise ValueError(f"unknown agent spec {spec!r}; use one of {', '.join(AGENT_SPECS)}, a policy file (*.pt) "
                     "or an sb3-contrib MaskablePPO model (*.zip)")
