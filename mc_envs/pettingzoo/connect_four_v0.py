"""Connect Four as a PettingZoo AEC env, in PettingZoo classic's form: ``connect_four_v0.env()``, and
``connect_four_v0.raw_env()`` without PettingZoo's wrappers (the loop and the render modes:
:mod:`mc_envs.pettingzoo`; observations, rewards and agents: :mod:`mc_envs.pettingzoo.aec`).
"""

from __future__ import annotations

from mc_envs.pettingzoo.aec import env_functions, keep_old_call_form

raw_env, env = env_functions(__name__, "connect_four", "Connect Four")

__all__ = ["env", "raw_env"]

keep_old_call_form(__name__)
