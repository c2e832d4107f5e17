"""Weak Schur drawing: the parts as rows of coloured numbers, wrapped in blocks of integers.

Integers ``1..L`` are laid out in blocks of ``W`` columns; in each block every part has a row, and
integer ``i`` is a coloured square with its number in the row of its part (an empty square in the
other rows). ``L`` is ``WS(k)`` where known, else the best known partition's length, so frames keep
one size; integers beyond ``L`` (a new record) are counted in the status line only.

``highlight`` is an action (a part): the next integer is shown as a ring in that part's row.
``cell_at`` gives the part of the row under a pixel, which a click plays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mc_envs.games import weak_schur as rules
from mc_envs.render.theme import blit_centered

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.weak_schur import WeakSchurEnv
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import UiState

LABEL = 28  # pixels of the part names at the left


def _cell(theme: Theme) -> int:
    return theme.cell["weak_schur"]


def _layout(env: WeakSchurEnv) -> tuple[int, int]:
    """(integers shown L, columns per block W)."""
    shown = rules.KNOWN.get(env.k) or rules.BEST_KNOWN[env.k]
    width = 20 if shown <= 70 else 40 if shown <= 200 else 80
    return shown, width


def board_size(env: WeakSchurEnv, theme: Theme) -> tuple[int, int]:
    """Pixels: ``W`` columns wide, ``ceil(L / W)`` blocks of ``k + 1`` rows high."""
    shown, width = _layout(env)
    blocks = -(-shown // width)
    return LABEL + width * _cell(theme), blocks * (env.k + 1) * _cell(theme)


def _box(env: WeakSchurEnv, theme: Theme, i: int, part: int) -> tuple[int, int, int, int]:
    """The square of integer ``i`` (from 1) in the row of ``part``."""
    _, width = _layout(env)
    c = _cell(theme)
    block, col = divmod(i - 1, width)
    return LABEL + col * c, (block * (env.k + 1) + part) * c, c - 1, c - 1


def draw(surface: Surface, env: WeakSchurEnv, theme: Theme, highlight: int | None = None) -> int:
    """Draws the parts; returns the number of integers placed."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    state = env.state_view
    n, k = int(state[rules.N]), env.k
    shown, width = _layout(env)
    w, h = board_size(env, theme)
    surface.fill(theme.background, (0, 0, w, h))
    c = _cell(theme)
    text = max(c * 2 // 3, 8)
    for block in range(-(-shown // width)):
        for p in range(k):
            y = (block * (k + 1) + p) * c
            blit_centered(surface, rules.PARTS[p], text, theme.dim, (LABEL // 2, y + c // 2))
    for i in range(1, shown + 1):
        part = int(state[rules.HEADER + i - 1]) if i <= n else -1
        for p in range(k):
            box = _box(env, theme, i, p)
            color = theme.samegame[p % len(theme.samegame)] if p == part else theme.empty
            surface.fill(color, box)
            if p == part:
                blit_centered(surface, str(i), text, (0, 0, 0), pygame.Rect(box).center)
    if highlight is not None and n < shown and 0 <= int(highlight) < k:
        box = _box(env, theme, n + 1, int(highlight))
        pygame.draw.rect(surface, theme.accent, box, 2)
        blit_centered(surface, str(n + 1), text, theme.accent, pygame.Rect(box).center)
    return n


def cell_at(pos: tuple[int, int], env: WeakSchurEnv, theme: Theme) -> int | None:
    """The part whose row is under pixel ``pos`` (in any block), None elsewhere."""
    x, y = int(pos[0]), int(pos[1])
    w, h = board_size(env, theme)
    if not (LABEL <= x < w and 0 <= y < h):
        return None
    row = (y // _cell(theme)) % (env.k + 1)
    return row if row < env.k else None


def cell_center(cell: int, env: WeakSchurEnv, theme: Theme) -> tuple[int, int]:
    """The centre of the first square of a part's row."""
    x, y, w, h = _box(env, theme, 1, int(cell))
    return x + w // 2, y + h // 2


HELP = (("click", "a part's row: put the next integer there"),)


def click(env: WeakSchurEnv, cell: int, ui: UiState) -> int:
    """A click on a part's row puts the next integer there."""
    return cell


def status(env: WeakSchurEnv) -> str:
    """n, the next integer and where it fits."""
    state = env.state_view
    n = int(state[rules.N])
    legal = env.legal_actions()
    if len(legal) == 0:
        return f"k {env.k}   1..{n} placed   game over"
    fits = " ".join(rules.PARTS[int(a)] for a in legal)
    return f"k {env.k}   1..{n} placed   {n + 1} fits in {fits}"
