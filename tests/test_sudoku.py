"""Sudoku as a CSP: text format, forward checking, dead ends, branching, policies and solving."""

from __future__ import annotations

from importlib import resources

import gymnasium as gym
import numpy as np
import pytest

import mc_envs
from mc_envs import IllegalActionError
from mc_envs.envs.sudoku import SudokuEnv
from mc_envs.games import sudoku as S
from mc_envs.games import sudoku_solve as solver
from mc_envs.rng import Rng, rng_state
from mc_envs.testing import gymnasium_checks


def _test_puzzles() -> list[tuple[str, int, str]]:
    text = resources.files("mc_envs").joinpath("data/sudoku/tdoku_test_puzzles.txt").read_text()
    rows = []
    for line in text.split():
        puzzle, count, *solution = line.split(":")
        rows.append((puzzle, int(count), solution[0] if solution else ""))
    return rows


PUZZLES = _test_puzzles()
UNIQUE = [(p, s) for p, c, s in PUZZLES if c == 1]
UNSOLVABLE = [p for p, c, _ in PUZZLES if c == 0]
EASY = UNIQUE[0][0]

# One given 5 at (row 1, column 1); everything else empty.
ONE_GIVEN = "5" + "." * 80


def test_test_set_is_as_described() -> None:
    assert len(PUZZLES) == 43
    assert len(UNIQUE) == 18 and len(UNSOLVABLE) == 10


# -- text -----------------------------------------------------------------------------------------


def test_parse_accepts_dots_zeros_whitespace_and_lowercase() -> None:
    grid = S.parse("\n".join(EASY.replace(".", "0")[i : i + 9] for i in range(0, 81, 9)))
    assert S.to_text(grid) == EASY
    row = "123456789abcdefg"
    text16 = "".join(row[4 * (r % 4) + r // 4 :] + row[: 4 * (r % 4) + r // 4] for r in range(16))
    grid16 = S.parse(text16)
    assert grid16.shape == (16, 16) and grid16[0, 9] == 10 and grid16[0, 15] == 16
    assert S.is_valid_solution(grid16)
    assert S.to_text(grid16) == text16.upper()


@pytest.mark.parametrize(
    ("text", "size", "needle"),
    [
        ("." * 80, None, "got 80"),
        ("." * 81, 16, "256 symbols, got 81"),
        ("." * 40 + "x" + "." * 40, None, "'x' at row 5, column 5"),
        ("." * 17 + "A" + "." * 63, None, "'A' at row 2, column 9"),
        ("." * 255 + "H", None, "'H' at row 16, column 16"),
    ],
)
def test_parse_errors_name_the_position(text: str, size: int | None, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        S.parse(text, size)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "5" + "." * 7 + "5" + "." * 72,
            "at row 1, column 9 repeats the 5 at row 1, column 1 in the same row",
        ),
        (
            "5" + "." * 62 + "5" + "." * 17,
            "at row 8, column 1 repeats the 5 at row 1, column 1 in the same column",
        ),
        (
            "5" + "." * 19 + "5" + "." * 60,
            "at row 3, column 3 repeats the 5 at row 1, column 1 in the same box",
        ),
    ],
)
def test_conflicting_givens_name_both_positions(text: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        S.new_state(S.parse(text))
    with pytest.raises(ValueError, match=needle):
        SudokuEnv(puzzle=text)


def test_format_grid() -> None:
    lines = S.format_grid(S.parse(ONE_GIVEN)).splitlines()
    assert lines[0] == "5 . . | . . . | . . ."
    assert lines[3] == "------+-------+------"
    assert len(lines) == 11


# -- rules ----------------------------------------------------------------------------------------


def _domain(state: np.ndarray, r: int, c: int) -> set[int]:
    n = int(state[S.SIZE])
    d = int(state[S.HEADER + n * n + r * n + c])
    return {v + 1 for v in range(n) if d >> v & 1}


def test_forward_checking_removes_the_value_from_row_column_and_box_only() -> None:
    state = S.new_state(S.parse(ONE_GIVEN))
    assert state[S.FILLED] == 1 and S.score(state) == 1.0
    full = set(range(1, 10))
    for r, c in [(0, 8), (8, 0), (2, 2), (1, 1)]:
        assert _domain(state, r, c) == full - {5}
    for r, c in [(3, 3), (4, 8), (8, 8)]:
        assert _domain(state, r, c) == full
    assert _domain(state, 0, 0) == set()  # filled cells have no domain


def test_dead_end_ends_the_game() -> None:
    # Row 1 holds 1..7 in columns 1..7, and (row 4, column 9) holds an 8: cell (1, 8) can only
    # be 8 or 9 and cell (1, 9) only 9. Putting 9 in (1, 8) empties the domain of (1, 9).
    text = "1234567.." + "." * 26 + "8" + "." * 45
    env = SudokuEnv(puzzle=text, branching="all", illegal_action="raise")
    env.reset()
    assert _domain(env._state, 0, 7) == {8, 9} and _domain(env._state, 0, 8) == {9}
    _, reward, terminated, truncated, info = env.step(7 * 9 + 8)
    assert reward == 1.0 and terminated and not truncated
    assert env.legal_actions().size == 0 and not env.action_masks().any()
    assert info["action_mask"].all()  # the game is over: every action marked (PlanningEnv)
    assert env.score == 9.0 and not env.solved
    with pytest.raises(IllegalActionError, match="game is over"):
        env.step(8 * 9 + 8)


def test_mrv_branching_offers_the_smallest_domain_only() -> None:
    text = "1234567.." + "." * 26 + "8" + "." * 45
    env = SudokuEnv(puzzle=text, illegal_action="raise")
    env.reset()
    assert env.legal_actions().tolist() == [8 * 9 + 8]  # cell (1, 9): only 9
    with pytest.raises(
        IllegalActionError, match=r"only the most constrained cell \(row 1, column 9\)"
    ):
        env.step(7 * 9 + 7)
    with pytest.raises(
        IllegalActionError, match=r"cell \(row 1, column 1\) is already filled with 1"
    ):
        env.step(0)
    env_all = SudokuEnv(puzzle=text, branching="all", illegal_action="raise")
    env_all.reset()
    legal = env_all.legal_actions()
    assert np.all(np.diff(legal) > 0) and len(legal) > 100
    with pytest.raises(IllegalActionError, match="1 is not in the domain .* already in its row"):
        env_all.step(7 * 9 + 0)  # (row 1, column 8) = 1
    with pytest.raises(IllegalActionError, match="8 is not in the domain .* already in its column"):
        env_all.step(53 * 9 + 7)  # (row 6, column 9) = 8
    with pytest.raises(IllegalActionError, match="2 is not in the domain .* already in its box"):
        env_all.step(9 * 9 + 1)  # (row 2, column 1) = 2


def test_ties_go_to_the_lowest_cell_and_values_are_sorted() -> None:
    env = SudokuEnv(puzzle=ONE_GIVEN)
    env.reset()
    # Every empty cell of row 1, column 1 and box 1 has 8 values; the lowest is cell 1.
    assert env.legal_actions().tolist() == [9 + v for v in range(9) if v != 4]


def test_observation_reward_and_info() -> None:
    env = gym.make("mc_envs/Sudoku-v0", puzzle=EASY)
    obs, info = env.reset()
    assert obs.shape == (9, 9) and obs.dtype == np.int8
    assert S.to_text(obs) == EASY
    assert info["score"] == 81 - EASY.count(".")
    a = int(env.unwrapped.legal_actions()[0])
    obs2, reward, *_, info2 = env.step(a)
    assert reward == 1.0 and info2["score"] == info["score"] + 1
    assert obs2[a // 81, a // 9 % 9] == a % 9 + 1
    assert env.unwrapped.max_score == 81.0


def test_generated_puzzles_follow_the_seed() -> None:
    for size, fraction in [(9, 0.5), (16, 0.66)]:
        env = SudokuEnv(size=size)
        obs1, _ = env.reset(seed=7)
        obs2, _ = env.reset(seed=7)
        obs3, _ = env.reset(seed=8)
        assert np.array_equal(obs1, obs2) and not np.array_equal(obs1, obs3)
        assert (obs1 == 0).sum() == round(fraction * size * size)
        assert env.default_policy == "mrv"
    grid = solver.random_grid(16, 3)
    assert S.is_valid_solution(grid)
    with pytest.raises(ValueError, match="empty_fraction"):
        SudokuEnv(empty_fraction=1.5)
    with pytest.raises(ValueError, match="size must be 9 or 16"):
        SudokuEnv(size=4)


def test_clone_restore_replays_identically() -> None:
    env = SudokuEnv(size=16, branching="all")
    env.reset(seed=1)
    snap = env.clone_state()
    rng = Rng(5)
    actions, observations = [], []
    while env.legal_actions().size:
        a = rng.choice(env.legal_actions())
        actions.append(a)
        observations.append(env.step(a)[0])
    env.restore_state(snap)
    for a, obs in zip(actions, observations, strict=True):
        assert np.array_equal(env.step(a)[0], obs)
    with pytest.raises(ValueError, match="Sudoku"):
        SudokuEnv(size=9).restore_state(snap)


def test_render_ansi() -> None:
    env = SudokuEnv(puzzle=EASY, render_mode="ansi")
    env.reset()
    text = env.render()
    assert text.splitlines()[0] == " ".join(EASY[:3]) + " | " + " ".join(
        EASY[3:6]
    ) + " | " + " ".join(EASY[6:9])
    assert f"score {81 - EASY.count('.')}/81 (playing)" in text


@pytest.mark.parametrize("kwargs", [{}, {"size": 16}, {"branching": "all"}])
def test_gymnasium_checks(kwargs: dict) -> None:
    gymnasium_checks(gym.make("mc_envs/Sudoku-v0", **kwargs).unwrapped)


# -- policies: the compiled playout makes the generic path's choices -----------------------------


@pytest.mark.parametrize("branching", ["mrv", "all"])
@pytest.mark.parametrize("policy", ["random", "mrv"])
@pytest.mark.parametrize("size", [9, 16])
def test_kernel_playout_matches_env_policy(size: int, branching: str, policy: str) -> None:
    env = SudokuEnv(size=size, branching=branching)
    for seed in range(3):
        env.reset(seed=seed)
        state = env._state.copy()
        seq = np.zeros(size * size + 1, dtype=np.int64)
        rng = rng_state(100 + seed)
        n = env.kernel.playout(
            state, env.kernel.policies[policy], rng, env.kernel.workspace(state), seq, 0
        )
        chooser = env.policy(policy)(env)
        generic_rng = Rng(100 + seed)
        played = []
        while env.legal_actions().size:
            a = chooser(env.legal_actions(), generic_rng)
            played.append(a)
            env.step(a)
        assert played == seq[:n].tolist()
        assert env.score == env.kernel.score(state)
        assert generic_rng.state[0] == rng[0]


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="no playout policy 'tabu'"):
        SudokuEnv().policy("tabu")


# -- solving --------------------------------------------------------------------------------------


def test_dfs_counts_match_the_test_set() -> None:
    for puzzle, count, solution in PUZZLES:
        grid, found, _, exhausted = solver.solve(S.parse(puzzle), max_solutions=count + 1)
        assert exhausted and found == count, puzzle
        if count == 1:
            assert S.to_text(grid) == solution and S.is_valid_solution(grid)


def test_unsolvable_puzzles_are_never_solved() -> None:
    for puzzle in UNSOLVABLE:
        env = SudokuEnv(puzzle=puzzle)
        env.reset()
        state = env._state
        ws = env.kernel.workspace(state)
        seq = np.zeros(82, dtype=np.int64)
        rng = rng_state(1)
        for _ in range(200):
            s = state.copy()
            env.kernel.playout(s, S.POLICY_MRV, rng, ws, seq, 0)
            assert S.score(s) < 81


def test_nmcs_solves_the_unique_puzzles() -> None:
    from mc_envs.agents import NMCS

    for i, (puzzle, solution) in enumerate(UNIQUE):
        env = gym.make("mc_envs/Sudoku-v0", puzzle=puzzle)
        env.reset()
        result = NMCS(level=1, seed=i).search(env, playouts=200_000)
        assert result.score == 81.0, puzzle
        for a in result.actions:
            env.step(a)
        assert S.to_text(env.unwrapped.grid) == solution


def test_nmcs_never_solves_an_unsolvable_puzzle() -> None:
    from mc_envs.agents import NMCS

    env = gym.make("mc_envs/Sudoku-v0", puzzle=UNSOLVABLE[0])
    env.reset()
    result = NMCS(level=1, seed=0).search(env, playouts=2000)
    assert result.score < 81 and result.stopped == "playouts"


def test_registered() -> None:
    assert "mc_envs/Sudoku-v0" in mc_envs.ENVS


@pytest.mark.parametrize("branching", ["mrv", "all"])
def test_nmcs_compiled_and_generic_paths_agree(branching: str) -> None:
    from mc_envs.agents import NMCS

    env = gym.make("mc_envs/Sudoku-v0", size=16, branching=branching)
    env.reset(seed=2)
    for policy in ("mrv", "random"):
        fast = NMCS(level=1, seed=5, policy=policy).search(env, playouts=60)
        slow = NMCS(level=1, seed=5, policy=policy, compiled=False).search(env, playouts=60)
        assert (fast.score, fast.actions, fast.playouts) == (
            slow.score,
            slow.actions,
            slow.playouts,
        )


def test_the_state_records_its_givens_through_clone_and_restore() -> None:
    env = SudokuEnv(puzzle=EASY, branching="all")
    env.reset()
    givens = S.parse(EASY) > 0
    assert np.array_equal(S.givens_of(env.state_view), givens)
    env.step(int(env.legal_actions()[0]))
    snap = env.clone_state()
    other = SudokuEnv(branching="all")  # a generated puzzle, other givens
    other.reset(seed=1)
    other.restore_state(snap)
    assert np.array_equal(S.givens_of(other.state_view), givens)
    assert np.count_nonzero(other.grid) == givens.sum() + 1
