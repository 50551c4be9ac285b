"""Run a recipe (:class:`~experiments.population.recipe.Recipe`): its rounds, stages, keep and card, step by step.

:func:`run_recipe` runs the steps the module :mod:`experiments.population.recipe` describes, each in a folder of its
own under ``OUT`` and recorded in ``OUT/recipe.json`` when it ends
(:class:`~experiments.population.recipe_state.RecipeSteps`), so that ``resume`` continues a stopped recipe to the
results of one never stopped. One progress bar counts the whole recipe's decisions.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from agents import make_agent
from experiments.evaluate.deals import make_deals
from experiments.evaluate.ratings import nash_mixture
from experiments.evaluate.report_card import card_markdown, duplicate_row, report_card
from experiments.evaluate.tournament import agent_labels, round_robin
from experiments.population.distill import distill
from experiments.population.exploit import probe
from experiments.population.exploit_seeds import aggregate_probes, probe_folder, run_probe_jobs
from experiments.population.recipe import (
    POPULATION_BASELINES,
    Recipe,
    cap_rivals,
    keep_round,
    league_from_nash,
    probe_plan,
    refine_lances,
    refine_league,
)
from experiments.population.recipe_report import kept_text, write_report
from experiments.population.recipe_state import STATE_NAME, RecipeSteps, policy_digest, replica_folder, rival_digests
from experiments.train import ppo
from experiments.train.report import progress_bar
from experiments.train.session import TrainingInterrupted
from experiments.train.settings import torch_thread_count
from mus_env import MusConfig

__all__ = ["run_recipe"]


def run_recipe(recipe: Recipe, out: str | Path, resume: bool = False, workers: int = 1, ray_address: str | None = None,
               log: Callable[[str], object] = print, progress: bool = True, command: str = "mus league",
               probe_fn: Callable[..., dict[str, Any]] = probe) -> dict[str, Any]:
    """Run (or with ``resume`` continue) ``recipe`` in the folder ``out`` (see the module docstring).

    Args:
        recipe: the settings (:func:`make_recipe`).
        out: the recipe's folder.
        resume: continue the recipe in ``out`` (the same settings): finished steps are read, a stopped training or
            probe resumes from its checkpoint.
        workers: the probes of a round run at once as processes on this machine (:func:`run_probe_jobs`).
        ray_address: or each as a Ray task on this cluster.
        log: where the recipe's lines go (every run inside it is quiet).
        progress: one progress bar over the whole recipe's decisions.
        command: the command line, recorded.
        probe_fn: the probe of a run in this process (tests give a stub).

    Returns:
        ``OUT/recipe.json``'s content: every step's result, ``keep`` (the round kept, its policy and gains).

    Raises:
        ValueError: ``out`` holds a recipe (without ``resume``) or one of other settings; a step's own refusals.
        experiments.train.session.TrainingInterrupted: Ctrl-C (``resume`` continues from where it stopped): in a
            training, the message names its checkpoint; elsewhere (parallel probes, between steps) ``checkpoint``
            is ``OUT/recipe.json``, the finished steps.
    """
    out = Path(out)
    steps = RecipeSteps(out, recipe, resume, command, rival_digests(recipe))
    plan, stage_plan = probe_plan(recipe), probe_plan(recipe, stage=True)
    probe_budget = sum(decisions for *_, decisions in plan)
    stage_budget = sum(decisions for *_, decisions in stage_plan)
    first_args = ppo.make_args(recipe.trainer_preset, **recipe.first)
    round_args = ppo.make_args(recipe.trainer_preset, **recipe.round_train)
    rounds_budget = (first_args.total_decisions + recipe.rounds * round_args.total_decisions
                     + (recipe.rounds + 1) * probe_budget)
    total = (rounds_budget * (1 + (recipe.distill_replicas - 1) * bool(recipe.distill_rounds))
             + (recipe.distill_decisions + stage_budget) * bool(recipe.distill_rounds)
             + (recipe.refine_decisions + stage_budget) * bool(recipe.refine_decisions)
             + recipe.refine_lance_decisions * len(refine_lances(recipe)))
    bar = progress_bar(total, "recipe", progress)
    # the recipe's seconds: those recorded, the stopped step's that the clock carried, and this process's
    t_start, seconds_before = time.perf_counter(), steps.data.get("seconds", 0.0) + steps.clock.carried
    steps.clock.start()
    say = log if not progress or log is not print else tqdm.write     # lines above the bar, not through it

    def tick(name: str, decisions: int) -> None:
        bar.update(decisions)
        bar.set_postfix_str(name)
        steps.data["seconds"] = seconds_before + time.perf_counter() - t_start
        steps.write()

    def train_step(name: str, overrides: dict[str, Any]) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            tick(name, done["budget"])
            return done
        folder = out / name
        args = ppo.make_args(recipe.trainer_preset, **{"seed": recipe.seed, **overrides, "out": str(folder),
                                                       "progress": False, "torch_threads": recipe.train_threads})
        say(f"{name}: mus train, {args.total_decisions:,} decisions, warm start {args.warm_start}, league "
            f"{args.league_mix}, magnet {args.magnet_coef} (every {args.magnet_every or 'never'})")
        t = ppo.train(args, resume=(folder / "checkpoint.pt").is_file(), log=lambda *a: None,
                      run_info={"command": f"{command} (step {name})", "preset": recipe.trainer_preset})
        ev = t.evals[-1] if t.evals else {}
        result = {"policy": str(folder / "policy.pt"), "digest": policy_digest(folder / "policy.pt"),
                  "decisions": t.decisions, "budget": t.num_updates * t.batch, "minutes": t.elapsed / 60,
                  "league_mix": args.league_mix, "last_eval": ev}
        tick(name, result["budget"])
        return steps.finish(name, result)

    def probe_job(name: str, target: str, folder: Path, start: str, seed: int, decisions: int, lr: float,
                  **more: Any) -> dict[str, Any]:
        """One best response's arguments (:func:`run_probe_jobs`), resumed if its folder holds a checkpoint."""
        return {"spec": target, "out": folder, "minutes": 0, "decisions": decisions, "warm_start": start,
                "seed": seed, "eval_hands": recipe.probe_eval_hands, "eval_games": recipe.probe_eval_games,
                "preset": recipe.probe_preset, "resume": (folder / "checkpoint.pt").is_file(), "progress": False,
                "torch_threads": recipe.torch_threads, "learning_rate": lr, "command": f"{command} (step {name})",
                **more}

    def probe_step(name: str, target: str, stage: bool = False) -> dict[str, Any]:
        step_plan, budget = (stage_plan, stage_budget) if stage else (plan, probe_budget)
        lr = recipe.stage_probe_learning_rate if stage and recipe.stage_probe_decisions else recipe.probe_learning_rate
        if (done := steps.done(name)) is not None:
            tick(name, budget)
            return done
        jobs, keys, found = [], [], {}
        # the longest first: the others run beside it when there are fewer workers than probes
        for label, start, seed, decisions in sorted(step_plan, key=lambda p: -p[3]):
            folder = probe_folder(out / name, label, seed)
            if (folder / "exploit.json").is_file():
                found[label, seed] = json.loads((folder / "exploit.json").read_text(encoding="utf-8"))
                continue
            jobs.append(probe_job(name, target, folder, start, seed, decisions, lr))
            keys.append((label, seed))
        say(f"{name}: {len(jobs)} best response(s) against {target} ({workers} at once"
            + (f", Ray at {ray_address}" if ray_address else "") + ")")
        ran = run_probe_jobs(jobs, workers, ray_address, lambda *a: None, probe_fn)
        found.update(zip(keys, ran, strict=True))
        report = aggregate_probes([found[label, seed] for label, _, seed, _ in step_plan])
        report.pop("results")
        report["policies"] = [str(probe_folder(out / name, label, seed) / "policy.pt")
                              for label, _, seed, _ in step_plan]
        report["labels"] = [label for label, *_ in step_plan]
        say(f"{name}: largest gain {report['max']['stones']:+.3f} stones/hand ({report['max']['start']} start, "
            f"{report['max']['decisions']:,} decisions), game win rate up to {report['max_win']['win']:.3f}")
        tick(name, budget)
        return steps.finish(name, report)

    def lance_step(name: str, target: str) -> list[Path]:
        """A best response that decides only one lance's betting against ``target``, from its weights, for each of
        ``refine_lance`` (side by side, ``workers`` at once): their folders, for the refined stage's league."""
        lances = refine_lances(recipe)
        folders = [out / name / f"{lance}-seed{recipe.seed}" for lance in lances]
        if steps.done(name) is None:
            say(f"{name}: a best response deciding only the {' and one only the '.join(lances)} betting against "
                f"{target}")
            found = {lance: json.loads((f / "exploit.json").read_text(encoding="utf-8"))
                     for lance, f in zip(lances, folders, strict=True) if (f / "exploit.json").is_file()}
            todo = [(lance, f) for lance, f in zip(lances, folders, strict=True) if lance not in found]
            jobs = [probe_job(name, target, f, "agent", recipe.seed, recipe.refine_lance_decisions,
                              recipe.refine_lance_learning_rate, learner_decides=lance) for lance, f in todo]
            ran = run_probe_jobs(jobs, workers, ray_address, lambda *a: None, probe_fn)
            found.update(zip([lance for lance, _ in todo], ran, strict=True))
            report = _lance_report([found[lance] for lance in lances])
            report["policies"], report["labels"] = [str(f / "policy.pt") for f in folders], lances
            say(f"{name}: gain " + ", ".join(f"{row['stones']:+.3f} stones/hand deciding only the {lance} betting"
                                             for row, lance in zip(report["probes"], lances, strict=True)))
            steps.finish(name, report)
        tick(name, recipe.refine_lance_decisions * len(lances))
        return folders

    def meta_step(name: str, specs: list[str]) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            return done
        deals = make_deals(recipe.meta_hands, recipe.seed + 7_000 + len(specs), MusConfig().target)
        pairs = round_robin(specs, deals, mode="hands", config=MusConfig(), seed=recipe.seed, progress=False)
        labels = agent_labels(specs)
        index = {label: i for i, label in enumerate(labels)}
        payoff = np.zeros((len(specs), len(specs)))
        for pr in pairs:
            m = pr.mean_diff()[0]
            payoff[index[pr.a], index[pr.b]], payoff[index[pr.b], index[pr.a]] = m, -m
        mixture, gap = nash_mixture(payoff)
        shares = cap_rivals(specs, payoff, mixture, recipe)
        league = league_from_nash(specs, shares, recipe)

        def listed(p: npt.NDArray[np.float64]) -> str:
            return ", ".join(f"{Path(s).parent.name if s.endswith('.pt') else s} {w:.2f}"
                             for s, w in zip(specs, p, strict=True) if w >= 0.01)
        say(f"{name}: Nash mixture of {len(specs)} agents (gap {gap:.3f}): {listed(mixture)}"
            + ("" if np.array_equal(shares, mixture) else f"; rivals capped at {recipe.rival_cap:g}: {listed(shares)}"))
        return steps.finish(name, {"specs": specs, "payoff": payoff.round(4).tolist(), "mixture": mixture.tolist(),
                                   "shares": shares.tolist(), "gap": gap, "league_mix": league})

    def distill_step(name: str, members: list[str], start: str) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            tick(name, done["budget"])
            return done
        folder = out / name
        say(f"{name}: one network fitted to the equal mixture of {len(members)} policies, "
            f"{recipe.distill_decisions:,} decisions, from {start}")
        t0 = time.perf_counter()
        record = distill(",".join(members), folder, decisions=recipe.distill_decisions, epochs=recipe.distill_epochs,
                         start=start, seed=recipe.seed, torch_threads=torch_thread_count(recipe.train_threads),
                         progress=False,
                         resume=(folder / "checkpoint.pt").is_file(), log=lambda *a: None,
                         command=f"{command} (step {name})")
        result = {"policy": str(folder / "policy.pt"), "digest": policy_digest(folder / "policy.pt"),
                  "members": members, "start": start, "kl": record["kl"], "decisions": recipe.distill_decisions,
                  "budget": recipe.distill_decisions, "minutes": (time.perf_counter() - t0) / 60}
        tick(name, result["budget"])
        return steps.finish(name, result)

    def replica_step(k: int) -> dict[str, Any]:
        folder = replica_folder(out, k)
        name = folder.name
        if (done := steps.done(name)) is not None:
            tick(name, rounds_budget)
            return done
        sub = dataclasses.replace(recipe, distill_rounds=0, distill_replicas=1, seed=recipe.seed + k)
        say(f"{name}: the rounds again with seed {sub.seed}, a recipe of its own in {folder}")
        t_here = time.perf_counter()
        data = run_recipe(sub, folder, resume=(folder / STATE_NAME).is_file(), workers=workers,
                          ray_address=ray_address, log=lambda *a: None, progress=False,
                          command=f"{command} (step {name})", probe_fn=probe_fn)
        s = data["steps"]
        result = {"recipe": str(folder / STATE_NAME), "seed": sub.seed,
                  "policies": [s[f"round{r}/train"]["policy"] for r in range(sub.rounds + 1)],
                  "gains": s["keep"]["gains"], "minutes": float(data.get("seconds", 0.0)) / 60,
                  "minutes_here": (time.perf_counter() - t_here) / 60}     # the rest ran by a command of its own
        tick(name, rounds_budget)
        return steps.finish(name, result)

    def report_step(name: str, policy: str, previous: str | None) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            return done
        cfg = MusConfig()
        hands, games = make_deals(recipe.eval_hands, 7, cfg.target), make_deals(recipe.eval_games, 8, cfg.target)
        me = make_agent(policy)
        rows = [duplicate_row(me, make_agent(o), ("policy", o), hands, games, cfg, 7)
                for o in (*POPULATION_BASELINES, *recipe.rivals)]
        if previous is not None:
            rows.append(duplicate_row(me, make_agent(previous), ("policy", "previous"), hands, games, cfg, 7))
        say(f"{name}: " + ", ".join(f"vs {r['opponent']} {r['stones']:+.3f} [{r['stones_lo']:+.3f}, "
                                    f"{r['stones_hi']:+.3f}]" for r in rows))
        return steps.finish(name, {"policy": policy, "rows": rows})

    try:
        # round 0
        policies = [train_step("round0/train", dict(recipe.first))["policy"]]
        report_step("round0/report", policies[0], None)
        responses: list[str] = []
        probes: list[dict[str, Any]] = []
        for r in range(1, recipe.rounds + 1):
            previous = policies[-1]
            probes.append(probe_step(f"round{r}/probes", previous))
            responses += probes[-1]["policies"]
            meta = meta_step(f"round{r}/meta", [*POPULATION_BASELINES, *recipe.rivals, *policies, *responses])
            overrides = {**recipe.round_train, "warm_start": previous, "magnet_every": 0,
                         "league_mix": meta["league_mix"], "seed": recipe.seed + r}
            policies.append(train_step(f"round{r}/train", overrides)["policy"])
            report_step(f"round{r}/report", policies[-1], previous)
        probes.append(probe_step("final/probes", policies[-1]))
        candidates = list(policies)
        if recipe.distill_rounds:
            members = policies[-recipe.distill_rounds:]
            member_gains = [p["max"]["stones"] for p in probes[-len(members):]]
            for k in range(1, recipe.distill_replicas):       # the same rounds with other seeds
                replica = replica_step(k)
                members += replica["policies"][-recipe.distill_rounds:]
                member_gains += replica["gains"][-recipe.distill_rounds:]
            start = members[keep_round(member_gains)]
            student = distill_step("distilled/train", members, start)["policy"]
            report_step("distilled/report", student, policies[-1])
            probes.append(probe_step("distilled/probes", student, stage=True))
            candidates.append(student)
            if recipe.refine_decisions:                        # the distilled network against its own probes
                lance_probes = lance_step("refined/lance/probes", student) if recipe.refine_lance else []
                overrides = {**recipe.round_train, "warm_start": student, "magnet_every": 0,
                             "league_mix": refine_league(out / "distilled" / "probes", recipe, lance_probes),
                             "total_decisions": recipe.refine_decisions, "seed": recipe.seed + recipe.rounds + 1}
                if recipe.refine_hidden:                       # widened from the distilled network (same play)
                    overrides["hidden"] = tuple(recipe.refine_hidden)
                refined = train_step("refined/train", overrides)["policy"]
                report_step("refined/report", refined, student)
                probes.append(probe_step("refined/probes", refined, stage=True))
                candidates.append(refined)
        gains = [p["max"]["stones"] for p in probes]
        kept = keep_round(gains)
        shutil.copyfile(candidates[kept], out / "policy.pt")
        long_gains = [next((row["stones"] for row, label in zip(p["probes"], _labels(p, plan), strict=True)
                            if label.startswith("long-")), None) for p in probes]
        keep = steps.finish("keep", {"round": kept, "policy": candidates[kept], "gains": gains,
                                     "distilled": kept == len(policies), "refined": kept == len(policies) + 1,
                                     "wins": [p["max_win"]["win"] for p in probes], "long_gains": long_gains,
                                     "digest": policy_digest(out / "policy.pt")})
        say(f"kept {kept_text(keep)} (largest probe gains by round"
            + (", then the distilled policy" if recipe.distill_rounds else "")
            + (" and the refined one" if recipe.refine_decisions else "") + ": "
            + ", ".join(f"{g:+.3f}" for g in gains)
            + f"): {out / 'policy.pt'}")
        if steps.done("card") is None:
            card = report_card(str(out / "policy.pt"), hands=recipe.card_hands, games=recipe.card_games,
                               name="recipe", command=f"mus evaluate {out / 'policy.pt'}", log=lambda *a: None)
            (out / "card.json").write_text(json.dumps(card, indent=2), encoding="utf-8")
            (out / "card.md").write_text(card_markdown(card), encoding="utf-8")
            steps.finish("card", {"card": str(out / "card.md")})
        write_report(out, steps.data, keep)
    except KeyboardInterrupt as e:
        if isinstance(e, TrainingInterrupted) and e.checkpoint is not None:
            raise
        # between steps, in parallel probes, or before a step's first checkpoint: the finished steps are kept
        finished = len(steps.data["steps"])
        raise TrainingInterrupted(f"interrupted after {finished} finished step(s), kept in {steps.path} (a stopped "
                                  "training or probe resumes from its last checkpoint)", steps.path, finished) from None
    finally:
        steps.clock.stop()
        bar.close()
    return steps.data


def _lance_report(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report of one-lance probes of one agent, each of its own lance: :func:`aggregate_probes`' keys without
    ``results``, ``learner_decides`` the lances comma-separated (for one lance, that function's report)."""
    rows = [aggregate_probes([r]) for r in results]
    gains = [r["max"]["stones"] for r in rows]
    report = {**rows[0], "learner_decides": ",".join(r["learner_decides"] for r in rows), "n": len(rows),
              "max": max((r["max"] for r in rows), key=lambda x: x["stones"]),
              "max_win": max((r["max_win"] for r in rows), key=lambda x: x["win"]),
              "spread": max(gains) - min(gains), "mean": sum(gains) / len(gains),
              "probes": [r["probes"][0] for r in rows]}
    report.pop("results")
    return report


def _labels(report: dict[str, Any], plan: list[tuple[str, str, int, int]]) -> list[str]:
    """The labels of a probe step's probes, in order: those the step recorded, or (a step that recorded none) the
    round plan's."""
    return report.get("labels") or [label for label, *_ in plan]
