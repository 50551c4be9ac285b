"""The agent interface and the two trivial baselines (uniform random, always órdago).

An agent sees only its observation (``mus_env.observation``) and the legal-action mask; it holds no
hidden game state, so one agent object can play any number of seats and tables at once. Agents are
plain objects with two methods:

* ``act(observation, action_mask, rng) -> int`` for one decision;
* ``act_batch(obs, masks, rng) -> np.ndarray`` for ``(B, OBS_DIM)`` observations and ``(B, NUM_ACTIONS)``
  masks, returning ``(B,)`` int64 actions (the fast path used by tournaments on ``VectorMusEnv``).

Each base class method is written in terms of the other, so a subclass overrides at least one.

**Agents that play by game.** An agent whose play depends on which table, game, hand and seat a row is (a team that
draws one member per game for both partners, :class:`agents.team.TeamMixtureAgent`) sets the class attribute
``wants_rows = True`` and overrides

* ``act_rows(obs, masks, rng, rows) -> np.ndarray``, ``rows`` a :class:`mus_env.rows.TableRows` of the same
  ``B`` rows (``table``, ``game``, ``hand``, ``seat``).

Every harness that seats agents (tournaments, duplicate matches, probes and their training, the web table,
``mus play``, the Gymnasium view and the SB3 and Tianshou adapters) calls :func:`act_rows` (or :func:`act_one` for
one decision; a loop of your own over ``mus_v0`` passes ``env.unwrapped.table_rows()``),
which hands the rows to an agent with ``wants_rows`` and calls plain ``act_batch``/``act`` on any other: agents
written without it (and plain objects that only have ``act_batch`` or ``act``) play exactly as before. The base
class's ``act_rows`` drops the rows and calls ``act_batch``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mus_env.actions import Action
from mus_env.rows import TableRows

__all__ = ["Agent", "RandomAgent", "OrdagoAgent", "uniform_legal", "act_rows", "act_one", "wants_rows", "TableRows"]


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
    #: Whether the harness must pass each row's :class:`~mus_env.rows.TableRows` (:meth:`act_rows`).
    wants_rows: bool = False

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

    def act_rows(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], rng: np.random.Generator,
                 rows: TableRows) -> npt.NDArray[np.int64]:
        """``(B,)`` legal action ids, knowing which table, game, hand and seat each row is (``rows``). The base
        class drops ``rows`` and calls :meth:`act_batch`; agents that play by game (``wants_rows = True``)
        override it."""
        return self.act_batch(obs, masks, rng)

    def __call__(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
                 rng: np.random.Generator) -> int:
        """Agents are also plain callables ``(obs, mask, rng) -> action``."""
        return self.act(observation, action_mask, rng)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def wants_rows(agent: object) -> bool:
    """Whether ``agent`` asks for each row's :class:`~mus_env.rows.TableRows` (its ``wants_rows`` is true)."""
    return bool(getattr(agent, "wants_rows", False))


def act_rows(agent: object, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], rng: np.random.Generator,
             rows: TableRows | None) -> npt.NDArray[np.int64]:
    """How a harness asks ``agent`` for ``(B,)`` actions: ``agent.act_rows(obs, masks, rng, rows)`` for an agent
    that plays by game (:func:`wants_rows`), ``agent.act_batch(obs, masks, rng)`` for any other.

    Raises:
        ValueError: an agent that plays by game but ``rows`` is None, or ``rows`` of another length than ``obs``.
    """
    if not wants_rows(agent):
        return agent.act_batch(obs, masks, rng)  # type: ignore[attr-defined]
    if rows is None:
        raise ValueError(f"{getattr(agent, 'name', agent)!r} plays by game and needs each row's table, game, hand "
                         "and seat (mus_env.rows.TableRows); this harness gives none")
    if len(rows) != len(obs):
        raise ValueError(f"rows has {len(rows)} rows for {len(obs)} observations")
    return agent.act_rows(obs, masks, rng, rows)  # type: ignore[attr-defined]


def act_one(agent: object, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
            rng: np.random.Generator, rows: TableRows | None) -> int:
    """How a harness asks ``agent`` for one decision: :func:`act_rows` on a batch of one for an agent that plays by
    game, else ``agent.act(observation, action_mask, rng)`` (or ``agent(...)`` for a plain callable)."""
    if wants_rows(agent):
        return int(act_rows(agent, np.asarray(observation)[None], np.asarray(action_mask)[None], rng, rows)[0])
    act = getattr(agent, "act", None)
    return int(act(observation, action_mask, rng) if callable(act) else agent(observation, action_mask, rng))  # type: ignore[operator]


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
