"""Batched PUCT (PUCT.search_batch / act_batch): known answers at M = 1 and M = 64, the same visit
counts as M single-game searches, perfect Tic-Tac-Toe with an exact evaluator, and bad input."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents import PUCT
from mc_envs.agents.mcts.puct import connect_four_prior
from mc_envs.agents.mcts.puct_batch import NO_ACTION

C4, TTT = "mc_envs/ConnectFour-v0", "mc_envs/TicTacToe-v0"

# (env id, moves from the start, the only right move)
WIN_IN_ONE = [
    (C4, (0, 6, 1, 6, 2, 5), 3),  # X: 0, 1, 2 on the bottom row
    (C4, (0, 1, 0, 1, 0, 1), 0),  # X: three in column 0 (O's three in column 1 come too late)
    (TTT, (0, 3, 1, 4), 2),  # X: 0, 1 (O threatens 5)
]
FORCED_BLOCK = [
    (C4, (0, 6, 1, 6, 2), 3),  # O must stop X's row
    (C4, (3, 0, 3, 0, 3), 3),  # O must stop X's column
    (TTT, (0, 4, 1), 2),  # O must stop X's top row
]


def single(env_id: str, moves=()):
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    for a in moves:
        env.step(a)
    return env


def batch(env_id: str, states: list) -> gym.vector.VectorEnv:
    """A compiled vector env whose sub-envs hold ``states`` (single-env ``State`` objects)."""
    venv = gym.make_vec(env_id, num_envs=len(states), vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    venv.restore_state(states)
    return venv


def uniform(observations: np.ndarray, masks: np.ndarray):
    """Knows nothing: uniform priors, value 0 for every leaf."""
    return np.ones(masks.shape), np.zeros(len(masks))


def tiled(cases: list, env_id: str, m: int) -> tuple[list, np.ndarray]:
    """``m`` sub-env states cycling through the cases of one game, and their answers."""
    mine = [(moves, answer) for game, moves, answer in cases if game == env_id]
    picked = [mine[i % len(mine)] for i in range(m)]
    states = [single(env_id, moves).clone_state() for moves, _ in picked]
    return states, np.array([answer for _, answer in picked])


@pytest.mark.parametrize("m", [1, 64])
@pytest.mark.parametrize("env_id", [C4, TTT])
@pytest.mark.parametrize("evaluator", [uniform, None], ids=["evaluator", "playouts"])
def test_wins_in_one_and_forced_blocks(m: int, env_id: str, evaluator) -> None:
    states, answers = tiled(WIN_IN_ONE + FORCED_BLOCK, env_id, m)
    venv = batch(env_id, states)
    before = venv.unwrapped.clone_state()
    agent = PUCT(iterations=300, seed=0, evaluator=evaluator, form="alphazero")
    result = agent.search_batch(venv)
    assert venv.unwrapped.clone_state() == before  # the search leaves the sub-envs as they were
    assert result.actions.shape == (m,) and result.visits.shape == (m, venv.single_action_space.n)
    assert np.array_equal(result.actions, answers)
    assert (result.visits.sum(axis=1) == 299).all()  # S evaluations, the root's first included
    assert np.allclose(result.policy.sum(axis=1), 1.0)


def test_the_kernel_prior_runs_compiled_and_finds_the_block() -> None:
    states, answers = tiled(WIN_IN_ONE + FORCED_BLOCK, C4, 8)
    agent = PUCT(iterations=200, seed=0, prior=connect_four_prior)
    assert np.array_equal(agent.act_batch(batch(C4, states)), answers)


def integer_priors(observations: np.ndarray, masks: np.ndarray):
    """A deterministic evaluator with integer priors: their sums are exact in any order, so the
    normalised priors are the same bits in the single-game search and in the batched one."""
    x = observations.reshape(len(observations), -1).astype(np.float64)
    w = np.random.default_rng(7).standard_normal((x.shape[1], masks.shape[1] + 1))
    h = x @ w
    priors = np.floor(np.abs(h[:, :-1]) * 4.0) + 1.0
    return priors * masks, np.tanh(h[:, -1])


def random_states(env_id: str, count: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        env = single(env_id)
        for _ in range(int(rng.integers(0, 7))):
            legal = env.legal_actions()
            if len(legal) == 0:
                break
            env.step(int(rng.choice(legal)))
        if len(env.legal_actions()):
            out.append(env.clone_state())
    return out


@pytest.mark.parametrize(("env_id", "m"), [(C4, 64), (TTT, 16)])
def test_the_same_visit_counts_as_separate_single_game_searches(env_id: str, m: int) -> None:
    # Each tree of the batch sees one leaf a round, as the single-game search with batch_size=1
    # sees one leaf a call: the same node operations in the same order give the same tree, so the
    # root visit counts are equal exactly, game by game.
    states = random_states(env_id, m, seed=3)
    kwargs = {"evaluator": integer_priors, "form": "alphazero", "c": 1.5, "seed": 0}
    result = PUCT(iterations=120, **kwargs).search_batch(batch(env_id, states))
    for b, state in enumerate(states):
        env = single(env_id)
        env.restore_state(state)
        alone = PUCT(iterations=120, batch_size=1, **kwargs).search(env)
        visits = np.zeros(env.action_space.n, np.int64)
        visits[alone.root_actions] = alone.root_visits
        assert np.array_equal(result.visits[b], visits), b
        i = np.argmax(alone.root_visits)
        assert result.actions[b] == alone.root_actions[i]
        assert result.values[b] == pytest.approx(2.0 * alone.root_values[i] - 1.0, abs=1e-12)


def test_root_noise_of_game_0_is_the_single_game_search_s() -> None:
    states = random_states(C4, 4, seed=5)
    kwargs = {"evaluator": integer_priors, "seed": 3, "dirichlet_alpha": 0.3}
    noisy = PUCT(iterations=100, **kwargs).search_batch(batch(C4, states))
    env = single(C4)
    env.restore_state(states[0])
    alone = PUCT(iterations=100, batch_size=1, **kwargs).search(env)
    assert np.array_equal(noisy.visits[0, alone.root_actions], alone.root_visits)
    plain = PUCT(iterations=100, evaluator=integer_priors, seed=3).search_batch(batch(C4, states))
    assert not np.array_equal(noisy.visits, plain.visits)


# -- perfect Tic-Tac-Toe with an exact evaluator -------------------------------------------------

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
BITS = 1 << np.arange(9)


@functools.cache
def negamax(mine: int, theirs: int) -> int:
    """The value of a Tic-Tac-Toe position for the player to move (stones as bitmasks)."""
    if any(all(theirs >> i & 1 for i in line) for line in LINES):
        return -1
    empty = [i for i in range(9) if not (mine | theirs) >> i & 1]
    if not empty:
        return 0
    return max(-negamax(theirs, mine | 1 << i) for i in empty)


def boards(observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mover's, opponent's) stones of a batch of observations, as bitmasks."""
    flat = observations.reshape(len(observations), 2, 9).astype(np.int64)
    return flat[:, 0] @ BITS, flat[:, 1] @ BITS


def exact(observations: np.ndarray, masks: np.ndarray):
    """Solved Tic-Tac-Toe: the exact value of every leaf, uniform priors."""
    mine, theirs = boards(observations)
    empty = ~((mine | theirs)[:, None] & BITS).astype(bool)
    assert np.array_equal(empty, masks), "the masks are the leaves' empty squares"
    values = [negamax(int(x), int(y)) for x, y in zip(mine, theirs)]
    return np.ones(masks.shape), np.array(values, dtype=np.float64)


def every_position() -> list:
    """The states of every Tic-Tac-Toe position reachable from the start with a move to play."""
    env, seen, out = single(TTT), set(), []

    def visit(state) -> None:
        key = state.data.tobytes()
        if key in seen:
            return
        seen.add(key)
        env.restore_state(state)
        legal = [int(a) for a in env.legal_actions()]
        if not legal:
            return
        out.append(state)
        for a in legal:
            env.restore_state(state)
            env.step(a)
            visit(env.clone_state())

    visit(env.clone_state())
    return out


def test_an_exact_evaluator_plays_perfect_tictactoe_from_every_position() -> None:
    positions = every_position()
    assert len(positions) == 4520
    agent = PUCT(iterations=200, seed=0, evaluator=exact, form="alphazero", c=1.0)
    m = 64
    for k in range(0, len(positions), m):
        chunk = positions[k : k + m]
        chunk += chunk[: m - len(chunk)]  # the last batch padded with earlier positions
        venv = batch(TTT, chunk)
        mine, theirs = boards(venv.unwrapped.observation())
        moves = agent.act_batch(venv)
        for x, y, a in zip(mine, theirs, moves):
            best = negamax(int(x), int(y))
            assert -negamax(int(y), int(x) | 1 << int(a)) == best, (int(x), int(y), int(a))


def test_an_exact_evaluator_keeps_the_value_at_m_1() -> None:
    positions = every_position()[::300]
    agent = PUCT(iterations=200, seed=0, evaluator=exact, form="alphazero", c=1.0)
    for state in positions:
        venv = batch(TTT, [state])
        (x,), (y,) = boards(venv.unwrapped.observation())
        (a,) = agent.act_batch(venv)
        assert -negamax(int(y), int(x) | 1 << int(a)) == negamax(int(x), int(y))


# -- finished games, puzzles, bad input ----------------------------------------------------------


def test_a_finished_game_gets_no_action_and_is_not_evaluated() -> None:
    over = single(TTT, (0, 3, 1, 4, 2)).clone_state()  # X has won
    states = [over, single(TTT, (0, 4, 1)).clone_state()]
    sizes = []

    def evaluator(observations, masks):
        sizes.append(len(masks))
        assert masks.any(axis=1).all()
        return uniform(observations, masks)

    result = PUCT(iterations=50, evaluator=evaluator).search_batch(batch(TTT, states))
    assert result.actions[0] == NO_ACTION and result.visits[0].sum() == 0
    assert np.isnan(result.values[0]) and result.actions[1] == 2
    assert set(sizes) == {1} and result.evaluator_calls == len(sizes) <= 50


def test_puzzles_take_normalised_values_and_exact_scores_at_the_end() -> None:
    venv = gym.make_vec(
        "mc_envs/LeftMove-v0", num_envs=3, vectorization_mode="vector_entry_point", depth=5
    )
    venv.reset(seed=0)

    def evaluator(observations, masks):
        return np.ones(masks.shape), np.full(len(masks), 0.5)

    result = PUCT(iterations=400, seed=0, evaluator=evaluator, c=0.5).search_batch(venv)
    assert (result.actions == 0).all()


def test_bad_input_is_refused_with_clear_errors() -> None:
    states = random_states(C4, 2, seed=1)
    venv = batch(C4, states)
    with pytest.raises(TypeError, match="compiled vector env"):
        PUCT(iterations=10).search_batch(single(C4))
    sync = gym.make_vec(C4, num_envs=2, vectorization_mode="sync")
    with pytest.raises(TypeError, match="compiled vector env"):
        PUCT(iterations=10).act_batch(sync)
    sync.close()

    def short_priors(observations, masks):
        return np.ones((len(masks), 6)), np.zeros(len(masks))

    def column_values(observations, masks):
        return np.ones(masks.shape), np.zeros((len(masks), 1))

    def nan_values(observations, masks):
        return np.ones(masks.shape), np.full(len(masks), np.nan)

    with pytest.raises(ValueError, match=r"priors of shape \(2, 6\), expected \(2, 7\)"):
        PUCT(iterations=10, evaluator=short_priors).search_batch(venv)
    with pytest.raises(ValueError, match=r"values of shape \(2, 1\), expected \(2,\)"):
        PUCT(iterations=10, evaluator=column_values).search_batch(venv)
    with pytest.raises(ValueError, match="not finite"):
        PUCT(iterations=10, evaluator=nan_values).search_batch(venv)
    with pytest.raises(ValueError, match="must return"):
        PUCT(iterations=10, evaluator=lambda o, m: m).search_batch(venv)
    with pytest.raises(ValueError, match="simulations="):
        PUCT(time_limit=1.0, evaluator=uniform).search_batch(venv)
    with pytest.raises(TypeError, match="Python prior"):
        PUCT(iterations=10, prior=lambda env: None).search_batch(venv)
    with pytest.raises(ValueError, match="max_tree_bytes"):
        PUCT(iterations=1000, max_tree_bytes=10_000).search_batch(venv)
    with pytest.raises(ValueError, match="simulations must be"):
        PUCT(evaluator=uniform).search_batch(venv, simulations=0)
    ttt = batch(TTT, [single(TTT).clone_state()])
    with pytest.raises(ValueError, match="ConnectFour"):
        PUCT(iterations=10, prior=connect_four_prior).search_batch(ttt)


def test_self_play_steps_the_vector_env_with_the_chosen_moves() -> None:
    # Games end at different times; a finished game's action (NO_ACTION) is ignored by the
    # autoreset step that starts its next game.
    venv = gym.make_vec(TTT, num_envs=8, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    venv.step(np.arange(8))  # eight different openings, every one a draw
    agent = PUCT(iterations=200, seed=0, evaluator=exact, form="alphazero", c=1.0)
    finished = np.zeros(8, bool)
    rewards = []
    for _ in range(12):
        actions = agent.act_batch(venv)
        assert ((actions == NO_ACTION) == ~venv.unwrapped.action_masks().any(axis=1)).all()
        _, reward, terminated, _, _ = venv.step(actions)
        rewards.extend(reward[terminated & ~finished])
        finished |= terminated
    assert finished.all() and set(rewards) <= {0.0}  # perfect play: draws only


@pytest.mark.parametrize("with_evaluator", [False, True], ids=["playouts", "evaluator"])
def test_the_leaves_are_observed_for_an_evaluator_only(with_evaluator: bool) -> None:
    # An observation is the evaluator's input; playouts never read it (Morpion's costs as much
    # as a move), so that a search without an evaluator leaves the leaves' buffer unwritten.
    from mc_envs.agents.mcts import puct_batch as pb

    venv = batch(C4, [single(C4, moves).clone_state() for moves in ((), (3, 3), (0,))])
    seen: list[np.ndarray] = []

    def evaluator(obs, masks):
        seen.append(obs.copy())
        return masks / masks.sum(axis=1, keepdims=True), np.zeros(len(masks))

    evaluate = evaluator if with_evaluator else None
    job = pb._prepare(venv.unwrapped, 20, evaluate, pb.DEFAULT_CONFIG, None, None)
    pb._rounds(job, 20, evaluate, pb.DEFAULT_CONFIG, np.array([7], np.uint64))
    written = bool(job.leaves.obs.any())
    assert written == with_evaluator
    assert len(seen) == (20 if with_evaluator else 0)
    if with_evaluator:
        assert np.array_equal(seen[-1], job.leaves.obs)
