"""Games played N at a time in worker processes, for ``mc-envs arena --jobs N``.

Each worker is a fresh (``spawn``) process that takes game indices from a queue and plays them
with a picklable ``play(index) -> entry`` (a module-level function or a ``functools.partial`` of
one); the entries come back to the parent, which alone writes the match record. Workers ignore
SIGINT: on Ctrl-C, SIGTERM, an error in a game, or any exception in the parent, the parent ends
every worker with SIGTERM (then SIGKILL after a wait), and a worker ends on SIGTERM by unwinding
its game, so its GTP engines are closed (a killed worker's engines see their input end and quit).
A parent killed outright (SIGKILL) takes its workers with it on Linux (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import Queue
    from types import FrameType

PR_SET_PDEATHSIG = 1  # prctl(2)
STOP_WAIT = 10.0  # seconds a worker has to unwind after SIGTERM before SIGKILL


# A worker's report: ("done", index, what the game returned) or ("error", index, the message).
Report = tuple[str, int, object]


class WorkerError(ValueError):
    """A game failed in a worker, or a worker died: the message names the game or the worker."""


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _orphan_ends(parent: int) -> None:
    """SIGTERM to this worker when its parent dies, even by SIGKILL (Linux's
    ``PR_SET_PDEATHSIG``; elsewhere the worker ends after its game, when no task comes)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before that
        raise SystemExit(0)


def _work(
    play: Callable[[int], dict], tasks: Queue[int | None], results: Queue[Report], parent: int
) -> None:
    """A worker's loop: plays the indices of ``tasks`` until a None, reporting to ``results``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)
    _orphan_ends(parent)
    while (index := tasks.get()) is not None:
        try:
            results.put(("done", index, play(index)))
        except Exception as exc:  # reported to the parent, which stops the match
            results.put(("error", index, f"{type(exc).__name__}: {exc}"))
            return


T = TypeVar("T")  # what a game returns (an arena entry)


def play_in_workers(
    play: Callable[[int], T], indices: list[int], jobs: int
) -> Generator[T, None, None]:
    """The entries of the games ``indices``, played ``jobs`` at a time, as they finish.

    Close the iterator (or exhaust it) to end the workers; an exception raised in it ends them
    first.

    Raises:
        WorkerError: a game raised (its message), or a worker died.
    """
    ctx = mp.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    n = min(jobs, len(indices))
    for index in [*indices, *[None] * n]:
        tasks.put(index)
    workers = [
        ctx.Process(
            target=_work, args=(play, tasks, results, os.getpid()), name=f"arena-worker-{i + 1}"
        )
        for i in range(n)
    ]
    finished = False
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _terminated) if main else None  # unwinds to `finally`
    try:
        for worker in workers:
            worker.start()
        for _ in indices:
            kind, index, payload = _next(results, workers)
            if kind == "error":
                raise WorkerError(f"game {index + 1}: {payload}")
            yield cast(T, payload)  # a "done" report's: what ``play`` returned
        finished = True
    finally:
        stop(workers, grace=STOP_WAIT if finished else 0.0)
        if before is not None:
            signal.signal(signal.SIGTERM, before)
        for q in (tasks, results):
            q.cancel_join_thread()  # what is left unread must not hold up the exit
            q.close()


def _next(results: Queue[Report], workers: Sequence[BaseProcess]) -> Report:
    """The next report of a worker, waiting; a worker that died without one is an error."""
    while True:
        try:
            return results.get(timeout=0.5)
        except queue.Empty:
            dead = [w for w in workers if w.exitcode not in (None, 0)]
            if dead:
                raise WorkerError(
                    f"{dead[0].name} died (exit code {dead[0].exitcode}) during a game"
                ) from None


def stop(workers: Sequence[BaseProcess], grace: float = 0.0) -> None:
    """Ends the workers still running after ``grace`` seconds (SIGTERM, then SIGKILL after
    :data:`STOP_WAIT`) and reaps all of them."""
    for worker in workers:
        if worker.pid is not None:
            worker.join(grace)
        if worker.is_alive():
            worker.terminate()
    for worker in workers:
        if worker.pid is None:
            continue
        worker.join(STOP_WAIT)
        if worker.is_alive():
            print(f"{worker.name} did not stop in {STOP_WAIT:g} s: killed", file=sys.stderr)
            worker.kill()
            worker.join()
