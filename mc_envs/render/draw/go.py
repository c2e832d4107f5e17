"""Go drawing, a placeholder until the Go board of issue 42 (coordinates, the last move, captures,
the territory at the end, a pass button): plain points with the stones on them, and the status
line (whose turn, or the Tromp-Taylor score at the end). A click on a point plays there; the
space bar passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mc_envs.games.go_layout import MOVES

SIDES = ("Black", "White")


def _cell(theme: Any) -> int:
    return theme.cell["go"]


def board_size(env: Any, theme: Any) -> tuple[int, int]:
    """Pixels of the board."""
    n = env.unwrapped.size
    return n * _cell(theme), n * _cell(theme)


def draw(surface: Any, env: Any, theme: Any, highlight: int | None = None) -> int:
    """Draws the points and the stones (Black in the first player's colour); returns the number
    of stones."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    size = _cell(theme)
    board = env.unwrapped.board
    n = board.shape[0]
    surface.fill(theme.grid, (0, 0, n * size, n * size))
    for r in range(n):
        for c in range(n):
            x, y = c * size, r * size
            surface.fill(theme.empty, (x + 1, y + 1, size - 2, size - 2))
            v = int(board[r, c])
            if v:
                centre = (x + size // 2, y + size // 2)
                pygame.draw.circle(surface, theme.player[v - 1], centre, size * 2 // 5)
    if highlight is not None and 0 <= int(highlight) < n * n:
        r, c = divmod(int(highlight), n)
        pygame.draw.rect(surface, theme.accent, (c * size, r * size, size, size), 2)
    return int(np.count_nonzero(board))


def cell_at(pos: tuple[int, int], env: Any, theme: Any) -> int | None:
    """The action (point ``row * n + col``) under pixel ``pos``, None off the board."""
    size, n = _cell(theme), env.unwrapped.size
    x, y = int(pos[0]), int(pos[1])
    if x < 0 or y < 0 or x >= n * size or y >= n * size:
        return None
    return (y // size) * n + x // size


def cell_center(cell: int, env: Any, theme: Any) -> tuple[int, int]:
    """The pixel at the centre of a point."""
    size, n = _cell(theme), env.unwrapped.size
    r, c = divmod(int(cell), n)
    return c * size + size // 2, r * size + size // 2


def status(env: Any) -> str:
    """``"Black to move   move 12"``, or at the end the areas and the winner."""
    base = env.unwrapped
    if len(base.legal_actions()) == 0:
        black, white = base.area()
        r = float(base.returns()[0])
        result = "draw" if r == 0 else f"{SIDES[0 if r > 0 else 1]} wins"
        return f"Black {black}, White {white} + {base.komi:g}: {result}"
    moves = int(base.state_view[MOVES])
    return f"{SIDES[base.current_player]} to move   move {moves + 1}"


def click(env: Any, cell: int, ui: Any) -> int | None:
    """The clicked point is the action."""
    return cell


def key(env: Any, name: str, char: str, ui: Any) -> int | None:
    """The space bar passes."""
    n = env.unwrapped.size
    return n * n if name == "space" else None


HELP = (("click", "an empty point: play there"), ("space", "pass"))
