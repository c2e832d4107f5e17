"""NMCS with its top-level moves evaluated in parallel (Cazenave & Jouandeau 2009).

The caller plays the top level of a level-L search: before each move, every legal move followed by
a level-(L-1) NMCS is a task for the workers, and the caller keeps the best sequence (memorisation)
or the best move of the step, exactly as the top level of :func:`mc_envs.agents.nested.nmcs._nmcs` does. Task
``k`` of the whole search is seeded with ``worker_seed(seed, k)``, so the result depends only on
the seed and the budget: not on the number of workers, the backend or the timing.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING, Protocol

from mc_envs.agents.base import NEG_INF, Budget, Callback, Progress, SearchOptions, SearchResult
from mc_envs.agents.parallel.master import Master
from mc_envs.agents.parallel.messages import Task
from mc_envs.agents.parallel.root import Parallel, solo, worker_seed
from mc_envs.agents.parallel.rounds import CUT
from mc_envs.core import unwrap
from mc_envs.rng import plain_rng_below, plain_rng_state

if TYPE_CHECKING:
    import gymnasium as gym
    import numpy as np
    from typing_extensions import Unpack

    from mc_envs.core import PlanningEnv


class Moving(Parallel, Protocol):
    """What the ``moves`` scheme reads of its agent (an :class:`~mc_envs.agents.nested.nmcs.NMCS`):
    its level and whether it memorises, beside the parallel keywords."""

    level: int
    memorize: bool


class _MoveSearch:
    """One candidate of a top-level step: the moves so far and the candidate, then a
    level-(L-1) NMCS. Picklable; its result's actions start from the root."""

    def __init__(self, agent: Moving, seed: int, prefix: list[int]) -> None:
        self.agent = solo(agent, level=agent.level - 1, seed=seed)
        self.prefix = [int(a) for a in prefix]

    def search(
        self,
        env: gym.Env,
        *,
        time_limit: float | None = None,
        playouts: int | None = None,
        iterations: int | None = None,  # one complete level-(L-1) search, whatever it says
        callback: Callback | None = None,
        **_: Unpack[SearchOptions],  # the scheme keeps no checkpoint
    ) -> SearchResult:
        base = copy.deepcopy(unwrap(env))  # writable: Ray hands tasks read-only arrays
        for action in self.prefix:
            base.step(action)

        def report(progress: Progress) -> object:
            if callback is None:
                return None
            actions = self.prefix + list(progress.best_actions)
            return callback(dataclasses.replace(progress, best_actions=actions))

        result = self.agent.search(
            base, time_limit=time_limit, playouts=playouts, iterations=1, callback=report
        )
        result.actions = self.prefix + list(result.actions)
        return result


def _better(score: float, best: float, ties: int, rng: np.ndarray) -> tuple[bool, int]:
    """Whether ``score`` replaces ``best``, ties broken uniformly as in :func:`mc_envs.agents.nested.nmcs._nmcs`;
    and the updated count of tied scores."""
    if score == best:
        return plain_rng_below(rng, ties + 2) == 0, ties + 1
    if score > best:
        return True, 0
    return False, ties


def moves_search(agent: Moving, env: gym.Env, budget: Budget) -> SearchResult:
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
    if agent.level < 2:
        raise ValueError("parallel='moves' spreads level-(L-1) searches: it needs level >= 2")
    base = unwrap(env)
    snapshot = base.clone_state()
    rng = plain_rng_state(agent.seed)
    try:
        with Master(agent, env, budget) as m:
            while m.more_runs():
                base.restore_state(snapshot)
                played = _one_run(m, base, rng)
                if m.fallback:
                    m.fall_back()
                if not m.why:
                    m.runs += 1
                    if not agent.memorize:  # the game played itself
                        m.keep(float(base.score), played)
    finally:
        base.restore_state(snapshot)
    return m.result(steps=m.rounds.batches)


def _one_run(m: Master[Moving], base: PlanningEnv, rng: np.ndarray) -> list[int]:
    """Plays one run's top level from ``base``'s state, a round of candidates for each move;
    returns the moves played (the run ends early when the search ends or falls back)."""
    agent = m.agent
    played: list[int] = []
    run_best, run_seq, ties = NEG_INF, [], 0
    while not m.why:
        legal = [int(a) for a in base.legal_actions()]
        if not legal:
            if not played:  # the root is a finished game
                m.keep(float(base.score), [])
            break
        share = m.share(len(legal))
        batch = [
            Task(
                _MoveSearch(agent, worker_seed(agent.seed, m.rounds.tasks + j), played + [a]), share
            )
            for j, a in enumerate(legal)
        ]
        results = m.run(batch)
        step_best, step_move, step_ties = NEG_INF, legal[0], 0
        cut = False
        for a, r in zip(legal, results):
            cut = cut or r.stopped in CUT
            s = r.score
            m.keep(s, r.actions)
            if agent.memorize:
                take, ties = _better(s, run_best, ties, rng)
                if take:
                    run_best, run_seq = s, list(r.actions)
            else:
                take, step_ties = _better(s, step_best, step_ties, rng)
                if take:
                    step_best, step_move = s, a
        if m.judge(cut, cut_ends=True):
            break
        move = run_seq[len(played)] if agent.memorize else step_move
        base.step(move)
        played.append(move)
    return played
