"""The one place that imports pygame: :func:`require_pygame` (a leaf module, so every part of
:mod:`render` can use it without importing the package)."""

from __future__ import annotations

import os
from typing import Any

INSTALL_HINT = 'pip install "mc-envs[render]"'


def require_pygame() -> Any:
    """Imports and initialises pygame (display-free parts only) and returns the module.

    Raises:
        ImportError: pygame is missing; the message names the extra to install.
    """
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            f"rendering needs pygame (pygame-ce), which is not installed: {INSTALL_HINT}"
        ) from exc
    if not pygame.font.get_init():
        pygame.font.init()
    return pygame
