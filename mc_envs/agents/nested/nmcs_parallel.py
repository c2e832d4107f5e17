"""NMCS with its top-level moves evaluated in parallel (Cazenave & Jouandeau 2009).

The caller plays the top level of a level-L search: before each move, every legal move followed by
a level-(L-1) NMCS is a task for the workers, and the caller keeps the best sequence (memorisation)
or the best move of the step, exactly as the top level of :func:`mc_envs.agents.nested.nmcs._nmcs` does. Task
``k`` of the whole search is seeded with ``worker_seed(seed, k)``, so the result depends only on
the seed and the budget: not on the number of workers, the backend or the timing.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

from mc_envs.agents.base import NEG_INF, Budget, Callback, Progress, SearchResult, StopReason
from mc_envs.agents.parallel.root import open_pool, root_instead, run_root, solo, worker_seed
from mc_envs.agents.parallel.rounds import CUT, Rounds
from mc_envs.rng import rng_below, rng_state


class _MoveSearch:
    """One candidate of a top-level step: the moves so far and the candidate, then a
    level-(L-1) NMCS. Picklable; its result's actions start from the root."""

    def __init__(self, agent: Any, seed: int, prefix: list[int]) -> None:
        self.agent = solo(agent, level=agent.level - 1, seed=seed)
        self.prefix = [int(a) for a in prefix]

    def search(
        self,
        env: Any,
        *,
        time_limit: float | None = None,
        playouts: int | None = None,
        callback: Callback | None = None,
        **_: Any,
    ) -> SearchResult:
        base = copy.deepcopy(env.unwrapped)  # writable: Ray hands tasks read-only arrays
        for action in self.prefix:
            base.step(action)

        def report(progress: Progress) -> bool | None:
            if callback is None:
                return None
            actions = self.prefix + list(progress.best_actions)
            return callback(
                Progress(
                    progress.elapsed,
                    progress.best_score,
                    actions,
                    progress.playouts,
                    progress.improved,
                )
            )

        result = self.agent.search(
            base, time_limit=time_limit, playouts=playouts, iterations=1, callback=report
        )
        result.actions = self.prefix + list(result.actions)
        return result


def _better(score: float, best: float, ties: int, rng: Any) -> tuple[bool, int]:
    """Whether ``score`` replaces ``best``, ties broken uniformly as in :func:`mc_envs.agents.nested.nmcs._nmcs`;
    and the updated count of tied scores."""
    if score == best:
        return rng_below(rng, ties + 2) == 0, ties + 1
    if score > best:
        return True, 0
    return False, ties


def moves_search(agent: Any, env: Any, budget: Budget) -> SearchResult:
    """A level-L NMCS whose top-level candidates (each a level-(L-1) search) run on the workers.

    With no budget, one complete search; with a budget (seconds, playouts, or complete runs),
    restarts until it ends, and stops at the env's ``max_score``, as :meth:`NMCS.search` does.
    A step's candidates share the playouts left; a candidate cut short by a budget ends the search.

    Args:
        agent: an NMCS of level >= 2 with ``workers``, ``backend`` and ``address``; one worker
            runs the tasks in this process (same result).
        env: the env to search from (left unchanged).

    With a time limit as the only budget, rounds that keep fewer than one worker's worth of
    search going give the rest of the time to root parallelism, as
    :func:`mc_envs.agents.nested.nrpa_distributed.distributed_search` does (``extra["fallback"]`` says so).

    Returns:
        The best sequence seen; ``extra`` has ``steps``, ``tasks``, ``backend``, ``fallback``
        and ``participation`` (see :meth:`mc_envs.agents.parallel.rounds.Rounds.participation`).
    """
    start = time.perf_counter()
    if agent.level < 2:
        raise ValueError("parallel='moves' spreads level-(L-1) searches: it needs level >= 2")
    base = env.unwrapped
    snapshot = base.clone_state()
    time_limit, playouts, iterations = budget.time, budget.playouts, budget.iterations
    restarts = budget.bounded
    run_limit = iterations if iterations is not None else (None if restarts else 1)
    bound = getattr(base, "max_score", None)
    max_score = float(bound) if restarts and bound is not None else math.inf
    rng = rng_state(agent.seed)

    pool = open_pool(agent, base)

    rounds = Rounds(pool, time_limit, budget.callback, start=start, env=base)
    timed = time_limit is not None and playouts is None and iterations is None
    fallback = ""
    best_score = NEG_INF
    best_actions: list[int] = []  # over every task, in task order
    runs = 0
    why = ""
    try:
        while not why and (run_limit is None or runs < run_limit):
            base.restore_state(snapshot)
            played: list[int] = []
            run_best, run_seq, ties = NEG_INF, [], 0
            while not why:
                legal = [int(a) for a in base.legal_actions()]
                if not legal:
                    if not played and base.score > best_score:  # the root is a finished game
                        best_score, best_actions = float(base.score), []
                    break
                share: dict[str, Any] = {}
                if playouts is not None:
                    share["playouts"] = max((playouts - rounds.total) // len(legal), 1)
                batch = [
                    (
                        _MoveSearch(agent, worker_seed(agent.seed, rounds.tasks + j), played + [m]),
                        share,
                    )
                    for j, m in enumerate(legal)
                ]
                results = rounds.run(batch)
                why = rounds.why
                step_best, step_move, step_ties = NEG_INF, legal[0], 0
                cut = False
                for m, r in zip(legal, results):
                    cut = cut or r["stopped"] in CUT
                    s = r["score"]
                    if s > best_score:
                        best_score, best_actions = s, list(r["actions"])
                    if agent.memorize:
                        take, ties = _better(s, run_best, ties, rng)
                        if take:
                            run_best, run_seq = s, list(r["actions"])
                    else:
                        take, step_ties = _better(s, step_best, step_ties, rng)
                        if take:
                            step_best, step_move = s, m
                rounds.show(best_score, best_actions)
                if best_score >= max_score and not why:
                    why = StopReason.MAX_SCORE
                elif playouts is not None and (rounds.total >= playouts or cut) and not why:
                    why = StopReason.PLAYOUTS
                elif cut and not why:
                    why = StopReason.STOPPED
                fallback = "" if why or not timed else root_instead(agent, rounds)
                if why or fallback:
                    break
                move = run_seq[len(played)] if agent.memorize else step_move
                base.step(move)
                played.append(move)
            if fallback:
                more, best_score, best_actions = run_root(agent, rounds, best_score, best_actions)
                runs += more
                why = rounds.why
            if not why:
                runs += 1
                if not agent.memorize and base.score > best_score:  # the game played itself
                    best_score, best_actions = float(base.score), played
    except KeyboardInterrupt:
        why = StopReason.INTERRUPT
    finally:
        rounds.close()
        pool.close()
        base.restore_state(snapshot)
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
            "steps": rounds.batches,
            "tasks": rounds.tasks,
            "backend": agent.backend,
            "fallback": fallback,
            "participation": rounds.participation(),
        },
    )
