"""The one place that imports pygame: :func:`require_pygame` (a leaf module, so every part of
:mod:`render` can use it without importing the package)."""

from __future__ import annotations

import os
from types import ModuleType

from mc_envs.extras import require

INSTALL_HINT = 'pip install "mc-envs[render]"'


def require_pygame(what: str = "rendering") -> ModuleType:
    """Imports and initialises pygame (display-free parts only) and returns the module.

    Args:
        what: what needs pygame, the start of the error message.

    Raises:
        mc_envs.extras.MissingExtra: pygame is missing (an ImportError naming the extra to
            install, ``pip install "mc-envs[render]"``).
    """
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    pygame = require("pygame", "render", what)
    if not pygame.font.get_init():
        pygame.font.init()
    return pygame
