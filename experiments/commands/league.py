"""``mus league``: the shipped agent's recipe in one command (:mod:`experiments.population.recipe`): a first
``mus train`` stage, then rounds in which best responses are trained against the current policy, join the
population, and the next policy trains against the population's Nash mixture with a magnet at its start; the
policy kept is the least exploitable by probes that never trained it, with its report card.

``mus league --resume --rounds N`` makes a finished (or stopped) recipe longer: the rounds it ran are kept, its
final probes become the next round's, and it ends as a recipe of N rounds run from the start would.

Exit status as ``mus train``'s: 2 refused (one line), 1 a training diverged, 130 interrupted (``--resume``
continues from the step that was running).
"""

from __future__ import annotations

import sys

from experiments.commands.options import ArgumentParser, boolean, int_in
from experiments.commands.train import fail
from experiments.population import recipe
from experiments.population.recipe_report import kept_text
from experiments.population.recipe_run import run_recipe
from experiments.train.session import TrainingDiverged
from mus_env.interrupts import terminate_as_ctrl_c

__all__ = ["parser", "main"]


def parser() -> ArgumentParser:
    """The ``mus league`` parser."""
    p = ArgumentParser(prog="mus league", description=recipe.__doc__.splitlines()[0])
    p.add_argument("--preset", choices=sorted(recipe.PRESETS), default="ship",
                   help="ship: the shipped agent's recipe from the equity clone (about 3 hours on 2 cores); refine: "
                        "its rounds from the shipped agent's weights (about 2 hours); refine-long: two of them with "
                        "a 40M-decision probe in each (about 71 minutes); tiny: seconds (a smoke run)")
    p.add_argument("--out", default="runs/league", help="the recipe's folder")
    p.add_argument("--rounds", type=int_in(0, 100), default=None,
                   help="rounds after the first stage (preset's); with --resume, more rounds than the recipe in "
                   "--out had continue it: its final probes become the next round's")
    p.add_argument("--seed", type=int_in(0, 2**31 - 1), default=None, help="seed of every step (preset's: 0)")
    p.add_argument("--workers", type=int_in(1, 256), default=2,
                   help="best responses trained at once, as processes on this machine")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="train the best responses as Ray tasks on the cluster at ADDRESS (HOST:PORT or auto)")
    p.add_argument("--torch-threads", type=int_in(1, 64), default=None,
                   help="torch threads of each probe (preset's: 1, as several share the cores)")
    p.add_argument("--train-threads", type=int_in(0, 64), default=None,
                   help="torch threads of the trainings and the distillation, which run alone (preset's: 0, all "
                        "cores up to 4; the same weights as with 1, faster)")
    p.add_argument("--rivals", default=None, metavar="LIST",
                   help="comma-separated agents that join every round's population and report, or none "
                        "(preset's: ship ppo,ordago)")
    p.add_argument("--rival-cap", type=float, default=None, metavar="SHARE",
                   help="the most the rivals together take of a round's Nash mixture, in [0, 1]; the rest follows "
                        "the Nash mixture of the population without them (preset's: 1, no cap)")
    p.add_argument("--baseline-floor", type=float, default=None, metavar="SHARE",
                   help="the least share of rule and of equity in each round's league, in [0, 1) (preset's: 0.1)")
    p.add_argument("--long-probe", type=int_in(0), default=None, metavar="DECISIONS",
                   help="each round's probes add one best response of this budget (0: none; preset's: 0), counted "
                        "in the keep rule and joining the population like the others; 80000000 is the measuring "
                        "probes' budget")
    p.add_argument("--long-probe-start", choices=["equity", "agent", "none"], default=None,
                   help="the long probe's start (preset's: equity, the equity clone)")
    p.add_argument("--probe-learning-rate", type=float, default=None, metavar="LR",
                   help="the learning rate of the recipe's probes, quick and long (preset's: 3e-4, the measuring "
                        "probes')")
    p.add_argument("--distill-rounds", type=int_in(0, 101), default=None, metavar="N",
                   help="after the rounds, fit one network to the equal mixture of the last N rounds' policies "
                        "(mus distill), probe it as the rounds are, and keep it if it is the least exploitable "
                        "(preset's: 0, none)")
    p.add_argument("--distill-replicas", type=int_in(1, 101), default=None, metavar="K",
                   help="with --distill-rounds N: the mixture also takes the last N policies of K-1 more runs of the "
                        "rounds (seeds --seed+1 ...; each in OUT/replica<k>, run before the distillation) (preset's: "
                        "1, this run only)")
    p.add_argument("--refine-distilled", type=int_in(0, 10**12), default=None, metavar="DECISIONS",
                   help="with --distill-rounds N: train the distilled network DECISIONS more against its own probes "
                        "(its league: REFINE_SHARES), probe it, and keep it if it is the least exploitable "
                        "(preset's: 0, no such stage)")
    p.add_argument("--plan", action="store_true",
                   help="print the recipe's steps, their decisions and about how many minutes each takes on this "
                        "kind of machine (--rates), and exit: nothing is trained or written")
    p.add_argument("--rates", default=None, metavar="TRAIN,PROBE",
                   help="with --plan: decisions/s of a training alone and of each probe side by side on your machine "
                        "(default: 45000,40000, measured on 2 AVX2 cores)")
    p.add_argument("--refine-lance", default=None, metavar="LANCE",
                   help="with --refine-distilled: first train a best response that decides only LANCE's betting "
                        "(pares; mus exploit --lance) against the distilled network, and put it in the refined "
                        "stage's league (a quarter of it); several lances, comma-separated (pares,juego), "
                        "one best response each; ordago: one that decides only the órdagos (mus exploit --only "
                        "ordago) (preset's: none)")
    p.add_argument("--refine-hidden", type=int_in(1, 16_384), nargs="+", default=None, metavar="WIDTH",
                   help="with --refine-distilled: the refined network's layer widths, wider than the distilled "
                        "network's and as many (e.g. 256 256): it is widened without changing its play, then "
                        "trained (preset's: the distilled network's)")
    p.add_argument("--refine-lance-decisions", type=int_in(1, 10**12), default=None, metavar="DECISIONS",
                   help="with --refine-lance: its budget (preset's: 40000000)")
    p.add_argument("--refine-lance-learning-rate", type=float, default=None, metavar="LR",
                   help="with --refine-lance: its learning rate (preset's: 3e-3)")
    p.add_argument("--stage-probes", type=int_in(0, 10**12), default=None, metavar="DECISIONS",
                   help="with --distill-rounds N: probe the distilled (and refined) network as the docs measure an "
                        "agent, every start with --stage-probe-seeds seeds of DECISIONS each (80000000: the "
                        "protocol), instead of by a round's probes; the refined stage trains against them "
                        "(preset's: 0, a round's probes)")
    p.add_argument("--stage-probe-seeds", type=int_in(1, 100), default=None, metavar="N",
                   help="with --stage-probes: training seeds per start (preset's: 2)")
    p.add_argument("--stage-probe-learning-rate", type=float, default=None, metavar="LR",
                   help="with --stage-probes: their learning rate (preset's: 3e-4, the measuring probes')")
    p.add_argument("--stage-probe-starts", default=None, metavar="LIST",
                   help="with --stage-probes: the stage probes' starts, comma-separated, in the order they run "
                        "(preset's: those of the rounds' probes, equity,agent)")
    p.add_argument("--progress", type=boolean, default=True, metavar="BOOL", help="show a progress bar")
    p.add_argument("--resume", action="store_true", help="continue the recipe in --out from the step that ran")
    return p


def plan_text(settings: recipe.Recipe, workers: int, rates: str | None) -> str:
    """``mus league --plan``: the steps' table and what the estimate assumes.

    Raises:
        ValueError: ``rates`` is not two positive numbers.
    """
    from experiments.population.recipe_plan import Rates, plan_table
    measured = Rates()
    if rates is not None:
        try:
            train, probe = (float(x) for x in rates.split(","))
        except ValueError:
            raise ValueError(f"--rates: two numbers, TRAIN,PROBE decisions/s (e.g. 45000,40000), got {rates!r}") \
                from None
        if not (train > 0 and probe > 0):
            raise ValueError(f"--rates: decisions/s must be above 0, got {rates!r}")
        measured = Rates(train_rate=train, probe_rate=probe)
    return (plan_table(settings, workers, measured) + f"\n\nestimated at {measured.train_rate:,.0f} decisions/s "
            f"for a training alone and {measured.probe_rate:,.0f} for each of {workers} probe(s) at once, with "
            "rough minutes for the evaluations (experiments.population.recipe_plan); nothing was run")


def main(argv: list[str] | None = None) -> None:
    """``mus league [options]``: run or resume the recipe, print where its files are."""
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser()
    a = p.parse_args(argv)
    given = (("rounds", a.rounds), ("seed", a.seed), ("torch_threads", a.torch_threads),
             ("train_threads", a.train_threads), ("rival_cap", a.rival_cap),
             ("baseline_floor", a.baseline_floor), ("long_probe_decisions", a.long_probe),
             ("long_probe_start", a.long_probe_start), ("probe_learning_rate", a.probe_learning_rate),
             ("distill_rounds", a.distill_rounds), ("distill_replicas", a.distill_replicas),
             ("refine_decisions", a.refine_distilled), ("stage_probe_decisions", a.stage_probes),
             ("stage_probe_seeds", a.stage_probe_seeds), ("stage_probe_learning_rate", a.stage_probe_learning_rate),
             ("refine_lance", a.refine_lance), ("refine_lance_decisions", a.refine_lance_decisions),
             ("refine_lance_learning_rate", a.refine_lance_learning_rate),
             ("refine_hidden", None if a.refine_hidden is None else tuple(a.refine_hidden)))
    changes = {k: v for k, v in given if v is not None}
    if a.stage_probe_starts is not None:
        changes["stage_probe_starts"] = tuple(x.strip() for x in a.stage_probe_starts.split(",") if x.strip())
    if a.rivals is not None:
        changes["rivals"] = () if a.rivals.strip() == "none" else tuple(x.strip() for x in a.rivals.split(","))
    if a.rates is not None and not a.plan:
        p.error("argument --rates: only with --plan")
    try:
        settings = recipe.make_recipe(a.preset, **changes)
        if a.plan:
            print(plan_text(settings, a.workers, a.rates))
            return
        with terminate_as_ctrl_c():
            data = run_recipe(settings, a.out, resume=a.resume, workers=a.workers, ray_address=a.ray,
                              progress=a.progress, command="mus league " + " ".join(argv))
    except (ValueError, ImportError, TrainingDiverged, KeyboardInterrupt) as e:
        fail("mus league", e, argv)
    keep = data["steps"]["keep"]
    print(f"kept {kept_text(keep)}: {a.out}/policy.pt; the rounds in {a.out}/recipe.md, the card in "
          f"{a.out}/card.md")


if __name__ == "__main__":
    main()
