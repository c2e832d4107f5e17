"""The Pygame front end: drawing, rgb_array frames, human windows, play and replay.

Nothing here is imported by ``mc_envs`` at module top: ``env.render()`` imports it lazily when
``render_mode`` is ``"rgb_array"`` or ``"human"``, and pygame itself is imported only by
:func:`require_pygame`. A missing pygame raises an ImportError that names the extra to install.

Public entry points:

- :func:`frame` -- an ``H x W x 3`` uint8 picture of an env, drawn offscreen.
- :func:`render_env` -- what ``PlanningEnv.render`` calls for ``"rgb_array"`` and ``"human"``.
- :mod:`mc_envs.render.play` (``mc-envs play GAME``) and :mod:`mc_envs.render.replay` (``mc-envs replay FILE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from mc_envs.render._pygame import INSTALL_HINT, require_pygame
from mc_envs.render.draw import draw_env

if TYPE_CHECKING:
    import gymnasium as gym
    import numpy as np

    from mc_envs.contract import Drawn
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import Highlight


def frame(
    env: gym.Env | Drawn, theme: Theme | None = None, highlight: Highlight = None
) -> np.ndarray:
    """The env drawn offscreen as an ``H x W x 3`` uint8 array (rows first).

    Args:
        env: a built-in env (wrapped or not).
        theme: a :class:`mc_envs.render.theme.Theme`; the default theme when None.
        highlight: passed to the game's drawing function (e.g. an action to emphasise).
    """
    from mc_envs.render.draw import surface_to_array

    return surface_to_array(draw_env(env, theme, highlight))


def render_env(env: gym.Env) -> np.ndarray | None:
    """``env.render()`` for the pygame modes: an array for ``"rgb_array"``, a window for ``"human"``."""
    base = cast("Drawn", env.unwrapped)
    if base.render_mode == "rgb_array":
        return frame(base)
    if base.render_mode == "human":
        from mc_envs.render.window import show_env

        show_env(base)
        return None
    raise ValueError(f"render_env handles 'rgb_array' and 'human', not {base.render_mode!r}")


def close_env(env: Drawn) -> None:
    """Closes the human window of an env, if it has one."""
    window = getattr(env, "_render_window", None)
    if window is not None:
        window.close()
        env._render_window = None


__all__ = ["INSTALL_HINT", "close_env", "draw_env", "frame", "render_env", "require_pygame"]
