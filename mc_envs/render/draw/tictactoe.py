"""Tic-Tac-Toe drawing: a 3 x 3 board, X (player 0) as a cross, O (player 1) as a ring.

``highlight`` is an action (a cell ``row * 3 + col``), outlined. The cells of a winning three are
tinted with the winner's colour and framed in ``theme.win``. ``cell_at`` gives that action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mc_envs.games.tictactoe import winning_line
from mc_envs.render.draw._two_player import SIDES as SIDES
from mc_envs.render.draw._two_player import Cells, Grid
from mc_envs.render.draw._two_player import click as click
from mc_envs.render.draw._two_player import status as status

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.tictactoe import TicTacToeEnv
    from mc_envs.render.theme import Theme

ROWS = COLS = 3
GRID = Grid("tictactoe", ROWS, COLS)
board_size = GRID.board_size


def draw(
    surface: Surface,
    env: TicTacToeEnv,
    theme: Theme,
    highlight: int | None = None,
    *,
    win: Cells = None,
) -> int:
    """Draws the board; returns the number of stones. ``win``: the cells ``(row, col)`` to mark
    (None: the winning three, :func:`mc_envs.games.tictactoe.winning_line`; ``()``: none)."""
    marked = set(winning_line(env.state_view) if win is None else win)
    pygame, size = GRID.start(surface, theme)
    board = env.board
    r_out = size * 3 // 10
    for r in range(ROWS):
        for c in range(COLS):
            x, y = c * size, r * size
            v = int(board[r, c])
            if (r, c) in marked:
                tint = _blend(theme.empty, theme.player[max(v, 1) - 1], 0.35)
                surface.fill(tint, (x + 2, y + 2, size - 4, size - 4))
                pygame.draw.rect(surface, theme.win, (x + 2, y + 2, size - 4, size - 4), 4)
            else:
                surface.fill(theme.empty, (x + 2, y + 2, size - 4, size - 4))
            cx, cy = x + size // 2, y + size // 2
            if v == 1:
                t = max(size // 12, 3)
                color = theme.player[0]
                pygame.draw.line(
                    surface, color, (cx - r_out, cy - r_out), (cx + r_out, cy + r_out), t
                )
                pygame.draw.line(
                    surface, color, (cx - r_out, cy + r_out), (cx + r_out, cy - r_out), t
                )
            elif v == 2:
                pygame.draw.circle(surface, theme.player[1], (cx, cy), r_out, max(size // 12, 3))
    if highlight is not None:
        r, c = divmod(int(highlight), COLS)
        pygame.draw.rect(surface, theme.accent, (c * size, r * size, size, size), 3)
    return int(np.count_nonzero(board))


def _blend(a: tuple[int, ...], b: tuple[int, ...], t: float) -> tuple[int, ...]:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))


def cell_at(pos: tuple[int, int], env: TicTacToeEnv, theme: Theme) -> int | None:
    """The action (cell ``row * 3 + col``) under pixel ``pos``, None off the board."""
    cell = GRID.at(pos, theme)
    return None if cell is None else cell[0] * COLS + cell[1]


def cell_center(cell: int, env: TicTacToeEnv, theme: Theme) -> tuple[int, int]:
    """The pixel at the centre of a cell."""
    return GRID.centre(*divmod(int(cell), COLS), theme)


HELP = (("click", "an empty cell: play there"),)
