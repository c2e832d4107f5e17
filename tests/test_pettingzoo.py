"""The PettingZoo modules pass PettingZoo's api_test, seed_test and render_test, see the board from
each side, treat illegal actions as PettingZoo classic does (env()) or raise (raw_env()), and
render as PettingZoo classic's modules do ("human" a window, "ansi" text, "rgb_array" an array)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import mc_envs
from mc_envs.pettingzoo import TwoPlayerAEC, connect_four_v0, go_v0, tictactoe_v0
from mc_envs.pettingzoo.aec import other_side
from mc_envs.render import frame as render_frame

MODULES = [connect_four_v0, tictactoe_v0, go_v0]
NAMES = ["connect_four_v0", "tictactoe_v0", "go_v0"]
# PettingZoo's whole-game tests play Go on 5x5 (every check of api_test runs at each step)
SMALL = {go_v0: {"size": 5}}


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
@pytest.mark.parametrize("make", ["env", "raw_env"])
def test_api_test(module, make) -> None:
    api_test(getattr(module, make)(**SMALL.get(module, {})), num_cycles=300, verbose_progress=False)


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
def test_seed_test(module) -> None:
    config = SMALL.get(module, {})
    seed_test(lambda: module.env(**config), num_cycles=100)
    seed_test(lambda: module.raw_env(**config), num_cycles=100)


def test_go_observations_from_each_side() -> None:
    env = go_v0.raw_env(size=5, history=2)
    env.reset(seed=0)
    assert env.observation_space("player_0")["observation"].shape == (5, 5, 5)
    env.step(0)  # Black at A5 (row 0, col 0)
    white, black = env.observe("player_1"), env.observe("player_0")
    # White to move: its stones (none), then Black's; a move ago: the empty board; White's colour
    assert white["observation"][1, 0, 0] == 1 and white["observation"][0].sum() == 0
    assert white["observation"][2:4].sum() == 0 and (white["observation"][4] == 1).all()
    assert white["action_mask"].sum() == 25 and black["action_mask"].sum() == 0
    # Black sees its own stone first and its own colour, as pgx's observation for player 0
    assert black["observation"][0, 0, 0] == 1 and black["observation"][1].sum() == 0
    assert (black["observation"][4] == 0).all()
    assert np.array_equal(other_side(other_side(black["observation"])), black["observation"])
    env.step(25)  # White passes
    env.step(25)  # Black passes: Black's stone owns the whole board, 25 - 7.5
    assert env.terminations["player_0"] and env.rewards == {"player_0": 1.0, "player_1": -1.0}
    with pytest.raises(ValueError, match="Go size"):
        go_v0.env(size=4)


def test_go_s_move_cap_truncates_for_both_agents() -> None:
    env = go_v0.raw_env(size=5, max_moves=3)
    env.reset(seed=0)
    env.step(12)
    env.step(25)
    env.step(13)  # move 3: the cap
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    assert env.infos == {a: {"max_moves_reached": True} for a in ("player_0", "player_1")}
    for agent in ("player_0", "player_1"):
        assert env.observe(agent)["action_mask"].sum() == 0
    for _ in range(2):  # the dead steps remove the agents
        env.step(None)
    assert env.agents == []


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


def fast(env):
    """The env with its window's frame rate unbounded (render_test steps under "human" too)."""
    env.unwrapped.env.metadata = {**env.unwrapped.env.metadata, "render_fps": 0}
    return env


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
@pytest.mark.parametrize("make", ["env", "raw_env"])
def test_render_test(module, make) -> None:
    build = getattr(module, make)
    render_test(lambda render_mode=None: fast(build(render_mode=render_mode)))
    if module is go_v0:  # 19x19 too
        render_test(lambda render_mode=None: fast(build(render_mode=render_mode, size=19)))


@pytest.mark.parametrize("module", MODULES, ids=NAMES)
def test_render_modes_as_pettingzoo_classic(module, capsys) -> None:
    assert module.raw_env().metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    text = module.env(render_mode="ansi")
    text.reset(seed=0)
    text.step(0)
    assert capsys.readouterr().out == ""  # "ansi" returns the text and prints nothing
    assert text.render() == text.unwrapped.env._ansi() and "to move" in text.render()
    picture = module.env(render_mode="rgb_array")
    picture.reset(seed=0)
    picture.step(0)
    frame = picture.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert np.array_equal(frame, render_frame(picture.unwrapped.env))
    window = fast(module.env(render_mode="human"))
    window.reset(seed=0)
    window.step(0)  # draws the window
    assert window.render() is None
    import pygame

    assert pygame.display.get_surface().get_size() == frame.shape[1::-1]
    window.close()
    assert window.unwrapped.env._render_window is None
    silent = module.env()
    silent.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert silent.render() is None
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        module.env(render_mode="text")
    assert capsys.readouterr().out == ""


def test_pygame_is_imported_only_when_a_window_is_drawn() -> None:
    code = (
        "import sys\n"
        "from mc_envs.pettingzoo import connect_four_v0\n"
        "env = connect_four_v0.env(render_mode='human')\n"
        "env.reset(seed=0)\n"
        "before = 'pygame' in sys.modules\n"
        "env.step(3)\n"
        "print(before, 'pygame' in sys.modules)\n"
    )
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]
