"""Row ``mus-train``: the project's own trainer, ``mus train --preset scratch`` (PPO from a random network with a
self-play league: the learner against itself, its snapshots, ``rule`` and ``equity``; no warm start, no
imitation), stopped by the row's wall clock.

The learning rate is annealed over :data:`DECISIONS_PER_MINUTE` times the budget's minutes (the preset's pace on
2 cores), so a machine of that speed ends the schedule with the budget. The training runs in sessions of the
trainer (``experiments.train.ppo.train`` with ``max_minutes``), one per curve point: each ends with the trainer's
checkpoint, its policy exported (``curve_policy.pt``) and measured by
:func:`~experiments.benchmark.protocol.curve_point` on the clock's pause. A stopped row resumes from the
trainer's last checkpoint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from experiments.benchmark.protocol import Budget, Clock, Trained, curve_point, versions

__all__ = ["train", "DECISIONS_PER_MINUTE", "settings"]

#: Decisions (all seats) per minute of ``--preset scratch`` on the 2-core development machine (600M in about 100
#: minutes, docs/training.md): sizes the learning-rate schedule of a budget.
DECISIONS_PER_MINUTE = 6_000_000


def settings(out: Path, budget: Budget) -> tuple[str, dict[str, object]]:
    """The trainer's preset and ``Args`` fields of this row (``tiny``: the trainer's tiny preset, from scratch)."""
    changes: dict[str, object] = dict(out=str(out / "run"), seed=budget.seed, torch_threads=budget.threads,
                                      progress=False, eval_every=0,
                                      total_decisions=int(DECISIONS_PER_MINUTE * budget.minutes))
    if budget.tiny:
        return "tiny", {**changes, "warm_start": "none", "total_decisions": 1 << 30}
    return "scratch", changes


def train(out: Path, budget: Budget, log: Callable[[str], None] = print) -> Trained:
    """Train the row in ``out`` for ``budget`` (continue a stopped one; a finished one is returned as it is)."""
    from experiments.train import checkpoint, ppo

    out = Path(out)
    done = Trained.load(out)
    if done is not None:
        return done
    out.mkdir(parents=True, exist_ok=True)
    preset, changes = settings(out, budget)
    args = ppo.make_args(preset, **changes)
    clock = Clock(out, budget).start()
    resume = (out / "run" / "checkpoint.pt").exists()
    t = None
    while not clock.done:
        session = dataclasses.replace(args, max_minutes=max(clock.next_point - clock.minutes, 1e-3))
        t = ppo.train(session, resume=resume, log=log, overwrite=not resume)
        resume = True
        with clock.paused():
            policy = checkpoint.export_policy(t, {"benchmark_minutes": clock.minutes}, name="curve_policy.pt")
            if clock.point_due():
                clock.add_point(curve_point(policy, clock.minutes, t.learner_decisions,
                                            **({"deals": 64} if budget.tiny else {})))
                log(f"mus-train: {clock.minutes:.2f} min, {t.learner_decisions:,} learner decisions, vs rule "
                    f"{clock.curve[-1]['vs_rule']:+.3f}")
            clock.save()
        if t.update >= t.num_updates:
            break
    if t is None:                                       # the budget was spent before this session: the last policy
        t = ppo.train(args, resume=True, log=log)
    final = checkpoint.export_policy(t, {"benchmark_minutes": clock.minutes}, name="policy.pt")
    result = Trained(policy=str(final), decisions=int(t.learner_decisions), minutes=clock.minutes,
                     curve=clock.curve,
                     versions=versions("torch"), settings={"preset": preset, **{k: v for k, v in args.to_dict().items()
                                                                            if k != "out"}})
    result.save(out)
    return result
