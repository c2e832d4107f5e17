"""Distributed NRPA (Negrevergne & Cazenave 2017): the top level's iterations spread over workers.

The master keeps the top-level policy; each round sends it to the workers, each runs one level-(L-1)
NRPA from it, and the master adapts towards the results in iteration order, as sequential NRPA does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from mc_envs._numba import Interpretable, is_cached
from mc_envs.agents.base import NEG_INF, Budget, Searcher, SearchResult, Slot, StopReason
from mc_envs.agents.nested.nrpa_core import clear_policy
from mc_envs.agents.parallel.master import Master
from mc_envs.agents.parallel.messages import Task
from mc_envs.agents.parallel.root import Parallel, solo, worker_seed
from mc_envs.agents.parallel.rounds import CUT
from mc_envs.agents.runner import NestedProgram, Runner, Runs, run
from mc_envs.core import unwrap

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.agents.nested.nrpa_state import SearchState


class PolicyProgram(NestedProgram, Protocol):
    """What distributed NRPA reads of its agent's program: the search's arrays (``s``) and
    the top level's adaptation (``adapt``, by ``adapt_fn``)."""

    s: SearchState
    adapt_fn: Callable[..., None]  # compiled, or its Python twin

    def adapt(self, row: int) -> None:
        """Adapts level ``row``'s policy towards its best sequence."""


class Distributing(Parallel, Protocol):
    """What the ``distributed`` scheme reads of its agent (an
    :class:`~mc_envs.agents.nested.nrpa.NRPA`): its level, its iterations per level, and its
    program."""

    level: int
    iterations: int

    def program(self, env: gym.Env, runner: Runner) -> PolicyProgram:
        """The agent's search of ``env`` as a program for ``runner``."""
        ...


class _PolicySearch(Searcher):
    """One iteration of a distributed NRPA's top level: a level-(L-1) search from given weights.

    Picklable (it is sent to a worker); a :class:`~mc_envs.agents.base.Searcher`, so that its
    ``search`` is the agent call that :func:`mc_envs.agents.parallel.pools.run_task` makes. A
    complete search returns its level's result (the sequence NRPA passes up, ties resolved by
    ``>=``); a stopped one, its best rollout.
    """

    def __init__(
        self, agent: Distributing, seed: int, index: np.ndarray, weight: np.ndarray
    ) -> None:
        self.agent = solo(agent, level=agent.level - 1, seed=seed)
        self.index, self.weight = index, weight

    def run_search(self, env: gym.Env, budget: Budget) -> SearchResult:
        """One complete level-(L-1) run (whatever ``budget.iterations`` says) from the weights."""
        level = self.agent.level
        budget = replace(budget, iterations=1)
        ran = run(self._program, env, budget, runs=Runs.nested(env, budget))  # max_score honoured
        result = ran.result()
        if ran.runner.control[Slot.RUNS] > 0:
            a = ran.program.s.a
            n = int(a.lens[level + 1])
            result.score = float(a.scores[level + 1])
            result.actions = a.seqs[level + 1, :n].tolist()
        return result

    def _program(self, env: gym.Env, runner: Runner) -> PolicyProgram:
        """The level-(L-1) program, its policy set to the weights and a run under way (it
        starts from these weights, not from zero)."""
        program = self.agent.program(env, runner)
        level, s = self.agent.level, program.s
        s.set_policy(level, {"index": self.index, "weight": self.weight})
        s.a.active[level + 1] = 1
        return program


def distributed_search(agent: Distributing, env: gym.Env, budget: Budget) -> SearchResult:
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
    if agent.level < 2:
        raise ValueError("distributed NRPA needs level >= 2")
    base = unwrap(env)
    runner = Runner(base, Budget(playouts=budget.playouts))
    top = agent.program(base, runner)  # the top level's policy and adaptation
    if top.fast and isinstance(top.adapt_fn, Interpretable) and not is_cached(top.adapt_fn):
        top.bind(False, plain=True)  # a cold cache: adapt in Python rather than compile here
    try:
        with Master(agent, env, budget) as m:
            while m.more_runs():
                if _one_run(m, top) >= agent.iterations:
                    m.runs += 1
                if m.fallback:
                    m.fall_back()
    finally:
        if runner.snapshot is not None:
            base.restore_state(runner.snapshot)
    return m.result(rounds=m.rounds.batches)


def _one_run(m: Master[Distributing], top: PolicyProgram) -> int:
    """One run of the top level from a zero policy, ``workers`` iterations a round; returns the
    iterations done (fewer than N when the search ends or falls back)."""
    agent, s, level = m.agent, top.s, m.agent.level
    clear_policy(s.pol.w, s.pol.mark, s.pol.used, s.pol.nused, level)
    run_score = NEG_INF
    s.a.lens[level] = 0
    done = 0
    while done < agent.iterations and not m.why:
        k = min(agent.workers, agent.iterations - done)
        index = s.pol.used[level, : s.pol.nused[level]].copy()
        weight = s.pol.w[level, index].copy()
        share = m.share(k)
        batch = [
            Task(
                _PolicySearch(agent, worker_seed(agent.seed, m.rounds.tasks + j), index, weight),
                share,
            )
            for j in range(k)
        ]
        cut = False
        for r in m.run(batch):  # in iteration order, as sequential NRPA
            if r.stopped == StopReason.LATE:
                continue  # the search is over; its best so far was shown
            m.keep(r.score, r.actions)
            cut = cut or r.stopped in CUT  # an unfinished level-(L-1) search ends the run
            if r.score >= run_score:
                run_score = r.score
                n = len(r.actions)
                s.a.seqs[level, :n] = r.actions
                s.a.lens[level] = n
                s.log.ok[level] = 0  # the first adaptation replays it and logs its moves
            top.adapt(level)
        done += k
        if m.judge(cut, cut_ends=False) and m.fallback:
            break
    return done
