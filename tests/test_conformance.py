"""Every registered id through the conformance suite, and the suite catching broken envs."""

import gymnasium as gym
import numpy as np
import pytest

import mc_envs
from mc_envs.core import IllegalActionError, State
from mc_envs.testing import ConformanceError, check_planning_env


@pytest.mark.parametrize("env_id", sorted(mc_envs.ENVS))
def test_registered_env_conforms(env_id):
    check_planning_env(lambda: gym.make(env_id), seed=3)


class Counter(gym.Env):
    """A toy puzzle: add 1 or 2 until the total reaches 6; score = number of moves of size 2."""

    def __init__(self, forget_score_on_restore=False, mutable_snapshot=False):
        self.action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.spaces.Box(0, 10, (1,), dtype=np.int64)
        self.max_score = None
        self.forget = forget_score_on_restore
        self.mutable = mutable_snapshot
        self.total, self.score, self.data = 0, 0.0, np.zeros(2)

    current_player = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.total, self.score = 0, 0.0
        self.data = np.zeros(2)
        return self._obs(), self._info()

    def _obs(self):
        return np.array([self.total], dtype=np.int64)

    def _info(self):
        return {"action_mask": self.action_masks(), "current_player": 0, "score": self.score}

    def legal_actions(self):
        if self.total >= 6:
            return np.zeros(0, dtype=np.int64)
        return np.array([0, 1] if self.total <= 4 else [0], dtype=np.int64)

    def action_masks(self):
        mask = np.zeros(2, dtype=bool)
        mask[self.legal_actions()] = True
        return mask

    def step(self, action):
        if int(action) not in self.legal_actions():
            raise IllegalActionError(action, "not legal")
        self.total += int(action) + 1
        gain = float(action)
        self.score += gain
        self.data[0] = self.total
        return self._obs(), gain, self.total >= 6, False, self._info()

    def clone_state(self):
        if self.mutable:
            return State("Counter", (), self.data)  # State copies: fake a shared buffer below
        return State("Counter", (), np.array([self.total, self.score]))

    def restore_state(self, state):
        if not isinstance(state, State) or state.game != "Counter":
            raise ValueError("not a Counter state")
        self.total = int(state.data[0])
        if not self.forget:
            self.score = float(state.data[1])


def test_the_toy_env_conforms():
    check_planning_env(lambda: Counter(), check_gym=True)


def test_a_restore_that_forgets_the_score_is_caught():
    with pytest.raises(ConformanceError, match=r"clone/restore replay\] step 1 .*score"):
        check_planning_env(lambda: Counter(forget_score_on_restore=True))


def test_an_env_accepting_illegal_moves_is_caught():
    class Lax(Counter):
        def step(self, action):
            self.total += int(action) + 1
            self.score += float(action)
            return self._obs(), float(action), self.total >= 6, False, self._info()

    with pytest.raises(ConformanceError, match="illegal action"):
        check_planning_env(lambda: Lax())


@pytest.mark.parametrize("algo", ["nmcs", "uct"])
def test_a_users_env_with_the_contract_alone_is_searched(algo):
    # Counter has no policy(): UCT's generic path once asked the env for its policy by name
    # (AttributeError); now both take the default random policy as NMCS did. Best score: 3.
    from mc_envs.agents import NMCS, UCT

    env = Counter()
    env.reset(seed=0)
    agent = NMCS(level=1, seed=0) if algo == "nmcs" else UCT(seed=0)
    result = agent.search(env, iterations=200)
    assert result.score == 3.0 and result.actions == [1, 1, 1]
    assert env.total == 0  # left as it was
