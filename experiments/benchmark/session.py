"""What the rows' training loops share (the rows written for Tianshou and OpenSpiel use it): a curve point taken
on the clock's pause, atomic checkpoint writes and the random generators' state kept across a resume.

A row's loop is::

    clock = Clock(out, budget).start()
    while True:
        if clock.point_due():                   # on the pause: a point, then the checkpoint and the clock
            with clock.paused():
                take_point(...); save_checkpoint(...); clock.save()
            continue
        if clock.done:
            break
        ...one short chunk of training...

so a point is taken as soon as it is due, the last one once the budget is spent, and a session that stops
resumes from the state of its last point.
"""

from __future__ import annotations

import os
import pickle
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiments.benchmark.protocol import CURVE_DEALS, Budget, Clock, curve_point

__all__ = ["TINY_CURVE_DEALS", "curve_deals", "take_point", "write_atomic", "save_pickle", "load_pickle",
           "rng_state", "set_rng_state"]

#: Deals of a curve point in a smoke run (``budget.tiny``).
TINY_CURVE_DEALS = 64


def curve_deals(budget: Budget) -> int:
    """The curve points' deals for ``budget``: :data:`CURVE_DEALS`, or :data:`TINY_CURVE_DEALS` when tiny."""
    return TINY_CURVE_DEALS if budget.tiny else CURVE_DEALS


def take_point(out: Path, clock: Clock, export: Callable[[Path], Any], decisions: int,
               curve: list[dict[str, float]], log: Callable[[str], None]) -> dict[str, float]:
    """Export the current network to ``out/latest.pt`` with ``export(path)``, measure it (:func:`curve_point`),
    and keep the point on ``clock`` (whose ``curve`` is the row's ``curve``). Call it inside ``clock.paused()``."""
    path = Path(out) / "latest.pt"
    export(path)
    point = curve_point(path, clock.minutes, decisions, deals=curve_deals(clock.budget))
    if clock.curve is not curve:
        raise ValueError("the clock keeps the row's curve: set clock.curve = curve once, after a resume")
    clock.add_point(point)
    log(f"curve point {clock.points_taken}/{clock.budget.curve_points}: {point['minutes']:.2f} min, "
        f"{decisions} decisions, vs rule {point['vs_rule']:+.3f} [{point['vs_rule_lo']:+.3f}, "
        f"{point['vs_rule_hi']:+.3f}] stones per hand")
    return point


def write_atomic(path: Path, write: Callable[[Path], Any]) -> None:
    """``write(tmp)`` then rename ``tmp`` to ``path``: a session killed while writing leaves the old file."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def save_pickle(path: Path, obj: Any) -> None:
    """Pickle ``obj`` to ``path`` atomically."""
    def _write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
    write_atomic(path, _write)


def load_pickle(path: Path) -> Any:
    """What :func:`save_pickle` wrote (only the row's own checkpoints are read: pickle trusts its file)."""
    with open(path, "rb") as f:
        return pickle.load(f)  # noqa: S301 (the row's own checkpoint)


def rng_state() -> dict[str, Any]:
    """The global generators' state (``random``, numpy's legacy global one, torch's CPU one)."""

    return {"python": random.getstate(), "numpy": np.random.get_state(),  # noqa: NPY002
            "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned."""

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])  # noqa: NPY002
    torch.set_rng_state(state["torch"])


def load_checkpoint(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """A row's checkpoint (``torch.save`` of a dict with its ``settings``), refused if made with other settings.

    Raises:
        ValueError: the checkpoint's settings are not ``settings`` (the message shows both).
    """
    state = torch.load(path, weights_only=False)
    if state["settings"] != settings:
        raise ValueError(f"{path} was written with other settings ({state['settings']}); these are {settings}: "
                         "use another folder")
    return state
