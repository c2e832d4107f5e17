"""Go drawing: a wooden board with its grid, star points and coordinates (columns A-T without I on
the top and bottom, rows 1-n counted from the bottom on the sides, as GTP vertices), shaded black and
white stones, the last move ringed, and a panel on the right with the pass button, the stones each
side has captured and, at the end, the Tromp-Taylor score; the territory (empty points that reach
one colour only, :func:`mc_envs.games.go_area.owners`) is then marked with small squares.

Cells are actions: ``row * n + col`` for the intersection of row ``row`` (0 at the top) and column
``col``, and ``n * n`` for the pass button. ``highlight`` (the hovered move, a hint, or the next
move of a replay) shows a ghost stone on its point or lights the pass button. A click plays the
point or passes; the space bar passes too.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from mc_envs.games.go_area import owners
from mc_envs.games.go_layout import CAPTURES, LAST, MOVES
from mc_envs.games.go_text import COLUMNS

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.go import GoEnv
    from mc_envs.render.theme import RGB, Theme
    from mc_envs.render.ui import UiState

SIDES = ("Black", "White")
WOOD = (220, 179, 92)
LINE = (48, 34, 18)
LABEL = (84, 60, 30)
STONE = ((22, 22, 22), (218, 218, 210))  # Black, White
SHINE = ((96, 96, 96), (255, 255, 255))  # the lit side of each stone
RIM = ((0, 0, 0), (120, 120, 112))
PANEL = 140  # pixels of the panel right of the board


def _spacing(env: GoEnv, theme: Theme) -> int:
    # The theme's cell up to 13x13; larger boards shrink to about the 14x14 board's width.
    cell, n = theme.cell["go"], env.size
    return max(12, min(cell, cell * 14 // n))


def _margin(spacing: int) -> int:
    return spacing * 5 // 4


def _geometry(env: GoEnv, theme: Theme) -> tuple[int, int, int]:
    """``(n, spacing, margin)``: point ``(r, c)`` is at ``(margin + c * spacing, margin + r *
    spacing)``."""
    s = _spacing(env, theme)
    return env.size, s, _margin(s)


def _board_width(n: int, s: int, m: int) -> int:
    return 2 * m + (n - 1) * s


def _button(env: GoEnv, theme: Theme) -> tuple[int, int, int, int]:
    """The pass button's rectangle ``(x, y, w, h)``."""
    n, s, m = _geometry(env, theme)
    return _board_width(n, s, m) + 16, 16, PANEL - 32, 36


def board_size(env: GoEnv, theme: Theme) -> tuple[int, int]:
    """Pixels of the board and its panel."""
    n, s, m = _geometry(env, theme)
    side = _board_width(n, s, m)
    return side + PANEL, max(side, 260)


def star_points(n: int) -> list[tuple[int, int]]:
    """The star points (hoshi) of an ``n x n`` board as ``(row, col)``: the 3-3 points (4-4 from
    13x13 up) from 9x9 up, the centre of an odd board, and the side midpoints from 15x15 up."""
    points: list[tuple[int, int]] = []
    if n >= 9:
        e = 2 if n < 13 else 3
        points += [(r, c) for r in (e, n - 1 - e) for c in (e, n - 1 - e)]
        if n % 2 and n >= 15:
            h = n // 2
            points += [(e, h), (n - 1 - e, h), (h, e), (h, n - 1 - e)]
    if n % 2 and n >= 7:
        points.append((n // 2, n // 2))
    return points


def _stone(
    pygame: ModuleType, surface: Surface, colour: int, centre: tuple[int, int], radius: int
) -> None:
    """A stone with a rim and a lit side to the upper left (colour 0 Black, 1 White)."""
    x, y = centre
    pygame.draw.circle(surface, RIM[colour], centre, radius)
    pygame.draw.circle(surface, STONE[colour], centre, max(radius - 1, 1))
    steps = 4
    for k in range(1, steps + 1):
        t = k / steps
        shade = tuple(int(a + (b - a) * t) for a, b in zip(STONE[colour], SHINE[colour]))
        r = max(int(radius * (1 - 0.75 * t)), 1)
        off = int(radius * 0.3 * t)
        pygame.draw.circle(surface, shade, (x - off, y - off), r)


def _text(surface: Surface, text: str, size: int, colour: RGB, centre: tuple[int, int]) -> None:
    from mc_envs.render.theme import blit_centered

    blit_centered(surface, text, size, colour, centre)


def _left(surface: Surface, text: str, size: int, colour: RGB, pos: tuple[int, int]) -> None:
    from mc_envs.render.theme import text_surface

    surface.blit(text_surface(text, size, colour), pos)


def draw(surface: Surface, env: GoEnv, theme: Theme, highlight: int | None = None) -> int:
    """Draws the board, the stones, the marks and the panel; returns the number of stones.

    ``highlight``: an action to emphasise (a ghost stone of the player to move on an empty point,
    or the pass button lit).
    """
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    base = env
    n, s, m = _geometry(env, theme)
    side = _board_width(n, s, m)
    w, h = board_size(env, theme)
    surface.fill(WOOD, (0, 0, side, h))
    surface.fill(theme.background, (side, 0, w - side, h))
    _grid(pygame, surface, n, s, m)
    board = base.board
    radius = max(s * 47 // 100, 3)
    for r in range(n):
        for c in range(n):
            if board[r, c]:
                _stone(pygame, surface, int(board[r, c]) - 1, (m + c * s, m + r * s), radius)
    state = base.state_view
    last = int(state[LAST])
    if 0 <= last < n * n and board[last // n, last % n]:
        r, c = divmod(last, n)
        mark = STONE[1] if board[r, c] == 1 else STONE[0]
        pygame.draw.circle(surface, mark, (m + c * s, m + r * s), max(s // 5, 3), max(s // 16, 2))
    over = len(base.legal_actions()) == 0
    if over:
        _territory(pygame, surface, board, s, m)
    if highlight is not None and 0 <= int(highlight) < n * n and not over:
        r, c = divmod(int(highlight), n)
        if not board[r, c]:
            ghost = STONE[base.current_player]
            pygame.draw.circle(surface, ghost, (m + c * s, m + r * s), radius, max(s // 12, 2))
    _panel(pygame, surface, base, theme, lit=highlight is not None and int(highlight) == n * n)
    return int(np.count_nonzero(board))


def _grid(pygame: ModuleType, surface: Surface, n: int, s: int, m: int) -> None:
    """The lines, the star points and the coordinates of an ``n`` x ``n`` board (spacing ``s``,
    margin ``m``)."""
    end = m + (n - 1) * s
    for i in range(n):
        p = m + i * s
        pygame.draw.line(surface, LINE, (m, p), (end, p), 1)
        pygame.draw.line(surface, LINE, (p, m), (p, end), 1)
    pygame.draw.rect(surface, LINE, (m - 1, m - 1, end - m + 3, end - m + 3), 2)
    for r, c in star_points(n):
        pygame.draw.circle(surface, LINE, (m + c * s, m + r * s), max(s // 10, 3))
    size = max(s // 2, 13)
    for i in range(n):
        p = m + i * s
        for y in (m - s * 3 // 4, end + s * 3 // 4):
            _text(surface, COLUMNS[i], size, LABEL, (p, y))
        for x in (m - s * 3 // 4, end + s * 3 // 4):
            _text(surface, str(n - i), size, LABEL, (x, p))


def _territory(pygame: ModuleType, surface: Surface, board: np.ndarray, s: int, m: int) -> None:
    """A square of its owner's colour on each empty point that one colour alone reaches."""
    own = owners(board)
    half = max(s // 6, 2)
    for r, c in zip(*np.nonzero((board == 0) & (own > 0))):
        x, y = m + int(c) * s, m + int(r) * s
        colour = STONE[int(own[r, c]) - 1]
        pygame.draw.rect(
            surface,
            RIM[int(own[r, c]) - 1],
            (x - half - 1, y - half - 1, 2 * half + 2, 2 * half + 2),
        )
        surface.fill(colour, (x - half, y - half, 2 * half, 2 * half))


def _panel(pygame: ModuleType, surface: Surface, env: GoEnv, theme: Theme, lit: bool) -> None:
    """The pass button, whose turn, the captures, the last move and, at the end, the score."""
    x, y, bw, bh = _button(env, theme)
    over = len(env.legal_actions()) == 0
    fill = theme.grid if not over else theme.empty
    pygame.draw.rect(surface, fill, (x, y, bw, bh), border_radius=6)
    pygame.draw.rect(surface, theme.accent if lit else theme.dim, (x, y, bw, bh), 2, 6)
    _text(surface, "Pass", 24, theme.text if not over else theme.dim, (x + bw // 2, y + bh // 2))
    state = env.state_view
    top = y + bh + 16
    if not over:
        mover = env.current_player
        _stone(pygame, surface, mover, (x + 8, top + 7), 8)
        _left(surface, f"{SIDES[mover]} to play", 20, theme.text, (x + 22, top))
    top += 32
    _left(surface, "Captured", 20, theme.dim, (x, top))
    for i in range(2):
        yy = top + 24 + i * 24
        _stone(pygame, surface, i, (x + 8, yy + 7), 8)
        _left(surface, f"{SIDES[i]} {int(state[CAPTURES + i])}", 20, theme.text, (x + 22, yy))
    top += 82
    last = int(state[LAST])
    if last >= 0:
        _left(surface, f"Last: {env.action_to_string(last)}", 20, theme.text, (x, top))
    if over:
        black, white = env.area()
        result = _result(env).replace(" by ", "\nby ").split("\n")
        lines = (f"Black {black}", f"White {white} + {env.komi:g}", *result)
        for i, line in enumerate(lines):
            _left(surface, line, 20, theme.text, (x, top + 30 + 22 * i))


def _result(env: GoEnv) -> str:
    """``"Black wins by 3.5"``, ``"White wins by 0.5"`` or ``"draw"``."""
    black, white = env.area()
    margin = black - white - env.komi
    r = float(env.returns()[0])
    if r == 0:
        return "draw"
    return f"{SIDES[0 if r > 0 else 1]} wins by {abs(margin):g}"


def cell_at(pos: tuple[int, int], env: GoEnv, theme: Theme) -> int | None:
    """The action under pixel ``pos``: the nearest intersection, the pass (``n * n``) on the pass
    button, None off the grid (more than half a spacing beyond its edge) and in the panel."""
    n, s, m = _geometry(env, theme)
    x, y = int(pos[0]), int(pos[1])
    bx, by, bw, bh = _button(env, theme)
    if bx <= x < bx + bw and by <= y < by + bh:
        return n * n
    c, r = round((x - m) / s), round((y - m) / s)
    if not (0 <= r < n and 0 <= c < n):
        return None
    return r * n + c


def cell_center(cell: int, env: GoEnv, theme: Theme) -> tuple[int, int]:
    """The pixel of an action: its intersection, or the centre of the pass button."""
    n, s, m = _geometry(env, theme)
    if int(cell) == n * n:
        bx, by, bw, bh = _button(env, theme)
        return bx + bw // 2, by + bh // 2
    r, c = divmod(int(cell), n)
    return m + c * s, m + r * s


def status(env: GoEnv) -> str:
    """``"Black to move   move 12   captured: Black 2, White 0"``, or at the end the areas and
    the winner."""
    base = env
    state = base.state_view
    taken = f"captured: Black {int(state[CAPTURES])}, White {int(state[CAPTURES + 1])}"
    if len(base.legal_actions()) == 0:
        black, white = base.area()
        return f"Black {black}, White {white} + {base.komi:g}: {_result(base)}   {taken}"
    moves = int(state[MOVES])
    return f"{SIDES[base.current_player]} to move   move {moves + 1}   {taken}"


def click(env: GoEnv, cell: int, ui: UiState) -> int | None:
    """The clicked point is the action (the pass button: the pass)."""
    return cell


def key(env: GoEnv, name: str, char: str, ui: UiState) -> int | None:
    """The space bar passes."""
    n = env.size
    return n * n if name == "space" else None


HELP = (
    ("click", "an empty point: play there; the Pass button: pass"),
    ("Space", "pass"),
)
