"""PUCT: both selection forms, priors on the compiled and generic paths, root noise."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents import PUCT, RandomAgent
from mc_envs.agents.mcts.puct import connect_four_prior
from mc_envs.cli.two_player import play_game


def make(env_id: str = "mc_envs/ConnectFour-v0"):
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    return env


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"prior": connect_four_prior},
        {"prior": connect_four_prior, "form": "alphazero", "dirichlet_alpha": 0.5},
    ],
)
def test_compiled_and_generic_agree(kwargs: dict) -> None:
    env = make()
    env.step(3)
    fast = PUCT(iterations=200, seed=2, **kwargs).search(env)
    slow = PUCT(iterations=200, seed=2, compiled=False, **kwargs).search(env)
    assert np.array_equal(fast.root_visits, slow.root_visits)
    assert fast.actions == slow.actions


def test_python_prior_runs_generic_and_steers_the_search() -> None:
    env = make()
    calls = []

    def prior(e):
        calls.append(1)
        p = np.full(7, 0.01)
        p[6] = 1.0
        return p

    result = PUCT(iterations=60, seed=0, prior=prior, c=20.0).search(env)
    assert calls and result.root_actions[np.argmax(result.root_visits)] == 6


def test_heuristic_prior_takes_the_win() -> None:
    env = make()
    for a in (0, 6, 1, 6, 2):
        env.step(a)
    # O to move must block column 3; then X ...
    assert PUCT(iterations=400, seed=0, prior=connect_four_prior).act(env) == 3
    probs = connect_four_prior(env)
    assert probs.argmax() == 3 and abs(probs.sum() - 1) < 1e-12


def test_puct_beats_random() -> None:
    env = make()
    wins = 0
    for g in range(20):
        puct, rnd = (
            PUCT(iterations=200, seed=g, prior=connect_four_prior, form="alphazero"),
            RandomAgent(seed=g),
        )
        r0 = play_game(env, puct, rnd, seed=g) if g % 2 == 0 else -play_game(env, rnd, puct, seed=g)
        wins += r0 > 0
    assert wins >= 19


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        PUCT(form="muzero")
    with pytest.raises(TypeError):
        PUCT(prior=3)
