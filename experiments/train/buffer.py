"""The learner's decisions as turn-based trajectories, and the centralised critic's input.

Mus is turn-based: only the current player of a table acts, and stones are scored at the end of a hand, often
on another player's step. So each (table, seat) of the learner is its own trajectory (a "stream") of that
seat's decisions; :class:`TurnBuffer` keeps the streams of one rollout and routes every reward a seat receives
to that seat's pending decision, and :func:`turn_based_gae` computes GAE along each stream, step by step:

1. A decision of seat s at step t is appended to stream (table, s). It stays that stream's *pending*
   decision until the seat decides again.
2. Every reward the environment pays seat s (after anyone's action) is added to the reward of stream
   (table, s)'s pending decision. Team rewards reach both partners' streams when they happen, whoever acted.
3. When the game ends, every pending decision of that table is marked ``done`` (no bootstrap).
4. Otherwise a decision's successor is the same seat's next decision: the TD error is
   ``delta_k = r_k + gamma * V(o_{k+1}) - V(o_k)`` and the advantage is GAE along the stream,
   ``A_k = delta_k + gamma * lambda * A_{k+1}``, with ``gamma`` and ``lambda`` counted in the seat's own
   decisions.
5. At the end of a rollout each stream's pending decision has no successor yet: it is not trained in this
   update but serves as the bootstrap value of its predecessor (``A = 0`` at the boundary, as CleanRL
   bootstraps from the next observation), and it is carried into the next rollout, where it receives the
   rest of its reward and is trained once its own successor is known.

:func:`turn_based_gae` is tested against a hand computation in ``tests/test_training.py``.

:func:`relative_hands` and :func:`hands_input` build the centralised critic's extra input (every seat's hand,
relative to the acting seat). Numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mus_env.actions import NUM_ACTIONS
from mus_env.observation import OBS_DIM

__all__ = ["turn_based_gae", "TurnBuffer", "BUFFER_ARRAYS", "HANDS_DIM", "relative_hands", "hands_input"]

#: The per-decision arrays of a :class:`TurnBuffer` (what a checkpoint keeps of the carried-over decisions).
BUFFER_ARRAYS = ("obs", "mask", "action", "logp", "value", "reward", "done", "stream", "hands")

#: Size of the centralised critic's extra input: four hands, one-hot over the 40 card ids.
HANDS_DIM = 4 * 40


def turn_based_gae(row_ptr: npt.NDArray[np.int64], stream: npt.NDArray[np.int64], reward: npt.NDArray[np.float32],
                   value: npt.NDArray[np.float32], done: npt.NDArray[np.bool_], open_: npt.NDArray[np.bool_],
                   num_streams: int, gamma: float, lam: float) -> npt.NDArray[np.float32]:
    """GAE along each stream of decisions (a (table, seat) trajectory), walking the rollout backwards.

    Entries are in time order, grouped in rows (one environment step per row; ``row_ptr[r]:row_ptr[r+1]``
    is row r) and a stream appears at most once per row. An entry's successor is the next entry of its
    stream. ``done`` entries end their episode (no bootstrap); ``open_`` entries have no successor yet:
    they are bootstrap points only (their advantage is 0 and they are not trained).

    Returns:
        ``(N,)`` advantages; the value targets are ``advantages + value``.
    """
    adv = np.zeros(len(stream), dtype=np.float32)
    next_value = np.zeros(num_streams, dtype=np.float32)
    next_adv = np.zeros(num_streams, dtype=np.float32)
    for r in range(len(row_ptr) - 2, -1, -1):
        sl = slice(int(row_ptr[r]), int(row_ptr[r + 1]))
        s = stream[sl]
        go_on = (~done[sl]).astype(np.float32)
        delta = reward[sl] + gamma * go_on * next_value[s] - value[sl]
        a = np.where(open_[sl], 0.0, delta + gamma * lam * go_on * next_adv[s]).astype(np.float32)
        adv[sl] = a
        next_value[s] = value[sl]
        next_adv[s] = a
    return adv


class TurnBuffer:
    """The learner's decisions of one rollout, as per-seat streams.

    Entries are appended in time order, one row per environment step (:meth:`add`); the first row holds the
    decisions carried over from the previous rollout. ``pending[b, s]`` is the index of seat s's latest
    decision on table b (-1: none), which collects that seat's rewards (:meth:`reward_seats`) until the seat
    decides again or the game ends (:meth:`end_games`).
    """

    def __init__(self, num_tables: int, steps: int, obs_dim: int = OBS_DIM, num_actions: int = NUM_ACTIONS) -> None:
        self.B = num_tables
        cap = 4 * num_tables + steps * num_tables
        self.obs = np.zeros((cap, obs_dim), dtype=np.float32)
        self.mask = np.zeros((cap, num_actions), dtype=np.int8)
        self.action = np.zeros(cap, dtype=np.int64)
        self.logp = np.zeros(cap, dtype=np.float32)
        self.value = np.zeros(cap, dtype=np.float32)
        self.reward = np.zeros(cap, dtype=np.float32)
        self.done = np.zeros(cap, dtype=bool)
        self.stream = np.zeros(cap, dtype=np.int64)
        self.hands = np.full((cap, 4, 4), -1, dtype=np.int8)
        self.pending = np.full((num_tables, 4), -1, dtype=np.int64)
        self.n = 0
        self.rows = [0]

    def add(self, tables: npt.NDArray[np.int64], seats: npt.NDArray[np.int64], obs: npt.NDArray[np.float32],
            mask: npt.NDArray[np.int8], action: npt.NDArray[np.int64], logp: npt.NDArray[np.float32],
            value: npt.NDArray[np.float32], hands: npt.NDArray[np.int8] | None = None) -> None:
        """Append one step's learner decisions (distinct tables) as a new row (``hands``: the centralised
        critic's input, :func:`relative_hands`)."""
        k = len(tables)
        sl = slice(self.n, self.n + k)
        if hands is not None:
            self.hands[sl] = hands
        self.obs[sl], self.mask[sl], self.action[sl] = obs, mask, action
        self.logp[sl], self.value[sl] = logp, value
        self.reward[sl] = 0.0
        self.done[sl] = False
        self.stream[sl] = tables * 4 + seats
        self.pending[tables, seats] = np.arange(self.n, self.n + k)
        self.n += k
        self.rows.append(self.n)

    def reward_seats(self, rewards: npt.NDArray[np.float32]) -> None:
        """Add ``rewards (B, 4)`` (by absolute seat) to each seat's pending decision."""
        has = self.pending >= 0
        np.add.at(self.reward, self.pending[has], rewards[has])

    def end_games(self, tables: npt.NDArray[np.int64]) -> None:
        """The games of ``tables`` are over: their pending decisions are final (``done``)."""
        p = self.pending[tables]
        self.done[p[p >= 0]] = True
        self.pending[tables] = -1

    def open_entries(self) -> npt.NDArray[np.bool_]:
        """``(n,)`` True for each stream's pending decision (no successor yet)."""
        o = np.zeros(self.n, dtype=bool)
        p = self.pending[self.pending >= 0]
        o[p] = True
        return o

    def advantages(self, gamma: float, lam: float) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """GAE of every entry and which entries are trainable (all but the open ones)."""
        n = self.n
        open_ = self.open_entries()
        adv = turn_based_gae(np.asarray(self.rows, dtype=np.int64), self.stream[:n], self.reward[:n],
                             self.value[:n], self.done[:n], open_, 4 * self.B, gamma, lam)
        return adv, ~open_

    def carry_over(self) -> None:
        """Start the next rollout: keep only the pending decisions, as its first row."""
        keep = np.sort(self.pending[self.pending >= 0])
        k = len(keep)
        for name in BUFFER_ARRAYS:
            arr = getattr(self, name)
            arr[:k] = arr[keep]
        new_index = np.full(max(self.n, 1), -1, dtype=np.int64)
        new_index[keep] = np.arange(k)
        has = self.pending >= 0
        self.pending[has] = new_index[self.pending[has]]
        self.n = k
        self.rows = [0, k]

    def clear(self) -> None:
        """Drop every decision, pending ones included (they will not be trained)."""
        self.pending[...] = -1
        self.n = 0
        self.rows = [0]

    def state_dict(self) -> dict[str, Any]:
        """The carried-over entries and pending indices (call after :meth:`carry_over`)."""
        n = self.n
        return {"n": n, "pending": self.pending.copy(),
                **{k: getattr(self, k)[:n].copy() for k in BUFFER_ARRAYS}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the next rollout then continues the same streams).

        Raises:
            ValueError: the state does not fit this buffer (sizes, shapes) or is not one :meth:`state_dict` can
                return (the carried-over decisions are exactly the pending ones, each in its own stream, its
                action legal); nothing changes then.
        """
        n = state["n"]
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= 4 * self.B:
            raise ValueError(f"TurnBuffer state: {n!r} carried-over decisions, not an int in 0..{4 * self.B}")
        n = int(n)
        arrays = {k: np.asarray(state[k]) for k in BUFFER_ARRAYS}
        for k, a in arrays.items():
            want = (n, *getattr(self, k).shape[1:])
            if a.shape != want:
                raise ValueError(f"TurnBuffer state: {k} has shape {a.shape}, this buffer's is {want}")
        pending = np.asarray(state["pending"])
        if pending.shape != self.pending.shape or not np.issubdtype(pending.dtype, np.integer):
            raise ValueError(f"TurnBuffer state: pending has shape {pending.shape}, this buffer's is "
                             f"{self.pending.shape}")
        tables, seats = np.nonzero(pending >= 0)
        held = pending[tables, seats]
        if (pending < -1).any() or not np.array_equal(np.sort(held), np.arange(n)) or \
                not np.array_equal(arrays["stream"][held], tables * 4 + seats):
            raise ValueError("TurnBuffer state: the pending decisions are not the carried-over ones, one per stream")
        action, mask = arrays["action"], arrays["mask"]
        if n and ((action < 0).any() or (action >= mask.shape[1]).any() or
                  not (mask[np.arange(n), np.clip(action, 0, mask.shape[1] - 1)] == 1).all()):
            raise ValueError("TurnBuffer state: a carried-over action is not legal under its mask")
        for k, a in arrays.items():
            getattr(self, k)[:n] = a
        self.pending[...] = pending
        self.n = n
        self.rows = [0, n]


def relative_hands(hands: npt.NDArray[np.int8], seat: npt.NDArray[np.int64]) -> npt.NDArray[np.int8]:
    """``(n, 4 seats, 4 slots)`` card ids reordered so that row q is the hand of seat ``(seat + q) % 4`` (q: 0
    self, 1 right-hand opponent, 2 partner, 3 left-hand opponent, as in the observation); -1 empty."""
    order = (np.asarray(seat)[:, None] + np.arange(4)[None, :]) % 4
    return np.take_along_axis(np.asarray(hands), order[:, :, None], axis=1)


def hands_input(hands: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
    """``(n, HANDS_DIM)``: each of the four (relative) hands one-hot over the 40 card ids."""
    n = len(hands)
    out = np.zeros((n, 4, 40), dtype=np.float32)
    h = hands.astype(np.int64)
    rows, q, slot = np.nonzero(h >= 0)
    out[rows, q, h[rows, q, slot]] = 1.0
    return out.reshape(n, HANDS_DIM)
