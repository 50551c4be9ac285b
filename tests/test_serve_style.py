"""*Your style* in ``mus serve`` (issue 66): ``GET /api/style/<record>?seat=N`` is the profile that
``counts_from_record`` builds from the record (the rates ``StyleProfile`` writes), ``GET /api/style?player=NAME``
pools the player's finished records only, a game in progress is refused and counts nowhere, refusals name the
problem, and an agent's profile is read from ``<runs>/style/<spec>.style.json`` when there is one. The page
itself is in test_serve_browser.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from experiments.evaluate.style import LANCES, StyleCounts  # noqa: E402
from experiments.evaluate.style_play import counts_from_record  # noqa: E402
from experiments.evaluate.style_profile import StyleProfile, save_profile  # noqa: E402
from experiments.web.app import create_app  # noqa: E402
from mus_env.records import load_record  # noqa: E402


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.fixture(scope="module")
def tournament_records(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Four finished records of rule against random (seats 0 and 2 against 1 and 3, then swapped)."""
    from experiments.commands.tournament import main as tournament

    out = tmp_path_factory.mktemp("style-run") / "t"
    tournament(["--agents", "rule,random", "--hands", "30", "--games", "4", "--records", "2", "--quiet",
                "--out", str(out)])
    return sorted((out / "records").glob("*.json"))


@pytest.fixture()
def served(tmp_path: Path, tournament_records: list[Path]) -> tuple[TestClient, Path, Path]:
    records, runs = tmp_path / "records", tmp_path / "runs"
    records.mkdir()
    runs.mkdir()
    for i, src in enumerate(tournament_records):
        (records / f"r{i}.json").write_bytes(src.read_bytes())
    return TestClient(create_app(records=records, runs=runs)), records, runs


def test_a_seats_profile_is_the_one_counts_from_record_builds(served) -> None:
    client, records, _ = served
    record = load_record(records / "r0.json")
    for seat in range(4):
        r = client.get(f"/api/style/r0.json?seat={seat}&agent=")
        assert r.status_code == 200, r.text
        data = r.json()
        counts, _ = counts_from_record(record, seats=[seat])
        assert counts.decisions() > 0
        want = _plain(StyleProfile(counts).to_dict())
        got = data["style"]["profile"]
        assert StyleCounts.from_dict(got["counts"]) == counts
        assert got["betting"] == want["betting"] and got["mus"] == want["mus"]
        assert data["player"] == record["players"][str(seat)] and data["seat"] == seat and data["agent"] is None
        summary = data["style"]["summary"]
        assert set(summary["lances"]) == set(LANCES)
        assert sum(summary["lances"][lance]["decisions"] for lance in LANCES) <= counts.decisions()
        assert summary["cut"] == want["mus"]["cut"]["all"]
        for lance in LANCES:                        # the page's rates are the profile's own
            fold = summary["lances"][lance]["fold"]
            answers = [want["betting"][lance][f"{side} answer"]["summary"]["fold"] for side in ("mano", "postre")]
            assert (fold["k"], fold["n"]) == (sum(a["k"] for a in answers), sum(a["n"] for a in answers))
            aggr = summary["lances"][lance]["aggression"]
            sides = [want["betting"][lance][side]["aggression"] for side in ("mano", "postre")]
            assert (aggr["bets_raises"], aggr["calls"]) == (sum(s["bets_raises"] for s in sides),
                                                            sum(s["calls"] for s in sides))


def _game_in_progress(client: TestClient) -> tuple[str, str]:
    """A one-person game against rule bots, a few moves in (the bots have decided): its id and API base."""
    r = client.post("/api/games", json={"seat": 0, "bots": ["rule", "rule", "rule"], "seed": 3})
    assert r.status_code == 200, r.text
    game_id, base = r.json()["id"], "/api/games/" + r.json()["url"].removeprefix("/play/")
    view = client.get(base).json()
    for _ in range(6):
        if view["over"]:
            break
        view = client.post(f"{base}/moves", json={"action": view["legal"][0]["action"], "turn": view["turn"]}).json()
    assert not view["over"]
    return game_id, base


def test_a_player_pools_only_finished_games_and_a_game_in_progress_leaks_nothing(served) -> None:
    client, records, _ = served
    game_id, _ = _game_in_progress(client)
    path = records / "games" / f"game-{game_id}.json"
    live = load_record(path)
    assert live["over"] is not True and counts_from_record(live, player="rule")[0].decisions() > 0
    before = path.read_bytes()

    for seat in range(4):                           # its seats: refused, and nothing of the game in the answer
        r = client.get(f"/api/style/games/game-{game_id}.json?seat={seat}")
        assert r.status_code == 409 and "still being played" in r.json()["error"]
        assert set(r.json()) == {"error", "code"}
    r = client.get("/api/style?player=human")      # its person has no finished game
    assert r.status_code == 404 and "human" in r.json()["error"] and set(r.json()) == {"error", "code"}

    r = client.get("/api/style?player=rule&agent=")
    assert r.status_code == 200, r.text
    data = r.json()
    finished = sorted(f"r{i}.json" for i in range(4))
    assert sorted(data["records"]) == finished
    total = StyleCounts()
    for name in finished:
        total += counts_from_record(load_record(records / name), player="rule")[0]
    assert StyleCounts.from_dict(data["style"]["profile"]["counts"]) == total
    assert data["style"]["profile"]["betting"] == _plain(StyleProfile(total).to_dict())["betting"]
    assert path.read_bytes() == before                                      # nothing changed


@pytest.mark.parametrize(("url", "status", "words"), [
    ("/api/style/r0.json", 400, "?seat=N"),
    ("/api/style/r0.json?seat=4", 400, "seat 0..3"),
    ("/api/style/r0.json?seat=x", 400, "seat 0..3"),
    ("/api/style/nothing.json?seat=0", 404, "no such file"),
    ("/api/style/games/.tables/x.json?seat=0", 404, ""),
    ("/api/style", 400, "?player=NAME"),
    ("/api/style?player=nobody", 404, "no finished game"),
    ("/api/style/r0.json?seat=0&agent=evil.py:X", 400, "not offered"),
])
def test_refusals_name_the_problem(served, url: str, status: int, words: str) -> None:
    r = served[0].get(url)
    assert r.status_code == status, r.text
    assert words in r.json()["error"] and set(r.json()) == {"error", "code"}


def test_an_agents_profile_is_read_from_the_runs_style_folder_or_computed(served) -> None:
    client, records, runs = served
    record = load_record(records / "r0.json")
    counts, _ = counts_from_record(record, player="random")
    save_profile(StyleProfile(counts, {"agent": "random", "deals": 7}), runs / "style" / "random.style.json")
    agent = client.get("/api/style/r0.json?seat=0&agent=random").json()["agent"]
    assert agent["source"] == "file" and agent["file"] == "style/random.style.json"
    assert StyleCounts.from_dict(agent["profile"]["counts"]) == counts and agent["profile"]["deals"] == 7
    rule = client.get("/api/style/r0.json?seat=0").json()["agent"]          # rule by default, computed here
    assert rule["source"] == "computed" and rule["profile"]["deals"] == 300
    assert rule["profile"]["decisions"] > 1000 and set(rule["summary"]["lances"]) == set(LANCES)
