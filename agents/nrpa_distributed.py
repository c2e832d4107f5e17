"""Distributed NRPA (Negrevergne & Cazenave 2017): the top level's iterations spread over workers.

The master keeps the top-level policy; each round sends it to the workers, each runs one level-(L-1)
NRPA from it, and the master adapts towards the results in iteration order, as sequential NRPA does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.base import NEG_INF, RUNS, Callback, SearchResult
from agents.nrpa import NRPA, PRIME, _Run, clear_policy


class _PolicySearch:
    """One iteration of a distributed NRPA's top level: a level-(L-1) search from given weights.

    Picklable (it is sent to a worker); ``search`` has the agent call signature that
    :func:`agents.parallel.run_worker` expects. A complete search returns its level's result
    (the sequence NRPA passes up, ties resolved by ``>=``); a stopped one, its best rollout.
    """

    def __init__(self, agent: NRPA, seed: int, index: np.ndarray, weight: np.ndarray) -> None:
        self.agent = NRPA(
            agent.level - 1,
            iterations=agent.iterations,
            alpha=agent.alpha,
            seed=seed,
            policy=agent.policy,
            compiled=agent.compiled,
        )
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
        run = _Run(self.agent, env, playouts, 1)  # one run; max_score honoured
        s = run.s
        s.set_policy(level, {"index": self.index, "weight": self.weight})
        s.active[level + 1] = 1  # a run under way: it starts from these weights, not from zero
        result = run.run(
            time_limit=time_limit,
            callback=callback,
            checkpoint=None,
            resume=False,
            checkpoint_every=5.0,
        )
        if run.control[RUNS] > 0:
            n = int(s.lens[level + 1])
            result.score = float(s.scores[level + 1])
            result.actions = s.seqs[level + 1, :n].tolist()
        return result


class _WarmUp:
    """A task that only loads (or compiles) a worker's level-(L-1) search, before the clock starts."""

    def __init__(self, agent: NRPA) -> None:
        self.agent = NRPA(agent.level - 1, policy=agent.policy, compiled=agent.compiled)

    def search(self, env: Any, **budgets: Any) -> SearchResult:
        _Run(self.agent, env, None, 1).warm_up()
        return SearchResult(score=NEG_INF, actions=[], playouts=0, seconds=0.0)


def distributed_search(
    agent: NRPA,
    env: Any,
    *,
    time_limit: float | None = None,
    playouts: int | None = None,
    iterations: int | None = None,
    callback: Callback | None = None,
) -> SearchResult:
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
        time_limit, playouts, iterations, callback: as :meth:`NRPA.search` (``iterations`` counts
            complete top-level runs).

    Returns:
        The best sequence found; ``extra`` has ``rounds``, ``tasks`` and ``backend``.
    """
    import time

    from agents.parallel import CUT, Rounds, TaskPool, worker_seed

    if agent.level < 2:
        raise ValueError("distributed NRPA needs level >= 2")
    base = env.unwrapped
    width = int(agent.workers)
    level = agent.level
    restarts = any(b is not None for b in (time_limit, playouts, iterations))
    run_limit = iterations if iterations is not None else (None if restarts else 1)
    master = _Run(agent, base, playouts, iterations)  # the top level's policy and adaptation
    m = master.s
    bound = getattr(base, "max_score", None)
    max_score = float(bound) if restarts and bound is not None else math.inf

    _WarmUp(agent).search(base)  # compiles into the on-disk cache the workers load from
    pool = TaskPool(width, agent.backend, base, agent.address)
    try:
        pool.warm_up(_WarmUp(agent))  # each worker loads its search before the clock starts
    except BaseException:
        pool.close()
        raise

    best_score, best_actions = NEG_INF, []  # over every task, in task order: deterministic
    rounds = Rounds(pool, time_limit, callback)
    runs = 0
    why = ""
    try:
        while not why and (run_limit is None or runs < run_limit):
            clear_policy(m.w, m.mark, m.used, m.nused, level)
            run_score = NEG_INF
            m.lens[level] = 0
            done_iters = 0
            while done_iters < agent.iterations and not why:
                k = min(width, agent.iterations - done_iters)
                index = m.used[level, : m.nused[level]].copy()
                weight = m.w[level, index].copy()
                budget: dict[str, Any] = {}
                if playouts is not None:
                    budget["playouts"] = max((playouts - rounds.total) // k, 1)
                batch = [
                    (
                        _PolicySearch(
                            agent, worker_seed(agent.seed, rounds.tasks + j), index, weight
                        ),
                        budget,
                    )
                    for j in range(k)
                ]
                results = rounds.run(batch)
                why = rounds.why
                cut = False
                for r in results:  # in iteration order, as sequential NRPA
                    if r["score"] > best_score:
                        best_score, best_actions = r["score"], list(r["actions"])
                    if r["stopped"] in CUT:
                        cut = True  # an unfinished level-(L-1) search: the run ends here
                    if r["score"] >= run_score:
                        run_score = r["score"]
                        n = len(r["actions"])
                        m.seqs[level, :n] = r["actions"]
                        m.lens[level] = n
                        m.lok[level] = 0  # the first adaptation replays it and logs its moves
                    master.adapt(
                        level,
                        m.seqs,
                        m.lens,
                        m.log,
                        master.states,
                        master.ws,
                        m.moves,
                        m.codes,
                        m.probs,
                        m.w,
                        m.mark,
                        m.used,
                        m.nused,
                        m.dcode,
                        m.dval,
                        agent.alpha,
                        master.tabu,
                        PRIME,
                    )
                done_iters += k
                if best_score >= max_score and not why:
                    why = "max_score"
                elif playouts is not None and (rounds.total >= playouts or cut) and not why:
                    why = "playouts"
                rounds.show(best_score, best_actions)
            if done_iters >= agent.iterations:
                runs += 1
    except KeyboardInterrupt:
        why = "interrupt"
    finally:
        pool.close()
        if master.snapshot is not None:
            master.base.restore_state(master.snapshot)
    if not why:
        why = "iterations" if iterations is not None else "complete"
    return SearchResult(
        score=float(best_score) if best_score > NEG_INF else float("-inf"),
        actions=best_actions,
        playouts=rounds.total,
        seconds=time.perf_counter() - rounds.start,
        iterations=runs,
        stopped=why,
        extra={"rounds": rounds.batches, "tasks": rounds.tasks, "backend": agent.backend},
    )
