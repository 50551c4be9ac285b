"""``python -m experiments.commands.load_serve``: the load test of ``mus serve``'s shared tables from the command
line (the work is :mod:`experiments.tools.load_serve`'s)."""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from experiments.tools.load_serve import THINK_S, free_port, run_load, start_server, wait_until_up


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.commands.load_serve",
                                     description="the load test of mus serve's shared tables")
    parser.add_argument("--tables", type=int, default=50, help="tables at once (4 connected clients each)")
    parser.add_argument("--moves", type=int, default=20, help="person moves per table (fewer if the game ends)")
    parser.add_argument("--bot", default="rule", help="the bots' agent (an offered spec)")
    parser.add_argument("--target", type=int, default=40, help="stones to win a game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--think", type=float, default=THINK_S,
                        help="a person's mean seconds to decide (uniform in 0.5-1.5 times it; 0: a stress test)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole run")
    parser.add_argument("--url", help="a running server (default: start one in a subprocess)")
    args = parser.parse_args(argv)
    process = None
    with tempfile.TemporaryDirectory(prefix="mus-load-") as tmp:
        if args.url:
            base = args.url.rstrip("/")
        else:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            process = start_server(Path(tmp), port)
        try:
            wait_until_up(base, process)
            result = asyncio.run(run_load(base, args.tables, args.moves, args.bot, args.target, args.seed,
                                          args.timeout, args.think))
        finally:
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
    print(json.dumps(result.summary()))
    for error in result.errors[:20]:
        print("error:", error, file=sys.stderr)
    return 1 if result.errors or result.tables < args.tables else 0


if __name__ == "__main__":
    sys.exit(main())
