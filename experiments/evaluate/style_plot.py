"""Plots and a text table of bidding-style profiles (:mod:`experiments.evaluate.style_profile`), several agents
side by side.

* :func:`plot_curves`: per lance (columns) and kind of decision (rows: opening bets, raises and no quiero when
  answering a bet, quiero facing an órdago), each agent's frequency by hand strength with its 95% Wilson band;
  buckets with too few decisions are hollow, and a black ring marks a bucket where an agent's interval does not
  overlap the first agent's (and the rates differ by :data:`MIN_DIFFERENCE` or more).
* :func:`plot_heatmaps`: per lance, one heatmap per agent and situation of every action's frequency by strength
  (both sides pooled); hatched cells have too few decisions, outlined ones differ from the first agent (intervals
  apart, by :data:`MIN_DIFFERENCE` or more).
* :func:`plot_mus`: the cut rate by hand class, one bar per agent, with its interval.
* :func:`summary_rows`: one row per agent and lance for a terminal table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from experiments.evaluate.style import BET_ACTION_NAMES, BUCKET_EDGES, HAND_CLASSES, LANCES
from experiments.evaluate.style_profile import (
    AGGRESSIVE,
    I_NO_QUIERO,
    I_QUIERO,
    MIN_SAMPLES,
    ROLE_ACTIONS,
    StyleProfile,
    aggression_factor,
    pooled,
    role_rates,
    wilson,
)

__all__ = ["plot_curves", "plot_heatmaps", "plot_mus", "summary_rows", "CURVE_ROWS", "MIN_DIFFERENCE"]

#: The rows of :func:`plot_curves`: (title, situations pooled, the actions counted as a "yes").
CURVE_ROWS: tuple[tuple[str, tuple[str, ...], list[int]], ...] = (
    ("opening: envido or órdago", ("open",), AGGRESSIVE),
    ("answering a bet: raise", ("answer", "confirm"), AGGRESSIVE),
    ("answering a bet: no quiero", ("answer",), [I_NO_QUIERO]),
    ("facing an órdago: quiero", ("ordago",), [I_QUIERO]),
)
#: A difference from the first agent is marked when the intervals do not overlap and the rates differ by at least
#: this much (with hundreds of thousands of decisions, a difference of 0.01 is already significant and not worth
#: the ink).
MIN_DIFFERENCE = 0.05
_CENTRES = (np.array(BUCKET_EDGES[:-1]) + np.array(BUCKET_EDGES[1:])) / 2


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _curve(p: StyleProfile, lance: int, situations: tuple[str, ...],
           actions: list[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    n, k, _ = pooled(p.counts, lance, situations)
    return k[:, actions].sum(axis=1), n


def _apart(k0: npt.NDArray, n0: npt.NDArray, k: npt.NDArray, n: npt.NDArray) -> npt.NDArray[np.bool_]:
    """Where the 95% intervals of two rates do not overlap and the rates differ by :data:`MIN_DIFFERENCE` or more
    (both with enough decisions)."""
    lo0, hi0 = wilson(k0, n0)
    lo, hi = wilson(k, n)
    gap = np.abs(k / np.maximum(n, 1) - k0 / np.maximum(n0, 1))
    return (n0 >= MIN_SAMPLES) & (n >= MIN_SAMPLES) & ((lo > hi0) | (hi < lo0)) & (gap >= MIN_DIFFERENCE)


def plot_curves(profiles: Sequence[StyleProfile], path: str | Path) -> Path:
    """Write the curves figure (the module docstring) of ``profiles`` to ``path`` (a PNG)."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(CURVE_ROWS), len(LANCES), figsize=(3.2 * len(LANCES), 2.6 * len(CURVE_ROWS)),
                             sharex=True, sharey=True, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for r, (title, situations, actions) in enumerate(CURVE_ROWS):
        for li, lance in enumerate(LANCES):
            ax = axes[r, li]
            k0, n0 = _curve(profiles[0], li, situations, actions)
            for j, p in enumerate(profiles):
                c = colours[j % len(colours)]
                k, n = _curve(p, li, situations, actions)
                seen = n > 0
                lo, hi = wilson(k, n)
                y = np.where(seen, k / np.maximum(n, 1), np.nan)
                ax.plot(_CENTRES[seen], y[seen], "-", color=c, lw=1.3, label=p.agent if r == li == 0 else None)
                ax.fill_between(_CENTRES, np.where(seen, lo, np.nan), np.where(seen, hi, np.nan), color=c,
                                alpha=0.15, lw=0)
                enough = n >= MIN_SAMPLES
                ax.plot(_CENTRES[enough], y[enough], "o", color=c, ms=3.5)
                ax.plot(_CENTRES[seen & ~enough], y[seen & ~enough], "o", mfc="none", color=c, ms=3.5)
                if j:
                    d = _apart(k0, n0, k, n)
                    ax.plot(_CENTRES[d], y[d], "o", mfc="none", mec="black", ms=7, mew=0.9)
            if r == 0:
                ax.set_title(lance)
            if li == 0:
                ax.set_ylabel(title, fontsize=8)
            if r == len(CURVE_ROWS) - 1:
                ax.set_xlabel("hand percentile for the lance", fontsize=8)
            ax.set_ylim(-0.03, 1.03)
            ax.set_xlim(0, 1)
            ax.grid(alpha=0.3)
    fig.legend(loc="upper center", ncol=len(profiles), frameon=False)
    fig.suptitle("How they bid: frequency by hand strength (95% Wilson bands; hollow: fewer than "
                 f"{MIN_SAMPLES} decisions; black ring: apart from {profiles[0].agent}, by {MIN_DIFFERENCE:g} or "
                 "more)", fontsize=9, y=0.005, va="bottom")
    fig.tight_layout(rect=(0, 0.02, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_heatmaps(profiles: Sequence[StyleProfile], folder: str | Path) -> list[Path]:
    """Write ``style_<lance>.png`` per lance (the module docstring) into ``folder``; returns the paths."""
    plt = _pyplot()
    situations = ("open", "answer", "ordago")
    paths = []
    for li, lance in enumerate(LANCES):
        fig, axes = plt.subplots(len(profiles), len(situations), figsize=(4.2 * len(situations),
                                                                           1.9 * len(profiles) + 0.6),
                                 squeeze=False)
        for si, situation in enumerate(situations):
            acts = ROLE_ACTIONS[situation]
            n0, k0, _ = pooled(profiles[0].counts, li, (situation,))
            for j, p in enumerate(profiles):
                ax = axes[j, si]
                n, k, _ = pooled(p.counts, li, (situation,))
                freq = (k[:, acts] / np.maximum(n, 1)[:, None]).T                         # (actions, buckets)
                ax.imshow(np.where(n[None] > 0, freq, np.nan), aspect="auto", vmin=0, vmax=1, cmap="viridis",
                          origin="lower", extent=(-0.5, len(n) - 0.5, -0.5, len(acts) - 0.5))
                for b in np.flatnonzero(n < MIN_SAMPLES):
                    ax.add_patch(plt.Rectangle((b - 0.5, -0.5), 1, len(acts), fill=False, hatch="///",
                                               color="0.6", lw=0))
                if j:
                    for a_i, a in enumerate(acts):
                        for b in np.flatnonzero(_apart(k0[:, a], n0, k[:, a], n)):
                            ax.add_patch(plt.Rectangle((b - 0.5, a_i - 0.5), 1, 1, fill=False, ec="red", lw=1.2))
                ax.set_yticks(range(len(acts)), [BET_ACTION_NAMES[a] for a in acts], fontsize=6)
                ax.set_xticks(range(len(n)), [f"{e:g}" for e in BUCKET_EDGES[:-1]], fontsize=5, rotation=90)
                ax.set_title(f"{p.agent}: {situation}", fontsize=8)
        fig.suptitle(f"{lance}: action frequency by hand percentile (from the bucket's lower edge; hatched: fewer "
                     f"than {MIN_SAMPLES} decisions; red: apart from {profiles[0].agent} by {MIN_DIFFERENCE:g} or "
                     "more)", fontsize=8)
        fig.tight_layout()
        path = Path(folder) / f"style_{lance}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_mus(profiles: Sequence[StyleProfile], path: str | Path) -> Path:
    """Write the cut-rate-by-hand-class bars of ``profiles`` to ``path``."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 3.4))
    width = 0.8 / len(profiles)
    x = np.arange(len(HAND_CLASSES))
    for j, p in enumerate(profiles):
        k, n = p.counts.mus_cut, p.counts.mus_n
        lo, hi = wilson(k, n)
        y = k / np.maximum(n, 1)
        err = np.where(n > 0, np.abs(np.stack([y - lo, hi - y])), 0.0)            # a class never seen: no bar
        ax.bar(x + (j - (len(profiles) - 1) / 2) * width, y, width, yerr=err,
               label=p.agent, capsize=1.5, error_kw={"lw": 0.7})
    ax.set_xticks(x, HAND_CLASSES, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("cut the mus (no mus)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, ncol=len(profiles), loc="upper left")
    ax.set_title("Mus: cut rate by hand class (95% Wilson intervals)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def summary_rows(profiles: Sequence[StyleProfile]) -> list[dict[str, Any]]:
    """One row per agent and lance, both sides pooled: ``bet`` (opening envido or órdago), ``bluff`` (opening bet
    with a weak hand), ``fold`` (no quiero to a bet), ``call_weak`` (quiero with a weak hand), ``aggression``
    (bets and raises per call), ``ordago`` (órdago made where legal), ``n`` (decisions); rates as
    ``(rate, lo, hi, few)``."""
    rows = []
    for p in profiles:
        for li, lance in enumerate(LANCES):
            o = role_rates(*pooled(p.counts, li, ("open",)), "open")["summary"]
            a = role_rates(*pooled(p.counts, li, ("answer",)), "answer")["summary"]
            n, k, legal = pooled(p.counts, li, ("open", "answer", "confirm", "ordago"))
            m = role_rates(n, k, legal, "open")["summary"]
            agg = aggression_factor(int(k[:, AGGRESSIVE].sum()), int(k[:, I_QUIERO].sum()))
            rows.append({"agent": p.agent, "lance": lance, "n": int(n.sum()), "bet": o["aggressive"],
                         "bluff": o["bluff"], "fold": a["fold"], "call_weak": a["call_down_weak"],
                         "aggression": agg, "ordago": m["ordago"]})
    return rows

