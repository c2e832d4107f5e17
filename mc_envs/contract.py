"""The planning-env contract as a type: :class:`PlanningContract` (described in :mod:`mc_envs.core`),
:class:`Drawn`, what the front end uses of a built-in env beside it, and :class:`Session`, what a
Go record's save reads of the play window's game."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, SupportsFloat

import gymnasium as gym
import numpy as np

from mc_envs.state import State


class PlanningContract(Protocol):
    """What planners and the conformance suite use of an env's ``env.unwrapped``.

    Every built-in env (:class:`mc_envs.core.PlanningEnv`) provides it; a user's own env that does
    works with every agent on the generic path (:func:`mc_envs.testing.check_planning_env` checks
    one).
    """

    action_space: gym.spaces.Discrete

    @property
    def unwrapped(self) -> gym.Env:
        """The env itself (Gymnasium's ``unwrapped``)."""
        ...

    @property
    def current_player(self) -> int:
        """Whose turn it is: 0 or 1 (always 0 in one-player puzzles)."""
        ...

    @property
    def score(self) -> float:
        """The cumulative score so far."""
        ...

    @property
    def max_score(self) -> float | None:
        """The best score the game allows, if known."""
        ...

    def clone_state(self) -> State:
        """An immutable snapshot of the current state."""
        ...

    def restore_state(self, state: State) -> None:
        """Continues exactly from ``state``."""
        ...

    def legal_actions(self) -> np.ndarray:
        """The legal actions, sorted, as int64; empty exactly when the game is over."""
        ...

    def action_masks(self) -> np.ndarray:
        """A bool mask over the action space, True exactly at :meth:`legal_actions`."""
        ...

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Gymnasium's ``reset``."""
        ...

    def step(self, action: int) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Gymnasium's ``step`` of an action of the action space (planners pass an int)."""
        ...


class Drawn(PlanningContract, Protocol):
    """What the front end (:mod:`mc_envs.render`) uses of an unwrapped built-in env, beside the
    contract: its game's name (which picks the drawing), its render mode, the text of a move, and
    the ``"human"`` mode's window, made on first use."""

    metadata: dict[str, Any]
    _render_window: object
    _render_surface: object

    @property
    def game(self) -> str:
        """The game's name (:data:`mc_envs.registry.GAMES`)."""
        ...

    @property
    def render_mode(self) -> str | None:
        """Gymnasium's ``render_mode``."""
        ...

    def action_to_string(self, action: int) -> str:
        """A move as the game writes it."""
        ...


class Session(Protocol):
    """What :func:`mc_envs.go_sgf.save_session` reads of the play window's game
    (:class:`mc_envs.render.play.PlaySession`): its env, whether the game is over, the moves
    played, the states before each (``undo_stack``) and the person's side."""

    @property
    def env(self) -> PlanningContract: ...
    @property
    def over(self) -> bool: ...
    @property
    def moves(self) -> int: ...
    @property
    def undo_stack(self) -> Sequence[State]: ...
    @property
    def human_player(self) -> int: ...
