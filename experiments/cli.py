"""The ``mus`` command: ``mus train``, ``mus exploit AGENT``, ``mus tournament``, ``mus play``,
``mus replay FILE``, ``mus bench``, ``mus deals``.

Each subcommand is also a runnable module (``python -m experiments.tournament`` ...); ``mus SUBCOMMAND -h``
shows its options.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["main", "COMMANDS"]

#: Subcommand -> (module, one-line description).
COMMANDS = {
    "train": ("experiments.ppo_selfplay", "train a policy by self-play PPO with a league (needs the train extra)"),
    "exploit": ("experiments.exploit", "best response to a frozen agent (a lower bound on its exploitability)"),
    "tournament": ("experiments.tournament", "duplicate round-robin between agents: Elo ladder, CSV/JSON, plots"),
    "play": ("experiments.play", "play against three bots in the terminal"),
    "replay": ("experiments.replay", "print a recorded game hand by hand"),
    "bench": ("experiments.bench", "decisions/s of the engines and of peer environments"),
    "deals": ("experiments.deals", "write a seeded deal set for duplicate evaluation"),
}


def _usage() -> str:
    lines = ["usage: mus SUBCOMMAND [options]", "", "subcommands:"]
    lines += [f"  {name:<11} {desc}" for name, (_, desc) in COMMANDS.items()]
    lines += ["", "mus SUBCOMMAND -h shows the options of one subcommand."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"mus: unknown subcommand {name!r}\n\n{_usage()}", file=sys.stderr)
        raise SystemExit(2)
    module = importlib.import_module(COMMANDS[name][0])
    module.main(rest)


if __name__ == "__main__":
    main()
