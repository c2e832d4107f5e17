"""The Morpion Solitaire Gymnasium env (5D, 5T): a thin shell over :mod:`mc_envs.games.morpion`."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from mc_envs.core import LegalDiscrete, PlanningEnv
from mc_envs.games import morpion as rules
from mc_envs.games.morpion_check import check_state
from mc_envs.games.morpion_text import action_to_string, to_text, why_illegal


class MorpionSolitaireEnv(PlanningEnv):
    """Morpion Solitaire (Join Five), variants 5D and 5T, from the standard 36-dot cross.

    ## Description

    A pencil-and-paper puzzle on a grid of points. The game starts with 36 dots in the shape of a
    cross. A move adds one dot on a free point and draws a line of 5 consecutive dots (4 unit
    segments) through it, horizontally, vertically or diagonally; the other 4 dots of the line must
    already exist. In **5T** no unit segment may be used twice (parallel lines may share an end
    dot); in **5D** parallel lines may not share any dot at all (not even touching end to end).
    The score is the number of moves. There are 28 legal moves at the start. Records: 82 moves in
    5D and 178 in 5T (C. D. Rosin, NRPA, 2010-2011); they ship in ``mc_envs/data/morpion`` and
    :mod:`mc_envs.morpion_records` reads, writes and verifies them.

    Coordinates: ``x`` grows to the right, ``y`` downward; grid point ``(x, y)`` is cell
    ``y * size + x``. The cross's corner (point (0, 0) of the MSR record format, the cross filling
    0..9 on both axes) is at grid point :attr:`origin`, which puts the cross in the middle.

    ## Action Space

    ``Discrete(20 * size * size)`` (its ``sample()`` draws a legal action):
    ``action = (cell * 4 + direction) * 5 + pos`` where ``cell`` is the new dot, ``direction`` is
    0 = H (1, 0), 1 = V (0, 1), 2 = DN (1, 1) "\\", 3 = DP (1, -1) "/", and ``pos`` (0..4) is the
    new dot's index along the line (the line starts at ``(x, y) - pos * (dx, dy)``). Every legal
    move has exactly one action; most actions are illegal at any time (use :meth:`legal_actions`
    or ``info["action_mask"]``). :meth:`action_of` and :meth:`move_of` convert from and to MSR
    moves.

    ## Observation Space

    ``Box(0, 1, (5, size, size), uint8)``, indexed ``[plane, y, x]``: plane 0 the dots, planes
    1..4 the drawn unit segments leaving each point in direction H, V, DN, DP.

    ## Rewards

    +1 per move (the score is the number of moves).

    ## Episode End

    Terminates when no legal move remains. No truncation (games are finite: at most 121 moves in
    5D and 705 in 5T, proven bounds).

    ## Arguments

    - ``variant``: ``"5D"`` (default) or ``"5T"``.
    - ``size``: the grid is ``size`` x ``size`` points (default 32, at least 12; the 5T record
      spans 17 x 21 points). A line may not leave the grid.
    - ``render_mode``: None or ``"ansi"`` (a text picture: ``o`` dots, ``- | \\ /`` segments,
      ``X`` two crossing diagonals).
    - ``illegal_action``: ``"terminate"`` (default: an illegal action ends the episode with
      reward 0 (forfeiting the points still to come) and ``info["illegal_action"]``, the state unchanged) or ``"raise"`` (raises
      :class:`mc_envs.IllegalActionError`); see :class:`mc_envs.PlanningEnv`.

    ``reset`` always gives the standard cross: ``seed`` only seeds ``np_random``. Playout policy:
    ``"random"`` (uniform over the sorted legal actions), the default. ``max_score`` is None.

    ## Version History

    - v0: first version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}
    game = "MorpionSolitaire"

    def __init__(
        self,
        variant: str = "5D",
        size: int = rules.DEFAULT_SIZE,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
    ) -> None:
        super().__init__(illegal_action=illegal_action)
        if variant not in rules.VARIANTS:
            raise ValueError(f"variant must be '5D' or '5T', got {variant!r}")
        self._check_render_mode(render_mode)
        size = int(size)
        rules.empty_state(variant, size)  # validates the size
        self.variant = variant
        self.size = size
        self.render_mode = render_mode
        self.origin = rules.cross_origin(size)
        self.kernel = rules.kernel(variant, size)
        self._config = (variant, size)
        self.max_score = None
        self.action_space = LegalDiscrete(20 * size * size).bind(self)
        self.observation_space = spaces.Box(0, 1, (5, size, size), dtype=np.uint8)
        self._set_state(rules.initial_state(variant, size))

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        return rules.initial_state(self.variant, self.size)

    def _start_state(self) -> np.ndarray:
        return rules.initial_state(self.variant, self.size)

    def _check_state(self, data: np.ndarray) -> None:
        check_state(data, self._config)

    def _why_illegal(self, action: int) -> str:
        return why_illegal(self._state, action, self.origin) or "not a legal move"

    def action_to_string(self, action: int) -> str:
        """The move in MSR notation: new dot in the MSR frame, direction, index along the line, e.g. ``"(3,-1) V 0"``."""
        return action_to_string(self._state, action)

    def action_of(self, x: int, y: int, direction: str, pos: int) -> int:
        """The action of an MSR move: new dot ``(x, y)`` in the MSR frame (the cross in 0..9),
        ``direction`` in ``"H" "V" "DN" "DP"``, ``pos`` 0..4. Raises ValueError off the grid."""
        if direction not in rules.DIRECTION_NAMES:
            raise ValueError(f"direction must be one of {rules.DIRECTION_NAMES}, got {direction!r}")
        if not 0 <= pos <= 4:
            raise ValueError(f"pos must be 0..4, got {pos!r}")
        gx, gy = x + self.origin[0], y + self.origin[1]
        if not (0 <= gx < self.size and 0 <= gy < self.size):
            raise ValueError(f"point ({x},{y}) is outside the {self.size}x{self.size} grid")
        return rules.encode(gx, gy, rules.DIRECTION_NAMES.index(direction), pos, self.size)

    def move_of(self, action: int) -> tuple[int, int, str, int]:
        """The MSR move ``(x, y, direction, pos)`` of an action (inverse of :meth:`action_of`)."""
        gx, gy, d, pos = rules.decode(action, self.size)
        return gx - self.origin[0], gy - self.origin[1], rules.DIRECTION_NAMES[d], pos

    def _ansi(self) -> str:
        return f"{to_text(self._state)}\n{self.variant} score {self.score:g}\n"
