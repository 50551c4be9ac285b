"""The ``mus serve`` application: Starlette routes for the pages and the JSON API.

Pages (static HTML and JavaScript from ``static/``; the data comes from the API):

* ``/``: start a game, the records, the runs;
* ``/play/<id>/<token>``: a one-person game at the table (its person's link: the id alone opens nothing);
* ``/table/<id>/<token>``: a shared table, as the token's role sees it: a person's seat, the host, a spectator;
* ``/replay/<record>``: a record step by step (``#step=k`` links one decision);
* ``/runs/<run>``: a tournament, training or probe folder;
* ``/style?record=<record>&seat=N`` or ``/style?player=NAME``: *your style*, a bidding profile beside an agent's.

API (JSON in and out; a refusal is ``{"error": message}`` with a 4xx status and changes nothing):

* ``GET /api/options``: the agents a page may seat, the variants;
* ``POST /api/games`` ``{"seat", "bots": [3 specs], "kings", "target", "signals", "intercept", "seed"?}``;
  the answer holds its link, ``/play/<id>/<token>``;
* ``GET /api/games/<id>/<token>``: the person's view (:meth:`~experiments.web.table.Table.view`);
* ``POST /api/games/<id>/<token>/moves`` ``{"action", "turn"}``: a move, answered by the bots. A forged token or
  another game's is refused (403); the id alone (``/api/games/<id>``, ``.../moves``) opens nothing (404);
* ``POST /api/tables`` ``{"seats": [4 × "person" or a spec], "kings", "target", "signals", "intercept",
  "seed"?}``: a shared table; the answer holds its links (the host's, the spectators', one per person's seat);
* ``GET /api/tables/<id>/<token>``: what the token opens (:func:`table_state`); ``.../events``: the same as
  Server-Sent Events, one ``view`` event now and one after every change (a move, a handover, a page of a seat
  opened or closed); ``POST .../moves`` ``{"action", "turn", "seat"?}``: a seat's move; ``POST .../bots``
  ``{"seat", "agent"}``: the host gives a person's seat to a bot. A forged token or another table's is refused
  (403) and a table that does not exist is 404: nothing changes;
* ``GET /api/tables/<id>/<token>/coach?agent=spec`` and ``GET /api/games/<id>/<token>/coach?agent=spec``: the
  coach, what an explaining agent (``ppo``, ``equity``...) would play at the person's decision
  (:func:`~experiments.web.analysis.analyse` of the seat's own observation); only a seat's own link, and only
  at its own turn (409 otherwise); ``.../review?agent=spec&hand=n`` (the last finished hand by default): after a
  hand, the seat's decisions that differed most from the agent's (:func:`~experiments.web.analysis.review`);
* ``GET /api/records``: the finished records, and the games in progress whose links the asker holds (header
  ``X-Mus-Games: <id>.<token>,...``, :func:`held_games`): nobody's game in progress is listed to another;
  ``GET /api/records/<name>`` (a finished record's timeline),
  ``GET /api/records/<name>/analysis?step=k&agent=spec``, ``POST /api/records`` (upload a record: capped at
  :data:`MAX_UPLOAD_BYTES`, verified by replaying it);
* ``GET /api/style/<name>?seat=N&agent=spec``: the bidding profile of seat N of a finished record, and
  ``GET /api/style?player=NAME&agent=spec``: that of every finished record's decisions of the player NAME, each
  beside the agent's profile (``agent`` omitted: ``rule``; empty: none), :mod:`experiments.web.style`; a game in
  progress is refused (409) and never counted;
* ``GET /api/runs``, ``GET /api/runs/<name>``, ``GET /files/runs/<name>.png``.

A seat's link (and its stream) gets only that seat's view (:meth:`~experiments.web.table.Table.view`), the
spectators' and the host's only the public view: no hidden card, no sign. Two tabs of one seat get the same
view and either may move; the second move of one turn is refused as stale (409).

POST bodies must be ``application/json`` (a form on another site cannot post one without the browser asking
first), every name is resolved inside the served folders (:func:`~experiments.web.store.safe_path`), and pages
insert text only as text (no HTML built from data); a Content-Security-Policy allows only this server's files.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from experiments.web.analysis import analyse, review
from experiments.web.store import (
    MAX_HELD,
    PERSON,
    Access,
    GameStore,
    LinkRefused,
    PathRefused,
    list_records,
    list_runs,
    read_run,
    safe_path,
)
from experiments.web.style import AgentStyles, player_counts, profile_view, seat_counts
from experiments.web.table import StaleTurn, TableError, game_at, seat_decisions, timeline
from mus_env import MusConfig
from mus_env.observation import hand_table
from mus_env.records import RecordError, load_record, replay, save_record

__all__ = ["create_app", "table_state", "held_games", "Listeners", "STATIC", "MAX_BODY_BYTES", "MAX_UPLOAD_BYTES",
           "KEEPALIVE_S"]

STATIC = Path(__file__).resolve().parent / "static"
#: Largest JSON body of a move or a new game.
MAX_BODY_BYTES = 64 * 1024
#: Largest record upload.
MAX_UPLOAD_BYTES = 2 * 2**20
#: A stream with nothing new sends a comment this often (so a closed page is noticed and proxies keep it open).
KEEPALIVE_S = 15.0

_HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
                                       "base-uri 'none'; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


class ApiError(Exception):
    """A refusal: HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


#: What kind of refusal an error answer is (``{"error": detail, "code": code}``): the pages say it in their own
#: language (``error.<code>`` in the catalogues) and keep the server's English detail beside it.
ERROR_CODES = ("request", "forbidden", "stale", "not_found", "link", "record", "refused")


def _error(status: int, message: str, code: str) -> JSONResponse:
    assert code in ERROR_CODES, code
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=_HEADERS)


def _ok(data: Any) -> JSONResponse:
    return JSONResponse(data, headers=_HEADERS)


async def _json_body(request: Request, limit: int = MAX_BODY_BYTES) -> Any:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise ApiError(415, "send the body as application/json")
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > limit:
        raise ApiError(413, f"the body is larger than {limit:,} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ApiError(413, f"the body is larger than {limit:,} bytes")
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the body is not valid JSON: {e}") from None


def _int_field(data: dict[str, Any], key: str, lo: int, hi: int, default: int | None = None) -> int | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ApiError(400, f"{key} must be an integer in {lo}..{hi}, got {str(value)[:40]!r}")
    return value


class Listeners:
    """The open event streams of each table: one queue per stream, woken (from any thread or event loop) after
    every change of its table; a stream that is already woken is not woken twice (it reads the newest state)."""

    def __init__(self) -> None:
        self._queues: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]]] = {}
        self._guard = threading.Lock()
        #: Set when the server stops: every stream ends (it would hold the stop up otherwise).
        self.closing = False

    def close(self) -> None:
        """The server stops: every stream ends now (a page's browser would reconnect to a server that is back)."""
        self.closing = True
        with self._guard:
            tables = list(self._queues)
        for game_id in tables:
            self.wake(game_id)

    def listen(self, game_id: str) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue]:
        """A new stream's queue (call from its event loop)."""
        entry = (asyncio.get_running_loop(), asyncio.Queue(maxsize=1))
        with self._guard:
            self._queues.setdefault(game_id, set()).add(entry)
        return entry

    def stop(self, game_id: str, entry: tuple[asyncio.AbstractEventLoop, asyncio.Queue]) -> None:
        """The stream is closed."""
        with self._guard:
            queues = self._queues.get(game_id, set())
            queues.discard(entry)
            if not queues:
                self._queues.pop(game_id, None)

    def wake(self, game_id: str) -> None:
        """Table ``game_id`` changed: every stream of it sends its newest view."""
        with self._guard:
            entries = list(self._queues.get(game_id, ()))
        for loop, queue in entries:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_put, queue)


def _put(queue: asyncio.Queue) -> None:
    if queue.empty():
        queue.put_nowait(None)


def table_state(store: GameStore, game_id: str, access: Access) -> dict[str, Any]:
    """What a shared table's link shows: ``{"id", "role", "seat", "given", "present", "replay", "links"?,
    "agents"?, "view"}``. ``view`` is the seat's view for a seat's link, the public view for the others; the
    host also gets the links and the agents it may seat; ``replay`` is the record's page once the game is over
    (the whole record is public then)."""
    table = store.get(game_id)
    with store.lock(game_id):                           # not in the middle of a move
        view = table.view(access.viewer)
    out: dict[str, Any] = {"id": game_id, "role": access.role, "seat": access.seat, "given": access.given,
                           "present": store.present(game_id),
                           "replay": f"/replay/games/game-{game_id}.json" if view["over"] else None, "view": view}
    if access.role == "host":
        out["links"] = store.links(game_id)
        out["agents"] = store.allowed_specs()
    return out


def stream_text(store: GameStore, game_id: str, token: str) -> str:
    """A stream's next message: the token read again (a seat may have been given to a bot since), then what it
    opens as compact JSON; one trip to the thread pool per view."""
    return json.dumps(table_state(store, game_id, store.access(game_id, token)), separators=(",", ":"))


def held_games(header: str) -> list[tuple[str, str]]:
    """The ``(id, token)`` pairs of an ``X-Mus-Games`` header (``<id>.<token>`` separated by commas; at most
    :data:`~experiments.web.store.MAX_HELD`): the one-person games whose links the asker holds."""
    pairs = []
    for item in header.split(",")[:MAX_HELD]:
        game_id, _, token = item.strip().partition(".")
        if game_id and token:
            pairs.append((game_id, token))
    return pairs


def warm_up() -> None:
    """Build what the first game of each variant would otherwise build while people wait (the own-hand tables
    of the observation, 29 MB each); run once when the server starts."""
    for kings in (4, 8):
        hand_table(kings)


def create_app(records: str | Path = "runs/serve", runs: str | Path = "runs", agents: tuple[str, ...] = (),
               default_bots: tuple[str, str, str] = ("ppo", "ppo", "ppo")) -> Starlette:
    """The application: browser games saved under ``records/games`` (and replayable from ``records``), run
    pages from ``runs``; ``agents`` are extra specs the pages may seat (trusted: from the command line).

    Args:
        records: folder of the game records to replay (browser games are saved in its ``games`` subfolder).
        runs: folder of tournament and training runs (their pages, and their ``*.pt`` policies as bots).
        agents: extra agent specs to offer (``make_agent`` specs given on the command line).
        default_bots: the bots a new game offers first (partner, then the rivals), if available.
    """
    records_dir, runs_dir = Path(records), Path(runs)
    store = GameStore(records_dir / "games", runs=runs_dir, extra_specs=agents)
    listeners = Listeners()
    styles = AgentStyles(runs_dir, store.agent)

    def page(name: str):  # noqa: ANN202 - a Starlette endpoint
        async def endpoint(request: Request) -> Response:
            return FileResponse(STATIC / name, headers=_HEADERS)
        return endpoint

    async def options(request: Request) -> Response:
        allowed = store.allowed_specs()
        bots = [b if b in allowed else "rule" for b in default_bots]
        explaining = [s for s in allowed if s in ("ppo", "equity") or s.lower().endswith((".pt", ".zip"))]
        return _ok({"agents": allowed, "explaining": explaining, "default_bots": bots, "kings": [8, 4],
                    "targets": [40, 30], "signals": ["off", "truthful", "free"]})

    async def new_game(request: Request) -> Response:
        data = await _json_body(request)
        if not isinstance(data, dict):
            raise ApiError(400, "send a JSON object")
        seat = _int_field(data, "seat", 0, 3, 0)
        bots = data.get("bots")
        if not isinstance(bots, list) or len(bots) != 3 or not all(isinstance(b, str) for b in bots):
            raise ApiError(400, "bots must be a list of three agent specs (partner first, then the two rivals)")
        partner, rivals = (seat + 2) % 4, [(seat + 1) % 4, (seat + 3) % 4]
        specs = {partner: bots[0], rivals[0]: bots[1], rivals[1]: bots[2]}
        cfg, seed = _config(data)
        game_id = await _run(store.create, cfg, seat, specs, seed)
        return _ok({"id": game_id, "url": await _run(store.solo_link, game_id)})

    async def _solo(request: Request) -> tuple[str, Any]:
        game_id = request.path_params["game_id"]
        return game_id, await _run(store.solo, game_id, request.path_params["token"])

    async def no_key(request: Request) -> Response:
        raise PathRefused("a game opens only by its own link, /play/<id>/<token>: its id alone opens nothing")

    async def get_game(request: Request) -> Response:
        game_id, table = await _solo(request)
        return _ok({"id": game_id, **await _run(solo_view, game_id, table)})

    def solo_view(game_id: str, table: Any) -> dict[str, Any]:
        with store.lock(game_id):                       # not in the middle of a move
            return table.view(next(iter(table.people)))

    async def move(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        data = await _json_body(request)
        if not isinstance(data, dict) or "action" not in data or "turn" not in data:
            await _solo(request)                        # a wrong link is told so first
            raise ApiError(400, 'send {"action": id, "turn": n} (the turn of the view you answer)')
        table = await _run(store.move, game_id, data["action"], data["turn"], None, request.path_params["token"])
        return _ok({"id": game_id, **table.view(next(iter(table.people)))})

    # shared tables
    async def new_table(request: Request) -> Response:
        data = await _json_body(request)
        if not isinstance(data, dict):
            raise ApiError(400, "send a JSON object")
        seats = data.get("seats")
        if not isinstance(seats, list) or len(seats) != 4 or not all(isinstance(s, str) for s in seats):
            raise ApiError(400, f'seats must be a list of four: {PERSON!r} or an agent spec for each seat 0..3')
        cfg, seed = _config(data)
        game_id = await _run(store.create_table, cfg, dict(enumerate(seats)), seed)
        return _ok({"id": game_id, **await _run(store.links, game_id)})

    async def _open(request: Request) -> tuple[str, Access]:
        game_id = request.path_params["game_id"]
        return game_id, await _run(store.access, game_id, request.path_params["token"])

    async def get_table(request: Request) -> Response:
        game_id, access = await _open(request)
        return _ok(await _run(table_state, store, game_id, access))

    async def table_move(request: Request) -> Response:
        game_id, access = await _open(request)
        data = await _json_body(request)
        if not isinstance(data, dict) or "action" not in data or "turn" not in data:
            raise ApiError(400, 'send {"action": id, "turn": n} (the turn of the view you answer)')
        if access.role != "seat":
            raise ApiError(403, "this link plays no seat: only a seat's own link moves for it")
        if "seat" in data and data["seat"] != access.seat:
            raise ApiError(403, f"this link plays seat {access.seat}, not seat {str(data['seat'])[:20]}")
        try:
            await _run(store.move, game_id, data["action"], data["turn"], access.seat)
        finally:
            listeners.wake(game_id)
        return _ok(await _run(table_state, store, game_id, access))

    async def table_bot(request: Request) -> Response:
        game_id, access = await _open(request)
        data = await _json_body(request)
        if access.role != "host":
            raise ApiError(403, "only the host's link gives a seat to a bot")
        if not isinstance(data, dict) or "seat" not in data or not isinstance(data.get("agent"), str):
            raise ApiError(400, 'send {"seat": 0..3, "agent": spec} (a person\'s seat, an offered agent)')
        try:
            await _run(store.hand_over, game_id, data["seat"], data["agent"])
        finally:
            listeners.wake(game_id)
        return _ok(await _run(table_state, store, game_id, access))

    def coach_of(game_id: str, seat: int, spec: str) -> dict[str, Any]:
        agent = store.agent(spec)
        table = store.get(game_id)
        with store.lock(game_id):                       # the decision it answers, not one in the middle of a move
            g = table.game
            if g.is_over or g.current_player != seat:
                raise StaleTurn("the coach speaks at your decisions only, and it is not your turn")
            try:
                return {**analyse(agent, g, spec), "turn": table.turn}
            except ValueError as e:
                raise ApiError(400, str(e)) from None

    def review_of(game_id: str, seat: int, spec: str, hand: str | None) -> dict[str, Any]:
        agent = store.agent(spec)
        table = store.get(game_id)
        with store.lock(game_id):
            record = table.record()
            finished = [h.hand_number for h in table.game.hand_log]
        if not finished:
            raise ApiError(400, "no hand is finished yet: the review comes after each hand")
        try:
            number = finished[-1] if hand is None else int(hand)
        except ValueError:
            raise ApiError(400, f"hand must be a hand number, got {hand[:20]!r}") from None
        if number not in finished:
            raise ApiError(400, f"hand {number} is not a finished hand of this game (finished: 0..{finished[-1]})")
        try:
            return {**review(agent, spec, seat_decisions(record, seat, number)), "seat": seat, "hand": number}
        except ValueError as e:
            raise ApiError(400, str(e)) from None

    async def table_review(request: Request) -> Response:
        game_id, access = await _open(request)
        if access.role != "seat" or access.seat is None:
            raise ApiError(403, "the coach reviews a seat's own play: open it with your seat's link")
        q = request.query_params
        return _ok(await _run(review_of, game_id, access.seat, q.get("agent", "ppo"), q.get("hand")))

    async def game_review(request: Request) -> Response:
        game_id, table = await _solo(request)
        q = request.query_params
        return _ok(await _run(review_of, game_id, next(iter(table.people)), q.get("agent", "ppo"), q.get("hand")))

    async def table_coach(request: Request) -> Response:
        game_id, access = await _open(request)
        if access.role != "seat" or access.seat is None:
            raise ApiError(403, "the coach helps a seat's own person: open it with your seat's link")
        return _ok(await _run(coach_of, game_id, access.seat, request.query_params.get("agent", "ppo")))

    async def game_coach(request: Request) -> Response:
        game_id, table = await _solo(request)
        return _ok(await _run(coach_of, game_id, next(iter(table.people)), request.query_params.get("agent", "ppo")))

    async def table_events(request: Request) -> Response:
        game_id, access = await _open(request)          # refused before the stream starts: 403/404, no stream

        async def stream() -> AsyncIterator[str]:
            entry = listeners.listen(game_id)
            seat = access.seat if access.role == "seat" else None
            if seat is not None:
                store.arrive(game_id, seat)
                listeners.wake(game_id)
            try:
                last = ""
                while True:                             # a view now, then one after each change (if it changed)
                    text = await _run(stream_text, store, game_id, request.path_params["token"])
                    if text != last:
                        yield f"event: view\ndata: {text}\n\n"
                        last = text
                    while not listeners.closing:        # only a change wakes the stream; meanwhile a comment
                        try:
                            await asyncio.wait_for(entry[1].get(), KEEPALIVE_S)
                            break
                        except TimeoutError:
                            yield ": still here\n\n"
                    if listeners.closing:
                        return
            finally:
                listeners.stop(game_id, entry)
                if seat is not None:
                    store.leave(game_id, seat)
                    listeners.wake(game_id)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={**_HEADERS, "Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def records_list(request: Request) -> Response:
        held = await _run(store.held, held_games(request.headers.get("x-mus-games", "")))
        return _ok({"records": await _run(list_records, records_dir, held)})

    def _finished_record(name: str) -> dict[str, Any]:
        record = load_record(safe_path(records_dir, name, (".json",)))
        if record.get("over") is not True:
            raise ApiError(409, "this game is still being played: only finished games can be replayed")
        return record

    async def record_timeline(request: Request) -> Response:
        record = await _run(_finished_record, request.path_params["name"])
        return _ok(await _run(timeline, record))

    async def record_analysis(request: Request) -> Response:
        record = await _run(_finished_record, request.path_params["name"])
        step_text = request.query_params.get("step", "")
        if not step_text.isdigit():
            raise ApiError(400, "give ?step=k, a decision number of the record")
        spec = request.query_params.get("agent", "")
        game = await _run(game_at, record, int(step_text))
        agent = await _run(store.agent, spec)
        try:
            return _ok(await _run(analyse, agent, game, spec))
        except ValueError as e:
            raise ApiError(400, str(e)) from None

    def agent_style(spec: str) -> dict[str, Any] | None:
        return styles.get(spec) if spec else None

    async def style_of_seat(request: Request) -> Response:
        name = request.path_params["name"]
        seat_text = request.query_params.get("seat", "")
        if seat_text not in ("0", "1", "2", "3"):
            raise ApiError(400, f"give ?seat=N, the seat 0..3 whose style to show (got {seat_text[:20]!r})")
        record = await _run(_finished_record, name)
        seat = int(seat_text)
        counts = await _run(seat_counts, record, seat)
        player = str(record.get("players", {}).get(str(seat), "?"))
        agent = await _run(agent_style, request.query_params.get("agent", "rule"))
        return _ok({"record": name, "seat": seat, "player": player, "records": [name],
                    "style": await _run(profile_view, counts, {"agent": player, "records": [name]}), "agent": agent})

    async def style_of_player(request: Request) -> Response:
        player = request.query_params.get("player", "")
        if not player:
            raise ApiError(400, "give ?player=NAME, a player's name in the records (a person is 'human'), or use "
                                "/api/style/<record>?seat=N")
        counts, names = await _run(player_counts, records_dir, player)
        if not names:
            raise PathRefused(f"no finished game of the records has a player named {player[:80]!r}")
        agent = await _run(agent_style, request.query_params.get("agent", "rule"))
        return _ok({"record": None, "seat": None, "player": player, "records": names,
                    "style": await _run(profile_view, counts, {"agent": player, "records": names}), "agent": agent})

    async def upload_record(request: Request) -> Response:
        data = await _json_body(request, MAX_UPLOAD_BYTES)
        if not isinstance(data, dict):
            raise ApiError(400, "a record is a JSON object")
        await _run(replay, data, True)                      # RecordError names the field that is wrong
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
        name = f"uploads/record-{digest}.json"
        await _run(save_record, data, records_dir / name)
        return _ok({"name": name, "url": f"/replay/{name}"})

    async def runs_list(request: Request) -> Response:
        return _ok({"runs": await _run(list_runs, runs_dir)})

    async def run_page_data(request: Request) -> Response:
        return _ok(await _run(read_run, runs_dir, request.path_params["name"]))

    async def run_file(request: Request) -> Response:
        path = await _run(safe_path, runs_dir, request.path_params["name"], (".png",))
        return FileResponse(path, headers=_HEADERS)

    routes = [
        Route("/", page("index.html")),
        Route("/play/{game_id}/{token}", page("play.html")),
        Route("/table/{game_id}/{token}", page("play.html")),
        Route("/replay/{name:path}", page("replay.html")),
        Route("/runs/{name:path}", page("run.html")),
        Route("/style", page("yourstyle.html")),
        Route("/api/options", options),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", no_key, methods=["GET", "POST"]),
        Route("/api/games/{game_id}/moves", no_key, methods=["POST"]),
        Route("/api/games/{game_id}/{token}", get_game),
        Route("/api/games/{game_id}/{token}/moves", move, methods=["POST"]),
        Route("/api/games/{game_id}/{token}/coach", game_coach),
        Route("/api/games/{game_id}/{token}/review", game_review),
        Route("/api/tables", new_table, methods=["POST"]),
        Route("/api/tables/{game_id}/{token}", get_table),
        Route("/api/tables/{game_id}/{token}/events", table_events),
        Route("/api/tables/{game_id}/{token}/moves", table_move, methods=["POST"]),
        Route("/api/tables/{game_id}/{token}/bots", table_bot, methods=["POST"]),
        Route("/api/tables/{game_id}/{token}/coach", table_coach),
        Route("/api/tables/{game_id}/{token}/review", table_review),
        Route("/api/records", records_list),
        Route("/api/records", upload_record, methods=["POST"]),
        Route("/api/records/{name:path}/analysis", record_analysis),
        Route("/api/records/{name:path}", record_timeline),
        Route("/api/style", style_of_player),
        Route("/api/style/{name:path}", style_of_seat),
        Route("/api/runs", runs_list),
        Route("/api/runs/{name:path}", run_page_data),
        Route("/files/runs/{name:path}", run_file),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    async def on_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, ApiError):
            return _error(exc.status, str(exc), {403: "forbidden", 409: "stale"}.get(exc.status, "request"))
        if isinstance(exc, StaleTurn):
            return _error(409, str(exc), "stale")
        if isinstance(exc, PathRefused):
            return _error(404, str(exc), "not_found")
        if isinstance(exc, LinkRefused):
            return _error(403, str(exc), "link")
        if isinstance(exc, RecordError):
            return _error(422, f"the record does not replay: {exc}", "record")
        if isinstance(exc, TableError):
            return _error(400, str(exc), "refused")
        raise exc

    handlers = {e: on_error for e in (ApiError, StaleTurn, PathRefused, LinkRefused, RecordError, TableError)}
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await _run(warm_up)
        yield

    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    app.state.store = store
    #: The links of the games in progress saved before games had keys, keyed now (``mus serve`` prints them).
    app.state.old_games = store.key_old_games()
    app.state.listeners = listeners
    app.state.started = time.time()
    return app


def _config(data: dict[str, Any]) -> tuple[MusConfig, int | None]:
    """The variant and the seed of a new game or table."""
    try:
        cfg = MusConfig(kings=_int_field(data, "kings", 4, 8, 8), target=_int_field(data, "target", 1, 1000, 40),
                        signals=str(data.get("signals", "off")),
                        signal_intercept_p=float(data.get("intercept", 0.0) or 0.0))
    except (TypeError, ValueError) as e:
        raise ApiError(400, str(e)) from None
    return cfg, _int_field(data, "seed", 0, 2**64 - 1, None)


async def _run(func: Any, *args: Any) -> Any:
    """Run blocking work (the engine, the bots, files) off the event loop."""
    return await run_in_threadpool(func, *args)
