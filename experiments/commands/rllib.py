"""``mus rllib``: self-play PPO with Ray RLlib, local or on a cluster, and the export of a checkpoint's policy
(:mod:`experiments.integrations.rllib_selfplay`)."""

from __future__ import annotations

import argparse
import os
import sys

from experiments.commands.options import (
    ArgumentParser,
    boolean,
    check_writable_dir,
    check_writable_file,
    int_in,
    positive_float,
)
from experiments.integrations.rllib_selfplay import (
    DEFAULT_HIDDEN,
    check_reachable,
    check_run_folder,
    export_policy,
    train,
)

__all__ = ["main", "build_parser"]


def build_parser() -> ArgumentParser:
    """The options of ``mus rllib`` (the namespace is the ``args`` of the library's functions)."""
    p = ArgumentParser(prog="mus rllib",
                       description="Self-play PPO on Mus with Ray RLlib (local Ray or a cluster); exports a "
                                   "policy file that mus tournament plays.")
    run = p.add_argument_group("run")
    run.add_argument("--iterations", type=int_in(1, 10**6), default=10,
                     help="PPO iterations in all (with --resume: continue up to this many)")
    run.add_argument("--out", default="runs/rllib", help="run folder: checkpoint/, metrics.csv, policy.pt")
    run.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    run.add_argument("--overwrite", action="store_true", help="replace an existing run in --out")
    run.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0, help="RLlib's seed (envs, networks)")
    run.add_argument("--eval-deals", type=int_in(0, 100_000), default=200,
                     help="duplicate hands against rule after each iteration (0: no evaluation)")
    run.add_argument("--torch-threads", type=int_in(1, 256), default=1, help="torch threads of the learner")
    ray_ = p.add_argument_group("ray")
    ray_.add_argument("--address", default=None,
                      help="ray.init(address=...): none starts a local Ray; HEAD_IP:6379, 'auto' (on a cluster "
                           "node) or ray://HEAD_IP:10001 joins a running cluster (with RAY_AUTH_MODE=token when it "
                           "uses token authentication, as ray start does by default in ray 2.60)")
    ray_.add_argument("--num-cpus", type=int_in(1, 4096), default=None,
                      help="CPUs of the local Ray (default: env runners + 1); not used with --address")
    ray_.add_argument("--num-env-runners", type=int_in(0, 4096), default=1,
                      help="sampling actors (0: sample in the driver process)")
    ray_.add_argument("--envs-per-runner", type=int_in(1, 1024), default=32,
                      help="envs stepped together by each runner (one batched forward pass per step: RLlib's cost "
                           "is per step, so this is the main speed knob)")
    algo = p.add_argument_group("PPO and policy")
    algo.add_argument("--policy-per-team", action="store_true",
                      help="one policy per team (team_0: seats 0, 2; team_1: seats 1, 3) instead of one shared")
    algo.add_argument("--hidden", type=_int_list, default=DEFAULT_HIDDEN, help="hidden widths, e.g. 128,128")
    algo.add_argument("--train-batch-size", type=int_in(16, 10**7), default=2000,
                      help="env steps (decisions) per iteration")
    algo.add_argument("--minibatch-size", type=int_in(8, 10**7), default=250, help="SGD minibatch size")
    algo.add_argument("--num-epochs", type=int_in(1, 100), default=4, help="SGD epochs per iteration")
    algo.add_argument("--lr", type=positive_float, default=3e-4, help="learning rate")
    algo.add_argument("--gamma", type=_unit_float, default=0.99, help="discount per decision of an agent")
    algo.add_argument("--entropy-coeff", type=_nonneg_float, default=0.01, help="entropy bonus")
    algo.add_argument("--kl-loss", dest="use_kl_loss", type=boolean, default=True, metavar="BOOL",
                      help="RLlib's adaptive KL penalty beside the clipped objective (RLlib's default); it can turn "
                           "infinite and collapse the policy in long runs: mus benchmark's row uses false")
    algo.add_argument("--grad-clip", type=positive_float, default=None,
                      help="clip the gradients' global norm (default: none, RLlib's; mus benchmark's row uses 0.5)")
    game = p.add_argument_group("game")
    game.add_argument("--reward", choices=("stones", "game"), default="stones",
                      help="stones: stone difference per hand; game: +1/-1 at the end")
    game.add_argument("--reward-scale", type=positive_float, default=None,
                      help="factor on every reward (default: 1/target with stones, so that a hand is worth about "
                           "[-1, 1] and PPO's clipped value loss keeps learning; 1 with game)")
    game.add_argument("--kings", type=int, choices=(8, 4), default=8, help="8 or 4 kings")
    game.add_argument("--target", type=int_in(1, 1000), default=40, help="stones to win a game")
    game.add_argument("--max-decisions", type=int_in(1, 10**7), default=None,
                      help="truncate an episode after this many decisions (default: never)")
    exp = p.add_argument_group("export (no training)")
    exp.add_argument("--export", metavar="CHECKPOINT", default=None,
                     help="export the policy of an RLlib checkpoint folder (OUT/checkpoint) and exit")
    exp.add_argument("--to", metavar="FILE.pt", default=None, help="policy file to write with --export")
    exp.add_argument("--module", default=None,
                     help="module to export: shared (default), team_0 or team_1 (with --policy-per-team)")
    return p


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(t) for t in text.replace(" ", "").split(",") if t)
    except ValueError:
        values = ()
    if not values or any(v < 1 or v > 65536 for v in values):
        raise argparse.ArgumentTypeError(f"must be comma-separated widths in 1..65536, e.g. 128,128; got {text[:40]!r}")
    return values


def _unit_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1], got {text[:40]!r}")
    return v


def _nonneg_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (v >= 0.0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text[:40]!r}")
    return v


def main(argv: list[str] | None = None) -> None:
    """Run ``mus rllib`` with ``argv`` (default: the process's arguments)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.export is not None or args.to is not None:
        if args.export is None or args.to is None:
            parser.error("argument --export/--to: give both, --export CHECKPOINT_FOLDER --to FILE.pt")
        to = check_writable_file(parser, "--to", args.to)
        try:
            path = export_policy(args.export, to, args.module)
        except (ValueError, OSError) as e:
            parser.error(f"argument --export: {e}")
        print(f"wrote {path} (mus tournament --agents rule,{path})")
        return
    if args.module is not None:
        parser.error("argument --module: only with --export")
    if args.minibatch_size > args.train_batch_size:
        parser.error(f"argument --minibatch-size: {args.minibatch_size} is larger than --train-batch-size "
                     f"{args.train_batch_size}")
    if args.resume and args.overwrite:
        parser.error("argument --resume: not with --overwrite (one continues the run in --out, the other replaces it)")
    out = check_writable_dir(parser, "--out", args.out)
    try:
        check_run_folder(out, args)                 # an --overwrite replaces the old run only at the first checkpoint
    except ValueError as e:
        parser.error(f"argument {e}")
    if args.address is not None and args.num_cpus is not None:
        parser.error("argument --num-cpus: only for a local Ray (without --address); a cluster has its own")
    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    words = argv if argv is not None else sys.argv[1:]
    try:
        if args.address is not None:
            check_reachable(args.address)
        train(args, command=" ".join(["mus rllib", *words]))
    except ConnectionError as e:
        parser.error(f"argument --address: {e}")


if __name__ == "__main__":
    main()
