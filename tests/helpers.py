"""Small helpers shared by the planner tests."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.games import tictactoe as ttt


def samegame(position):
    """A reset SameGame env (unwrapped) on a standard position."""
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    return env


def best_score(env, memo=None):
    """The exact optimum of a small SameGame from the env's state, by exhaustive search over
    clone/restore (``memo`` maps boards to their optimum)."""
    memo = {} if memo is None else memo
    key = env.board.tobytes()
    if key not in memo:
        snap = env.clone_state()
        best = 0.0
        for a in env.legal_actions():
            _, r, *_ = env.step(a)
            best = max(best, r + best_score(env, memo))
            env.restore_state(snap)
        memo[key] = best
    return memo[key]


def replayed_score(env, actions):
    """The score ``actions`` reach from the env's state; the env is left as it was."""
    snap = env.clone_state()
    for a in actions:
        env.step(a)
    score = env.score
    env.restore_state(snap)
    return score


@cache
def value(key: tuple) -> int:
    """Minimax value for the player to move: +1 win, 0 draw, -1 loss."""
    s = np.array(key, dtype=np.int64)
    if s[ttt.OVER]:
        return 0 if s[ttt.RESULT] == 0 else -1  # the previous mover won
    out = np.zeros(9, dtype=np.int64)
    best = -2
    for a in out[: ttt.legal(s, None, out)]:
        t = s.copy()
        ttt.play(t, a, None)
        best = max(best, -value(tuple(t)))
    return best


def perfect_move(s: np.ndarray) -> int:
    """A best Tic-Tac-Toe move of the player to move in state ``s`` (the first of them)."""
    out = np.zeros(9, dtype=np.int64)
    best, move = -2, -1
    for a in out[: ttt.legal(s, None, out)]:
        t = s.copy()
        ttt.play(t, a, None)
        v = -value(tuple(t))
        if v > best:
            best, move = v, int(a)
    return move


@pytest.fixture(autouse=True, scope="module")
def pygame_display():
    """A dummy display (events can be posted) for each module that imports this fixture
    (autouse); pygame and the drawings' caches are unloaded afterwards (see test_render_draw)."""
    from mc_envs import render

    render.require_pygame()
    import pygame

    pygame.display.init()
    pygame.display.set_mode((8, 8))
    yield
    forget_pygame()


def forget_pygame() -> None:
    """Quits pygame, clears the drawings' caches and unloads pygame (other test files check that
    stepping an env leaves pygame unimported)."""
    import pygame

    from mc_envs.render.draw import morpion, samegame
    from mc_envs.render.theme import _TEXT_CACHE, font

    pygame.quit()
    font.cache_clear()
    _TEXT_CACHE.clear()
    samegame._CACHE.clear()
    morpion._BACKGROUND.clear()
    for name in [m for m in sys.modules if m == "pygame" or m.startswith("pygame.")]:
        del sys.modules[name]


def cli_with_ctrl_c(*args: str) -> list[str]:
    """The command line of an ``mc-envs`` child that Ctrl-C interrupts even when the tests run
    in the background: a shell that starts them there makes its children ignore SIGINT, so the
    child puts Python's handler back before it runs the command (no preexec_fn: Python code
    between fork and exec is unsafe once JAX's threads run in this process)."""
    child = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'mc-envs'; runpy.run_module('mc_envs.cli', run_name='__main__')"
    )
    return [sys.executable, "-c", child, *args]


def plain_go_legal(board: np.ndarray, colour: int, seen: set[bytes], a: int) -> bool:
    """Whether Go's ``colour`` (0 Black, 1 White) may play action ``a`` on ``board`` (0 empty, 1
    Black, 2 White) by the rules read plainly: a pass always; else an empty point, where a copy of
    the board with the stone played, the opponent's chains without a liberty removed, leaves the
    mover's chain a liberty and is not among the ``seen`` boards (positional superko)."""
    n = board.shape[0]
    if a == n * n:
        return True
    r, c = divmod(a, n)
    if board[r, c]:
        return False

    def chain(b: np.ndarray, r0: int, c0: int) -> tuple[set, bool]:
        todo, stones, free = [(r0, c0)], {(r0, c0)}, False
        while todo:
            y, x = todo.pop()
            for v, u in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= v < n and 0 <= u < n:
                    free |= b[v, u] == 0
                    if b[v, u] == b[r0, c0] and (v, u) not in stones:
                        stones.add((v, u))
                        todo.append((v, u))
        return stones, free

    b = board.copy()
    b[r, c] = colour + 1
    for v, u in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= v < n and 0 <= u < n and b[v, u] == 2 - colour:
            stones, free = chain(b, v, u)
            if not free:
                for y, x in stones:
                    b[y, x] = 0
    return chain(b, r, c)[1] and b.tobytes() not in seen


def vector_digests(venv) -> list[str]:
    """A few steps of a vector env from ``reset(seed=0)`` (each sub-env's first or second legal
    action in turn), as hashes of what they return; closes it."""
    obs, info = venv.reset(seed=0)
    out = [hashlib.sha1(obs.tobytes()).hexdigest()]
    for k in range(4):
        acts = np.array([np.flatnonzero(m)[k % 2] for m in info["action_mask"]])
        obs, r, term, trunc, info = venv.step(acts)
        out.append(hashlib.sha1(obs.tobytes() + r.tobytes() + term.tobytes()).hexdigest())
    venv.close()
    return out


ROOT = Path(__file__).resolve().parent.parent


def python_json(code, cache=None, ahead=False):
    """Runs ``code`` in a fresh Python on this checkout, with the numba cache ``cache`` (an empty
    directory: a cold cache) and, if ``ahead``, a cold env's compiling child as in a user's
    process; its last line of output, as JSON."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MC_ENVS_COMPILE_AHEAD": "1" if ahead else "0"}
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# A code's first lines: what compiles in its process, in order, as "module.function" in ``done``.
DONE = textwrap.dedent(
    """
    import json, os, sys
    from numba.core import event
    done = []
    class _Done(event.Listener):
        def on_start(self, ev):
            pass
        def on_end(self, ev):
            f = ev.data["dispatcher"].py_func
            done.append(f.__module__.rpartition(".")[2] + "." + f.__qualname__)
    event.register("numba:compile", _Done())
    """
)
