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
* :func:`plot_score`: the key rates (:data:`~experiments.evaluate.style_profile.SCORE_RATES`) by score situation,
  one bar per agent with its interval; a black edge marks a bar apart from the first agent's.
* :func:`plot_signs`: with señas, per agent and kind of window, a heatmap of each sign's share of the sign decisions
  made with each hand class (hatched: too few decisions; red: apart from the first agent).
* :func:`summary_rows`, :func:`score_rows`, :func:`sign_rows`: rows for terminal tables.
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
    SCORE_RATES,
    StyleProfile,
    aggression_factor,
    pooled,
    role_rates,
    score_rates,
    sign_rates,
    wilson,
)
from experiments.evaluate.style_situations import SCORE_SITUATIONS, SIGN_TOKENS, SIGN_WINDOWS

__all__ = ["plot_curves", "plot_heatmaps", "plot_mus", "plot_score", "plot_signs", "summary_rows", "score_rows",
           "sign_rows", "has_signs", "CURVE_ROWS", "MIN_DIFFERENCE"]

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


def _apart(k0: npt.ArrayLike, n0: npt.ArrayLike, k: npt.ArrayLike, n: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Where the 95% intervals of two rates do not overlap and the rates differ by :data:`MIN_DIFFERENCE` or more
    (both with enough decisions)."""
    k0, n0, k, n = (np.asarray(x, dtype=np.float64) for x in (k0, n0, k, n))
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



def _rate_apart(r0: dict[str, Any], r: dict[str, Any]) -> bool:
    return bool(_apart(r0["k"], r0["n"], r["k"], r["n"]))


def score_rows(profiles: Sequence[StyleProfile]) -> list[dict[str, Any]]:
    """One row per agent and score situation (:data:`~experiments.evaluate.style_situations.SCORE_SITUATIONS`), all
    lances pooled: ``decisions`` and each of :data:`~experiments.evaluate.style_profile.SCORE_RATES` (a rate as the
    file writes it, with ``"apart"``: its interval does not overlap the first agent's, as in the plots)."""
    first = score_rates(profiles[0].counts)
    rows = []
    for p in profiles:
        sc = score_rates(p.counts)
        for situation in SCORE_SITUATIONS:
            row: dict[str, Any] = {"agent": p.agent, "situation": situation,
                                   "decisions": sc[situation]["decisions"]}
            for name in SCORE_RATES:
                r = dict(sc[situation][name])
                r["apart"] = p is not profiles[0] and _rate_apart(first[situation][name], r)
                row[name] = r
            rows.append(row)
    return rows


def has_signs(profiles: Sequence[StyleProfile]) -> bool:
    """Whether any of ``profiles`` counted a sign decision (signals on)."""
    return any(int(p.counts.sign_n.sum()) > 0 for p in profiles)


def sign_rows(profiles: Sequence[StyleProfile]) -> list[dict[str, Any]]:
    """One row per agent, kind of sign window and token it made at least once: ``made`` (the token's share of the
    window's sign decisions, a rate with ``"apart"`` from the first agent's), ``where_legal`` (made where legal),
    and ``with``: the hand class it was made with most often and the share of the token's signs made with it."""
    first = sign_rates(profiles[0].counts)
    rows = []
    for p in profiles:
        sr = sign_rates(p.counts)
        for wi, window in enumerate(SIGN_WINDOWS):
            for ti, token in enumerate(SIGN_TOKENS):
                made = dict(sr[window]["made"][token])
                if not made["k"]:
                    continue
                made["apart"] = p is not profiles[0] and _rate_apart(first[window]["made"][token], made)
                by_class = p.counts.sign_k[wi, :, ti]
                ci = int(by_class.argmax())
                rows.append({"agent": p.agent, "window": window, "sign": token, "made": made,
                             "where_legal": sr[window]["where_legal"][token],
                             "with": (HAND_CLASSES[ci], float(by_class[ci] / by_class.sum()))})
    return rows


def plot_score(profiles: Sequence[StyleProfile], path: str | Path) -> Path:
    """Write the score-situation bars (the module docstring) of ``profiles`` to ``path``."""
    plt = _pyplot()
    from matplotlib.colors import to_rgba

    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    rows = score_rows(profiles)
    fig, axes = plt.subplots(1, len(SCORE_RATES), figsize=(3.4 * len(SCORE_RATES), 3.2), sharey=True, squeeze=False)
    width = 0.8 / len(profiles)
    x = np.arange(len(SCORE_SITUATIONS))
    for ri, name in enumerate(SCORE_RATES):
        ax = axes[0, ri]
        for j, p in enumerate(profiles):
            mine = [r[name] for r in rows if r["agent"] == p.agent][:len(SCORE_SITUATIONS)]
            y = np.array([r["rate"] if r["rate"] is not None else 0.0 for r in mine])
            lo, hi = np.array([r["lo"] for r in mine]), np.array([r["hi"] for r in mine])
            seen = np.array([r["n"] > 0 for r in mine])
            err = np.where(seen, np.abs(np.stack([y - lo, hi - y])), 0.0)
            edge = ["black" if r["apart"] else "none" for r in mine]
            face = [to_rgba(colours[j % len(colours)], 1.0 if r["n"] >= MIN_SAMPLES else 0.35) for r in mine]
            ax.bar(x + (j - (len(profiles) - 1) / 2) * width, y, width, yerr=err, label=p.agent if ri == 0 else None,
                   capsize=1.5, error_kw={"lw": 0.7}, color=face, edgecolor=edge, linewidth=1.2)
        ax.set_xticks(x, SCORE_SITUATIONS, fontsize=7)
        ax.set_title(name.replace("_", " "), fontsize=9)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3, axis="y")
    fig.legend(loc="upper right", fontsize=7, ncol=len(profiles), frameon=False)
    fig.suptitle(f"By the score: the deciding team's lead, and near the end (a team needs at most target // 8 "
                 f"stones); 95% Wilson intervals; faint: fewer than {MIN_SAMPLES} decisions; black edge: apart from "
                 f"{profiles[0].agent} by {MIN_DIFFERENCE:g} or more", fontsize=8, y=0.01, va="bottom")
    fig.tight_layout(rect=(0, 0.05, 1, 0.93))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_signs(profiles: Sequence[StyleProfile], path: str | Path) -> Path:
    """Write the señas heatmaps (the module docstring) of ``profiles`` to ``path``."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(profiles), len(SIGN_WINDOWS), figsize=(6.2 * len(SIGN_WINDOWS),
                                                                         3.0 * len(profiles) + 0.6), squeeze=False)
    c0 = profiles[0].counts
    for j, p in enumerate(profiles):
        for wi, window in enumerate(SIGN_WINDOWS):
            ax = axes[j, wi]
            n, k = p.counts.sign_n[wi], p.counts.sign_k[wi]                         # (classes,), (classes, tokens)
            freq = k / np.maximum(n, 1)[:, None]
            ax.imshow(np.where(n[:, None] > 0, freq, np.nan), aspect="auto", vmin=0, vmax=1, cmap="viridis",
                      origin="lower", extent=(-0.5, len(SIGN_TOKENS) - 0.5, -0.5, len(HAND_CLASSES) - 0.5))
            for ci in np.flatnonzero(n < MIN_SAMPLES):
                ax.add_patch(plt.Rectangle((-0.5, ci - 0.5), len(SIGN_TOKENS), 1, fill=False, hatch="///",
                                           color="0.6", lw=0))
            if j:
                d = _apart(c0.sign_k[wi], c0.sign_n[wi][:, None], k, n[:, None])
                for ci, ti in zip(*np.nonzero(d), strict=True):
                    ax.add_patch(plt.Rectangle((ti - 0.5, ci - 0.5), 1, 1, fill=False, ec="red", lw=1.2))
            ax.set_xticks(range(len(SIGN_TOKENS)), SIGN_TOKENS, fontsize=6, rotation=60, ha="right")
            ax.set_yticks(range(len(HAND_CLASSES)), HAND_CLASSES, fontsize=6)
            ax.set_title(f"{p.agent}: {window} window ({int(n.sum()):,} signs)", fontsize=8)
    fig.suptitle("Señas: the share of each sign among the sign decisions made with each hand class (hatched: fewer "
                 f"than {MIN_SAMPLES} decisions; red: apart from {profiles[0].agent} by {MIN_DIFFERENCE:g} or more)",
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)
