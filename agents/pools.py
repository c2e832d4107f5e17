"""Worker pools: one protocol (:class:`Pool`) over local processes, Ray and the calling process.

A pool runs *tasks*: agent-like objects whose ``search(env, callback=..., **budgets)`` returns a
:class:`~agents.base.SearchResult`. :func:`run_task` runs one on a worker, reporting every
improvement and its playout count through the pool's channel and stopping when the pool is
stopped. :class:`agents.parallel.Rounds` is the one progress loop over any pool.

- :class:`ProcessPool`: ``workers`` long-lived processes of the ``spawn`` context (numba-compiled
  searches load from the on-disk cache in the children).
- :class:`RayPool`: Ray tasks, on the cluster at ``address`` or on a local Ray.
- :class:`InlinePool`: no workers; a task runs in the caller when it is submitted (one worker).
"""

from __future__ import annotations

import copy
import multiprocessing as mp
import os
import pickle
import queue
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from agents.base import NEG_INF, Progress, SearchResult

BACKENDS = ("local", "ray")
REPORT_EVERY = 0.5
GUARD_HINT = (
    "a worker process died (killed by a signal, out of memory, or unable to import the main "
    "script: a script that runs a parallel search must start it under "
    '`if __name__ == "__main__":`)'
)


class Pool(Protocol):
    """What every pool offers (see the module docstring)."""

    workers: int

    def warm_up(self, task: Any) -> None:
        """Runs ``task.search(env)`` once on every worker and waits (before a clock starts)."""

    def submit(self, task: Any, budgets: dict, index: int) -> None:
        """Starts ``task.search`` as task ``index`` (its messages and result carry the index)."""

    def poll(self, timeout: float) -> tuple[list[tuple], dict[int, dict]]:
        """Waits up to ``timeout`` s; returns (progress messages, finished tasks' results).

        Raises:
            RuntimeError: a task failed (with the worker's traceback) or a worker died.
        """
        ...

    def stop(self) -> None:
        """Asks every running task to return its best so far."""

    def close(self) -> None:
        """Stops the tasks and releases the workers."""


def result_dict(result: SearchResult) -> dict:
    """A result as the plain data a worker sends back."""
    return {
        "score": float(result.score),
        "actions": [int(a) for a in result.actions],
        "playouts": int(result.playouts),
        "seconds": float(result.seconds),
        "iterations": int(result.iterations),
        "stopped": result.stopped,
    }


def run_task(task: Any, env: Any, budgets: dict, index: int, channel: Any) -> dict:
    """Runs one task's search, reporting progress to ``channel``; returns its result as a dict."""
    last = [0.0]

    def report(progress: Progress) -> bool:
        now = time.perf_counter()
        if progress.improved:
            channel.put(("best", index, progress.best_score, progress.best_actions))
        if progress.improved or now - last[0] >= REPORT_EVERY:
            last[0] = now
            channel.put(("count", index, progress.playouts))
        return channel.stopped()

    if channel.stopped():  # the search ended while this task waited for a worker
        return result_dict(
            SearchResult(score=NEG_INF, actions=[], playouts=0, seconds=0.0, stopped="stopped")
        )
    return result_dict(task.search(env, callback=report, **budgets))


# -- local processes ------------------------------------------------------------------------------


class _Channel:
    """A worker's side of a process pool: a queue of messages and a stop event."""

    def __init__(self, messages: Any, stop: Any) -> None:
        self.messages, self.stop = messages, stop

    def put(self, message: tuple) -> None:
        self.messages.put(message)

    def stopped(self) -> bool:
        return self.stop.is_set()


_channel: Any = None  # the worker process's channel to the master
_barrier: Any = None  # met by the warm-up tasks, so that every worker process runs one


def _worker_init(messages: Any, stop: Any, barrier: Any) -> None:
    global _channel, _barrier
    _channel = _Channel(messages, stop)
    _barrier = barrier


def _task_main(task: Any, env: bytes, budgets: dict, index: int) -> dict:
    try:
        return run_task(task, pickle.loads(env), budgets, index, _channel)
    except BaseException:
        raise RuntimeError(traceback.format_exc()) from None


def _warm_main(task: Any, env: bytes) -> None:
    task.search(pickle.loads(env))
    _barrier.wait(timeout=600)


class ProcessPool:
    """``workers`` processes of the ``spawn`` context.

    Args:
        workers: how many tasks run at once.
        env: the env the tasks start from, as it is now (sent with every task).
    """

    def __init__(self, workers: int, env: Any) -> None:
        ctx = mp.get_context("spawn")
        self.workers = int(workers)
        self.messages = ctx.Queue()
        self.event = ctx.Event()
        self.env = pickle.dumps(env)  # the env as it is now, whatever the caller does next
        self.pending: dict[int, Any] = {}
        self.pool = ProcessPoolExecutor(
            self.workers,
            mp_context=ctx,
            initializer=_worker_init,
            initargs=(self.messages, self.event, ctx.Barrier(self.workers)),
        )

    def warm_up(self, task: Any) -> None:
        futures = [self.pool.submit(_warm_main, task, self.env) for _ in range(self.workers)]
        for future in futures:
            _result(future)

    def submit(self, task: Any, budgets: dict, index: int) -> None:
        self.pending[index] = self.pool.submit(_task_main, task, self.env, budgets, index)

    def poll(self, timeout: float) -> tuple[list[tuple], dict[int, dict]]:
        messages = []
        try:
            messages.append(self.messages.get(timeout=timeout))
            while True:
                messages.append(self.messages.get_nowait())
        except queue.Empty:
            pass
        finished: dict[int, dict] = {}
        for index, future in list(self.pending.items()):
            if future.done():
                finished[index] = _result(future)
                del self.pending[index]
        return messages, finished

    def stop(self) -> None:
        self.event.set()

    def close(self) -> None:
        self.stop()
        self.pool.shutdown(wait=True, cancel_futures=True)


def _result(future: Any) -> Any:
    try:
        return future.result()
    except BrokenProcessPool:
        raise RuntimeError(GUARD_HINT) from None
    except RuntimeError as exc:
        raise RuntimeError(f"a parallel worker failed:\n{exc}") from None


# -- Ray ------------------------------------------------------------------------------------------


def _ray(address: str | None) -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no phoning home from clusters
    try:
        import ray
    except ImportError:
        raise ImportError("backend='ray' needs Ray: pip install 'mc-envs[distributed]'") from None
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True)
    return ray


def _ray_remotes(ray: Any) -> tuple[Any, Any]:
    """The message board actor and the remote task."""

    @ray.remote
    class Board:
        def __init__(self) -> None:
            self.messages: list = []
            self.stop = False

        def put(self, message: tuple) -> None:
            self.messages.append(message)

        def drain(self) -> list:
            out, self.messages = self.messages, []
            return out

        def set_stop(self) -> None:
            self.stop = True

        def stopped(self) -> bool:
            return self.stop

    class Channel:
        def __init__(self, board: Any) -> None:
            self.board = board

        def put(self, message: tuple) -> None:
            self.board.put.remote(message)

        def stopped(self) -> bool:
            return ray.get(self.board.stopped.remote())

    @ray.remote
    def task(agent, env, budgets, index, board):
        env = copy.deepcopy(env)  # Ray hands tasks read-only arrays; the searches write states
        return run_task(agent, env, budgets, index, Channel(board))

    return Board, task


class RayPool:
    """Ray tasks, at most ``workers`` of them submitted at once by the caller.

    Args:
        workers: how many tasks the caller runs at once.
        env: the env the tasks start from (sent once to the object store).
        address: the Ray cluster (None: a local one, started if needed).
    """

    def __init__(self, workers: int, env: Any, address: str | None = None) -> None:
        self.ray = _ray(address)
        self.workers = int(workers)
        board, self._task = _ray_remotes(self.ray)
        self.board = board.remote()
        self.env = self.ray.put(env)
        self.pending: dict[int, Any] = {}

    def warm_up(self, task: Any) -> None:
        refs = [
            self._task.remote(task, self.env, {}, -1 - j, self.board) for j in range(self.workers)
        ]
        self.ray.get(refs)
        self.ray.get(self.board.drain.remote())

    def submit(self, task: Any, budgets: dict, index: int) -> None:
        self.pending[index] = self._task.remote(task, self.env, budgets, index, self.board)

    def poll(self, timeout: float) -> tuple[list[tuple], dict[int, dict]]:
        time.sleep(timeout)
        messages = self.ray.get(self.board.drain.remote())
        finished: dict[int, dict] = {}
        refs = list(self.pending.values())
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0) if refs else ([], [])
        for index, ref in list(self.pending.items()):
            if ref in ready:
                try:
                    finished[index] = self.ray.get(ref)
                except Exception as exc:  # noqa: BLE001 (Ray wraps the worker's error)
                    raise RuntimeError(f"a parallel worker failed:\n{exc}") from None
                del self.pending[index]
        return messages, finished

    def stop(self) -> None:
        self.board.set_stop.remote()

    def close(self) -> None:
        self.stop()
        refs = list(self.pending.values())
        if refs:
            self.ray.wait(refs, num_returns=len(refs), timeout=10)


# -- inline ---------------------------------------------------------------------------------------


class InlinePool:
    """No workers: each task runs here when it is submitted.

    A search written for a pool gives, on one worker, the result it gives on many (the tests
    check it), at the cost of a callback that is only called between tasks.
    """

    workers = 1

    def __init__(self, env: Any) -> None:
        self.env = pickle.dumps(env)
        self.messages: list[tuple] = []
        self.finished: dict[int, dict] = {}
        self.stop_flag = False

    def put(self, message: tuple) -> None:
        self.messages.append(message)

    def stopped(self) -> bool:
        return self.stop_flag

    def warm_up(self, task: Any) -> None:
        task.search(pickle.loads(self.env))

    def submit(self, task: Any, budgets: dict, index: int) -> None:
        self.finished[index] = run_task(task, pickle.loads(self.env), budgets, index, self)

    def poll(self, timeout: float) -> tuple[list[tuple], dict[int, dict]]:
        messages, self.messages = self.messages, []
        finished, self.finished = self.finished, {}
        return messages, finished

    def stop(self) -> None:
        self.stop_flag = True

    def close(self) -> None:
        self.stop()


def make_pool(workers: int, backend: str, env: Any, address: str | None = None) -> Pool:
    """A pool of ``workers`` on ``backend``; one worker is the :class:`InlinePool`."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if int(workers) == 1:
        return InlinePool(env)
    if backend == "ray":
        return RayPool(workers, env, address)
    return ProcessPool(workers, env)
