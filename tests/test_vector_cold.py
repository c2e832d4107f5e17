"""Cold caches in a large vector env: its first call compiled on two cores, then steps as Python
until a child has compiled its entry point (``Split``)."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import gymnasium as gym
import pytest

import mc_envs  # noqa: F401
from mc_envs.vector.cold import INTERPRET_BELOW, Split
from mc_envs.vector.compiled import RESET, STEP

ROOT = Path(__file__).resolve().parent.parent

# Vector envs made on an empty cache and stepped at once: their first calls run the entry point's
# code as Python while the child compiles it; then the child's is loaded. The steps go through
# ends of games and autoresets (filling whole mask rows) and a restore, with and without the
# random opponent.
COLD = textwrap.dedent(
    """
    import hashlib, json, sys
    import gymnasium as gym
    import numpy as np
    import mc_envs
    from mc_envs import interpret

    def run(n, **kwargs):
        venv = gym.make_vec("mc_envs/TicTacToe-v0", n, vectorization_mode="vector_entry_point",
                            **kwargs)
        runner = venv.unwrapped._run
        split = runner._split
        python = runner._python
        calls, loading = [], []

        def stand_in(*args):
            calls.append(args[0])
            loading[:] = [runner._loading]
            return python(*args)

        runner._python = stand_in
        digests = steps(venv, 14)
        standing_in = runner._loading is not None
        job = loading[0] if loading else None
        ended = interpret.wait(timeout=240) and (job is None or job.wait(timeout=240))
        digests += steps(venv, 3)
        serial = runner._serial
        return {"split": split is not None, "python": len(calls), "standing_in": standing_in,
                "child_exit": split.child.poll() if split is not None else None,
                "in_child": job.in_child if job else None,
                "error": repr(job.error) if job else None,
                "load_s": job.seconds if job else None,
                "ended": ended, "digests": digests, "loaded": runner._loading is None,
                "signatures": len(serial.signatures), "hits": sum(serial.stats.cache_hits.values()),
                "kernels": {name: len(getattr(venv.unwrapped.proto.kernel, name).signatures)
                            for name in ("legal", "play", "observe")}}

    def steps(venv, k):
        obs, info = venv.reset(seed=0)
        out = [hashlib.sha1(obs.tobytes()).hexdigest()]
        for i in range(k):
            if i == 7:
                snapshot = venv.clone_state()
            if i == 9:  # back two steps (a REFRESH call)
                venv.restore_state(snapshot)
                masks = venv.action_masks()  # over: all False, where a step's are all True
                info = {"action_mask": masks | ~masks.any(1, keepdims=True)}
            acts = np.array([np.flatnonzero(m)[i % 2 if m.sum() > 1 else 0]
                             for m in info["action_mask"]])
            obs, r, term, trunc, info = venv.step(acts)
            parts = (obs, r, term, trunc, info["action_mask"])
            out.append(hashlib.sha1(b"".join(a.tobytes() for a in parts)).hexdigest())
        return out

    n = int(sys.argv[1])
    print(json.dumps([run(n), run(n, opponent="random")]))
    """
)


def _digests(venv, k: int, again: int) -> list[str]:
    # COLD's steps, in this process (compiled here: compiling ahead is off in the suite)
    import hashlib

    import numpy as np

    out = []
    for n in (k, again):
        obs, info = venv.reset(seed=0)
        out.append(hashlib.sha1(obs.tobytes()).hexdigest())
        for i in range(n):
            if i == 7:
                snapshot = venv.clone_state()
            if i == 9:
                venv.restore_state(snapshot)
                masks = venv.action_masks()
                info = {"action_mask": masks | ~masks.any(1, keepdims=True)}
            acts = np.array(
                [np.flatnonzero(m)[i % 2 if m.sum() > 1 else 0] for m in info["action_mask"]]
            )
            obs, r, term, trunc, info = venv.step(acts)
            parts = (obs, r, term, trunc, info["action_mask"])
            out.append(hashlib.sha1(b"".join(a.tobytes() for a in parts)).hexdigest())
    return out


def test_a_cold_large_vector_env_loads_the_entry_point_its_child_compiled(tmp_path):
    # How many calls run as Python before the child's entry point is loaded depends on the two
    # processes' speeds (on a busy machine the child can be done before the first call is); the
    # entry point never compiles here, and the steps are the compiled ones.
    n = INTERPRET_BELOW
    cases = _run(COLD, tmp_path, str(n))
    for case, kwargs in zip(cases, ({}, {"opponent": "random"}), strict=True):
        said = (kwargs, {k: v for k, v in case.items() if k != "digests"})
        assert case["split"] and case["ended"] and case["loaded"], said
        assert case["child_exit"] == 0 and case["error"] == "None", said
        # the entry point came from the cache: none compiled here, one specialization; the
        # kernels the first call compiled or loaded, once each, for the entry point's types
        assert case["hits"] == 1 and case["signatures"] == 1, said
        assert case["kernels"] == {"legal": 1, "play": 1, "observe": 1}, said
        venv = gym.make_vec(
            "mc_envs/TicTacToe-v0", n, vectorization_mode="vector_entry_point", **kwargs
        )
        assert case["digests"] == _digests(venv, 14, 3), said  # as the compiled steps


class _Never:
    done = False  # a loading that never ends: every call runs as Python


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("mc_envs/TicTacToe-v0", {}),
        ("mc_envs/TicTacToe-v0", {"opponent": "random"}),
        ("mc_envs/MorpionSolitaire5D-v0", {}),  # 20,480 actions: the masks scattered
    ],
)
def test_the_python_steps_of_a_cold_vector_env_are_the_compiled_steps(env_id, kwargs):
    # What a cold large vector env runs until its entry point is loaded (python_entry), against
    # the compiled entry point, through ends of games, autoresets and a restore (which copies
    # the snapshot's derived buffers: no call).
    made = [
        gym.make_vec(env_id, INTERPRET_BELOW, vectorization_mode="vector_entry_point", **kwargs)
        for _ in range(2)
    ]
    runner = made[0].unwrapped._run
    python, calls = runner._python, []
    runner._python = lambda *args: calls.append(args[0]) or python(*args)
    runner._loading = _Never()
    digests = [_digests(venv, 14, 3) for venv in made]
    assert calls == [RESET] + [STEP] * 14 + [RESET] + [STEP] * 3  # every call as Python
    assert digests[0] == digests[1]


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
    from mc_envs.games import go_layout, morpion
    go = gym.make_vec("mc_envs/Go-v0", 64, vectorization_mode="vector_entry_point")
    made = list(compiled)
    state = go.unwrapped.proto.clone_state().data
    fresh = go_layout.new_state(9)  # compiled here
    before = len(compiled)
    cross = gym.make_vec(
        "mc_envs/MorpionSolitaire5D-v0", 64, vectorization_mode="vector_entry_point"
    )
    made_too = compiled[before:]
    template = cross.unwrapped._template
    start = morpion.initial_state("5D")  # compiled here
    print(json.dumps({"made": made, "same": state.tolist() == fresh.tolist(),
                      "made_too": made_too, "same_too": template.tolist() == start.tolist(),
                      "ended": interpret.wait(timeout=240)}))
    """
)


def test_a_large_vector_env_makes_its_prototype_as_python_on_a_cold_cache(tmp_path):
    # Go's first state calls a kernel (the position table), Morpion's start state its scan of
    # the legal moves: run as Python, each is made at once, and the same state as the compiled
    # kernels make; the child starts that much sooner.
    out = _run(MAKE, tmp_path)
    assert out["made"] == [] and out["same"] and out["ended"]
    assert out["made_too"] == [] and out["same_too"]


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
