"""A narrower network widened into a wider one plays and values exactly as before (``PolicyNet.load_narrower``),
and a warm start from a narrower policy file takes that path (``mus train --warm-start F --hidden ...``,
``mus league --refine-hidden``)."""

from __future__ import annotations

import pytest
import torch

from agents.policy import PolicyNet, save_policy
from experiments.train import ppo
from experiments.train.warm_start import load_warm_start
from mus_env import MusConfig


def _trained_looking(hidden: tuple[int, ...], value_dim: int = 0, seed: int = 0) -> PolicyNet:
    """A network with every weight and bias away from its init (the heads' too), as a trained one is."""
    torch.manual_seed(seed)
    net = PolicyNet(hidden=hidden, value_dim=value_dim)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return net


def _outputs(net: PolicyNet, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    obs = torch.rand(64, net.arch["obs_dim"], generator=g)
    with torch.no_grad():
        return net(obs)


def test_a_widened_network_gives_the_narrow_ones_logits_and_values_and_its_new_units_can_learn() -> None:
    narrow = _trained_looking((24, 16))
    wide = PolicyNet(hidden=(40, 48))
    wide.load_narrower(narrow.arch, narrow.state_dict())
    (l0, v0), (l1, v1) = _outputs(narrow), _outputs(wide)
    assert torch.allclose(l0, l1, atol=1e-5) and torch.allclose(v0, v1, atol=1e-5)
    # the new units are live (fresh incoming weights) and their outgoing weights take a gradient at once
    assert wide.trunk[0].weight[24:].abs().sum() > 0 and wide.trunk[2].weight[16:].abs().sum() > 0
    logits, value = wide(torch.rand(8, wide.arch["obs_dim"]))
    (logits.logsumexp(-1).sum() + value.sum()).backward()
    assert wide.policy_head.weight.grad[:, 16:].abs().sum() > 0
    assert wide.value_head.weight.grad[:, 16:].abs().sum() > 0


@pytest.mark.parametrize(("hidden", "value_dim", "narrow_value_dim"), [
    ((40,), 0, 0),                 # another depth
    ((20, 48), 0, 0),              # a layer narrower than the file's
    ((40, 48), 5, 0),              # a central critic here
    ((40, 48), 0, 5),              # a central critic there
])
def test_widening_refuses_what_is_not_a_narrower_network_and_loads_nothing(hidden, value_dim,
                                                                           narrow_value_dim) -> None:
    narrow = _trained_looking((24, 16), value_dim=narrow_value_dim)
    wide = PolicyNet(hidden=hidden, value_dim=value_dim)
    before = {k: v.clone() for k, v in wide.state_dict().items()}
    with pytest.raises(ValueError, match="cannot widen a network"):
        wide.load_narrower(narrow.arch, narrow.state_dict())
    assert all(torch.equal(before[k], v) for k, v in wide.state_dict().items())


def test_a_warm_start_from_a_narrower_policy_file_is_widened_and_trains(tmp_path) -> None:
    narrow = _trained_looking((16, 16))
    save_policy(tmp_path / "narrow.pt", narrow, MusConfig().to_dict())
    wide = PolicyNet(hidden=(32, 32))
    load_warm_start(wide, tmp_path / "narrow.pt")
    (l0, v0), (l1, v1) = _outputs(narrow), _outputs(wide)
    assert torch.allclose(l0, l1, atol=1e-5) and torch.allclose(v0, v1, atol=1e-5)
    # a tiny run of the trainer from it: the run's network is the wider one
    t = ppo.train(ppo.make_args("tiny", out=str(tmp_path / "run"), warm_start=str(tmp_path / "narrow.pt"),
                                hidden=(32, 32), progress=False), log=lambda *a: None)
    assert t.net.arch["hidden"] == [32, 32]
    blob = torch.load(tmp_path / "run" / "policy.pt", weights_only=True)
    assert blob["arch"]["hidden"] == [32, 32]
