"""``mus_v0.env()`` and ``raw_env`` against ``MusGame``'s random play, in CPU time.

Usage: ``python docs/research/tools/env_ratio.py [DECISIONS] [REPEATS]`` (defaults 30000 and 25), from a checkout.

The loops are ``mus bench``'s (``experiments.tools.bench``: ``MusGame`` with ``legal_actions()`` and a uniform pick;
the PettingZoo ``agent_iter`` / ``last`` / ``step`` loop with a masked uniform pick), each run timed by
``time.process_time`` and the four interleaved, ``REPEATS`` times. Printed: the best rate of each over the repeats
(the least disturbed by other work on a shared machine) as ratios, then the medians of the per-repeat ratios with
their range. The fourth loop is ``MusGame(..., view_record=True)`` (the engine the envs played until they stepped a
compiled table; it keeps the record the compiled observation writer reads); the fifth is the Gymnasium view
``MusGymEnv`` with a team learning at seats 0 and 2 and a uniform random agent (a plain callable) at seats 1 and
3, every decision counted, the learner's and the agents'. ``mus bench`` gives wall-clock medians instead.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable

from mus_env import MusConfig, MusGame, mus_v0
from mus_env.wrappers import MusGymEnv


def scalar_rate(decisions: int, view_record: bool = False) -> float:
    """Random legal decisions per CPU second of ``MusGame`` (made with ``view_record``), a new game from the next seed
    whenever one ends."""
    rnd, cfg, k, seed = random.Random(0), MusConfig(), 0, 0
    t0 = time.process_time()
    while k < decisions:
        g = MusGame(cfg, seed=seed, view_record=view_record)
        seed += 1
        while not g.is_over:
            legal = g.legal_actions()
            g.step(legal[rnd.randrange(len(legal))])
            k += 1
    return k / (time.process_time() - t0)


def aec_rate(make_env: Callable[[], object], decisions: int) -> float:
    """Random legal decisions per CPU second of a PettingZoo AEC env (done agents' steps not counted)."""
    rnd, env, k, episode = random.Random(0), make_env(), 0, 0
    t0 = time.process_time()
    while k < decisions:
        env.reset(seed=episode)
        episode += 1
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[int(rnd.random() * len(legal))])
                k += 1
            env.step(action)
    return k / (time.process_time() - t0)


def gym_rate(decisions: int) -> float:
    """Random legal decisions per CPU second of ``MusGymEnv(learner_seats=(0, 2))`` against a random callable agent,
    the learner's steps and the agent's calls together."""
    rnd, calls = random.Random(0), [0]

    def agent(obs: object, mask: object, rng: object) -> int:
        calls[0] += 1
        legal = mask.nonzero()[0]                                           # type: ignore[attr-defined]
        return int(legal[int(rnd.random() * len(legal))])

    env, k, episode = MusGymEnv(learner_seats=(0, 2), opponents=agent), 0, 0
    t0 = time.process_time()
    while k + calls[0] < decisions:
        _, info = env.reset(seed=episode)
        episode += 1
        terminated = False
        while not terminated:
            legal = info["action_mask"].nonzero()[0]
            _, _, terminated, _, info = env.step(int(legal[int(rnd.random() * len(legal))]))
            k += 1
    return (k + calls[0]) / (time.process_time() - t0)


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    if len(argv) > 2 or not all(a.isdigit() and int(a) > 0 for a in argv):
        print("usage: env_ratio.py [DECISIONS] [REPEATS] (positive integers)", file=sys.stderr)
        return 2
    decisions, repeats = (int(argv[0]) if argv else 30000), (int(argv[1]) if len(argv) > 1 else 25)
    scalar_rate(5000), aec_rate(mus_v0.env, 5000), gym_rate(5000)         # warm up (and compile)
    rates: dict[str, list[float]] = {"scalar": [], "env": [], "raw_env": [], "recorded": [], "gym": []}
    for _ in range(repeats):
        rates["scalar"].append(scalar_rate(decisions))
        rates["recorded"].append(scalar_rate(decisions, view_record=True))
        rates["env"].append(aec_rate(mus_v0.env, decisions))
        rates["raw_env"].append(aec_rate(mus_v0.raw_env, decisions))
        rates["gym"].append(gym_rate(decisions))
    best = {name: max(r) for name, r in rates.items()}
    print(f"best of {repeats}: MusGame {best['scalar']:,.0f} decisions/s; env() {best['env'] / best['scalar']:.3f}x, "
          f"raw_env {best['raw_env'] / best['scalar']:.3f}x, MusGymEnv {best['gym'] / best['scalar']:.3f}x")
    print(f"against MusGame(view_record=True), {best['recorded']:,.0f} decisions/s: env() "
          f"{best['env'] / best['recorded']:.3f}x, raw_env {best['raw_env'] / best['recorded']:.3f}x")
    for name in ("env", "raw_env", "gym"):
        ratios = [a / s for a, s in zip(rates[name], rates["scalar"], strict=True)]
        print(f"{name} / MusGame per repeat: median {statistics.median(ratios):.3f} "
              f"[{min(ratios):.3f}, {max(ratios):.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
