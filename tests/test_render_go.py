"""The Go board as a person sees it (offscreen frames, SDL_VIDEODRIVER=dummy): stones where the moves
went, a click or the pass button playing, the last move ringed, the coordinates, the territory and
the score at the end; the territory's owners on ASCII boards against the kernel's area."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pygame_display  # noqa: F401  (autouse: a dummy display for the module)

from mc_envs import render
from mc_envs.games import go_layout as layout
from mc_envs.games import go_text
from mc_envs.games.go_area import owners
from mc_envs.state import State

pygame = pytest.importorskip("pygame")


def go_env(size: int = 9, board: str | None = None, to_move: int = 0):
    """The unwrapped Go env, at an ASCII board's position if one is given."""
    from mc_envs.render.play import make_env

    env = make_env("go", size=size)
    env.reset(seed=0)
    if board is not None:
        snap = env.clone_state()
        state = go_text.parse_board(board, to_move=to_move, max_moves=env.max_moves)
        env.restore_state(State(snap.game, snap.config, state))
    return env


def theme():
    from mc_envs.render.theme import default_theme

    return default_theme()


def drawing():
    from mc_envs.render.draw import go

    return go


def pixel(frame: np.ndarray, xy: tuple[int, int]) -> tuple[int, ...]:
    return tuple(int(v) for v in frame[xy[1], xy[0]])


# -- who owns each point ----------------------------------------------------------------------

WALLS = "\n".join(["....XO..."] * 4 + ["....X.O.."] + ["....XO..."] * 4)


def cells(text: str) -> np.ndarray:
    return np.array([[".XO".index(ch) for ch in row] for row in text.split()], dtype=np.int8)


@pytest.mark.parametrize(
    "board,expected",
    [
        (WALLS, "\n".join(["XXXXXOOOO"] * 4 + ["XXXXX.OOO"] + ["XXXXXOOOO"] * 4)),
        (".....\n.....\n.....\n.....\n.....", ".....\n.....\n.....\n.....\n....."),
        (".X...\nX....\n.....\n.....\n.....", "XXXXX\nXXXXX\nXXXXX\nXXXXX\nXXXXX"),
        (".X.O.\nXX.OO\n.....\n.....\n.....", "XX.OO\nXX.OO\n.....\n.....\n....."),
        ("..X..\n.XOX.\n.X.X.\n..X..\n.....", "XXXXX\nXXOXX\nXX.XX\nXXXXX\nXXXXX"),
    ],
    ids=["walls", "empty", "one-colour", "two-corners", "dead-stones-stay"],
)
def test_owners_on_ascii_boards(board: str, expected: str) -> None:
    own = owners(cells(board))
    assert "\n".join("".join(".XO"[v] for v in row) for row in own) == expected
    black, white = layout.area(go_text.parse_board(board))
    assert (int((own == 1).sum()), int((own == 2).sum())) == (black, white)


def test_owners_refuses_a_bad_board() -> None:
    with pytest.raises(ValueError, match="square"):
        owners(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="0 \\(empty\\), 1 \\(Black\\) or 2"):
        owners(np.full((5, 5), 3))


def test_owners_agrees_with_the_kernels_area_along_random_games() -> None:
    env = go_env(9)
    rng = np.random.default_rng(7)
    for _ in range(150):
        legal = env.legal_actions()
        if len(legal) == 0:
            break
        env.step(int(rng.choice(legal)))
        own = owners(env.board)
        assert (int((own == 1).sum()), int((own == 2).sum())) == env.area()


# -- geometry ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [9, 13, 19])
def test_every_point_and_the_pass_round_trip(size: int) -> None:
    go, t, env = drawing(), theme(), go_env(size)
    for action in range(size * size + 1):
        x, y = go.cell_center(action, env, t)
        assert go.cell_at((x, y), env, t) == action
        if action < size * size:  # a click a little off the point still plays it
            assert go.cell_at((x + 5, y - 5), env, t) == action
    w, h = go.board_size(env, t)
    assert go.cell_at((2, 2), env, t) is None and go.cell_at((w + 5, 5), env, t) is None


@pytest.mark.parametrize("size,count", [(9, 5), (13, 5), (19, 9), (7, 1), (5, 0)])
def test_star_points(size: int, count: int) -> None:
    points = drawing().star_points(size)
    assert len(set(points)) == count
    if size == 19:
        assert {(3, 3), (9, 9), (15, 15), (3, 9)} <= set(points)


@pytest.mark.parametrize("size", [9, 13, 19])
def test_boards_of_every_size_draw(size: int) -> None:
    env = go_env(size)
    for vertex in ("C3", "D4", "pass"):
        env.step(go_text.parse_vertex(size, vertex))
    frame = render.frame(env)
    w, h = drawing().board_size(env, theme())
    assert frame.shape == (h + theme().status_height, w, 3)
    assert w < 900 and h < 800  # 19x19 fits a laptop's screen


# -- stones, the last move, the coordinates ---------------------------------------------------


def test_stones_are_drawn_at_their_points() -> None:
    go, t, env = drawing(), theme(), go_env(9)
    e5, c3 = go_text.parse_vertex(9, "E5"), go_text.parse_vertex(9, "C3")
    before = render.frame(env)
    env.step(e5)
    env.step(c3)
    after = render.frame(env)
    x, y = go.cell_center(e5, env, t)
    r = go._spacing(env, t) // 3  # inside the stone, off the last-move ring and the lines
    assert pixel(before, (x + r, y + r // 2)) == go.WOOD
    assert max(pixel(after, (x + r, y + r // 2))) < 80  # Black
    x, y = go.cell_center(c3, env, t)
    assert pixel(before, (x + r, y + r // 2)) == go.WOOD
    assert min(pixel(after, (x + r, y + r // 2))) > 180  # White


def test_the_last_move_is_ringed() -> None:
    go, t = drawing(), theme()
    played = go_env(9)
    e5 = go_text.parse_vertex(9, "E5")
    played.step(e5)
    same = go_env(9, "\n".join(["........."] * 4 + ["....X...."] + ["........."] * 4), to_move=1)
    assert np.array_equal(played.board, same.board)
    x, y = go.cell_center(e5, played, t)
    s = go._spacing(played, t)
    a, b = render.frame(played), render.frame(same)
    box = (slice(y - s // 2, y + s // 2), slice(x - s // 2, x + s // 2))
    assert not np.array_equal(a[box], b[box])  # the ring
    assert max(pixel(a, (x + s // 5 - 1, y))) > 180  # drawn in white on the black stone
    side = go._board_width(9, s, go._margin(s))
    outside = a[:side, :side].copy()
    outside[box] = b[box]
    assert np.array_equal(outside, b[:side, :side])  # nothing else on the board differs


def test_the_coordinates_are_drawn_without_i() -> None:
    from mc_envs.render.draw import surface_to_array
    from mc_envs.render.theme import blit_centered

    go, t, env = drawing(), theme(), go_env(19)
    n, s, m = go._geometry(env, t)
    surface = pygame.Surface(go.board_size(env, t))
    go.draw(surface, env, t)
    size = max(s // 2, 13)
    for label, centre in [
        ("J", (m + 8 * s, m - s * 3 // 4)),
        ("T", (m + 18 * s, m - s * 3 // 4)),
        ("1", (m - s * 3 // 4, m + 18 * s)),
        ("19", (m - s * 3 // 4, m)),
    ]:
        expected = pygame.Surface(surface.get_size())
        expected.fill(go.WOOD)
        blit_centered(expected, label, size, go.LABEL, centre)
        half = s * 3 // 8
        box = (slice(centre[1] - half, centre[1] + half), slice(centre[0] - half, centre[0] + half))
        got, want = surface_to_array(surface)[box], surface_to_array(expected)[box]
        assert np.array_equal(got, want), label
        assert (want != np.array(go.WOOD)).any()  # there is ink to compare


# -- the end: territory and score -------------------------------------------------------------


def test_the_territory_and_the_score_are_shown_at_the_end() -> None:
    go, t = drawing(), theme()
    env = go_env(9, WALLS)
    pass_ = 81
    playing = render.frame(env)
    env.step(pass_)
    env.step(pass_)
    assert len(env.legal_actions()) == 0
    end = render.frame(env)
    black_area = go_text.parse_vertex(9, "B5")  # empty, Black's
    white_area = go_text.parse_vertex(9, "H2")  # empty, White's
    neutral = 4 * 9 + 5  # the empty point between the walls
    assert pixel(playing, go.cell_center(black_area, env, t)) == go.LINE  # a bare intersection
    assert pixel(end, go.cell_center(black_area, env, t)) == go.STONE[0]
    assert pixel(end, go.cell_center(white_area, env, t)) == go.STONE[1]
    assert pixel(end, go.cell_center(neutral, env, t)) == go.LINE
    assert env.area() == (45, 35)
    status = go.status(env)
    assert status.startswith("Black 45, White 35 + 7.5: Black wins by 2.5"), status


def test_captures_are_counted() -> None:
    go = drawing()
    env = go_env(9)
    for vertex in ("A2", "A1", "B1"):  # Black takes the white stone in the corner
        env.step(go_text.parse_vertex(9, vertex))
    assert env.board[8, 0] == 0
    assert "captured: Black 1, White 0" in go.status(env)


# -- the play window --------------------------------------------------------------------------


def session(size: int):
    from mc_envs.render.play import PlaySession, make_env

    return PlaySession(make_env("go", size=size), env_factory=lambda: make_env("go", size=size))


def click(s, xy) -> None:
    s.process([pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=xy, button=1)])


@pytest.mark.parametrize("size", [9, 13, 19])
def test_a_click_plays_at_the_intersection_and_the_button_passes(size: int) -> None:
    go, s = drawing(), session(size)
    d4 = go_text.parse_vertex(size, "D4")
    x, y = go.cell_center(d4, s.env, s.theme)
    click(s, (x - 3, y + 4))
    assert s.env.board[size - 4, 3] == 1 and s.env.state_view[layout.LAST] == d4
    click(s, go.cell_center(size * size, s.env, s.theme))  # White passes with the button
    assert s.env.state_view[layout.PASSES] == 1 and s.env.state_view[layout.LAST] == size * size
    assert s.env.current_player == 0 and s.moves == 2
    s.process([pygame.event.Event(pygame.KEYDOWN, key=pygame.K_SPACE, unicode=" ", mod=0)])
    assert len(s.env.legal_actions()) == 0  # two passes: the game is over
    surface = pygame.Surface(s.frame_size())
    s.draw(surface)  # the end, with the score, draws


def test_hovering_the_button_lights_it() -> None:
    go, t, env = drawing(), theme(), go_env(9)
    x, y, w, h = go._button(env, t)
    plain, lit = render.frame(env), render.frame(env, highlight=81)
    assert not np.array_equal(plain[y : y + h, x : x + w], lit[y : y + h, x : x + w])
    side = go._board_width(*go._geometry(env, t))
    assert np.array_equal(plain[:, :side], lit[:, :side])


def test_play_takes_the_board_size(monkeypatch, capsys) -> None:
    import mc_envs.render.play as play
    from mc_envs.cli import main

    seen = {}
    monkeypatch.setattr(play, "run", lambda game, **kw: seen.update(kw, game=game) or 0)
    assert main(["play", "go", "--size", "13", "--vs", "random"]) == 0
    assert seen["game"] == "go" and seen["env_kwargs"] == {"size": 13}
    assert play.make_env("go", **seen["env_kwargs"]).size == 13
    monkeypatch.undo()
    assert main(["play", "go", "--size", "4"]) == 2  # refused before a window opens
    assert "Go size must be an integer in 5..19, got 4" in capsys.readouterr().err
