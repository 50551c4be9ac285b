"""Row ``openspiel-nfsp`` of ``mus benchmark``: OpenSpiel's NFSP (PyTorch) on ``python_mus``, from scratch.

The game is our registered ``python_mus`` (:mod:`mus_env.adapters.openspiel`) with ``reward="stones"``, played
through ``open_spiel.python.rl_environment`` (its chance nodes, the deals, sampled by the environment's seeded
sampler), four players. An agent's information state is ``information_state_tensor(p)``, the project's
observation vector (``OBS_DIM`` = 345), so the average-policy network reads exactly what a mus-env policy file
reads. Self-play: the four seats are four ``open_spiel.python.pytorch.nfsp.NFSP`` agents (one per player, each
with its own best-response/average mode per game, as in OpenSpiel's examples) that *share* their networks,
optimisers and buffers (one average-policy network, one Q-network and its target, one reservoir buffer, one
replay buffer): the observation is seat-relative, and sharing gives every network four times the data.

Two things are ours, not OpenSpiel's:

* rewards. ``rl_environment`` hands every player ``state.rewards()`` of the step just taken, and an agent reads
  its reward only on the steps it acts on, so a hand's stones scored on another player's step would be lost;
  the loop gives each agent what it earned since its previous decision (the sum of the rewards of the steps
  in between, the last one included), and at the end of a game every agent gets what it is still owed;
* the checkpoint: NFSP's own ``save``/``restore`` do not restore what they save (OpenSpiel 1.6 / 2.0:
  ``restore`` reads ``model_state_dict`` where ``save`` wrote ``model``), so the row keeps the networks'
  and optimisers' ``state_dict`` itself.

NFSP offers no public accessor for its networks, optimisers, buffers and step counters, so the sharing and the
checkpoint reach into those fields (``_avg_network``, ``_rl_agent``, ...): the one module of the project allowed
to (``_THIRD_PARTY_INTERNALS`` in tests/test_architecture.py names them); an OpenSpiel upgrade that renames them
fails this row's tests.

The average-policy network is what is exported (``logit_scale`` 1: the policy file plays its softmax, as
NFSP's average policy does).

Settings for a 30-minute budget on two CPU cores (``budget.tiny``: the small ones of :func:`settings`):

======================  ============================================================================
networks                ReLU MLPs 345 → 256 → 256 → 31 (OpenSpiel's ``dqn.MLP``), average policy and Q
anticipatory            0.1 (the share of games an agent plays its ε-greedy best response)
average policy          Adam, learning rate 1e-3, cross-entropy on the reservoir (100,000 rows)
best response (DQN)     Adam, learning rate 1e-3, Huber loss, discount 0.99, replay 50,000 rows,
                        target copied every 1,000 best-response steps of an agent (τ 0.995); ε from
                        0.06 to 0.001, linear over 25,000 best-response steps of an agent
learning                batch 128, every 64 steps of an agent (about every 16 decisions of the table,
                        both networks), from 1,000 rows on
======================  ============================================================================

Measured on the two shared cores (another training running): about 2,900 decisions/s for ``rl_environment``
with random play (it computes the four players' information states and legal actions at every step) and about
500 decisions/s with the four NFSP agents learning (a 1-minute run: 30,200 decisions), so some 900,000
decisions in 30 minutes, about a tenth of them best-response ones (the reservoir's rows). Early games are
short (about 12 decisions in the first minute): the untrained average policy, nearly uniform, calls órdago.

Checkpoints (at every curve point): ``checkpoint.pt`` (the networks, the optimisers, the agents' step
counters, the decisions, the curve and the generators' state) and ``buffers.pkl`` (the reservoir and replay
buffers, pickled). Not kept: the game in progress and the agents' per-game state (a resumed session starts
a new game, every agent drawing its mode again; the chance sampler is reseeded with ``seed + decisions``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiments.benchmark import session
from experiments.benchmark.export import export_mlp, linear_layers
from experiments.benchmark.protocol import Budget, Clock, Trained

__all__ = ["Settings", "settings", "train", "CHECKPOINT", "BUFFERS", "make_agents"]

CHECKPOINT = "checkpoint.pt"
BUFFERS = "buffers.pkl"
PLAYERS = 4


@dataclasses.dataclass(frozen=True)
class Settings:
    """The row's hyper-parameters (see the module's table)."""

    reward: str = "stones"
    hidden: tuple[int, ...] = (256, 256)
    anticipatory: float = 0.1
    reservoir: int = 100_000
    replay: int = 50_000
    batch_size: int = 128
    rl_lr: float = 1e-3
    sl_lr: float = 1e-3
    learn_every: int = 64
    min_buffer: int = 1_000
    discount: float = 0.99
    loss: str = "huber"
    target_every: int = 1_000
    eps_start: float = 0.06
    eps_end: float = 0.001
    eps_steps: int = 25_000
    shared: bool = True


def settings(budget: Budget) -> Settings:
    """The settings for ``budget`` (tiny nets and buffers for a smoke run)."""
    if budget.tiny:
        return Settings(hidden=(32,), reservoir=2_000, replay=2_000, batch_size=32, learn_every=16, min_buffer=64,
                        target_every=100, eps_steps=1_000)
    return Settings()


def make_agents(s: Settings, obs_dim: int, num_actions: int, seed: int) -> list[Any]:
    """The four NFSP agents; with ``s.shared`` they share player 0's networks, optimisers and buffers."""
    from open_spiel.python.pytorch import dqn, nfsp

    agents = [nfsp.NFSP(p, obs_dim, num_actions, list(s.hidden), s.reservoir, s.anticipatory,
                        batch_size=s.batch_size, rl_learning_rate=s.rl_lr, sl_learning_rate=s.sl_lr,
                        min_buffer_size_to_learn=s.min_buffer, learn_every=s.learn_every, optimizer_str="adam",
                        seed=seed * 10 + p, replay_buffer_capacity=s.replay, discount_factor=float(s.discount),
                        loss_str=s.loss, update_target_network_every=s.target_every,
                        epsilon_start=s.eps_start, epsilon_end=s.eps_end, epsilon_decay_duration=s.eps_steps,
                        epsilon_decay_schedule_str="linear")
              for p in range(PLAYERS)]
    if s.shared:
        # The buffers are made on the first transition; make them now (the shapes and dtypes NFSP's and DQN's
        # add_transition write) so that all four agents hold the same ones.
        obs = np.zeros(obs_dim, np.float32)
        mask = np.zeros(num_actions, bool)
        first = agents[0]
        first._reservoir_buffer = first._replay_buffer_class.init(
            s.reservoir, nfsp.Transition(info_state=obs, action_probs=np.zeros(num_actions, np.float32),
                                         legal_actions_mask=mask))
        rl0 = first._rl_agent
        rl0._replay_buffer = rl0._replay_buffer_class.init(
            s.replay, dqn.Transition(info_state=obs, action=np.asarray(0, dtype=int),
                                     reward=np.asarray(0.0, np.float32), next_info_state=obs,
                                     is_final_step=np.asarray(False), legal_actions_mask=mask))
        for agent in agents[1:]:
            agent._avg_network = first._avg_network
            agent._optimizer = first._optimizer
            agent._reservoir_buffer = first._reservoir_buffer
            rl = agent._rl_agent
            rl._q_network = rl0._q_network
            rl._target_q_network = rl0._target_q_network
            rl._optimizer = rl0._optimizer
            rl._replay_buffer = rl0._replay_buffer
    return agents


def _counters(agents: list[Any]) -> list[tuple[int, int]]:
    return [(int(a._iteration), int(a._rl_agent._iteration)) for a in agents]


def train(out: Path, budget: Budget, log: Callable[[str], None]) -> Trained:
    """Train the row in ``out`` for ``budget`` (continuing a checkpoint found there); see the module."""
    import pyspiel
    from open_spiel.python import rl_environment

    import mus_env.adapters.openspiel  # noqa: F401 (registers python_mus)

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    finished = Trained.load(out)
    if finished is not None:
        log(f"openspiel-nfsp: {out} is finished already ({finished.decisions} decisions)")
        return finished
    s = settings(budget)
    if not s.shared:
        raise NotImplementedError("the row checkpoints shared networks only")
    torch.set_num_threads(budget.threads)
    torch.manual_seed(budget.seed)
    np.random.seed(budget.seed)  # noqa: NPY002 (NFSP and its DQN draw from numpy's global generator)

    game = pyspiel.load_game("python_mus", {"reward": s.reward})
    obs_dim = int(game.information_state_tensor_size())
    num_actions = int(game.num_distinct_actions())
    agents = make_agents(s, obs_dim, num_actions, budget.seed)   # seeds numpy and torch again (OpenSpiel's MLP)
    first = agents[0]
    avg_net, q_net = first._avg_network, first._rl_agent._q_network

    decisions = 0
    curve: list[dict[str, float]] = []
    ckpt = out / CHECKPOINT
    if ckpt.exists():
        state = session.load_checkpoint(ckpt, dataclasses.asdict(s))
        avg_net.load_state_dict(state["avg_network"])
        first._optimizer.load_state_dict(state["avg_optimizer"])
        q_net.load_state_dict(state["q_network"])
        first._rl_agent._target_q_network.load_state_dict(state["target_q_network"])
        first._rl_agent._optimizer.load_state_dict(state["q_optimizer"])
        for agent, (it, rl_it) in zip(agents, state["counters"], strict=True):
            agent._iteration, agent._rl_agent._iteration = it, rl_it
        decisions, curve = int(state["decisions"]), list(state["curve"])
        if (out / BUFFERS).exists():
            reservoir, replay = session.load_pickle(out / BUFFERS)
            for agent in agents:
                agent._reservoir_buffer, agent._rl_agent._replay_buffer = reservoir, replay
        session.set_rng_state(state["rng"])
        for agent in agents:                 # the mode of the new game, drawn from the restored generator
            agent._sample_episode_policy()
    elif (out / "clock.json").exists():      # a clock without its checkpoint: nothing to continue
        (out / "clock.json").unlink()
    clock = Clock(out, budget)
    clock.curve = curve                      # the points the checkpoint holds
    if ckpt.exists():
        log(f"openspiel-nfsp: resuming at {clock.minutes:.3f} minutes, {decisions} decisions, {len(curve)} points")

    env = rl_environment.Environment(
        game, chance_event_sampler=rl_environment.ChanceEventSampler(seed=budget.seed + decisions))

    def export(path: Path) -> Path:
        return export_mlp(path, linear_layers(avg_net), logit_scale=1.0,
                          meta={"row": "openspiel-nfsp", "decisions": decisions, "minutes": clock.minutes})

    def checkpoint() -> None:
        state = {"avg_network": avg_net.state_dict(), "avg_optimizer": first._optimizer.state_dict(),
                 "q_network": q_net.state_dict(),
                 "target_q_network": first._rl_agent._target_q_network.state_dict(),
                 "q_optimizer": first._rl_agent._optimizer.state_dict(), "counters": _counters(agents),
                 "decisions": decisions, "curve": curve, "rng": session.rng_state(), "settings": dataclasses.asdict(s)}
        session.save_pickle(out / BUFFERS, (first._reservoir_buffer, first._rl_agent._replay_buffer))
        session.write_atomic(ckpt, lambda tmp: torch.save(state, tmp))
        clock.save()
        log(f"openspiel-nfsp: checkpoint at {clock.minutes:.3f} minutes, {decisions} decisions")

    def with_rewards(time_step: Any, pending: np.ndarray) -> Any:
        return time_step._replace(rewards=[float(r) for r in pending])

    log(f"openspiel-nfsp: training {budget.minutes} minutes (seed {budget.seed}, "
        f"{session.curve_deals(budget)} deals a point)")
    time_step = env.reset()
    pending = np.zeros(PLAYERS)              # what each player earned since its last decision
    games = 0
    clock.start()
    while True:
        if clock.point_due():
            with clock.paused():
                session.take_point(out, clock, export, decisions, curve, log)
                checkpoint()
            continue
        if clock.done:
            break
        for _ in range(256):                 # a chunk of decisions between looks at the clock
            if time_step.last():
                for agent in agents:         # every agent sees the end and what it is owed
                    agent.step(with_rewards(time_step, pending))
                pending[:] = 0.0
                games += 1
                time_step = env.reset()
                continue
            player = time_step.observations["current_player"]
            output = agents[player].step(with_rewards(time_step, pending))
            pending[player] = 0.0
            time_step = env.step([output.action])
            pending += np.asarray(time_step.rewards, dtype=np.float64)
            decisions += 1

    policy_file = export(out / "policy.pt")
    trained = Trained(policy=str(policy_file), decisions=decisions, minutes=round(clock.minutes, 4), curve=curve,
                      versions={"open_spiel": version("open_spiel"), "torch": version("torch"),
                                "numpy": version("numpy")},
                      settings={**dataclasses.asdict(s), "algorithm": "NFSP (open_spiel.python.pytorch.nfsp)",
                                "game": f"python_mus(reward={s.reward})", "players": "self-play, four NFSP agents",
                                "seed": budget.seed, "threads": budget.threads, "tiny": budget.tiny})
    trained.save(out)
    log(f"openspiel-nfsp: done, {decisions} decisions, {games} games this session, {clock.minutes:.2f} minutes")
    return trained
