"""``mus serve`` in a real browser (Playwright driving Debian's Chromium): a whole game played by clicking (a
discard and a bet included), a replay stepped forward and back with an agent's probabilities, a run page, and a
shared table where two people (two browsers) play as partners against two bots: each page shows only its own
cards, and a move of one appears on the other's page without a reload (Server-Sent Events).

Playwright's own browser download cannot work here: the tests launch the system Chromium
(``apt-get install -y chromium``). Without it they are skipped locally and fail in CI (``CI`` set), where
``.ci/run`` installs it. ``MUS_SCREENSHOTS=DIR`` keeps the screenshots (the docs' images come from there).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("starlette")
playwright_api = pytest.importorskip("playwright.sync_api")
uvicorn = pytest.importorskip("uvicorn")

from hang_guards import BROWSER_MS, SERVER_S  # noqa: E402

from experiments.web.app import create_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
if CHROMIUM is None:
    if os.environ.get("CI"):
        raise RuntimeError("the browser tests need Debian's chromium in CI (apt-get install -y chromium)")
    pytest.skip("no Chromium found (apt-get install -y chromium); the browser tests need it", allow_module_level=True)

#: Chromium's flags for this machine: no sandbox (root), no GPU, no background traffic (no network here).
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

#: A bot that always asks for mus, throws its lowest card, passes when it may and accepts every bet: with it at
#: the table the person surely discards, and a bet or an órdago of the person's ends the game quickly.
ALWAYS_MUS = '''
import numpy as np
from agents import Agent

class AlwaysMus(Agent):
    name = "always-mus"
    def act(self, observation, action_mask, rng):
        for a in (0, 10, 18, 24):          # MUS, DISCARD slot 3, PASO, QUIERO
            if action_mask[a]:
                return a
        return int(np.flatnonzero(action_mask)[0])
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("serve")
    (root / "always_mus.py").write_text(ALWAYS_MUS, encoding="utf-8")
    runs, records = root / "runs", root / "records"
    from experiments.commands.tournament import main as tournament

    tournament(["--agents", "rule,random", "--hands", "30", "--games", "4", "--records", "2", "--quiet",
                "--out", str(runs / "t")])
    records.mkdir()
    src = sorted((runs / "t" / "records").glob("*.json"))[0]
    (records / "example.json").write_bytes(src.read_bytes())
    bot = f"{root / 'always_mus.py'}:AlwaysMus"
    app = create_app(records=records, runs=runs, agents=(bot,))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the test server did not start"
    try:
        yield {"url": f"http://127.0.0.1:{port}", "bot": bot, "records": records, "app": app}
    finally:
        server.should_exit = True
        thread.join(timeout=SERVER_S)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    pg = browser.new_page(viewport={"width": 1400, "height": 980})
    pg.set_default_timeout(BROWSER_MS)           # waits end when the page gets there; this only stops a hang
    pg.set_default_navigation_timeout(BROWSER_MS)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield pg
    pg.close()
    assert not errors, f"the page logged errors: {errors}"


def _shot(page: object, name: str, tmp_path: Path) -> Path:
    folder = Path(os.environ.get("MUS_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path


def test_a_whole_game_by_clicking(site: dict, page: object, tmp_path: Path) -> None:
    page.goto(site["url"] + "/")
    page.wait_for_selector("select[name=partner] option", state="attached")
    for name in ("partner", "rival1", "rival2"):
        page.select_option(f"select[name={name}]", site["bot"])
    page.click("#start")
    page.wait_for_url("**/play/*/*")
    page.select_option("#delay", "0")
    discarded = bet = False
    shot_taken = False
    for _ in range(400):
        page.wait_for_selector("body[data-state=yours], body[data-state=over]")
        if page.get_attribute("body", "data-state") == "over":
            break
        turn = page.get_attribute("body", "data-turn")
        buttons = {b.inner_text().split("\n")[0]: b for b in page.query_selector_all("#actions button.act")}
        if page.query_selector("#discard"):
            page.click("#seat-0 .card.selectable >> nth=0")          # pick the highest card...
            page.click("#seat-0 .card.selectable >> nth=3")          # ... and the lowest
            assert page.query_selector_all("#seat-0 .card.picked").__len__() == 2
            page.click("#discard")
            discarded = True
        elif "mus" in buttons and not discarded:
            buttons["mus"].click()
        elif "no hay mus" in buttons:
            buttons["no hay mus"].click()
        elif "envido 2" in buttons and not bet:
            if not shot_taken:
                _shot(page, "serve-play.png", tmp_path)
                shot_taken = True
            buttons["envido 2"].click()
            bet = True
        elif "órdago" in buttons and bet:
            buttons["órdago"].click()
        else:
            next(iter(buttons.values())).click()
        page.wait_for_selector(f"body:not([data-turn='{turn}']), body[data-state=over]")
    assert page.get_attribute("body", "data-state") == "over"
    assert discarded and bet
    banner = page.inner_text("#actions")
    assert "Game over" in banner
    _shot(page, "serve-game-over.png", tmp_path)
    page.click("#replay-link")
    page.wait_for_selector("body[data-step]")


def test_replay_steps_forward_and_back_with_probabilities(site: dict, page: object, tmp_path: Path) -> None:
    page.goto(site["url"] + "/replay/example.json")
    page.wait_for_selector("body[data-step='0']")
    page.click("#next")
    page.click("#next")
    page.wait_for_selector("body[data-step='2']")
    page.click("#prev")
    page.wait_for_selector("body[data-step='1']")
    assert "step=1" in page.url
    page.wait_for_selector("table.analysis tr")                    # ppo's probabilities for the acting seat
    rows = page.query_selector_all("table.analysis tr")
    assert len(rows) >= 2 and "%" in page.inner_text("table.analysis")
    page.check("#faceup")
    assert len(page.query_selector_all(".card:not(.back)")) == 16
    page.goto(site["url"] + "/replay/example.json#step=5")
    page.wait_for_selector("body[data-step='5']")
    page.select_option("#hand", "0")
    page.wait_for_selector("table.analysis tr")
    _shot(page, "serve-replay.png", tmp_path)


def test_run_page(site: dict, page: object, tmp_path: Path) -> None:
    page.goto(site["url"] + "/")
    page.wait_for_selector("#runs a")
    page.click("#runs a")
    page.wait_for_selector("body[data-loaded]")
    text = page.inner_text("#run")
    assert "Ladder" in text and "rule" in text and "random" in text
    assert page.query_selector("figure img[src$='ladder.png']")
    deadline = time.monotonic() + BROWSER_MS / 1000                   # (the page's CSP forbids evaluated strings)
    while not all(img.evaluate("i => i.complete && i.naturalWidth > 0") for img in page.query_selector_all("img")):
        assert time.monotonic() < deadline, "the run page's images never loaded"
        time.sleep(0.05)
    _shot(page, "serve-run.png", tmp_path)


def _side_by_side(left: Path, right: Path, name: str) -> None:
    """The two tables of a screenshot pair side by side, as one picture beside them (for the docs)."""
    try:
        from PIL import Image
    except ImportError:                                       # the picture is for the docs only
        return
    with Image.open(left) as a, Image.open(right) as b:
        box = (0, 0, min(a.width, 930), min(a.height, b.height, 650))
        both = Image.new("RGB", (2 * box[2] + 20, box[3]), "#f3f1ea")
        both.paste(a.crop(box), (0, 0))
        both.paste(b.crop(box), (box[2] + 20, 0))
        both.save(left.parent / name)


def _own_page(browser: object, errors: list[str], locale: str | None = None, width: int = 1400,
              height: int = 1000) -> object:
    """A page in a browser context of its own (its own cookies and storage: another person's browser), in
    ``locale`` when given; the page's errors go to ``errors``."""
    context = browser.new_context(viewport={"width": width, "height": height},
                                  **({"locale": locale} if locale else {}))
    pg = context.new_page()
    pg.set_default_timeout(BROWSER_MS)
    pg.set_default_navigation_timeout(BROWSER_MS)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return pg


def _face_up(pg: object, where: str = "body") -> list[str]:
    return sorted(c.get_attribute("data-card") for c in pg.query_selector_all(f"{where} .card:not(.back)"))


def _may_see(table: object, seat: int | None) -> set[str]:
    """The cards (as text) seat ``seat`` may have seen (None: a spectator): its own, past and present (those it
    threw included), and the hands the rules showed."""
    from mus_env.cards import card_to_string

    return {card_to_string(c) for c in _may_see_ids(table, seat)}


def _may_see_ids(table: object, seat: int | None) -> set[int]:
    g = table.game
    cards = set(g.hands[seat]) if seat is not None and not g.is_over else set()
    if seat is not None:
        cards.update(c for m in table.log if m.seat == seat for c in m.thrown)
    for h in g.hand_log:
        if seat is not None:
            cards.update(h.initial_hands[seat], h.final_hands[seat])
        if h.shown:
            cards.update(c for s in range(4) for c in h.final_hands[s])
    return cards


#: Keeps, in the page, every message its scripts receive: each answer of fetch() and each event of an
#: EventSource (the table's stream), as text in window.__received.
RECEIVED = """
window.__received = [];
const NativeEventSource = window.EventSource;
window.EventSource = function (url, options) {
  const source = new NativeEventSource(url, options);
  source.addEventListener("view", (e) => window.__received.push(e.data));
  return source;
};
window.EventSource.prototype = NativeEventSource.prototype;
window.EventSource.CLOSED = NativeEventSource.CLOSED;
const nativeFetch = window.fetch;
window.fetch = async (...args) => {
  const response = await nativeFetch(...args);
  response.clone().text().then((text) => window.__received.push(text));
  return response;
};
"""


def _received_cards(pg: object) -> tuple[int, set[int]]:
    """How many messages the page's scripts received, and every card id in them."""
    import re

    texts = pg.evaluate("window.__received")
    return len(texts), {int(m) for text in texts for m in re.findall(r'"card":\s*(\d+)', text)}


@pytest.mark.parametrize("people", [(0, 2), (0, 1)], ids=["partners", "rivals"])
def test_two_people_at_one_table(site: dict, browser: object, tmp_path: Path, people: tuple[int, int]) -> None:
    """The host opens a table from the start page (two seats people, the others bots: partners, then rivals)
    and hands out the links; two browsers play the people's seats, a third watches. Each person's page shows
    face up only that seat's cards (and, in the side panel, the hands the rules showed), the spectator's none,
    and no message the page received (every fetch answer, every stream event) held a card its seat may not
    see; each move of one person shows on the other's page and on the spectator's without a reload."""
    from mus_env.cards import card_to_string

    errors: list[str] = []
    host = _own_page(browser, errors)
    host.goto(site["url"] + "/")
    host.wait_for_selector("select[name=seat0] option", state="attached")
    for s in range(4):
        host.select_option(f"select[name=seat{s}]", "person" if s in people else site["bot"])
    host.click("#start-table")
    host.wait_for_url("**/table/**")
    host.wait_for_selector(f"#link-{people[0]}")
    links = {s: host.input_value(f"#link-{s}") for s in (*map(str, people), "watch")}
    bots = sorted(set(range(4)) - set(people))
    assert f"#link-{bots[0]}" not in host.content() and len({u.rsplit("/", 1)[1] for u in links.values()}) == 3
    game_id = links[str(people[0])].split("/")[-2]
    table = site["app"].state.store.get(game_id)
    pages = {s: _own_page(browser, errors) for s in people}
    watcher = _own_page(browser, errors)
    for pg in [*pages.values(), watcher]:
        pg.add_init_script(RECEIVED)
    try:
        for seat, pg in pages.items():
            pg.goto(links[str(seat)])
            pg.select_option("#delay", "0")
        watcher.goto(links["watch"])
        here = "".join(f":has-text('Seat {s} (team {s % 2}), here')" for s in people)
        host.wait_for_selector(f"#host{here}")
        moves = 0
        discarded = False
        received = 0
        while moves < 12 and not table.game.is_over:
            turn = table.turn
            seat = table.game.current_player
            assert seat in pages, "the bots play up to a person's turn"
            for pg in [*pages.values(), watcher]:
                pg.wait_for_selector(f"body[data-turn='{turn}']:not([data-state=busy])")
            for s, pg in pages.items():                                  # only its own cards, face up
                own = sorted(card_to_string(c) for c in table.game.hands[s])
                assert _face_up(pg, "#felt") == own, (s, _face_up(pg, "#felt"), own)
                assert set(_face_up(pg)) <= _may_see(table, s)
            assert _face_up(watcher, "#felt") == [] and set(_face_up(watcher)) <= _may_see(table, None)
            for s, pg in [*pages.items(), (None, watcher)]:              # and in every message it received
                n, cards = _received_cards(pg)
                assert cards <= _may_see_ids(table, s), (s, sorted(cards - _may_see_ids(table, s)))
                received += n
            if moves == 4 and people == (0, 2):
                _side_by_side(_shot(pages[0], "serve-two-people-0.png", tmp_path),
                              _shot(pages[2], "serve-two-people-2.png", tmp_path), "serve-two-people.png")
                _shot(host, "serve-table-host.png", tmp_path)
            acting = pages[seat]
            other_seat = next(s for s in people if s != seat)
            acting.wait_for_selector("body[data-state=yours]")
            if moves == 3:                           # the coach: ppo's probabilities at this person's decision
                acting.check("#coach")
                acting.wait_for_selector("#coach-box table.analysis tr")
                rows = acting.query_selector_all("#coach-box table.analysis tr")
                assert len(rows) == len(table.game.legal_actions()) and "%" in acting.inner_text("#coach-box")
                assert pages[other_seat].is_hidden("#coach-box")
                if people == (0, 2):
                    _shot(acting, "serve-coach.png", tmp_path)
                acting.uncheck("#coach")
            if acting.query_selector("#discard"):
                acting.click("#seat-0 .card.selectable >> nth=3")
                acting.click("#discard")
                discarded = True
            else:
                buttons = {b.inner_text().split("\n")[0]: b for b in acting.query_selector_all("#actions button.act")}
                choice = buttons.get("mus") if not discarded else None
                (choice or next(iter(buttons.values()))).click()
            other = pages[other_seat]                # the other person's page learns of the move by itself
            other.wait_for_selector(f"body:not([data-turn='{turn}'])")
            watcher.wait_for_selector(f"body:not([data-turn='{turn}'])")
            moves += 1
        assert moves >= 6 and discarded
        assert received > 3 * moves                                    # the pages' messages were read
        them = "partner" if people == (0, 2) else "rival"
        other_box = pages[0].inner_text(f"#seat-{people[1]}")       # seat 0's page: places counted from it
        assert "You" in pages[0].inner_text("#seat-0") and f"{them} (a person)" in other_box
    finally:
        for pg in [host, *pages.values(), watcher]:
            pg.context.close()
    assert not errors, f"the pages logged errors: {errors}"


def test_two_people_in_spanish_with_the_coach_and_its_review(site: dict, browser: object, tmp_path: Path) -> None:
    """Two partners, each in a Spanish browser, against two rule bots: each page shows only its own cards; seat
    0 has the coach on, which shows ppo's probabilities at its decisions (never on the partner's page); after the
    hand the review lists seat 0's decisions that differed most from ppo's, the same ones the server's review
    gives, in Spanish."""
    import json
    import random

    from mus_env.cards import card_to_string

    pytest.importorskip("torch")
    errors: list[str] = []
    r = httpx.post(site["url"] + "/api/tables", json={"seats": ["person", "rule", "person", "rule"], "seed": 3})
    assert r.status_code == 200, r.text
    links = r.json()
    table = site["app"].state.store.get(links["id"])
    pages = {}
    for seat in (0, 2):
        pg = _own_page(browser, errors, "es-ES")
        pg.goto(site["url"] + links["seats"][str(seat)])
        pg.wait_for_selector("#coach-switch:not([hidden])")
        pages[seat] = pg
    rng = random.Random(1)
    catalogue = json.loads((Path(__file__).resolve().parents[1] / "experiments" / "web" / "static" / "i18n" /
                            "es.json").read_text(encoding="utf-8"))
    try:
        pages[0].check("#coach")
        for _ in range(200):
            if table.game.hand_log:
                break
            turn, seat = table.turn, table.game.current_player
            for pg in pages.values():
                pg.wait_for_selector(f"body[data-turn='{turn}']:not([data-state=busy])")
            for s, pg in pages.items():
                assert _face_up(pg, "#felt") == sorted(card_to_string(c) for c in table.game.hands[s])
            acting = pages[seat]
            acting.wait_for_selector("body[data-state=yours]")
            assert pages[2].is_hidden("#coach-box")
            if seat == 0:
                acting.wait_for_selector("#coach-box table.analysis tr")
                assert "consejero" in acting.inner_text("#coach-box").lower()
            if acting.query_selector("#discard"):
                acting.click(f"#seat-0 .card.selectable >> nth={rng.randrange(4)}")
                acting.click("#discard")
            else:
                calm = [b for b in acting.query_selector_all("#actions button.act") if "órdago" not in b.inner_text()]
                rng.choice(calm).click()                # no órdago: the game goes on after the hand
            pages[2 - seat].wait_for_selector(f"body:not([data-turn='{turn}'])")
        assert table.game.hand_log, "the first hand did not end"
        review = httpx.get(site["url"] + "/api" + links["seats"]["0"].replace("/table/", "/tables/", 1) +
                           "/review?agent=ppo").json()
        box = pages[0].wait_for_selector("#review-box:not([hidden]) :is(ol.review, p:not(.muted))")
        text = pages[0].inner_text("#review-box")
        assert "Tras la mano 1" in text
        if review["differed"]:
            items = pages[0].query_selector_all("#review-box ol.review li")
            assert len(items) == len(review["differed"])
            for item, d in zip(items, review["differed"], strict=True):
                assert "jugaste " + d["played"]["text"] in item.inner_text()
        else:
            assert "jugaste como" in box.inner_text()
        assert pages[2].is_hidden("#review-box")
        logged = len(errors)
        refusal = pages[2].evaluate("api(`${base}/moves`, { action: 9999, turn: view.turn })"
                                    ".then(() => null, (e) => [e.message, e.detail])")
        pages[2].wait_for_timeout(200)                               # the console's line of the refused request
        assert all("status of 4" in e for e in errors[logged:]), errors[logged:]
        del errors[logged:]
        assert refusal is not None and refusal[0] in {catalogue["error.refused"], catalogue["error.stale"]}
        assert refusal[1] and refusal[1] != refusal[0]                   # the server's own words kept as detail
        assert catalogue["play.coach"] in pages[2].inner_text("header")
        _side_by_side(_shot(pages[0], "serve-two-people-es-0.png", tmp_path),
                      _shot(pages[2], "serve-two-people-es-2.png", tmp_path), "serve-two-people-es.png")
        pages[0].wait_for_selector("body:not([data-state=busy])")
        _shot(pages[0], "serve-review.png", tmp_path)
    finally:
        for pg in pages.values():
            pg.context.close()
    assert not errors, f"the pages logged errors: {errors}"


def test_the_pages_speak_the_browsers_language_and_switch(site: dict, browser: object, tmp_path: Path) -> None:
    """A browser set to Spanish gets the play page in Spanish (the texts of static/i18n/es.json); the header's
    switch turns it to English, then Basque, and the choice is kept (a reload stays in euskara)."""
    import json

    catalogues = {lang: json.loads((Path(__file__).resolve().parents[1] / "experiments" / "web" / "static" / "i18n" /
                                    f"{lang}.json").read_text(encoding="utf-8")) for lang in ("es", "en", "eu")}
    errors: list[str] = []
    pg = _own_page(browser, errors, "es-ES", width=1400, height=980)
    try:
        pg.goto(site["url"] + "/")
        pg.wait_for_selector("html[lang=es] select[name=partner] option", state="attached")
        assert pg.inner_text("#start") == catalogues["es"]["index.start"]
        for name in ("partner", "rival1", "rival2"):
            pg.select_option(f"select[name={name}]", site["bot"])
        pg.click("#start")
        pg.wait_for_url("**/play/*/*")
        pg.select_option("#delay", "0")

        def check(lang: str) -> None:
            cat = catalogues[lang]
            pg.wait_for_selector(f"html[lang={lang}] body[data-state=yours] #actions button.act")
            assert pg.input_value("#lang") == lang
            assert pg.inner_text("header label.lang span") == cat["lang.label"]
            assert pg.inner_text("#seat-0 .tag.acting") == cat["play.your_turn"]
            assert pg.inner_text("#seat-0 .who strong") == cat["play.you"]
            assert pg.inner_text("#score h3") == cat["play.score"]
            assert pg.inner_text("label:has(#delay) span") == cat["play.pace"]
            assert pg.inner_text("#delay option[value='0']") == cat["play.pace_0"]

        check("es")
        _shot(pg, "serve-es.png", tmp_path)
        pg.select_option("#lang", "en")
        check("en")
        pg.select_option("#lang", "eu")
        check("eu")
        pg.reload()
        check("eu")
    finally:
        pg.context.close()
    assert not errors, f"the page logged errors: {errors}"


def test_the_saved_games_table_fits_its_card_at_1280_px_in_spanish(site: dict, browser: object,
                                                                     tmp_path: Path) -> None:
    """The start page at 1280 px in Spanish: the saved games' table (long record names and agent specs, the
    Spanish headers) stays inside its card, and the page does not scroll sideways. The game this browser just
    started is listed to it, to continue by its own link (the browser holds it); no other game in progress is."""
    import json
    import secrets
    from urllib.parse import urlparse

    games = site["records"] / "games"
    games.mkdir(exist_ok=True)
    example = json.loads((site["records"] / "example.json").read_text(encoding="utf-8"))
    for spec in (site["bot"], "runs:t/a-training-run-with-a-long-name/checkpoints/best_policy.pt"):
        record = {**example, "players": {"0": "human", "1": spec, "2": "ppo", "3": spec}}
        (games / f"game-{secrets.token_hex(8)}.json").write_text(json.dumps(record), encoding="utf-8")
    errors: list[str] = []
    pg = _own_page(browser, errors, "es-ES", width=1280, height=900)
    try:
        pg.goto(site["url"] + "/")
        pg.wait_for_selector("html[lang=es] select[name=partner] option", state="attached")
        for name in ("partner", "rival1", "rival2"):
            pg.select_option(f"select[name={name}]", site["bot"])
        pg.click("#start")
        pg.wait_for_url("**/play/*/*")
        link = urlparse(pg.url).path
        pg.goto(site["url"] + "/")
        pg.wait_for_selector(f"#records a[href='{link}']")               # this browser's own game, to continue
        _shot(pg, "serve-index-es-1280.png", tmp_path)
        table, card, scroll, width = pg.eval_on_selector(
            "#records table", "t => [t.getBoundingClientRect().right, t.closest('.panel').getBoundingClientRect()"
                              ".right, document.documentElement.scrollWidth, window.innerWidth]")
        assert table <= card, f"the saved games' table ends at {table} px, beyond its card's edge at {card} px"
        assert scroll <= width, f"the start page scrolls sideways: {scroll} px wide in a {width} px window"
    finally:
        pg.context.close()
    assert not errors, f"the page logged errors: {errors}"


def test_your_style_in_spanish_from_the_start_page_and_a_replay(site: dict, browser: object, tmp_path: Path) -> None:
    """*Tu estilo*: the start page links it; a finished game's replay links each seat's; that page shows, in
    Spanish, per lance the seat's bluff, fold and aggression rates beside rule's, few samples marked."""
    import json

    es = json.loads((Path(__file__).resolve().parents[1] / "experiments" / "web" / "static" / "i18n" / "es.json")
                    .read_text(encoding="utf-8"))
    errors: list[str] = []
    pg = _own_page(browser, errors, "es-ES", width=1400, height=900)
    try:
        pg.goto(site["url"] + "/")
        pg.wait_for_selector("html[lang=es] #style-link")
        assert pg.inner_text("#style-link") == es["style.link"] == "tu estilo"
        pg.goto(site["url"] + "/replay/example.json")
        pg.wait_for_selector("body[data-step='0']")
        links = pg.query_selector_all("#style-links a.style-seat")
        assert len(links) == 4
        links[0].click()
        pg.wait_for_url("**/style?record=example.json&seat=0")
        pg.wait_for_selector("body[data-loaded='1'] table.style-table")
        text = pg.inner_text("table.style-table")
        for key in ("style.bluff", "style.fold", "style.aggression", "style.you", "style.cut"):
            assert es[key] in text, key
        rows = pg.query_selector_all("table.style-table tbody tr")
        assert [r.query_selector("td").inner_text() for r in rows] == ["grande", "chica", "pares", "juego", "punto",
                                                                        "mus"]
        assert "rule" in text and "%" in text and "*" in text               # beside rule's; a few-samples mark
        assert pg.query_selector_all("table.style-table td.few")
        assert "asiento 0" in pg.inner_text("#heading") and "30" in pg.inner_text("#few-note")
        _shot(pg, "serve-style-es.png", tmp_path)
    finally:
        pg.context.close()
    assert not errors, f"the page logged errors: {errors}"
