"""Round robins on Ray: every chunk of every pair of agents a Ray task, with the single-process results.

:func:`ray_round_robins` plays what :func:`experiments.evaluate.tournament.round_robin` plays, split exactly as it
splits it (chunks of :data:`~experiments.evaluate.duplicate.DEAL_CHUNK` deals, each with its own seed), on a local
Ray instance or a cluster; :func:`start_ray` starts or joins one (``mus tournament --ray [ADDRESS]``). Ray is
imported on first use: this module imports without it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from agents import make_agent
from experiments.evaluate.deals import DealSet
from experiments.evaluate.duplicate import (
    PairResult,
    agent_labels,
    check_deal_chunk,
    chunk_bounds,
    chunk_of,
    chunk_seed,
    merge_pair_results,
    play_pair,
)
from experiments.evaluate.report import ProgressBar
from mus_env import MusConfig

__all__ = ["ray_round_robins", "start_ray", "CHUNK_RETRIES"]

CHUNK_RETRIES = 3
"""Times Ray reruns a chunk task whose worker process or node died (``max_retries``; Ray's default, set on
purpose): the rerun plays the chunk from its start with the same seed and its result replaces the lost one.
An error raised by the task itself (a bad agent) is not retried (``retry_exceptions=False``)."""


def _chunk_task(spec_a: str, spec_b: str, names: tuple[str, str], deals: DealSet, start: int, stop: int,
                mode: str, config: MusConfig | None, max_tables: int, seed: int) -> PairResult:
    """One chunk of one pair of ``round_robin`` as a Ray task runs it: the agents built from their specs,
    then :func:`play_pair` on deals ``start .. stop - 1`` with the arguments of the single-process run (``seed``
    is the chunk's, :func:`chunk_seed`)."""
    return play_pair(make_agent(spec_a), make_agent(spec_b), chunk_of(deals, start, stop), mode=mode, config=config,
                     max_tables=max_tables, seed=seed, names=names, first_deal=start)


def ray_round_robins(agent_specs: Sequence[str], rounds: Sequence[tuple[DealSet, str]], *,
                     config: MusConfig | None = None, max_tables: int = 2048, seed: int = 0,
                     progress: bool = True, deal_chunk: int | None = None) -> list[list[PairResult]]:
    """``round_robin`` (:func:`experiments.evaluate.tournament.round_robin`) for each ``(deals, mode)`` of
    ``rounds``, every chunk of every pair of every round one Ray task, all submitted at once; returns one list of
    results per round, in ``round_robin``'s order.

    The unit of work is a chunk of a pair, exactly as ``round_robin`` splits it: deals ``k*C .. (k+1)*C - 1``
    with ``C = deal_chunk`` (default :data:`~experiments.evaluate.duplicate.DEAL_CHUNK`, read in this process and
    passed to the tasks, so a patched constant reaches them). A task builds both agents from their specs and calls
    :func:`play_pair` on its chunk with exactly the arguments of the single-process run (mode, ruleset,
    ``max_tables``, and the chunk's seed :func:`chunk_seed`); ``play_pair`` draws from its own generator seeded
    by that seed alone, and the chunks' results are merged in order (:func:`merge_pair_results`), so the
    results are those of the single-process run, bit for bit (timings apart; a pair's ``seconds`` is the sum
    of its tasks'). With 2 agents and 1,000,000 hands that is 16 tasks (of 65,536 deals), not 1. A task runs the
    kernel on one thread (``NUMBA_NUM_THREADS=1``; results do not depend on it) and takes one CPU; each task
    builds its agents anew, so a costly agent to load pays that once per chunk.

    A chunk whose worker or node dies (a node lost from a cluster) is rerun by Ray, on another node if need be,
    up to :data:`CHUNK_RETRIES` times: a chunk is a pure function of its arguments and its result is fetched by
    its place in the deal set, never by arrival, so a rerun chunk counts once, in its place (a test kills a
    worker node of a three-node cluster in the middle of a round robin). A task that raises is not rerun: its
    error is raised here.

    Ray must be initialised (``ray.init(...)``). The workers import ``agents`` and ``experiments``, so
    mus-env must be installed where they run, and a policy file given as a spec must be readable there at the
    same path.

    Raises:
        ValueError: Ray is not initialised, a bad ``deal_chunk`` or a bad mode.
    """
    import ray

    if not ray.is_initialized():
        raise ValueError("ray_round_robins needs an initialised Ray (call ray.init() first)")
    chunk = check_deal_chunk(deal_chunk)
    for _, mode in rounds:
        if mode not in ("hands", "games"):
            raise ValueError(f"mode must be 'hands' or 'games', got {mode!r}")
    labels = agent_labels(agent_specs)
    spec_of = dict(zip(labels, agent_specs, strict=True))
    pairs = list(itertools.combinations(labels, 2))
    task = ray.remote(num_cpus=1, max_retries=CHUNK_RETRIES, retry_exceptions=False,
                      runtime_env={"env_vars": {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}})(_chunk_task)
    cfg = ray.put(config)
    refs: list[list[list[Any]]] = []                    # refs[round][pair][chunk]
    sizes: dict[Any, int] = {}
    for deals, mode in rounds:
        deals_ref = ray.put(deals)
        bounds = chunk_bounds(len(deals), chunk)
        row = []
        for a, b in pairs:
            chunks = [task.remote(spec_of[a], spec_of[b], (a, b), deals_ref, start, stop, mode, cfg, max_tables,
                                  chunk_seed(seed, k)) for k, (start, stop) in enumerate(bounds)]
            sizes.update({r: stop - start for r, (start, stop) in zip(chunks, bounds, strict=True)})
            row.append(chunks)
        refs.append(row)
    total = sum(len(deals) for deals, _ in rounds) * len(pairs)
    with ProgressBar(total, f"{len(sizes)} Ray tasks", enabled=progress) as bar:
        pending = list(sizes)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            ray.get(ready)                                  # raises a task's error here
            bar.advance(sizes[ready[0]])
    out = []
    for row in refs:
        merged = []
        for chunks in row:
            parts = ray.get(chunks)
            merged.append(parts[0] if len(parts) == 1 else merge_pair_results(parts))
        out.append(merged)
    return out


def start_ray(address: str = "") -> bool:
    """Connect to Ray for a round robin on it; True when this call started (or joined) it, False when Ray was
    already initialised in this process (a caller's ``ray.init``, used as it is).

    ``""`` starts a fresh local instance (``ray.init(address="local")``): Ray's own default would join the cluster
    named by ``RAY_ADDRESS`` or by the last ``ray start`` on this machine (``/tmp/ray/ray_current_cluster``, which
    may name a cluster long gone, and then ``ray.init`` retries for minutes); ``"auto"`` asks for that discovery,
    and any other address goes to ``ray.init(address=...)``. The caller shuts down what this call started.

    Raises:
        ImportError: Ray is not installed.
        Exception: whatever ``ray.init`` raises when it cannot start or reach Ray.
    """
    import ray

    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, logging_level="WARNING")
    else:
        ray.init(address="local", include_dashboard=False, logging_level="WARNING")
    return True
