"""mc-envs: planning-ready game environments for Gymnasium.

``import mc_envs`` registers the ids (``gymnasium.make("mc_envs/SameGame-v0")`` ...) without
importing any game, numba kernel or pygame.
"""

from mc_envs._version import __version__
from mc_envs.core import IllegalActionError, Kernel, PlanningEnv, State, strict
from mc_envs.registry import ENVS, register_all

__all__ = ["ENVS", "IllegalActionError", "Kernel", "PlanningEnv", "State", "__version__", "strict"]

register_all()
