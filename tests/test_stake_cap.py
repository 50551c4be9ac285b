"""``MusConfig.max_stake``: the RL safety cap on raises (not a rule of the game; RULES.md §5.1 sets no limit).

Without it two policies that always re-raise bet forever: the hand never ends. This is what froze a run of
``mus train --warm-start none``: its policy lost its entropy, and every table ended up in such a raise war, so
no game finished and the run learned nothing for most of an hour.
"""

from __future__ import annotations

import numpy as np
import pytest

from mus_env import MusConfig, MusGame, VectorMusEnv
from mus_env.actions import Action

ENVIDO_2, ENVIDO_4, ENVIDO_10 = int(Action.ENVIDO_2), int(Action.ENVIDO_4), int(Action.ENVIDO_10)
QUIERO, NO_QUIERO, ORDAGO = int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO)
ENVIDOS = set(range(int(Action.ENVIDO_2), int(Action.ENVIDO_10) + 1))


def _at_grande(config: MusConfig) -> MusGame:
    g = MusGame(config, seed=11)
    g.step(int(Action.NO_MUS))                       # the mano cuts: grande opens
    assert g.phase_name.startswith("grande"), g.describe()
    return g


def test_once_the_stake_reaches_the_cap_it_can_only_be_answered() -> None:
    g = _at_grande(MusConfig(max_stake=6))
    g.step(ENVIDO_2)                                 # stake 2: raises still legal
    assert ENVIDOS <= set(g.legal_actions())
    g.step(ENVIDO_4)                                 # raised to 6 = the cap
    assert set(g.legal_actions()) == {QUIERO, NO_QUIERO, ORDAGO}
    g.step(QUIERO)                                   # the partner confirms or upgrades, but cannot raise
    assert set(g.legal_actions()) == {QUIERO, ORDAGO}
    with pytest.raises(ValueError, match="not legal"):
        g.step(ENVIDO_2)
    # without the cap the same hand goes on as the rules say
    g = _at_grande(MusConfig())
    g.step(ENVIDO_2)
    g.step(ENVIDO_4)
    assert ENVIDOS <= set(g.legal_actions())


def test_a_refused_raise_still_pays_the_stake_before_it() -> None:
    g = _at_grande(MusConfig(max_stake=6, partner_override=False))
    bettor_team = g.current_player % 2
    g.step(ENVIDO_2)
    g.step(ENVIDO_4)                                 # the other team raises to 6: capped
    g.step(NO_QUIERO)
    g.step(NO_QUIERO)                                # both of the first bettor's team refuse: the raisers take 2
    assert g.scores[1 - bettor_team] == 2 and g.scores[bettor_team] == 0


def _raise_war(config: MusConfig, steps: int = 1500, tables: int = 64) -> int:
    """Games finished by a policy that raises by 10 whenever it may, else accepts (else the first legal)."""
    env = VectorMusEnv(tables, config, seed=1)
    obs, mask = env.reset()
    finished = 0
    for _ in range(steps):
        a = np.where(mask[:, ENVIDO_10] == 1, ENVIDO_10, np.where(mask[:, QUIERO] == 1, QUIERO, mask.argmax(1)))
        obs, mask, _, done, _ = env.step(a)
        finished += int(done.sum())
    return finished


def test_the_cap_ends_the_raise_war_that_never_ends_without_it() -> None:
    assert _raise_war(MusConfig(max_mus_rounds=1)) == 0
    assert _raise_war(MusConfig(max_mus_rounds=1, max_stake=40)) > 500


def test_a_checkpoint_from_before_the_cap_resumes_without_it(tmp_path) -> None:
    """A checkpoint whose settings have no ``max_stake`` ran without the cap: it resumes with ``max_stake=0`` and
    is refused (naming the setting) with the default cap, which would change its game."""
    torch = pytest.importorskip("torch")
    from agents.policy import load_policy_file, save_file
    from experiments.train import ppo as ps
    from experiments.train.checkpoint import to_torch

    def args(**kw):
        return ps.make_args("tiny", out=str(tmp_path / "run"), progress=False, total_decisions=32 * 8 * 3, **kw)

    ps.train(args(max_stake=0), max_updates=2, log=lambda *a: None)
    path = tmp_path / "run" / "checkpoint.pt"
    blob = load_policy_file(path)
    del blob["args"]["max_stake"]                        # as written before the cap existed
    save_file(path, to_torch(blob))
    with pytest.raises(ps.CheckpointError, match="max_stake=0 \\(now 40\\)"):
        ps.start(args(), resume=True)
    t = ps.train(args(max_stake=0), resume=True, log=lambda *a: None)
    assert t.update == 3 and t.cfg.max_stake is None
    assert all(torch.isfinite(v).all() for v in t.net.state_dict().values())
