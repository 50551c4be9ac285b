"""Render the research notes' candidate tables from ``docs/research/candidates.json``.

The data file holds one entry per trained candidate (schema: ``docs/research/candidates.md``). Each table is a
generated block of a research page, between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` (:data:`BLOCKS`);
``tests/test_docs.py`` checks that the pages hold what :func:`render` makes from the data file.

* ``candidates-summary``: every candidate's margins, largest protocol probe, its game win rate, quick probes, minutes
  and what the recipe kept;
* ``candidates-commands``: the command(s) that made each one;
* ``candidates-probes``: every probe of every candidate (start, learning rate, decisions, seed, gain with its 95%
  CI, game win rate, gain by lance);
* ``candidates-before-after``: the shipped ``ppo`` against the one-command candidates K, N, AC, AD, AE and the
  targets of the next shipped agent (issue 33).

A **protocol probe** is 80M decisions at 3e-4 from the ``equity`` clone or the agent's own weights, a **quick
probe** 13M decisions at 3e-4 from the agent's own weights (``kind`` in the data file); only probes of the
candidate's own weights (``weights: "kept"``) count in the summary.

Run ``python docs/research/tools/candidates.py`` from a checkout to rewrite the blocks.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
DATA = Path("docs/research/candidates.json")
#: Generated block -> the research page that holds it, relative to the repository root.
BLOCKS = {
    "candidates-summary": "docs/research/candidates.md",
    "candidates-commands": "docs/research/candidates.md",
    "candidates-probes": "docs/research/candidates.md",
    "candidates-before-after": "docs/research/2026-12-recipe-runs.md",
}
#: The rows of the before/after table: (label in the data file, how it was made).
BEFORE_AFTER = (
    ("E", "three stages of `mus train` and six best responses, run by hand"),
    ("K", "`mus league --preset refine-long --long-probe-start agent --probe-learning-rate 0.003 --distill-rounds 2`"),
    ("N", "the same with `--distill-replicas 2`: the rounds run twice (seeds 0 and 1)"),
    ("AC", "K's command resumed with `--refine-distilled 30000000 --stage-probes 80000000 --stage-probe-seeds 1 "
           "--refine-lance pares,grande` (K's rounds on an AVX2 machine, the stage on an AVX-512 one; its seed-1 "
           "protocol probes not run: its seed-0 one wins 0.545)"),
    ("AD", "AC's command run from scratch in one piece, on one AVX-512 machine (it kept round 2)"),
    ("AE", "AD's command with `--seed 1` on the same kind of machine (it kept the refined network; stopped once and "
           "resumed, other probes beside it for 40 of its minutes)"),
)
#: The targets of the next shipped agent (issue 33), as the before/after table prints them.
TARGETS = {"minutes": "≤ 180", "rule": "≥ +1.5", "equity": "≥ +1.5", "ordago": "≥ +12", "ppo": "≥ 0",
           "protocol": "≤ +0.5 (4)", "win": "≤ 0.53", "quick": "≤ +0.3"}


def load(root: Path = ROOT) -> dict[str, Any]:
    """The data file, checked for its version.

    Raises:
        ValueError: not version 1 of the schema.
    """
    data = json.loads((root / DATA).read_text(encoding="utf-8"))
    if data.get("version") != 1:
        raise ValueError(f"{DATA}: version {data.get('version')!r}, this renderer reads version 1")
    return data


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:+.2f}"


def summary_row(c: dict[str, Any]) -> dict[str, Any]:
    """What the tables show of one candidate: margins (stones/hand, sampled play), the largest protocol probe of its
    own weights, how many there were and the largest game win rate among them, quick probes by seed."""
    own = [p for p in c["probes"] if p["weights"] == "kept"]
    protocol = [p for p in own if p["kind"] == "protocol"]
    m = c["margins"]
    return {"margins": {o: (m[o]["stones"] if o in m else None) for o in ("rule", "equity", "ordago", "ppo")},
            "protocol": max((p["stones"] for p in protocol), default=None), "protocol_n": len(protocol),
            "win": max((p["win"] for p in protocol), default=None),
            "quick": {int(k): v for k, v in c["quick_probes"].items()}}


def _minutes(c: dict[str, Any]) -> str:
    return "—" if c["minutes"] is None else f"{c['minutes']:.0f}"


def summary_markdown(data: dict[str, Any]) -> str:
    lines = ["| candidate | record | minutes (one command) | vs `rule` | vs `equity` | vs `ordago` | vs `ppo` | "
             "largest protocol probe (probes) | its game win rate | quick probes (seeds 0, 1) | kept |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["candidates"]:
        r, m = summary_row(c), c["margins"]
        ppo = ("the replaced agent " + _s(m["ppo_2026_11"]["stones"]) if "ppo_2026_11" in m
               else _s(r["margins"]["ppo"]))
        win = "—" if r["win"] is None else f"{r['win']:.3f}"
        lines.append(f"| {c['label']}{' (shipped `ppo`)' if c['shipped'] else ''} | `{c['name']}` | {_minutes(c)} | "
                     f"{_s(r['margins']['rule'])} | {_s(r['margins']['equity'])} | {_s(r['margins']['ordago'])} | "
                     f"{ppo} | {_s(r['protocol'])} ({r['protocol_n']}) | {win} | "
                     f"{', '.join(_s(r['quick'].get(s)) for s in (0, 1))} | {c['kept'] or '—'} |")
    lines += ["", "Margins: stones/hand on 20,000 held-out duplicate deals (`mus evaluate`, sampled play; — where the "
                  "record kept no card). Probes: the record's own weights only; each a lower bound on its "
                  "exploitability."]
    return "\n".join(lines)


def commands_markdown(data: dict[str, Any]) -> str:
    lines = []
    for c in data["candidates"]:
        seeds = ", ".join(str(s) for s in c["seeds"]) or "—"
        head = f"* **{c['label']}** (`{c['name']}`; preset {c['preset'] or '—'}; seeds {seeds})"
        if not c["commands"]:
            lines.append(head + ": no command kept in the record.")
            continue
        lines.append(head + ":")
        lines += [f"    * `{cmd}`" for cmd in c["commands"]]
    return "\n".join(lines)


def _lances(p: dict[str, Any]) -> str:
    b = p.get("by_lance")
    if not b:
        return "—"
    return ", ".join(f"{k.replace('_credit', '')} {v:+.2f}" for k, v in b.items())


def probes_markdown(data: dict[str, Any]) -> str:
    lines = ["| candidate | file | kind | weights | lance(s) | start | learning rate | decisions | seed | "
             "gain, stones/hand [95% CI] | game win rate | gain by lance |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["candidates"]:
        for p in c["probes"]:
            lines.append(f"| {c['label']} | `{p['file']}` | {p['kind']} | {p['weights']} | {p['learner_decides']} | "
                         f"{p['start']} | {p['learning_rate']:g} | {p['decisions'] / 1e6:.0f}M | {p['seed']} | "
                         f"{p['stones']:+.3f} [{p['stones_lo']:+.3f}, {p['stones_hi']:+.3f}] | {p['win']:.3f} | "
                         f"{_lances(p)} |")
    return "\n".join(lines)


def before_after_markdown(data: dict[str, Any]) -> str:
    by_label = {c["label"]: c for c in data["candidates"]}
    lines = ["| agent | made by | one command, minutes on 2 cores | vs `rule` | vs `equity` | vs `ordago` | vs `ppo` | "
             "largest protocol probe (probes) | its game win rate | quick probes (seeds 0, 1) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for label, made in BEFORE_AFTER:
        c = by_label[label]
        r, m = summary_row(c), summary_row(c)["margins"]
        win = "—" if r["win"] is None else f"{r['win']:.3f}"
        name = "`ppo` (E, shipped)" if c["shipped"] else label
        lines.append(f"| {name} | {made} | {'no' if c['minutes'] is None else _minutes(c)} | {_s(m['rule'])} | "
                     f"{_s(m['equity'])} | {_s(m['ordago'])} | {'itself' if c['shipped'] else _s(m['ppo'])} | "
                     f"{_s(r['protocol'])} ({r['protocol_n']}) | {win} | "
                     f"{', '.join(_s(r['quick'].get(s)) for s in (0, 1))} |")
    t = TARGETS
    lines += [f"| **target** | one command | {t['minutes']} | {t['rule']} | {t['equity']} | {t['ordago']} | "
              f"{t['ppo']} | {t['protocol']} | {t['win']} | {t['quick']} |", "",
              "Margins: stones/hand on 20,000 held-out duplicate deals (`mus evaluate`, sampled play). Protocol "
              "probes: `mus exploit AGENT --seeds 2 --starts agent,equity --decisions 80000000` (the target is four "
              "of them); quick probes: `mus exploit AGENT --warm-start agent --decisions 13000000 --seed 0|1`. "
              "From [the data file](candidates.md)."]
    return "\n".join(lines)


RENDERERS = {"candidates-summary": summary_markdown, "candidates-commands": commands_markdown,
             "candidates-probes": probes_markdown, "candidates-before-after": before_after_markdown}


def render(data: dict[str, Any]) -> dict[str, str]:
    """Every block of :data:`BLOCKS` as the data file makes it."""
    return {name: RENDERERS[name](data) for name in BLOCKS}


def section(text: str, name: str) -> str:
    """The body of block ``name`` in ``text`` (ValueError when the page has no such block)."""
    m = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    if not m:
        raise ValueError(f"no <!-- {name}:start --> ... <!-- {name}:end --> block")
    return m.group(1)


def update(root: Path = ROOT) -> list[Path]:
    """Rewrite the blocks of the research pages from the data file; returns the pages that changed."""
    blocks = render(load(root))
    changed = []
    for page in sorted(set(BLOCKS.values())):
        path = root / page
        text = new = path.read_text(encoding="utf-8")
        for name, body in blocks.items():
            if BLOCKS[name] == page:
                section(new, name)
                new = re.sub(rf"(<!-- {name}:start -->\n)(.*?)(<!-- {name}:end -->)",
                             lambda m, b=body: m.group(1) + b.rstrip("\n") + "\n" + m.group(3), new, flags=re.S)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    if sys.argv[1:]:
        print(f"usage: python {DATA.parent}/tools/candidates.py (no arguments: rewrites the blocks)", file=sys.stderr)
        raise SystemExit(2)
    print("updated " + (", ".join(str(p) for p in update()) or "nothing"))
