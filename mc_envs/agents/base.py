"""What every agent shares: the result type, progress reports, and the runner that enforces budgets.

A search runs in a worker thread (compiled searches release the GIL) while the calling thread
watches the clock, calls the user's callback and catches Ctrl-C; any of these sets a stop flag that
the search polls after every playout, so every search is anytime: it returns the best found so far.
Playout budgets are counted inside the search itself, so a seeded search with a playout budget is
exactly reproducible.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import TYPE_CHECKING, TypedDict

import numpy as np

if TYPE_CHECKING:
    import gymnasium as gym
    from typing_extensions import Unpack

NO_LIMIT = np.iinfo(np.int64).max
NEG_INF = -1.0e300
FIRST_RESULT = 30.0  # seconds past its time limit that a search without a result may take for one


class Slot(IntEnum):
    """The control block: one int64 array shared by a search (compiled or not) and its runner.

    Compiled code reads these members as constants (``control[Slot.STOP]``).
    """

    STOP = 0  # a StopCode: NONE while the search may go on
    PLAYOUTS = 1  # playouts made so far
    PLAYOUT_LIMIT = 2  # the playout budget (NO_LIMIT: none)
    BEST_WRITES = 3  # bumped before and after each write of the best sequence: odd while writing
    ITERATIONS = 4  # tree iterations made so far
    ITERATION_LIMIT = 5  # the iteration budget (NO_LIMIT: none)
    RUNS = 6  # complete runs (NMCS, NRPA) made so far
    PAUSE = 7  # nonzero: return at the next safe point (a checkpoint, the compiled path's switch)


CONTROL_SIZE = len(Slot)

#: The counters a checkpoint saves (``control.<name>``) and a resumed search restores. The
#: first two are in every checkpoint; one added later reads as 0 from a file that lacks it.
COUNTERS = {"playouts": Slot.PLAYOUTS, "runs": Slot.RUNS, "iterations": Slot.ITERATIONS}
ALWAYS_SAVED = ("playouts", "runs")


class StopReason(str, Enum):
    """Why a search ended: the values of ``SearchResult.stopped`` (equal to their strings).

    A ``str`` mixin rather than ``enum.StrEnum``, which Python 3.10 lacks; ``str()`` and
    f-strings give the bare value on every version.
    """

    COMPLETE = "complete"  # the search ended by itself (a complete run, no budget)
    PLAYOUTS = "playouts"
    ITERATIONS = "iterations"
    TIME = "time"
    CALLBACK = "callback"
    INTERRUPT = "interrupt"
    MAX_SCORE = "max_score"  # the env's max_score was reached
    MEMORY = "memory"  # the tree reached its memory cap
    STOPPED = "stopped"  # a parallel task told to stop (its search ended elsewhere)
    LATE = "late"  # a parallel task that never returned

    def __str__(self) -> str:
        return str(self.value)


class StopCode(IntEnum):
    """What a search writes in ``control[Slot.STOP]`` (compiled code reads these as constants)."""

    NONE = 0  # go on
    STOPPED = 1  # the runner stopped it (the runner knows why: time, callback, interrupt)
    MAX_SCORE = 2
    PLAYOUTS = 3
    ITERATIONS = 4
    MEMORY = 5

    @property
    def reason(self) -> StopReason:
        """The :class:`StopReason` reported for this code."""
        return _REASONS[self]


_REASONS = {
    StopCode.NONE: StopReason.COMPLETE,
    StopCode.STOPPED: StopReason.STOPPED,
    StopCode.MAX_SCORE: StopReason.MAX_SCORE,
    StopCode.PLAYOUTS: StopReason.PLAYOUTS,
    StopCode.ITERATIONS: StopReason.ITERATIONS,
    StopCode.MEMORY: StopReason.MEMORY,
}

# Old names of three slots, read by mcts/tree.py and mcts/puct_eval.py until they use Slot.
STOP, ITERATIONS, ITERATION_LIMIT = Slot.STOP, Slot.ITERATIONS, Slot.ITERATION_LIMIT


@dataclass
class SearchResult:
    """The outcome of ``agent.search``.

    Attributes:
        score: the score of ``actions`` played from the searched state (the cumulative score).
        actions: the best sequence found, replayable from the searched state.
        playouts: playouts (random games to the end) performed.
        seconds: wall-clock time of the search.
        iterations: tree iterations (tree searches) or completed nested runs (NMCS, NRPA).
        stopped: why the search ended, a :class:`StopReason` (a ``str``: ``"complete"``,
            ``"playouts"``, ``"iterations"``, ``"time"``, ``"callback"``, ``"interrupt"``,
            ``"max_score"`` or ``"memory"``).
        root_actions, root_visits, root_values: root statistics of tree searches.
    """

    score: float
    actions: list[int]
    playouts: int
    seconds: float
    iterations: int = 0
    stopped: str = StopReason.COMPLETE
    root_actions: np.ndarray | None = None
    root_visits: np.ndarray | None = None
    root_values: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


class ResultFields(TypedDict, total=False):
    """The fields of a :class:`SearchResult` that a runner's caller may set besides the score,
    actions, counters and stop reason."""

    iterations: int
    root_actions: np.ndarray | None
    root_visits: np.ndarray | None
    root_values: np.ndarray | None
    extra: dict


@dataclass(frozen=True)
class Progress:
    """What a ``callback`` receives about once every ``report_every`` seconds and at each improvement.

    Attributes:
        elapsed: seconds since the search started.
        best_score: the best score found so far.
        best_actions: the sequence that reaches it.
        playouts: playouts so far.
        improved: True when this report is about a new best.
        compiling: True while the generic Python path stands in for the compiled search, which a
            child process is compiling (a cold numba cache): playouts are slower until it ends.
    """

    elapsed: float
    best_score: float
    best_actions: list[int]
    playouts: int
    improved: bool
    compiling: bool = False


Callback = Callable[[Progress], object]  # a true answer ends the search


class SearchOptions(TypedDict, total=False):
    """What an agent's ``search`` takes besides its budget: the nested searches' checkpoint
    (see :meth:`mc_envs.agents.runner.NestedAgent.run_search`); an agent without checkpoints
    refuses them (TypeError)."""

    checkpoint: str | None
    resume: bool
    checkpoint_every: float


class SearchKeywords(SearchOptions, total=False):
    """The keywords of a ``search`` call besides its callback, as a parallel search hands them
    to a worker's task: its budget and its checkpoint (a budget left out or None: no limit)."""

    time_limit: float | None
    playouts: int | None
    iterations: int | None


@dataclass(frozen=True)
class Budget:
    """What may end a search, built once from ``search``'s keyword arguments.

    Attributes:
        time: wall-clock seconds from the call (None: no limit). It means the clock only.
        playouts: playouts (counted inside the search, so a seeded search is reproducible).
        iterations: tree iterations (tree searches) or complete runs (NMCS, NRPA).
        callback: called with :class:`Progress`; returning True ends the search.
    """

    time: float | None = None
    playouts: int | None = None
    iterations: int | None = None
    callback: Callback | None = None

    @property
    def bounded(self) -> bool:
        """Whether anything but the search itself ends it (a time, playout or iteration limit)."""
        return self.time is not None or self.playouts is not None or self.iterations is not None

    @property
    def clocked(self) -> bool:
        """Whether anything watches the search as it runs (a time limit, a callback): then no
        kernel compiles in its process on a cold cache (:func:`mc_envs.interpret.sharing`)."""
        return self.time is not None or self.callback is not None

    def control(self) -> np.ndarray:
        """A fresh control block (:class:`Slot`) holding the playout and iteration limits."""
        control = np.zeros(CONTROL_SIZE, dtype=np.int64)
        control[Slot.PLAYOUT_LIMIT] = NO_LIMIT if self.playouts is None else int(self.playouts)
        control[Slot.ITERATION_LIMIT] = (
            NO_LIMIT if self.iterations is None else int(self.iterations)
        )
        return control

    def counts(self, parts: int = 1, index: int = 0) -> SearchKeywords:
        """Share ``index`` of ``parts`` of the counted budgets (playouts, iterations), as
        ``search``'s keyword arguments: the whole split as evenly as it goes, each share at least
        1; the budgets not set are left out (root parallelism gives one share to each worker)."""
        shares: SearchKeywords = {}
        if self.playouts is not None:
            shares["playouts"] = _share(self.playouts, parts, index)
        if self.iterations is not None:
            shares["iterations"] = _share(self.iterations, parts, index)
        return shares


def _share(total: int, parts: int, index: int) -> int:
    return max(total // parts + (1 if index < total % parts else 0), 1)


class Searcher:
    """What every agent is: ``search`` (its budget keywords, written once, become one
    :class:`Budget` handed to :meth:`dispatch`) and ``act``."""

    def search(
        self,
        env: gym.Env,
        *,
        time_limit: float | None = None,
        playouts: int | None = None,
        iterations: int | None = None,
        callback: Callback | None = None,
        **options: Unpack[SearchOptions],
    ) -> SearchResult:
        """Searches from the env's current state and leaves the env as it was.

        Args:
            env: the env to search from.
            time_limit: seconds from the call.
            playouts: a playout budget.
            iterations: tree iterations (tree searches) or complete runs (NMCS, NRPA).
            callback: receives :class:`Progress`; returning True ends the search.
            options: the agent's own (see its ``run_search``).
        """
        return self.dispatch(env, Budget(time_limit, playouts, iterations, callback), **options)

    def dispatch(
        self, env: gym.Env, budget: Budget, **options: Unpack[SearchOptions]
    ) -> SearchResult:
        """Runs the search where it runs: here, in this process (parallel agents override it)."""
        return self.run_search(env, budget, **options)

    #: One search in this process, ``run_search(env, budget, **options)``: each agent declares
    #: the options it takes (NMCS's ``checkpoint`` ...); any other is a TypeError.
    run_search: Callable[..., SearchResult]

    def act(self, env: gym.Env) -> int:
        """The move to play from the env's state."""
        raise NotImplementedError


Agent = Searcher  # the agent protocol: search (leaving the env as it found it) and act


class Best:
    """The best complete sequence found so far, shared between a search and its runner."""

    def __init__(self, max_moves: int) -> None:
        self.score = np.full(1, NEG_INF)
        self.seq = np.zeros(max_moves + 1, dtype=np.int64)
        self.length = np.zeros(1, dtype=np.int64)

    def read(self, control: np.ndarray) -> tuple[float, list[int]]:
        """A consistent copy of (score, actions), retried while the search is writing it."""
        while True:
            before = control[Slot.BEST_WRITES]
            score, n = float(self.score[0]), int(self.length[0])
            seq = self.seq[:n].tolist()
            if before % 2 == 0 and control[Slot.BEST_WRITES] == before:  # not torn by a writer
                return score, seq


class _Reports:
    """The callback's side of :func:`supervise`: a report at each improvement and every
    ``every`` seconds once the search has a first result."""

    def __init__(
        self,
        callback: Callback,
        control: np.ndarray,
        best: Best,
        start: float,
        every: float,
        compiling: Callable[[], bool],
    ) -> None:
        self.callback, self.control, self.best = callback, control, best
        self.start, self.every, self.compiling = start, every, compiling
        self.last_report, self.last_version = start, -1

    def _progress(self, elapsed: float, improved: bool) -> Progress:
        score, seq = self.best.read(self.control)
        playouts = int(self.control[Slot.PLAYOUTS])
        return Progress(elapsed, score, seq, playouts, improved, self.compiling())

    def stop_asked(self, now: float) -> bool:
        """Reports if one is due; whether the callback asked to stop."""
        control = self.control
        if self.best.score[0] <= NEG_INF:
            return False
        version = int(control[Slot.BEST_WRITES])
        improved = version != self.last_version
        if not improved and now - self.last_report < self.every:
            return False
        self.last_version, self.last_report = version, now
        return bool(self.callback(self._progress(now - self.start, improved)))

    def final(self, seconds: float) -> None:
        """The last result, if the search ended before it was reported (the answer is ignored:
        the search is over)."""
        control = self.control
        if self.best.score[0] > NEG_INF and int(control[Slot.BEST_WRITES]) != self.last_version:
            self.callback(self._progress(seconds, True))


def _grace(best: Best) -> float:
    """The time a search may take past its limit: none once it has a result."""
    return 0.0 if best.score[0] > NEG_INF else FIRST_RESULT


def _start(
    work: Callable[[], object], control: np.ndarray
) -> tuple[threading.Event, list[BaseException]]:
    """Runs ``work()`` in a daemon thread: the event set when it is over, and the exception it
    raised, if any (the search then told to stop)."""
    failure: list[BaseException] = []
    done = threading.Event()

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # re-raised in the calling thread
            failure.append(exc)
            control[Slot.STOP] = StopCode.STOPPED
        finally:
            done.set()

    threading.Thread(target=target, name="mc-envs-search", daemon=True).start()
    return done, failure


def supervise(
    work: Callable[[], object],
    control: np.ndarray,
    best: Best,
    budget: Budget,
    report_every: float = 0.5,
    compiling: Callable[[], bool] = lambda: False,
) -> tuple[StopReason | None, float]:
    """Runs ``work()`` in a thread under the budget's time limit and callback, and Ctrl-C.

    The callback is called as :class:`_Reports` says. The time limit counts from this call: a
    compiled search compiles before it, or starts generic while a child compiles it. A search
    with no result yet when its time is up (its first playout slowed by a busy machine, or by the
    env's own kernels compiling) goes on until it has one, ``FIRST_RESULT`` seconds more at most:
    a budget that allows one playout never returns without one.

    Returns:
        (why it stopped, seconds). ``why`` is :class:`StopReason` ``TIME``, ``CALLBACK`` or
        ``INTERRUPT`` when the runner stopped it; otherwise None and the search says why.
    """
    start = time.perf_counter()
    reports = (
        None
        if budget.callback is None
        else _Reports(budget.callback, control, best, start, report_every, compiling)
    )
    why: StopReason | None = None
    done, failure = _start(work, control)
    try:
        # An Event, not Thread.join: a join interrupted by Ctrl-C may later return while the
        # thread still runs, and the search must be over before the env is restored.
        while not done.wait(0.02):
            if why:
                continue
            now = time.perf_counter()
            if budget.time is not None and now - start >= budget.time + _grace(best):
                why = StopReason.TIME
            elif reports is not None and reports.stop_asked(now):
                why = StopReason.CALLBACK
            if why:
                control[Slot.STOP] = StopCode.STOPPED
    except KeyboardInterrupt:
        why = StopReason.INTERRUPT
        control[Slot.STOP] = StopCode.STOPPED
        done.wait()
    seconds = time.perf_counter() - start
    if failure:
        raise failure[0]
    if reports is not None and not why:
        reports.final(seconds)
    return why, seconds
