"""Connect Four: rules on ASCII boards, the env contract, and UCT on tactical positions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mc_envs
from mc_envs.agents import UCT, RandomAgent
from mc_envs.cli.two_player import play_game
from mc_envs.games import connect_four as c4


def make(**kwargs):
    env = gym.make("mc_envs/ConnectFour-v0", **kwargs).unwrapped
    env.reset(seed=0)
    return env


def at(text: str):
    env = make(illegal_action="raise")
    env._set_state(c4.parse_board(text))
    return env


EMPTY = ". . . . . . .\n" * 6


@pytest.mark.parametrize(
    "board, winner",
    [
        (
            ". . . . . . .\n. . . . . . .\nX . . . . . .\nX O . . . . .\nX O . . . . .\nX O . . . . .\n",
            1,
        ),
        (
            ". . . . . . .\n. . . . . . .\n. . . X . . .\n. . X O . . .\n. X O O . . .\nX O O X X . .\n",
            1,
        ),
        (
            ". . . . . . .\n. . . . . . .\nO . . . . . .\nX O . . . . .\nX X O . . . .\nX X X O O O .\n",
            -1,
        ),
    ],
)
def test_wins_on_ascii_boards(board: str, winner: int) -> None:
    s = c4.parse_board(board)
    assert s[c4.OVER] and s[c4.RESULT] == winner


def test_rules_and_format() -> None:
    s = c4.new_state()
    for a in (3, 3, 4, 4, 5, 5):
        assert c4.play(s, a, None) == 0.0
    assert c4.play(s, 6, None) == 1.0 and s[c4.RESULT] == 1
    text = c4.format_board(s)
    assert text.splitlines()[-2] == ". . . X X X X" and text.splitlines()[-1] == "0 1 2 3 4 5 6"
    assert np.array_equal(c4.parse_board(text), s)
    with pytest.raises(ValueError, match="above"):
        c4.parse_board(EMPTY.replace(". . . . . . .\n", ". . . X . . .\n", 1))
    # a full board without four is a draw
    rows = [
        "O X O X O X O",
        "X O X O X O X",
        "O X O X O X O",
        "O X O X O X O",
        "X O X O X O X",
        "X O X O X O X",
    ]
    s = c4.parse_board("\n".join(rows))
    assert s[c4.OVER] and s[c4.RESULT] == 0


def test_env_contract() -> None:
    env = make(render_mode="ansi")
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, 6, 7) and info["current_player"] == 0
    obs, r, term, _, info = env.step(3)
    assert obs[1, 5, 3] == 1 and obs[0].sum() == 0 and info["current_player"] == 1
    for a in (2, 4, 2, 5, 2):
        obs, r, term, _, info = env.step(a)
    assert r == 0.0 and not term
    obs, r, term, _, _ = env.step(6)
    assert r == 1.0 and term and "X wins" in env.render()
    check_env(gym.make("mc_envs/ConnectFour-v0").unwrapped)


def test_illegal_moves_raise_and_change_nothing() -> None:
    env = make(illegal_action="raise")
    for _ in range(6):
        env.step(0)
    before = env.clone_state()
    for bad in (0, 7, -1):
        with pytest.raises(mc_envs.IllegalActionError):
            env.step(bad)
        assert env.clone_state() == before
    assert env.action_masks().tolist() == [False] + [True] * 6
    env = at(
        ". . . . . . .\n. . . . . . .\n. . . . . . .\n. . . . . . .\nO O O . . . .\nX X X X . . .\n"
    )
    before = env.clone_state()
    with pytest.raises(mc_envs.IllegalActionError, match="over"):
        env.step(5)
    assert env.clone_state() == before


def test_uct_plays_the_centre_first() -> None:
    env = make()
    assert UCT(iterations=30000, seed=1).act(env) == 3


TAKE_WIN = (
    ". . . . . . .\n. . . . . . .\n. . . . . . .\n. . . . . . .\n. O O . . . .\n. X X X . . O\n"
)
BLOCK = ". . . . . . .\n. . . . . . .\n. . . . . . .\n. . . . . . .\nX . . . . . .\nX O O O . . X\n"
BLOCK_DIAG = (
    ". . . . . . .\n. . . . . . .\n. . . . . . .\n. . . X O . .\n. . X O X . .\n. X O O X . .\n"
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uct_takes_an_immediate_win(seed: int) -> None:
    env = at(TAKE_WIN)
    assert env.current_player == 0
    assert UCT(iterations=3000, seed=seed).act(env) in (0, 4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uct_blocks_an_immediate_loss(seed: int) -> None:
    env = at(BLOCK)  # X to move; O threatens column 4
    assert env.current_player == 0
    assert UCT(iterations=3000, seed=seed).act(env) == 4


def test_uct_blocks_a_diagonal_threat() -> None:
    env = at(BLOCK_DIAG)
    assert env.current_player == 1  # O to move; X threatens column 4 (the diagonal from column 1)
    assert UCT(iterations=5000, seed=3).act(env) == 4


def test_uct_beats_random_in_at_least_99_percent() -> None:
    env = make()
    wins = 0
    for g in range(200):
        uct, rnd = UCT(iterations=200, seed=g), RandomAgent(seed=1000 + g)
        r0 = play_game(env, uct, rnd, seed=g) if g % 2 == 0 else -play_game(env, rnd, uct, seed=g)
        wins += r0 > 0
    assert wins >= 198, f"UCT won {wins} of 200"
