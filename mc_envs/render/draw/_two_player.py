"""What the two-player drawings share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mc_envs.render.ui import UiState

NAMES = ("X", "O")


def status(env: Any) -> str:
    """``"X to move"``, ``"O wins"`` or ``"draw"``, with the number of stones played."""
    stones = int((env.board > 0).sum())
    if len(env.legal_actions()) == 0:
        r = float(env.returns()[0])
        result = "draw" if r == 0 else f"{NAMES[0 if r > 0 else 1]} wins"
        return f"{result}   moves {stones}"
    return f"{NAMES[env.current_player]} to move   moves {stones}"


def click(env: Any, cell: int, ui: UiState) -> int | None:
    """The clicked cell (Tic-Tac-Toe) or column (Connect Four) is the action."""
    return cell
