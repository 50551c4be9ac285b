"""Build ``docs/research/candidates.json`` once, from the candidates' records in git history.

The records of the trained candidates were folders under ``agents/data/candidates/`` until commit ``7be6826``; they
left the package after it (their weights with them) and stay readable in git history:
``git show 7be6826:agents/data/candidates/psro_h/recipe.json``. This script extracts that tree into a temporary
folder, reads every record (its ``recipe.json``, ``card.json``, run and distillation files and every probe result)
and writes one entry per record to the data file (schema: ``docs/research/candidates.md``). Paths of the machines
that ran the experiments (their scratch folders ``exp/X``) are written as run folders ``runs/X``; a record's own
files as ``candidates/NAME/...``.

It was run once, from a checkout with the ``train`` extra (it reads the weights to tell a record's own probes from
those of the network it started from)::

    python docs/research/tools/build_candidates.py [COMMIT] > docs/research/candidates.json

It is kept to show where each figure came from; it is not part of the package.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

RECORDS = "agents/data/candidates"
#: Each record's short name as the notes use it (a folder ``distill_k`` is candidate K); ``psro_e`` is ``ppo``.
SHIPPED, REPLACED = "psro_e", "ppo_2026_11"
PROTOCOL_DECISIONS, QUICK_DECISIONS, RATE = 80_000_000, 13_000_000, 3e-4


def label(folder: str) -> str:
    if folder == REPLACED:
        return "ppo (2026-11)"
    return folder.split("_", 1)[1].upper()


def clean(text: Any) -> Any:
    """``text`` (or every string in it) without the paths of the machines that ran it."""
    if isinstance(text, dict):
        return {k: clean(v) for k, v in text.items()}
    if isinstance(text, list):
        return [clean(v) for v in text]
    if not isinstance(text, str):
        return text
    text = re.sub(r"(?:/work/[^\s,:]*?/)?(?:agents/data/)?candidates/", "candidates/", text)
    text = re.sub(r"/(?:tmp|work)/exp/", "runs/", text)
    text = re.sub(r"/work/[^\s,:]*?/agents/data/", "agents/data/", text)
    return text


def _near(decisions: int, budget: int) -> bool:
    return 0.95 * budget <= decisions <= budget


def probe_kind(p: dict[str, Any]) -> str:
    if p["learner_decides"] != "all":
        return "lance"
    if p["learning_rate"] == RATE and _near(p["decisions"], PROTOCOL_DECISIONS) and p["start"] in ("agent", "equity"):
        return "protocol"
    if p["learning_rate"] == RATE and _near(p["decisions"], QUICK_DECISIONS) and p["start"] == "agent":
        return "quick"
    return "other"


def probes(folder: Path, digest: str | None) -> list[dict[str, Any]]:
    out = []
    for path in sorted(folder.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found = (data["results"] if isinstance(data, dict) and "probes" in data and "results" in data
                 else [data] if isinstance(data, dict) and "gain" in data and "trained" in data else [])
        for r in found:
            g = r["gain"]
            frozen = (r.get("frozen") or {}).get("parameters_sha256")
            p = {"file": path.relative_to(folder).as_posix(),
                 "weights": ("kept" if digest and frozen == digest else "other" if frozen else "unknown"),
                 "learner_decides": r.get("learner_decides", "all"), "start": r.get("warm_start", "equity"),
                 "learning_rate": r.get("learning_rate", RATE), "decisions": int(r["trained"]["decisions"]),
                 "minutes": round(float(r["trained"].get("minutes", 0.0)), 2), "seed": r["seed"],
                 "stones": g["stones"], "stones_lo": g["stones_lo"], "stones_hi": g["stones_hi"],
                 "win": g["win"], "win_lo": g["win_lo"], "win_hi": g["win_hi"],
                 "greedy_stones": (r.get("gain_greedy") or {}).get("stones"),
                 "by_lance": g.get("by_lance"), "command": clean(r.get("command"))}
            if p["weights"] == "other":
                p["frozen_sha256"] = frozen
            p["kind"] = probe_kind(p)
            out.append(p)
    return out


def commands(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.json")):
        if not (path.name.endswith("run.json") or path.name in ("recipe.json", "distill.json")):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        for c in [data.get("command"), *data.get("resumed_with", []),
                  *(s.get("command") for s in data.get("sessions", []))]:
            if isinstance(c, str) and clean(c) not in found:
                found.append(clean(c))
    return found


def seeds_and_preset(folder: Path, cmds: list[str]) -> tuple[list[int], str | None]:
    seeds, preset = [], None
    recipe = folder / "recipe.json"
    if recipe.is_file():
        s = json.loads(recipe.read_text(encoding="utf-8"))["settings"]
        seeds.append(int(s.get("seed", 0)))
    for c in cmds:
        m = re.search(r"--seed (\d+)", c)
        if m and c.startswith(("mus train", "mus league")) and int(m.group(1)) not in seeds:
            seeds.append(int(m.group(1)))
        m = re.search(r"--preset (\S+)", c)
        if m and preset is None:
            preset = m.group(1)
    for name in ("train_args.json", "args.json"):
        if not seeds and (folder / name).is_file():
            seeds.append(int(json.loads((folder / name).read_text(encoding="utf-8"))["seed"]))
    return seeds, preset


def round_probes(folder: Path) -> list[dict[str, Any]]:
    """The largest whole-game probe of each step of a recipe (``recipe.json``'s ``*/probes`` steps: the probes of the
    rounds' networks, which the record does not keep as files)."""
    path = folder / "recipe.json"
    if not path.is_file():
        return []
    out = []
    for step, v in json.loads(path.read_text(encoding="utf-8"))["steps"].items():
        if step.endswith("/probes") and v.get("learner_decides", "all") == "all":
            m = v["max"]
            out.append({"step": step, "n": v["n"], "start": m["start"], "seed": m["seed"],
                        "learning_rate": m.get("learning_rate", RATE), "decisions": int(m["decisions"]),
                        "stones": m["stones"], "stones_lo": m["stones_lo"], "stones_hi": m["stones_hi"],
                        "win": m["win"]})
    return out


def margins(folder: Path) -> dict[str, Any]:
    """The card's sampled-play rows against the baselines and ``ppo`` (E: on E's own card, written before it was
    shipped, ``ppo`` was the agent it replaced, so that row is ``ppo_2026_11``), with the agent the card played."""
    card = folder / "card.json"
    out: dict[str, Any] = {}
    if card.is_file():
        data = json.loads(card.read_text(encoding="utf-8"))
        out["card_of"] = clean(data.get("spec"))
        for row in data["rows"]:
            opponent = "ppo" if row["opponent"] == SHIPPED else row["opponent"]
            if folder.name == SHIPPED and opponent == "ppo":
                opponent = "ppo_2026_11"
            if row["play"] == "sampled" and opponent in ("rule", "equity", "ordago", "ppo", "ppo_2026_11"):
                out[opponent] = {k: row[k] for k in ("stones", "stones_lo", "stones_hi", "win", "win_lo", "win_hi")}
    return out


def entry(folder: Path) -> dict[str, Any]:
    from agents.policy import build_net, load_policy_file, parameters_digest
    from experiments.population.ship_agent import read_recipe

    policy = folder / "policy.pt"
    digest = parameters_digest(build_net(load_policy_file(policy), policy)) if policy.is_file() else None
    cmds = commands(folder)
    seeds, preset = seeds_and_preset(folder, cmds)
    try:
        recipe = read_recipe(folder)
    except ValueError:                 # a record that kept the recipe's own file but not its replica's
        data = json.loads((folder / "recipe.json").read_text(encoding="utf-8"))
        keep = data["steps"].get("keep")
        recipe = {"minutes": float(data["seconds"]) / 60 if "seconds" in data else None,
                  "machine": data.get("machine"),
                  "kept": None if keep is None else "refined" if keep.get("refined")
                  else "distilled" if keep.get("distilled") else f"round {keep['round']}"}
    found = probes(folder, digest)
    return {"name": folder.name, "label": label(folder.name), "shipped": folder.name == SHIPPED,
            "commands": cmds, "preset": preset, "seeds": seeds,
            "minutes": round(recipe["minutes"], 2) if recipe and recipe["minutes"] is not None else None,
            "machine": recipe["machine"] if recipe else None,
            "kept": clean(recipe["kept"]) if recipe else None,
            "parameters_sha256": digest, "margins": margins(folder), "probes": found,
            "round_probes": round_probes(folder),
            "quick_probes": {str(p["seed"]): p["stones"] for p in found
                             if p["kind"] == "quick" and p["weights"] == "kept"}}


def main(commit: str = "7be6826") -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, RECORDS], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        base = Path(tmp) / RECORDS
        folders = sorted(p for p in base.iterdir() if p.is_dir())
        folders.sort(key=lambda p: (p.name != REPLACED, len(label(p.name)), label(p.name)))   # as the notes go
        return {"version": 1, "source": f"git show {commit}:{RECORDS}/NAME/...",
                "candidates": [entry(p) for p in folders]}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:2]), indent=1, ensure_ascii=False))
