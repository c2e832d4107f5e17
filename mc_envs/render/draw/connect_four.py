"""Connect Four drawing: 7 columns x 6 rows, player 0's stones orange, player 1's sky blue.

``highlight`` is an action (a column): the column is outlined and a ghost stone shows where a stone
would land. The stones of a winning four are ringed in ``theme.win``. ``cell_at`` gives the column
under a pixel (any row of the column).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mc_envs.games.connect_four import winning_line
from mc_envs.render.draw._two_player import SIDES as SIDES
from mc_envs.render.draw._two_player import Cells, Grid
from mc_envs.render.draw._two_player import click as click
from mc_envs.render.draw._two_player import status as status

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.connect_four import ConnectFourEnv
    from mc_envs.render.theme import Theme

GRID = Grid("connect_four", rows=6, cols=7)
ROWS, COLS = GRID.rows, GRID.cols
board_size = GRID.board_size


def draw(
    surface: Surface,
    env: ConnectFourEnv,
    theme: Theme,
    highlight: int | None = None,
    *,
    win: Cells = None,
) -> int:
    """Draws the board; returns the number of stones. ``win``: the cells ``(row, col)`` to ring
    (None: the winning four, :func:`mc_envs.games.connect_four.winning_line`; ``()``: none)."""
    pygame, size = GRID.start(surface, theme)
    board = env.board
    radius = size * 2 // 5
    for r in range(ROWS):
        for c in range(COLS):
            v = int(board[r, c])
            color = theme.empty if v == 0 else theme.player[v - 1]
            pygame.draw.circle(surface, color, GRID.centre(r, c, theme), radius)
    for r, c in winning_line(env.state_view) if win is None else win:
        ring = max(size // 16, 3)
        pygame.draw.circle(surface, theme.win, GRID.centre(r, c, theme), size // 2 - 3, ring)
    if highlight is not None and 0 <= int(highlight) < COLS:
        c = int(highlight)
        pygame.draw.rect(surface, theme.accent, (c * size, 0, size, ROWS * size), 3)
        free = np.nonzero(board[:, c] == 0)[0]
        if len(free) and len(env.legal_actions()):
            ghost = theme.player[env.current_player]
            pygame.draw.circle(surface, ghost, GRID.centre(int(free[-1]), c, theme), radius, 4)
    return int(np.count_nonzero(board))


def cell_at(pos: tuple[int, int], env: ConnectFourEnv, theme: Theme) -> int | None:
    """The action (the column) under pixel ``pos``, None off the board."""
    cell = GRID.at(pos, theme)
    return None if cell is None else cell[1]


def cell_center(cell: int, env: ConnectFourEnv, theme: Theme) -> tuple[int, int]:
    """The pixel at the centre of a column's top cell."""
    return GRID.centre(0, int(cell), theme)


HELP = (("click", "a column: drop a stone in it"),)
