"""Row ``sb3-maskable-ppo``: sb3-contrib's ``MaskablePPO`` on :class:`mus_env.adapters.sb3.MusVecEnv` (one
batched engine of 64 tables), the learner on seats 0 and 2 against ``rule`` on 1 and 3, rewarded by the stones of
each hand (``reward="stones"``), from a random network.

The policy is a ReLU MLP (256, 256), separate from the value network, so that it is exported as a mus-env policy
file exactly (:func:`~experiments.benchmark.protocol.export_mlp`; MaskablePPO's masked softmax is the policy
file's). PPO's settings are those of :class:`experiments.integrations.sb3_maskable_ppo.TrainSettings` (64 steps
per table, batches of 1,024, 4 epochs, learning rate 3e-4, no discount, entropy 0.01). Training runs in
``model.learn`` calls of one curve point's time each; the model is saved (``model.zip``) with the clock after each,
and a stopped row loads it and continues (SB3 keeps no rollout buffer across saves: the interrupted rollout is
collected again).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from experiments.benchmark.export import export_mlp
from experiments.benchmark.protocol import Budget, Clock, Trained, curve_point, versions

__all__ = ["train", "settings"]


def settings(budget: Budget) -> Any:
    """The integration's settings of this row."""
    from experiments.integrations.sb3_maskable_ppo import TrainSettings

    s = TrainSettings(opponents="rule", reward="stones", seed=budget.seed, threads=budget.threads, out="")
    if budget.tiny:
        s = replace(s, tables=8, n_steps=8, batch_size=64, n_epochs=1, net_arch=(32,))
    return s


def _model(s: Any, env: Any, path: Path) -> Any:
    from sb3_contrib import MaskablePPO

    if path.exists():
        return MaskablePPO.load(path, env=env, device="cpu")
    return MaskablePPO("MlpPolicy", env, n_steps=s.n_steps, batch_size=s.batch_size, n_epochs=s.n_epochs,
                       learning_rate=s.learning_rate, gamma=s.gamma, gae_lambda=s.gae_lambda, ent_coef=s.ent_coef,
                       policy_kwargs={"net_arch": {"pi": list(s.net_arch), "vf": list(s.net_arch)},
                                      "activation_fn": torch.nn.ReLU},
                       seed=s.seed, device="cpu", verbose=0)


def export(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """The model's policy (its ``pi`` MLP and action head) as a mus-env policy file."""
    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    return export_mlp(path, [(m.weight, m.bias) for m in linears], meta={"sb3_model": "MaskablePPO", **meta})


def train(out: Path, budget: Budget, log: Callable[[str], None] = print) -> Trained:
    """Train the row in ``out`` for ``budget`` (continue a stopped one; a finished one is returned as it is)."""
    from stable_baselines3.common.callbacks import BaseCallback

    from experiments.integrations.sb3_maskable_ppo import make_env

    out = Path(out)
    done = Trained.load(out)
    if done is not None:
        return done
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(budget.threads)
    s = settings(budget)
    env = make_env(s)
    path = out / "model.zip"
    model = _model(s, env, path)
    clock = Clock(out, budget)

    class Until(BaseCallback):
        """Stops ``learn`` at a time of the clock."""

        def __init__(self, minutes: float) -> None:
            super().__init__()
            self.minutes = minutes

        def _on_step(self) -> bool:
            return clock.minutes < self.minutes

    clock.start()
    while not clock.done:
        model.learn(total_timesteps=1 << 40, callback=Until(clock.next_point), reset_num_timesteps=False)
        with clock.paused():
            model.save(path)
            if clock.point_due():
                policy = export(model, out / "curve_policy.pt", {"decisions": int(model.num_timesteps)})
                clock.add_point(curve_point(policy, clock.minutes, int(model.num_timesteps),
                                            **({"deals": 64} if budget.tiny else {})))
                log(f"sb3-maskable-ppo: {clock.minutes:.2f} min, {model.num_timesteps:,} decisions, vs rule "
                    f"{clock.curve[-1]['vs_rule']:+.3f}")
            clock.save()
    final = export(model, out / "policy.pt", {"decisions": int(model.num_timesteps)})
    env.close()
    result = Trained(policy=str(final), decisions=int(model.num_timesteps), minutes=clock.minutes,
                     curve=clock.curve, versions=versions("torch", "stable-baselines3", "sb3-contrib"),
                     settings={**asdict(s), "net": "ReLU MLP, separate pi and vf", "when": time.strftime("%Y-%m-%d")})
    result.save(out)
    return result
