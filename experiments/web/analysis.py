"""What an agent thinks at a recorded decision, for the replay page: computed on demand from the observation
the acting seat had (``MusGame.observe``), never from hidden cards.

* a policy agent (``ppo``, a ``*.pt`` policy, an SB3 ``*.zip``): the probability of every legal action, and its
  value estimate where the agent gives one (``values``);
* ``equity``: its value of every legal action (:meth:`agents.equity.EquityAgent.action_values`: the
  probability of winning the game when betting, expected stones at the mus and the discards);
* other agents have nothing to show but their choice.

:func:`review` goes through one seat's decisions of a hand and keeps those where the seat's play differed most
from the agent's (the coach's review after each hand).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from agents import Agent
from mus_env import MusGame
from mus_env.actions import DISCARD_ACTIONS, action_to_string, discard_mask

__all__ = ["analyse", "explains", "review", "REVIEW_TOP"]

#: How many decisions a hand's review keeps.
REVIEW_TOP = 3


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


def review(agent: Agent, name: str, decisions: Iterable[tuple[int, MusGame, int]],
           top: int = REVIEW_TOP) -> dict[str, Any]:
    """The decisions of one seat where its play differed most from ``agent``'s.

    Each decision is analysed as :func:`analyse` does (from the acting seat's own observation); its *gap* is
    the agent's measure of its own first choice minus that of the action played: the probability for a policy
    agent, the action's value for one that gives values (``equity``: a game's winning chance when betting,
    stones at the mus and the discards). A decision played as the agent's first choice has gap 0 and is left out.

    Args:
        decisions: ``(turn, game, action played)`` as :func:`experiments.web.table.seat_decisions` yields them.
        top: how many to keep, the largest gaps first.

    Returns:
        ``{"agent", "measure": "probability" | "value", "decisions": n, "differed": [{"turn", "phase",
        "played": row, "preferred": row, "gap"}]}`` with the rows of :func:`analyse`.

    Raises:
        ValueError: the agent explains nothing (see :func:`explains`).
    """
    if not explains(agent):
        raise ValueError(f"{name} shows neither probabilities nor action values")
    measure = "probability" if callable(getattr(agent, "probabilities", None)) else "value"
    rows: list[dict[str, Any]] = []
    n = 0
    for turn, game, played in decisions:
        n += 1
        a = analyse(agent, game, name)
        scored = [r for r in a["actions"] if r.get(measure) is not None]
        mine = next((r for r in scored if r["action"] == played), None)
        if not scored or mine is None:
            continue                                    # the agent gives no measure of this decision
        best = max(scored, key=lambda r: r[measure])
        gap = best[measure] - mine[measure]
        if gap > 0:
            rows.append({"turn": turn, "phase": a["phase"], "played": mine, "preferred": best, "gap": gap})
    rows.sort(key=lambda r: -r["gap"])
    return {"agent": name, "measure": measure, "decisions": n, "differed": rows[:top]}
