"""Policy distillation: ``mus distill MEMBERS`` fits one network to a mixture of policies.

Each policy that best-response rounds leave behind (``mus league``) has leaks of its own, and a probe from its own
weights finds them (docs/exploitability.md). Their mixture (:class:`agents.mixture.MixtureAgent`: the members'
action probabilities averaged at each decision) leaks less, since a leak of one member is only a share of the
mixture's play. One network is what the rest of the
project takes (the web table, the model card, the own-weights probes), so this module fits one to the mixture:

1. **data**: the mixture plays ``decisions`` decisions on ``num_tables`` tables (seeded); on a share
   ``rival_share`` of the games one team is ``rule`` or ``equity`` instead, so that the data also holds the
   positions other players lead to. Every decision is kept with the mixture's probabilities there
   (the teacher's, whoever played it). A further 5% is played from another seed and held out.
2. **fit**: the student (by default a copy of the heaviest member, so it starts close) takes ``epochs`` passes
   of Adam on the cross-entropy to the mixture's probabilities; the mean KL divergence from the mixture
   (``KL(mixture || student)``, nats per decision) is measured on the held-out decisions before and after each
   pass.
3. **outputs** in ``out``: ``policy.pt`` (the student, a plain policy file: ``make_agent``, ``mus exploit
   --warm-start agent``, ``mus evaluate`` take it), ``distill.json`` (settings, KL by pass, the members and their
   weights) and ``checkpoint.pt`` after every pass: ``resume`` plays the same data again (it is seeded) and
   continues at the next pass, exactly as an unbroken run.

The student's leaks must be measured like any policy's: ``mus exploit OUT/policy.pt --warm-start agent``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents import make_agent
from agents.mixture import MixtureAgent, parse_members
from agents.policy import (
    PolicyFileError,
    build_net,
    load_policy_file,
    masked_log_probs,
    parameters_digest,
    sample_masked,
    save_file,
    save_policy,
    set_torch_threads,
)
from experiments.train.report import machine_text, progress_bar
from experiments.train.session import check_run_folder
from experiments.train.settings import check_learning_rate
from experiments.train.warm_start import CodedObservations
from mus_env import MusConfig, VectorMusEnv
from mus_env.observation import OBS_DIM

__all__ = ["distill", "DistillSettings", "collect", "mean_kl", "RIVALS", "CHECKPOINT_FORMAT"]

#: The baselines that take one team's seats on the ``rival_share`` of the games (in turn, drawn per game).
RIVALS = ("rule", "equity")
#: ``format`` of a distillation's ``checkpoint.pt``.
CHECKPOINT_FORMAT = "mus-env-distill-checkpoint"
#: Share of the decisions played again from another seed and held out to measure the KL.
HELD_OUT = 0.05


@dataclasses.dataclass(frozen=True)
class DistillSettings:
    """What a distillation was asked for (:func:`distill`'s arguments); a resume must ask for the same."""

    members: list[str]
    weights: list[float]
    start: str
    decisions: int
    epochs: int
    learning_rate: float
    minibatch_size: int
    num_tables: int
    rival_share: float
    seed: int


def collect(teacher: MixtureAgent, decisions: int, num_tables: int, rival_share: float, seed: int,
            progress: bool = False, desc: str = "distill: playing") -> tuple[CodedObservations, np.ndarray, np.ndarray]:
    """The distillation's data: ``teacher`` playing about ``decisions`` decisions of ``MusConfig()`` on
    ``num_tables`` tables from ``seed``, one team replaced by a baseline of :data:`RIVALS` on a share
    ``rival_share`` of the games (redrawn at each new game of a table).

    Returns:
        ``(obs, masks, probs)`` of every decision: the observations (coded, as behaviour cloning keeps them),
        ``(N, A)`` int8 masks and ``(N, A)`` float32 teacher probabilities (a decision with one legal action costs
        the student nothing: it already gives that action probability 1).
    """
    rng = np.random.default_rng(seed)
    rivals = [make_agent(r) for r in RIVALS]
    env = VectorMusEnv(num_tables, MusConfig(), seed=seed, num_threads=1)
    obs, mask = env.reset()
    steps = max(1, decisions // num_tables)
    X = CodedObservations(steps * num_tables, obs.shape[1])
    M = np.zeros((steps * num_tables, mask.shape[1]), dtype=np.int8)
    P = np.zeros((steps * num_tables, mask.shape[1]), dtype=np.float32)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:      # -1: the teacher on all seats; else a rival's index
        kind = np.where(rng.random(n) < rival_share, rng.integers(0, len(rivals), n), -1)
        return kind, rng.integers(0, 2, n)                    # and the rival's team

    kind, team = draw(num_tables)
    bar = progress_bar(steps, desc, progress)
    for t in range(steps):
        p = teacher.probabilities(obs, mask)
        act = sample_masked(p, rng)
        rows_team = env.current_player % 2
        for k, rival in enumerate(rivals):
            rows = np.flatnonzero((kind == k) & (rows_team == team))
            if rows.size:
                act[rows] = rival.act_batch(obs[rows], mask[rows], rng)
        sl = slice(t * num_tables, (t + 1) * num_tables)
        X.put(sl, obs)
        M[sl], P[sl] = mask, p
        obs, mask, *_ = env.step(act)
        done = np.flatnonzero(env.last_finished)
        if done.size:
            kind[done], team[done] = draw(done.size)
        bar.update(1)
    bar.close()
    return X, M, P


def _student_logp(net: Any, X: CodedObservations, M: np.ndarray, idx: np.ndarray) -> torch.Tensor:
    """The student's masked log-probabilities on the rows ``idx``."""
    return masked_log_probs(net.logits(X.take(idx)), torch.from_numpy(M[idx]))


def mean_kl(net: Any, X: CodedObservations, M: np.ndarray, P: np.ndarray, batch: int = 8192) -> float:
    """Mean ``KL(teacher || student)`` in nats per decision over the rows of ``(X, M, P)``."""
    total = 0.0
    with torch.no_grad():
        for start in range(0, len(M), batch):
            idx = np.arange(start, min(start + batch, len(M)))
            q = torch.from_numpy(P[idx]).double()
            logp = _student_logp(net, X, M, idx).double().clamp_min(-60.0)
            total += float((q * (q.clamp_min(1e-30).log() - logp)).where(q > 0, torch.zeros_like(q)).sum())
    return total / max(1, len(M))


def distill(members: str, out: str | Path, decisions: int = 4_000_000, epochs: int = 4, start: str | None = None,
            learning_rate: float = 3e-4, minibatch_size: int = 1024, num_tables: int = 256, rival_share: float = 0.5,
            seed: int = 0, torch_threads: int = 1, progress: bool = True, resume: bool = False,
            overwrite: bool = False, log: Any = print, command: str | None = None) -> dict[str, Any]:
    """Fit one network to the mixture ``members`` (``"a.pt:0.5,b.pt:0.5"``, :func:`agents.mixture.parse_members`).

    Args:
        members: the mixture's policy files and weights.
        out: the output folder (``policy.pt``, ``distill.json``, ``checkpoint.pt``).
        decisions: decisions played to make the data (about 1.3 GB of memory per 4M).
        epochs: passes over the data.
        start: the student's first weights (a policy file; default: the member of largest weight).
        learning_rate: Adam's step size.
        minibatch_size: decisions per gradient step.
        num_tables: tables played at once while making the data.
        rival_share: share of the games where a baseline (:data:`RIVALS`) holds one team.
        seed: seeds the data, the held-out data (``seed + 1``) and the passes' order.
        torch_threads: torch's intra-op threads (1 on a busy machine; 0: torch's default).
        progress: show progress bars.
        resume: continue the distillation in ``out`` after its last finished pass.
        overwrite: replace a distillation already in ``out``.

    Returns:
        The ``distill.json`` record: settings, ``member_digests`` (each member's weights), ``kl`` (held-out KL
        before the first pass and after each) and ``train_kl`` (the mean over each pass's minibatches).

    Raises:
        ValueError: a bad member list or number, a member or start that cannot be read or plays with señas, an
            output folder that cannot be used (``experiments.train.checkpoint.CheckpointError``), or a resume
            with other settings; the message names which, and nothing is written then.
    """
    paths, weights = parse_members(members)
    _check_numbers(decisions, epochs, learning_rate, minibatch_size, num_tables, rival_share)
    start = start or paths[int(np.argmax(weights))]
    try:
        blobs = [load_policy_file(p) for p in [*paths, start]]
    except PolicyFileError as e:
        raise ValueError(f"distill: {e}") from None
    for path, blob in zip([*paths, start], blobs, strict=True):
        if int(blob["arch"]["obs_dim"]) != OBS_DIM:
            raise ValueError(f"distill: {path} was trained with señas; distillation plays the game without them")
    out = Path(out)
    check_run_folder(out, resume, overwrite)
    settings = DistillSettings(paths, weights, str(start), decisions, epochs, float(learning_rate), minibatch_size,
                               num_tables, float(rival_share), seed)
    first = 0
    net = build_net(blobs[-1], start)
    opt = torch.optim.Adam(net.parameters(), lr=learning_rate)
    digests = [parameters_digest(build_net(b, p)) for p, b in zip(paths, blobs[:-1], strict=True)]
    record: dict[str, Any] = {"settings": dataclasses.asdict(settings), "member_digests": digests, "kl": [],
                              "train_kl": [], "command": command or f"mus distill {members}",
                              "machine": machine_text()}
    if resume:
        first, record = _load_checkpoint(out / "checkpoint.pt", settings, net, opt)
    if torch_threads:
        set_torch_threads(torch_threads)
    teacher = MixtureAgent.from_files(paths, weights)
    t0 = time.perf_counter()
    X, M, P = collect(teacher, decisions, num_tables, rival_share, seed, progress)
    Xh, Mh, Ph = collect(teacher, max(num_tables, int(decisions * HELD_OUT)), num_tables, rival_share, seed + 1,
                         progress, "distill: held-out")
    log(f"distill: {len(M):,} decisions to fit, {len(Mh):,} held out "
        f"({time.perf_counter() - t0:.0f} s)")
    if not record["kl"]:
        record["kl"].append(mean_kl(net, Xh, Mh, Ph))
        log(f"distill: KL(mixture || student) before fitting {record['kl'][0]:.4f} nats/decision (held out)")
    for epoch in range(first, epochs):
        rng = np.random.default_rng([seed, epoch])
        order = rng.permutation(len(M))
        bar = progress_bar(math.ceil(len(order) / minibatch_size), f"distill: pass {epoch + 1}/{epochs}", progress)
        losses = []
        for s in range(0, len(order), minibatch_size):
            idx = order[s:s + minibatch_size]
            q = torch.from_numpy(P[idx])
            logp = _student_logp(net, X, M, idx)
            loss = -(q * logp.clamp_min(-60.0)).sum(dim=-1).mean()      # cross-entropy = KL + the teacher's entropy
            opt.zero_grad()
            loss.backward()
            opt.step()
            entropy = -(q * q.clamp_min(1e-30).log()).sum(dim=-1).mean()
            losses.append(float(loss.detach() - entropy))
            bar.update(1)
        bar.close()
        record["train_kl"].append(float(np.mean(losses)))
        record["kl"].append(mean_kl(net, Xh, Mh, Ph))
        save_file(out / "checkpoint.pt", {"format": CHECKPOINT_FORMAT, "epoch": epoch + 1,
                                          "settings": dataclasses.asdict(settings), "record": json.dumps(record),
                                          "model": net.state_dict(), "optimizer": opt.state_dict()})
        log(f"distill: pass {epoch + 1}/{epochs}: KL {record['kl'][-1]:.4f} held out, {record['train_kl'][-1]:.4f} "
            f"fitted ({time.perf_counter() - t0:.0f} s)")
    meta = {"distilled": {"members": paths, "weights": weights, "member_digests": digests,
                          "kl_held_out": record["kl"][-1]}}
    save_policy(out / "policy.pt", net, blobs[-1].get("config"), meta)
    (out / "distill.json").write_text(json.dumps(record, indent=2))
    log(f"distill: wrote {out / 'policy.pt'}; measure its leaks with: mus exploit {out / 'policy.pt'} "
        "--warm-start agent")
    return record


def _check_numbers(decisions: int, epochs: int, learning_rate: float, minibatch_size: int, num_tables: int,
                   rival_share: float) -> None:
    """``ValueError`` naming the first of :func:`distill`'s numbers that is out of range."""
    for name, v, lo in (("decisions", decisions, 1), ("epochs", epochs, 1), ("minibatch_size", minibatch_size, 1),
                        ("num_tables", num_tables, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"distill: {name} must be an int >= {lo}, got {v!r}")
    check_learning_rate(learning_rate, "distill: learning_rate")
    if not (isinstance(rival_share, (int, float)) and 0 <= rival_share <= 1):
        raise ValueError(f"distill: rival_share must be a number in [0, 1], got {rival_share!r}")


def _load_checkpoint(path: Path, settings: DistillSettings, net: Any, opt: Any) -> tuple[int, dict[str, Any]]:
    """The passes done and the record of the distillation checkpointed at ``path``, its weights and optimiser
    loaded into ``net`` and ``opt``; ``ValueError`` if it is not one or was asked for other settings."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises a variety on damaged files
        raise ValueError(f"distill: cannot read {path} ({type(e).__name__}): start again with --overwrite") from None
    if not isinstance(blob, dict) or blob.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"distill: {path} is not a distillation checkpoint")
    wanted = dataclasses.asdict(settings)
    if blob["settings"] != wanted:
        diff = sorted(k for k in wanted if blob["settings"].get(k) != wanted[k])
        raise ValueError(f"distill: {path} was asked for other settings ({', '.join(diff)}): resume with the same "
                         "ones, or start again with --overwrite")
    net.load_state_dict(blob["model"])
    opt.load_state_dict(blob["optimizer"])
    return int(blob["epoch"]), json.loads(blob["record"])
