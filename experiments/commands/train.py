"""``mus train``: self-play PPO with a league (:mod:`experiments.train.ppo`).

Every field of :class:`experiments.train.ppo.Args` is a flag (``--num-tables``, ``--league-mix``, ...), with
the field's docstring as its help; ``--preset`` picks the values the flags not given take (``tiny``,
``default``, ``ship``: 160M decisions of plain self-play from the ``equity`` clone, ``scratch``: 600M decisions from
a random network).
``--resume`` continues the run in ``--out`` from its checkpoint, with the settings the run was made with (its
``args.json``) for every flag not given, so ``mus train --resume --out RUN`` is enough; ``--overwrite`` replaces
it (once the new run has written its first checkpoint). At the end the last and best evaluations and
the files written are printed.

Exit status: 0 done; 2 refused (a bad option, setting, agent, policy file, output folder or checkpoint: one line
on stderr, nothing written); 1 the training diverged (a loss or a weight became NaN or infinite; the last good
checkpoint is kept); 130 interrupted by Ctrl-C (one line: where the last checkpoint is and the command that
resumes).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import shlex
import sys
from pathlib import Path

from experiments.commands.options import ArgumentParser, boolean
from experiments.train import ppo
from experiments.train.checkpoint import run_settings
from experiments.train.report import print_summary
from experiments.train.session import TrainingDiverged, TrainingInterrupted
from experiments.train.settings import SettingsError
from mus_env.config import SIGNALS_CHOICES
from mus_env.interrupts import terminate_as_ctrl_c

__all__ = ["field_docs", "parser", "main", "resume_command", "fail"]


def field_docs() -> dict[str, str]:
    """The docstring under each field of :class:`experiments.train.ppo.Args` (shown by ``--help``)."""
    tree = ast.parse(inspect.getsource(ppo.Args))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, nxt in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            docs[node.target.id] = str(nxt.value.value)  # type: ignore[union-attr]
    return docs


def parser() -> ArgumentParser:
    """The ``mus train`` parser: ``--preset``, ``--resume``, ``--overwrite`` and one flag per ``Args`` field
    (default None: the preset's value), its help the field's docstring with the default preset's value and, where
    it differs, the ship preset's."""
    p = ArgumentParser(prog="mus train", description=ppo.__doc__.splitlines()[0],
                       epilog="Every value not given comes from the preset; [brackets] show the default "
                              "preset's value and where the ship preset differs.")
    p.add_argument("--preset", default="default", choices=sorted(ppo.PRESETS),
                   help="named settings to start from: tiny (seconds), default (about 8 minutes), ship (160M "
                        "decisions of plain self-play from the equity clone, about 1.5 hours), scratch (600M "
                        "decisions from a random network, about 100 minutes) [default]")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --out from its checkpoint; flags not given take the run's own "
                        "settings (its args.json), not the preset's")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a run already in --out (kept until the new run's first checkpoint)")
    defaults = ppo.Args()
    docs = field_docs()
    for f in dataclasses.fields(ppo.Args):
        flag = "--" + f.name.replace("_", "-")
        value = getattr(defaults, f.name)
        shown = " ".join(map(str, value)) if isinstance(value, tuple) else value
        doc = f"{docs.get(f.name, '')} [{shown}"
        if f.name in ppo.PRESETS["ship"]:
            doc += f"; ship: {ppo.PRESETS['ship'][f.name]}"
        doc = (doc + "]").replace("%", "%%")
        if isinstance(value, bool):
            p.add_argument(flag, type=boolean, default=None, metavar="BOOL", help=doc)
        elif f.name == "signals":
            p.add_argument(flag, default=None, choices=SIGNALS_CHOICES, help=doc)
        elif isinstance(value, tuple):
            p.add_argument(flag, type=int, nargs="+", default=None, help=doc)
        else:
            p.add_argument(flag, type=type(value), default=None, help=doc)
    return p


def resume_command(prog: str, argv: list[str]) -> str:
    """The command line that resumes the run ``argv`` started: the same options, ``--resume`` instead of
    ``--overwrite``."""
    kept = [a for a in argv if not (a.startswith("--ov") and "--overwrite".startswith(a.split("=")[0]))]
    resumes = any(a.startswith("--res") and "--resume".startswith(a) for a in kept)
    return f"{prog} {shlex.join(kept + ([] if resumes else ['--resume']))}"


def fail(prog: str, error: BaseException, argv: list[str]) -> None:
    """End a command over the trainer that failed with ``error``: one line on stderr and its exit status (2 a
    refusal, 1 a diverged run, 130 an interrupt, with the command that resumes or starts it again)."""
    text = " ".join(str(error).split())
    if isinstance(error, TrainingInterrupted):
        again = resume_command(prog, argv) if error.checkpoint else f"{prog} {shlex.join(argv)}"
        print(f"{prog}: {text}; {'resume with' if error.checkpoint else 'start it again with'}: {again}",
              file=sys.stderr)
        raise SystemExit(130) from None
    if isinstance(error, KeyboardInterrupt):
        print(f"{prog}: interrupted before the run started; nothing was written", file=sys.stderr)
        raise SystemExit(130) from None
    print(f"{prog}: {text}", file=sys.stderr)
    raise SystemExit(1 if isinstance(error, TrainingDiverged) else 2) from None


def main(argv: list[str] | None = None) -> None:
    """``mus train [options]``: parse, check the settings, the agents and the output folder, train, print the
    summary.

    A bad option, setting, agent spec or output folder is one line on stderr and exit status 2, as is a run that
    cannot be resumed (or a folder that already holds one, without ``--resume`` or ``--overwrite``); nothing is
    written then. Ctrl-C is one line (exit status 130) saying where the last checkpoint is and how to resume; a
    diverged run one line (exit status 1).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser()
    ns = p.parse_args(argv)
    overrides = {k: v for k, v in vars(ns).items() if k not in ("preset", "resume", "overwrite") and v is not None}
    if "hidden" in overrides:
        overrides["hidden"] = tuple(overrides["hidden"])
    saved: dict = {}
    if ns.resume:                                     # the flags not given: the run's own settings, not the preset's
        out = overrides.get("out", ppo.PRESETS[ns.preset].get("out", ppo.Args.out))
        saved = run_settings(Path(out), [f.name for f in dataclasses.fields(ppo.Args)])
    try:
        args = ppo.make_args(ns.preset, **{**saved, **overrides})
    except ValueError as e:
        if not saved:
            p.error(str(e))
        # a flag given that does not fit the run's other settings (--signals off for a run with an intercept):
        # the flags as given, so that the checkpoint's check names what the run was made with
        try:
            args = ppo.make_args(ns.preset, **overrides)
        except ValueError:
            p.error(str(e))
    try:
        with terminate_as_ctrl_c():                   # kill PID: as Ctrl-C (the last checkpoint kept, exit 130)
            t = ppo.train(args, resume=ns.resume, overwrite=ns.overwrite,
                          run_info={"command": "mus train " + " ".join(argv), "preset": ns.preset})
    except (SettingsError, TrainingDiverged, KeyboardInterrupt) as e:
        fail("mus train", e, argv)
    print_summary(t)


if __name__ == "__main__":
    main()
