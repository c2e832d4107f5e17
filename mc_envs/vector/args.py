"""What a :class:`~mc_envs.vector.PlanningVectorEnv` takes, checked: its kwargs and reset
options, each refused with an error that names it."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from mc_envs.core import PlanningEnv
from mc_envs.vector.compiled import NO_OPPONENT, RANDOM_OPPONENT


def unbound(space: Any) -> Any:
    """A copy of the single env's action space that no env is bound to (a LegalDiscrete's copy
    forgets its env: it samples like a Discrete), the vector env's ``single_action_space``."""
    return copy.deepcopy(space)


def opponent_kind(proto: PlanningEnv) -> int:
    """The compiled opponent of the single env ``proto``: NO_OPPONENT or RANDOM_OPPONENT.

    Raises:
        ValueError: an opponent that cannot run compiled (a search, an agent, a callable).
    """
    spec = getattr(proto, "opponent_spec", None)
    if spec is None:
        return NO_OPPONENT
    if isinstance(spec, str) and spec.lower() == "random":
        return RANDOM_OPPONENT
    raise ValueError(
        f"opponent={spec!r} cannot run in the compiled vector env (the compiled opponent is "
        f"'random'); use gym.make_vec(..., vectorization_mode='sync') for it"
    )


def step_limit(steps: Any) -> int | None:
    """``max_episode_steps`` as ``gym.make`` takes it: None or -1 for no limit, else a positive
    int (TimeLimit's checks).

    Raises:
        TypeError: not an integer.
        ValueError: 0 or negative other than -1.
    """
    if steps is None:
        return None
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer):
        raise TypeError(f"max_episode_steps must be None or an integer, got {steps!r}")
    if steps == -1:
        return None
    if steps <= 0:
        raise ValueError(f"max_episode_steps must be positive (or -1 for no limit), got {steps}")
    return int(steps)


def reset_mask(mask: Any, n: int) -> np.ndarray:
    """``options["reset_mask"]`` of a reset of ``n`` sub-envs, checked.

    Raises:
        ValueError: not a bool array of shape ``(n,)``, or no sub-env selected.
    """
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (n,):
        raise ValueError(
            f"options['reset_mask'] must be a bool array of shape ({n},), got {mask!r}"
        )
    if not mask.any():
        raise ValueError("options['reset_mask'] must select at least one sub-env")
    return mask
