"""A team's mixed strategy: :class:`TeamMixtureAgent` draws one member per game, and both partners play it.

In a partnership game a team's mixed strategy is a draw made before play, known to both partners and hidden
from the rivals (an ex-ante correlated team strategy, as in TMECor): at the start of each game (or, as an option,
of each hand) the team draws one of its members with probability its share, and both partners play that member
until the game (hand) ends. Averaging the members' action probabilities at every decision
(:class:`agents.mixture.MixtureAgent`) is a different, weaker object: it loses the correlation between partners
and is not the average strategy.

One :class:`TeamMixtureAgent` object seated at both partners' seats plays this. It plays by game
(``wants_rows = True``, :mod:`agents.base`): the harness tells it each row's table, game, hand and seat
(:class:`mus_env.rows.TableRows`), and the draw is a pure function of the agent's own ``seed`` and the game's
identity (table, game serial, the hand for a per-hand draw, the team), through the counter-based hash of
:func:`mus_env.shuffle.event_hash`. So

* both partners of a team, and every decision of the game, get the same member;
* the draw uses no generator that the rivals share: the rivals' observations and the harness's ``rng`` carry
  nothing of it (the members act with a generator of the team's own, derived from ``seed``, the rows and the
  harness generator's state, which it reads but never advances);
* the same seeds replay the same games, and the members' frequencies over many games are their shares.

Rows are grouped by drawn member and each member plays its rows in one ``act_batch`` (or ``act_rows``) call.

Spec (:func:`agents.make_agent`): ``team:MEMBER=SHARE+MEMBER=SHARE+...`` draws per game, ``team-hand:...`` per
hand; each member is any agent spec without a ``+`` (``ppo``, ``rule``, ``runs/a/policy.pt``, ``my_bot.py:MyBot``),
its share a number > 0 after the last ``=`` (1 when none is written; shares are normalised), and an item ``seed=N``
sets the team's seed (default 0). No comma, so a team is one item of the commands' comma-separated agent lists
(``--agents``, a league mix).

Example:
    >>> from agents import make_agent
    >>> team = make_agent("team:rule=0.4+random=0.6")
    >>> team.shares.round(2).tolist()
    [0.4, 0.6]
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mus_env.rows import TableRows
from mus_env.shuffle import event_hash

from .base import Agent, act_rows

__all__ = ["TeamMixtureAgent", "parse_team_spec", "TEAM_PREFIX", "TEAM_HAND_PREFIX", "DRAWS"]

#: Spec prefix of a team mixture drawn once per game.
TEAM_PREFIX = "team:"
#: Spec prefix of a team mixture drawn once per hand.
TEAM_HAND_PREFIX = "team-hand:"
#: When a team mixture draws its member: at each game's start, or at each hand's.
DRAWS = ("game", "hand")

# hash streams of the draw and of the members' own generator (any constants apart from the engines' streams 1..5)
_STREAM_DRAW_GAME, _STREAM_DRAW_HAND = 0x7EA1, 0x7EA2
_UNIT = 1.0 / (1 << 53)


def parse_team_spec(spec: str) -> tuple[list[str], list[float], str, int]:
    """``"team:a.pt=0.4+rule=0.6+seed=3"`` -> ``(["a.pt", "rule"], [0.4, 0.6], "game", 3)``: the member specs, their
    shares (normalised), the draw (``game`` for ``team:``, ``hand`` for ``team-hand:``) and the seed.

    Raises:
        ValueError: not a team spec, no member, an empty member, a share that is not a number > 0, or a seed that
            is not an int >= 0 (the message names the item).
    """
    text = str(spec).strip()
    low = text.lower()
    if low.startswith(TEAM_HAND_PREFIX):
        draw, body = "hand", text[len(TEAM_HAND_PREFIX):]
    elif low.startswith(TEAM_PREFIX):
        draw, body = "game", text[len(TEAM_PREFIX):]
    else:
        raise ValueError(f"a team mixture spec starts with {TEAM_PREFIX!r} or {TEAM_HAND_PREFIX!r}, got {spec!r}")
    members: list[str] = []
    shares: list[float] = []
    seed = 0
    for item in (s.strip() for s in body.split("+")):
        if not item:
            continue
        head, sep, tail = item.rpartition("=")
        if sep and head.strip().lower() == "seed":
            if not tail.strip().isdigit():
                raise ValueError(f"team spec {spec!r}: seed must be an int >= 0, got {tail!r}")
            seed = int(tail)
            continue
        if sep:
            try:
                share = float(tail)
            except ValueError:
                raise ValueError(f"team member {item!r}: the share after the last '=' must be a number, "
                                 f"got {tail!r}") from None
            name = head.strip()
        else:
            share, name = 1.0, item
        if not name:
            raise ValueError(f"team member {item!r}: no agent spec before '='")
        if not (math.isfinite(share) and share > 0):
            raise ValueError(f"team member {item!r}: a share must be a finite number > 0, got {tail!r}")
        members.append(name)
        shares.append(share)
    if not members:
        raise ValueError(f"a team mixture needs at least one member, e.g. 'team:ppo=0.5+rule=0.5', got {spec!r}")
    total = sum(shares)
    return members, [s / total for s in shares], draw, seed


class TeamMixtureAgent(Agent):
    """Draws one member per game (or hand) for each team from its own seed; both partners play that member.

    Args:
        members: the agents (anything with ``act_batch``; members that play by game get their rows too).
        shares: one number > 0 per member (normalised; default: equal shares).
        draw: ``"game"`` (default: one member for the whole game) or ``"hand"`` (a new draw at each hand).
        seed: the team's own seed, an int >= 0: the draws are a function of it and of the game's identity.
        name: the name shown in tables (default ``team``).
        specs: the members' specs, kept for reports (:attr:`member_specs`).

    Raises:
        ValueError: no member, a member without ``act_batch``, shares that do not fit (their number, one that is
            not a finite number > 0), an unknown ``draw`` or a bad ``seed``.
    """

    name = "team"
    wants_rows = True

    def __init__(self, members: Sequence[Any], shares: Sequence[float] | None = None, draw: str = "game",
                 seed: int = 0, name: str | None = None, specs: Sequence[str] | None = None) -> None:
        members = list(members)
        if not members:
            raise ValueError("a team mixture needs at least one member")
        for m in members:
            if not callable(getattr(m, "act_batch", None)):
                raise ValueError(f"team member {m!r} has no act_batch(obs, masks, rng): subclass agents.Agent")
        shares = [1.0] * len(members) if shares is None else [float(x) for x in shares]
        if len(shares) != len(members):
            raise ValueError(f"a team of {len(members)} members needs {len(members)} shares, got {len(shares)}")
        if any(not (math.isfinite(x) and x > 0) for x in shares):
            raise ValueError(f"team shares must be finite numbers > 0, got {shares}")
        if draw not in DRAWS:
            raise ValueError(f"draw must be one of {', '.join(DRAWS)}, got {draw!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        self.members = members
        self.shares = np.array(shares, dtype=np.float64) / sum(shares)
        self._edges = np.cumsum(self.shares)[:-1]
        self.draw = draw
        self.seed = int(seed)
        self.member_specs = list(specs) if specs is not None else [getattr(m, "name", repr(m)) for m in members]
        if name:
            self.name = name

    @classmethod
    def from_spec(cls, spec: str, build: Callable[[str], Any], name: str | None = None) -> TeamMixtureAgent:
        """The team of a ``team:``/``team-hand:`` spec (:func:`parse_team_spec`), each member built by ``build``
        (:func:`agents.make_agent`); a member that cannot be built is named in the ``ValueError``."""
        specs, shares, draw, seed = parse_team_spec(spec)
        members = []
        for s in specs:
            try:
                members.append(build(s))
            except ValueError as e:
                raise ValueError(f"team member {s!r}: {e}") from None
        return cls(members, shares, draw=draw, seed=seed, name=name, specs=specs)

    def members_of(self, rows: TableRows) -> npt.NDArray[np.int64]:
        """``(B,)`` the index of the member each row plays: a function of the seed, the row's table, game, team and
        (per-hand draw) hand only, uniform over the members with their shares."""
        if self.draw == "hand":
            h = event_hash(self.seed, _STREAM_DRAW_HAND, rows.table, rows.game)
            h = event_hash(h, _STREAM_DRAW_HAND, rows.hand, rows.team)
        else:
            h = event_hash(event_hash(self.seed, _STREAM_DRAW_GAME, rows.table, rows.game), _STREAM_DRAW_GAME,
                           0, rows.team)
        u = (np.asarray(h, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) * _UNIT
        return np.searchsorted(self._edges, u, side="right").astype(np.int64)

    def _own_rng(self, rng: np.random.Generator, rows: TableRows) -> np.random.Generator:
        """The members' generator for one call: from the seed, the rows and ``rng``'s state, read, not advanced."""
        digest = hashlib.blake2b(repr(rng.bit_generator.state).encode(), digest_size=16)
        for col in (rows.table, rows.game, rows.hand, rows.seat):
            digest.update(np.ascontiguousarray(col).tobytes())
        words = np.frombuffer(digest.digest(), dtype=np.uint32)
        return np.random.default_rng([self.seed, *words.tolist()])

    def act_rows(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], rng: np.random.Generator,
                 rows: TableRows) -> npt.NDArray[np.int64]:
        """Each row played by its drawn member (:meth:`members_of`), one call per member on its rows."""
        out = np.zeros(len(obs), dtype=np.int64)
        if len(obs) == 0:
            return out
        which = self.members_of(rows)
        own = self._own_rng(rng, rows)
        for k in np.unique(which):
            sel = np.flatnonzero(which == k)
            out[sel] = act_rows(self.members[k], obs[sel], masks[sel], own, rows.take(sel))
        return out

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        raise ValueError(f"{self.name!r} is a team mixture: it draws its member per game, so it needs each row's "
                         "table, game, hand and seat; call agents.base.act_rows(agent, obs, masks, rng, rows)")

    def __repr__(self) -> str:
        return (f"TeamMixtureAgent({self.member_specs}, shares={np.round(self.shares, 3).tolist()}, "
                f"draw={self.draw!r}, seed={self.seed}, name={self.name!r})")
