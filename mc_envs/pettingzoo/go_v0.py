"""Go as a PettingZoo AEC env, in PettingZoo classic's form::

    from mc_envs.pettingzoo import go_v0

    env = go_v0.env(size=9, komi=7.5)  # raw_env() without the wrappers
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else env.action_space(agent).sample(mask)
        env.step(action)

``player_0`` is Black and moves first, ``player_1`` White. The game is
:class:`mc_envs.envs.go.GoEnv`'s (Tromp-Taylor rules, positional superko, komi to White; the
arguments ``size``, ``komi``, ``max_moves`` and ``history``); actions are ``row * size + col`` and
``size * size`` passes. Observations are AlphaGo Zero's planes from the agent's side, rewards +1 /
-1 / 0 at the end; render modes as PettingZoo classic's (``"human"`` draws the Go board in a window
at every step, ``"ansi"`` and ``"rgb_array"`` make ``render()`` return text or an ``H x W x 3``
array). See :mod:`mc_envs.pettingzoo.aec`.
"""

from __future__ import annotations

from mc_envs.pettingzoo.aec import env_functions

raw_env, env = env_functions(__name__, "go", "Go")

__all__ = ["env", "raw_env"]
