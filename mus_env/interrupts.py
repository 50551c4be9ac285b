"""Ctrl-C during a numba compile: held until the compile has finished, then raised where it is safe.

numba's compiler is not safe against a ``KeyboardInterrupt`` at an arbitrary point. Measured on this project's
first compile (``mus tournament`` with an empty numba cache, Ctrl-C at chosen moments): the interrupt was
swallowed by a finaliser inside llvmlite and the run went on to the end (exit 0); it left numba's state broken
and the run ended with a ``RuntimeError: no compiled object yet`` traceback; once, in CI, the process ended by
SIGINT (status -2) although the command had caught the interrupt and chosen exit 130.

So the code that may compile (:func:`mus_env.vector.warm_up`, the baselines' first call in
:mod:`agents.compiled`) runs inside :func:`ctrl_c_held`: a Ctrl-C there is noted, one line says the run stops as
soon as the compile is done, and the ``KeyboardInterrupt`` is raised when the block ends, in plain Python code,
where the commands' own handlers (one line, what was kept, exit 130) take it.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["HELD_NOTE", "ctrl_c_held", "terminate_as_ctrl_c"]

HELD_NOTE = "Ctrl-C: stopping as soon as the compile in progress has finished (numba cannot be stopped midway)"


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM under :func:`terminate_as_ctrl_c`: what Ctrl-C does (a ``KeyboardInterrupt``)."""
    signal.default_int_handler(signum, frame)


@contextmanager
def terminate_as_ctrl_c() -> Iterator[None]:
    """Within the block, SIGTERM (``kill PID``, a job scheduler's or a container's stop) stops the program as Ctrl-C
    does: a ``KeyboardInterrupt``, so a training command keeps its last checkpoint, says so in one line and exits
    with 130, where SIGTERM's default would end it at once. (A program started in the background by a script
    ignores Ctrl-C's SIGINT, so ``kill PID`` is how it is stopped.) Only in the main thread, and only where SIGTERM
    has its default action; :func:`ctrl_c_held` holds it during a compile like Ctrl-C."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def ctrl_c_held(note: str | None = HELD_NOTE, write: Callable[[str], object] | None = None) -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) while the block runs; raise ``KeyboardInterrupt`` after it if one came.

    Only Python's own Ctrl-C handler is replaced (and SIGTERM's under :func:`terminate_as_ctrl_c`), and only in
    the main thread: where a program installed its own SIGINT handler, or the block runs in another thread (a web
    server's worker), nothing changes. If the block raises, that exception goes on unchanged.

    Args:
        note: printed once, at the first Ctrl-C, so that the wait is not mistaken for a hang; None prints nothing.
        write: where the note goes (default: standard error).

    Raises:
        KeyboardInterrupt: after the block, when Ctrl-C was pressed during it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = [sig for sig, ours in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, _terminate))
            if signal.getsignal(sig) is ours]
    if not held:
        yield
        return
    pressed: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        if not pressed and note:
            (write or (lambda line: print(line, file=sys.stderr, flush=True)))(note)
        pressed.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if pressed:
        raise KeyboardInterrupt
