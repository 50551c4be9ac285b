"""Whether quick probes (13M decisions from the agent's own weights) order the candidates as 80M probes from the
same start do, over the records of ``docs/research/candidates.json``.

Usage: ``python docs/research/tools/probe_rank_agreement.py [CANDIDATES_JSON]`` from a checkout (default: the notes'
``candidates.json``). For each candidate with both kinds
of probe of its kept weights (every decision learned, learning rate 3e-4, start ``agent``), the mean gain of each
kind over its probe seeds; then Kendall's tau and Spearman's rho between the two orders
(``experiments.population.study_table.rank_agreement``) and the table, as JSON on stdout. A candidate whose
probes are not in its ``probes`` list counts the seeds of its ``quick_probes`` as its quick probes.
"""

from __future__ import annotations

import json
import pathlib
import statistics
import sys

from experiments.population.study_table import rank_agreement

CANDIDATES = pathlib.Path(__file__).resolve().parents[1] / "candidates.json"
QUICK, LONG = 12_976_128, 79_953_920


def gains(candidate: dict, decisions: int) -> list[float]:
    """The candidate's probe gains of ``decisions`` decisions (kept weights, all decisions, lr 3e-4, own start)."""
    return [p["stones"] for p in candidate["probes"]
            if p["decisions"] == decisions and p["weights"] == "kept" and p["learner_decides"] == "all"
            and p["start"] == "agent" and p["learning_rate"] == 3e-4]


def main(argv: list[str]) -> int:
    if len(argv) > 1 or any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    records = json.loads(pathlib.Path(argv[0] if argv else CANDIDATES).read_text())["candidates"]
    rows = {}
    for c in records:
        quick = gains(c, QUICK) or [float(v) for v in (c.get("quick_probes") or {}).values()]
        long = gains(c, LONG)
        if quick and long:
            rows[c["name"]] = {"quick": quick, "long": long, "quick_mean": statistics.fmean(quick),
                               "long_mean": statistics.fmean(long)}
    agreement = rank_agreement({k: r["quick_mean"] for k, r in rows.items()},
                               {k: r["long_mean"] for k, r in rows.items()})
    json.dump({"candidates": rows, "agreement": agreement}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
