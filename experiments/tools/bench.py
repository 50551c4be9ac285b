"""Decisions per second of every engine and interface, and of peer environments, in one run (``mus bench``).

Each entry plays random legal actions for about ``--seconds`` seconds (after a short warm-up) and counts
decisions (one action of one player; chance events are not counted):

* ``scalar``: ``MusGame`` with ``legal_actions()`` at every decision;
* ``raw_env`` / ``env()``: ``mus_v0`` through the PettingZoo ``agent_iter`` / ``last`` / ``step`` loop, with
  the action chosen from the mask;
* ``vector B=...``: ``VectorMusEnv`` at several batch sizes on one thread, observation and mask included,
  actions drawn by ``VectorMusEnv.sample_actions`` (uniform over each table's legal set);
* ``vector B=... N threads``: the same with the compiled kernel's ``prange`` over N threads (``--threads``;
  batches below ``vector.PARALLEL_MIN_TABLES`` always run on one thread, so they are not repeated);
* ``vector B=... in P processes``: the largest batch split over ``--processes`` concurrent processes, each
  stepping its own VectorMusEnv (one env copy per worker, as RL libraries use several cores); the sum;
* ``texas_holdem_v4``: PettingZoo's classic env (the same loop as ``env()``), when installed;
* ``openspiel bridge``: OpenSpiel's ``bridge`` game, a card game (C++, auction and card play, no double-dummy
  solver), stepped from Python, random legal play including chance outcomes, when ``pyspiel`` is installed
  (from a checkout: ``pip install -e ".[bench]"``).

Ratios are against ``scalar`` (MusGame, the engine under the AEC envs), texas_holdem_v4 (for the AEC envs) and
OpenSpiel bridge (for the batched engine), measured in the same run. Timings are medians of ``--repeats`` runs;
machines are shared and noisy.
``--compile`` also times, in fresh processes, the kernel's cold compile (an empty numba cache) and its load
from the cache (what every later run pays).

``--engine tournament`` (not part of ``all``) times whole tournaments instead, in hands per second as ``mus
tournament`` prints them (:data:`TOURNAMENTS`: rule against equity on 20,000 hands, and the README's five-agent
ladder), each run a fresh process as a user runs it (:func:`bench_tournament`), with the machine's load average.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from mus_env import MusConfig, MusGame, VectorMusEnv

#: How to install the peers (OpenSpiel, RLCard, pygame) from a checkout of this repository.
PEERS_HINT = 'pip install -e ".[bench]" in the repository root'

#: OpenSpiel bridge with the card play phase played out (the default computes a double-dummy result at the end
#: of the auction, which costs ~0.1 s per deal and measures the solver rather than the environment).
OPENSPIEL_BRIDGE = "bridge(use_double_dummy_result=false)"

__all__ = ["bench_scalar", "bench_aec", "bench_vector", "bench_vector_processes", "bench_openspiel", "bench_compile",
           "vector_rows", "memory_report", "run_all", "run_group", "print_table", "ENGINE_GROUPS", "PEERS_HINT",
           "OPENSPIEL_BRIDGE", "TOURNAMENTS", "bench_tournament", "tournament_rows"]

#: What ``run_group`` can run: every entry, or one group.
ENGINE_GROUPS = ("all", "scalar", "aec", "vector", "peers", "tournament")

#: The tournaments of ``--engine tournament``: name -> ``mus tournament`` arguments (``--seed 0 --quiet --no-plots`` and
#: an ``--out`` folder are added).
TOURNAMENTS = {
    "rule vs equity": ("--agents", "rule,equity", "--hands", "20000", "--games", "0"),
    "ladder": ("--agents", "random,rule,equity,ordago,ppo", "--hands", "4000", "--games", "300"),
}


def _timed(run: Callable[[float], int], seconds: float, repeats: int) -> float:
    """Median decisions/s over ``repeats`` runs of ``run(seconds) -> decisions``."""
    run(min(0.3, seconds))                                   # warm-up
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = run(seconds)
        rates.append(n / (time.perf_counter() - t0))
    return statistics.median(rates)


def bench_scalar(seconds: float, repeats: int = 3, config: MusConfig | None = None) -> float:
    """Decisions/s of MusGame with random legal play (``legal_actions()`` every decision)."""
    cfg = config or MusConfig()
    rnd = random.Random(0)

    def run(sec: float) -> int:
        n, seed, end = 0, 0, time.perf_counter() + sec
        while time.perf_counter() < end:
            g = MusGame(cfg, seed=seed)
            seed += 1
            while not g.is_over:
                la = g.legal_actions()
                g.step(la[rnd.randrange(len(la))])
                n += 1
        return n
    return _timed(run, seconds, repeats)


def bench_aec(make_env: Callable[[], object], seconds: float, repeats: int = 3) -> float:
    """Decisions/s of a PettingZoo AEC env with random masked play (the standard agent_iter loop)."""
    rnd = random.Random(0)

    def run(sec: float) -> int:
        env = make_env()
        n, ep, end = 0, 0, time.perf_counter() + sec
        while time.perf_counter() < end:
            env.reset(seed=ep)
            ep += 1
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    action = None
                else:
                    legal = obs["action_mask"].nonzero()[0]
                    action = int(legal[int(rnd.random() * len(legal))])
                    n += 1
                env.step(action)
        env.close()
        return n
    return _timed(run, seconds, repeats)


def bench_vector(batch: int, seconds: float, repeats: int = 3, config: MusConfig | None = None,
                 seed: int = 0, num_threads: int = 1) -> float:
    """Decisions/s of VectorMusEnv at batch size ``batch`` on ``num_threads`` threads (obs and mask included)."""
    venv = VectorMusEnv(batch, config or MusConfig(), seed=seed, num_threads=num_threads)
    venv.reset()
    rng = np.random.default_rng(seed)

    def run(sec: float) -> int:
        steps, end = 0, time.perf_counter() + sec
        while time.perf_counter() < end:
            venv.step(venv.sample_actions(rng))           # obs and mask are written every step
            steps += 1
        return steps * batch
    return _timed(run, seconds, repeats)


def _vector_worker(args: tuple[int, float, int, int]) -> float:
    batch, seconds, repeats, seed = args
    return bench_vector(batch, seconds, repeats, seed=seed)


def bench_vector_processes(batch: int, processes: int, seconds: float, repeats: int = 3) -> float:
    """Total decisions/s of ``processes`` independent VectorMusEnv processes of ``batch // processes`` tables
    each, run at the same time (how RL libraries use several cores: one env copy per worker process)."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Pool(processes) as pool:
        rates = pool.map(_vector_worker, [(batch // processes, seconds, repeats, k) for k in range(processes)])
    return float(sum(rates))


_COMPILE_PROBE = (
    "import time; t = time.perf_counter(); import numpy as np; from mus_env import VectorMusEnv\n"
    "for th in (1, {threads}):\n"
    "    v = VectorMusEnv(64, seed=0, num_threads=th); v.reset(); v.step(v.sample_actions(0)); v.state()\n"
    "    v.observe([0], [1]); v.reset_from_decks(np.tile(np.arange(40), (64, 1)), np.zeros(64, int))\n"
    "import resource; u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(time.perf_counter() - t, u.ru_utime + u.ru_stime)\n")


def bench_compile(threads: int) -> dict[str, float]:
    """Seconds to import mus_env and run every kernel entry point once (serial and ``threads`` threads) in a
    fresh process: with an empty numba cache (``cold``), then again with that cache (``cached``); wall-clock
    seconds, and the process's CPU seconds (``cold_cpu``, ``cached_cpu``: what a busy machine inflates less)."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for key in ("cold", "cached"):
            r = subprocess.run([sys.executable, "-c", _COMPILE_PROBE.format(threads=threads)], env=env,
                               capture_output=True, text=True, check=True)
            wall, cpu = r.stdout.split()[-2:]
            out[key], out[f"{key}_cpu"] = float(wall), float(cpu)
    return out


def bench_openspiel(game_name: str, seconds: float, repeats: int = 3) -> float | None:
    """Decisions/s of an OpenSpiel game with random legal play including chance outcomes (None if absent)."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game(game_name)
    rnd = random.Random(0)

    def run(sec: float) -> int:
        n, end = 0, time.perf_counter() + sec
        while time.perf_counter() < end:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rnd.randrange(len(outcomes))][0])
                else:
                    legal = state.legal_actions()
                    state.apply_action(legal[rnd.randrange(len(legal))])
                    n += 1
        return n
    return _timed(run, seconds, repeats)


def bench_tournament(args: Sequence[str], repeats: int = 3, python: str = sys.executable,
                     cwd: str | Path | None = None) -> dict[str, object]:
    """Hands/s of ``mus tournament ARGS --seed 0 --quiet --no-plots`` (the ``hands_per_second`` of its results.json:
    the hands played over the seconds from the deal sets to the ladder), each of ``repeats`` runs a fresh process
    (``python -m experiments.cli`` from ``cwd``: imports, numba's cache load and the agents' tables paid as a user
    pays them). Returns the median, every run's figure, the command and the load average before and after."""
    rates = []
    load = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(repeats):
            out = Path(tmp) / f"run{k}"
            subprocess.run([python, "-m", "experiments.cli", "tournament", *args, "--seed", "0", "--quiet",
                            "--no-plots", "--out", str(out)], cwd=cwd, check=True, capture_output=True, text=True)
            meta = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
            rates.append(float(meta["hands_per_second"]))
    return {"hands_per_second": statistics.median(rates), "runs": rates,
            "command": "mus tournament " + " ".join(args) + " --seed 0 --quiet --no-plots",
            "load": {"before": load, "after": [round(x, 2) for x in os.getloadavg()]}}


def tournament_rows(repeats: int = 3, log: Callable[[str], None] = print) -> dict[str, dict[str, object] | None]:
    """:func:`bench_tournament` of every tournament of :data:`TOURNAMENTS` (None for the ladder without torch, which
    its ``ppo`` agent needs)."""
    import importlib.util

    res: dict[str, dict[str, object] | None] = {}
    for name, args in TOURNAMENTS.items():
        if "ppo" in args[1].split(",") and importlib.util.find_spec("torch") is None:
            log(f"tournament {name}: skipped (its ppo agent needs torch: the train extra)")
            res[name] = None
            continue
        log(f"tournament {name} ({repeats} fresh processes) ...")
        res[name] = bench_tournament(args, repeats)
    return res


def _texas() -> Callable[[], object] | None:
    try:
        from pettingzoo.classic import texas_holdem_v4
        texas_holdem_v4.env().close()
    except Exception:  # noqa: BLE001 - rlcard/pygame missing or broken: the peer is just absent
        return None
    return texas_holdem_v4.env


def vector_rows(batches: tuple[int, ...], threads: tuple[int, ...], seconds: float, repeats: int,
                log: Callable[[str], None]) -> dict[str, float]:
    """``vector B=b`` (one thread) and ``vector B=b N threads`` rows for every batch and thread count."""
    from mus_env.vector import PARALLEL_MIN_TABLES

    res = {}
    for b in batches:
        for th in threads:
            if th > 1 and b < PARALLEL_MIN_TABLES:
                continue
            name = f"vector B={b}" + (f" {th} threads" if th > 1 else "")
            log(f"VectorMusEnv B={b}, {th} thread(s) ...")
            res[name] = bench_vector(b, seconds, repeats, num_threads=th)
    return res


def memory_report() -> dict[str, int]:
    """Bytes per table of the batched engine: its state row and its output buffers (obs, mask, step outputs)."""
    venv = VectorMusEnv(8)
    return {"state_bytes_per_table": venv.state_bytes(), "buffer_bytes_per_table": venv.buffer_bytes()}


def run_all(seconds: float = 2.0, repeats: int = 3, batches: tuple[int, ...] = (1, 16, 256, 4096, 16384),
            peers: bool = True, log: Callable[[str], None] = print, processes: int = 1,
            threads: tuple[int, ...] = (1,), compile_times: bool = False) -> dict:
    """Run every benchmark; returns ``{"results": {name: decisions/s}, "ratios": {...}, ...}``.

    With ``processes > 1`` it also measures the largest batch split over that many concurrent processes."""
    from mus_env import mus_v0

    res: dict[str, float | None] = {}
    log("scalar MusGame ...")
    res["scalar"] = bench_scalar(seconds, repeats)
    log("mus_v0.raw_env ...")
    res["raw_env"] = bench_aec(mus_v0.raw_env, seconds, repeats)
    log("mus_v0.env ...")
    res["env"] = bench_aec(mus_v0.env, seconds, repeats)
    res.update(vector_rows(batches, threads, seconds, repeats, log))
    multi = f"vector B={max(batches)} in {processes} processes" if processes > 1 and batches else None
    if multi:
        log(f"VectorMusEnv B={max(batches)} split over {processes} processes ...")
        res[multi] = bench_vector_processes(max(batches), processes, seconds, repeats)
    if peers:
        texas = _texas()
        log("texas_holdem_v4 ..." if texas else f"texas_holdem_v4 not installed ({PEERS_HINT})")
        res["texas_holdem_v4"] = bench_aec(texas, seconds, repeats) if texas else None
        log("openspiel bridge ...")
        res["openspiel bridge"] = bench_openspiel(OPENSPIEL_BRIDGE, seconds, repeats)
    ratios = {f"{name} / scalar": res[name] / res["scalar"] for name in ("env", "raw_env")}
    if res.get("texas_holdem_v4"):
        ratios["env / texas_holdem_v4"] = res["env"] / res["texas_holdem_v4"]
        ratios["raw_env / texas_holdem_v4"] = res["raw_env"] / res["texas_holdem_v4"]
    if res.get("openspiel bridge"):
        for k, v in res.items():
            if k.startswith("vector"):
                ratios[f"{k} / openspiel bridge"] = v / res["openspiel bridge"]
    report = {"results": res, "ratios": ratios, "us_per_decision_scalar": 1e6 / res["scalar"], **memory_report(),
              "seconds": seconds, "repeats": repeats, "processes": processes, "threads": list(threads),
              "python": sys.version.split()[0], "numpy": np.__version__, "numba": _numba_version()}
    if compile_times:
        log("kernel compile (fresh processes) ...")
        report["kernel_seconds"] = bench_compile(max(threads))
    return report


def _numba_version() -> str:
    import numba

    return numba.__version__


def print_table(report: dict) -> None:
    """Print a report of :func:`run_all` or :func:`run_group` as rich tables (plain lines without rich)."""
    for name, t in report.get("tournaments", {}).items():
        print(f"tournament {name}: " + ("skipped (needs torch)" if t is None else
              f"{t['hands_per_second']:,.0f} hands/s (median of {len(t['runs'])} fresh runs: "
              f"{', '.join(f'{r:,.0f}' for r in t['runs'])}; load {t['load']['before'][0]:.1f}); {t['command']}"))
    if not report["results"]:
        return
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover
        for k, v in report["results"].items():
            print(f"{k:>24}  {'not installed' if v is None else f'{v:,.0f}'}")
        if any(v is None for v in report["results"].values()):
            print(f"peers not installed: {PEERS_HINT}")
        return
    t = Table(title="mus bench: random legal play (median decisions/s)")
    t.add_column("engine / interface")
    t.add_column("decisions/s", justify="right")
    t.add_column("µs/decision", justify="right")
    for k, v in report["results"].items():
        t.add_row(k, "not installed" if v is None else f"{v:,.0f}", "" if v is None else f"{1e6 / v:.2f}")
    console = Console()
    console.print(t)
    if any(v is None for v in report["results"].values()):
        console.print(f"peers not installed: {PEERS_HINT}")
    if report["ratios"]:
        r = Table(title="ratios (same run)")
        r.add_column("ratio")
        r.add_column("x", justify="right")
        for k, v in report["ratios"].items():
            r.add_row(k, f"{v:.2f}")
        console.print(r)
    console.print(f"VectorMusEnv state: {report['state_bytes_per_table']} bytes per table"
                  + (f" (+ {report['buffer_bytes_per_table']} bytes of output buffers: obs, mask, step outputs)"
                     if "buffer_bytes_per_table" in report else ""))
    if "kernel_seconds" in report:
        k = report["kernel_seconds"]
        console.print(f"kernel: cold compile {k['cold']:.1f} s, cached load {k['cached']:.1f} s "
                      + (f"(CPU {k['cold_cpu']:.1f} s and {k['cached_cpu']:.1f} s) " if "cold_cpu" in k else "")
                      + "(import and every entry point once, fresh processes)")



def run_group(engine: str, seconds: float = 2.0, repeats: int = 3,
              batches: tuple[int, ...] = (1, 16, 256, 4096, 16384), threads: tuple[int, ...] = (1,),
              processes: int = 1, peers: bool = True, compile_times: bool = False,
              log: Callable[[str], None] = print) -> dict:
    """Run ``engine``'s group of :data:`ENGINE_GROUPS`: ``"all"`` is :func:`run_all`; ``"scalar"``, ``"aec"``
    (``scalar``, ``raw_env`` and ``env()`` with the ratios ``env / scalar`` and ``raw_env / scalar``, and with
    ``peers`` PettingZoo's ``texas_holdem_v4`` in the same run, with the ratios ``env / texas_holdem_v4`` and
    ``raw_env / texas_holdem_v4`` when it is installed), ``"vector"``
    (:func:`vector_rows`, and the largest batch over ``processes`` processes when ``processes > 1``) or
    ``"peers"`` (texas_holdem_v4 and OpenSpiel bridge) report those rows only, without other ratios, with the memory
    figures (and the kernel's compile times with ``compile_times``);
    ``"tournament"`` reports ``tournaments`` (:func:`tournament_rows`, ``repeats`` fresh runs each) and no rows.

    Raises:
        ValueError: an unknown ``engine``.
    """
    if engine not in ENGINE_GROUPS:
        raise ValueError(f"engine must be one of {ENGINE_GROUPS}, got {engine!r}")
    if engine == "all":
        return run_all(seconds, repeats, batches, peers=peers, log=log, processes=processes, threads=threads,
                       compile_times=compile_times)
    if engine == "tournament":
        return {"results": {}, "ratios": {}, "tournaments": tournament_rows(repeats, log)}
    from mus_env import mus_v0
    res: dict[str, float | None] = {}
    if engine == "scalar":
        res["scalar"] = bench_scalar(seconds, repeats)
    elif engine == "aec":
        res["scalar"] = bench_scalar(seconds, repeats)              # the engine under the envs, in the same run
        res["raw_env"] = bench_aec(mus_v0.raw_env, seconds, repeats)
        res["env"] = bench_aec(mus_v0.env, seconds, repeats)
        texas = _texas() if peers else None
        if texas:
            log("texas_holdem_v4 ...")
            res["texas_holdem_v4"] = bench_aec(texas, seconds, repeats)
    elif engine == "vector":
        res.update(vector_rows(batches, threads, seconds, repeats, log))
        if processes > 1 and batches:
            res[f"vector B={max(batches)} in {processes} processes"] = bench_vector_processes(
                max(batches), processes, seconds, repeats)
    else:
        texas = _texas()
        res["texas_holdem_v4"] = bench_aec(texas, seconds, repeats) if texas else None
        res["openspiel bridge"] = bench_openspiel(OPENSPIEL_BRIDGE, seconds, repeats)
    ratios = {}
    if engine == "aec":
        ratios = {f"{name} / scalar": res[name] / res["scalar"] for name in ("env", "raw_env")}
    if engine == "aec" and res.get("texas_holdem_v4"):
        ratios.update({f"{name} / texas_holdem_v4": res[name] / res["texas_holdem_v4"] for name in ("env", "raw_env")})
    report = {"results": res, "ratios": ratios, **memory_report()}
    if compile_times:
        report["kernel_seconds"] = bench_compile(max(threads))
    return report
