"""``mus serve``'s API: whole games over HTTP, no hidden card in any response, refusals that change nothing,
concurrent moves, restart and resume, no path outside the served folders, uploads, run pages, analyses; shared
tables of people and bots: each link sees only its seat's view (answers and event streams), forged and foreign
tokens open nothing, a seat moves only for itself, the host's handover, a restart in the middle of a hand; a
one-person game opens only by its link (its id alone opens nothing), the records list shows no token and nobody
else's game in progress, records saved before games had keys still load; an open stream of a seat given to a bot
sends no more of its cards; two handovers survive a restart."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from hang_guards import APPEAR_S, SERVER_S  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from agents import Agent  # noqa: E402
from experiments.web.app import MAX_BODY_BYTES, MAX_UPLOAD_BYTES, create_app  # noqa: E402
from experiments.web.store import PERSON, PathRefused, safe_path  # noqa: E402
from experiments.web.table import StaleTurn, Table  # noqa: E402
from mus_env import Action, MusConfig, MusGame  # noqa: E402
from mus_env.actions import is_sign_action  # noqa: E402
from mus_env.records import load_record, replay  # noqa: E402

BOTS = ["rule", "random", "rule"]


@pytest.fixture()
def folders(tmp_path: Path) -> tuple[Path, Path]:
    records, runs = tmp_path / "records", tmp_path / "runs"
    records.mkdir()
    runs.mkdir()
    return records, runs


@pytest.fixture()
def client(folders: tuple[Path, Path]) -> TestClient:
    records, runs = folders
    return TestClient(create_app(records=records, runs=runs))


#: The API base of each one-person game a test made (``/api/games/<id>/<token>``), by id.
_LINKS: dict[str, str] = {}


def _new_game(client: TestClient, **settings: Any) -> str:
    body = {"seat": 0, "bots": BOTS, **settings}
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    game_id, url = r.json()["id"], r.json()["url"]
    assert url.startswith(f"/play/{game_id}/")
    _LINKS[game_id] = "/api/games/" + url.removeprefix("/play/")
    return game_id


def _solo(game_id: str) -> str:
    """The API base of one-person game ``game_id`` (its link's id and token)."""
    return _LINKS[game_id]


def _choose(view: dict[str, Any], rng: np.random.Generator) -> int:
    legal = [a["action"] for a in view["legal"]]
    if 1 in legal and rng.random() < 0.7:
        return 1                                      # cut the mus most of the time: shorter hands
    return int(rng.choice(legal))


def _play_to_the_end(client: TestClient, game_id: str, rng: np.random.Generator,
                     check: Any = None, limit: int = 3000) -> dict[str, Any]:
    view = client.get(f"{_solo(game_id)}").json()
    for _ in range(limit):
        if check:
            check(view)
        if view["over"]:
            return view
        r = client.post(f"{_solo(game_id)}/moves", json={"action": _choose(view, rng), "turn": view["turn"]})
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("the game did not end")


def test_a_whole_game_over_http_is_saved_as_a_record_that_replays(client: TestClient, folders) -> None:
    game_id = _new_game(client, seed=7)
    view = _play_to_the_end(client, game_id, np.random.default_rng(1))
    assert view["winner"] in (0, 1) and max(view["scores"]) >= 0
    path = folders[0] / "games" / f"game-{game_id}.json"
    record = load_record(path)
    game = replay(record, check=True)                 # what mus replay verifies
    assert game.is_over and game.winner == view["winner"] and record["players"]["0"] == "human"
    listed = client.get("/api/records").json()["records"]
    assert any(r["name"] == f"games/game-{game_id}.json" and r["over"] for r in listed)
    timeline = client.get(f"/api/records/games/game-{game_id}.json").json()
    assert len(timeline["steps"]) == view["turn"] + 1 and timeline["winner"] == view["winner"]


def _allowed_cards(table: Any, seat: int) -> set[int]:
    """Every card ``seat`` may have seen: its own, past and present, and the hands the rules showed."""
    g = table.game
    allowed = set(g.hands[seat]) if not g.is_over else set()
    for m in table.log:
        if m.seat == seat:
            allowed.update(m.thrown)
    for h in g.hand_log:
        allowed.update(h.initial_hands[seat])
        allowed.update(h.final_hands[seat])
        if h.shown:
            for s in range(4):
                allowed.update(h.final_hands[s])
    return allowed


def _cards_in(value: Any) -> list[int]:
    if isinstance(value, dict):
        found = [value["card"]] if "card" in value else []
        return found + [c for v in value.values() for c in _cards_in(v)]
    if isinstance(value, list):
        return [c for v in value for c in _cards_in(v)]
    return []


@pytest.mark.parametrize("settings", [{}, {"signals": "truthful", "intercept": 0.3},
                                      {"signals": "free", "intercept": 0.0}, {"kings": 4, "target": 30}],
                         ids=["plain", "truthful-0.3", "free-0", "kings4"])
def test_no_response_holds_a_card_or_sign_the_seat_may_not_see(client: TestClient, settings: dict) -> None:
    """Every card object in every response is one the person's seat may see (its own, or a hand the rules
    showed), checked against the engine's own hands; rival signs it did not intercept never appear."""
    store = client.app.state.store
    checked = {"cards": 0, "hidden_signs": 0, "views": 0}
    for seed in range(3):
        game_id = _new_game(client, seed=100 + seed, seat=seed % 4, **settings)
        table = store.get(game_id)
        seat = next(iter(table.people))

        def check(view: dict[str, Any], table: Any = table, seat: int = seat) -> None:
            allowed = _allowed_cards(table, seat)
            cards = _cards_in(view)
            hidden = [c for c in cards if c not in allowed]
            assert not hidden, f"cards hidden from seat {seat} in a response: {hidden}"
            checked["cards"] += len(cards)
            checked["views"] += 1
            shown = {m["index"] for m in view["history"]}
            for m in table.log:
                if m.hand_number == table.game.hand_number and is_sign_action(m.action) and not (m.seen_by >> seat) & 1:
                    assert m.index not in shown, f"an unseen sign of seat {m.seat} reached seat {seat}"
                    checked["hidden_signs"] += 1
            seen = table.game.signs_seen(seat)
            assert {w: {int(s): v["token"] for s, v in d.items()} for w, d in view["signs"].items()} == seen
            text = json.dumps(view)
            assert '"deck"' not in text and '"stock"' not in text and '"initial_hands"' not in text

        _play_to_the_end(client, game_id, np.random.default_rng(seed), check)
    assert checked["cards"] > 100 and checked["views"] > 10
    if settings.get("signals") == "truthful":
        assert checked["hidden_signs"] > 0             # the check met signs the seat did not see


def _snapshot(client: TestClient, folders, game_id: str) -> tuple[str, bytes]:
    view = client.get(f"{_solo(game_id)}").text
    return view, (folders[0] / "games" / f"game-{game_id}.json").read_bytes()


def test_refused_moves_change_nothing(client: TestClient, folders) -> None:
    game_id = _new_game(client, seed=3)
    view = client.get(f"{_solo(game_id)}").json()
    while view["current_player"] != view["seat"]:
        pytest.fail("the bots should have played up to the person's turn")
    before = _snapshot(client, folders, game_id)
    legal = [a["action"] for a in view["legal"]]
    illegal = next(a for a in range(31) if a not in legal)
    bad = [({"action": illegal, "turn": view["turn"]}, 400, "not legal now"),
           ({"action": "1", "turn": view["turn"]}, 400, "integer id"),
           ({"action": True, "turn": view["turn"]}, 400, "integer id"),
           ({"action": legal[0], "turn": view["turn"] - 1}, 409, "turn"),
           ({"action": legal[0]}, 400, "turn"),
           ([1, 2], 400, "turn")]
    for body, status, words in bad:
        r = client.post(f"{_solo(game_id)}/moves", json=body)
        assert r.status_code == status and words in r.json()["error"], (body, r.status_code, r.text)
        if status == 400 and "not legal" in words:
            assert str(legal) in r.json()["error"]
    r = client.post(f"{_solo(game_id)}/moves", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = client.post(f"{_solo(game_id)}/moves", content=b'{"action": 1, "turn": 0}',
                    headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = client.post(f"{_solo(game_id)}/moves", content=b" " * (MAX_BODY_BYTES + 1),
                    headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert _snapshot(client, folders, game_id) == before
    assert client.get("/api/games/0123456789abcdef").status_code == 404
    assert client.get("/api/games/not-a-game").status_code == 404
    assert client.post("/api/games/0123456789abcdef/moves", json={"action": 1, "turn": 0}).status_code == 404


@pytest.mark.parametrize("body, words", [
    ({"seat": 5, "bots": BOTS}, "seat"), ({"seat": 0, "bots": ["rule"]}, "three"),
    ({"seat": 0, "bots": ["rule", "rule", "evil.py:Bot"]}, "not offered"),
    ({"seat": 0, "bots": ["rule", "rule", "runs:../x.pt"]}, "not offered"),
    ({"seat": 0, "bots": BOTS, "kings": 5}, "kings"), ({"seat": 0, "bots": BOTS, "signals": "loud"}, "signals"),
    ({"seat": 0, "bots": BOTS, "signals": "off", "intercept": 0.3}, "signal_intercept_p"),
    ({"seat": 0, "bots": BOTS, "seed": -1}, "seed"),
])
def test_new_game_refusals_name_the_problem(client: TestClient, folders, body: dict, words: str) -> None:
    r = client.post("/api/games", json=body)
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert not (folders[0] / "games").exists() or not list((folders[0] / "games").iterdir())


def test_two_tabs_moving_at_once_make_one_move(client: TestClient, folders) -> None:
    game_id = _new_game(client, seed=11)
    view = client.get(f"{_solo(game_id)}").json()
    action = view["legal"][0]["action"]
    results: list[int] = []
    barrier = threading.Barrier(4)

    def tab() -> None:
        barrier.wait()
        results.append(client.post(f"{_solo(game_id)}/moves",
                                   json={"action": action, "turn": view["turn"]}).status_code)

    threads = [threading.Thread(target=tab) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [200, 409, 409, 409]
    record = load_record(folders[0] / "games" / f"game-{game_id}.json")
    replay(record, check=True)
    after = client.get(f"{_solo(game_id)}").json()
    assert after["turn"] > view["turn"]


def test_a_restarted_server_continues_the_game(folders) -> None:
    records, runs = folders
    first = TestClient(create_app(records=records, runs=runs))
    game_id = _new_game(first, seed=21)
    rng = np.random.default_rng(2)
    view = first.get(f"{_solo(game_id)}").json()
    for _ in range(6):
        if view["over"]:
            break
        view = first.post(f"{_solo(game_id)}/moves",
                          json={"action": _choose(view, rng), "turn": view["turn"]}).json()
    second = TestClient(create_app(records=records, runs=runs))          # a new process: nothing in memory
    again = second.get(f"{_solo(game_id)}").json()
    assert again == view
    _play_to_the_end(second, game_id, rng)
    assert replay(load_record(records / "games" / f"game-{game_id}.json"), check=True).is_over


def test_a_tampered_saved_game_is_refused(folders) -> None:
    records, runs = folders
    client = TestClient(create_app(records=records, runs=runs))
    game_id = _new_game(client, seed=5)
    path = records / "games" / f"game-{game_id}.json"
    record = json.loads(path.read_text())
    assert record["pending_actions"], "the bots and the person have not moved yet?"
    record["pending_actions"][0][1] = 26                  # an órdago at the mus call: the record does not replay
    path.write_text(json.dumps(record))
    fresh = TestClient(create_app(records=records, runs=runs))
    r = fresh.get(f"{_solo(game_id)}")
    assert r.status_code == 422 and "does not replay" in r.json()["error"]


@pytest.mark.parametrize("name", ["../secret.json", "..%2Fsecret.json", "games/../../secret.json", "/etc/passwd",
                                  "%2Fetc%2Fpasswd", ".hidden.json", "games\\x.json", "link/secret.json",
                                  "games%2F..%2F..%2Fsecret.json"])
def test_no_path_leads_out_of_the_served_folders(client: TestClient, folders, name: str) -> None:
    records, runs = folders
    (records.parent / "secret.json").write_text('{"format": "mus-env-record"}')
    (records.parent / "secret.png").write_bytes(b"\x89PNG secret")
    (records / "link").symlink_to(records.parent, target_is_directory=True)
    (runs / "link").symlink_to(records.parent, target_is_directory=True)
    for url in (f"/api/records/{name}", f"/api/records/{name}/analysis?step=0&agent=ppo",
                f"/files/runs/{name.replace('.json', '.png')}", f"/api/runs/{name}"):
        r = client.get(url)
        assert r.status_code in (404, 400), (url, r.status_code)
        assert b"secret" not in r.content or b"no such" in r.content or b"not a plain" in r.content or \
            b"outside" in r.content, (url, r.content[:200])
    with pytest.raises(PathRefused, match="outside"):
        safe_path(records, "link/secret.json")


def _tournament_run(runs: Path) -> str:
    from experiments.commands.tournament import main as tournament

    tournament(["--agents", "rule,random", "--hands", "30", "--games", "4", "--records", "2", "--quiet",
                "--out", str(runs / "t")])
    return "t"


def test_upload_is_capped_and_verified(client: TestClient, folders) -> None:
    records, runs = folders
    _tournament_run(runs)
    good = load_record(next((runs / "t" / "records").glob("*.json")))
    r = client.post("/api/records", json=good)
    assert r.status_code == 200, r.text
    name = r.json()["name"]
    assert client.get(f"/api/records/{name}").status_code == 200
    tampered = json.loads(json.dumps(good))
    tampered["hands"][0]["scores_after"] = [39, 0]
    r = client.post("/api/records", json=tampered)
    assert r.status_code == 422 and "scores_after" in r.json()["error"]
    r = client.post("/api/records", content=b" " * (MAX_UPLOAD_BYTES + 1), headers={"content-type": "application/json"})
    assert r.status_code == 413
    uploads = sorted(p.name for p in (records / "uploads").iterdir())
    assert len(uploads) == 1                            # only the good one was kept


def test_run_pages_and_their_plots(client: TestClient, folders) -> None:
    records, runs = folders
    _tournament_run(runs)
    listed = client.get("/api/runs").json()["runs"]
    assert [r["name"] for r in listed] == ["t"] and listed[0]["kind"] == "tournament"
    run = client.get("/api/runs/t").json()
    assert set(run["results"]["ladder"]) == {"rule", "random"} and "ladder.png" in run["plots"]
    png = client.get("/files/runs/t/ladder.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    assert client.get("/files/runs/t/results.json").status_code == 404     # only plots are files here
    assert client.get("/api/runs/nope").status_code == 404


def test_finished_records_replay_with_analyses(client: TestClient, folders) -> None:
    records, runs = folders
    _tournament_run(runs)
    src = next((runs / "t" / "records").glob("*.json"))
    (records / "r.json").write_bytes(src.read_bytes())
    timeline = client.get("/api/records/r.json").json()
    steps = timeline["steps"]
    assert steps[-1]["move"] is None and all(len(s["cards"]) == 4 for s in steps[:-1])
    bet = next(k for k, s in enumerate(steps) if s["lance"] and s["move"] and s["move"]["kind"] == "move")
    ppo = client.get(f"/api/records/r.json/analysis?step={bet}&agent=ppo")
    if ppo.status_code == 200:                                          # torch installed
        rows = ppo.json()["actions"]
        assert abs(sum(r["probability"] for r in rows) - 1) < 1e-4
        assert isinstance(ppo.json()["value"], float)                   # the value head's estimate
        assert {r["action"] for r in rows} == set(steps[bet]["legal"])
    eq = client.get(f"/api/records/r.json/analysis?step={bet}&agent=equity").json()
    assert all("value" in r for r in eq["actions"]) and any(r["value"] is not None for r in eq["actions"])
    assert client.get(f"/api/records/r.json/analysis?step={bet}&agent=rule").status_code == 400
    r = client.get(f"/api/records/r.json/analysis?step={bet}&agent=evil.py:X")
    assert r.status_code == 400 and "not offered" in r.json()["error"]
    assert client.get("/api/records/r.json/analysis?step=99999&agent=equity").status_code == 400
    assert client.get("/api/records/r.json/analysis?step=x&agent=equity").status_code == 400


@pytest.mark.parametrize("signals", ["truthful", "free"])
def test_the_analysis_works_in_games_with_senas(signals: str) -> None:
    """What the agent thought, with señas on: ppo (trained without them) explains every decision of a game played
    with señas as it plays it (all on NONE at a sign decision, its own distribution without the signal block
    elsewhere; greedy, it plays the argmax), and equity explains every decision too."""
    pytest.importorskip("torch")
    from agents import make_agent
    from experiments.web.analysis import analyse
    from mus_env.actions import NUM_ACTIONS, SIGNAL_BASE, Sign
    from mus_env.observation import OBS_DIM

    ppo, greedy, equity = make_agent("ppo"), make_agent("ppo", greedy=True), make_agent("equity")
    game = MusGame(MusConfig(signals=signals), seed=5)
    rng = np.random.default_rng(0)
    signs = bets = 0
    while not game.is_over and bets < 60:
        seat = game.current_player
        obs, mask = game.observe(seat)[None], game.legal_action_mask()[None]
        p = {r["action"]: r["probability"] for r in analyse(ppo, game, "ppo")["actions"]}
        assert set(p) == set(game.legal_actions()) and abs(sum(p.values()) - 1) < 1e-4
        if is_sign_action(game.legal_actions()[0]):
            signs += 1
            assert p[SIGNAL_BASE + int(Sign.NONE)] == 1.0
        else:
            bets += 1
            own = ppo.probabilities(obs[:, :OBS_DIM], mask[:, :NUM_ACTIONS])[0]
            assert all(abs(p[a] - own[a]) < 1e-6 for a in p)
        best = max(p, key=p.get)
        assert int(greedy.act_batch(obs, mask, rng)[0]) == best
        assert all("value" in r for r in analyse(equity, game, "equity")["actions"])
        game.step(int(ppo.act_batch(obs, mask, rng)[0]))
    assert signs > 0 and bets > 0


def test_an_unfinished_record_is_not_replayed(client: TestClient, folders) -> None:
    game_id = _new_game(client, seed=1)
    r = client.get(f"/api/records/games/game-{game_id}.json")
    assert r.status_code == 409 and "still being played" in r.json()["error"]


def test_pages_are_served_with_a_strict_policy(client: TestClient) -> None:
    for url in ("/", "/play/0123456789abcdef/" + "x" * 32, "/replay/x.json", "/runs/t"):
        r = client.get(url)
        assert r.status_code == 200 and "<html" in r.text
        assert "default-src 'self'" in r.headers["content-security-policy"]
    scripts = "".join(p.read_text() for p in (Path(__file__).resolve().parents[1] / "experiments" / "web" /
                                               "static").glob("*.js"))
    assert "innerHTML" not in scripts and "insertAdjacentHTML" not in scripts and "eval(" not in scripts


def test_serve_command_binds_locally_and_warns_otherwise(monkeypatch, capsys, tmp_path) -> None:
    import experiments.commands.serve as serve

    calls = []
    monkeypatch.setattr(serve, "run_server", lambda app, **kw: calls.append(kw))
    serve.main(["--records", str(tmp_path / "r"), "--runs", str(tmp_path), "--port", "8123"])
    assert calls[-1]["host"] == "127.0.0.1" and calls[-1]["port"] == 8123
    out = capsys.readouterr()
    assert "http://127.0.0.1:8123/" in out.out and "warning" not in out.err
    serve.main(["--host", "0.0.0.0", "--records", str(tmp_path / "r"), "--runs", str(tmp_path)])
    assert "warning" in capsys.readouterr().err and calls[-1]["host"] == "0.0.0.0"
    with pytest.raises(SystemExit):
        serve.main(["--port", "0"])


def test_files_of_the_package_are_not_served_outside_static(client: TestClient) -> None:
    assert client.get("/static/../app.py").status_code == 404
    assert client.get("/static/style.css").status_code == 200
    digest = hashlib.sha256(client.get("/static/common.js").content).hexdigest()
    assert digest and os.sep not in digest


class _Scripted(Agent):
    """A bot that plays the first legal action of its list (else the first legal one); ``fail_first`` raises on
    its first decision, as a broken bot would, once."""

    name = "scripted"

    def __init__(self, *prefer: int, fail_first: bool = False) -> None:
        self.prefer, self.fail_first = prefer, fail_first

    def act(self, observation: Any, action_mask: Any, rng: Any) -> int:
        if self.fail_first:
            self.fail_first = False
            raise RuntimeError("the bot broke")
        return next((a for a in self.prefer if action_mask[a]), int(np.flatnonzero(action_mask)[0]))


def _table(mano: int, scores: tuple[int, int], bots: dict[int, Agent]) -> Table:
    """Seat 0 a person, the other seats ``bots``, the game at its first decision (``from_deck``: no seed decides
    the cards)."""
    deck = list(range(40))
    game = MusGame.from_deck(deck, mano=mano, scores=scores, config=MusConfig(), seed=0)
    table = Table(game=game, people=frozenset({0}), specs={s: "scripted" for s in bots}, bots=dict(bots),
                  first=(deck, mano, scores))
    table.advance()
    return table


def test_a_game_won_by_a_refused_bet_shows_no_hidden_hand() -> None:
    """At 39-39 seat 1 (mano) cuts the mus and bets grande; seat 2 and the person refuse: the bet's stone ends
    the game, with no showdown. The rivals' and the partner's cards of that hand stay hidden from the person, in
    the view and in its hand summary; the public replay shows them."""
    bots = {1: _Scripted(Action.NO_MUS, Action.ENVIDO_2), 2: _Scripted(Action.NO_QUIERO), 3: _Scripted()}
    table = _table(mano=1, scores=(39, 39), bots=bots)
    table.play(int(Action.NO_QUIERO), table.turn)
    game = table.game
    assert game.is_over and game.winner == 1 and not game.hand_log[-1].shown
    view = table.view(0)
    hidden = [c for c in _cards_in(view) if c not in _allowed_cards(table, 0)]
    assert not hidden, f"cards hidden from the person in the final view: {hidden}"
    final = view["hands"][-1]["final_hands"]
    assert final[1:] == [None, None, None] and {c["card"] for c in final[0]} == set(game.hand_log[-1].final_hands[0])
    public = table.hand_summary(game.hand_log[-1], None)["final_hands"]
    assert [sorted(c["card"] for c in h) for h in public] == [sorted(h) for h in game.hand_log[-1].final_hands]


def test_a_move_for_a_bots_seat_is_refused_after_the_bot_failed() -> None:
    """A bot that fails right after the person's move leaves the table at the bot's turn (the person's move is
    kept). A move sent then with the current turn number is still refused: it is not the person's seat."""
    bots = {1: _Scripted(fail_first=True), 2: _Scripted(), 3: _Scripted()}
    table = _table(mano=0, scores=(0, 0), bots=bots)
    turn = table.turn
    with pytest.raises(RuntimeError, match="the bot broke"):
        table.play(int(Action.MUS), turn)
    assert table.game.current_player == 1 and table.turn == turn + 1
    before = json.dumps(table.record(), sort_keys=True)
    for action in table.game.legal_actions():
        with pytest.raises(StaleTurn, match="not yours"):
            table.play(action, table.turn)
    assert json.dumps(table.record(), sort_keys=True) == before and table.game.current_player == 1


# ----------------------------------------------------------------------------------------------------------
# shared tables: people and bots, one link per person's seat, the views streamed as Server-Sent Events
def _api_of(link: str) -> str:
    """``/table/<id>/<token>`` -> ``/api/tables/<id>/<token>``."""
    assert link.startswith("/table/"), link
    return "/api" + link.replace("/table/", "/tables/", 1)


def _new_table(client: TestClient, seats: list[str], **settings: Any) -> dict[str, Any]:
    r = client.post("/api/tables", json={"seats": seats, **settings})
    assert r.status_code == 200, r.text
    return r.json()


def _tokens(links: dict[str, Any]) -> list[str]:
    return [links["host"].rsplit("/", 1)[1], links["watch"].rsplit("/", 1)[1],
            *(u.rsplit("/", 1)[1] for u in links["seats"].values())]


def _shown_cards(table: Any) -> set[int]:
    """The cards a spectator may have seen: the hands the rules showed."""
    return {c for h in table.game.hand_log if h.shown for s in range(4) for c in h.final_hands[s]}


def _check_shared(payload: dict[str, Any], table: Any, seat: int | None, links: dict[str, Any]) -> int:
    """Every card of ``payload`` (an answer or a stream message of seat ``seat``'s link; None: a spectator's)
    is one that seat may see, no sign it did not see is there (a spectator sees none), no token is there but
    the host's own links; returns the number of cards checked."""
    view = payload["view"]
    allowed = _allowed_cards(table, seat) if seat is not None else _shown_cards(table)
    cards = _cards_in(view)
    hidden = [c for c in cards if c not in allowed]
    assert not hidden, f"cards hidden from {'seat ' + str(seat) if seat is not None else 'a spectator'}: {hidden}"
    moves = view["history"] + [m for h in view["hands"] for m in h["moves"]]
    unseen = {m.index: m.hand_number for m in table.log if is_sign_action(m.action)
              and (seat is None or not (m.seen_by >> seat) & 1)}
    leaked = [m for m in moves if unseen.get(m["index"]) == m["hand"]]
    assert not leaked, f"signs that {seat} did not see: {leaked}"
    if seat is None:
        assert view["signs"] == {"mus": {}, "grande": {}} and not any(m["kind"] == "sign" for m in moves)
        assert view["legal"] == [] and view["seat"] is None
    elif view["turn"] == table.turn:
        seen = table.game.signs_seen(seat)
        assert {w: {int(s): v["token"] for s, v in d.items()} for w, d in view["signs"].items()} == seen
    text = json.dumps(payload)
    assert '"deck"' not in text and '"stock"' not in text and '"initial_hands"' not in text
    if payload["role"] != "host":
        assert not any(t in text for t in _tokens(links)), "a token reached a link that is not the host's"
    return len(cards)


class _Stream:
    """A table's event stream read in a thread: every ``view`` message lands in ``messages`` (a queue)."""

    def __init__(self, client: TestClient, link: str) -> None:
        self.messages: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.status: int | None = None
        self.thread = threading.Thread(target=self._read, args=(client, _api_of(link) + "/events"), daemon=True)
        self.thread.start()

    def _read(self, client: TestClient, url: str) -> None:
        with client.stream("GET", url) as r:
            self.status = r.status_code
            assert r.headers["content-type"].startswith("text/event-stream")
            event = None
            for line in r.iter_lines():
                if self.stop.is_set():
                    return
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    self.messages.put((event, json.loads(line[6:])))

    def until(self, turn: int) -> list[dict[str, Any]]:
        """The messages up to the first of turn ``turn`` (waits for it: a hang guard only ends a stuck test)."""
        got = []
        while True:
            event, payload = self.messages.get(timeout=APPEAR_S)
            assert event == "view"
            got.append(payload)
            if payload["view"]["turn"] == turn:
                return got

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=SERVER_S)


@pytest.fixture()
def quick_keepalive(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams send a comment every 0.2 s, so a reader thread notices its stop at once."""
    import experiments.web.app as app_module

    monkeypatch.setattr(app_module, "KEEPALIVE_S", 0.2)


@pytest.mark.parametrize("people, settings", [((0, 2), {"signals": "truthful", "intercept": 0.3}),
                                              ((0, 1), {"signals": "free", "intercept": 0.5}),
                                              ((1, 3), {})],
                         ids=["partners-truthful", "rivals-free", "partners-plain"])
def test_two_people_see_only_their_own_cards_in_answers_and_streams(client: TestClient, quick_keepalive: None,
                                                                    people: tuple[int, int], settings: dict) -> None:
    """Two people and two bots play a whole game, each by the link of their seat; every answer and every stream
    message of each seat holds only the cards that seat may see and the signs it saw; the spectator's stream and
    answers hold no hidden card and no sign; no token but the host's own links reach a page."""
    seats = [PERSON if s in people else "rule" for s in range(4)]
    links = _new_table(client, seats, seed=40 + people[1], **settings)
    assert set(links["seats"]) == {str(s) for s in people}
    assert len(set(_tokens(links))) == 4 and all(len(t) >= 32 for t in _tokens(links))
    table = client.app.state.store.get(links["id"])
    watchers = {s: _Stream(client, links["seats"][str(s)]) for s in people}
    watchers[None] = _Stream(client, links["watch"])
    rng = np.random.default_rng(people[1])
    checked = {"cards": 0, "messages": 0, "signs": 0}
    try:
        for _ in range(3000):
            for seat, stream in watchers.items():
                for payload in stream.until(table.turn):
                    checked["cards"] += _check_shared(payload, table, seat, links)
                    checked["messages"] += 1
            host = client.get(_api_of(links["host"])).json()
            assert host["role"] == "host" and host["links"] == {k: links[k] for k in ("host", "watch", "seats")}
            _check_shared(host, table, None, links)
            if table.game.is_over:
                break
            seat = table.game.current_player
            assert seat in people, "the bots must play up to a person's turn"
            other = next(s for s in people if s != seat)
            state = client.get(_api_of(links["seats"][str(seat)])).json()
            waiting = client.get(_api_of(links["seats"][str(other)])).json()
            assert state["role"] == "seat" and state["seat"] == seat and state["view"]["legal"]
            assert waiting["view"]["legal"] == [] and waiting["view"]["current_player"] == seat
            for payload, s in ((state, seat), (waiting, other)):
                checked["cards"] += _check_shared(payload, table, s, links)
            view = state["view"]
            r = client.post(_api_of(links["seats"][str(seat)]) + "/moves",
                            json={"action": _choose(view, rng), "turn": view["turn"]})
            assert r.status_code == 200, r.text
            checked["cards"] += _check_shared(r.json(), table, seat, links)
            checked["signs"] += sum(1 for m in table.log if is_sign_action(m.action))
        assert table.game.is_over
    finally:
        for stream in watchers.values():
            stream.close()
    assert all(stream.status == 200 for stream in watchers.values())
    assert checked["cards"] > 200 and checked["messages"] > 30
    if settings.get("signals"):
        assert checked["signs"] > 0
    final = client.get(_api_of(links["watch"])).json()
    assert final["replay"] == f"/replay/games/game-{links['id']}.json"
    assert client.get("/api/records/" + final["replay"].removeprefix("/replay/")).status_code == 200


def _table_files(folders, game_id: str) -> tuple[bytes, bytes]:
    games = folders[0] / "games"
    return (games / f"game-{game_id}.json").read_bytes(), (games / ".tables" / f"{game_id}.json").read_bytes()


def test_forged_and_foreign_tokens_open_nothing_and_change_nothing(client: TestClient, folders) -> None:
    import secrets

    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=3)
    other = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=4)
    game_id = links["id"]
    before, other_before = _table_files(folders, game_id), _table_files(folders, other["id"])
    view = client.get(_api_of(links["seats"]["0"])).json()["view"]
    move = {"action": view["legal"][0]["action"], "turn": view["turn"]}
    forged = [secrets.token_urlsafe(24), "x" * 32, "abc", links["seats"]["0"].rsplit("/", 1)[1][:-1] + "A",
              *_tokens(other)]
    for token in forged:
        base = f"/api/tables/{game_id}/{token}"
        with client.stream("GET", base + "/events") as stream:      # an open stream would be closed here
            assert stream.status_code == 403, (token, stream.status_code)
        for r in (client.get(base), client.post(base + "/moves", json=move),
                  client.post(base + "/bots", json={"seat": 2, "agent": "rule"})):
            assert r.status_code == 403 and "opens nothing" in r.json()["error"], (token, r.status_code, r.text)
            assert "view" not in r.text and "card" not in r.text
    token = links["seats"]["0"].rsplit("/", 1)[1]
    for url in (f"/api/tables/0123456789abcdef/{token}", f"/api/tables/not-a-table/{token}"):
        assert client.get(url).status_code == 404
    # a shared table's id opens nothing by itself
    assert client.get(f"/api/games/{game_id}").status_code == 404
    assert client.post(f"/api/games/{game_id}/moves", json=move).status_code == 404
    # nor do the keys' file or a path to it
    for name in (f"games/.tables/{game_id}.json", f"games/%2Etables/{game_id}.json"):
        assert client.get(f"/api/records/{name}").status_code == 404
    assert all(".tables" not in r["name"] for r in client.get("/api/records").json()["records"])
    assert _table_files(folders, game_id) == before and _table_files(folders, other["id"]) == other_before
    assert client.get(_api_of(links["seats"]["0"])).json()["view"] == view


def test_a_seat_moves_only_for_itself(client: TestClient, folders) -> None:
    """A seat's link moves only its own seat at its own turn; the spectators' and the host's links move no seat;
    only the host gives a seat to a bot. Each refusal changes nothing."""
    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=8)
    game_id = links["id"]
    table = client.app.state.store.get(game_id)
    seat = table.game.current_player
    other = 2 - seat
    before = _table_files(folders, game_id)
    view = client.get(_api_of(links["seats"][str(seat)])).json()["view"]
    move = {"action": view["legal"][0]["action"], "turn": view["turn"]}
    mine, theirs = _api_of(links["seats"][str(seat)]), _api_of(links["seats"][str(other)])
    refusals = [(theirs + "/moves", move, 409, "not yours"),
                (mine + "/moves", {**move, "seat": other}, 403, f"plays seat {seat}"),
                (theirs + "/moves", {**move, "seat": seat}, 403, f"plays seat {other}"),
                (_api_of(links["watch"]) + "/moves", move, 403, "plays no seat"),
                (_api_of(links["host"]) + "/moves", move, 403, "plays no seat"),
                (mine + "/bots", {"seat": other, "agent": "rule"}, 403, "only the host"),
                (_api_of(links["watch"]) + "/bots", {"seat": other, "agent": "rule"}, 403, "only the host"),
                (_api_of(links["host"]) + "/bots", {"seat": 1, "agent": "rule"}, 400, "not played by a person"),
                (_api_of(links["host"]) + "/bots", {"seat": other, "agent": "evil.py:X"}, 400, "not offered"),
                (mine + "/moves", {**move, "turn": move["turn"] - 1}, 409, "turn")]
    for url, body, status, words in refusals:
        r = client.post(url, json=body)
        assert r.status_code == status and words in r.json()["error"], (url, body, r.status_code, r.text)
    assert _table_files(folders, game_id) == before
    r = client.post(mine + "/moves", json={**move, "seat": seat})
    assert r.status_code == 200 and r.json()["view"]["turn"] > move["turn"]


def test_the_host_gives_an_absent_persons_seat_to_a_bot(folders) -> None:
    """The host gives seat 2 (a person who never came) to a bot: the game goes on without waiting for it, the
    seat's old link shows only the public table, the record names the handover and holds no token, and a
    restarted server rebuilds the same table."""
    records, runs = folders
    client = TestClient(create_app(records=records, runs=runs))
    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=12)
    game_id = links["id"]
    store = client.app.state.store
    rng = np.random.default_rng(5)
    while store.get(game_id).game.current_player != 2:                 # seat 0 plays until seat 2 must act
        view = client.get(_api_of(links["seats"]["0"])).json()["view"]
        assert client.post(_api_of(links["seats"]["0"]) + "/moves",
                           json={"action": _choose(view, rng), "turn": view["turn"]}).status_code == 200
    waiting = store.get(game_id).turn
    r = client.post(_api_of(links["host"]) + "/bots", json={"seat": 2, "agent": "random"})
    assert r.status_code == 200, r.text
    assert r.json()["view"]["turn"] > waiting and r.json()["view"]["players"][2]["person"] is False
    assert set(r.json()["links"]["seats"]) == {"0"}
    old = client.get(_api_of(links["seats"]["2"])).json()
    assert old["role"] == "watch" and old["given"] == 2 and old["view"]["cards"] == [] and old["seat"] is None
    assert client.post(_api_of(links["seats"]["2"]) + "/moves", json={"action": 1, "turn": 0}).status_code == 403
    path = records / "games" / f"game-{game_id}.json"
    text = path.read_text()
    record = json.loads(text)
    assert record["players"]["2"] == "human, then random" and record["players"]["0"] == "human"
    assert record["meta"]["handovers"] == [{"seat": 2, "turn": waiting, "agent": "random"}]
    assert record["meta"]["table"] == "shared"
    assert not any(t in text for t in _tokens(links)), "a token is in the public record"
    assert (records / "games" / ".tables" / f"{game_id}.json").stat().st_mode & 0o777 == 0o600
    seen = client.get(_api_of(links["seats"]["0"])).json()
    again = TestClient(create_app(records=records, runs=runs))
    assert again.get(_api_of(links["seats"]["0"])).json() == seen
    _play_seats(again, links, rng)
    assert replay(load_record(path), check=True).is_over


def _play_seats(client: TestClient, links: dict[str, Any], rng: np.random.Generator, moves: int = 3000) -> None:
    """Play ``moves`` decisions (or to the end) at a shared table, each person by their own link."""
    for _ in range(moves):
        state = client.get(_api_of(links["watch"])).json()["view"]
        if state["over"]:
            return
        link = _api_of(links["seats"][str(state["current_player"])])
        view = client.get(link).json()["view"]
        r = client.post(link + "/moves", json={"action": _choose(view, rng), "turn": view["turn"]})
        assert r.status_code == 200, r.text


def test_a_restarted_server_resumes_a_shared_table_mid_hand(folders) -> None:
    """Restart in the middle of a hand with two people: both links (and the host's and the spectators') open the
    same views in the new server, and the game plays on to the end; nothing is lost."""
    records, runs = folders
    first = TestClient(create_app(records=records, runs=runs))
    links = _new_table(first, [PERSON, PERSON, "rule", "random"], seed=31, signals="truthful", intercept=0.5)
    rng = np.random.default_rng(3)
    _play_seats(first, links, rng, moves=7)
    table = first.app.state.store.get(links["id"])
    assert not table.game.is_over and table.game.hand_actions, "the restart should come in the middle of a hand"
    views = {k: first.get(_api_of(u)).json() for k, u in [("host", links["host"]), ("watch", links["watch"]),
                                                          *[(s, u) for s, u in links["seats"].items()]]}
    assert views["0"]["view"]["cards"] and views["1"]["view"]["cards"]
    second = TestClient(create_app(records=records, runs=runs))          # a new process: nothing in memory
    for key, link in [("host", links["host"]), ("watch", links["watch"]), *links["seats"].items()]:
        assert second.get(_api_of(link)).json() == views[key], key
    _play_seats(second, links, rng)
    assert replay(load_record(records / "games" / f"game-{links['id']}.json"), check=True).is_over


@pytest.mark.parametrize("body, words", [
    ({"seats": [PERSON, "rule", "rule"]}, "four"), ({"seats": ["rule"] * 4}, "a person"),
    ({"seats": [PERSON, "rule", "evil.py:Bot", "rule"]}, "not offered"), ({"seats": "person"}, "four"),
    ({"seats": [PERSON, "rule", PERSON, 3]}, "four"), ({"seats": [PERSON] * 4, "kings": 5}, "kings"),
])
def test_new_table_refusals_name_the_problem(client: TestClient, folders, body: dict, words: str) -> None:
    r = client.post("/api/tables", json=body)
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert not (folders[0] / "games").exists() or not list((folders[0] / "games").iterdir())


def test_a_stream_shows_a_move_when_it_is_made(client: TestClient, quick_keepalive: None) -> None:
    """The page of the waiting person gets the other person's move by its stream, without asking; a second tab
    of a seat gets the same messages; the stream tells who has a page open."""
    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=8)
    table = client.app.state.store.get(links["id"])
    seat = table.game.current_player
    other = 2 - seat
    tabs = [_Stream(client, links["seats"][str(other)]) for _ in range(2)]
    try:
        first = [t.until(table.turn)[-1] for t in tabs]
        assert first[0]["view"] == first[1]["view"]
        view = client.get(_api_of(links["seats"][str(seat)])).json()["view"]
        action = view["legal"][0]["action"]
        assert client.post(_api_of(links["seats"][str(seat)]) + "/moves",
                           json={"action": action, "turn": view["turn"]}).status_code == 200
        after = [t.until(table.turn)[-1] for t in tabs]
        assert after[0]["view"] == after[1]["view"] == client.get(_api_of(links["seats"][str(other)])).json()["view"]
        assert any(m["seat"] == seat and m.get("action") == action for m in after[0]["view"]["history"])
        assert after[0]["present"][other] and not after[0]["present"][seat]
    finally:
        for t in tabs:
            t.close()


@pytest.mark.parametrize("spec", ["ppo", "equity"])
def test_the_coach_is_the_agents_own_view_of_the_seats_decision(client: TestClient, spec: str) -> None:
    """The coach at a person's decision (señas on) gives exactly the agent's own probabilities (and action values)
    for that seat's observation; it answers only a seat's own link at its own turn: the other person's link, the
    spectators', the host's and a forged one are refused."""
    import secrets

    if spec == "ppo":
        pytest.importorskip("torch")
    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=19, signals="truthful", intercept=0.2)
    store = client.app.state.store
    table = store.get(links["id"])
    agent = store.agent(spec)
    rng = np.random.default_rng(4)
    compared = 0
    for _ in range(40):
        if table.game.is_over:
            break
        seat = table.game.current_player
        mine, theirs = _api_of(links["seats"][str(seat)]), _api_of(links["seats"][str(2 - seat)])
        r = client.get(mine + f"/coach?agent={spec}")
        assert r.status_code == 200, r.text
        coach = r.json()
        assert coach["seat"] == seat and coach["turn"] == table.turn
        obs, mask = table.game.observe(seat)[None], table.game.legal_action_mask()[None]
        assert {row["action"] for row in coach["actions"]} == set(table.game.legal_actions())
        if callable(getattr(agent, "probabilities", None)):
            own = np.asarray(agent.probabilities(obs, mask))[0]
            assert all(abs(row["probability"] - own[row["action"]]) < 1e-6 for row in coach["actions"])
            compared += 1
        if callable(getattr(agent, "action_values", None)):
            own = np.asarray(agent.action_values(obs, mask))[0]
            assert all(row["value"] is None or abs(row["value"] - own[row["action"]]) < 1e-6
                       for row in coach["actions"])
            compared += 1
        assert client.get(theirs + f"/coach?agent={spec}").status_code == 409          # not the other's turn
        for link, status in ((links["watch"], 403), (links["host"], 403)):
            r = client.get(_api_of(link) + f"/coach?agent={spec}")
            assert r.status_code == status and "seat's link" in r.json()["error"]
        forged = f"/api/tables/{links['id']}/{secrets.token_urlsafe(24)}/coach?agent={spec}"
        assert client.get(forged).status_code == 403
        for other, words in (("rule", "neither"), ("evil.py:X", "not offered")):
            r = client.get(mine + f"/coach?agent={other}")
            assert r.status_code == 400 and words in r.json()["error"], r.text
        view = client.get(mine).json()["view"]
        r = client.post(mine + "/moves", json={"action": _choose(view, rng), "turn": view["turn"]})
        assert r.status_code == 200, r.text
    assert compared >= 10


@pytest.mark.parametrize("spec", ["ppo", "equity"])
def test_the_review_after_a_hand_keeps_the_seats_largest_differences(client: TestClient, spec: str) -> None:
    """After a hand, the coach's review lists the seat's own decisions that differed most from the agent's: each
    gap is the agent's measure (probability, or equity's value) of its first choice minus that of the move
    played, as the coach showed them at that decision; the largest first, at most REVIEW_TOP, every decision of
    the seat in that hand counted. Only a seat's own link, and only a finished hand."""
    from experiments.web.analysis import REVIEW_TOP

    if spec == "ppo":
        pytest.importorskip("torch")
    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=5, target=40)
    store = client.app.state.store
    table = store.get(links["id"])
    api = {seat: _api_of(links["seats"][str(seat)]) for seat in (0, 2)}
    rng = np.random.default_rng(8)
    measure = "probability" if spec == "ppo" else "value"
    gaps: dict[int, dict[int, float]] = {0: {}, 2: {}}          # seat -> turn -> the coach's gap there
    r = client.get(api[0] + f"/review?agent={spec}")
    assert r.status_code == 400 and "no hand is finished" in r.json()["error"]
    while not table.game.hand_log:
        seat = table.game.current_player
        coach = client.get(api[seat] + f"/coach?agent={spec}").json()
        view = client.get(api[seat]).json()["view"]
        action = _choose(view, rng)
        rows = [row for row in coach["actions"] if row.get(measure) is not None]
        played = next((row for row in rows if row["action"] == action), None)
        if rows and played is not None:
            gaps[seat][view["turn"]] = max(row[measure] for row in rows) - played[measure]
        r = client.post(api[seat] + "/moves", json={"action": action, "turn": view["turn"]})
        assert r.status_code == 200, r.text
    hand = table.game.hand_log[0].hand_number
    for seat in (0, 2):
        r = client.get(api[seat] + f"/review?agent={spec}")
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["seat"] == seat and got["hand"] == hand and got["measure"] == measure
        assert got["decisions"] >= len(gaps[seat])
        expected = sorted(((g, t) for t, g in gaps[seat].items() if g > 0), reverse=True)[:REVIEW_TOP]
        assert [d["turn"] for d in got["differed"]] == [t for _, t in expected]
        for d, (g, _) in zip(got["differed"], expected, strict=True):
            assert abs(d["gap"] - g) < 1e-6
            assert abs(d["preferred"][measure] - d["played"][measure] - g) < 1e-6
            assert d["played"]["action"] != d["preferred"]["action"]
    assert client.get(api[0] + f"/review?agent={spec}&hand={hand + 1}").status_code == 400     # not finished
    for link in (links["watch"], links["host"]):
        r = client.get(_api_of(link) + f"/review?agent={spec}")
        assert r.status_code == 403 and "seat's own play" in r.json()["error"]


def test_the_coach_of_a_game_against_bots(client: TestClient) -> None:
    """A one-person game's coach (``/api/games/<id>/coach``) explains that person's decision; its probabilities
    are ppo's own for the person's observation."""
    pytest.importorskip("torch")
    game_id = _new_game(client, seed=9, seat=1)
    table = client.app.state.store.get(game_id)
    r = client.get(f"{_solo(game_id)}/coach?agent=ppo")
    assert r.status_code == 200, r.text
    coach = r.json()
    assert coach["seat"] == 1 == table.game.current_player
    agent = client.app.state.store.agent("ppo")
    own = np.asarray(agent.probabilities(table.game.observe(1)[None], table.game.legal_action_mask()[None]))[0]
    assert all(abs(row["probability"] - own[row["action"]]) < 1e-6 for row in coach["actions"])
    shared = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=2)
    assert client.get(f"/api/games/{shared['id']}/coach?agent=ppo").status_code == 404


def test_every_refusal_names_its_kind_for_the_pages_language(client: TestClient) -> None:
    """An error answer is ``{"error": detail, "code": kind}``: the pages say the kind in their language
    (``error.<code>``) and keep the detail; each kind below is the one its refusal gets."""
    import secrets

    from experiments.web.app import ERROR_CODES

    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=4)
    table = client.app.state.store.get(links["id"])
    seat = table.game.current_player
    mine = _api_of(links["seats"][str(seat)])
    illegal = next(a for a in range(100) if a not in table.game.legal_actions())
    cases = [
        (client.post(mine + "/moves", json={"action": table.game.legal_actions()[0], "turn": table.turn + 5}), 409,
         "stale"),
        (client.post(mine + "/moves", json={"action": illegal, "turn": table.turn}), 400, "refused"),
        (client.post(mine + "/moves", json={"turn": table.turn}), 400, "request"),
        (client.get(f"/api/tables/{links['id']}/{secrets.token_urlsafe(24)}"), 403, "link"),
        (client.post(_api_of(links["watch"]) + "/moves", json={"action": 1, "turn": table.turn}), 403, "forbidden"),
        (client.get("/api/games/0123456789abcdef"), 404, "not_found"),
    ]
    for r, status, code in cases:
        assert (r.status_code, r.json().get("code")) == (status, code), r.text
        assert code in ERROR_CODES and r.json()["error"]


# one-person games open only by their link (issue 67)
def _token_of(game_id: str) -> str:
    return _solo(game_id).rsplit("/", 1)[1]


def _solo_files(folders, game_id: str) -> tuple[bytes, bytes]:
    games = folders[0] / "games"
    return (games / f"game-{game_id}.json").read_bytes(), (games / ".tables" / f"{game_id}.json").read_bytes()


def test_a_solo_games_id_without_its_token_opens_nothing_and_changes_nothing(client: TestClient, folders) -> None:
    """A one-person game opens only by its link ``/play/<id>/<token>``: its id alone, a forged token or another
    game's token is refused (404 or 403) for the view, a move, the coach and the review, shows no card, and
    leaves the game's state, its record and its keys as they were."""
    import secrets

    game_id, other = _new_game(client, seed=3), _new_game(client, seed=4)
    token = _token_of(game_id)
    assert len(token) == 32 and token not in (folders[0] / "games" / f"game-{game_id}.json").read_text()
    view = client.get(_solo(game_id)).json()
    assert view["legal"], "the bots should have played up to the person's turn"
    move = {"action": view["legal"][0]["action"], "turn": view["turn"]}
    before, other_before = _solo_files(folders, game_id), _solo_files(folders, other)
    bare = f"/api/games/{game_id}"
    refusals = [client.get(bare), client.post(bare + "/moves", json=move), client.post(bare, json=move),
                client.get(bare + "/coach?agent=rule"), client.get(bare + "/review?agent=rule")]
    for forged in (secrets.token_urlsafe(24), "x" * 32, "abc", token[:-1] + ("A" if token[-1] != "A" else "B"),
                   _token_of(other)):
        base = f"{bare}/{forged}"
        refusals += [client.get(base), client.post(base + "/moves", json=move),
                     client.get(base + "/coach?agent=rule"), client.get(base + "/review?agent=rule")]
    for r in refusals:
        assert r.status_code in (403, 404), (r.request.url, r.status_code, r.text)
        assert "card" not in r.text and "view" not in r.text and token not in r.text
    assert client.get(f"/play/{game_id}").status_code == 404          # no page opens by the id alone
    assert _solo_files(folders, game_id) == before and _solo_files(folders, other) == other_before
    assert client.get(_solo(game_id)).json() == view
    r = client.post(_solo(game_id) + "/moves", json=move)             # the link itself plays
    assert r.status_code == 200 and r.json()["turn"] > view["turn"]


def test_the_records_list_shows_no_token_and_nobody_elses_game_in_progress(client: TestClient, folders) -> None:
    """``GET /api/records`` lists the finished games (public) and, of the games in progress, only those whose
    link the asker sends (``X-Mus-Games``); no answer holds a token, whatever the asker sends."""
    import secrets

    mine, theirs, done = _new_game(client, seed=1), _new_game(client, seed=2), _new_game(client, seed=7)
    _play_to_the_end(client, done, np.random.default_rng(1))
    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=5)
    tokens = [_token_of(g) for g in (mine, theirs, done)] + _tokens(links)

    def listed(header: str | None = None) -> set[str]:
        r = client.get("/api/records", headers={"X-Mus-Games": header} if header is not None else {})
        assert r.status_code == 200 and not any(t in r.text for t in tokens), "a token is in the records list"
        assert all(".tables" not in x["name"] for x in r.json()["records"])
        return {x["name"] for x in r.json()["records"]}

    name = "games/game-{}.json".format
    assert listed() == {name(done)}
    assert listed(f"{mine}.{_token_of(mine)}") == {name(done), name(mine)}
    assert listed(f"{mine}.{_token_of(mine)},{theirs}.{_token_of(theirs)}") == {name(done), name(mine), name(theirs)}
    for header in (f"{theirs}.{_token_of(mine)}", f"{theirs}.{secrets.token_urlsafe(24)}", f"{theirs}.",
                   f"{theirs}", f"{links['id']}.{_tokens(links)[0]}", "garbage,,.", f"{theirs}.{'x' * 5000}"):
        assert listed(header) == {name(done)}, header


def _keyless(records: Path, game_id: str) -> None:
    """Game ``game_id`` as a server saved it before games had keys: the same record, and no keys file."""
    (records / "games" / ".tables" / f"{game_id}.json").unlink()


def test_an_old_game_in_progress_gets_a_key_at_start_and_only_the_console_shows_it(folders, monkeypatch,
                                                                                    capsys) -> None:
    """Records saved before games had keys still load: a finished one replays and is listed as before; a game in
    progress gets a key when the server starts, its link printed on the console (and nowhere else), and opens
    the same game at the same decision; its id alone still opens nothing, and the key survives a restart."""
    import experiments.commands.serve as serve

    records, runs = folders
    first = TestClient(create_app(records=records, runs=runs))
    going, done = _new_game(first, seed=21), _new_game(first, seed=7)
    rng = np.random.default_rng(2)
    view = first.get(_solo(going)).json()
    view = first.post(_solo(going) + "/moves", json={"action": _choose(view, rng), "turn": view["turn"]}).json()
    _play_to_the_end(first, done, rng)
    for game_id in (going, done):
        _keyless(records, game_id)
    record = (records / "games" / f"game-{going}.json").read_bytes()
    calls: list[Any] = []
    monkeypatch.setattr(serve, "run_server", lambda app, **kw: calls.append(app))
    serve.main(["--records", str(records), "--runs", str(runs), "--port", "8123"])
    out = capsys.readouterr().out
    (link,) = calls[-1].state.old_games
    assert link.startswith(f"/play/{going}/") and f"http://127.0.0.1:8123{link}" in out
    assert (records / "games" / f"game-{going}.json").read_bytes() == record          # the record is untouched
    assert (records / "games" / ".tables" / f"{going}.json").stat().st_mode & 0o777 == 0o600
    second = TestClient(calls[-1])
    api = "/api/games/" + link.removeprefix("/play/")
    assert second.get(api).json() == view
    assert second.get(f"/api/games/{going}").status_code == 404
    listed = {x["name"]: x for x in second.get("/api/records").json()["records"]}
    assert f"games/game-{going}.json" not in listed and listed[f"games/game-{done}.json"]["over"]
    assert second.get(f"/api/records/games/game-{done}.json").status_code == 200
    third = TestClient(create_app(records=records, runs=runs))                       # the key is kept
    assert third.app.state.old_games == [] and third.get(api).json() == view
    _LINKS[going] = api
    _play_to_the_end(third, going, rng)
    assert replay(load_record(records / "games" / f"game-{going}.json"), check=True).is_over


def test_an_open_stream_of_a_seat_given_to_a_bot_sends_no_more_of_its_cards(client: TestClient,
                                                                              quick_keepalive: None) -> None:
    """A seat's stream opened before the host gives the seat to a bot reads its link again for every message:
    from the handover on it sends only the public table (no card of that seat, no sign, no legal action), both
    at the handover and after the next moves."""
    links = _new_table(client, [PERSON, "rule", PERSON, "rule"], seed=12)
    table = client.app.state.store.get(links["id"])
    stream = _Stream(client, links["seats"]["2"])
    try:
        first = stream.until(table.turn)[-1]
        assert first["role"] == "seat" and first["view"]["cards"], "the seat's stream starts with its own cards"
        r = client.post(_api_of(links["host"]) + "/bots", json={"seat": 2, "agent": "random"})
        assert r.status_code == 200, r.text
        after = []
        while not after or after[-1]["view"]["players"][2]["person"]:   # up to the message of the handover
            event, payload = stream.messages.get(timeout=APPEAR_S)
            after.append(payload)
        handed = [p for p in after if not p["view"]["players"][2]["person"]]
        rng = np.random.default_rng(4)
        for _ in range(3):                                              # seat 0 plays on: more messages
            if table.game.is_over:
                break
            view = client.get(_api_of(links["seats"]["0"])).json()["view"]
            assert client.post(_api_of(links["seats"]["0"]) + "/moves",
                               json={"action": _choose(view, rng), "turn": view["turn"]}).status_code == 200
            handed += stream.until(table.turn)
        assert len(handed) >= 2
        for payload in handed:
            assert payload["role"] == "watch" and payload["given"] == 2 and payload["view"]["cards"] == []
            _check_shared(payload, table, None, links)
    finally:
        stream.close()


def test_two_handovers_survive_a_restart(folders) -> None:
    """The host gives seat 0, then seat 2 to bots: the record names both (``human, then <bot>``) and lists both
    handovers, and a restarted server rebuilds both seats' histories (and the retired links) as they were."""
    records, runs = folders
    client = TestClient(create_app(records=records, runs=runs))
    links = _new_table(client, [PERSON, PERSON, PERSON, "rule"], seed=12)
    game_id = links["id"]
    turns = []
    for seat, agent in ((0, "random"), (2, "rule")):
        turns.append(client.app.state.store.get(game_id).turn)
        r = client.post(_api_of(links["host"]) + "/bots", json={"seat": seat, "agent": agent})
        assert r.status_code == 200, r.text
    seen = client.get(_api_of(links["host"])).json()
    again = TestClient(create_app(records=records, runs=runs))          # a new process: nothing in memory
    assert again.get(_api_of(links["host"])).json() == seen
    table = again.app.state.store.get(game_id)
    assert table.people == {1} and table.specs[0] == "random" and table.specs[2] == "rule"
    record = json.loads((records / "games" / f"game-{game_id}.json").read_text())
    assert record["players"] == {"0": "human, then random", "1": "human", "2": "human, then rule", "3": "rule"}
    assert record["meta"]["handovers"] == [{"seat": 0, "turn": turns[0], "agent": "random"},
                                           {"seat": 2, "turn": turns[1], "agent": "rule"}]
    for seat in (0, 2):
        old = again.get(_api_of(links["seats"][str(seat)])).json()
        assert old["role"] == "watch" and old["given"] == seat and old["view"]["cards"] == []
    assert [p["person"] for p in seen["view"]["players"]] == [False, True, False, False]
