"""``mus profile`` (maintainers): where a VectorMusEnv step goes (:mod:`experiments.tools.profile_vector`)."""

from __future__ import annotations

from experiments.commands.options import ArgumentParser, int_in
from experiments.tools.profile_vector import format_profile, profile

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run ``mus profile`` with ``argv`` (default: the process's arguments)."""
    p = ArgumentParser(prog="mus profile",
                       description="Where a VectorMusEnv step goes: median microseconds per step of the public "
                                   "step(), the compiled kernel, the observation, the random actions and the "
                                   "memory-write floor, on one thread.")
    p.add_argument("--batch", type=int_in(1), default=4096, help="tables (B)")
    p.add_argument("--steps", type=int_in(2), default=200, help="timed steps")
    args = p.parse_args(argv)
    print(format_profile(profile(args.batch, args.steps), args.batch))


if __name__ == "__main__":
    main()
