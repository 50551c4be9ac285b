"""sb3-contrib ``MaskablePPO`` at batch speed: train on :class:`mus_env.adapters.sb3.MusVecEnv` against fixed agents.

The learner plays one team (``--learner-seats 0,2``, both seats sharing the policy, or one seat) on every table of
one batched engine; the other seats are played in batch by the agents of ``--opponents`` (``agents.make_agent``
specs: one spec for every other seat, or ``SEAT=SPEC`` pairs such as ``1=rule,3=equity``). The model is saved as
``OUT/model.zip``, which ``agents.make_agent("OUT/model.zip")`` loads (``SB3PolicyAgent``), with ``OUT/run.json``
(the command, the settings, the speed and the evaluations: the model's card).

``--eval-deals N`` plays the trained model in duplicate against the first opponent spec on N seeded deals (one hand
each, seats swapped; :func:`experiments.evaluate.duplicate.play_pair`), sampling from its policy and greedily, and
prints its mean stones per hand with a 95% confidence interval; ``--eval-every STEPS`` does the same (sampled) during
training (written to ``OUT/evals.csv``).

Command line (:mod:`experiments.commands.sb3`)::

    mus sb3 --opponents rule --tables 64 --timesteps 200000 --out runs/sb3 \\
        --eval-deals 4000
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiments.integrations import require

__all__ = ["TrainSettings", "check_installed", "parse_opponents", "make_env", "make_model", "train", "evaluate"]

#: Seconds between two progress lines.
LOG_SECONDS = 10.0


@dataclass
class TrainSettings:
    """Everything a run depends on (written to ``run.json``)."""

    opponents: str = "rule"                 # agent spec for every other seat, or "SEAT=SPEC,..."
    tables: int = 64                        # tables of the one batched engine (SB3's n_envs)
    timesteps: int = 200_000                # learner decisions to train on
    minutes: float = 0.0                    # also stop after this wall-clock time (0: no limit)
    learner_seats: tuple[int, ...] = (0, 2)
    reward: str = "game"                    # "game" (+1/-1 at the end) or "stones" (per hand)
    seed: int = 0
    threads: int = 1                        # torch.set_num_threads
    n_steps: int = 64                       # rollout length per table (a rollout is tables * n_steps decisions)
    batch_size: int = 1024
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 1.0                      # an episode is one game: no discount by default
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    net_arch: tuple[int, ...] = (256, 256)
    target: int = 40
    eval_deals: int = 0                     # duplicate deals of the final evaluation (0: none)
    eval_every: int = 0                     # learner decisions between evaluations during training (0: none)
    eval_seed: int = 2024
    out: str = "runs/sb3"


def check_installed() -> None:
    """Check that stable-baselines3 and sb3-contrib are installed (before anything is made).

    Raises:
        ModuleNotFoundError: one is missing (the message names the extra that installs it).
    """
    require("stable_baselines3", "sb3_contrib")


def parse_opponents(text: str, learner_seats: tuple[int, ...]) -> tuple[Any, list[str]]:
    """``"rule"`` -> one agent for every other seat; ``"1=rule,3=equity"`` -> ``{seat: agent}``.

    Returns:
        What :class:`~mus_env.adapters.sb3.MusVecEnv` takes as ``opponents``, and the specs in seat order.

    Raises:
        ValueError: an unknown spec, a seat that is not 0..3 or is a learner seat, a seat given twice.
    """
    from agents import make_agent

    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError(f"--opponents: give an agent spec (e.g. rule) or SEAT=SPEC pairs, got {text!r}")
    if not any("=" in p for p in parts):
        if len(parts) != 1:
            raise ValueError(f"--opponents: one spec for every other seat, or SEAT=SPEC pairs (1=rule,3=equity); "
                             f"got {text!r}")
        return make_agent(parts[0]), [parts[0]]
    agents: dict[int, Any] = {}
    specs: list[str] = []
    others = [s for s in range(4) if s not in learner_seats]
    for p in parts:
        seat_text, _, spec = p.partition("=")
        if not seat_text.strip().isdigit() or int(seat_text) not in others or int(seat_text) in agents:
            raise ValueError(f"--opponents: {p!r}: the seat must be one of the non-learner seats {others}, each once")
        agents[int(seat_text)] = make_agent(spec.strip())
        specs.append(spec.strip())
    missing = [s for s in others if s not in agents]
    if missing:
        raise ValueError(f"--opponents: no agent for seat(s) {missing}; give SEAT=SPEC for each of {others} "
                         "(SEAT=random for uniform random play)")
    return agents, specs


def make_env(s: TrainSettings) -> Any:
    """The ``VecMonitor(MusVecEnv)`` of the settings."""
    from stable_baselines3.common.vec_env import VecMonitor

    from mus_env.adapters.sb3 import MusVecEnv

    opponents, _ = parse_opponents(s.opponents, s.learner_seats)
    venv = MusVecEnv(s.tables, learner_seats=s.learner_seats, opponents=opponents, reward=s.reward, seed=s.seed,
                     target=s.target)
    return VecMonitor(venv)


def make_model(s: TrainSettings, env: Any) -> Any:
    """A fresh ``MaskablePPO`` (MLP policy) on ``env``."""
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=s.n_steps, batch_size=s.batch_size, n_epochs=s.n_epochs,
                       learning_rate=s.learning_rate, gamma=s.gamma, gae_lambda=s.gae_lambda, ent_coef=s.ent_coef,
                       policy_kwargs={"net_arch": list(s.net_arch)}, seed=s.seed, device="cpu", verbose=0)


def evaluate(model_or_path: Any, opponent_spec: str, deals: int, seed: int = 2024, target: int = 40,
             greedy: bool = False) -> dict[str, float]:
    """Duplicate evaluation (one hand per deal, seats swapped) of a MaskablePPO model against ``opponent_spec``.

    Returns:
        ``{"stones": mean stones per hand (model minus opponent), "lo", "hi": its 95% CI, "deals", "seconds"}``.
    """
    from agents import make_agent
    from agents.sb3 import SB3PolicyAgent
    from experiments.evaluate.deals import make_deals
    from experiments.evaluate.duplicate import play_pair
    from mus_env import MusConfig

    if isinstance(model_or_path, (str, Path)):
        me = make_agent(str(model_or_path), greedy=greedy)
    else:
        me = SB3PolicyAgent(model_or_path, greedy=greedy, name="sb3")
    cfg = MusConfig(target=target)
    res = play_pair(me, make_agent(opponent_spec), make_deals(deals, seed, cfg.target), mode="hands", config=cfg,
                    seed=seed, names=("sb3", opponent_spec))
    m, lo, hi = res.mean_diff()
    return {"stones": float(m), "lo": float(lo), "hi": float(hi), "deals": int(deals), "seconds": res.seconds}


def _callback(s: TrainSettings, log: Any, evals: list[dict[str, Any]], eval_spec: str) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class Progress(BaseCallback):
        """A line every ``LOG_SECONDS`` (and at each evaluation); stops at the time budget; evaluates every
        ``eval_every`` decisions."""

        def _on_training_start(self) -> None:
            self.t0 = time.perf_counter()
            self.next_eval = s.eval_every
            self.next_log = 0.0

        def _on_step(self) -> bool:
            return not (s.minutes and time.perf_counter() - self.t0 > 60 * s.minutes)

        def _on_rollout_end(self) -> None:
            elapsed = time.perf_counter() - self.t0
            n = self.model.num_timesteps
            ep = [e["r"] for e in self.model.ep_info_buffer]
            line = f"{n:>10,} decisions  {elapsed:7.1f} s  {n / max(elapsed, 1e-9):8,.0f}/s"
            if ep:
                line += f"  episode return {np.mean(ep):+.3f} (last {len(ep)})"
            evaluated = bool(s.eval_every) and n >= self.next_eval
            if evaluated:
                self.next_eval = n + s.eval_every
                r = evaluate(self.model, eval_spec, s.eval_deals or 1000, s.eval_seed, s.target)
                evals.append({"decisions": n, "minutes": elapsed / 60, **r})
                line += f"  vs {eval_spec}: {r['stones']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}] stones/hand"
            if evaluated or elapsed >= self.next_log:
                self.next_log = elapsed + LOG_SECONDS
                log(line)

    return Progress()


def train(s: TrainSettings, log: Any = print, command: str | None = None) -> dict[str, Any]:
    """Train, save ``OUT/model.zip`` and ``OUT/run.json``, evaluate if asked.

    Args:
        s: the settings.
        log: called with each progress line.
        command: the command line recorded in ``run.json`` (default: this function's name).

    Returns:
        The ``run.json`` content (settings, decisions, seconds, speed, evaluations).
    """

    torch.set_num_threads(s.threads)
    out = Path(s.out)
    out.mkdir(parents=True, exist_ok=True)
    _, specs = parse_opponents(s.opponents, s.learner_seats)
    eval_spec = specs[0]
    env = make_env(s)
    model = make_model(s, env)
    evals: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    model.learn(total_timesteps=s.timesteps, callback=_callback(s, log, evals, eval_spec))
    seconds = time.perf_counter() - t0
    path = out / "model.zip"
    model.save(path)
    run: dict[str, Any] = {
        "command": command or "experiments.integrations.sb3_maskable_ppo.train", "settings": asdict(s),
        "decisions": int(model.num_timesteps), "seconds": seconds,
        "decisions_per_second": model.num_timesteps / seconds if seconds else None,
        "skipped_games": int(env.venv.skipped_games.sum()), "evals": evals, "versions": _versions(),
        "model": str(path),
    }
    if evals:
        _write_evals(out / "evals.csv", evals)
    if s.eval_deals:
        for greedy in (False, True):
            r = evaluate(path, eval_spec, s.eval_deals, s.eval_seed, s.target, greedy=greedy)
            run["final_eval_greedy" if greedy else "final_eval"] = {"opponent": eval_spec, **r}
            log(f"duplicate vs {eval_spec} over {s.eval_deals:,} deals ({'greedy' if greedy else 'sampled'} play): "
                f"{r['stones']:+.3f} stones/hand [{r['lo']:+.3f}, {r['hi']:+.3f}] (95% CI)")
    (out / "run.json").write_text(json.dumps(run, indent=2, default=str))
    log(f"{model.num_timesteps:,} decisions in {seconds:.1f} s ({run['decisions_per_second']:,.0f}/s); wrote {path}, "
        f"{out / 'run.json'}")
    env.close()
    return run


def _write_evals(path: Path, evals: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(evals[0]))
        w.writeheader()
        w.writerows(evals)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("mus-env", "stable-baselines3", "sb3-contrib", "torch", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out

