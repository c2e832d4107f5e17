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
from mc_envs.agents import NMCS, NRPA
from mc_envs.agents.checkpoint import read_checkpoint
from mc_envs.envs.samegame import SameGameEnv

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

SEARCH = """
import sys
sys.path.insert(0, {root!r})
import gymnasium as gym
import mc_envs
from mc_envs.agents import NRPA
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


# -- NMCS: the search pauses between two playouts to save every level's position ------------------

NMCS_SEARCH = """
import sys
sys.path.insert(0, {root!r})
import gymnasium as gym
import mc_envs
from mc_envs.agents import NMCS
env = gym.make("mc_envs/SameGame-v0", position=8).unwrapped
env.reset()
NMCS(level=3, seed=2).search(env, playouts={playouts}, checkpoint={path!r}, checkpoint_every=0.1)
"""


def _samegame(position):
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    return env


def _key(result):
    return (result.score, result.actions, result.playouts, result.iterations, result.stopped)


@pytest.mark.parametrize(
    "level, memorize, compiled, playouts",
    [(3, True, True, 12_000), (2, False, True, 6000), (0, True, True, 2000), (2, True, False, 900)],
)
def test_nmcs_checkpoints_do_not_change_the_search(tmp_path, level, memorize, compiled, playouts):
    env = _samegame(3)
    snap = env.clone_state()

    def agent():
        return NMCS(level=level, seed=5, memorize=memorize, compiled=compiled)

    whole = agent().search(env, playouts=playouts)
    path = tmp_path / "nmcs.ckpt.json"
    saved = agent().search(env, playouts=playouts, checkpoint=path, checkpoint_every=0.005)
    assert _key(saved) == _key(whole)  # pausing to save every 5 ms changes nothing
    part = agent().search(env, playouts=playouts // 3, checkpoint=path, checkpoint_every=0.02)
    data = read_checkpoint(path)
    assert data["algo"] == "nmcs" and data["control"]["playouts"] == part.playouts
    resumed = agent().search(env, playouts=playouts, checkpoint=path, resume=True)
    assert _key(resumed) == _key(whole)
    assert env.clone_state() == snap


def test_nmcs_resumes_a_run_stopped_by_time_or_callback(tmp_path):
    env = _samegame(3)
    path = tmp_path / "nmcs.ckpt.json"
    whole = NMCS(level=3, seed=1).search(env, playouts=15_000)
    stopped = NMCS(level=3, seed=1).search(env, time_limit=0.2, checkpoint=path)
    assert stopped.stopped == "time" and 0 < stopped.playouts < 15_000
    resumed = NMCS(level=3, seed=1).search(env, playouts=15_000, checkpoint=path, resume=True)
    assert _key(resumed) == _key(whole)
    small = SameGameEnv(rows=10, cols=10, colors=4)
    small.reset(seed=4)
    one_run = NMCS(level=2, seed=1).search(small)  # no budget: one complete run (27,288 playouts)
    cut = NMCS(level=2, seed=1).search(small, callback=lambda p: p.playouts > 3000, checkpoint=path)
    assert cut.stopped == "callback"
    rest = NMCS(level=2, seed=1).search(small, checkpoint=path, resume=True)
    assert _key(rest) == _key(one_run) and rest.iterations == 1


def test_nmcs_refuses_a_checkpoint_of_another_search(tmp_path):
    env = _samegame(3)
    path = tmp_path / "nmcs.ckpt.json"
    NMCS(level=2, seed=1).search(env, playouts=200, checkpoint=path)
    with pytest.raises(ValueError, match="seed"):
        NMCS(level=2, seed=2).search(env, playouts=400, checkpoint=path, resume=True)
    with pytest.raises(ValueError, match="'nmcs' search, not 'nrpa'"):
        NRPA(level=2, seed=1).search(env, playouts=400, checkpoint=path, resume=True)
    with pytest.raises(ValueError, match="another position"):
        NMCS(level=2, seed=1).search(_samegame(4), playouts=400, checkpoint=path, resume=True)


def test_an_nmcs_search_killed_with_sigkill_resumes_to_the_same_result(tmp_path):
    path = tmp_path / "nmcs.ckpt.json"
    playouts = 40_000
    proc = _run(NMCS_SEARCH.format(root=str(ROOT), playouts=playouts, path=str(path)))
    try:
        _wait_for(path, proc)
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    saved = read_checkpoint(path)
    assert 0 < saved["control"]["playouts"] < playouts
    env = _samegame(8)
    resumed = NMCS(level=3, seed=2).search(env, playouts=playouts, checkpoint=path, resume=True)
    assert resumed.score >= saved["best"]["score"]
    whole = NMCS(level=3, seed=2).search(env, playouts=playouts)
    assert _key(resumed) == _key(whole)
