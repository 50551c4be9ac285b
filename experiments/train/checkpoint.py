"""Checkpoints and policy files of :mod:`experiments.train.ppo`, and the files of a run's folder.

A checkpoint (``checkpoint.pt``) holds everything a run needs to go on exactly as if never stopped: the
settings, the network and optimiser (and the exploiter's), the league's pool and draws, the numpy and torch
random states, the counters and logs, the environment's state and the decisions still pending in the turn
buffers. It is written with :func:`agents.policy.save_file` (a temporary file renamed, with a digest) and read
with :func:`agents.policy.load_policy_file` (torch's safe loader: tensors and plain values only, so numpy
arrays travel as tensors, :func:`to_torch` / :func:`to_numpy`). Anything that cannot be resumed is a
:class:`CheckpointError` naming the file and the reason.

:func:`load_checkpoint` checks everything before the run goes on: the settings, the network's and every
snapshot's shapes, the optimiser's state, finite weights (no NaN or infinity anywhere), the counters against the
run's budget and each other, the league's tables and the turn buffers; a checkpoint that fails is refused, and
nothing has been written then (the run's folder is opened only after, :mod:`experiments.train.session`).

The functions here take the run's :class:`~experiments.train.state.TrainState` and read or set its fields: a checkpoint
is that state, whole.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.policy import (
    CHECKPOINT_FORMAT,
    FORMAT_VERSION,
    PolicyFileError,
    load_policy_file,
    save_file,
    save_policy,
)
from experiments.train.league import RECENT, split_specs
from experiments.train.report import eval_score, write_logs
from experiments.train.settings import SettingsError
from mus_env.config import is_int

if TYPE_CHECKING:
    from experiments.train.state import TrainState

__all__ = ["CheckpointError", "RUN_FILES", "RESUMABLE_CHANGES", "to_torch", "to_numpy", "run_settings",
           "save_checkpoint", "load_checkpoint", "export_policy", "save_run", "save_outputs", "end_fell",
           "settle_policy"]


class CheckpointError(SettingsError):
    """A checkpoint that cannot be resumed (damaged, forged, or made by another configuration), a warm start that
    does not fit, or a run's folder that cannot be used; raised before anything is written."""


#: What a run writes in its folder (``--overwrite`` replaces these and nothing else; ``exploit.json`` and
#: ``exploit_curve.png`` are a ``mus exploit`` probe's result, which belongs to the run it measured).
RUN_FILES = ("checkpoint.pt", "policy.pt", "best_policy.pt", "last_policy.pt", "metrics.csv", "eval.csv",
             "learning_curve.png", "args.json", "run.json", "tb", "exploiter.pt", "magnet.pt", "exploit.json",
             "exploit_curve.png")

#: Settings a run may change when it resumes (the budget, the clock, the logging, where the networks run and on
#: how many torch threads); any other change is refused. A resume on another device or thread count is not
#: bit-exact (floating-point sums are grouped differently) but plays the same game with the same state.
#: Settings added after checkpoints were first written, with the value a checkpoint without them ran with where
#: that is not today's default (``max_stake``: runs before the cap had none).
SETTINGS_BEFORE_THEM = {"max_stake": 0}

RESUMABLE_CHANGES = ("total_decisions", "max_minutes", "progress", "out", "eval_every", "checkpoint_every", "device",
                     "torch_threads")

#: Checkpoint entries that stay torch values when loaded (the rest becomes numpy).
_TORCH_ENTRIES = ("model", "optimizer", "pool", "responses", "torch_rng", "exploiter_model", "exploiter_optimizer",
                  "magnet_model")


def to_torch(tree: Any) -> Any:
    """numpy arrays -> tensors, through dicts, lists and tuples (torch's safe loader reads tensors and plain
    values only); ``uint64`` arrays travel as ``{"__uint64__": int64 tensor}``."""
    if isinstance(tree, np.ndarray):
        if tree.dtype == np.uint64:
            return {"__uint64__": torch.from_numpy(tree.view(np.int64).copy())}
        return torch.from_numpy(np.ascontiguousarray(tree).copy())
    if isinstance(tree, dict):
        return {k: to_torch(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [to_torch(v) for v in tree]
    return tree


def to_numpy(tree: Any) -> Any:
    """The inverse of :func:`to_torch`: tensors -> numpy arrays (tuples come back as lists)."""
    if isinstance(tree, torch.Tensor):
        return tree.numpy().copy()
    if isinstance(tree, dict):
        if set(tree) == {"__uint64__"}:
            return tree["__uint64__"].numpy().view(np.uint64).copy()
        return {k: to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [to_numpy(v) for v in tree]
    return tree


def run_settings(out: Path, fields: list[str]) -> dict[str, Any]:
    """The settings the run in ``out`` was made with, from its ``args.json``: what ``mus train --resume`` takes
    for every flag not given, so that a run resumes with ``--resume --out RUN`` alone.

    Only names in ``fields`` (the trainer's settings) are returned, never ``out`` (the folder is where the run is
    now, whatever it was called then); a setting added since the run was written takes what runs before it used
    (:data:`SETTINGS_BEFORE_THEM`). A folder without a readable ``args.json`` gives ``{}``: the flags and the
    preset are then used as given, and the checkpoint's own check names any setting that differs.
    """
    try:
        saved = json.loads((Path(out) / "args.json").read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict):
        return {}
    settings = {k: v for k, v in SETTINGS_BEFORE_THEM.items() if k in fields}
    settings.update({k: v for k, v in saved.items() if k in fields and k != "out"})
    return settings                                   # (make_args turns the JSON list of hidden into a tuple)


def save_checkpoint(t: TrainState) -> Path:
    """Write the trainer ``t``'s whole state to ``t.out / "checkpoint.pt"`` (see the module docstring)."""
    blob = {
        "format": CHECKPOINT_FORMAT, "version": FORMAT_VERSION,
        "args": t.args.to_dict(), "arch": dict(t.net.arch), "config": t.cfg.to_dict(),
        "model": t.net.state_dict(), "optimizer": t.opt.state_dict(),
        "pool": list(t.league.pool), "pool_ids": list(t.league.pool_ids),
        "responses": list(t.league.responses), "response_ids": list(t.league.response_ids),
        "league": {"kind": t.league.kind, "learner": t.league.learner},
        "rng": json.dumps(t.rng.bit_generator.state), "torch_rng": torch.get_rng_state(),
        "counters": {"update": t.update, "decisions": t.decisions, "games": t.games,
                     "learner_decisions": t.learner_decisions, "elapsed": t.elapsed, "bc_done": t.bc_done},
        "recent": dict(t.league.recent),
        "history": json.dumps(t.history), "evals": json.dumps(t.evals),
        "env": t.env.state_dict(), "buffer": t.buffer.state_dict(),
        "obs": t.obs.copy(), "mask": t.mask.copy(),
    }
    if t.exploiter is not None:
        blob |= {"exploiter_model": t.exploiter.state_dict(), "exploiter_optimizer": t.exploiter_opt.state_dict(),
                 "exploiter_buffer": t.exploiter_buffer.state_dict(), "exploiter_born": t.exploiter_born}
    if t.magnet is not None:
        blob |= {"magnet_model": t.magnet.state_dict(), "magnet_born": t.magnet_born}
    # written to a temporary file and renamed: a killed run never leaves half a checkpoint
    return save_file(t.out / "checkpoint.pt", to_torch(blob))


def load_checkpoint(t: TrainState, path: Path) -> None:
    """Continue the trainer ``t`` (just built with the run's settings) from ``path``: everything is checked, then
    restored, so the run goes on exactly as if never stopped. Nothing is written.

    Raises:
        CheckpointError: no file, a policy file, a damaged, forged or incomplete checkpoint (shapes, NaN or
            infinite numbers, counters outside the run's budget or inconsistent with each other, league tables
            or buffers that do not fit the run), or one made with other settings than ``t.args`` (other than
            :data:`RESUMABLE_CHANGES`); the message says which and how to resume.
    """
    if not path.is_file():
        raise CheckpointError(f"{path}: no checkpoint to resume (train without --resume to start a run)")
    try:
        blob = load_policy_file(path)              # torch's safe loader, the digest, finite numbers everywhere
    except PolicyFileError as e:
        raise CheckpointError(str(e)) from e
    if blob.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: a policy file, not a training checkpoint (it has no optimiser state)")
    try:
        keep = [k for k in _TORCH_ENTRIES if k in blob]      # torch state stays torch; the rest becomes numpy
        blob = to_numpy({k: v for k, v in blob.items() if k not in keep}) | {k: blob[k] for k in keep}
        _check_settings(t, blob, path)
        c = _check_counters(t, blob, path)
        _load_net(t.net, t.opt, blob["model"], blob["optimizer"], path, "")
        t.league.pool = _check_frozen(t, blob["pool"], blob["pool_ids"], c["update"], path, "snapshot",
                                      t.args.pool_size, t.args.snapshot_every)
        t.league.pool_ids = [int(u) for u in blob["pool_ids"]]
        # past exploiters (checkpoints before them have none; none without "responses" in the mix)
        t.league.responses = _check_frozen(t, blob.get("responses", []), blob.get("response_ids", []), c["update"],
                                           path, "past exploiter",
                                           t.args.pool_size if "responses" in t.league.mix else 0, 1)
        t.league.response_ids = [int(u) for u in blob.get("response_ids", [])]
        _check_league(t, blob["league"], path)
        t.league.kind[...] = blob["league"]["kind"]
        t.league.learner[...] = blob["league"]["learner"]
        recent = {**RECENT, **blob["recent"]}
        if set(recent) != set(RECENT) or not all(_is_number(v) for v in recent.values()):
            raise _forged(path, f"its league results {blob['recent']!r} are not the counts a run keeps")
        t.league.recent = {k: type(RECENT[k])(v) for k, v in recent.items()}
        t.rng.bit_generator.state = json.loads(blob["rng"])
        t.update, t.decisions, t.games = c["update"], c["decisions"], c["games"]
        t.learner_decisions, t.elapsed, t.bc_done = c["learner_decisions"], c["elapsed"], c["bc_done"]
        t.history, t.evals = c["history"], c["evals"]
        t.env.load_state_dict(blob["env"])
        t.buffer.load_state_dict(blob["buffer"])
        if t.exploiter is not None:
            _load_net(t.exploiter, t.exploiter_opt, blob["exploiter_model"], blob["exploiter_optimizer"], path,
                      "exploiter's ")
            t.exploiter_buffer.load_state_dict(blob["exploiter_buffer"])
            born = blob["exploiter_born"]
            if not is_int(born, numpy=True) or not -1 <= born <= t.update:
                raise _forged(path, f"its exploiter was born at update {born!r}, not in -1..{t.update}")
            t.exploiter_born = born
        if "magnet_model" in blob:
            _check_state_dict(t.net, blob["magnet_model"], path, "the magnet")
            born = blob["magnet_born"]
            if not is_int(born, numpy=True) or not 0 <= born <= t.update:
                raise _forged(path, f"its magnet was taken at update {born!r}, not in 0..{t.update}")
            t.refresh_magnet()
            t.magnet.load_state_dict(blob["magnet_model"])
            t.magnet_born = int(born)
        t.obs, t.mask = t.env.observe()
        if not (np.array_equal(t.obs, blob["obs"]) and np.array_equal(t.mask, blob["mask"])):
            raise CheckpointError(f"{path}: the environment state does not match its saved observation")
        if not (t.mask.sum(axis=1) > 0).all():
            raise _forged(path, "a table of its environment has no legal action")
        torch.set_rng_state(blob["torch_rng"])       # last: the process's torch generator changes only on success
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError, OverflowError,
            json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: damaged or incomplete checkpoint ({type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''})") from e


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) and \
        bool(np.isfinite(v))


def _forged(path: Path, what: str) -> CheckpointError:
    return CheckpointError(f"{path}: {what}: the checkpoint is damaged or was edited; resume from a copy of an "
                           "earlier checkpoint, or start a new run")


def _check_settings(t: TrainState, blob: dict[str, Any], path: Path) -> None:
    """The checkpoint's settings and network against the run's (only :data:`RESUMABLE_CHANGES` may differ)."""
    saved = blob["args"]
    mine = t.args.to_dict()
    # fields added since the checkpoint was written: their default, or what runs before them used
    known = type(t.args)().to_dict() | SETTINGS_BEFORE_THEM
    was = {k: saved.get(k, known[k]) for k in ("signals", "signal_intercept_p")}
    if was != {k: mine[k] for k in was}:
        arch = blob["arch"]
        raise CheckpointError(
            f"{path}: trained with signals={was['signals']!r}, "
            f"signal_intercept_p={was['signal_intercept_p']!r} "
            f"(a policy of {arch.get('obs_dim')} observations and {arch.get('num_actions')} actions), "
            f"now signals={mine['signals']!r}, signal_intercept_p={mine['signal_intercept_p']!r}: resume "
            f"with --signals {was['signals']} --signal-intercept-p {was['signal_intercept_p']:g}, or start "
            "a new run in another --out")
    diff = [k for k in mine if k not in RESUMABLE_CHANGES and saved.get(k, known[k]) != mine[k]]
    if diff:
        raise CheckpointError(f"{path}: made with other settings: " + ", ".join(
            f"{k}={saved.get(k, known[k])!r} (now {mine[k]!r})" for k in diff) + "; resume with the same settings")
    if {k: blob["arch"].get(k) for k in t.net.arch} != t.net.arch:
        raise CheckpointError(f"{path}: its network {blob['arch']} is not this run's {t.net.arch}")


def _check_counters(t: TrainState, blob: dict[str, Any], path: Path) -> dict[str, Any]:
    """The counters, logs and clock, checked against the run's budget and against each other."""
    c = dict(blob["counters"])
    for name in ("update", "decisions", "games", "learner_decisions"):
        if not is_int(c.get(name), numpy=True) or c[name] < 0:
            raise _forged(path, f"its counter {name} is {c.get(name)!r}, not an int >= 0")
        c[name] = int(c[name])
    update = c["update"]
    if c["decisions"] != update * t.batch:
        raise _forged(path, f"its {c['decisions']:,} decisions are not {update:,} updates of {t.batch:,}")
    if update > t.num_updates:
        raise CheckpointError(f"{path}: the run is at update {update:,}, past this run's budget of "
                              f"{t.num_updates:,} updates (--total-decisions {t.args.total_decisions}): resume "
                              f"with --total-decisions {update * t.batch} or more")
    if c["learner_decisions"] > c["decisions"] or c["games"] > c["decisions"]:
        raise _forged(path, "it counts more learner decisions or games than decisions")
    if not _is_number(c.get("elapsed")) or c["elapsed"] < 0:
        raise _forged(path, f"its clock is {c.get('elapsed')!r} seconds")
    c["elapsed"] = float(c["elapsed"])
    if not isinstance(c.get("bc_done"), (bool, np.bool_)):
        raise _forged(path, f"its warm-start flag is {c.get('bc_done')!r}")
    c["bc_done"] = bool(c["bc_done"])
    history, evals = json.loads(blob["history"]), json.loads(blob["evals"])
    if not isinstance(history, list) or [r.get("update") if isinstance(r, dict) else None for r in history] != \
            list(range(1, update + 1)):
        raise _forged(path, f"its metrics are not one row for each of its {update:,} updates")
    seen = [r.get("update") if isinstance(r, dict) else None for r in evals] if isinstance(evals, list) else [None]
    if not all(is_int(u, numpy=True) and 1 <= u <= update for u in seen) or seen != sorted(set(seen)):
        raise _forged(path, "its evaluations are not rows of its own updates, in order")
    c["history"], c["evals"] = history, evals
    return c


def _load_net(net: Any, opt: Any, model: Any, optimizer: Any, path: Path, who: str) -> None:
    """Load a network and its Adam state, each tensor of the shape of the run's."""
    _check_state_dict(net, model, path, f"the {who}network")
    net.load_state_dict(model)
    opt.load_state_dict(optimizer)
    for group in opt.param_groups:
        for p in group["params"]:
            for k, v in opt.state.get(p, {}).items():
                if isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape != p.shape:
                    raise _forged(path, f"the {who}optimiser's {k} has shape {tuple(v.shape)}, its weight "
                                        f"{tuple(p.shape)}")


def _check_state_dict(net: Any, state: Any, path: Path, what: str) -> None:
    mine = {k: (tuple(v.shape), v.dtype) for k, v in net.state_dict().items()}
    theirs = {k: (tuple(v.shape), v.dtype) if isinstance(v, torch.Tensor) else None for k, v in dict(state).items()}
    if theirs != mine:
        wrong = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        raise _forged(path, f"{what}'s weights do not fit this run's network ({', '.join(wrong[:3])})")


def _check_frozen(t: TrainState, states: Any, ids: Any, update: int, path: Path, family: str, most: int,
                  every: int) -> list[dict[str, Any]]:
    """One of the league's frozen pools (``family``: "snapshot" or "past exploiter"): at most ``most`` members,
    each of the learner's shape, taken at increasing past updates, each a multiple of ``every``."""
    states, ids = [dict(p) for p in states], list(ids)
    if len(states) != len(ids) or len(states) > most:
        raise _forged(path, f"its league holds {len(states)} {family}s with {len(ids)} updates (at most {most} "
                            "in this run)")
    for i, state in enumerate(states):
        _check_state_dict(t.net, state, path, f"the league's {family} {i}")
    if not all(is_int(u, numpy=True) and 1 <= u <= update and u % every == 0 for u in ids) or \
            ids != sorted(set(ids)):
        raise _forged(path, f"its {family}s were taken at updates {ids}, not increasing past updates"
                            + (f" every {every}" if every > 1 else ""))
    return states


def _check_league(t: TrainState, league: Any, path: Path) -> None:
    """Each table's opponent kind is one the run's league has, and its learner seats one team (or all four)."""
    kind, learner = np.asarray(league["kind"]), np.asarray(league["learner"])
    lg = t.league
    if kind.shape != lg.kind.shape or not np.issubdtype(kind.dtype, np.integer):
        raise _forged(path, f"its league's table kinds have shape {kind.shape} {kind.dtype}, not {lg.kind.shape}")
    if learner.shape != lg.learner.shape or learner.dtype != np.bool_:
        raise _forged(path, f"its league's learner seats have shape {learner.shape} {learner.dtype}, not "
                            f"{lg.learner.shape} bool")
    kinds = lg.first_snapshot + len(lg.pool) + len(lg.responses)
    if kind.size and not (0 <= kind.min() and kind.max() < kinds):
        raise _forged(path, f"its league's table kinds run {kind.min()}..{kind.max()}, this league has {kinds} "
                            f"({', '.join(lg.members)})")
    team = learner[:, 0] & learner[:, 2] & ~learner[:, 1] & ~learner[:, 3] | \
        learner[:, 1] & learner[:, 3] & ~learner[:, 0] & ~learner[:, 2]
    if not np.where(kind == 0, learner.all(axis=1), team).all():
        raise _forged(path, "its league's learner seats are not one team per table (all four in self-play)")


def export_policy(t: TrainState, meta: dict[str, Any] | None = None, name: str = "policy.pt", net: Any = None) -> Path:
    """Write the trainer ``t``'s current policy (or ``net``, the exploiter) to ``t.out / name``, loadable by
    ``make_agent``, with the run's progress and settings (and ``meta``) in its ``meta``."""
    info = {"update": t.update, "decisions": t.decisions, "seconds": round(t.elapsed, 1),
            "args": t.args.to_dict(), **(meta or {})}
    return save_policy(t.out / name, t.net if net is None else net, t.args.game_config(training=False).to_dict(),
                       info)


def save_run(t: TrainState) -> None:
    """Everything of the trainer ``t`` in its folder: the checkpoint, then :func:`save_outputs`."""
    save_checkpoint(t)
    save_outputs(t)


def save_outputs(t: TrainState) -> None:
    """The files a checkpoint of the trainer ``t`` comes with: the logs and learning curve, ``policy.pt`` (and
    ``exploiter.pt``, the exploiter's current policy, when there is one; ``magnet.pt``, the averaged magnet, with
    ``magnet_ema``)."""
    write_logs(t.out, t.history, t.evals, split_specs(t.args.eval_opponents))
    export_policy(t)
    if t.exploiter is not None:
        export_policy(t, {"exploiter_born": t.exploiter_born}, name="exploiter.pt", net=t.exploiter)
    if t.args.magnet_ema and t.magnet is not None:
        export_policy(t, {"magnet_ema": t.args.magnet_ema, "magnet_born": t.magnet_born}, name="magnet.pt",
                      net=t.magnet)


def end_fell(best: dict[str, Any], end: dict[str, Any], opponents: list[str]) -> bool:
    """Whether a run's end is worse than its best evaluation by the stated rule: the best one's
    :func:`~experiments.train.report.eval_score` (its smallest stones/hand margin over the evaluation opponents)
    beats the end's by more than the end's 95% CI half-width (its widest over those opponents)."""
    half = max((float(end[f"{o}_stones_hi"]) - float(end[f"{o}_stones_lo"])) / 2 for o in opponents)
    return eval_score(best, opponents) > eval_score(end, opponents) + half


def settle_policy(t: TrainState, log: Any = print) -> dict[str, Any] | None:
    """At a run's end: ``policy.pt`` is the last policy, unless the run's best evaluation beat its end
    (:func:`end_fell`); then ``policy.pt`` becomes that best policy (``best_policy.pt``) and the last one is kept as
    ``last_policy.pt``, and a line says so. Returns the best evaluation then, else None."""
    if len(t.evals) < 2 or not (t.out / "best_policy.pt").is_file():
        return None
    opponents = split_specs(t.args.eval_opponents)
    best, end = max(t.evals, key=lambda e: eval_score(e, opponents)), t.evals[-1]
    if best is end or not end_fell(best, end, opponents):
        return None
    shutil.copyfile(t.out / "policy.pt", t.out / "last_policy.pt")
    shutil.copyfile(t.out / "best_policy.pt", t.out / "policy.pt")
    log(f"the run's best evaluation (update {best['update']}: "
        + ", ".join(f"{o} {best[f'{o}_stones']:+.2f}" for o in opponents)
        + ") beat its end (" + ", ".join(f"{o} {end[f'{o}_stones']:+.2f}" for o in opponents)
        + f") by more than the end's 95% CI: policy.pt is that best policy; the last one is {t.out / 'last_policy.pt'}")
    return best
