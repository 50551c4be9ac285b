"""``mus style``'s señas and score situations (:mod:`experiments.evaluate.style_situations`).

* an agent that always makes one sign has that sign's rate 1, and ``random`` signs uniformly over the legal signs;
* a profile rebuilt from the record of a game with señas equals the one counted while it was played;
* an agent that bets only when its team is behind shows a bet rate 0 when ahead or level and above 0 when behind;
* the recorder counts the deals' own decisions only (the tables that finished their deals play on unrecorded);
* the command writes the señas and score sections, tables and plots.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from scipy.stats import norm

from agents import Agent, make_agent
from agents.features import read
from agents.signs import read_signs
from experiments.commands.style import main as style_main
from experiments.evaluate.style import HAND_CLASSES, Decisions, StyleCounts
from experiments.evaluate.style_play import StyleRecorder, counts_from_record, play_style, style_deals
from experiments.evaluate.style_plot import has_signs, plot_score, plot_signs
from experiments.evaluate.style_profile import (
    ProfileError,
    StyleProfile,
    load_profile,
    read_profile,
    save_profile,
    score_rates,
    sign_rates,
    wilson,
)
from experiments.evaluate.style_situations import SCORE_LEADS, SIGN_TOKENS, SIGN_WINDOWS, near_end, score_lead
from mus_env import MusConfig, MusGame
from mus_env.actions import ENVIDO_BASE, Action
from mus_env.phases import Phase
from mus_env.records import game_record, load_record, save_record
from mus_env.signals import NUM_SIGNS, SIGNAL_BASE, Sign

DEALS = 300
TRUTHFUL, FREE = MusConfig(signals="truthful"), MusConfig(signals="free")


class OneSign(Agent):
    """``rule``, except that in every sign window it makes ``token``."""

    def __init__(self, token: int) -> None:
        self.inner, self.token, self.name = make_agent("rule"), int(token), f"sign-{int(token)}"

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        out = np.asarray(self.inner.act_batch(obs, masks, rng), dtype=np.int64)
        out[read_signs(obs).window >= 0] = SIGNAL_BASE + self.token
        return out


class BetsWhenBehind(Agent):
    """``rule``, except in the opening round: an envido (the smallest) when its team is behind, else paso."""

    def __init__(self) -> None:
        self.inner, self.name = make_agent("rule"), "bets-when-behind"

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        out = np.asarray(self.inner.act_batch(obs, masks, rng), dtype=np.int64)
        f = read(obs)
        opening = f.phase == Phase.BET_OPEN
        behind = f.own < f.other
        out[opening & behind & (masks[:, ENVIDO_BASE] > 0)] = ENVIDO_BASE
        out[opening & ~behind] = int(Action.PASO)
        return out


@lru_cache(maxsize=4)
def _signing(spec: str) -> tuple[StyleCounts, Decisions]:
    agent = OneSign(int(Sign.DUPLES)) if spec == "duples" else make_agent(spec)
    deals, _ = style_deals(deals=DEALS, seed=7)
    counts, rows = play_style(agent, deals, ["rule"], config=FREE if spec == "duples" else TRUTHFUL, seed=7,
                              keep_rows=True)
    assert rows is not None and counts.decisions() == len(rows)
    return counts, rows


def test_an_agent_that_always_makes_one_sign_has_its_rate_one() -> None:
    counts, d = _signing("duples")
    rates = sign_rates(counts)
    for wi, window in enumerate(SIGN_WINDOWS):
        made = rates[window]["made"]
        assert rates[window]["decisions"] > 500 and made["duples"]["rate"] == 1.0
        assert made["duples"]["lo"] <= 1.0 <= made["duples"]["hi"] and made["duples"]["lo"] > 0.99
        assert all(made[t]["k"] == 0 for t in SIGN_TOKENS if t != "duples")
        assert rates[window]["where_legal"]["duples"]["rate"] == 1.0                 # free: every sign legal
        by_class = rates[window]["by_class"]
        assert sum(by_class[c]["n"] for c in HAND_CLASSES) == rates[window]["decisions"]
        assert all(by_class[c]["made"]["duples"]["k"] == by_class[c]["n"] for c in HAND_CLASSES)
        assert int(counts.sign_n[wi].sum()) == int(((d.window == wi)).sum())
    # both windows are met; the sign decisions are not "other" any more
    assert counts.other == int(((d.window < 0) & (d.situation < 0) & (d.phase != Phase.DISCARD)
                                & ~((d.phase == Phase.MUS_CALL) & d.is_legal(int(Action.MUS)))).sum())
    assert (d.sign[d.window >= 0] == int(Sign.DUPLES)).all()


def test_random_signs_uniformly_over_the_legal_signs() -> None:
    counts, d = _signing("random")
    ks, ns, exps = [], [], []
    size = np.array([bin(int(x)).count("1") for x in d.sign_legal])
    for wi in range(len(SIGN_WINDOWS)):
        for ci in range(len(HAND_CLASSES)):
            rows = (d.window == wi) & (d.hand_class == ci)
            if not rows.any():
                continue
            assert counts.sign_n[wi, ci] == rows.sum()
            for t in range(NUM_SIGNS):
                legal = ((d.sign_legal[rows] >> t) & 1).astype(bool)
                assert counts.sign_legal[wi, ci, t] == legal.sum()
                if legal.any():
                    ks.append(int(counts.sign_k[wi, ci, t]))
                    ns.append(int(rows.sum()))
                    exps.append(float((legal / size[rows]).mean()))
                else:
                    assert counts.sign_k[wi, ci, t] == 0                             # never an illegal sign
    ks, ns, exps = np.array(ks), np.array(ns), np.array(exps)
    assert len(ks) > 60 and counts.sign_n.sum() > 2000
    # every cell of 30 decisions or more (what the profile does not mark "few") at the family-wise 95% level; the
    # small cells' exact tails are not Wilson's (here NONE with medias and 31 in the mus window is 8 of 11 against
    # 0.19 expected, p = 1.6e-4), so they count in the share below and in the pooled check only
    big = ns >= 30
    z = float(norm.ppf(1 - 0.05 / 2 / big.sum()))
    lo, hi = wilson(ks[big], ns[big], z)
    assert big.sum() > 30 and ((lo <= exps[big]) & (exps[big] <= hi)).all(), (ks[big] / ns[big], exps[big])
    lo, hi = wilson(ks, ns)
    assert ((lo <= exps) & (exps <= hi)).mean() >= 0.85
    # each token pooled over the hand classes of a window: thousands of decisions, so a small bias shows here
    for wi in range(len(SIGN_WINDOWS)):
        rows = d.window == wi
        n = int(rows.sum())
        k = counts.sign_k[wi].sum(axis=0)
        expected = np.array([(((d.sign_legal[rows] >> t) & 1) / size[rows]).mean() for t in range(NUM_SIGNS)])
        seen = expected > 0
        lo, hi = wilson(k[seen], n, float(norm.ppf(1 - 0.001 / 2 / seen.sum())))
        assert ((lo <= expected[seen]) & (expected[seen] <= hi)).all(), (k[seen] / n, expected[seen])


def test_a_profile_from_a_record_with_signs_equals_the_profile_counted_in_play(tmp_path: Path) -> None:
    rule, equity = StyleRecorder(make_agent("rule"), keep_rows=True), StyleRecorder(make_agent("equity"))
    for seed in (3, 4):
        deals, _ = style_deals(deals=1, seed=seed)
        g = MusGame.from_deck(deals.decks[0].tolist(), int(deals.mano[0]), (0, 0), TRUTHFUL, int(deals.seeds[0]))
        rng = np.random.default_rng(seed)
        agents = {0: rule, 1: equity, 2: rule, 3: equity}
        while not g.is_over:
            seat = g.current_player
            g.step(int(agents[seat].act(g.observe(seat), g.legal_action_mask(), rng)))
        save_record(game_record(g, players={0: "rule", 1: "equity", 2: "rule", 3: "equity"}),
                    tmp_path / f"game{seed}.json")
    from_rule, from_equity = StyleCounts(), StyleCounts()
    for seed in (3, 4):
        record = load_record(tmp_path / f"game{seed}.json")
        from_rule += counts_from_record(record, player="rule")[0]
        from_equity += counts_from_record(record, seats=[1, 3])[0]
    assert from_rule == rule.counts and from_equity == equity.counts
    assert rule.counts.sign_n[0].sum() > 10 and rule.counts.sign_n[1].sum() > 10
    assert rule.counts.score_n.sum() == rule.counts.bet_n.sum() > 30
    style_main(["rule", "--records", str(tmp_path / "game3.json"), str(tmp_path / "game4.json"),
                "--out", str(tmp_path / "out"), "--quiet", "--no-plots"])
    assert load_profile(tmp_path / "out" / "rule.style.json").counts == rule.counts


def test_the_score_situations_are_the_lead_and_the_last_stones() -> None:
    assert [SCORE_LEADS[i] for i in score_lead([3, 5, 5], [5, 5, 3])] == ["behind", "level", "ahead"]
    # 40: near the end from 35 stones (5 to go); 30: from 27 (3 to go); at least one stone
    assert near_end([35, 0, 34], [0, 35, 34], [40] * 3).tolist() == [True, True, False]
    assert near_end([27, 26], [0, 0], [30, 30]).tolist() == [True, False]
    assert near_end([4, 3], [0, 0], [5, 5]).tolist() == [True, False]


def test_an_agent_that_bets_only_when_behind_shows_it_by_the_score() -> None:
    deals, name = style_deals(deals=DEALS, seed=11, random_scores=True)
    assert name == "v1-custom-scores" and (deals.scores != deals.scores[:, ::-1]).any()
    counts, d = play_style(BetsWhenBehind(), deals, ["rule"], seed=11, keep_rows=True)
    assert d is not None
    sc = score_rates(counts)
    assert sc["ahead"]["bet"]["n"] > 300 and sc["ahead"]["bet"]["k"] == 0 and sc["ahead"]["bet"]["hi"] < 0.02
    assert sc["level"]["bet"]["k"] == 0
    assert sc["behind"]["bet"]["n"] > 300 and sc["behind"]["bet"]["lo"] > 0.5
    near = sc["near end"]["bet"]
    assert 0 < near["n"] < sc["ahead"]["bet"]["n"] + sc["behind"]["bet"]["n"] and 0 < near["k"] < near["n"]
    for lance, entry in sc["behind"]["lances"].items():
        assert entry["bet"]["k"] > 0, lance
        assert sc["ahead"]["lances"][lance]["bet"]["k"] == 0
    # the split holds every betting decision once: leads partition them
    assert sum(sc[s]["decisions"] for s in ("ahead", "level", "behind")) == int(counts.bet_n.sum())


def test_the_recorder_counts_the_deals_own_decisions_only() -> None:
    deals, _ = style_deals(deals=6, seed=13)
    together, _ = play_style(make_agent("rule"), deals, ["equity"], seed=13)
    apart = StyleCounts()
    for i in range(len(deals)):
        apart += play_style(make_agent("rule"), deals.subset(i, i + 1), ["equity"], seed=13)[0]
    assert together == apart and together.bet_n.sum() > 20


def test_a_version_one_profile_and_a_bad_layout_are_refused(tmp_path: Path) -> None:
    counts, _ = _signing("duples")
    path = save_profile(StyleProfile(counts, {"agent": "duples"}), tmp_path / "duples.style.json")
    assert load_profile(path).counts == counts
    for change, message in ((lambda x: x.update(version=1), "schema version 1, this mus-env reads version 2"),
                            (lambda x: x.update(sign_windows=["mus"]), "sign_windows"),
                            (lambda x: x.update(score_leads=["ahead"]), "score_leads"),
                            (lambda x: x["counts"].pop("sign_k"), r"counts\.sign_k: missing"),
                            (lambda x: x["counts"]["score_n"].pop(), r"counts\.score_n: expected")):
        bad = json.loads(path.read_text(encoding="utf-8"))
        change(bad)
        with pytest.raises(ProfileError, match=message):
            read_profile(bad, "bad.json")


def test_mus_style_with_signals_writes_the_signs_and_the_score(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    style_main(["random", "rule", "--deals", "30", "--field", "rule", "--signals", "truthful", "--random-scores",
                "--out", str(tmp_path), "--quiet", "--no-plots"])
    out = capsys.readouterr().out
    assert "Señas" in out and "By the score" in out and "near end" in out and "ciego" in out
    profiles = [load_profile(tmp_path / f"{a}.style.json") for a in ("random", "rule")]
    for path in (plot_signs(profiles, tmp_path / "style_signs.png"),
                 plot_score(profiles, tmp_path / "style_score.png")):
        assert path.stat().st_size > 0, path
    d = json.loads((tmp_path / "rule.style.json").read_text(encoding="utf-8"))
    assert d["version"] == 2 and d["config"]["signals"] == "truthful" and d["deal_set"] == "v1-custom-scores"
    assert d["signs"]["grande"]["decisions"] > 0 and d["score"]["behind"]["decisions"] > 0
    style_main(["rule", "--deals", "10", "--field", "rule", "--out", str(tmp_path / "off"), "--quiet", "--no-plots"])
    assert "Señas" not in capsys.readouterr().out
    assert has_signs(profiles) and not has_signs([load_profile(tmp_path / "off" / "rule.style.json")])
    with pytest.raises(SystemExit) as e:
        style_main(["ppo", "--signals", "truthful", "--out", str(tmp_path / "x")])
    assert e.value.code == 2 and not (tmp_path / "x").exists()
