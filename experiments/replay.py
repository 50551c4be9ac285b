"""``mus replay FILE``: print a recorded game (a JSON record of ``mus play`` or ``mus tournament --records``)
hand by hand, as MusGame rebuilds it from the record's deal, seed and actions.

Every stored result (hands, actions, stones, outcomes, scores, winner...) is compared with the rebuilt game
first; a record that differs anywhere is refused, naming the field, and nothing is printed. The text shown
is always the rebuilt game, never what the file merely claims.

Exit status: 0 printed; 2 refused (a bad option, or a file that cannot be read, is not a record or differs from
the rebuilt game: one line on stderr naming the field, as every ``mus`` subcommand refuses input); 141 when the
reader of the output went away (``mus replay FILE | head -3``), quietly.
"""

from __future__ import annotations

from experiments.commands.options import ArgumentParser
from mus_env.records import RecordError, format_record, load_record

__all__ = ["main"]

DESCRIPTION = ("Print a recorded game (from mus play or mus tournament --records) hand by hand, as MusGame "
               "rebuilds it from the record's deal, seed and actions, after checking every stored result "
               "against the rebuilt game.")


def main(argv: list[str] | None = None) -> None:
    p = ArgumentParser(prog="mus replay", description=DESCRIPTION)
    p.add_argument("file", help="a JSON game record")
    p.add_argument("--no-check", action="store_true",
                   help="rebuild and print the game from the deal, seed and actions without comparing the "
                        "record's stored results (what the file claims is ignored either way)")
    args = p.parse_args(argv)
    try:
        text = format_record(load_record(args.file), check=not args.no_check)
    except RecordError as e:
        p.error(f"argument file: {e}")              # one line, exit status 2, as every refused input
    print(text)


if __name__ == "__main__":
    main()
