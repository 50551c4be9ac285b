"""What a probe's stones are worth in games: the game win rate of probes against their stone gain, by lance.

Every ``mus exploit`` result records both a probe's stone gain and its game win rate, and where the stones came from
(``gain.by_lance``: grande, chica, pares, juego and the órdago credit). This tool reads every full probe
(``learner_decides`` ``all``) of the research data file (``docs/research/candidates.json``) or of a folder of
``mus exploit`` results, once each, and fits by least squares

* ``win = a + b * stones``: what one stone per hand of probe gain is worth in games;
* ``win = a + sum_l b_l * stones_l`` over the lances: which stones decide games,

each coefficient with a 95% interval from resampling the probes (a percentile bootstrap): the lances' parts of a gain
move together, and with a few dozen probes their coefficients are far less certain than the first fit's.

Run ``python docs/research/tools/probe_games.py [SOURCE]`` from a checkout: SOURCE is the data file (the default)
or a folder of ``exploit.json`` / ``exploit_seeds.json`` files. A research script, not part of the package.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["LANCE_TERMS", "DATA", "data_points", "probe_points", "fit_game_wins", "fit_markdown", "main"]

#: The parts of a probe's gain, in the order of the fit's coefficients.
LANCE_TERMS = ("grande", "chica", "pares", "juego", "ordago_credit")


#: The research data file, relative to the repository root.
DATA = Path(__file__).resolve().parents[1] / "candidates.json"


def data_points(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every full probe of the research data file's candidates (version 1) that recorded its stones by lance, once
    each (the same probe kept in two records counts once)."""
    points: dict[tuple[float, float, str], dict[str, Any]] = {}
    for c in data["candidates"]:
        for p in c["probes"]:
            if p["learner_decides"] != "all" or not p.get("by_lance"):
                continue
            weights = c["parameters_sha256"] if p["weights"] == "kept" else p.get("frozen_sha256")
            key = (float(p["stones"]), float(p["win"]), str(weights))
            points.setdefault(key, {"stones": key[0], "win": key[1], "file": f"{c['name']}/{p['file']}",
                                    **{t: float(p["by_lance"].get(t, 0.0)) for t in LANCE_TERMS}})
    return list(points.values())


def probe_points(source: str | Path) -> list[dict[str, Any]]:
    """Every full probe of ``source``, once each: the research data file (:func:`data_points`), or a folder whose
    ``exploit.json``, ``exploit_seeds.json`` or other files hold ``mus exploit`` results (the same probe copied into
    two files counts once): its stones, game win rate and stones by lance (absent parts count 0)."""
    source = Path(source)
    if source.is_file():
        return data_points(json.loads(source.read_text(encoding="utf-8")))
    points: dict[tuple[float, float, str], dict[str, Any]] = {}
    for path in sorted(source.rglob("*.json")):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        found = report.get("results", [report]) if isinstance(report, dict) else []
        for r in found:
            gain = r.get("gain") if isinstance(r, dict) else None
            if (not isinstance(gain, dict) or r.get("learner_decides", "all") != "all" or "win" not in gain
                    or "by_lance" not in gain):
                continue
            key = (float(gain["stones"]), float(gain["win"]), str((r.get("frozen") or {}).get("parameters_sha256")))
            points.setdefault(key, {"stones": key[0], "win": key[1], "file": str(path),
                                    **{t: float(gain["by_lance"].get(t, 0.0)) for t in LANCE_TERMS}})
    return list(points.values())


def fit_game_wins(points: list[dict[str, Any]], resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The two least-squares fits of this script's docstring over ``points``, with 95%
    intervals from ``resamples`` bootstrap resamples of the points (seeded: the same points give the same intervals).

    Returns:
        ``{"n", "stones": {"intercept", "per_stone", "residual_sd"}, "lances": {"intercept", <lance>: per stone...,
        "residual_sd"}, "intervals": {"per_stone" or <lance>: (low, high)}, "win_at_half_a_stone"}``.

    Raises:
        ValueError: fewer points than the lance fit has coefficients (the message says how many were found).
    """
    if len(points) < len(LANCE_TERMS) + 2:
        raise ValueError(f"{len(points)} probe result(s) with a game win rate and stones by lance: the fit needs at "
                         f"least {len(LANCE_TERMS) + 2}")
    win = np.array([p["win"] for p in points])
    x_stones = np.column_stack([np.ones(len(points)), [p["stones"] for p in points]])
    x_lance = np.column_stack([np.ones(len(points)), *([p[t] for p in points] for t in LANCE_TERMS)])

    def fit(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, float]:
        coef, *_ = np.linalg.lstsq(x[rows], win[rows], rcond=None)
        return coef, float(np.std(win[rows] - x[rows] @ coef))

    every = np.arange(len(points))
    by_stones, sd = fit(x_stones, every)
    by_lance, sd_lance = fit(x_lance, every)
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(points), len(points)) for _ in range(resamples)]
    slopes = np.array([fit(x_stones, rows)[0][1] for rows in draws])
    parts = np.array([fit(x_lance, rows)[0][1:] for rows in draws])
    intervals = {"per_stone": tuple(np.percentile(slopes, [2.5, 97.5]).tolist()),
                 **{t: tuple(np.percentile(parts[:, i], [2.5, 97.5]).tolist()) for i, t in enumerate(LANCE_TERMS)}}
    return {"n": len(points), "intervals": intervals,
            "stones": {"intercept": float(by_stones[0]), "per_stone": float(by_stones[1]), "residual_sd": sd},
            "lances": {"intercept": float(by_lance[0]), **{t: float(c) for t, c in zip(LANCE_TERMS, by_lance[1:],
                                                                                         strict=True)},
                       "residual_sd": sd_lance},
            "win_at_half_a_stone": float(by_stones[0] + 0.5 * by_stones[1])}


def fit_markdown(fit: dict[str, Any]) -> str:
    """The fits as a short markdown report."""
    s, lance, ci = fit["stones"], fit["lances"], fit["intervals"]
    rows = "\n".join(f"| {t.replace('_', ' ')} | {lance[t]:+.3f} | [{ci[t][0]:+.3f}, {ci[t][1]:+.3f}] |"
                     for t in LANCE_TERMS)
    return (f"{fit['n']} probes. Game win rate = {s['intercept']:.3f} {s['per_stone']:+.3f} "
            f"[{ci['per_stone'][0]:+.3f}, {ci['per_stone'][1]:+.3f}] x stones/hand (residual sd "
            f"{s['residual_sd']:.3f}): +0.5 stones/hand is a game win rate of {fit['win_at_half_a_stone']:.3f}.\n\n"
            f"| a stone per hand won in | game win rate | 95% interval |\n|---|---|---|\n{rows}\n\n"
            f"(intercept {lance['intercept']:.3f}, residual sd {lance['residual_sd']:.3f})\n")


def main(argv: list[str] | None = None) -> None:
    """``python docs/research/tools/probe_games.py [SOURCE]``: print the fits for the probes of SOURCE (default: the
    research data file); exit status 2 with the reason when there are too few probes or too many arguments."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    if len(args) > 1:
        print(f"probe_games: one SOURCE at most, got {len(args)} arguments", file=sys.stderr)
        raise SystemExit(2)
    try:
        print(fit_markdown(fit_game_wins(probe_points(args[0] if args else DATA))))
    except ValueError as e:
        print(e, file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
