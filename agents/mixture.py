"""A mixture of policies played decision by decision: :class:`MixtureAgent`.

Best-response rounds (``mus league``) leave a population of policies, each with leaks of its own that a probe
finds in minutes. Playing their mixture makes those leaks cost less: at every decision the mixture plays the
weighted average of its members' action probabilities, so a leak of one member is only a share of the
mixture's behaviour. This is a *behavioural* mixture (the members' probabilities averaged at each decision), not
a member drawn once per game; it needs no memory of the game, so one object plays any number of seats and
tables at once, as every agent here does.

A mixture is the teacher of :mod:`experiments.population.distill`, which fits one network to it
(``mus distill``): one network is what the web table, the model card and the own-weights probes take.

Needs torch (the members are :class:`agents.policy.TorchPolicyAgent`\\ s or anything with the same
``probabilities(obs, masks)`` method).

Example:
    >>> from agents.mixture import MixtureAgent
    >>> mix = MixtureAgent.from_files(["runs/a/policy.pt", "runs/b/policy.pt"], weights=[0.5, 0.5])  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .base import Agent
from .policy import TorchPolicyAgent, choose_actions

__all__ = ["MixtureAgent", "parse_members"]


def parse_members(text: str) -> tuple[list[str], list[float]]:
    """``"a.pt:2,b.pt"`` -> ``(["a.pt", "b.pt"], [2/3, 1/3])``: policy files, each with an optional weight after
    the last colon (1 when none is written), the weights normalised to sum to 1.

    Raises:
        ValueError: an empty list, a weight that is not a number, negative or infinite, or weights that sum to 0.
    """
    paths, weights = [], []
    for item in (s.strip() for s in str(text).split(",")):
        if not item:
            continue
        head, sep, tail = item.rpartition(":")
        if sep and not tail.endswith(".pt"):
            try:
                w = float(tail)
            except ValueError:
                raise ValueError(f"mixture member {item!r}: the weight after the last ':' must be a number, "
                                 f"got {tail!r}") from None
            paths.append(head.strip())
        else:
            paths.append(item)
            w = 1.0
        weights.append(w)
    if not paths:
        raise ValueError(f"a mixture needs at least one policy file, e.g. 'a.pt:0.5,b.pt:0.5', got {text!r}")
    return paths, _normalised(weights)


def _normalised(weights: Sequence[float]) -> list[float]:
    """``weights`` divided by their sum; ``ValueError`` for a negative, non-finite or all-zero list."""
    w = [float(x) for x in weights]
    if any(not math.isfinite(x) or x < 0 for x in w):
        raise ValueError(f"mixture weights must be finite numbers >= 0, got {list(weights)}")
    total = sum(w)
    if total <= 0:
        raise ValueError(f"mixture weights must not all be 0, got {list(weights)}")
    return [x / total for x in w]


class MixtureAgent(Agent):
    """Plays the weighted average of its members' action probabilities at every decision.

    Args:
        members: the policies (each with ``probabilities(obs, masks) -> (B, A)``, as
            :class:`~agents.policy.TorchPolicyAgent` has).
        weights: one number >= 0 per member (normalised; default: equal weights).
        greedy: take the most likely legal action of the averaged probabilities instead of sampling.
        name: the name shown in tables.

    Raises:
        ValueError: no member, a member without ``probabilities``, or weights that do not fit (their number,
            a negative or infinite one, all zero).
    """

    name = "mixture"

    def __init__(self, members: Sequence[Any], weights: Sequence[float] | None = None, greedy: bool = False,
                 name: str | None = None) -> None:
        members = list(members)
        if not members:
            raise ValueError("a mixture needs at least one member")
        for m in members:
            if not callable(getattr(m, "probabilities", None)):
                raise ValueError(f"mixture member {m!r} has no probabilities(obs, masks) method: the members must "
                                 "be policies (TorchPolicyAgent), whose action probabilities can be averaged")
        weights = [1.0] * len(members) if weights is None else list(weights)
        if len(weights) != len(members):
            raise ValueError(f"a mixture of {len(members)} members needs {len(members)} weights, got {len(weights)}")
        w = _normalised(weights)
        kept = [i for i, x in enumerate(w) if x > 0]
        self.members = [members[i] for i in kept]
        self.weights = np.array([w[i] for i in kept], dtype=np.float64)
        self.greedy = bool(greedy)
        if name:
            self.name = name

    @classmethod
    def from_files(cls, paths: Sequence[str | Path], weights: Sequence[float] | None = None, greedy: bool = False,
                   name: str | None = None) -> MixtureAgent:
        """A mixture of the policy files ``paths`` (see :func:`agents.policy.load_policy_file`)."""
        return cls([TorchPolicyAgent.from_file(p) for p in paths], weights, greedy=greedy, name=name)

    def probabilities(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
        """``(B, A)`` the weighted average of the members' masked probabilities (each row sums to 1)."""
        total = np.zeros(np.shape(masks), dtype=np.float64)
        for w, m in zip(self.weights, self.members, strict=True):
            total += w * np.asarray(m.probabilities(obs, masks), dtype=np.float64)
        return (total / total.sum(axis=1, keepdims=True)).astype(np.float32)

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        if len(obs) == 0:
            return np.zeros(0, dtype=np.int64)
        return choose_actions(self.probabilities(obs, masks), masks, self.greedy, rng)

    def __repr__(self) -> str:
        return f"MixtureAgent({len(self.members)} members, weights={np.round(self.weights, 3).tolist()}, " \
               f"greedy={self.greedy}, name={self.name!r})"
