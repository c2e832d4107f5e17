"""Searches on a real Ray cluster started apart (``ray start --head``, then a node joined with
``ray start --address``): ``address=`` from the agent and from ``mc-envs solve``, the local result
for the deterministic schemes, budgets that hold, and a node killed in the middle of a search.

One cluster serves the module (its nodes load the kernels from this process's numba cache, which
the fixture fills); every node is killed at the end, and every wait has a timeout. The
``mc-envs solve`` test connects from a new process, as a user would.

The test process starts no local Ray: Ray starts its processes with a ``preexec_fn`` (Python in
the forked child), which tests/conftest.py refuses once JAX is imported; and with Ray 2.60 a
process that ran a local Ray, shut it down and then joins another cluster loses its actors ("all
references to the actor were removed").
"""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from helpers import replayed_score, samegame
from ray_cluster import ROOT, Cluster

from mc_envs.agents import NMCS, NRPA

ray = pytest.importorskip("ray")
# Every test holds a time limit, on a cluster that wants the machine's cores.
pytestmark = pytest.mark.serial


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from mc_envs._numba import cache_dir

    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_USAGE_STATS_ENABLED")}
    os.environ.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    if ray.is_initialized():
        ray.shutdown()
    env = samegame(2)
    for agent in (NMCS(level=1), NMCS(level=2), NRPA(level=1), NRPA(level=2)):
        agent.search(env, playouts=1)  # compiled here, loaded by the nodes from the same cache
    nodes = Cluster(tmp_path_factory.mktemp("ray"), cache=cache_dir())
    try:
        nodes.start_head(cpus=2)
        # This process joins now, through the head (the only node yet): nodes that share the
        # machine's address could otherwise take it, and it must not die with a killed node.
        ray.init(address=nodes.address, logging_level="ERROR")
        yield nodes
    finally:
        if ray.is_initialized():
            ray.shutdown()
        nodes.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_address_from_the_agent_gives_the_local_result_for_root_moves_and_distributed(cluster):
    env = samegame(2)
    root = dict(level=1, seed=4, workers=2)
    moves = dict(level=2, seed=4, workers=2, parallel="moves")
    dist = dict(level=2, iterations=8, seed=3, workers=2, parallel="distributed")
    local_root = NMCS(**root).search(env, playouts=1200)
    local_moves = NMCS(**moves).search(env, playouts=2000)
    local_dist = NRPA(**dist).search(env, playouts=300)
    remote_root = NMCS(**root, backend="ray", address=cluster.address).search(env, playouts=1200)
    remote_moves = NMCS(**moves, backend="ray", address=cluster.address).search(env, playouts=2000)
    remote_dist = NRPA(**dist, backend="ray", address=cluster.address).search(env, playouts=300)
    pairs = ((local_root, remote_root), (local_moves, remote_moves), (local_dist, remote_dist))
    for local, remote in pairs:
        assert (remote.score, remote.actions, remote.playouts, remote.iterations) == (
            local.score,
            local.actions,
            local.playouts,
            local.iterations,
        )
        assert replayed_score(env, remote.actions) == remote.score
    seen = remote_moves.extra["participation"]
    assert seen["worker_tasks"] + seen["caller_tasks"] == remote_moves.extra["tasks"]


def test_a_time_limit_holds_on_the_cluster_and_the_result_says_who_searched(cluster):
    env = samegame(2)
    agent = NMCS(level=1, seed=1, workers=2, backend="ray", address=cluster.address)
    start = time.perf_counter()
    result = agent.search(env, time_limit=3)
    elapsed = time.perf_counter() - start
    seen = result.extra["participation"]
    assert elapsed <= 3 + 1 and result.stopped == "time", (elapsed, seen)
    assert seen["workers"] + seen["caller_tasks"] >= 1 and seen["lost"] == []
    assert result.score > 0 and replayed_score(env, result.actions) == result.score


def test_mc_envs_solve_runs_on_the_cluster_address(cluster, tmp_path):
    out = tmp_path / "solution.json"
    command = [
        sys.executable,
        "-c",
        "import sys; from mc_envs.cli import main; sys.exit(main())",
        *("solve", "samegame", "--position", "2", "--algo", "nmcs", "--level", "1"),
        *("--time", "3", "--workers", "2", "--backend", "ray"),
        *("--address", cluster.address, "--out", str(out)),
    ]
    env = {**cluster.env, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(out.read_text())
    assert record["score"] > 0 and record["actions"]


def test_warmup_reaches_every_node(cluster):
    from mc_envs.agents.parallel.pools import warm_cluster

    node = cluster.add_node(cpus=1)
    try:
        where = warm_cluster(cluster.address, lambda: ray.get_runtime_context().get_node_id())
        assert len(set(where)) == 2
    finally:
        cluster.kill_node(node)
        cluster.nodes.remove(node)


def _start_workers_on(node, agent, env, playouts):
    """Searches until a task has run on ``node`` (its workers started, kernels loaded): a task
    still waiting for a worker process when its node dies is only moved elsewhere by Ray.
    ``playouts`` make tasks long enough (seconds) for the node's worker to start and report on
    its task before the caller's copy of it, which starts at once, finishes first."""
    assert node.node_id
    for _ in range(5):
        result = agent.search(env, playouts=playouts)
        if any(
            str(w.get("node", "")).startswith(node.node_id[:8]) for w in result.extra["workers"]
        ):
            return
    pytest.fail("no task ran on the new node")


def _kill_later(cluster, node, seconds):
    timer = threading.Timer(seconds, cluster.kill_node, args=(node,))
    timer.start()
    return timer


def test_a_node_killed_mid_search_loses_neither_the_budget_nor_the_best(cluster):
    env = samegame(2)
    # One of the 3 tasks runs there (the head has 2 CPUs). Its loss leaves no CPU free on the
    # head until the time is up, so the caller's copy is what redoes it in time: with two lost
    # tasks, the one submitted again waits for a CPU, and is late whenever none frees early.
    node = cluster.add_node(cpus=1)
    agent = NMCS(level=1, seed=2, workers=3, backend="ray", address=cluster.address)
    _start_workers_on(node, agent, env, playouts=300_000)
    timer = _kill_later(cluster, node, 2.0)
    try:
        start = time.perf_counter()
        result = agent.search(env, time_limit=8)
        elapsed = time.perf_counter() - start
    finally:
        timer.join()
        cluster.nodes.remove(node)
    assert elapsed <= 8 + 1
    assert result.score > 0 and replayed_score(env, result.actions) == result.score
    seen = result.extra["participation"]
    where = [
        (w.get("by"), w.get("node"), w["stopped"], w["playouts"]) for w in result.extra["workers"]
    ]
    assert len(seen["lost"]) == 1, (node.node_id[:8], seen, where)  # it says what was lost ...
    assert seen["late"] == [] and seen["worker_tasks"] + seen["caller_tasks"] == 3, (seen, where)


def test_a_checkpointed_search_resumes_after_its_node_died(cluster, tmp_path):
    env = samegame(2)
    path = tmp_path / "run.ck.json"
    node = cluster.add_node(cpus=1)
    agent = NRPA(level=2, seed=5, workers=3, backend="ray", address=cluster.address)
    # About the NMCS test's seconds: NRPA level 2 plays some 15 times fewer playouts a second.
    _start_workers_on(node, agent, env, playouts=20_000)
    timer = _kill_later(cluster, node, 2.5)
    try:
        first = agent.search(env, time_limit=5, checkpoint=str(path), checkpoint_every=0.5)
    finally:
        timer.join()
        cluster.nodes.remove(node)
    assert first.seconds <= 5 + 1 and first.extra["participation"]["lost"]
    files = {i: tmp_path / f"run.ck.json.w{i}" for i in range(3)}
    saved = {i: json.loads(f.read_text()) for i, f in files.items() if f.exists()}
    assert saved  # (a worker killed before its first save starts afresh when resumed)
    node = cluster.add_node(cpus=1)  # a new machine in place of the dead one
    try:
        again = agent.search(env, time_limit=3, checkpoint=str(path), resume=True)
    finally:
        cluster.kill_node(node)
        cluster.nodes.remove(node)
    back = [i for i in saved if again.extra["workers"][i]["stopped"] != "late"]
    assert back  # (a worker on the new node may still be starting when the time is up)
    assert again.score >= max(saved[i]["best"]["score"] for i in back)
    for i in back:  # each went on from its file
        assert again.extra["workers"][i]["playouts"] >= saved[i]["control"]["playouts"]
    assert replayed_score(env, again.actions) == again.score
