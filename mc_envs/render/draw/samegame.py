"""SameGame drawing: one square per cell, colour-blind-safe colours, optional letters or shapes.

``highlight`` is an action (the canonical cell of a group, or any cell of it): its group is outlined
and the points it would score are written on it. ``cell_at`` gives the cell index
``row * cols + col`` under a pixel (the cell's own action number); :func:`click` turns it into the group's action.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from mc_envs.games import samegame as sg
from mc_envs.render.theme import SAMEGAME_LETTERS, SAMEGAME_SHAPES, blit_centered

if TYPE_CHECKING:
    from pygame import Rect, Surface

    from mc_envs.envs.samegame import SameGameEnv
    from mc_envs.render.theme import RGB, Theme
    from mc_envs.render.ui import UiState

GAP = 1  # pixels between cells


def _cell(theme: Theme) -> int:
    return theme.cell["samegame"]


def board_size(env: SameGameEnv, theme: Theme) -> tuple[int, int]:
    """Pixels of the board: ``cols * cell`` by ``rows * cell``."""
    c = _cell(theme)
    return env.cols * c, env.rows * c


def group_cells(board: np.ndarray, row: int, col: int) -> list[tuple[int, int]]:
    """The 4-connected same-colour cells around ``(row, col)`` (empty list on an empty cell)."""
    color = board[row, col]
    if color == 0:
        return []
    rows, cols = board.shape
    seen, stack = {(row, col)}, [(row, col)]
    while stack:
        r, c = stack.pop()
        for q in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if q not in seen and 0 <= q[0] < rows and 0 <= q[1] < cols and board[q] == color:
                seen.add(q)
                stack.append(q)
    return sorted(seen)


def group_points(n: int) -> int:
    """The points of removing a group of ``n`` cells: (n - 2)^2."""
    return (n - 2) ** 2 if n >= 2 else 0


_CACHE: dict[tuple, tuple[Surface, Surface, np.ndarray, Theme]] = {}


def _cached(shape: tuple[int, int], size: int, theme: Theme) -> tuple[Surface, Surface, np.ndarray]:
    """A one-pixel-per-cell surface, the gap overlay and the palette array for a board shape."""
    from mc_envs.render._pygame import require_pygame

    key = (shape, size, id(theme))
    hit = _CACHE.get(key)
    if hit is not None and hit[3] is theme:
        return hit[:3]
    pygame = require_pygame()
    rows, cols = shape
    small = pygame.Surface((cols, rows))
    overlay = pygame.Surface((cols * size, rows * size))
    key_color = (255, 0, 254)
    overlay.fill(key_color)
    overlay.set_colorkey(key_color)
    for i in range(1, max(rows, cols) + 1):
        overlay.fill(theme.background, (i * size - GAP, 0, GAP, rows * size))
        overlay.fill(theme.background, (0, i * size - GAP, cols * size, GAP))
    colors = [theme.background] + [theme.samegame[k % len(theme.samegame)] for k in range(9)]
    palette = np.array(colors, dtype=np.uint8)
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[key] = (small, overlay, palette, theme)
    return small, overlay, palette


def _mark(
    surface: Surface, pygame: ModuleType, kind: str, rect: Rect, color: int, size: int
) -> None:
    ink = (0, 0, 0)
    cx, cy = rect.center
    r = max(size // 4, 2)
    shape = SAMEGAME_SHAPES[(color - 1) % len(SAMEGAME_SHAPES)]
    if kind == "letters":
        blit_centered(
            surface, SAMEGAME_LETTERS[(color - 1) % 9], max(size * 3 // 4, 8), ink, (cx, cy)
        )
    elif shape == "circle":
        pygame.draw.circle(surface, ink, (cx, cy), r, 2)
    elif shape == "square":
        pygame.draw.rect(surface, ink, (cx - r, cy - r, 2 * r, 2 * r), 2)
    elif shape == "triangle":
        pygame.draw.polygon(surface, ink, [(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], 2)
    elif shape == "diamond":
        pygame.draw.polygon(
            surface, ink, [(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], 2
        )
    elif shape == "cross":
        pygame.draw.line(surface, ink, (cx - r, cy - r), (cx + r, cy + r), 2)
        pygame.draw.line(surface, ink, (cx - r, cy + r), (cx + r, cy - r), 2)
    elif shape == "ring":
        pygame.draw.circle(surface, ink, (cx, cy), r, 1)
        pygame.draw.circle(surface, ink, (cx, cy), max(r // 2, 1), 1)
    elif shape == "bar":
        pygame.draw.rect(surface, ink, (cx - r, cy - 1, 2 * r, 3))
    elif shape == "dot":
        pygame.draw.circle(surface, ink, (cx, cy), max(r // 2, 2))
    else:
        pygame.draw.line(surface, ink, (cx - r, cy), (cx + r, cy), 2)
        pygame.draw.line(surface, ink, (cx, cy - r), (cx, cy + r), 2)


def draw(surface: Surface, env: SameGameEnv, theme: Theme, highlight: int | None = None) -> int:
    """Draws the board; returns the number of non-empty cells drawn."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    size = _cell(theme)
    board = sg.board_of(env.state_view)
    w, h = board_size(env, theme)
    small, overlay, palette = _cached(board.shape, size, theme)
    # One pixel per cell, scaled up, then the gaps between cells: ~20x faster than a fill per cell.
    pygame.surfarray.blit_array(small, palette[board].transpose(1, 0, 2))
    pygame.transform.scale(small, (w, h), surface.subsurface((0, 0, w, h)))
    surface.blit(overlay, (0, 0))
    inner = size - GAP
    rows, cols = np.nonzero(board)
    colors = board[rows, cols]
    if theme.marks != "none":
        for r, c, k in zip(rows.tolist(), cols.tolist(), colors.tolist(), strict=True):
            _mark(
                surface, pygame, theme.marks, pygame.Rect(c * size, r * size, inner, inner), k, size
            )
    if highlight is not None:
        hr, hc = divmod(int(highlight), env.cols)
        if 0 <= hr < env.rows and 0 <= hc < env.cols:
            cells = group_cells(board, hr, hc)
            if len(cells) >= 2:
                _outline(surface, pygame, cells, size, theme.accent)
                r0, c0 = cells[0]
                label = f"+{group_points(len(cells))}"
                blit_centered(
                    surface,
                    label,
                    max(size * 3 // 4, 10),
                    theme.accent,
                    (c0 * size + size // 2, max(r0 * size - size // 3, size // 3)),
                )
    return len(colors)


def _outline(
    surface: Surface, pygame: ModuleType, cells: list[tuple[int, int]], size: int, color: RGB
) -> None:
    """Draws the border of a set of cells (edges not shared with another cell of the set)."""
    inside = set(cells)
    for r, c in cells:
        x, y = c * size, r * size
        if (r - 1, c) not in inside:
            pygame.draw.line(surface, color, (x, y), (x + size - 1, y), 3)
        if (r + 1, c) not in inside:
            pygame.draw.line(surface, color, (x, y + size - 2), (x + size - 1, y + size - 2), 3)
        if (r, c - 1) not in inside:
            pygame.draw.line(surface, color, (x, y), (x, y + size - 1), 3)
        if (r, c + 1) not in inside:
            pygame.draw.line(surface, color, (x + size - 2, y), (x + size - 2, y + size - 1), 3)


def cell_at(pos: tuple[int, int], env: SameGameEnv, theme: Theme) -> int | None:
    """The cell index ``row * cols + col`` under pixel ``pos``, or None off the board."""
    size = _cell(theme)
    x, y = int(pos[0]), int(pos[1])
    if x < 0 or y < 0:
        return None
    r, c = y // size, x // size
    if r >= env.rows or c >= env.cols:
        return None
    return r * env.cols + c


def cell_center(cell: int, env: SameGameEnv, theme: Theme) -> tuple[int, int]:
    """The pixel at the centre of a cell."""
    size = _cell(theme)
    r, c = divmod(int(cell), env.cols)
    return c * size + size // 2, r * size + size // 2


def status(env: SameGameEnv) -> str:
    """Score, moves, cells left."""
    s = env.state_view
    over = "  game over" if len(env.legal_actions()) == 0 else ""
    return f"score {env.score:g}   moves {int(s[sg.MOVES])}   cells left {int(s[sg.LEFT])}{over}"


HELP = (("click", "a group of 2 or more: remove it"),)


def click(env: SameGameEnv, cell: int, ui: UiState) -> int | None:
    """The action of the group under the clicked cell (None, with a message, off a group)."""
    action = env.group_at(*divmod(int(cell), env.cols))
    if action is None:
        ui.message = "not a group of 2 or more"
    return action


def highlight(env: SameGameEnv, ui: UiState) -> int | None:
    """The hint, else the group under the pointer."""
    if ui.hint is not None:
        return ui.hint
    if ui.hover is None or len(env.legal_actions()) == 0:
        return None
    return env.group_at(*divmod(int(ui.hover), env.cols))
