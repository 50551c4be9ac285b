"""The checks a run of :mod:`experiments.train.ppo` passes before it writes anything.

* :func:`check_args`: every field of :class:`experiments.train.ppo.Args` (``Args.check``): its type, a finite
  value, its range (:data:`LIMITS` for the sizes, which bound the memory a run asks for), and the fields that go
  together (the league, the señas, the game).
* :func:`build_league`: the league with every frozen agent of ``league_mix``, and the evaluation opponents of
  ``eval_opponents``, built once (policy files read, their weights and shapes checked against the run's game).

Anything refused is a :class:`SettingsError` (a ``ValueError``) naming the setting or the file and what to do;
the run's folder is not touched until every check has passed (:mod:`experiments.train.session`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numba

from agents.policy import check_device_name
from experiments.evaluate.deals import MAX_DEALS
from experiments.train.league import League, check_league_args, frozen_agent, parse_mix, split_specs
from mus_env import MusConfig
from mus_env.actions import num_actions
from mus_env.config import SIGNALS_CHOICES, is_int

__all__ = ["SettingsError", "LIMITS", "MAX_ROLLOUT", "check_args", "widths_ok", "build_league", "threads_for",
           "torch_thread_count", "engine_threads_for", "check_learning_rate"]


class SettingsError(ValueError):
    """A run that cannot start: a bad setting, agent, policy file, output folder or checkpoint. Raised before the
    run's folder is touched, so nothing has been written."""


#: Largest value of each integer setting: the sizes bound the memory a run asks for, the rest are sanity limits.
LIMITS = {
    "total_decisions": 10**15, "num_tables": 65_536, "rollout_steps": 65_536, "update_epochs": 1_000,
    "minibatch_size": 2**24, "snapshot_every": 10**12, "pool_size": 1_000, "checkpoint_every": 10**12,
    "eval_hands": MAX_DEALS, "eval_games": MAX_DEALS, "bc_decisions": 10**8, "bc_epochs": 1_000,
    "value_warmup": 10**12, "eval_every": 10**12, "max_mus_rounds": 1_000, "torch_threads": 1_024,
    "exploiter_reset_every": 10**12, "magnet_every": 10**12, "max_stake": 1_000_000,
}

#: Largest rollout, ``num_tables * rollout_steps`` decisions (the turn buffer holds them all).
MAX_ROLLOUT = 2**22

#: Largest width of a trunk layer, and most layers.
MAX_WIDTH, MAX_LAYERS = 16_384, 16

#: Float settings: (lowest, highest, whether the lowest is allowed) — every one must be finite.
_FLOATS = {
    "learning_rate": (0.0, 1.0, False), "clip_coef": (0.0, 1.0, False), "max_grad_norm": (0.0, 1e6, False),
    "gamma": (0.0, 1.0, True), "gae_lambda": (0.0, 1.0, True), "ent_coef": (0.0, 1e6, True),
    "vf_coef": (0.0, 1e6, True), "target_kl": (0.0, 1e6, True), "max_minutes": (0.0, 1e7, True),
    "stones_coef": (0.0, 1e6, True), "game_coef": (0.0, 1e6, True), "magnet_coef": (0.0, 1e6, True),
    "exploiter_learning_rate": (0.0, 1.0, True), "magnet_ema": (0.0, 1.0, True), "entropy_floor": (0.0, 1e6, True),
    "entropy_floor_coef": (0.0, 1e6, True),
}

_AT_LEAST_ONE = ("total_decisions", "num_tables", "rollout_steps", "update_epochs", "minibatch_size",
                 "snapshot_every", "pool_size", "checkpoint_every", "eval_hands", "eval_games")

_BOOLS = ("progress", "anneal_lr", "central_critic", "eval_greedy")

_STRINGS = ("out", "signals", "league_mix", "eval_opponents", "learner_decides", "warm_start", "device")


def check_learning_rate(value: Any, name: str) -> float:
    """``value`` as a learning rate (a finite number in (0, 1)): the probes', a recipe's and a distillation's;
    ``ValueError`` names ``name`` and the value otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value < 1:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def widths_ok(hidden: Any) -> bool:
    """Whether ``hidden`` is a tuple of 1 to :data:`MAX_LAYERS` layer widths, each an int in 1..:data:`MAX_WIDTH`."""
    return (isinstance(hidden, tuple) and 1 <= len(hidden) <= MAX_LAYERS
            and all(is_int(w) and 1 <= w <= MAX_WIDTH for w in hidden))


def check_args(args: Any) -> None:
    """Check every field of ``args`` (an :class:`experiments.train.ppo.Args`); ``ValueError`` names the first bad
    one, what it must be and what it was. Reads no file but the warm start's existence."""
    for name in _BOOLS:
        if not isinstance(getattr(args, name), bool):
            raise ValueError(f"Args.{name} must be true or false, got {getattr(args, name)!r}")
    for name in _STRINGS:
        if not isinstance(getattr(args, name), str):
            raise ValueError(f"Args.{name} must be a string, got {getattr(args, name)!r}")
    if not args.out.strip():
        raise ValueError("Args.out must name a folder, got ''")
    try:
        check_device_name(args.device)
    except ValueError as e:
        raise ValueError(f"Args.{e}") from None
    for name, hi in LIMITS.items():
        v, lo = getattr(args, name), 1 if name in _AT_LEAST_ONE else 0
        if not is_int(v) or not lo <= v <= hi:
            raise ValueError(f"Args.{name} must be an int {'>= 1' if lo else '>= 0'} (at most {hi:,}), got {v!r}")
    if args.max_stake == 1:
        raise ValueError("Args.max_stake must be 0 (no cap) or at least 2 stones (the smallest bet), got 1")
    for name in ("seed", "eval_seed"):
        v = getattr(args, name)
        if not is_int(v) or not 0 <= v < 2**32:
            raise ValueError(f"Args.{name} must be an int in 0..{2**32 - 1}, got {v!r}")
    if args.num_tables * args.rollout_steps > MAX_ROLLOUT:
        raise ValueError(f"Args.num_tables * Args.rollout_steps must be at most {MAX_ROLLOUT:,} decisions per "
                         f"rollout (the turn buffer holds them all), got {args.num_tables} * {args.rollout_steps}")
    for name, (lo, hi, closed) in _FLOATS.items():
        v = getattr(args, name)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and \
            (lo <= v if closed else lo < v) and v <= hi
        if not ok:
            rng = f"in [{lo:g}, {hi:g}]" if closed else f"in ({lo:g}, {hi:g}]"
            raise ValueError(f"Args.{name} must be a finite number {rng}, got {v!r}")
    h = args.hidden
    if not widths_ok(h):
        raise ValueError(f"Args.hidden must be 1 to {MAX_LAYERS} widths, each an int in 1..{MAX_WIDTH:,}, got {h!r}")
    if args.warm_start not in ("none", "equity"):
        path = Path(args.warm_start)
        if not args.warm_start.endswith(".pt"):
            raise ValueError(f"Args.warm_start must be 'none', 'equity' or an existing policy file *.pt, "
                             f"got {args.warm_start!r}")
        if path.is_dir():
            raise ValueError(f"Args.warm_start: {args.warm_start!r} is a folder, not a policy file (give the file "
                             "inside it, e.g. runs/train/policy.pt)")
        if not path.is_file():
            raise ValueError(f"Args.warm_start must be 'none', 'equity' or an existing policy file *.pt: "
                             f"{args.warm_start!r} does not exist")
    if not split_specs(args.eval_opponents):
        raise ValueError("Args.eval_opponents must name at least one opponent (e.g. rule,equity)")
    check_league_args(args.league_mix, args.eval_opponents, args.learner_decides, args.exploiter_reset_every)
    if args.exploiter_learning_rate and "exploiter" not in parse_mix(args.league_mix):
        raise ValueError(f"Args.exploiter_learning_rate={args.exploiter_learning_rate:g} needs an exploiter in the "
                         f"league_mix (e.g. 'exploiter:0.25'), got {args.league_mix!r}")
    if args.signals not in SIGNALS_CHOICES:
        raise ValueError(f"Args.signals must be one of {', '.join(SIGNALS_CHOICES)} (señas, RULES.md §8), "
                         f"got {args.signals!r}")
    p = args.signal_intercept_p
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"Args.signal_intercept_p must be a number in [0, 1], got {p!r}")
    if p and args.signals == "off":
        raise ValueError(f"Args.signal_intercept_p={p!r} has no effect with signals off: give --signals "
                         "truthful or free, or leave --signal-intercept-p at 0")
    if args.magnet_ema and args.magnet_every:
        raise ValueError(f"Args.magnet_ema={args.magnet_ema:g} makes the magnet an average of the learner, moved after "
                         f"every update; it cannot also be refreshed every {args.magnet_every} updates: give "
                         "--magnet-every 0 with --magnet-ema")
    if args.entropy_floor and not args.entropy_floor_coef:
        raise ValueError(f"Args.entropy_floor={args.entropy_floor:g} has no effect with entropy_floor_coef 0: give "
                         "--entropy-floor-coef above 0, or leave --entropy-floor at 0")
    most = math.log(num_actions(args.game_config()))
    if args.entropy_floor > most:
        raise ValueError(f"Args.entropy_floor must be at most {most:.3f} nats (the entropy of a uniform choice among "
                         f"all {num_actions(args.game_config())} actions, which no policy exceeds), got "
                         f"{args.entropy_floor!r}")


def build_league(args: Any, config: MusConfig,
                 agents: Mapping[str, Any] | None = None) -> tuple[League, dict[str, Any]]:
    """The run's league, every frozen agent of ``args.league_mix`` built (policy files read and checked), and
    every agent of ``args.eval_opponents`` built once, for a game of ``config``. ``agents``: specs the caller has
    built already (by spec; a probe hands over its frozen agent), used instead of building them again.

    Returns:
        The league and the evaluation opponents (by spec).

    Raises:
        SettingsError: an agent cannot be built or cannot play this game (a missing, damaged or non-policy file,
            NaN weights, a policy trained with señas in a game without them); the message names the setting
            and the agent.
    """
    given = dict(agents or {})
    try:
        league = League(parse_mix(args.league_mix), args.pool_size, args.num_tables, config, given)
    except (ValueError, OSError, ImportError, RuntimeError) as e:
        raise SettingsError(f"Args.league_mix: {e}") from None
    opponents: dict[str, Any] = {}
    for spec in split_specs(args.eval_opponents):
        try:
            opponents[spec] = league.agents[spec] if spec in league.agents else \
                frozen_agent(spec, config, given.get(spec))
        except (ValueError, OSError, ImportError, RuntimeError) as e:
            raise SettingsError(f"Args.eval_opponents: {e}") from None
    return league, opponents


def threads_for(args: Any) -> int:
    """The torch thread count a run uses (``torch_threads``, or all cores up to 4 when it is 0)."""
    return torch_thread_count(args.torch_threads)


def torch_thread_count(threads: int) -> int:
    """A ``--torch-threads`` value as a thread count: ``threads``, or all cores up to 4 when it is 0."""
    return threads or max(1, min(4, os.cpu_count() or 1))


def engine_threads_for(args: Any) -> int:
    """The compiled engine's thread count in a run: the same as torch's (:func:`threads_for`), within numba's
    pool. Rollouts alternate engine steps and forward passes, so one count serves both; and a run told to use
    one thread (several runs sharing the cores: the recipe's parallel probes) must not start a second engine
    thread either. Measured on 2 cores (``VectorMusEnv(2048)`` stepping with a forward pass, two processes at
    once): 2 engine threads each gave 145k decisions/s in all, 1 thread each 297k; alone, 1 and 2 threads were
    within 4%. Results do not depend on it."""
    return max(1, min(threads_for(args), numba.config.NUMBA_NUM_THREADS))
