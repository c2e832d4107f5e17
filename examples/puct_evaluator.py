"""PUCT guided by your own evaluator: a function from a batch of leaves to (priors, values).

Here a hand-written Connect Four evaluator stands in for a trained network: it prefers the centre
columns and knows nothing of values (0 for every leaf). PUCT calls it on up to ``batch_size``
leaves at once. Run: python examples/puct_evaluator.py
"""

import gymnasium as gym
import numpy as np

import mc_envs  # noqa: F401  (registers the ids)
from mc_envs.agents import PUCT

CENTRE = np.array([1, 2, 3, 4, 3, 2, 1], dtype=float)


def evaluator(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """observations: (leaves, 2, 6, 7) stones of the player to move and of the other player;
    masks: (leaves, 7) legal columns. Returns priors (leaves, 7) and values (leaves,) in [-1, 1]
    for the player to move."""
    priors = np.where(masks, CENTRE, 0.0)
    return priors / priors.sum(axis=1, keepdims=True), np.zeros(len(observations))


def main() -> None:
    env = gym.make("mc_envs/ConnectFour-v0")
    env.reset(seed=0)
    for column in (0, 6, 1, 6, 2):  # X threatens to complete the bottom row at column 3
        env.step(column)
    agent = PUCT(evaluator=evaluator, batch_size=8, iterations=400, form="alphazero", seed=0)
    result = agent.search(env)
    actions, visits = result.root_actions, result.root_visits
    assert actions is not None and visits is not None  # a tree search gives its root's statistics
    best = int(actions[np.argmax(visits)])
    print("visits per column:", dict(zip(actions.tolist(), visits.tolist())))
    print("O plays column", best)


if __name__ == "__main__":
    main()
