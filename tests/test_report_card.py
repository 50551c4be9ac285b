"""``mus evaluate``: the report card (duplicate rows against the opponents, the place in the reference ladder,
JSON and markdown), the ladder fit on its own, and refusals that write nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from experiments.commands.evaluate import main as evaluate_main
from experiments.evaluate.report_card import place_in_ladder, reference_ladder

ROOT = Path(__file__).resolve().parents[1]


class _Games:
    """Stands in for a PairResult's games: per deal, the agent's score over the two paired games."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = np.asarray(scores, dtype=np.float64)

    def match_scores(self) -> np.ndarray:
        return self.scores


def test_the_ladder_fit_places_the_agent_between_the_opponents_it_beats_and_loses_to() -> None:
    ratings = {"weak": 1000.0, "strong": 1400.0}
    even = place_in_ladder({"weak": _Games([0.0, 1.0] * 100), "strong": _Games([0.5] * 200)}, ratings)
    assert 1190 < even["elo"] < 1210 and 5 < even["se"] < 100
    better = place_in_ladder({"weak": _Games([1.0] * 150 + [0.5] * 50), "strong": _Games([0.5] * 200)}, ratings)
    worse = place_in_ladder({"weak": _Games([0.5] * 200), "strong": _Games([0.0] * 150 + [0.5] * 50)}, ratings)
    assert worse["elo"] < even["elo"] < better["elo"]
    alone = place_in_ladder({"weak": _Games([0.75] * 400)}, ratings)      # 3:1 against 1000 is about +191
    assert abs(alone["elo"] - 1191) < 5
    with pytest.raises(ValueError, match="reference rating"):
        place_in_ladder({"nobody": _Games([1.0])}, ratings)


def test_the_reference_ladder_is_the_documented_one() -> None:
    docs = json.loads((ROOT / "docs" / "ladder_results.json").read_text())
    ref = reference_ladder()
    assert docs["rating"]["unit"] == ref["unit"] == "Elo"
    assert {k: round(v["rating"], 1) for k, v in docs["ladder"].items()} == ref["ratings"]
    assert ref["command"].startswith("mus tournament --agents " + ",".join(docs["meta"]["agents"]))


def _card(tmp_path: Path, agent: str, capsys: pytest.CaptureFixture[str]) -> dict:
    out = tmp_path / agent
    evaluate_main([agent, "--deal-set", "v1-quick", "--hands", "60", "--games", "40", "--opponents", "rule,equity",
                   "--out", str(out)])
    assert "Report card" in capsys.readouterr().out
    assert "Place in the ladder" in (out / "card.md").read_text()
    return json.loads((out / "card.json").read_text())


def test_cards_of_a_weak_and_a_strong_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    weak, strong = _card(tmp_path, "random", capsys), _card(tmp_path, "equity", capsys)
    assert [r["opponent"] for r in weak["rows"]] == ["rule", "equity"]
    assert [r["opponent"] for r in strong["rows"]] == ["rule"]                # itself is left out
    assert weak["deal_set"] == "v1-quick-custom" and weak["hands"] == 60 and weak["games"] == 40
    assert weak["rows"][0]["stones"] < 0 < strong["rows"][0]["stones"]
    assert weak["ladder"]["elo"] + 100 < strong["ladder"]["elo"]
    assert weak["ladder"]["rank"] > strong["ladder"]["rank"]
    assert weak["command"].startswith("mus evaluate random")


def test_a_card_against_unrated_opponents_only_has_no_ladder_place(tmp_path: Path, capsys) -> None:
    """Against a policy file alone (a best response against the agent it beats) the card is written, without a
    place in the ladder, and says why."""
    from agents.policy import PolicyNet, save_policy
    from mus_env import MusConfig

    policy = tmp_path / "other.pt"
    save_policy(policy, PolicyNet(hidden=(8,)), MusConfig().to_dict())
    out = tmp_path / "card"
    evaluate_main(["rule", "--deal-set", "v1-quick", "--hands", "20", "--games", "4", "--opponents", str(policy),
                   "--out", str(out)])
    card = json.loads((out / "card.json").read_text())
    assert card["ladder"] is None and [r["opponent"] for r in card["rows"]] == [str(policy)]
    text = (out / "card.md").read_text()
    assert "No place in the ladder" in text and "add one of" in text and "Place in the ladder" not in text
    assert "Report card" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [(["nonsense"], "unknown agent spec"),
                                         (["rule", "--opponents", "rule,bad"], "bad"),
                                         (["rule", "--deal-set", "v9"], "deal-set"),
                                         (["rule", "--hands", "0"], "--hands")])
def test_refusals_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list, words: str) -> None:
    with pytest.raises(SystemExit) as e:
        evaluate_main([*argv, "--out", str(tmp_path / "out")])
    assert e.value.code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_torch_threads_sets_torch_threads_and_refuses_a_bad_count(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``mus evaluate --torch-threads N`` (and ``mus tournament``'s) sets torch's thread count before playing; a
    negative count is refused with the flag named and nothing written."""
    torch = pytest.importorskip("torch")
    from experiments.commands.tournament import main as tournament_main

    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    try:
        evaluate_main(["rule", "--deal-set", "v1-quick", "--hands", "4", "--games", "2", "--opponents", "random",
                       "--torch-threads", str(other), "--out", str(tmp_path / "card")])
        assert torch.get_num_threads() == other
        torch.set_num_threads(before)
        tournament_main(["--agents", "rule,random", "--hands", "4", "--games", "0", "--quiet", "--no-plots",
                         "--torch-threads", str(other), "--out", str(tmp_path / "t")])
        assert torch.get_num_threads() == other
    finally:
        torch.set_num_threads(before)
    capsys.readouterr()
    for command in (evaluate_main, tournament_main):
        with pytest.raises(SystemExit):
            command(["rule", "--torch-threads", "-1", "--out", str(tmp_path / "bad")] if command is evaluate_main
                    else ["--agents", "rule,random", "--torch-threads", "-1", "--out", str(tmp_path / "bad")])
        assert "--torch-threads" in capsys.readouterr().err
        assert not (tmp_path / "bad").exists()
