"""Agents from sb3-contrib ``MaskablePPO`` models trained on :class:`~mus_env.wrappers.MusGymEnv`.

``make_agent("model.zip")`` loads the model with ``MaskablePPO.load`` (SB3's own file format: load only
models you trust, as SB3's documentation warns) and plays it with the legal-action mask, batched.
The model must have been trained on this mus-env's observation (``OBS_DIM`` floats) and action space.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from mus_env.actions import NUM_ACTIONS
from mus_env.observation import OBS_DIM

from .base import Agent

__all__ = ["SB3PolicyAgent"]


class SB3PolicyAgent(Agent):
    """Plays a MaskablePPO model: its masked policy, sampled (default) or greedy (``greedy=True``).

    Sampling draws from the model's masked action distribution with the ``rng`` given to
    :meth:`act_batch`, so play is reproducible from a numpy seed.
    """

    name = "sb3"

    def __init__(self, model: Any, greedy: bool = False, name: str | None = None) -> None:
        self.model = model
        self.greedy = bool(greedy)
        if name:
            self.name = name
        obs_shape = getattr(model.observation_space, "shape", None)
        n = getattr(model.action_space, "n", None)
        if obs_shape != (OBS_DIM,) or n != NUM_ACTIONS:
            raise ValueError(f"the model was trained on observations {obs_shape} and {n} actions; this mus-env "
                             f"has ({OBS_DIM},) and {NUM_ACTIONS} (was it trained on MusGymEnv?)")
        parameters = getattr(getattr(model, "policy", None), "parameters", None)
        if callable(parameters) and not all(bool(torch.isfinite(p).all()) for p in parameters()):
            raise ValueError("the model's weights hold NaN or infinite numbers (its training diverged): use an "
                             "earlier model")

    @classmethod
    def from_file(cls, path: str | Path, greedy: bool = False, name: str | None = None) -> SB3PolicyAgent:
        """Load ``path`` (a ``.zip`` saved by ``MaskablePPO.save``) on the CPU."""
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as e:
            raise ImportError("SB3 models need sb3-contrib: pip install sb3-contrib") from e
        try:
            model = MaskablePPO.load(str(path), device="cpu")
        except Exception as e:  # noqa: BLE001 - SB3 raises many kinds on a bad file
            text = str(e).splitlines()[0] if str(e) else ""
            raise ValueError(f"{path}: not a MaskablePPO model ({type(e).__name__}: {text})") from e
        try:
            return cls(model, greedy=greedy, name=name or Path(path).stem)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from e

    def values(self, obs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """``(B,)`` the model's value estimates for ``(B, OBS_DIM)`` observations."""
        policy = self.model.policy
        with torch.no_grad():
            obs_t, _ = policy.obs_to_tensor(np.asarray(obs, dtype=np.float32))
            return policy.predict_values(obs_t).reshape(-1).cpu().numpy()

    def probabilities(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
        """``(B, NUM_ACTIONS)`` masked action probabilities."""

        policy = self.model.policy
        with torch.no_grad():
            obs_t, _ = policy.obs_to_tensor(np.asarray(obs, dtype=np.float32))
            dist = policy.get_distribution(obs_t, action_masks=np.asarray(masks) > 0)
            p = dist.distribution.probs.cpu().numpy()
        if not np.isfinite(p).all():
            raise ValueError(f"SB3 model {self.name!r} gives NaN or infinite probabilities, so it cannot choose a "
                             "legal action")
        return p

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        masks = np.asarray(masks)
        if len(masks) == 0:
            return np.zeros(0, dtype=np.int64)
        if not (masks.sum(axis=1) > 0).all():
            raise ValueError("a mask has no legal action (all zeros): was it taken for a seat that is not acting?")
        p = np.where(masks > 0, self.probabilities(obs, masks), 0.0)
        if self.greedy:
            return np.where(masks > 0, p, -1.0).argmax(axis=1).astype(np.int64)
        from .policy import sample_masked

        return sample_masked(p / p.sum(axis=1, keepdims=True), rng)
