"""Cold caches in a large vector env: its first call compiled on two cores (``Split``)."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np

import mc_envs  # noqa: F401
from mc_envs.vector.cold import INTERPRET_BELOW, Split

ROOT = Path(__file__).resolve().parent.parent

# A vector env of Tic-Tac-Toe made on an empty cache; the child is left to finish before the first
# reset, so that the first call must load the child's kernel from the cache.
COLD = textwrap.dedent(
    """
    import hashlib, json, sys
    import gymnasium as gym
    import numpy as np
    import mc_envs
    from mc_envs import interpret

    def run(n):
        venv = gym.make_vec("mc_envs/TicTacToe-v0", n, vectorization_mode="vector_entry_point")
        split = venv.unwrapped._run._split
        children = len(interpret.children())
        ended = interpret.wait(timeout=240)
        obs, info = venv.reset(seed=0)
        digests = [hashlib.sha1(obs.tobytes()).hexdigest()]
        for k in range(4):
            acts = np.array([np.flatnonzero(m)[k % 2] for m in info["action_mask"]])
            obs, r, term, trunc, info = venv.step(acts)
            digests.append(hashlib.sha1(obs.tobytes() + r.tobytes() + term.tobytes()).hexdigest())
        venv.close()
        return split is not None, children, ended, digests

    split, children, ended, digests = run(int(sys.argv[1]))
    kernel = gym.make("mc_envs/TicTacToe-v0").unwrapped.kernel
    fns = {"legal": kernel.legal, "play": kernel.play, "observe": kernel.observe}
    print(json.dumps({
        "split": split, "children": children, "ended": ended, "digests": digests,
        "signatures": {k: len(f.signatures) for k, f in fns.items()},
        "hits": {k: sum(f.stats.cache_hits.values()) for k, f in fns.items()},
        "again": run(int(sys.argv[1]))[0],
    }))
    """
)


def _digests(n: int) -> list[str]:
    venv = gym.make_vec("mc_envs/TicTacToe-v0", n, vectorization_mode="vector_entry_point")
    obs, info = venv.reset(seed=0)
    out = [hashlib.sha1(obs.tobytes()).hexdigest()]
    for k in range(4):
        acts = np.array([np.flatnonzero(m)[k % 2] for m in info["action_mask"]])
        obs, r, term, trunc, info = venv.step(acts)
        out.append(hashlib.sha1(obs.tobytes() + r.tobytes() + term.tobytes()).hexdigest())
    venv.close()
    return out


def test_a_cold_large_vector_env_loads_the_legal_kernel_its_child_compiled(tmp_path):
    n = INTERPRET_BELOW
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MC_ENVS_COMPILE_AHEAD": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", COLD, str(n)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["split"] and out["children"] == 1 and out["ended"]
    # The child's kernel came from the cache; this process compiled the others, for the very
    # types the entry point calls them with (one specialization each, none compiled twice).
    assert out["hits"]["legal"] == 1 and out["hits"]["play"] == 0
    assert out["signatures"] == {"legal": 1, "play": 1, "observe": 1}
    assert not out["again"]  # cached now: no second child
    assert out["digests"] == _digests(n)  # the same steps as a vector env compiled here


def _split(mine: list) -> tuple[Split, int]:
    fd, theirs = os.pipe()
    return Split(subprocess.Popen([sys.executable, "-c", "pass"]), fd, mine), theirs


def test_the_first_call_waits_for_a_child_that_is_compiling_and_not_for_one_that_is_not():
    compiled = []

    class Kernel:
        def compile(self, signature):
            compiled.append(signature)

    split, theirs = _split([(Kernel(), ("sig",))])
    os.write(theirs, b"c")  # compiling: the call waits until it says done
    said = threading.Event()

    def done_later():
        threading.Event().wait(0.3)
        said.set()
        os.write(theirs, b"d")

    threading.Thread(target=done_later).start()
    split.finish()
    assert said.is_set() and compiled == [("sig",)]
    os.close(theirs)
    split._child.wait()

    # Not yet compiling (still importing), or gone without a word: the call does not wait (it
    # compiles the child's kernel itself); a wait would last WAIT, 120 s.
    for last in (b"", b"c"):
        split, theirs = _split([])
        os.write(theirs, last)
        if last:
            os.close(theirs)
        call = threading.Thread(target=split.finish)
        call.start()
        call.join(timeout=30)
        assert not call.is_alive(), last
        if not last:
            os.close(theirs)
        split._child.wait()
