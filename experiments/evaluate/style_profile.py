"""Bidding-style profiles: the rates read from :class:`~experiments.evaluate.style.StyleCounts`, with Wilson
intervals, and their JSON file (:data:`SCHEMA`, :data:`VERSION`).

Every rate is a share ``k / n`` of decisions, written ``{"k", "n", "rate", "lo", "hi", "few"}``: ``lo`` and ``hi``
bound its 95% Wilson score interval (:func:`wilson`) and ``few`` says that fewer than :data:`MIN_SAMPLES`
decisions stand behind it (its ``rate`` is still given; a plot greys it out). ``rate`` is null when ``n`` is 0.
"Strength" is the hand's percentile for the lance (the counts' buckets); "weak" means below the median
(percentile < 0.5), "strong" at or above it.

Per lance and role (``"<side> <situation>"``, e.g. ``"mano open"``), ``betting`` holds:

* ``n``: decisions per strength bucket; ``actions``: per betting action, its frequency per bucket (the actions
  the role allows; an envido answering a bet is a raise);
* ``summary``: ``aggressive`` (an envido or órdago: a bet in the opening round, a raise when answering),
  ``bluff`` (aggressive with a weak hand, per weak decision), ``bluff_share`` (weak hands among the aggressive
  decisions), ``value_bet`` (aggressive with a strong hand, per strong decision), ``fold`` (no quiero where it was
  legal: fold-to-bet), ``call_down_weak`` (quiero with a weak hand, where no quiero was legal), ``ordago``
  (órdago where it was legal).

Per lance and side (``"mano"``, ``"postre"``): ``aggression`` (the aggression factor, bets and raises per call,
quiero; its interval is Wilson's on the aggressive share ``A / (A + C)``, mapped through ``p / (1 - p)``),
``ordago_made`` (órdago where legal, per bucket, in every situation but facing one) and ``ordago_accepted``
(quiero facing an órdago, per bucket). In ``mus``, per hand class: ``cut`` (no mus where mus was legal) and
``discards`` (the number of cards discarded: 0..4, shares, and the mean).

In ``score``, per score situation (:data:`~experiments.evaluate.style_situations.SCORE_SITUATIONS`: ``ahead``,
``level``, ``behind`` the deciding team's lead; ``near end`` a team needs at most ``target // 8`` stones), both
sides and every strength pooled, over all lances and per lance: ``bet`` (an envido or órdago in the opening round),
``raise`` (one when answering or confirming), ``fold`` (no quiero where it was legal, answering a bet),
``ordago_made`` (órdago where legal, in every situation but facing one) and ``ordago_accepted`` (quiero facing an
órdago) (:func:`score_rates`).

In ``signs``, per kind of sign window (``mus``, ``grande``): ``decisions``, ``made`` (each token's share of the
window's sign decisions), ``where_legal`` (each token made where it was legal) and ``by_class``: per hand class held
when signing, its decisions and each token's share of them (:func:`sign_rates`). Empty with signals off.

The file also stores the counts themselves; :func:`read_profile` checks the schema and version and rebuilds the
counts (the rates are recomputed from them), naming what is wrong in a bad file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from experiments.evaluate.style import (
    BET_ACTION_NAMES,
    BET_ACTIONS,
    BUCKET_EDGES,
    HAND_CLASSES,
    LANCES,
    SIDES,
    SITUATIONS,
    StyleCounts,
)
from experiments.evaluate.style_situations import SCORE_LEADS, SCORE_SITUATIONS, SIGN_TOKENS, SIGN_WINDOWS
from mus_env.actions import ENVIDO_ACTIONS, Action
from mus_env.records import write_text_atomic

__all__ = ["SCHEMA", "VERSION", "MIN_SAMPLES", "Z95", "StyleProfile", "wilson", "rate", "read_profile",
           "load_profile", "save_profile", "ProfileError", "pooled", "ROLE_ACTIONS", "AGGRESSIVE", "I_PASO",
           "I_QUIERO", "I_NO_QUIERO", "I_ORDAGO", "WEAK", "role_rates", "aggression_factor", "betting_rates",
           "mus_rates", "score_rates", "score_pooled", "sign_rates", "SCORE_RATES"]

SCHEMA = "mus-env-style-profile"
#: The schema version: a file of another version is refused by :func:`read_profile`.
VERSION = 2
#: A rate over fewer decisions than this is marked ``few``.
MIN_SAMPLES = 30
#: The normal quantile of a 95% interval.
Z95 = 1.959963984540054

_A = {a: j for j, a in enumerate(BET_ACTIONS)}
#: Indexes in BET_ACTIONS: the aggressive actions (the envidos and órdago), paso, quiero, no quiero, órdago.
AGGRESSIVE = [_A[a] for a in (*ENVIDO_ACTIONS, int(Action.ORDAGO))]
I_PASO, I_QUIERO, I_NO_QUIERO, I_ORDAGO = (_A[int(a)] for a in (Action.PASO, Action.QUIERO, Action.NO_QUIERO,
                                                            Action.ORDAGO))
#: The strength buckets below the median (0.5 is a bucket edge).
WEAK = np.array([hi <= 0.5 for hi in BUCKET_EDGES[1:]])
#: The actions each situation allows (the rest are never legal there), as indexes of BET_ACTIONS.
ROLE_ACTIONS = {"open": [I_PASO, *AGGRESSIVE], "answer": [*AGGRESSIVE[:-1], I_QUIERO, I_NO_QUIERO, I_ORDAGO],
                "confirm": [*AGGRESSIVE[:-1], I_QUIERO, I_ORDAGO], "ordago": [I_QUIERO, I_NO_QUIERO]}


class ProfileError(ValueError):
    """A profile file that cannot be read: the message names the file and what is wrong."""


def wilson(k: npt.ArrayLike, n: npt.ArrayLike, z: float = Z95) -> tuple[npt.NDArray[np.float64], ...]:
    """Wilson score interval ``(lo, hi)`` of ``k`` successes in ``n`` trials (elementwise; ``(0, 1)`` where
    ``n`` is 0)."""
    k, n = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    safe = np.maximum(n, 1.0)
    p = k / safe
    denom = 1.0 + z * z / safe
    centre = (p + z * z / (2 * safe)) / denom
    half = z * np.sqrt(p * (1 - p) / safe + z * z / (4 * safe * safe)) / denom
    lo = np.where((n > 0) & (k > 0), np.clip(centre - half, 0.0, 1.0), 0.0)      # exact at the ends
    hi = np.where((n > 0) & (k < n), np.clip(centre + half, 0.0, 1.0), 1.0)
    return lo, hi


def rate(k: int, n: int, z: float = Z95) -> dict[str, Any]:
    """One rate as the file writes it: ``{"k", "n", "rate", "lo", "hi", "few"}``."""
    lo, hi = wilson(k, n, z)
    return {"k": int(k), "n": int(n), "rate": float(k / n) if n else None, "lo": float(lo), "hi": float(hi),
            "few": bool(n < MIN_SAMPLES)}


def _rates(k: npt.ArrayLike, n: npt.ArrayLike) -> list[dict[str, Any]]:
    return [rate(int(a), int(b)) for a, b in zip(np.ravel(k), np.ravel(n), strict=True)]


def pooled(counts: StyleCounts, lance: int, situations: tuple[str, ...],
           sides: tuple[str, ...] = SIDES) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                                   npt.NDArray[np.int64]]:
    """``(n (buckets,), k (buckets, actions), legal (buckets, actions))`` of a lance summed over some sides and
    situations (what the plots draw)."""
    si = [SIDES.index(s) for s in sides]
    ti = [SITUATIONS.index(s) for s in situations]
    sub = np.ix_(si, ti)
    return (counts.bet_n[lance][sub].sum(axis=(0, 1)), counts.bet_k[lance][sub].sum(axis=(0, 1)),
            counts.bet_legal[lance][sub].sum(axis=(0, 1)))


def role_rates(n: npt.NDArray[np.int64], k: npt.NDArray[np.int64], legal: npt.NDArray[np.int64],
               situation: str) -> dict[str, Any]:
    """One role's entry (``n``, ``actions``, ``summary``: the module docstring) from its :func:`pooled` counts."""
    aggr = k[:, AGGRESSIVE].sum(axis=1)
    weak_n, strong_n = int(n[WEAK].sum()), int(n[~WEAK].sum())
    summary = {
        "decisions": int(n.sum()),
        "aggressive": rate(aggr.sum(), n.sum()),
        "bluff": rate(aggr[WEAK].sum(), weak_n),
        "bluff_share": rate(aggr[WEAK].sum(), aggr.sum()),
        "value_bet": rate(aggr[~WEAK].sum(), strong_n),
        "ordago": rate(k[:, I_ORDAGO].sum(), legal[:, I_ORDAGO].sum()),
    }
    if situation in ("answer", "ordago"):
        summary["fold"] = rate(k[:, I_NO_QUIERO].sum(), legal[:, I_NO_QUIERO].sum())
        summary["call_down_weak"] = rate(k[WEAK, I_QUIERO].sum(), legal[WEAK, I_NO_QUIERO].sum())
    return {"n": n.tolist(),
            "actions": {BET_ACTION_NAMES[j]: _rates(k[:, j], n) for j in ROLE_ACTIONS[situation]},
            "summary": summary}


def aggression_factor(aggr: int, calls: int) -> dict[str, Any]:
    """The aggression factor of ``aggr`` bets and raises against ``calls`` quieros, with its interval."""
    lo, hi = wilson(aggr, aggr + calls)

    def odds(p: float) -> float | None:
        return float(p / (1 - p)) if p < 1 else None

    return {"bets_raises": int(aggr), "calls": int(calls), "factor": aggr / calls if calls else None,
            "lo": odds(float(lo)), "hi": odds(float(hi)), "few": bool(aggr + calls < MIN_SAMPLES)}


def betting_rates(counts: StyleCounts) -> dict[str, Any]:
    """The ``betting`` section (the module docstring) of ``counts``."""
    out: dict[str, Any] = {}
    for li, lance in enumerate(LANCES):
        per: dict[str, Any] = {}
        for side in SIDES:
            for situation in SITUATIONS:
                per[f"{side} {situation}"] = role_rates(*pooled(counts, li, (situation,), (side,)), situation)
            n, k, legal = pooled(counts, li, SITUATIONS, (side,))
            made_n, made_k, made_legal = pooled(counts, li, ("open", "answer", "confirm"), (side,))
            on, ok, _ = pooled(counts, li, ("ordago",), (side,))
            per[side] = {"aggression": aggression_factor(int(k[:, AGGRESSIVE].sum()), int(k[:, I_QUIERO].sum())),
                         "ordago_made": _rates(made_k[:, I_ORDAGO], made_legal[:, I_ORDAGO]),
                         "ordago_accepted": _rates(ok[:, I_QUIERO], on)}
        out[lance] = per
    return out


def mus_rates(counts: StyleCounts) -> dict[str, Any]:
    """The ``mus`` section (the module docstring) of ``counts``."""
    cards = np.array([bin(m).count("1") for m in range(16)])
    by_cards = np.stack([counts.discard_k[:, cards == c].sum(axis=1) for c in range(5)], axis=1)   # (classes, 5)
    total = by_cards.sum(axis=1)
    out: dict[str, Any] = {"cut": {}, "discards": {}}
    for ci, name in enumerate(HAND_CLASSES):
        out["cut"][name] = rate(counts.mus_cut[ci], counts.mus_n[ci])
        out["discards"][name] = {"cards": _rates(by_cards[ci], np.full(5, total[ci])),
                                 "mean": float((by_cards[ci] * np.arange(5)).sum() / total[ci]) if total[ci] else None}
    out["cut"]["all"] = rate(counts.mus_cut.sum(), counts.mus_n.sum())
    return out


#: The rates of the score split (:func:`score_rates`), in the order the reports show them.
SCORE_RATES = ("bet", "raise", "fold", "ordago_made", "ordago_accepted")
_LEAD = {"ahead": [SCORE_LEADS.index("ahead")], "level": [SCORE_LEADS.index("level")],
         "behind": [SCORE_LEADS.index("behind")], "near end": list(range(len(SCORE_LEADS)))}
_NEAR = {"ahead": [0, 1], "level": [0, 1], "behind": [0, 1], "near end": [1]}


def score_pooled(counts: StyleCounts, situation: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                                               npt.NDArray[np.int64]]:
    """``(n (lances, situations), k (..., actions), legal (..., actions))`` of one score situation
    (:data:`~experiments.evaluate.style_situations.SCORE_SITUATIONS`), leads and stages summed.

    Raises:
        ValueError: an unknown score situation.
    """
    if situation not in _LEAD:
        raise ValueError(f"score situation must be one of {', '.join(SCORE_SITUATIONS)}, got {situation!r}")
    sub = np.ix_(_LEAD[situation], _NEAR[situation])
    return (counts.score_n[sub].sum(axis=(0, 1)), counts.score_k[sub].sum(axis=(0, 1)),
            counts.score_legal[sub].sum(axis=(0, 1)))


def _score_entry(n: npt.NDArray[np.int64], k: npt.NDArray[np.int64], legal: npt.NDArray[np.int64]) -> dict[str, Any]:
    """The :data:`SCORE_RATES` of ``(situations,)`` counts ``n`` and ``(situations, actions)`` ``k``, ``legal``."""
    o, a, c, f = (SITUATIONS.index(s) for s in ("open", "answer", "confirm", "ordago"))
    made = [o, a, c]
    return {"decisions": int(n.sum()),
            "bet": rate(k[o, AGGRESSIVE].sum(), n[o]),
            "raise": rate(k[[a, c]][:, AGGRESSIVE].sum(), n[[a, c]].sum()),
            "fold": rate(k[a, I_NO_QUIERO], legal[a, I_NO_QUIERO]),
            "ordago_made": rate(k[made, I_ORDAGO].sum(), legal[made, I_ORDAGO].sum()),
            "ordago_accepted": rate(k[f, I_QUIERO], n[f])}


def score_rates(counts: StyleCounts) -> dict[str, Any]:
    """The ``score`` section (the module docstring) of ``counts``."""
    out: dict[str, Any] = {"near_end": "a team needs at most target // 8 stones (at least 1) to win"}
    for situation in SCORE_SITUATIONS:
        n, k, legal = score_pooled(counts, situation)
        entry = _score_entry(n.sum(axis=0), k.sum(axis=0), legal.sum(axis=0))
        entry["lances"] = {lance: _score_entry(n[li], k[li], legal[li]) for li, lance in enumerate(LANCES)}
        out[situation] = entry
    return out


def sign_rates(counts: StyleCounts) -> dict[str, Any]:
    """The ``signs`` section (the module docstring) of ``counts``."""
    out: dict[str, Any] = {}
    for wi, window in enumerate(SIGN_WINDOWS):
        n, k, legal = counts.sign_n[wi], counts.sign_k[wi], counts.sign_legal[wi]       # (classes,), (classes, 16)
        total = int(n.sum())
        out[window] = {
            "decisions": total,
            "made": {t: rate(k[:, ti].sum(), total) for ti, t in enumerate(SIGN_TOKENS)},
            "where_legal": {t: rate(k[:, ti].sum(), legal[:, ti].sum()) for ti, t in enumerate(SIGN_TOKENS)},
            "by_class": {c: {"n": int(n[ci]), "made": {t: rate(k[ci, ti], n[ci]) for ti, t in enumerate(SIGN_TOKENS)}}
                         for ci, c in enumerate(HAND_CLASSES)}}
    return out


@dataclass
class StyleProfile:
    """A profile: what was played (``meta``: agent, spec, field, deal set, deals, seed, config, command, ...) and
    the counts; :meth:`to_dict` adds the rates."""

    counts: StyleCounts
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def agent(self) -> str:
        return str(self.meta.get("agent", "agent"))

    def to_dict(self) -> dict[str, Any]:
        """The profile as the file holds it (the schema: the module docstring)."""
        return {"schema": SCHEMA, "version": VERSION, **self.meta,
                "buckets": list(BUCKET_EDGES), "lances": list(LANCES), "sides": list(SIDES),
                "situations": list(SITUATIONS), "actions": list(BET_ACTION_NAMES), "hand_classes": list(HAND_CLASSES),
                "min_samples": MIN_SAMPLES, "confidence": 0.95, "decisions": self.counts.decisions(),
                "score_leads": list(SCORE_LEADS), "score_situations": list(SCORE_SITUATIONS),
                "sign_windows": list(SIGN_WINDOWS), "sign_tokens": list(SIGN_TOKENS),
                "betting": betting_rates(self.counts), "mus": mus_rates(self.counts),
                "score": score_rates(self.counts), "signs": sign_rates(self.counts),
                "counts": self.counts.to_dict()}


_LAYOUT = {"buckets": list(BUCKET_EDGES), "lances": list(LANCES), "sides": list(SIDES),
           "situations": list(SITUATIONS), "actions": list(BET_ACTION_NAMES), "hand_classes": list(HAND_CLASSES),
           "score_leads": list(SCORE_LEADS), "score_situations": list(SCORE_SITUATIONS),
           "sign_windows": list(SIGN_WINDOWS), "sign_tokens": list(SIGN_TOKENS)}
_META = ("agent", "spec", "field", "deal_set", "deals", "seed", "config", "records", "command", "mus_env", "seconds")


def read_profile(d: Any, source: str = "profile") -> StyleProfile:
    """A profile from its JSON values (:meth:`StyleProfile.to_dict`), checked.

    Raises:
        ProfileError: not a profile, another schema version, a layout (buckets, lances, ...) other than this
            version's, or malformed counts; the message starts with ``source`` and names the field.
    """
    if not isinstance(d, dict) or d.get("schema") != SCHEMA:
        got = d.get("schema") if isinstance(d, dict) else type(d).__name__
        raise ProfileError(f"{source}: not a bidding-style profile (schema {got!r}, expected {SCHEMA!r})")
    if d.get("version") != VERSION:
        raise ProfileError(f"{source}: schema version {d.get('version')!r}, this mus-env reads version {VERSION} "
                           "(run mus style again to rebuild it)")
    for key, want in _LAYOUT.items():
        if d.get(key) != want:
            raise ProfileError(f"{source}: {key} is {d.get(key)!r}, version {VERSION} has {want!r}")
    try:
        counts = StyleCounts.from_dict(d.get("counts"))
    except ValueError as e:
        raise ProfileError(f"{source}: {e}") from None
    return StyleProfile(counts, {k: d[k] for k in _META if k in d})


def load_profile(path: str | Path) -> StyleProfile:
    """Read a profile file (:func:`save_profile`).

    Raises:
        ProfileError: a file that is missing, not JSON, or not a profile of this version (:func:`read_profile`).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ProfileError(f"{path}: cannot read it: {e.strerror or e}") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    return read_profile(d, str(path))


def _strict(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _strict(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_strict(x) for x in v]
    return v


def save_profile(profile: StyleProfile, path: str | Path) -> Path:
    """Write ``profile`` as JSON to ``path``, atomically (non-finite numbers as null); returns the path."""
    return write_text_atomic(path, json.dumps(_strict(profile.to_dict()), ensure_ascii=False) + "\n")
