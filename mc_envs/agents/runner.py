"""The one runner of every search: control block, budgets, pauses, checkpoints, the result.

An algorithm supplies a *program* (:class:`Program`): its arrays, its compiled and generic entry
points, and what its checkpoint holds. :func:`run` (``run(program, env, budget)``, the one way to
run a search) does the rest, the same way for every search:

- the control block shared with the compiled code (:class:`mc_envs.agents.base.Slot`), and the
  :class:`~mc_envs.agents.ops.Shared` record of the best sequence;
- the :class:`~mc_envs.agents.base.Budget`: playouts and tree iterations counted inside the
  search, complete runs counted here (:class:`Runs`), the time limit, the callback and Ctrl-C by
  :func:`mc_envs.agents.base.supervise`;
- checkpoints: a ticker asks the search to pause every ``checkpoint_every`` seconds; the runner
  saves (:mod:`mc_envs.agents.checkpoint`) and continues; a resumed search is checked before any
  compiled code sees it;
- a cold numba cache under a budget: the generic path until a child process has compiled
  (:mod:`mc_envs.agents.compile_ahead`); the two paths agree for a seed, so the result is the same;
- the env restored as it was, and the :class:`~mc_envs.agents.base.SearchResult`.

A search made of complete runs (NMCS, NRPA) is a :class:`NestedAgent`: it declares its program and
this module runs it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, NamedTuple, Protocol, TypeVar

import numpy as np

from mc_envs import interpret
from mc_envs.agents.base import (
    ALWAYS_SAVED,
    COUNTERS,
    NEG_INF,
    NO_LIMIT,
    Best,
    Budget,
    ResultFields,
    SearchResult,
    Slot,
    StopCode,
    StopReason,
    supervise,
)
from mc_envs.agents.compile_ahead import StandIn, stand_in
from mc_envs.agents.ops import EnvStates, Game, Shared, compiled_states, move_bound
from mc_envs.agents.parallel.root import ParallelAgent
from mc_envs.core import unwrap

if TYPE_CHECKING:
    import gymnasium as gym
    from numba.core.registry import CPUDispatcher
    from typing_extensions import Unpack

    from mc_envs.agents.checkpoint import Checker
    from mc_envs.state import State


class Program(Protocol):
    """Everything a search gives :func:`run`, declared (the runner never probes for more).

    Attributes:
        algo: the algorithm's name in checkpoints (``"nmcs"``, ``"nrpa"``, ``"tree"``).
        params: the parameters a checkpoint must match to be resumed.
        fast: whether it runs on the compiled path now.
        steps: the numba helpers its generic path calls at every step, compiled on a cold cache
            once a stand-in with no clock steps up (:meth:`~mc_envs.agents.compile_ahead.StandIn.step_up`);
            empty: it has none, and never steps up.
        ahead: the agent a child process searches to compile :meth:`entries` on a cold cache
            (:mod:`mc_envs.agents.compile_ahead`); the agent without the state it carries between
            searches (such as a tree).
    """

    algo: str
    params: dict[str, object]
    fast: bool

    @property
    def steps(self) -> tuple[CPUDispatcher, ...]:
        """See above; an attribute or a property."""
        ...

    @property
    def ahead(self) -> ParallelAgent:
        """The agent a child process searches (see above); an attribute or a property."""
        ...

    def entries(self) -> list[CPUDispatcher]:
        """The compiled path's numba dispatchers (what a cold cache lacks)."""
        ...

    def bind(self, fast: bool, plain: bool = False) -> None:
        """Runs on the compiled path (``fast``) or the generic one (``plain``: its helpers
        uncompiled too) from the next call on, keeping the search's arrays."""

    def call(self, control: np.ndarray, restarts: bool) -> None:
        """Searches until the run ends (``restarts`` false), or until stopped or paused.

        On the compiled path a first call with the stop flag up compiles it (or loads it from the
        cache) before the clock starts."""

    def dump(self) -> dict[str, object]:
        """The checkpoint's ``search`` part: JSON-ready data of everything that decides the future.

        Raises:
            ValueError: the search keeps no checkpoints.
        """
        ...

    def load(self, data: dict[str, object], check: Checker) -> None:
        """Restores :meth:`dump`'s data after checking every value (``check`` is a
        :class:`mc_envs.agents.checkpoint.Checker`); raises ValueError naming the field."""


class Runs(NamedTuple):
    """How complete runs end a search.

    Attributes:
        limit: the complete runs :meth:`Program.call` may make (None: no limit, it restarts).
        max_score: a score that ends the search when reached (None: none).
        are_iterations: the budget's ``iterations`` counts runs: report ``"iterations"`` at the end.
    """

    limit: int | None = None
    max_score: float | None = None
    are_iterations: bool = False

    @classmethod
    def nested(cls, env: gym.Env, budget: Budget) -> Runs:
        """The runs of a search made of complete runs (NMCS, NRPA): with no budget, one complete
        run (the paper's algorithm); with one, runs restart until it ends (``iterations`` counts
        complete runs), and a run that reaches the env's ``max_score`` ends the search."""
        bound = getattr(unwrap(env), "max_score", None)
        restarts = budget.bounded
        return cls(
            limit=budget.iterations if budget.iterations is not None else (None if restarts else 1),
            max_score=float(bound) if restarts and bound is not None else None,
            are_iterations=budget.iterations is not None,
        )


class Runner:
    """The state of one search of a program over an env (:func:`run` makes and drives it; a
    program reads its control block, best-sequence record and state store).

    Args:
        env: the env searched (``unwrap(env)`` is used, and left as it was).
        budget: what ends the search.
        runs: how complete runs end it (default: no limit, no ``max_score``).
    """

    def __init__(self, env: gym.Env, budget: Budget, runs: Runs | None = None) -> None:
        self.base = unwrap(env)
        self.budget, self.runs = budget, Runs() if runs is None else runs
        self.control = budget.control()
        self.max_moves = move_bound(self.base)
        self.best = Best(self.max_moves)
        self.max_score = 1.0e300 if self.runs.max_score is None else float(self.runs.max_score)
        self.shared = Shared(
            self.control, self.best.score, self.best.seq, self.best.length, self.max_score
        )
        self.snapshot: State | None = None  # restored at the end (generic searches move the env)
        self.spent = 0.0  # seconds the search ran before this call (read from its checkpoint)
        self.started: float | None = None  # when this call's search began
        self.standin: StandIn | None = None  # a cold search's generic stand-in

    def game(self, slots: int, fast: bool) -> Game:
        """A store of ``slots`` states of the env as it was given: compiled rows (``fast``; the
        env put back first if a generic search moved it), or snapshots over the env itself
        (restored at the end)."""
        base = self.base
        if self.snapshot is not None:  # a generic search moved it: its root, as it was given
            base.restore_state(self.snapshot)
        if fast:
            states = compiled_states(base, slots)
            return Game(states, base.kernel.workspace(states[0]))
        self.snapshot = base.clone_state()
        return Game(EnvStates(base, slots), None)

    # -- checkpoints ------------------------------------------------------------------------------

    def dump(self, program: Program) -> dict[str, object]:
        """The whole checkpoint of the search (see :mod:`mc_envs.agents.checkpoint`)."""
        from mc_envs.agents.checkpoint import FILE_VERSION, FORMAT, state_fingerprint

        score, actions = self.best.read(self.control)
        return {
            "format": FORMAT,
            "version": FILE_VERSION,
            "algo": program.algo,
            "params": program.params,
            "state": state_fingerprint(self.base),
            "best": {"score": score, "actions": actions},
            "control": {
                **{name: int(self.control[slot]) for name, slot in COUNTERS.items()},
                "seconds": round(self.seconds(), 3),
            },
            "search": program.dump(),
        }

    def load(self, program: Program, data: dict[str, object], path: str) -> None:
        """Resumes from a checkpoint read from ``path``, every value checked first."""
        from mc_envs.agents.checkpoint import Checker, check_checkpoint, saved_seconds

        check_checkpoint(data, program.algo, program.params, self.base)
        check = Checker(path, self.base, self.max_moves)
        best = check.mapping(data, "best")
        actions = check.actions(best.get("actions"), "best.actions")
        best_score = check.number(best.get("score"), "best.score")
        saved = check.mapping(data, "control")
        counts = {
            name: check.count(
                saved.get(name, None if name in ALWAYS_SAVED else 0), f"control.{name}"
            )
            for name in COUNTERS
        }
        seconds = saved_seconds(data, path)
        program.load(check.mapping(data, "search"), check)
        n = len(actions)
        self.best.seq[:n] = actions
        self.best.length[0] = n
        self.best.score[0] = best_score
        for name, value in counts.items():
            self.control[COUNTERS[name]] = value
        self.spent = seconds
        if self.control[Slot.PLAYOUTS] >= self.control[Slot.PLAYOUT_LIMIT]:
            self.control[Slot.STOP] = StopCode.PLAYOUTS
        if self.best.score[0] >= self.max_score:
            self.control[Slot.STOP] = StopCode.MAX_SCORE

    def seconds(self) -> float:
        """The seconds this search has run, over all the calls that resumed it."""
        now = 0.0 if self.started is None else time.perf_counter() - self.started
        return self.spent + now

    def _compiling(self) -> bool:
        """Whether the generic path stands in while a child compiles the compiled one."""
        return self.standin is not None and self.standin.switched is None

    # -- running ----------------------------------------------------------------------------------

    def _run(
        self, program: Program, checkpoint: str | None, resume: bool, checkpoint_every: float
    ) -> tuple[StopReason, float]:
        """Runs the program under the budget (see :func:`run`); returns (why it stopped, seconds)."""
        from mc_envs.agents.checkpoint import read_checkpoint

        if resume:
            if checkpoint is None:
                raise ValueError("resume=True needs checkpoint=PATH")
            self.load(program, read_checkpoint(checkpoint), checkpoint)
        if len(self.base.legal_actions()) == 0:  # a finished game: nothing to search
            self.best.score[0] = float(getattr(self.base, "score", 0.0))
            self.best.length[0] = 0
            return StopReason.COMPLETE, 0.0
        with interpret.sharing(not self.budget.clocked):
            return self._search(program, checkpoint, checkpoint_every)

    def _search(
        self, program: Program, checkpoint: str | None, checkpoint_every: float
    ) -> tuple[StopReason, float]:
        """Prepares the program (a cold cache's stand-in, or the compiled path loaded) and runs
        it under the budget; returns (why it stopped, seconds)."""
        from mc_envs.agents.checkpoint import write_checkpoint

        self._prepare(program)
        done = threading.Event()
        if checkpoint is not None:
            self._tick(done, checkpoint_every)
        if self.standin is not None:
            steps = bool(program.steps) and not self.budget.clocked
            self.standin.watch(self.control, Slot.PAUSE, done, steps)
        first = int(self.control[Slot.PLAYOUTS])
        self.started = time.perf_counter()
        try:
            why, seconds = supervise(
                lambda: self._loop(program, checkpoint, first),
                self.control,
                self.best,
                self.budget,
                compiling=self._compiling,
            )
        finally:
            done.set()
            if self.snapshot is not None:
                self.base.restore_state(self.snapshot)
        self.spent, self.started = self.spent + seconds, None
        if self.standin is not None and self.standin.switched is None:
            self.standin.playouts = int(self.control[Slot.PLAYOUTS]) - first
        if checkpoint is not None:
            write_checkpoint(checkpoint, self.dump(program))
        return why or self._reason(), seconds

    def _prepare(self, program: Program) -> None:
        """A cold compiled path under a budget starts generic while a child compiles it; a warm
        one compiles (or loads) before the clock: a call told to stop at once."""
        self.standin = None
        if program.fast and self.budget.bounded:
            self.standin = stand_in(program.ahead, self.base, program.entries())
        if self.standin is not None:
            program.bind(False, plain=True)  # until the child has compiled the fast path
        elif program.fast:
            idle = np.zeros_like(self.control)
            idle[Slot.STOP] = StopCode.STOPPED
            program.call(idle, False)

    def _tick(self, done: threading.Event, every: float) -> None:
        """Asks the search to pause every ``every`` seconds (a checkpoint) until ``done``."""
        control = self.control

        def ticker() -> None:
            while not done.wait(every):
                control[Slot.PAUSE] = 1

        threading.Thread(target=ticker, name="mc-envs-checkpoint", daemon=True).start()

    def _loop(self, program: Program, checkpoint: str | None, first: int) -> None:
        """Calls the program until the search ends: saving at pauses, switching to the compiled
        path once a cold search's child has filled the cache, restarting runs."""
        from mc_envs.agents.checkpoint import write_checkpoint

        control, limit, standin = self.control, self.runs.limit, self.standin
        while control[Slot.STOP] == StopCode.NONE:
            if limit is not None and control[Slot.RUNS] >= limit:
                return
            program.call(control, limit is None)
            if control[Slot.PAUSE] == 0:
                if limit is None:
                    return  # a search that ended without being stopped: nothing left to do
                continue
            if control[Slot.STOP] == StopCode.NONE and checkpoint is not None:
                write_checkpoint(checkpoint, self.dump(program))
            control[Slot.PAUSE] = 0
            if standin is not None and standin.switched is None and standin.ready():
                standin.playouts = int(control[Slot.PLAYOUTS]) - first
                standin.switched = time.perf_counter() - (self.started or 0.0)
                program.bind(True)
            elif standin is not None and standin.step_up(
                int(control[Slot.PLAYOUTS]) - first, self._left()
            ):
                program.bind(False, plain=True)  # now with its per-step helpers compiled

    def _left(self) -> int | None:
        """The playouts the budget has left (None: it has no playout budget)."""
        limit = int(self.control[Slot.PLAYOUT_LIMIT])
        return None if limit == NO_LIMIT else limit - int(self.control[Slot.PLAYOUTS])

    def _reason(self) -> StopReason:
        """Why the search stopped by itself (the code it left in the control block)."""
        why = StopCode(self.control[Slot.STOP]).reason
        if why == StopReason.COMPLETE and self.runs.are_iterations:
            return StopReason.ITERATIONS
        return why

    def result(
        self,
        why: str,
        seconds: float,
        answer: tuple[float, list[int]] | None = None,
        **fields: Unpack[ResultFields],
    ) -> SearchResult:
        """The result: ``answer`` (score, actions) or the best sequence seen, the counters, and
        ``fields`` (other :class:`~mc_envs.agents.base.SearchResult` attributes)."""
        score, actions = answer if answer is not None else self.best.read(self.control)
        if score == NEG_INF:  # stopped before a first result
            score = float("-inf")
        fields.setdefault("iterations", int(self.control[Slot.RUNS]))
        if self.standin is not None:
            fields["extra"] = {**fields.get("extra", {}), "compile": self.standin.note()}
        return SearchResult(
            score=score,
            actions=actions,
            playouts=int(self.control[Slot.PLAYOUTS]),
            seconds=seconds,
            stopped=why,
            **fields,
        )


P = TypeVar("P", bound=Program)


@dataclass(frozen=True)
class Ran(Generic[P]):
    """A search that :func:`run` has run.

    Attributes:
        program: the program it ran (its arrays hold what the search left).
        runner: its runner (control block, best sequence).
        why: why it stopped.
        seconds: how long this call searched.
    """

    program: P
    runner: Runner
    why: StopReason
    seconds: float

    def result(
        self, answer: tuple[float, list[int]] | None = None, **fields: Unpack[ResultFields]
    ) -> SearchResult:
        """The search's result (see :meth:`Runner.result`)."""
        return self.runner.result(self.why, self.seconds, answer, **fields)


def run(
    program: Callable[[gym.Env, Runner], P],
    env: gym.Env,
    budget: Budget,
    *,
    runs: Runs | None = None,
    checkpoint: str | None = None,
    resume: bool = False,
    checkpoint_every: float = 5.0,
) -> Ran[P]:
    """Runs one search of ``env`` under ``budget``: the one way every agent searches.

    Args:
        program: makes the search's program for ``env`` and the runner that drives it (an
            agent's ``program`` method).
        env: the env searched from its current state (left as it was).
        budget: what ends the search.
        runs: how complete runs end it (:class:`Runs`; default: no limit, no ``max_score``).
        checkpoint: a JSON file where the search is saved every ``checkpoint_every`` seconds
            and at the end.
        resume: continue the search saved in ``checkpoint``.
        checkpoint_every: seconds between two saves.

    Raises:
        ValueError: ``resume`` without ``checkpoint``, or a checkpoint that does not match.
    """
    runner = Runner(env, budget, runs)
    made = program(env, runner)
    why, seconds = runner._run(made, checkpoint, resume, checkpoint_every)
    return Ran(made, runner, why, seconds)


class NestedProgram(Program, Protocol):
    """A :class:`Program` made of complete runs, which also gives the search's result."""

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

    def program(self, env: gym.Env, runner: Runner) -> NestedProgram:
        """This agent's search of ``env`` as a program for ``runner``."""
        raise NotImplementedError

    def run_search(
        self,
        env: gym.Env,
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
