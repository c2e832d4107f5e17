"""A vector env met with a cold cache: a small one steps as Python while a child compiles its
steps; a large one compiles them on two cores (:class:`Split`).

A vector env of fewer than :data:`INTERPRET_BELOW` sub-envs (a batched search's eight games, a
few environments of a learner's first run) made with its entry point missing from the numba
cache would compile it at its first reset (1 s, and the game's kernels with it: 4 s for Go).
Instead, it steps as Python (:mod:`mc_envs.interpret`) while a child process makes the same
vector env and steps it (:func:`exercise`), which compiles the entry point into the cache;
from then on each call loads it. A vector env of more sub-envs compiles, as Python could not
step a thousand games a call.
"""

from __future__ import annotations

import functools
import os
import select
import subprocess
import time
from typing import Any

import numba
import numpy as np

from mc_envs import interpret
from mc_envs._numba import is_cached

INTERPRET_BELOW = 64  # sub-envs: a vector env of fewer steps as Python while it compiles
MODULES = ("mc_envs.vector.",)  # whose kernels it interprets meanwhile
STEPS = 50  # what the child plays


def stand_in(
    vector_class: type, env_class: type, threads: int | None, kwargs: dict, entries: list
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

    A vector env of :data:`INTERPRET_BELOW` sub-envs or more compiles its entry point at its
    first call, and the game's kernels with it (4.5 s for Go, on one core). When the entry point
    is not cached, :meth:`start` (at construction) starts a child that compiles the game's
    legal-move and observation kernels (:data:`CHILD`) into the cache, for the types the entry
    point calls them with, while this process compiles the move kernel (:data:`PARENT`, in
    :meth:`finish` at the first call); the entry point then loads the child's from the cache.
    The two halves took about the same time for Go (1.6 and 1.8 s), once the env made its
    prototype as Python (:func:`mc_envs.interpret.uncached`) so that the child starts at once.
    The child says over a pipe when it begins to compile and when it is done: if it has not
    begun when this process is done with its own, this process compiles the child's too (a
    child still importing its modules would finish later than this process, and only wastes the
    idle core). Where no child can help (a user's game, compiling ahead turned off, no pipe or
    process), :meth:`start` returns None and the first call compiles everything, as it would.
    """

    CHILD = ("k_legal", "k_observe")  # the kernels the child compiles
    PARENT = ("k_play",)  # what this process compiles meanwhile
    WAIT = 120.0  # seconds at most that the first call waits for a child that is compiling

    def __init__(self, child: subprocess.Popen, fd: int, mine: list[tuple[Any, tuple]]) -> None:
        self._child, self._fd, self._mine = child, fd, mine
        self._heard = b""

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Closes this end of the pipe (a vector env never stepped keeps no descriptor)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @classmethod
    def start(cls, kernel: Any, entry: Any, args: tuple, buffers: Any) -> Split | None:
        """The split compilation of ``entry`` for a call with ``args`` (of which ``buffers``
        are the :class:`~mc_envs.vector.compiled.Buffers`), started; None where it is cached or
        no child can help."""
        if interpret.DISABLED or os.name == "nt" or is_cached(entry, args):
            return None  # (no select on a Windows pipe)
        s, w = buffers.states[0], buffers.ws[0]
        # each kernel's arguments as the entry point passes them (vector/compiled.py's _range)
        calls = {
            "k_legal": (s, w, buffers.legal[0]),
            "k_play": (s, np.int64(0), w),
            "k_observe": (s, buffers.obs[0]),
        }
        bound = kernel.bindings._asdict()
        if not all(interpret.built_in(bound[name]) for name in calls):
            return None
        if all(is_cached(bound[name], calls[name]) for name in cls.CHILD):
            return None
        sig = {name: tuple(numba.typeof(a) for a in values) for name, values in calls.items()}
        fd, theirs = os.pipe()
        job = functools.partial(compile_kernels, kernel, [(n, sig[n]) for n in cls.CHILD], theirs)
        child = interpret.helper(job, keep=(theirs,))
        os.close(theirs)
        if child is None:
            os.close(fd)
            return None
        return cls(child, fd, [(bound[name], sig[name]) for name in cls.PARENT])

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


def compile_kernels(kernel: Any, jobs: list[tuple[str, tuple]], fd: int = -1) -> None:
    """Compiles the kernel functions named in ``jobs`` (names of
    :class:`~mc_envs.kernel.KernelBindings`) for their signatures into the cache (what a split
    compilation's child does), writing b"c" to the file descriptor ``fd`` as it begins and b"d"
    once done."""
    bound = kernel.bindings._asdict()
    numba.njit(_nothing).compile(())  # numba's compiler set up (0.2 s): b"c" means compiling
    if fd >= 0:
        os.write(fd, b"c")
    for name, signature in jobs:
        bound[name].compile(signature)
    if fd >= 0:
        os.write(fd, b"d")
        os.close(fd)


def _nothing() -> None:
    pass
