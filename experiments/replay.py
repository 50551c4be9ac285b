"""``mus replay FILE``: print a recorded game (a JSON record of ``mus play`` or ``mus tournament --records``)
hand by hand, after checking that it replays on MusGame to the recorded results."""

from __future__ import annotations

import argparse
import sys

from mus_env.records import RecordError, format_record, load_record, replay

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="mus replay", description=__doc__.splitlines()[0])
    p.add_argument("file", help="a JSON game record")
    p.add_argument("--no-check", action="store_true", help="print without replaying the actions on MusGame")
    args = p.parse_args(argv)
    try:
        record = load_record(args.file)
        if not args.no_check:
            replay(record)
    except RecordError as e:
        print(f"mus replay: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(format_record(record))


if __name__ == "__main__":
    main()
