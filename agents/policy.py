"""Policy agents: a torch network that reads the observation, and the files it is saved in.

This module needs torch (the ``train`` extra); ``import agents`` does not import it, ``make_agent("x.pt")``
and ``make_agent("ppo")`` do.

The network (:class:`PolicyNet`) is the one :mod:`experiments.train.ppo` trains: an MLP trunk over the
seat-relative observation (``OBS_DIM`` floats) with two heads, ``NUM_ACTIONS`` logits and one value. Illegal
actions are masked by setting their logits to :data:`MASKED_LOGIT` before the softmax, so their
probability is exactly 0 and no gradient reaches them (:func:`masked_log_probs`).

Files (``torch.save`` of plain dicts, read back with ``torch.load(..., weights_only=True)``, never arbitrary
pickle):

* **policy file** (``format = "mus-env-policy"``, what :func:`save_policy` writes and what ships as
  ``agents/data/ppo.pt``): ``arch`` (the network's constructor arguments), ``model`` (its state dict),
  ``config`` (the :class:`~mus_env.MusConfig` it was trained on, as a dict) and ``meta`` (free JSON-like
  text: how it was made).
* **training checkpoint** (``format = "mus-env-checkpoint"``, written by the trainer): the same ``arch``,
  ``model`` and ``config`` plus optimiser, league pool, RNG states and counters; an agent loads its
  ``model``.

Sampling uses the ``rng`` passed to :meth:`TorchPolicyAgent.act_batch` (inverse CDF on the masked
probabilities), so play is reproducible from a numpy seed like every other agent.
"""

from __future__ import annotations

import hashlib
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from mus_env.actions import NUM_ACTIONS, SIGNAL_BASE, Sign
from mus_env.observation import OBS_DIM
from mus_env.signals import NUM_SIGNS, SIGNAL_DIM

from .base import Agent

__all__ = ["PolicyNet", "TorchPolicyAgent", "PolicyFileError", "masked_log_probs", "sample_masked", "choose_actions",
           "save_policy", "save_file", "load_policy_file", "content_digest", "nonfinite_entries", "MASKED_LOGIT",
           "POLICY_FORMAT", "CHECKPOINT_FORMAT", "SHIPPED_POLICY", "DEVICES", "check_device_name", "resolve_device",
           "set_torch_threads", "parameters_digest"]

#: Logit given to illegal actions: exp(MASKED_LOGIT - max) underflows to exactly 0 in float32.
MASKED_LOGIT = -1e9
POLICY_FORMAT = "mus-env-policy"
CHECKPOINT_FORMAT = "mus-env-checkpoint"
FORMAT_VERSION = 1
#: The shipped trained agent (``make_agent("ppo")``).
SHIPPED_POLICY = Path(__file__).resolve().parent / "data" / "ppo.pt"


class PolicyFileError(ValueError):
    """A policy or checkpoint file that cannot be used: missing, damaged, or of another format."""


class PolicyNet(nn.Module):
    """MLP actor-critic over the observation: a shared trunk, a policy head and a value head.

    Args:
        obs_dim: observation size (``mus_env.observation.OBS_DIM``).
        num_actions: action count (``mus_env.NUM_ACTIONS``).
        hidden: widths of the trunk's layers.
        value_dim: size of an extra input read by the value head only (0: none). A centralised critic
            feeds it the full-information state; the policy never sees it.
    """

    def __init__(self, obs_dim: int = OBS_DIM, num_actions: int = NUM_ACTIONS,
                 hidden: tuple[int, ...] | list[int] = (256, 256), value_dim: int = 0) -> None:
        super().__init__()
        self.arch = {"obs_dim": int(obs_dim), "num_actions": int(num_actions),
                     "hidden": [int(h) for h in hidden], "value_dim": int(value_dim)}
        layers: list[nn.Module] = []
        width = obs_dim
        for h in hidden:
            layers += [_orthogonal(nn.Linear(width, h), np.sqrt(2)), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy_head = _orthogonal(nn.Linear(width, num_actions), 0.01)
        if value_dim:
            # a centralised critic: the trunk's features and the extra input through one more hidden layer
            self.value_head = nn.Sequential(_orthogonal(nn.Linear(width + value_dim, width), np.sqrt(2)), nn.ReLU(),
                                            _orthogonal(nn.Linear(width, 1), 1.0))
        else:
            self.value_head = _orthogonal(nn.Linear(width, 1), 1.0)

    def forward(self, obs: torch.Tensor, value_input: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, obs_dim)`` observations -> ``(B, num_actions)`` logits and ``(B,)`` values."""
        z = self.trunk(obs)
        logits = self.policy_head(z)
        if self.arch["value_dim"]:
            if value_input is None:
                raise ValueError("this network's value head reads the full state: pass value_input")
            z = torch.cat([z, value_input], dim=1)
        return logits, self.value_head(z).squeeze(-1)

    @property
    def device(self) -> torch.device:
        """Where the weights are (``cpu``, or ``cuda:N`` after ``.to(...)``); inputs go there."""
        return next(self.parameters()).device

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Policy logits only (acting needs no value)."""
        return self.policy_head(self.trunk(obs))

    def is_wider_than(self, arch: dict[str, Any]) -> bool:
        """Whether ``arch`` (a policy file's) is a network :meth:`load_narrower` can widen into this one: the same
        inputs, actions and number of layers, each layer at most as wide, and no central critic on either."""
        old, new = [int(h) for h in arch.get("hidden") or []], self.arch["hidden"]
        return (int(arch.get("obs_dim", -1)) == self.arch["obs_dim"]
                and int(arch.get("num_actions", -1)) == self.arch["num_actions"]
                and len(old) == len(new) and all(o <= n for o, n in zip(old, new, strict=True))
                and not arch.get("value_dim", 0) and not self.arch["value_dim"])

    def load_narrower(self, arch: dict[str, Any], state: dict[str, torch.Tensor]) -> None:
        """Load the weights of a narrower network of the same depth so that this one plays and values exactly as it.

        Each layer's first units take the narrow network's weights; the new units keep this network's fresh
        incoming weights and get zero outgoing weights (into the next layer's old units and into both heads), so
        the logits and the value are the narrow network's, up to float rounding, until training moves them. What
        a wider network adds is then learned from where the narrow one stood (a capacity test that starts from a
        trained policy, not from scratch).

        Args:
            arch: the narrow network's ``arch`` (a policy file's); same ``obs_dim``, ``num_actions``, number of
                layers, no central critic, each width at most this network's.
            state: its state dict.

        Raises:
            ValueError: ``arch`` is not a narrower network of this one's depth and inputs (nothing is loaded).
        """
        if not self.is_wider_than(arch):
            raise ValueError(f"cannot widen a network {arch} into {self.arch}: it must have the same inputs, actions "
                             "and number of layers, each layer at most as wide, and no central critic")
        old = [int(h) for h in arch["hidden"]]
        linears = [m for m in self.trunk if isinstance(m, nn.Linear)]
        names = [f"trunk.{i}" for i, m in enumerate(self.trunk) if isinstance(m, nn.Linear)]
        widths_in = [self.arch["obs_dim"], *old]
        with torch.no_grad():
            for k, (layer, name) in enumerate(zip(linears, names, strict=True)):
                w, b = state[f"{name}.weight"], state[f"{name}.bias"]
                if k:                                     # the previous layer's new units feed nothing old
                    layer.weight[:old[k], widths_in[k]:] = 0.0
                layer.weight[:old[k], :widths_in[k]] = w
                layer.bias[:old[k]] = b
            for head in ("policy_head", "value_head"):
                layer = getattr(self, head)
                layer.weight.zero_()
                layer.weight[:, :old[-1]] = state[f"{head}.weight"]
                layer.bias.copy_(state[f"{head}.bias"])


def _orthogonal(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of a categorical restricted to the legal actions.

    Args:
        logits: ``(B, A)`` raw logits.
        mask: ``(B, A)`` 1/True where the action is legal (every row needs one).

    Returns:
        ``(B, A)``: log-softmax over the legal actions; illegal entries hold about ``MASKED_LOGIT`` (their
        probability is exactly 0 and their gradient exactly 0).
    """
    return torch.log_softmax(torch.where(mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT)), dim=-1)


def sample_masked(probs: npt.NDArray[np.float32], rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """One action per row of ``probs`` ``(B, A)`` (rows sum to 1, zeros where masked), by inverse CDF.

    An action of probability 0 is never drawn: the draw picks the first index whose cumulative
    probability exceeds ``u * total``, and a zero-probability index never raises the cumulative sum.

    Raises:
        ValueError: a row holds NaN, an infinite or a negative number, or sums to 0 (a network whose weights
            diverged): no action can be drawn from it, and a guess could be an illegal one.
    """
    cdf = np.cumsum(probs, axis=1, dtype=np.float64)
    total = cdf[:, -1]
    if not (np.isfinite(total).all() and (total > 0).all() and (np.asarray(probs) >= 0).all()):
        bad = int(np.flatnonzero(~(np.isfinite(total) & (total > 0)) | (np.asarray(probs) < 0).any(axis=1))[0])
        raise ValueError(f"cannot sample an action: row {bad} of the probabilities holds NaN, infinite or negative "
                         "numbers or sums to 0 (did the network's weights diverge?)")
    u = rng.random(len(probs)) * cdf[:, -1]
    a = (cdf <= u[:, None]).sum(axis=1)
    # float rounding can put u on the last step; fall back to the last action of positive probability
    last = probs.shape[1] - 1 - np.argmax((probs > 0)[:, ::-1], axis=1)
    return np.minimum(a, last).astype(np.int64)


def choose_actions(probs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], greedy: bool,
                   rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """One action per row of ``probs``: the most likely legal one when ``greedy``, else drawn by
    :func:`sample_masked` (how every policy agent plays its probabilities)."""
    if greedy:
        return np.where(np.asarray(masks) > 0, probs, -1.0).argmax(axis=1).astype(np.int64)
    return sample_masked(probs, rng)


# ----------------------------------------------------------------------------------------------------
# files
def content_digest(tree: Any) -> str:
    """SHA-256 over a file's contents (tensors by dtype, shape and bytes; other values by ``repr``), stored in
    the file as ``digest`` so that damaged bytes anywhere, even inside a tensor, are detected on load."""
    h = hashlib.sha256()

    def walk(x: Any) -> None:
        if isinstance(x, torch.Tensor):
            t = x.detach().cpu().contiguous()
            h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(x, dict):
            h.update(b"{")
            for k in sorted(x, key=str):
                h.update(repr(k).encode())
                walk(x[k])
            h.update(b"}")
        elif isinstance(x, (list, tuple)):
            h.update(b"[")
            for v in x:
                walk(v)
            h.update(b"]")
        else:
            h.update(repr(x).encode())

    walk(tree)
    return h.hexdigest()


def nonfinite_entries(tree: Any, prefix: str = "") -> list[str]:
    """The paths (``model/policy_head.weight``) of the floating-point tensors in ``tree`` (dicts, lists) that hold
    a NaN or an infinite number: what a policy file or checkpoint must never hold."""
    if isinstance(tree, torch.Tensor):
        return [prefix or "<tensor>"] if tree.is_floating_point() and not torch.isfinite(tree).all() else []
    if isinstance(tree, dict):
        return [p for k, v in tree.items() for p in nonfinite_entries(v, f"{prefix}/{k}" if prefix else str(k))]
    if isinstance(tree, (list, tuple)):
        return [p for i, v in enumerate(tree) for p in nonfinite_entries(v, f"{prefix}[{i}]")]
    return []


#: What ``--device`` takes: ``auto`` (CUDA when torch sees a GPU, else the CPU), ``cpu``, ``cuda`` or ``cuda:N``.
DEVICES = ("auto", "cpu", "cuda")


def set_torch_threads(threads: int) -> None:
    """Set torch's intra-op thread count for every policy agent of this process (``threads`` >= 1)."""
    torch.set_num_threads(threads)


def check_device_name(name: str) -> str:
    """``name`` as a ``--device`` value (see :data:`DEVICES`), lower case; ``ValueError`` for any other text.
    Reads the name only: whether CUDA is there is :func:`resolve_device`'s question."""
    text = str(name).strip().lower()
    if text in DEVICES or (text.startswith("cuda:") and text[5:].isdigit()):
        return text
    raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {name!r}")


def resolve_device(name: str) -> torch.device:
    """The torch device of a ``--device`` value (see :data:`DEVICES`).

    Raises:
        ValueError: an unknown name, or ``cuda`` when this torch sees no CUDA device (the message says why: a CPU
            build of torch, or no GPU visible) and what to give instead.
    """
    text = check_device_name(name)
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if text == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        why = "this torch is a CPU build" if torch.version.cuda is None else "torch sees no GPU"
        raise ValueError(f"device {name!r}: CUDA is not available ({why}, torch {torch.__version__}); give "
                         "--device cpu, or --device auto to take a GPU only where there is one")
    if ":" in text and int(text[5:]) >= torch.cuda.device_count():
        raise ValueError(f"device {name!r}: torch sees {torch.cuda.device_count()} GPU(s), numbered from 0")
    return torch.device(text)


def save_file(path: str | Path, blob: dict[str, Any]) -> Path:
    """``torch.save`` a policy or checkpoint dict with its digest, atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {k: _on_cpu(v) for k, v in blob.items() if k != "digest"}     # (a run on a GPU writes CPU files)
    blob["digest"] = content_digest(blob)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)
    return path


def _on_cpu(tree: Any) -> Any:
    """Every tensor of ``tree`` (dicts, lists, tuples) on the CPU (the same tensor where it already is)."""
    if isinstance(tree, torch.Tensor):
        return tree.detach().cpu()
    if isinstance(tree, dict):
        return type(tree)((k, _on_cpu(v)) for k, v in tree.items())
    if isinstance(tree, (list, tuple)):
        return type(tree)(_on_cpu(v) for v in tree)
    return tree


def parameters_digest(net: torch.nn.Module) -> str:
    """The sha256 of a torch network's parameters (names and bytes, in name order): which weights a probe saw
    (``exploit.json``'s ``frozen.parameters_sha256``), which run a shipped policy came from."""
    h = hashlib.sha256()
    for k, v in sorted(net.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def save_policy(path: str | Path, net: PolicyNet, config: dict[str, Any] | None = None,
                meta: dict[str, Any] | None = None) -> Path:
    """Write a policy file (weights, architecture, ruleset, metadata); the value head is kept."""
    blob = {"format": POLICY_FORMAT, "version": FORMAT_VERSION, "arch": dict(net.arch),
            "model": {k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()},
            "config": dict(config or {}), "meta": dict(meta or {})}
    return save_file(path, blob)


def load_policy_file(path: str | Path) -> dict[str, Any]:
    """Read a policy file or training checkpoint safely (``weights_only=True``) and check its layout.

    Returns:
        The file's dict (``format``, ``arch``, ``model``, ``config``, ...).

    Raises:
        PolicyFileError: the file is missing, not a torch file, damaged, not a mus-env policy, or its weights
            hold NaN or infinite numbers; the message names the file and what is wrong.
    """
    path = Path(path)
    if path.is_dir():
        raise PolicyFileError(f"{path}: a folder, not a policy file")
    if not path.is_file():
        raise PolicyFileError(f"{path}: no such policy file")
    try:
        with warnings.catch_warnings():           # torch warns about a file's pickle protocol before refusing it
            warnings.simplefilter("ignore")
            blob = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile, KeyError, AttributeError,
            TypeError, IndexError) as e:                       # torch raises a variety on damaged files
        raise PolicyFileError(f"{path}: not a readable torch file (damaged or truncated?): "
                              f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
    except Exception as e:  # noqa: BLE001 - the unpickler's own errors (UnpicklingError and friends)
        raise PolicyFileError(f"{path}: refused by the safe loader ({type(e).__name__}): it holds objects "
                              "other than tensors and plain values, so it is not a mus-env policy file") from e
    if not isinstance(blob, dict) or blob.get("format") not in (POLICY_FORMAT, CHECKPOINT_FORMAT):
        raise PolicyFileError(f"{path}: not a mus-env policy file or checkpoint (format "
                              f"{blob.get('format') if isinstance(blob, dict) else type(blob).__name__!r})")
    if blob.get("version") != FORMAT_VERSION:
        raise PolicyFileError(f"{path}: format version {blob.get('version')!r}, this mus-env reads {FORMAT_VERSION}")
    for key in ("arch", "model"):
        if not isinstance(blob.get(key), dict):
            raise PolicyFileError(f"{path}: the {key!r} entry is missing or damaged")
    digest = blob.get("digest")
    if digest != content_digest({k: v for k, v in blob.items() if k != "digest"}):
        raise PolicyFileError(f"{path}: damaged: its contents do not match the digest written with them"
                              if digest else f"{path}: has no content digest (not written by mus-env)")
    bad = nonfinite_entries(blob)
    if bad:
        raise PolicyFileError(f"{path}: holds NaN or infinite numbers ({', '.join(bad[:3])}"
                              f"{', ...' if len(bad) > 3 else ''}): the training that wrote it diverged; use an "
                              "earlier policy file or checkpoint")
    return blob


def build_net(blob: dict[str, Any], source: str | Path = "<policy>") -> PolicyNet:
    """The network described by a policy file's ``arch`` with its ``model`` weights loaded.

    Raises:
        PolicyFileError: the architecture is not one this mus-env plays, or the weights do not fit it.
    """
    arch = blob["arch"]
    sizes = ((OBS_DIM, NUM_ACTIONS), (OBS_DIM + SIGNAL_DIM, NUM_ACTIONS + NUM_SIGNS))
    if (arch.get("obs_dim"), arch.get("num_actions")) not in sizes:
        raise PolicyFileError(f"{source}: made for observations of {arch.get('obs_dim')} and "
                              f"{arch.get('num_actions')} actions; this mus-env has {OBS_DIM} and {NUM_ACTIONS} (with "
                              f"signals on {OBS_DIM + SIGNAL_DIM} and {NUM_ACTIONS + NUM_SIGNS})")
    try:
        # the trunk's widths are read off the weights before anything is built (a forged arch cannot make a huge net)
        hidden = [int(h) for h in arch["hidden"]]
        inputs = [int(arch["obs_dim"]), *hidden[:-1]]
        model = blob["model"]
        widths = [tuple(model[f"trunk.{2 * i}.weight"].shape) for i in range(len(hidden))]
        if widths != list(zip(hidden, inputs, strict=True)):
            raise ValueError(f"its trunk's weights are not of the widths {hidden}")
        net = PolicyNet(arch["obs_dim"], arch["num_actions"], tuple(hidden), arch.get("value_dim", 0))
        net.load_state_dict(model)
    except (KeyError, TypeError, RuntimeError, ValueError, AttributeError) as e:
        raise PolicyFileError(f"{source}: the weights do not fit the architecture {arch!r}: "
                              f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from e
    net.eval()
    return net


class TorchPolicyAgent(Agent):
    """Plays a :class:`PolicyNet`: samples from its masked policy, or takes its most likely legal action.

    Args:
        net: the network, or None when loading with :meth:`from_file`.
        greedy: take the argmax of the masked policy instead of sampling from it. Mus needs mixed
            strategies (bluffs), so sampling is the default.
        name: the name shown in tables.
        threads: torch intra-op threads to set when acting (None: leave torch's setting).

    Example:
        >>> from agents import make_agent
        >>> agent = make_agent("ppo")                  # the shipped agent; or make_agent("runs/x/policy.pt")
    """

    name = "policy"

    def __init__(self, net: PolicyNet, greedy: bool = False, name: str | None = None,
                 threads: int | None = None) -> None:
        if not isinstance(net, PolicyNet):
            raise TypeError(f"net must be a PolicyNet, got {type(net).__name__}")
        self.net = net
        self.greedy = bool(greedy)
        self.threads = threads
        if name:
            self.name = name
        self.config: dict[str, Any] = {}
        self.meta: dict[str, Any] = {}

    @classmethod
    def from_file(cls, path: str | Path, greedy: bool = False, name: str | None = None,
                  threads: int | None = None) -> TorchPolicyAgent:
        """Load a policy file or a training checkpoint (see the module docstring)."""
        blob = load_policy_file(path)
        agent = cls(build_net(blob, path), greedy=greedy, name=name or Path(path).stem, threads=threads)
        agent.config = dict(blob.get("config") or {})
        agent.meta = dict(blob.get("meta") or {})
        return agent

    def probabilities(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
        """``(B, NUM_ACTIONS)`` masked action probabilities for ``(B, OBS_DIM)`` observations.

        A policy trained without señas given a game with them (``(B, OBS_DIM + SIGNAL_DIM)`` observations, masks of
        ``NUM_ACTIONS + NUM_SIGNS``) gives the distribution it plays there (:meth:`act_batch`): at a sign decision
        all on ``Sign.NONE`` (it never signs), elsewhere its own probabilities for the observation without the
        signal block (it sees no sign), ``(B, NUM_ACTIONS + NUM_SIGNS)``."""
        obs = np.asarray(obs, dtype=np.float32)
        masks = np.asarray(masks)
        if self._silent_in(obs):
            return self._silent_probabilities(obs, masks)
        if obs.ndim != 2 or obs.shape[1] != self.net.arch["obs_dim"]:
            raise ValueError(self._shape_error(obs.shape))
        if masks.shape != (obs.shape[0], self.net.arch["num_actions"]):
            raise ValueError(f"masks must have shape ({obs.shape[0]}, {self.net.arch['num_actions']}), "
                             f"got {masks.shape}")
        if not (masks.sum(axis=1) > 0).all():
            raise ValueError("a mask has no legal action (all zeros): was it taken for a seat that is not acting?")
        if self.threads is not None and torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        device = self.net.device                    # the CPU, or a GPU for a network trained with --device cuda
        with torch.no_grad():
            logp = masked_log_probs(self.net.logits(torch.from_numpy(np.ascontiguousarray(obs)).to(device)),
                                    torch.from_numpy(np.ascontiguousarray(masks)).to(device))
        p = logp.exp().cpu().numpy()
        if not np.isfinite(p).all():
            raise ValueError(f"policy {self.name!r}: its network gives NaN or infinite probabilities (its weights "
                             "hold NaN or infinite numbers?), so it cannot choose a legal action")
        return p

    def values(self, obs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32] | None:
        """``(B,)`` the value head's estimates for ``(B, obs_dim)`` observations (the return the network expects
        from here, in its training's reward units), or None for a centralised critic, whose value head also
        reads the hidden hands (a playing agent never has them)."""
        obs = np.asarray(obs, dtype=np.float32)
        if self._silent_in(obs):
            obs = obs[:, :OBS_DIM]                   # what it sees at a table with señas (see probabilities)
        if obs.ndim != 2 or obs.shape[1] != self.net.arch["obs_dim"]:
            raise ValueError(self._shape_error(obs.shape))
        if self.net.arch["value_dim"]:
            return None
        with torch.no_grad():
            _, v = self.net(torch.from_numpy(np.ascontiguousarray(obs)).to(self.net.device))
        return v.cpu().numpy()

    def _silent_in(self, obs: npt.NDArray[np.float32]) -> bool:
        """Whether ``obs`` are a game with señas and this policy was trained without them."""
        return obs.ndim == 2 and obs.shape[1] == OBS_DIM + SIGNAL_DIM and self.net.arch["obs_dim"] == OBS_DIM

    def _silent_probabilities(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8]
                              ) -> npt.NDArray[np.float32]:
        """:meth:`probabilities` of a policy without señas at a table with them (as ``SilentAgent`` plays it)."""
        from .signs import read_signs

        if masks.shape != (obs.shape[0], NUM_ACTIONS + NUM_SIGNS):
            raise ValueError(f"masks must have shape ({obs.shape[0]}, {NUM_ACTIONS + NUM_SIGNS}) with señas on, "
                             f"got {masks.shape}")
        p = np.zeros((len(obs), NUM_ACTIONS + NUM_SIGNS), dtype=np.float32)
        signing = read_signs(obs).window >= 0
        p[signing, SIGNAL_BASE + int(Sign.NONE)] = 1.0
        rest = np.flatnonzero(~signing)
        if rest.size:
            p[rest, :NUM_ACTIONS] = self.probabilities(obs[rest, :OBS_DIM], masks[rest, :NUM_ACTIONS])
        return p

    def _shape_error(self, shape: tuple[int, ...]) -> str:
        """Why observations of ``shape`` do not fit this policy, and what to do."""
        arch = self.net.arch
        if arch["obs_dim"] == OBS_DIM + SIGNAL_DIM and shape[-1:] == (OBS_DIM,):
            signals = self.config.get("signals") if self.config.get("signals") in ("truthful", "free") else \
                "truthful or free"
            return (f"policy {self.name!r} was trained with señas ({arch['obs_dim']} observation entries, "
                    f"{arch['num_actions']} actions) and cannot play a game without them ({OBS_DIM} entries): "
                    f"play it in a game with señas (--signals {signals})")
        return f"policy {self.name!r}: obs must have shape (B, {arch['obs_dim']}), got {shape}"

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        if len(obs) == 0:
            return np.zeros(0, dtype=np.int64)
        if np.shape(obs)[1] > self.net.arch["obs_dim"] == OBS_DIM:
            # a policy trained without signs in a game with them: it never signs and sees no sign
            from .signs import SilentAgent
            return SilentAgent(_Unwrapped(self), obs_dim=OBS_DIM).act_batch(obs, masks, rng)
        return choose_actions(self.probabilities(obs, masks), masks, self.greedy, rng)

    def __repr__(self) -> str:
        return f"TorchPolicyAgent(hidden={self.net.arch['hidden']}, greedy={self.greedy}, name={self.name!r})"


class _Unwrapped(Agent):
    """A TorchPolicyAgent's own act_batch, for :class:`agents.signs.SilentAgent` to call."""

    def __init__(self, agent: TorchPolicyAgent) -> None:
        self.agent = agent

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return choose_actions(self.agent.probabilities(obs, masks), masks, self.agent.greedy, rng)
