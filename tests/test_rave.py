"""UCT's RAVE (AMAF statistics) and tree knowledge (virtual visits): known answers, AMAF counts
recomputed from the iterations' paths, compiled and generic paths, options, tree reuse, GTP."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents import UCT
from mc_envs.agents.mcts.tree import NARROW, WIDE
from mc_envs.agents.specs import parse
from mc_envs.cli.gtp_engine import GtpEngine


def make(env_id: str, **kwargs):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    return env


def play(env, *actions: int):
    for a in actions:
        env.step(a)
    return env


def logged_paths(env) -> list[list[int]]:
    """Makes the (unwrapped) env log its moves: one list per iteration of a generic search, which
    restores the root state at the start of every iteration and moves by ``play_move``."""
    paths: list[list[int]] = []
    move, restore = env.play_move, env.restore_state

    def logged_move(a):
        paths[-1].append(int(a))
        return move(a)

    def logged_restore(state):
        paths.append([])
        return restore(state)

    env.play_move, env.restore_state = logged_move, logged_restore
    return paths


def expected_root_amaf(env, paths, actions, two_player: bool):
    """The root edges' AMAF visits and totals from the iterations' paths: an edge is credited once
    an iteration when the root's player played its action at an even ply."""
    root = env.clone_state()
    mover = env.current_player
    visits, totals = np.zeros(len(actions)), np.zeros(len(actions))
    for path in paths:
        env.restore_state(root)
        for a in path:
            env.step(a)
        if two_player:
            r = float(env.returns()[0])
            value = (1.0 + r) / 2 if mover == 0 else (1.0 - r) / 2
        else:
            value = env.score
        mine = set(path[0::2]) if two_player else set(path)
        for k, a in enumerate(actions):
            if a in mine:
                visits[k] += 1.0
                totals[k] += value
    env.restore_state(root)
    return visits, totals


@pytest.mark.parametrize(
    "env_id,kwargs,moves,iterations",
    [
        ("mc_envs/TicTacToe-v0", {}, (4,), 1),
        ("mc_envs/TicTacToe-v0", {}, (4, 0), 2),
        ("mc_envs/ConnectFour-v0", {}, (3,), 40),
        ("mc_envs/SameGame-v0", {"board": "1122\n2211\n1212\n3311"}, (), 30),
    ],
)
def test_root_amaf_counts_follow_the_iterations_paths(env_id, kwargs, moves, iterations) -> None:
    env = play(make(env_id, **kwargs), *moves)
    two_player = env_id != "mc_envs/SameGame-v0"
    agent = UCT(iterations=iterations, seed=7, rave=50.0, compiled=False)
    paths = logged_paths(env)
    agent.search(env)
    paths = [p for p in paths if p]  # the search's final restore of the env starts no iteration
    assert len(paths) == iterations
    tree = agent._tree
    actions, _ = tree.edges(tree.root)
    visits, totals = tree.root_amaf()
    del env.play_move, env.restore_state
    want_visits, want_totals = expected_root_amaf(env, paths, actions, two_player)
    assert np.array_equal(visits, want_visits)
    assert np.allclose(totals, want_totals)
    assert visits.sum() > 0


@pytest.mark.parametrize(
    "env_id,kwargs",
    [
        ("mc_envs/TicTacToe-v0", {"rave": 20.0}),
        ("mc_envs/ConnectFour-v0", {"rave": 200.0}),
        ("mc_envs/ConnectFour-v0", {"rave_bias": 0.1}),
        ("mc_envs/ConnectFour-v0", {"knowledge": "tactics"}),
        ("mc_envs/ConnectFour-v0", {"rave": 200.0, "knowledge": "tactics", "c": 0.3}),
    ],
)
def test_compiled_and_generic_agree_with_rave_and_knowledge(env_id, kwargs) -> None:
    env = play(make(env_id), 2, 4)
    fast_agent = UCT(iterations=300, seed=5, **kwargs)
    slow_agent = UCT(iterations=300, seed=5, compiled=False, **kwargs)
    fast, slow = fast_agent.search(env), slow_agent.search(env)
    assert np.array_equal(fast.root_visits, slow.root_visits)
    assert np.allclose(fast.root_values, slow.root_values, equal_nan=True)
    assert fast.actions == slow.actions and fast.score == slow.score
    assert fast.root_visits.sum() == 300  # virtual visits are not reported
    for a, b in zip(fast_agent._tree.root_amaf(), slow_agent._tree.root_amaf()):
        assert np.allclose(a, b)
    assert fast_agent._tree.arrays.edge_priors.shape[1] == WIDE


def test_go_with_rave_mogo_knowledge_and_policy_compiled_and_generic_agree() -> None:
    env = play(make("mc_envs/Go-v0", size=9), 40, 30)
    kwargs = dict(iterations=80, seed=1, rave=1000.0, c=0.0, knowledge="mogo", policy="mogo")
    fast_agent, slow_agent = UCT(**kwargs), UCT(compiled=False, **kwargs)
    fast, slow = fast_agent.search(env), slow_agent.search(env)
    assert np.array_equal(fast.root_visits, slow.root_visits) and fast.actions == slow.actions
    for a, b in zip(fast_agent._tree.root_amaf(), slow_agent._tree.root_amaf()):
        assert np.allclose(a, b)
    assert fast_agent._tree.root_amaf()[0].sum() > 80  # AMAF credits many edges an iteration


def test_one_player_compiled_and_generic_agree_with_rave() -> None:
    board = "1122\n2211\n1212\n3311"
    env = make("mc_envs/SameGame-v0", board=board)
    for backup in ("mean", "max"):
        fast_agent = UCT(iterations=150, seed=3, backup=backup, rave_bias=0.05)
        slow_agent = UCT(iterations=150, seed=3, backup=backup, rave_bias=0.05, compiled=False)
        fast, slow = fast_agent.search(env), slow_agent.search(env)
        assert fast.actions == slow.actions and fast.score == slow.score
        assert np.array_equal(fast.root_visits, slow.root_visits)
        assert np.allclose(fast_agent._tree.root_amaf()[1], slow_agent._tree.root_amaf()[1])


def test_rave_off_is_plain_uct() -> None:
    env = play(make("mc_envs/ConnectFour-v0"), 3)
    agent = UCT(iterations=200, seed=1)
    agent.search(env)
    assert agent._tree.arrays.edge_priors.shape[1] == NARROW
    assert "rave" not in agent.params and "knowledge" not in agent.params
    params = UCT(rave=500.0, knowledge="tactics", fpu=0.8).params
    assert (params["rave"], params["rave_bias"], params["knowledge"], params["fpu"]) == (
        500.0,
        None,
        "tactics",
        0.8,
    )


# X to move must complete the top row (X X . / O O . / . . .): 2 wins; 5 is O's threat.
TICTACTOE_WIN = (0, 3, 1, 4)
# Connect Four: X 0, O 0, X 1, O 1, X 2: X has columns 0, 1, 2 of the bottom row, and O (to
# move) must block at 3.
CONNECT_FOUR_THREAT = (0, 0, 1, 1, 2)


@pytest.mark.parametrize("schedule", [{"rave": 100.0}, {"rave_bias": 0.1}])
def test_rave_finds_the_winning_move_at_tictactoe(schedule) -> None:
    env = play(make("mc_envs/TicTacToe-v0"), *TICTACTOE_WIN)
    for seed in range(3):
        assert UCT(iterations=400, seed=seed, c=0.2, **schedule).act(env) == 2


@pytest.mark.parametrize("compiled", [True, False])
def test_rave_blocks_at_connect_four(compiled: bool) -> None:
    env = play(make("mc_envs/ConnectFour-v0"), *CONNECT_FOUR_THREAT)
    for seed in range(3):
        agent = UCT(iterations=1500, seed=seed, rave=300.0, c=0.3, compiled=compiled)
        assert agent.act(env) == 3


def test_knowledge_steers_a_tiny_search() -> None:
    # X to win with column 3 (three X in column 3): the tactics knowledge's 100 virtual visits of
    # value 1 give it every iteration (plain UCT tries all 7 moves first).
    env = play(make("mc_envs/ConnectFour-v0"), 3, 0, 3, 0, 3, 6)
    for seed in range(3):
        result = UCT(iterations=10, seed=seed, c=0.3, knowledge="tactics").search(env)
        assert result.root_visits.tolist() == [0, 0, 0, 10, 0, 0, 0]
        plain = UCT(iterations=10, seed=seed, c=0.3).search(env)
        assert plain.root_visits.max() <= 4


def test_callable_knowledge_with_huge_virtual_visits_decides_the_move() -> None:
    env = make("mc_envs/TicTacToe-v0")
    for favourite in (0, 5, 7):

        def knowledge(e, favourite=favourite):
            actions = e.legal_actions()
            visits = np.where(actions == favourite, 1e6, 0.0)
            return visits, np.ones(len(actions))

        agent = UCT(iterations=30, seed=0, c=0.3, fpu=0.0, knowledge=knowledge)
        assert agent.act(env) == favourite
        visits = dict(zip(agent._tree.edges(agent._tree.root)[0].tolist(), range(9)))
        result = agent.search(env, iterations=30)  # the kept tree, 30 more
        assert result.root_visits.sum() == 60  # virtual visits are not counted
        assert result.root_visits[visits[favourite]] == 60


def test_options_are_checked() -> None:
    for kwargs, word in [
        ({"rave": 0.0}, "rave"),
        ({"rave": -3.0}, "rave"),
        ({"rave_bias": float("nan")}, "rave_bias"),
        ({"rave": 10.0, "rave_bias": 0.1}, "not both"),
        ({"knowledge": 3}, "knowledge"),
        ({"fpu": float("inf")}, "fpu"),
    ]:
        with pytest.raises(ValueError, match=word):
            UCT(**kwargs)
    agent = parse("uct:rave=1000,c=0,knowledge=tactics,reuse=false")  # an agent spec's options
    assert (agent.options.rave, agent.options.knowledge, agent.c, agent.rule) == (
        1000.0,
        "tactics",
        0.0,
        "rave",
    )
    env = make("mc_envs/ConnectFour-v0")
    for compiled in (True, False):
        with pytest.raises(ValueError, match=r"no tree knowledge 'mogo'.*\['tactics'\]"):
            UCT(knowledge="mogo", compiled=compiled).search(env, iterations=5)
    with pytest.raises(ValueError, match=r"no tree knowledge 'tactics'; it has \[\]"):
        UCT(knowledge="tactics").search(make("mc_envs/TicTacToe-v0"), iterations=5)


def test_tree_reuse_keeps_the_amaf_statistics() -> None:
    env = make("mc_envs/ConnectFour-v0")
    agent = UCT(iterations=2000, seed=0, rave=200.0, knowledge="tactics")
    first = agent.search(env)
    a = first.actions[0]
    env.step(a)
    reply = first.actions[1]
    env.step(reply)
    visits_before, totals_before = agent._tree.root_amaf()  # the old root's
    result = agent.search(env, iterations=10)
    assert result.root_visits.sum() > 10  # statistics carried over
    visits, _ = agent._tree.root_amaf()
    assert visits.sum() > result.root_visits.sum()  # AMAF credits more edges than it visits
    assert visits_before.sum() > 0
    fresh = UCT(iterations=10, seed=0, rave=200.0, reuse=False).search(env)
    assert fresh.root_visits.sum() == 10


def test_gtp_undo_and_clear_board_start_a_new_tree() -> None:
    engine = GtpEngine("random", size=5)
    agent = engine.agent = UCT(iterations=300, seed=2, rave=100.0)
    results = []
    search = agent.search

    def logged(env, **kwargs):
        results.append(search(env, **kwargs))
        return results[-1]

    agent.search = logged  # type: ignore[method-assign]

    def genmove() -> int:
        out = engine.handle("genmove b")[0]
        assert out is not None and out.startswith("= ")
        return results[-1].extra["tree_nodes"]

    assert genmove() <= 301  # a new tree: one node an iteration at most
    reply = results[-1].actions[1]  # White answers as the tree expects
    from mc_envs.games.go_text import vertex

    assert engine.handle(f"play w {vertex(5, reply)}")[0] == "= \n\n"
    assert genmove() > 301  # the subtree two moves down was kept
    assert engine.handle("undo")[0] == "= \n\n"
    assert genmove() <= 301  # same position as the kept root, but undo drops the tree
    assert engine.handle("clear_board")[0] == "= \n\n"
    assert genmove() <= 301
    assert engine.handle("clear_board")[0] == "= \n\n"
    assert genmove() <= 301  # the empty board again: still a new tree
