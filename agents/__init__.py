"""Baseline agents behind one interface (:class:`agents.base.Agent`), and :func:`make_agent` for specs.

Specs (command line and tournaments): ``random``, ``rule``, ``equity``, ``ordago``, ``human``, ``ppo`` (the
shipped trained agent), the path of a policy file or training checkpoint (``*.pt``, written by
``mus train``), an sb3-contrib ``MaskablePPO`` model trained on ``MusGymEnv`` (``*.zip``), or your own agent
class as ``my_bot.py:MyBot`` (a Python file) or ``my_package.bots:MyBot`` (an importable module). Policy files
joined by ``+`` (``a.pt+b.pt``) are their equal mixture, played decision by decision (:mod:`agents.mixture`).
``team:SPEC=SHARE+SPEC=SHARE`` (``team:ppo=0.6+runs/a/policy.pt=0.4``) is a team mixture: each team draws one member
per game from its own seed and both partners play it (``team-hand:`` draws per hand; :mod:`agents.team`). ``ppo``,
``*.pt`` and ``*.zip`` need the ``train`` extra (torch); ``TorchPolicyAgent`` and ``SB3PolicyAgent`` are
imported on first use, so ``import agents`` works without torch. Any spec followed by ``-nosigns``
(``rule-nosigns``) is that agent never signing (it still reads the rival signs it intercepts), ``-blind`` never
signing and seeing no sign (:class:`agents.signs.SilentAgent`), for games with signals on.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from .base import Agent, OrdagoAgent, RandomAgent, TableRows, act_one, act_rows, uniform_legal, wants_rows
from .equity import EquityAgent
from .human import HumanAgent, QuitGame
from .rule import RuleBasedAgent
from .signs import SilentAgent
from .team import TEAM_HAND_PREFIX, TEAM_PREFIX, TeamMixtureAgent, parse_team_spec

#: Spec suffix for an agent that never signs (``rule-nosigns``; RULES.md §8); it still reads intercepted signs.
NOSIGNS_SUFFIX = "-nosigns"
#: Spec suffix for an agent that never signs and sees no sign at all (``rule-blind``).
BLIND_SUFFIX = "-blind"

__all__ = ["Agent", "RandomAgent", "RuleBasedAgent", "EquityAgent", "OrdagoAgent", "HumanAgent", "QuitGame",
           "TorchPolicyAgent", "SB3PolicyAgent", "SilentAgent", "make_agent", "AGENT_SPECS", "NOSIGNS_SUFFIX",
           "BLIND_SUFFIX", "uniform_legal", "load_agent_class",
           "observation_size", "is_mixture_spec", "mixture_members", "is_team_spec", "TeamMixtureAgent",
           "act_rows", "act_one", "wants_rows", "TableRows", "spec_label"]

#: Agent specs understood by :func:`make_agent` (besides ``*.pt`` and ``*.zip`` paths and ``my_bot.py:MyBot``).
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


def observation_size(agent: object) -> int | None:
    """The observation length an agent's network reads (a policy agent: 345 without señas, 477 with them), or
    None for an agent that reads any observation (the baselines, agents of your own)."""
    net = getattr(agent, "net", None)
    if net is not None and isinstance(getattr(net, "arch", None), dict):
        return int(net.arch["obs_dim"])
    shape = getattr(getattr(getattr(agent, "model", None), "observation_space", None), "shape", None)
    return int(shape[0]) if shape else None


def make_agent(spec: str, **kwargs: object) -> Agent:
    """Build an agent from a spec: ``random``, ``rule``, ``equity``, ``ordago``, ``ppo``, ``human``, a policy
    file or checkpoint (``*.pt``), the equal mixture of policy files (``a.pt+b.pt``), a team mixture
    (``team:SPEC=SHARE+...`` or ``team-hand:...``, :class:`agents.team.TeamMixtureAgent`: its members are any of
    these specs), an sb3-contrib MaskablePPO model (``*.zip``), or ``FILE.py:NAME`` /
    ``MODULE:NAME`` for an agent of your own (:func:`load_agent_class`).

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
    if is_team_spec(spec):                      # before the suffixes: each member may carry its own
        kwargs.setdefault("name", "team")
        return TeamMixtureAgent.from_spec(spec, lambda s: make_agent(s, **{k: v for k, v in kwargs.items()
                                                                          if k != "name"}),
                                          name=str(kwargs["name"]))
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
    if is_mixture_spec(spec):
        from .mixture import MixtureAgent

        kwargs.setdefault("name", "mixture")
        return MixtureAgent.from_files(mixture_members(spec), **kwargs)  # type: ignore[arg-type]
    path = Path(spec.strip())
    if ":" in spec and path.suffix.lower() not in (".pt", ".zip"):
        return load_agent_class(spec.strip(), **kwargs)
    if path.suffix.lower() in (".pt", ".zip"):
        if path.is_dir():
            raise ValueError(f"agent file {spec!r} is a folder, not a policy file (give the file inside it, "
                             "e.g. runs/train/policy.pt)")
        if not path.is_file():
            raise ValueError(f"agent file {spec!r} does not exist")
        if path.suffix.lower() == ".pt":
            return _torch_module().TorchPolicyAgent.from_file(path, **kwargs)  # type: ignore[arg-type]
        from .sb3 import SB3PolicyAgent

        return SB3PolicyAgent.from_file(path, **kwargs)  # type: ignore[arg-type]
    raise ValueError(f"unknown agent spec {spec!r}; use one of {', '.join(AGENT_SPECS)}, a policy file (*.pt), "
                     "an sb3-contrib MaskablePPO model (*.zip) or your own class as my_bot.py:MyBot")


def is_team_spec(spec: str) -> bool:
    """Whether ``spec`` names a team mixture, ``team:a.pt=0.4+b.pt=0.6`` or ``team-hand:...``
    (:class:`agents.team.TeamMixtureAgent`)."""
    return str(spec).strip().lower().startswith((TEAM_PREFIX, TEAM_HAND_PREFIX))


def is_mixture_spec(spec: str) -> bool:
    """Whether ``spec`` names a mixture of policy files, ``a.pt+b.pt`` (:class:`agents.mixture.MixtureAgent`, equal
    weights: the members' probabilities averaged at each decision)."""
    parts = str(spec).split("+")
    return not is_team_spec(spec) and len(parts) > 1 and all(p.strip().lower().endswith(".pt") for p in parts)


def mixture_members(spec: str) -> list[str]:
    """The policy files of a mixture spec ``a.pt+b.pt``, in order."""
    return [p.strip() for p in spec.split("+")]


def spec_label(spec: str, width: int = 48) -> str:
    """A short name for an agent spec, for figures' axes and legends (tables and files keep the whole spec).

    A policy file is its stem (``runs/a/policy.pt`` -> ``a/policy``), a mixture ``mix(a, b)``, a team mixture
    ``team(a, b)`` (``team-hand(...)``; a member's share shown where the shares differ), and anything still longer
    than ``width`` characters is cut in the middle with ``…``. ``spec_label("rule")`` is ``"rule"``.
    """
    def one(s: str) -> str:
        s = s.strip()
        path = Path(s)
        if path.suffix.lower() in (".pt", ".zip"):
            stem = path.stem
            return f"{path.parent.name}/{stem}" if stem in ("policy", "checkpoint", "model") and path.parent.name \
                else stem
        return s

    text = str(spec).strip()
    if is_team_spec(text):
        try:
            members, shares, draw, _ = parse_team_spec(text)
        except ValueError:
            members = []
        if members:
            equal = max(shares) - min(shares) < 1e-9
            names = [one(m) if equal else f"{one(m)} {s:.2g}" for m, s in zip(members, shares, strict=True)]
            text = f"{'team' if draw == 'game' else 'team-hand'}({', '.join(names)})"
    elif is_mixture_spec(text):
        text = f"mix({', '.join(one(m) for m in mixture_members(text))})"
    else:
        text = one(text)
    if len(text) > width >= 3:
        head = (width - 1) // 2
        text = text[:head] + "…" + text[len(text) - (width - 1 - head):]
    return text


def load_agent_class(spec: str, **kwargs: object) -> Agent:
    """Build your own agent from ``FILE.py:NAME`` (a Python file) or ``MODULE:NAME`` (an importable module).

    ``NAME`` is a class (called with ``kwargs``) or an already built agent. It must have ``act_batch`` or
    ``act`` (subclass :class:`agents.base.Agent`: it gives each from the other). The file runs as Python code,
    so give only files you trust, as with any script.

    Raises:
        ValueError: the file or module cannot be found or fails to import, ``NAME`` is missing, or it is not
            an agent (the message names which).
    """
    source, _, attr = spec.rpartition(":")
    if not source or not attr.isidentifier():
        raise ValueError(f"agent spec {spec!r}: write your own agent as my_bot.py:MyBot or my_package.bots:MyBot")
    try:
        if source.endswith(".py"):
            path = Path(source)
            if not path.is_file():
                raise ValueError(f"agent spec {spec!r}: the file {source!r} does not exist")
            name = f"mus_user_agent_{abs(hash(str(path.resolve())))}"
            module = sys.modules.get(name)
            if module is None:
                loader_spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(loader_spec)  # type: ignore[arg-type]
                sys.modules[name] = module
                try:
                    loader_spec.loader.exec_module(module)  # type: ignore[union-attr]
                except BaseException:
                    del sys.modules[name]
                    raise
        else:
            module = importlib.import_module(source)
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure of the user's code is reported with the spec
        raise ValueError(f"agent spec {spec!r}: importing {source!r} failed: {type(e).__name__}: {e}") from e
    if not hasattr(module, attr):
        raise ValueError(f"agent spec {spec!r}: {source!r} has no {attr!r}")
    obj = getattr(module, attr)
    agent = obj(**kwargs) if isinstance(obj, type) else obj
    if not (callable(getattr(agent, "act_batch", None)) or callable(getattr(agent, "act", None))):
        raise ValueError(f"agent spec {spec!r}: {attr!r} is not an agent (it needs act_batch or act; "
                         "subclass agents.Agent)")
    if not callable(getattr(agent, "act_batch", None)):
        raise ValueError(f"agent spec {spec!r}: {attr!r} has act but no act_batch; subclass agents.Agent, which "
                         "gives one from the other")
    return agent
