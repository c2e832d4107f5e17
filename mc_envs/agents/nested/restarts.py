"""What NMCS and NRPA share: complete runs, restarted under a budget, with checkpoints."""

from __future__ import annotations

from typing import Any, Protocol

from mc_envs.agents.base import Budget, SearchResult
from mc_envs.agents.parallel.root import ParallelAgent
from mc_envs.agents.runner import Program, Runner, Runs, run


class NestedProgram(Program, Protocol):
    """A :class:`~mc_envs.agents.runner.Program` made of complete runs, which also gives the
    search's result."""

    def result(self, why: str, seconds: float) -> SearchResult:
        """The search's result once the runner has run it."""
        ...


class NestedAgent(ParallelAgent):
    """A search made of complete runs (NMCS, NRPA): its program (:meth:`program`) says what a
    run is; this class runs it.

    With no budget, one complete run (the paper's algorithm). With a budget (``time_limit``
    seconds, ``playouts``, or ``iterations`` = complete runs), runs restart until it ends, and
    the search stops as soon as the env's ``max_score`` is reached; the best sequence found is
    returned.
    """

    def program(self, env: Any, runner: Runner) -> NestedProgram:
        """This agent's search of ``env`` as a program for ``runner``."""
        raise NotImplementedError

    def run_search(
        self,
        env: Any,
        budget: Budget,
        *,
        checkpoint: str | None = None,
        resume: bool = False,
        checkpoint_every: float = 5.0,
    ) -> SearchResult:
        """One search in this process (:meth:`search` is the public entry point).

        Args:
            env: the env searched from its current state (left as it was).
            budget: what ends the search (see the class docstring).
            checkpoint: a JSON file where the search's state (what every level has committed,
                the best sequences, the random stream, the counters) is saved every
                ``checkpoint_every`` seconds and at the end (atomically). Saving waits for the
                next safe point; it does not change the search's result.
            resume: continue the search saved in ``checkpoint`` (same env state and parameters)
                exactly where it was; budgets count from the start of the saved search
                (playouts, runs), the time limit from now.
            checkpoint_every: seconds between two saves.
        """
        ran = run(
            self.program,
            env,
            budget,
            runs=Runs.nested(env, budget),
            checkpoint=checkpoint,
            resume=resume,
            checkpoint_every=checkpoint_every,
        )
        return ran.program.result(ran.why, ran.seconds)
