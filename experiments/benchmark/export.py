"""A network trained by another framework as a mus-env policy file, so that every row of ``mus benchmark`` is
evaluated by the same code (``mus evaluate``'s card, the quick probe from its own weights)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from agents.policy import PolicyNet, save_policy

__all__ = ["export_mlp", "linear_layers"]


def export_mlp(path: str | Path, layers: Sequence[tuple[Any, Any]], logit_scale: float = 1.0,
               meta: dict[str, Any] | None = None) -> Path:
    """Write a ReLU MLP (``layers``: ``(weight (out, in), bias (out,))`` pairs, the last one giving the action
    scores) as a mus-env policy file: the hidden layers become the trunk, the last the policy head, its scores
    multiplied by ``logit_scale`` (a Q-network's greedy play is a softmax of its values at a low temperature:
    ``logit_scale`` 1/temperature). The value head is zero (such a network has none).

    Raises:
        ValueError: the shapes do not chain, or the input or output size is not this mus-env's.
    """
    ws = [torch.as_tensor(w, dtype=torch.float32).detach().cpu() for w, _ in layers]
    bs = [torch.as_tensor(b, dtype=torch.float32).detach().cpu() for _, b in layers]
    if not ws or any(w.ndim != 2 for w in ws) or any(b.shape != (w.shape[0],) for w, b in zip(ws, bs, strict=True)):
        raise ValueError("layers are (weight (out, in), bias (out,)) pairs")
    if any(ws[k + 1].shape[1] != ws[k].shape[0] for k in range(len(ws) - 1)):
        raise ValueError(f"the layers do not chain: {[tuple(w.shape) for w in ws]}")
    net = PolicyNet(obs_dim=ws[0].shape[1], num_actions=ws[-1].shape[0], hidden=[w.shape[0] for w in ws[:-1]])
    linears = [m for m in net.trunk if isinstance(m, torch.nn.Linear)] + [net.policy_head]
    with torch.no_grad():
        for lin, w, b in zip(linears, ws, bs, strict=True):
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        net.policy_head.weight.mul_(logit_scale)
        net.policy_head.bias.mul_(logit_scale)
        for p in net.value_head.parameters():
            p.zero_()
    return save_policy(path, net, meta={"exported_by": "experiments.benchmark.protocol.export_mlp",
                                        "logit_scale": float(logit_scale), **(meta or {})})


def linear_layers(module: torch.nn.Module) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The ``(weight, bias)`` of every ``Linear`` of ``module`` in order (a plain ReLU MLP's layers, as
    :func:`export_mlp` takes them)."""
    return [(m.weight, m.bias) for m in module.modules() if isinstance(m, torch.nn.Linear)]
