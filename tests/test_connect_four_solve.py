"""The exact Connect Four solver: tactics on ASCII boards, and agreement with an exhaustive
minimax over the env API on late positions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.core import State
from mc_envs.games import connect_four as c4
from mc_envs.games.connect_four_solve import Solver, SolverBudgetError, bitboards, move_values

# X (to move, 3 stones against 3) has three in a row on the bottom with both ends open.
OPEN_THREE = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . O O . . .
O . X X X . .
"""

# O to move; X threatens column 1 (bottom row), O cannot win at once.
ONE_THREAT = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . O . . .
. . X X X O .
"""

# O to move; X threatens both ends of the bottom row.
TWO_THREATS = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . O O . .
. . X X X . .
"""


def env_at(state: np.ndarray):
    env = gym.make("mc_envs/ConnectFour-v0", illegal_action="raise").unwrapped
    env.reset(seed=0)
    env.restore_state(State("ConnectFour", (), state))
    return env


def test_wins_in_one_are_wins() -> None:
    values = Solver(table_bits=16).move_values(c4.parse_board(OPEN_THREE))
    assert values[1] == values[5] == 1
    assert Solver(table_bits=16).solve(c4.parse_board(OPEN_THREE)) == 1


def test_every_move_but_the_block_loses_at_once() -> None:
    solver = Solver(table_bits=16)
    for column in (0, 2, 3, 4, 5, 6):
        state = c4.parse_board(ONE_THREAT)
        c4.play(state, column, None)
        # X to move wins: found by the immediate-win check, in one node a search.
        assert solver.solve(state, max_nodes=2) == 1


def test_two_threats_lose_whatever_the_move() -> None:
    solver = Solver(table_bits=16)
    state = c4.parse_board(TWO_THREATS)
    assert solver.solve(state) == -1
    assert set(solver.move_values(state).values()) == {-1}


def test_finished_games_and_states() -> None:
    solver = Solver(table_bits=16)
    state = c4.parse_board(OPEN_THREE)
    c4.play(state, 1, None)  # X wins; O would move next
    assert solver.solve(state) == -1 and solver.move_values(state) == {}
    env = env_at(c4.parse_board(TWO_THREATS))
    assert solver.solve(env.clone_state()) == -1


def test_bad_input_is_refused_before_the_search() -> None:
    state = c4.parse_board(OPEN_THREE)
    state[c4.HEIGHT + 3] = 5
    with pytest.raises(ValueError, match="height of column 3"):
        move_values(state)
    with pytest.raises(ValueError, match="TicTacToe"):
        bitboards(State("TicTacToe", (), np.zeros(8, np.int64)))
    with pytest.raises(ValueError, match="table_bits"):
        Solver(table_bits=40)


def test_the_node_budget_stops_a_long_search() -> None:
    solver = Solver(table_bits=16)
    with pytest.raises(SolverBudgetError, match="1000 nodes"):
        solver.solve(c4.new_state(), max_nodes=1000)
    assert solver.nodes == 1001


def minimax(env, memo: dict) -> int:
    """The value for the player to move, by searching every continuation (memoised on the
    state, which is the whole position)."""
    key = env.clone_state().data.tobytes()
    if key not in memo:
        memo[key] = max(move_value(env, a, memo) for a in env.legal_actions())
    return memo[key]


def move_value(env, action: int, memo: dict) -> int:
    snapshot = env.clone_state()
    _, reward, terminated, _, _ = env.step(int(action))
    value = int(reward) if terminated else -minimax(env, memo)
    env.restore_state(snapshot)
    return value


def late_positions(count: int, seed: int, empty: tuple[int, int]) -> list[np.ndarray]:
    """Positions reached by uniformly random play with ``empty`` cells left, not over."""
    rng = np.random.default_rng(seed)
    env = env_at(c4.new_state())
    found = []
    for _ in range(100 * count):
        env.reset(seed=0)
        plies = 42 - int(rng.integers(empty[0], empty[1] + 1))
        for _ in range(plies):
            if not len(env.legal_actions()):
                break
            env.step(int(rng.choice(env.legal_actions())))
        state = env.clone_state().data
        if not state[c4.OVER]:
            found.append(state.copy())
            if len(found) == count:
                break
    return found


def test_the_solver_agrees_with_exhaustive_minimax_on_late_positions() -> None:
    solver = Solver(table_bits=16)
    memo: dict = {}
    positions = late_positions(40, seed=13, empty=(6, 10))
    assert len(positions) == 40
    seen_values = set()
    for state in positions:
        env = env_at(state)
        expected = {int(a): move_value(env, a, memo) for a in env.legal_actions()}
        assert solver.move_values(state) == expected, c4.format_board(state)
        assert solver.solve(state) == max(expected.values())
        seen_values |= set(expected.values())
    assert seen_values == {-1, 0, 1}  # the positions exercise every outcome
