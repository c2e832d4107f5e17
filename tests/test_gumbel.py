"""Gumbel AlphaZero's root in the batched search: the halving schedule, known answers, perfect
Tic-Tac-Toe with an exact evaluator, improved policies, and refusals."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from test_puct_batch import (
    C4,
    FORCED_BLOCK,
    TTT,
    WIN_IN_ONE,
    batch,
    boards,
    every_position,
    exact,
    negamax,
    tiled,
    uniform,
)

from mc_envs.agents import PUCT
from mc_envs.agents.mcts.gumbel import visit_schedule


def test_the_schedule_halves_the_considered_actions_phase_by_phase() -> None:
    assert list(visit_schedule(4, 16)) == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert list(visit_schedule(1, 5)) == [0, 1, 2, 3, 4]
    s = visit_schedule(16, 64)
    assert len(s) == 64 and list(s[:16]) == [0] * 16  # every considered action once first
    # Replaying the schedule: each visit goes to an action with exactly that count.
    counts = np.zeros(16, int)
    for want in s:
        i = int(np.flatnonzero(counts == want)[0])
        counts[i] += 1
    assert sorted(counts)[-2:] == [counts.max()] * 2 and counts.sum() == 64


@pytest.mark.parametrize("m", [1, 64])
@pytest.mark.parametrize("env_id", [C4, TTT])
def test_wins_in_one_and_forced_blocks(m: int, env_id: str) -> None:
    states, answers = tiled(WIN_IN_ONE + FORCED_BLOCK, env_id, m)
    venv = batch(env_id, states)
    before = venv.unwrapped.clone_state()
    agent = PUCT(iterations=300, seed=0, evaluator=uniform, form="alphazero")
    result = agent.search_batch(venv, gumbel=16)  # a block needs the replies' subtrees searched
    assert venv.unwrapped.clone_state() == before
    assert np.array_equal(result.actions, answers)
    policy = result.policy
    assert np.allclose(policy.sum(axis=1), 1.0)
    assert (policy.argmax(axis=1) == answers).all()  # the improved policy favours the answer
    assert result.visits.sum() == m * 299


def value_losses(positions: list, agent: PUCT, gumbel: int | None) -> int:
    """How many of ``positions`` (all with the same number of legal moves, searched together)
    the argmax of the search's policy loses value in: Gumbel's improved policy, or PUCT's
    visit distribution."""
    venv = batch(TTT, positions)
    mine, theirs = boards(venv.unwrapped.observation())
    moves = agent.search_batch(venv, gumbel=gumbel).policy.argmax(axis=1)
    return sum(
        -negamax(int(y), int(x) | 1 << int(a)) != negamax(int(x), int(y))
        for x, y, a in zip(mine, theirs, moves, strict=True)
    )


def test_one_visit_per_move_with_exact_values_gives_an_improved_policy_everywhere() -> None:
    # Gumbel's policy improvement: with exact values of the considered actions (all of them),
    # the improved policy's best move is a best move. One simulation per legal move is enough
    # in every Tic-Tac-Toe position; PUCT's visits with the same budget are not.
    by_count: dict[int, list] = {}
    env = gym.make(TTT).unwrapped
    for state in every_position():
        env.restore_state(state)
        by_count.setdefault(len(env.legal_actions()), []).append(state)
    gumbel_losses = puct_losses = 0
    for k, positions in sorted(by_count.items()):
        agent = PUCT(iterations=k + 1, seed=0, evaluator=exact, form="alphazero", c=1.0)
        gumbel_losses += value_losses(positions, agent, gumbel=9)
        puct_losses += value_losses(positions, agent, gumbel=None)
    assert sum(map(len, by_count.values())) == 4520
    assert gumbel_losses == 0
    assert puct_losses > 0


def test_the_same_seed_gives_the_same_search_and_gumbel_needs_an_evaluator() -> None:
    states, _ = tiled(WIN_IN_ONE + FORCED_BLOCK, C4, 8)
    venv = batch(C4, states)
    a = PUCT(iterations=32, seed=3, evaluator=uniform).search_batch(venv, gumbel=4)
    b = PUCT(iterations=32, seed=3, evaluator=uniform).search_batch(venv, gumbel=4)
    assert np.array_equal(a.visits, b.visits) and np.array_equal(a.policy, b.policy)
    # Four actions considered: at most four root actions visited.
    assert ((a.visits > 0).sum(axis=1) <= 4).all()
    with pytest.raises(ValueError, match="gumbel=4 needs an evaluator"):
        PUCT(iterations=8).search_batch(venv, gumbel=4)
    with pytest.raises(ValueError, match="no dirichlet_alpha"):
        PUCT(iterations=8, evaluator=uniform, dirichlet_alpha=0.3).search_batch(venv, gumbel=4)


def test_completed_sigma_completes_unvisited_values_and_rescales() -> None:
    from mc_envs.agents.mcts.gumbel import completed_sigma, completed_sigma_rows

    # Visited: 0.8 (2 visits). Unvisited ones get (0.2 + 2 * 0.8) / 3 = 0.6; rescaled over
    # [0.6, 0.8] and multiplied by (50 + 2) * 0.1.
    p, q, visits, out = (
        np.array([0.5, 0.3, 0.2]),
        np.array([0.8, 0, 0]),
        np.array([2.0, 0, 0]),
        np.empty(3),
    )
    completed_sigma(p, q, visits, 0.2, 3, out)
    np.testing.assert_allclose(out, [5.2, 0.0, 0.0])
    # Nothing visited: every value is the node's, so all equal.
    completed_sigma(p, q, np.zeros(3), 0.3, 3, out)
    np.testing.assert_allclose(out, 0.0)
    # Rows: only the legal actions count, and the others get 0.
    legal = np.array([[True, False, True, True]])
    rows = np.empty((1, 4))
    priors = np.array([[0.5, 0.9, 0.3, 0.2]])
    completed_sigma_rows(
        priors,
        legal,
        np.array([[0.8, 0.1, 0, 0]]),
        np.array([[2.0, 5, 0, 0]]),
        np.array([0.2]),
        rows,
    )
    np.testing.assert_allclose(rows, [[5.2, 0.0, 0.0, 0.0]])
