"""The cross matrix of several ``mus study`` folders' probes: every best response against every agent of the studies.

Usage: ``python docs/research/tools/cross_probes.py OUT_JSON STUDY_FOLDER [STUDY_FOLDER ...]`` from a checkout.

``mus study --cross`` crosses the probes of one study, whose agents share one list of probe seeds; this crosses the
probes of several studies (agents probed with other seeds, or at other times). Each study folder's ``study.json``
names its agents (label and ``agents.make_agent`` spec) and its probes (start and seed, at each length). Every probe's
policy file (``experiments.train.league.probe_policy_file``) is measured against every agent of every study, on the
probes' own held-out deals (``experiments.population.study.cross_measure``: 20,000 hands and 2,000 games from
seed 2024, sampled play, the default preset's evaluation game). A label given by two studies must name one spec.
Written: ``OUT_JSON`` with one row per (probe, agent) and the mean of each probe row's gains; printed: the matrix
(mean over a trained-on agent's probes [largest]), as markdown.
"""

from __future__ import annotations

import json
import pathlib
import statistics
import sys

from experiments.population.study import cross_measure, probe_folder_of
from experiments.train.league import probe_policy_file
from experiments.train.ppo import make_args

HANDS, GAMES, EVAL_SEED = 20000, 2000, 2024


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    if len(argv) < 2:
        print("usage: cross_probes.py OUT_JSON STUDY_FOLDER [STUDY_FOLDER ...]", file=sys.stderr)
        return 2
    out, folders = pathlib.Path(argv[0]), [pathlib.Path(a) for a in argv[1:]]
    specs: dict[str, str] = {}
    probes: list[tuple[str, str, pathlib.Path]] = []              # (trained-on label, probe key, probe folder)
    for folder in folders:
        study = json.loads((folder / "study.json").read_text(encoding="utf-8"))
        for agent in study["agents"]:
            if specs.setdefault(agent["label"], agent["spec"]) != agent["spec"]:
                print(f"label {agent['label']!r} names two agents: {specs[agent['label']]} and {agent['spec']}",
                      file=sys.stderr)
                return 2
        for length in study["lengths"]:
            for agent in length["agents"]:
                for p in agent["probes"]:
                    where = probe_folder_of(folder, agent["label"], length["decisions"], p["start"], p["seed"])
                    probes.append((agent["label"], f"{p['probe']}-d{length['decisions']}", where))
    config = make_args("default").game_config(training=False)
    rows = []
    for trained_on, key, where in probes:
        for against, spec in specs.items():
            r = cross_measure(probe_policy_file(where), "all", specs[trained_on], spec, HANDS, GAMES, EVAL_SEED,
                              config)
            rows.append({"trained_on": trained_on, "probe": key, "against": against, "stones": r["stones"],
                         "stones_lo": r["stones_lo"], "stones_hi": r["stones_hi"], "win": r["win"]})
            print(f"{trained_on} {key} against {against}: {r['stones']:+.3f}", file=sys.stderr)
    labels = list(specs)
    matrix = {a: {b: [r["stones"] for r in rows if r["trained_on"] == a and r["against"] == b] for b in labels}
              for a in labels}
    summary = {a: {b: {"mean": statistics.fmean(v), "largest": max(v), "n": len(v)} for b, v in row.items() if v}
               for a, row in matrix.items()}
    out.write_text(json.dumps({"command": "python docs/research/tools/cross_probes.py " + " ".join(argv),
                               "agents": specs, "rows": rows, "summary": summary}, indent=1), encoding="utf-8")
    print("| probes trained against \\ evaluated against | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for a in labels:
        if summary[a]:
            cells = [f"{summary[a][b]['mean']:+.3f} [{summary[a][b]['largest']:+.3f}]" for b in labels]
            print(f"| {a} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
