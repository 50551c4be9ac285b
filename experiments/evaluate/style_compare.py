"""Where two bidding-style profiles differ most: the cells (lance, role, strength bucket, action) whose frequencies
are furthest apart, counting only cells where both profiles have enough decisions and their 95% intervals do not
overlap.

A cell's frequency is the profile's (:func:`experiments.evaluate.style_profile.role_rates`): the share ``k / n`` of
the role's decisions in that strength bucket that took the action, with its Wilson interval. The role is the
profile's ``"<side> <situation>"`` (``"mano answer"``), and only the actions the situation allows are compared.
:func:`differences` ranks the cells; :func:`difference_text` says one row as a line (``mus exploit``'s report).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.evaluate.style import BET_ACTION_NAMES, BUCKET_EDGES, LANCES, SIDES, SITUATIONS, StyleCounts
from experiments.evaluate.style_profile import MIN_SAMPLES, ROLE_ACTIONS, StyleProfile, wilson

__all__ = ["differences", "difference_text", "bucket_label", "TOP"]

#: Rows :func:`differences` returns by default.
TOP = 8


def _counts(x: StyleCounts | StyleProfile) -> StyleCounts:
    return x.counts if isinstance(x, StyleProfile) else x


def bucket_label(bucket: int) -> str:
    """A strength bucket as a reader says it: its percentile range, e.g. ``"0.90-0.95"``."""
    return f"{BUCKET_EDGES[bucket]:.2f}-{BUCKET_EDGES[bucket + 1]:.2f}"


def differences(a: StyleCounts | StyleProfile, b: StyleCounts | StyleProfile, top: int = TOP,
                min_samples: int = MIN_SAMPLES, names: tuple[str, str] = ("a", "b")) -> list[dict[str, Any]]:
    """The cells where the betting of ``a`` and ``b`` differ most, largest difference first.

    Args:
        a, b: two profiles or their counts.
        top: at most this many rows.
        min_samples: a cell counts only where both have at least this many decisions (the role's, in the bucket).
        names: the keys of the two sides' figures in each row.

    Returns:
        Rows ``{"lance", "role", "bucket", "strength", "action", "diff", names[0]: {...}, names[1]: {...}}``:
        ``bucket`` the index in :data:`~experiments.evaluate.style.BUCKET_EDGES`, ``strength`` its range
        (:func:`bucket_label`), ``diff`` the frequency of ``b`` minus that of ``a``, and per side
        ``{"k", "n", "rate", "lo", "hi"}`` (the 95% Wilson interval). Of two equal differences the one with more
        decisions behind it (the smaller side's) comes first, then the counts' order (lance, side, situation,
        bucket, action).
    """
    ca, cb = _counts(a), _counts(b)
    rows: list[tuple[float, int, dict[str, Any]]] = []
    for li, lance in enumerate(LANCES):
        for si, side in enumerate(SIDES):
            for ti, situation in enumerate(SITUATIONS):
                na, nb = ca.bet_n[li, si, ti], cb.bet_n[li, si, ti]                 # (buckets,)
                for j in ROLE_ACTIONS[situation]:
                    ka, kb = ca.bet_k[li, si, ti, :, j], cb.bet_k[li, si, ti, :, j]
                    lo_a, hi_a = wilson(ka, na)
                    lo_b, hi_b = wilson(kb, nb)
                    apart = (hi_a < lo_b) | (hi_b < lo_a)
                    for bi in np.flatnonzero(apart & (na >= min_samples) & (nb >= min_samples)):
                        ra, rb = ka[bi] / na[bi], kb[bi] / nb[bi]
                        row = {"lance": lance, "role": f"{side} {situation}", "bucket": int(bi),
                               "strength": bucket_label(int(bi)), "action": BET_ACTION_NAMES[j],
                               "diff": float(rb - ra),
                               names[0]: {"k": int(ka[bi]), "n": int(na[bi]), "rate": float(ra),
                                          "lo": float(lo_a[bi]), "hi": float(hi_a[bi])},
                               names[1]: {"k": int(kb[bi]), "n": int(nb[bi]), "rate": float(rb),
                                          "lo": float(lo_b[bi]), "hi": float(hi_b[bi])}}
                        rows.append((-abs(float(rb - ra)), -int(min(na[bi], nb[bi])), len(rows), row))
    rows.sort(key=lambda r: r[:3])
    return [r[-1] for r in rows[:max(int(top), 0)]]


def difference_text(row: dict[str, Any], names: tuple[str, str] = ("a", "b")) -> str:
    """One row of :func:`differences` as a line, e.g. ``pares postre answer, strength 0.50-0.60: no_quiero the
    agent 68% [61%, 74%] of 190, the probe 22% [16%, 29%] of 170``."""
    def side(name: str) -> str:
        s = row[name]
        return f"the {name} {s['rate']:.0%} [{s['lo']:.0%}, {s['hi']:.0%}] of {s['n']:,}"

    return (f"{row['lance']} {row['role']}, strength {row['strength']}: {row['action']} "
            f"{side(names[0])}, {side(names[1])}")
