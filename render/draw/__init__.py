"""Pure drawing functions, one module per game.

Each module ``render.draw.<game>`` offers:

- ``board_size(env, theme) -> (width, height)``: the pixels of the board (without the status strip).
- ``draw(surface, env, theme, highlight=None) -> int``: draws the state of ``env`` (an unwrapped
  built-in env) on ``surface``; ``highlight`` is an action (or game-specific value) to emphasise.
  Returns the number of pieces drawn (cells, stones, lines) so tests can check a picture.
- ``cell_at(pos, env, theme) -> int | None``: the board cell under pixel ``pos`` (see each module for
  what a "cell" is: the action itself where a click names one move, otherwise the cell index that
  the play controller turns into a move).
- ``cell_center(cell, env, theme) -> (x, y)``: the inverse, for tests and scripted clicks.
- ``status(env) -> str``: one line for the status strip.

They draw only: no window, no events, no state changes.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# env.game -> drawing module
MODULES = {
    "SameGame": "render.draw.samegame",
    "MorpionSolitaire": "render.draw.morpion",
    "Sudoku": "render.draw.sudoku",
    "LeftMove": "render.draw.abstract",
    "LeftmostPath": "render.draw.abstract",
    "TicTacToe": "render.draw.tictactoe",
    "ConnectFour": "render.draw.connect_four",
}


def module_for(env: Any) -> Any:
    """The drawing module of an env (by its ``game`` name).

    Raises:
        ValueError: the game has no drawing.
    """
    game = getattr(getattr(env, "unwrapped", env), "game", None)
    if game not in MODULES:
        raise ValueError(f"no drawing for game {game!r}; there are drawings for {sorted(MODULES)}")
    return import_module(MODULES[game])


def board_size(env: Any, theme: Any) -> tuple[int, int]:
    """The size of a whole frame: the board plus the status strip."""
    w, h = module_for(env).board_size(env, theme)
    return w, h + theme.status_height


def draw_frame(
    surface: Any, env: Any, theme: Any, highlight: Any = None, status: str | None = None
) -> int:
    """Draws the board and, under it, the status strip (``status`` or the game's own line)."""
    mod = module_for(env)
    n = mod.draw(surface, env, theme, highlight)
    if theme.status_height:
        draw_status(surface, mod.status(env) if status is None else status, theme)
    return n


def draw_status(surface: Any, text: str, theme: Any) -> None:
    """Writes one line in the strip at the bottom of ``surface``."""
    from render.theme import text_surface

    h = theme.status_height
    w, total = surface.get_size()
    surface.fill(theme.background, (0, total - h, w, h))
    surf = text_surface(text, max(h - 4, 10), theme.text)
    surface.blit(surf, (6, total - h + (h - surf.get_height()) // 2))


def surface_to_array(surface: Any) -> Any:
    """A Surface as an ``H x W x 3`` uint8 array (a copy)."""
    import numpy as np

    from render import require_pygame

    pygame = require_pygame()
    w, h = surface.get_size()
    # tobytes is ~3x faster than surfarray.array3d + transpose on this machine class.
    return (
        np.frombuffer(pygame.image.tobytes(surface, "RGB"), dtype=np.uint8).reshape(h, w, 3).copy()
    )
