"""The whole benchmark in one command (``mus benchmark all``): every row and seed, one after the other.

The protocol's budget is wall-clock minutes on an otherwise idle machine, so rows never run side by side. Each
(row, seed) runs as its own process (``mus benchmark run``: Ray and Tianshou keep process-wide state, and a
crash in one framework must not take the others with it), seeds outermost, so that a stopped schedule has a
complete first seed before it starts the second. A (row, seed) whose ``results.json`` has the same budget is
done and skipped; a stopped one continues from its own checkpoints: running the same command again finishes
the schedule. Every framework is checked before the first row starts, so that a missing extra is said at once
and not after hours.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from experiments.benchmark.rows import ROWS, row, trainer
from experiments.benchmark.run import RESULTS_NAME, row_folder

__all__ = ["pending", "run_all", "row_command"]


def _done(out: str | Path, name: str, seed: int, minutes: float, tiny: bool) -> bool:
    path = row_folder(out, name, seed) / RESULTS_NAME
    if not path.is_file():
        return False
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return results.get("budget_minutes") == minutes and bool(results.get("tiny")) == tiny


def pending(rows: Sequence[str], seeds: Sequence[int], out: str | Path, minutes: float,
            tiny: bool = False) -> list[tuple[str, int]]:
    """The (row, seed) pairs still to run, in the order they run (seeds outermost); a pair whose results file
    has this budget (``minutes``, ``tiny``) is done.

    Raises:
        ValueError: an unknown row.
    """
    for name in rows:
        row(name)
    return [(name, seed) for seed in seeds for name in rows if not _done(out, name, seed, minutes, tiny)]


def row_command(name: str, seed: int, out: str | Path, minutes: float, threads: int, tiny: bool) -> list[str]:
    """The ``mus benchmark run`` command line of one (row, seed), as this Python runs it."""
    return [sys.executable, "-m", "experiments.cli", "benchmark", "run", name, "--seed", str(seed),
            "--minutes", f"{minutes:g}", "--out", str(out), "--torch-threads", str(threads),
            "--tiny", "true" if tiny else "false"]


def run_all(rows: Sequence[str] | None = None, seeds: Sequence[int] = (0, 1), out: str | Path = "runs/benchmark",
            minutes: float = 30.0, threads: int = 1, tiny: bool = False, log: Callable[[str], None] = print,
            run: Callable[[list[str]], int] | None = None) -> list[tuple[str, int, int]]:
    """Run every pending (row, seed) of the schedule (:func:`pending`), each as a ``mus benchmark run`` process.

    Args:
        rows: the rows (default: all of :data:`~experiments.benchmark.rows.ROWS`).
        run: runs one command line and returns its exit status (default: a subprocess that shares this
            terminal's output).

    Returns:
        ``(row, seed, exit status)`` of each command run. A failed row does not stop the others; a row
        interrupted (status 130) stops the schedule, which the same call continues.

    Raises:
        ValueError: an unknown row, or no seed.
        ImportError: a row's framework is not installed (the message names the extra); nothing has run.
    """
    rows = list(ROWS) if rows is None else list(rows)
    if not seeds:
        raise ValueError("the schedule needs at least one seed")
    todo = pending(rows, seeds, out, minutes, tiny)
    for name in dict.fromkeys(name for name, _ in todo):
        trainer(name)                                   # a missing framework is said now, not after hours
    run = run or (lambda argv: subprocess.call(argv))
    done = len(rows) * len(seeds) - len(todo)
    log(f"mus benchmark: {len(todo)} run(s) of {minutes:g} minutes to go, {done} done, in {out}")
    ran: list[tuple[str, int, int]] = []
    for k, (name, seed) in enumerate(todo, 1):
        log(f"[{k}/{len(todo)}] {name} seed {seed}")
        status = run(row_command(name, seed, out, minutes, threads, tiny))
        ran.append((name, seed, status))
        if status == 130:
            log("mus benchmark: interrupted; the same command continues the schedule")
            break
        if status != 0:
            log(f"mus benchmark: {name} seed {seed} failed (exit status {status}); going on with the others")
    return ran
