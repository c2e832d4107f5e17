"""The PettingZoo modules pass PettingZoo's api_test and seed_test, see the board from each side,
and treat illegal actions as PettingZoo classic does (env()) or raise (raw_env())."""

from __future__ import annotations

import pytest
from pettingzoo.test import api_test, seed_test

import mc_envs
from mc_envs.pettingzoo import TwoPlayerAEC, connect_four_v0, tictactoe_v0

MODULES = [connect_four_v0, tictactoe_v0]
NAMES = ["connect_four_v0", "tictactoe_v0"]


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
@pytest.mark.parametrize("make", ["env", "raw_env"])
def test_api_test(module, make) -> None:
    api_test(getattr(module, make)(), num_cycles=300, verbose_progress=False)


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
def test_seed_test(module) -> None:
    seed_test(module.env, num_cycles=100)
    seed_test(module.raw_env, num_cycles=100)


def test_observations_rewards_and_illegal_moves_in_the_raw_env() -> None:
    env = connect_four_v0.raw_env()
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


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
def test_an_illegal_move_loses_in_the_wrapped_env(module) -> None:
    env = module.env()
    env.reset(seed=0)
    env.step(0)  # player_0 takes cell 0 (Tic-Tac-Toe) or a square of column 0 (Connect Four)
    for _ in range(5 if module is connect_four_v0 else 0):
        env.step(0)  # Connect Four: fill column 0
    mover = env.agent_selection
    assert env.observe(mover)["action_mask"][0] == 0
    env.step(0)  # PettingZoo logs "Illegal move made"
    other = "player_1" if mover == "player_0" else "player_0"
    assert all(env.terminations.values())
    assert env._cumulative_rewards[mover] == -1.0 and env._cumulative_rewards[other] == 0.0
    with pytest.raises(mc_envs.IllegalActionError):
        raw = module.raw_env()
        raw.reset(seed=0)
        raw.step(0)
        for _ in range(5 if module is connect_four_v0 else 0):
            raw.step(0)
        raw.step(0)


def test_the_old_call_form_still_builds_the_raw_env_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"connect_four_v0\.env\(\)"):
        env = connect_four_v0()
    assert isinstance(env, TwoPlayerAEC) and env.metadata["name"] == "mc_envs_connect_four_v0"
    with pytest.warns(DeprecationWarning, match=r"tictactoe_v0\.raw_env\(\)"):
        assert isinstance(tictactoe_v0(render_mode="ansi"), TwoPlayerAEC)
