"""``mus distill MEMBERS``: fit one network to a mixture of policies (:func:`experiments.population.distill.distill`,
whose module docstring tells the method).

Exit status: 2 refused (one line, nothing written), 130 interrupted (the passes finished are kept in
``--out/checkpoint.pt``; ``--resume`` continues).
"""

from __future__ import annotations

import argparse
import sys

from experiments.commands.options import ArgumentParser, boolean, int_in
from experiments.population import distill
from mus_env.interrupts import terminate_as_ctrl_c

__all__ = ["parser", "main"]


def parser() -> ArgumentParser:
    """The ``mus distill`` parser (defaults shown in ``-h``)."""
    p = ArgumentParser(prog="mus distill", description=distill.__doc__.splitlines()[0],
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("members", help="the mixture: policy files with optional weights, e.g. "
                                   "'runs/a/policy.pt:0.6,runs/b/policy.pt:0.4' (no weight: 1)")
    p.add_argument("--out", default="runs/distill", help="output folder (policy.pt, distill.json, checkpoint.pt)")
    p.add_argument("--decisions", type=int_in(1, 10**9), default=4_000_000,
                   help="decisions played to make the data (about 1.3 GB of memory per 4M)")
    p.add_argument("--epochs", type=int_in(1, 1000), default=4, help="passes over the data")
    p.add_argument("--start", default=None, metavar="FILE",
                   help="the student's first weights (default: the member of largest weight)")
    p.add_argument("--learning-rate", type=float, default=3e-4, metavar="LR", help="Adam's step size")
    p.add_argument("--rival-share", type=float, default=0.5, metavar="F",
                   help="share of the games where rule or equity holds one team (the rest: the mixture on all seats)")
    p.add_argument("--seed", type=int_in(0, 2**32 - 1), default=0, help="seed of the data and of the passes")
    p.add_argument("--torch-threads", type=int_in(0, 256), default=1, help="torch's threads (0: torch's default)")
    p.add_argument("--progress", type=boolean, default=True, metavar="BOOL", help="show progress bars")
    p.add_argument("--resume", action="store_true", help="continue a stopped distillation in --out")
    p.add_argument("--overwrite", action="store_true", help="replace a distillation already in --out")
    return p


def main(argv: list[str] | None = None) -> None:
    """``mus distill MEMBERS [options]``: a bad member list, number or output folder is one line on stderr and exit
    status 2 (nothing written); Ctrl-C one line and exit status 130."""
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parser().parse_args(argv)
    try:
        with terminate_as_ctrl_c():
            distill.distill(a.members, a.out, decisions=a.decisions, epochs=a.epochs, start=a.start,
                            learning_rate=a.learning_rate, rival_share=a.rival_share, seed=a.seed,
                            torch_threads=a.torch_threads, progress=a.progress, resume=a.resume,
                            overwrite=a.overwrite, command="mus distill " + " ".join(argv))
    except ValueError as e:
        print(f"mus distill: {' '.join(str(e).split())}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print(f"mus distill: interrupted; the passes finished are kept in {a.out}/checkpoint.pt: continue with "
              f"mus distill {' '.join(argv)} --resume", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
