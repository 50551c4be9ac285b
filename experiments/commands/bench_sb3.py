"""``mus bench-sb3`` (maintainers): how fast SB3 trains on Mus (:mod:`experiments.integrations.bench_sb3`)."""

from __future__ import annotations

import json
from pathlib import Path

from experiments.commands.options import (
    ArgumentParser,
    check_agent_specs,
    check_writable_file,
    int_in,
    int_list,
    positive_float,
)
from experiments.integrations.bench_sb3 import run

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus bench-sb3`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus bench-sb3",
                       description="How fast SB3 trains on Mus: MaskablePPO on MusVecEnv (one batched engine) "
                                   "against MusGymEnv in a DummyVecEnv.")
    p.add_argument("--tables", type=int_list(1, 2**16), default=(64, 256), help="MusVecEnv sizes")
    p.add_argument("--opponents", default="rule", help="agent spec of every other seat")
    p.add_argument("--n-steps", type=int_in(1), default=32, help="MaskablePPO n_steps per table")
    p.add_argument("--batch-size", type=int_in(2), default=1024, help="MaskablePPO batch_size")
    p.add_argument("--n-epochs", type=int_in(1), default=4, help="MaskablePPO n_epochs")
    p.add_argument("--rollouts", type=int_in(1, 1000), default=3, help="timed rollouts on MusVecEnv")
    p.add_argument("--gym-envs", type=int_in(0, 256), default=8,
                   help="MusGymEnv copies in the DummyVecEnv comparison (0: skip it)")
    p.add_argument("--raw-seconds", type=positive_float, default=3.0, help="seconds of each raw env measurement")
    p.add_argument("--threads", type=int_in(1, 256), default=1, help="torch.set_num_threads")
    p.add_argument("--no-baseline", action="store_true", help="skip SB3's defaults on one MusGymEnv")
    p.add_argument("--json", default=None, help="also write the rows to this JSON file")
    a = p.parse_args(argv)
    check_agent_specs(p, "--opponents", [a.opponents])
    if a.json:
        check_writable_file(p, "--json", a.json)
    rows = run(tuple(a.tables), a.opponents, a.n_steps, a.batch_size, a.n_epochs, a.rollouts, a.gym_envs,
               a.raw_seconds, a.threads, baseline=not a.no_baseline)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
