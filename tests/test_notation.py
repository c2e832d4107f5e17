"""Each game names its moves in its own notation (``env.action_to_string``), on known positions."""

from __future__ import annotations

import gymnasium as gym
import pytest

import mc_envs  # noqa: F401
from mc_envs import IllegalActionError

EASY = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


def test_samegame_names_the_cell_and_colour_of_the_group() -> None:
    env = gym.make("mc_envs/SameGame-v0", board="1122\n1122\n3344\n3345").unwrapped
    env.reset()
    # digits 0..k-1 in the text are colours 1..k; row 0 at the top
    assert env.action_to_string(2) == "r0c2 colour 3"
    assert env.action_to_string(15) == "r3c3 colour 6"
    env.step(2)  # the colour-3 group of the top right goes; the column drops
    assert env.action_to_string(2) == "r0c2 empty"


def test_morpion_uses_msr_coordinates() -> None:
    env = gym.make("mc_envs/MorpionSolitaire5D-v0").unwrapped
    env.reset()
    for a in env.legal_actions()[:5]:
        x, y, d, pos = env.move_of(int(a))
        assert env.action_to_string(int(a)) == f"({x},{y}) {d} {pos}"
    assert env.action_to_string(env.action_of(3, -1, "V", 0)) == "(3,-1) V 0"


def test_sudoku_rows_and_columns_from_one() -> None:
    env = gym.make("mc_envs/Sudoku-v0", puzzle=EASY, branching="all").unwrapped
    env.reset()
    assert env.action_to_string((0 * 9 + 2) * 9 + 3) == "r1c3=4"
    assert env.action_to_string((8 * 9 + 8) * 9 + 8) == "r9c9=9"
    big = gym.make("mc_envs/Sudoku-v0", size=16).unwrapped
    big.reset(seed=0)
    assert big.action_to_string((1 * 16 + 0) * 16 + 15) == "r2c1=G"


@pytest.mark.parametrize(
    "env_id, action, name",
    [
        ("mc_envs/TicTacToe-v0", 4, "r1c1"),
        ("mc_envs/TicTacToe-v0", 5, "r1c2"),
        ("mc_envs/ConnectFour-v0", 3, "col 3"),
        ("mc_envs/LeftMove-v0", 0, "L"),
        ("mc_envs/LeftmostPath-v0", 1, "R"),
    ],
)
def test_cells_columns_and_directions(env_id: str, action: int, name: str) -> None:
    env = gym.make(env_id).unwrapped
    env.reset()
    assert env.action_to_string(action) == name


def test_an_illegal_move_is_named_in_the_error() -> None:
    env = gym.make(
        "mc_envs/Sudoku-v0", puzzle=EASY, branching="all", illegal_action="raise"
    ).unwrapped
    env.reset()
    with pytest.raises(
        IllegalActionError, match=r"\(r1c1=1\): cell \(row 1, column 1\) is already"
    ):
        env.step(0)
    env = gym.make("mc_envs/TicTacToe-v0", illegal_action="raise").unwrapped
    env.reset()
    env.step(4)
    with pytest.raises(IllegalActionError) as info:
        env.step(4)
    assert info.value.move == "r1c1" and "(r1c1)" in str(info.value)


@pytest.mark.parametrize("env_id", sorted(mc_envs.ENVS))
def test_every_action_of_the_space_has_a_name(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    names = {env.action_to_string(int(a)) for a in env.legal_actions()}
    assert len(names) == len(env.legal_actions()) and all(isinstance(n, str) for n in names)
    for a in (0, env.action_space.n - 1):
        assert isinstance(env.action_to_string(a), str)
