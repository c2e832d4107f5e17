"""Distributed NRPA (Negrevergne & Cazenave 2017): the top level's iterations spread over workers.

The master keeps the top-level policy; each round sends it to the workers, each runs one level-(L-1)
NRPA from it, and the master adapts towards the results in iteration order, as sequential NRPA does.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from mc_envs._numba import is_cached
from mc_envs.agents.base import NEG_INF, Budget, Callback, SearchResult, Slot, StopReason
from mc_envs.agents.nested.nrpa_core import clear_policy
from mc_envs.agents.parallel.root import open_pool, root_instead, run_root, solo, worker_seed
from mc_envs.agents.parallel.rounds import CUT, Rounds
from mc_envs.agents.runner import Runner, Runs


class _PolicySearch:
    """One iteration of a distributed NRPA's top level: a level-(L-1) search from given weights.

    Picklable (it is sent to a worker); ``search`` has the agent call signature that
    :func:`mc_envs.agents.parallel.root.run_worker` expects. A complete search returns its level's result
    (the sequence NRPA passes up, ties resolved by ``>=``); a stopped one, its best rollout.
    """

    def __init__(self, agent: Any, seed: int, index: np.ndarray, weight: np.ndarray) -> None:
        self.agent = solo(agent, level=agent.level - 1, seed=seed)
        self.index, self.weight = index, weight

    def search(
        self,
        env: Any,
        *,
        time_limit: float | None = None,
        playouts: int | None = None,
        iterations: int | None = None,
        callback: Callback | None = None,
    ) -> SearchResult:
        level = self.agent.level
        budget = Budget(time_limit, playouts, 1, callback)
        runner = Runner(env, budget, Runs.nested(env, budget))  # one run; max_score honoured
        program = self.agent.program(env, runner)
        s = program.s
        s.set_policy(level, {"index": self.index, "weight": self.weight})
        s.a.active[level + 1] = 1  # a run under way: it starts from these weights, not from zero
        why, seconds = runner.run(program)
        result = runner.result(why, seconds)
        if runner.control[Slot.RUNS] > 0:
            n = int(s.a.lens[level + 1])
            result.score = float(s.a.scores[level + 1])
            result.actions = s.a.seqs[level + 1, :n].tolist()
        return result


def distributed_search(agent: Any, env: Any, budget: Budget) -> SearchResult:
    """Distributed NRPA (Negrevergne & Cazenave 2017): the top level here, its iterations on workers.

    The caller keeps the level-L policy. A round sends it to ``agent.workers`` workers, each of
    which runs one level-(L-1) NRPA from it (iteration ``k`` of the whole search seeded with
    ``worker_seed(agent.seed, k)``); then, in iteration order, each result replaces the level's best
    sequence if it is at least as good, and the policy is adapted towards the best, once per
    iteration, as in NRPA. ``iterations`` (N) top-level iterations make a run, in rounds of
    ``workers``; with a budget, runs restart from a zero policy until it ends.

    The result depends only on the seed, the number of workers and the budget in playouts or runs,
    not on the backend or on timing. Playout budgets are split between the searches of a round,
    so a round that reaches the budget ends the search (the playouts never exceed it).

    Args:
        agent: an NRPA of level >= 2 with ``workers``, ``backend`` and ``address``.
        env: the env to search from (left unchanged).
        budget: as :meth:`NRPA.search` (``iterations`` counts complete top-level runs).

    With a time limit as the only budget, the search watches what its rounds cost: if they keep
    fewer than one worker's worth of search going (level-(L-1) searches too small for the cost
    of a round: level 2, in practice), it gives the rest of the time to root parallelism (each
    worker a whole level-L NRPA) and says so in ``extra["fallback"]``. With a playout or run
    budget it never does, so that its result stays reproducible.

    Returns:
        The best sequence found; ``extra`` has ``rounds``, ``tasks``, ``backend``, ``fallback``
        (why root parallelism took over, or ``""``) and ``participation`` (see
        :meth:`mc_envs.agents.parallel.rounds.Rounds.participation`).
    """
    start = time.perf_counter()
    if agent.level < 2:
        raise ValueError("distributed NRPA needs level >= 2")
    base = env.unwrapped
    width = int(agent.workers)
    level = agent.level
    time_limit, playouts, iterations = budget.time, budget.playouts, budget.iterations
    restarts = budget.bounded
    run_limit = iterations if iterations is not None else (None if restarts else 1)
    runner = Runner(base, Budget(playouts=playouts))
    master = agent.program(base, runner)  # the top level's policy and adaptation
    if master.fast and not is_cached(master.adapt_fn):
        master.bind(False, plain=True)  # a cold cache: adapt in Python rather than compile here
    m = master.s
    bound = getattr(base, "max_score", None)
    max_score = float(bound) if restarts and bound is not None else math.inf

    pool = open_pool(agent, base)

    best_score, best_actions = NEG_INF, []  # over every task, in task order: deterministic
    rounds = Rounds(pool, time_limit, budget.callback, start=start, env=base)
    timed = time_limit is not None and playouts is None and iterations is None
    fallback = ""
    runs = 0
    why = ""
    try:
        while not why and (run_limit is None or runs < run_limit):
            clear_policy(m.pol.w, m.pol.mark, m.pol.used, m.pol.nused, level)
            run_score = NEG_INF
            m.a.lens[level] = 0
            done_iters = 0
            while done_iters < agent.iterations and not why:
                k = min(width, agent.iterations - done_iters)
                index = m.pol.used[level, : m.pol.nused[level]].copy()
                weight = m.pol.w[level, index].copy()
                share: dict[str, Any] = {}
                if playouts is not None:
                    share["playouts"] = max((playouts - rounds.total) // k, 1)
                batch = [
                    (
                        _PolicySearch(
                            agent, worker_seed(agent.seed, rounds.tasks + j), index, weight
                        ),
                        share,
                    )
                    for j in range(k)
                ]
                results = rounds.run(batch)
                why = rounds.why
                cut = False
                for r in results:  # in iteration order, as sequential NRPA
                    if r["stopped"] == StopReason.LATE:
                        continue  # the search is over; its best so far was shown
                    if r["score"] > best_score:
                        best_score, best_actions = r["score"], list(r["actions"])
                    if r["stopped"] in CUT:
                        cut = True  # an unfinished level-(L-1) search: the run ends here
                    if r["score"] >= run_score:
                        run_score = r["score"]
                        n = len(r["actions"])
                        m.a.seqs[level, :n] = r["actions"]
                        m.a.lens[level] = n
                        m.log.ok[level] = 0  # the first adaptation replays it and logs its moves
                    master.adapt(level)
                done_iters += k
                if best_score >= max_score and not why:
                    why = StopReason.MAX_SCORE
                elif playouts is not None and (rounds.total >= playouts or cut) and not why:
                    why = StopReason.PLAYOUTS
                rounds.show(best_score, best_actions)
                fallback = "" if why or not timed else root_instead(agent, rounds)
                if fallback:
                    break
            if done_iters >= agent.iterations:
                runs += 1
            if fallback:
                more, best_score, best_actions = run_root(agent, rounds, best_score, best_actions)
                runs += more
                why = rounds.why
    except KeyboardInterrupt:
        why = StopReason.INTERRUPT
    finally:
        rounds.close()
        pool.close()
        if runner.snapshot is not None:
            base.restore_state(runner.snapshot)
    if not why:
        why = StopReason.ITERATIONS if iterations is not None else StopReason.COMPLETE
    return SearchResult(
        score=float(best_score) if best_score > NEG_INF else float("-inf"),
        actions=best_actions,
        playouts=rounds.playouts(playouts is not None),
        seconds=time.perf_counter() - rounds.start,
        iterations=runs,
        stopped=why,
        extra={
            "rounds": rounds.batches,
            "tasks": rounds.tasks,
            "backend": agent.backend,
            "fallback": fallback,
            "participation": rounds.participation(),
        },
    )
