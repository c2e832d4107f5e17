"""Whether a vector env's compiled steps run on one core or on all (:class:`Runner`), and the
compilation of the parallel entry point in the background (:class:`Compiling`)."""

from __future__ import annotations

import functools
import os
import pickle
import statistics
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numba
import numpy as np

from mc_envs._numba import is_cached
from mc_envs.kernel import Kernel
from mc_envs.vector.cold import Split
from mc_envs.vector.compiled import (
    NO_OPPONENT,
    STEP,
    Buffers,
    Config,
    Outputs,
    parallel_entry,
    python_entry,
    serial_entry,
)

if TYPE_CHECKING:
    from numba.core.registry import CPUDispatcher

TUNE_MIN = 64  # fewer sub-envs than this never pay for a parallel launch
RUN, SETTLE = 8, 3  # steps of one kind in a row while timing; the first SETTLE of them not counted
WATCH, WATCH_MAX = 400, 6400  # steps of the kept kind between two trials (doubled when kept)


# A child that compiles an entry point into the on-disk cache: (kernel, opponent, signature) on stdin.
_CHILD = """
import pickle, sys
sys.path.insert(0, sys.argv[1])
from mc_envs.vector.compiled import parallel_entry
kernel, opponent, signature = pickle.loads(sys.stdin.buffer.read())
parallel_entry(kernel, opponent).compile(signature)
"""
_ROOT = str(Path(__file__).resolve().parents[2])  # where the child imports mc_envs from


class Compiling:
    """The parallel entry point of a kernel compiled for the argument types of one call, while
    the caller goes on stepping without it.

    A child process compiles it into numba's on-disk cache, then a thread of this process loads
    it from there (a fraction of a second, on that thread). A thread that compiled it here would
    hold the interpreter's lock through numba's typing passes, and the caller's steps, which need
    that lock between their compiled calls, waited for it (steps of 300 ms on a busy 2-core
    machine). Where the child cannot help (no writable cache, an error), the thread compiles it.
    A large vector env's first entry point, on a cold cache, is loaded the same way once the
    child of its :class:`~mc_envs.vector.cold.Split` has compiled it (:meth:`after`).
    Not a daemon thread: a process that ends meanwhile waits for it. The thread holds numba's
    compiler lock while it loads or compiles: a fork then would leave the child a lock that no
    thread releases, so a fork waits for the thread (:func:`os.register_at_fork`).
    """

    _running: set[Compiling] = set()
    _hooked = False
    _jobs: dict[tuple, Compiling] = {}  # one per entry point and signature in a process
    _one_child = threading.Lock()  # one compiling child at a time

    @classmethod
    def start(cls, entry: CPUDispatcher, args: tuple, kernel: Kernel, opponent: int) -> Compiling:
        """The compilation of ``entry`` for the types of ``args``: started now, or the one this
        process already has (every vector env of a game shares it)."""
        signature = tuple(numba.typeof(a) for a in args)
        key = (kernel.name, opponent, signature)
        job = cls._jobs.get(key)
        if job is None:
            recipe = pickle.dumps((kernel, opponent, signature))
            child = functools.partial(_compile_in_child, recipe)
            job = cls._jobs[key] = cls(entry, signature, child)
        return job

    @classmethod
    def after(cls, child: subprocess.Popen, entry: CPUDispatcher, signature: tuple) -> Compiling:
        """``entry`` loaded for ``signature`` once ``child``, which compiles it into the cache,
        has ended (compiled here if it failed, or still runs after :attr:`Split.WAIT
        <mc_envs.vector.cold.Split.WAIT>` seconds)."""
        return cls(entry, signature, functools.partial(_ended_well, child, Split.WAIT))

    def __init__(self, entry: CPUDispatcher, signature: tuple, child: Callable[[], bool]) -> None:
        """Starts the thread: ``child()`` makes a child compile the entry point, or waits for
        the one that does, and says whether it succeeded."""
        self.error: BaseException | None = None
        self.seconds: float | None = None  # from the start to the entry point's being ready
        self.in_child = False  # whether the child compiled it (else this process did)
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._compile, args=(entry, signature, child), name="mc-envs-vector-compile"
        )
        if not Compiling._hooked:
            os.register_at_fork(before=Compiling.wait_all)
            Compiling._hooked = True
        Compiling._running.add(self)
        self._thread.start()

    def _compile(self, entry: CPUDispatcher, signature: tuple, child: Callable[[], bool]) -> None:
        start = time.perf_counter()
        try:
            # compiled here already (threads=k), or in the cache (then only loaded): no child
            if signature not in entry.overloads and not is_cached(entry):
                self.in_child = child()
            entry.compile(signature)  # loaded from the cache when the child compiled it
        except BaseException as e:  # noqa: BLE001 - reported by the caller's next call
            self.error = e
        finally:
            self.seconds = time.perf_counter() - start
            Compiling._running.discard(self)
            self._done.set()

    @property
    def done(self) -> bool:
        """Whether the entry point is ready (or failed: :attr:`error`)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Waits until it is done (at most ``timeout`` seconds); whether it is."""
        return self._done.wait(timeout)

    @classmethod
    def wait_all(cls) -> None:
        """Waits for every compilation still running."""
        for job in list(cls._running):
            job.wait()


def _compile_in_child(recipe: bytes) -> bool:
    """Runs the compiling child (:data:`_CHILD`) on ``recipe``, one at a time in a process;
    whether it succeeded."""
    try:
        with Compiling._one_child:
            child = subprocess.run(
                [sys.executable, "-c", _CHILD, _ROOT],
                input=recipe,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
    except OSError:
        return False
    return child.returncode == 0


def _ended_well(child: subprocess.Popen, timeout: float) -> bool:
    """Waits for ``child`` (at most ``timeout`` seconds); whether it ended without an error."""
    try:
        return child.wait(timeout) == 0
    except subprocess.TimeoutExpired:
        return False


class Runner:
    """Calls a game's compiled batch entry points
    (:func:`~mc_envs.vector.compiled.serial_entry`, :func:`~mc_envs.vector.compiled.parallel_entry`)
    serially or in parallel.

    ``opponent`` is the entry points' (:func:`~mc_envs.vector.compiled.serial_entry`).
    ``threads=1`` is serial, ``threads=k`` parallel on ``k`` threads (at most numba's), and
    ``threads=None`` lets the steps decide. Then, from :data:`TUNE_MIN` sub-envs, the steps run
    serially while the parallel entry point compiles in the background (:class:`Compiling`,
    started when the first call returns: nothing compiles on the caller's thread after that),
    and once it is ready a trial runs :data:`RUN` serial steps in a row, then as many parallel
    ones, and the kind whose steps follow each other faster is kept (median time from a step's
    start to the next one's, the first :data:`SETTLE` of each run left out: the sub-envs' data
    moving between cores; the caller's own work between steps included, which a parallel
    runtime's waiting threads may slow). The choice is tried again after :data:`WATCH` steps
    (twice as many after a trial that kept it, up to :data:`WATCH_MAX`), because what a second
    core is worth changes while a process runs (on a 2-vCPU VM, parallel steps of Connect Four at
    N = 1,024 were seen to go from 0.9x to 2x the serial step's time for seconds on end).
    Both kinds give the same results (each sub-env's step reads and writes only its own rows), so
    the choice changes speed only; :attr:`parallel` tells the current one (None until the first
    trial ends).
    """

    def __init__(
        self, kernel: Kernel, n: int, threads: int | None, opponent: int = NO_OPPONENT
    ) -> None:
        self._cores = cores = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
        self._n = n
        can = cores > 1 and threads != 1
        self.threads = min(threads or cores, cores)
        self.parallel: bool | None = False
        self._kernel, self._opponent = kernel, opponent
        self._serial = serial_entry(kernel, opponent)
        self._parallel = parallel_entry(kernel, opponent) if can else None
        self._watch = can and threads is None and n >= TUNE_MIN
        if can:
            self.parallel = None if self._watch else threads is not None
        self._compiling: Compiling | None = None
        self._trials = False  # the parallel entry point is ready: the steps choose their kind
        self._cycles: dict[bool, list[float]] = {False: [], True: []}
        self._plan: list[bool] = []  # the kinds of a trial's steps to come, the next one last
        self._trial = False
        self._every = WATCH  # steps of the kept kind between two trials
        self._since = WATCH  # steps of the kept kind since the last trial: the first starts one
        self._last: tuple[bool, float] | None = None
        self._split: Split | None = None
        self._loading: Compiling | None = None  # see __call__
        self._python = python_entry(kernel, opponent)

    def prepare(
        self,
        op: int,
        actions: np.ndarray,
        where: np.ndarray,
        buffers: Buffers,
        config: Config,
        out: Outputs,
    ) -> None:
        """Called at construction with the arguments of a call: if the entry point the first call
        takes is not compiled for their types, starts compiling it on two cores (:class:`Split`;
        the first call finishes it)."""
        b, c, o = tuple(buffers), tuple(config), tuple(out)
        args: tuple[object, ...]
        if self.parallel:
            entry, args = self._parallel_entry(), (op, actions, where, b, c, o)
        else:
            entry, args = self._serial, (op, 0, self._n, actions, where, b, c, o)
        recipe = (self._opponent, entry is self._parallel)
        self._split = Split.start(self._kernel, entry, args, buffers, recipe)

    def close(self) -> None:
        """Lets go of a split compilation never finished (the env was not stepped)."""
        if self._split is not None:
            self._split.close()
            self._split = None

    def __call__(
        self,
        op: int,
        actions: np.ndarray,
        where: np.ndarray,
        buffers: Buffers,
        config: Config,
        out: Outputs,
    ) -> None:
        """Does ``op`` (:data:`~mc_envs.vector.compiled.STEP`, ``RESET``, ``REFRESH``) with the
        entry points' arguments."""
        # A step's Python work counts (~50 us a step at N = 1,024): no call or test more than
        # needed here. The records go as plain tuples (_range's note).
        b, c, o = tuple(buffers), tuple(config), tuple(out)
        if self._split is not None:  # a cold first call: the kernels compiled on two cores
            split, self._split = self._split, None
            split.finish()
            if split.entry is not None:  # (start gives every split its entry point)
                self._loading = Compiling.after(split.child, split.entry, split.signature)
        if self._loading is not None:  # the calls run as Python until it is loaded
            if not self._loading.done:
                self._python(op, 0, self._n, actions, where, b, c, o)
                return
            self._loading = None  # (an error: the call below compiles it here)
        if op == STEP and (self._trials or self._watch and self._ready()):
            parallel = self._next()
        else:
            parallel = bool(self.parallel)
        if not parallel:
            self._serial(op, 0, self._n, actions, where, b, c, o)
        elif self.threads == self._cores:
            self._parallel(op, actions, where, b, c, o)  # type: ignore[misc]  # set: parallel
        else:
            self._run_on_threads((op, actions, where, b, c, o))
        if self._watch and self._compiling is None:
            args = (op, actions, where, b, c, o)
            entry = self._parallel_entry()
            self._compiling = Compiling.start(entry, args, self._kernel, self._opponent)

    def entries(self) -> list[CPUDispatcher]:
        """The entry points the steps call (before the trials: the serial one, or the parallel
        one with ``threads``)."""
        return [self._parallel_entry() if self.parallel else self._serial]

    def _parallel_entry(self) -> CPUDispatcher:
        # set wherever a step may run in parallel: ``parallel`` and ``_watch`` imply two cores
        return cast("CPUDispatcher", self._parallel)

    def _ready(self) -> bool:
        """Whether the parallel entry point is compiled: the trials may begin."""
        job = self._compiling
        if job is None or not job.done:
            return False
        if job.error is not None:  # stays serial: the steps are right either way
            warnings.warn(f"vector env: no parallel steps ({job.error!r})", stacklevel=4)
            self._watch, self.parallel = False, False
            return False
        self._trials = True
        return True

    def _next(self) -> bool:
        """The kind of this step, and the trial's bookkeeping."""
        if not self._trial:
            if self._since < self._every:
                self._since += 1
                return bool(self.parallel)
            self._trial, self._last = True, None
            self._plan = [True] * RUN + [False] * RUN
            self._cycles = {False: [], True: []}
        now = time.perf_counter()
        if self._last is not None:  # a cycle: this step's start from the last one's
            last_mode, last_start = self._last
            self._cycles[last_mode].append(now - last_start)
        if not self._plan:  # the trial's last cycle is in
            self._choose()
            return bool(self.parallel)
        mode = self._plan.pop()
        self._last = (mode, now)
        return mode

    def _choose(self) -> None:
        serial, parallel = (statistics.median(self._cycles[m][SETTLE:]) for m in (False, True))
        kept = parallel < serial
        self._every = min(2 * self._every, WATCH_MAX) if kept == self.parallel else WATCH
        self.parallel = kept
        self._trial = False
        self._since = 1

    def _run_on_threads(self, args: tuple) -> None:
        assert self._parallel is not None
        numba.set_num_threads(self.threads)  # numba's setting is per thread: put it back after
        try:
            self._parallel(*args)
        finally:
            numba.set_num_threads(self._cores)

    @property
    def compiling(self) -> Compiling | None:
        """The parallel entry point's background compilation (None: none was started)."""
        return self._compiling

    @property
    def watching(self) -> bool:
        """Whether the steps choose their kind (``threads=None``, from :data:`TUNE_MIN`)."""
        return self._watch

    def wait(self, timeout: float | None = None) -> bool:
        """Waits for the parallel entry point's background compilation, if one runs; whether
        none runs any more."""
        return self._compiling is None or self._compiling.wait(timeout)
