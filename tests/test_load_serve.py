"""The load test of ``mus serve``'s shared tables (experiments/tools/load_serve.py), small: three tables, four
connected clients each, against a server in this process. Correctness only (no error, every table played, a
latency measured per answered move); the timing is reported in docs/serve.md, never asserted."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from hang_guards import SERVER_S  # noqa: E402

from experiments.tools.load_serve import free_port, run_load  # noqa: E402
from experiments.web.app import create_app  # noqa: E402


def test_three_tables_with_four_clients_each(tmp_path: Path) -> None:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(records=tmp_path, runs=tmp_path / "runs"),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the test server did not start"
    try:
        result = asyncio.run(run_load(f"http://127.0.0.1:{port}", tables=3, moves=8, timeout_s=SERVER_S,
                                      think_s=0.01))
    finally:
        server.should_exit = True
        thread.join(timeout=SERVER_S)
    assert result.errors == []
    assert result.tables == 3 and result.moves >= 3
    assert result.views >= 4 * 3                                   # every client got views
    assert len(result.latencies) >= result.moves - result.tables    # each move answered (a table's last may not)
    assert len(list((tmp_path / "games").glob("game-*.json"))) == 3
    summary = result.summary()
    assert summary["clients"] == 12 and summary["errors"] == 0


def test_people_who_think_a_negative_time_are_refused() -> None:
    with pytest.raises(ValueError, match="think_s must be >= 0"):
        asyncio.run(run_load("http://127.0.0.1:9", tables=1, think_s=-1.0))
