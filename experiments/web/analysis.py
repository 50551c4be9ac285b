"""What an agent thinks at a recorded decision, for the replay page: computed on demand from the observation
the acting seat had (``MusGame.observe``), never from hidden cards.

* a policy agent (``ppo``, a ``*.pt`` policy, an SB3 ``*.zip``): the probability of every legal action, and its
  value estimate where the agent gives one (``values``);
* ``equity``: its value of every legal action (:meth:`agents.equity.EquityAgent.action_values`: the
  probability of winning the game when betting, expected stones at the mus and the discards);
* other agents have nothing to show but their choice.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents import Agent
from mus_env import MusGame
from mus_env.actions import DISCARD_ACTIONS, action_to_string, discard_mask

__all__ = ["analyse", "explains"]


def explains(agent: Agent) -> bool:
    """Whether ``agent`` shows probabilities or action values."""
    return callable(getattr(agent, "probabilities", None)) or callable(getattr(agent, "action_values", None))


def _label(action: int, game: MusGame) -> str:
    if action in DISCARD_ACTIONS:
        m = discard_mask(action)
        return f"descarta {bin(m).count('1')}: " + " ".join(str(k) for k in range(4) if m >> k & 1)
    return action_to_string(action, game.config, words=True)


def analyse(agent: Agent, game: MusGame, name: str) -> dict[str, Any]:
    """The agent's view of the decision ``game`` waits for (its acting seat's observation).

    Returns:
        ``{"agent", "seat", "actions": [{"action", "text", "probability"?, "value"?}], "value"?}``: one row per
        legal action (a discard's text names the hand slots it throws, 0 = the highest card).

    Raises:
        ValueError: the game is over, or the agent explains nothing (see :func:`explains`).
    """
    if game.is_over:
        raise ValueError("the game is over: no decision to explain")
    if not explains(agent):
        raise ValueError(f"{name} shows neither probabilities nor action values")
    seat = game.current_player
    obs = game.observe(seat)[None]
    mask = game.legal_action_mask()[None]
    legal = game.legal_actions()
    rows: list[dict[str, Any]] = [{"action": a, "text": _label(a, game)} for a in legal]
    out: dict[str, Any] = {"agent": name, "seat": seat, "phase": game.phase_name, "actions": rows}
    if callable(getattr(agent, "probabilities", None)):
        p = np.asarray(agent.probabilities(obs, mask))[0]
        for r in rows:
            r["probability"] = float(p[r["action"]])
        values = getattr(agent, "values", None)
        if callable(values):
            v = values(obs)
            out["value"] = None if v is None else float(np.asarray(v).reshape(-1)[0])
    if callable(getattr(agent, "action_values", None)):
        v = np.asarray(agent.action_values(obs, mask))[0]
        for r in rows:
            x = float(v[r["action"]])
            r["value"] = x if np.isfinite(x) else None
    return out
