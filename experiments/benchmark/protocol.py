"""What every row of ``mus benchmark`` shares: its budget, what its training hands back, the clock that holds the
budget across resumes and the learning curve's measure (the export of a network as a mus-env policy file is in
:mod:`experiments.benchmark.export`, which needs torch).

A *row* is one algorithm of one framework, trained from scratch (no warm start, no imitation) for the same
wall-clock budget on the same machine (:class:`Budget`). Its trainer (:data:`RowTrainer`) writes everything in
its own folder, stops when the budget is spent, and, called again on the same folder, continues from its
checkpoint (the clock's minutes are saved with it, so a resumed row ends where one never stopped would). It hands
back a :class:`Trained`: the policy as a mus-env policy file (``*.pt``,
:func:`experiments.benchmark.export.export_mlp`), so that every row is
evaluated by the same code (``mus evaluate``'s report card, the quick probe from its own weights), the
decisions it trained and its learning curve: :func:`curve_point`, the same duplicate measure against ``rule``
for every row, taken on the clock's pauses (its time is not the training's).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Budget", "Trained", "RowTrainer", "Clock", "curve_point", "versions", "CURVE_DEALS",
           "CURVE_SEED", "TRAINED_NAME"]

#: Held-out deals of a curve point (duplicate against ``rule``, one hand each) and their seed: the same for
#: every row, and not the report card's deal set.
CURVE_DEALS = 2000
CURVE_SEED = 777
#: The file a finished trainer leaves in its folder (its :class:`Trained`).
TRAINED_NAME = "trained.json"


@dataclasses.dataclass(frozen=True)
class Budget:
    """What a row may spend: ``minutes`` of wall-clock training on this machine (curve points not counted),
    with ``seed``. ``tiny`` asks for a smoke run (the smallest sizes the trainer has, for tests); ``threads`` is
    the torch threads it may use."""

    minutes: float
    seed: int = 0
    tiny: bool = False
    threads: int = 1
    curve_points: int = 8
    """curve points over the budget (evenly spaced in training minutes; the last at the end)"""

    def __post_init__(self) -> None:
        if not self.minutes > 0:
            raise ValueError(f"a row's budget is a positive number of minutes, got {self.minutes!r}")
        if self.curve_points < 1:
            raise ValueError(f"curve_points must be at least 1, got {self.curve_points!r}")


@dataclasses.dataclass
class Trained:
    """What a row's training hands back."""

    policy: str
    """the trained policy as a mus-env policy file (``agents.make_agent`` loads it)"""
    decisions: int
    """the learner's decisions trained on (environment steps of the learning seats)"""
    minutes: float
    """wall-clock minutes of training, every session of it, curve points not counted"""
    curve: list[dict[str, float]]
    """the learning curve: ``{"minutes", "decisions", "vs_rule", "vs_rule_lo", "vs_rule_hi"}`` points"""
    versions: dict[str, str] = dataclasses.field(default_factory=dict)
    """the framework's packages and their versions"""
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    """the algorithm's settings (what a reader needs to run it again)"""

    def save(self, folder: Path) -> Path:
        """Write ``folder/trained.json``."""
        path = Path(folder) / TRAINED_NAME
        path.write_text(json.dumps(dataclasses.asdict(self), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, folder: Path) -> Trained | None:
        """A finished training's result in ``folder`` (None: none finished there)."""
        path = Path(folder) / TRAINED_NAME
        if not path.exists():
            return None
        return cls(**json.loads(path.read_text(encoding="utf-8")))


class RowTrainer(Protocol):
    """A row's training: from scratch in ``out`` for ``budget`` (continuing a stopped one found there)."""

    def __call__(self, out: Path, budget: Budget, log: Callable[[str], None]) -> Trained: ...


class Clock:
    """The training's wall clock, kept across resumes in ``folder/clock.json``.

    ``minutes`` counts the time spent since :meth:`start`, plus what earlier sessions saved; :meth:`paused`
    stops it (a curve point's evaluation, a checkpoint's write). :meth:`add_point` keeps a curve point. Call
    :meth:`save` with each checkpoint: a session that stops after it resumes from the saved minutes and points
    (the time after the last save is trained again, and counted again).
    """

    def __init__(self, folder: Path, budget: Budget) -> None:
        self.path = Path(folder) / "clock.json"
        self.budget = budget
        saved = json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}
        self._before = float(saved.get("minutes", 0.0))
        #: the curve points taken so far (every session)
        self.curve: list[dict[str, float]] = list(saved.get("curve", []))
        self._since: float | None = None

    def start(self) -> Clock:
        self._since = time.perf_counter()
        return self

    @property
    def minutes(self) -> float:
        """Training minutes so far (every session)."""
        running = 0.0 if self._since is None else (time.perf_counter() - self._since) / 60.0
        return self._before + running

    @property
    def done(self) -> bool:
        """Whether the budget is spent."""
        return self.minutes >= self.budget.minutes

    @property
    def points_taken(self) -> int:
        return len(self.curve)

    @property
    def next_point(self) -> float:
        """The training minutes of the next curve point (the budget once they are all taken)."""
        every = self.budget.minutes / self.budget.curve_points
        return min(self.budget.minutes, (self.points_taken + 1) * every)

    def point_due(self) -> bool:
        """Whether the next curve point's time has come (the last one is due once the budget is spent)."""
        return self.points_taken < self.budget.curve_points and self.minutes >= self.next_point - 1e-9

    def add_point(self, point: dict[str, float]) -> None:
        """Keep a curve point (saved by the next :meth:`save`)."""
        self.curve.append(point)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Time spent inside is not training."""
        self._before = self.minutes
        self._since = None
        try:
            yield
        finally:
            self._since = time.perf_counter()

    def save(self, **extra: Any) -> None:
        """Keep the minutes and the curve points for a resume (and ``extra``: what else the row keeps with them)."""
        self.path.write_text(json.dumps({**extra, "minutes": self.minutes, "curve": self.curve}), encoding="utf-8")


def curve_point(policy: str | Path, minutes: float, decisions: int, deals: int = CURVE_DEALS,
                seed: int = CURVE_SEED) -> dict[str, float]:
    """One point of a learning curve: the policy file's stones per hand against ``rule`` in duplicate on
    ``deals`` held-out deals (one hand each, sampled play), with its 95% interval."""
    from agents import make_agent
    from experiments.evaluate.deals import make_deals
    from experiments.evaluate.duplicate import play_pair

    result = play_pair(make_agent(str(policy)), make_agent("rule"), make_deals(deals, seed=seed), mode="hands",
                       seed=seed)
    mean, lo, hi = result.mean_diff()
    return {"minutes": round(float(minutes), 4), "decisions": int(decisions), "vs_rule": float(mean),
            "vs_rule_lo": float(lo), "vs_rule_hi": float(hi)}


def versions(*packages: str) -> dict[str, str]:
    """mus-env's and ``packages``' installed versions (a package not installed: ``"not installed"``)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("mus-env", *packages):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out
