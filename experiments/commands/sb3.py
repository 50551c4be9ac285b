"""``mus sb3``: sb3-contrib MaskablePPO on the batched engine against fixed agents
(:mod:`experiments.integrations.sb3_maskable_ppo`)."""

from __future__ import annotations

import sys

from experiments.commands.options import (
    MAX_DEALS,
    MAX_TARGET,
    ArgumentParser,
    check_creatable_dir,
    int_in,
    int_list,
    positive_float,
)
from experiments.integrations.sb3_maskable_ppo import TrainSettings, check_installed, parse_opponents, train
from mus_env.interfaces import check_learner_seats

__all__ = ["main", "build_parser"]


def build_parser() -> ArgumentParser:
    """The options of ``mus sb3``, defaulting to :class:`TrainSettings`'s values."""
    d = TrainSettings()
    p = ArgumentParser(prog="mus sb3",
                       description="Train sb3-contrib MaskablePPO on MusVecEnv (one batched engine) against fixed "
                                   "agents; save OUT/model.zip (an agent spec) and OUT/run.json.")
    p.add_argument("--opponents", default=d.opponents,
                   help="agent spec for every other seat (random, rule, equity, ordago, ppo, *.pt, *.zip), or "
                        "SEAT=SPEC pairs, e.g. 1=rule,3=equity")
    p.add_argument("--tables", type=int_in(1, 2**16), default=d.tables, help="tables of the batched engine")
    p.add_argument("--timesteps", type=int_in(1), default=d.timesteps, help="learner decisions to train on")
    p.add_argument("--minutes", type=float, default=d.minutes, help="also stop after this many minutes (0: no limit)")
    p.add_argument("--learner-seats", type=int_list(0, 3), default=d.learner_seats,
                   help="the learner's seats, one team: 0,2 (both, one shared policy), 0, 1 or 1,3 ...")
    p.add_argument("--reward", choices=("game", "stones"), default=d.reward,
                   help="game: +1/-1 at the end of the game; stones: own minus other team's stones per hand")
    p.add_argument("--seed", type=int_in(0, 2**32 - 1), default=d.seed, help="seed of the games, agents and model")
    p.add_argument("--threads", type=int_in(1, 256), default=d.threads, help="torch.set_num_threads")
    p.add_argument("--n-steps", type=int_in(1), default=d.n_steps, help="MaskablePPO n_steps (per table)")
    p.add_argument("--batch-size", type=int_in(2), default=d.batch_size, help="MaskablePPO batch_size")
    p.add_argument("--n-epochs", type=int_in(1), default=d.n_epochs, help="MaskablePPO n_epochs")
    p.add_argument("--learning-rate", type=positive_float, default=d.learning_rate, help="MaskablePPO learning_rate")
    p.add_argument("--gamma", type=float, default=d.gamma, help="discount")
    p.add_argument("--ent-coef", type=float, default=d.ent_coef, help="entropy bonus")
    p.add_argument("--net-arch", type=int_list(1, 4096), default=d.net_arch, help="hidden layer sizes")
    p.add_argument("--target", type=int_in(1, MAX_TARGET, "Mus plays to 40 or 30"), default=d.target,
                   help="stones that win a game")
    p.add_argument("--eval-deals", type=int_in(0, MAX_DEALS), default=d.eval_deals,
                   help="duplicate deals (one hand each, seats swapped) of the final evaluation against the first "
                        "opponent spec (0: none)")
    p.add_argument("--eval-every", type=int_in(0), default=d.eval_every,
                   help="evaluate every this many decisions during training on --eval-deals deals (1000 if 0); "
                        "0: never")
    p.add_argument("--eval-seed", type=int_in(0, 2**32 - 1), default=d.eval_seed, help="seed of the deal set")
    p.add_argument("--out", default=d.out, help="output folder (model.zip, run.json, evals.csv)")
    return p


def main(argv: list[str] | None = None) -> None:
    """Run ``mus sb3`` with ``argv`` (default: the process's arguments)."""
    p = build_parser()
    a = p.parse_args(argv)
    check_installed()                                   # a missing library: one line (experiments.cli), nothing made
    if a.minutes < 0:
        p.error(f"argument --minutes: must be >= 0, got {a.minutes}")
    seats = tuple(a.learner_seats)
    if any(part.partition("=")[2 if "=" in part else 0].strip() == "human" for part in a.opponents.split(",")):
        p.error("argument --opponents: 'human' cannot sit here (training plays millions of decisions)")
    try:
        seats = check_learner_seats(seats)
    except ValueError as e:
        p.error(f"argument --learner-seats: {e}")
    try:
        parse_opponents(a.opponents, seats)             # builds each agent once: a bad spec fails here
    except (ValueError, OSError, ImportError, RuntimeError) as e:
        p.error(str(e) if str(e).startswith("--opponents") else f"argument --opponents: {e}")
    check_creatable_dir(p, "--out", a.out)             # checked, not made: train() makes it
    s = TrainSettings(opponents=a.opponents, tables=a.tables, timesteps=a.timesteps, minutes=a.minutes,
                      learner_seats=seats, reward=a.reward, seed=a.seed, threads=a.threads, n_steps=a.n_steps,
                      batch_size=a.batch_size, n_epochs=a.n_epochs, learning_rate=a.learning_rate, gamma=a.gamma,
                      ent_coef=a.ent_coef, net_arch=tuple(a.net_arch), target=a.target, eval_deals=a.eval_deals,
                      eval_every=a.eval_every, eval_seed=a.eval_seed, out=a.out)
    words = argv if argv is not None else sys.argv[1:]
    train(s, command=" ".join(["mus sb3", *words]))


if __name__ == "__main__":
    main()
