"""NMCS on an env you write yourself: implement the planning-env contract, nothing else.

The puzzle: walk ``length`` steps on a line of coins; each step goes 1 or 2 cells right and picks
up the coin where it lands. The best walk is known by dynamic programming, so we can check NMCS.

    python examples/custom_env.py
"""

import gymnasium as gym
import numpy as np

from mc_envs import IllegalActionError, State
from mc_envs.agents import NMCS


class CoinWalk(gym.Env):
    """A one-player puzzle with the planning-env contract (clone/restore, legal actions, score)."""

    def __init__(self, coins, length):
        self.coins = np.asarray(coins, dtype=np.int64)
        self.length = length
        self.action_space = gym.spaces.Discrete(2)  # 0: one cell, 1: two cells
        self.observation_space = gym.spaces.Box(0, len(coins), (2,), dtype=np.int64)
        self.max_score = None
        self.current_player = 0
        self.reset()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.steps, self.score = 0, 0, 0.0
        return self._obs(), self._info()

    def _obs(self):
        return np.array([self.pos, self.steps], dtype=np.int64)

    def _info(self):
        return {"action_mask": self.action_masks(), "current_player": 0, "score": self.score}

    def legal_actions(self):
        if self.steps == self.length:
            return np.zeros(0, dtype=np.int64)
        return np.array([a for a in (0, 1) if self.pos + a + 1 < len(self.coins)], dtype=np.int64)

    def action_masks(self):
        mask = np.zeros(2, dtype=bool)
        mask[self.legal_actions()] = True
        return mask

    def step(self, action):
        if action not in self.legal_actions():
            raise IllegalActionError(action, "off the end of the line or the walk is over")
        self.pos += int(action) + 1
        self.steps += 1
        gain = float(self.coins[self.pos])
        self.score += gain
        done = len(self.legal_actions()) == 0
        return self._obs(), gain, done, False, self._info()

    def clone_state(self):
        return State(
            "CoinWalk", (len(self.coins), self.length), np.array([self.pos, self.steps, self.score])
        )

    def restore_state(self, state):
        if not isinstance(state, State) or state.game != "CoinWalk":
            raise ValueError(f"not a CoinWalk state: {state!r}")
        self.pos, self.steps, self.score = (
            int(state.data[0]),
            int(state.data[1]),
            float(state.data[2]),
        )


def best_walk(coins, length):
    """The exact optimum by dynamic programming over (position, steps)."""
    best = {(0, 0): 0}
    for step in range(length):
        for (pos, s), value in list(best.items()):
            if s != step:
                continue
            for jump in (1, 2):
                if pos + jump < len(coins):
                    key = (pos + jump, step + 1)
                    best[key] = max(best.get(key, -1), value + coins[pos + jump])
    return max(v for (p, s), v in best.items() if s == max(s for _, s in best))


if __name__ == "__main__":
    coins = np.random.default_rng(1).integers(0, 10, size=40)
    env = CoinWalk(coins, length=15)
    result = NMCS(level=2, seed=0).search(env)  # no kernel: the generic path over the contract
    print(f"NMCS level 2: {result.score:g} with {result.actions} in {result.playouts} playouts")
    print(f"optimum by dynamic programming: {best_walk(coins, 15)}")
