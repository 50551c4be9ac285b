"""A recipe's state on disk: ``OUT/recipe.json`` (its settings and every finished step) and the folders beside it.

Every step of :func:`~experiments.population.recipe_run.run_recipe` is a run of its own folder under ``OUT``
(``round0/train``, ``round1/probes/equity-seed0``, ``round1/meta.json``, ...) and is marked done in ``recipe.json``
when it ends (:class:`RecipeSteps`). A resume with more ``rounds`` makes a recipe longer (:func:`extend_rounds`); one
with other stage settings sets the old stage's folder aside (:func:`set_stage_aside`), never deletes it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from agents import make_agent
from agents.policy import build_net, load_policy_file, parameters_digest
from experiments.population.exploit import policy_file_of
from experiments.population.recipe import Recipe
from experiments.population.recipe_clock import StepClock
from experiments.train import ppo
from experiments.train.report import machine_text

__all__ = ["STATE_NAME", "RecipeSteps", "trained_rounds", "replica_folder", "extend_rounds", "set_stage_aside",
           "rival_digests", "policy_digest"]

#: The recipe's record of its settings and finished steps (in ``OUT``).
STATE_NAME = "recipe.json"


def trained_rounds(steps: dict[str, Any]) -> list[int]:
    """The rounds whose training is done in a recipe's ``steps`` (``recipe.json``), in order."""
    return sorted(int(k.split("/")[0][5:]) for k in steps if k.startswith("round") and k.endswith("/train"))


def replica_folder(out: Path, k: int) -> Path:
    """Where the ``k``-th more run of a recipe's rounds (``distill_replicas``) is: a recipe of its own."""
    return out / f"replica{k}"


#: The fields with a default, as JSON values: what a recipe.json written before a field existed ran with.
_DEFAULTS: dict[str, Any] = json.loads(json.dumps({f.name: f.default for f in dataclasses.fields(Recipe)
                                                   if f.default is not dataclasses.MISSING}))

class RecipeSteps:
    """``OUT/recipe.json``: the settings and the result of every finished step, written after each step."""

    def __init__(self, out: Path, recipe: Recipe, resume: bool, command: str, rivals: dict[str, str | None]) -> None:
        self.path = out / STATE_NAME
        if self.path.is_file() and not resume:
            raise ValueError(f"{out} holds a recipe already ({STATE_NAME}): continue it with --resume, or give "
                             "another --out")
        if resume and not self.path.is_file():
            raise ValueError(f"{self.path}: no recipe to resume (start without --resume)")
        aside_before = _stages_set_aside(out)
        if resume:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            # a setting added after the recipe started counts at its default (the behaviour it was made with)
            settings = {**_DEFAULTS, **saved.get("settings", {})}
            wanted = recipe.to_dict()
            for stage in ("first", "round_train"):      # a stage that named no learning rate ran at 3e-4,
                then = settings.get(stage, {})            # the trainer's default then
                if "learning_rate" in wanted[stage] and "learning_rate" not in then:
                    settings[stage] = {**then, "learning_rate": ppo.PROBE_LEARNING_RATE}
            differ = sorted(k for k, v in wanted.items() if settings.get(k) != v and k not in _MACHINE_FIELDS)
            # the distilled stage comes after every round: another one replaces it (the old one is set aside)
            redistill = [k for k in differ if k in _DISTILL_FIELDS]
            rerefine = [k for k in differ if k in _REFINE_FIELDS]
            reprobe = [k for k in differ if k in _STAGE_PROBE_FIELDS]
            differ = [k for k in differ if k not in _DISTILL_FIELDS + _REFINE_FIELDS + _STAGE_PROBE_FIELDS]
            longer = differ == ["rounds"] and recipe.rounds > settings["rounds"]
            if differ and not longer:
                more = " (rounds can only grow: a longer recipe continues a shorter one)" if "rounds" in differ else ""
                raise ValueError(f"--resume: the recipe in {out} was made with other settings ({', '.join(differ)})"
                                 + more)
            changed = [spec for spec, digest in saved.get("rivals", rivals).items() if rivals.get(spec) != digest]
            if changed:
                raise ValueError(f"--resume: the rival(s) {', '.join(changed)} changed since the recipe in {out} "
                                 "started (another policy file): rerun it in a new folder, or restore the file")
            if longer:
                saved = extend_rounds(out, saved, recipe.rounds)
            elif redistill:
                saved = _set_distilled_aside(out, saved)
            elif reprobe:      # the distilled network stays; its probes and the refined stage that trained on them go
                saved = set_stage_aside(out, set_stage_aside(out, saved, "distilled/probes"), "refined")
            elif rerefine:
                saved = set_stage_aside(out, saved, "refined")
            staged = _DISTILL_FIELDS + _REFINE_FIELDS + _STAGE_PROBE_FIELDS + _MACHINE_FIELDS
            saved["settings"] = {**saved["settings"], **{k: wanted[k] for k in staged}}
            self.data = {**saved, "rivals": rivals}
            if command != saved.get("command"):         # what each resume asked for (another distilled stage...)
                self.data["resumed_with"] = [*saved.get("resumed_with", []), command]
        else:
            self.data = {"settings": recipe.to_dict(), "command": command, "machine": machine_text(),
                         "rivals": rivals, "steps": {}, "seconds": 0.0}
        out.mkdir(parents=True, exist_ok=True)
        self.write()
        self.clock = StepClock(out, resume)
        if _stages_set_aside(out) > aside_before:       # the stopped step was in a stage set aside: so is its time
            self.data["seconds_set_aside"] = self.data.get("seconds_set_aside", 0.0) + self.clock.set_aside()
            self.write()

    def done(self, name: str) -> dict[str, Any] | None:
        return self.data["steps"].get(name)

    def finish(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        """Record a finished step, and its wall time (``step_seconds``: since the previous step finished, the time
        a stopped process had spent on it included; :class:`~experiments.population.recipe_clock.StepClock`)."""
        self.data["steps"][name] = result
        self.data.setdefault("step_seconds", {})[name] = round(self.clock.lap(), 1)
        self.write()
        return result

    def write(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.data, indent=2), encoding="utf-8")
        tmp.replace(self.path)


#: The settings of the distilled stage, which a resume may change (:func:`_set_distilled_aside`).
_DISTILL_FIELDS = ("distill_rounds", "distill_decisions", "distill_epochs", "distill_replicas")
#: The settings of the refined stage, which a resume may change (:func:`set_stage_aside`).
_REFINE_FIELDS = ("refine_decisions", "refine_lance", "refine_lance_decisions", "refine_lance_learning_rate",
                  "refine_hidden")
#: The settings of the distilled and refined stages' probes, which a resume may change (their probes and the refined
#: stage run again).
_STAGE_PROBE_FIELDS = ("stage_probe_decisions", "stage_probe_seeds", "stage_probe_learning_rate",
                       "stage_probe_starts")
#: How a run uses the machine, not what it makes: a resume may change them (the new values are recorded).
_MACHINE_FIELDS = ("torch_threads", "train_threads")


def set_stage_aside(out: Path, saved: dict[str, Any], stage: str) -> dict[str, Any]:
    """``saved`` without the steps of ``stage`` (``distilled``, ``refined`` or one step, ``distilled/probes``), the
    keep and the card (chosen again at the end); the stage's folder, if any, moved to ``<stage>-before-<n>`` (``n``
    counts the stages set aside), never deleted."""
    if (out / stage).exists():
        n = 1 + sum(1 for p in out.glob(f"{stage}-before-*"))
        (out / stage).replace(out / f"{stage}-before-{n}")
    steps = {k: v for k, v in saved["steps"].items()
             if k not in ("keep", "card", stage) and not k.startswith(f"{stage}/")}
    return _with_steps(saved, steps)


def _stages_set_aside(out: Path) -> int:
    """How many stage folders :func:`set_stage_aside` has moved aside in ``out`` (``distilled-before-1``,
    ``distilled/probes-before-1``, ...)."""
    return sum(1 for pattern in ("*-before-*", "*/*-before-*") for _ in out.glob(pattern)) if out.is_dir() else 0


def _with_steps(saved: dict[str, Any], steps: dict[str, Any]) -> dict[str, Any]:
    """``saved`` with only ``steps``: the wall time of the steps left out (``step_seconds``) leaves the recipe's
    ``seconds`` for ``seconds_set_aside``, so that the recipe's time is that of the steps it is made of (steps
    recorded without ``step_seconds`` cannot be taken out)."""
    times = saved.get("step_seconds", {})
    gone = sum(v for k, v in times.items() if k not in steps)
    return {**saved, "steps": steps, "step_seconds": {k: v for k, v in times.items() if k in steps},
            "seconds": saved.get("seconds", 0.0) - gone,
            "seconds_set_aside": saved.get("seconds_set_aside", 0.0) + gone}


def _set_distilled_aside(out: Path, saved: dict[str, Any]) -> dict[str, Any]:
    """``saved`` without its distilled stage and the refined stage that started from it (:func:`set_stage_aside`)."""
    return set_stage_aside(out, set_stage_aside(out, saved, "distilled"), "refined")


def extend_rounds(out: Path, saved: dict[str, Any], rounds: int) -> dict[str, Any]:
    """``saved`` (a recipe.json's content) made a recipe of ``rounds`` rounds: what ``--resume --rounds N`` does.

    Rounds already run stay as they are. The final probes of the shorter recipe's last policy are the probes of
    the next round (the same target, starts, seeds and budget), so their step and their folder
    (``final/probes``, finished or stopped) become ``round<R+1>/probes``; the kept policy and the card are chosen
    again at the end, and a distilled stage is set aside (its mixture was of the shorter recipe's rounds). A recipe
    extended so ends exactly as one run with ``rounds`` from the start.

    Raises:
        ValueError: the next round's probes folder exists already (nothing is changed).
    """
    before = int(saved["settings"]["rounds"])
    name = f"round{before + 1}/probes"
    source, target = out / "final" / "probes", out / name
    if source.exists() and target.exists():
        raise ValueError(f"--resume --rounds {rounds}: both {source} and {target} exist; remove the one that is "
                         "not the last policy's probes")

    def moved(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: moved(v) for k, v in x.items()}
        if isinstance(x, list):
            return [moved(v) for v in x]
        if isinstance(x, str) and x.startswith(str(source)):
            return str(target) + x[len(str(source)):]
        return x

    saved = _set_distilled_aside(out, saved)       # a mixture of the shorter recipe's rounds: not reused
    # the replicas' rounds are made as long again when the stage runs (each resumed with the new rounds)
    steps = {k: v for k, v in saved["steps"].items() if k != "final/probes" and not k.startswith("replica")}
    if "final/probes" in saved["steps"]:
        steps[name] = moved(saved["steps"]["final/probes"])
    times = dict(saved.get("step_seconds", {}))
    if "final/probes" in times:
        times[name] = times.pop("final/probes")
    saved = _with_steps({**saved, "step_seconds": times}, steps)
    if source.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        source.replace(target)                     # before recipe.json: a crash between is repaired by a rerun
    history = [*saved.get("extended", []), {"from": before, "to": rounds}]
    return {**saved, "settings": {**saved["settings"], "rounds": rounds}, "extended": history}


def rival_digests(recipe: Recipe) -> dict[str, str | None]:
    """Each rival's weights digest (None for an agent without weights), recorded in ``recipe.json``: ``ppo`` is
    whatever agent is shipped when the recipe runs, and a resume refuses a rival whose weights changed.

    Raises:
        ValueError: a rival that cannot play (before anything is written).
    """
    digests: dict[str, str | None] = {}
    for spec in recipe.rivals:
        try:
            make_agent(spec)
            digests[spec] = policy_digest(Path(policy_file_of(spec))) if spec == "ppo" or spec.endswith(".pt") \
                else None
        except (ValueError, OSError, ImportError) as e:
            raise ValueError(f"Recipe.rivals: {spec!r} cannot play: {e}") from None
    return digests


def policy_digest(path: Path) -> str:
    """The parameters digest of the policy file at ``path`` (:func:`agents.policy.parameters_digest`)."""
    blob = load_policy_file(path)
    return parameters_digest(build_net(blob, path))
