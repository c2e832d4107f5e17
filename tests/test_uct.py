"""UCT: compiled and generic paths agree, budgets, tree reuse, presets, one-player puzzles."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents import UCT
from mc_envs.agents.mcts.presets import PRESETS
from mc_envs.agents.mcts.tree import ROOT, Tree


def make(env_id: str, **kwargs):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    return env


@pytest.mark.parametrize("env_id", ["mc_envs/TicTacToe-v0", "mc_envs/ConnectFour-v0"])
def test_compiled_and_generic_agree(env_id: str) -> None:
    env = make(env_id)
    env.step(int(env.legal_actions()[1]))
    before = env.clone_state()
    fast = UCT(iterations=250, seed=5).search(env)
    slow = UCT(iterations=250, seed=5, compiled=False).search(env)
    assert env.clone_state() == before  # the search leaves the env as it was
    assert np.array_equal(fast.root_visits, slow.root_visits)
    assert np.allclose(fast.root_values, slow.root_values)
    assert fast.actions == slow.actions and fast.score == slow.score
    assert fast.iterations == slow.iterations == 250 and fast.stopped == "iterations"


def test_one_player_samegame_compiled_and_generic_agree() -> None:
    board = "1122\n2211\n1212\n3311"
    env = make("mc_envs/SameGame-v0", board=board)
    for backup in ("mean", "max"):
        fast = UCT(iterations=120, seed=3, backup=backup).search(env)
        slow = UCT(iterations=120, seed=3, backup=backup, compiled=False).search(env)
        assert fast.actions == slow.actions and fast.score == slow.score
        assert np.array_equal(fast.root_visits, slow.root_visits)
        # the best sequence replays to its score
        replay = make("mc_envs/SameGame-v0", board=board)
        for a in fast.actions:
            replay.step(a)
        assert replay.score == fast.score and len(replay.legal_actions()) == 0


def test_uct_on_samegame_position_improves_on_a_playout() -> None:
    env = make("mc_envs/SameGame-v0", position=1)
    result = UCT(iterations=3000, seed=1, backup="max").search(env)
    assert result.score > 600 and result.playouts == 3000


def test_tree_reuse_continues_from_the_subtree() -> None:
    env = make("mc_envs/ConnectFour-v0")
    agent = UCT(iterations=2000, seed=0)
    a = agent.act(env)
    env.step(a)
    reply = int(env.legal_actions()[0])
    env.step(reply)
    result = agent.search(env, iterations=10)
    assert result.root_visits.sum() > 10  # statistics carried over from the previous search
    fresh = UCT(iterations=10, seed=0, reuse=False).search(env)
    assert fresh.root_visits.sum() <= 10


@pytest.mark.parametrize("options", [{}, {"rave": 200.0, "knowledge": "tactics"}])
def test_a_kept_subtree_searches_as_it_would_in_the_whole_tree(monkeypatch, options) -> None:
    """set_root keeps only the subtree reached (renumbered): the next search gives the same
    statistics as one that continues in the whole tree (the root moved, nothing dropped)."""

    def play_on(agent: UCT) -> tuple:
        env = make("mc_envs/ConnectFour-v0")
        first = agent.search(env, iterations=3000)
        env.step(first.actions[0])
        env.step(first.actions[1])
        result = agent.search(env, iterations=500)
        return result.root_actions, result.root_visits, result.root_values, agent._tree.size

    actions, visits, values, kept = play_on(UCT(seed=3, **options))
    monkeypatch.setattr(
        Tree, "set_root", lambda tree, node: tree.arrays.used.__setitem__(ROOT, node)
    )
    actions2, visits2, values2, whole = play_on(UCT(seed=3, **options))
    assert visits.sum() > 500  # the kept subtree's visits are there
    assert (actions == actions2).all() and (visits == visits2).all()
    assert np.allclose(values, values2, equal_nan=True)
    assert kept < whole - 1000  # what the first search spent on other moves is gone


def test_time_budget_and_presets() -> None:
    env = make("mc_envs/ConnectFour-v0")
    result = UCT(seed=0).search(env, time_limit=0.2)
    assert result.stopped == "time" and result.iterations > 100
    agent = UCT.from_preset("easy", seed=0)
    assert agent.iterations == PRESETS["easy"]
    assert agent.search(env).iterations == PRESETS["easy"]
    with pytest.raises(ValueError):
        UCT.from_preset("godlike")


def test_search_at_the_end_raises() -> None:
    env = make("mc_envs/TicTacToe-v0")
    for a in (0, 3, 1, 4, 2):
        env.step(a)
    with pytest.raises(ValueError, match="over"):
        UCT(iterations=10).search(env)


def test_a_tree_that_reaches_its_memory_cap_stops_and_still_answers() -> None:
    env = gym.make("mc_envs/ConnectFour-v0").unwrapped
    env.reset(seed=0)
    cap = 200_000
    agent = UCT(seed=1, reuse=False, max_tree_bytes=cap)
    result = agent.search(env, time_limit=60.0)
    assert result.stopped == "memory" and result.seconds < 30
    assert 0 < result.extra["tree_bytes"] <= cap
    assert result.iterations > 100 and sum(result.root_visits) > 0
    assert agent.act(env) in env.legal_actions()
    free = UCT(seed=1, reuse=False).search(env, iterations=result.iterations)
    assert free.stopped == "iterations"
