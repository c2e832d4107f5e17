"""Whether a vector env's compiled steps run on one core or on all (:class:`Runner`)."""

from __future__ import annotations

import statistics
import time
from typing import Any

import numba

from mc_envs.kernel import Kernel
from mc_envs.vector.compiled import batch_functions

TUNE_MIN = 64  # fewer sub-envs than this never pay for a parallel launch
RUN, SETTLE = 8, 3  # steps of one kind in a row while timing; the first SETTLE of them not counted
WATCH, WATCH_MAX = 400, 6400  # steps of the kept kind between two trials (doubled when kept)


class Runner:
    """Calls a game's compiled batch functions (:func:`~mc_envs.vector.compiled.batch_functions`)
    serially or in parallel.

    ``threads=1`` is serial, ``threads=k`` parallel on ``k`` threads (at most numba's), and
    ``threads=None`` lets the steps decide: from :data:`TUNE_MIN` sub-envs, a trial runs
    :data:`RUN` serial steps in a row, then as many parallel ones, and the kind whose steps follow
    each other faster is kept (median time from a step's start to the next one's, the first
    :data:`SETTLE` of each run left out: compilation, and the sub-envs' data moving between
    cores; the caller's own work between steps included, which a parallel runtime's waiting
    threads may slow). The choice is tried again after :data:`WATCH` steps (twice as many after
    a trial that kept it, up to :data:`WATCH_MAX`), because what a second core is worth changes
    while a process runs (on a 2-vCPU VM, parallel steps of Connect Four at N = 1,024 were seen
    to go from 0.9x to 2x the serial step's time for seconds on end).
    Both kinds give the same results (each sub-env's step reads and writes only its own rows), so
    the choice changes speed only; :attr:`parallel` tells the current one (None until the first
    trial ends).
    """

    def __init__(self, kernel: Kernel, n: int, threads: int | None) -> None:
        self._cores = cores = numba.config.NUMBA_NUM_THREADS
        can = cores > 1 and threads != 1
        self.threads = min(threads or cores, cores)
        self.parallel: bool | None = False
        self._fns = {False: batch_functions(kernel, parallel=False)}
        self._watch = False
        if can:
            self._fns[True] = batch_functions(kernel, parallel=True)
            self._watch = threads is None and n >= TUNE_MIN
            self.parallel = None if self._watch else threads is not None
        self._cycles: dict[bool, list[float]] = {False: [], True: []}
        self._plan: list[bool] = []  # the kinds of a trial's steps to come, the next one last
        self._trial = False
        self._every = WATCH  # steps of the kept kind between two trials
        self._since = WATCH  # steps of the kept kind since the last trial: the first starts one
        self._last: tuple[bool, float] | None = None

    def __call__(self, name: str, *args: Any) -> None:
        """Runs the batch function ``name`` (``step``, ``reset``, ``refresh``) with ``args``."""
        mode = self._next() if name == "step" and self._watch else bool(self.parallel)
        self._run(mode, name, args)

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

    def _run(self, parallel: bool, name: str, args: tuple) -> None:
        if not parallel or self.threads == self._cores:
            self._fns[parallel][name](*args)
            return
        numba.set_num_threads(self.threads)  # numba's setting is per thread: put it back after
        try:
            self._fns[parallel][name](*args)
        finally:
            numba.set_num_threads(self._cores)
