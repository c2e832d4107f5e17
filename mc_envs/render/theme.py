"""Colours and sizes of the drawings. The palette is Okabe & Ito's (2008), chosen so that people
with the common colour-vision deficiencies can still tell the colours apart; SameGame cells can
also carry a letter or a shape (``marks``) so that colour is never the only cue."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mc_envs.registry import GAMES

if TYPE_CHECKING:
    from pygame import Surface
    from pygame.font import Font

RGB = tuple[int, int, int]
# pixels per cell of each drawing, from the games table
_CELLS: dict[str, int] = {key: px for game in GAMES for key, px in game.cell.items()}

# Okabe-Ito: orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple, black.
OKABE_ITO: dict[str, RGB] = {
    "orange": (230, 159, 0),
    "sky_blue": (86, 180, 233),
    "bluish_green": (0, 158, 115),
    "yellow": (240, 228, 66),
    "blue": (0, 114, 178),
    "vermillion": (213, 94, 0),
    "reddish_purple": (204, 121, 167),
    "black": (0, 0, 0),
}

# SameGame colours 1..9 (colour 0 is an empty cell).
SAMEGAME_COLORS: tuple[RGB, ...] = (
    OKABE_ITO["vermillion"],
    OKABE_ITO["sky_blue"],
    OKABE_ITO["yellow"],
    OKABE_ITO["bluish_green"],
    OKABE_ITO["reddish_purple"],
    OKABE_ITO["orange"],
    OKABE_ITO["blue"],
    (153, 153, 153),
    (255, 255, 255),
)
SAMEGAME_LETTERS = "ABCDEFGHI"
# One shape per colour: circle, square, triangle, diamond, cross, ring, bar, dot, star.
SAMEGAME_SHAPES = ("circle", "square", "triangle", "diamond", "cross", "ring", "bar", "dot", "plus")


@dataclass(frozen=True)
class Theme:
    """Everything a drawing needs besides the state.

    Attributes:
        background: the board's background.
        empty: an empty cell (SameGame, Sudoku, two-player boards).
        grid: grid lines.
        text: text and Sudoku givens.
        dim: secondary text, Morpion's empty grid points.
        accent: the highlight (hovered group, next move, selected cell).
        samegame: SameGame colours 1..k.
        marks: ``"none"``, ``"letters"`` or ``"shapes"``: a second cue on SameGame cells.
        player: the stones of players 0 and 1.
        win: the mark on the cells of a winning line (Tic-Tac-Toe, Connect Four).
        morpion_line, morpion_dot, morpion_cross: Morpion's lines, added dots, starting dots.
        cell: pixels per cell, per drawing (the ``cell`` hints of :data:`mc_envs.registry.GAMES`:
            ``"samegame"``, ``"morpion"``, ``"sudoku9"``, ``"sudoku16"`` ...).
        status_height: height of the status strip under the board (0: none).
    """

    background: RGB = (24, 24, 28)
    empty: RGB = (44, 44, 50)
    grid: RGB = (70, 70, 78)
    text: RGB = (236, 236, 236)
    dim: RGB = (110, 110, 118)
    accent: RGB = (255, 255, 255)
    samegame: tuple[RGB, ...] = SAMEGAME_COLORS
    marks: str = "none"
    player: tuple[RGB, RGB] = (OKABE_ITO["orange"], OKABE_ITO["sky_blue"])
    win: RGB = OKABE_ITO["yellow"]
    morpion_line: RGB = OKABE_ITO["sky_blue"]
    morpion_dot: RGB = (236, 236, 236)
    morpion_cross: RGB = OKABE_ITO["orange"]
    morpion_next: RGB = OKABE_ITO["vermillion"]
    sudoku_given: RGB = (236, 236, 236)
    sudoku_played: RGB = OKABE_ITO["sky_blue"]
    sudoku_dead: RGB = OKABE_ITO["vermillion"]
    cell: dict[str, int] = field(default_factory=lambda: dict(_CELLS))
    status_height: int = 24

    def __hash__(self) -> int:  # the dict field would make the generated hash fail
        return id(self)

    def with_(self, **changes: Any) -> Theme:
        """A copy with some fields changed, e.g. ``theme.with_(marks="letters")``."""
        return replace(self, **changes)


@lru_cache(maxsize=1)
def default_theme() -> Theme:
    """The shared default theme."""
    return Theme()


@lru_cache(maxsize=32)
def font(size: int) -> Font:
    """pygame's default font at ``size`` pixels (cached; pygame must be importable)."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    return pygame.font.Font(None, size)


_TEXT_CACHE: dict[tuple[str, int, RGB], Surface] = {}


def text_surface(text: str, size: int, color: RGB) -> Surface:
    """A rendered piece of text; short texts are cached (letters, digits)."""
    key = (text, size, color)
    surf = _TEXT_CACHE.get(key)
    if surf is None:
        surf = font(size).render(text, True, color)
        if len(_TEXT_CACHE) < 4096:
            _TEXT_CACHE[key] = surf
    return surf


def blit_centered(
    surface: Surface, text: str, size: int, color: RGB, center: tuple[int, int]
) -> None:
    """Draws text centred on a point."""
    surf = text_surface(text, size, color)
    surface.blit(surf, surf.get_rect(center=center))
