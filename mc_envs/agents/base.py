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
from typing import Any, Protocol

import numpy as np

# Shared control block between a search and its runner (int64 array).
STOP, PLAYOUTS, PLAYOUT_LIMIT, VERSION, ITERATIONS, ITERATION_LIMIT, RUNS = range(7)
CONTROL_SIZE = 8
NO_LIMIT = np.iinfo(np.int64).max
NEG_INF = -1.0e300


@dataclass
class SearchResult:
    """The outcome of ``agent.search``.

    Attributes:
        score: the score of ``actions`` played from the searched state (the cumulative score).
        actions: the best sequence found, replayable from the searched state.
        playouts: playouts (random games to the end) performed.
        seconds: wall-clock time of the search.
        iterations: tree iterations (tree searches) or completed nested runs (NMCS, NRPA).
        stopped: why the search ended: ``"complete"``, ``"playouts"``, ``"iterations"``,
            ``"time"``, ``"callback"``, ``"interrupt"`` or ``"max_score"``.
        root_actions, root_visits, root_values: root statistics of tree searches.
    """

    score: float
    actions: list[int]
    playouts: int
    seconds: float
    iterations: int = 0
    stopped: str = "complete"
    root_actions: np.ndarray | None = None
    root_visits: np.ndarray | None = None
    root_values: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Progress:
    """What a ``callback`` receives about once every ``report_every`` seconds and at each improvement.

    Attributes:
        elapsed: seconds since the search started.
        best_score: the best score found so far.
        best_actions: the sequence that reaches it.
        playouts: playouts so far.
        improved: True when this report is about a new best.
    """

    elapsed: float
    best_score: float
    best_actions: list[int]
    playouts: int
    improved: bool


Callback = Callable[[Progress], Any]


class Agent(Protocol):
    """The agent protocol: searches from the env's state and leaves the env as it found it."""

    def search(
        self,
        env: Any,
        *,
        time_limit: float | None = None,
        playouts: int | None = None,
        iterations: int | None = None,
        callback: Callback | None = None,
    ) -> SearchResult: ...

    def act(self, env: Any) -> int: ...


class Best:
    """The best complete sequence found so far, shared between a search and its runner."""

    def __init__(self, max_moves: int) -> None:
        self.score = np.full(1, NEG_INF)
        self.seq = np.zeros(max_moves + 1, dtype=np.int64)
        self.length = np.zeros(1, dtype=np.int64)

    def read(self, control: np.ndarray) -> tuple[float, list[int]]:
        """A consistent copy of (score, actions), retried while the search is writing it."""
        while True:
            before = control[VERSION]
            score, n = float(self.score[0]), int(self.length[0])
            seq = self.seq[:n].tolist()
            if before % 2 == 0 and control[VERSION] == before:  # not torn by a writer
                return score, seq


def new_control(playouts: int | None, iterations: int | None) -> np.ndarray:
    """A fresh control block with the given budgets."""
    control = np.zeros(CONTROL_SIZE, dtype=np.int64)
    control[PLAYOUT_LIMIT] = NO_LIMIT if playouts is None else int(playouts)
    control[ITERATION_LIMIT] = NO_LIMIT if iterations is None else int(iterations)
    return control


def run_search(
    work: Callable[[], Any],
    control: np.ndarray,
    best: Best,
    *,
    time_limit: float | None,
    callback: Callback | None,
    report_every: float = 0.5,
) -> tuple[str, float]:
    """Runs ``work()`` in a thread under a time limit, a callback and Ctrl-C.

    The callback is called once the search has a first result, and at the end if the search
    ended before its last improvement was reported (that call's answer is ignored: the search is
    over). Searches compile before calling
    this, so the time limit counts search time only; a limit shorter than one playout may end a
    search with no result (score ``-inf``, no actions).

    Returns:
        (why it stopped, seconds). ``why`` is ``"time"``, ``"callback"`` or ``"interrupt"`` when the
        runner stopped it; otherwise ``""`` and the search says why.
    """
    failure: list[BaseException] = []

    done = threading.Event()

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # re-raised in the calling thread
            failure.append(exc)
            control[STOP] = 1
        finally:
            done.set()

    start = time.perf_counter()
    thread = threading.Thread(target=target, name="mc-envs-search", daemon=True)
    why = ""
    last_report, last_version = start, -1
    thread.start()
    try:
        # An Event, not Thread.join: a join interrupted by Ctrl-C may later return while the
        # thread still runs, and the search must be over before the env is restored.
        while not done.wait(0.02):
            now = time.perf_counter()
            if time_limit is not None and now - start >= time_limit and not why:
                why = "time"
                control[STOP] = 1
            if callback is not None and not why and best.score[0] > NEG_INF:
                version = int(control[VERSION])
                improved = version != last_version
                if improved or now - last_report >= report_every:
                    score, seq = best.read(control)
                    last_version, last_report = version, now
                    if callback(
                        Progress(now - start, score, seq, int(control[PLAYOUTS]), improved)
                    ):
                        why = "callback"
                        control[STOP] = 1
    except KeyboardInterrupt:
        why = "interrupt"
        control[STOP] = 1
        done.wait()
    seconds = time.perf_counter() - start
    if failure:
        raise failure[0]
    unreported = int(control[VERSION]) != last_version  # ended before reporting its last result
    if callback is not None and not why and best.score[0] > NEG_INF and unreported:
        score, seq = best.read(control)
        callback(Progress(seconds, score, seq, int(control[PLAYOUTS]), True))
    return why, seconds
