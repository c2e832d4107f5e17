"""A real Ray cluster on this machine, started apart as a user would: ``ray start --head`` and more
nodes joined with ``ray start --address`` (each its own raylet).

Each node is one ``ray start --block`` process in a session of its own, so that every process of
that node (raylet, workers, GCS on the head) is in its process group: :meth:`Cluster.kill_node`
kills one node at once, as a machine that dies, and :meth:`Cluster.stop` kills exactly the
processes this cluster started, never another cluster of the machine. Every wait has a timeout.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """Nodes started with ``ray start --block`` under ``tmp``.

    Args:
        tmp: a directory for the nodes' logs and numba cache (Ray's own files and sockets go to
            a short folder of the system's temporary directory, removed by :meth:`stop`).
        cache: the nodes' ``NUMBA_CACHE_DIR`` (default: ``tmp/numba``, a cold cache).
    """

    def __init__(self, tmp: Path, cache: Path | None = None) -> None:
        self.tmp = Path(tmp)
        # Ray's sockets live under its temp dir, and a socket's path may not exceed 107 bytes:
        # pytest's folders (deeper under pytest-xdist) can be too long for it.
        self.ray_dir = Path(tempfile.mkdtemp(prefix="mc-envs-ray-"))
        self.nodes: list[subprocess.Popen] = []
        self.address = ""
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "NUMBA_CACHE_DIR": str(cache or self.tmp / "numba"),
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "disabled",  # a local test cluster: no token to share
            # A dead node is declared dead after about 1 s rather than Ray's default 15 s.
            "RAY_health_check_period_ms": "300",
            "RAY_health_check_timeout_ms": "300",
            "RAY_health_check_failure_threshold": "3",
        }

    def _start(self, args: list[str], name: str) -> subprocess.Popen:
        ray = Path(sys.executable).with_name("ray")
        command = [str(ray) if ray.exists() else "ray", "start", "--block", *args]
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        node = subprocess.Popen(
            command,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.nodes.append(node)
        return node

    def start_head(self, cpus: int = 2, timeout: float = 60) -> str:
        """Starts the head node; returns its address once it takes clients."""
        port = free_port()
        self._start(
            [
                "--head",
                f"--port={port}",
                f"--num-cpus={cpus}",
                "--include-dashboard=false",
                "--disable-usage-stats",
                f"--temp-dir={self.ray_dir}",
                "--node-ip-address=127.0.0.1",
            ],
            "head",
        )
        self.address = f"127.0.0.1:{port}"
        self.wait_nodes(1, timeout)
        return self.address

    def add_node(self, cpus: int = 1, timeout: float = 60) -> subprocess.Popen:
        """Joins one more node (its own raylet) and waits until the cluster counts it."""
        count = len([n for n in self.nodes if n.poll() is None])
        before = self.node_ids()
        node = self._start(
            [
                f"--address={self.address}",
                f"--num-cpus={cpus}",
                "--node-ip-address=127.0.0.1",
                "--disable-usage-stats",
            ],
            f"node{len(self.nodes)}",
        )
        if before:  # connected: wait for this very node (a killed one may still count alive)
            end = time.monotonic() + timeout
            while not self.node_ids() - before and time.monotonic() < end:
                time.sleep(0.3)
        self.wait_nodes(count + 1, timeout)
        node.node_id = next(iter(self.node_ids() - before), "")  # type: ignore[attr-defined]
        return node

    def node_ids(self) -> set[str]:
        """The ids of the alive nodes (through this process's connection; empty without one)."""
        ray = sys.modules.get("ray")
        if ray is None or not ray.is_initialized():
            return set()
        return {n["NodeID"] for n in ray.nodes() if n["Alive"]}

    def alive_nodes(self) -> int:
        """How many nodes the cluster's GCS counts alive (asked through this process's
        connection if it has one, else from a separate process)."""
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            return sum(bool(n["Alive"]) for n in ray.nodes())
        code = (
            f"import ray; ray.init(address={self.address!r}, logging_level='ERROR');"
            "print(sum(n['Alive'] for n in ray.nodes()))"
        )
        try:
            out = subprocess.run(
                [sys.executable, "-c", code],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
            return int(out.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, ValueError, IndexError):
            return 0

    def wait_nodes(self, count: int, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(n.poll() is not None for n in self.nodes[-1:]):
                break
            if self.alive_nodes() >= count:
                return
            time.sleep(0.5)
        self.stop()
        logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in self.tmp.glob("*.log"))
        raise RuntimeError(f"the Ray cluster did not reach {count} nodes:\n{logs}")

    def kill_node(self, node: subprocess.Popen) -> None:
        """Kills a node and every process of it at once (SIGKILL), as a machine that dies."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.pid, signal.SIGKILL)
        node.wait(timeout=30)

    def stop(self) -> None:
        """Kills every node this cluster started (the head last)."""
        for node in reversed(self.nodes):
            self.kill_node(node)
        self.nodes.clear()
        shutil.rmtree(self.ray_dir, ignore_errors=True)
