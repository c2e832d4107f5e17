"""Connect Four drawing: 7 columns x 6 rows, player 0's stones orange, player 1's sky blue.

``highlight`` is an action (a column): the column is outlined and a ghost stone shows where a stone
would land. The stones of a winning four are ringed in ``theme.win``. ``cell_at`` gives the column
under a pixel (any row of the column).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from mc_envs.games.connect_four import winning_line
from mc_envs.render.draw._two_player import NAMES
from mc_envs.render.draw._two_player import click as click
from mc_envs.render.draw._two_player import status as _status

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.render.theme import Theme

SIDES = NAMES  # the players, as play's status bar names them
ROWS, COLS = 6, 7


def _cell(theme: Theme) -> int:
    return theme.cell["connect_four"]


def board_size(env: Any, theme: Theme) -> tuple[int, int]:
    """Pixels of the board."""
    return COLS * _cell(theme), ROWS * _cell(theme)


def draw(
    surface: Surface,
    env: Any,
    theme: Theme,
    highlight: int | None = None,
    *,
    win: Iterable[tuple[int, int]] | None = None,
) -> int:
    """Draws the board; returns the number of stones.

    ``win``: the cells ``(row, col)`` to ring as the winning line (None: the winning four of the
    position, :func:`mc_envs.games.connect_four.winning_line`; ``()``: none).
    """
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    size = _cell(theme)
    board = env.board
    w, h = board_size(env, theme)
    surface.fill(theme.grid, (0, 0, w, h))
    radius = size * 2 // 5
    for r in range(ROWS):
        for c in range(COLS):
            v = int(board[r, c])
            color = theme.empty if v == 0 else theme.player[v - 1]
            pygame.draw.circle(surface, color, (c * size + size // 2, r * size + size // 2), radius)
    for r, c in winning_line(env.state_view) if win is None else win:
        centre = (c * size + size // 2, r * size + size // 2)
        pygame.draw.circle(surface, theme.win, centre, size // 2 - 3, max(size // 16, 3))
    if highlight is not None and 0 <= int(highlight) < COLS:
        c = int(highlight)
        pygame.draw.rect(surface, theme.accent, (c * size, 0, size, h), 3)
        free = np.nonzero(board[:, c] == 0)[0]
        if len(free) and len(env.legal_actions()):
            r = int(free[-1])
            ghost = theme.player[env.current_player]
            pygame.draw.circle(
                surface, ghost, (c * size + size // 2, r * size + size // 2), radius, 4
            )
    return int(np.count_nonzero(board))


def cell_at(pos: tuple[int, int], env: Any, theme: Theme) -> int | None:
    """The action (the column) under pixel ``pos``, None off the board."""
    size = _cell(theme)
    x, y = int(pos[0]), int(pos[1])
    if x < 0 or y < 0 or x >= COLS * size or y >= ROWS * size:
        return None
    return x // size


def cell_center(cell: int, env: Any, theme: Theme) -> tuple[int, int]:
    """The pixel at the centre of a column's top cell."""
    size = _cell(theme)
    return int(cell) * size + size // 2, size // 2


def status(env: Any) -> str:
    """Whose turn, or the result."""
    return _status(env)


HELP = (("click", "a column: drop a stone in it"),)
