"""Recorded games: a fixed set of seeded games played with seeded random legal actions, in both engines,
reduced to one SHA-256 digest per game (every observation of all four seats, masks, rewards, scores).

The digests in ``tests/data/recorded_games.json`` were written by ``python tests/recorded_games.py --write``
at commit 8b30f17, before the señas channel existed; ``tests/test_signals.py`` replays the games with
``signals="off"`` and requires the same digests (RULES.md §8: with signals off nothing may change).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from mus_env import MusConfig, MusGame, VectorMusEnv

DATA = Path(__file__).parent / "data" / "recorded_games.json"
#: (name, config) pairs covering the switches that reach the hot paths.
CONFIGS = {
    "default": MusConfig(),
    "kings4_punto": MusConfig(kings=4, target=30),
    "override_declare": MusConfig(partner_override=True, auto_declare=False, real31="sota"),
}
SEEDS = range(40)
VECTOR_TABLES = 16
VECTOR_STEPS = 400


def scalar_digest(config: MusConfig, seed: int) -> str:
    """Digest of one MusGame played to the end with random legal actions drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    g = MusGame(config, seed=seed)
    h = hashlib.sha256()
    while not g.is_over:
        for s in range(4):
            h.update(g.observe(s).tobytes())
        h.update(g.state().tobytes())
        mask = g.legal_action_mask()
        h.update(mask.tobytes())
        legal = np.flatnonzero(mask)
        g.step(int(legal[rng.integers(len(legal))]))
    for s in range(4):
        h.update(g.observe(s).tobytes())
    h.update(repr((g.winner, g.scores, g.hand_number)).encode())
    return h.hexdigest()


def vector_digest(config: MusConfig, seed: int) -> str:
    """Digest of VECTOR_STEPS steps of a VectorMusEnv (auto-reset included) with random legal actions."""
    venv = VectorMusEnv(VECTOR_TABLES, config, seed=seed, reward="stones", num_threads=1)
    rng = np.random.default_rng(seed)
    obs, mask = venv.reset()
    h = hashlib.sha256()
    for _ in range(VECTOR_STEPS):
        h.update(obs.tobytes())
        h.update(mask.tobytes())
        u = rng.random(len(mask))
        counts = mask.sum(1)
        pick = np.minimum((u * counts).astype(np.int64), counts - 1)
        actions = np.array([np.flatnonzero(m)[k] for m, k in zip(mask, pick, strict=True)])
        obs, mask, rewards, done, info = venv.step(actions)
        h.update(rewards.tobytes())
        h.update(np.asarray(done).tobytes())
    h.update(venv.state().tobytes())
    return h.hexdigest()


def digests() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for name, cfg in CONFIGS.items():
        out[name] = {f"scalar_{s}": scalar_digest(cfg, s) for s in SEEDS}
        out[name].update({f"vector_{s}": vector_digest(cfg, s) for s in range(3)})
    return out


if __name__ == "__main__":
    if "--write" in sys.argv:
        DATA.parent.mkdir(exist_ok=True)
        DATA.write_text(json.dumps(digests(), indent=1, sort_keys=True) + "\n")
        print("wrote", DATA)
