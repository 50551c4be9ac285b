"""Wall-clock limits that only guard the suite against a hang.

No test's verdict may depend on the machine's speed: CI runs on machines slower and busier than a laptop (the
suite is checked pinned to one core, ``taskset -c 0``, beside busy loops). Each limit below is minutes, not
seconds, and ends a test only when something is stuck for good: a process that never exits, a server that never
starts, a page that never updates. A test that must see something happen in time (a checkpoint before an
interrupt, a task before a node is killed) waits for it with one of these limits and then asserts that it
happened, so a slow machine waits longer and never reaches a different verdict.
"""

from __future__ import annotations

#: A subprocess of the suite (a ``mus`` command, ``python -c``): a cold numba cache compiles the kernel inside it.
PROCESS_S = 900

#: Waiting for something a process or a thread makes to appear (a checkpoint, a tournament's folder, a marker).
APPEAR_S = 600

#: Waiting for a browser page to reach a state (Playwright's limits are milliseconds).
BROWSER_MS = 300_000

#: A server thread to start or to stop.
SERVER_S = 120
