"""Worker pools: one protocol (:class:`Pool`) over local processes, Ray and the calling process.

A pool runs *tasks*: agent-like objects whose ``search(env, callback=..., **budgets)`` returns a
:class:`~mc_envs.agents.base.SearchResult`. :func:`run_task` runs one on a worker, reporting every
improvement and its playout count through the pool's channel and stopping when the pool is
stopped. :class:`mc_envs.agents.parallel.rounds.Rounds` is the one progress loop over any pool.

Tasks are numbered in the order a search submits them; a pool can stop every task below a number
(:meth:`Pool.cancel_below`, the tasks of a finished round that still run somewhere) or all of them
(:meth:`Pool.stop`). A task whose worker died (a killed process, a lost Ray node) is reported as
*lost* rather than as an error, so that the search can run it again; an error raised by the search
itself is re-raised.

- :class:`ProcessPool`: ``workers`` long-lived processes of the ``spawn`` context (numba-compiled
  searches load from the on-disk cache in the children).
- :class:`RayPool`: Ray tasks, on the cluster at ``address`` or on a local Ray.
- :class:`InlinePool`: no workers; a task runs in the caller when it is submitted (one worker).

(:class:`mc_envs.agents.parallel.rounds.CallerThread` runs tasks in a thread of the caller, beside a pool.)
"""

from __future__ import annotations

import copy
import multiprocessing as mp
import os
import pickle
import queue
import socket
import time
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from mc_envs.agents.base import NEG_INF, Progress, SearchResult, StopReason
from mc_envs.agents.compile_ahead import allowed as stand_in_allowed
from mc_envs.agents.compile_ahead import enable as compile_ahead_enable
from mc_envs.agents.parallel.messages import (
    Channel,
    Counted,
    Done,
    Ended,
    Improved,
    Lost,
    Message,
    Outcome,
    Searching,
)
from mc_envs.extras import require

if TYPE_CHECKING:
    import ctypes
    import multiprocessing.queues
    import multiprocessing.synchronize
    from collections.abc import Callable
    from types import ModuleType

    import gymnasium as gym
    from ray import ObjectRef
    from ray.actor import ActorClass, ActorHandle
    from ray.remote_function import RemoteFunction

    from mc_envs.agents.parallel.messages import Budgets, SearchKeywords

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

    def submit(self, task: Searching, budgets: Budgets, index: int) -> None:
        """Starts ``task.search`` as task ``index`` (its messages and result carry the index)."""

    def poll(self, timeout: float) -> tuple[list[Message], dict[int, Outcome]]:
        """Waits up to ``timeout`` s; returns (progress messages, finished tasks' results).

        A task whose worker died finishes :class:`Lost`.

        Raises:
            RuntimeError: a task's search failed (with the worker's traceback).
        """
        ...

    def cancel_below(self, index: int) -> None:
        """Asks the tasks numbered below ``index`` to return (their results are not awaited)."""

    def stop(self) -> None:
        """Asks every running task to return its best so far."""

    def close(self) -> None:
        """Stops the tasks and releases the workers, without waiting for late tasks."""


def run_task(task: Searching, env: gym.Env, budgets: Budgets, index: int, channel: Channel) -> Done:
    """Runs one task's search, reporting progress to ``channel``; returns its result.

    A ``deadline`` in ``budgets`` (``time.time()`` seconds) shortens ``time_limit`` by the time
    the task waited for a worker; ``stand_in`` true lets a cold search start on the generic path
    while its kernels compile (:mod:`mc_envs.agents.compile_ahead`), for tasks the caller cannot stand in
    for. The result also says when the search gave its first report (``ready``: seconds after the
    task started, loading or compiling included) and which process ran it (``node``).
    """
    start = time.perf_counter()
    last = [0.0]
    ready: list[float] = []
    budgets = budgets.copy()
    deadline = budgets.pop("deadline", None)  # wall clock: the time spent waiting is gone
    limit = budgets.get("time_limit")
    if deadline is not None and limit is not None:
        budgets["time_limit"] = max(min(limit, deadline - time.time()), 0.0)

    def report(progress: Progress) -> bool:
        now = time.perf_counter()
        if not ready:
            ready.append(now - start)
        if progress.improved:
            channel.put(Improved(index, progress.best_score, progress.best_actions))
        if progress.improved or now - last[0] >= REPORT_EVERY:
            last[0] = now
            channel.put(Counted(index, progress.playouts))
        return channel.stopped(index)

    if channel.stopped(index) and not budgets.get("resume"):  # it ended while this task waited
        result = SearchResult(
            score=NEG_INF, actions=[], playouts=0, seconds=0.0, stopped=StopReason.STOPPED
        )
    else:
        if channel.stopped(index):  # a resumed task still hands back the best its file saved
            budgets["time_limit"] = 0.0
        with stand_in_allowed(budgets.pop("stand_in", False)):
            keywords: SearchKeywords = budgets  # deadline and stand_in popped above
            result = task.search(env, callback=report, **keywords)
    out = Done.of(result)
    first = ready[0] if ready else time.perf_counter() - start - out.seconds
    return out._replace(ready=first, node=channel.where())


# -- local processes ------------------------------------------------------------------------------


class _Channel:
    """A worker's side of a process pool: a queue of messages, a stop event and the number below
    which tasks are cancelled."""

    def __init__(
        self,
        messages: multiprocessing.queues.Queue[Message],
        stop: multiprocessing.synchronize.Event,
        floor: ctypes.c_longlong,
    ) -> None:
        self.messages, self.stop, self.floor = messages, stop, floor

    def put(self, message: Message) -> None:
        self.messages.put(message)

    def stopped(self, index: int) -> bool:
        return self.stop.is_set() or index < self.floor.value

    def where(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}"


_channel: _Channel | None = None  # the worker process's channel to the master


def _worker_init(
    messages: multiprocessing.queues.Queue[Message],
    stop: multiprocessing.synchronize.Event,
    floor: ctypes.c_longlong,
) -> None:
    global _channel
    _channel = _Channel(messages, stop, floor)
    compile_ahead_enable(False)  # a worker compiles; the caller stands in for it meanwhile


def _task_main(task: Searching, env: bytes, budgets: Budgets, index: int) -> Done:
    assert _channel is not None, "a worker process's tasks run after _worker_init"
    try:
        return run_task(task, pickle.loads(env), budgets, index, _channel)
    except BaseException:
        raise RuntimeError(traceback.format_exc()) from None
    finally:
        _channel.put(Ended(index))  # wakes the master's poll: rounds wait no longer than this


class ProcessPool:
    """``workers`` processes of the ``spawn`` context.

    Args:
        workers: how many tasks run at once.
        env: the env the tasks start from, as it is now (sent with every task).
    """

    def __init__(self, workers: int, env: gym.Env) -> None:
        ctx = mp.get_context("spawn")
        self.workers = int(workers)
        self.messages: multiprocessing.queues.Queue[Message] = ctx.Queue()
        self.event = ctx.Event()
        self.floor: ctypes.c_longlong = ctx.Value("q", 0, lock=False)
        self.env = pickle.dumps(env)  # the env as it is now, whatever the caller does next
        self.pending: dict[int, Future[Done] | None] = {}
        self.broken = False
        self.pool = ProcessPoolExecutor(
            self.workers,
            mp_context=ctx,
            initializer=_worker_init,
            initargs=(self.messages, self.event, self.floor),
        )

    def submit(self, task: Searching, budgets: Budgets, index: int) -> None:
        try:
            self.pending[index] = self.pool.submit(_task_main, task, self.env, budgets, index)
        except BrokenProcessPool:
            self.broken = True
            self.pending[index] = None  # lost at once: reported by the next poll

    def poll(self, timeout: float) -> tuple[list[Message], dict[int, Outcome]]:
        messages: list[Message] = []
        try:
            messages.append(self.messages.get(timeout=timeout))
            while True:
                messages.append(self.messages.get_nowait())
        except queue.Empty:
            pass
        done = [m.task for m in messages if isinstance(m, Ended)]
        messages = [m for m in messages if not isinstance(m, Ended)]
        futures = [f for i in done if (f := self.pending.get(i)) is not None]
        if futures:  # set by the executor's thread a moment after the message
            wait_futures(futures, timeout=1.0)
        finished: dict[int, Outcome] = {}
        for index, future in list(self.pending.items()):
            if future is None or future.done():
                finished[index] = self._result(future)
                del self.pending[index]
        return messages, finished

    def _result(self, future: Future[Done] | None) -> Outcome:
        if future is None:
            return Lost(GUARD_HINT)
        try:
            return future.result()
        except BrokenProcessPool:
            self.broken = True
            return Lost(GUARD_HINT)
        except RuntimeError as exc:
            raise RuntimeError(f"a parallel worker failed:\n{exc}") from None

    def cancel_below(self, index: int) -> None:
        self.floor.value = max(self.floor.value, int(index))

    def stop(self) -> None:
        self.event.set()

    def close(self) -> None:
        self.stop()
        late = any(f is not None and not f.done() for f in self.pending.values())
        if late:  # a worker still compiling: the caller compiles into the same on-disk cache,
            for process in list((self.pool._processes or {}).values()):  # so it is not missed
                process.terminate()
        self.pool.shutdown(wait=False, cancel_futures=True)  # the workers exit on their own


# -- Ray ------------------------------------------------------------------------------------------


def _ray(address: str | None) -> ModuleType:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no phoning home from clusters
    ray = require("ray", "distributed", "backend='ray'")
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True)
    return ray


def _ray_remotes(ray: ModuleType) -> tuple[ActorClass[object], RemoteFunction]:
    """The message board actor and the remote task."""

    @ray.remote(num_cpus=0)
    class Board:
        def __init__(self) -> None:
            self.messages: list[Message] = []
            self.stop = False
            self.floor = 0

        def put(self, message: Message) -> None:
            self.messages.append(message)

        def drain(self) -> list[Message]:
            out, self.messages = self.messages, []
            return out

        def set_stop(self) -> None:
            self.stop = True

        def cancel_below(self, index: int) -> None:
            self.floor = max(self.floor, index)

        def stopped(self, index: int) -> bool:
            return self.stop or index < self.floor

    class Channel:
        def __init__(self, board: ActorHandle) -> None:
            self.board = board

        def put(self, message: Message) -> None:
            self.board.put.remote(message)

        def stopped(self, index: int) -> bool:
            return ray.get(self.board.stopped.remote(index))

        def where(self) -> str:
            return f"{ray.get_runtime_context().get_node_id()[:8]}:{os.getpid()}"

    @ray.remote(max_retries=0)  # a lost task is reported, and submitted again by the search
    def task(
        agent: Searching, env: gym.Env, budgets: Budgets, index: int, board: ActorHandle
    ) -> Done:
        env = copy.deepcopy(env)  # Ray hands tasks read-only arrays; the searches write states
        compile_ahead_enable(False)  # a worker compiles; the caller stands in for it meanwhile
        return run_task(agent, env, budgets, index, Channel(board))

    return cast("ActorClass[object]", Board), task  # ray.remote made Board an actor class


class RayPool:
    """Ray tasks, at most ``workers`` of them submitted at once by the caller.

    A task whose worker or node dies is reported lost (Ray does not retry it: the search submits
    it again and the caller runs it meanwhile). Each node compiles the kernels into its own numba
    cache (``~/.cache/mc-envs/numba-<hash of the sources>``, kept between searches) on its first
    task; ``mc-envs warmup --address ADDRESS`` compiles them on every node ahead (see
    :func:`warm_cluster`). Nodes that come and go (autoscaling) can keep one cache on a shared
    volume: connect first with a runtime_env that names it, and the searches use that
    connection::

        ray.init(address, runtime_env={"env_vars": {"NUMBA_CACHE_DIR": "/shared/mc-envs-numba"}})

    (numba keys cached code on the CPU, so nodes of different kinds can share the directory.)

    Args:
        workers: how many tasks the caller runs at once.
        env: the env the tasks start from (sent once to the object store).
        address: the Ray cluster (None: a local one, started if needed).
    """

    def __init__(self, workers: int, env: gym.Env, address: str | None = None) -> None:
        self.ray = _ray(address)
        self.workers = int(workers)
        board, self._task = _ray_remotes(self.ray)
        from ray.actor import ActorHandle
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = self.ray.get_runtime_context().get_node_id()  # the board dies with the caller only
        handle = board.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)
        ).remote()
        assert isinstance(handle, ActorHandle)  # an actor's (ray's types also allow its class)
        self.board = handle
        self.env = self.ray.put(env)
        self.pending: dict[int, ObjectRef[Done]] = {}
        self._drain: ObjectRef[list[Message]] | None = (
            None  # the board's answer still awaited: read at a later poll
        )

    def submit(self, task: Searching, budgets: Budgets, index: int) -> None:
        self.pending[index] = self._task.remote(task, self.env, budgets, index, self.board)

    def poll(self, timeout: float) -> tuple[list[Message], dict[int, Outcome]]:
        refs = list(self.pending.values())
        if self._drain is None:
            self._drain = self.board.drain.remote()
        if refs:  # returns as soon as a task ends: a round waits no longer than its tasks
            self.ray.wait(refs, num_returns=1, timeout=timeout)
        else:
            time.sleep(timeout)
        # The board's messages if it has answered: a board slow to start (its actor's process,
        # on a busy machine: seconds) must not hold the search past its time limit.
        messages: list[Message] = []
        if self.ray.wait([self._drain], timeout=0)[0]:
            messages, self._drain = self.ray.get(self._drain), None
        finished: dict[int, Outcome] = {}
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0) if refs else ([], [])
        for index, ref in list(self.pending.items()):
            if ref in ready:
                try:
                    finished[index] = self.ray.get(ref)
                except self.ray.exceptions.RayTaskError as exc:  # the search itself failed
                    raise RuntimeError(f"a parallel worker failed:\n{exc}") from None
                except self.ray.exceptions.RayError as exc:  # its worker or node died
                    finished[index] = Lost(f"{type(exc).__name__}: {exc}".splitlines()[0])
                del self.pending[index]
        return messages, finished

    def cancel_below(self, index: int) -> None:
        # Not ray.cancel: it interrupts a worker compiling its kernels, which then starts over.
        self.board.cancel_below.remote(int(index))
        for i in [i for i in self.pending if i < index]:
            del self.pending[i]

    def stop(self) -> None:
        self.board.set_stop.remote()

    def close(self) -> None:
        self.stop()  # a late task (a worker still compiling) returns when it can: not awaited


R = TypeVar("R")


def warm_cluster(address: str | None, job: Callable[..., R], *args: object) -> list[R]:
    """Runs ``job(*args)`` once on every alive node of the Ray cluster at ``address`` (one task
    pinned to each node, at once); returns what each returned. ``mc-envs warmup --address`` uses
    it to compile the kernels into every node's numba cache before a search."""
    ray = _ray(address)
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0)(job)
    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
    refs = [
        remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(
            *args
        )
        for n in nodes
    ]
    return ray.get(refs)


# -- inline ---------------------------------------------------------------------------------------


class InlinePool:
    """No workers: each task runs here when it is submitted.

    A search written for a pool gives, on one worker, the result it gives on many (the tests
    check it), at the cost of a callback that is only called between tasks.
    """

    workers = 1

    def __init__(self, env: gym.Env) -> None:
        self.env = pickle.dumps(env)
        self.messages: list[Message] = []
        self.finished: dict[int, Outcome] = {}
        self.stop_flag = False

    def put(self, message: Message) -> None:
        self.messages.append(message)

    def stopped(self, index: int) -> bool:
        return self.stop_flag

    def where(self) -> str:
        return "caller"

    def submit(self, task: Searching, budgets: Budgets, index: int) -> None:
        self.finished[index] = run_task(task, pickle.loads(self.env), budgets, index, self)

    def poll(self, timeout: float) -> tuple[list[Message], dict[int, Outcome]]:
        messages, self.messages = self.messages, []
        finished, self.finished = self.finished, {}
        return messages, finished

    def cancel_below(self, index: int) -> None:
        pass  # its tasks have all returned by the time anything is cancelled

    def stop(self) -> None:
        self.stop_flag = True

    def close(self) -> None:
        self.stop()


def make_pool(workers: int, backend: str, env: gym.Env, address: str | None = None) -> Pool:
    """A pool of ``workers`` on ``backend``; one worker is the :class:`InlinePool`."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if int(workers) == 1:
        return InlinePool(env)
    if backend == "ray":
        return RayPool(workers, env, address)
    return ProcessPool(workers, env)
