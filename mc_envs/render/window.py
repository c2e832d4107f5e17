"""Windows: the ``"human"`` render mode of the envs and the base of the play and replay windows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mc_envs.render._pygame import require_pygame

if TYPE_CHECKING:
    from pygame import Surface
    from pygame.event import Event

    from mc_envs.contract import Drawn


class Window:
    """A pygame window of a fixed size that shows surfaces at a given frame rate.

    Args:
        size: ``(width, height)`` in pixels.
        title: the window title.
        fps: frames per second for :meth:`tick` (0: no limit).
    """

    def __init__(self, size: tuple[int, int], title: str = "mc-envs", fps: float = 30) -> None:
        pygame = require_pygame()
        pygame.display.init()
        self.pygame = pygame
        self.screen = pygame.display.set_mode(size)
        pygame.display.set_caption(title)
        self.clock = pygame.time.Clock()
        self.fps = fps
        self.closed = False

    def show(self, surface: Surface) -> None:
        """Copies ``surface`` to the window and updates the display."""
        if self.closed:
            return
        if surface.get_size() != self.screen.get_size():
            self.screen = self.pygame.display.set_mode(surface.get_size())
        self.screen.blit(surface, (0, 0))
        self.pygame.display.flip()

    def pump(self) -> list[Event]:
        """Processes pending events; closing the window marks it closed. Returns the events."""
        events = self.pygame.event.get()
        for event in events:
            if event.type == self.pygame.QUIT:
                self.closed = True
        return events

    def tick(self) -> float:
        """Waits so that frames come at most at ``fps`` per second; returns milliseconds passed."""
        return self.clock.tick(self.fps) if self.fps else self.clock.tick()

    def close(self) -> None:
        """Closes the window (the display is shut down)."""
        if not self.closed:
            self.closed = True
        self.pygame.display.quit()


def show_env(env: Drawn) -> None:
    """Shows an env's current state in its own window (created on first use), at
    ``metadata["render_fps"]`` frames per second: the ``"human"`` render mode."""
    from mc_envs.render.draw import board_size, draw_env
    from mc_envs.render.theme import default_theme

    theme = default_theme()
    window = getattr(env, "_render_window", None)
    if window is None or window.closed:
        title = f"mc-envs: {env.game}"
        window = Window(board_size(env, theme), title, env.metadata.get("render_fps", 4))
        env._render_window = window
        env._render_surface = None
    surface = getattr(env, "_render_surface", None)
    if surface is None or surface.get_size() != board_size(env, theme):
        surface = window.pygame.Surface(board_size(env, theme))
        env._render_surface = surface
    draw_env(env, theme, surface=surface)
    window.show(surface)
    window.pump()
    window.tick()
