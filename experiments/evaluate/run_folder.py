"""A run's output folder: one run writes it at a time, and a run's files replace the earlier run's together.

:class:`RunFolder` is a context manager. On entry it makes the folder (and its missing parents), takes an
exclusive lock on it (``flock`` on the folder itself, released by the system even if the process is killed) and
makes a hidden staging folder inside it; a second run that finds the folder locked gets :class:`RunFolderBusy`
and changes nothing. The run writes its files into :attr:`RunFolder.stage`; :meth:`RunFolder.commit` then moves
each into the folder, replacing the earlier run's, and removes the earlier run's files of :attr:`RunFolder.owned`
that this run did not write (a plot, the records), so the folder never holds files of two runs. Ctrl-C is held
back during the few renames of a commit. Leaving without a commit (an error, Ctrl-C) removes the staging folder
and the folders the entry made, if still empty: the tree is as it was.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> out = Path(tempfile.mkdtemp()) / "run"
    >>> with RunFolder(out, owned=("a.txt", "b.txt")) as rf:
    ...     _ = (rf.stage / "a.txt").write_text("new")
    ...     sorted(p.name for p in rf.commit())
    ['a.txt']
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, one run per folder is the user's affair
    fcntl = None  # type: ignore[assignment]

__all__ = ["RunFolder", "RunFolderBusy", "STAGE_PREFIX"]

#: Name prefix of the hidden staging folders inside a run folder.
STAGE_PREFIX = ".mus-stage-"


class RunFolderBusy(OSError):
    """Another process holds the run folder's lock (it is writing a run there now)."""


class RunFolder:
    """A locked output folder whose files are written into a staging folder and committed together.

    Args:
        path: the run folder (made, with its parents, on entry).
        owned: the names (files or folders) a run of this kind writes in ``path``: a commit removes those this
            run did not write. Other files in ``path`` are never touched.

    Attributes:
        path: the run folder.
        stage: the staging folder (inside ``path``) to write the run's files into; valid inside the ``with``.
        committed: whether :meth:`commit` ran.
        created: the folders the entry made (the run folder and its missing parents), outermost first.
    """

    def __init__(self, path: str | Path, owned: Sequence[str] = ()) -> None:
        self.path = Path(path)
        self.owned = tuple(owned)
        self.stage = self.path / f"{STAGE_PREFIX}{uuid.uuid4().hex[:12]}"
        self.committed = False
        self.created: list[Path] = []
        self._fd: int | None = None

    def __enter__(self) -> RunFolder:
        missing, probe = [], self.path
        while not os.path.lexists(probe) and probe.parent != probe:
            missing.append(probe)
            probe = probe.parent
        self.path.mkdir(parents=True, exist_ok=True)
        self.created = missing[::-1]
        try:
            self._lock()
            for old in self.path.glob(f"{STAGE_PREFIX}*"):   # left by a run that was killed (we hold the lock)
                shutil.rmtree(old, ignore_errors=True)
            self.stage.mkdir()
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._release()

    def _lock(self) -> None:
        if fcntl is None:
            return
        self._fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = None
            raise RunFolderBusy(f"another run is writing {str(self.path)!r} now (it holds the folder's lock); "
                                "wait for it to finish or give another folder") from None

    def _release(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)
        if not self.committed:
            for folder in reversed(self.created):          # innermost first; only if still empty
                with contextlib.suppress(OSError):
                    folder.rmdir()
        if self._fd is not None:
            os.close(self._fd)                             # releases the lock
            self._fd = None

    def commit(self) -> list[Path]:
        """Move every file and folder of :attr:`stage` into :attr:`path` (replacing what is there) and remove the
        names of :attr:`owned` that the stage lacks; returns the paths written. Ctrl-C waits until it is done."""
        with _sigint_held():
            written = []
            names = sorted(p.name for p in self.stage.iterdir())
            for name in names:
                src, dst = self.stage / name, self.path / name
                if src.is_dir() and dst.is_dir() and not dst.is_symlink():
                    old = self.stage / f".old-{name}"
                    os.replace(dst, old)                   # a folder cannot replace a non-empty one: swap it out
                elif dst.is_dir() and not dst.is_symlink():
                    shutil.rmtree(dst)
                os.replace(src, dst)
                written.append(dst)
            for name in self.owned:
                if name not in names:
                    stale = self.path / name
                    if stale.is_dir() and not stale.is_symlink():
                        shutil.rmtree(stale)
                    elif os.path.lexists(stale):
                        stale.unlink()
            self.committed = True
        return written


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold SIGINT back (it is delivered on exit) in the main thread of a POSIX process; elsewhere do nothing."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
