"""Regenerate the generated sections of README.md.

* ``observation-table``, ``sign-table``, ``signal-observation-table``: from ``observation_table()``,
  ``mus_env.signals.sign_table()`` and ``observation_table(signals=True)`` (always);
* ``signals-value``: from a ``mus signals`` run (``--signals runs/signals/signals_value.json``);
* ``ladder``: from a tournament's ``results.json`` (``--ladder runs/ladder/results.json``);
* ``bench``: from ``mus bench --json`` output (``--bench bench.json``);
* ``exploit``: from ``mus exploit`` results (``--exploit runs/exploit/*/exploit.json``), with the bar chart
  ``docs/exploit.png``.

Each section sits between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from mus_env.observation import observation_table
from mus_env.signals import sign_table

__all__ = ["replace_section", "ladder_markdown", "bench_markdown", "exploit_markdown", "main"]

README = Path(__file__).resolve().parents[2] / "README.md"


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the section ``name`` replaced by ``body``."""
    pattern = re.compile(rf"(<!-- {name}:start -->\n)(.*?)(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"README has no <!-- {name}:start --> ... <!-- {name}:end --> section")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(3), text)


def section(text: str, name: str) -> str:
    """The current body of section ``name``."""
    m = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    if not m:
        raise ValueError(f"README has no {name} section")
    return m.group(1)


def ladder_markdown(results: dict, command: str) -> str:
    meta = results["meta"]
    # results.json before the ladder said what it rates: Elo only, under "elo", from meta["elo_from"]
    rating = results.get("rating") or {"unit": "Elo", "source": meta["elo_from"],
                                       "method": f"Elo from {meta['elo_from']}, random = 1000", "contradictions": []}
    unit, fmt = rating["unit"], (".0f" if rating["unit"] == "Elo" else "+.2f")
    lines = [f"Measured with `{command}` ({meta['hands_played']:,} hands in {meta['seconds']:.0f} s, "
             f"{meta['hands_per_second']:,.0f} hands/s on this 2-core machine; {rating['method']}):", "",
             f"| rank | agent | {unit} | 95% CI |", "|---|---|---|---|"]
    for rank, (name, r) in enumerate(results["ladder"].items(), 1):
        value = r.get("rating", r.get("elo"))
        lines.append(f"| {rank} | {name} | {value:{fmt}} | ± {1.96 * r['se']:{fmt.lstrip('+')}} |")
    if rating["contradictions"]:
        lines += ["", "The ladder reverses: " + "; ".join(rating["contradictions"]) + "."]
    lines += ["", "Duplicate pairs (stones per hand, A minus B, 95% CI over deals; games: A's win rate):", "",
              "| A | B | deals | stones/hand A−B | 95% CI | game win rate A | 95% CI |",
              "|---|---|---|---|---|---|---|"]
    pairs: dict[tuple[str, str], dict] = {}
    for p in results["pairs"]:
        pairs.setdefault((p["a"], p["b"]), {}).update(
            {"hands": p} if p["mode"] == "hands" else {"games": p})
    for (a, b), d in pairs.items():
        h, g = d.get("hands"), d.get("games")
        hs = (f"{h['deals']:,} | {h['mean_diff']:+.3f} | [{h['ci_low']:+.3f}, {h['ci_high']:+.3f}]" if h
              else "– | – | –")
        gs = (f"{g['game_win_rate']:.3f} | [{g['win_ci_low']:.3f}, {g['win_ci_high']:.3f}]" if g else "– | –")
        lines.append(f"| {a} | {b} | {hs} | {gs} |")
    lines += ["", "![ladder](docs/ladder.png) ![stones per lance](docs/lances.png)"]
    return "\n".join(lines)


def exploit_markdown(results: list[dict]) -> str:
    """The exploitability table: one row per probe (held-out gain of the best response, 95% CIs, budget)."""
    lines = ["| agent | probe | start | best response's gain, stones/hand | 95% CI | game win rate | 95% CI | "
             "greedy gain | trained | seed |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        g, gg, t = r["gain"], r["gain_greedy"], r["trained"]
        lines.append(f"| {r['agent']} | {r['learner_decides']} | {r.get('warm_start', 'equity')} | "
                     f"{g['stones']:+.3f} | "
                     f"[{g['stones_lo']:+.3f}, {g['stones_hi']:+.3f}] | {g['win']:.3f} | "
                     f"[{g['win_lo']:.3f}, {g['win_hi']:.3f}] | {gg['stones']:+.3f} | "
                     f"{t['decisions'] / 1e6:.0f}M decisions, {t['minutes']:.0f} min | {r['seed']} |")
    held = {(r["held_out"]["hands"], r["held_out"]["games"], r["held_out"]["eval_seed"]) for r in results}
    lines += ["", "Held out: " + ", ".join(f"{h:,} hands and {g:,} games, deal seed {s}" for h, g, s in sorted(held))
              + ". Commands, in the table's order:", ""]
    lines += [f"* `{r['command']}`" for r in results]
    lines += ["", "![exploitability](docs/exploit.png)"]
    return "\n".join(lines)


def bench_markdown(report: dict, command: str) -> str:
    lines = [f"`{command}` on this 2-core machine (random legal play, median of "
             f"{report.get('repeats', '?')} runs of {report.get('seconds', '?')} s; obs and mask included):", "",
             "| engine / interface | decisions/s | µs/decision |", "|---|---|---|"]
    for k, v in report["results"].items():
        lines.append(f"| {k} | {'not installed' if v is None else f'{v:,.0f}'} | "
                     f"{'' if v is None else f'{1e6 / v:.2f}'} |")
    if report.get("ratios"):
        lines += ["", "| ratio (same run) | × |", "|---|---|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in report["ratios"].items()]
    buf = report.get("buffer_bytes_per_table")
    lines += ["", f"VectorMusEnv memory: {report['state_bytes_per_table']} bytes of state per table"
              + (f", plus {buf:,} bytes of output buffers (observation, mask, step outputs); no per-seat cache."
                 if buf else ".")]
    k = report.get("kernel_seconds")
    if k:
        lines += ["", f"Kernel (numba): cold compile {k['cold']:.0f} s, load from the cache {k['cached']:.1f} s "
                      "(a fresh process importing mus_env and running every entry point once, serial and threaded)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ladder", help="results.json of a tournament")
    p.add_argument("--ladder-command", default="mus tournament")
    p.add_argument("--bench", help="JSON output of mus bench --json")
    p.add_argument("--bench-command", default="mus bench --json")
    p.add_argument("--exploit", nargs="+", help="exploit.json files of mus exploit runs, in table order")
    p.add_argument("--signals", help="signals_value.json of a mus signals run")
    args = p.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    text = replace_section(text, "observation-table", observation_table())
    text = replace_section(text, "sign-table", sign_table())
    text = replace_section(text, "signal-observation-table", observation_table(signals=True))
    if args.signals:
        from experiments.evaluate.signals_value import markdown_table

        data = json.loads(Path(args.signals).read_text())
        body = (markdown_table(data["rows"]) + f"\n\n`{data['meta']['command']}` (seed {data['meta']['seed']}, "
                f"{data['meta']['kings']} kings, target {data['meta']['target']}).")
        text = replace_section(text, "signals-value", body)
    if args.ladder:
        text = replace_section(text, "ladder", ladder_markdown(json.loads(Path(args.ladder).read_text()),
                                                              args.ladder_command))
    if args.bench:
        text = replace_section(text, "bench", bench_markdown(json.loads(Path(args.bench).read_text()),
                                                            args.bench_command))
    if args.exploit:
        from experiments.evaluate.exploit import exploit_bars

        results = [json.loads(Path(f).read_text()) for f in args.exploit]
        text = replace_section(text, "exploit", exploit_markdown(results))
        exploit_bars(results, README.parent / "docs" / "exploit.png")
    README.write_text(text, encoding="utf-8")
    print(f"updated {README}")


if __name__ == "__main__":
    main()
