"""What the two-player drawings share."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.two_player import TwoPlayerEnv
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import UiState

SIDES = ("X", "O")  # the players, as play's status bar names them
Cells = Iterable[tuple[int, int]] | None  # cells (row, col) to mark; None: the game's own


class Grid(NamedTuple):
    """A board of square cells, row 0 at the top, sized by the theme's ``cell[name]``."""

    name: str
    rows: int
    cols: int

    def cell(self, theme: Theme) -> int:
        """Pixels of a cell's side."""
        return theme.cell[self.name]

    def board_size(self, env: TwoPlayerEnv | None, theme: Theme) -> tuple[int, int]:
        """Pixels of the board: width, height (a drawing module's ``board_size``)."""
        return self.cols * self.cell(theme), self.rows * self.cell(theme)

    def start(self, surface: Surface, theme: Theme) -> tuple[ModuleType, int]:
        """Fills the board with the grid colour; returns pygame and the cell size."""
        from mc_envs.render._pygame import require_pygame

        surface.fill(theme.grid, (0, 0, *self.board_size(None, theme)))
        return require_pygame(), self.cell(theme)

    def at(self, pos: tuple[int, int], theme: Theme) -> tuple[int, int] | None:
        """The cell ``(row, col)`` under pixel ``pos``, None off the board."""
        size = self.cell(theme)
        x, y = int(pos[0]), int(pos[1])
        if x < 0 or y < 0 or x >= self.cols * size or y >= self.rows * size:
            return None
        return y // size, x // size

    def centre(self, row: int, col: int, theme: Theme) -> tuple[int, int]:
        """The pixel at the centre of a cell."""
        size = self.cell(theme)
        return col * size + size // 2, row * size + size // 2


def status(env: TwoPlayerEnv) -> str:
    """``"X to move"``, ``"O wins"`` or ``"draw"``, with the number of stones played."""
    stones = int((env.board > 0).sum())
    if len(env.legal_actions()) == 0:
        r = float(env.returns()[0])
        result = "draw" if r == 0 else f"{SIDES[0 if r > 0 else 1]} wins"
        return f"{result}   moves {stones}"
    return f"{SIDES[env.current_player]} to move   moves {stones}"


def click(env: TwoPlayerEnv, cell: int, ui: UiState) -> int | None:
    """The clicked cell (Tic-Tac-Toe) or column (Connect Four) is the action."""
    return cell
