"""The one progress loop of every parallel scheme: :class:`Rounds` runs batches of tasks on a pool
(:mod:`mc_envs.agents.parallel.pools`) and follows them.

It gives the callback live progress, holds the time limit, catches Ctrl-C, and counts the playouts
of the finished tasks. Three rules keep a search going when its workers do not:

- *The clock starts at the call.* A time limit T ends the search at T after the scheme started;
  tasks still out then get ``GRACE`` seconds to return their best, and are left behind after that
  (their best so far already reached the caller as a progress message). A worker still compiling
  its kernels, or on a node that died, never holds the search past T + ``GRACE``.
- *The caller stands in.* While the pool's tasks run, the calling process runs one task at a time
  itself (:class:`CallerThread`): the lowest-numbered task of the batch from which
  no worker has reported for ``PATIENCE`` seconds (at once, before any worker has reported at
  all: they are still loading or compiling), or one whose worker died. The caller's copy stops
  as soon as a worker reports on the task (its best so far is kept); otherwise the first copy to
  finish is the result, but for a worker's copy that found nothing (it started after the search
  was told to stop): the caller's copy stands. A task's result depends only on the task (its seed
  and budget), so which copy wins changes nothing but the time; and a search whose budget allows
  one playout never returns without one, however late the workers (past its time limit, it
  waits for the first playout of a copy still searching, ``FIRST_RESULT`` seconds at most).
  Tasks that keep a checkpoint file are neither copied nor submitted again: they resume from
  their file when the search is resumed.
- *Nothing is lost silently.* A task whose worker died is submitted again (once) and run by the
  caller meanwhile; the result's ``extra["participation"]`` says how many workers searched and
  for how long, which tasks were lost with their worker, and which were late.
"""

from __future__ import annotations

import pickle
import queue
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mc_envs.agents.base import FIRST_RESULT, NEG_INF, Callback, Progress, StopReason
from mc_envs.agents.parallel.messages import (
    Budgets,
    Counted,
    Done,
    Improved,
    Lost,
    Message,
    Outcome,
    Searching,
    Task,
)
from mc_envs.agents.parallel.pools import REPORT_EVERY, Pool, run_task

if TYPE_CHECKING:
    import gymnasium as gym

GRACE = 0.6  # seconds after the time limit that the tasks still out get to return (a worker
# hears of the stop at its next report, within ``mc_envs.agents.base.run_search``'s 0.5 s)
PATIENCE = 1.0  # a task no worker has reported on for this long is run by the caller too
MEASURE = 0.5  # seconds of batches (once the workers have started) before judging them
CUT = (  # why a task that did not finish stopped
    StopReason.PLAYOUTS,
    StopReason.MAX_SCORE,
    StopReason.STOPPED,
    StopReason.CALLBACK,
    StopReason.TIME,
    StopReason.LATE,
)


LATE = Done(NEG_INF, [], 0, 0.0, 0, StopReason.LATE)  # a task that never returned


@dataclass
class _Batch:
    """What :meth:`Rounds.run` knows of one batch: its tasks (numbered from ``first``) with
    their budgets, when a worker last spoke of each, the results so far, the playouts counted,
    the tasks lost with their worker, those the caller copied, and workers' empty results held
    while the caller's copy searches."""

    first: int
    tasks: dict[int, Task] = field(default_factory=dict)
    heard: dict[int, float] = field(default_factory=dict)
    results: dict[int, Done] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    lost: set[int] = field(default_factory=set)
    copied: set[int] = field(default_factory=set)
    held: dict[int, Done] = field(default_factory=dict)


class CallerThread:
    """The calling process as one more worker: one task at a time, in a thread.

    The searches release the GIL, so the caller's polling goes on beside it. A task here stops
    when the pool's search stops, or alone (:meth:`cancel`) when a worker's copy finished first.
    """

    def __init__(self, env: gym.Env) -> None:
        self.env = pickle.dumps(env)
        self.messages: queue.SimpleQueue = queue.SimpleQueue()
        self.index: int | None = None  # the task running here
        self.result: Done | None = None
        self.error = ""  # the traceback of a task that failed here
        self.cancelled = False
        self.stop_flag = False
        self.thread: threading.Thread | None = None
        self.saves = False  # the running task writes a checkpoint

    def busy(self) -> bool:
        """Whether a task runs here (a finished one counts until :meth:`poll` collects it)."""
        return self.index is not None

    def put(self, message: Message) -> None:
        self.messages.put(message)

    def stopped(self, index: int) -> bool:
        return self.stop_flag or self.cancelled

    def where(self) -> str:
        return "caller"

    def submit(self, task: Searching, budgets: Budgets, index: int) -> None:
        self.index, self.result, self.error, self.cancelled = index, None, "", False
        self.saves = budgets.get("checkpoint") is not None

        def target() -> None:
            try:
                result = run_task(task, pickle.loads(self.env), budgets, index, self)
                self.result = result._replace(cancelled=self.cancelled)
            except BaseException:
                self.error = traceback.format_exc()

        self.thread = threading.Thread(target=target, name="mc-envs-caller-task", daemon=True)
        self.thread.start()

    def poll(self) -> tuple[list[Message], dict[int, Done]]:
        """The messages so far and, once the task ended, its result."""
        messages = []
        while not self.messages.empty():
            messages.append(self.messages.get())
        index = self.index
        if self.thread is None or self.thread.is_alive() or index is None:
            return messages, {}
        result, self.thread, self.index = self.result, None, None
        if result is None:
            raise RuntimeError(f"a search in the calling process failed:\n{self.error}")
        return messages, {index: result}

    def cancel(self) -> None:
        """Asks the running task to return (it still reports its result)."""
        self.cancelled = True

    def stop(self) -> None:
        self.stop_flag = True

    def settle(self) -> None:
        """Once stopped: waits for a task that writes a checkpoint to return, so that its last
        save is on disk before the search returns (the file is the caller's as soon as it has
        the result); a task without one may still be compiling, and returns in the background."""
        thread = self.thread
        if self.saves and thread is not None:
            thread.join()


def why_ended(rounds: Rounds, reasons: list[str], otherwise: str) -> str:
    """Why a parallel search ended: why its rounds were ended (but for ``"max_score"``, which a
    task reports), else ``"max_score"`` if a task reached it, else ``otherwise`` (one of the
    tasks' ``reasons``, or a default when there are none)."""
    if rounds.why and rounds.why != StopReason.MAX_SCORE:
        return rounds.why
    return StopReason.MAX_SCORE if StopReason.MAX_SCORE in reasons else otherwise


class Rounds:
    """Runs a master's batches of tasks on a pool and follows them (see the module docstring).

    ``why`` becomes ``"time"``, ``"callback"``, ``"interrupt"`` or ``"max_score"`` when the search
    must end (the pool is then stopped, so the running tasks return their best so far).

    Args:
        pool: the workers.
        time_limit: seconds from ``start`` (None: no limit).
        callback: receives :class:`~mc_envs.agents.base.Progress` about the best of all tasks.
        start: when the search began (``time.perf_counter()``; default now).
        env: the env the tasks search (the caller's copy of it); None: the caller never stands in.
    """

    def __init__(
        self,
        pool: Pool,
        time_limit: float | None,
        callback: Callback | None,
        *,
        start: float | None = None,
        env: gym.Env | None = None,
    ) -> None:
        self.pool = pool
        self.time_limit = time_limit
        self.callback = callback
        self.start = time.perf_counter() if start is None else start
        self.last_report = self.start
        self.helper = CallerThread(env) if env is not None and pool.workers > 1 else None
        self.why = ""
        self.total = 0  # playouts of the tasks' results (what a budget counts)
        self.spare = 0  # playouts of copies that were overtaken, and of late tasks
        self.tasks = 0
        self.batches = 0
        self.shown_score = NEG_INF
        self.shown_actions: list[int] = []
        self.improved = False
        self.heard = False  # a worker has reported: the pool is warm
        self.log: list[Done] = []  # where and how long each task with a result ran
        self.lost: list[str] = []
        self.late: list[int] = []
        self.wall = 0.0  # seconds the last batch took
        self.work = self.measured = 0.0  # tasks' search seconds, and wall seconds, of batches
        self.judged = 0  # ... that started once the workers had reported

    def remaining(self) -> float | None:
        """Seconds left before the time limit (None without one)."""
        if self.time_limit is None:
            return None
        return max(self.time_limit - (time.perf_counter() - self.start), 0.0)

    def show(self, score: float, actions: list) -> None:
        """Makes ``score`` the best shown to the callback if it is better."""
        if score > self.shown_score:
            self.shown_score, self.shown_actions = score, list(actions)
            self.improved = True

    def end(self, why: str) -> None:
        """Ends the search for ``why`` (the first reason stays): the running tasks return."""
        if not self.why:
            self.why = why
        self.pool.stop()
        if self.helper is not None:
            self.helper.stop()

    def _budgets(self, budgets: Budgets) -> Budgets:
        left = self.remaining()
        if left is None:  # no time limit
            return budgets
        if left == 0.0:
            self.end(StopReason.TIME)  # the tasks not yet started return at once
        own = budgets.get("time_limit")
        left = left if own is None else min(left, own)  # a task's own share stays its own
        return {**budgets, "time_limit": left, "deadline": time.time() + left}

    def run(self, batch: list[Task]) -> list[Done]:
        """Runs the (task, budgets) pairs of ``batch``; their results, in order.

        A task that did not return (late past the time limit, or after a Ctrl-C, which still
        waits up to 10 s for the others) has a result with score ``-inf`` and ``stopped ==
        "late"``; its best so far was shown to the callback and counts in :attr:`shown_score`.
        """
        began = time.perf_counter()
        warm = self.heard  # workers had started before this batch: it measures the pool
        b = self._submit(batch)
        deadline = None
        while len(b.results) < len(b.tasks):
            try:
                messages, finished = self.pool.poll(0.02)
            except KeyboardInterrupt:
                self.end(StopReason.INTERRUPT)
                deadline = time.perf_counter() + 10
                continue
            now = time.perf_counter()
            self._hear(b, messages, now)
            mine: dict[int, Done] = {}
            if self.helper is not None:
                more, mine = self.helper.poll()
                messages += more
            self._from_workers(b, finished)
            self._from_caller(b, mine)
            self._read(b, messages)
            self._keep_caller_busy(b, now)
            if self.remaining() == 0.0 and not self.why:
                self.end(StopReason.TIME)
            if self.why == StopReason.TIME and deadline is None:
                deadline = time.perf_counter() + GRACE
            if deadline is not None and time.perf_counter() > deadline and self._may_end(b):
                break
            self._report(sum(b.counts.values()))
        return self._close(b, began, warm)

    def _may_end(self, b: _Batch) -> bool:
        """Whether a search past its deadline may return: after a time limit, not before a
        playout was counted while a copy still searches (a slow machine, a cold cache), for
        ``FIRST_RESULT`` seconds at most, as a single search."""
        if self.why != StopReason.TIME or self.total + self.spare + sum(b.counts.values()) > 0:
            return True
        return time.perf_counter() - self.start > (self.time_limit or 0.0) + GRACE + FIRST_RESULT

    def _submit(self, batch: list[Task]) -> _Batch:
        """Submits the batch's tasks, numbered after those of the earlier batches."""
        b = _Batch(self.tasks)
        for j, (task, budgets) in enumerate(batch):
            budgets = self._budgets(budgets)
            b.tasks[b.first + j] = Task(task, budgets)
            b.heard[b.first + j] = time.perf_counter()
            self.pool.submit(task, budgets, b.first + j)
        self.tasks += len(batch)
        self.batches += 1
        return b

    def _hear(self, b: _Batch, messages: list[Message], now: float) -> None:
        """Notes which tasks the workers spoke of: the caller's copy of such a task stops (the
        worker's copy is under way and will finish)."""
        for message in messages:
            if message.task in b.heard:
                b.heard[message.task] = now
            self.heard = True
            if self.helper is not None and self.helper.index == message.task:
                self.helper.cancel()
                b.copied.discard(message.task)  # copied again if it falls silent

    def _from_workers(self, b: _Batch, finished: dict[int, Outcome]) -> None:
        """Takes the workers' results: a lost task is submitted again (once); a worker's copy
        that found nothing waits for the caller's copy still searching."""
        for index, result in finished.items():
            if isinstance(result, Lost):
                if index not in b.tasks or index in b.results:
                    continue
                self.lost.append(f"task {index}: {result.why}")
                again = index not in b.lost and not self.why
                if again and b.tasks[index].budgets.get("checkpoint") is None:
                    self.pool.submit(*b.tasks[index], index)  # once, to a worker still there
                b.lost.add(index)
                if self.helper is None or self.helper.index != index:
                    b.copied.discard(index)
            elif index in b.tasks and index not in b.results:
                if self._caller_searches(index) and result.score <= NEG_INF:
                    b.held[index] = result._replace(by="worker")  # it found nothing: wait
                else:
                    self._resolve(b, index, result._replace(by="worker"))
            else:
                self.spare += result.playouts  # a copy overtaken by the caller's

    def _from_caller(self, b: _Batch, mine: dict[int, Done]) -> None:
        """Takes the result of the caller's copy, unless a worker's came first or it was
        cancelled while the search goes on."""
        for index, result in mine.items():
            cancelled = result.cancelled and not self.why
            if index in b.tasks and index not in b.results and not cancelled:
                self._resolve(b, index, result._replace(by="caller"))
            else:
                self.spare += result.playouts

    def _read(self, b: _Batch, messages: list[Message]) -> None:
        """Shows the improvements and keeps the playout counts of the batch's tasks."""
        for message in messages:
            if isinstance(message, Improved):
                self.show(message.score, message.actions)
            elif isinstance(message, Counted) and message.task in b.tasks:
                b.counts[message.task] = max(b.counts.get(message.task, 0), message.playouts)

    def _keep_caller_busy(self, b: _Batch, now: float) -> None:
        """Cancels the caller's copy of a task a worker finished, or starts it on another."""
        if self.helper is None:
            return
        if self.helper.busy() and self.helper.index in b.results:
            self.helper.cancel()  # a worker's copy finished first
        elif not self.helper.busy() and not self.why and self._worth_starting():
            self._stand_in(b, now)

    def _close(self, b: _Batch, began: float, warm: bool) -> list[Done]:
        """The batch's results in order (late tasks marked), its playouts and timings counted."""
        self.pool.cancel_below(b.first + len(b.tasks))  # copies of this batch still running
        if self.helper is not None and self.helper.busy():
            self.helper.cancel()
        ordered = []
        for index in b.tasks:
            if index not in b.results and index in b.held:
                self._resolve(b, index, b.held[index])
            if index not in b.results:
                self.late.append(index)
                self.spare += b.counts.get(index, 0)
                b.results[index] = LATE
            ordered.append(b.results[index])
        self.total += sum(r.playouts for r in ordered)
        self.wall = time.perf_counter() - began
        if warm:
            self.work += sum(r.seconds for r in ordered)
            self.measured += self.wall
            self.judged += 1
        return ordered

    def busy(self) -> float | None:
        """How many workers' worth of search the batches kept going: the tasks' search seconds
        over the batches' wall seconds, counting the batches started once a worker had
        reported (before, the workers load or compile); None until ``MEASURE`` seconds of at
        least three batches were measured. Below 1, one worker alone would have searched more."""
        if self.measured < MEASURE or self.judged < 3:
            return None
        return self.work / self.measured

    def _resolve(self, b: _Batch, index: int, result: Done) -> None:
        b.results[index] = result
        b.counts[index] = result.playouts
        self.show(result.score, result.actions)
        self.log.append(result)
        if result.stopped == StopReason.MAX_SCORE:
            self.end(StopReason.MAX_SCORE)  # the others cannot do better

    def _caller_searches(self, index: int) -> bool:
        """Whether the caller's copy of task ``index`` is still searching."""
        return self.helper is not None and self.helper.index == index

    def _worth_starting(self) -> bool:
        left = self.remaining()
        return left is None or left > 0.1

    def _stand_in(self, b: _Batch, now: float) -> None:
        """Starts the caller on the first task that waits too long for a worker, if any."""
        if self.helper is None:
            return
        patience = PATIENCE if self.heard else 0.0
        for index, (task, budgets) in b.tasks.items():
            if index in b.results or index in b.copied or budgets.get("checkpoint") is not None:
                continue
            if index in b.lost or now - b.heard[index] >= patience:
                b.copied.add(index)
                self.helper.submit(task, self._budgets(budgets), index)
                return

    def playouts(self, budgeted: bool) -> int:
        """The playouts to report: with a time limit and no playout budget, every playout made;
        otherwise those of the tasks' results (what a budget counts: the same on every backend,
        whichever copy of a task came first)."""
        return self.total if budgeted or self.time_limit is None else self.total + self.spare

    def participation(self) -> dict:
        """Who searched, and for how long: the tasks with a result by where they ran, the
        tasks lost with their worker, those still out at the end, and the playouts of copies
        that did not count (overtaken or late)."""
        by_worker = [e for e in self.log if e.by == "worker"]
        by_caller = [e for e in self.log if e.by == "caller"]
        return {
            "workers": len({e.node for e in by_worker}),
            "worker_tasks": len(by_worker),
            "worker_seconds": round(sum(e.seconds for e in by_worker), 3),
            "worker_ready": round(max((e.ready or 0.0 for e in by_worker), default=0.0), 3),
            "caller_tasks": len(by_caller),
            "caller_seconds": round(sum(e.seconds for e in by_caller), 3),
            "lost": list(self.lost),
            "late": list(self.late),
            "spare_playouts": int(self.spare),
        }

    def close(self) -> None:
        """Stops the caller's task, if one runs, waiting for it only if it writes a checkpoint
        (:meth:`CallerThread.settle`): a copy still compiling returns when it can, in the
        background (the pool is closed by its owner)."""
        if self.helper is not None:
            self.helper.stop()
            self.helper.settle()

    def _report(self, running: int) -> None:
        now = time.perf_counter()
        due = self.improved or now - self.last_report >= REPORT_EVERY
        if self.callback is None or self.why or self.shown_score <= NEG_INF or not due:
            return
        self.last_report = now
        progress = Progress(
            now - self.start,
            self.shown_score,
            self.shown_actions,
            self.total + running,
            self.improved,
        )
        self.improved = False
        try:
            stop = self.callback(progress)
        except KeyboardInterrupt:
            self.end(StopReason.INTERRUPT)
            return
        if stop:
            self.end(StopReason.CALLBACK)
