"""Gymnasium's vector entry points: ``mc_envs.vector.entry:<EnvClass>`` for every env class of
:data:`mc_envs.registry.GAMES`, so that ``gym.make_vec(id, vectorization_mode=
"vector_entry_point")`` builds a :class:`~mc_envs.vector.PlanningVectorEnv` of that class."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from mc_envs.registry import GAMES

if TYPE_CHECKING:
    from mc_envs.vector.env import PlanningVectorEnv


def make(entry_point: str, num_envs: int = 1, **kwargs: Any) -> PlanningVectorEnv:
    """The compiled vector env of the single env at ``entry_point`` (``module:Class``)."""
    from mc_envs.vector.env import PlanningVectorEnv

    module, _, name = entry_point.partition(":")
    env_class = getattr(importlib.import_module(module), name)
    return PlanningVectorEnv(env_class, num_envs, **kwargs)


def __getattr__(name: str) -> Callable[..., PlanningVectorEnv]:
    for game in GAMES:
        if game.entry_point.partition(":")[2] == name:
            return partial(make, game.entry_point)
    raise AttributeError(f"module 'mc_envs.vector.entry' has no attribute {name!r}")
