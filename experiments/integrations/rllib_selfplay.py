"""Self-play PPO on Mus with Ray RLlib (new API stack), on one machine or a Ray cluster.

The library route for users who already run RLlib; ``mus train`` (:mod:`experiments.train.ppo`) is the
project's own, much faster trainer. What ``mus rllib`` (:mod:`experiments.commands.rllib`) does with it:

* **Environment**: :class:`mus_env.adapters.rllib.MusMultiAgentEnv` (four agents ``seat_0..seat_3``, only the agent to
  act observes, each agent's rewards handed over at its next turn; ``--reward game|stones``, ``--kings``,
  ``--target``).
* **Policy**: :class:`MusPolicyRLModule`, an RLlib ``TorchRLModule`` whose network *is* the project's
  :class:`agents.policy.PolicyNet` (an MLP trunk, policy and value heads); illegal logits are set to
  :data:`agents.policy.MASKED_LOGIT` from the observation's ``action_mask``. All four seats share one policy
  (default) or each team has its own (``--policy-per-team``).
* **PPO**: RLlib's ``PPOConfig`` with small batches that fit a laptop (``--train-batch-size``,
  ``--minibatch-size``, ``--num-epochs``, ``--lr``), ``--num-env-runners`` sampling actors (0: sample in the
  driver) with ``--envs-per-runner`` envs each (RLlib's cost is per env step, whatever the number of envs
  stepped together, so this is the main speed knob). Stone rewards are scaled by ``1 / target``
  (``--reward-scale``): RLlib's PPO clips the value loss at 10, which raw stones would saturate.
* **Ray**: ``--address`` goes to ``ray.init(address=...)``: none starts a small local Ray of its own
  (``address="local"``, ``--num-cpus``, a 200 MB object store, no dashboard; a bare ``ray.init()`` would join
  any Ray another program runs on the machine); ``auto`` (on a cluster node) or ``ray://HEAD:10001`` joins a running
  cluster, unchanged. If Ray is already initialised in the process (tests), :func:`train` uses it.
* **Files** (``--out``, default ``runs/rllib``; an existing run is never replaced without ``--overwrite``):
  ``checkpoint/`` (RLlib's, replaced after every iteration), ``progress.json`` (iterations done, settings),
  ``metrics.csv`` and, at the end, ``policy.pt`` (shared) or ``policy_team_0.pt`` / ``policy_team_1.pt``:
  policy files that ``agents.make_agent`` and ``mus tournament`` load like the ones ``mus train`` writes.
  ``--resume`` continues a stopped run up to ``--iterations`` (weights, optimiser and counters from the
  checkpoint; RLlib keeps no env or sampler random state, so the resumed part is reseeded from the seed and
  the iterations done: fresh games, not a bit-exact continuation). ``--export CHECKPOINT --to FILE.pt``
  exports a checkpoint's policy without training.
* **Reproducibility**: ``--seed`` seeds RLlib (networks, action sampling, each env's first reset; the env
  seeds its later games itself) and the learner's minibatch shuffle; the sampled games repeat exactly. The
  updates repeat bit for bit only with ``PYTHONHASHSEED`` fixed as well (RLlib assembles batches by iterating
  sets of agent ids), e.g. ``PYTHONHASHSEED=0 mus rllib --num-env-runners 0 ...``.
* **Evaluation**: after each iteration, ``--eval-deals`` duplicate hands of the (first) policy against
  ``rule`` through :func:`experiments.evaluate.duplicate.play_pair` (0: off).

Usage::

    mus rllib --iterations 20 --out runs/rllib           # local Ray, 1 env runner
    mus rllib --iterations 40 --out runs/rllib --resume  # continue to 40
    mus rllib --export runs/rllib/checkpoint --to runs/rllib/policy.pt
    mus tournament --agents rule,runs/rllib/policy.pt --hands 2000 --games 0

On a cluster (every node with the same Python, ray 2.60 and mus-env installed, ``pip install -e ".[rllib]"``:
the env runners import ``mus_env`` and ``experiments`` by name)::

    ray start --head --port=6379                        # on the head node
    ray start --address=HEAD_IP:6379                    # on each worker node
    mus rllib --address auto --num-env-runners 16 --out runs/rllib_cluster
                                                        # on the head node; checkpoints are written there

``ray job submit`` needs Ray's dashboard (the ``ray[default]`` extra; ``ray[rllib]`` alone lacks aiohttp).
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from agents.policy import MASKED_LOGIT, PolicyNet
from experiments.train.checkpoint import CheckpointError
from experiments.train.session import FolderSession
from experiments.train.session import check_run_folder as check_folder

__all__ = ["MusPolicyRLModule", "env_config", "module_ids", "make_ppo_config", "module_net", "export_policy",
           "run_settings", "check_run_folder", "RUN_FILES", "check_reachable", "train", "DEFAULT_HIDDEN",
           "SAME_ON_RESUME", "init_ray", "save_checkpoint"]

#: The policy network's default hidden widths (smaller than ``mus train``'s, for quick RLlib runs).
DEFAULT_HIDDEN = (128, 128)
_PROGRESS = "progress.json"
_CHECKPOINT = "checkpoint"


class MusPolicyRLModule(TorchRLModule, ValueFunctionAPI):
    """RLlib ``TorchRLModule`` around :class:`agents.policy.PolicyNet`, with action masking.

    Reads the observation dict of :class:`mus_env.adapters.rllib.MusMultiAgentEnv` (``observations`` and a float
    ``action_mask``); illegal actions get the logit :data:`agents.policy.MASKED_LOGIT` (probability exactly 0,
    no gradient). ``model_config={"hidden": [128, 128]}`` sets the trunk's widths. ``self.net`` is a plain
    ``PolicyNet``, so :func:`export_policy` saves it with :func:`agents.policy.save_policy` and
    ``agents.make_agent`` plays it like a ``mus train`` policy.
    """

    def setup(self) -> None:
        """Build ``self.net`` for the observation vector inside the Dict space."""
        space = self.observation_space
        obs_space = space["observations"] if hasattr(space, "spaces") else space
        hidden = tuple(int(h) for h in (self.model_config or {}).get("hidden", DEFAULT_HIDDEN))
        self.net = PolicyNet(int(obs_space.shape[0]), int(self.action_space.n), hidden)

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict) or "observations" not in obs or "action_mask" not in obs:
            raise ValueError("MusPolicyRLModule needs dict observations with the keys 'observations' and "
                             "'action_mask' (as mus_env.adapters.rllib.MusMultiAgentEnv gives)")
        return obs["observations"], obs["action_mask"]

    @staticmethod
    def _mask(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.where(mask > 0, logits, torch.full_like(logits, MASKED_LOGIT))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = self._split(batch)
        return {Columns.ACTION_DIST_INPUTS: self._mask(self.net.logits(x), mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = self._split(batch)
        z = self.net.trunk(x)
        return {Columns.ACTION_DIST_INPUTS: self._mask(self.net.policy_head(z), mask), Columns.EMBEDDINGS: z}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """``(B,)`` state values from the value head (on the trunk's ``embeddings`` when given)."""
        if embeddings is None:
            embeddings = self.net.trunk(self._split(batch)[0])
        return self.net.value_head(embeddings).squeeze(-1)


# ----------------------------------------------------------------------------------------------------
# configuration
def env_config(args: Any) -> dict[str, Any]:
    """The ``env_config`` of :class:`mus_env.adapters.rllib.MusMultiAgentEnv` for these settings (``reward``,
    ``reward_scale``, ``kings``, ``target``, ``max_decisions``)."""
    scale = args.reward_scale
    if scale is None:
        scale = 1 / args.target if args.reward == "stones" else 1.0
    cfg: dict[str, Any] = {"reward": args.reward, "reward_scale": scale, "kings": args.kings, "target": args.target}
    if args.max_decisions is not None:
        cfg["max_decisions"] = args.max_decisions
    return cfg


def module_ids(policy_per_team: bool) -> tuple[str, ...]:
    """The RLModule ids of a run: ``("shared",)`` or ``("team_0", "team_1")``."""
    from mus_env.adapters.rllib import SHARED_POLICY, TEAM_POLICIES
    return TEAM_POLICIES if policy_per_team else (SHARED_POLICY,)


def make_ppo_config(args: Any, seed: int | None = None) -> Any:
    """RLlib ``PPOConfig`` (new API stack) for Mus self-play with :class:`MusPolicyRLModule`.

    ``args`` has the attributes of ``mus rllib``'s options (:func:`experiments.commands.rllib.build_parser`:
    ``policy_per_team``, ``hidden``,
    ``num_env_runners``, ``envs_per_runner``, ``train_batch_size``, ``minibatch_size``, ``num_epochs``, ``lr``,
    ``gamma``, ``entropy_coeff``, ``seed``, and the game options); ``seed`` overrides ``args.seed``. Optional
    attributes: ``use_kl_loss`` (default True, RLlib's adaptive KL penalty beside the clipped objective; it turns
    infinite, and wrecks the policy, once a sampled action's probability underflows to 0) and ``grad_clip``
    (default None: no clipping), both RLlib's defaults.
    """
    seed = args.seed if seed is None else seed
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    # the class as importable everywhere (never a __main__ copy): env runners on other nodes and later exports
    # import it by name
    from experiments.integrations.rllib_selfplay import MusPolicyRLModule as module_class
    from mus_env.adapters.rllib import MusMultiAgentEnv, shared_policy_mapping, team_policy_mapping

    ids = module_ids(args.policy_per_team)
    spec = MultiRLModuleSpec(rl_module_specs={
        mid: RLModuleSpec(module_class=module_class, model_config={"hidden": list(args.hidden)}) for mid in ids})
    return (
        PPOConfig()
        .environment(MusMultiAgentEnv, env_config=env_config(args),
                     disable_env_checking=True)      # RLlib's checker steps a random, usually illegal, action
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     num_cpus_per_env_runner=1, rollout_fragment_length="auto")
        .multi_agent(policies=set(ids),
                     policy_mapping_fn=team_policy_mapping if args.policy_per_team else shared_policy_mapping,
                     policies_to_train=list(ids))
        .rl_module(rl_module_spec=spec)
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.lr, gamma=args.gamma, lambda_=0.95,
                  entropy_coeff=args.entropy_coeff, vf_loss_coeff=0.5, clip_param=0.2,
                  use_kl_loss=getattr(args, "use_kl_loss", True), grad_clip=getattr(args, "grad_clip", None))
        .learners(num_learners=0)
        .debugging(seed=seed)
    )


# ----------------------------------------------------------------------------------------------------
# export
def module_net(algo: Any, module_id: str) -> PolicyNet:
    """A copy of the trained ``PolicyNet`` of ``module_id`` in a built RLlib algorithm (from its learner)."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE
    state = algo.learner_group.get_state(components=f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}/{module_id}")
    weights = state[COMPONENT_LEARNER][COMPONENT_RL_MODULE][module_id]
    return _net_from_state(weights, module_id)


def _net_from_state(weights: dict[str, Any], source: str) -> PolicyNet:
    model = {k[len("net."):]: torch.as_tensor(np.asarray(v)) for k, v in weights.items() if k.startswith("net.")}
    widths = [model[k].shape[0] for k in sorted((k for k in model if k.startswith("trunk.") and k.endswith(".weight")),
                                                key=lambda k: int(k.split(".")[1]))]
    obs_dim = model["trunk.0.weight"].shape[1] if widths else model["policy_head.weight"].shape[1]
    net = PolicyNet(obs_dim, model["policy_head.weight"].shape[0], widths)
    try:
        net.load_state_dict(model)
    except RuntimeError as e:
        raise ValueError(f"{source}: not the weights of a MusPolicyRLModule: {str(e).splitlines()[0]}") from e
    return net.eval()


def _checkpoint_env_config(checkpoint: Path) -> dict[str, Any]:
    """The MusConfig fields of the ``env_config`` stored in an RLlib algorithm checkpoint."""
    import dataclasses
    import pickle

    from mus_env import MusConfig
    try:
        with (checkpoint / "class_and_ctor_args.pkl").open("rb") as f:   # RLlib's own file of this checkpoint
            config = pickle.load(f)["ctor_args_and_kwargs"][0][0]
        env_cfg = dict(config["env_config"] if isinstance(config, dict) else config.env_config)
    except (OSError, KeyError, IndexError, TypeError, AttributeError, pickle.UnpicklingError) as e:
        raise ValueError(f"{checkpoint}: cannot read the algorithm config of this checkpoint "
                         f"({type(e).__name__}: {e})") from e
    fields = {f.name for f in dataclasses.fields(MusConfig)}
    return {k: v for k, v in env_cfg.items() if k in fields}


def export_policy(checkpoint: str | Path, to: str | Path, module_id: str | None = None,
                  meta: dict[str, Any] | None = None) -> Path:
    """Write the policy of an RLlib checkpoint (a run's ``OUT/checkpoint``) as a mus-env policy file.

    The file is :func:`agents.policy.save_policy`'s: ``make_agent(str(to))`` and ``mus tournament`` load it.

    Args:
        checkpoint: the checkpoint folder (``algo.save_to_path`` output).
        to: the ``*.pt`` file to write.
        module_id: ``shared``, ``team_0`` or ``team_1``; None: the only one, or ``team_0``.
        meta: extra metadata to store.

    Raises:
        ValueError: not a checkpoint of a run of :func:`train`, or no such module (the message lists those there).
    """
    from agents.policy import save_policy
    from mus_env import MusConfig

    checkpoint = Path(checkpoint).resolve()         # RLlib's restore (pyarrow) refuses relative paths
    modules_dir = checkpoint / "learner_group" / "learner" / "rl_module"
    if not modules_dir.is_dir():
        raise ValueError(f"{checkpoint}: not an RLlib algorithm checkpoint (no learner_group/learner/rl_module "
                         "inside); give the checkpoint folder of a run, e.g. runs/rllib/checkpoint")
    found = sorted(d.name for d in modules_dir.iterdir() if d.is_dir())
    if module_id is None:
        module_id = found[0] if len(found) == 1 else "team_0"
    if module_id not in found:
        raise ValueError(f"{checkpoint}: no module {module_id!r}; it has {found}")
    from ray.rllib.core.rl_module.rl_module import RLModule
    module = RLModule.from_checkpoint(modules_dir / module_id)
    if not isinstance(getattr(module, "net", None), PolicyNet):
        raise ValueError(f"{checkpoint}: module {module_id!r} is a {type(module).__name__}, not a MusPolicyRLModule "
                         "(whose network is a PolicyNet)")
    cfg = MusConfig(**_checkpoint_env_config(checkpoint))      # the ruleset the policy was trained on
    progress = checkpoint.parent / _PROGRESS
    info: dict[str, Any] = json.loads(progress.read_text()) if progress.is_file() else {}
    import ray
    full_meta = {"trainer": "RLlib PPO (experiments/integrations/rllib_selfplay.py)", "ray": ray.__version__,
                 "module": module_id, "checkpoint": str(checkpoint), "iterations": info.get("iterations"),
                 "env_steps": info.get("env_steps"), "command": info.get("command"), **(meta or {})}
    return save_policy(to, module.net, cfg.to_dict(), full_meta)


# ----------------------------------------------------------------------------------------------------
# training
#: Settings a resumed run must share with the run it continues.
SAME_ON_RESUME = ("policy_per_team", "hidden", "reward", "reward_scale", "kings", "target", "max_decisions")
#: What a run writes in its folder (``--overwrite`` replaces these and nothing else).
RUN_FILES = (_CHECKPOINT, _PROGRESS, "metrics.csv", "policy.pt", "policy_team_0.pt", "policy_team_1.pt")


def run_settings(args: Any) -> dict[str, Any]:
    """The settings of a run recorded in ``progress.json`` (every option but the export and folder ones)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(args).items()
            if k not in ("export", "to", "module", "resume", "overwrite")}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def save_checkpoint(algo: Any, out: Path) -> Path:
    """``algo.save_to_path`` into ``OUT/checkpoint``, replacing the previous one only once the new is complete."""
    final, tmp, old = out / _CHECKPOINT, out / (_CHECKPOINT + ".tmp"), out / (_CHECKPOINT + ".old")
    for d in (tmp, old):
        if d.exists():
            shutil.rmtree(d)
    algo.save_to_path(str(tmp.resolve()))
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    if old.exists():
        shutil.rmtree(old)
    return final


def _get(d: dict[str, Any], *keys: str, default: Any = float("nan")) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def _evaluate(net: PolicyNet, args: Any) -> tuple[float, float, float]:
    """Duplicate stones per hand of ``net`` (sampled) minus ``rule`` on ``args.eval_deals`` fixed deals."""
    from agents import RuleBasedAgent
    from agents.policy import TorchPolicyAgent
    from experiments.evaluate.deals import make_deals
    from experiments.evaluate.duplicate import play_pair
    from mus_env import MusConfig

    cfg = MusConfig(kings=args.kings, target=args.target)
    deals = make_deals(args.eval_deals, seed=20240, target=args.target)
    result = play_pair(TorchPolicyAgent(net, name="rllib"), RuleBasedAgent(), deals, config=cfg, seed=args.seed)
    return result.mean_diff()


def init_ray(args: Any) -> bool:
    """Start (no ``--address``) or join Ray unless it is running in this process; True if this call did."""
    import ray
    if ray.is_initialized():
        return False
    if args.address is None:
        # address="local": a Ray of our own, never one that another program on this machine started
        ray.init(address="local", num_cpus=args.num_cpus or args.num_env_runners + 1, object_store_memory=200 * 2**20,
                 include_dashboard=False, configure_logging=True, logging_level="warning")
    else:
        try:
            ray.init(address=args.address, logging_level="warning")
        except (ConnectionError, RuntimeError) as e:
            cause = e.__cause__ or e
            raise ConnectionError(
                f"cannot connect to Ray at {args.address!r} ({type(cause).__name__}: "
                f"{' '.join(str(cause).split())[:300]}). Is the head running (ray start --head)? Ray 2.60 clusters "
                "started with ray start use token authentication: run this with RAY_AUTH_MODE=token and the "
                "cluster's token in ~/.ray/auth_token (or RAY_AUTH_TOKEN)") from e
    return True


_save_checkpoint = save_checkpoint   # the names before they were public
_init_ray = init_ray


def check_run_folder(out: Path, args: Any) -> None:
    """Check, writing nothing, that the run of ``args`` may use the folder ``out``: the trainer's own check
    (:func:`experiments.train.session.check_run_folder`, a run being ``progress.json``), then, with
    ``args.resume``, that the run there has its ``checkpoint/``, was made with the same :data:`SAME_ON_RESUME`
    settings and has done fewer than ``args.iterations`` iterations.

    Raises:
        ValueError: the message starts with the option at fault (``--resume: ...``, ``--iterations: ...``,
            ``--out: ...``).
    """
    try:
        check_folder(out, args.resume, args.overwrite, marker=_PROGRESS, what="run")
    except CheckpointError as e:
        option = "--resume" if args.resume else "--out"
        raise ValueError(f"{option}: {e}") from None
    if not args.resume:
        return
    if not (out / _CHECKPOINT).is_dir():
        raise ValueError(f"--resume: no run to resume in {str(out)!r} (no {_CHECKPOINT}/ beside {_PROGRESS})")
    saved = json.loads((out / _PROGRESS).read_text()).get("settings", {})
    now = run_settings(args)
    differ = [f"--{k.replace('_', '-')} {saved.get(k)!r} -> {now[k]!r}" for k in SAME_ON_RESUME
              if k in saved and saved[k] != now[k]]
    if differ:
        raise ValueError("--resume: the run in " + repr(str(out)) + " was made with other settings: "
                         + "; ".join(differ))
    done = json.loads((out / _PROGRESS).read_text()).get("iterations", 0)
    if done >= args.iterations:
        raise ValueError(f"--iterations: the run in {str(out)!r} has done {done} iterations already; "
                         "give a larger total")


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast when nothing listens at a ``HOST:PORT`` or ``ray://HOST:PORT`` address (Ray itself retries for
    minutes); ``auto`` and other forms are left to Ray.

    Raises:
        ConnectionError: nothing answers there.
    """
    import socket
    hostport = address[len("ray://"):] if address.startswith("ray://") else address
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise ConnectionError(f"nothing answers at {address!r} ({e.strerror or e}): start the head first "
                              "(ray start --head --port=6379) and give its HOST:PORT, or 'auto' on a cluster "
                              "node") from e


def train(args: Any, log: Any = print, command: str | None = None) -> dict[str, Any]:
    """Run (or resume) the PPO iterations of ``args`` (``mus rllib``'s options); returns the last progress.

    Joins the Ray already initialised in this process if there is one (tests), else starts or joins one as
    ``args.address`` says, and shuts down only what it started. ``command`` (the command line) is recorded in
    ``progress.json`` and the exported policy files; a resumed run without one keeps the first run's.
    """
    torch.set_num_threads(args.torch_threads)
    out = Path(args.out).resolve()                  # RLlib's checkpointing (pyarrow) refuses relative paths
    # the trainer's hold on the folder: a replaced run goes only at the new run's first checkpoint, and a session
    # that fails before it leaves the folder as it was
    with FolderSession(out, RUN_FILES, args.resume, kept=(_PROGRESS, "metrics.csv")) as folder:
        return _train(args, out, folder, log, command)


def _train(args: Any, out: Path, folder: FolderSession, log: Any, command: str | None) -> dict[str, Any]:
    """The session of :func:`train` inside its folder."""
    import ray

    progress: dict[str, Any] = {"iterations": 0, "env_steps": 0}
    if args.resume:
        progress = json.loads((out / _PROGRESS).read_text())
    started = init_ray(args)
    algo = None
    try:
        # A resumed run restores weights, optimiser and counters, but RLlib does not store the envs' and the
        # samplers' random state: reseeding them from (seed, iterations done) gives fresh games instead of a
        # replay of the first iteration's.
        done = progress["iterations"]
        algo = make_ppo_config(args, seed=(args.seed + 1_000_003 * done) % 2**31).build_algo()
        if args.resume:
            algo.restore_from_path(str((out / _CHECKPOINT).resolve()))
        ids = module_ids(args.policy_per_team)
        progress.update(settings=run_settings(args), env_config=env_config(args), ray=ray.__version__,
                        command=command or progress.get("command"))
        metrics_path = out / "metrics.csv"
        fields = ["iteration", "env_steps", "episodes", "seconds", "env_steps_per_s", "episode_len_mean",
                  *[f"return_{a}" for a in ("seat_0", "seat_1")],
                  *[f"{m}_{k}" for m in ids for k in ("policy_loss", "vf_loss", "entropy", "mean_kl")],
                  "eval_stones_vs_rule", "eval_ci_low", "eval_ci_high"]
        if not metrics_path.exists() or not args.resume:
            with metrics_path.open("w", newline="") as f:
                csv.writer(f).writerow(fields)
        log(f"RLlib PPO on Mus: {len(ids)} module(s) {list(ids)}, {args.num_env_runners} env runner(s), "
            f"{args.train_batch_size} steps per iteration; ray {ray.__version__}; out {out}")
        for it in range(progress["iterations"] + 1, args.iterations + 1):
            # the learner (in this process) shuffles minibatches with numpy's global generator: seeding it per
            # iteration makes updates repeatable; sampling is seeded through RLlib's seed
            np.random.seed((args.seed * 1_000_003 + it) % 2**32)  # noqa: NPY002 - RLlib reads the global one
            t0 = time.perf_counter()
            result = algo.train()
            dt = time.perf_counter() - t0
            runners = result.get("env_runners", {})
            steps = int(_get(runners, "num_env_steps_sampled_lifetime", default=0))
            row: dict[str, Any] = {
                "iteration": it, "env_steps": steps,
                "episodes": int(_get(runners, "num_episodes_lifetime", default=0)),
                "seconds": round(dt, 3),
                "env_steps_per_s": round(float(_get(runners, "num_env_steps_sampled", default=0)) / dt, 1),
                "episode_len_mean": _get(runners, "episode_len_mean"),
            }
            for a in ("seat_0", "seat_1"):
                row[f"return_{a}"] = _get(runners, "agent_episode_returns_mean", a)
            for m in ids:
                for k in ("policy_loss", "vf_loss", "entropy", "mean_kl"):
                    row[f"{m}_{k}"] = _get(result, "learners", m, {"mean_kl": "mean_kl_loss"}.get(k, k))
            eval_text = ""
            if args.eval_deals:
                mean, lo, hi = _evaluate(module_net(algo, ids[0]), args)
                row.update(eval_stones_vs_rule=mean, eval_ci_low=lo, eval_ci_high=hi)
                eval_text = f"  {ids[0]} vs rule {mean:+.2f} [{lo:+.2f}, {hi:+.2f}] stones/hand"
            save_checkpoint(algo, out)
            progress.update(iterations=it, env_steps=steps)
            _write_json(out / _PROGRESS, progress)
            with metrics_path.open("a", newline="") as f:
                csv.DictWriter(f, fieldnames=fields).writerow({k: row.get(k, "") for k in fields})
            folder.commit()                                 # a checkpoint: this run is the folder's run now
            log(f"iter {it:4d}  env steps {steps:8d}  {row['env_steps_per_s']:7.1f}/s  {dt:5.1f} s  episodes "
                f"{row['episodes']:6d}  len {row['episode_len_mean']:6.1f}  return seat_0 "
                f"{row['return_seat_0']:+7.2f}  entropy {row[f'{ids[0]}_entropy']:.3f}{eval_text}")
        written = []
        for m in ids:
            name = "policy.pt" if m == "shared" else f"policy_{m}.pt"
            written.append(export_policy(out / _CHECKPOINT, out / name, m))
        log("policy file(s): " + ", ".join(map(str, written)) + "  (mus tournament --agents rule," + str(written[0])
            + ")")
        progress["policies"] = [str(p) for p in written]
        return progress
    finally:
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()

