"""What a recipe will run, and about how long, before running it: ``mus league --plan``.

A recipe's steps differ by orders of magnitude (an 8M-decision first stage, four 80M-decision probes). This module
lists the steps of a :class:`~experiments.population.recipe.Recipe` in the order
:func:`~experiments.population.recipe_run.run_recipe` runs them, each training's and probe's budget in decisions
(rounded down to whole updates, as the trainer runs them), and estimates each step's minutes from throughputs
measured on the machine that runs it:

* a training (or the distillation's data) runs alone at ``train_rate`` decisions/s (``--train-threads``: all
  cores);
* a step's probes run ``workers`` at once, each at ``probe_rate`` decisions/s (one torch thread each), longest
  first; each probe then spends ``probe_eval_minutes`` on its held-out measurement (sampled and greedy); a one-lance
  (or órdago) probe, whose learner trains only that lance's decisions, runs at ``lance_probe_rate``;
* every training is followed by its report (``report_minutes``), and every round's probes by the meta-game's round
  robin (``meta_minutes``); the card at the end takes ``card_minutes``.

The default rates are those of a 2-core AMD EPYC (AVX2) machine (a round's kind of ``mus train`` at about 45,000
decisions/s with two threads; two full probes side by side at about 40,000 each); give yours (``mus league --plan
--rates TRAIN,PROBE``) for another machine. An estimate, not a promise: the evaluations' minutes are rough, and a
loaded machine runs slower.
"""

from __future__ import annotations

import dataclasses
import heapq

from experiments.population.recipe import Recipe, probe_plan, refine_lances
from experiments.train import ppo

__all__ = ["PlannedStep", "Rates", "planned_steps", "step_minutes", "plan_table"]


@dataclasses.dataclass(frozen=True)
class PlannedStep:
    """One step of a recipe as it will run."""

    name: str
    """its folder and name in ``recipe.json`` (``round1/probes``; a replica's whole run is one step)"""
    kind: str
    """``train``, ``distill``, ``probes``, ``lance`` (one-lance probes) or ``replica`` (another run of the rounds:
    its trainings and probes)"""
    decisions: tuple[int, ...]
    """a training's budget, or one per probe (a replica: its trainings' then its probes' budgets)"""
    probes: int = 0
    """of ``decisions``, how many (the last ones) are probes; a training or distillation: 0"""


@dataclasses.dataclass(frozen=True)
class Rates:
    """Throughputs and evaluation times of the machine that runs the recipe (defaults: a 2-core AMD EPYC, AVX2)."""

    train_rate: float = 45_000.0
    """decisions/s of a training alone on all cores"""
    probe_rate: float = 40_000.0
    """decisions/s of each probe while ``workers`` run side by side, one torch thread each"""
    lance_probe_rate: float = 85_000.0
    """decisions/s of a one-lance probe (its learner decides a few percent of the decisions)"""
    probe_eval_minutes: float = 1.5
    """each probe's held-out measurement (20,000 hands and 2,000 games, sampled and greedy)"""
    report_minutes: float = 1.5
    """a training's report (its margins over the baselines, the rivals and the previous policy)"""
    meta_minutes: float = 2.0
    """a round's meta-game (the population's duplicate round robin)"""
    card_minutes: float = 4.0
    """the kept policy's report card"""


def _whole_updates(trainer_preset: str, fields: dict, decisions: int | None = None) -> int:
    """A training's budget as the trainer runs it: whole updates of ``num_tables x rollout_steps`` decisions."""
    args = ppo.make_args(trainer_preset, **{**fields, **({} if decisions is None else
                                                           {"total_decisions": decisions})})
    batch = args.num_tables * args.rollout_steps
    return max(args.total_decisions // batch, 1) * batch


def _rounds(recipe: Recipe, prefix: str = "") -> list[PlannedStep]:
    first = _whole_updates(recipe.trainer_preset, recipe.first)
    each = _whole_updates(recipe.trainer_preset, recipe.round_train)
    probes = tuple(_whole_updates(recipe.probe_preset, {}, d) for *_, d in probe_plan(recipe))
    steps = [PlannedStep(f"{prefix}round0/train", "train", (first,))]
    for r in range(1, recipe.rounds + 1):
        steps += [PlannedStep(f"{prefix}round{r}/probes", "probes", probes, len(probes)),
                  PlannedStep(f"{prefix}round{r}/train", "train", (each,))]
    return [*steps, PlannedStep(f"{prefix}final/probes", "probes", probes, len(probes))]


def planned_steps(recipe: Recipe) -> list[PlannedStep]:
    """The trainings and probes of ``recipe`` in the order :func:`~experiments.population.recipe_run.run_recipe` runs
    them (reports, meta-games and the card are counted by :func:`step_minutes`, not listed)."""
    steps = _rounds(recipe)
    if not recipe.distill_rounds:
        return steps
    for k in range(1, recipe.distill_replicas):
        run = _rounds(recipe)
        trainings = tuple(d for s in run if s.kind == "train" for d in s.decisions)
        probes = tuple(d for s in run if s.kind == "probes" for d in s.decisions)
        steps.append(PlannedStep(f"replica{k}", "replica", trainings + probes, len(probes)))
    stage = tuple(_whole_updates(recipe.probe_preset, {}, d) for *_, d in probe_plan(recipe, stage=True))
    steps += [PlannedStep("distilled/train", "distill", (recipe.distill_decisions,)),
              PlannedStep("distilled/probes", "probes", stage, len(stage))]
    if recipe.refine_decisions:
        lances = refine_lances(recipe)
        if lances:
            lance = _whole_updates(recipe.probe_preset, {}, recipe.refine_lance_decisions)
            steps.append(PlannedStep("refined/lance/probes", "lance", (lance,) * len(lances), len(lances)))
        refine = _whole_updates(recipe.trainer_preset, recipe.round_train, recipe.refine_decisions)
        steps += [PlannedStep("refined/train", "train", (refine,)),
                  PlannedStep("refined/probes", "probes", stage, len(stage))]
    return steps


def _probe_minutes(decisions: tuple[int, ...], workers: int, rates: Rates, rate: float) -> float:
    """Probes ``workers`` at once at ``rate`` decisions/s, the longest first, each measured when it ends: the last
    one's end."""
    slots = [0.0] * max(min(workers, len(decisions)), 1)
    for d in sorted(decisions, reverse=True):
        heapq.heappush(slots, heapq.heappop(slots) + d / rate / 60 + rates.probe_eval_minutes)
    return max(slots)


def step_minutes(step: PlannedStep, workers: int, rates: Rates = Rates()) -> float:
    """The estimated wall minutes of ``step``, its evaluations included (a training's report; a round's probes'
    meta-game; a replica's reports and meta-games)."""
    trainings, probes = step.decisions[:len(step.decisions) - step.probes], step.decisions[len(step.decisions)
                                                                                          - step.probes:]
    minutes = sum(d / rates.train_rate / 60 + rates.report_minutes for d in trainings)
    if step.kind == "replica":                     # its rounds: each round's probes (and the final ones) in turn
        rounds = len(trainings)                    # round 0's training and one per round: as many probe steps
        per = len(probes) // rounds
        return minutes + sum(_probe_minutes(probes[i * per:(i + 1) * per], workers, rates, rates.probe_rate)
                             + rates.meta_minutes for i in range(rounds))
    if probes:
        minutes += _probe_minutes(probes, workers, rates,
                                  rates.lance_probe_rate if step.kind == "lance" else rates.probe_rate)
        minutes += rates.meta_minutes if step.name.startswith(("round", "final")) else 0.0
    return minutes


def plan_table(recipe: Recipe, workers: int = 2, rates: Rates = Rates()) -> str:
    """A markdown table of :func:`planned_steps` with each step's decisions and estimated minutes, and the total
    (the card included)."""
    lines = ["| step | what | decisions | about minutes |", "|---|---|---:|---:|"]
    total_minutes = total_decisions = 0.0
    for step in planned_steps(recipe):
        minutes = step_minutes(step, workers, rates)
        probes = f"probe{'s' * (step.probes != 1)}, {min(workers, step.probes)} at once"
        what = {"train": "training", "distill": "distillation", "probes": f"{step.probes} {probes}",
                "lance": f"{step.probes} one-lance {probes}",
                "replica": f"another run of the rounds ({step.probes} probes)"}[step.kind]
        lines.append(f"| {step.name} | {what} | {sum(step.decisions):,} | {minutes:.0f} |")
        total_minutes += minutes
        total_decisions += sum(step.decisions)
    total_minutes += rates.card_minutes
    lines.append(f"| **all**, the card included | | **{int(total_decisions):,}** | **{total_minutes:.0f}** |")
    return "\n".join(lines)
