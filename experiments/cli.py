"""The ``mus`` command: ``mus train``, ``mus exploit AGENT``, ``mus tournament``, ``mus play``, ``mus replay FILE``
and the others of :data:`COMMANDS` (``mus -h`` lists them, the maintainer tools last).

``mus SUBCOMMAND -h`` shows the options of one subcommand. The subcommands parse their arguments with
:class:`experiments.commands.options.ArgumentParser` (re-exported here): a bad argument is one line on stderr
naming it and the accepted values, and exit status 2, never a traceback. So is a subcommand whose library is not
installed (naming the extra that installs it). Whatever the subcommand, Ctrl-C is one line on stderr and exit
status 130, and a reader that closes the pipe (``mus replay FILE | head -3``) stops it quietly, exit status 141.
This module is the top of the project: it imports the subcommands' modules on demand, and nothing below imports
it.
"""

from __future__ import annotations

import importlib
import os
import sys

from experiments import EXTRAS
from experiments.commands.options import (
    MAX_DEALS,
    MAX_TARGET,
    ArgumentParser,
    HelpFormatter,
    check_agent_specs,
    check_writable_dir,
    check_writable_file,
    int_in,
    int_list,
    positive_float,
    version,
)

__all__ = ["main", "COMMANDS", "ArgumentParser", "HelpFormatter", "int_in", "positive_float", "int_list",
           "check_writable_dir", "check_writable_file", "check_agent_specs", "version", "MAX_TARGET", "MAX_DEALS"]

#: Subcommand -> (module, one-line description).
COMMANDS = {
    "train": ("experiments.commands.train",
              "train a policy by self-play PPO with a league (needs the train extra)"),
    "exploit": ("experiments.commands.exploit",
                "best response to a frozen agent (a lower bound on its exploitability)"),
    "study": ("experiments.commands.study",
              "probes of several agents (the seeds of a method): mean ± SE over them, cross matrix, ranks"),
    "league": ("experiments.commands.league",
               "the shipped agent's recipe: rounds of best responses and a Nash league (needs the train extra)"),
    "distill": ("experiments.commands.distill",
                "fit one network to a mixture of policies (needs the train extra)"),
    "tournament": ("experiments.commands.tournament",
                   "duplicate round-robin between agents: Elo ladder, CSV/JSON, plots"),
    "evaluate": ("experiments.commands.evaluate",
                 "an agent's report card: duplicate results vs every baseline, ladder place, optional probe"),
    "style": ("experiments.commands.style",
              "how agents bid: action frequencies by lance, role and hand strength, with plots"),
    "benchmark": ("experiments.commands.benchmark",
                  "which algorithm learns Mus best: rows trained alike, evaluated alike, one table"),
    "signals": ("experiments.commands.signals",
                "value of the señas channel: an agent with truthful signs vs without"),
    "sign-info": ("experiments.commands.sign_info",
                  "mutual information between a player's hand class and its signs"),
    "play": ("experiments.play", "play against three bots in the terminal"),
    "replay": ("experiments.replay", "print a recorded game hand by hand"),
    "bench": ("experiments.commands.bench", "decisions/s of the engines and of peer environments"),
    "deals": ("experiments.commands.deals", "write a seeded deal set for duplicate evaluation"),
    "sb3": ("experiments.commands.sb3",
            "sb3-contrib MaskablePPO on the batched engine (mus_env.adapters.sb3.MusVecEnv)"),
    "rllib": ("experiments.commands.rllib",
              "Ray RLlib PPO self-play, local or on a cluster (needs the rllib extra)"),
    "tianshou": ("experiments.commands.tianshou",
                 "Tianshou masked DQN at one seat (needs the tianshou extra)"),
    "serve": ("experiments.commands.serve",
              "play, replay and inspect Mus in the browser (needs the web extra)"),
    # maintainer tools
    "bench-sb3": ("experiments.commands.bench_sb3",
                  "maintainers: how fast SB3 MaskablePPO trains on MusVecEnv vs DummyVecEnv(MusGymEnv)"),
    "profile": ("experiments.commands.profile", "maintainers: where a VectorMusEnv step goes (µs per part)"),
    "make-tables": ("experiments.commands.make_tables",
                    "maintainers: rebuild the equity agent's tables (make-tables equity|signs)"),
    "ship-agent": ("experiments.commands.ship_agent",
                   "maintainers: evaluate a run's policy on fresh deals, ship it as ppo with its model card"),
    "bench-train": ("experiments.commands.bench_train",
                    "maintainers: the trainer's decisions/s and where they go (env, learner, league, update)"),
    "update-docs": ("experiments.commands.update_docs",
                    "maintainers: rewrite the generated tables of the docs pages and the README"),
}


def _usage() -> str:
    lines = ["usage: mus SUBCOMMAND [options]   (mus --version: the version)", "", "subcommands:"]
    lines += [f"  {name:<11} {desc}" for name, (_, desc) in COMMANDS.items()]
    lines += ["", "mus SUBCOMMAND -h shows the options of one subcommand."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return
    if argv[0] in ("-V", "--version"):
        print(f"mus-env {version()}")
        return
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"mus: error: unknown subcommand {name[:40]!r}; one of {', '.join(COMMANDS)} (mus -h for help)",
              file=sys.stderr)
        raise SystemExit(2)
    try:
        module = importlib.import_module(COMMANDS[name][0])
        module.main(rest)
        sys.stdout.flush()                  # a closed pipe shows here, not in the interpreter's exit
    except ModuleNotFoundError as e:
        missing = (e.name or "").split(".")[0]
        if missing in EXTRAS:
            print(f"mus {name}: error: it needs {missing}, which is not installed; "
                  f"pip install -e '.[{EXTRAS[missing]}]' (no GPU: a CPU-only torch first: docs/getting-started.md)",
                  file=sys.stderr)
            raise SystemExit(2) from None
        raise
    except KeyboardInterrupt:
        # a subcommand that knows what it kept says so itself (and exits 130); this is the fallback
        print(f"mus {name}: interrupted (Ctrl-C) before it finished; what it had written is kept, the rest was "
              "not written", file=sys.stderr)
        raise SystemExit(130) from None
    except BrokenPipeError:
        # the reader of the output went away (mus replay FILE | head -3): stop quietly, as cat or grep do
        try:                                # nothing more reaches the pipe, not even the exit's flush
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        raise SystemExit(141) from None     # 128 + SIGPIPE, the shell's status of a tool a closed pipe stopped


if __name__ == "__main__":
    main()
