"""The bitboard playout (samegame_bits.playout) plays exactly the games of the flood-fill playout."""

from __future__ import annotations

import numpy as np
import pytest

from mc_envs.envs.samegame import SameGameEnv, standard_positions
from mc_envs.games import samegame as sg
from mc_envs.games import samegame_bits as sgb
from mc_envs.rng import rng_state


def both(state: np.ndarray, policy: int, seed: int, start: int = 0):
    """Runs both playouts from copies of ``state`` with the same stream; returns both results."""
    out = []
    for playout in (sg.playout, sgb.playout):
        s = state.copy()
        rng = rng_state(seed)
        seq = np.full(start + s.size, -7, dtype=np.int64)
        n = playout(s, policy, rng, sg.workspace(s), seq, start)
        out.append((n, seq[: start + n].tolist(), s, rng[0]))
    return out


def assert_same(state: np.ndarray, policy: int, seed: int, start: int = 0) -> int:
    (n1, seq1, s1, r1), (n2, seq2, s2, r2) = both(state, policy, seed, start)
    assert n1 == n2
    assert seq1 == seq2
    assert s1.tolist() == s2.tolist()  # board, score, moves, cells left, columns, end scored
    assert r1 == r2  # the same number of draws
    return n1


@pytest.mark.parametrize("position", range(1, 21))
def test_standard_positions_both_policies(position):
    env = SameGameEnv(position=position)
    env.reset()
    state = env._state
    assert sg.board_of(state).tolist() == standard_positions()[position].tolist()
    for policy in sg.POLICIES.values():
        for seed in range(8):
            assert assert_same(state, policy, 100 * position + seed) > 10


def random_board(rng: np.random.Generator, rows: int, cols: int, colors: int) -> np.ndarray:
    board = rng.integers(1, colors + 1, size=(rows, cols))
    if rng.random() < 0.3:  # some empty cells (gravity is applied by new_state)
        board[rng.random((rows, cols)) < 0.2] = 0
    return board


@pytest.mark.parametrize(
    "rows, cols, colors",
    [
        (1, 1, 1),
        (1, 7, 2),
        (1, 40, 3),
        (9, 1, 2),
        (40, 1, 3),
        (2, 2, 1),
        (3, 8, 2),
        (8, 3, 4),
        (6, 17, 3),
        (16, 16, 5),
        (17, 5, 3),
        (20, 30, 6),
        (63, 4, 2),
        (63, 2, 1),
        (12, 64, 9),
        (10, 10, 15),
    ],
)
def test_random_boards_both_policies(rows, cols, colors):
    rng = np.random.default_rng(rows * 1000 + cols * 10 + colors)
    moves = 0
    for trial in range(12):
        penalty = ("none", "jsgames", "schadd")[trial % 3]
        state = sg.new_state(random_board(rng, rows, cols, colors), colors, penalty)
        for policy in sg.POLICIES.values():
            moves += assert_same(state, policy, trial)
    if rows * cols > 1 and colors < rows * cols:
        assert moves > 0


def test_mid_game_states_and_an_offset_into_the_sequence():
    rng = np.random.default_rng(3)
    actions = np.zeros(225, dtype=np.int64)
    checked = 0
    for trial in range(30):
        state = sg.new_state(random_board(rng, 15, 15, 4 + trial % 3), 4 + trial % 3)
        ws = sg.workspace(state)
        for _ in range(rng.integers(0, 40)):  # a few moves first: empty columns, a score
            n = sg.legal(state, ws, actions)
            if n == 0:
                break
            sg.play(state, actions[rng.integers(n)], ws)
        for policy in sg.POLICIES.values():
            assert_same(state, policy, trial, start=int(rng.integers(0, 20)))
            checked += 1
    assert checked == 60


def test_long_runs_fill_all_the_way_down():
    column = np.ones((63, 1), dtype=np.int32)
    column[::9] = 2  # runs of 8 ones between single twos, then one long run once they are gone
    state = sg.new_state(column, 2)
    for policy in sg.POLICIES.values():
        assert_same(state, policy, 5)
    for height in range(2, 64):  # one group, removed from its top cell: a fill all the way down
        full = sg.new_state(np.ones((height, 2), dtype=np.int32), 1)
        seq = np.zeros(2, dtype=np.int64)
        assert sgb.playout(full, 0, rng_state(1), sg.workspace(full), seq, 0) == 1
        assert seq[0] == 0 and full[sg.LEFT] == 0
        assert full[sg.SCORE] == (2 * height - 2) ** 2 + 1000


def test_boards_that_do_not_fit_use_the_flood_fill_playout():
    rng = np.random.default_rng(8)
    tall = sg.new_state(random_board(rng, sgb.MAX_ROWS + 1, 6, 3), 3)
    many = sg.new_state(rng.integers(1, 17, size=(12, 12)), sgb.MAX_COLORS + 1)
    assert int(many[sg.COLORS]) > sgb.MAX_COLORS and int(tall[sg.ROWS]) > sgb.MAX_ROWS
    for state in (tall, many):
        for policy in sg.POLICIES.values():
            for seed in range(3):
                assert assert_same(state, policy, seed) > 0


def test_the_env_plays_its_playouts_with_the_bitboards():
    env = SameGameEnv(position=1)
    assert env.kernel.playout is sgb.playout


def test_a_finished_game_is_scored_once():
    state = sg.new_state(np.array([[1, 2], [2, 1]]), 2, "jsgames")
    assert state[sg.ENDED] == 1
    score = int(state[sg.SCORE])
    for policy in sg.POLICIES.values():
        assert assert_same(state, policy, 0) == 0
    s = state.copy()
    sgb.playout(s, 0, rng_state(0), sg.workspace(s), np.zeros(4, dtype=np.int64), 0)
    assert int(s[sg.SCORE]) == score
