"""Whether a vector env's compiled steps run on one core or on all (:class:`Runner`)."""

from __future__ import annotations

import statistics
import time
from typing import Any

import numba

from mc_envs.kernel import Kernel
from mc_envs.vector.compiled import batch_functions

TUNE_MIN = 64  # fewer sub-envs than this never pay for a parallel launch
WARM, TRIALS = 2, 6  # steps of each kind discarded (compilation), then timed, before choosing


class Runner:
    """Calls a game's compiled batch functions (:func:`~mc_envs.vector.compiled.batch_functions`)
    serially or in parallel.

    ``threads=1`` is serial, ``threads=k`` parallel on ``k`` threads (at most numba's), and
    ``threads=None`` lets the steps decide: from :data:`TUNE_MIN` sub-envs, the first steps
    alternate between the serial and the parallel function, and the one whose steps follow each
    other faster (median time from a step's start to the next one's: the caller's own work between
    steps included, which a parallel runtime's waiting threads may slow) is kept.
    Both give the same results (each sub-env's step reads and writes only its own rows), so the
    choice changes speed only; :attr:`parallel` tells it (None while still timing).
    """

    def __init__(self, kernel: Kernel, n: int, threads: int | None) -> None:
        self._cores = cores = numba.config.NUMBA_NUM_THREADS
        can = cores > 1 and threads != 1
        self.threads = min(threads or cores, cores)
        self.parallel: bool | None = False
        self._fns = {False: batch_functions(kernel, parallel=False)}
        if can:
            self._fns[True] = batch_functions(kernel, parallel=True)
            self.parallel = True if threads is not None else (None if n >= TUNE_MIN else False)
        self._times: dict[bool, list[float]] = {False: [], True: []}
        self._last: tuple[bool, float] | None = None

    def __call__(self, name: str, *args: Any) -> None:
        """Runs the batch function ``name`` (``step``, ``reset``, ``refresh``) with ``args``."""
        mode = self.parallel
        if mode is None and name != "step":
            mode = False
        if mode is not None:
            self._run(mode, name, args)
            return
        now = time.perf_counter()
        if self._last is not None:  # a cycle: this step's start from the last one's
            last_mode, last_start = self._last
            self._times[last_mode].append(now - last_start)
        mode = len(self._times[True]) < len(self._times[False])
        self._last = (mode, now)
        self._run(mode, name, args)
        if min(len(t) for t in self._times.values()) >= WARM + TRIALS:
            serial, parallel = (statistics.median(self._times[m][WARM:]) for m in (False, True))
            self.parallel = parallel < serial

    def _run(self, parallel: bool, name: str, args: tuple) -> None:
        if not parallel or self.threads == self._cores:
            self._fns[parallel][name](*args)
            return
        numba.set_num_threads(self.threads)  # numba's setting is per thread: put it back after
        try:
            self._fns[parallel][name](*args)
        finally:
            numba.set_num_threads(self._cores)
