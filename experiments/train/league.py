"""The league of :mod:`experiments.train.ppo`: who sits opposite the learner, and how the frozen members play.

* :class:`League`: per table, the opponent kind (``self``, a baseline or policy file, the ``exploiter``, a
  snapshot of the learner, a past exploiter) and which seats are the learner's, redrawn at every new game from
  ``league_mix`` (:func:`parse_mix`; a folder of ``mus exploit`` probes stands for its best responses:
  :func:`expand_probe_folders`); the pool of snapshots and the pool of past exploiters (``responses``);
  the frozen opponents' actions (:meth:`League.opponent_actions`);
  the learner's results against the league since the last log row (:attr:`League.recent`).
* :class:`SnapshotBank`: every snapshot of the pool in one batched forward pass.
* :func:`frozen_agent`: an ``agents.make_agent`` spec ready for a game of the run's config.
* the learner deciding only some of its decisions (``Args.learner_decides``, the probes of ``mus exploit``) is
  :mod:`experiments.train.restricted`; the league seats it where its learner is restricted.

The members, as the trainer (:mod:`experiments.train.ppo`) uses them:

* **A league** (:class:`~experiments.train.league.League`). On each table the learner plays one team (seats
  {0, 2} or {1, 3}, drawn at random at every new game) and the other team is an opponent drawn, per game, from
  ``league_mix``: ``self`` (the current policy: then all four seats are the learner's and both teams' decisions
  are trained), ``snapshot`` (a frozen past version of the learner, from a pool refreshed every
  ``snapshot_every`` updates), or a baseline agent (``rule``, ``equity``, ``random``, ``ordago``). Only the
  learner's decisions are trained.
* **An exploiter** (``exploiter`` in ``league_mix``, AlphaStar's "main exploiter"): a second network, of the
  learner's shape, that plays only against the learner on the tables where the league draws it, trained (own
  optimiser and buffer, the same PPO update) to beat it, so the learner meets an opponent that seeks out its
  current weaknesses, where baselines and snapshots only show it the old ones. It starts as a copy of the
  learner after the warm start and is reset to a fresh copy every ``exploiter_reset_every`` updates (0: never).
  Its result is logged (``exploiter_stones_per_hand``) and its policy written to ``exploiter.pt``.
* **Past exploiters join the league** (``responses`` in ``league_mix``, with ``exploiter_reset_every``): when
  the exploiter is reset, the outgoing one is frozen into a pool of past exploiters (the last ``pool_size``
  kept), which the league draws like snapshots. Each is an approximate best response to the learner of its
  time; keeping them as opponents is the step of PSRO (Lanctot et al., 2017, "A unified game-theoretic approach
  to multiagent reinforcement learning") in which a best response joins the population, so a weakness found
  once stays punished after the exploiter that found it has moved on.
* **Probes join the league** (a ``mus exploit`` output folder in ``league_mix``): the outer loop of PSRO, with
  strong best responses. ``mus exploit AGENT --seeds N --out PROBES`` trains best responses to a frozen
  ``AGENT``; ``mus train --warm-start AGENT --league-mix "self:0.7,PROBES:0.3"`` then trains on from the agent
  against them (the folder's share split among its probes,
  :func:`~experiments.train.league.expand_probe_folders`), and the next round probes the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from agents import TableRows, act_rows, is_team_spec, make_agent, observation_size, wants_rows
from agents.policy import masked_log_probs, sample_masked
from agents.signs import SilentAgent
from experiments.train.restricted import (
    LEARNER_DECIDES,
    RestrictedAgent,
    facing_ordago,
    learner_free,
    ordago_choices,
    restricted_probe,
)
from mus_env import MusConfig
from mus_env.observation import OBS_DIM, obs_dim

__all__ = ["BASELINES", "LEARNING_MEMBERS", "RECENT", "split_specs", "is_fixed_spec", "policy_obs_dim",
           "frozen_agent", "probe_policy_file", "probe_policies", "expand_probe_folders", "parse_mix",
           "check_league_args", "League", "SnapshotBank"]

#: Baseline agents the league and the evaluation may use.
BASELINES = ("rule", "equity", "random", "ordago")

#: League members that are not fixed agents: the learner itself, its snapshots, its exploiter and the past
#: exploiters (``responses``: each exploiter, when it is reset, joins this pool frozen, as a best response joins
#: the population in PSRO).
LEARNING_MEMBERS = ("self", "snapshot", "exploiter", "responses")

#: The learner's results against the league since the last log row (:attr:`League.recent`), all zero.
RECENT = {"games": 0, "learner_wins": 0.0, "learner_stones": 0.0, "hands": 0, "exploiter_stones": 0.0,
          "exploiter_hands": 0}


def split_specs(text: str) -> list[str]:
    """``"rule, equity"`` -> ``["rule", "equity"]``: the items of a comma-separated list, stripped, none empty."""
    return [s.strip() for s in text.split(",") if s.strip()]


def is_fixed_spec(name: str) -> bool:
    """A frozen agent the league and the evaluation can seat: a baseline, the shipped ``ppo``, a policy file
    (``*.pt`` from ``mus train``, ``*.zip`` from sb3-contrib), or a team mixture of them (``team:...``), as
    ``agents.make_agent`` reads them."""
    return name in BASELINES or name == "ppo" or name.endswith((".pt", ".zip")) or is_team_spec(name)


def policy_obs_dim(agent: Any) -> int | None:
    """The observation length a frozen policy agent reads (its network's input), None for the baselines (they
    read any observation): :func:`agents.observation_size`."""
    return observation_size(agent)


def frozen_agent(spec: str, config: MusConfig, agent: Any = None) -> Any:
    """``agents.make_agent(spec)`` (or ``agent``, that spec already built by the caller) ready to play games of
    ``config`` (league opponents and evaluation).

    The policy of a probe that decided only some decisions (``mus exploit --lance``/``--only``: an ``exploit.json``
    beside it says so) plays as it was trained: its network where it decided, the agent it probed elsewhere
    (:func:`restricted_probe`, :class:`RestrictedAgent`).

    A policy trained without señas plays a signals game silently (it never signs and sees no sign:
    :class:`agents.signs.SilentAgent`; ``TorchPolicyAgent`` does this itself). A policy trained with señas
    cannot play a game without them. The one check of a frozen agent's observation size: the league, the
    evaluation and the probes (``experiments.population.exploit``) all come here.

    Raises:
        ValueError: ``spec`` is a policy whose observation does not fit ``config``; the message says which
            ``--signals`` it needs. A restricted probe whose probed agent cannot be loaded here.
    """
    if agent is None:
        restricted = restricted_probe(spec)
        if restricted is not None:          # a one-lance probe plays as it was trained and measured
            decides, probed = restricted
            return RestrictedAgent(frozen_agent(spec, config, make_agent(spec)), frozen_agent(probed, config),
                                   decides, name=spec)
        agent = make_agent(spec)
    reads, game = policy_obs_dim(agent), obs_dim(config)
    if reads is None or reads == game:
        return agent
    if reads == OBS_DIM:
        return agent if hasattr(agent, "net") else SilentAgent(agent, obs_dim=OBS_DIM)
    trained = (getattr(agent, "config", None) or {}).get("signals")
    flag = trained if trained in ("truthful", "free") else "truthful or free"
    raise ValueError(f"{spec!r} reads observations of {reads} entries (a policy trained with señas) but this game "
                     f"has signals={config.signals!r} ({game} entries): play it in a game with señas, --signals "
                     f"{flag}, or choose another agent")


def probe_policy_file(folder: Path) -> Path:
    """The policy file of a ``mus exploit`` probe folder whose gain its ``exploit.json`` measured: ``policy.pt``, or
    ``last_policy.pt`` where one is there (a probe written before probes kept their measured network as
    ``policy.pt``: its trainer had made its best training evaluation ``policy.pt``)."""
    last = Path(folder) / "last_policy.pt"
    return last if last.is_file() else Path(folder) / "policy.pt"


def probe_policies(folder: Path) -> list[Path]:
    """The best responses a ``mus exploit`` output folder holds: the policy file beside each probe's
    ``exploit.json`` (:func:`probe_policy_file`; one probe, or ``--seeds N``'s ``<start>-seed<seed>`` subfolders),
    sorted. A probe that decided only some decisions (``--lance``, ``--only bidding``) plays in the league as it was
    trained, the agent it probed making its other decisions (:func:`frozen_agent`).

    Raises:
        ValueError: the folder holds no finished probe (no ``exploit.json`` with a ``policy.pt`` beside it), or a
            report that is damaged or (for a restricted probe) does not name the agent it probed.
    """
    found = []
    for report in sorted(Path(folder).rglob("exploit.json")):
        policy = probe_policy_file(report.parent)
        if not policy.is_file():
            continue
        try:
            restricted_probe(str(policy))
        except ValueError as e:
            raise ValueError(f"league_mix: {e}") from None
        found.append(policy)
    if not found:
        raise ValueError(f"league_mix: {str(folder)!r} is a folder but holds no finished mus exploit probe "
                         "(exploit.json with policy.pt beside it); give a policy file *.pt or a probe's --out folder")
    return found


def expand_probe_folders(text: str) -> str:
    """A ``league_mix`` with each folder of ``mus exploit`` probes replaced by its best responses
    (:func:`probe_policies`), the folder's share split equally among them; other entries are kept as written.

    ``"self:0.7,runs/probes:0.3"`` with two probes in ``runs/probes`` becomes
    ``"self:0.7,runs/probes/agent-seed0/policy.pt:0.15,runs/probes/agent-seed1/policy.pt:0.15"``: one step of
    PSRO (best responses to the agent join the population it trains against). The expanded text is what a run
    records (``args.json``), so a resume plays the same opponents even if the folder gains probes later.
    """
    items = []
    for item in split_specs(text):
        name, share = _mix_entry(item)
        if name in LEARNING_MEMBERS or is_fixed_spec(name) or not Path(name).is_dir():
            items.append(item)
            continue
        files = probe_policies(Path(name))
        w = _share_value(name, share)
        items += [f"{f}:{w / len(files):g}" for f in files]
    return ",".join(items)


def _mix_entry(item: str) -> tuple[str, str]:
    """``"rule:0.2"`` -> ``("rule", "0.2")``; ``"rule"`` -> ``("rule", "")`` (a path may hold colons: the last one
    splits)."""
    name, sep, share = item.rpartition(":")
    return (name.strip(), share) if sep else (item.strip(), "")


def _share_value(name: str, share: str) -> float:
    """The number of an entry's share text (1 when none is written); ``ValueError`` names the entry."""
    try:
        return float(share) if share else 1.0
    except ValueError:
        raise ValueError(f"league_mix: share of {name!r} must be a number, got {share!r}") from None


def parse_mix(text: str) -> dict[str, float]:
    """``"self:0.4,snapshot:0.2,rule:0.4"`` -> normalised shares; ``ValueError`` names a bad entry."""
    mix: dict[str, float] = {}
    for item in split_specs(text):
        name, share = _mix_entry(item)
        if name not in LEARNING_MEMBERS and not is_fixed_spec(name) and Path(name).is_dir():
            raise ValueError(f"league_mix: {name!r} is a folder: make_args and mus train replace a folder of mus "
                             "exploit probes by its best responses (expand_probe_folders); Args takes files")
        if name not in LEARNING_MEMBERS and not is_fixed_spec(name):
            raise ValueError(f"league_mix: unknown opponent {name!r} (use self, snapshot, exploiter, responses, "
                             f"{', '.join(BASELINES)}, "
                             "ppo, a policy file *.pt / *.zip, or a folder of mus exploit probes)")
        w = _share_value(name, share)
        if w < 0 or not np.isfinite(w):
            raise ValueError(f"league_mix: share of {name!r} must be >= 0, got {w}")
        mix[name] = mix.get(name, 0.0) + w
    total = sum(mix.values())
    if total <= 0:
        raise ValueError(f"league_mix {text!r} has no opponent with a positive share")
    return {k: v / total for k, v in mix.items() if v > 0}


def check_league_args(league_mix: str, eval_opponents: str, learner_decides: str, exploiter_reset_every: int) -> None:
    """Check the league's settings of ``experiments.train.ppo.Args`` together; ``ValueError`` names the bad one."""
    mix = parse_mix(league_mix)
    for spec in split_specs(eval_opponents):
        if not is_fixed_spec(spec):
            raise ValueError(f"Args.eval_opponents: {spec!r} is not a baseline ({', '.join(BASELINES)}), "
                             "ppo or a policy file")
    if learner_decides not in LEARNER_DECIDES:
        raise ValueError(f"Args.learner_decides must be one of {', '.join(LEARNER_DECIDES)}, "
                         f"got {learner_decides!r}")
    if learner_decides != "all" and (set(LEARNING_MEMBERS) & set(mix)):
        raise ValueError("Args.learner_decides: the decisions the learner does not make are played by the "
                         "opposing agent's own policy, so the league_mix must hold frozen agents only "
                         f"(no self, snapshot or exploiter), got {league_mix!r}")
    if exploiter_reset_every and "exploiter" not in mix:
        raise ValueError(f"Args.exploiter_reset_every={exploiter_reset_every} needs an exploiter in the "
                         f"league_mix (e.g. 'exploiter:0.25'), got {league_mix!r}")
    if "responses" in mix and not ("exploiter" in mix and exploiter_reset_every):
        raise ValueError("league_mix: 'responses' (past exploiters) needs an exploiter that is reset, so that "
                         "past ones exist: add 'exploiter' to the league_mix and set --exploiter-reset-every, "
                         f"got {league_mix!r} with exploiter_reset_every={exploiter_reset_every}")


class League:
    """Who sits opposite the learner on each table, redrawn at every new game.

    ``kind[b]`` indexes :attr:`members`: 0 is ``self`` (the current policy on both teams), then the
    baselines of the mix, then the ``exploiter`` when the mix has one (:attr:`exploiter_kind`), then one entry
    per snapshot of the pool (from :attr:`first_snapshot`), then one per past exploiter of :attr:`responses`.
    Snapshots and past exploiters are all played by one :class:`SnapshotBank`. ``learner[b, s]`` says which seats
    are the learner's. :attr:`recent` counts the learner's games and hands against the other kinds since the last log
    row (:meth:`count_games`, :meth:`count_hands`, :meth:`take_recent`).
    """

    def __init__(self, mix: dict[str, float], pool_size: int, num_tables: int,
                 config: MusConfig | None = None, agents: Mapping[str, Any] | None = None) -> None:
        self.mix = mix
        self.pool_size = pool_size
        # the baselines in a fixed order, then any other frozen agents (policy files) in the mix's order
        self.baselines = [name for name in BASELINES if name in mix] + \
            [name for name in mix if name not in (*LEARNING_MEMBERS, *BASELINES)]
        self.has_exploiter = "exploiter" in mix
        #: kind of the exploiter's tables (-1: no exploiter), and of the pool's first snapshot
        self.exploiter_kind = 1 + len(self.baselines) if self.has_exploiter else -1
        self.first_snapshot = 1 + len(self.baselines) + int(self.has_exploiter)
        given = agents or {}                           # members the caller built (a probe's frozen agent)
        self.agents = {name: frozen_agent(name, config or MusConfig(), given.get(name)) for name in self.baselines}
        #: Whether a frozen agent plays by game: the rollout then passes every table's identity
        #: (``VectorMusEnv.table_rows``) to :meth:`opponent_actions`.
        self.wants_rows = any(wants_rows(a) for a in self.agents.values())
        self.pool: list[dict[str, Any]] = []           # snapshot state dicts, oldest first
        self.pool_ids: list[int] = []                  # the update each snapshot was taken at
        self.responses: list[dict[str, Any]] = []      # past exploiters' state dicts, oldest first (pool_size kept)
        self.response_ids: list[int] = []              # the update each past exploiter was frozen at
        self.kind = np.zeros(num_tables, dtype=np.int64)
        self.learner = np.ones((num_tables, 4), dtype=bool)
        self.recent = dict(RECENT)
        self.bank: SnapshotBank | None = None          # the pool, stacked for batched play (built on use)

    @property
    def members(self) -> list[str]:
        """The name of each kind: ``self``, the frozen agents, ``exploiter``, ``snapshot@<update>``."""
        return ["self", *self.baselines, *(["exploiter"] if self.has_exploiter else []),
                *(f"snapshot@{u}" for u in self.pool_ids), *(f"response@{u}" for u in self.response_ids)]

    def draw(self, tables: npt.NDArray[np.int64], rng: np.random.Generator) -> None:
        """New opponents (and learner team) for the games starting on ``tables``."""
        if not len(tables):
            return
        names = list(self.mix)
        shares = np.array([self.mix[n] for n in names])
        pick = rng.choice(len(names), size=len(tables), p=shares)
        team = rng.integers(0, 2, len(tables))
        snap = rng.integers(0, max(len(self.pool), 1), len(tables))
        if "responses" in self.mix:        # drawn only where the mix has them: runs without are unchanged
            resp = rng.integers(0, max(len(self.responses), 1), len(tables))
        kind = np.zeros(len(tables), dtype=np.int64)
        for j, name in enumerate(names):
            sel = pick == j
            if name == "snapshot":
                kind[sel] = np.where(len(self.pool) > 0, self.first_snapshot + snap[sel], 0)
            elif name == "exploiter":
                kind[sel] = self.exploiter_kind
            elif name == "responses":
                kind[sel] = np.where(len(self.responses) > 0, self.first_snapshot + len(self.pool) + resp[sel], 0)
            elif name != "self":
                kind[sel] = 1 + self.baselines.index(name)
        self.kind[tables] = kind
        seats = np.arange(4)
        self.learner[tables] = (seats[None, :] % 2 == team[:, None]) | (kind[:, None] == 0)

    def add_snapshot(self, state: dict[str, Any], update: int) -> None:
        """Add a frozen copy of the learner; past ``pool_size`` the oldest leaves (tables that faced it face
        the next oldest until their game ends)."""
        self._add_frozen(self.pool, self.pool_ids, state, update)

    def add_response(self, state: dict[str, Any], update: int) -> None:
        """Add a past exploiter (frozen when it is reset) to :attr:`responses`; past ``pool_size`` the oldest
        leaves (tables that faced it face the next oldest until their game ends)."""
        self._add_frozen(self.responses, self.response_ids, state, update)

    def _add_frozen(self, states: list[dict[str, Any]], ids: list[int], state: dict[str, Any], update: int) -> None:
        """Append to one pool (``states`` and their ``ids``), drop its oldest past ``pool_size``, and keep every
        table's opponent (:meth:`_keep_opponents`)."""
        before = self._frozen_members()
        states.append(state)
        ids.append(update)
        if len(states) > self.pool_size:
            states.pop(0)
            ids.pop(0)
        self._keep_opponents(before)

    def _frozen_members(self) -> list[tuple[str, int]]:
        """The snapshots and past exploiters in kind order, as (family, update)."""
        return [("snapshot", u) for u in self.pool_ids] + [("response", u) for u in self.response_ids]

    def _keep_opponents(self, before: list[tuple[str, int]]) -> None:
        """After the pools changed (``before``: :meth:`_frozen_members` until then): each table keeps its snapshot
        or past exploiter (its kind follows it to its new index); where that one left, the table faces the oldest
        left of the same family."""
        if not before:
            return
        after = self._frozen_members()
        index = {member: i for i, member in enumerate(after)}
        oldest: dict[str, int] = {}
        for i, (family, _) in enumerate(after):
            oldest.setdefault(family, i)
        first = self.first_snapshot
        remap = first + np.array([index.get(m, oldest.get(m[0], 0)) for m in before], dtype=np.int64)
        on = self.kind >= first
        self.kind[on] = remap[self.kind[on] - first]

    def exploiter_seats(self) -> npt.NDArray[np.bool_]:
        """``(B, 4)`` True for the seats the exploiter plays (the opponents' seats of its tables)."""
        return (self.kind == self.exploiter_kind)[:, None] & ~self.learner

    def snapshot_bank(self) -> SnapshotBank:
        """The snapshots and past exploiters stacked for one batched forward pass (rebuilt when they change)."""
        key = tuple(self._frozen_members())
        if self.bank is None or self.bank.key != key:
            self.bank = SnapshotBank(self.pool + self.responses, key)
        return self.bank

    def learner_turns(self, rows: npt.NDArray[np.int64], obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8],
                      decides: str, rng: np.random.Generator, actions: npt.NDArray[np.int64],
                      table_rows: TableRows | None = None,
                      ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int8]]:
        """Of the learner's tables ``rows``, under ``Args.learner_decides`` ``decides``: those it decides, those the
        opposing agent plays for it (untrained), and the masks it decides with. Under ``ordago`` the agent moves
        first where an órdago may be declared (into ``actions``) and the learner only chooses between that move
        and an órdago (:func:`ordago_choices`); where the agent chose the órdago itself, the decision stays its own
        (in neither list: ``actions`` holds it)."""
        if decides == "all":
            return rows, rows[:0], mask[rows]
        free = learner_free(obs[rows], mask[rows], decides)
        mine, proxy = rows[free], rows[~free]
        if decides != "ordago":
            return mine, proxy, mask[mine]
        ask = mine[~facing_ordago(obs[mine], mask[mine])]
        if ask.size:
            self.opponent_actions(ask, obs, mask, rng, actions, table_rows)
        chosen, narrowed = ordago_choices(obs[mine], mask[mine], actions[mine])
        return mine[chosen], proxy, narrowed[chosen]

    def opponent_actions(self, rows: npt.NDArray[np.int64], obs: npt.NDArray[np.float32],
                         mask: npt.NDArray[np.int8], rng: np.random.Generator,
                         actions: npt.NDArray[np.int64], table_rows: TableRows | None = None) -> None:
        """Fill ``actions[rows]`` with the frozen opponents' choices on tables ``rows`` (``obs``, ``mask``: all
        tables' current views): each frozen agent on its tables, and all snapshots in one batched forward pass.
        ``table_rows``: every table's identity (``VectorMusEnv.table_rows()``), needed when a frozen agent plays by
        game (:attr:`wants_rows`)."""
        kinds = self.kind[rows]
        nb = len(self.baselines)
        first = self.first_snapshot
        if ((kinds == 0) | (kinds == self.exploiter_kind)).any():
            raise AssertionError("a 'self' or 'exploiter' table reached the frozen opponents")
        for kind in np.unique(kinds[kinds <= nb]):
            sel = rows[kinds == kind]
            agent = self.agents[self.baselines[kind - 1]]
            actions[sel] = act_rows(agent, obs[sel], mask[sel], rng,
                                    table_rows.take(sel) if table_rows is not None else None)
        snap = kinds >= first
        if snap.any():
            sel = rows[snap]
            probs = self.snapshot_bank().probabilities(obs[sel], mask[sel], kinds[snap] - first)
            actions[sel] = sample_masked(probs, rng)

    def count_games(self, fin: npt.NDArray[np.int64], winner: npt.NDArray[np.int64]) -> None:
        """Count the learner's results in the games just ended on tables ``fin`` (``winner``: every table's
        winning team), except self-play games (50/50 by construction); call before :meth:`draw`."""
        vs = fin[self.kind[fin] != 0]
        if vs.size:
            learner_team = np.argmax(self.learner[vs], axis=1) % 2
            self.recent["games"] += int(vs.size)
            self.recent["learner_wins"] += float((winner[vs] == learner_team).sum())

    def count_hands(self, hand: npt.NDArray[np.int64], rewards: npt.NDArray[np.float32]) -> None:
        """Count the learner's stones in the hands just ended on tables ``hand`` (``rewards``: ``(B, 4)`` stones
        per seat), and the exploiter's on its tables, except in self-play."""
        vs = hand[self.kind[hand] != 0]
        if vs.size:
            learner_seat = np.argmax(self.learner[vs], axis=1)
            stones = rewards[vs, learner_seat]
            self.recent["hands"] += int(vs.size)
            self.recent["learner_stones"] += float(stones.sum())
            ex = self.kind[vs] == self.exploiter_kind
            self.recent["exploiter_hands"] += int(ex.sum())
            self.recent["exploiter_stones"] -= float(stones[ex].sum())

    def take_recent(self) -> dict[str, Any]:
        """The counts of :attr:`recent` as they are, and start new ones from zero."""
        recent, self.recent = self.recent, dict(RECENT)
        return recent


class SnapshotBank:
    """The league's frozen snapshots, stacked: one batched forward pass plays every snapshot's tables.

    Each snapshot's rows are gathered into a zero-padded block ``(K, G, obs_dim)`` (K snapshots, G the largest
    group) and pushed through the stacked layers with ``torch.baddbmm``, so a step costs one pass instead of
    one per snapshot; the probabilities equal each snapshot's own ``PolicyNet`` (tested).
    """

    def __init__(self, states: list[dict[str, Any]], key: tuple[Any, ...] = ()) -> None:
        self.key = key
        self.layers: list[tuple[torch.Tensor, torch.Tensor]] = []
        if not states:
            return
        names = sorted({k.rsplit(".", 1)[0] for k in states[0] if k.startswith("trunk.")},
                       key=lambda n: int(n.split(".")[1])) + ["policy_head"]
        for name in names:
            w = torch.stack([st[f"{name}.weight"].detach().float() for st in states]).transpose(1, 2).contiguous()
            b = torch.stack([st[f"{name}.bias"].detach().float() for st in states])[:, None, :].contiguous()
            self.layers.append((w, b))

    def probabilities(self, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8],
                      which: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """Masked action probabilities of row ``i`` under snapshot ``which[i]``."""
        k = len(self.layers[0][0])
        which = np.asarray(which, dtype=np.int64)
        order = np.argsort(which, kind="stable")
        counts = np.bincount(which, minlength=k)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pos = np.empty(len(which), dtype=np.int64)
        pos[order] = np.arange(len(which)) - np.repeat(starts, counts)
        x = torch.zeros((k, int(counts.max()), obs.shape[1]), dtype=torch.float32)
        x[torch.from_numpy(which), torch.from_numpy(pos)] = torch.from_numpy(np.ascontiguousarray(obs))
        with torch.no_grad():
            for i, (w, b) in enumerate(self.layers):
                x = torch.baddbmm(b, x, w)
                if i < len(self.layers) - 1:
                    x = torch.relu(x)
            logits = x[torch.from_numpy(which), torch.from_numpy(pos)]
            logp = masked_log_probs(logits, torch.from_numpy(np.ascontiguousarray(mask)))
        return logp.exp().numpy()
