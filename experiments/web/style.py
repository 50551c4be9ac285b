"""*Your style* in ``mus serve``: the bidding profile of a finished game's seat, or of every finished game of the
records folder for one player name, beside an agent's profile.

The counts are :func:`experiments.evaluate.style_play.counts_from_record`'s (the record replayed, each decision read
from the seat's own observation) and the rates :class:`experiments.evaluate.style_profile.StyleProfile`'s, the
same code as ``mus style --records``; :func:`summary` picks the page's main rates per lance with that module's
own functions. Only finished records are read (a game in progress would tell its hands' strengths).

An agent's profile is read from ``<runs>/style/<spec>.style.json`` when ``mus style`` wrote one there (its default
out folder), else computed once on :data:`AGENT_DEALS` deals of the ``v1`` deal set against :data:`AGENT_FIELD`
and kept in memory (:class:`AgentStyles`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.evaluate.style import LANCES, SITUATIONS, StyleCounts
from experiments.evaluate.style_play import SELF, counts_from_record, play_style, style_deals
from experiments.evaluate.style_profile import (
    AGGRESSIVE,
    I_QUIERO,
    ProfileError,
    StyleProfile,
    aggression_factor,
    load_profile,
    mus_rates,
    pooled,
    role_rates,
)
from experiments.web.store import PathRefused, list_records, safe_path
from mus_env.records import RecordError, load_record

__all__ = ["AGENT_DEALS", "AGENT_FIELD", "AGENT_SEED", "summary", "profile_view", "seat_counts", "player_counts",
           "AgentStyles"]

#: Deals (single hands, each played twice, seats swapped) of an agent's profile computed on demand.
AGENT_DEALS = 300
#: Its field: ``rule`` and the agent itself.
AGENT_FIELD = ("rule", SELF)
#: Its deals' and agents' seed (``mus style``'s default).
AGENT_SEED = 23
_PLAIN = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def summary(counts: StyleCounts) -> dict[str, Any]:
    """The page's main rates: per lance, ``bluff`` (an opening bet or órdago with a weak hand, per weak opening
    decision), ``fold`` (no quiero facing a numeric bet, where legal), ``aggression`` (the aggression factor over
    every situation, both sides) and its ``decisions``; and ``cut``, the mus cut rate over every hand class."""
    out: dict[str, Any] = {"lances": {}}
    for li, lance in enumerate(LANCES):
        n, k, _ = pooled(counts, li, SITUATIONS)
        out["lances"][lance] = {
            "decisions": int(n.sum()),
            "bluff": role_rates(*pooled(counts, li, ("open",)), "open")["summary"]["bluff"],
            "fold": role_rates(*pooled(counts, li, ("answer",)), "answer")["summary"]["fold"],
            "aggression": aggression_factor(int(k[:, AGGRESSIVE].sum()), int(k[:, I_QUIERO].sum())),
        }
    out["cut"] = mus_rates(counts)["cut"]["all"]
    return out


def profile_view(counts: StyleCounts, meta: dict[str, Any]) -> dict[str, Any]:
    """What the API answers of one profile: ``summary`` (:func:`summary`) and ``profile``, the whole profile as
    ``mus style`` writes it (:meth:`StyleProfile.to_dict`: every rate, and the counts)."""
    return {"summary": summary(counts), "profile": StyleProfile(counts, meta).to_dict()}


def seat_counts(record: dict[str, Any], seat: int) -> StyleCounts:
    """The counts of one seat of a finished record (the caller checks that it is finished)."""
    return counts_from_record(record, seats=[seat])[0]


def player_counts(root: Path, player: str) -> tuple[StyleCounts, list[str]]:
    """The counts of every decision of the player named ``player`` in the finished records under ``root`` (the
    records list's, :func:`~experiments.web.store.list_records`: no game in progress), and those records' names."""
    counts, names = StyleCounts(), []
    for entry in list_records(root):
        if not entry["over"] or player not in entry["players"]:
            continue
        try:
            record = load_record(safe_path(root, entry["name"], (".json",)))
            if record.get("over") is not True:             # changed since it was listed
                continue
            counts += counts_from_record(record, player=player)[0]
        except (PathRefused, RecordError, ValueError):     # gone, or a record that does not replay: left out
            continue
        names.append(entry["name"])
    return counts, names


class AgentStyles:
    """The agents' profiles, each read or computed once (one at a time) and kept."""

    def __init__(self, runs: Path, agent_of: Callable[[str], Any]) -> None:
        self.runs = runs
        self.agent_of = agent_of                   # the store's: refuses a spec that is not offered
        self._cache: dict[str, dict[str, Any]] = {}
        self._guard = threading.Lock()

    def get(self, spec: str) -> dict[str, Any]:
        """``spec``'s :func:`profile_view` with ``source``: ``"file"`` (and its path) or ``"computed"``.

        Raises:
            TableError: ``spec`` is not an offered agent.
        """
        agent = self.agent_of(spec)
        with self._guard:
            if spec not in self._cache:
                self._cache[spec] = self._read(spec) or self._compute(spec, agent)
            return self._cache[spec]

    def _read(self, spec: str) -> dict[str, Any] | None:
        if not _PLAIN.match(spec):
            return None
        try:
            path = safe_path(self.runs, f"style/{spec}.style.json")
            prof = load_profile(path)
        except (PathRefused, ProfileError):
            return None
        return {**profile_view(prof.counts, prof.meta), "source": "file", "file": f"style/{spec}.style.json"}

    def _compute(self, spec: str, agent: Any) -> dict[str, Any]:
        deals, deal_set = style_deals("v1", AGENT_DEALS, AGENT_SEED)
        counts, _ = play_style(agent, deals, AGENT_FIELD, spec=spec, name=spec, seed=AGENT_SEED)
        meta = {"agent": spec, "spec": spec, "field": list(AGENT_FIELD), "deal_set": deal_set, "deals": len(deals),
                "seed": AGENT_SEED}
        return {**profile_view(counts, meta), "source": "computed"}
