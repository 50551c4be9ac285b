"""``mus update-docs``: rewrite the generated blocks of the docs pages and the README
(:func:`experiments.tools.update_docs.update_docs`) from the code and from measurement files."""

from __future__ import annotations

import sys

from experiments.commands.options import ArgumentParser
from experiments.tools.update_docs import BLOCKS, update_docs

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus update-docs`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus update-docs",
                       description="Rewrite the generated blocks of the documentation pages and of the README "
                                   f"({', '.join(BLOCKS)}). The tables that come from the code are always "
                                   "rewritten; the measured ones from their copies in docs/ (ladder_results.json, "
                                   "bench.json, exploit_results.json), which a file given here replaces; the señas "
                                   "table only when its file is given. Run it from a checkout.")
    p.add_argument("--ladder", help="results.json of a mus tournament: the ladder (copied to docs/ladder_results.json)")
    p.add_argument("--bench", help="JSON output of mus bench --json: the performance tables and the README's speed "
                        "paragraph (copied to docs/bench.json)")
    p.add_argument("--bench-command", default=None,
                   help="the command shown above the bench table (default: the one the bench output records)")
    p.add_argument("--exploit", nargs="+", default=(), metavar="EXPLOIT_JSON",
                   help="exploit.json files of mus exploit runs (or exploit_seeds.json of mus exploit --seeds), in "
                        "table order (copied to docs/exploit_results.json; redraws docs/exploit.png)")
    p.add_argument("--exploit-name", action="append", default=[], metavar="SPEC=NAME",
                   help="show the probed agent SPEC as NAME in the exploitability table, its figure and its "
                        "commands (repeatable), e.g. a policy probed as a file before it was shipped as ppo; "
                        "kept with the results in docs/exploit_results.json")
    p.add_argument("--signals", help="signals_value.json of a mus signals run")
    args = p.parse_args(argv)
    bad = [n for n in args.exploit_name if "=" not in n or not n.split("=", 1)[0]]
    if bad:
        p.error(f"--exploit-name takes SPEC=NAME, got {bad[0]!r}")
    names = dict(n.split("=", 1) for n in args.exploit_name)
    try:
        changed = update_docs(ladder=args.ladder, bench=args.bench, bench_command=args.bench_command,
                              exploit=args.exploit, signals=args.signals, exploit_names=names)
    except OSError as e:
        print(f"mus update-docs: error: cannot read {e.filename or 'an input file'!s}: {e.strerror or e}; nothing "
              "was changed", file=sys.stderr)
        raise SystemExit(2) from None
    except (ValueError, KeyError) as e:       # a file that is not the output it should be, or a page lost a marker
        print(f"mus update-docs: error: {type(e).__name__}: {e}; nothing was changed", file=sys.stderr)
        raise SystemExit(2) from None
    print("updated " + (", ".join(str(c) for c in changed) if changed else "nothing (every block is up to date)"))


if __name__ == "__main__":
    main()
