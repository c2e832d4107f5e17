"""The play window's logic, driven by scripted pygame events (headless: SDL_VIDEODRIVER=dummy)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pygame_display  # noqa: F401  (autouse: a dummy display for the module)

from mc_envs.games import morpion as mrules

pygame = pytest.importorskip("pygame")

EASY = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
BOARD = "1122\n1122\n3344\n3345"


def session_for(game: str, **kwargs):
    from mc_envs.render.play import PlaySession, make_env

    env_kwargs = kwargs.pop("env_kwargs", {})
    env = make_env(game, **env_kwargs)
    return PlaySession(env, env_factory=lambda: make_env(game, **env_kwargs), **kwargs)


def click(session, cell: int, button: int = 1):
    pos = session.drawing.cell_center(cell, session.env, session.theme)
    return pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=button)


def key(k: int, char: str = "", mod: int = 0):
    return pygame.event.Event(pygame.KEYDOWN, key=k, unicode=char, mod=mod)


def post_and_process(session, events):
    pygame.event.clear()
    for e in events:
        pygame.event.post(e)
    return session.process(pygame.event.get())


def test_scripted_samegame_session_with_undo() -> None:
    from mc_envs.render.play import make_env

    s = session_for("samegame", env_kwargs={"board": BOARD})
    cols = s.env.cols
    # hover shows the group of the top-left cell; then three clicks and one undo
    motion = pygame.event.Event(
        pygame.MOUSEMOTION,
        pos=s.drawing.cell_center(1, s.env, s.theme),
        rel=(0, 0),
        buttons=(0, 0, 0),
    )
    post_and_process(s, [motion])
    assert s.highlight() == 0
    state = post_and_process(
        s,
        [
            click(s, 0 * cols + 1),  # the 2x2 group of colour 2 (top left)
            click(s, 0 * cols + 3),  # after the shift: the colour-3 group now at the top left
            click(s, 3 * cols + 0),  # the colour-4 group, bottom left
            key(pygame.K_u, "u"),
        ],
    )
    expected = make_env("samegame", board=BOARD)
    expected.reset()
    expected.step(expected.group_at(0, 1))
    expected.step(expected.group_at(0, 3))
    assert state == expected.clone_state()
    assert s.moves == 2 and s.env.score == expected.score
    post_and_process(s, [key(pygame.K_r, "r")])  # redo
    assert s.moves == 3
    post_and_process(s, [key(pygame.K_z, "z", pygame.KMOD_CTRL)] * 3)
    assert s.moves == 0 and np.array_equal(s.env.board, make_env("samegame", board=BOARD).board)


def test_click_on_a_single_cell_does_nothing() -> None:
    s = session_for("samegame", env_kwargs={"board": BOARD})
    before = s.env.clone_state()
    after = s.process([click(s, 3 * s.env.cols + 3)])  # the lone colour-5 cell
    assert after == before and "group" in s.message


@pytest.mark.parametrize(
    "game,action", [("tictactoe", 4), ("connect4", 3), ("leftmove", 0), ("weakschur", 0)]
)
def test_click_at_a_cell_centre_plays_its_action(game: str, action: int) -> None:
    s = session_for(game)
    s.process([click(s, action)])
    assert s.moves == 1
    assert s.undo_stack[0] != s.env.clone_state()
    ref = type(s.env)()
    ref.reset(seed=0)
    ref.step(action)
    assert s.env.clone_state() == ref.clone_state()


def point_with_choice(s) -> tuple[int, int]:
    """Plays moves until a free point has two legal lines; returns it and its number of lines."""
    for _ in range(40):
        points, counts = np.unique(s.env.legal_actions() // 20, return_counts=True)
        if counts.max() >= 2:
            return int(points[np.argmax(counts)]), int(counts.max())
        assert s.play(int(s.env.legal_actions()[0]))
    raise AssertionError("no point with two lines")


def test_morpion_click_choose_among_lines() -> None:
    s = session_for("morpion5d")
    env = s.env
    point, n = point_with_choice(s)
    start, moves = env.clone_state(), s.moves
    s.process([click(s, point)])
    assert s.selected == point and len(s.candidates) == n and s.moves == moves
    s.process([click(s, point)])  # cycle
    assert s.candidate == 1
    assert s.highlight() == s.candidates[1]
    chosen = s.candidates[1]
    s.process([key(pygame.K_RETURN)])
    assert s.moves == moves + 1
    ref = type(env)("5D")
    ref.reset()
    ref.restore_state(start)
    ref.step(chosen)
    assert env.clone_state() == ref.clone_state()


def test_morpion_click_on_a_dot_of_the_shown_line_plays_it() -> None:
    s = session_for("morpion5t")
    env = s.env
    point, _ = point_with_choice(s)
    moves = s.moves
    s.process([click(s, point)])
    action = s.candidates[0]
    x, y, d, pos = mrules.decode(action, env.size)
    far = 4 if pos == 0 else 0
    fx = x - pos * mrules.DX[d] + far * mrules.DX[d]
    fy = y - pos * mrules.DY[d] + far * mrules.DY[d]
    s.process([click(s, fy * env.size + fx)])
    assert s.moves == moves + 1 and s.undo_stack[-1] != env.clone_state()
    assert int(env._state[mrules.HEADER + y * env.size + x]) & mrules.DOT


def test_sudoku_select_and_type() -> None:
    s = session_for("sudoku", env_kwargs={"puzzle": EASY})
    s.process([click(s, 2)])  # row 0, col 2
    assert s.selected == 2
    s.process([key(pygame.K_9, "9")])  # 9 is already in the box: refused
    assert s.moves == 0
    s.process([key(pygame.K_4, "4")])
    assert s.moves == 1 and s.env.grid[0, 2] == 4
    s.process([key(pygame.K_u, "u")])
    assert s.env.grid[0, 2] == 0


def test_two_player_against_an_agent_in_the_background() -> None:
    from mc_envs.agents import RandomAgent

    s = session_for("connect4", opponent=RandomAgent(seed=1))
    s.process([click(s, 3)])
    s.wait(30)
    assert int((s.env.board > 0).sum()) == 2 and s.env.current_player == 0
    s.process([key(pygame.K_u, "u")])  # back to the human's turn: both moves taken back
    assert int((s.env.board > 0).sum()) == 0 and s.moves == 0


def test_opponent_starts_when_the_human_plays_second() -> None:
    from mc_envs.agents import RandomAgent

    s = session_for("tictactoe", opponent=RandomAgent(seed=0), human_player=1)
    s.wait(30)
    assert int((s.env.board > 0).sum()) == 1 and s.env.current_player == 1


def test_hint_help_new_game_and_drawing() -> None:
    from mc_envs.cli.play import PuzzleHint  # what mc-envs play gives the window in a puzzle

    s = session_for("leftmostpath", env_kwargs={"depth": 6}, hint_agent=PuzzleHint())
    s.process([key(pygame.K_h, "h")])
    s.wait(120)
    assert s.hint == 0  # NMCS level 1 always finds the leftmost path
    s.process([key(pygame.K_F1)])
    assert s.show_help
    surface = pygame.Surface(s.frame_size())
    s.draw(surface)
    s.process([key(pygame.K_ESCAPE)])
    assert not s.show_help
    s.process([key(pygame.K_LEFT), key(pygame.K_RIGHT)])
    assert s.moves == 2
    s.process([key(pygame.K_n, "n")])
    assert s.moves == 0
    s.process([pygame.event.Event(pygame.QUIT)])
    assert s.quit
