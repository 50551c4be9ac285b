"""Regenerate the generated blocks of the documentation pages and of the README.

Each block sits between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` in one file (:data:`BLOCKS`):

* ``action-table``, ``observation-table``, ``state-table`` and ``reward-table`` (``docs/environments.md``),
  ``sign-table`` and ``signal-observation-table`` (``docs/senas.md``): from the code
  (:func:`mus_env.actions.action_table`, :func:`mus_env.observation.observation_table`, :func:`state_table`,
  :func:`reward_table`, :func:`mus_env.signals.sign_table`); always rewritten, and ``tests/test_docs.py``
  fails when a page is out of date;
* ``ladder`` (``docs/evaluation.md``) and ``ladder-summary`` (``README.md``): from a tournament's
  ``results.json`` (``ladder=``, copied to ``docs/ladder_results.json``; both are rebuilt from the copy every
  time), labelled with the version of the reference ladder (``experiments/evaluate/reference_ladder.json``) when
  its ratings are this ladder's;
* ``bench`` and ``bench-targets`` (``docs/performance.md``) and ``bench-summary`` (``README.md``): from
  ``mus bench --json`` output (``bench=``, copied to ``docs/bench.json``; all three are rebuilt from the copy every
  time; the targets are :data:`BENCH_TARGETS`);
* ``exploit`` (``docs/exploitability.md``): from ``mus exploit`` results (``exploit=``, copied with the names to
  show, ``exploit_names=``, to ``docs/exploit_results.json``; rebuilt from the copy every time), with the bar chart
  ``docs/exploit.png`` (redrawn when new results are given);
* ``signals-value`` (``docs/senas.md``): from a ``mus signals`` run;
* ``benchmark`` (``docs/benchmarks.md``): from the rows' results kept in ``docs/benchmark_results.json`` (written by
  ``mus benchmark table --docs``, which also draws ``docs/benchmark-curves.png``); rebuilt from the copy every time.

Images in a generated block are linked relative to the page (the pages and figures both live in ``docs/``).
``mus update-docs`` is the command line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.benchmark.table import benchmark_markdown
from mus_env.actions import action_table
from mus_env.cards import NUM_CARDS
from mus_env.config import MusConfig
from mus_env.interfaces import REWARD_MODES
from mus_env.observation import OBS_DIM, STATE_DIM, obs_dim, observation_table, state_dim
from mus_env.signals import sign_table

__all__ = ["ROOT", "DOCS", "BLOCKS", "LADDER_RESULTS", "EXPLOIT_RESULTS", "BENCHMARK_RESULTS", "REFERENCE_LADDER",
           "REWARD_MEANINGS",
           "replace_section", "section", "code_blocks", "state_table", "reward_table",
           "ladder_markdown", "ladder_summary", "ladder_version", "bench_markdown", "bench_summary", "BENCH_TARGETS",
           "bench_targets", "exploit_markdown", "flatten_probes", "renamed_probes", "signals_markdown", "update_docs"]

#: The repository root (the docs are not installed with the package: run this from a checkout).
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: The ladder that the README's summary and the evaluation page show.
LADDER_RESULTS = DOCS / "ladder_results.json"
#: The probes that the exploitability page shows: ``{"names": {...}, "results": [exploit.json or
#: exploit_seeds.json, ...]}``.
EXPLOIT_RESULTS = DOCS / "exploit_results.json"
#: The rows of ``mus benchmark`` that docs/benchmarks.md shows (a list of their results files).
BENCHMARK_RESULTS = DOCS / "benchmark_results.json"
#: The reference ladder that ``mus evaluate`` places agents on (its ``version`` labels the ladder's tables).
REFERENCE_LADDER = "experiments/evaluate/reference_ladder.json"

#: Generated block -> the file that holds it, relative to the repository root.
BLOCKS = {
    "action-table": "docs/environments.md",
    "observation-table": "docs/environments.md",
    "state-table": "docs/environments.md",
    "reward-table": "docs/environments.md",
    "sign-table": "docs/senas.md",
    "signal-observation-table": "docs/senas.md",
    "signals-value": "docs/senas.md",
    "ladder": "docs/evaluation.md",
    "ladder-summary": "README.md",
    "bench": "docs/performance.md",
    "bench-targets": "docs/performance.md",
    "bench-summary": "README.md",
    "exploit": "docs/exploitability.md",
    "benchmark": "docs/benchmarks.md",
}


#: What each ``reward=`` mode of the interfaces pays (:data:`mus_env.interfaces.REWARD_MODES`; a mode missing here
#: stops :func:`reward_table`).
REWARD_MEANINGS = {
    "game": ("+1 to both partners of the winning team and −1 to the other two, when the episode ends (one game by "
             "default; the whole vaca or match when the config asks for more)"),
    "stones": ("after every hand, each seat gets its team's stones in that hand minus the other team's; a game "
               "won by an accepted órdago also credits the stones the winners still lacked "
               "(`HandRecord.stone_difference`)"),
}


def state_table() -> str:
    """The full-information vector of ``state()`` as a markdown table (sizes from :mod:`mus_env.observation`)."""
    cfg_on = MusConfig(signals="truthful")
    rows = [("seat 0's observation", 0, OBS_DIM, obs_dim(cfg_on), "the observation of seat 0 (the table above)"),
            ("hands", OBS_DIM, 4 * NUM_CARDS, 4 * NUM_CARDS,
             f"each absolute seat's hand in turn (seat 0 first), one-hot over the {NUM_CARDS} card ids")]
    lines = ["| piece | offset | size | size with señas | meaning |", "|---|---|---|---|---|"]
    offset_on = 0
    for name, offset, size, size_on, meaning in rows:
        lines.append(f"| {name} | {offset} | {size} | {size_on} (offset {offset_on}) | {meaning} |")
        offset_on += size_on
    lines.append(f"| **total** | | **{STATE_DIM}** | **{state_dim(cfg_on)}** | |")
    return "\n".join(lines)


def reward_table() -> str:
    """The ``reward=`` modes of every interface as a markdown table.

    Raises:
        ValueError: :data:`mus_env.interfaces.REWARD_MODES` has a mode that :data:`REWARD_MEANINGS` does not
            describe.
    """
    missing = [m for m in REWARD_MODES if m not in REWARD_MEANINGS]
    if missing:
        raise ValueError(f"REWARD_MEANINGS does not describe the reward modes {missing}")
    lines = ["| `reward=` | what each seat receives |", "|---|---|"]
    lines += [f"| `\"{mode}\"`{' (default)' if i == 0 else ''} | {REWARD_MEANINGS[mode]} |"
              for i, mode in enumerate(REWARD_MODES)]
    return "\n".join(lines)


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the body of block ``name`` replaced by ``body``.

    Raises:
        ValueError: ``text`` has no such block.
    """
    pattern = re.compile(rf"(<!-- {name}:start -->\n)(.*?)(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"no <!-- {name}:start --> ... <!-- {name}:end --> block (see BLOCKS)")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(3), text)


def section(text: str, name: str) -> str:
    """The current body of block ``name`` in ``text``.

    Raises:
        ValueError: ``text`` has no such block.
    """
    m = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    if not m:
        raise ValueError(f"no {name} block")
    return m.group(1)


def code_blocks(text: str, language: str) -> list[tuple[str, str]]:
    """The fenced code blocks of ``language`` in a markdown text, in order, as ``(marker, code)``.

    ``marker`` is the text of an HTML comment on the line just before the fence (``<!-- file: my_bot.py -->``,
    ``<!-- skip: why -->``), or ``""``; the docs tests use it to save a block as a file or to skip it.
    """
    out = []
    pattern = re.compile(rf"(?:<!--\s*(.*?)\s*-->\n)?```{language}\n(.*?)```", re.S)
    for m in pattern.finditer(text):
        out.append((m.group(1) or "", m.group(2)))
    return out


def _rating(results: dict[str, Any]) -> dict[str, Any]:
    meta = results["meta"]
    # results.json before the ladder said what it rates: Elo only, under "elo", from meta["elo_from"]
    return results.get("rating") or {"unit": "Elo", "source": meta["elo_from"],
                                     "method": f"Elo from {meta['elo_from']}, random = 1000", "contradictions": []}


def _ladder_rows(results: dict[str, Any]) -> list[str]:
    rating = _rating(results)
    unit, fmt = rating["unit"], (".0f" if rating["unit"] == "Elo" else "+.2f")
    lines = [f"| rank | agent | {unit} | 95% CI |", "|---|---|---|---|"]
    for rank, (name, r) in enumerate(results["ladder"].items(), 1):
        value = r.get("rating", r.get("elo"))
        lines.append(f"| {rank} | {name} | {value:{fmt}} | ± {1.96 * r['se']:{fmt.lstrip('+')}} |")
    return lines


def ladder_version(results: dict[str, Any], reference: dict[str, Any] | None) -> str | None:
    """The version of the reference ladder (``experiments/evaluate/reference_ladder.json``) when its ratings are
    those of ``results`` (each rounded to 0.1), else None: a ladder measured again is not labelled as the
    reference until the reference is updated from it."""
    if not reference:
        return None
    ours = {name: round(float(r.get("rating", r.get("elo"))), 1) for name, r in results["ladder"].items()}
    theirs = {name: round(float(v), 1) for name, v in reference.get("ratings", {}).items()}
    return reference.get("version") if ours == theirs else None


def _reference_words(version: str | None) -> str:
    return (f"; this is the reference ladder {version} (`{REFERENCE_LADDER}`), on which `mus evaluate` places an "
            "agent" if version else "")


def ladder_command(results: dict[str, Any]) -> str:
    """The ``mus tournament`` command that reproduces a ladder (from its ``meta``)."""
    meta = results["meta"]
    return (f"mus tournament --agents {','.join(meta['agents'])} --hands {meta['hands']} --games {meta['games']} "
            f"--seed {meta['seed']} --out runs/ladder")


def ladder_markdown(results: dict[str, Any], command: str | None = None, version: str | None = None) -> str:
    """The evaluation page's ladder: the rating table, every pair's duplicate results, the two figures
    (``version``: the reference ladder's, :func:`ladder_version`)."""
    meta, rating = results["meta"], _rating(results)
    command = command or ladder_command(results)
    lines = [f"Measured with `{command}` ({meta['hands_played']:,} hands in {meta['seconds']:.0f} s on this 2-core "
             f"machine; {rating['method']}"
             f"{_reference_words(version)}):", ""]
    lines += _ladder_rows(results)
    if rating["contradictions"]:
        lines += ["", "The ladder reverses: " + "; ".join(rating["contradictions"]) + "."]
    lines += ["", "Duplicate pairs (stones per hand, A minus B, 95% CI over deals; games: A's win rate):", "",
              "| A | B | deals | stones/hand A−B | 95% CI | game win rate A | 95% CI |",
              "|---|---|---|---|---|---|---|"]
    pairs: dict[tuple[str, str], dict] = {}
    for p in results["pairs"]:
        pairs.setdefault((p["a"], p["b"]), {}).update({"hands": p} if p["mode"] == "hands" else {"games": p})
    for (a, b), d in pairs.items():
        h, g = d.get("hands"), d.get("games")
        hs = (f"{h['deals']:,} | {h['mean_diff']:+.3f} | [{h['ci_low']:+.3f}, {h['ci_high']:+.3f}]" if h
              else "– | – | –")
        gs = (f"{g['game_win_rate']:.3f} | [{g['win_ci_low']:.3f}, {g['win_ci_high']:.3f}]" if g else "– | –")
        lines.append(f"| {a} | {b} | {hs} | {gs} |")
    lines += ["", "![ladder](ladder.png) ![stones per lance](lances.png)"]
    return "\n".join(lines)


def ladder_summary(results: dict[str, Any], version: str | None = None) -> str:
    """The README's ladder: the rating table and the command that made it (``version``: the reference
    ladder's, :func:`ladder_version`)."""
    meta, rating = results["meta"], _rating(results)
    source = (f"Elo from {meta['games']:,} duplicate games per pair, random = 1000" if rating["unit"] == "Elo"
              else rating["method"])
    return "\n".join(_ladder_rows(results) + ["", f"`{ladder_command(results)}`: {source}"
                                                  f"{_reference_words(version)}."])


def flatten_probes(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every probe's result: ``exploit.json`` results as they are, ``exploit_seeds.json`` reports opened into
    theirs."""
    return [p for r in results for p in (r["results"] if "probes" in r else [r])]


def renamed_probes(results: Sequence[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    """``mus exploit`` results with each key of ``names`` written as its value in the probed agent's spec and in
    the command (a policy probed as a file of the training machine, shown by the name it has now, such as
    ``ppo``); the results themselves are not changed."""
    def rename(text: str) -> str:
        for old, new in names.items():
            text = text.replace(old, new)
        return text

    out = []
    for r in results:
        r = json.loads(json.dumps(r))
        for item in ([r] + list(r.get("results", [])) if "probes" in r else [r]):
            item["agent"] = rename(str(item["agent"]))
            if "command" in item:
                item["command"] = rename(str(item["command"]))
        out.append(r)
    return out


def exploit_markdown(results: Sequence[dict[str, Any]]) -> str:
    """The exploitability table: one row per probe (held-out gain of the best response, 95% CIs, budget); a
    several-seed report (``mus exploit --seeds``) gives a row per probe and a line with the largest gain and the
    spread."""
    reports = [r for r in results if "probes" in r]
    results = flatten_probes(results)
    lines = ["| agent | probe | start | best response's gain, stones/hand | 95% CI | game win rate | 95% CI | "
             "greedy gain | trained | seed |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        g, gg, t = r["gain"], r["gain_greedy"], r["trained"]
        lines.append(f"| {r['agent']} | {r['learner_decides']} | {r.get('warm_start', 'equity')} | "
                     f"{g['stones']:+.3f} | "
                     f"[{g['stones_lo']:+.3f}, {g['stones_hi']:+.3f}] | {g['win']:.3f} | "
                     f"[{g['win_lo']:.3f}, {g['win_hi']:.3f}] | {gg['stones']:+.3f} | "
                     f"{t['decisions'] / 1e6:.0f}M decisions, {t['minutes']:.0f} min | {r['seed']} |")
    for a in reports:
        m = a["max"]
        lines += ["", f"**{a['agent']}** ({a['learner_decides']}), {a['n']} probes: largest gain "
                      f"**{m['stones']:+.3f}** [{m['stones_lo']:+.3f}, {m['stones_hi']:+.3f}] stones/hand "
                      f"({m['start']} start, seed {m['seed']}), spread {a['spread']:.3f}, largest game win rate "
                      f"{a['max_win']['win']:.3f}; each a lower bound on its exploitability."]
    held = {(r["held_out"]["hands"], r["held_out"]["games"], r["held_out"]["eval_seed"]) for r in results}
    lines += ["", "Held out: " + ", ".join(f"{h:,} hands and {g:,} games, deal seed {s}" for h, g, s in sorted(held))
              + ". Commands, in the table's order:", ""]
    lines += [f"* `{c}`" for c in dict.fromkeys(r["command"] for r in results)]     # a --seeds run: one command
    lines += ["", "![exploitability](exploit.png)"]
    return "\n".join(lines)


def bench_markdown(report: dict[str, Any], command: str | None = None) -> str:
    """The performance page's tables from ``mus bench --json`` output (its own ``command`` unless given)."""
    command = command or report.get("command") or "mus bench"
    lines = [f"`{command}` on this 2-core machine (random legal play, median of "
             f"{report.get('repeats', '?')} runs of {report.get('seconds', '?')} s; obs and mask included):", "",
             "| engine / interface | decisions/s | µs/decision |", "|---|---|---|"]
    for k, v in report["results"].items():
        lines.append(f"| {k} | {'not installed' if v is None else f'{v:,.0f}'} | "
                     f"{'' if v is None else f'{1e6 / v:.2f}'} |")
    if report.get("ratios"):
        lines += ["", "| ratio (same run) | × |", "|---|---|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in report["ratios"].items()]
    tournaments = {k: v for k, v in (report.get("tournaments") or {}).items() if v}
    if tournaments:
        lines += ["", "Whole `mus tournament` runs, each a fresh process as a user runs it (the compile cached; "
                      "the agents' decisions included):", "",
                  "| tournament | hands/s | runs | command |", "|---|---|---|---|"]
        for name, t in tournaments.items():
            lines.append(f"| {name} | {t['hands_per_second']:,.0f} | "
                         f"{', '.join(f'{r:,.0f}' for r in t['runs'])} | `{t['command']}` |")
    buf = report.get("buffer_bytes_per_table")
    lines += ["", f"VectorMusEnv memory: {report['state_bytes_per_table']} bytes of state per table"
              + (f", plus {buf:,} bytes of output buffers (observation, mask, step outputs); no per-seat cache."
                 if buf else ".")]
    k = report.get("kernel_seconds")
    if k:
        cpu = (f" ({k['cold_cpu']:.1f} s and {k['cached_cpu']:.1f} s of CPU)" if "cold_cpu" in k else "")
        lines += ["", f"Kernel (numba): cold compile {k['cold']:.1f} s, load from the cache {k['cached']:.1f} s{cpu} "
                      "(a fresh process importing mus_env and running every entry point once, serial and threaded)."]
    return "\n".join(lines)


#: The engine's speed targets, as the design card's "Performance targets" set them (the authority; nothing here
#: adds or relaxes one): (what, how the bench measures it, the bound, "min" or "max", the unit). A measure
#: is a key of the bench's ``results`` (decisions/s), ``ratios``, ``tournaments`` (hands/s), ``kernel_seconds``, or
#: ``us:KEY`` (µs per decision of ``results[KEY]``). The ratios compare decisions per second measured in the same run:
#: ``VectorMusEnv`` stepping 4,096 tables per call against OpenSpiel's ``bridge`` game (a card game; its C++ engine
#: stepped one state at a time from Python, card play without the double-dummy scoring), and the PettingZoo AEC env
#: against PettingZoo's ``texas_holdem_v4`` (the same loop, random legal actions). DESIGN's training target (≥ 120k
#: decisions/s) is measured by ``mus bench-train``, not by ``mus bench``.
BENCH_TARGETS = (
    ("`VectorMusEnv`, 4,096 tables, one thread, against OpenSpiel's `bridge` stepped from Python",
     "vector B=4096 / openspiel bridge", 10, "min", "×"),
    ("the same on both cores (2 threads)", "vector B=4096 2 threads / openspiel bridge", 18, "min", "×"),
    ("`VectorMusEnv`, one table: a decision", "us:vector B=1", 20, "max", "µs"),
    ("the kernel's cold compile, once per machine", "cold", 20, "max", "s"),
    ("`mus_v0.env()` against PettingZoo's `texas_holdem_v4.env()`", "env / texas_holdem_v4", 5, "min", "×"),
    ("`mus tournament` with the baseline agents, `rule` vs `equity`", "rule vs equity", 20_000, "min", "hands/s"),
    ("`mus tournament`, the five-agent ladder (the baselines and `ppo`)", "ladder", 20_000, "min", "hands/s"),
    ("next: `mus_v0.env()` against `texas_holdem_v4.env()` (no snapshot per step)", "env / texas_holdem_v4", 10,
     "min", "×"),
)


def _bench_value(report: dict[str, Any], key: str) -> float | None:
    if key.startswith("us:"):
        v = report["results"].get(key[3:])
        return 1e6 / v if v else None
    for part in ("results", "ratios", "kernel_seconds"):
        if (report.get(part) or {}).get(key) is not None:
            return float(report[part][key])
    t = (report.get("tournaments") or {}).get(key)
    return float(t["hands_per_second"]) if t else None


def _fmt_measure(v: float, unit: str, bound: bool = False) -> str:
    """A measure of :data:`BENCH_TARGETS` as the targets table prints it (a bound with fewer digits)."""
    if unit == "×":
        return f"{v:g}×" if bound else f"{v:.2f}×"
    if unit == "decisions/s" and v >= 1e6:
        text = f"{v / 1e6:.{1 if bound else 2}f}M"
    elif unit in ("decisions/s", "hands/s"):
        text = f"{v:,.0f}"
    else:
        text = f"{v:g}" if bound else f"{v:.{1 if unit == 's' else 2}f}"
    return f"{text} {unit}"


def bench_targets(report: dict[str, Any]) -> str:
    """The performance page's targets (:data:`BENCH_TARGETS`) against ``mus bench --json`` output: the bound, the
    measure and whether it is met."""
    lines = ["| target | bound | measured (the tables above) | met |", "|---|---|---|---|"]
    for what, key, bound, side, unit in BENCH_TARGETS:
        v = _bench_value(report, key)
        bound_text = f"{'≥' if side == 'min' else '≤'} {_fmt_measure(bound, unit, bound=True)}"
        if v is None:
            lines.append(f"| {what} | {bound_text} | not measured | |")
            continue
        met = v >= bound if side == "min" else v <= bound
        lines.append(f"| {what} | {bound_text} | {_fmt_measure(v, unit)} | {'yes' if met else '**no**'} |")
    return "\n".join(lines)


def bench_summary(report: dict[str, Any]) -> str:
    """The README's speed paragraph from ``mus bench --json`` output (``docs/bench.json``)."""
    r, ratios = report["results"], report.get("ratios") or {}
    threads = max(report.get("threads") or [1])
    parts = []
    one, many = r.get("vector B=4096"), r.get(f"vector B=4096 {threads} threads")
    if one:
        bridge = ratios.get("vector B=4096 / openspiel bridge")
        parts.append(f"`VectorMusEnv` {one / 1e6:.2f}M decisions/s on one core stepping 4,096 tables per call"
                     + (f" ({bridge:.1f}× OpenSpiel's `bridge` game in decisions/s: a card game whose C++ engine is "
                        "stepped one state at a time from Python)" if bridge else "")
                     + (f", {many / 1e6:.2f}M on {threads} cores" if many else ""))
    if r.get("env") and r.get("texas_holdem_v4"):
        parts.append(f"`mus_v0.env()` {r['env'] / r['texas_holdem_v4']:.1f}× PettingZoo's `texas_holdem_v4.env()` in "
                     "decisions/s (the same AEC loop, one decision at a time)")
    t = report.get("tournaments") or {}
    if t.get("rule vs equity"):
        parts.append(f"`mus tournament` {t['rule vs equity']['hands_per_second']:,.0f} hands/s for `rule` vs "
                     "`equity`" + (f", {t['ladder']['hands_per_second']:,.0f} for the five-agent ladder"
                                   if t.get("ladder") else ""))
    k = report.get("kernel_seconds")
    if k:
        parts.append(f"the kernel compiles once per machine in {k['cold']:.0f} s and loads from numba's cache in "
                     f"{k['cached']:.1f} s")
    return (f"Measured on the project's 2-core machine (`{report.get('command', 'mus bench')}`, medians; "
            "[Performance](docs/performance.md)): " + "; ".join(parts) + ".")


def signals_markdown(data: dict[str, Any]) -> str:
    """The señas page's value table from a ``mus signals`` run's ``signals_value.json``."""
    from experiments.evaluate.signals_value import markdown_table

    meta = data["meta"]
    return (markdown_table(data["rows"]) + f"\n\n`{meta['command']}` (seed {meta['seed']}, {meta['kings']} kings, "
            f"target {meta['target']}).")


def _write_block(blocks: dict[str, str], name: str, body: str) -> None:
    path = BLOCKS[name]
    blocks[path] = replace_section(blocks[path], name, body)


def update_docs(ladder: str | Path | None = None, bench: str | Path | None = None, bench_command: str | None = None,
                exploit: Sequence[str | Path] = (), signals: str | Path | None = None,
                root: str | Path | None = None, exploit_names: dict[str, str] | None = None) -> list[Path]:
    """Rewrite the generated blocks (see the module docstring) and return the files that changed.

    Args:
        ladder: a tournament's ``results.json``: copied to ``docs/ladder_results.json`` (None: the copy there);
            the evaluation page's ladder and the README's summary are rebuilt from the copy every time.
        bench: ``mus bench --json`` output, copied to ``docs/bench.json`` (None: the copy there); the performance
            page's tables and the README's speed paragraph are rebuilt from the copy every time.
        bench_command: the command recorded with the copy and shown above the bench table (default: the one the
            output records).
        exploit: ``exploit.json`` files of ``mus exploit`` runs (or ``exploit_seeds.json`` reports), in table
            order: copied, with ``exploit_names``, to ``docs/exploit_results.json`` (none: the copy there, when
            there is one), from which the exploitability table is rebuilt every time; given files also redraw
            ``docs/exploit.png``.
        signals: a ``mus signals`` run's ``signals_value.json``.
        root: the repository root (default: this checkout's).
        exploit_names: the name to show for a probed agent's spec in the table, the figure and the commands
            (:func:`renamed_probes`), e.g. ``{"runs/psro/E.pt": "ppo"}`` for a policy probed before it was shipped.

    Raises:
        ValueError: a page lost one of its block markers (the message names the block).
        OSError: an input file cannot be read.
    """
    base = Path(root) if root is not None else ROOT
    texts = {path: (base / path).read_text(encoding="utf-8") for path in sorted(set(BLOCKS.values()))}
    blocks = dict(texts)
    _write_block(blocks, "action-table", action_table())
    _write_block(blocks, "observation-table", observation_table())
    _write_block(blocks, "state-table", state_table())
    _write_block(blocks, "reward-table", reward_table())
    _write_block(blocks, "sign-table", sign_table())
    _write_block(blocks, "signal-observation-table", observation_table(signals=True))
    # every input is read (and rendered) before anything is written: a bad one changes nothing
    def read(f: str | Path) -> Any:
        return json.loads(Path(f).read_text(encoding="utf-8"))

    results_path, bench_path = base / "docs" / "ladder_results.json", base / "docs" / "bench.json"
    exploit_path, reference_path = base / "docs" / "exploit_results.json", base / REFERENCE_LADDER
    results = read(ladder if ladder is not None else results_path)
    report = read(bench if bench is not None else bench_path)
    if bench_command:
        report["command"] = bench_command
    if exploit:
        probes: dict[str, Any] | None = {"names": dict(exploit_names or {}), "results": [read(f) for f in exploit]}
    else:
        probes = read(exploit_path) if exploit_path.is_file() else None
    signal_data = read(signals) if signals is not None else None
    version = ladder_version(results, read(reference_path) if reference_path.is_file() else None)
    _write_block(blocks, "ladder", ladder_markdown(results, version=version))
    _write_block(blocks, "ladder-summary", ladder_summary(results, version=version))
    _write_block(blocks, "bench", bench_markdown(report))
    _write_block(blocks, "bench-targets", bench_targets(report))
    _write_block(blocks, "bench-summary", bench_summary(report))
    shown = renamed_probes(probes["results"], probes["names"]) if probes else []
    if shown:
        _write_block(blocks, "exploit", exploit_markdown(shown))
    if signal_data is not None:
        _write_block(blocks, "signals-value", signals_markdown(signal_data))
    benchmark_path = base / "docs" / "benchmark_results.json"
    _write_block(blocks, "benchmark", benchmark_markdown(read(benchmark_path) if benchmark_path.is_file() else []))
    if ladder is not None:
        results_path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if bench is not None or bench_command:
        bench_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if exploit:
        from experiments.population.exploit import exploit_bars

        exploit_path.write_text(json.dumps(probes, indent=1) + "\n", encoding="utf-8")
        exploit_bars(flatten_probes(shown), base / "docs" / "exploit.png")
    changed = []
    for path, text in blocks.items():
        if text != texts[path]:
            (base / path).write_text(text, encoding="utf-8")
            changed.append(base / path)
    return changed
