"""Cold caches in a large vector env: its first call compiled on two cores (``Split``)."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import gymnasium as gym
from helpers import vector_digests

import mc_envs  # noqa: F401
from mc_envs.vector.cold import INTERPRET_BELOW, Split

ROOT = Path(__file__).resolve().parent.parent

# The vector env made on an empty cache; the child is left to finish before the first reset, so
# that the first call must load the child's kernels from the cache.
COLD = textwrap.dedent(
    """
    import json, sys
    import gymnasium as gym
    import mc_envs
    from mc_envs import interpret
    sys.path.insert(0, sys.argv[2])
    from helpers import vector_digests

    def run(n):
        venv = gym.make_vec("mc_envs/TicTacToe-v0", n, vectorization_mode="vector_entry_point")
        split = venv.unwrapped._run._split
        children = len(interpret.children())
        ended = interpret.wait(timeout=240)
        return split is not None, children, ended, vector_digests(venv)

    split, children, ended, steps = run(int(sys.argv[1]))
    kernel = gym.make("mc_envs/TicTacToe-v0").unwrapped.kernel
    fns = {"legal": kernel.legal, "play": kernel.play, "observe": kernel.observe}
    print(json.dumps({
        "split": split, "children": children, "ended": ended, "digests": steps,
        "signatures": {k: len(f.signatures) for k, f in fns.items()},
        "hits": {k: sum(f.stats.cache_hits.values()) for k, f in fns.items()},
        "again": run(int(sys.argv[1]))[0],
    }))
    """
)


def test_a_cold_large_vector_env_loads_the_legal_kernel_its_child_compiled(tmp_path):
    n = INTERPRET_BELOW
    out = _run(COLD, tmp_path, str(n), str(Path(__file__).parent))
    assert out["split"] and out["children"] == 1 and out["ended"]
    # The child's kernel came from the cache; this process compiled the others, for the very
    # types the entry point calls them with (one specialization each, none compiled twice).
    assert out["hits"] == {"legal": 1, "observe": 1, "play": 0}  # Split.CHILD's; PARENT's
    assert out["signatures"] == {"legal": 1, "play": 1, "observe": 1}
    assert not out["again"]  # cached now: no second child
    venv = gym.make_vec("mc_envs/TicTacToe-v0", n, vectorization_mode="vector_entry_point")
    assert out["digests"] == vector_digests(venv)  # the steps of a vector env compiled here


MAKE = textwrap.dedent(
    """
    import json
    from numba.core import event
    compiled = []
    class _Compiles(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
        def on_end(self, ev):
            pass
    event.register("numba:compile", _Compiles())
    import gymnasium as gym
    import mc_envs
    from mc_envs import interpret
    from mc_envs.games import go_layout
    venv = gym.make_vec("mc_envs/Go-v0", 64, vectorization_mode="vector_entry_point")
    made = list(compiled)
    state = venv.unwrapped.proto.clone_state().data
    fresh = go_layout.new_state(9)  # compiled here
    print(json.dumps({"made": made, "same": state.tolist() == fresh.tolist(),
                      "ended": interpret.wait(timeout=240)}))
    """
)


def test_a_large_vector_env_makes_its_prototype_as_python_on_a_cold_cache(tmp_path):
    # Go's first state calls a kernel (the position table): run as Python, it is made at once,
    # and the same state as the compiled kernel makes; the child starts that much sooner.
    out = _run(MAKE, tmp_path)
    assert out["made"] == [] and out["same"] and out["ended"]


def _run(code: str, tmp_path: Path, *args: str) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MC_ENVS_COMPILE_AHEAD": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


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
