"""The pipes between a cold env's process and its compiling child (mc_envs.wishes): what each side
hears, what the child leaves to its parent, and when the parent compiles beside it."""

import contextlib
import os
import textwrap
from pathlib import Path

import gymnasium as gym
from helpers import DONE, python_json

import mc_envs  # noqa: F401
from mc_envs import interpret
from mc_envs.agents import UCT
from mc_envs.wishes import Child, Lines, Parent

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def _pair():
    parent = Parent()
    down, up = parent.child_fds
    child = Child(os.dup(down), os.dup(up))  # the child's copies; the parent closes its own
    parent.started()
    try:
        yield parent, child
    finally:
        parent.close()
        for fd in (child._wishes.fd, child._up):
            if fd is not None:
                os.close(fd)


def test_each_side_hears_the_others_last_whole_line():
    with _pair() as (parent, child):
        assert child.latest() == ([], set())
        parent.tell(["legal"])
        parent.tell(["play", "legal"])
        assert child.latest() == (["play", "legal"], set())
        assert child.latest() == (["play", "legal"], set())  # nothing new: the last one
        child.at(["play"])
        assert parent.take("play") is False  # the child compiles it now
        assert child.latest() == (["play", "legal"], set())
        child.at(["legal", "score"])
        assert parent.take("play") is True
        assert child.latest() == (["play", "legal"], {"play"})
        assert parent.take("play") is True  # still its own
        child.at([])
        assert parent.take("observe") is False  # one kernel at most: the rest is the child's
        assert child.latest() == (["play", "legal"], {"play"})


def test_a_line_counts_once_it_is_whole_and_a_closed_pipe_reads_as_the_last_line():
    read, write = os.pipe()
    lines = Lines(read)
    os.write(write, b"legal play\nobs")
    assert lines.latest() == ["legal", "play"]
    os.write(write, b"erve\n")
    assert lines.latest() == ["observe"]
    os.close(write)
    assert lines.latest() == ["observe"] and lines.fd is None
    os.close(read)


def test_a_child_names_no_pipe_when_its_variable_names_none():
    for spec in (None, "", "3", "a,b"):
        child = Child.named(spec)
        assert child._wishes.fd is None and child._up is None
        assert child.latest() == ([], set())
        child.at(["legal"])  # said to nobody, without an error


# The child's side, run here on an empty cache: what compiles, in order, and what it tells.
TAKEN = DONE + textwrap.dedent(
    """
    import gymnasium as gym
    import mc_envs
    from mc_envs import exercise, interpret
    from mc_envs.wishes import Child
    with interpret.everything():  # as the child receives it: made in the parent
        env = gym.make("mc_envs/SameGame-v0").unwrapped
    down, to_child = os.pipe()
    from_child, up = os.pipe()
    os.write(to_child, b"observe legal_codes =play\\n")
    exercise.exercise(env, Child(down, up))
    heard = os.read(from_child, 65536).decode().splitlines()
    print(json.dumps({"done": done, "heard": heard}))
    """
)


def test_a_child_leaves_out_the_stages_its_parent_takes_and_says_where_it_is(tmp_path):
    # Told "=play", the child's stages leave the move out: it compiles only with the episodes,
    # after the board layout a reset makes; it tells each stage as it starts it.
    out = python_json(TAKEN, tmp_path / "cache")
    order, heard = out["done"], out["heard"]
    at = {name: order.index(name) for name in reversed(order)}  # first compiled
    assert at["samegame.observe"] < at["samegame.legal_codes"] < at["samegame._lay_all"]
    assert at["samegame._lay_all"] < at["samegame.play"], order
    assert heard[:2] == ["observe", "legal_codes code"], heard
    assert heard[-1] == "" and not any("play" in line.split() for line in heard), heard


# A cold Go env: a step outside sharing() runs its kernels as Python; inside, this process
# compiles the move (the heaviest kernel every search calls), after the legal moves' part (their
# superko test, which the child then loads), and only those, the rest left to the child (held
# here, then ended, not waited for).
SHARED = textwrap.dedent(
    """
    import json, os, signal, time
    from numba.core import event
    import gymnasium as gym
    import mc_envs
    from mc_envs import interpret
    compiled = []
    class _Compiles(event.Listener):
        def on_start(self, ev):
            f = ev.data["dispatcher"].py_func
            compiled.append(f.__module__ + "." + f.__qualname__)
        def on_end(self, ev):
            pass
    event.register("numba:compile", _Compiles())
    env = gym.make("mc_envs/Go-v0").unwrapped
    started = interpret.children()
    for child in started:  # held before it can begin (a second of imports): on a busy machine too
        os.kill(child.pid, signal.SIGSTOP)
    env.reset(seed=0)
    env.step(int(env.legal_actions()[0]))
    alone = [m for m in compiled if m.startswith("mc_envs.games")]
    time.sleep(2 * interpret.POLL)  # a kernel just run as Python runs so again for POLL seconds
    with interpret.sharing():
        env.step(int(env.legal_actions()[0]))
    shared = [m for m in compiled if m.startswith("mc_envs.games")]
    for child in interpret.children():
        child.kill()
        child.wait()
    print(json.dumps({"started": len(started), "alone": alone, "shared": shared,
                      "interpreted": interpret.interpreted[0]}))
    """
)


def test_a_search_with_no_clock_compiles_a_cold_kernel_beside_the_child(tmp_path):
    out = python_json(SHARED, tmp_path / "cache", ahead=True)
    assert out["started"] == 1 and out["interpreted"] > 0
    assert out["alone"] == []
    shared = out["shared"]
    assert shared[0] == "mc_envs.games.go_legal._repeats", out  # the legal moves' part
    assert "mc_envs.games.go.play" in shared, out  # the heaviest
    assert "mc_envs.games.go_legal.legal" not in shared, out  # and no more: the child's
    assert "mc_envs.games.go_legal.legal_words" not in shared, out


def test_the_parent_leaves_a_kernels_parts_to_a_child_that_compiles_it(monkeypatch):
    # Before the move it takes, the parent compiles the parts of the legal moves only while the
    # child has not said it compiles them: then they would be compiled twice.
    from mc_envs.games import go

    compiled = []
    monkeypatch.setattr(interpret, "compile_parts", compiled.append)
    monkeypatch.setattr(interpret, "timed", {go.play: ("go", "play"), go.legal: ("go", "legal")})
    with _pair() as (parent, child):
        monkeypatch.setattr(interpret, "_channels", {"go": parent})
        interpret._take(go.play)
        assert compiled == [go.legal]
        child.at(["legal", "score"])
        assert parent.compiling("legal") and not parent.compiling("play")
        interpret._take(go.play)
        assert compiled == [go.legal]  # the child's now


def test_only_a_search_that_nothing_watches_shares_the_compiling(monkeypatch):
    seen = []

    @contextlib.contextmanager
    def sharing(on=True):
        seen.append(on)
        yield

    monkeypatch.setattr(interpret, "sharing", sharing)
    env = gym.make("mc_envs/TicTacToe-v0")
    env.reset(seed=0)
    UCT(seed=0).search(env, iterations=50)
    UCT(seed=0).search(env, iterations=50, time_limit=30.0)
    UCT(seed=0).search(env, iterations=50, callback=lambda progress: False)
    assert seen == [True, False, False]


def test_a_childs_playout_waits_for_the_move_its_parent_compiles(monkeypatch):
    # Go's playout calls the move, which the parent compiles ("=play"): the child compiles the
    # move's parts first, then the playout's own (its random draws), does the other stages (the
    # wished ones first) while the cache lacks the move, then compiles the playout; with the
    # parent gone, it waits for nothing.
    from mc_envs import exercise

    with interpret.everything():  # a state made as Python: nothing compiles here
        env = gym.make("mc_envs/Go-v0", size=5).unwrapped
    done, looks = [], []
    cached_after = 3  # the parent's move lands in the cache at the third look

    def is_cached(kernel):
        looks.append(kernel)
        return kernel is env.kernel.play and len(looks) >= cached_after

    def stage(name):
        return lambda env, legal: done.append((name, len(looks)))

    stages = {name: stage(name) for name in ("legal", "observe", "codes", "select", "bias")}
    stages["playout"] = stage("playout")
    table = {
        "legal": stages["legal"],
        "play": stage("play"),
        "observe": stages["observe"],
        "legal_codes": stages["codes"],
        "playout": stages["playout"],
    }
    monkeypatch.setattr(exercise, "STAGES", table)
    monkeypatch.setattr(exercise, "_playout", stages["playout"])
    monkeypatch.setattr(exercise, "is_cached", is_cached)
    monkeypatch.setattr(exercise, "EPISODES", 0)
    monkeypatch.setattr(exercise, "POLL", 0.001)
    monkeypatch.setattr(exercise, "_costly", lambda env, name: False)
    parted = []  # the move's parts, compiled before the first stage
    monkeypatch.setattr(exercise, "compile_parts", lambda kernel: parted.append((kernel, done[:])))
    with _pair() as (parent, child):
        parent.tell(["playout", "observe"])
        assert parent.take("play")  # "=play" sent
        with interpret.everything():
            exercise.exercise(env, child)
    names = [name for name, _ in done]
    assert names == ["observe", "legal", "playout", "codes"], done
    assert dict(done)["playout"] >= cached_after  # not before the parent's move was cached
    assert dict(done)["observe"] < cached_after
    assert parted[:2] == [(env.kernel.play, []), (env.kernel.playout, [])]
    assert {kernel for kernel, _ in parted} == {env.kernel.play, env.kernel.playout}

    done.clear(), looks.clear(), parted.clear()
    cached_after = 10**9  # never: the parent goes, and the child stops waiting for it
    with _pair() as (parent, child):
        parent.tell(["playout"])
        assert parent.take("play")
        child.latest()
        os.close(parent._down)  # the parent's end of the wishes: it has gone
        parent._down = None
        with interpret.everything():
            exercise.exercise(env, child)
    assert [name for name, _ in done] == ["playout", "legal", "observe", "codes"], done
    assert parted == []  # the parent gone: nothing to even, nothing to wait for

    done.clear(), looks.clear(), parted.clear()
    with _pair() as (parent, child):
        parent.tell([])  # no wish: the child's own order, the move's parts still first
        assert parent.take("play")
        with interpret.everything():
            exercise.exercise(env, child)
    assert [name for name, _ in done][:2] == ["legal", "observe"], (done, parted)
    assert parted[0] == (env.kernel.play, [])


def test_what_a_playout_calls_decides_what_comes_before_it(monkeypatch):
    # A playout without a twin that calls the searches' kernels (Tic-Tac-Toe's) compiles after
    # them; Morpion's makes its moves with its own code: it neither comes after them nor waits for
    # the move its parent compiles; Go's calls that move (through its random-policy twin).
    from mc_envs import exercise

    def made(env_id):
        with interpret.everything():
            return gym.make(env_id).unwrapped

    ttt, morpion, go = (
        made(f"mc_envs/{name}-v0") for name in ("TicTacToe", "MorpionSolitaire5D", "Go")
    )
    assert exercise._costly(ttt, "playout") and not exercise._costly(ttt, "legal")
    assert not exercise._costly(morpion, "playout") and not exercise._costly(go, "playout")
    monkeypatch.setattr(exercise, "is_cached", lambda kernel: False)  # as on a cold cache
    assert exercise._pending(morpion, {"play"}) == []  # its playout never calls it
    assert exercise._pending(go, {"play"}) == [go.kernel.play]


def test_a_childs_playout_goes_first_when_it_does_not_call_the_parents_move(monkeypatch):
    # Morpion's playout, wished first while the parent compiles the move ("=play", never cached
    # here): the child compiles it at once, without waiting for the move.
    from mc_envs import exercise

    with interpret.everything():
        env = gym.make("mc_envs/MorpionSolitaire5D-v0").unwrapped
    done = []

    def stage(name):
        return lambda env, legal: done.append(name)

    stages = {name: stage(name) for name in ("legal", "play", "observe", "playout")}
    monkeypatch.setattr(exercise, "STAGES", stages)
    monkeypatch.setattr(exercise, "_playout", stages["playout"])
    monkeypatch.setattr(exercise, "is_cached", lambda kernel: False)
    monkeypatch.setattr(exercise, "EPISODES", 0)
    monkeypatch.setattr(exercise, "WAIT", 0.5)
    with _pair() as (parent, child):
        parent.tell(["playout"])
        assert parent.take("play")
        with interpret.everything():
            exercise.exercise(env, child)
    assert done == ["playout", "legal", "observe"], done


def test_a_search_s_declared_wishes_are_told_first(monkeypatch):
    # sharing(wishes=...) tells the child what the search will call most before it calls
    # anything, and keeps it first as the calls run as Python are timed.
    legal = object()
    with _pair() as (parent, child):
        monkeypatch.setattr(interpret, "_channels", {"game": parent})
        monkeypatch.setattr(interpret, "timed", {legal: ("game", "legal")})
        with interpret.sharing(wishes=("playout",)):
            assert child.latest() == (["playout"], set())
            interpret._tell(legal, 0.5)
            assert child.latest() == (["playout", "legal"], set())
        with interpret.sharing():
            assert child.latest() == ([], set())
            interpret._tell(legal, 0.5)
            assert child.latest() == (["legal"], set())


# Go's move declares the scoring at the end of a game as its part: a child compiles it into the
# cache first, and a process that then compiles the move loads it instead of compiling it again.
PARTS = DONE + textwrap.dedent(
    """
    from mc_envs._numba import compile_parts
    from mc_envs.games import go, go_layout
    if sys.argv[1] == "child":
        compile_parts(go.play)
    else:
        state = go_layout.new_state(9, 7.5, None, 8)
        go.play(state, 0, go.workspace(state))
    print(json.dumps({"done": done}))
    """
)


# And the legal moves declare their superko test: the search's process compiles it before the
# move, and the child's legal moves load it.
LEGAL_PARTS = DONE + textwrap.dedent(
    """
    import numpy as np
    from mc_envs._numba import compile_parts
    from mc_envs.games import go, go_layout
    if sys.argv[1] == "parent":
        compile_parts(go.legal)
    else:
        state = go_layout.new_state(9, 7.5, None, 8)
        go.legal(state, go.workspace(state), np.zeros(82, np.int64))
    print(json.dumps({"done": done}))
    """
)


def test_the_legal_moves_load_the_superko_test_their_part_compiled_beforehand(tmp_path):
    cache = tmp_path / "cache"
    parent = python_json(LEGAL_PARTS.replace("sys.argv[1]", "'parent'"), cache)["done"]
    assert "go_legal._repeats" in parent and "go_legal.legal" not in parent, parent
    child = python_json(LEGAL_PARTS.replace("sys.argv[1]", "'child'"), cache)["done"]
    assert "go_legal.legal" in child and "go_legal.legal_words" in child, child
    assert "go_legal._repeats" not in child, child  # loaded: the declared types are the called


def test_a_child_compiles_the_parts_of_the_move_and_the_move_loads_them(tmp_path):
    cache = tmp_path / "cache"
    child = python_json(PARTS.replace("sys.argv[1]", "'child'"), cache)["done"]
    assert "go._finish" in child and "go_layout.area" in child, child
    assert "go.play" not in child and "go.put_stone" not in child, child
    parent = python_json(PARTS.replace("sys.argv[1]", "'parent'"), cache)["done"]
    assert "go.play" in parent and "go.put_stone" in parent, parent
    assert "go._finish" not in parent and "go_layout.area" not in parent, parent


# Go's playout declares its random draws: a child compiles them while it waits for the move its
# parent compiles, and the random playout, compiled next, loads them.
PLAYOUT_PARTS = DONE + textwrap.dedent(
    """
    import numpy as np
    from mc_envs._numba import compile_parts
    from mc_envs.games import go, go_layout
    from mc_envs.rng import rng_state
    if sys.argv[1] == "child":
        compile_parts(go.playout)
    else:
        state = go_layout.new_state(9, 7.5, None, 8)
        seq = np.zeros(int(state[go_layout.MAX_MOVES]) + 1, np.int64)
        go._random_playout(state, rng_state(0), go.workspace(state), seq, 0)
    print(json.dumps({"done": done}))
    """
)


def test_a_child_compiles_the_playout_s_draws_and_the_random_playout_loads_them(tmp_path):
    cache = tmp_path / "cache"
    child = python_json(PLAYOUT_PARTS.replace("sys.argv[1]", "'child'"), cache)["done"]
    assert "rng.rng_below" in child and "go_legal.kth_point" in child, child
    assert "go._random_playout" not in child, child
    parent = python_json(PLAYOUT_PARTS.replace("sys.argv[1]", "'parent'"), cache)["done"]
    assert "go._random_playout" in parent, parent
    assert "rng.rng_below" not in parent, parent  # loaded: the declared types are the called
