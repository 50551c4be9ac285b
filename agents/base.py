"""The agent interface and the two trivial baselines (uniform random, always órdago).

An agent sees only its observation (``mus_env.observation``) and the legal-action mask; it holds no
hidden game state, so one agent object can play any number of seats and tables at once. Agents are
plain objects with two methods:

* ``act(observation, action_mask, rng) -> int`` for one decision;
* ``act_batch(obs, masks, rng) -> np.ndarray`` for ``(B, OBS_DIM)`` observations and ``(B, NUM_ACTIONS)``
  masks, returning ``(B,)`` int64 actions (the fast path used by tournaments on ``VectorMusEnv``).

Each base class method is written in terms of the other, so a subclass overrides at least one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mus_env.actions import Action

__all__ = ["Agent", "RandomAgent", "OrdagoAgent", "uniform_legal"]


def uniform_legal(masks: npt.NDArray[np.int8], rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """One uniformly random legal action per row of ``masks`` ``(B, NUM_ACTIONS)``."""
    masks = np.asarray(masks)
    if masks.ndim != 2:
        raise ValueError(f"masks must have shape (B, NUM_ACTIONS), got {masks.shape}")
    if not (masks.sum(axis=1) > 0).all():
        raise ValueError("a mask has no legal action (all zeros): was it taken for a seat that is not acting?")
    return (rng.random(masks.shape) * (masks > 0)).argmax(axis=1).astype(np.int64)


class Agent:
    """Base class of every agent: override :meth:`act_batch` (preferred) or :meth:`act`."""

    #: Short name used in tables and plots.
    name: str = "agent"

    def act(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
            rng: np.random.Generator) -> int:
        """One legal action id for one observation ``(OBS_DIM,)`` and mask ``(NUM_ACTIONS,)``."""
        if type(self).act_batch is Agent.act_batch:
            raise NotImplementedError(f"{type(self).__name__} must override act() or act_batch()")
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None], rng)[0])

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """``(B,)`` legal action ids for ``(B, OBS_DIM)`` observations and ``(B, NUM_ACTIONS)`` masks."""
        if type(self).act is Agent.act:
            raise NotImplementedError(f"{type(self).__name__} must override act() or act_batch()")
        return np.array([self.act(o, m, rng) for o, m in zip(obs, masks, strict=True)], dtype=np.int64)

    def __call__(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
                 rng: np.random.Generator) -> int:
        """Agents are also plain callables ``(obs, mask, rng) -> action``."""
        return self.act(observation, action_mask, rng)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(Agent):
    """Uniform over the legal actions (every decision, including discards and mus calls)."""

    name = "random"

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return uniform_legal(masks, rng)


class OrdagoAgent(Agent):
    """Always órdago when legal; facing a bet it cannot órdago (a live órdago) it says QUIERO; it cuts
    the mus at once (NO_MUS); discards and declarations are uniform among the legal ones.

    The degenerate exploiter: every other baseline must beat it.
    """

    name = "ordago"

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        masks = np.asarray(masks)
        out = uniform_legal(masks, rng)
        out = np.where(masks[:, Action.QUIERO] > 0, int(Action.QUIERO), out)
        out = np.where(masks[:, Action.NO_MUS] > 0, int(Action.NO_MUS), out)
        return np.where(masks[:, Action.ORDAGO] > 0, int(Action.ORDAGO), out).astype(np.int64)
