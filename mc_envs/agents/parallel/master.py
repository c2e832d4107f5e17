"""The skeleton of every scheme made of rounds (NMCS's ``moves``, NRPA's ``distributed``).

A :class:`Master` holds what such a scheme shares: the pool and its
:class:`~mc_envs.agents.parallel.rounds.Rounds`, the best game over every task (in task order, so
deterministic), the complete runs, why the search ended, the fallback to root parallelism, and
the result. A scheme is then only its rounds: which tasks, and what it does with their results.
"""

from __future__ import annotations

import math
import time
from types import TracebackType
from typing import TYPE_CHECKING, Generic

from mc_envs.agents.base import NEG_INF, Budget, SearchResult, StopReason
from mc_envs.agents.parallel.messages import Budgets, Done, Task
from mc_envs.agents.parallel.root import A, open_pool, root_instead, run_root
from mc_envs.agents.parallel.rounds import Rounds
from mc_envs.core import unwrap

if TYPE_CHECKING:
    import gymnasium as gym


class Master(Generic[A]):
    """One search of a scheme made of rounds, used as a context manager around its rounds.

    Ctrl-C inside the block ends the search (``"interrupt"``); leaving it closes the rounds and
    the pool.

    Args:
        agent: the agent (:class:`~mc_envs.agents.parallel.root.Parallel`, and what its scheme
            reads more).
        env: the env searched (its state is sent to the workers).
        budget: the search's budget. With none, one complete run; with one, runs restart until
            it ends (``iterations`` counts complete runs), and the env's ``max_score`` ends it.
    """

    def __init__(self, agent: A, env: gym.Env, budget: Budget) -> None:
        self.agent, self.budget = agent, budget
        self.base = unwrap(env)
        self.start = time.perf_counter()
        restarts = budget.bounded
        limit = budget.iterations if budget.iterations is not None else (None if restarts else 1)
        self.run_limit = limit
        bound = getattr(self.base, "max_score", None)
        self.max_score = float(bound) if restarts and bound is not None else math.inf
        # Only a search bounded by time alone may give way to root parallelism: with a playout
        # or run budget its result stays reproducible.
        self.timed = (
            budget.time is not None and budget.playouts is None and budget.iterations is None
        )
        self.pool = open_pool(agent, self.base)
        self.rounds = Rounds(
            self.pool, budget.time, budget.callback, start=self.start, env=self.base
        )
        self.best_score = NEG_INF
        self.best_actions: list[int] = []
        self.runs = 0
        self.why = ""
        self.fallback = ""

    def __enter__(self) -> Master[A]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        self.rounds.close()
        self.pool.close()
        if kind is KeyboardInterrupt:
            self.why = StopReason.INTERRUPT
            return True
        return False

    def more_runs(self) -> bool:
        """Whether another run may start."""
        return not self.why and (self.run_limit is None or self.runs < self.run_limit)

    def share(self, tasks: int) -> Budgets:
        """Each task's budget in a round of ``tasks``: the playouts left, split evenly."""
        playouts = self.budget.playouts
        if playouts is None:
            return {}
        return {"playouts": max((playouts - self.rounds.total) // tasks, 1)}

    def run(self, batch: list[Task]) -> list[Done]:
        """Runs one round of tasks; their results in order."""
        results = self.rounds.run(batch)
        self.why = self.rounds.why
        return results

    def keep(self, score: float, actions: list[int]) -> None:
        """Keeps ``actions`` if they beat the best game over every task so far."""
        if score > self.best_score:
            self.best_score, self.best_actions = score, list(actions)

    def judge(self, cut: bool, cut_ends: bool) -> bool:
        """Says after a round whether the search ends (and why) or gives way to root parallelism.

        Args:
            cut: a task of the round did not finish (a budget or a stop cut it short).
            cut_ends: such a task ends the search even without a playout budget.

        Returns:
            Whether the rounds must stop (an end, or the fallback to root parallelism).
        """
        playouts = self.budget.playouts
        if not self.why:
            if self.best_score >= self.max_score:
                self.why = StopReason.MAX_SCORE
            elif playouts is not None and (self.rounds.total >= playouts or cut):
                self.why = StopReason.PLAYOUTS
            elif cut and cut_ends:
                self.why = StopReason.STOPPED
        self.rounds.show(self.best_score, self.best_actions)
        self.fallback = "" if self.why or not self.timed else root_instead(self.agent, self.rounds)
        return bool(self.why or self.fallback)

    def fall_back(self) -> None:
        """Root parallelism for the time left (after :meth:`judge` chose it)."""
        more, self.best_score, self.best_actions = run_root(
            self.agent, self.rounds, self.best_score, self.best_actions
        )
        self.runs += more
        self.why = self.rounds.why

    def result(self, **extra: object) -> SearchResult:
        """The best game over every task; ``extra`` adds to the result's ``extra`` (which has
        ``tasks``, ``backend``, ``fallback`` and ``participation``)."""
        why = self.why
        if not why:
            why = (
                StopReason.ITERATIONS if self.budget.iterations is not None else StopReason.COMPLETE
            )
        rounds = self.rounds
        return SearchResult(
            score=float(self.best_score) if self.best_score > NEG_INF else float("-inf"),
            actions=self.best_actions,
            playouts=rounds.playouts(self.budget.playouts is not None),
            seconds=time.perf_counter() - rounds.start,
            iterations=self.runs,
            stopped=why,
            extra={
                **extra,
                "tasks": rounds.tasks,
                "backend": self.agent.backend,
                "fallback": self.fallback,
                "participation": rounds.participation(),
            },
        )
