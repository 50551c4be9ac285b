"""The table of a study (``mus study``): probes of several agents, summarised over the agents.

A study probes several agents, typically the seeds of one training method, each with several best responses
(probe seeds and starts), at one or more probe lengths, and optionally evaluates every best response against every
agent (the cross matrix). This module is the arithmetic of its table, with no training and no I/O: it takes the
probes' results (``exploit.json`` dicts, :func:`experiments.population.exploit.probe`) and the cross evaluations,
and returns JSON values (:func:`study_table`) and their markdown (:func:`study_markdown`).

For each probe length the table holds

* per agent, every probe's held-out gain (stones/hand, 95% CI) and game win rate, and the agent's largest
  gain (:func:`experiments.population.exploit_seeds.aggregate_probes`'s ``max``);
* over the agents: the mean ± standard error of the per-agent largest gain (and largest win rate), each agent's
  value listed and the worst agent (the largest of them); the same for each probe (start and seed) alone; and the
  split of each agent's largest probe's gain by where it was won (``by_lance``: grande, chica, pares, juego (the
  fourth lance slot: punto where nobody has juego), and the órdago credit), mean ± standard error per part, and the
  same for its betting rates (órdagos and envites per betting decision, refusals per answer, the agent's too);
* the cross matrix: entry (i, j) is the mean over agent i's probes of their gain against agent j (and the largest).

The standard error is the sample standard deviation (``ddof=1``) over the agents divided by ``sqrt(n)``; with one
agent there is none (``se`` is None and ``se_note`` says ``n=1, no SE``). With two probe lengths or more, the
table also says whether the short probes order the agents as the longest ones do (Kendall's tau-b and Spearman's
rho of the agents' largest gains, :func:`kendall_tau`, :func:`spearman_rho`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from experiments.population.exploit_seeds import aggregate_probes

__all__ = ["SCHEMA", "LANCE_PARTS", "RATES", "mean_se", "over_agents", "kendall_tau", "spearman_rho", "rank_agreement",
           "probe_key", "study_table", "study_markdown", "NO_SE"]

#: The version of the table's layout (``study.json``'s ``schema``).
SCHEMA = 1
#: The parts of a gain's split by where it was won (``by_lance`` of a probe's measurement), in order.
LANCE_PARTS = ("grande", "chica", "pares", "juego", "ordago_credit")
#: The betting rates of a measurement kept with the split (the probe's, then the agent's: ``opp_``): the share of
#: betting decisions that were an órdago or an envido, and of answers to a bet that refused it.
RATES = ("ordago_rate", "opp_ordago_rate", "envido_rate", "opp_envido_rate", "no_quiero_rate", "opp_no_quiero_rate")
#: What the table says in place of a standard error over one agent.
NO_SE = "n=1, no SE"


def mean_se(values: Sequence[float]) -> tuple[float, float | None]:
    """The mean of ``values`` and its standard error, ``std(ddof=1) / sqrt(n)`` (None for one value).

    Raises:
        ValueError: no values, or one that is not finite.
    """
    xs = [float(v) for v in values]
    if not xs or not all(math.isfinite(v) for v in xs):
        raise ValueError(f"mean_se: finite values needed, at least one; got {list(values)!r}")
    n = len(xs)
    mean = sum(xs) / n
    if n == 1:
        return mean, None
    var = sum((v - mean) ** 2 for v in xs) / (n - 1)
    return mean, math.sqrt(var) / math.sqrt(n)


def over_agents(values: Mapping[str, float]) -> dict[str, Any]:
    """One figure over the agents (label -> value): ``n``, ``mean``, ``se`` (None for one agent, with ``se_note``),
    every agent's value (``values``, in the labels' order) and the worst agent (``worst``: the largest value, the most
    exploitable agent, and ``worst_label``)."""
    mean, se = mean_se(list(values.values()))
    worst = max(values, key=lambda k: values[k])
    return {"n": len(values), "mean": mean, "se": se, **({"se_note": NO_SE} if se is None else {}),
            "values": {k: float(v) for k, v in values.items()}, "worst": float(values[worst]), "worst_label": worst}


def _ranks(xs: Sequence[float]) -> list[float]:
    """The ranks of ``xs`` (1 = smallest), ties given their average rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _check_pair(a: Sequence[float], b: Sequence[float], what: str) -> None:
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"{what}: two sequences of the same length, at least 2, got {len(a)} and {len(b)}")


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Kendall's tau-b of two scorings of the same items (1: the same order, -1: reversed; ties count as neither);
    None when one scoring ties every item (no order to compare).

    Raises:
        ValueError: sequences of different lengths or shorter than 2.
    """
    _check_pair(a, b, "kendall_tau")
    concordant = discordant = ties_a = ties_b = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            da, db = a[i] - a[j], b[i] - b[j]
            if da == 0 and db == 0:
                continue
            if da == 0:
                ties_a += 1
            elif db == 0:
                ties_b += 1
            elif (da > 0) == (db > 0):
                concordant += 1
            else:
                discordant += 1
    denom = math.sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b))
    return (concordant - discordant) / denom if denom else None


def spearman_rho(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rho: the correlation of the two scorings' ranks (ties at their average rank); None when one
    scoring ties every item.

    Raises:
        ValueError: sequences of different lengths or shorter than 2.
    """
    _check_pair(a, b, "spearman_rho")
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va, vb = sum((x - ma) ** 2 for x in ra), sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(va * vb) if va and vb else None


def rank_agreement(short: Mapping[str, float], long: Mapping[str, float]) -> dict[str, Any]:
    """Whether the scores ``short`` (label -> a short probe's figure) order the agents as ``long`` does: both orders
    (most exploitable first), Kendall's tau-b and Spearman's rho (None with fewer than two agents, with a note)."""
    labels = list(long)
    if set(short) != set(labels):
        raise ValueError(f"rank_agreement: the same agents in both, got {sorted(short)} and {sorted(labels)}")
    out: dict[str, Any] = {"n": len(labels),
                           "order_short": sorted(labels, key=lambda k: -short[k]),
                           "order_long": sorted(labels, key=lambda k: -long[k])}
    if len(labels) < 2:
        return {**out, "kendall_tau": None, "spearman_rho": None, "note": "one agent: no order to compare"}
    a, b = [short[k] for k in labels], [long[k] for k in labels]
    return {**out, "kendall_tau": kendall_tau(a, b), "spearman_rho": spearman_rho(a, b)}


def probe_key(result: Mapping[str, Any]) -> str:
    """A probe's name within an agent's probes: ``<start>-seed<seed>`` (as its folder)."""
    return f"{result.get('warm_start', 'equity')}-seed{result['seed']}"


def _length_table(decisions: int, labels: Sequence[str], specs: Sequence[str],
                  results: Mapping[str, Sequence[Mapping[str, Any]]],
                  cross: Mapping[tuple[str, str, str], Mapping[str, Any]] | None) -> dict[str, Any]:
    """The table of one probe length (see :func:`study_table`)."""
    agents, largest, largest_win, by_probe = [], {}, {}, {}
    for label, spec in zip(labels, specs, strict=True):
        report = aggregate_probes(list(results[label]))
        rows = [{"probe": probe_key(r), **row} for r, row in zip(report["results"], report["probes"], strict=True)]
        top = report["max"]
        key = probe_key({"warm_start": top["start"], "seed": top["seed"]})
        gain = next(r for r in results[label] if probe_key(r) == key)["gain"]
        agents.append({"label": label, "spec": spec, "n": report["n"], "probes": rows,
                       "max": {"probe": key, **top, "rates": {k: gain[k] for k in RATES if k in gain}},
                       "max_win": report["max_win"]["win"], "spread": report["spread"], "mean": report["mean"]})
        largest[label], largest_win[label] = report["max"]["stones"], report["max_win"]["win"]
        for row in rows:
            by_probe.setdefault(row["probe"], {})[label] = row["stones"]
    uneven = [k for k, v in by_probe.items() if len(v) != len(labels)]
    if uneven:
        raise ValueError(f"every agent needs the same probes; {', '.join(uneven)} is missing for some")
    split: dict[str, Any] = {}
    if all(a["max"]["by_lance"] for a in agents):
        split = {part: over_agents({a["label"]: float(a["max"]["by_lance"].get(part, 0.0)) for a in agents})
                 for part in LANCE_PARTS}
    rates = {k: over_agents({a["label"]: float(a["max"]["rates"][k]) for a in agents}) for k in RATES
             if all(k in a["max"]["rates"] for a in agents)}
    table: dict[str, Any] = {
        "decisions": decisions, "agents": agents,
        "over_agents": {"largest_gain": over_agents(largest), "largest_win": over_agents(largest_win),
                        "by_probe": {k: over_agents(v) for k, v in by_probe.items()},
                        "by_lance": split, "rates": rates},
    }
    if cross is not None:
        table["cross"] = _cross_table(labels, results, cross)
    return table


def _cross_table(labels: Sequence[str], results: Mapping[str, Sequence[Mapping[str, Any]]],
                 cross: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> dict[str, Any]:
    """The cross matrix: ``mean[i][j]`` and ``max[i][j]`` over agent ``labels[i]``'s probes of their gain against
    ``labels[j]`` (``cross[(i_label, probe_key, j_label)]``, a measurement row), and each probe's row."""
    probes, mean, largest, win = [], [], [], []
    for i in labels:
        keys = [probe_key(r) for r in results[i]]
        for k in keys:
            missing = [j for j in labels if (i, k, j) not in cross]
            if missing:
                raise ValueError(f"cross matrix: the probe {k} of {i} was not evaluated against {', '.join(missing)}")
            probes.append({"agent": i, "probe": k, "against": {j: float(cross[i, k, j]["stones"]) for j in labels},
                           "win": {j: float(cross[i, k, j]["win"]) for j in labels}})
        mean.append([sum(float(cross[i, k, j]["stones"]) for k in keys) / len(keys) for j in labels])
        largest.append([max(float(cross[i, k, j]["stones"]) for k in keys) for j in labels])
        win.append([sum(float(cross[i, k, j]["win"]) for k in keys) / len(keys) for j in labels])
    return {"rows": list(labels), "cols": list(labels), "mean": mean, "max": largest, "win": win, "probes": probes,
            "note": "row i: the best responses trained against agent i; column j: evaluated against agent j"}


def study_table(labels: Sequence[str], specs: Sequence[str],
                results: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
                cross: Mapping[int, Mapping[tuple[str, str, str], Mapping[str, Any]]] | None = None,
                command: str = "") -> dict[str, Any]:
    """The study's table as JSON values (see the module docstring).

    Args:
        labels: the agents' labels, in order; ``specs`` their ``make_agent`` specs.
        results: probe length (decisions) -> label -> that agent's probe results at that length (every agent the
            same probes).
        cross: probe length -> ``(label_i, probe_key, label_j)`` -> the measurement of agent ``label_i``'s probe
            against agent ``label_j`` (a :func:`experiments.population.exploit.measure` row); None: no cross matrix.
        command: the command line that made the study.

    Raises:
        ValueError: agents without results, uneven probes, or a cross matrix with a missing entry.
    """
    if not labels or len(labels) != len(specs):
        raise ValueError(f"study_table: one spec per label, at least one; got {len(labels)} and {len(specs)}")
    lengths = sorted(results)
    if not lengths:
        raise ValueError("study_table: no probe length")
    for d in lengths:
        missing = [label for label in labels if not results[d].get(label)]
        if missing:
            raise ValueError(f"study_table: no probe results for {', '.join(missing)} at {d:,} decisions")
    tables = [_length_table(d, labels, specs, results[d], None if cross is None else cross[d]) for d in lengths]
    agreement = []
    longest = tables[-1]["over_agents"]["largest_gain"]["values"]
    for t in tables[:-1]:
        agreement.append({"short": t["decisions"], "long": tables[-1]["decisions"],
                          **rank_agreement(t["over_agents"]["largest_gain"]["values"], longest)})
    return {"schema": SCHEMA, "command": command, "agents": [{"label": a, "spec": s} for a, s in zip(labels, specs,
                                                                                                 strict=True)],
            "lengths": tables, "rank_agreement": agreement,
            "note": "every gain is a lower bound on the agent's exploitability (stones/hand, held out); standard "
                    "errors are over the agents: std(ddof=1)/sqrt(n)"}


def _over_agents_table(title: str, column: str, labels: list[str], rows: list[tuple[str, Mapping[str, Any]]],
                       fmt: str) -> list[str]:
    """Markdown lines of a table: one row per ``(name, figure)`` of :func:`over_agents`, its mean ± SE and each
    agent's value (``labels``), in ``fmt``."""
    lines = ["", title, "", f"| {column} | mean ± SE | " + " | ".join(labels) + " |",
             "|---|---|" + "---|" * len(labels)]
    return lines + [f"| {name} | {_pm(s, fmt)} | " + " | ".join(f"{s['values'][k]:{fmt}}" for k in labels) + " |"
                    for name, s in rows]


def _pm(s: Mapping[str, Any], fmt: str = "+.3f") -> str:
    """``mean ± se`` of an :func:`over_agents` figure (``n=1, no SE`` for one agent)."""
    return f"{s['mean']:{fmt}} ± {s['se']:.3f}" if s["se"] is not None else f"{s['mean']:{fmt}} ({NO_SE})"


def _each(s: Mapping[str, Any], fmt: str = "+.3f") -> str:
    return ", ".join(f"{k} {v:{fmt}}" for k, v in s["values"].items())


def _part(part: str) -> str:
    return "órdago credit" if part == "ordago_credit" else part


def study_markdown(table: Mapping[str, Any]) -> str:
    """The table as a markdown page: per probe length, the agents' probes, the figures over the agents, the split by
    where the gains were won, the cross matrix; then the rank agreement of the lengths."""
    out = ["# Study: probes of " + ", ".join(f"{a['label']} (`{a['spec']}`)" for a in table["agents"]), ""]
    if table.get("command"):
        out += [f"`{table['command']}`", ""]
    out += ["Gains are held-out stones/hand of a best response over the agent (95% CI), lower bounds on its "
            "exploitability; ± is the standard error over the agents (std ddof=1 / sqrt(n)).", ""]
    for t in table["lengths"]:
        keys = [p["probe"] for p in t["agents"][0]["probes"]]
        out += [f"## Probes of {t['decisions']:,} decisions", "",
                "| agent | " + " | ".join(keys) + " | largest | largest win rate |",
                "|---|" + "---|" * (len(keys) + 2)]
        for a in t["agents"]:
            cells = {p["probe"]: f"{p['stones']:+.3f} [{p['stones_lo']:+.3f}, {p['stones_hi']:+.3f}], win "
                                 f"{p['win']:.3f}" for p in a["probes"]}
            out.append(f"| {a['label']} | " + " | ".join(cells[k] for k in keys)
                       + f" | **{a['max']['stones']:+.3f}** ({a['max']['probe']}) | {a['max_win']:.3f} |")
        o = t["over_agents"]
        g = o["largest_gain"]
        out += ["", f"- largest gain over the agents: **{_pm(g)}** (n={g['n']}: {_each(g)}); worst "
                    f"{g['worst_label']} {g['worst']:+.3f}",
                f"- largest game win rate: {_pm(o['largest_win'], '.3f')} ({_each(o['largest_win'], '.3f')})"]
        out += [f"- probe {k}: {_pm(s)} ({_each(s)})" for k, s in o["by_probe"].items()]
        labels = list(g["values"])
        if o["by_lance"]:
            out += _over_agents_table("Where each agent's largest probe won its gain:", "part", labels,
                                      [(_part(part), s) for part, s in o["by_lance"].items()], "+.3f")
        if o["rates"]:
            out += _over_agents_table("How each agent's largest probe (and the agent, `opp_`) bet:", "rate", labels,
                                      list(o["rates"].items()), ".3f")
        if "cross" in t:
            c = t["cross"]
            out += ["", "Cross matrix (row: the probes trained against that agent, mean over them [largest]; column: "
                        "the agent they are evaluated against):", "",
                    "| trained against \\ against | " + " | ".join(c["cols"]) + " |", "|---|" + "---|" * len(c["cols"])]
            out += [f"| {r} | " + " | ".join(f"{m:+.3f} [{x:+.3f}]" for m, x in zip(c["mean"][i], c["max"][i],
                                                                                      strict=True)) + " |"
                    for i, r in enumerate(c["rows"])]
        out.append("")
    for r in table["rank_agreement"]:
        tau = "none" if r["kendall_tau"] is None else f"{r['kendall_tau']:+.3f}"
        rho = "none" if r["spearman_rho"] is None else f"{r['spearman_rho']:+.3f}"
        out += [f"Rank agreement, {r['short']:,} against {r['long']:,} decisions (largest gain, n={r['n']}): Kendall "
                f"tau-b {tau}, Spearman rho {rho}; short order {', '.join(r['order_short'])}, long order "
                f"{', '.join(r['order_long'])}" + (f" ({r['note']})" if r.get("note") else ""), ""]
    return "\n".join(out)
