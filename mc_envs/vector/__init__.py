"""Compiled vector envs: every sub-env of a batch stepped by one numba call.

``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point", **kwargs)`` returns a
:class:`PlanningVectorEnv` for every id of the suite; :class:`SB3VecEnv` adapts it to
Stable-Baselines3's ``VecEnv`` (imported on first use: it needs the ``rl`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mc_envs.vector.env import PlanningVectorEnv
from mc_envs.vector.state import VectorState

if TYPE_CHECKING:
    from mc_envs.vector.sb3 import SB3VecEnv

__all__ = ["PlanningVectorEnv", "SB3VecEnv", "VectorState"]


def __getattr__(name: str) -> type[SB3VecEnv]:
    if name == "SB3VecEnv":
        from mc_envs.vector.sb3 import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(f"module 'mc_envs.vector' has no attribute {name!r}")
