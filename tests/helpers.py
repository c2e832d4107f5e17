"""Small helpers shared by the planner tests."""

import gymnasium as gym

import mc_envs  # noqa: F401


def samegame(position):
    """A reset SameGame env (unwrapped) on a standard position."""
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    return env


def best_score(env, memo=None):
    """The exact optimum of a small SameGame from the env's state, by exhaustive search over
    clone/restore (``memo`` maps boards to their optimum)."""
    memo = {} if memo is None else memo
    key = env.board.tobytes()
    if key not in memo:
        snap = env.clone_state()
        best = 0.0
        for a in env.legal_actions():
            _, r, *_ = env.step(a)
            best = max(best, r + best_score(env, memo))
            env.restore_state(snap)
        memo[key] = best
    return memo[key]


def replayed_score(env, actions):
    """The score ``actions`` reach from the env's state; the env is left as it was."""
    snap = env.clone_state()
    for a in actions:
        env.step(a)
    score = env.score
    env.restore_state(snap)
    return score
