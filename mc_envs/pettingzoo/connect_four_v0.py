"""Connect Four as a PettingZoo AEC env, in PettingZoo classic's form::

    from mc_envs.pettingzoo import connect_four_v0

    env = connect_four_v0.env()  # raw_env() without the wrappers
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else env.action_space(agent).sample(mask)
        env.step(action)

Observations, rewards and agents: see :mod:`mc_envs.pettingzoo.aec`.
"""

from __future__ import annotations

from pettingzoo import AECEnv

from mc_envs.pettingzoo.aec import TwoPlayerAEC, keep_old_call_form, wrap


def raw_env(render_mode: str | None = None) -> TwoPlayerAEC:
    """The Connect Four AEC env without wrappers: an illegal action raises
    :class:`mc_envs.IllegalActionError` and changes nothing.

    Args:
        render_mode: None or ``"ansi"``.
    """
    return TwoPlayerAEC("connect_four", render_mode=render_mode)


def env(render_mode: str | None = None) -> AECEnv:
    """The Connect Four AEC env with PettingZoo classic's wrappers: an illegal action ends the game
    with -1 for the agent that tried it and 0 for the other.

    Args:
        render_mode: None or ``"ansi"``.
    """
    return wrap(raw_env(render_mode=render_mode))


keep_old_call_form(__name__)
