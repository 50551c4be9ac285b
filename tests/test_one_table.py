"""``mus_env.one_table.OneTable``, the engine of the one-game surfaces: its games are MusGame's, its replay is the
live game, a refused action changes nothing, and a copy goes on as the original does."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from mus_env import Action, IllegalActionError, MusConfig, MusGame
from mus_env.interfaces import team_rewards
from mus_env.one_table import OneTable


def _walk(table: OneTable, game: MusGame, rnd: random.Random, cfg: MusConfig, reward: str) -> None:
    """Play random legal actions on both until the game ends, checking the table against ``game`` at each one."""
    while not game.is_over:
        seat = game.current_player
        assert table.acting == seat and not table.over
        assert np.array_equal(table.obs[0], game.observe(seat))
        assert table.mask[0].tolist() == game.legal_action_mask().tolist()
        assert table.table_rows() == game.table_rows()
        other = (seat + 1 + rnd.randrange(3)) % 4
        view = np.empty(table.obs.shape[1], dtype=np.float32)
        table.observe_into(other, view)
        assert np.array_equal(view, game.observe(other))
        legal = game.legal_actions()
        bets = [a for a in legal if a != Action.ORDAGO] if rnd.random() < 0.2 else []
        calm = [a for a in legal if not Action.ENVIDO_2 <= a <= Action.ORDAGO or a == Action.NO_QUIERO]
        action = rnd.choice(bets or calm or legal)  # mostly passing, a bet now and then: games of several hands
        before = len(game.hand_log)
        table.play(action)
        game.step(action)
        assert table.team0_reward == team_rewards(game, before, reward)
    assert table.over and table.acting == -1 and len(game.hand_log) > 1
    with pytest.raises(ValueError, match="over"):
        table.table_rows()


@pytest.mark.parametrize("cfg, reward", [(MusConfig(), "stones"), (MusConfig(kings=4, target=20), "game"),
                                         (MusConfig(signals="free"), "stones")])
def test_the_table_plays_musgames_games(cfg: MusConfig, reward: str) -> None:
    table, rnd = OneTable(cfg, reward), random.Random(7)
    for seed in (0, 1, 2**64 - 1, 12345):
        table.start(seed)
        _walk(table, MusGame(cfg, seed=seed), rnd, cfg, reward)
    deck = list(range(40))
    random.Random(3).shuffle(deck)
    table.start(9, {"deck": deck, "mano": 2, "scores": (10, 15)})
    _walk(table, MusGame.from_deck(deck, mano=2, scores=(10, 15), config=cfg, seed=9), rnd, cfg, reward)


def test_the_replay_read_late_is_the_live_game_and_a_refusal_changes_nothing() -> None:
    cfg = MusConfig(first_mano=1)
    table, rnd = OneTable(cfg, "stones"), random.Random(1)
    assert table.game is None and not table.over
    with pytest.raises(RuntimeError, match="start"):
        table.play(0)
    seed = 4
    while not table.started or table.over:          # 12 random moves into a game that goes on
        seed += 1
        table.start(seed)
        for _ in range(12):
            if not table.over:
                table.play(int(rnd.choice(np.flatnonzero(table.mask[0]))))
    game = table.game                               # replayed now, then stepped with the table
    reference = MusGame(cfg, seed=seed)
    for ev in [e for h in game.hand_log for e in h.actions] + list(game.hand_actions):
        if not ev.auto:
            reference.step(ev.action)
    assert np.array_equal(game.state(), reference.state())
    state, obs, mask = table.state().copy(), table.obs.copy(), table.mask.copy()
    illegal = int(np.flatnonzero(table.mask[0] == 0)[0])
    for bad in (illegal, 31, -1, 2**70, 1.0, "1", True, None):
        with pytest.raises(IllegalActionError):
            table.play(bad)
        assert np.array_equal(table.state(), state) and np.array_equal(table.obs, obs)
        assert np.array_equal(table.mask, mask) and np.array_equal(game.state(), state)
    action = int(np.flatnonzero(table.mask[0])[0])
    table.play(np.int64(action))
    assert table.game is game and np.array_equal(game.state(), table.state())


def test_a_pickled_table_goes_on_as_the_original() -> None:
    cfg = MusConfig()
    table, rnd = OneTable(cfg, "game"), random.Random(2)
    table.start(11)
    for _ in range(8):
        if not table.over:
            table.play(int(rnd.choice(np.flatnonzero(table.mask[0]))))
    copy = pickle.loads(pickle.dumps(table))
    while not table.over:
        action = int(rnd.choice(np.flatnonzero(table.mask[0])))
        assert np.array_equal(copy.obs, table.obs) and copy.acting == table.acting
        table.play(action)
        copy.play(action)
        assert copy.team0_reward == table.team0_reward
    assert copy.over and np.array_equal(copy.state(), table.state())
