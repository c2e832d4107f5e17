"""Morpion Solitaire drawing: the grid points, the starting cross, the added dots and the lines.

Point ``(x, y)`` of the grid (``x`` to the right, ``y`` downward, as in the env) is drawn at pixel
``(x * cell + cell // 2, y * cell + cell // 2)``. ``highlight`` is an action: its line is drawn in
the "next move" colour and its new dot as a ring (the move about to be played, or the candidate
chosen in the play window). ``cell_at`` gives the grid point ``y * size + x`` nearest to a click;
the legal moves with that new dot are :func:`moves_at`.

Play: click a free point; one legal line through it is played at once; with several, the first is
shown: click the point again (or Tab) for the next, click another dot of the shown line or press
Enter to play it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mc_envs.games import morpion as rules

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.morpion import MorpionSolitaireEnv
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import UiState

DOT_RADIUS_FRACTION = 0.2  # of a cell: small enough that segment midpoints show the line colour


def _cell(theme: Theme) -> int:
    return theme.cell["morpion"]


def board_size(env: MorpionSolitaireEnv, theme: Theme) -> tuple[int, int]:
    """Pixels of the board: ``size * cell`` on both sides."""
    c = _cell(theme)
    return env.size * c, env.size * c


def point_center(x: int, y: int, theme: Theme) -> tuple[int, int]:
    """The pixel of grid point ``(x, y)``."""
    c = _cell(theme)
    return x * c + c // 2, y * c + c // 2


_BACKGROUND: dict[tuple, tuple[Surface, Theme]] = {}


def _background(env: MorpionSolitaireEnv, theme: Theme) -> Surface:
    """The empty grid with its points and the starting cross (cached per size and theme)."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    key = (env.size, _cell(theme), id(theme))
    hit = _BACKGROUND.get(key)
    if hit is not None and hit[1] is theme:
        return hit[0]
    surf = pygame.Surface(board_size(env, theme))
    surf.fill(theme.background)
    for y in range(env.size):
        for x in range(env.size):
            surf.set_at(point_center(x, y, theme), theme.dim)
    if len(_BACKGROUND) > 8:
        _BACKGROUND.clear()
    _BACKGROUND[key] = (surf, theme)
    return surf


def lines_of(env: MorpionSolitaireEnv) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The drawn segments merged into maximal straight runs: ``((x0, y0), (x1, y1))`` pairs."""
    c = rules.cells(env.state_view)
    g = env.size
    runs = []
    for d in range(4):
        dx, dy = rules.DX[d], rules.DY[d]
        seg = ((c >> (rules.SEG_SHIFT + d)) & 1).astype(bool)
        ys, xs = np.nonzero(seg)
        for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
            px, py = x - dx, y - dy
            if 0 <= px < g and 0 <= py < g and seg[py, px]:
                continue  # not the start of a run
            ex, ey = x, y
            while 0 <= ex < g and 0 <= ey < g and seg[ey, ex]:
                ex, ey = ex + dx, ey + dy
            runs.append(((x, y), (ex, ey)))
    return runs


def draw(
    surface: Surface, env: MorpionSolitaireEnv, theme: Theme, highlight: int | None = None
) -> int:
    """Draws the grid, lines and dots; returns the number of lines (moves) drawn."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    size = _cell(theme)
    surface.blit(_background(env, theme), (0, 0))
    width = max(size // 8, 2)
    for a, b in lines_of(env):
        pygame.draw.line(
            surface, theme.morpion_line, point_center(*a, theme), point_center(*b, theme), width
        )
    c = rules.cells(env.state_view)
    ys, xs = np.nonzero(c & rules.DOT)
    ox, oy = env.origin
    cross = {(x + ox, y + oy) for x, y in rules.CROSS}
    radius = max(int(size * DOT_RADIUS_FRACTION), 2)
    for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
        color = theme.morpion_cross if (x, y) in cross else theme.morpion_dot
        pygame.draw.circle(surface, color, point_center(x, y, theme), radius)
    if highlight is not None:
        hx, hy, d, pos = rules.decode(int(highlight), env.size)
        dx, dy = rules.DX[d], rules.DY[d]
        start = (hx - pos * dx, hy - pos * dy)
        end = (start[0] + 4 * dx, start[1] + 4 * dy)
        pygame.draw.line(
            surface,
            theme.morpion_next,
            point_center(*start, theme),
            point_center(*end, theme),
            width,
        )
        pygame.draw.circle(surface, theme.morpion_next, point_center(hx, hy, theme), radius + 3, 2)
    return int(env.state_view[rules.H_MOVES])


def cell_at(pos: tuple[int, int], env: MorpionSolitaireEnv, theme: Theme) -> int | None:
    """The grid point ``y * size + x`` nearest to pixel ``pos`` (None off the grid)."""
    size = _cell(theme)
    x, y = int(pos[0]) // size, int(pos[1]) // size
    if pos[0] < 0 or pos[1] < 0 or x >= env.size or y >= env.size:
        return None
    return y * env.size + x


def cell_center(cell: int, env: MorpionSolitaireEnv, theme: Theme) -> tuple[int, int]:
    """The pixel of grid point ``cell = y * size + x``."""
    y, x = divmod(int(cell), env.size)
    return point_center(x, y, theme)


def moves_at(env: MorpionSolitaireEnv, cell: int) -> list[int]:
    """The legal actions whose new dot is grid point ``cell`` (sorted)."""
    legal = env.legal_actions()
    return [int(a) for a in legal[legal // 20 == cell]]


def status(env: MorpionSolitaireEnv) -> str:
    """Variant, score, legal moves."""
    n = len(env.legal_actions())
    tail = "game over" if n == 0 else f"{n} legal moves"
    return f"{env.variant}   score {env.score:g}   {tail}"


HELP = (
    ("click", "a point: play its line, or show its lines"),
    ("click", "the point again: its next line"),
    ("click", "a dot of the shown line: play that line"),
    ("Enter, Space", "play the shown line"),
    ("Tab", "next line through the chosen point"),
)


def _line_message(ui: UiState) -> None:
    ui.message = (
        f"line {ui.candidate + 1}/{len(ui.candidates)}: click the point again for the next,"
        " a dot of the line or Enter to play"
    )


def _on_line(action: int, x: int, y: int, size: int) -> bool:
    ax, ay, d, pos = rules.decode(action, size)
    sx, sy = ax - pos * rules.DX[d], ay - pos * rules.DY[d]
    return any((sx + i * rules.DX[d], sy + i * rules.DY[d]) == (x, y) for i in range(5))


def click(env: MorpionSolitaireEnv, cell: int, ui: UiState) -> int | None:
    """A click on a grid point: plays its only line, or shows its lines one by one; a click on a
    dot of the shown line plays that line."""
    if ui.selected is not None and ui.candidates:
        if cell == ui.selected:
            ui.candidate = (ui.candidate + 1) % len(ui.candidates)
            ui.hint = None
            _line_message(ui)
            return None
        y, x = divmod(int(cell), env.size)
        n = len(ui.candidates)
        for k in range(n):
            action = ui.candidates[(ui.candidate + k) % n]
            if _on_line(action, x, y, env.size):
                return action
    moves = moves_at(env, cell)
    ui.clear()
    if not moves:
        ui.message = "no legal line adds a dot there"
        return None
    if len(moves) == 1:
        return moves[0]
    ui.selected, ui.candidates = int(cell), moves
    _line_message(ui)
    return None


def key(env: MorpionSolitaireEnv, name: str, char: str, ui: UiState) -> int | None:
    """Enter or Space plays the shown line; Tab shows the next one."""
    if name in ("enter", "space") and ui.candidates:
        return ui.candidates[ui.candidate]
    if name == "tab" and ui.candidates:
        ui.candidate = (ui.candidate + 1) % len(ui.candidates)
        _line_message(ui)
    return None


def highlight(env: MorpionSolitaireEnv, ui: UiState) -> int | None:
    """The shown candidate line, else the first line through the point under the pointer."""
    if ui.candidates:
        return ui.candidates[ui.candidate]
    if ui.hover is not None:
        moves = moves_at(env, ui.hover)
        return moves[0] if moves else None
    return None


def show_hint(env: MorpionSolitaireEnv, action: int, ui: UiState) -> None:
    """A hint selects its point, with its line shown among the point's lines."""
    ui.selected = int(action) // 20
    ui.candidates = moves_at(env, ui.selected)
    ui.candidate = ui.candidates.index(action) if action in ui.candidates else 0


def crop(
    env: MorpionSolitaireEnv, final: np.ndarray, theme: Theme, min_width: int
) -> tuple[int, int, int, int]:
    """The board area (pixels ``x, y, w, h``) that a whole game uses, from its final state:
    the dots' bounding box with a margin, at least ``min_width`` wide (replays show only this)."""
    c = _cell(theme)
    last = env.size - 1
    x0, y0 = max(int(final[rules.H_X0]) - 2, 0), max(int(final[rules.H_Y0]) - 2, 0)
    x1, y1 = min(int(final[rules.H_X1]) + 2, last), min(int(final[rules.H_Y1]) + 2, last)
    w, h = (x1 - x0 + 1) * c, (y1 - y0 + 1) * c
    if w < min_width:  # room for the status line
        extra = (min_width - w + c - 1) // c
        x0 = max(0, x0 - (extra + 1) // 2)
        w = min(min_width, env.size * c - x0 * c)
    return x0 * c, y0 * c, w, h
