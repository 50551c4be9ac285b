"""The baselines' decisions, pinned action for action: a digest of every action each agent returns.

Each match below plays a fixed deal set (``make_deals(2000, seed=...)``, duplicate: both seatings) with
:func:`experiments.evaluate.duplicate.play_pair`, every agent wrapped so that each ``act_batch`` call feeds the
actions it returns (int64 bytes, in call order) into a SHA-256 of its own. The digests also cover the
random draws: a change in the rng stream an agent consumes (the random and órdago agents' uniform draws, the
bluffs of ``bluff_rate``) changes the actions of every later call. The per-deal results of each match are
hashed too, and for one match the values ``EquityAgent.action_values`` gives at every decision (rounded to
1e-9).

The expected digests were recorded from the agents as they were before they were compiled (the numpy code of
commit 831e410): they pin that behaviour. A faster reader or decision rule must leave every digest unchanged;
a digest that changes means some decision changed, which is a change of the agent (its strength ladder, its
published results), never to be made by re-recording the digests as a side effect of an optimisation.
``python tests/test_agent_digests.py`` prints the digests the current code gives (to see which matches moved).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest

from agents import Agent, make_agent
from agents.equity import EquityAgent
from experiments.evaluate.deals import make_deals
from experiments.evaluate.duplicate import PairResult, play_pair
from mus_env import MusConfig
from mus_env.observation import SLOT_NAMES

DEALS = 2000
DEAL_SEED = 20231
TABLES = 512                      # 256 deals in flight: tables cycle through reset_tables several times

CONFIGS = {
    "default": MusConfig(),
    "kings4_target30": MusConfig(kings=4, target=30),
    "truthful": MusConfig(signals="truthful", signal_intercept_p=0.3),
    "free": MusConfig(signals="free", signal_intercept_p=0.5),
}


@dataclass(frozen=True)
class Match:
    """One duplicate match: agent specs (with keyword options), the config, the mode and the deal set."""

    a: str
    b: str
    config: str = "default"
    mode: str = "hands"
    deals: int = DEALS
    random_scores: bool = True
    a_options: tuple[tuple[str, object], ...] = ()
    b_options: tuple[tuple[str, object], ...] = ()
    seed: int = 7


MATCHES = {
    "rule-equity": Match("rule", "equity"),
    "rule-equity-zero": Match("rule", "equity", random_scores=False),
    "random-rule": Match("random", "rule"),
    "random-equity": Match("random", "equity"),
    "ordago-rule": Match("ordago", "rule"),
    "ordago-equity": Match("ordago", "equity"),
    "rule-equity-bluffs": Match("rule", "equity", a_options=(("bluff_rate", 0.15),), b_options=(("bluff_rate", 0.1),)),
    "equity-linear": Match("equity", "rule", a_options=(("score_aware", False),)),
    "rule-equity-games": Match("rule", "equity", mode="games", deals=200, random_scores=False),
    "k4-rule-equity": Match("rule", "equity", config="kings4_target30"),
    "k4-random-equity": Match("random", "equity", config="kings4_target30"),
    "k4-ordago-rule": Match("ordago", "rule", config="kings4_target30"),
    "signs-rule-equity": Match("rule", "equity", config="truthful"),
    "signs-random-rule": Match("random", "rule", config="truthful"),
    "signs-equity-boost": Match("equity", "rule-nosigns", config="truthful", a_options=(("sign_boost", True),)),
    "free-rule-equity": Match("rule", "equity", config="free"),
}

#: The digests of the code before the agents were compiled (module docstring): a, b, per-deal results, and
#: the number of actions each agent returned.
EXPECTED: dict[str, tuple[str, str, str, int, int]] = {
    "rule-equity": ("6c2b80622e4ad32b", "62c934c20115f860", "0b260da7216b2ae8", 44178, 40302),
    "rule-equity-zero": ("a1eccf166239f57d", "bc261c295de275c6", "843b80ea06b9c50c", 43569, 40399),
    "random-rule": ("072f93425f949820", "023a050c8e9200e0", "3110291df0231ca8", 32407, 50537),
    "random-equity": ("26ddf6e098c52b09", "b99b9235f2157b1a", "365eae92c9e848d2", 27701, 43979),
    "ordago-rule": ("7985d447f29b335e", "c00d85679fbda9d2", "b7f29ba951f7d716", 17521, 29583),
    "ordago-equity": ("039ae107a2297f45", "94f3a155a2c7d6c0", "37aa80f58457e40e", 20012, 36820),
    "rule-equity-bluffs": ("32050381d327c8b3", "3e64d6d61481a5aa", "c8113bbb84d4ef75", 42601, 39831),
    "equity-linear": ("814381dd93d19287", "92adc37e3856c365", "038d48bf3d7c5bbe", 40704, 43264),
    "rule-equity-games": ("76365ebf014fd600", "f48b0d99ac44f5af", "4e32f87d3f1a46f6", 33527, 31273),
    "k4-rule-equity": ("e357a77bcdca8035", "c334758f3c1f198d", "944f73c2a60a936b", 45148, 41892),
    "k4-random-equity": ("fc455bd1520ed69c", "f735660c106393d6", "05a0fc7993665364", 27489, 44191),
    "k4-ordago-rule": ("70d663705bfa5912", "a7de4c096dc03b3f", "d450e0608bcdde4d", 18063, 30065),
    "signs-rule-equity": ("881231497f07ba34", "e93df8e081d3d291", "847bd58289d37a1e", 63850, 60054),
    "signs-random-rule": ("c47bd2324871d2d7", "18de0d38c9060f74", "62d366a3ddfd27d3", 52194, 68126),
    "signs-equity-boost": ("e17f47e7d1485c49", "d61a3fdd82640502", "d4fb1d989c7bcb4d", 60972, 64468),
    "free-rule-equity": ("162d9a4bf1280e63", "9932b81ba8f65dc9", "53d825e095afb58a", 64130, 60286),
}
#: The digest of EquityAgent.action_values at every decision of "rule-equity" (rounded to 1e-9).
EXPECTED_VALUES = "9f030ab05a03a931"


class Recorder(Agent):
    """``inner``, hashing every action it returns (and optionally what ``values(obs, masks)`` says)."""

    def __init__(self, inner: Agent, values: EquityAgent | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.actions = hashlib.sha256()
        self.count = 0
        self.values = values
        self.value_digest = hashlib.sha256()

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        if self.values is not None:
            v = np.round(self.values.action_values(obs, masks), 9)
            self.value_digest.update(np.where(np.isnan(v), -99.0, v).tobytes())
        a = np.ascontiguousarray(self.inner.act_batch(obs, masks, rng), dtype=np.int64)
        self.actions.update(a.tobytes())
        self.count += len(a)
        return a


def _results_digest(r: PairResult) -> str:
    h = hashlib.sha256()
    for arr in (r.hand_value, r.hand_stones, r.lance_stones, r.game_wins, r.game_hands):
        h.update(np.ascontiguousarray(arr).tobytes())
    # the totals only: the per-lance counters (2026-12-05) split them and came after the digests were recorded
    totals = {k: {c: n for c, n in v.items() if c.split("_")[0] not in SLOT_NAMES} for k, v in r.stats.items()}
    h.update(repr(sorted((k, sorted(v.items())) for k, v in totals.items())).encode())
    return h.hexdigest()[:16]


def play(name: str, values: bool = False) -> tuple[tuple[str, str, str, int, int], str]:
    """Play match ``name``; its digests (as in :data:`EXPECTED`) and the action values' digest ("" unless
    ``values``)."""
    m = MATCHES[name]
    cfg = CONFIGS[m.config]
    deals = make_deals(m.deals, DEAL_SEED, cfg.target, m.random_scores)
    a = Recorder(make_agent(m.a, **dict(m.a_options)))
    b = Recorder(make_agent(m.b, **dict(m.b_options)), values=EquityAgent() if values else None)
    r = play_pair(a, b, deals, mode=m.mode, config=cfg, max_tables=TABLES, seed=m.seed)
    assert r.abandoned == 0
    got = (a.actions.hexdigest()[:16], b.actions.hexdigest()[:16], _results_digest(r), a.count, b.count)
    return got, (b.value_digest.hexdigest()[:16] if values else "")


@pytest.mark.parametrize("name", list(MATCHES))
def test_actions_are_unchanged(name: str) -> None:
    """Every action of both agents, and the match's results, are those of the recorded code."""
    got, value_digest = play(name, values=name == "rule-equity")
    assert got == EXPECTED[name], f"{name}: the agents' actions changed (got {got})"
    if value_digest:
        assert value_digest == EXPECTED_VALUES, f"EquityAgent.action_values changed (got {value_digest})"


if __name__ == "__main__":                                 # print the current code's digests
    for match in MATCHES if len(sys.argv) < 2 else sys.argv[1:]:
        digests, vd = play(match, values=match == "rule-equity")
        print(f"    {match!r}: {digests!r},")
        if vd:
            print(f"EXPECTED_VALUES = {vd!r}")
