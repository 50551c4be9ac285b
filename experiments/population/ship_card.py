"""The shipped agent's model card: ``ppo.md``, written from the ``meta`` stored in ``ppo.pt``.

:func:`write_card` turns the shipped file's ``meta`` (how it was made, the evaluation rows, its lineage, probes and
the agent it replaced) into a markdown page, section by section; nothing is played or read from a run here, so
``mus ship-agent --card-only`` rewrites the very same page from the stored ``meta``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from experiments.population.ship_lineage import lineage_budget, made_text, shares_rounded

__all__ = ["write_card", "compare_lines", "rival_ppo_text"]


def write_card(path: Path, meta: dict[str, Any], rows: list[dict[str, Any]]) -> Path:
    """The model card (markdown) from the shipped file's ``meta`` and the evaluation rows."""
    lines = [
        "# Model card: `ppo`, the shipped mus-env policy", "",
        ("One network fitted by `mus distill` (`experiments/population/distill.py`) to the mixture of masked PPO "
         "policies trained by self-play with a league on `VectorMusEnv` (`experiments/train/ppo.py`)"
         + (", then trained against its own best responses." if (meta.get("recipe") or {}).get("refined") else ".")
         if (meta.get("recipe") or {}).get("distilled") else
         "A masked PPO policy trained by self-play with a league on `VectorMusEnv` (`experiments/train/ppo.py`).")
        + " Load it with `agents.make_agent(\"ppo\")` "
        "(`greedy=True` for argmax play); use it as `ppo` in `mus tournament` and `mus play`.", "",
        "## How it was made", "",
        *(_recipe_lines(meta) if meta.get("recipe") else _run_lines(meta)),
        "## Evaluation", "",
        f"Duplicate, `{meta.get('ship_command', 'mus ship-agent')}` (deal seed "
        f"{meta.get('eval_seed', '?')}, disjoint from training; the weights are the run's "
        f"`{_policy_of(meta)}`): each deal is played twice with the seats swapped. Stones/hand is ppo minus the "
        "baseline (an accepted órdago counts as the stones the winners lacked); the game win rate is over paired "
        "games. 95% confidence intervals; p: two-sided, against 0 stones and 0.5 win rate.", "",
        "| play | opponent | hands | stones/hand | 95% CI | p | games | win rate | 95% CI | p |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['play']} | {r['opponent']} | {r['hands']:,} | {r['stones']:+.3f} | "
                     f"[{r['stones_lo']:+.3f}, {r['stones_hi']:+.3f}] | {_fmt_p(r['stones_p'])} | {r['games']:,} | "
                     f"{r['win']:.3f} | [{r['win_lo']:.3f}, {r['win_hi']:.3f}] | {_fmt_p(r['win_p'])} |")
    lines += ["", "Bidding rates in the duplicate hands (envido and órdago per betting decision, no quiero per answer "
              "to a bet), ppo / the baseline, so that a degenerate bidder is visible:", "",
              "| play | opponent | envido | órdago | no quiero |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['play']} | {r['opponent']} | {r['envido_rate']:.3f} / {r['opp_envido_rate']:.3f} | "
                     f"{r['ordago_rate']:.3f} / {r['opp_ordago_rate']:.3f} | "
                     f"{r['no_quiero_rate']:.3f} / {r['opp_no_quiero_rate']:.3f} |")
    if meta.get("lineage"):
        lines += [""] + _lineage_lines(meta["lineage"])
    if meta.get("exploitability"):
        lines += [""] + _probe_lines(meta["exploitability"])
    if meta.get("previous"):
        lines += [""] + compare_lines(meta, rows)
    kept = _kept_lines("\n".join(lines), bool(meta.get("lineage")), by_hand=not meta.get("recipe"))
    lines += ([""] + kept if kept else []) + ["", "## Limits", "",
              "- Trained and evaluated with 8 kings and a 40-stone game; other variants are untested.",
              "- Beating the baselines is not low exploitability: a best response trained against this policy may "
              "win more than they do.",
              "- Greedy play against itself can raise forever (Mus has no cap on raises); play it sampled in "
              "self-play, or cap the stakes with `MusConfig(max_stake=N)` as training does.", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _recipe_lines(meta: dict[str, Any]) -> list[str]:
    """The card's "How it was made" for a policy kept by ``mus league`` (:func:`read_recipe`): the one command, its
    wall time, what it trained and probed, and its table of rounds."""
    r = meta["recipe"]
    resumed = "".join(f"; resumed (exactly, step by step) with `{c}`" for c in r.get("resumed_with", []))
    return [
        f"- Command: `{r['command']}`{resumed}",
        f"- Wall time: **{r['minutes']:.1f} minutes** on {r.get('machine', '?')} (every training, probe, meta-game "
        "and report of the recipe" + (f", the {r['replica_minutes_outside']:.1f} minutes of replicas run by a command "
                                      "of their own included" if r.get("replica_minutes_outside") else "")
        + "; the measuring probes below are not included)",
        f"- Trained: {r['train_decisions']:,} decisions of `mus train` in {r['rounds'] + 1} stages (round 0, then "
        f"{r['rounds']} rounds, each warm-started from the one before, its league from the Nash mixture of the "
        "population)" + (f", {r['replicas']} more run(s) of them with other seeds ({r['replica_decisions']:,} "
                         "decisions)" if r.get("replicas") else "")
        + (f" and {r['distill_decisions']:,} decisions of `mus distill`" if r.get("distill_decisions") else "")
        + (f", then {r['refine_decisions']:,} decisions of `mus train` of the distilled network against its own "
           "probes" if r.get("refine_decisions") else "")
        + f"; probed: {r['probe_decisions']:,} decisions of best responses",
        f"- First stage's warm start: {_warm_start_text({'warm_start': r.get('first_warm_start', '?')}, False)}",
        f"- Kept: {r['kept']}, the candidate whose best responses gained least (probes that never trained it)",
        *_network_lines(meta),
        f"- mus-env observation version: OBS_DIM {meta.get('arch', {}).get('obs_dim', '?')}, "
        f"{meta.get('arch', {}).get('num_actions', '?')} actions", "",
        "The recipe's rounds (its `recipe.md`; margins on its own deals, probe gains at the recipe's probe budget"
        + rival_ppo_text(meta) + "):", "", *r["table"], ""]


def rival_ppo_text(meta: dict[str, Any]) -> str:
    """What ``ppo`` is in a recipe's rounds table when it was a rival: the agent shipped when the recipe ran (the
    one this policy replaced, when its weights are those)."""
    digest = (meta.get("recipe") or {}).get("rivals", {}).get("ppo")
    if not digest:
        return ""
    replaced = digest == (meta.get("previous") or {}).get("parameters_sha256")
    return ("; `ppo` there is the agent shipped when the recipe ran" + (", the one this policy replaced"
                                                                         if replaced else ""))


def _run_lines(meta: dict[str, Any]) -> list[str]:
    """The card's "How it was made" for a policy of one ``mus train`` run (its command, settings and budget)."""
    run = meta.get("run", {})
    args = meta.get("args", {})
    network, game = _network_lines(meta)
    return [
        f"- Command: `{meta.get('command', '?')}`",
        f"- Seed: {args.get('seed', '?')}; {_preset_text(meta)}",
        *([f"- Stopped and resumed (exactly, from its checkpoint) {len(run['sessions']) - 1} time(s): "
           + "; ".join(f"`{x.get('command', '?')}` at update {x.get('from_update', '?')}" for x in run["sessions"][1:])]
          if len(run.get("sessions", [])) > 1 else []),
        f"- Warm start: {_warm_start_text(args, bool(meta.get('lineage')))}",
        network,
        f"- League: `{args.get('league_mix', '?')}`; snapshot every {args.get('snapshot_every', '?')} updates, "
        f"pool of {args.get('pool_size', '?')}",
        f"- Rewards: {args.get('stones_coef', '?')} × stones/target per hand + {args.get('game_coef', '?')} × "
        "game outcome (±1)",
        f"- Training: {meta.get('decisions', 0):,} environment decisions in {meta.get('updates', '?')} updates, "
        f"{meta.get('minutes', float('nan')):.1f} minutes of wall time (evaluations included)",
        f"- Machine: {run.get('machine', '?')}; torch {run.get('torch', '?')}, "
        f"{run.get('torch_threads') or args.get('torch_threads', '?')} torch thread(s)",
        game,
        f"- mus-env observation version: OBS_DIM {meta.get('arch', {}).get('obs_dim', '?')}, "
        f"{meta.get('arch', {}).get('num_actions', '?')} actions", "",
        "Every setting is in `meta[\"args\"]` of `agents/data/ppo.pt` "
        "(`agents.policy.load_policy_file(...)[\"meta\"]`).", ""
    ]


def _network_lines(meta: dict[str, Any]) -> list[str]:
    """The card's lines on the network and the game it was trained for (``meta["args"]`` of its training)."""
    args, arch = meta.get("args", {}), meta.get("arch", {})
    return [f"- Network: MLP {arch.get('obs_dim', '?')} → {' → '.join(map(str, args.get('hidden', [])))} "
            f"→ {arch.get('num_actions', '?')} logits + value; {meta.get('parameters', '?'):,} parameters",
            f"- Game: {args.get('kings', '?')} kings, target {args.get('target', '?')} (training capped mus rounds at "
            f"{args.get('max_mus_rounds', '?')}"
            + (f" and a lance's stake at {args['max_stake']} (`--max-stake`)" if args.get("max_stake") else "")
            + "; evaluation plays uncapped)"]


def _preset_text(meta: dict[str, Any]) -> str:
    """The card's preset: the one the command named, or none (the command's flags over the trainer's defaults)."""
    if "--preset" in str(meta.get("command", "")).split():
        return f"preset: `{meta.get('run', {}).get('preset', '?')}`"
    return "no preset (the command's flags over the trainer's defaults when it ran; every setting is in `meta`)"


def _warm_start_text(args: dict[str, Any], lineage: bool) -> str:
    """The card's warm-start line: behaviour cloning, none, or an earlier run's policy."""
    start = args.get("warm_start", "?")
    if start == "equity":
        return f"behaviour cloning of `equity` ({args.get('bc_decisions', 0):,} decisions)"
    if start in ("none", "?"):
        return str(start)
    return f"the policy `{start}`" + (" (see the lineage below)" if lineage else "")


def _policy_of(meta: dict[str, Any]) -> str:
    """Which policy file of the run was shipped (``--policy`` of the ship command, ``policy.pt`` by default)."""
    words = str(meta.get("ship_command", "")).split()
    return words[words.index("--policy") + 1] if "--policy" in words[:-1] else "policy.pt"


def _fmt_p(p: float) -> str:
    return "< 1e-6" if p < 1e-6 else f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def _lineage_lines(stages: list[dict[str, Any]]) -> list[str]:
    """The card's lineage section: every stage, then the total budget (rows rounded so that they add up to it,
    :func:`shares_rounded`)."""
    lines = ["## Lineage", "",
             "The shipped run was warm-started from an earlier run's policy, that one perhaps from another: every "
             "stage, oldest first (the minutes are each run's wall time, evaluations included).", "",
             "| stage | command | warm start | league | decisions | minutes |", "|---|---|---|---|---|---|"]
    decisions, minutes = lineage_budget(stages)
    row_minutes = shares_rounded([s["minutes"] for s in stages])[0]
    for i, (st, row) in enumerate(zip(stages, row_minutes, strict=True), 1):
        start = {"none": "none (from scratch)", "equity": "the `equity` clone"}.get(st["warm_start"],
                                                                                  f"`{st['warm_start']}`")
        command = "<br>".join(f"`{c}`" for c in st["commands"])
        lines.append(f"| {i} | {command} | {start} | `{st['league_mix']}` | {st['decisions']:,} | "
                     f"{row:.1f} |")
    lines += ["", f"Total: **{decisions:,} decisions, {minutes:.1f} minutes** of `mus train` on this machine. "
              "Best responses that a stage's league plays (policy files in its `league`) were trained by "
              "`mus exploit`; their time is not in this total."]
    first = stages[0]
    if first["warm_start"] == "none" and first.get("beats_rule"):
        b = first["beats_rule"]
        lines += ["", f"Stage 1 (from scratch, no warm start) first beat `rule` with p < 0.01 in stones and in games "
                  f"at **{b['minutes']:.1f} minutes** ({b['decisions']:,.0f} decisions; {b['stones']:+.2f} "
                  f"stones/hand, game win rate {b['win']:.3f} in its in-training evaluation)."]
    return lines


def _probe_lines(probes: dict[str, Any]) -> list[str]:
    """The card's exploitability section."""
    best, best_win = probes["max"], probes["max_win"]
    lines = ["## Exploitability", "",
             "Best responses trained against the frozen policy by `mus exploit` (each probe's gain is held out: "
             "20,000 duplicate hands and 2,000 games on deals of its own). Every figure is a **lower bound** on "
             "the policy's exploitability: more seeds, starts or training can only find more.", "",
             "| start | seed | decisions | gain, stones/hand | 95% CI | greedy gain | game win rate | 95% CI |",
             "|---|---|---|---|---|---|---|---|"]
    for r in probes["probes"]:
        lines.append(f"| {r['start']} | {r['seed']} | {r['decisions']:,} | {r['stones']:+.3f} | "
                     f"[{r['stones_lo']:+.3f}, {r['stones_hi']:+.3f}] | {r['greedy_stones']:+.3f} | {r['win']:.3f} | "
                     f"[{r['win_lo']:.3f}, {r['win_hi']:.3f}] |")
    lines += ["", f"Largest gain **{best['stones']:+.3f}** stones/hand ({best['start']} start, seed {best['seed']}); "
              f"largest game win rate **{best_win['win']:.3f}** ({best_win['start']} start, seed {best_win['seed']}); "
              f"spread of the gains {probes['spread']:.3f} over {probes['n']} probes.", "", "Commands:", ""]
    return lines + [f"- `{c}`" for c in probes["commands"]]


def compare_lines(meta: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """The card's before/after section: this policy against the one it replaced, on the same measures."""
    before = meta["previous"]
    old_rows = {(r["play"], r["opponent"]): r for r in before.get("evaluation", [])}

    lines = ["## Compared with the agent it replaced", "",
             f"Before: `{before.get('command', '?')}`. Both evaluated the same way (duplicate, deal seed "
             f"{meta.get('eval_seed', '?')} for this one); probes are lower bounds.", "",
             "| measure | before | now |", "|---|---|---|",
             f"| training | {before.get('made') or made_text(before)} | {made_text(meta)} |"]
    for r in rows:
        old = old_rows.get((r["play"], r["opponent"]))
        if old is not None:
            lines.append(f"| {r['play']} vs {r['opponent']}: stones/hand, game win rate | {old['stones']:+.3f}, "
                         f"{old['win']:.3f} | {r['stones']:+.3f}, {r['win']:.3f} |")

    def probe(p: dict[str, Any] | None, key: str, field: str, fmt: str) -> str:
        if not p:
            return "not probed"
        best = p[key]
        return f"{format(best[field], fmt)} ({best['start']} start, seed {best['seed']}; {p['n']} probes)"

    first = (meta.get("lineage") or [{}])[0]
    if first.get("warm_start") == "none" and first.get("beats_rule"):
        lines.append(f"| from scratch, first ahead of rule with p < 0.01 | "
                     f"{'warm-started' if before.get('warm_start') not in (None, 'none', '?') else '?'} | "
                     f"{first['beats_rule']['minutes']:.1f} minutes (stage 1) |")
    was, now = before.get("exploitability"), meta.get("exploitability")
    old_probes = {(r["start"], r["seed"]): r for r in (was or {}).get("probes", [])}
    for r in (now or {}).get("probes", []):
        old = old_probes.get((r["start"], r["seed"]))
        if old is not None:
            lines.append(f"| probe from the {r['start']} start, seed {r['seed']}: gain, game win rate | "
                         f"{old['stones']:+.3f}, {old['win']:.3f} ({old['decisions']:,} decisions) | "
                         f"{r['stones']:+.3f}, {r['win']:.3f} ({r['decisions']:,} decisions) |")
    lines.append(f"| largest probe gain, stones/hand | {probe(was, 'max', 'stones', '+.3f')} | "
                 f"{probe(now, 'max', 'stones', '+.3f')} |")
    lines.append(f"| largest probe game win rate | {probe(was, 'max_win', 'win', '.3f')} | "
                 f"{probe(now, 'max_win', 'win', '.3f')} |")
    return lines


#: An absolute path of two or more parts in the card's text (a folder of the machine that made the policy).
_ABSOLUTE = re.compile(r"(?<![\w./])/[A-Za-z_][\w.-]*(?:/[\w.-]+)+")
#: A run folder relative to where the commands ran (``runs/X``, as ``mus train --out`` names them).
_RUN_FOLDER = re.compile(r"(?<![\w./-])runs/[\w.-]+")


def _kept_lines(text: str, lineage: bool, by_hand: bool = False) -> list[str]:
    """The card's section on the folders it names that the repository does not keep (none named: no section):
    absolute paths of the machine that made the policy, or run folders ``runs/X`` relative to where the commands
    ran. ``by_hand``: the stages of the lineage were run one by one (not by ``mus league``), which it says."""
    paths = sorted(set(_ABSOLUTE.findall(text)))
    runs = sorted(set(_RUN_FOLDER.findall(text)))
    if not paths and not runs:
        return []
    if paths:
        common = os.path.commonpath(paths)
        which = f"every path under `{common}/`" if common != "/" else f"such as `{paths[0]}`"
        folders = (f"The folders named above outside this repository ({which}) were the training machine's and are "
                   "not kept.")
    else:
        folders = ("The run folders named above (`runs/...`, relative to the folder the commands ran in) are not kept "
                   "in the repository.")
    hand = (" The stages were run by hand, one after another: each stage's `--warm-start` names the policy of the "
            "stage before it (a copy of that run's `policy.pt`), and the policy files in its `--league-mix` are "
            "earlier stages' policies and best responses that `mus exploit` trained against them."
            if lineage and by_hand else "")
    rebuild = ("run the stages' commands in order, each with the policy of the stage before as `--warm-start` and, "
               "in its `--league-mix`, the `--out` folders of `mus exploit` runs against that policy in place of the "
               "best responses it names; then `mus ship-agent RUN --exploit PROBES/exploit_seeds.json --ancestor "
               "EARLIER_RUN ...`" if lineage else
               "run the command above, then `mus ship-agent RUN --exploit PROBES/exploit_seeds.json`")
    return ["## What is kept", "",
            f"{folders}{hand} The repository keeps the shipped weights with every command, setting and figure of this "
            "card (`agents/data/ppo.pt`, its `meta`), from which `mus ship-agent --card-only` rewrites the card. To "
            f"make a policy by the same recipe, {rebuild}; `mus league` runs rounds of this kind in one command."]
