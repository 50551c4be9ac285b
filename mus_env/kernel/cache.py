"""The guard of the kernel's on-disk cache: numba checks a cached function against its own file only, while an
entry point of ``drivers.py`` holds the handlers, the view and the rules modules' constants compiled into it. So
the package's import compares a digest of every source compiled into the kernel with the stamp beside numba's
cache files and deletes the kernel's cached files when they differ (:func:`drop_stale_cache`): an edited handler
never runs as its old compile, and nothing here is compiled.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

from .. import actions, cards, config, observation, phases, shuffle, signals, tables
from . import drivers, handlers, layout, view

#: The stamp file beside numba's cache files: the :func:`sources_digest` the cached kernel was compiled from.
CACHE_STAMP = "mus_kernel_sources.sha256"
#: The modules compiled into the kernel's entry points: its four files and the rules modules they read.
_COMPILED_SOURCES = (layout, handlers, view, drivers, actions, cards, config, observation, phases, shuffle, signals,
                     tables)
_ENTRY_POINTS = (drivers.step_serial, drivers.step_parallel, drivers.step_rows, drivers.step_subset,
                 drivers.first_bad_table, drivers.reset_tables, drivers.new_episodes, drivers.observe_tables,
                 drivers.observe_view, drivers.state_rows, drivers.sample_legal, drivers.legal_masks,
                 drivers.seed_table, drivers.step_one, drivers.observe_seat)


def sources_digest() -> str:
    """SHA-256 of the sources compiled into the kernel (its four files and the rules modules they import) and of
    numba's version: what a cached compile must have been made from."""
    h = hashlib.sha256(numba.__version__.encode())
    for module in _COMPILED_SOURCES:
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()


def drop_stale_cache(cache_dirs: list[Path] | None = None, digest: str | None = None) -> bool:
    """Delete numba's cache files of the kernel in ``cache_dirs`` (default: where the entry points cache, as numba
    chose) unless the :data:`CACHE_STAMP` there says they were compiled from ``digest`` (default:
    :func:`sources_digest`); then stamp ``digest`` there. Called on import, before anything is compiled or loaded.

    Returns:
        True when stale files were deleted (the next use compiles). A folder that cannot be read or written is
        left as it is (numba cannot cache there either).
    """
    digest = digest or sources_digest()
    if cache_dirs is None:
        cache_dirs = sorted({Path(f.stats.cache_path) for f in _ENTRY_POINTS})
    dropped = False
    for folder in cache_dirs:
        stamp = folder / CACHE_STAMP
        try:
            if stamp.read_text(encoding="utf-8") == digest:
                continue
        except OSError:
            pass                                            # no stamp yet: whatever is cached is of unknown origin
        try:
            for path in folder.glob("*.nb[ic]"):
                if path.name.split(".", 1)[0] in ("layout", "handlers", "view", "drivers"):
                    path.unlink(missing_ok=True)
                    dropped = True
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f"{CACHE_STAMP}.{os.getpid()}"
            tmp.write_text(digest, encoding="utf-8")
            tmp.replace(stamp)                              # atomic: a concurrent import reads one stamp or the other
        except OSError:
            continue
    return dropped
