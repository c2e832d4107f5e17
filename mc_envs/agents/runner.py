"""The one runner of every search: control block, budgets, pauses, checkpoints, the result.

An algorithm supplies a *program* (:class:`Program`): its arrays, its compiled or generic entry
point, and (for resumable searches) what its checkpoint holds. :class:`Runner` does the rest, the
same way for every search:

- the control block shared with the compiled code (:class:`mc_envs.agents.base.Slot`), and
  the :class:`~mc_envs.agents.ops.Shared` record of the best sequence;
- budgets: playouts and tree iterations counted inside the search, complete runs counted here,
  the time limit, the callback and Ctrl-C by :func:`mc_envs.agents.base.supervise`;
- checkpoints: a ticker asks the search to pause every ``checkpoint_every`` seconds; the runner
  saves (:mod:`mc_envs.agents.checkpoint`) and continues; a resumed search is checked before any compiled
  code sees it;
- a cold numba cache under a time limit: the generic path until a child process has compiled
  (:mod:`mc_envs.agents.compile_ahead`);
- the env restored as it was, and the :class:`~mc_envs.agents.base.SearchResult`.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

import numpy as np

from mc_envs.agents.base import (
    NEG_INF,
    Best,
    Budget,
    Callback,
    SearchResult,
    Slot,
    StopCode,
    StopReason,
    supervise,
)
from mc_envs.agents.compile_ahead import StandIn, stand_in
from mc_envs.agents.ops import EnvStates, Game, Shared, compiled_states, move_bound


class Program(Protocol):
    """What an algorithm gives the :class:`Runner`.

    Attributes:
        algo: the algorithm's name in checkpoints (``"nmcs"``, ``"nrpa"``).
        params: the parameters a checkpoint must match to be resumed.
        fast: whether it runs on the compiled path.
    """

    algo: str
    params: dict[str, Any]
    fast: bool

    def call(self, control: np.ndarray, restarts: bool) -> None:
        """Searches until the run ends (``restarts`` false), or until stopped or paused.

        On the compiled path (``fast``) a first call with the stop flag up compiles it (or loads
        it from the cache) before the clock starts. A program may also offer ``entries()`` (its
        numba dispatchers) and ``bind(fast, plain)`` (switch between the compiled and the generic
        path, keeping its arrays): then a time-limited search on a cold cache starts on the
        generic path while a child process compiles (:mod:`mc_envs.agents.compile_ahead`) the search of
        its ``agent``, or of its ``seed_agent`` when it has one (the agent without the state it
        carries between searches, such as a tree)."""

    def dump(self) -> dict[str, Any]:
        """The checkpoint's ``search`` part: JSON-ready data of everything that decides the future."""
        ...

    def load(self, data: dict[str, Any], check: Any) -> None:
        """Restores :meth:`dump`'s data after checking every value (``check`` is a
        :class:`mc_envs.agents.checkpoint.Checker`); raises ValueError naming the field."""


def nested_budgets(
    env: Any, time_limit: float | None, playouts: int | None, iterations: int | None
) -> dict[str, Any]:
    """The runner's arguments for searches made of complete runs (NMCS, NRPA).

    With no budget, one complete run (the paper's algorithm); with any budget, runs restart until
    it ends (``iterations`` counts complete runs), and a run that reaches the env's ``max_score``
    ends the search.
    """
    restarts = any(b is not None for b in (time_limit, playouts, iterations))
    bound = getattr(env.unwrapped, "max_score", None)
    return {
        "playouts": playouts,
        "run_limit": iterations if iterations is not None else (None if restarts else 1),
        "max_score": float(bound) if restarts and bound is not None else None,
        "iterations_are_runs": iterations is not None,
    }


class Runner:
    """Runs one search of a program over an env.

    Args:
        env: the env searched (``env.unwrapped`` is used, and left as it was).
        playouts: the playout budget (counted inside the search).
        iterations: the tree-iteration budget (counted inside the search).
        run_limit: how many complete runs ``call`` may make; None for no limit.
        max_score: a score that ends the search when reached.
        iterations_are_runs: report ``stopped == "iterations"`` when the runs are done.
    """

    def __init__(
        self,
        env: Any,
        *,
        playouts: int | None = None,
        iterations: int | None = None,
        run_limit: int | None = None,
        max_score: float | None = None,
        iterations_are_runs: bool = False,
    ) -> None:
        self.base = env.unwrapped
        self.run_limit = run_limit
        self.iterations_are_runs = iterations_are_runs
        self.control = Budget(playouts=playouts, iterations=iterations).control()
        self.max_moves = move_bound(self.base)
        self.best = Best(self.max_moves)
        self.max_score = 1.0e300 if max_score is None else float(max_score)
        self.shared = Shared(
            self.control, self.best.score, self.best.seq, self.best.length, self.max_score
        )
        self.snapshot: Any = None  # restored at the end (generic searches move the env)
        self.spent = 0.0  # seconds the search ran before this call (read from its checkpoint)
        self.started: float | None = None  # when this call's search began
        self.standin: StandIn | None = None  # a cold search's generic stand-in

    def game(self, slots: int, fast: bool) -> Game:
        """A store of ``slots`` states of the env as it was given: compiled rows (``fast``; the
        env put back first if a generic search moved it), or snapshots over the env itself
        (restored at the end)."""
        base = self.base
        if fast:
            if self.snapshot is not None:
                base.restore_state(self.snapshot)
            states = compiled_states(base, slots)
            return Game(states, base.kernel.workspace(states[0]))
        self.snapshot = base.clone_state()
        return Game(EnvStates(base, slots), None)

    # -- checkpoints ------------------------------------------------------------------------------

    def dump(self, program: Program) -> dict[str, Any]:
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
                "playouts": int(self.control[Slot.PLAYOUTS]),
                "runs": int(self.control[Slot.RUNS]),
                "iterations": int(self.control[Slot.ITERATIONS]),
                "seconds": round(self.seconds(), 3),
            },
            "search": program.dump(),
        }

    def load(self, program: Program, data: dict[str, Any], path: str) -> None:
        """Resumes from a checkpoint read from ``path``, every value checked first."""
        from mc_envs.agents.checkpoint import Checker, check_checkpoint, saved_seconds

        check_checkpoint(data, program.algo, program.params, self.base)
        check = Checker(path, self.base, self.max_moves)
        best = check.mapping(data, "best")
        actions = check.actions(best.get("actions"), "best.actions")
        best_score = check.number(best.get("score"), "best.score")
        counts = check.mapping(data, "control")
        playouts = check.count(counts.get("playouts"), "control.playouts")
        runs = check.count(counts.get("runs"), "control.runs")
        iterations = check.count(counts.get("iterations", 0), "control.iterations")
        seconds = saved_seconds(data, path)
        program.load(check.mapping(data, "search"), check)
        n = len(actions)
        self.best.seq[:n] = actions
        self.best.length[0] = n
        self.best.score[0] = best_score
        self.control[Slot.PLAYOUTS] = playouts
        self.control[Slot.RUNS] = runs
        self.control[Slot.ITERATIONS] = iterations
        self.spent = seconds
        if self.control[Slot.PLAYOUTS] >= self.control[Slot.PLAYOUT_LIMIT]:
            self.control[Slot.STOP] = StopCode.PLAYOUTS
        if self.best.score[0] >= self.max_score:
            self.control[Slot.STOP] = StopCode.MAX_SCORE

    def seconds(self) -> float:
        """The seconds this search has run, over all the calls that resumed it."""
        now = 0.0 if self.started is None else time.perf_counter() - self.started
        return self.spent + now

    # -- running ----------------------------------------------------------------------------------

    def run(
        self,
        program: Program,
        *,
        time_limit: float | None,
        callback: Callback | None,
        checkpoint: str | None = None,
        resume: bool = False,
        checkpoint_every: float = 5.0,
    ) -> tuple[str, float]:
        """Runs the program under the budgets; returns (why it stopped, seconds).

        Raises:
            ValueError: ``resume`` without ``checkpoint``, or a checkpoint that does not match.
        """
        from mc_envs.agents.checkpoint import read_checkpoint, write_checkpoint

        if resume:
            if checkpoint is None:
                raise ValueError("resume=True needs checkpoint=PATH")
            self.load(program, read_checkpoint(checkpoint), checkpoint)
        if len(self.base.legal_actions()) == 0:  # a finished game: nothing to search
            self.best.score[0] = float(getattr(self.base, "score", 0.0))
            self.best.length[0] = 0
            return StopReason.COMPLETE, 0.0
        control, limit = self.control, self.run_limit
        standin = self.standin = None
        if time_limit is not None and getattr(program, "fast", False) and hasattr(program, "bind"):
            agent = getattr(program, "seed_agent", program.agent)
            standin = self.standin = stand_in(agent, self.base, program.entries())
        if standin is not None:
            program.bind(False, plain=True)  # until the child has compiled the fast path
        elif program.fast:  # compiles (or loads) before the clock: a call told to stop at once
            idle = np.zeros_like(control)
            idle[Slot.STOP] = StopCode.STOPPED
            program.call(idle, False)
        first_playouts = int(control[Slot.PLAYOUTS])
        done = threading.Event()

        def ticker() -> None:
            while not done.wait(checkpoint_every):
                control[Slot.PAUSE] = 1

        def work() -> None:
            while control[Slot.STOP] == StopCode.NONE:
                if limit is not None and control[Slot.RUNS] >= limit:
                    return
                program.call(control, limit is None)
                if control[Slot.PAUSE] != 0:
                    if control[Slot.STOP] == StopCode.NONE and checkpoint is not None:
                        write_checkpoint(checkpoint, self.dump(program))
                    control[Slot.PAUSE] = 0
                    if standin is not None and standin.switched is None and standin.ready():
                        standin.playouts = int(control[Slot.PLAYOUTS]) - first_playouts
                        standin.switched = time.perf_counter() - self.started
                        program.bind(True)
                elif limit is None:
                    return  # a search that ended without being stopped: nothing left to do

        if checkpoint is not None:
            threading.Thread(target=ticker, name="mc-envs-checkpoint", daemon=True).start()
        if standin is not None:
            standin.watch(control, Slot.PAUSE, done)
        self.started = time.perf_counter()
        try:
            why, seconds = supervise(
                work, control, self.best, Budget(time=time_limit, callback=callback)
            )
        finally:
            done.set()
            if self.snapshot is not None:
                self.base.restore_state(self.snapshot)
        self.spent, self.started = self.spent + seconds, None
        if standin is not None and standin.switched is None:
            standin.playouts = int(control[Slot.PLAYOUTS]) - first_playouts
        if checkpoint is not None:
            write_checkpoint(checkpoint, self.dump(program))
        if not why:
            why = StopCode(control[Slot.STOP]).reason
            if why == StopReason.COMPLETE and self.iterations_are_runs:
                why = StopReason.ITERATIONS
        return why, seconds

    def result(
        self, why: str, seconds: float, answer: tuple[float, list[int]] | None = None, **fields: Any
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
