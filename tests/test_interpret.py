"""Cold caches in a single env: its kernels interpreted while a child compiles them, agreeing with
the compiled kernels move for move."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numba
import numpy as np
import pytest
from helpers import DONE, python_json

import mc_envs  # noqa: F401
from mc_envs import _numba, interpret
from mc_envs._numba import ctlz, ctpop, cttz
from mc_envs.games import go_layout, samegame_bits
from mc_envs.vector.cold import INTERPRET_BELOW

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = [
    ("mc_envs/SameGame-v0", {}),
    ("mc_envs/SameGame-v0", {"position": 1}),
    ("mc_envs/MorpionSolitaire5D-v0", {}),
    ("mc_envs/MorpionSolitaire5T-v0", {}),
    ("mc_envs/Sudoku-v0", {}),
    ("mc_envs/Sudoku-v0", {"size": 16}),
    ("mc_envs/TicTacToe-v0", {}),
    ("mc_envs/ConnectFour-v0", {"opponent": "random"}),
    ("mc_envs/LeftMove-v0", {}),
    ("mc_envs/LeftmostPath-v0", {}),
    ("mc_envs/WeakSchur-v0", {}),
    ("mc_envs/Go-v0", {}),
    ("mc_envs/Go-v0", {"size": 19}),
]
# A few random episodes through the env's whole interface, as hashes and numbers; run here on the
# compiled kernels and in a fresh process on the interpreted ones.
TRAJECTORY = textwrap.dedent(
    """
    import hashlib
    import gymnasium as gym
    import numpy as np

    def digest(a):
        return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]

    def trajectory(env_id, kwargs, episodes=2, steps=40):
        env = gym.make(env_id, **kwargs).unwrapped
        rng = np.random.default_rng(7)
        out = []
        for episode in range(episodes):
            obs, _ = env.reset(seed=episode)
            record = [digest(obs), digest(env.clone_state().data)]
            for _ in range(steps):
                legal = env.legal_actions()
                record.append(legal.tolist())
                if len(legal) == 0:
                    break
                record.append(digest(env.action_masks()))
                snapshot = env.clone_state()
                action = int(rng.choice(legal))
                env.step(action)
                env.restore_state(snapshot)
                obs, reward, terminated, truncated, _ = env.step(action)
                record.append([digest(obs), float(reward), bool(terminated), bool(truncated),
                               float(env.score), int(env.current_player)])
                if terminated or truncated:
                    break
            out.append(record)
        return out
    """
)


def _python(code: str, cache: Path | None = None, ahead: bool = False) -> dict:
    return python_json(code, cache, ahead)


COMPILES = textwrap.dedent(
    """
    from numba.core import event
    compiled = []
    class _Compiles(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__module__)
        def on_end(self, ev):
            pass
    event.register("numba:compile", _Compiles())
    """
)


def test_interpreted_kernels_play_as_the_compiled_ones():
    code = (
        TRAJECTORY
        + COMPILES
        + textwrap.dedent(
            f"""
        import json
        import mc_envs
        from mc_envs import interpret
        with interpret.everything():
            runs = [trajectory(env_id, kwargs) for env_id, kwargs in {CONFIGS!r}]
        games = [m for m in compiled if m.startswith(interpret.GAME_MODULES)]
        print(json.dumps({{"runs": runs, "interpreted": interpret.interpreted[0],
                          "compiled": games}}))
        """
        )
    )
    interpreted = _python(code)
    assert interpreted["interpreted"] > 1000  # the kernels did run as Python
    assert interpreted["compiled"] == []  # and none of the game's compiled
    namespace: dict = {}
    exec(TRAJECTORY, namespace)
    for (env_id, kwargs), run in zip(CONFIGS, interpreted["runs"], strict=True):
        assert namespace["trajectory"](env_id, kwargs) == run, (env_id, kwargs)


def test_a_cold_env_steps_at_once_and_then_loads_what_its_child_compiled(tmp_path):
    code = COMPILES + textwrap.dedent(
        """
        import json
        import gymnasium as gym
        import mc_envs
        from mc_envs import interpret
        env = gym.make("mc_envs/Go-v0")
        env.reset(seed=0)
        env.step(int(env.unwrapped.legal_actions()[0]))
        first = {"compiled": list(compiled), "interpreted": interpret.interpreted[0],
                 "children": len(interpret.children())}
        ended = interpret.wait(timeout=240)
        count = interpret.interpreted[0]
        for _ in range(5):
            env.step(int(env.unwrapped.legal_actions()[0]))
        play = env.unwrapped.kernel.play
        print(json.dumps({"first": first, "ended": ended, "later": list(compiled),
                          "interpreted_later": interpret.interpreted[0] - count,
                          "hits": sum(play.stats.cache_hits.values()),
                          "misses": sum(play.stats.cache_misses.values())}))
        """
    )
    out = _python(code, cache=tmp_path / "cache", ahead=True)
    first = out["first"]
    assert first["compiled"] == [] and first["interpreted"] > 0 and first["children"] == 1
    assert out["ended"]
    # After the child: the kernels load from the cache it filled, none compiles here.
    assert out["later"] == [] and out["interpreted_later"] == 0
    assert out["hits"] >= 1 and out["misses"] == 0
    assert list((tmp_path / "cache").rglob("*.nbi"))


# A cold batched search, with and without an evaluator, on a small vector env: its first result
# and the vector env's steps run as Python while children compile them; after them, the same
# calls load what they compiled and give the same results.
BATCH = textwrap.dedent(
    """
    import json
    import gymnasium as gym
    import numpy as np
    import mc_envs
    from mc_envs import interpret
    from mc_envs.agents import PUCT

    def uniform(obs, masks):
        return masks / masks.sum(axis=1, keepdims=True), np.full(len(masks), 0.25)

    def searches(vec):
        out = []
        for agent in (PUCT(seed=1), PUCT(seed=2, evaluator=uniform)):
            r = agent.search_batch(vec, simulations=40)
            out.append([r.actions.tolist(), r.visits.tolist(), np.nan_to_num(r.q, nan=9).tolist()])
        return out

    vec = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=4)
    vec.reset(seed=0)
    vec.step(np.array([4, 0, 8, 2]))
    first = searches(vec)
    cold = {"compiled": [m for m in compiled if m.startswith("mc_envs")],
            "interpreted": interpret.interpreted[0], "children": len(interpret.children())}
    ended = interpret.wait(timeout=240)
    count, before = interpret.interpreted[0], len(compiled)
    again = searches(vec)
    obs, *_ = vec.step(np.array([1, 1, 1, 1]))
    print(json.dumps({"cold": cold, "ended": ended, "first": first, "again": again,
                      "interpreted_later": interpret.interpreted[0] - count,
                      "compiled_later": compiled[before:], "obs": obs.tolist()}))
    """
)


def test_a_cold_batched_search_runs_as_python_and_then_loads_the_same_search(tmp_path):
    out = _python(COMPILES + BATCH, cache=tmp_path / "cache", ahead=True)
    cold_run = out["cold"]
    # The vector env and the searches ran as Python while the children (env, vector env,
    # search) compiled: none of theirs compiled in the process. A game kernel the env's child was
    # not on may have (a batched search has no clock: interpret.sharing).
    ours = [m for m in cold_run["compiled"] if not m.startswith(interpret.GAME_MODULES)]
    assert ours == [] and cold_run["interpreted"] > 1000
    assert cold_run["children"] >= 1 and out["ended"]
    # Then everything loads from the cache: nothing compiles or runs as Python, same results.
    assert out["compiled_later"] == [] and out["interpreted_later"] == 0
    assert out["again"] == out["first"]
    # And the interpreted search is the compiled one (this process compiled it).
    namespace: dict = {}
    exec(BATCH.split("vec = gym.make_vec")[0], namespace)
    vec = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=4)
    vec.reset(seed=0)
    vec.step(np.array([4, 0, 8, 2]))
    assert namespace["searches"](vec) == out["first"]
    vec.close()


def test_one_process_at_a_time_compiles_a_game_for_a_cache(tmp_path):
    code = textwrap.dedent(
        """
        import fcntl, json, os
        import gymnasium as gym
        import mc_envs
        from mc_envs import interpret
        # Another process compiling Go for this cache: its child holds the lock.
        path = interpret.lock_path("go")
        path.parent.mkdir(parents=True, exist_ok=True)
        other = os.open(path, os.O_CREAT | os.O_RDWR)
        fcntl.flock(other, fcntl.LOCK_EX)
        env = gym.make("mc_envs/Go-v0")
        env.reset(seed=0)
        env.step(int(env.unwrapped.legal_actions()[0]))
        waiting = {"children": len(interpret.children()), "busy": interpret._busy(),
                   "interpreted": interpret.interpreted[0]}
        os.close(other)  # that process's child has ended
        interpret._looked[0] = interpret._polled[0] = -1.0
        interpret._until.clear()
        count = interpret.interpreted[0]
        env.step(int(env.unwrapped.legal_actions()[0]))
        print(json.dumps({"waiting": waiting, "busy_after": interpret._busy(),
                          "interpreted_after": interpret.interpreted[0] - count,
                          "compiled_after": len(env.unwrapped.kernel.play.signatures)}))
        """
    )
    out = _python(code, cache=tmp_path / "cache", ahead=True)
    # No second child: this process interprets while the other one compiles...
    assert out["waiting"] == {
        "children": 0,
        "busy": True,
        "interpreted": out["waiting"]["interpreted"],
    }
    assert out["waiting"]["interpreted"] > 0
    # ...and compiles (or loads) once it has ended.
    assert not out["busy_after"] and out["interpreted_after"] == 0 and out["compiled_after"] == 1


def test_a_warm_cache_starts_no_child_and_a_vector_env_compiles(monkeypatch):
    warm = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=2)  # compiles here (suite: ahead off)
    warm.reset(seed=0)
    warm.close()
    monkeypatch.setattr(interpret, "DISABLED", False)
    monkeypatch.setattr(interpret, "_enabled", [True])
    monkeypatch.setattr(interpret, "_started", set())
    before = _numba.interpreter[0]
    try:
        env = gym.make("mc_envs/ConnectFour-v0")  # compiled in this process
        env.reset(seed=0)
        assert interpret.children() == [] and _numba.interpreter[0] is None
        small = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=2)  # cached: no child
        small.close()
        assert interpret.children() == [] and interpret._enabled[0] is True
        _numba.interpreter[0] = interpret._rule
        vec = gym.make_vec("mc_envs/ConnectFour-v0", num_envs=INTERPRET_BELOW)
        vec.close()
        assert _numba.interpreter[0] is None and interpret._enabled[0] is False
    finally:
        _numba.interpreter[0] = before


def test_a_game_of_the_users_compiles_in_its_process(monkeypatch):
    monkeypatch.setattr(interpret, "DISABLED", False)
    monkeypatch.setattr(interpret, "_enabled", [True])
    monkeypatch.setattr(interpret, "_started", set())

    def plain(*args):
        return 0

    for kernel in (
        SimpleNamespace(name="mine", play=plain, legal=plain, observe=plain),  # not numba
        SimpleNamespace(name="jit", **dict.fromkeys(("play", "legal", "observe"), _compiled_bits)),
    ):
        interpret.begin(SimpleNamespace(kernel=kernel))
        assert interpret.children() == [] and _numba.interpreter[0] is None


@numba.njit
def _compiled_bits(words, signed):
    out = np.empty((len(words), 5), np.int64)
    for i in range(len(words)):
        w = words[i]
        out[i, 0] = samegame_bits._popcount(w)
        out[i, 1] = samegame_bits._clz(w)
        out[i, 2] = samegame_bits._ctz(w)
        out[i, 3] = go_layout.popcount(signed[i])
        out[i, 4] = go_layout.lowest_bit(signed[i]) if signed[i] != 0 else -1
    return out


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32])
def test_the_intrinsics_python_twins_count_bits_as_llvm(dtype):
    rng = np.random.default_rng(3)
    bits = np.iinfo(dtype).bits
    words = rng.integers(0, np.iinfo(dtype).max, 200, dtype=dtype, endpoint=True)
    words[:4] = [0, 1, np.iinfo(dtype).max, 1 << (bits - 1)]
    signed = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, 200, dtype=np.int64)
    signed[:3] = [0, -1, np.iinfo(np.int64).min]
    compiled = _compiled_bits(words, signed)
    for i, (w, s) in enumerate(zip(words, signed, strict=True)):
        twins = [ctpop(w), ctlz(w), cttz(w), go_layout.popcount(s)]
        twins.append(go_layout.lowest_bit(s) if s != 0 else -1)
        assert [int(t) for t in twins] == compiled[i].tolist(), (w, s)
        assert type(samegame_bits._popcount(w)) is type(w)  # the intrinsic's Python call


def test_a_kernel_run_as_python_passes_on_a_compiled_kernels_hash():
    # A cold cache's mix: SameGame's code interpreted, flood (which it calls) compiled and
    # returning its uint64 hash as a Python int; _group_code also has an int64 specialization
    # (a small hash passed on the same way compiles one), which a hash of 2**63 or more overflowed.
    env = gym.make("mc_envs/SameGame-v0").unwrapped
    env.reset(seed=0)
    state, ws = env.state_view.copy(), env.kernel.workspace(env.state_view.copy())
    samegame = sys.modules[env.kernel.code.py_func.__module__]
    cell = samegame.padded_index(state, int(env.legal_actions()[0]))
    samegame._group_code(5, state[samegame.HEADER + cell])  # the int64 specialization
    big = 0
    for action in env.legal_actions():
        action = int(action)
        expected = env.kernel.code(state, action, ws)
        assert env.kernel.code.py_func(state, action, ws) == expected
        cell = samegame.padded_index(state, action)
        big += int(samegame.flood(state, cell, ws)[1]) >= 2**63
    assert big > 0  # some of those hashes were 2**63 or more


def test_a_call_whose_types_the_cache_lacks_runs_as_python_while_a_child_compiles(tmp_path):
    # Morpion's _apply is compiled for its compiled callers' constants (play's track=False); an
    # interpreted play calls it from Python with a plain bool, which those do not fit: while a
    # child is at work, that call runs as Python instead of compiling another specialization
    # here (0.6 s in a cold NRPA search).
    code = COMPILES + textwrap.dedent(
        """
        import json, sys
        import gymnasium as gym
        import numpy as np
        import mc_envs
        from mc_envs import _numba, interpret
        from mc_envs._numba import is_cached
        env = gym.make("mc_envs/MorpionSolitaire5T-v0").unwrapped  # compiled here
        env.reset(seed=0)
        morpion = sys.modules[env.kernel.play.py_func.__module__]
        state = env.state_view.copy()
        ws = env.kernel.workspace(state)
        action = int(env.legal_actions()[0])
        expected = state.copy()
        env.kernel.play(expected, action, ws.copy())
        cached = [is_cached(env.kernel.play, (state, action, ws)),
                  is_cached(morpion._apply, (state, action, ws, False)),
                  is_cached(morpion._apply)]
        interpret._busy = lambda: True  # a child at work
        _numba.interpreter[0] = interpret._rule
        before, count = len(compiled), interpret.interpreted[0]
        got = state.copy()
        morpion._apply(got, action, ws.copy(), False)
        _numba.interpreter[0] = None
        print(json.dumps({"cached": cached, "compiled": compiled[before:],
                          "interpreted": interpret.interpreted[0] - count,
                          "same": bool(np.array_equal(got, expected))}))
        """
    )
    out = _python(code, cache=tmp_path / "cache")
    assert out["cached"] == [True, False, True]
    assert out["compiled"] == [] and out["interpreted"] >= 1 and out["same"]


# The env made and its child's exercise run here, then NRPA's generic path (the stand-in, kept on).
EXERCISED = textwrap.dedent(
    """
    import json
    import gymnasium as gym
    import mc_envs
    from mc_envs import exercise, interpret
    from mc_envs.agents import NRPA, compile_ahead, runner
    env = gym.make("mc_envs/SameGame-v0")
    env.reset(seed=0)
    exercise.exercise(env.unwrapped)

    class Generic(compile_ahead.StandIn):
        def ready(self):
            return False

    runner.stand_in = lambda agent, base, entries: Generic(entries, None)
    """
)
GENERIC_NRPA = textwrap.dedent(
    """
    result = NRPA(level=1, seed=1, policy="tabu").search(env, playouts=20)
    print(json.dumps({"compiled": [m for m in compiled if m.startswith("mc_envs.games")],
                      "generic": result.extra["compile"]["generic_playouts"]}))
    """
)


def test_the_childs_exercise_compiles_every_game_kernel_a_generic_nrpa_calls(tmp_path):
    # What a cold NRPA's generic path calls through the env (move codes, bias, SameGame's
    # selective policy) is compiled by the env's child, with the same argument types: none of it
    # compiles, or runs as Python, in the searching process once the child has ended.
    out = _python(EXERCISED + COMPILES + GENERIC_NRPA, cache=tmp_path / "cache")
    assert out["generic"] == 20 and out["compiled"] == []


ORDER = DONE + textwrap.dedent(
    """
    import gymnasium as gym
    import mc_envs
    from mc_envs import exercise, interpret
    with interpret.everything():  # as the child receives it: made in the parent
        env = gym.make(sys.argv[1]).unwrapped
    exercise.exercise(env)
    print(json.dumps(done))
    """
)


@pytest.mark.parametrize(
    "env_id, makes",
    [("mc_envs/SameGame-v0", "_lay_all"), ("mc_envs/MorpionSolitaire5T-v0", "rescan")],
)
def test_the_child_compiles_what_searches_call_before_what_makes_a_state(tmp_path, env_id, makes):
    # A cold search waits for play, legal and the playout (SameGame's 2 s); the kernels a reset
    # calls to lay out a new board compile after them (0.7 s each), as Python meanwhile.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MC_ENVS_COMPILE_AHEAD": "0"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-c", ORDER, env_id], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    order = [name.partition(".")[2] for name in json.loads(done.stdout.strip().splitlines()[-1])]
    assert makes in order
    for needed in ("play", "legal", "playout"):
        assert order.index(needed) < order.index(makes), (needed, order)


WISHED = DONE + textwrap.dedent(
    """
    import gymnasium as gym
    import mc_envs
    from mc_envs import exercise, interpret
    from mc_envs.wishes import Child
    with interpret.everything():  # as the child receives it: made in the parent
        env = gym.make("mc_envs/SameGame-v0").unwrapped
    read, write = os.pipe()
    os.write(write, b"observe\\nplayout legal_codes\\nplay obs")  # its last whole line counts
    exercise.exercise(env, Child(read))
    print(json.dumps(done))
    """
)


def test_the_child_compiles_first_what_its_parent_waits_for(tmp_path):
    # The parent's last wish: the playout (its cheaper twin first), then NRPA's move codes; the
    # rest in the stages' order (the move before the observation), the board layout last.
    order = _python(WISHED, cache=tmp_path / "cache")
    at = {name: order.index(name) for name in reversed(order)}  # first compiled
    assert (
        at["samegame.playout"]
        < at["samegame_bits.playout"]
        < at["samegame.legal_codes"]
        < at["samegame.play"]
        < at["samegame.observe"]
        < at["samegame._lay_all"]
    ), order


PARENT_WISHES = textwrap.dedent(
    """
    import json, os, time
    import numpy as np
    import gymnasium as gym
    import mc_envs
    from mc_envs import interpret
    from mc_envs._numba import is_cached
    env = gym.make("mc_envs/SameGame-v0").unwrapped
    env.reset(seed=0)
    kernel = env.kernel
    moves, codes = np.zeros(env.action_space.n, np.int64), np.zeros(env.action_space.n, np.int64)
    end = time.monotonic() + 120
    while not is_cached(kernel.legal_codes) and time.monotonic() < end:
        env.legal_codes(moves, codes)  # as Python: what this process waits for
        env.restore_state(env.clone_state())
    interpret.wait(300)
    cache = os.environ["NUMBA_CACHE_DIR"]
    when = {}
    for root, _, files in os.walk(cache):
        for name in files:
            if name.endswith(".nbi"):
                when[name.split("-")[0]] = os.path.getmtime(os.path.join(root, name))
    print(json.dumps(when))
    """
)


def test_a_cold_envs_child_hears_which_kernels_its_parent_runs_as_python(tmp_path):
    # Nothing else called, the child compiles the legal moves and the move first; told by the
    # parent's clock, it compiles the move codes first.
    when = _python(PARENT_WISHES, cache=tmp_path / "cache", ahead=True)
    assert when["samegame.legal_codes"] < when["samegame.observe"], when
    assert when["samegame.legal_codes"] < when["samegame.play"], when


def test_a_kernel_runs_its_twin_while_it_would_run_as_python():
    # SameGame's bitboard playout, "uncompiled": its flood-fill twin plays, compiled, the same
    # game; none of the bitboard's helpers is reached.
    from mc_envs.games import samegame as sg
    from mc_envs.rng import rng_state

    env = gym.make("mc_envs/SameGame-v0").unwrapped
    env.reset(seed=4)
    kernel = env.kernel

    def play(asked=None):
        state = np.array(env.clone_state().data, copy=True)
        seq = np.zeros(kernel.max_moves + 1, np.int64)
        ws = kernel.workspace(state)
        if asked is None:
            n = kernel.playout(state, 0, rng_state(9), ws, seq, 0)
        else:
            rule = lambda d, args: asked.append(d) or d is samegame_bits.playout  # noqa: E731
            with interpret._ruled(rule):
                n = samegame_bits.playout._compile_for_args(state, 0, rng_state(9), ws, seq, 0)(
                    state, 0, rng_state(9), ws, seq, 0
                )
        return state.tolist(), seq[:n].tolist()

    asked: list = []
    assert samegame_bits.playout.twin is sg.playout
    assert play(asked) == play()
    assert samegame_bits.playout in asked
    bitboard = [d for d in asked if d.py_func.__module__ == samegame_bits.__name__]
    assert bitboard == [samegame_bits.playout], asked


def test_a_state_copy_run_as_python_copies_as_the_compiled_one():
    # A batched search's leaf state, copied from its root: as Python by numpy (its twin), not
    # an element at a time; the same numbers as the compiled loop.
    from mc_envs.agents.common import copy_into

    of = np.arange(10, dtype=np.int64) * 7
    compiled, python = np.zeros(6, np.int64), np.zeros(6, np.int64)
    copy_into(compiled, of)
    with interpret._ruled(lambda dispatcher, args: dispatcher is copy_into):
        run = copy_into._compile_for_args(python, of)
    assert run is copy_into.twin
    run(python, of)
    assert python.tolist() == compiled.tolist() == of[:6].tolist()
