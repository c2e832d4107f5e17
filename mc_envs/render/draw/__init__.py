"""Drawing and controls, one module per game.

Each module ``mc_envs.render.draw.<game>`` offers:

- ``board_size(env, theme) -> (width, height)``: the pixels of the board (without the status strip).
- ``draw(surface, env, theme, highlight=None) -> int``: draws the state of ``env`` (an unwrapped
  built-in env) on ``surface``; ``highlight`` is an action (or game-specific value) to emphasise.
  Returns the number of pieces drawn (cells, stones, lines) so tests can check a picture. The
  two-player drawings mark the winning line and take ``win=`` (the cells to mark; ``()`` none).
- ``cell_at(pos, env, theme) -> int | None``: the board cell under pixel ``pos`` (see each module for
  what a "cell" is); ``cell_center(cell, env, theme) -> (x, y)`` is the inverse.
- ``status(env) -> str``: one line for the status strip.
- ``click(env, cell, ui) -> action | None``: what a left click on ``cell`` does in the play window:
  the action to play, or None (having perhaps changed the selection or the message in ``ui``, a
  :class:`mc_envs.render.ui.UiState`).

and optionally ``key(env, name, char, ui) -> action | None`` (a key press: ``name`` is ``"left"``,
``"right"``, ``"up"``, ``"down"``, ``"enter"``, ``"space"``, ``"tab"`` or ``""``, ``char`` the
typed text), ``highlight(env, ui)`` (what to emphasise now; default: the hint, else the hovered
cell when it is a legal action), ``show_hint(env, action, ui)`` (how a hint is shown; default: it
becomes ``ui.hint``), ``HELP`` or ``help_lines(env)`` (the game's lines of the help overlay:
``("click", what a click does)``, then the game's keys), and ``SIDES`` in two-player games (the
players' names, ``("X", "O")``). The functions of this package below apply
those defaults, so the play and replay windows name no game.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, cast

from mc_envs.registry import drawing_of
from mc_envs.render._pygame import require_pygame

if TYPE_CHECKING:
    import gymnasium as gym
    import numpy as np
    from pygame import Surface

    from mc_envs.contract import Drawn
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import Highlight, UiState


def module_for(env: Drawn) -> ModuleType:
    """The drawing module of an env: the ``drawing`` of its game in :data:`mc_envs.registry.GAMES`.

    Raises:
        ValueError: the game has no drawing.
    """
    game = getattr(getattr(env, "unwrapped", env), "game", None)
    return import_module(f"mc_envs.render.draw.{drawing_of(game)}")


# -- controls -------------------------------------------------------------------------------------


def click(env: Drawn, cell: int, ui: UiState) -> int | None:
    """The action of a left click on ``cell`` (None: nothing to play; ``ui`` may have changed)."""
    return module_for(env).click(env, cell, ui)


def key(env: Drawn, name: str, char: str, ui: UiState) -> int | None:
    """The action of a key press for the game (None if the game does not use the key)."""
    handler = getattr(module_for(env), "key", None)
    return None if handler is None else handler(env, name, char, ui)


def highlight(env: Drawn, ui: UiState) -> Highlight:
    """What the board should emphasise now (the hint, the selection, the hovered move)."""
    own = getattr(module_for(env), "highlight", None)
    if own is not None:
        return own(env, ui)
    if ui.hint is not None:
        return ui.hint
    legal = env.legal_actions()
    return ui.hover if ui.hover is not None and ui.hover in set(legal.tolist()) else None


def show_hint(env: Drawn, action: int, ui: UiState) -> None:
    """Shows an agent's suggested move."""
    own = getattr(module_for(env), "show_hint", None)
    ui.hint = action
    if own is not None:
        own(env, action, ui)


def help_lines(env: Drawn) -> tuple[tuple[str, str], ...]:
    """The game's own lines of the help overlay (keys, what they do): the module's
    ``help_lines(env)`` if it has one, else its ``HELP``."""
    mod = module_for(env)
    own = getattr(mod, "help_lines", None)
    return tuple(own(env) if own is not None else getattr(mod, "HELP", ()))


# -- frames ---------------------------------------------------------------------------------------


def board_size(env: Drawn, theme: Theme) -> tuple[int, int]:
    """The size of a whole frame: the board plus the status strip."""
    w, h = module_for(env).board_size(env, theme)
    return w, h + theme.status_height


def draw_frame(
    surface: Surface,
    env: Drawn,
    theme: Theme,
    highlight: Highlight = None,
    status: str | None = None,
) -> int:
    """Draws the board and, under it, the status strip (``status`` or the game's own line)."""
    mod = module_for(env)
    n = mod.draw(surface, env, theme, highlight)
    if theme.status_height:
        draw_status(surface, mod.status(env) if status is None else status, theme)
    return n


def draw_env(
    env: gym.Env | Drawn,
    theme: Theme | None = None,
    highlight: Highlight = None,
    surface: Surface | None = None,
) -> Surface:
    """The env drawn on a pygame Surface (a new one unless ``surface`` is given)."""
    from mc_envs.render.theme import default_theme

    pygame = require_pygame()
    base = cast("Drawn", env.unwrapped)
    theme = theme or default_theme()
    if surface is None:
        surface = pygame.Surface(board_size(base, theme))
    draw_frame(surface, base, theme, highlight)
    return surface


def draw_status(surface: Surface, text: str, theme: Theme) -> None:
    """Writes one line in the strip at the bottom of ``surface``, in a smaller font if it would
    not fit the width otherwise (down to 10 pixels)."""
    from mc_envs.render.theme import font, text_surface

    h = theme.status_height
    w, total = surface.get_size()
    surface.fill(theme.background, (0, total - h, w, h))
    size = max(h - 4, 10)
    while size > 10 and font(size).size(text)[0] > w - 12:
        size -= 1
    surf = text_surface(text, size, theme.text)
    surface.blit(surf, (6, total - h + (h - surf.get_height()) // 2))


def surface_to_array(surface: Surface) -> np.ndarray:
    """A Surface as an ``H x W x 3`` uint8 array (a copy)."""
    import numpy as np

    pygame = require_pygame()
    w, h = surface.get_size()
    # tobytes is ~3x faster than surfarray.array3d + transpose on this machine class.
    return (
        np.frombuffer(pygame.image.tobytes(surface, "RGB"), dtype=np.uint8).reshape(h, w, 3).copy()
    )
