"""Which table, game, hand and seat each row of a batch of decisions is: :class:`TableRows`.

An agent's ``act_batch(obs, masks, rng)`` sees observations only, which is all that almost every agent needs.
An agent whose play depends on *which game* a row belongs to (a team that draws one strategy per game and plays
it at both partners' seats, :class:`agents.team.TeamMixtureAgent`) also needs each row's identity. A harness that
seats agents builds one :class:`TableRows` per batch and hands it to the agents that ask for it
(``agents.base.act_rows``); the engines give it (:meth:`mus_env.vector.VectorMusEnv.table_rows`, and
:meth:`TableRows.one` for one decision of a :class:`~mus_env.game.MusGame`).

The identity is public: every seat knows which table it sits at, which game and hand are being played, and where
it sits. It carries nothing of any seat's cards or of any agent's private randomness.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

__all__ = ["TableRows"]


def _column(name: str, value: npt.ArrayLike) -> npt.NDArray[np.int64]:
    a = np.asarray(value)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"TableRows.{name} must be a 1-d array of ints, got shape {a.shape} dtype {a.dtype}")
    return a.astype(np.int64)


@dataclasses.dataclass(frozen=True)
class TableRows:
    """Per-row identity of a batch of decisions, every field ``(B,)`` int64.

    Attributes:
        table: the table the row is played at, as the harness numbers its tables (``0..`` for a
            :class:`~mus_env.vector.VectorMusEnv`: its table index).
        game: the serial of the game (the episode: one game by default, the match when an episode is several
            games) at that table: it changes whenever the table starts a new one (a
            :class:`~mus_env.vector.VectorMusEnv` counts its episodes, from 0 at each ``reset``).
        hand: the hand within that game (``hand_number``: 0 for the first hand).
        seat: the absolute seat that decides (0..3); its team is ``seat % 2`` (:attr:`team`).

    Raises:
        ValueError: a field that is not a 1-d array of ints, fields of different lengths, or a seat outside 0..3.
    """

    table: npt.NDArray[np.int64]
    game: npt.NDArray[np.int64]
    hand: npt.NDArray[np.int64]
    seat: npt.NDArray[np.int64]

    def __post_init__(self) -> None:
        cols = {f.name: _column(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)}
        if len({c.size for c in cols.values()}) > 1:
            raise ValueError(f"TableRows fields must have one length, got { {k: v.size for k, v in cols.items()} }")
        if ((cols["seat"] < 0) | (cols["seat"] > 3)).any():
            raise ValueError(f"TableRows.seat must be seats 0..3, got {np.unique(cols['seat']).tolist()}")
        for name, col in cols.items():
            col.setflags(write=False)
            object.__setattr__(self, name, col)

    @classmethod
    def one(cls, table: int, game: int, hand: int, seat: int) -> TableRows:
        """The identity of one decision (a batch of one), for harnesses that play one decision at a time."""
        return cls(np.array([table]), np.array([game]), np.array([hand]), np.array([seat]))

    @property
    def team(self) -> npt.NDArray[np.int64]:
        """``(B,)`` the deciding seat's team (0: seats 0 and 2, 1: seats 1 and 3)."""
        return self.seat % 2

    def take(self, index: npt.ArrayLike) -> TableRows:
        """The rows ``index`` (positions or a boolean mask), in that order."""
        i = np.asarray(index)
        return TableRows(self.table[i], self.game[i], self.hand[i], self.seat[i])

    def __len__(self) -> int:
        return int(self.table.size)
