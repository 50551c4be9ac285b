"""OpenSpiel's outcome-sampling MCCFR on Mus, the game ``python_mus`` of :mod:`mus_env.adapters.openspiel`.

One of OpenSpiel's own algorithms run on the game as it is, for a budget of seconds: ``OutcomeSamplingSolver``
(Lanctot et al. 2009) samples one episode per player per iteration through the chance nodes (the deals and the
replacement cards) and keeps regrets per information state string (perfect recall). Then its average policy plays
``games`` episodes for one team against uniformly random play, on both teams in turn, and the mean return of the
policy's team is printed with a 95 % interval, next to random play against random play on the same number of games.

The game is small on purpose (``--target 3``, one mus round, stakes capped at 4): a Mus game to 40 stones has far
more information states than any budget of seconds visits, and where the solver has not been the average policy
is uniform. This is a working example of the integration, not a strong player (``mus train`` trains those).
OpenSpiel's MCCFR draws from numpy's global generator, so the run seeds it (``np.random.seed``).

Run (30 s of MCCFR, 1,000 games; other budgets: ``print(report(run(seconds, games, seed, SMALL)))``)::

    python -m experiments.integrations.openspiel_mccfr
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

import numpy as np
import pyspiel
from open_spiel.python.algorithms import outcome_sampling_mccfr

import mus_env.adapters.openspiel as spiel

#: The small game the example trains on (``pyspiel.load_game(GAME_NAME, SMALL)``).
SMALL = {"target": 3, "max_mus_rounds": 1, "max_stake": 4, "reward": "game"}


@dataclass(frozen=True)
class Result:
    """What one run did: solver iterations, seconds, and the mean return of the policy's team against random play
    (``policy``) and of random play against itself (``random``), each with the half-width of its 95 % interval,
    over ``games`` episodes."""

    iterations: int
    seconds: float
    games: int
    policy: tuple[float, float]
    random: tuple[float, float]


def _mean(values: list[float]) -> tuple[float, float]:
    m = sum(values) / len(values)
    var = sum((v - m) ** 2 for v in values) / max(1, len(values) - 1)
    return m, 1.96 * math.sqrt(var / len(values))


def play(game: pyspiel.Game, policy: object | None, games: int, seed: int) -> list[float]:
    """The return of the policy's team in ``games`` episodes: the policy (an OpenSpiel policy with
    ``action_probabilities(state)``; None plays uniformly) at seats 0 and 2 in even episodes, 1 and 3 in odd ones,
    uniformly random play at the other seats, the chance nodes sampled."""
    rng = random.Random(seed)
    out = []
    for episode in range(games):
        team = episode % 2
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                cards, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(cards, probs)[0])
            elif policy is not None and state.current_player() % 2 == team:
                probs = policy.action_probabilities(state)                      # type: ignore[attr-defined]
                actions = sorted(probs)
                state.apply_action(rng.choices(actions, [probs[a] for a in actions])[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        out.append(state.returns()[team])
    return out


def run(seconds: float = 30.0, games: int = 1000, seed: int = 0, params: dict | None = None) -> Result:
    """Train outcome-sampling MCCFR on ``python_mus`` (``params``, default :data:`SMALL`) for ``seconds``, then
    play its average policy against random play (:func:`play`)."""
    game = pyspiel.load_game(spiel.GAME_NAME, dict(SMALL if params is None else params))
    np.random.seed(seed)  # noqa: NPY002  OpenSpiel's MCCFR samples with numpy's global generator
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    start = time.perf_counter()
    iterations = 0
    while time.perf_counter() - start < seconds or iterations == 0:
        solver.iteration()
        iterations += 1
    elapsed = time.perf_counter() - start
    policy = solver.average_policy()
    return Result(iterations=iterations, seconds=elapsed, games=games,
                  policy=_mean(play(game, policy, games, seed + 1)), random=_mean(play(game, None, games, seed + 1)))


def report(r: Result) -> str:
    """The two lines a run prints: its iterations, and its policy's and random play's returns against random play."""
    return (f"outcome-sampling MCCFR on {spiel.GAME_NAME}: {r.iterations} iterations in {r.seconds:.0f} s\n"
            f"its average policy against random play: {r.policy[0]:+.3f} ± {r.policy[1]:.3f} per game "
            f"({r.games} games, both teams); random against random: {r.random[0]:+.3f} ± {r.random[1]:.3f}")


if __name__ == "__main__":
    print(report(run(30.0, 1000, 0, SMALL)))
