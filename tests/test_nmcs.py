"""NMCS: known answers, compiled and generic paths agreeing, budgets, anytime stops."""

import _thread
import signal
import threading
import time

import gymnasium as gym
import numpy as np
import pytest
from helpers import best_score, replayed_score

import mc_envs  # noqa: F401
from mc_envs.agents import NMCS, NRPA
from mc_envs.envs.samegame import SameGameEnv


def small_board(seed, rows=5, cols=5, colors=3):
    env = SameGameEnv(rows=rows, cols=cols, colors=colors)
    env.reset(seed=seed)
    return env


@pytest.mark.parametrize("seed", range(6))
def test_iterated_level_2_finds_the_optimum_of_small_boards(seed):
    env = small_board(seed)
    optimum = best_score(env)
    result = NMCS(level=2, seed=seed).search(env, playouts=20_000)
    assert result.score == optimum
    assert replayed_score(env, result.actions) == result.score


@pytest.mark.parametrize("seed", range(4))
def test_a_level_at_least_the_game_length_is_exact(seed):
    env = small_board(seed, rows=3, cols=3, colors=2)
    length = 4  # at most 9 // 2 moves
    assert NMCS(level=length, seed=seed).search(env).score == best_score(env)


@pytest.mark.parametrize(
    "level, memorize, policy, playouts",
    [
        (1, True, "tabu", None),
        (1, False, "random", None),
        (2, True, "tabu", 700),
        (2, False, "tabu", 700),
        (0, True, "random", 50),
        (3, True, "random", 400),
    ],
)
def test_compiled_and_generic_paths_agree(level, memorize, policy, playouts):
    env = gym.make("mc_envs/SameGame-v0", position=4).unwrapped
    env.reset()
    results = [
        NMCS(level=level, seed=7, policy=policy, memorize=memorize, compiled=compiled).search(
            env, playouts=playouts
        )
        for compiled in (True, False)
    ]
    fast, generic = results
    assert (fast.score, fast.actions, fast.playouts, fast.iterations) == (
        generic.score,
        generic.actions,
        generic.playouts,
        generic.iterations,
    )
    assert replayed_score(env, fast.actions) == fast.score


def test_search_leaves_the_env_as_it_was():
    env = gym.make("mc_envs/SameGame-v0", position=5).unwrapped
    env.reset()
    env.step(env.legal_actions()[3])
    snap = env.clone_state()
    for compiled in (True, False):
        result = NMCS(level=1, seed=1, compiled=compiled).search(env, playouts=300)
        assert env.clone_state() == snap
        assert replayed_score(env, result.actions) == result.score  # from the current state


def test_a_playout_budget_is_exact_and_reproducible():
    env = gym.make("mc_envs/SameGame-v0", position=6).unwrapped
    env.reset()
    a = NMCS(level=1, seed=3).search(env, playouts=2500)
    b = NMCS(level=1, seed=3).search(env, playouts=2500)
    c = NMCS(level=1, seed=4).search(env, playouts=2500)
    assert a.playouts == b.playouts == 2500 and a.stopped == "playouts"
    assert (a.score, a.actions) == (b.score, b.actions)
    assert a.actions != c.actions
    assert a.iterations >= 1  # level-1 runs on position 6 take about 1,000 playouts


def test_memorisation_keeps_the_best_playout_seen():
    env = gym.make("mc_envs/SameGame-v0", position=7).unwrapped
    env.reset()
    seen = []
    result = NMCS(level=1, seed=2).search(env, callback=lambda p: seen.append(p.best_score))
    assert result.stopped == "complete" and result.iterations == 1
    assert result.score >= max(seen)


def test_a_search_over_before_the_first_poll_still_reports_its_result():
    env = gym.make("mc_envs/SameGame-v0", position=7).unwrapped
    env.reset()
    seen = []
    result = NMCS(level=0, seed=1).search(env, playouts=1, callback=seen.append)
    assert seen and seen[-1].best_score == result.score and seen[-1].improved
    assert list(seen[-1].best_actions) == list(result.actions)


def test_without_memorisation_the_result_is_the_sequence_played():
    env = gym.make("mc_envs/SameGame-v0", position=8).unwrapped
    env.reset()
    result = NMCS(level=1, seed=2, memorize=False).search(env)
    assert replayed_score(env, result.actions) == result.score
    with_memory = [NMCS(level=1, seed=s).search(env).score for s in range(4)]
    without = [NMCS(level=1, seed=s, memorize=False).search(env).score for s in range(4)]
    assert np.mean(with_memory) > np.mean(without)


def test_a_callback_can_stop_the_search():
    env = gym.make("mc_envs/SameGame-v0", position=1).unwrapped
    env.reset()
    result = NMCS(level=3, seed=0).search(env, callback=lambda p: p.playouts > 2000)
    assert result.stopped == "callback" and result.playouts >= 2000
    assert replayed_score(env, result.actions) == result.score


def test_a_time_limit_stops_a_long_search():
    env = gym.make("mc_envs/SameGame-v0", position=1).unwrapped
    env.reset()
    result = NMCS(level=4, seed=0).search(env, time_limit=0.5)
    assert result.stopped == "time" and result.score > 0
    assert replayed_score(env, result.actions) == result.score


def interrupt_once_started(search):
    """Runs ``search(callback)`` and sends it a Ctrl-C 0.3 s after its first progress report.

    Python's SIGINT handler is installed for the call, since a shell that starts the tests in the
    background makes them ignore SIGINT (then ``interrupt_main`` does nothing); an interrupt that
    lands outside the search fails the test instead of stopping pytest.
    """
    started, done = threading.Event(), threading.Event()

    def fire():
        if started.wait(120):
            time.sleep(0.3)
            if not done.is_set():
                _thread.interrupt_main()

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    try:
        result = search(lambda progress: started.set())
        done.set()
        thread.join()
    except KeyboardInterrupt:
        pytest.fail("the interrupt landed outside the search")
    finally:
        done.set()
        signal.signal(signal.SIGINT, previous)
    return result


@pytest.mark.parametrize("compiled", [True, False])
def test_ctrl_c_returns_the_best_so_far(compiled):
    env = gym.make("mc_envs/SameGame-v0", position=2).unwrapped
    env.reset()
    NMCS(level=1, compiled=compiled).search(env, playouts=1)  # compile first
    agent = NMCS(level=4, seed=0, compiled=compiled)
    result = interrupt_once_started(lambda cb: agent.search(env, time_limit=60, callback=cb))
    assert result.stopped == "interrupt" and result.score > 0 and result.seconds < 30
    assert replayed_score(env, result.actions) == result.score


def test_max_score_stops_a_budgeted_search():
    env = SameGameEnv(board="00\n00")
    env.reset()
    env.max_score = 1004.0  # (4 - 2)^2 + 1000: the only move clears the board
    result = NMCS(level=1, seed=0).search(env, time_limit=30)
    assert result.stopped == "max_score" and result.score == 1004.0


def test_unknown_policy_is_refused():
    env = gym.make("mc_envs/SameGame-v0", position=1)
    env.reset()
    with pytest.raises(ValueError, match="no playout policy 'greedy'"):
        NMCS(level=1, policy="greedy").search(env)


def test_a_custom_policy_runs_on_the_generic_path():
    env = gym.make("mc_envs/SameGame-v0", position=9).unwrapped
    env.reset()

    def first_group(env):
        return lambda actions, rng: int(actions[0])

    result = NMCS(level=1, seed=0, policy=first_group).search(env)
    assert replayed_score(env, result.actions) == result.score > 0
    again = NMCS(level=1, seed=0, policy=first_group).search(env)
    assert (again.score, again.actions) == (result.score, result.actions)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_budgeted_search_from_a_finished_game_returns_at_once(compiled):
    env = gym.make("mc_envs/SameGame-v0", board="01\n10").unwrapped
    env.reset()
    assert len(env.legal_actions()) == 0
    for agent in (NMCS(level=1, compiled=compiled), NRPA(level=1, compiled=compiled)):
        result = agent.search(env, playouts=3)
        assert (result.score, result.actions, result.stopped) == (env.score, [], "complete")
