"""The ``mus`` command: ``mus train``, ``mus exploit AGENT``, ``mus tournament``, ``mus signals``,
``mus sign-info``, ``mus play``, ``mus replay FILE``, ``mus bench``, ``mus deals``.

Each subcommand is also a runnable module (``python -m experiments.evaluate.tournament`` ...); ``mus SUBCOMMAND -h``
shows its options. The subcommands parse their arguments with :class:`ArgumentParser`: a bad argument is one
line on stderr naming it and the accepted values, and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["main", "COMMANDS", "ArgumentParser", "int_in", "positive_float", "int_list", "check_writable_dir",
           "check_writable_file", "check_agent_specs", "version", "MAX_TARGET", "MAX_DEALS"]

#: A package a subcommand may lack -> the extra that installs it.
_EXTRAS = {"torch": "train", "ray": "rllib", "tianshou": "tianshou", "sb3_contrib": "dev",
           "stable_baselines3": "dev", "tensorboard": "train"}

#: Subcommand -> (module, one-line description).
COMMANDS = {
    "train": ("experiments.train.ppo",
              "train a policy by self-play PPO with a league (needs the train extra)"),
    "exploit": ("experiments.evaluate.exploit",
                "best response to a frozen agent (a lower bound on its exploitability)"),
    "tournament": ("experiments.evaluate.tournament",
                   "duplicate round-robin between agents: Elo ladder, CSV/JSON, plots"),
    "signals": ("experiments.evaluate.signals_value",
                "value of the señas channel: an agent with truthful signs vs without"),
    "sign-info": ("experiments.evaluate.sign_info",
                  "mutual information between a player's hand class and its signs"),
    "play": ("experiments.play", "play against three bots in the terminal"),
    "replay": ("experiments.replay", "print a recorded game hand by hand"),
    "bench": ("experiments.tools.bench", "decisions/s of the engines and of peer environments"),
    "deals": ("experiments.evaluate.deals", "write a seeded deal set for duplicate evaluation"),
    "sb3": ("experiments.integrations.sb3_maskable_ppo",
            "sb3-contrib MaskablePPO on the batched engine (mus_env.sb3.MusVecEnv)"),
    "rllib": ("experiments.integrations.rllib_selfplay",
              "Ray RLlib PPO self-play, local or on a cluster (needs the rllib extra)"),
    "tianshou": ("experiments.integrations.tianshou_example",
                 "Tianshou masked DQN at one seat (needs the tianshou extra)"),
}


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except the None / False of optional values and flags."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help or ""
        return super()._get_help_string(action) or ""


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` for the ``mus`` subcommands: defaults shown in ``-h`` and one-line errors
    (``mus tournament: error: argument --target: must be an int in 1..1000, got '0' (mus tournament -h)``),
    exit status 2."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        message = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} -h for help)\n")


def int_in(lo: int, hi: int | None = None, note: str = "") -> Callable[[str], int]:
    """An argparse ``type``: an int in ``lo..hi`` (no upper bound when ``hi`` is None)."""
    hi_text = "2**64 - 1" if hi == 2**64 - 1 else str(hi)
    accepted = f"an int in {lo}..{hi_text}" if hi is not None else f"an int >= {lo}"
    accepted += f" ({note})" if note else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {accepted}, got {text[:40]!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {accepted}, got {value}")
        return value

    parse.__name__ = accepted
    return parse


def positive_float(text: str) -> float:
    """An argparse ``type``: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text[:40]!r}")
    return value


def int_list(lo: int, hi: int | None = None) -> Callable[[str], tuple[int, ...]]:
    """An argparse ``type``: a comma-separated list of ints in ``lo..hi`` (at least one)."""
    one = int_in(lo, hi)

    def parse(text: str) -> tuple[int, ...]:
        parts = text.split(",")
        try:
            values = tuple(one(p.strip()) for p in parts)
        except argparse.ArgumentTypeError:
            values = ()
        if not values:
            raise argparse.ArgumentTypeError(f"must be comma-separated {one.__name__.replace('an int', 'ints')}, "
                                             f"e.g. 1,256,4096; got {text[:40]!r}")
        return values

    return parse


def check_writable_dir(parser: argparse.ArgumentParser, option: str, folder: str | Path) -> Path:
    """Create ``folder`` if needed and check that a file can be written in it; else ``parser.error``."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        parser.error(f"argument {option}: cannot write to {str(folder)!r}: {e.strerror or e}; "
                     "give a folder you can write to")
    return folder


def check_writable_file(parser: argparse.ArgumentParser, option: str, path: str | Path) -> Path:
    """Check that ``path`` can be written (its folder is made if needed); else ``parser.error``."""
    path = Path(path)
    if path.is_dir():
        parser.error(f"argument {option}: {str(path)!r} is a folder; give a file path")
    check_writable_dir(parser, option, path.parent)
    return path


#: Largest ``--target`` the commands accept: Mus plays to 40 or 30, and the equity agent's table of win
#: probabilities grows as the square of the target.
MAX_TARGET = 1000
#: Largest deal set a command makes at once (``make_deals`` holds ``40 * n`` float64 keys while it shuffles).
MAX_DEALS = 10**6


def check_agent_specs(parser: argparse.ArgumentParser, option: str, specs: list[str],
                      human: bool = False) -> None:
    """Build each agent spec once (``agents.make_agent``) so a bad one is ``parser.error`` naming it."""
    from agents import AGENT_SPECS, make_agent
    for spec in specs:
        if spec == "human" and not human:
            parser.error(f"argument {option}: 'human' cannot sit here (mus play seats you); use one of "
                         f"{', '.join(s for s in AGENT_SPECS if s != 'human')}, a *.pt or a *.zip file")
        try:
            make_agent(spec)
        except (ValueError, OSError, ImportError, RuntimeError) as e:
            parser.error(f"argument {option}: {e}")


def version() -> str:
    """The installed mus-env version (``pyproject.toml``'s when installed from a checkout)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version
    try:
        return _version("mus-env")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout that is not installed
        return "unknown (not installed: pip install -e .)"


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
    except ModuleNotFoundError as e:
        missing = (e.name or "").split(".")[0]
        if missing in _EXTRAS:
            print(f"mus {name}: error: it needs {missing}, which is not installed; "
                  f"pip install -e '.[{_EXTRAS[missing]}]' (CPU torch first: pip install torch==2.13.0)",
                  file=sys.stderr)
            raise SystemExit(2) from None
        raise
    module.main(rest)


if __name__ == "__main__":
    main()
