"""Row ``rllib-ppo`` of ``mus benchmark``: Ray RLlib's PPO (new API stack), self-play from scratch, one policy
shared by the four seats.

Everything RLlib is :mod:`experiments.integrations.rllib_selfplay`'s (``mus rllib``): its ``PPOConfig``
(:func:`~experiments.integrations.rllib_selfplay.make_ppo_config`) on :class:`mus_env.adapters.rllib.MusMultiAgentEnv`
(stone rewards scaled by 1/target), its :class:`~experiments.integrations.rllib_selfplay.MusPolicyRLModule` (whose
network is the project's :class:`agents.policy.PolicyNet`, illegal actions masked), its checkpoints and its export.
One shared module (``shared``) learns from the decisions of all four seats: the self-play ``mus rllib`` does by
default (``--policy-per-team`` trains two half-fed modules, a poorer use of the same budget).

Settings (:func:`ppo_args`), chosen for a 30-minute budget on two busy CPU cores: sampling in the driver
(``num_env_runners=0``: on two cores an env-runner actor only adds transfers, about 600 steps/s against 1,000
in the same conditions) with 64 envs stepped together, 4,000 decisions per iteration, 4 epochs of 500-decision
minibatches, lr 3e-4, gamma 0.99, lambda 0.95, clip 0.2, entropy 0.01, no KL penalty and gradients clipped at
norm 0.5 (see :data:`GRAD_CLIP`), hidden (128, 128) like ``mus train``'s. Measured on two cores shared with
another training job: 500 to 2,100 decisions a second per iteration as that job's load varied; a 10-minute run
trained 817,000 decisions (1,360 a second, Ray's start included) and went from -7.7 to -2.6 stones a hand
against ``rule``. ``budget.tiny``: 4 envs, 128 decisions per iteration, one epoch of 64, hidden (32, 32).

The clock (:class:`~experiments.benchmark.protocol.Clock`) **counts Ray's start-up** and the algorithm's build
(and, on a resume, its restore): they are the framework's cost, paid again by every session. It is paused for
the curve points and the checkpoints. A checkpoint (RLlib's, ``out/checkpoint``, with ``clock.json`` holding the
minutes, decisions, iterations, curve and settings) is written after every iteration; a call on a folder with one
restores it and continues (the env and sampler random state is not in RLlib's checkpoint: the resumed part is
reseeded from the seed and the iterations done, as ``mus rllib --resume`` does). A checkpoint and its
``clock.json`` are two writes (the checkpoint first): a run killed between them resumes from the newer
checkpoint with the older clock, its last iteration's minutes and decisions uncounted.
``decisions`` are RLlib's sampled env steps (one decision of one seat each; the shared policy learns from all).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiments.benchmark.protocol import CURVE_DEALS, Budget, Clock, Trained, curve_point

__all__ = ["train", "ppo_args", "row_settings", "DEFAULTS", "FULL", "TINY", "MODULE", "GRAD_CLIP"]

#: ``mus rllib``'s options of a full run and of a ``budget.tiny`` one, as its parser gives them (the rest are its
#: defaults: stone rewards scaled by 1/40, lr 3e-4, gamma 0.99, entropy 0.01, 8 kings, 40 stones); a test holds
#: the names to the parser's.
DEFAULTS = {"iterations": 10, "out": "runs/rllib", "resume": False, "overwrite": False, "seed": 0, "eval_deals": 0,
            "torch_threads": 1, "address": None, "num_cpus": None, "num_env_runners": 0, "envs_per_runner": 64,
            "policy_per_team": False, "hidden": (128, 128), "train_batch_size": 4000, "minibatch_size": 500,
            "num_epochs": 4, "lr": 3e-4, "gamma": 0.99, "entropy_coeff": 0.01, "use_kl_loss": False, "grad_clip": 0.5,
            "reward": "stones", "reward_scale": None, "kings": 8, "target": 40, "max_decisions": None,
            "export": None, "to": None, "module": None}
FULL: dict[str, Any] = {}
TINY = {"envs_per_runner": 4, "train_batch_size": 128, "minibatch_size": 64, "num_epochs": 1, "hidden": (32, 32)}
#: The clipped objective alone with gradients clipped at this norm (``mus train``'s and SB3's PPO): RLlib's
#: adaptive KL penalty (its default) turned infinite after some 600,000 decisions here (a sampled action's
#: probability underflowing to 0 in the updated policy) and the policy collapsed to entropy 0 within 7 iterations.
GRAD_CLIP = 0.5
#: The RLlib module every seat plays and the one exported.
MODULE = "shared"
#: PPO settings that make_ppo_config fixes (recorded with the others).
_FIXED = {"lambda": 0.95, "clip_param": 0.2, "vf_loss_coeff": 0.5, "vf_clip_param": 10.0, "num_learners": 0,
          "policies": [MODULE],
          "ray_startup_counted": True, "checkpoint_every": "iteration"}
_CHECKPOINT = "checkpoint"
_POLICY = "policy.pt"
_TINY_DEALS = 64


def ppo_args(budget: Budget) -> Any:
    """The ``mus rllib`` options (a namespace such as its parser gives) this row trains with for ``budget``."""
    return argparse.Namespace(**{**DEFAULTS, **(TINY if budget.tiny else FULL), "seed": budget.seed,
                                 "torch_threads": budget.threads, "use_kl_loss": False, "grad_clip": GRAD_CLIP})


def row_settings(args: Any) -> dict[str, Any]:
    """The settings recorded in :class:`Trained` (and checked on a resume): the PPO, network and game options of
    ``args`` with the resolved env config and what ``make_ppo_config`` fixes."""
    from experiments.integrations.rllib_selfplay import env_config, run_settings
    s = {k: v for k, v in run_settings(args).items()
         if k not in ("iterations", "out", "address", "num_cpus", "eval_deals")}
    return {**s, "env_config": env_config(args), **_FIXED}


def _read_saved(out: Path) -> dict[str, Any]:
    path = out / "clock.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _export_current(algo: Any, args: Any, path: Path, meta: dict[str, Any]) -> Path:
    """The module's network now (from the learner) as a mus-env policy file."""
    from agents.policy import save_policy
    from experiments.integrations.rllib_selfplay import module_net
    from mus_env import MusConfig
    cfg = MusConfig(kings=args.kings, target=args.target)
    return save_policy(path, module_net(algo, MODULE), cfg.to_dict(),
                       {"trainer": "mus benchmark rllib-ppo", **meta})


def train(out: Path, budget: Budget, log: Callable[[str], None]) -> Trained:
    """Train row ``rllib-ppo`` in ``out`` for ``budget`` (continuing a stopped run there; a finished one's
    :class:`Trained` is returned as it is).

    Raises:
        ValueError: ``out`` holds a stopped run made with other settings, or a clock without its checkpoint.
    """
    out = Path(out).resolve()                       # RLlib's checkpointing (pyarrow) refuses relative paths
    finished = Trained.load(out)
    if finished is not None:
        log(f"rllib-ppo: finished already in {out} ({finished.decisions:,} decisions, {finished.minutes:.1f} min)")
        return finished
    out.mkdir(parents=True, exist_ok=True)

    import ray

    from experiments.integrations.rllib_selfplay import export_policy, init_ray, make_ppo_config, save_checkpoint

    torch.set_num_threads(budget.threads)
    args = ppo_args(budget)
    settings = row_settings(args)
    saved = _read_saved(out)
    resume = bool(saved)
    if resume:
        if not (out / _CHECKPOINT).is_dir():
            raise ValueError(f"{out}: clock.json but no {_CHECKPOINT}/ to resume from")
        if saved.get("settings") != settings:
            differ = sorted(k for k in set(settings) | set(saved.get("settings", {}))
                            if settings.get(k) != saved.get("settings", {}).get(k))
            raise ValueError(f"{out}: the stopped run there was made with other settings ({', '.join(differ)}); "
                             "give another folder")
    iterations = int(saved.get("iterations", 0))
    decisions = int(saved.get("decisions", 0))
    curve: list[dict[str, float]] = list(saved.get("curve", []))
    deals = _TINY_DEALS if budget.tiny else CURVE_DEALS
    versions = {"ray": ray.__version__, "torch": torch.__version__.split("+")[0]}
    meta = {"row": "rllib-ppo", "seed": budget.seed}

    clock = Clock(out, budget)
    clock.curve = curve                             # the same list: a point appended is the clock's
    minutes_at_end = clock.minutes
    if resume and clock.done:
        log(f"rllib-ppo: the run in {out} had spent its budget ({clock.minutes:.2f} min); exporting its policy")
    else:
        clock.start()                               # Ray's start-up and the algorithm's build are counted
        started = init_ray(args)
        algo = None
        try:
            # reseeded from (seed, iterations done) on a resume: fresh games, not a replay of the first ones
            algo = make_ppo_config(args, seed=(budget.seed + 1_000_003 * iterations) % 2**31).build_algo()
            if resume:
                algo.restore_from_path(str(out / _CHECKPOINT))
            log(f"rllib-ppo: {'resumed at' if resume else 'started,'} {clock.minutes:.2f} of {budget.minutes:g} min, "
                f"{iterations} iterations, {decisions:,} decisions; ray {ray.__version__}, "
                f"{args.train_batch_size} decisions per iteration, {args.envs_per_runner} envs")
            while decisions == 0 or not clock.done:
                # the learner shuffles minibatches with numpy's global generator (as mus rllib seeds it)
                np.random.seed((budget.seed * 1_000_003 + iterations + 1) % 2**32)  # noqa: NPY002
                t0 = time.perf_counter()
                result = algo.train()
                dt = time.perf_counter() - t0
                steps = int(result.get("env_runners", {}).get("num_env_steps_sampled", 0))
                iterations += 1
                decisions += steps
                final = clock.done
                with clock.paused():
                    point = ""
                    if clock.points_taken < budget.curve_points and (final or clock.point_due()):
                        policy = _export_current(algo, args, out / "curve" / f"point_{len(curve) + 1}.pt",
                                                 {**meta, "decisions": decisions, "minutes": clock.minutes})
                        p = curve_point(policy, clock.minutes, decisions, deals=deals)
                        clock.add_point(p)
                        point = f"  vs rule {p['vs_rule']:+.3f} [{p['vs_rule_lo']:+.3f}, {p['vs_rule_hi']:+.3f}]"
                    save_checkpoint(algo, out)
                    clock.save(iterations=iterations, decisions=decisions, settings=settings)
                    minutes_at_end = clock.minutes
                learner = result.get("learners", {}).get(MODULE, {})
                log(f"rllib-ppo: iter {iterations:4d}  {clock.minutes:6.2f} min  {decisions:9,d} decisions  "
                    f"{steps / dt:6.0f}/s  entropy {float(learner.get('entropy', float('nan'))):.3f}  "
                    f"vf loss {float(learner.get('vf_loss', float('nan'))):.4f}{point}  (checkpoint saved)")
        finally:
            if algo is not None:
                algo.stop()
            if started:
                ray.shutdown()
    policy = export_policy(out / _CHECKPOINT, out / _POLICY, MODULE,
                           meta={**meta, "iterations": iterations, "env_steps": decisions,
                                 "command": "mus benchmark (row rllib-ppo)"})
    trained = Trained(policy=str(policy), decisions=decisions, minutes=round(minutes_at_end, 4), curve=curve,
                      versions=versions, settings=settings)
    trained.save(out)
    log(f"rllib-ppo: done, {decisions:,} decisions in {minutes_at_end:.2f} min; {policy}")
    return trained
