"""A vector env met with a cold cache: a small one steps as Python while a child compiles its
steps; a large one compiles its game's kernels on two cores and steps as Python over them while
a child compiles its entry point (:class:`Split`).

A vector env of fewer than :data:`INTERPRET_BELOW` sub-envs (a batched search's eight games, a
few environments of a learner's first run) made with its entry point missing from the numba
cache would compile it at its first reset (1 s, and the game's kernels with it: 4 s for Go).
Instead, it steps as Python (:mod:`mc_envs.interpret`) while a child process makes the same
vector env and steps it (:func:`exercise`), which compiles the entry point into the cache;
from then on each call loads it. A vector env of more sub-envs needs the game's kernels
compiled, as Python could not play a thousand games a call, but not its entry point: its loop
over the sub-envs runs as Python over the compiled kernels (14 to 38 ms a step at N = 1,024)
until a child has compiled it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import subprocess
import time
from typing import TYPE_CHECKING

import numba
import numpy as np

from mc_envs import interpret
from mc_envs._numba import is_cached
from mc_envs.vector.compiled import Buffers, parallel_entry, serial_entry

if TYPE_CHECKING:
    from numba.core.registry import CPUDispatcher

    from mc_envs.kernel import Kernel

INTERPRET_BELOW = 64  # sub-envs: a vector env of fewer steps as Python while it compiles
MODULES = ("mc_envs.vector.",)  # whose kernels it interprets meanwhile
STEPS = 50  # what the child plays


def stand_in(
    vector_class: type,
    env_class: type,
    threads: int | None,
    kwargs: dict,
    entries: list[CPUDispatcher],
) -> bool:
    """Whether a vector env of fewer than :data:`INTERPRET_BELOW` sub-envs goes on without
    compiling its entry points ``entries`` in this process: they are cached, or a child compiles
    them while they run as Python (:func:`mc_envs.interpret.stand_in`)."""
    job = functools.partial(exercise, vector_class, env_class, threads, kwargs)
    return interpret.stand_in(job, MODULES, entries)


def exercise(
    vector_class: type, env_class: type, threads: int | None, kwargs: dict, steps: int = STEPS
) -> None:
    """Makes a vector env of two ``env_class(**kwargs)`` and steps it through resets, random
    legal actions and a restore (what the child does: one compiled entry point serves them
    all)."""
    venv = vector_class(env_class, 2, threads=threads, **kwargs)
    venv.reset(seed=0)
    snapshot = venv.clone_state()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = [rng.choice(np.flatnonzero(row)) for row in venv.action_masks()]
        venv.step(np.array(actions, np.int64))
    venv.restore_state(snapshot)
    venv.close()


class Split:
    """A large vector env's first call on a cold cache, compiled on two cores.

    A vector env of :data:`INTERPRET_BELOW` sub-envs or more would compile its entry point at its
    first call, and the game's kernels with it (Go: 4.1 s for the kernels, then 2.1 s for the
    entry point itself, on one core). When the entry point is not cached, :meth:`start` (at
    construction) starts a child that compiles the game's legal-move and observation kernels
    (:data:`CHILD`) into the cache, for the types the entry point calls them with, while this
    process compiles the move kernel (:data:`PARENT`, in :meth:`finish` at the first call); the
    child then compiles the entry point, which loads the move from the cache. Meanwhile this
    process runs the entry point's own code as Python over the compiled kernels
    (:func:`mc_envs.vector.compiled.python_entry`), and loads the entry point once the child has
    ended (:meth:`mc_envs.vector.threads.Compiling.after`, on another thread): no step waits for
    its compiling. The child says over a pipe when it begins to compile and when it is done with
    the kernels: if it has not begun when this process is done with its own, this process
    compiles the child's too (a child still importing its modules would finish later than this
    process, and only wastes the idle core). Where no child can help (a user's game, compiling
    ahead turned off, no pipe or process), :meth:`start` returns None and the first call
    compiles everything, as it would.
    """

    CHILD = ("k_legal", "k_observe")  # the kernels the child compiles first
    # what this process compiles meanwhile: the move, and the small kernels its steps call
    PARENT = ("k_play", "k_player", "k_score", "k_truncated", "k_returns")
    WAIT = 120.0  # seconds at most that the first call waits for a child that is compiling

    def __init__(
        self,
        child: subprocess.Popen,
        fd: int,
        mine: list[tuple[CPUDispatcher, tuple]],
        entry: CPUDispatcher | None = None,
        signature: tuple = (),
    ) -> None:
        self._child, self._fd, self._mine = child, fd, mine
        self._heard = b""
        self.entry, self.signature = entry, signature  # what the child compiles last

    @property
    def child(self) -> subprocess.Popen:
        """The compiling child."""
        return self._child

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Closes this end of the pipe (a vector env never stepped keeps no descriptor)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @classmethod
    def start(
        cls,
        kernel: Kernel,
        entry: CPUDispatcher,
        args: tuple,
        buffers: Buffers,
        recipe: tuple[int, bool],
    ) -> Split | None:
        """The split compilation of ``entry`` for a call with ``args`` (of which ``buffers``
        are the :class:`~mc_envs.vector.compiled.Buffers`), started; ``recipe``: the entry
        point's opponent and whether it is the parallel one (the child makes it again). None
        where it is cached or no child can help."""
        if interpret.DISABLED or os.name == "nt" or is_cached(entry, args):
            return None  # (no select on a Windows pipe)
        s, w = buffers.states[0], buffers.ws[0]
        # each kernel's arguments as the entry point passes them (vector/compiled.py's _range)
        calls = {
            "k_legal": (s, w, buffers.legal[0]),
            "k_play": (s, np.int64(0), w),
            "k_observe": (s, buffers.obs[0]),
            **{name: (s,) for name in cls.PARENT if name != "k_play"},  # (state,) each
        }
        bound = kernel.bindings._asdict()
        if not all(interpret.built_in(bound[name]) for name in calls):
            return None
        sig = {name: tuple(numba.typeof(a) for a in values) for name, values in calls.items()}
        fd, theirs = os.pipe()
        signature = tuple(numba.typeof(a) for a in args)
        jobs = [(n, sig[n]) for n in cls.CHILD]
        job = functools.partial(compile_kernels, kernel, jobs, theirs, (*recipe, signature))
        child = interpret.helper(job, keep=(theirs,))
        os.close(theirs)
        if child is None:
            os.close(fd)
            return None
        return cls(child, fd, [(bound[name], sig[name]) for name in cls.PARENT], entry, signature)

    def finish(self) -> None:
        """Compiles this process's kernels, then waits for the child's if it is compiling them
        (at most :data:`WAIT` seconds; after that, or if it failed, the entry point compiles
        them here)."""
        try:
            for kernel, signature in self._mine:
                kernel.compile(signature)
            if self._hear(0.0) == b"c":
                self._hear(self.WAIT)
        finally:
            self.close()

    def _hear(self, timeout: float) -> bytes:
        # What the child said last within timeout: b"c" compiling, b"d" done, b"" nothing yet or
        # the pipe closed (it ended, or failed).
        end = time.monotonic() + timeout
        while not self._heard.endswith(b"d"):
            ready, _, _ = select.select([self._fd], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                break
            said = os.read(self._fd, 8)
            if not said:
                return b""
            self._heard += said
        return self._heard[-1:]


def compile_kernels(
    kernel: Kernel,
    jobs: list[tuple[str, tuple]],
    fd: int = -1,
    entry: tuple[int, bool, tuple] | None = None,
) -> None:
    """Compiles the kernel functions named in ``jobs`` (names of
    :class:`~mc_envs.kernel.KernelBindings`) for their signatures into the cache (what a split
    compilation's child does), writing b"c" to the file descriptor ``fd`` as it begins and b"d"
    once done; then ``entry``, ``(opponent, parallel, signature)``: the vector entry point of
    ``kernel`` (:func:`~mc_envs.vector.compiled.serial_entry`, or ``parallel_entry``) compiled
    for ``signature``."""
    bound = kernel.bindings._asdict()
    numba.njit(_nothing).compile(())  # numba's compiler set up (0.2 s): b"c" means compiling
    _say(fd, b"c")
    for name, signature in jobs:
        bound[name].compile(signature)
    _say(fd, b"d")
    if fd >= 0:
        os.close(fd)
    if entry is not None:
        opponent, parallel, signature = entry
        (parallel_entry if parallel else serial_entry)(kernel, opponent).compile(signature)


def _say(fd: int, what: bytes) -> None:
    # The parent stops listening once its own kernels are compiled: the pipe may be closed.
    if fd >= 0:
        with contextlib.suppress(BrokenPipeError):
            os.write(fd, what)


def _nothing() -> None:
    pass
