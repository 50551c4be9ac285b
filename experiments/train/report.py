"""What a run of :mod:`experiments.train.ppo` reports: its evaluations (:func:`evaluate`, duplicate matches against
the evaluation opponents), ``metrics.csv``, ``eval.csv``, ``learning_curve.png``, ``args.json`` and ``run.json`` in
its folder, the progress bar, and the summary printed at the end. It reads the run's
:class:`~experiments.train.state.TrainState` through its fields.

:func:`eval_score` is how ``best_policy.pt`` is chosen among the evaluations; :func:`machine_text` describes
the machine for run records and model cards. TensorBoard scalars are written by the training loop itself.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from matplotlib.figure import Figure
from tqdm import tqdm

from agents import spec_label
from agents.policy import TorchPolicyAgent
from experiments.evaluate.deals import make_deals
from experiments.evaluate.tournament import play_pair
from experiments.train.league import split_specs
from experiments.train.restricted import RestrictedAgent

if TYPE_CHECKING:
    from experiments.train.state import TrainState

__all__ = ["machine_text", "cpuinfo_field", "eval_score", "eval_text", "write_run_record", "write_csv", "write_logs",
           "learning_curve", "exploiter_signal", "progress_bar", "NullBar", "print_summary", "evaluate",
           "MAGNET_PREFIX"]

#: The prefix of the averaged magnet's columns in an evaluation row (``magnet_rule_stones``, ...).
MAGNET_PREFIX = "magnet_"


def cpuinfo_field(name: str) -> str | None:
    """The first ``name`` field of ``/proc/cpuinfo`` (``"model name"``, ``"vendor_id"``); None where there is none
    or the file cannot be read (not Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine_text() -> str:
    """A line describing this machine (CPU model, cores, memory), for run records and model cards."""
    cpu = cpuinfo_field("model name")
    if cpu is None:
        cpu = platform.processor() or platform.machine()
    mem = ""
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
        kb = int(next(ln for ln in lines if ln.startswith("MemTotal")).split()[1])
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return (f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}")


def eval_score(ev: dict[str, Any], opponents: list[str]) -> float:
    """How ``best_policy.pt`` is chosen: the smallest stones/hand margin over the evaluation opponents (the
    policy that beats its hardest baseline by the most)."""
    return min(float(ev[f"{spec}_stones"]) for spec in opponents)


def eval_text(row: dict[str, Any], opponents: list[str]) -> str:
    """An evaluation row in a few words, for the progress bar: ``rule +0.12/h 0.55w equity ...``."""
    return " ".join(f"{s} {row[f'{s}_stones']:+.2f}/h {row[f'{s}_win']:.2f}w" for s in opponents)


def write_run_record(out: Path, args: dict[str, Any], run_info: dict[str, Any] | None, resume: bool,
                     torch_threads: int, from_update: int) -> None:
    """Write ``args.json`` (the settings) and add this session to ``run.json`` (what ``run_info`` says, e.g.
    the command line and preset, with the machine, torch version and threads, start time and first update;
    a resumed run keeps its first session's fields and appends to ``sessions``)."""
    (out / "args.json").write_text(json.dumps(args, indent=2))
    record = out / "run.json"
    info = json.loads(record.read_text()) if resume and record.is_file() else {}
    session = {**(run_info or {}), "machine": machine_text(), "torch": torch.__version__,
               "torch_threads": torch_threads, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
               "from_update": from_update}
    info = {**session, **{k: v for k, v in info.items() if k != "sessions"}} if not info else info
    info.setdefault("sessions", []).append(session)
    record.write_text(json.dumps(info, indent=2))


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Rows as a CSV file (columns in order of first appearance), written whole and renamed into place."""
    if not rows:
        return
    keys = list(dict.fromkeys(k for r in rows for k in r))
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def write_logs(out: Path, history: list[dict[str, Any]], evals: list[dict[str, Any]], opponents: list[str]) -> None:
    """Rewrite ``metrics.csv`` (one row per update), ``eval.csv`` and ``learning_curve.png`` (one row and point
    per evaluation) in ``out``."""
    write_csv(out / "metrics.csv", history)
    write_csv(out / "eval.csv", evals)
    if evals:
        learning_curve(evals, out / "learning_curve.png", opponents, history)


def exploiter_signal(history: list[dict[str, Any]], window: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exploiter's margin over the learner during training (``exploiter_stones_per_hand`` of each update,
    averaged over the last ``window`` updates): ``(decisions, minutes, margin)``, empty without an exploiter.
    A cheap, noisy exploitability signal: a best response trained alongside the learner, measured on its own
    training games, not a held-out probe."""
    rows = [r for r in history if np.isfinite(r.get("exploiter_stones_per_hand", np.nan))]
    if not rows:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    m = np.array([r["exploiter_stones_per_hand"] for r in rows], dtype=float)
    smooth = np.array([m[max(0, i - window + 1):i + 1].mean() for i in range(len(m))])
    return (np.array([r["decisions"] for r in rows], dtype=float), np.array([r["minutes"] for r in rows], dtype=float),
            smooth)


def learning_curve(evals: list[dict[str, Any]], path: Path, opponents: list[str],
                   history: list[dict[str, Any]] | None = None,
                   stages: list[tuple[float, float]] | None = None) -> Path:
    """Evaluation stones/hand and game win rate (95% CI bands) against decisions and against wall time (the averaged
    magnet's, where evaluated, dashed); with an exploiter in the league, its margin over the learner
    (:func:`exploiter_signal`) on the stones panels.
    ``stages``: where each stage of a lineage after the first starts, as (decisions, minutes) on the curve's axes
    (the evaluations of all stages in one curve), marked by a vertical line."""
    ex = exploiter_signal(history or [])
    fig = Figure(figsize=(10, 6.5))
    axes = fig.subplots(2, 2, sharey="row")
    for col, (xkey, xlabel) in enumerate((("decisions", "environment decisions (millions)"),
                                          ("minutes", "wall time (minutes)"))):
        x = np.array([e[xkey] for e in evals], dtype=float) / (1e6 if xkey == "decisions" else 1.0)
        for row, (key, label, ref) in enumerate((("stones", "stones/hand, learner − baseline", 0.0),
                                                 ("win", "game win rate", 0.5))):
            ax = axes[row, col]
            for spec in opponents:
                y = np.array([e.get(f"{spec}_{key}", np.nan) for e in evals], dtype=float)
                lo = np.array([e.get(f"{spec}_{key}_lo", np.nan) for e in evals], dtype=float)
                hi = np.array([e.get(f"{spec}_{key}_hi", np.nan) for e in evals], dtype=float)
                line, = ax.plot(x, y, marker="o", ms=3, label=f"vs {spec_label(spec)}")
                ax.fill_between(x, lo, hi, alpha=0.2)
                if any(f"{MAGNET_PREFIX}{spec}_{key}" in e for e in evals):     # the averaged magnet, dashed
                    ym = np.array([e.get(f"{MAGNET_PREFIX}{spec}_{key}", np.nan) for e in evals], dtype=float)
                    ax.plot(x, ym, ls="--", marker="x", ms=3, color=line.get_color(),
                            label=f"magnet vs {spec_label(spec)}")
            if key == "stones" and len(ex[2]):
                ax.plot(ex[0] / 1e6 if xkey == "decisions" else ex[1], ex[2], color="black", lw=1, ls=":",
                        label="exploiter − learner (training games, 10 updates)")
            ax.axhline(ref, color="grey", lw=0.8, ls="--")
            for k, start in enumerate(stages or [], 2):
                ax.axvline(start[col] / (1e6 if xkey == "decisions" else 1.0), color="black", lw=0.8, ls=":")
                if row == 0:
                    ax.annotate(f"stage {k}", (start[col] / (1e6 if xkey == "decisions" else 1.0), 1.0),
                                xycoords=("data", "axes fraction"), xytext=(3, -12), textcoords="offset points",
                                fontsize=8)
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label)
            if row == 1:
                ax.set_xlabel(xlabel)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Duplicate evaluation during training (95% CI)")
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    return path


class NullBar:
    """A progress bar that shows nothing (``progress=False``)."""

    def update(self, n: int = 1) -> None:
        """Nothing to show."""

    def set_postfix_str(self, s: str) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""


def progress_bar(total: int, desc: str, enabled: bool, initial: int = 0) -> tqdm | NullBar:
    """A tqdm bar on stderr counting to ``total`` from ``initial`` (a :class:`NullBar` when not ``enabled``)."""
    if not enabled:
        return NullBar()
    return tqdm(total=total, desc=desc, initial=initial, unit_scale=True, dynamic_ncols=True, file=sys.stderr)


def print_summary(t: TrainState, log: Any = print) -> None:
    """The end of a run in a few lines: the last evaluation with its 95% CIs, the best one, the files written."""
    if not t.evals:
        return
    opponents = split_specs(t.args.eval_opponents)
    ev = t.evals[-1]
    log(f"\nevaluation after {ev['decisions']:,} decisions ({t.elapsed / 60:.1f} min), duplicate, "
        "learner minus baseline:")
    for spec in opponents:
        log(f"  vs {spec:<7} stones/hand {ev[f'{spec}_stones']:+.3f} [{ev[f'{spec}_stones_lo']:+.3f}, "
            f"{ev[f'{spec}_stones_hi']:+.3f}]  game win rate {ev[f'{spec}_win']:.3f} "
            f"[{ev[f'{spec}_win_lo']:.3f}, {ev[f'{spec}_win_hi']:.3f}]")
    best = max(t.evals, key=lambda e: eval_score(e, opponents))
    if f"{MAGNET_PREFIX}{opponents[0]}_stones" in ev:
        log("the averaged magnet (magnet.pt) on the same deals:")
        for spec in opponents:
            m = MAGNET_PREFIX + spec
            log(f"  vs {spec:<7} stones/hand {ev[f'{m}_stones']:+.3f} [{ev[f'{m}_stones_lo']:+.3f}, "
                f"{ev[f'{m}_stones_hi']:+.3f}]  game win rate {ev[f'{m}_win']:.3f} "
                f"[{ev[f'{m}_win_lo']:.3f}, {ev[f'{m}_win_hi']:.3f}]")
    log(f"best evaluation: update {best['update']} ({best['decisions']:,} decisions), "
        + ", ".join(f"{s} {best[f'{s}_stones']:+.3f}" for s in opponents)
        + f" stones/hand: {t.out / 'best_policy.pt'}")
    if (t.out / "last_policy.pt").is_file():
        log(f"the end fell below the best evaluation: policy.pt is the best policy, {t.out / 'last_policy.pt'} the "
            "last one")
    if (t.out / "magnet.pt").is_file():
        log(f"the averaged magnet's policy: {t.out / 'magnet.pt'}")
    log(f"wrote {t.out / 'checkpoint.pt'}, {t.out / 'policy.pt'}, {t.out / 'best_policy.pt'}, "
        f"{t.out / 'metrics.csv'}, {t.out / 'eval.csv'}, {t.out / 'learning_curve.png'}, {t.out / 'tb'}")


def evaluate(s: TrainState) -> dict[str, Any]:
    """Duplicate matches of the run's current policy against its evaluation opponents (``eval_opponents``), on
    fixed deals (``eval_hands`` single hands and ``eval_games`` whole games from ``eval_seed``): one row of
    ``eval.csv``, each opponent's stones/hand and game win rate with their 95% CIs and its bidding rates. With
    ``magnet_ema`` the averaged magnet plays the same matches, its columns prefixed :data:`MAGNET_PREFIX`."""
    a = s.args
    cfg = a.game_config(training=False)
    if not s.eval_deals:
        s.eval_deals = {"hands": make_deals(a.eval_hands, a.eval_seed, cfg.target),
                        "games": make_deals(a.eval_games, a.eval_seed + 1, cfg.target)}
    row: dict[str, Any] = {"update": s.update, "decisions": s.decisions}
    s.net.eval()
    row |= _matches(s, TorchPolicyAgent(s.net, greedy=a.eval_greedy, name="learner"), "")
    s.net.train()
    if a.magnet_ema and s.magnet is not None:                 # the magnet is always in eval mode
        row |= _matches(s, TorchPolicyAgent(s.magnet, greedy=a.eval_greedy, name="magnet"), MAGNET_PREFIX)
    return row


def _matches(s: TrainState, learner: TorchPolicyAgent, prefix: str) -> dict[str, Any]:
    """The columns of :func:`evaluate` for one policy, each named ``prefix + spec + _...``."""
    a = s.args
    cfg = a.game_config(training=False)
    tables = min(2048, 2 * max(a.eval_hands, a.eval_games))
    row: dict[str, Any] = {}
    for spec, opp in s.eval_agents.items():
        me = learner if a.learner_decides == "all" else RestrictedAgent(learner, opp, a.learner_decides)
        h = play_pair(me, opp, s.eval_deals["hands"], mode="hands", config=cfg, max_tables=tables,
                      seed=a.eval_seed, names=("learner", spec))
        g = play_pair(me, opp, s.eval_deals["games"], mode="games", config=cfg, max_tables=tables,
                      seed=a.eval_seed, names=("learner", spec))
        m, lo, hi = h.mean_diff()
        w, wlo, whi = g.game_win_rate()
        rates = h.summary()
        col = prefix + spec
        row.update({f"{col}_stones": m, f"{col}_stones_lo": lo, f"{col}_stones_hi": hi,
                    f"{col}_win": w, f"{col}_win_lo": wlo, f"{col}_win_hi": whi,
                    f"{col}_envido_rate": rates["envido_rate_a"], f"{col}_ordago_rate": rates["ordago_rate_a"],
                    f"{col}_no_quiero_rate": rates["no_quiero_rate_a"]})
    return row
