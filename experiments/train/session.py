"""A training session's hold on its run's folder: nothing lost, nothing half-written.

* :func:`check_run_folder` (before anything is built or written): the folder can be written (or made) and holds
  what the session expects (a run to resume; no run to replace unless ``overwrite``). It creates nothing.
* :class:`FolderSession`, for any trainer that checkpoints into a folder (``mus train``, ``mus rllib``): an old
  run's files (with ``overwrite``, or files a failed start left) are moved aside into :data:`REPLACED` and deleted
  only once the new run has written its first checkpoint (:meth:`FolderSession.commit`); a session that fails or
  is interrupted before that puts the folder back exactly as it found it (the old run's files restored, a resumed
  run's own files as they were, a folder it made removed). After a checkpoint, that checkpoint is what is kept,
  and a resume continues from it.
* :class:`RunSession`: the session of :func:`experiments.train.ppo.train`, whose :meth:`RunSession.save` writes
  the checkpoint and commits.
* How a session ends badly: :class:`TrainingInterrupted` (Ctrl-C; it says where the last checkpoint is) and
  :class:`TrainingDiverged` (a loss or a weight became NaN or infinite, :func:`check_finite`; the last good
  checkpoint is kept).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from experiments.train.checkpoint import RUN_FILES, CheckpointError, save_checkpoint, save_outputs

if TYPE_CHECKING:
    from experiments.train.state import TrainState

__all__ = ["REPLACED", "DISCARDED", "TrainingInterrupted", "TrainingDiverged", "check_run_folder", "check_finite",
           "FolderSession", "RunSession"]

#: Where a session keeps the files of the run it replaces until its own first checkpoint (inside the run's folder).
REPLACED = ".replaced-run"
#: The replaced run on its way out (renamed from :data:`REPLACED` at the first checkpoint, then deleted; a session
#: killed while deleting it leaves it, and the next session deletes it).
DISCARDED = ".replaced-run.delete"


class TrainingInterrupted(KeyboardInterrupt):
    """A session stopped by Ctrl-C. ``checkpoint``: the run's last checkpoint (None: none was kept, and the folder
    is as it was before the session); ``update``: the update that checkpoint holds; the message says both."""

    def __init__(self, message: str, checkpoint: Path | None, update: int) -> None:
        super().__init__(message)
        self.checkpoint = checkpoint
        self.update = update


class TrainingDiverged(RuntimeError):
    """A loss or a weight became NaN or infinite; nothing of that update was saved (the message says what is
    kept)."""


def _writable_error(folder: Path) -> str | None:
    """Why nothing can be written in the existing folder ``folder`` (None: it can); creates no file (a nameless
    temporary file where the system has them, else one removed at once)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        return e.strerror or str(e)
    return None


def check_run_folder(out: Path, resume: bool, overwrite: bool, marker: str = "checkpoint.pt",
                     what: str = "checkpoint") -> None:
    """Check, writing nothing, that a session can use the folder ``out``, where a run is the file or folder
    ``marker`` (``checkpoint.pt`` for ``mus train``; ``what`` names it in the messages).

    Raises:
        CheckpointError: ``out`` is a file, cannot be written or made; ``resume`` and ``overwrite`` together;
            ``resume`` without a run in ``out``; a new run in a folder that holds one without ``overwrite``; or an
            old run left aside by a session that was killed (:data:`REPLACED`).
    """
    out = Path(out)
    if resume and overwrite:
        raise CheckpointError("--resume and --overwrite: one continues the run in --out, the other replaces it; "
                              "give one of them")
    if out.exists() and not out.is_dir():
        raise CheckpointError(f"cannot write to {str(out)!r}: it is a file; give an --out folder")
    parent = out
    while not parent.exists():
        if parent.parent == parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise CheckpointError(f"cannot write to {str(out)!r}: {str(parent)!r} is a file; give an --out folder you "
                              "can write to")
    why = _writable_error(parent)
    if why:
        raise CheckpointError(f"cannot write to {str(out)!r}: {why}; give an --out folder you can write to")
    if (out / REPLACED).exists():
        raise CheckpointError(f"{out / REPLACED} holds a run that an --overwrite moved aside before it was killed: "
                              f"move its files back into {out} (or delete it), then run again")
    if resume and not (out / marker).is_file():
        raise CheckpointError(f"{out / marker}: no {what} to resume (start without --resume to begin a run)")
    if not resume and not overwrite and (out / marker).exists():
        raise CheckpointError(f"{out} already holds a run ({marker}): continue it with --resume, start a new one "
                              "with another --out, or replace it with --overwrite")


def check_finite(net: torch.nn.Module, stats: dict[str, float], update: int, args: Any, who: str = "learner") -> None:
    """After an update: its losses (``stats``) and ``net``'s weights must be finite.

    Raises:
        TrainingDiverged: the update (``update``) made a loss or a weight NaN or infinite; the message names the
            settings that drive the step size.
    """
    bad = [f"{k}={v}" for k, v in stats.items() if not math.isfinite(v)]
    weights = [name for name, p in net.named_parameters() if not bool(torch.isfinite(p).all())]
    if bad or weights:
        what = f"its loss became NaN or infinite ({', '.join(bad)})" if bad else \
            f"its weights became NaN or infinite ({', '.join(weights[:3])})"
        raise TrainingDiverged(
            f"update {update}: training diverged, the {who}'s {what}; lower --learning-rate (now "
            f"{args.learning_rate:g}), --max-grad-norm ({args.max_grad_norm:g}) or --ent-coef ({args.ent_coef:g})")


class FolderSession:
    """A context manager around one session of a run in the folder ``out`` (see the module docstring).

    Args:
        out: the run's folder (made, with its parents, if missing).
        run_files: the names (files or folders) a run writes there: an old run's are moved aside until
            :meth:`commit`; nothing else in the folder is touched.
        resume: the session continues the run in ``out`` (nothing is moved aside).
        kept: with ``resume``, the run's files the session rewrites before its first commit: restored as they
            were if it fails before (``args.json``, ``metrics.csv``, ...).
        kept_trees: with ``resume``, folders the session adds files to (TensorBoard's): the files it added are
            removed if it fails before its first commit.

    Call :meth:`commit` once the new run's first checkpoint is written (the replaced run is deleted then) and
    :meth:`track` for what must be closed when the session ends (a log writer, a progress bar).
    """

    def __init__(self, out: Path, run_files: tuple[str, ...], resume: bool, kept: tuple[str, ...] = (),
                 kept_trees: tuple[str, ...] = ()) -> None:
        self.out = Path(out)
        self.run_files = tuple(run_files)
        self.resume = resume
        self.committed = False
        self._kept_names, self._tree_names = tuple(kept), tuple(kept_trees)
        self._closers: list[Any] = []
        self._made: list[Path] = []              # folders this session created, deepest last
        self._names: set[str] = set()            # the folder's entries when the session began
        self._kept: dict[str, bytes] = {}        # a resumed run's files that a session rewrites, as they were
        self._trees: set[Path] = set()           # a resumed run's files in kept_trees, as they were
        self._moved = False

    # -- opening and closing -----------------------------------------------------------------------------
    def __enter__(self) -> FolderSession:
        missing = []
        p = self.out
        while not p.exists():
            missing.append(p)
            p = p.parent
        self.out.mkdir(parents=True, exist_ok=True)
        self._made = list(reversed(missing))
        shutil.rmtree(self.out / DISCARDED, ignore_errors=True)           # left by a session killed at its commit
        self._names = {e.name for e in self.out.iterdir()}
        if self.resume:
            self._kept = {n: (self.out / n).read_bytes() for n in self._kept_names if (self.out / n).is_file()}
            self._trees = {q for n in self._tree_names if (self.out / n).is_dir() for q in (self.out / n).rglob("*")}
        else:
            old = [n for n in self.run_files if n in self._names]
            if old:
                self._names -= set(old)
                aside = self.out / REPLACED
                aside.mkdir()
                for n in old:
                    (self.out / n).rename(aside / n)
                self._moved = True
                self._names.add(REPLACED)
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        for c in reversed(self._closers):
            try:
                c.close()
            except Exception:  # noqa: BLE001, S110 - closing must not hide the session's own error
                pass
        if exc is None:
            self.commit()
        elif not self.committed and not self.resume:
            self._rollback()
        elif not self.committed:
            self._restore_resumed()
        return False

    def track(self, obj: Any) -> Any:
        """Close ``obj`` (it has ``close()``) when the session ends, whatever happens; returns it."""
        self._closers.append(obj)
        return obj

    # -- keeping or undoing -----------------------------------------------------------------------------
    def commit(self) -> None:
        """The new run's first checkpoint is written: it is the folder's run now (a replaced run is deleted)."""
        if not self.committed:
            self.committed = True
            if self._moved:
                (self.out / REPLACED).rename(self.out / DISCARDED)        # one step: never half a replaced run
                shutil.rmtree(self.out / DISCARDED, ignore_errors=True)

    def _ours(self) -> list[Path]:
        """The entries this session wrote in the folder: the run's files (and their temporary files)."""
        names = {*self.run_files, *(n + ".tmp" for n in self.run_files), "learning_curve.tmp.png"}
        return [e for e in self.out.iterdir() if e.name in names and e.name not in self._names]

    def _remove(self, path: Path) -> None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

    def _rollback(self) -> None:
        """A new run that ends before its first checkpoint: its files go, the replaced run's come back."""
        for path in self._ours():
            self._remove(path)
        if self._moved:
            aside = self.out / REPLACED
            for path in aside.iterdir():
                path.rename(self.out / path.name)
            aside.rmdir()
        for folder in reversed(self._made):
            try:
                folder.rmdir()
            except OSError:
                break

    def _restore_resumed(self) -> None:
        """A resumed run that ends before its next checkpoint: its kept files and trees as they were."""
        for path in self._ours():
            self._remove(path)
        for name, data in self._kept.items():
            (self.out / name).write_bytes(data)
        for n in self._tree_names:
            tree = self.out / n
            if tree.is_dir():
                for path in sorted(tree.rglob("*"), key=lambda q: len(q.parts), reverse=True):
                    if path not in self._trees:
                        self._remove(path)


class RunSession(FolderSession):
    """The session of :func:`experiments.train.ppo.train` in ``t.out`` (``t``: the run's
    :class:`~experiments.train.state.TrainState`, built and checked): a :class:`FolderSession` of
    :data:`~experiments.train.checkpoint.RUN_FILES` whose :meth:`save` writes each checkpoint (the first one commits),
    and whose failures end as :class:`TrainingInterrupted` or :class:`TrainingDiverged` saying what is kept."""

    def __init__(self, t: TrainState, resume: bool) -> None:
        # what a resumed session rewrites before its first checkpoint (best_policy.pt: at an evaluation)
        super().__init__(t.out, RUN_FILES, resume, kept=("args.json", "run.json", "best_policy.pt"),
                         kept_trees=("tb",))
        self.t = t
        self.saved_update: int | None = t.update if resume else None   # the update of the run's last checkpoint

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        super().__exit__(kind, exc, tb)
        if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, TrainingInterrupted):
            raise TrainingInterrupted(f"interrupted at update {self.t.update} of {self.t.num_updates}; "
                                      f"{self.kept()}", self.checkpoint, self.saved_update or 0) from None
        if isinstance(exc, TrainingDiverged):
            raise TrainingDiverged(f"{exc}; {self.kept()}") from None
        return False

    @property
    def checkpoint(self) -> Path | None:
        """The run's last checkpoint (None: none is kept)."""
        return self.out / "checkpoint.pt" if self.saved_update is not None else None

    def kept(self) -> str:
        """What the folder holds now, in words (for the messages)."""
        if self.saved_update is not None:
            return f"the last checkpoint is {self.out / 'checkpoint.pt'} (update {self.saved_update})"
        return "nothing of this run was kept" + (f" (the run that was in {self.out} is back as it was)"
                                                 if self._moved else "")

    def save(self, t: TrainState) -> None:
        """Write the run's checkpoint, then its logs and policies (:func:`experiments.train.checkpoint.save_run`);
        once the first checkpoint is written the new run is the folder's run (the replaced one is deleted)."""
        save_checkpoint(t)
        self.saved_update = t.update
        self.commit()
        save_outputs(t)
