"""The warm starts of :mod:`experiments.train.ppo` (``Args.warm_start``): behaviour cloning of ``EquityAgent``
before PPO (:func:`behaviour_cloning`), or the weights of a policy file (:func:`load_warm_start`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents import EquityAgent
from agents.policy import MASKED_LOGIT, PolicyFileError, PolicyNet, load_policy_file
from experiments.train.checkpoint import CheckpointError
from experiments.train.report import progress_bar
from mus_env import MusConfig, VectorMusEnv
from mus_env.observation import OBS_DIM
from mus_env.signals import SIGNAL_DIM

__all__ = ["behaviour_cloning", "load_warm_start", "CodedObservations"]


class CodedObservations:
    """A table of observations kept at one byte per entry, read back bit for bit.

    The cloning data is millions of observations (2M decisions of 345 float32 entries: 2.8 GB, most of the
    default run's peak memory). Their entries take very few distinct values (one-hots, counts over a scale: 50
    in 300,000 rows of equity self-play), so each row is stored as codes into an append-only table of the
    values seen (``uint8``, a quarter of the memory) and decoded on reading: the same float32 numbers, so the
    cloning is unchanged bit for bit. Past 256 distinct values the table falls back to float32 storage.
    """

    MAX_CODES = 256

    def __init__(self, rows: int, cols: int) -> None:
        self.codes: np.ndarray | None = np.zeros((rows, cols), dtype=np.uint8)
        self.values = np.zeros(0, dtype=np.float32)      # code -> value, in the order first seen
        self.floats: np.ndarray | None = None           # the fallback: plain float32 rows
        self._known: np.ndarray | None = None           # (a cache of the sorted table, rebuilt when it grows)
        self._code_of = np.zeros(0, dtype=np.uint8)

    @property
    def nbytes(self) -> int:
        """Bytes held by the rows (codes or floats) and the value table."""
        return (self.floats if self.codes is None else self.codes).nbytes + self.values.nbytes

    def put(self, rows: slice, obs: np.ndarray) -> None:
        """Store ``obs`` (``(n, cols)`` float32) as the rows ``rows``."""
        if self.floats is None:
            codes = self._encode(obs)
            if codes is not None:
                self.codes[rows] = codes
                return
            # too many values: decode what is stored so far (nothing yet if the first rows hold them all)
            self.floats = self.values[self.codes] if len(self.values) else np.zeros(self.codes.shape, np.float32)
            self.codes = None
        self.floats[rows] = obs

    def take(self, index: np.ndarray) -> torch.Tensor:
        """The rows ``index`` as a float32 tensor (decoded)."""
        rows = self.floats[index] if self.codes is None else self.values[self.codes[index]]
        return torch.from_numpy(np.ascontiguousarray(rows))

    def _encode(self, obs: np.ndarray) -> np.ndarray | None:
        """The codes of ``obs`` (new values are added to the table), or None past :attr:`MAX_CODES` values."""
        for _ in range(2):
            if self._known is None:                     # the table sorted for searching, and each one's code
                order = np.argsort(self.values, kind="stable")
                self._known, self._code_of = self.values[order], order.astype(np.uint8)
            if len(self._known):
                pos = np.searchsorted(self._known, obs)
                np.minimum(pos, len(self._known) - 1, out=pos)
                found = self._known[pos] == obs
                if found.all():
                    return self._code_of[pos]
                new = np.unique(obs[~found])
            else:
                new = np.unique(obs)
            if len(self.values) + len(new) > self.MAX_CODES:
                return None
            self.values = np.concatenate([self.values, new.astype(np.float32)])
            self._known = None
        raise AssertionError("a value was added to the table and still not found")  # pragma: no cover


def behaviour_cloning(net: PolicyNet, config: MusConfig, rng: np.random.Generator, decisions: int, epochs: int,
                      minibatch_size: int, num_tables: int, seed: int, progress: bool = False,
                      num_threads: int | None = None) -> dict[str, float]:
    """Fit ``net``'s policy head to EquityAgent's decisions (EquityAgent on all four seats of ``num_tables``
    fresh tables of ``config``, seeded by ``seed``, for about ``decisions`` decisions; with señas its sign
    decisions too): ``epochs`` passes of Adam (learning rate 1e-3) on the masked categorical's negative
    log-likelihood, in minibatches of ``minibatch_size``. Decisions with a single legal action are skipped.

    Returns:
        ``bc_loss`` and ``bc_accuracy`` (of the last pass), ``bc_samples`` (decisions fitted).
    """
    teacher = EquityAgent()
    env = VectorMusEnv(num_tables, config, seed=seed, reward="stones", num_threads=num_threads)
    obs, mask = env.reset()
    steps = max(1, decisions // num_tables)
    X = CodedObservations(steps * num_tables, obs.shape[1])
    M = np.zeros((steps * num_tables, mask.shape[1]), dtype=np.int8)
    Y = np.zeros(steps * num_tables, dtype=np.int64)
    bar = progress_bar(steps, "cloning equity: playing", progress)
    for t in range(steps):
        act = teacher.act_batch(obs, mask, rng)
        sl = slice(t * num_tables, (t + 1) * num_tables)
        X.put(sl, obs)
        M[sl], Y[sl] = mask, act
        obs, mask, *_ = env.step(act)
        bar.update(1)
    bar.close()
    # only real choices teach anything: skip decisions with a single legal action
    keep = np.flatnonzero(M.sum(axis=1) > 1)
    illegal, Y_t = torch.from_numpy(M) == 0, torch.from_numpy(Y)
    bar = progress_bar(epochs * ((len(keep) + minibatch_size - 1) // minibatch_size), "cloning equity: fitting",
                       progress)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    dev = net.device
    loss_v = acc = 0.0
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(keep))
        losses, hits = [], []
        for start in range(0, len(order), minibatch_size):
            mb = order[start:start + minibatch_size]
            # the masked categorical: illegal actions get the logit MASKED_LOGIT (probability exactly 0); each
            # minibatch goes to the network's device (a no-op on the CPU), the cloning data stays in memory here
            x, no, y = X.take(mb.numpy()).to(dev), illegal[mb].to(dev), Y_t[mb].to(dev)
            logp = torch.log_softmax(net.logits(x).masked_fill(no, MASKED_LOGIT), dim=-1)
            loss = torch.nn.functional.nll_loss(logp, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            hits.append((logp.argmax(1) == y).float().mean().item())
            bar.update(1)
        loss_v, acc = float(np.mean(losses)), float(np.mean(hits))
    bar.close()
    return {"bc_loss": loss_v, "bc_accuracy": acc, "bc_samples": int(len(keep))}


def load_warm_start(net: PolicyNet, path: str | Path) -> None:
    """Load the weights (policy and value head) of the policy file ``path`` into ``net``.

    A file whose network is narrower than ``net`` (same depth, each layer at most as wide, e.g. ``--hidden 256
    256`` from a ``128 128`` policy) is widened without changing its play (:meth:`PolicyNet.load_narrower`).

    Raises:
        CheckpointError: the file cannot be read (missing, damaged, not a policy, NaN or infinite weights) or its
            network is not ``net``'s shape; the message names the file and the flags to give.
    """
    try:
        blob = load_policy_file(path)
    except PolicyFileError as e:
        raise CheckpointError(f"warm start: {e}") from e
    arch = {k: blob["arch"].get(k, 0 if k == "value_dim" else None) for k in net.arch}
    if arch != net.arch and net.is_wider_than(arch):
        try:
            net.load_narrower(arch, blob["model"])
        except (RuntimeError, TypeError, KeyError) as e:
            raise CheckpointError(f"warm start: {path}: its weights do not fit its network {blob['arch']}: "
                                  f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from e
        return
    if arch != net.arch:
        trained = (blob.get("config") or {}).get("signals")
        flag = trained if trained in ("truthful", "free") else "truthful or free"
        if arch["obs_dim"] == OBS_DIM + SIGNAL_DIM and net.arch["obs_dim"] == OBS_DIM:
            hint = f"it was trained with señas: give --signals {flag}"
        elif arch["obs_dim"] == OBS_DIM and net.arch["obs_dim"] == OBS_DIM + SIGNAL_DIM:
            hint = "it was trained without señas: give --signals off"
        elif arch["obs_dim"] != net.arch["obs_dim"]:
            hint = "it is not a network this mus-env plays"
        else:
            hint = "give the same --hidden and --central-critic"
        raise CheckpointError(f"warm start: {path} holds a network {blob['arch']}, this run's is {net.arch}: {hint}")
    try:
        net.load_state_dict(blob["model"])
    except (RuntimeError, TypeError, KeyError) as e:
        raise CheckpointError(f"warm start: {path}: its weights do not fit its network {blob['arch']}: "
                              f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from e
