"""Shared pytest options: ``--runslow`` enables tests marked ``slow``; ``--fuzz-games N`` sizes the fuzz.

Hypothesis runs derandomized (profile ``ci``, the default): every run, in CI or not, tries the same examples,
so a failure reproduces and a pass means the same thing everywhere. ``HYPOTHESIS_PROFILE=explore`` draws new
examples each run (and keeps failures in the local ``.hypothesis`` database) for hunting bugs locally. Neither
profile reads the clock: no deadline per example and no "too slow" health check, so a slow or busy machine
reaches the same verdict (a test that sets its own ``suppress_health_check`` keeps ``too_slow`` in it).
"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import HealthCheck, settings

DEFAULT_FUZZ_GAMES = 10_000

#: What no profile checks: the time an example or its data generation takes.
UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

settings.register_profile("ci", derandomize=True, **UNTIMED)
settings.register_profile("explore", derandomize=False, **UNTIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run tests marked slow (long fuzzing or training runs)")
    parser.addoption("--fuzz-games", action="store", type=int, default=None,
                     help="number of random games of tests/test_fuzz.py (default: $MUS_FUZZ_GAMES or "
                          f"{DEFAULT_FUZZ_GAMES})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def fuzz_games(request: pytest.FixtureRequest) -> int:
    """Games of the default fuzz run: ``--fuzz-games``, else ``$MUS_FUZZ_GAMES``, else 10,000."""
    n = request.config.getoption("--fuzz-games")
    if n is None:
        n = int(os.environ.get("MUS_FUZZ_GAMES", DEFAULT_FUZZ_GAMES))
    if n < 1:
        raise pytest.UsageError(f"--fuzz-games / MUS_FUZZ_GAMES must be >= 1, got {n}")
    return n


#: Python's own SIGINT and SIGTERM handlers, which every test starts with. ``ray.init`` installs a SIGTERM handler
#: in the driver and ``ray.shutdown`` leaves it there, so a test after a Ray test (in the same xdist worker) would
#: see Ray's; and a session started in the background by a shell (``pytest &``) inherits SIGINT ignored, so its
#: Ctrl-C tests, and the commands they start, would never see one.
_TEST_HANDLERS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}


@pytest.fixture(autouse=True)
def _signal_handlers_as_at_start() -> None:
    """Every test starts with Python's own Ctrl-C and SIGTERM handlers (whatever an earlier test's library left
    installed, or the shell that started the session)."""
    for sig, handler in _TEST_HANDLERS.items():
        if signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)
