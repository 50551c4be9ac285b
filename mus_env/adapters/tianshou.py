"""Tianshou adapter for Mus: a :class:`tianshou.env.PettingZooEnv` that loses no reward (imported on demand).

Why not Tianshou's own wrapper: ``tianshou.env.PettingZooEnv.step`` returns the env's ``rewards`` of the step
just taken, and Tianshou's multi-agent algorithms (``MultiAgentOffPolicyAlgorithm`` /
``MultiAgentOnPolicyAlgorithm``, through ``MARLDispatcher``) train each agent on the rows of the buffer where
that agent acted (``obs.agent_id``), reading its own column of the reward vector there. A reward paid on
another player's step (in Mus most stones: the hand is scored on whichever step ends it, and the game
reward on the last step) is in that agent's column of a row the agent does not own, so its learner never
sees it: over random games each agent's learner sees about a quarter of its return.

:class:`MusTianshouEnv` pays each agent on its own rows, as PettingZoo's ``last()`` does
(``_cumulative_rewards``):

* the row of an agent's decision carries, in that agent's column, everything the agent earned since its
  previous row, up to and including this step (zeros in the other columns);
* when the game ends, every other learning agent gets one *final step*: its final observation with a mask
  that allows only :data:`FINAL_ACTION` (the action is ignored), whose row pays it what it earned since its
  last decision; the last final step is the terminal row.

So over an episode each agent's rows sum, in its column, to its true return (``reward="game"``: +1/-1;
``reward="stones"``: its team's stone difference over the hands), and the whole column sums to the same.
The timing: a reward earned on another player's step reaches the agent on its next row, one decision after
the action that earned it (on the same row when the only other players are ``fixed`` agents, see below).

``fixed={seat: agent}`` plays those seats inside the env with objects that have ``act(observation,
action_mask, rng) -> int`` (every :class:`agents.Agent`; one that plays by game, ``wants_rows``, gets
``act_rows`` with the game's identity, ``MusGame.table_rows``): Tianshou then sees only the other seats' decisions,
``agents`` lists only them and the reward vector has one entry per learning agent. With one learning seat
this is an exact single-agent problem, which is what suits Tianshou: in its multi-agent buffer a row's
``obs_next`` is the next row's observation, so with several learning seats an agent's value target
bootstraps on another agent's observation (Tianshou's design, whatever the wrapper pays); with the others
fixed, the next row is the learner's own next decision.

Example (random play through Tianshou's Collector)::

    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from mus_env.adapters.tianshou import MusTianshouEnv

    env = MusTianshouEnv(reward="stones")
    algo = MultiAgentOffPolicyAlgorithm(
        algorithms=[MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents], env=env)
    collector = Collector(algo, DummyVectorEnv([lambda: MusTianshouEnv(reward="stones")]),
                          VectorReplayBuffer(20_000, 1))
    collector.reset()
    collector.collect(n_episode=4)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from pettingzoo import AECEnv
from tianshou.env.pettingzoo_env import PettingZooEnv

from .. import mus_v0

__all__ = ["MusTianshouEnv", "FINAL_ACTION"]

#: The only action a final step allows (any action given there is ignored).
FINAL_ACTION = 0
_RNG_SALT = 0x7A5E


def _seat_key(key: Any, agents: list[str]) -> str:
    """The agent name of ``key`` (a name such as ``"player_1"`` or a seat index)."""
    if isinstance(key, str) and key in agents:
        return key
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= int(key) < len(agents):
        return agents[int(key)]
    raise ValueError(f"fixed: unknown seat {key!r}; use a seat 0..{len(agents) - 1} or one of {agents}")


class MusTianshouEnv(PettingZooEnv):
    """Tianshou's ``PettingZooEnv`` for Mus that pays every agent its whole reward on its own rows.

    Args:
        env: the PettingZoo AEC env; by default ``mus_v0.env(**env_kwargs)``.
        fixed: seats played inside the env, ``{seat or agent name: agent}``, each agent an object with
            ``act(observation, action_mask, rng) -> int``; the other seats are the learning agents.
        seed: seeds the generator the fixed agents draw from (reseeded by every ``reset(seed=s)``).
        **env_kwargs: arguments of ``mus_v0.env`` (``reward="stones"``, ``config=...``, MusConfig fields)
            when ``env`` is not given.

    Raises:
        ValueError: both ``env`` and ``env_kwargs``, a bad ``fixed`` (unknown seat, an object without ``act``,
            every seat fixed), or a bad ``mus_v0.env`` argument.

    Attributes:
        agents: the learning agents' names (all four without ``fixed``), in seat order.
        agent_idx: ``{name: column}`` of the reward vector.
        fixed: ``{name: agent}`` of the seats played inside the env.
    """

    def __init__(self, env: AECEnv | None = None, *, fixed: Mapping[Any, Any] | None = None,
                 seed: int | None = None, **env_kwargs: Any) -> None:
        if env is not None and env_kwargs:
            raise ValueError(f"give either env or mus_v0.env arguments, not both (got {sorted(env_kwargs)})")
        aec = env if env is not None else mus_v0.env(**env_kwargs)
        names = list(aec.possible_agents)
        fixed_agents: dict[str, Any] = {}
        for key, agent in (fixed or {}).items():
            name = _seat_key(key, names)
            if not callable(getattr(agent, "act", None)):
                raise ValueError(f"fixed[{key!r}] must have act(observation, action_mask, rng), got "
                                 f"{type(agent).__name__}")
            fixed_agents[name] = agent
        learners = [a for a in names if a not in fixed_agents]
        if not learners:
            raise ValueError("fixed: every seat is fixed; leave at least one seat to learn")
        self.fixed = fixed_agents
        self._learners = learners
        self._all = names
        self._idx = {a: i for i, a in enumerate(learners)}
        self._rng = np.random.default_rng([_RNG_SALT] if seed is None else [int(seed), _RNG_SALT])
        self._pending = dict.fromkeys(names, 0.0)      # earned since the agent's last row
        self._final: list[str] = []                    # agents still owed a final step, the first one acting now
        self._flags = (False, False)
        super().__init__(aec)                          # sets spaces, then calls reset()
        self.agents = list(learners)
        self.agent_idx = dict(self._idx)
        self.rewards = [0.0] * len(learners)

    # --------------------------------------------------------------------------------------------------
    def _obs(self, agent: str, final: bool = False) -> dict[str, Any]:
        ob = self.env.observe(agent)
        if final:
            mask = np.zeros(self.action_space.n, dtype=bool)
            mask[FINAL_ACTION] = True
        else:
            mask = np.asarray(ob["action_mask"]) == 1
        return {"agent_id": agent, "obs": ob["observation"], "mask": mask}

    def _game_over(self) -> bool:
        env = self.env
        return not env.agents or any(env.terminations.values()) or any(env.truncations.values())

    def _step_env(self, action: int) -> None:
        self.env.step(action)
        for a, r in self.env.rewards.items():
            self._pending[a] += float(r)

    def _play_fixed(self) -> None:
        """Step the fixed seats until a learning agent is to act or the game is over."""
        while not self._game_over() and self.env.agent_selection in self.fixed:
            agent = self.env.agent_selection
            ob = self.env.observe(agent)
            fixed = self.fixed[agent]
            if getattr(fixed, "wants_rows", False):          # an agent that plays by game gets the game's identity
                rows = self.env.unwrapped.table_rows()
                action = fixed.act_rows(np.asarray(ob["observation"])[None], np.asarray(ob["action_mask"])[None],
                                        self._rng, rows)[0]
            else:
                action = fixed.act(ob["observation"], ob["action_mask"], self._rng)
            self._step_env(int(action))

    def _start_final(self, after: str | None) -> dict[str, Any] | None:
        """Queue the learning agents' final steps (all but ``after``, in seat order after it)."""
        self._flags = (any(self.env.terminations.values()), any(self.env.truncations.values()))
        k = self._all.index(after) if after is not None else -1
        order = self._all[k + 1:] + self._all[:k + 1]
        self._final = [a for a in order if a in self._idx and a != after]
        return self._obs(self._final[0], final=True) if self._final else None

    # --------------------------------------------------------------------------------------------------
    def reset(self, *args: Any, **kwargs: Any) -> tuple[dict, dict]:
        """Start a game (``seed=``, ``options=`` as ``mus_v0``); returns the first learning agent's
        ``{"agent_id", "obs", "mask"}`` and an info dict."""
        seed = kwargs.get("seed", args[0] if args else None)
        if seed is not None:
            self._rng = np.random.default_rng([int(seed), _RNG_SALT])
        self.env.reset(*args, **kwargs)
        self._pending = dict.fromkeys(self._all, 0.0)
        self._final = []
        self._play_fixed()
        if self._game_over():
            return self._start_final(None), {}
        return self._obs(self.env.agent_selection), {}

    def step(self, action: Any) -> tuple[dict, npt.NDArray[np.float64], bool, bool, dict]:
        """Apply the acting agent's action (played seats included) and return ``(obs, rewards, terminated,
        truncated, info)``; ``rewards`` has one entry per learning agent (see the module docstring)."""
        rewards = np.zeros(len(self._learners), dtype=np.float64)
        if self._final:                                # a final step: pay, then the next one or the end
            agent = self._final.pop(0)
            rewards[self._idx[agent]] = self._pending[agent]
            self._pending[agent] = 0.0
            if self._final:
                return self._obs(self._final[0], final=True), rewards, False, False, {}
            return self._obs(agent, final=True), rewards, self._flags[0], self._flags[1], {}
        actor = self.env.agent_selection
        self._step_env(int(action))
        self._play_fixed()
        rewards[self._idx[actor]] = self._pending[actor]
        self._pending[actor] = 0.0
        if not self._game_over():
            return self._obs(self.env.agent_selection), rewards, False, False, {}
        nxt = self._start_final(actor)
        if nxt is not None:
            return nxt, rewards, False, False, {}
        return self._obs(actor, final=True), rewards, self._flags[0], self._flags[1], {}

    def seed(self, seed: Any = None) -> list[int | None]:
        """Reset with ``seed`` (the game's deals and the fixed agents' generator)."""
        self.reset(seed=seed)
        return [seed]
