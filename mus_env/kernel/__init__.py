"""The batched engine's per-table kernel: the rules of :mod:`mus_env.game`, compiled with numba.

:class:`~mus_env.vector.VectorMusEnv` keeps every table's state in one row of a numpy structured array
(:data:`STATE_FIELDS`, the one place where the state is documented) and steps all tables in one compiled
pass (:func:`step_tables`, ``prange`` over the tables; each table touches only its own row, so results
are identical whatever the number of threads). Inside a table the code reads like ``MusGame``: the kernel's
handlers carry the names of its handlers and do the same thing on the row.

Four files, each importing only those above it (layout → handlers → view → drivers), and the cache's guard:

* ``layout.py``: the state row (:data:`STATE_FIELDS`), a step's outputs (:data:`OUT_FIELDS`), the read-only
  rules (:data:`RULES_FIELDS`, :func:`make_rules`) and the constants the compiled code reads (config switch
  indexes, observation and señas offsets, SplitMix64 constants); nothing compiled.
* ``handlers.py``: the rules on one table's row, by RULES.md section: randomness (:mod:`mus_env.shuffle` bit
  for bit), hands, decisions and the mus phase, lances, betting, scoring, hands, games and vacas, a new episode.
* ``view.py``: a seat's observation (``encode``, a transcription of :func:`mus_env.observation.write`) and the
  legal mask.
* ``drivers.py``: the entry points VectorMusEnv calls (:func:`step_tables`, :func:`new_episodes`,
  :func:`observe_tables`, ...), and :func:`observe_view`: a ``MusGame``'s view written from its view record
  (``observation.VIEW_FIELDS``, the same field names as a table's row; ``interfaces.CompiledObserver``).

This package re-exports their public names (``kernel.step_tables``, ``kernel.STATE_DTYPE``, ...).

Everything is compiled on first use and cached on disk (``cache=True``: ``__pycache__`` beside these files,
or ``NUMBA_CACHE_DIR``), so only the first import after an install pays the compile. numba checks a cached
function against its own file only, while an entry point of ``drivers.py`` holds the handlers, the view and the
rules modules' constants compiled into it; so on import this package compares a digest of all those sources
(:func:`sources_digest`) with the one stamped beside the cache and, when they differ, deletes the kernel's cache
files first (``cache.py``: :func:`drop_stale_cache`): an edit anywhere in the kernel or the rules it reads
recompiles it.
"""

from __future__ import annotations

from .cache import CACHE_STAMP, drop_stale_cache, sources_digest
from .drivers import (
    compiled_entry,
    first_bad_table,
    legal_masks,
    new_episodes,
    observe_seat,
    observe_tables,
    observe_view,
    reset_tables,
    sample_legal,
    seed_table,
    state_rows,
    step_one,
    step_parallel,
    step_rows,
    step_serial,
    step_subset,
    step_tables,
)
from .handlers import intercept_uniform, legal_sign_bits
from .layout import OUT_DTYPE, OUT_FIELDS, RULES_DTYPE, RULES_FIELDS, STATE_DTYPE, STATE_FIELDS, Rules, make_rules
from .view import encode

__all__ = ["STATE_FIELDS", "STATE_DTYPE", "OUT_FIELDS", "OUT_DTYPE", "RULES_FIELDS", "RULES_DTYPE", "Rules",
           "make_rules", "step_tables", "step_serial", "step_parallel", "step_rows", "step_subset", "first_bad_table",
           "reset_tables", "new_episodes", "seed_table", "step_one", "observe_seat", "observe_tables", "observe_view",
           "state_rows", "sample_legal", "legal_masks", "compiled_entry", "encode", "intercept_uniform",
           "legal_sign_bits", "sources_digest", "drop_stale_cache", "CACHE_STAMP"]

drop_stale_cache()                                          # before anything is compiled or loaded from the cache
