"""The wall clock of a recipe's unfinished step, kept across stops.

A recipe (:mod:`experiments.population.recipe`) records each finished step's wall time (``step_seconds`` in
``recipe.json``). A step stopped in the middle (Ctrl-C, ``kill``, the machine going away) resumes from its last
checkpoint; without this clock the time it ran before the stop would be lost, and a recipe run over several sittings
would report less wall time than it took. :class:`StepClock` writes the seconds the unfinished step has run so far to
``OUT/clock.json`` every ``every`` seconds (from a daemon thread, and once more when it stops), and a resumed recipe
carries them into that step's time. At most ``every`` seconds are lost when the process is killed outright.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

#: The file beside ``recipe.json`` that holds the unfinished step's seconds.
CLOCK_NAME = "clock.json"
#: Seconds between two writes of the clock.
HEARTBEAT_SECONDS = 30.0
#: The clock read (a name of its own, so that tests can move it).
_now = time.perf_counter


class StepClock:
    """Seconds since the last finished step, the time an earlier process spent on the unfinished one included.

    Args:
        out: the recipe's folder (the clock is ``out/clock.json``).
        resume: carry the seconds a stopped process left in ``out/clock.json``; otherwise start from zero.
        every: seconds between two writes once :meth:`start` has been called.
    """

    def __init__(self, out: Path, resume: bool, every: float = HEARTBEAT_SECONDS) -> None:
        self.path = Path(out) / CLOCK_NAME
        self.every = every
        self.carried = self._read() if resume else 0.0
        self._since = _now()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> float:
        try:
            return float(json.loads(self.path.read_text(encoding="utf-8"))["unfinished_seconds"])
        except FileNotFoundError:
            return 0.0
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{self.path}: not a recipe clock ({e}); delete it to resume without the time the "
                             "stopped step had run") from None

    def _write(self, seconds: float) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({"unfinished_seconds": round(seconds, 1)}), encoding="utf-8")
        tmp.replace(self.path)

    def elapsed(self) -> float:
        """Seconds the unfinished step has run: in this process, and in earlier ones that were stopped."""
        return self.carried + _now() - self._since

    def beat(self) -> float:
        """Write :meth:`elapsed` to the clock file; returns it."""
        with self._lock:
            seconds = self.elapsed()
            self._write(seconds)
        return seconds

    def lap(self) -> float:
        """A step finished: its seconds (the carried ones included); the clock starts again from zero."""
        with self._lock:
            seconds = self.elapsed()
            self.carried, self._since = 0.0, _now()
            self._write(0.0)
        return seconds

    def set_aside(self) -> float:
        """The unfinished step will not be resumed (a resume set its stage aside): the seconds carried from the
        stopped process, which the caller books as set aside; the clock goes on from this process's start only."""
        with self._lock:
            carried, self.carried = self.carried, 0.0
            self._write(self.elapsed())
        return carried

    def start(self) -> None:
        """Write the clock every ``every`` seconds until :meth:`stop`."""
        def run() -> None:
            while not self._stop.wait(self.every):
                self.beat()
        self._thread = threading.Thread(target=run, name="recipe-clock", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the writes, and write the clock once more (a stop between two beats loses nothing)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.beat()
