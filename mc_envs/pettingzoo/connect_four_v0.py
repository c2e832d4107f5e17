"""Connect Four as a PettingZoo AEC env, in PettingZoo classic's form::

    from mc_envs.pettingzoo import connect_four_v0

    env = connect_four_v0.env()  # raw_env() without the wrappers
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else env.action_space(agent).sample(mask)
        env.step(action)

Render modes as PettingZoo classic's: ``env(render_mode="human")`` draws a window at every step,
``"ansi"`` and ``"rgb_array"`` make ``render()`` return text or an ``H x W x 3`` array.
Observations, rewards, agents and render modes: see :mod:`mc_envs.pettingzoo.aec`.
"""

from __future__ import annotations

from mc_envs.pettingzoo.aec import env_functions, keep_old_call_form

raw_env, env = env_functions(__name__, "connect_four", "Connect Four")

__all__ = ["env", "raw_env"]

keep_old_call_form(__name__)
