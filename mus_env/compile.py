"""``python -m mus_env.compile``: compile the batched engine's kernel now, once per machine.

The first :class:`~mus_env.vector.VectorMusEnv` on a machine compiles the numba kernel (about
:data:`~mus_env.vector.COMPILE_SECONDS` s) and numba caches it on disk (``__pycache__`` in ``mus_env/kernel/``,
or ``NUMBA_CACHE_DIR``); every later process loads it in about a second. Run this after an install (a Docker
image, a CI job before its test workers start) so that nobody pays the compile in the middle of something else.

    python -m mus_env.compile              # serial and threaded (numba's thread pool has more than one thread)
    python -m mus_env.compile --threads 1  # the one-thread kernel only
"""

from __future__ import annotations

import argparse
import sys

from .vector import warm_up

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Compile the kernel unless numba's cache already holds it; one line of what happened. Returns 0."""
    p = argparse.ArgumentParser(prog="python -m mus_env.compile", description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=None,
                   help="the threads the engines will use: 1 compiles the one-thread kernel only "
                        "(default: numba's thread pool)")
    args = p.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        p.error(f"argument --threads: must be >= 1, got {args.threads}")
    if not warm_up(args.threads, log=lambda line: print(f"mus_env: {line}", flush=True)):
        print("mus_env: the batched engine is already compiled for this machine (numba's cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
