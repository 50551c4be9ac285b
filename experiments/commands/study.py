"""``mus study AGENT AGENT ...``: probe several agents (e.g. the seeds of one method) and write the table over them
(:mod:`experiments.population.study`: the runner; :mod:`experiments.population.study_table`: the figures).

Exit status as ``mus exploit``'s: 2 refused (one line, nothing run), 1 a probe's training diverged, 130 interrupted
(one line: the command that resumes).
"""

from __future__ import annotations

import argparse
import sys

from experiments.commands.options import ArgumentParser, boolean, int_in, int_list
from experiments.commands.train import fail
from experiments.population import study
from experiments.population.exploit import PROFILE_DEALS
from experiments.population.exploit_seeds import STARTS
from experiments.train.ppo import PROBE_LEARNING_RATE
from experiments.train.session import TrainingDiverged
from mus_env.config import SIGNALS_CHOICES
from mus_env.interrupts import terminate_as_ctrl_c
from mus_env.tables import LANCE_NAMES

__all__ = ["parser", "main"]


def parser() -> ArgumentParser:
    """The ``mus study`` parser (defaults shown in ``-h``)."""
    p = ArgumentParser(prog="mus study", description=study.__doc__.splitlines()[0],
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("agents", nargs="+", metavar="AGENT",
                   help="the agents to probe: random, rule, equity, ordago, ppo, a *.pt or *.zip file")
    p.add_argument("--labels", default=None, metavar="LIST",
                   help="the agents' labels, comma-separated, one per AGENT (folder names; default: each spec's "
                        "name, as mus exploit's folder)")
    p.add_argument("--seeds", type=int_in(1, 1000), default=2, metavar="N",
                   help="probe seeds --seed .. --seed+N-1 of each agent, start and length")
    p.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0, help="the first probe seed")
    p.add_argument("--starts", default="equity", metavar="LIST",
                   help=f"the best responses' starts, comma-separated, from {', '.join(STARTS)}")
    p.add_argument("--decisions", type=int_list(1), required=True, metavar="LIST",
                   help="the probe lengths in training decisions, comma-separated (two or more: the table says "
                        "whether the shorter probes rank the agents as the longest do), e.g. 13000000,80000000")
    p.add_argument("--cross", action="store_true",
                   help="evaluate every best response against every agent of the study (the cross matrix)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--only", choices=["all", "bidding", "ordago"], default="all",
                   help="the probes' variant, as mus exploit --only")
    g.add_argument("--lance", choices=list(LANCE_NAMES), default=None,
                   help="the learner decides only the betting of this lance")
    p.add_argument("--out", default=str(study.DEFAULT_OUT), help="the study's folder")
    p.add_argument("--eval-hands", type=int_in(1), default=20000, help="held-out duplicate deals played as hands")
    p.add_argument("--eval-games", type=int_in(1), default=2000, help="held-out duplicate deals played as games")
    p.add_argument("--eval-seed", type=int, default=2024, help="seed of the held-out deal sets")
    p.add_argument("--profile-deals", type=int_in(0), default=PROFILE_DEALS, metavar="N",
                   help="each probe's style profiles (mus exploit --profile-deals; 0: skip)")
    p.add_argument("--learning-rate", type=float, default=PROBE_LEARNING_RATE, metavar="LR",
                   help="the best responses' learning rate (keep the default to compare with other probes)")
    p.add_argument("--workers", type=int_in(1, 256), default=1, metavar="N",
                   help="probes run at once as processes on this machine (each with one torch thread unless "
                        "--torch-threads says otherwise)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run each probe as a Ray task on the cluster at ADDRESS (HOST:PORT or auto)")
    p.add_argument("--signals", choices=SIGNALS_CHOICES, default="off",
                   help="the game's señas: policies trained with them are probed in their game")
    p.add_argument("--torch-threads", type=int_in(0, 64), default=None,
                   help="torch threads of each probe (0: all cores, at most 4; default: 0, and 1 with --workers or "
                        "--ray)")
    p.add_argument("--device", default="auto", metavar="auto|cpu|cuda",
                   help="where the best responses' networks train")
    p.add_argument("--progress", type=boolean, default=True, metavar="BOOL", help="show a progress bar per probe")
    p.add_argument("--resume", action="store_true",
                   help="go on with a stopped study in --out: finished probes (their exploit.json) are read, not rerun")
    p.add_argument("--overwrite", action="store_true", help="run every probe of a study already in --out afresh")
    return p


def main(argv: list[str] | None = None) -> None:
    """``mus study AGENT ... --decisions LIST [options]``: run the study; a bad agent, label, seed count, start,
    length or output folder is one line on stderr and exit status 2 (nothing run); Ctrl-C one line saying how to
    resume (exit status 130)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser()
    a = p.parse_args(argv)
    if a.workers != 1 and a.ray is not None:
        p.error("argument --workers: not with --ray (the cluster schedules the probes)")
    labels = [x.strip() for x in a.labels.split(",")] if a.labels is not None else None
    starts = [s.strip() for s in a.starts.split(",")]
    probe_args = dict(learner_decides=a.lance or a.only, eval_hands=a.eval_hands, eval_games=a.eval_games,
                      eval_seed=a.eval_seed, device=a.device, progress=a.progress, learning_rate=a.learning_rate,
                      profile_deals=a.profile_deals, **({"signals": a.signals} if a.signals != "off" else {}),
                      **({"torch_threads": a.torch_threads} if a.torch_threads is not None else {}))
    try:
        agents = study.study_agents(a.agents, labels)
        with terminate_as_ctrl_c():                   # kill PID: as Ctrl-C (each probe keeps its last checkpoint)
            study.run_study(agents, [a.seed + k for k in range(a.seeds)], list(a.decisions), a.out, starts,
                            cross=a.cross, resume=a.resume, overwrite=a.overwrite, workers=a.workers,
                            ray_address=a.ray, command="mus study " + " ".join(argv), **probe_args)
    except (ValueError, ImportError, TrainingDiverged, KeyboardInterrupt) as e:
        fail("mus study", e, argv)


if __name__ == "__main__":
    main()
