"""One game played a decision at a time on one table of the compiled kernel, with the same game as a ``MusGame``.

:class:`OneTable` is what the one-game surfaces share: the PettingZoo env (:class:`mus_env.mus_v0.raw_env`) and the
Gymnasium view (:class:`mus_env.wrappers.MusGymEnv`) play their episodes on it. It holds a one-table
:class:`~mus_env.vector.VectorMusEnv` (one thread, no auto-reset), which plays exactly ``MusGame``'s rules (the
differential tests hold them equal), and calls it through its one-table entries: :meth:`start` is one compiled call
(``VectorMusEnv.start_episode``), :meth:`play` another (``VectorMusEnv.step_one``), which also writes the next
player's view and mask into :attr:`OneTable.obs` and :attr:`OneTable.mask`; any other seat's view is written on
demand (:meth:`observe_into`). :attr:`OneTable.game` is the same game as a :class:`~mus_env.game.MusGame`, replayed
from the episode's moves the first time it is read in an episode and stepped with the table from then on (a loop that
never reads it pays nothing for it); :meth:`table_rows` gives the agents' rows without it. An illegal action is
refused with the replay's :class:`~mus_env.game.IllegalActionError` (its message names the action, the seat, the
phase and the legal actions) and nothing changes.

Example:
    >>> from mus_env import MusConfig
    >>> from mus_env.one_table import OneTable
    >>> t = OneTable(MusConfig(first_mano=0), reward="stones")
    >>> t.start(3)
    >>> t.acting, t.mask[0].nonzero()[0].tolist()          # seat 0 speaks first: MUS, NO_MUS
    (0, [0, 1])
    >>> t.play(1)                                          # no mus: the mano opens the grande
    >>> t.acting, t.game.current_player, t.game.phase_name, t.team0_reward
    (0, 0, 'grande: opening round', 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .config import MusConfig
from .game import MusGame
from .interfaces import deal_game
from .rows import TableRows
from .vector import VectorMusEnv

__all__ = ["OneTable"]


class OneTable:
    """One game on one compiled table, with its ``MusGame`` replay (see the module docstring).

    Args:
        config: the ruleset (checked by the caller: ``interfaces.make_config`` and ``check_playable``).
        reward: the engine's reward mode, ``"game"`` or ``"stones"`` (:attr:`team0_reward`).

    Attributes:
        obs, mask: ``(1, obs_dim)`` float32 and ``(1, num_actions)`` int8: the acting seat's view and legal mask,
            rewritten by every :meth:`start` and :meth:`play` (read them, do not write them; copy what you keep).
        acting: the seat to act, -1 before :meth:`start` and once the game is over.
        started: whether :meth:`start` was called.
        game_seed: the episode's game seed.
    """

    def __init__(self, config: MusConfig, reward: str) -> None:
        self.config = config
        self.reward = reward
        self._engine = VectorMusEnv(1, config, seed=0, reward=reward, num_threads=1, auto_reset=False)
        self._bind()
        self.acting = -1
        self.started = False
        self.game_seed = 0
        self._deal: Mapping[str, Any] | None = None      # the episode's rigged deal (None: MusGame(config, seed))
        self._moves: list[int] = []                      # the episode's actions, for the replay
        self._replay: MusGame | None = None              # made by the first read of game, then stepped by play

    def _bind(self) -> None:
        """Keep the engine's buffers and the state fields a step reads (views of its arrays)."""
        e = self._engine
        self.obs, self.mask = e.observe_buffers()
        self._mano, self._rel, self._hand = e.mano, e.rel, e.hand_number
        self._rewards, self._finished = e.last_rewards, e.last_finished

    def start(self, game_seed: int, deal: Mapping[str, Any] | None = None) -> None:
        """Start an episode: the game of ``MusGame(config, game_seed)``, or with ``deal`` (``{"deck", "mano",
        "scores"}``, checked by ``interfaces.deal_options``) the rigged first hand of ``MusGame.from_deck``.

        Raises:
            ValueError: a bad seed (an int in ``0..2**64 - 1``), deck, mano or scores; nothing changes.
        """
        replay = None
        if deal is None:
            self._engine.start_episode(0, game_seed)        # checks the seed: ValueError, nothing changed
        else:
            replay = deal_game(self.config, deal, game_seed)     # checks the deal: ValueError, nothing changed
            self._engine.reset_tables([0], [np.asarray(deal["deck"])], [deal.get("mano", 0)],
                                      [deal.get("scores", (0, 0))], np.array([game_seed], dtype=np.uint64))
        self.started = True
        self.game_seed = int(game_seed)
        self._deal = deal
        self._moves = []
        self._replay = replay
        self.acting = int(self._mano[0] + self._rel[0]) % 4

    def play(self, action: Any) -> None:
        """Play ``action`` for the seat to act: afterwards :attr:`team0_reward` and :attr:`over` say what the step
        did, :attr:`acting` is the next seat to act, and :attr:`obs` and :attr:`mask` hold its view.

        Raises:
            IllegalActionError: ``action`` is not an int (or numpy integer) legal now, or the game is over; the
                message names the action, the seat, the phase and the legal actions. Nothing changes.
            RuntimeError: :meth:`start` was never called.
        """
        if not self.started:
            raise RuntimeError("call start() before play()")
        if action.__class__ is not int:
            if not isinstance(action, np.integer) or isinstance(action, bool):
                self._refuse(action)
            action = int(action)
        if self.acting < 0 or not 0 <= action < 2**63 or not self._engine.step_one(0, action):
            self._refuse(action)                   # raises IllegalActionError with nothing changed
        self._moves.append(action)
        if self._replay is not None:               # game was read this episode: keep it live, as it was read
            self._replay.step(action)
        self.acting = -1 if self._finished[0] else int(self._mano[0] + self._rel[0]) % 4

    def _refuse(self, action: Any) -> None:
        """Raise the :class:`IllegalActionError` that ``MusGame.step`` raises for ``action`` in this position."""
        self.game.check_action(action)
        raise RuntimeError(f"the compiled table refused action {action!r} that MusGame accepts (engine bug)")

    @property
    def team0_reward(self) -> float:
        """Team 0's reward of the last :meth:`play` (team 1's is its negative): in ``"game"`` mode +1 / -1 when the
        game ended, in ``"stones"`` mode the stone difference of the hand it finished (``hand_stone_difference``),
        else 0."""
        return float(self._rewards[0, 0])

    @property
    def over(self) -> bool:
        """Whether the game is over (False before :meth:`start`)."""
        return self.started and self.acting < 0

    def observe_into(self, seat: int, out: npt.NDArray[np.float32]) -> None:
        """Seat ``seat``'s view (an int 0..3) written into ``out``, a writable contiguous float32 array of
        ``obs_dim`` entries (``MusGame.observe(seat)``'s vector; after the game, its final view)."""
        self._engine.observe_seat(0, seat, out)

    def state(self) -> npt.NDArray[np.float32]:
        """``(STATE_DIM,)`` float32 full-information vector (all four hands): for centralised critics only."""
        return self._engine.state()[0]

    @property
    def game(self) -> MusGame | None:
        """The game as a :class:`MusGame`, replayed up to the table's position and stepped with it from then on;
        None before :meth:`start`. Read it, do not step it: stepping it does not step the table."""
        if not self.started:
            return None
        if self._replay is None:                   # the first read this episode: replay the moves so far
            replay = deal_game(self.config, self._deal, self.game_seed)
            for action in self._moves:
                replay.step(action)
            self._replay = replay
        return self._replay

    def table_rows(self) -> TableRows:
        """The current decision's identity for the agents that play by game: ``game.table_rows()`` (table the
        game's seed modulo 2**63, game 0, the hand number, the seat to act), read from the table without the replay.

        Raises:
            RuntimeError: :meth:`start` was never called.
            ValueError: the game is over (nobody decides).
        """
        if not self.started:
            raise RuntimeError("call reset() (OneTable.start) before table_rows()")
        if self.acting < 0:
            raise ValueError("the game is over: no seat decides")
        return TableRows.one(self.game_seed % 2**63, 0, int(self._hand[0]), self.acting)

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles keep the engine as its ``state_dict`` (the buffers kept here are views of its arrays,
        which a copy would not share) and drop those views."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("obs", "mask", "_mano", "_rel", "_hand", "_rewards", "_finished")}
        state["_engine"] = self._engine.state_dict()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        engine = state["_engine"]
        self.__dict__.update(state)
        self._engine = VectorMusEnv(1, self.config, seed=0, reward=self.reward, num_threads=1, auto_reset=False)
        self._engine.load_state_dict(engine)
        self._bind()
