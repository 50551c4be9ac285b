"""Checkpoints and policy files of :mod:`experiments.train.ppo`, and the files of a run's folder.

A checkpoint (``checkpoint.pt``) holds everything a run needs to go on exactly as if never stopped: the
settings, the network and optimiser (and the exploiter's), the league's pool and draws, the numpy and torch
random states, the counters and logs, the environment's state and the decisions still pending in the turn
buffers. It is written with :func:`agents.policy.save_file` (a temporary file renamed, with a digest) and read
with :func:`agents.policy.load_policy_file` (torch's safe loader: tensors and plain values only, so numpy
arrays travel as tensors, :func:`to_torch` / :func:`to_numpy`). Anything that cannot be resumed is a
:class:`CheckpointError` naming the file and the reason.

The functions here take the run's :class:`experiments.train.ppo.Trainer` and read or set its public attributes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

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
from experiments.train.report import write_logs

__all__ = ["CheckpointError", "RUN_FILES", "RESUMABLE_CHANGES", "to_torch", "to_numpy", "prepare_run_folder",
           "save_checkpoint", "load_checkpoint", "export_policy", "save_run"]


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: damaged, or made by another configuration."""


#: What a run writes in its folder (``--overwrite`` removes these and nothing else).
RUN_FILES = ("checkpoint.pt", "policy.pt", "best_policy.pt", "metrics.csv", "eval.csv", "learning_curve.png",
             "args.json", "run.json", "tb", "exploiter.pt")

#: Settings a run may change when it resumes (the budget, the clock, the logging); any other change is refused.
RESUMABLE_CHANGES = ("total_decisions", "max_minutes", "progress", "out", "eval_every", "checkpoint_every")

#: Checkpoint entries that stay torch values when loaded (the rest becomes numpy).
_TORCH_ENTRIES = ("model", "optimizer", "pool", "torch_rng", "exploiter_model", "exploiter_optimizer")


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


def prepare_run_folder(out: Path, resume: bool, overwrite: bool) -> None:
    """Make ``out``; a new run in a folder that holds one is refused, or with ``overwrite`` replaces its files
    (:data:`RUN_FILES` only: anything else in the folder stays).

    Raises:
        CheckpointError: not ``resume``, ``out`` holds a run and not ``overwrite``.
    """
    if not resume and (out / "checkpoint.pt").exists():
        if not overwrite:
            raise CheckpointError(f"{out} already holds a training run (checkpoint.pt): continue it with "
                                  "--resume, start a new one with another --out, or replace it with --overwrite")
        for name in RUN_FILES:
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    out.mkdir(parents=True, exist_ok=True)


def save_checkpoint(t: Any) -> Path:
    """Write the trainer ``t``'s whole state to ``t.out / "checkpoint.pt"`` (see the module docstring)."""
    blob = {
        "format": CHECKPOINT_FORMAT, "version": FORMAT_VERSION,
        "args": t.args.to_dict(), "arch": dict(t.net.arch), "config": t.cfg.to_dict(),
        "model": t.net.state_dict(), "optimizer": t.opt.state_dict(),
        "pool": list(t.league.pool), "pool_ids": list(t.league.pool_ids),
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
    # written to a temporary file and renamed: a killed run never leaves half a checkpoint
    return save_file(t.out / "checkpoint.pt", to_torch(blob))


def load_checkpoint(t: Any, path: Path) -> None:
    """Continue the trainer ``t`` (just built with the run's settings) from ``path``: everything is restored,
    so the run goes on exactly as if never stopped.

    Raises:
        CheckpointError: no file, a policy file, a damaged or incomplete checkpoint, or one made with other
            settings than ``t.args`` (other than :data:`RESUMABLE_CHANGES`); the message says which and how
            to resume.
    """
    if not path.is_file():
        raise CheckpointError(f"{path}: no checkpoint to resume (train without --resume to start a run)")
    try:
        blob = load_policy_file(path)
    except PolicyFileError as e:
        raise CheckpointError(str(e)) from e
    if blob.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: a policy file, not a training checkpoint (it has no optimiser state)")
    try:
        keep = [k for k in _TORCH_ENTRIES if k in blob]      # torch state stays torch; the rest becomes numpy
        blob = to_numpy({k: v for k, v in blob.items() if k not in keep}) | {k: blob[k] for k in keep}
        saved = blob["args"]
        mine = t.args.to_dict()
        known = type(t.args)().to_dict()          # fields added since the checkpoint was written: their default
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
                f"{k}={saved.get(k)!r} (now {mine[k]!r})" for k in diff) + "; resume with the same settings")
        if {k: blob["arch"].get(k) for k in t.net.arch} != t.net.arch:
            raise CheckpointError(f"{path}: its network {blob['arch']} is not this run's {t.net.arch}")
        t.net.load_state_dict(blob["model"])
        t.opt.load_state_dict(blob["optimizer"])
        t.league.pool = [dict(p) for p in blob["pool"]]
        t.league.pool_ids = [int(u) for u in blob["pool_ids"]]
        t.league.kind[...] = blob["league"]["kind"]
        t.league.learner[...] = blob["league"]["learner"]
        t.league.recent = {k: type(RECENT[k])(v) for k, v in {**RECENT, **blob["recent"]}.items()}
        t.rng.bit_generator.state = json.loads(blob["rng"])
        torch.set_rng_state(blob["torch_rng"])
        c = blob["counters"]
        t.update, t.decisions, t.games = int(c["update"]), int(c["decisions"]), int(c["games"])
        t.learner_decisions, t.elapsed = int(c["learner_decisions"]), float(c["elapsed"])
        t.bc_done = bool(c["bc_done"])
        t.history, t.evals = json.loads(blob["history"]), json.loads(blob["evals"])
        t.env.load_state_dict(blob["env"])
        t.buffer.load_state_dict(blob["buffer"])
        if t.exploiter is not None:
            t.exploiter.load_state_dict(blob["exploiter_model"])
            t.exploiter_opt.load_state_dict(blob["exploiter_optimizer"])
            t.exploiter_buffer.load_state_dict(blob["exploiter_buffer"])
            t.exploiter_born = int(blob["exploiter_born"])
        t.obs, t.mask = t.env.observe()
        if not (np.array_equal(t.obs, blob["obs"]) and np.array_equal(t.mask, blob["mask"])):
            raise CheckpointError(f"{path}: the environment state does not match its saved observation")
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: damaged or incomplete checkpoint ({type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''})") from e


def export_policy(t: Any, meta: dict[str, Any] | None = None, name: str = "policy.pt", net: Any = None) -> Path:
    """Write the trainer ``t``'s current policy (or ``net``, the exploiter) to ``t.out / name``, loadable by
    ``make_agent``, with the run's progress and settings (and ``meta``) in its ``meta``."""
    info = {"update": t.update, "decisions": t.decisions, "seconds": round(t.elapsed, 1),
            "args": t.args.to_dict(), **(meta or {})}
    return save_policy(t.out / name, t.net if net is None else net, t.args.game_config(training=False).to_dict(),
                       info)


def save_run(t: Any) -> None:
    """Everything of the trainer ``t`` in its folder: the checkpoint, the logs and learning curve, ``policy.pt``
    (and ``exploiter.pt``, the exploiter's current policy, when there is one)."""
    save_checkpoint(t)
    write_logs(t.out, t.history, t.evals, split_specs(t.args.eval_opponents))
    export_policy(t)
    if t.exploiter is not None:
        export_policy(t, {"exploiter_born": t.exploiter_born}, name="exploiter.pt", net=t.exploiter)
