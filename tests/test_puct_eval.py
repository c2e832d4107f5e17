"""PUCT with a learned evaluator: batched leaves, exact values at the end of the game, known answers."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents import PUCT


def make(env_id: str, *moves: int, **kwargs):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    for a in moves:
        env.step(a)
    return env


def uniform(observations: np.ndarray, masks: np.ndarray):
    """Knows nothing: uniform priors, value 0 (two-player) for every leaf."""
    return np.ones(masks.shape), np.zeros(len(masks))


@functools.cache
def _negamax(key: bytes) -> float:
    env = make("mc_envs/TicTacToe-v0")
    env.restore_state(_states[key])
    legal = env.legal_actions()
    if len(legal) == 0:
        mover = env.current_player
        return float(env.returns()[mover])
    best = -2.0
    snap = env.clone_state()
    for a in legal:
        env.restore_state(snap)
        env.step(int(a))
        child = env.clone_state()
        _states[child.data.tobytes()] = child
        best = max(best, -_negamax(child.data.tobytes()))
    return best


_states: dict = {}


def tictactoe_oracle(env):
    """An evaluator that knows tic-tac-toe exactly (values by negamax) but not which move is best
    (uniform priors). It reads the leaves from their observations, so it checks them too."""

    def evaluate(observations: np.ndarray, masks: np.ndarray):
        values = []
        for obs, mask in zip(observations, masks):
            mine, theirs = obs[0].ravel(), obs[1].ravel()
            probe = make("mc_envs/TicTacToe-v0")
            order = [int(i) for i in np.flatnonzero(mine | theirs)]
            # Rebuild the position: the player to move has as many stones as the other, or one
            # fewer; play the stones alternately, the side to move's stones last when it is behind.
            first, second = (mine, theirs) if mine.sum() == theirs.sum() else (theirs, mine)
            a = [i for i in order if first[i]]
            b = [i for i in order if second[i]]
            for k in range(len(a) + len(b)):
                probe.step(a[k // 2] if k % 2 == 0 else b[k // 2])
            assert np.array_equal(probe.action_masks(), mask), "the mask is not the leaf's"
            snap = probe.clone_state()
            _states[snap.data.tobytes()] = snap
            values.append(_negamax(snap.data.tobytes()))
        return np.ones(masks.shape), np.array(values)

    return evaluate


def test_the_evaluator_is_called_on_batches_of_leaves() -> None:
    env = make("mc_envs/ConnectFour-v0")
    sizes = []

    def evaluator(observations, masks):
        sizes.append(len(observations))
        assert observations.shape[1:] == env.observation().shape
        assert masks.shape == (len(observations), 7) and masks.any(axis=1).all()
        return uniform(observations, masks)

    result = PUCT(iterations=400, seed=0, evaluator=evaluator, batch_size=8).search(env)
    assert sum(sizes) <= 400 and max(sizes) == 8 and len(sizes) < 400 / 4
    assert result.iterations == 400
    assert int(result.root_visits.sum()) == 399  # every descent but the root's own first one


@pytest.mark.parametrize("batch_size", [1, 8])
def test_exact_values_at_the_end_of_the_game_find_the_winning_move(batch_size: int) -> None:
    # X: 0, 1, 2 on the bottom row; O: 6, 6; X to move wins at 3.
    env = make("mc_envs/ConnectFour-v0", 0, 6, 1, 6, 2, 5)
    result = PUCT(
        iterations=300, seed=1, evaluator=uniform, batch_size=batch_size, form="alphazero"
    ).search(env)
    assert result.root_actions[np.argmax(result.root_visits)] == 3


@pytest.mark.parametrize("batch_size", [1, 4])
def test_an_exact_evaluator_plays_perfect_tictactoe(batch_size: int) -> None:
    # X centre, O edge: X wins with best play; every move the search picks must keep the win.
    env = make("mc_envs/TicTacToe-v0", 4, 1)
    oracle = tictactoe_oracle(env)
    agent = PUCT(iterations=200, seed=0, evaluator=oracle, batch_size=batch_size, form="alphazero")
    snap = env.clone_state()
    move = agent.act(env)
    assert env.clone_state() == snap  # the search leaves the env as it was
    env.step(move)
    after = env.clone_state()
    _states[after.data.tobytes()] = after
    assert _negamax(after.data.tobytes()) == -1.0  # the opponent, to move, is lost


def test_puzzles_take_normalised_values_and_exact_scores_at_the_end() -> None:
    env = make("mc_envs/LeftMove-v0", depth=5)

    def evaluator(observations, masks):
        return np.ones(masks.shape), np.full(len(masks), 0.5)

    result = PUCT(iterations=400, seed=0, evaluator=evaluator, c=0.5).search(env)
    assert result.score == 5.0 and result.actions == [0] * 5


def test_bad_evaluator_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        PUCT(evaluator=uniform, prior=lambda env: None)
    with pytest.raises(ValueError, match="batch_size"):
        PUCT(evaluator=uniform, batch_size=0)
    with pytest.raises(TypeError, match="evaluator"):
        PUCT(evaluator=3)
