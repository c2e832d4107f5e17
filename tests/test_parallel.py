"""Parallel search: root parallelism (the best of seeded workers), NMCS's top-level moves and
distributed NRPA on workers (over Ray: tests/test_cluster_ray.py)."""

import time

import pytest
from helpers import replayed_score, samegame

import mc_envs  # noqa: F401
from mc_envs.agents import NMCS, NRPA
from mc_envs.agents.base import StopReason
from mc_envs.agents.parallel.messages import Done
from mc_envs.agents.parallel.root import worker_seed
from mc_envs.agents.parallel.rounds import Rounds
from mc_envs.envs.samegame import SameGameEnv


def test_one_worker_changes_nothing():
    env = samegame(3)
    a = NMCS(level=1, seed=3).search(env, playouts=500)
    b = NMCS(level=1, seed=3, workers=1, backend="local").search(env, playouts=500)
    assert (a.score, a.actions, a.playouts) == (b.score, b.actions, b.playouts)


def test_bad_parallel_arguments_are_refused():
    with pytest.raises(ValueError, match="backend"):
        NMCS(level=1, workers=2, backend="mpi")
    with pytest.raises(ValueError, match="workers"):
        NMCS(level=1, workers=0)


def test_worker_seeds_differ_and_are_fixed():
    seeds = [worker_seed(5, i) for i in range(4)]
    assert len(set(seeds)) == 4 and seeds == [worker_seed(5, i) for i in range(4)]


def test_local_workers_keep_the_best_of_the_seeded_searches():
    env = samegame(4)
    snap = env.clone_state()
    result = NRPA(level=2, iterations=10, seed=9, workers=2).search(env, playouts=401)
    assert env.clone_state() == snap
    singles = [
        NRPA(level=2, iterations=10, seed=worker_seed(9, i)).search(env, playouts=p)
        for i, p in enumerate((201, 200))
    ]
    assert result.playouts == 401
    assert [w["score"] for w in result.extra["workers"]] == [s.score for s in singles]
    assert result.score == max(s.score for s in singles)
    assert replayed_score(env, result.actions) == result.score


def test_distributed_nrpa_is_reproducible_and_keeps_nrpa_s_iteration_count():
    env = samegame(4)
    snap = env.clone_state()

    def agent():
        return NRPA(level=2, iterations=8, seed=3, workers=2, parallel="distributed")

    a, b = agent().search(env, playouts=500), agent().search(env, playouts=500)
    assert env.clone_state() == snap
    assert (a.score, a.actions, a.playouts, a.iterations) == (
        b.score,
        b.actions,
        b.playouts,
        b.iterations,
    )
    assert a.stopped == "playouts" and a.playouts <= 500
    assert replayed_score(env, a.actions) == a.score
    one = agent().search(env)  # no budget: one run of 8 top-level iterations of 8 rollouts
    assert (one.playouts, one.iterations, one.stopped) == (64, 1, "complete")
    assert one.extra["tasks"] == 8 and one.extra["rounds"] == 4
    assert replayed_score(env, one.actions) == one.score


def test_distributed_nrpa_arguments_are_checked():
    with pytest.raises(ValueError, match="parallel"):
        NRPA(level=2, workers=2, parallel="tree")
    with pytest.raises(ValueError, match="level >= 2"):
        NRPA(level=1, workers=2, parallel="distributed")
    with pytest.raises(ValueError, match="backend"):
        NRPA(level=2, workers=2, backend="mpi")


def test_distributed_nrpa_stops_on_time_with_the_best_so_far():
    env = samegame(5)
    agent = NRPA(level=3, iterations=30, seed=1, workers=2, parallel="distributed")
    NRPA(level=2, iterations=30).search(env, playouts=10)  # compiled: a clock counts compiling
    result = agent.search(env, time_limit=1.0)
    assert result.stopped == "time" and result.seconds < 1.0 + 1.0
    assert result.score > 0 and replayed_score(env, result.actions) == result.score


def small_board(seed, rows, cols, colors):
    env = SameGameEnv(rows=rows, cols=cols, colors=colors)
    env.reset(seed=seed)
    return env


@pytest.mark.parametrize("memorize", [True, False])
def test_nmcs_top_level_moves_on_workers_give_the_one_worker_result(memorize):
    env = small_board(1, 6, 6, 3)
    snap = env.clone_state()

    def search(workers):
        agent = NMCS(level=2, seed=7, memorize=memorize, workers=workers, parallel="moves")
        return agent.search(env)

    one, two = search(1), search(2)
    assert env.clone_state() == snap
    assert (one.score, one.actions, one.playouts) == (two.score, two.actions, two.playouts)
    assert one.stopped == "complete" and one.iterations == 1
    assert replayed_score(env, one.actions) == one.score > 0
    steps = one.extra["steps"]
    assert steps >= 1 and one.extra["tasks"] >= steps  # one task per candidate of every step


@pytest.mark.parametrize("seed", range(2))
def test_nmcs_top_level_moves_on_workers_is_exact_at_the_game_length(seed):
    from test_nmcs import best_score

    env = small_board(seed, 3, 3, 2)
    result = NMCS(level=4, seed=seed, workers=2, parallel="moves").search(env)
    assert result.score == best_score(env)
    assert replayed_score(env, result.actions) == result.score


def test_nmcs_top_level_moves_stop_on_time_with_the_best_so_far():
    env = samegame(5)
    NMCS(level=2).search(env, playouts=10)  # compiled: a clock counts compiling
    result = NMCS(level=3, seed=2, workers=2, parallel="moves").search(env, time_limit=1.5)
    assert result.stopped == "time" and result.seconds < 1.5 + 1.0
    assert result.score > 0 and replayed_score(env, result.actions) == result.score


def test_nmcs_parallel_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="parallel"):
        NMCS(level=2, parallel="tree")
    with pytest.raises(ValueError, match="level >= 2"):
        NMCS(level=1, workers=2, parallel="moves")
    with pytest.raises(ValueError, match="checkpoint"):
        NMCS(level=2, parallel="moves").search(samegame(1), checkpoint=str(tmp_path / "c.json"))


def test_an_nrpa_policy_portfolio_gives_each_worker_its_policy():
    env = samegame(7)
    result = NRPA(level=1, seed=5, policy=("tabu", "random"), workers=2).search(env, playouts=300)
    singles = [
        NRPA(level=1, seed=worker_seed(5, i), policy=name).search(env, playouts=150)
        for i, name in enumerate(("tabu", "random"))
    ]
    assert [w["actions"] for w in result.extra["workers"]] == [s.actions for s in singles]
    assert singles[0].actions != singles[1].actions
    assert result.score == max(s.score for s in singles)
    with pytest.raises(ValueError, match="portfolio"):
        NRPA(level=2, policy=("tabu", "random"), workers=1)
    with pytest.raises(ValueError, match="portfolio"):
        NRPA(level=2, policy=("tabu", "random"), workers=2, parallel="distributed")


# Serial: the fallback is judged on how many workers' worth the machine gives the rounds.
@pytest.mark.serial
@pytest.mark.parametrize("scheme", ["distributed", "moves"])
def test_rounds_that_keep_too_few_workers_busy_give_way_to_root_parallelism(scheme, monkeypatch):
    import mc_envs.agents.parallel.root

    monkeypatch.setattr(mc_envs.agents.parallel.root, "FALLBACK", 100.0)  # any round is too small
    env = samegame(5)
    agent_class, kwargs = (NRPA, {"iterations": 20}) if scheme == "distributed" else (NMCS, {})
    seconds = 3.0 if scheme == "distributed" else 8.0  # moves: judged after a few moves' rounds
    agent_class(level=2, **kwargs).search(env, playouts=10)  # compiled: a clock counts compiling
    agent = agent_class(level=2, seed=3, workers=2, parallel=scheme, **kwargs)
    result = agent.search(env, time_limit=seconds)
    assert "root parallelism for the remaining" in result.extra["fallback"]
    assert result.stopped == "time" and result.seconds < seconds + 1.0
    assert result.score > 0 and replayed_score(env, result.actions) == result.score


class _SlowPool:
    """A pool of one worker whose task returns its first playout ``after`` seconds from its
    submission, whatever the time limit (a busy machine, a cold cache)."""

    workers = 1

    def __init__(self, after: float) -> None:
        self.after, self.out, self.stops = after, {}, 0

    def submit(self, task, budgets, index):
        self.out[index] = time.perf_counter() + self.after

    def poll(self, timeout):
        time.sleep(timeout)
        now = time.perf_counter()
        ready = {i: t for i, t in self.out.items() if now >= t}
        for i in ready:
            del self.out[i]
        return [], {i: Done(1.0, [0], 1, self.after, 1, StopReason.TIME) for i in ready}

    def cancel_below(self, index):
        pass

    def stop(self):
        self.stops += 1


@pytest.mark.parametrize("after", [1.6, 0.2])
def test_a_parallel_search_past_its_time_limit_waits_for_its_first_playout(after):
    # Time limit 0.3 s, then 0.6 s of grace: a copy whose first playout comes at 1.6 s is waited
    # for (a result with no playout is not one); one that comes in time is taken as it comes.
    pool = _SlowPool(after)
    rounds = Rounds(pool, time_limit=0.3, callback=None)
    start = time.perf_counter()
    (result,) = rounds.run([("task", {})])
    took = time.perf_counter() - start
    assert result.playouts == 1 and rounds.playouts(False) == 1
    assert (pool.stops >= 1) == (after > 0.3)  # told to stop at the time limit
    assert took >= after and result.score == 1.0 and not rounds.late


def test_a_checkpointed_parallel_search_has_written_its_last_save_when_it_returns(tmp_path):
    # The caller searches a worker's task in a thread until a worker answers; stopped at the
    # end, that copy saves its checkpoint once more. The search returns after that save: no
    # thread of it runs on, and no half-written file (write_atomic's .tmp) is left beside.
    # Resumed with no time left, the copy starts as the search ends (workers never answer).
    import threading

    env = samegame(3)
    NRPA(level=2, iterations=5).search(env, playouts=10)  # compiled: the copies load it
    ck = tmp_path / "ck.json"
    NRPA(level=2, seed=1, workers=2).search(env, time_limit=1.0, checkpoint=str(ck))
    for _ in range(3):
        NRPA(level=2, seed=1, workers=2).search(
            env, time_limit=0.01, checkpoint=str(ck), resume=True
        )
        running = [t for t in threading.enumerate() if t.name == "mc-envs-caller-task"]
        assert running == [] and list(tmp_path.glob(".*.tmp")) == []
