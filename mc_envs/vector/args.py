"""What a :class:`~mc_envs.vector.PlanningVectorEnv` takes, checked: its kwargs, reset
options and step actions, each refused with an error that names it."""

from __future__ import annotations

import copy
from typing import TypeVar

import numpy as np

from mc_envs.core import IllegalActionError, PlanningEnv
from mc_envs.vector.compiled import NO_OPPONENT, RANDOM_OPPONENT

_INT64 = np.dtype(np.int64)
S = TypeVar("S")  # a space


def unbound(space: S) -> S:
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


def step_limit(steps: object) -> int | None:
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


def reset_mask(mask: object, n: int) -> np.ndarray:
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


def checked_actions(actions: object, autoreset: np.ndarray, size: int) -> np.ndarray:
    """A step's actions as a writable int64 array of N in range (``autoreset`` has N flags):
    booleans and whole floats as integers, and a resetting sub-env's value ignored (clipped).

    Raises:
        IllegalActionError: not N integers of the action space ``0..size - 1``, naming the
            sub-env and the value.
    """
    n = autoreset.shape[0]
    acts = np.asarray(actions)
    if acts.shape != (n,):
        raise IllegalActionError(
            actions,
            f"expected an array of {n} actions (one per sub-env), got shape {acts.shape}",
        )
    if acts.dtype is _INT64:  # one pass for both bounds: a negative read unsigned is >= 2**63
        within = acts.view(np.uint64).max() < size
    else:
        within = acts.dtype.kind in "iu" and acts.min() >= 0 and acts.max() < size
    if within:
        acts = np.ascontiguousarray(acts, dtype=np.int64)  # the usual case: all in range
        return acts if acts.flags.writeable else acts.copy()  # (a read-only one: a new type)
    if acts.dtype.kind == "b":  # as the single env and SyncVectorEnv: False is 0, True is 1
        acts = acts.astype(np.int64)
    elif acts.dtype.kind == "f":
        whole = np.isfinite(acts) & (acts == np.round(acts))
        if not whole.all():
            i = int(np.flatnonzero(~whole)[0])
            raise IllegalActionError(acts[i], f"sub-env {i}: not an integer action")
    elif acts.dtype.kind not in "iu":
        raise IllegalActionError(
            actions, f"actions must be integers, got an array of dtype {acts.dtype}"
        )
    out = ((acts < 0) | (acts >= size)) & ~autoreset  # resetting sub-envs ignore theirs
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise IllegalActionError(acts[i], f"sub-env {i}: outside the action space 0..{size - 1}")
    return np.ascontiguousarray(np.clip(acts, 0, size - 1), dtype=np.int64)
