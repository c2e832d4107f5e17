"""The PettingZoo AEC adapters pass PettingZoo's api_test and see the board from each side."""

from __future__ import annotations

import pytest
from pettingzoo.test import api_test

import mc_envs
from mc_envs.pettingzoo import connect_four_v0, tictactoe_v0


@pytest.mark.parametrize("factory", [connect_four_v0, tictactoe_v0])
def test_api_test(factory) -> None:
    api_test(factory(), num_cycles=300, verbose_progress=False)


def test_observations_rewards_and_illegal_moves() -> None:
    env = connect_four_v0()
    env.reset(seed=0)
    env.step(3)
    obs = env.observe("player_1")
    assert obs["observation"][1, 5, 3] == 1 and obs["action_mask"].sum() == 7
    assert env.observe("player_0")["observation"][0, 5, 3] == 1
    assert env.observe("player_0")["action_mask"].sum() == 0
    with pytest.raises(mc_envs.IllegalActionError):
        env.step(9)
    for a in (4, 3, 4, 3, 4, 3):
        env.step(a)
    assert env.terminations["player_0"] and env.rewards == {"player_0": 1.0, "player_1": -1.0}
