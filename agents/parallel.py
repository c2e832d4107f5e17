"""Parallel and distributed search: ``workers=N`` on any agent, over local processes or Ray.

Root parallelism: ``N`` independent searches of the same agent from the same state, each with a seed
derived from the agent's seed (:func:`worker_seed`), the best result kept. Playout and iteration
budgets are split between the workers (so a budget means the same total work), the time limit
applies to each. Workers report every improvement and their playout counts as they go, so the
master shows live progress, honours its callback and Ctrl-C, and returns the best found so far.

Backends: ``"local"`` runs the workers as processes of the ``spawn`` context (numba-compiled
searches load from the on-disk cache in the children); ``"ray"`` runs them as Ray tasks, on the
cluster at ``address`` or on the local Ray (started if none is running). A worker's result depends
only on its seed and budget, so both backends give the same result for the same seeds.

Any agent class gains the ``workers``/``backend``/``address`` keywords with :func:`accepts_workers`;
with ``workers=1`` (the default) its search is unchanged.

:class:`TaskPool` runs many short searches on a fixed set of workers (processes or Ray tasks), for
searches that keep their top level in the caller: distributed NRPA
(:func:`agents.nrpa_distributed.distributed_search`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import multiprocessing as mp
import pickle
import queue
import time
import traceback
from typing import Any

from agents.base import NEG_INF, Progress, SearchResult
from mc_envs.rng import rng_state

BACKENDS = ("local", "ray")
REPORT_EVERY = 0.5
CUT = ("playouts", "max_score", "stopped", "callback", "time")  # a task that did not finish


def worker_seed(seed: int, index: int) -> int:
    """The seed of worker ``index`` of an agent seeded with ``seed`` (unrelated streams)."""
    return int(rng_state((int(seed) << 16) ^ (index + 1))[0]) & 0x7FFFFFFFFFFFFFFF


def check_parallel(workers: int, backend: str) -> None:
    """Validates the parallel keywords.

    Raises:
        ValueError: ``workers`` below 1 or an unknown backend.
    """
    if int(workers) < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def accepts_workers(cls: type) -> type:
    """Gives an agent class the ``workers``, ``backend`` and ``address`` constructor keywords.

    With ``workers > 1`` its ``search`` runs :func:`parallel_search` (unless the agent's
    ``parallel`` attribute names another scheme, which its own ``search`` runs); otherwise it is
    unchanged.
    Applying it twice is harmless.
    """
    if cls.__dict__.get("_accepts_workers", False):
        return cls
    init, search = cls.__init__, cls.search

    @functools.wraps(init)
    def __init__(self, *args, workers: int = 1, backend: str = "local", address=None, **kwargs):
        init(self, *args, **kwargs)
        check_parallel(workers, backend)
        self.workers, self.backend, self.address = int(workers), backend, address

    @functools.wraps(search)
    def parallel_or_not(self, env, **kwargs):
        if getattr(self, "workers", 1) > 1 and getattr(self, "parallel", "root") == "root":
            return parallel_search(self, env, **kwargs)
        return search(self, env, **kwargs)

    cls.__init__ = __init__
    cls.search = parallel_or_not
    cls._accepts_workers = True
    return cls


def _split(total: int | None, parts: int, index: int) -> int | None:
    if total is None:
        return None
    return total // parts + (1 if index < total % parts else 0)


def worker_agents(agent: Any) -> list[Any]:
    """Copies of ``agent`` with ``workers=1`` and the derived seeds; an agent whose ``policy`` is a
    tuple (a portfolio) gives worker ``i`` the policy ``i`` modulo its length."""
    clones = []
    portfolio = getattr(agent, "policy", None)
    for i in range(agent.workers):
        clone = copy.copy(agent)
        clone.workers = 1
        clone.seed = worker_seed(agent.seed, i)
        if isinstance(portfolio, tuple):
            clone.policy = portfolio[i % len(portfolio)]
        clones.append(clone)
    return clones


def _result_dict(result: SearchResult) -> dict:
    return {
        "score": float(result.score),
        "actions": [int(a) for a in result.actions],
        "playouts": int(result.playouts),
        "seconds": float(result.seconds),
        "iterations": int(result.iterations),
        "stopped": result.stopped,
    }


def run_worker(agent: Any, env: Any, budgets: dict, index: int, channel: Any) -> dict:
    """Runs one worker's search, reporting progress to ``channel``; returns its result as a dict."""
    last = [0.0]

    def report(progress: Progress) -> bool:
        now = time.perf_counter()
        if progress.improved:
            channel.put(("best", index, progress.best_score, progress.best_actions))
        if progress.improved or now - last[0] >= REPORT_EVERY:
            last[0] = now
            channel.put(("count", index, progress.playouts))
        return channel.stopped()

    try:
        if channel.stopped():  # the search ended while this task waited for a worker
            result = SearchResult(
                score=NEG_INF, actions=[], playouts=0, seconds=0.0, stopped="stopped"
            )
        else:
            result = agent.search(env, callback=report, **budgets)
        out = _result_dict(result)
        channel.put(("done", index, out))
        return out
    except BaseException:  # reported to the master, which re-raises
        channel.put(("error", index, traceback.format_exc()))
        raise


# -- local processes ------------------------------------------------------------------------------


class _LocalChannel:
    """The worker's side of a local run: a queue of messages and a stop event."""

    def __init__(self, messages: Any, stop: Any) -> None:
        self.messages, self.stop = messages, stop

    def put(self, message: tuple) -> None:
        self.messages.put(message)

    def stopped(self) -> bool:
        return self.stop.is_set()


def _local_main(agent, env, budgets, index, messages, stop) -> None:
    with contextlib.suppress(BaseException):  # failures are reported to the master
        run_worker(agent, env, budgets, index, _LocalChannel(messages, stop))


class _LocalPool:
    def __init__(self, agents: list, env: Any, budgets: list[dict]) -> None:
        ctx = mp.get_context("spawn")
        self.messages = ctx.Queue()
        self.event = ctx.Event()
        self.procs = [
            ctx.Process(
                target=_local_main,
                args=(a, env, b, i, self.messages, self.event),
                name=f"mc-envs-worker-{i}",
                daemon=True,
            )
            for i, (a, b) in enumerate(zip(agents, budgets))
        ]
        for p in self.procs:
            p.start()

    def drain(self, timeout: float) -> list[tuple]:
        out = []
        try:
            out.append(self.messages.get(timeout=timeout))
            while True:
                out.append(self.messages.get_nowait())
        except queue.Empty:
            pass
        return out

    def stop(self) -> None:
        self.event.set()

    def alive(self) -> list[bool]:
        return [p.is_alive() for p in self.procs]

    def close(self) -> None:
        self.event.set()
        for p in self.procs:
            p.join(5)
            if p.is_alive():
                p.terminate()
                p.join(1)


# -- Ray ------------------------------------------------------------------------------------------


def _ray():
    import os

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no phoning home from clusters
    try:
        import ray
    except ImportError:
        raise ImportError("backend='ray' needs Ray: pip install 'mc-envs[distributed]'") from None
    return ray


def _ray_remotes() -> tuple[Any, Any, Any]:
    """The Ray actor, worker-side channel and remote task shared by the Ray backends."""
    ray = _ray()

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
        return run_worker(agent, env, budgets, index, Channel(board))

    return Board, Channel, task


def _ray_init(address: str | None) -> Any:
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True)
    return ray


class _RayPool:
    def __init__(self, agents: list, env: Any, budgets: list[dict], address: str | None) -> None:
        ray = self.ray = _ray_init(address)
        Board, _, task = _ray_remotes()
        self.board = Board.remote()
        env_ref = ray.put(env)
        self.tasks = [
            task.remote(a, env_ref, b, i, self.board)
            for i, (a, b) in enumerate(zip(agents, budgets))
        ]

    def drain(self, timeout: float) -> list[tuple]:
        time.sleep(timeout)
        out = self.ray.get(self.board.drain.remote())
        ready, _ = self.ray.wait(self.tasks, num_returns=len(self.tasks), timeout=0)
        for ref in ready:  # a task that died without reporting
            try:
                self.ray.get(ref)
            except Exception as exc:  # noqa: BLE001
                out.append(("error", self.tasks.index(ref), repr(exc)))
        return out

    def stop(self) -> None:
        self.board.set_stop.remote()

    def alive(self) -> list[bool]:
        ready, _ = self.ray.wait(self.tasks, num_returns=len(self.tasks), timeout=0)
        return [t not in ready for t in self.tasks]

    def close(self) -> None:
        self.stop()
        self.ray.wait(self.tasks, num_returns=len(self.tasks), timeout=10)


# -- task pools: many short searches on a fixed set of workers (distributed NRPA) -----------------

_channel: Any = None  # the worker process's channel to the master (local task pools)


_barrier: Any = None  # met by the warm-up tasks, so that every worker process runs one


def _task_init(messages: Any, stop: Any, barrier: Any) -> None:
    global _channel, _barrier
    _channel = _LocalChannel(messages, stop)
    _barrier = barrier


def _task_main(agent: Any, env: bytes, budgets: dict, index: int) -> dict:
    return run_worker(agent, pickle.loads(env), budgets, index, _channel)


def _warm_main(task: Any, env: bytes) -> None:
    task.search(pickle.loads(env))
    _barrier.wait(timeout=600)


class TaskPool:
    """``workers`` long-lived workers running searches submitted one by one.

    Each search is an agent-like object (``search(env, callback=..., **budgets)``) run by
    :func:`run_worker`: it reports improvements and playout counts, and stops when the pool is
    stopped. Local processes (``spawn``) or Ray tasks.

    Args:
        workers: how many searches run at once.
        backend: ``"local"`` or ``"ray"``.
        env: the env the searches start from, as it is when the pool is made (sent once to Ray,
            with every task to processes).
        address: the Ray cluster (``backend="ray"``).
    """

    def __init__(self, workers: int, backend: str, env: Any, address: str | None = None) -> None:
        check_parallel(workers, backend)
        self.backend = backend
        self.pending: dict[int, Any] = {}
        if backend == "ray":
            self.ray = _ray_init(address)
            board, _, self._task = _ray_remotes()
            self.board = board.remote()
            self.env = self.ray.put(env)
        else:
            from concurrent.futures import ProcessPoolExecutor

            ctx = mp.get_context("spawn")
            self.messages = ctx.Queue()
            self.event = ctx.Event()
            self.env = pickle.dumps(env)  # the env as it is now, whatever the caller does next
            self.pool = ProcessPoolExecutor(
                workers,
                mp_context=ctx,
                initializer=_task_init,
                initargs=(self.messages, self.event, ctx.Barrier(workers)),
            )
        self.workers = int(workers)

    def warm_up(self, task: Any) -> None:
        """Runs ``task.search(env)`` once on every worker (to load compiled code before a clock
        starts) and waits for all of them."""
        if self.backend == "ray":
            self.ray.get(
                [
                    self._task.remote(task, self.env, {}, -1 - j, self.board)
                    for j in range(self.workers)
                ]
            )
            self.ray.get(self.board.drain.remote())
        else:
            for future in [
                self.pool.submit(_warm_main, task, self.env) for _ in range(self.workers)
            ]:
                future.result()

    def submit(self, agent: Any, budgets: dict, index: int) -> None:
        """Starts ``agent.search`` as task ``index`` (its messages and result carry the index)."""
        if self.backend == "ray":
            self.pending[index] = self._task.remote(agent, self.env, budgets, index, self.board)
        else:
            self.pending[index] = self.pool.submit(_task_main, agent, self.env, budgets, index)

    def poll(self, timeout: float) -> tuple[list[tuple], dict[int, dict]]:
        """Waits up to ``timeout`` seconds; returns (progress messages, finished tasks' results).

        Raises:
            RuntimeError: a task failed (with the worker's traceback).
        """
        finished: dict[int, dict] = {}
        if self.backend == "ray":
            time.sleep(timeout)
            messages = self.ray.get(self.board.drain.remote())
            refs = list(self.pending.values())
            ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0) if refs else ([], [])
            for index, ref in list(self.pending.items()):
                if ref in ready:
                    try:
                        finished[index] = self.ray.get(ref)
                    except Exception as exc:  # noqa: BLE001
                        raise RuntimeError(f"a distributed task failed:\n{exc}") from None
                    del self.pending[index]
        else:
            messages = []
            try:
                messages.append(self.messages.get(timeout=timeout))
                while True:
                    messages.append(self.messages.get_nowait())
            except queue.Empty:
                pass
            for index, future in list(self.pending.items()):
                if future.done():
                    exc = future.exception()
                    if exc is not None:
                        raise RuntimeError(f"a distributed task failed:\n{exc!r}")
                    finished[index] = future.result()
                    del self.pending[index]
        messages = [m for m in messages if m[0] in ("best", "count")]
        return messages, finished

    def stop(self) -> None:
        """Asks every running search to return its best so far."""
        if self.backend == "ray":
            self.board.set_stop.remote()
        else:
            self.event.set()

    def close(self) -> None:
        """Stops the searches and releases the workers."""
        self.stop()
        if self.backend == "ray":
            refs = list(self.pending.values())
            if refs:
                self.ray.wait(refs, num_returns=len(refs), timeout=10)
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)


class InlinePool:
    """:class:`TaskPool`'s interface with no workers: each task runs here when it is submitted.

    A search written for a pool gives, on one worker, the result it gives on many (the tests
    check it), at the cost of a callback that is only called between tasks.
    """

    def __init__(self, env: Any) -> None:
        self.env = pickle.dumps(env)
        self.pending: dict[int, Any] = {}
        self.messages: list[tuple] = []
        self.finished: dict[int, dict] = {}
        self.stop_flag = False

    def put(self, message: tuple) -> None:
        self.messages.append(message)

    def stopped(self) -> bool:
        return self.stop_flag

    def warm_up(self, task: Any) -> None:
        """Runs ``task.search(env)`` here (see :meth:`TaskPool.warm_up`)."""
        task.search(pickle.loads(self.env))

    def submit(self, agent: Any, budgets: dict, index: int) -> None:
        """Runs ``agent.search`` as task ``index`` now."""
        self.finished[index] = run_worker(agent, pickle.loads(self.env), budgets, index, self)

    def poll(self, timeout: float) -> tuple[list[tuple], dict[int, dict]]:
        messages, self.messages = self.messages, []
        finished, self.finished = self.finished, {}
        return [m for m in messages if m[0] in ("best", "count")], finished

    def stop(self) -> None:
        self.stop_flag = True

    def close(self) -> None:
        self.stop()


def task_pool(workers: int, backend: str, env: Any, address: str | None = None) -> Any:
    """A :class:`TaskPool` of ``workers``, or an :class:`InlinePool` for one."""
    if int(workers) == 1:
        return InlinePool(env)
    return TaskPool(workers, backend, env, address)


class Rounds:
    """Runs a master's batches of tasks on a pool and follows them: live progress for the
    callback, the time limit, a Ctrl-C, and the playouts of the finished tasks.

    ``why`` becomes ``"time"`` or ``"callback"`` when the search must end (the pool is then
    stopped, so the running tasks return their best so far).
    """

    def __init__(self, pool: Any, time_limit: float | None, callback: Any) -> None:
        self.pool = pool
        self.time_limit = time_limit
        self.callback = callback
        self.start = self.last_report = time.perf_counter()
        self.why = ""
        self.total = 0
        self.tasks = 0
        self.batches = 0
        self.shown_score, self.shown_actions = NEG_INF, []
        self.improved = False

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

    def run(self, batch: list[tuple[Any, dict]]) -> list[dict]:
        """Runs the (search, budgets) pairs of ``batch``; their results, in order."""
        first = self.tasks
        for j, (task, budgets) in enumerate(batch):
            if self.time_limit is not None:
                left = self.remaining()
                if left == 0.0 and not self.why:
                    self.why = "time"
                    self.pool.stop()  # the tasks not yet started return at once
                budgets = {**budgets, "time_limit": left}
            self.pool.submit(task, budgets, first + j)
        self.tasks += len(batch)
        self.batches += 1
        results: dict[int, dict] = {}
        counts: dict[int, int] = {}
        while len(results) < len(batch):
            messages, finished = self.pool.poll(0.02)
            results.update(finished)
            for message in messages:
                if message[0] == "best":
                    self.show(message[2], message[3])
                else:
                    counts[message[1]] = max(counts.get(message[1], 0), message[2])
            now = time.perf_counter()
            if self.remaining() == 0.0 and not self.why:
                self.why = "time"
                self.pool.stop()
            due = self.improved or now - self.last_report >= REPORT_EVERY
            if self.callback is not None and not self.why and self.shown_score > NEG_INF and due:
                self.last_report = now
                done = self.total + sum(counts.values())
                progress = Progress(
                    now - self.start, self.shown_score, self.shown_actions, done, self.improved
                )
                self.improved = False
                if self.callback(progress):
                    self.why = "callback"
                    self.pool.stop()
        ordered = [results[first + j] for j in range(len(batch))]
        self.total += sum(r["playouts"] for r in ordered)
        return ordered


# -- the master -----------------------------------------------------------------------------------


def parallel_search(
    agent: Any,
    env: Any,
    *,
    time_limit: float | None = None,
    playouts: int | None = None,
    iterations: int | None = None,
    callback: Any = None,
    **kwargs: Any,
) -> SearchResult:
    """Root-parallel search: ``agent.workers`` independent seeded searches, the best kept.

    Args:
        agent: an agent with ``workers``, ``backend``, ``address`` and ``seed`` attributes.
        env: the env to search from (its state is sent to the workers; it is left unchanged).
        time_limit: seconds, for each worker.
        playouts, iterations: total budgets, split evenly between the workers.
        callback: receives :class:`~agents.base.Progress` about the best of all workers.

    Returns:
        The best worker's score and actions; playouts and iterations summed over workers;
        ``extra["workers"]`` holds each worker's result.
    """
    if kwargs.get("checkpoint") is not None:
        raise ValueError("a checkpoint holds one search: use workers=1 with checkpoint=")
    n = int(agent.workers)
    base = env.unwrapped
    agents = worker_agents(agent)
    budgets = []
    for i in range(n):
        budget: dict[str, Any] = {"time_limit": time_limit}
        if playouts is not None:
            budget["playouts"] = max(_split(playouts, n, i), 1)
        if iterations is not None:
            budget["iterations"] = max(_split(iterations, n, i), 1)
        budgets.append(budget)
    start = time.perf_counter()
    if agent.backend == "ray":
        pool: Any = _RayPool(agents, base, budgets, getattr(agent, "address", None))
    else:
        pool = _LocalPool(agents, base, budgets)
    best_score, best_actions = NEG_INF, []
    counts = [0] * n
    results: dict[int, dict] = {}
    errors: list[str] = []
    why = ""
    last_report, improved = start, False
    try:
        while len(results) < n and not errors:
            for message in pool.drain(0.05):
                kind, i = message[0], message[1]
                if kind == "best" and message[2] > best_score:
                    best_score, best_actions, improved = message[2], list(message[3]), True
                elif kind == "count":
                    counts[i] = max(counts[i], message[2])
                elif kind == "done":
                    results[i] = message[2]
                    counts[i] = message[2]["playouts"]
                    if message[2]["stopped"] == "max_score":
                        pool.stop()  # the others cannot do better
                    if message[2]["score"] > best_score:
                        best_score, best_actions = message[2]["score"], message[2]["actions"]
                        improved = True
                elif kind == "error":
                    errors.append(message[2])
            if not errors and len(results) < n and not any(pool.alive()):
                time.sleep(0.2)  # the last messages may still be in flight
                if len(results) < n and not pool.drain(0.05):
                    errors.append("a worker ended without a result")
            now = time.perf_counter()
            due = improved or now - last_report >= REPORT_EVERY
            if callback is not None and not why and best_score > NEG_INF and due:
                last_report = now
                progress = Progress(now - start, best_score, best_actions, sum(counts), improved)
                improved = False
                if callback(progress):
                    why = "callback"
                    pool.stop()
    except KeyboardInterrupt:
        why = "interrupt"
        pool.stop()
        deadline = time.perf_counter() + 10
        while len(results) < n and time.perf_counter() < deadline:
            for message in pool.drain(0.1):
                if message[0] == "done":
                    results[message[1]] = message[2]
    finally:
        pool.close()
    if errors:
        raise RuntimeError(f"a parallel worker failed:\n{errors[0]}")
    seconds = time.perf_counter() - start
    ordered = [results[i] for i in sorted(results)]
    if ordered:
        top = max(ordered, key=lambda r: r["score"])  # ties: the lowest worker index
        if top["score"] >= best_score or why != "interrupt":
            best_score, best_actions = top["score"], top["actions"]
    stopped = why or (ordered[0]["stopped"] if ordered else "interrupt")
    if any(r["stopped"] == "max_score" for r in ordered) and not why:
        stopped = "max_score"
    return SearchResult(
        score=float(best_score) if best_score > NEG_INF else float("-inf"),
        actions=list(best_actions),
        playouts=sum(r["playouts"] for r in ordered) if len(ordered) == n else sum(counts),
        seconds=seconds,
        iterations=sum(r["iterations"] for r in ordered),
        stopped=stopped,
        extra={"workers": [results.get(i) for i in range(n)], "backend": agent.backend},
    )
