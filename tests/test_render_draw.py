"""Drawings, rgb_array frames and the lazy pygame import (headless: SDL_VIDEODRIVER=dummy)."""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from helpers import forget_pygame

import mc_envs  # noqa: F401
from mc_envs import render
from mc_envs.envs.abstract import LeftmostPathEnv, LeftMoveEnv
from mc_envs.envs.connect_four import ConnectFourEnv
from mc_envs.envs.morpion import MorpionSolitaireEnv
from mc_envs.envs.samegame import SameGameEnv
from mc_envs.envs.sudoku import SudokuEnv
from mc_envs.envs.tictactoe import TicTacToeEnv
from mc_envs.games import morpion as mrules

pytest.importorskip("pygame")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EASY = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


@pytest.fixture(autouse=True, scope="module")
def _forget_pygame():
    """Other test files check that stepping an env leaves pygame unimported: unload it after."""
    yield
    forget_pygame()


def theme():
    from mc_envs.render.theme import default_theme

    return default_theme()


def pixel(frame: np.ndarray, xy: tuple[int, int]) -> tuple[int, ...]:
    return tuple(int(v) for v in frame[xy[1], xy[0]])


def frame_of(env, highlight=None) -> np.ndarray:
    return render.frame(env, highlight=highlight)


# -- the lazy import ----------------------------------------------------------------------------


def _run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=timeout,
    )


def test_stepping_any_env_leaves_pygame_unimported() -> None:
    """Every id's env (an rgb_array mode set), its compiled vector env and the PettingZoo modules
    step without importing pygame, the drawing or the planners."""
    code = (
        "import sys, gymnasium as gym, mc_envs\n"
        "from mc_envs.pettingzoo import connect_four_v0, go_v0, tictactoe_v0\n"
        "for env_id in sorted(mc_envs.ENVS):\n"
        "    env = gym.make(env_id, render_mode='rgb_array')\n"
        "    env.reset(seed=0)\n"
        "    env.step(int(env.unwrapped.legal_actions()[0]))\n"
        "    vec = gym.make_vec(env_id, num_envs=2, vectorization_mode='vector_entry_point')\n"
        "    vec.reset(seed=0)\n"
        "    vec.step(vec.action_masks().argmax(1))\n"
        "for module in (connect_four_v0, go_v0, tictactoe_v0):\n"
        "    env = module.env(render_mode='ansi')\n"
        "    env.reset(seed=0)\n"
        "    env.step(int(env.last()[0]['action_mask'].argmax()))\n"
        "    env.render()\n"
        "for name in ('pygame', 'mc_envs.render', 'mc_envs.agents'):\n"
        "    assert name not in sys.modules, name + ' imported'\n"
        "print('ok')\n"
    )
    out = _run(code, timeout=600)  # the vector kernels may compile
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_missing_pygame_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pygame'] = None\n"
        "import gymnasium as gym, mc_envs\n"
        "env = gym.make('mc_envs/SameGame-v0', render_mode='rgb_array'); env.reset(seed=0)\n"
        "try:\n"
        "    env.render()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = _run(code)
    assert 'pip install "mc-envs[render]"' in out.stdout, out.stdout + out.stderr


# -- the rgb_array contract ---------------------------------------------------------------------


@pytest.mark.parametrize("env_id", sorted(mc_envs.ENVS))
def test_rgb_array_frames(env_id: str) -> None:
    env = gym.make(env_id, render_mode="rgb_array")
    assert {"ansi", "rgb_array", "human"} <= set(env.metadata["render_modes"])
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    env.step(int(env.unwrapped.legal_actions()[0]))
    second = env.render()
    assert second.shape == first.shape  # a video needs frames of one size
    assert not np.array_equal(first, second)


def test_human_mode_opens_and_closes_a_window() -> None:
    env = gym.make("mc_envs/SameGame-v0", render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    env.step(int(env.unwrapped.legal_actions()[0]))
    env.render()
    assert env.unwrapped._render_window is not None
    env.close()
    assert env.unwrapped._render_window is None


def test_bad_render_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        SudokuEnv(render_mode="video")


# -- colours at the right cells -----------------------------------------------------------------


def test_samegame_colours_at_cells() -> None:
    from mc_envs.render.draw import samegame as d

    board = np.array([[1, 0, 0], [2, 3, 0], [2, 1, 5]])
    env = SameGameEnv(board=board)
    env.reset()
    frame = frame_of(env)
    th = theme()
    for r in range(3):
        for c in range(3):
            want = th.background if board[r, c] == 0 else th.samegame[board[r, c] - 1]
            assert pixel(frame, d.cell_center(r * 3 + c, env, th)) == want, (r, c)


def test_samegame_highlight_outlines_the_group() -> None:
    env = SameGameEnv(board=np.array([[1, 1], [2, 1]]))
    env.reset()
    th = theme()
    frame = frame_of(env, highlight=0)
    size = th.cell["samegame"]
    assert pixel(frame, (size // 2, 1)) == th.accent  # top edge of the group
    plain = frame_of(env)
    assert pixel(plain, (size // 2, 1)) == th.samegame[0]


def test_samegame_marks_change_the_cells() -> None:
    env = SameGameEnv(board=np.array([[1, 2], [3, 4]]))
    env.reset()
    plain = render.frame(env)
    for marks in ("letters", "shapes"):
        marked = render.frame(env, theme().with_(marks=marks))
        assert marked.shape == plain.shape and not np.array_equal(marked, plain)


def test_tictactoe_stones() -> None:
    from mc_envs.render.draw import tictactoe as d

    env = TicTacToeEnv()
    env.reset()
    env.step(4)  # X in the centre
    env.step(0)  # O top left
    th = theme()
    frame = frame_of(env)
    assert pixel(frame, d.cell_center(4, env, th)) == th.player[0]  # the cross's middle
    cx, cy = d.cell_center(0, env, th)
    assert pixel(frame, (cx, cy)) == th.empty  # a ring is empty inside
    r = th.cell["tictactoe"] * 3 // 10
    assert pixel(frame, (cx + r - 1, cy)) == th.player[1]
    assert pixel(frame, d.cell_center(8, env, th)) == th.empty


def test_connect_four_stones() -> None:
    env = ConnectFourEnv()
    env.reset()
    env.step(3)
    env.step(3)
    env.step(0)
    th = theme()
    size = th.cell["connect_four"]
    frame = frame_of(env)

    def at(row: int, col: int):
        return pixel(frame, (col * size + size // 2, row * size + size // 2))

    assert at(5, 3) == th.player[0] and at(4, 3) == th.player[1] and at(5, 0) == th.player[0]
    assert at(3, 3) == th.empty and at(5, 6) == th.empty


def test_sudoku_givens_played_and_dead_cells() -> None:
    from mc_envs.render.draw import sudoku as d

    env = SudokuEnv(puzzle=EASY, branching="all")
    env.reset()
    env.step(2 * 9 + 3)  # row 0, col 2 = 4 (the solution's value)
    th = theme()
    frame = frame_of(env)
    size = th.cell["sudoku9"]

    def colours(cell: int) -> set:
        x, y = d.cell_center(cell, env, th)
        box = frame[y - size // 3 : y + size // 3, x - size // 3 : x + size // 3].reshape(-1, 3)
        return {tuple(int(v) for v in p) for p in box}

    assert th.sudoku_given in colours(0)  # the given 5
    assert th.sudoku_played in colours(2) and th.sudoku_given not in colours(2)
    assert th.sudoku_given not in colours(3) and th.sudoku_played not in colours(3)  # empty


def test_morpion_cross_dots_and_lines() -> None:
    from mc_envs.render.draw import morpion as d

    env = MorpionSolitaireEnv("5D")
    env.reset()
    th = theme()
    frame = frame_of(env)
    ox, oy = env.origin
    for x, y in mrules.CROSS:
        assert pixel(frame, d.point_center(x + ox, y + oy, th)) == th.morpion_cross
    assert pixel(frame, d.point_center(ox, oy, th)) == th.dim  # an empty grid point
    action = int(env.legal_actions()[0])
    env.step(action)
    frame = frame_of(env)
    x, y, direction, pos = mrules.decode(action, env.size)
    dx, dy = mrules.DX[direction], mrules.DY[direction]
    sx, sy = x - pos * dx, y - pos * dy
    for i in range(4):
        a = d.point_center(sx + i * dx, sy + i * dy, th)
        b = d.point_center(sx + (i + 1) * dx, sy + (i + 1) * dy, th)
        assert pixel(frame, ((a[0] + b[0]) // 2, (a[1] + b[1]) // 2)) == th.morpion_line
    assert pixel(frame, d.point_center(x, y, th)) == th.morpion_dot


def test_abstract_slots() -> None:
    from mc_envs.render.draw import abstract as d
    from mc_envs.render.theme import OKABE_ITO

    env = LeftmostPathEnv(depth=4)
    env.reset()
    env.step(0)
    env.step(1)
    assert d.slots(env) == ["left", "right", "todo", "todo"]
    frame = frame_of(env)
    step = d._slot(env)
    y = d.BAR_TOP + 15
    assert pixel(frame, (10 + int(0.5 * step), y)) == OKABE_ITO["sky_blue"]
    assert pixel(frame, (10 + int(1.5 * step), y)) == OKABE_ITO["orange"]
    assert pixel(frame, (10 + int(2.5 * step), y)) == theme().empty


# -- a click at a cell's centre is that cell --------------------------------------------------


def _envs():
    return {
        "samegame": SameGameEnv(position=1),
        "morpion": MorpionSolitaireEnv("5T"),
        "sudoku9": SudokuEnv(puzzle=EASY),
        "sudoku16": SudokuEnv(size=16),
        "tictactoe": TicTacToeEnv(),
        "connect_four": ConnectFourEnv(),
        "leftmove": LeftMoveEnv(depth=5),
    }


@pytest.mark.parametrize("name", list(_envs()))
def test_cell_at_inverts_cell_center(name: str) -> None:
    from mc_envs.render.draw import module_for

    env = _envs()[name]
    env.reset(seed=0)
    mod = module_for(env)
    th = theme()
    cells = {
        "samegame": env.rows * env.cols if name == "samegame" else 0,
        "morpion": getattr(env, "size", 0) ** 2,
        "sudoku9": 81,
        "sudoku16": 256,
        "tictactoe": 9,
        "connect_four": 7,
        "leftmove": 2,
    }[name]
    for cell in range(cells):
        assert mod.cell_at(mod.cell_center(cell, env, th), env, th) == cell
    assert mod.cell_at((-5, -5), env, th) is None
    w, h = mod.board_size(env, th)
    assert mod.cell_at((w + 5, h + 5), env, th) is None
