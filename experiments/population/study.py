"""A study of several agents' exploitability: ``mus study AGENT AGENT ... --seeds N --decisions D1,D2 --cross``.

One agent's probes say how exploitable that agent is; the seeds of a training method say how exploitable the
method's agents are, and how much they differ. A study runs, for every agent (each with a label), every probe
length (``decisions``), every start and every probe seed, one best response
(:func:`experiments.population.exploit.probe`), in ``OUT/<label>/d<decisions>/<start>-seed<seed>``; all of them
through :func:`experiments.population.exploit_seeds.run_probe_jobs` (one after the other, ``workers`` processes, or
Ray tasks). With ``cross``, each best response's policy file is then evaluated against every agent of the study on
the probes' held-out deals (:func:`cross_measure`; ``OUT/cross/d<decisions>/<label>-<probe>--<label>.json``). The
table (:mod:`experiments.population.study_table`) is written as ``OUT/study.json`` and ``OUT/study.md``, with a
plot per length of where each agent's largest probe won (``OUT/where-d<decisions>.png``).

A study resumes (``resume``): a probe whose ``exploit.json`` is there is read, not rerun (it must be of the same
agent and budget); one stopped with a checkpoint continues from it; so does a cross evaluation whose file is there.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents import make_agent
from experiments.population.exploit import default_out, measure, policy_file_of, probe, where_bars
from experiments.population.exploit_seeds import STARTS, probe_folder, run_resumable_probes
from experiments.population.study_table import probe_key, study_markdown, study_table
from experiments.train.league import frozen_agent, probe_policy_file
from experiments.train.ppo import Args, make_args
from experiments.train.restricted import LEARNER_DECIDES, RestrictedAgent
from mus_env import MusConfig

__all__ = ["StudyAgent", "study_agents", "run_study", "cross_measure", "probe_folder_of", "cross_file",
           "TABLE_NAME", "MARKDOWN_NAME", "DEFAULT_OUT"]

#: The table's file names in the study's folder.
TABLE_NAME, MARKDOWN_NAME = "study.json", "study.md"
#: Where ``mus study`` writes when ``--out`` is not given.
DEFAULT_OUT = Path("runs") / "study"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class StudyAgent:
    """An agent of a study: its ``label`` (a folder name) and its ``agents.make_agent`` ``spec``."""

    label: str
    spec: str


def study_agents(specs: Sequence[str], labels: Sequence[str] | None = None) -> list[StudyAgent]:
    """The study's agents from their specs and labels (default: each spec's name, as ``mus exploit``'s folder).

    Raises:
        ValueError: no agent, a number of labels other than of specs, a label given twice or not a folder name
            (letters, digits, ``_.-``), or a spec ``agents.make_agent`` cannot build (or ``human``).
    """
    specs = [str(s).strip() for s in specs]
    if not specs:
        raise ValueError("a study needs at least one agent")
    if labels is None:
        labels = [default_out(s).name for s in specs]
    labels = [str(x).strip() for x in labels]
    if len(labels) != len(specs):
        raise ValueError(f"--labels: one per agent, got {len(labels)} labels for {len(specs)} agents")
    bad = [x for x in labels if not _LABEL.match(x)]
    if bad:
        raise ValueError(f"--labels: a label is a folder name (letters, digits, _ . -, at most 64), got {bad[0]!r}")
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise ValueError(f"the label {twice[0]!r} is given to two agents; give each its own with --labels")
    for spec in specs:
        if spec == "human":
            raise ValueError("a human cannot be probed (the probe plays millions of hands)")
        try:
            make_agent(spec)
        except (ValueError, ImportError, OSError, RuntimeError) as e:
            raise ValueError(f"{spec}: {e}") from None
    return [StudyAgent(x, s) for x, s in zip(labels, specs, strict=True)]


def probe_folder_of(out: Path, label: str, decisions: int, start: str, seed: int) -> Path:
    """Where the study's probe of agent ``label`` at ``decisions`` from ``start`` with ``seed`` writes."""
    return probe_folder(out / label / f"d{decisions}", start, seed)


def cross_file(out: Path, decisions: int, trained_on: str, key: str, against: str) -> Path:
    """Where the evaluation of agent ``trained_on``'s probe ``key`` against agent ``against`` is kept."""
    return out / "cross" / f"d{decisions}" / f"{trained_on}-{key}--{against}.json"


def cross_measure(policy: Path, learner_decides: str, trained_on: str, against: str, hands: int, games: int,
                  seed: int, config: MusConfig) -> dict[str, Any]:
    """A best response's policy file (trained against the agent ``trained_on``) measured against the agent
    ``against`` as the probe measured it against its own agent (:func:`experiments.population.exploit.measure`,
    sampled play, the same held-out deals); a restricted probe (``learner_decides`` other than ``all``) plays
    ``against``'s own policy where it does not decide."""
    from agents.policy import TorchPolicyAgent

    opp = frozen_agent(against, config)
    me: Any = TorchPolicyAgent.from_file(policy, name="probe")
    if learner_decides != "all":
        me = RestrictedAgent(me, opp, learner_decides, name="probe")
    row = measure(me, opp, against, hands, games, seed, config)
    return {**row, "trained_on": trained_on, "policy": str(policy)}


def _int_list(values: int | Sequence[int], what: str, lo: int, count: bool) -> list[int]:
    """The ints of ``values`` (a count N means 0..N-1 when ``count``, else one value), each >= ``lo`` and once."""
    if isinstance(values, int) and not isinstance(values, bool):
        xs = list(range(values)) if count else [values]
    else:
        xs = list(values)
    if not xs or any(isinstance(v, bool) or not isinstance(v, int) or v < lo for v in xs):
        want = "a count >= 1 (or seeds >= 0)" if count else f"ints >= {lo}"
        raise ValueError(f"{what} must be {want}, got {values!r}")
    if len(set(xs)) != len(xs):
        raise ValueError(f"{what}: a value is given twice: {xs}")
    return xs


def _game_config(preset: str, probe_args: dict[str, Any]) -> MusConfig:
    """The game the probes are measured in (the trainer's evaluation game of their settings)."""
    fields = {f.name for f in dataclasses.fields(Args)}
    return make_args(preset, **{k: v for k, v in probe_args.items() if k in fields}).game_config(training=False)


def run_study(agents: Sequence[StudyAgent], seeds: int | Sequence[int], decisions: int | Sequence[int],
              out: str | Path | None = None, starts: Sequence[str] = ("equity",), cross: bool = False,
              resume: bool = False, overwrite: bool = False, workers: int = 1, ray_address: str | None = None,
              log: Callable[[str], object] = print, command: str = "",
              probe_fn: Callable[..., dict[str, Any]] = probe,
              evaluate_fn: Callable[..., dict[str, Any]] = cross_measure, **probe_args: Any) -> dict[str, Any]:
    """Run a study (see the module docstring) and write its table.

    Args:
        agents: the agents (:func:`study_agents`).
        seeds: the probe seeds (a count N: 0..N-1) of each agent, start and length.
        decisions: the probe lengths (training decisions), one or more.
        out: the study's folder (default ``runs/study``).
        starts: the best responses' starts, from :data:`~experiments.population.exploit_seeds.STARTS`.
        cross: evaluate every best response against every agent (the cross matrix).
        resume: go on with a stopped study in ``out``; overwrite: run every probe and evaluation afresh.
        workers, ray_address: how the probes run (:func:`~experiments.population.exploit_seeds.run_probe_jobs`);
            the cross evaluations run in this process, after them.
        log: where progress lines go; command: the command line, recorded.
        probe_fn, evaluate_fn: the probe and the cross evaluation (tests give stubs; ``probe_fn`` is used when the
            probes run in this process).
        probe_args: each probe's other arguments (``eval_hands``, ``eval_games``, ``eval_seed``, ``learner_decides``,
            ``torch_threads``...; the cross evaluations use the same held-out deals).

    Returns:
        The table (:func:`experiments.population.study_table.study_table`).

    Raises:
        ValueError: no agent, a bad seed list, length or start, ``cross`` with one agent, ``agent`` start for an agent
            without weights, a folder that holds a study without ``resume`` or ``overwrite``, or a finished probe in
            it of another agent or budget; nothing runs then. A probe's own errors stop the study (the finished
            probes are kept; ``resume`` goes on from them).
        experiments.train.session.TrainingInterrupted: Ctrl-C; ``resume`` goes on from the finished and stopped
            probes.
    """
    agents = study_agents([a.spec for a in agents], [a.label for a in agents])     # checked again: ValueError
    seed_list = _int_list(seeds, "--seeds", 0, count=True)
    lengths = _int_list(decisions, "--decisions", 1, count=False)
    starts = list(starts)
    if not starts or any(s not in STARTS for s in starts) or len(set(starts)) != len(starts):
        raise ValueError(f"--starts: one or more of {', '.join(STARTS)}, each once, got {','.join(starts) or '(none)'}")
    if "agent" in starts:
        for a in agents:
            policy_file_of(a.spec)
    if cross and len(agents) < 2:
        raise ValueError("--cross evaluates each agent's probes against the other agents: give two agents or more")
    if resume and overwrite:
        raise ValueError("--resume and --overwrite: one continues the study in --out, the other replaces it")
    decides = probe_args.get("learner_decides", "all")
    if decides not in LEARNER_DECIDES:
        raise ValueError(f"learner_decides must be one of {', '.join(LEARNER_DECIDES)}, got {decides!r}")
    out = Path(out) if out is not None else DEFAULT_OUT
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a folder")
    held = [a.label for a in agents if (out / a.label).exists()]
    if not resume and not overwrite and ((out / TABLE_NAME).exists() or held):
        raise ValueError(f"{out} already holds a study: go on with --resume, replace it with --overwrite, or give "
                         "another --out")
    preset = probe_args.get("preset", "default")
    config = _game_config(preset, probe_args) if cross else None
    if (workers > 1 or ray_address is not None) and "torch_threads" not in probe_args:
        probe_args = {**probe_args, "torch_threads": 1}

    found: dict[tuple[int, str, str, int], dict[str, Any]] = {}
    jobs, keys = [], []
    for d in lengths:
        for a in agents:
            for start in starts:
                for seed in seed_list:
                    folder = probe_folder_of(out, a.label, d, start, seed)
                    done = folder / "exploit.json"
                    if resume and done.is_file():
                        r = json.loads(done.read_text(encoding="utf-8"))
                        if r.get("agent") != a.spec or r.get("budget", {}).get("decisions") != d:
                            raise ValueError(f"{done} is a probe of {r.get('agent')!r} for "
                                             f"{r.get('budget', {}).get('decisions')} decisions, not of {a.spec!r} for "
                                             f"{d}: give another --out")
                        found[d, a.label, start, seed] = r
                        continue
                    keys.append((d, a.label, start, seed))
                    jobs.append({**probe_args, "spec": a.spec, "out": folder, "warm_start": start, "seed": seed,
                                 "minutes": 0, "decisions": d, "overwrite": overwrite,
                                 "resume": resume and (folder / "checkpoint.pt").is_file(),
                                 "command": command or None})
    total = len(lengths) * len(agents) * len(starts) * len(seed_list)
    log(f"study of {len(agents)} agents in {out}: {total} probes, {total - len(jobs)} done before, {len(jobs)} to run")
    ran = run_resumable_probes(jobs, workers, ray_address, log, probe_fn, out, len(found), total)
    found.update(zip(keys, ran, strict=True))
    results = {d: {a.label: [found[d, a.label, s, k] for s in starts for k in seed_list] for a in agents}
               for d in lengths}
    crossed = _cross(agents, results, out, config, probe_args, resume, log, evaluate_fn) if cross else None
    table = study_table([a.label for a in agents], [a.spec for a in agents], results, crossed, command)
    _write(out, table, agents)
    g = table["lengths"][-1]["over_agents"]["largest_gain"]
    log(f"\nstudy of {len(agents)} agents at {lengths[-1]:,} decisions: largest gain {g['mean']:+.3f} "
        + (f"± {g['se']:.3f}" if g["se"] is not None else "(n=1, no SE)")
        + f" over the agents, worst {g['worst_label']} {g['worst']:+.3f}; wrote {out / TABLE_NAME}, "
        + f"{out / MARKDOWN_NAME}")
    return table


def _cross(agents: Sequence[StudyAgent], results: dict[int, dict[str, list[dict[str, Any]]]], out: Path,
           config: MusConfig | None, probe_args: dict[str, Any], resume: bool, log: Callable[[str], object],
           evaluate_fn: Callable[..., dict[str, Any]]) -> dict[int, dict[tuple[str, str, str], dict[str, Any]]]:
    """Every probe of every length evaluated against every agent (read back where ``resume`` finds its file)."""
    hands, games = probe_args.get("eval_hands", 20000), probe_args.get("eval_games", 2000)
    seed, decides = probe_args.get("eval_seed", 2024), probe_args.get("learner_decides", "all")
    crossed: dict[int, dict[tuple[str, str, str], dict[str, Any]]] = {}
    for d, by_agent in results.items():
        crossed[d] = {}
        for a in agents:
            for r in by_agent[a.label]:
                key = probe_key(r)
                policy = probe_policy_file(probe_folder_of(out, a.label, d, r.get("warm_start", "equity"), r["seed"]))
                for b in agents:
                    path = cross_file(out, d, a.label, key, b.label)
                    if resume and path.is_file():
                        row = json.loads(path.read_text(encoding="utf-8"))
                    else:
                        log(f"cross: {a.label}'s probe {key} ({d:,} decisions) against {b.label}")
                        row = evaluate_fn(policy, decides, a.spec, b.spec, hands, games, seed, config)
                        path.parent.mkdir(parents=True, exist_ok=True)
                        tmp = path.with_suffix(".tmp")
                        tmp.write_text(json.dumps(row, indent=2), encoding="utf-8")
                        tmp.replace(path)
                    crossed[d][a.label, key, b.label] = row
    return crossed


def _write(out: Path, table: dict[str, Any], agents: Sequence[StudyAgent]) -> None:
    """``study.json``, ``study.md`` and, where every largest probe says where it won, ``where-d<decisions>.png``."""
    out.mkdir(parents=True, exist_ok=True)
    for name, text in ((TABLE_NAME, json.dumps(table, indent=2)), (MARKDOWN_NAME, study_markdown(table))):
        tmp = out / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)
    for t in table["lengths"]:
        tops = [a["max"] for a in t["agents"]]
        if all(m.get("by_lance") for m in tops):
            where_bars([f"{a.label} {m['probe']} ({m['stones']:+.2f})" for a, m in zip(agents, tops, strict=True)],
                       [m["by_lance"] for m in tops], out / f"where-d{t['decisions']}.png",
                       title=f"where each agent's largest probe of {t['decisions']:,} decisions wins")
