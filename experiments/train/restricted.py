"""Restricted learners (``Args.learner_decides``, for ``mus exploit``'s probes): which decisions the learner makes.

The learner may decide only the betting, or the betting of one lance, or only the órdagos (``ordago``: whether to
declare one, where the opposing agent's own policy has chosen its move and the learner may replace it by an
órdago, and whether to accept one; :func:`ordago_choices`); its other decisions are played by the opposing agent's
own policy and are not trained (they are not in its trajectories; the rewards they lead to reach the learner's
pending decision as usual). Such a probe joins a league as it was trained: its network where it decided, the agent
it probed elsewhere (``mus exploit AGENT --lance pares`` puts a pares-only best response to ``AGENT`` in the
league; :func:`restricted_probe`, :class:`RestrictedAgent`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import TableRows, act_rows, wants_rows
from mus_env.actions import Action
from mus_env.observation import OFFSETS, SLOT_NAMES
from mus_env.tables import LANCE_NAMES

__all__ = ["LEARNER_DECIDES", "BETTING", "ORDAGO", "learner_free", "facing_ordago", "ordago_choices",
           "restricted_probe", "RestrictedAgent"]

#: Values of ``Args.learner_decides``.
LEARNER_DECIDES = ("all", "bidding", "ordago", *LANCE_NAMES)

#: The betting actions (paso .. órdago): what the learner still decides under ``learner_decides="bidding"``.
BETTING = slice(int(Action.PASO), int(Action.ORDAGO) + 1)
#: The órdago's action id (``learner_decides="ordago"``).
ORDAGO = int(Action.ORDAGO)


def learner_free(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8], decides: str) -> npt.NDArray[np.bool_]:
    """Which of these decisions the learner makes under ``Args.learner_decides``: all of them, the betting ones
    (``bidding``: paso, envites, quiero, no quiero, órdago), the betting of one lance (its name), or those where an
    órdago may be declared or must be answered (``ordago``; of the first kind the learner only chooses between the
    agent's own move and an órdago: :func:`ordago_choices`)."""
    if decides == "all":
        return np.ones(len(mask), dtype=bool)
    betting = np.asarray(mask)[:, BETTING].any(axis=1)
    if decides == "bidding":
        return betting
    if decides == "ordago":
        return betting & ((np.asarray(mask)[:, ORDAGO] > 0) | facing_ordago(obs, mask))
    lance = np.asarray(obs)[:, OFFSETS["lance"]].argmax(axis=1)
    return betting & (lance == LANCE_NAMES.index(decides))


def facing_ordago(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
    """Which of these decisions answer a live órdago (quiero or no quiero, in the lance it was declared in)."""
    obs = np.asarray(obs)
    slot = np.minimum(obs[:, OFFSETS["lance"]].argmax(axis=1), len(SLOT_NAMES) - 1)   # punto: the fourth slot
    live = obs[:, OFFSETS["lance_ordago"]][np.arange(len(obs)), slot] > 0.5
    return live & (np.asarray(mask)[:, int(Action.QUIERO)] > 0)


def ordago_choices(obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8],
                   agent_actions: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
    """The learner's choices under ``learner_decides="ordago"``, for decisions :func:`learner_free` gave it.

    An órdago that must be answered is the learner's whole decision. Where one may be declared, the learner
    chooses only between ``agent_actions`` (what the probed agent's own policy chose there) and an órdago; where
    that policy chose the órdago itself there is nothing to choose and the decision stays the agent's.

    Returns:
        ``(learner, masks)``: which rows the learner decides, and the masks it decides them with (the legal
        actions of an answer; the agent's move and ``ORDAGO`` where it may declare one).
    """
    mask = np.asarray(mask)
    answer = facing_ordago(obs, mask)
    declare = ~answer & (np.asarray(agent_actions) != ORDAGO)
    narrowed = mask.copy()
    rows = np.flatnonzero(declare)
    narrowed[rows] = 0
    narrowed[rows, np.asarray(agent_actions)[rows]] = 1
    narrowed[rows, ORDAGO] = 1
    return answer | declare, narrowed


def restricted_probe(spec: str) -> tuple[str, str] | None:
    """``(decides, probed agent)`` when ``spec`` is the ``policy.pt`` of a ``mus exploit`` probe that decided only
    some decisions (``--lance L``, ``--only bidding``: its ``exploit.json`` says which, and whom it probed); None
    for any other spec (a full probe's policy, any other file or agent).

    Raises:
        ValueError: the report beside it is damaged or does not name the agent it probed.
    """
    if not spec.endswith(".pt") or not (report := Path(spec).parent / "exploit.json").is_file():
        return None
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        decides = data.get("learner_decides", "all")
    except (ValueError, AttributeError):
        raise ValueError(f"{report} is not a mus exploit report (damaged JSON)") from None
    if decides == "all":
        return None
    if not isinstance(data.get("agent"), str):
        raise ValueError(f"{report} is a probe that decided only {decides!r} but does not name the agent it probed, "
                         "who plays its other decisions; rerun the probe with this version's mus exploit")
    return decides, data["agent"]


class RestrictedAgent:
    """The learner where ``Args.learner_decides`` lets it decide, another agent (the opponent's own policy)
    everywhere else: how a restricted probe's policy plays, in training and in evaluation."""

    def __init__(self, learner: Any, proxy: Any, decides: str, name: str | None = None) -> None:
        if decides not in LEARNER_DECIDES:
            raise ValueError(f"decides must be one of {', '.join(LEARNER_DECIDES)}, got {decides!r}")
        self.learner, self.proxy, self.decides = learner, proxy, decides
        self.name = name or f"{getattr(learner, 'name', 'learner')}[{decides}]"
        #: Whether the learner or the proxy plays by game (:func:`agents.base.wants_rows`).
        self.wants_rows = wants_rows(learner) or wants_rows(proxy)

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """One action per row: the learner's where it decides (:func:`learner_free`), the proxy's elsewhere
        (under ``ordago``, the proxy moves first and the learner may replace its move by an órdago:
        :func:`ordago_choices`)."""
        return self.act_rows(obs, masks, rng, None)

    def act_rows(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], rng: np.random.Generator,
                 rows: TableRows | None) -> npt.NDArray[np.int64]:
        """:meth:`act_batch`, each row's identity ``rows`` passed on to the learner and the proxy."""
        obs, masks = np.asarray(obs), np.asarray(masks)

        def play(agent: Any, sel: npt.NDArray[np.int64], m: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
            return act_rows(agent, obs[sel], m, rng, rows.take(sel) if rows is not None else None)

        free = learner_free(obs, masks, self.decides)
        out = np.zeros(len(obs), dtype=np.int64)
        if self.decides == "ordago":
            proxy = ~facing_ordago(obs, masks)
            if proxy.any():
                out[proxy] = play(self.proxy, np.flatnonzero(proxy), masks[proxy])
            idx = np.flatnonzero(free)
            mine, narrowed = ordago_choices(obs[idx], masks[idx], out[idx])
            if mine.any():
                out[idx[mine]] = play(self.learner, idx[mine], narrowed[mine])
            return out
        if free.any():
            out[free] = play(self.learner, np.flatnonzero(free), masks[free])
        if (~free).any():
            out[~free] = play(self.proxy, np.flatnonzero(~free), masks[~free])
        return out

    def act(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
            rng: np.random.Generator) -> int:
        """One decision (:meth:`act_batch` on a batch of one)."""
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None], rng)[0])

    def __call__(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
                 rng: np.random.Generator) -> int:
        """Agents are plain callables too: the same as :meth:`act`."""
        return self.act(observation, action_mask, rng)
