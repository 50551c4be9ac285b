"""The regularisers of :mod:`experiments.train.ppo`'s update: the pull toward the magnet, the averaged magnet, the
entropy floor.

* :func:`magnet_kl`: the reverse KL from the policy to the magnet policy, over the legal actions (``magnet_coef``).
* :func:`average_weights`: one step of the averaged magnet, ``magnet <- (1 - rate) * magnet + rate * learner``,
  applied after each update (``magnet_ema``).
* :func:`entropy_floor_loss`: ``coef * relu(floor - entropy)``, the loss that stops the mean entropy from falling
  below ``entropy_floor`` (``entropy_floor_coef``), beside the ordinary entropy bonus (``ent_coef``).

Each is a function of tensors or networks only; ``tests/test_magnet.py`` checks which way each pulls.
"""

from __future__ import annotations

import torch

__all__ = ["magnet_kl", "average_weights", "entropy_floor_loss"]


def magnet_kl(logp_all: torch.Tensor, magnet_logp_all: torch.Tensor) -> torch.Tensor:
    """The mean over decisions of ``KL(pi || rho) = sum_a pi(a) (log pi(a) - log rho(a))``: the magnet term.

    Both arguments are ``(B, A)`` masked log-probabilities (:func:`agents.policy.masked_log_probs` or the
    trainer's ``log_softmax`` of ``MASKED_LOGIT``-filled logits): an illegal action has ``pi(a) = 0`` exactly, so
    it adds nothing. It is 0, with a zero gradient, where ``pi`` equals ``rho``, and its gradient moves ``pi``
    toward ``rho`` (``tests/test_magnet.py``).
    """
    return (logp_all.exp() * (logp_all - magnet_logp_all)).sum(-1).mean()


def average_weights(average: torch.nn.Module, net: torch.nn.Module, rate: float) -> None:
    """Move ``average`` toward ``net`` in place: ``average <- (1 - rate) * average + rate * net`` for every
    floating-point parameter and buffer (``torch.lerp``); any other buffer (a counter) is copied from ``net``.
    Both networks have the same shape; ``rate`` is in ``[0, 1]`` (0: ``average`` does not move, 1: a copy)."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the averaging rate must be in [0, 1], got {rate!r}")
    theirs = net.state_dict()
    with torch.no_grad():
        for name, mine in average.state_dict().items():   # the tensors themselves, not copies
            if mine.is_floating_point():
                mine.lerp_(theirs[name], rate)
            else:
                mine.copy_(theirs[name])


def entropy_floor_loss(entropy: torch.Tensor, floor: float, coef: float) -> torch.Tensor:
    """``coef * relu(floor - entropy)``: 0, with a zero gradient, while the mean entropy ``entropy`` (a scalar
    tensor, nats) is at or above ``floor``; below it, a loss whose gradient raises the entropy at the rate
    ``coef`` (on top of the entropy bonus). ``floor`` 0 is no floor (entropy is never negative)."""
    return coef * torch.relu(floor - entropy)
