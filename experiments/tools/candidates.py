"""The README's before/after table: the shipped agent, the candidates for its place, and the targets they must meet.

Each candidate is a record under ``agents/data/candidates/<folder>/`` (:data:`CANDIDATES`): its report card
(``card.json``, written by ``mus evaluate``), the probes run against it (``exploit.json`` results of ``mus
exploit``, or ``exploit_seeds.json`` reports, any file name) and, when one command made it, the recipe's
``recipe.json`` (with ``replica<k>/recipe.json`` for its replicas). :func:`candidate_row` reads one record,
:func:`candidates_markdown` writes the table; ``experiments/tools/update_docs.py`` puts it in the README's
``candidates`` block. Which probe is which is read from the probes themselves: a **protocol probe** is 80M
decisions at 3e-4 (from the ``equity`` clone or the agent's own weights), a **quick probe** 13M decisions at 3e-4
from the agent's own weights; probes at other rates or budgets are not shown here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.policy import build_net, load_policy_file, parameters_digest
from experiments.population.exploit_seeds import aggregate_probes
from experiments.population.recipe import CANDIDATE_E_NAME
from experiments.population.ship_agent import read_recipe

__all__ = ["CANDIDATES_DIR", "CANDIDATES", "TARGETS", "candidate_row", "candidates_markdown"]

#: Where the candidates' records are, relative to the repository root.
CANDIDATES_DIR = Path("agents") / "data" / "candidates"
#: The table's rows, in order: (name, record folder, how it was made, whether it is the shipped ``ppo``).
CANDIDATES: tuple[tuple[str, str, str, bool], ...] = (
    ("`ppo` (E, shipped)", "psro_e", "three stages of `mus train` and six best responses, run by hand", True),
    ("K", "distill_k", "`mus league --preset refine-long --long-probe-start agent --probe-learning-rate 0.003 "
     "--distill-rounds 2`", False),
    ("N", "distill_n", "the same with `--distill-replicas 2`: the rounds run twice (seeds 0 and 1)", False),
    ("AC", "refine_ac", "K's command resumed with `--refine-distilled 30000000 --stage-probes 80000000 "
     "--stage-probe-seeds 1 --refine-lance pares,grande` (K's rounds on an AVX2 machine, the stage on an AVX-512 one; "
     "its seed-1 protocol probes not run: its seed-0 one wins 0.545)", False),
    ("AD", "recipe_ad", "AC's command run from scratch in one piece, on one AVX-512 machine (it kept round 2)", False),
    ("AE", "recipe_ae", "AD's command with `--seed 1` on the same kind of machine (it kept the refined network; "
     "stopped once and resumed, other probes beside it for 40 of its minutes)", False),
)
#: The targets of the next shipped agent (issue 33): what a row must reach, as the table prints it.
TARGETS = {"minutes": "≤ 180", "rule": "≥ +1.5", "equity": "≥ +1.5", "ordago": "≥ +12", "ppo": "≥ 0",
           "protocol": "≤ +0.5 (4)", "win": "≤ 0.53", "quick": "≤ +0.3"}
PROTOCOL_DECISIONS, QUICK_DECISIONS, RATE = 80_000_000, 13_000_000, 3e-4


def _probe_results(folder: Path) -> list[dict[str, Any]]:
    """Every probe result in the record (``exploit.json`` results as they are, reports opened into theirs) that
    played the record's own weights (``frozen.parameters_sha256`` is ``policy.pt``'s): a record also keeps the
    probes of the network it started from (``distilled_probe_*`` of a refined stage), which are not its figures."""
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "gain" in data and "trained" in data:
            found.append(data)
        elif isinstance(data, dict) and "probes" in data and "results" in data:
            found += data["results"]
    digest = parameters_digest(build_net(load_policy_file(folder / "policy.pt"), folder / "policy.pt"))
    return [r for r in found if (r.get("frozen") or {}).get("parameters_sha256") == digest]


def _near(decisions: int, budget: int) -> bool:
    """A probe trained for ``budget`` decisions (a run stops at a whole number of updates just below it)."""
    return 0.95 * budget <= decisions <= budget


def candidate_row(folder: Path) -> dict[str, Any]:
    """What the table shows of one record: the margins of its report card over ``rule``, ``equity``, ``ordago``
    and ``ppo`` (candidate E, named ``ppo`` or ``psro_e``; stones/hand, sampled play; None where not measured), the
    largest protocol probe gain, how many protocol probes there were and the largest game win rate among them, the
    quick probes' gains by seed, and the wall time of the one command that made it (None when it was made by
    hand).

    Raises:
        ValueError: ``folder`` does not exist, or a record file cannot be read (OSError too).
    """
    if not folder.is_dir():
        raise ValueError(f"{folder}: no record of this candidate (see experiments/tools/candidates.py's CANDIDATES)")
    card_path = folder / "card.json"
    margins: dict[str, float | None] = dict.fromkeys(("rule", "equity", "ordago", "ppo"))
    if card_path.is_file():
        for row in json.loads(card_path.read_text(encoding="utf-8"))["rows"]:
            opponent = "ppo" if row["opponent"] == CANDIDATE_E_NAME else row["opponent"]   # E by its record's name
            if row["play"] == "sampled" and opponent in margins:
                margins[opponent] = float(row["stones"])
    rows = [aggregate_probes([p])["probes"][0] for p in _probe_results(folder)     # (probed as a file, or by name)
            if p.get("learner_decides", "all") == "all"]                           # whole-game probes only
    protocol = [r for r in rows if _near(r["decisions"], PROTOCOL_DECISIONS) and r["learning_rate"] == RATE
                and r["start"] in ("equity", "agent")]
    quick = [r for r in rows if _near(r["decisions"], QUICK_DECISIONS) and r["learning_rate"] == RATE
             and r["start"] == "agent"]
    recipe = read_recipe(folder)
    return {"margins": margins, "protocol_n": len(protocol),
            "protocol": max((r["stones"] for r in protocol), default=None),
            "win": max((r["win"] for r in protocol), default=None),
            "quick": {int(r["seed"]): float(r["stones"]) for r in quick},
            "minutes": recipe["minutes"] if recipe else None}


def _stones(x: float | None) -> str:
    return "—" if x is None else f"{x:+.2f}"


def candidates_markdown(root: Path) -> str:
    """The before/after table of :data:`CANDIDATES` (records under ``root / CANDIDATES_DIR``) and a row of
    :data:`TARGETS`."""
    lines = ["| agent | made by | one command, minutes on 2 cores | vs `rule` | vs `equity` | vs `ordago` | vs `ppo` | "
             "largest protocol probe (probes) | its game win rate | quick probes (seeds 0, 1) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, folder, made, shipped in CANDIDATES:
        r = candidate_row(root / CANDIDATES_DIR / folder)
        m = r["margins"]
        minutes = "no" if r["minutes"] is None else f"{r['minutes']:.0f}"
        win = "—" if r["win"] is None else f"{r['win']:.3f}"
        lines.append(
            f"| {name} | {made} | {minutes} | {_stones(m['rule'])} | {_stones(m['equity'])} | "
            f"{_stones(m['ordago'])} | {'itself' if shipped else _stones(m['ppo'])} | "
            f"{_stones(r['protocol'])} ({r['protocol_n']}) | {win} | "
            f"{', '.join(_stones(r['quick'].get(s)) for s in (0, 1))} |")
    t = TARGETS
    lines += [f"| **target** | one command | {t['minutes']} | {t['rule']} | {t['equity']} | {t['ordago']} | "
              f"{t['ppo']} | {t['protocol']} | {t['win']} | {t['quick']} |", "",
              "Margins: stones/hand on 20,000 held-out duplicate deals (`mus evaluate`, sampled play). Protocol "
              "probes: `mus exploit AGENT --seeds 2 --starts agent,equity --decisions 80000000` (each a lower bound "
              "on the agent's exploitability; the target is four of them); quick probes: `mus exploit AGENT "
              "--warm-start agent --decisions 13000000 --seed 0|1`. Records: "
              f"[{CANDIDATES_DIR.as_posix()}/]({CANDIDATES_DIR.as_posix()}/); every candidate in "
              "[Exploitability](docs/exploitability.md#history)."]
    return "\n".join(lines)
