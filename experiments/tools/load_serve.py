"""A load test of ``mus serve``'s shared tables: many tables at once, each with four connected clients.

Each table has two people (seats 0 and 2, partners) and two bots (``--bot``, answering at once inside the
people's moves). Four clients hold each table's Server-Sent-Events stream open: the two people's seats, the
host and a spectator. A person acts only on a view its own stream brings (a random legal action, never an
órdago so that games last, sent with the turn it answers) after thinking ``THINK_S`` seconds on average; the
figure reported is the time from a person's move
being sent to the first view on a person's stream that needs a person again (the bots' answers, the save of the
record and the stream included).

    python -m experiments.commands.load_serve --tables 50            # starts a server of its own (a subprocess)
    python -m experiments.commands.load_serve --tables 50 --url http://127.0.0.1:8000   # against a running one
    python -m experiments.commands.load_serve --tables 50 --think 0      # people who never think: a stress test

It fails (exit status 1) on any error: a refused request, a broken stream, a stream whose turns go back, a
table that stops before its moves are made, or the time limit. Only ``httpx`` (asyncio) is needed.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

SEATS = ["person", "BOT", "person", "BOT"]
#: A person's mean time to decide, in seconds (a quick Mus player; each wait is uniform in 0.5-1.5 times it).
THINK_S = 2.0
PEOPLE = (0, 2)


@dataclass
class Result:
    """What a load run measured: the latencies (seconds) and what went wrong."""

    tables: int = 0
    moves: int = 0
    games_over: int = 0
    views: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))]     # nearest rank

    def summary(self) -> dict[str, Any]:
        ms = lambda x: round(1000 * x, 1)  # noqa: E731
        return {"tables": self.tables, "clients": 4 * self.tables, "person_moves": self.moves,
                "games_over": self.games_over, "views": self.views, "errors": len(self.errors),
                "p50_ms": ms(self.percentile(50)), "p95_ms": ms(self.percentile(95)),
                "max_ms": ms(max(self.latencies, default=float("nan"))), "wall_s": round(self.wall_s, 1)}


async def _events(client: httpx.AsyncClient, url: str) -> AsyncIterator[dict[str, Any]]:
    """The ``view`` events of a table's stream, parsed."""
    async with client.stream("GET", url, timeout=httpx.Timeout(10.0, read=None)) as response:
        if response.status_code != 200:
            raise RuntimeError(f"GET {url}: {response.status_code}")
        event, data = "", []
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "":
                if event == "view" and data:
                    yield json.loads("\n".join(data))
                event, data = "", []


class _Table:
    """One table: its links, the person's move waiting for its answer, its counts."""

    def __init__(self, client: httpx.AsyncClient, base: str, index: int, moves: int, result: Result,
                 rng: random.Random, think_s: float = 0.0) -> None:
        self.client, self.base, self.index, self.moves, self.result, self.rng = client, base, index, moves, result, rng
        self.think_s = think_s
        self.made = 0
        self.pending: tuple[float, int] | None = None       # (sent at, turn answered) of the last person's move
        self.acted: dict[int, int] = {}                     # seat -> the last turn it answered
        self.done = asyncio.Event()

    async def open(self, bot: str, target: int) -> dict[str, Any]:
        seats = [bot if s == "BOT" else s for s in SEATS]
        r = await self.client.post(self.base + "/api/tables", json={"seats": seats, "target": target,
                                                                     "seed": self.index})
        if r.status_code != 200:
            raise RuntimeError(f"POST /api/tables: {r.status_code} {r.text[:200]}")
        return r.json()

    def _api(self, link: str) -> str:
        return self.base + "/api/tables/" + link.removeprefix("/table/")

    async def watch(self, link: str, who: str) -> None:
        """A host's or a spectator's stream: views whose turns never go back."""
        last = -1
        async for state in _events(self.client, self._api(link) + "/events"):
            self.result.views += 1
            turn = state["view"]["turn"]
            if turn < last:
                self.result.errors.append(f"table {self.index} {who}: turn {turn} after {last}")
            last = turn

    async def play(self, link: str, seat: int) -> None:
        """A person's stream: act on each view that needs this seat, until the game or the moves are done."""
        last = -1
        async for state in _events(self.client, self._api(link) + "/events"):
            self.result.views += 1
            view = state["view"]
            if view["turn"] < last:
                self.result.errors.append(f"table {self.index} seat {seat}: turn {view['turn']} after {last}")
            last = view["turn"]
            if view["over"]:
                self.result.games_over += 1
                self.done.set()
                return
            if self.done.is_set():
                return
            if view["current_player"] != seat or self.acted.get(seat) == view["turn"]:
                continue
            now = time.perf_counter()
            if self.pending is not None and view["turn"] > self.pending[1]:
                self.result.latencies.append(now - self.pending[0])
                self.pending = None
            if self.made >= self.moves:
                self.done.set()
                return
            calm = [a for a in view["legal"] if "órdago" not in a["text"]] or view["legal"]   # games last
            action = self.rng.choice(calm)["action"]
            self.acted[seat] = view["turn"]
            if self.think_s > 0:                            # a person reads the table before acting
                await asyncio.sleep(self.rng.uniform(0.5, 1.5) * self.think_s)
            self.pending = (time.perf_counter(), view["turn"])
            self.made += 1
            self.result.moves += 1
            r = await self.client.post(self._api(link) + "/moves",
                                       json={"action": action, "turn": view["turn"], "seat": seat})
            if r.status_code != 200:
                self.result.errors.append(f"table {self.index} seat {seat}: move {r.status_code} {r.text[:200]}")
                self.done.set()
                return


async def _one_table(client: httpx.AsyncClient, base: str, index: int, moves: int, bot: str, target: int,
                     result: Result, seed: int, think_s: float) -> None:
    table = _Table(client, base, index, moves, result, random.Random(seed * 1000 + index), think_s)
    try:
        links = await table.open(bot, target)
    except Exception as e:  # noqa: BLE001 -- every failure is one error of the run
        result.errors.append(f"table {index}: {e}")
        return
    result.tables += 1
    tasks = [asyncio.create_task(table.watch(links["host"], "host")),
             asyncio.create_task(table.watch(links["watch"], "spectator"))]
    tasks += [asyncio.create_task(table.play(links["seats"][str(s)], s)) for s in PEOPLE]

    def failed(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            result.errors.append(f"table {index}: {type(task.exception()).__name__}: {task.exception()}")
            table.done.set()
    for task in tasks:
        task.add_done_callback(failed)
    await table.done.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def run_load(base: str, tables: int = 50, moves: int = 20, bot: str = "rule", target: int = 40,
                   seed: int = 0, timeout_s: float = 600.0, think_s: float = 0.0) -> Result:
    """Open ``tables`` tables on the server at ``base`` and play ``moves`` person moves at each (fewer if the
    game ends first), all at once.

    ``think_s`` is a person's mean time to decide (each wait uniform in [0.5, 1.5] times it; 0: act at once, a
    stress test whose latency is the queue of every person waiting). The latency is measured from the move
    being sent, so the thinking is never in it.
    """
    if think_s < 0:
        raise ValueError(f"think_s must be >= 0 seconds, got {think_s}")
    result = Result()
    # idle connections are dropped by the client before uvicorn's 5 s keep-alive closes them: a request on a
    # connection the server is closing at that moment would fail (httpx's own default is also 5 s: a race)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=2.0)
    started = time.perf_counter()
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60.0)) as client:
        jobs = [_one_table(client, base, i, moves, bot, target, result, seed, think_s) for i in range(tables)]
        try:
            await asyncio.wait_for(asyncio.gather(*jobs), timeout_s)
        except TimeoutError:
            result.errors.append(f"not done in {timeout_s} s")
    result.wall_s = time.perf_counter() - started
    return result


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(records: Path, port: int) -> subprocess.Popen[bytes]:
    """``mus serve``'s application under uvicorn in a process of its own, on 127.0.0.1:port."""
    code = ("import uvicorn; from experiments.web.app import create_app; "
            f"uvicorn.run(create_app(records={str(records)!r}, runs={str(records / 'runs')!r}), "
            f"host='127.0.0.1', port={port}, log_level='warning')")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", code], env=env)


def wait_until_up(base: str, process: subprocess.Popen[bytes] | None = None, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server stopped (exit status {process.returncode})")
        try:
            if httpx.get(base + "/api/options", timeout=5.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server at {base} did not answer in {timeout_s} s")
