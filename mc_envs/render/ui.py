"""The play window's interaction state, which the drawing modules' controls read and change."""

from __future__ import annotations

from dataclasses import dataclass, field


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
