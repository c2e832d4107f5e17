"""LeftMove and LeftmostPath drawing: a bar of ``depth`` move slots and two buttons, Left and Right.

The state keeps counts, not the walk itself, so the bar shows what the score depends on: for
LeftMove the left moves (sky blue) and right moves (orange) played so far, as a tally; for
LeftmostPath the moves on the leftmost path (sky blue), the first right move (orange), then the moves
that no longer count (grey). ``cell_at`` maps a click on a button to its action (0 = left,
1 = right); ``highlight`` outlines a button.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mc_envs.games import abstract as rules
from mc_envs.render.theme import OKABE_ITO, blit_centered

if TYPE_CHECKING:
    from pygame import Surface

    from mc_envs.envs.abstract import TreeEnv
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import UiState

WIDTH = 480
BAR_TOP, BUTTON_TOP = 40, 90


def _slot(env: TreeEnv) -> float:
    return (WIDTH - 20) / env.depth


def board_size(env: TreeEnv, theme: Theme) -> tuple[int, int]:
    """Pixels of the board."""
    return WIDTH, BUTTON_TOP + 2 * theme.cell["abstract"] + 10


def _buttons(theme: Theme) -> list[tuple[int, int, int, int]]:
    h = 2 * theme.cell["abstract"]
    return [(10, BUTTON_TOP, WIDTH // 2 - 15, h), (WIDTH // 2 + 5, BUTTON_TOP, WIDTH // 2 - 15, h)]


def slots(env: TreeEnv) -> list[str]:
    """What each of the ``depth`` slots shows: ``"left"``, ``"right"``, ``"off"`` or ``"todo"``."""
    s = env.state_view
    moves, count, on_path = int(s[rules.MOVES]), int(s[rules.COUNT]), int(s[rules.ON_PATH])
    if int(s[rules.KIND]) == rules.LEFTMOVE:
        played = ["left"] * count + ["right"] * (moves - count)
    else:
        played = ["left"] * count
        if not on_path:
            played += ["right"] + ["off"] * (moves - count - 1)
    return played + ["todo"] * (env.depth - moves)


def draw(surface: Surface, env: TreeEnv, theme: Theme, highlight: int | None = None) -> int:
    """Draws the bar and the buttons; returns the number of moves played."""
    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame()
    w, h = board_size(env, theme)
    surface.fill(theme.background, (0, 0, w, h))
    blit_centered(surface, f"{env.game}  depth {env.depth}", 22, theme.text, (WIDTH // 2, 18))
    colors = {
        "left": OKABE_ITO["sky_blue"],
        "right": OKABE_ITO["orange"],
        "off": theme.dim,
        "todo": theme.empty,
    }
    step = _slot(env)
    for i, kind in enumerate(slots(env)):
        x = 10 + int(i * step)
        surface.fill(colors[kind], (x, BAR_TOP, max(int(step) - 2, 1), 30))
    over = len(env.legal_actions()) == 0
    for action, (rect, label) in enumerate(
        zip(_buttons(theme), ("< Left (0)", "Right (1) >"), strict=True)
    ):
        color = theme.dim if over else colors["left" if action == 0 else "right"]
        pygame.draw.rect(surface, color, rect, border_radius=8)
        if highlight == action:
            pygame.draw.rect(surface, theme.accent, rect, 3, border_radius=8)
        blit_centered(
            surface, label, 28, (0, 0, 0), (rect[0] + rect[2] // 2, rect[1] + rect[3] // 2)
        )
    return int(env.state_view[rules.MOVES])


def cell_at(pos: tuple[int, int], env: TreeEnv, theme: Theme) -> int | None:
    """The action of the button under pixel ``pos`` (0 = left, 1 = right), else None."""
    x, y = int(pos[0]), int(pos[1])
    for action, (bx, by, bw, bh) in enumerate(_buttons(theme)):
        if bx <= x < bx + bw and by <= y < by + bh:
            return action
    return None


def cell_center(cell: int, env: TreeEnv, theme: Theme) -> tuple[int, int]:
    """The centre of a button."""
    bx, by, bw, bh = _buttons(theme)[int(cell)]
    return bx + bw // 2, by + bh // 2


def status(env: TreeEnv) -> str:
    """Moves, left count, score."""
    s = env.state_view
    over = "   game over" if len(env.legal_actions()) == 0 else ""
    return (
        f"moves {int(s[rules.MOVES])}/{env.depth}   counted left moves {int(s[rules.COUNT])}"
        f"   score {env.score:g}{over}"
    )


HELP = (
    ("click", "a button: go left / right"),
    ("Left, Right", "go left / right"),
)


def click(env: TreeEnv, cell: int, ui: UiState) -> int | None:
    """The clicked button is the action."""
    return cell


def key(env: TreeEnv, name: str, char: str, ui: UiState) -> int | None:
    """The arrow keys: left (0) and right (1)."""
    return {"left": 0, "right": 1}.get(name)
