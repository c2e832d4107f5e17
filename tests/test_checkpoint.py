"""Long runs: a search killed with SIGKILL resumes from its checkpoint; files are never half-written."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import gymnasium as gym
import pytest

import mc_envs  # noqa: F401
from agents import NRPA
from agents.checkpoint import read_checkpoint

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

SEARCH = """
import sys
sys.path.insert(0, {root!r})
import gymnasium as gym
import mc_envs
from agents import NRPA
env = gym.make("mc_envs/SameGame-v0", position=8).unwrapped
env.reset()
NRPA(level=3, iterations=10, seed=2).search(
    env, playouts={playouts}, checkpoint={path!r}, checkpoint_every=0.1
)
"""


def _run(script: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], env=dict(os.environ))


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, "the search ended before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint written"
        time.sleep(0.02)


def test_a_search_killed_with_sigkill_resumes_to_the_same_result(tmp_path):
    path = tmp_path / "search.ckpt.json"
    playouts = 5000
    proc = _run(SEARCH.format(root=str(ROOT), playouts=playouts, path=str(path)))
    try:
        _wait_for(path, proc)
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    saved = read_checkpoint(path)  # a complete JSON file, whatever the moment of the kill
    assert 0 < saved["control"]["playouts"] < playouts
    env = gym.make("mc_envs/SameGame-v0", position=8).unwrapped
    env.reset()
    agent = NRPA(level=3, iterations=10, seed=2)
    resumed = agent.search(env, playouts=playouts, checkpoint=path, resume=True)
    assert resumed.score >= saved["best"]["score"]
    whole = NRPA(level=3, iterations=10, seed=2).search(env, playouts=playouts)
    assert (resumed.score, resumed.actions, resumed.playouts) == (
        whole.score,
        whole.actions,
        whole.playouts,
    )


WRITER = """
import sys
sys.path.insert(0, {root!r})
import json
from mc_envs.records import write_atomic
i = 0
while True:
    i += 1
    write_atomic({path!r}, json.dumps({{"n": i, "actions": list(range(i % 7, 200_000))}}))
"""


def test_a_writer_killed_mid_run_never_leaves_a_half_written_file(tmp_path):
    path = tmp_path / "record.json"
    proc = _run(WRITER.format(root=str(ROOT), path=str(path)))
    seen = set()
    try:
        _wait_for(path, proc, timeout=30)
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            data = json.loads(path.read_text())  # raises on a partial file
            assert len(data["actions"]) == 200_000 - data["n"] % 7
            seen.add(data["n"])
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(10)
    assert len(seen) > 1  # the file was replaced while we read it
    data = json.loads(path.read_text())
    assert len(data["actions"]) == 200_000 - data["n"] % 7
