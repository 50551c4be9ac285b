"""Tournaments and probes on a real multi-node Ray cluster on this machine (``ray.cluster_utils.Cluster``): a head
node that runs no tasks (``num_cpus=0``) and two worker nodes of one CPU each, so every task runs on a worker node.

* ``mus tournament --ray ADDRESS`` on the cluster writes the tables of the single-process run, byte for byte
  (timings apart), and the chunks really ran on both worker nodes.
* A worker node killed while it runs a chunk, with chunks done before and still to play after: Ray reruns the
  lost chunk on the other node (the chunk task's ``max_retries``) and the results equal the single-process
  run's exactly, so no chunk is lost or counted twice.

Where each chunk ran is seen through an agent of the test's own (``FILE.py:NAME``, as any user's agent): the rule
agent, which on construction (once per chunk task) leaves a marker file named by the Ray node it runs on and
can be told, through a file, to wait there. Each node has its own marker files, and with one CPU a node runs
one task at a time, so the n-th marker of a node is its n-th task. The cluster lives under its own
``RAY_TMPDIR``, so another Ray on the machine (a local one of a parallel pytest worker) is neither joined nor
disturbed; the module fixture shuts it down, also on failure. The two tests share it (the kill test's lost node
is replaced when a test next needs two workers); where pytest-xdist sends them to two workers, each worker
starts a cluster of its own, under its own directory and ports.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ray_cluster

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

from hang_guards import APPEAR_S  # noqa: E402
from test_tournament_ray import json_without_timings, pairs_without_timings  # noqa: E402

import experiments.evaluate.duplicate as duplicate  # noqa: E402
from experiments.commands.tournament import main as tournament_main  # noqa: E402
from experiments.evaluate.deals import make_deals  # noqa: E402
from experiments.evaluate.tournament import ray_round_robins, round_robin  # noqa: E402

NODE_MEMORY = 100 * 1024 * 1024          # object store per node
HEALTH_CHECKS = {"health_check_period_ms": 500, "health_check_timeout_ms": 60_000,
                 "health_check_failure_threshold": 4}
"""The head's health checks of the nodes: a killed node (its port refuses at once, no timeout involved) is found
dead in about 2 s instead of Ray's 15; a live node slowed by a busy machine has a minute to answer each check, so
no load can make the head declare it dead."""
WAIT = float(APPEAR_S)                   # seconds before a stuck step fails the test instead of hanging it

AGENT_SOURCE = '''
"""The rule agent, leaving a marker per construction (one per chunk task) named by the Ray node it runs on."""
import os
import time
import uuid

import ray

from agents.rule import RuleBasedAgent

LOG = {log!r}


class NodeMarkingRule(RuleBasedAgent):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
        open(os.path.join(LOG, f"{{node}}.{{uuid.uuid4().hex}}.marker"), "w").close()
        nth = sum(name.startswith(node + ".") for name in os.listdir(LOG)) - 1
        hold = os.path.join(LOG, f"hold-{{node}}-{{nth}}")    # the test asks the node's nth task to wait
        deadline = time.monotonic() + {wait!r}
        while os.path.exists(hold) and time.monotonic() < deadline:
            time.sleep(0.05)
'''


@dataclasses.dataclass
class RayCluster:
    cluster: cluster_utils.Cluster
    workers: list  # the live worker nodes (ray._private.node.Node)

    def ensure_workers(self, n: int) -> None:
        while len(self.workers) < n:
            self.workers.append(self.cluster.add_node(num_cpus=1, object_store_memory=NODE_MEMORY))
        self.cluster.wait_for_nodes()

    def kill(self, node: object) -> None:
        """SIGKILL every process of a worker node (raylet, its workers and their running tasks)."""
        self.workers.remove(node)
        self.cluster.remove_node(node, allow_graceful=False)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    if ray.is_initialized():
        pytest.fail("Ray is already initialised in this process: a test before this one left it running")
    tmp = tempfile.mkdtemp(prefix="mus_raycl_", dir="/tmp")     # short: Ray's unix socket paths live under it
    old_tmpdir = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = tmp                              # sessions and ray_current_cluster of our own
    cluster = None
    try:
        cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={
            "num_cpus": 0, "object_store_memory": NODE_MEMORY, "include_dashboard": False,
            "_system_config": HEALTH_CHECKS})
        handle = RayCluster(cluster, [])
        handle.ensure_workers(2)
        yield handle
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        if old_tmpdir is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = old_tmpdir
        shutil.rmtree(tmp, ignore_errors=True)


def _agent(tmp_path: Path, name: str) -> tuple[str, Path]:
    """A spec for the marking rule agent (a file of its own per test) and the folder of its markers."""
    log = tmp_path / f"{name}_log"
    log.mkdir()
    source = tmp_path / f"{name}.py"
    source.write_text(AGENT_SOURCE.format(log=str(log), wait=WAIT))
    return f"{source}:NodeMarkingRule", log


def _markers(log: Path) -> dict[str, int]:
    """Chunk tasks started per Ray node (agents built outside Ray, as the command checks its specs, left out)."""
    out: dict[str, int] = {}
    for p in log.glob("*.marker"):
        node = p.name.split(".")[0]
        if node != "local":
            out[node] = out.get(node, 0) + 1
    return out


def _assert_same_results(got: duplicate.PairResult, want: duplicate.PairResult) -> None:
    for f in dataclasses.fields(duplicate.PairResult):
        if f.name == "seconds":
            continue
        x, y = getattr(got, f.name), getattr(want, f.name)
        if isinstance(y, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


def test_tournament_sharded_across_worker_nodes_equals_single_process_run(
        ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """8-deal chunks: 48 hands are 6 tasks and 16 games 2, on two worker nodes; the tables are the
    single-process run's, byte for byte apart from timings."""
    ray_cluster.ensure_workers(2)
    monkeypatch.setattr(duplicate, "DEAL_CHUNK", 8)
    spec, log = _agent(tmp_path, "sharded")
    args = ["--agents", f"random,{spec}", "--hands", "48", "--games", "16", "--seed", "7", "--tables", "4",
            "--quiet", "--no-plots"]
    tournament_main([*args, "--out", str(tmp_path / "single")])
    shutil.rmtree(log)
    log.mkdir()
    tournament_main([*args, "--out", str(tmp_path / "cluster"), "--ray", ray_cluster.cluster.address])
    assert not ray.is_initialized()                     # the command shut down the connection it made

    single, dist = tmp_path / "single", tmp_path / "cluster"
    table = pairs_without_timings(single / "pairs.csv")
    assert table == pairs_without_timings(dist / "pairs.csv")
    assert table.count("\n") == 2                                       # header + 1 pair x 2 modes
    assert (single / "ladder.csv").read_text() == (dist / "ladder.csv").read_text()
    assert json_without_timings(single / "results.json") == json_without_timings(dist / "results.json")

    ran = _markers(log)
    workers = {n.node_id for n in ray_cluster.workers}
    assert sum(ran.values()) == 8                                       # every chunk task once
    assert set(ran) == workers, (ran, workers)                          # on both worker nodes, none on the head


def test_worker_node_killed_mid_tournament_its_chunk_is_rerun_once(ray_cluster: RayCluster,
                                                                   tmp_path: Path) -> None:
    """Node A waits in its first chunk; node B plays two chunks and waits in its third. Then A is killed (its
    chunk running, chunks done before, chunks still queued) and B goes on: every chunk runs once on B, A's
    lost one again, and the merged results equal round_robin's in one process."""
    ray_cluster.ensure_workers(2)
    spec, log = _agent(tmp_path, "killed")
    deals = make_deals(48, seed=11)
    kw = {"max_tables": 4, "seed": 3, "progress": False, "deal_chunk": 8}
    (want,) = round_robin(["random", spec], deals, **kw)
    shutil.rmtree(log)
    log.mkdir()
    n_tasks = 6
    doomed, survivor = ray_cluster.workers
    holds = [log / f"hold-{doomed.node_id}-0", log / f"hold-{survivor.node_id}-2"]
    for h in holds:
        h.touch()
    killed: list[dict[str, int]] = []                    # what had started when the node was killed
    stop = threading.Event()                             # the tournament ended (or failed) before the kill

    def kill_when_both_wait() -> None:
        try:
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline and not stop.is_set():
                ran = _markers(log)
                if ran.get(doomed.node_id) == 1 and ran.get(survivor.node_id) == 3:
                    ray_cluster.kill(doomed)
                    killed.append(ran)
                    return
                time.sleep(0.05)
        finally:
            for h in holds:                              # let the survivor go on (also if the kill never came)
                h.unlink(missing_ok=True)

    killer = threading.Thread(target=kill_when_both_wait, daemon=True)
    ray.init(address=ray_cluster.cluster.address, logging_level="WARNING", log_to_driver=False)
    try:
        killer.start()
        (got,) = ray_round_robins(["random", spec], [(deals, "hands")], **kw)[0]
    finally:
        stop.set()
        killer.join(WAIT)
        ray.shutdown()

    # killed when A had started 1 chunk and B 3: 2 chunks done, 2 running (A's lost with it), 2 still queued
    assert killed == [{doomed.node_id: 1, survivor.node_id: 3}], f"never killed (started: {_markers(log)})"
    ran = _markers(log)
    assert ran == {doomed.node_id: 1, survivor.node_id: n_tasks}        # the lost chunk ran again, once
    assert len(got.hand_diff) == len(deals) - got.abandoned
    _assert_same_results(got, want)


def test_probes_as_ray_tasks_on_worker_nodes_equal_the_local_ones(ray_cluster: RayCluster, tmp_path: Path) -> None:
    """``mus exploit --seeds N --ray`` and the recipe's rounds with ``--ray``: two tiny probes (seeds 0 and 1) of
    ``rule`` run as Ray tasks on the worker nodes (each probe's log says where it ran) and give the held-out gains,
    curves and frozen fingerprints of the same probes run one after the other in this process."""
    from test_exploit_seeds import comparable_probe

    from experiments.population.exploit_seeds import LOG_NAME, WHERE_PREFIX, run_probe_jobs

    ray_cluster.ensure_workers(2)

    def jobs(root: Path) -> list[dict]:
        return [{"spec": "rule", "out": root / f"s{seed}", "minutes": 0, "decisions": 32 * 8 * 3, "seed": seed,
                 "warm_start": "none", "eval_hands": 16, "eval_games": 4, "preset": "tiny", "progress": False,
                 "torch_threads": 1} for seed in (0, 1)]

    here = run_probe_jobs(jobs(tmp_path / "here"), workers=1, log=lambda s: None)
    there = run_probe_jobs(jobs(tmp_path / "cluster"), ray_address=ray_cluster.cluster.address, log=lambda s: None)
    assert not ray.is_initialized()                     # the connection it made is shut down
    assert [comparable_probe(r) for r in there] == [comparable_probe(r) for r in here]
    assert comparable_probe(here[0]) != comparable_probe(here[1])
    nodes = {(tmp_path / "cluster" / f"s{seed}" / LOG_NAME).read_text().splitlines()[0] for seed in (0, 1)}
    assert nodes <= {f"{WHERE_PREFIX}ray node {n.node_id}" for n in ray_cluster.workers}, nodes
