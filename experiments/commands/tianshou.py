"""``mus tianshou``: Tianshou masked DQN at seat 0 against fixed agents
(:mod:`experiments.integrations.tianshou_example`)."""

from __future__ import annotations

from typing import Any

from experiments.commands.options import ArgumentParser, check_agent_specs, int_in, positive_float
from experiments.integrations.tianshou_example import Args, check_installed, summary_line, train

__all__ = ["main"]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse the flags, train, print the evaluation and return :func:`train`'s figures."""
    d = Args()
    p = ArgumentParser(prog="mus tianshou",
                       description="Tianshou DQN (masked) on seat 0 of Mus against fixed agents.")
    p.add_argument("--seed", type=int_in(0, 2**32 - 1), default=d.seed,
                   help="seed of the games, the agents and the network")
    p.add_argument("--opponent", default=d.opponent, help="agent spec of seats 1, 2 and 3 (random, rule, ...)")
    p.add_argument("--reward", default=d.reward, choices=("stones", "game"),
                   help="stones: own minus other team's stones per hand; game: +1/-1 at the end")
    p.add_argument("--epochs", type=int_in(1), default=d.epochs, help="training epochs (each --epoch-steps decisions)")
    p.add_argument("--epoch-steps", type=int_in(1), default=d.epoch_steps, help="learner decisions per epoch")
    p.add_argument("--collect-steps", type=int_in(1), default=d.collect_steps,
                   help="decisions collected between gradient steps")
    p.add_argument("--updates-per-step", type=positive_float, default=d.updates_per_step,
                   help="gradient updates per collected decision")
    p.add_argument("--batch-size", type=int_in(1), default=d.batch_size, help="DQN minibatch size")
    p.add_argument("--lr", type=positive_float, default=d.lr, help="Adam learning rate")
    p.add_argument("--gamma", type=positive_float, default=d.gamma, help="discount in (0, 1]")
    p.add_argument("--eps", type=float, default=d.eps, help="epsilon-greedy exploration while training")
    p.add_argument("--hidden", type=int_in(1), default=d.hidden, help="width of the two hidden layers")
    p.add_argument("--buffer", type=int_in(1), default=d.buffer, help="replay buffer size (decisions)")
    p.add_argument("--envs", type=int_in(1, 64), default=d.envs,
                   help="environments collected in parallel (DummyVectorEnv)")
    p.add_argument("--eval-games", type=int_in(2), default=d.eval_games,
                   help="games of the final evaluation (the DQN and a random seat 0 on the same seeds)")
    ns = p.parse_args(argv)
    check_installed()                                   # a missing library: one line (experiments.cli)
    if not 0.0 <= ns.eps <= 1.0:
        p.error(f"argument --eps: must be in [0, 1], got {ns.eps}")
    if ns.gamma > 1.0:
        p.error(f"argument --gamma: must be in (0, 1], got {ns.gamma}")
    check_agent_specs(p, "--opponent", [ns.opponent])
    args = Args(**{k: v for k, v in vars(ns).items()})
    out = train(args)
    unit = "stones" if args.reward == "stones" else "+1/-1"
    print(f"trained {out['train_steps']} decisions in {out['train_seconds']:.1f} s; seat 0 with "
          f"{args.opponent} at seats 1-3, return per game ({unit}):")
    print(summary_line("DQN (greedy)", out["learner_returns"]))
    print(summary_line("random", out["random_returns"]))
    return out


if __name__ == "__main__":
    main()
