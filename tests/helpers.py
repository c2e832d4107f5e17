"""Small helpers shared by the planner tests."""

import gymnasium as gym

import mc_envs  # noqa: F401


def samegame(position):
    """A reset SameGame env (unwrapped) on a standard position."""
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    return env


def replayed_score(env, actions):
    """The score ``actions`` reach from the env's state; the env is left as it was."""
    snap = env.clone_state()
    for a in actions:
        env.step(a)
    score = env.score
    env.restore_state(snap)
    return score
