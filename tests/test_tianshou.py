"""Tianshou adapter (mus_env.adapters.tianshou) and its worked example (experiments/integrations/tianshou_example.py).

The reward check goes through Tianshou's own pipeline: a Collector over a DummyVectorEnv of the wrapper,
Tianshou's masked random policy in the multi-agent algorithm, a replay buffer. Tianshou trains each agent on
the buffer rows where it acted (``obs.agent_id``), reading its column of the reward vector there, so an
agent's return as its learner sees it is the sum of its column over its own rows. That must equal its true
return, computed from the finished game (winner, or the hands' stone differences), for every agent of every
episode; Tianshou's default ``PettingZooEnv`` fails the same check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tianshou")
torch = pytest.importorskip("torch")

from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402
from tianshou.env.pettingzoo_env import PettingZooEnv  # noqa: E402

from agents import RandomAgent, RuleBasedAgent  # noqa: E402
from mus_env import mus_v0  # noqa: E402
from mus_env.adapters.tianshou import FINAL_ACTION, MusTianshouEnv  # noqa: E402

torch.set_num_threads(1)


class _Recording(mus_v0.raw_env):
    """mus_v0's raw env that keeps every finished game (in the order they end)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.finished: list[Any] = []

    def step(self, action: int | None) -> None:
        over = self.game.is_over
        super().step(action)
        if self.game.is_over and not over:
            self.finished.append(self.game)


def _true_return(game: Any, seat: int, reward: str) -> float:
    """The seat's return from the finished game: +1/-1 by the winner, or its team's stone differences."""
    if reward == "game":
        team0 = 1.0 if game.winner == 0 else -1.0
    else:
        team0 = float(sum(rec.stone_difference(game.config.target) for rec in game.hand_log))
        assert game.winner is not None
    return team0 if seat % 2 == 0 else -team0


def _collect(make_env: Any, episodes: int, seed: int = 0) -> tuple[Any, Any, list[Any]]:
    """Random play through Tianshou's Collector; returns the env wrapper, the buffer's rows in order and the
    finished games."""
    env = make_env()
    algo = MultiAgentOffPolicyAlgorithm(
        algorithms=[MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents], env=env)
    venv = DummyVectorEnv([make_env])
    buffer = VectorReplayBuffer(100_000, 1)
    collector = Collector(algo, venv, buffer)
    np.random.seed(seed)  # noqa: NPY002 (Tianshou's random policy draws from numpy's global generator)
    venv.seed(seed)
    collector.reset()
    collector.collect(n_episode=episodes)
    wrapper = venv.workers[0].env
    rows = buffer[np.arange(len(buffer))]
    return wrapper, rows, wrapper.env.finished


def _learner_totals(wrapper: Any, rows: Any) -> list[np.ndarray]:
    """Per episode, per agent column: the sum of the agent's reward over the rows where it acted."""
    ids, rew, done = rows.obs.agent_id, np.asarray(rows.rew), np.asarray(rows.done)
    totals, cur = [], np.zeros(len(wrapper.agents))
    for t in range(len(ids)):
        i = wrapper.agent_idx[ids[t]]
        cur[i] += rew[t, i]
        if done[t]:
            totals.append(cur)
            cur = np.zeros(len(wrapper.agents))
    return totals


EPISODES = 40


@pytest.mark.parametrize("reward", ["stones", "game"])
def test_each_agent_gets_its_true_return_on_its_own_rows(reward: str) -> None:
    wrapper, rows, games = _collect(lambda: MusTianshouEnv(_Recording(reward=reward)), EPISODES)
    totals = _learner_totals(wrapper, rows)
    assert len(totals) == EPISODES == len(games)
    for got, game in zip(totals, games, strict=True):
        want = [_true_return(game, s, reward) for s in range(4)]
        assert np.array_equal(got, want), (got, want)
    # each agent's column is paid on its own rows only, so the whole column sums to the same return
    ids, rew = rows.obs.agent_id, np.asarray(rows.rew)
    for name, i in wrapper.agent_idx.items():
        assert not rew[ids != name, i].any()
    # every episode ends with final steps (only FINAL_ACTION allowed) of the three agents that did not act last
    mask, done = np.asarray(rows.obs.mask), np.flatnonzero(np.asarray(rows.done))
    for end in done:
        final = mask[end - 2:end + 1]
        assert (final.sum(axis=1) == 1).all() and final[:, FINAL_ACTION].all()
        assert len(set(ids[end - 3:end + 1])) == 4             # the last decision and three final steps
    assert sum(abs(t).sum() for t in totals) > 0


def test_tianshou_default_wrapper_loses_reward_on_the_same_check() -> None:
    """The bug the wrapper fixes: Tianshou's PettingZooEnv pays only the rewards of the agent's own steps.
    Its columns still add up (rewards of every step go to every column), but on the rows each learner reads
    most of the return is missing, and the totals of the two teams no longer mirror each other."""
    reward = "stones"
    wrapper, rows, games = _collect(lambda: PettingZooEnv(_Recording(reward=reward)), EPISODES)
    totals = _learner_totals(wrapper, rows)
    assert len(totals) == EPISODES == len(games)
    want = np.array([[_true_return(g, s, reward) for s in range(4)] for g in games])
    got = np.array(totals)
    assert not np.array_equal(got, want)
    assert np.abs(got).sum() < 0.6 * np.abs(want).sum(), (np.abs(got).sum(), np.abs(want).sum())
    assert (np.abs(got - want) > 0).mean() > 0.5              # most agents in most episodes see a wrong return


def test_fixed_seats_are_played_inside_and_learners_get_their_returns() -> None:
    """The example's setup: learning seats 0 and 2, fixed agents at 1 and 3 (stepped inside the env)."""
    reward = "stones"
    make = lambda: MusTianshouEnv(_Recording(reward=reward), fixed={1: RandomAgent(), "player_3": RuleBasedAgent()},  # noqa: E731
                                  seed=3)
    wrapper, rows, games = _collect(make, 25)
    assert wrapper.agents == ["player_0", "player_2"] and np.asarray(rows.rew).shape[1] == 2
    assert set(rows.obs.agent_id) == {"player_0", "player_2"}
    totals = _learner_totals(wrapper, rows)
    assert len(totals) == 25 == len(games)
    for got, game in zip(totals, games, strict=True):
        assert np.array_equal(got, [_true_return(game, s, reward) for s in (0, 2)])


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown seat 7"):
        MusTianshouEnv(fixed={7: RandomAgent()})
    with pytest.raises(ValueError, match="every seat is fixed"):
        MusTianshouEnv(fixed=dict.fromkeys(range(4), RandomAgent()))
    with pytest.raises(ValueError, match="must have act"):
        MusTianshouEnv(fixed={1: "random"})
    with pytest.raises(ValueError, match="not both"):
        MusTianshouEnv(mus_v0.env(), reward="stones")
    with pytest.raises(ValueError, match="reward must be one of"):
        MusTianshouEnv(reward="points")


def test_example_trains_and_evaluates(capsys: pytest.CaptureFixture) -> None:
    from experiments.commands.tianshou import main

    out = main(["--epochs", "1", "--epoch-steps", "300", "--eval-games", "10", "--envs", "2", "--seed", "1",
                "--opponent", "random"])
    printed = capsys.readouterr().out
    assert "DQN (greedy)" in printed and "random" in printed
    assert len(out["learner_returns"]) == len(out["random_returns"]) == 10
    assert np.isfinite(out["learner_returns"]).all() and np.abs(out["random_returns"]).max() > 0
    dqn = out["algorithm"].get_algorithm("player_0")
    assert dqn.policy.model is not None
