"""The action space of the built-in envs: a ``Discrete`` that samples legal actions."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import gymnasium as gym
import numpy as np

if TYPE_CHECKING:
    from mc_envs.contract import PlanningContract


class LegalDiscrete(gym.spaces.Discrete):
    """A ``Discrete`` space whose ``sample()`` with no mask draws among the env's legal actions.

    Random agents and Gymnasium's own checks then play legal moves; a copied or unpickled space
    forgets its env and samples like a plain ``Discrete``.
    """

    def bind(self, env: PlanningContract) -> LegalDiscrete:
        """Ties sampling to ``env.action_masks()`` (held by weak reference)."""
        self._masks = weakref.WeakMethod(env.action_masks)
        return self

    def sample(
        self, mask: np.ndarray | None = None, probability: np.ndarray | None = None
    ) -> np.int64:
        """A random action: among the legal ones when no mask or probability is given."""
        masks = getattr(self, "_masks", None)
        if mask is None and probability is None and masks is not None and masks() is not None:
            legal = masks()().astype(np.int8)
            if legal.any():
                mask = legal
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_masks", None)
        return state

    def __deepcopy__(self, memo: dict) -> LegalDiscrete:
        import copy

        clone = LegalDiscrete.__new__(LegalDiscrete)
        clone.__dict__.update(copy.deepcopy(self.__getstate__(), memo))
        return clone
