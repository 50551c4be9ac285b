"""Options of the ``mus`` subcommands: the argument parser with one-line errors, argument types that name the
accepted values, and checks of output paths and agent specs. Only the command line (:mod:`experiments.cli`,
:mod:`experiments.commands`) imports this module; the libraries take plain Python values. ``MAX_TARGET`` and
``MAX_DEALS`` are the library's limits (:mod:`experiments.evaluate.deals`), re-exported here.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

# the limits of --target and of deal-set sizes belong to the library; the options re-export them
from experiments.evaluate.deals import MAX_DEALS, MAX_TARGET
from mus_env import MusConfig
from mus_env.observation import obs_dim

__all__ = ["ArgumentParser", "HelpFormatter", "int_in", "torch_threads_option", "apply_torch_threads",
           "positive_float", "int_list", "check_writable_dir",
           "check_writable_file", "check_creatable_dir", "check_agent_specs", "split_specs", "SPEC_LIST_HINT",
           "agent_list_options", "read_agent_list",
           "version", "MAX_TARGET", "MAX_DEALS", "boolean"]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except the None / False of optional values and flags."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help or ""
        return super()._get_help_string(action) or ""


def plain(text: str) -> str:
    """Docstring text as a terminal shows it: reST roles and literals (``:class:`x```, double backquotes) as
    their bare text. The ``mus`` parsers apply it to every description, epilog and help."""
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text).replace("``", "")


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` for the ``mus`` subcommands: defaults shown in ``-h``, docstring markup shown
    as plain text (:func:`plain`), and one-line errors (``mus tournament: error: argument --target: must be an int
    in 1..1000, got '0' (mus tournament -h)``), exit status 2."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        for key in ("description", "epilog"):
            if isinstance(kwargs.get(key), str):
                kwargs[key] = plain(kwargs[key])  # type: ignore[arg-type]
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: object, **kwargs: object) -> argparse.Action:  # type: ignore[override]
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = plain(kwargs["help"])  # type: ignore[arg-type]
        return super().add_argument(*args, **kwargs)

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


def boolean(text: str) -> bool:
    """An argparse ``type``: ``true`` or ``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``; any case)."""
    t = text.strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


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


def check_creatable_dir(parser: argparse.ArgumentParser, option: str, folder: str | Path) -> Path:
    """Check, creating nothing, that ``folder`` is a folder that can be written in or made; else ``parser.error``.

    The nearest part of the path that exists must be a folder this process may write in (so a refusal that comes
    later leaves no empty folder behind); the command makes ``folder`` only once every option is checked.
    """
    folder = Path(folder)
    probe = folder
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    reason = None
    if not probe.is_dir():
        reason = f"{str(probe)!r} is not a folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        reason = f"{str(probe)!r}: permission denied"
    if reason:
        parser.error(f"argument {option}: cannot write to {str(folder)!r}: {reason}; give a folder you can write to")
    return folder


def check_writable_file(parser: argparse.ArgumentParser, option: str, path: str | Path) -> Path:
    """Check that ``path`` can be written (its folder is made if needed); else ``parser.error``."""
    path = Path(path)
    if path.is_dir():
        parser.error(f"argument {option}: {str(path)!r} is a folder; give a file path")
    check_writable_dir(parser, option, path.parent)
    return path


#: Appended to an error about a spec of a comma-separated list: how to give a file whose name has a comma.
SPEC_LIST_HINT = ("(a file name with a comma: give each agent with --agent SPEC, repeated, or quote it: "
                  "--agents 'rule,\"my,bot.pt\"')")


def split_specs(text: str) -> list[str]:
    """A comma-separated list of agent specs, as CSV: ``rule,"my,bot.pt"`` is ``["rule", "my,bot.pt"]`` (spaces
    around items are dropped, empty items skipped).

    Raises:
        ValueError: an unbalanced quote.
    """
    try:
        rows = list(csv.reader([text], skipinitialspace=True, strict=True))
    except csv.Error as e:
        raise ValueError(f"cannot split {text[:60]!r} into agent specs: {e}") from None
    return [s.strip() for row in rows for s in row if s.strip()]


def agent_list_options(parser: argparse.ArgumentParser, plural: str, singular: str, default: str | None,
                       what: str) -> None:
    """Add the two ways of giving a list of agents: ``plural`` (``--agents A,B``, split by :func:`split_specs`,
    quotes keep a comma in a file name) and ``singular`` repeated (``--agent A --agent B``); read them back with
    :func:`read_agent_list`."""
    parser.add_argument(plural, default=None,
                        help=f"{what}, comma-separated{f' (default: {default})' if default else ''}; quote a spec "
                             f"that has a comma ({plural} 'rule,\"my,bot.pt\"') or use {singular}")
    parser.add_argument(singular, action="append", default=None, metavar="SPEC", dest=_list_dest(singular),
                        help=f"one agent spec, repeated for each agent ({singular} rule {singular} my,bot.pt): "
                             f"instead of {plural}")


def _list_dest(singular: str) -> str:
    return singular.lstrip("-").replace("-", "_") + "_list"


def read_agent_list(parser: argparse.ArgumentParser, args: argparse.Namespace, plural: str, singular: str,
                    default: str) -> tuple[str, list[str]]:
    """The option that gave the agents (``plural`` or ``singular``) and their specs (see
    :func:`agent_list_options`); giving both, or an unbalanced quote, is ``parser.error``."""
    repeated = getattr(args, _list_dest(singular))
    given = getattr(args, plural.lstrip("-").replace("-", "_"))
    if repeated is not None:
        if given is not None:
            parser.error(f"argument {singular}: not with {plural} (give the list one way: {plural} A,B or "
                         f"{singular} A {singular} B)")
        return singular, [s.strip() for s in repeated if s.strip()]
    try:
        return plural, split_specs(default if given is None else given)
    except ValueError as e:
        parser.error(f"argument {plural}: {e} {SPEC_LIST_HINT}")
    return plural, []


def check_agent_specs(parser: argparse.ArgumentParser, option: str, specs: list[str],
                      human: bool = False, hint: str = "", config: MusConfig | None = None) -> None:
    """Build each agent spec once (``agents.make_agent``) so a bad one is ``parser.error`` naming it (and
    ``hint``, if given, after the error); with ``config``, a policy whose network reads observations of
    another length (trained with señas for a game without them, or the reverse) is refused too."""
    from agents import AGENT_SPECS, make_agent, observation_size
    tail = f" {hint}" if hint else ""
    want = obs_dim(config) if config is not None else None
    for spec in specs:
        if spec == "human" and not human:
            parser.error(f"argument {option}: 'human' cannot sit here (mus play seats you); use one of "
                         f"{', '.join(s for s in AGENT_SPECS if s != 'human')}, a *.pt or a *.zip file{tail}")
        try:
            agent = make_agent(spec)
        except (ValueError, OSError, ImportError, RuntimeError) as e:
            parser.error(f"argument {option}: {e}{tail}")
        size = observation_size(agent)
        if want is not None and size is not None and size != want:
            trained, flag = (("with señas", "--signals truthful (or free)") if size > want
                             else ("without señas", "--signals off"))
            parser.error(f"argument {option}: {spec} was trained {trained} (it reads {size} observation entries, "
                         f"this game gives {want}): play it with {flag}")


def torch_threads_option(parser: argparse.ArgumentParser) -> None:
    """``--torch-threads N``: torch's intra-op threads for the policy agents a command plays
    (:func:`apply_torch_threads`)."""
    parser.add_argument("--torch-threads", type=int_in(0, 256), default=0, metavar="N",
                        help="torch threads for the policy agents (ppo, *.pt) in this process: 0 leaves torch's "
                             "default (all cores); 1 beside a training run on a small machine, where two threads "
                             "can be several times slower")


def apply_torch_threads(threads: int) -> None:
    """Set torch's intra-op thread count to ``threads`` when it is positive
    (:func:`agents.policy.set_torch_threads`). torch is imported only then, and where it is not installed there is
    no policy agent to play, so nothing is done."""
    if threads <= 0:
        return
    try:
        from agents.policy import set_torch_threads  # the train extra (torch): only when asked
    except ImportError:
        return
    set_torch_threads(threads)


def version() -> str:
    """The installed mus-env version (``pyproject.toml``'s when installed from a checkout)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version
    try:
        return _version("mus-env")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout that is not installed
        return "unknown (not installed: pip install -e .)"
