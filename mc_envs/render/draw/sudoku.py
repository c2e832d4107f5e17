"""Sudoku drawing: the grid with thick box borders, givens, played values, candidates (9x9).

``highlight`` is an action ``cell * size + value - 1`` (the cell is outlined and the value shown in
the accent colour: the move about to be played) or ``("cell", cell)`` (the selected cell of the
play window). ``cell_at`` gives the cell index ``row * size + col``; the play controller then takes
the value from the keyboard.

Givens (recorded in the state, :func:`mc_envs.games.sudoku.givens_of`) are drawn brighter than
played values.

Play: click a cell (it stays selected), type its value (1-9, then A-G for 16x16); the arrow keys
move the selection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mc_envs.games import sudoku as rules
from mc_envs.render.theme import blit_centered

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.sudoku import SudokuEnv
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import Highlight, UiState


def _cell(env: SudokuEnv, theme: Theme) -> int:
    return theme.cell["sudoku9" if env.size <= 9 else "sudoku16"]


def board_size(env: SudokuEnv, theme: Theme) -> tuple[int, int]:
    """Pixels of the board: ``size * cell`` on both sides (plus the outer border)."""
    side = env.size * _cell(env, theme) + 2
    return side, side


def draw(surface: Surface, env: SudokuEnv, theme: Theme, highlight: Highlight = None) -> int:
    """Draws the grid; returns the number of filled cells."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    n = env.size
    box = rules.box_side(n)
    size = _cell(env, theme)
    state = env.state_view
    grid = rules.grid_of(state)
    domains = state[rules.HEADER + n * n : rules.HEADER + 2 * n * n]
    givens = rules.givens_of(state)
    w, h = board_size(env, theme)
    surface.fill(theme.grid, (0, 0, w, h))
    big = max(size * 2 // 3, 10)
    small = max(size // 3, 8)
    for cell in range(n * n):
        r, c = divmod(cell, n)
        x, y = 1 + c * size, 1 + r * size
        value = int(grid[r, c])
        dead = value == 0 and int(domains[cell]) == 0
        surface.fill(theme.sudoku_dead if dead else theme.empty, (x + 1, y + 1, size - 2, size - 2))
        if value:
            color = theme.sudoku_given if givens[r, c] else theme.sudoku_played
            blit_centered(
                surface, rules.SYMBOLS[value - 1], big, color, (x + size // 2, y + size // 2)
            )
        elif n <= 9 and not dead:
            dom = int(domains[cell])
            third = size // 3
            for v in range(n):
                if dom >> v & 1:
                    cx = x + (v % 3) * third + third // 2 + 1
                    cy = y + (v // 3) * third + third // 2 + 1
                    blit_centered(surface, rules.SYMBOLS[v], small, theme.dim, (cx, cy))
    for i in range(0, n + 1, box):
        surface.fill(theme.text, (i * size, 0, 2, h))
        surface.fill(theme.text, (0, i * size, w, 2))
    if highlight is not None:
        shown: int | None = None  # the value a highlighted action would write
        if isinstance(highlight, tuple):
            cell = int(highlight[1])
        else:
            cell, v = divmod(int(highlight), n)
            shown = v + 1
        r, c = divmod(cell, n)
        rect = (1 + c * size, 1 + r * size, size, size)
        pygame.draw.rect(surface, theme.accent, rect, 3)
        if shown is not None and grid[r, c] == 0:
            x, y = rect[0], rect[1]
            surface.fill(theme.empty, (x + 3, y + 3, size - 6, size - 6))
            blit_centered(
                surface, rules.SYMBOLS[shown - 1], big, theme.accent, (x + size // 2, y + size // 2)
            )
    return int(np.count_nonzero(grid))


def cell_at(pos: tuple[int, int], env: SudokuEnv, theme: Theme) -> int | None:
    """The cell index ``row * size + col`` under pixel ``pos`` (None off the grid)."""
    size = _cell(env, theme)
    x, y = int(pos[0]) - 1, int(pos[1]) - 1
    if x < 0 or y < 0:
        return None
    r, c = y // size, x // size
    if r >= env.size or c >= env.size:
        return None
    return r * env.size + c


def cell_center(cell: int, env: SudokuEnv, theme: Theme) -> tuple[int, int]:
    """The pixel at the centre of a cell."""
    size = _cell(env, theme)
    r, c = divmod(int(cell), env.size)
    return 1 + c * size + size // 2, 1 + r * size + size // 2


def status(env: SudokuEnv) -> str:
    """Filled cells and the outcome."""
    state = env.state_view
    if env.solved:
        tail = "solved"
    elif state[rules.DEAD]:
        tail = "dead end"
    else:
        tail = f"{len(env.legal_actions())} legal moves"
    return f"filled {env.score:g}/{env.max_score:g}   moves {int(state[rules.MOVES])}   {tail}"


def help_lines(env: SudokuEnv) -> tuple[tuple[str, str], ...]:
    """The help overlay's lines: the value keys depend on the size (16 x 16: 1-9 and A-G)."""
    values = "1-9" if env.size == 9 else f"1-9, A-{rules.SYMBOLS[env.size - 1]}"
    return (
        ("click", "a cell: select it"),
        (values, "value for the selected cell"),
        ("arrows", "move the selection"),
    )


_ARROWS = {"left": (0, -1), "right": (0, 1), "up": (-1, 0), "down": (1, 0)}


def click(env: SudokuEnv, cell: int, ui: UiState) -> None:
    """Selects the cell (a value is then typed)."""
    ui.selected, ui.sticky, ui.hint = int(cell), True, None
    ui.message = "type a value"


def key(env: SudokuEnv, name: str, char: str, ui: UiState) -> int | None:
    """Arrows move the selection; a value symbol fills the selected cell."""
    n = env.size
    if name in _ARROWS:
        r, c = divmod(ui.selected or 0, n)
        dr, dc = _ARROWS[name]
        ui.selected, ui.sticky = ((r + dr) % n) * n + (c + dc) % n, True
        return None
    symbol = (char or "").upper()
    if ui.selected is None or not symbol or symbol not in rules.SYMBOLS[:n]:
        return None
    return ui.selected * n + rules.SYMBOLS.index(symbol)


def highlight(env: SudokuEnv, ui: UiState) -> Highlight:
    """The hint, else the selected cell."""
    if ui.hint is not None:
        return ui.hint
    return ("cell", ui.selected) if ui.selected is not None else None


def show_hint(env: SudokuEnv, action: int, ui: UiState) -> None:
    """A hint selects its cell."""
    ui.selected = int(action) // env.size
