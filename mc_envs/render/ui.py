"""The play window's interaction state, which the drawing modules' controls read and change, and
the help overlay that the play and replay windows share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.render.theme import Theme

# What a board emphasises: an action, a game's own mark (Sudoku's selected cell, ("cell", i)), or
# nothing.
Highlight = int | tuple[str, int] | None
HELP_SIZE, HELP_TITLE_SIZE, HELP_LINE = 20, 28, 24  # font sizes and line height of the help


@dataclass
class UiState:
    """What the person at the window is pointing at or choosing (no game state).

    Attributes:
        hover: the cell under the pointer (``cell_at``), or None.
        selected: a chosen cell (Morpion: a point with several lines; Sudoku: the cell to fill).
        candidates: the moves among which the person is choosing (Morpion: lines through a point).
        candidate: the index of the shown candidate.
        hint: an agent's suggested action, or None.
        message: a line for the status bar.
        sticky: the selection survives a move (Sudoku's cursor).
    """

    hover: int | None = None
    selected: int | None = None
    candidates: list[int] = field(default_factory=list)
    candidate: int = 0
    hint: int | None = None
    message: str = ""
    sticky: bool = False

    def clear(self, *, keep_selected: bool = False) -> None:
        """Forgets the selection, the candidates and the hint (``keep_selected``: not the cell)."""
        if not keep_selected:
            self.selected, self.sticky = None, False
        self.candidates, self.candidate, self.hint = [], 0, None


def draw_help(
    surface: Surface, lines: Sequence[tuple[str, str]], theme: Theme, title: str = "Help"
) -> None:
    """Draws the help overlay of a window over ``surface``: a veil, ``title``, then one line per
    ``(keys, what they do)``, the keys in a column as wide as the widest."""
    from mc_envs.render._pygame import require_pygame
    from mc_envs.render.theme import font, text_surface

    pg = require_pygame()
    w, h = surface.get_size()
    veil = pg.Surface((w, h), pg.SRCALPHA)
    veil.fill((0, 0, 0, 210))
    surface.blit(veil, (0, 0))
    surface.blit(text_surface(title, HELP_TITLE_SIZE, theme.text), (16, 16))
    column = 16 + max((font(HELP_SIZE).size(keys)[0] for keys, _ in lines), default=0) + 20
    for i, (keys, what) in enumerate(lines):
        y = help_line_top(i)
        surface.blit(text_surface(keys, HELP_SIZE, theme.morpion_line), (16, y))
        surface.blit(text_surface(what, HELP_SIZE, theme.text), (column, y))


def help_line_top(i: int) -> int:
    """The pixel row of line ``i`` of :func:`draw_help` (its bottom is ``HELP_LINE`` lower)."""
    return 52 + HELP_LINE * i


def help_width(lines: Sequence[tuple[str, str]]) -> int:
    """The pixels that :func:`draw_help` needs across for ``lines`` (margins included)."""
    from mc_envs.render.theme import font

    f = font(HELP_SIZE)
    keys = max((f.size(k)[0] for k, _ in lines), default=0)
    what = max((f.size(t)[0] for _, t in lines), default=0)
    return 16 + keys + 20 + what + 16
