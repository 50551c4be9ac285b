"""Where a bidding-style profile's counts (:class:`~experiments.evaluate.style.StyleCounts`) come from: an agent
played on a deal set, or the seats of a game record.

* :class:`StyleRecorder` wraps an agent's ``act_batch`` and counts each decision it makes
  (:func:`~experiments.evaluate.style.decisions_of`), the agent playing exactly as it would unwrapped.
* :func:`play_style` plays an agent on a versioned deal set (:data:`STYLE_DEAL_SETS`, single hands from 0-0 or
  from random scores, each deal twice with the seats swapped) against a field (:data:`DEFAULT_FIELD`: ``rule``,
  ``equity`` and itself), recording its decisions only; with signals on in the config, its señas too.
* :func:`counts_from_record` rebuilds the same counts from a JSON hand record (:mod:`mus_env.records`) by replaying
  it on :class:`~mus_env.MusGame` (a record of a game with señas holds its sign decisions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import Agent, TableRows, act_rows, make_agent
from experiments.evaluate.deals import DealSet, make_deals
from experiments.evaluate.duplicate import play_pair
from experiments.evaluate.style import Decisions, StyleCounts, decisions_of
from mus_env import MusConfig, MusGame
from mus_env.actions import ENVIDO_ACTIONS, ENVIDO_BASE
from mus_env.records import replay

__all__ = ["STYLE_DEAL_SETS", "DEFAULT_FIELD", "SELF", "StyleRecorder", "style_deals", "field_members", "play_style",
           "counts_from_record"]

#: Versioned deal sets of the profiles: ``(seed, deals)``; deals are ``make_deals(deals, seed, target)``, played
#: as single hands from 0-0 (or from random scores: :func:`style_deals`), each twice with the seats swapped.
STYLE_DEAL_SETS: dict[str, tuple[int, int]] = {"v1": (23, 20_000)}
#: The field word for the profiled agent itself (a second, unrecorded copy plays the other team).
SELF = "self"
#: The default field: two sound bidders and the agent itself.
DEFAULT_FIELD = ("rule", "equity", SELF)


class StyleRecorder(Agent):
    """An agent that plays as ``agent`` and counts every decision it makes (:attr:`counts`).

    Args:
        agent: the agent to record; its ``act_batch`` gets the same observations, masks and generator, so the
            recorded agent plays exactly as it would unwrapped.
        keep_rows: also keep each decision's :class:`Decisions` row (:meth:`rows`; for tests and studies).
    """

    def __init__(self, agent: Agent, keep_rows: bool = False) -> None:
        self.agent = agent
        self.name = agent.name
        self.counts = StyleCounts()
        self.keep_rows = bool(keep_rows)
        self._rows: list[Decisions] = []

    @property
    def wants_rows(self) -> bool:  # type: ignore[override]
        """As the recorded agent: one that plays by game still gets each row's identity."""
        return bool(getattr(self.agent, "wants_rows", False))

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return self.act_rows(obs, masks, rng, None)  # type: ignore[arg-type]

    def act_rows(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], rng: np.random.Generator,
                 rows: TableRows | None) -> npt.NDArray[np.int64]:
        actions = act_rows(self.agent, obs, masks, rng, rows)
        d = decisions_of(obs, masks, actions)
        self.counts.add(d)
        if self.keep_rows:
            self._rows.append(d)
        return actions

    def rows(self) -> Decisions:
        """Every decision recorded so far (``keep_rows=True``), in order."""
        return Decisions.concat(self._rows)

    def __repr__(self) -> str:
        return f"StyleRecorder({self.agent!r})"


def style_deals(deal_set: str = "v1", deals: int | None = None, seed: int | None = None,
                target: int = 40, random_scores: bool = False) -> tuple[DealSet, str]:
    """The deal set of a profile and its name: ``deal_set`` (:data:`STYLE_DEAL_SETS`) at its own size and seed,
    or ``"<deal_set>-custom"`` when ``deals`` or ``seed`` differ; with ``random_scores`` each deal starts from
    scores drawn uniformly in ``0 .. target - 1`` (so the score situations are met) and the name ends in
    ``"-scores"``.

    Raises:
        ValueError: an unknown deal set or fewer than one deal.
    """
    if deal_set not in STYLE_DEAL_SETS:
        raise ValueError(f"deal_set must be one of {', '.join(STYLE_DEAL_SETS)}, got {deal_set!r}")
    set_seed, n = STYLE_DEAL_SETS[deal_set]
    deals = n if deals is None else int(deals)
    seed = set_seed if seed is None else int(seed)
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    name = (deal_set if (deals, seed) == (n, set_seed) else f"{deal_set}-custom") + ("-scores" if random_scores else "")
    return make_deals(deals, seed, target, random_scores=random_scores), name


def field_members(field_specs: Iterable[str | Agent], spec: str | None = None) -> list[str | Agent]:
    """The field as played: a spec equal to ``spec`` is :data:`SELF`, and each member plays once (first
    place kept)."""
    out: list[str | Agent] = []
    for opp in field_specs:
        opp = SELF if isinstance(opp, str) and spec is not None and opp == spec else opp
        if opp not in out:
            out.append(opp)
    return out


def play_style(agent: Agent, deals: DealSet, field_specs: Iterable[str | Agent] = DEFAULT_FIELD, *,
               spec: str | None = None, name: str | None = None, config: MusConfig | None = None, seed: int = 0,
               keep_rows: bool = False,
               progress: Callable[[int], None] | None = None,
               log: Callable[[str], None] | None = None) -> tuple[StyleCounts, Decisions | None]:
    """Play ``agent`` in duplicate against each member of the field on ``deals`` and count its decisions.

    Args:
        agent: the profiled agent.
        deals: the deal set (single hands; each deal twice, seats swapped).
        field_specs: the opponents: ``make_agent`` specs, agents, or :data:`SELF` (the agent itself, unrecorded
            on the other team; with ``spec`` given, an opponent equal to it means the same).
        spec: the agent's spec, to read a field member equal to it as :data:`SELF`.
        name: the agent's name in the matches (default: its ``name``).
        config: the ruleset.
        seed: the agents' seed of every match.
        keep_rows: also return every decision's row.
        progress: called with the deals completed (``len(deals)`` per field member in all).
        log: called with one line per field member played.

    Returns:
        The counts, and the decisions' rows (None unless ``keep_rows``).
    """
    rec = StyleRecorder(agent, keep_rows=keep_rows)
    name = name or agent.name
    for opp in field_members(field_specs, spec):
        if opp == SELF:
            other, label = agent, SELF
        elif isinstance(opp, str):
            other, label = make_agent(opp), opp
        else:
            other, label = opp, opp.name
        r = play_pair(rec, other, deals, mode="hands", config=config, seed=seed,
                      names=(name, f"{label} (field)"), progress=progress, idle_tables="first_legal")
        if log is not None:
            log(f"{name} vs {label}: {len(r.hand_diff):,} deals, {r.mean_diff()[0]:+.3f} stones/hand")
    return rec.counts, (rec.rows() if keep_rows else None)


def counts_from_record(record: dict[str, Any], seats: Iterable[int] | None = None, player: str | None = None,
                       keep_rows: bool = False) -> tuple[StyleCounts, Decisions | None]:
    """The counts of the decisions made at some seats of a JSON hand record (:mod:`mus_env.records`).

    The record is first replayed and checked (:func:`mus_env.records.replay`); then it is played again on
    :class:`~mus_env.MusGame` from its first deal, and before each of its non-automatic actions made at one of
    the seats, that seat's observation and legal-action mask are read, as an agent saw them.

    Args:
        record: a record (:func:`mus_env.records.load_record`).
        seats: absolute seats whose decisions count.
        player: or the name of a player (``record["players"]``): the seats it sat at.
        keep_rows: also return the decisions' rows.

    Raises:
        ValueError: neither or both of ``seats`` and ``player``, an unknown player, a seat outside 0..3;
            :class:`mus_env.records.RecordError` for a record that does not replay.
    """
    if (seats is None) == (player is None):
        raise ValueError("give the seats or the player whose decisions count (one of the two)")
    if player is not None:
        names = {int(k): v for k, v in record.get("players", {}).items()}
        chosen = {s for s, v in names.items() if v == player}
        if not chosen:
            raise ValueError(f"player {player!r} sat at no seat of the record (players: {names or 'none named'})")
    else:
        chosen = {int(s) for s in seats}  # type: ignore[union-attr]
        if not chosen <= {0, 1, 2, 3}:
            raise ValueError(f"seats must be in 0..3, got {sorted(chosen)}")
    cfg = replay(record).config                       # checked; the config as the game plays it
    game = MusGame.from_deck(record["deck"], record["mano"], tuple(record["scores"]), cfg, record["seed"])
    events = [e for h in record["hands"] for e in h["actions"]] + list(record["pending_actions"])
    obs, masks, actions = [], [], []
    for seat, action, amount, auto in events:
        if auto:
            continue
        if seat in chosen:
            obs.append(game.observe(seat))
            masks.append(game.legal_action_mask())
            actions.append(action)
        if action in ENVIDO_ACTIONS and amount and amount != cfg.bet_sizes[action - ENVIDO_BASE]:
            game.step_envido(amount)
        else:
            game.step(action)
    counts = StyleCounts()
    if not actions:
        return counts, (Decisions.concat([]) if keep_rows else None)
    d = decisions_of(np.stack(obs), np.stack(masks), np.array(actions))
    counts.add(d)
    return counts, (d if keep_rows else None)
