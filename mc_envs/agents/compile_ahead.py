"""Cold caches under a time limit: the generic path searches while a child process compiles.

A compiled search (NMCS, NRPA, UCT, PUCT with a compiled prior) met for the first time with an
empty numba cache compiles for seconds to tens of seconds (NMCS level 1 on SameGame: about 15 s;
UCT on Connect Four: 5.6 s). A time limit counts from the call, so a search with one
does not compile first: :class:`mc_envs.agents.runner.Runner` runs it on the generic Python path (the same
algorithm over the env's clone/restore contract: the same moves for the same random stream, much
slower) while a child process compiles the search into the on-disk cache. Once the cache holds it,
the search pauses at its next safe point, loads the compiled code (a fraction of a second) and
goes on from where it was. ``result.extra["compile"]`` says what happened.

The child (``python -m mc_envs.agents.compile_ahead``, the search and its env pickled on its standard
input by this process) runs one playout of the search, which compiles it; it outlives a caller
that exits first, so that the next run finds the cache warm. One child at a time per search.

Off in the workers of a parallel search, where compiling is the job while the caller stands in
for them (but for a race's searches, which nobody stands in for), and everywhere when the
environment variable ``MC_ENVS_COMPILE_AHEAD`` is ``0`` (the test suite sets it; its own tests
turn it on).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import mc_envs.interpret as interpret
import mc_envs.spawning as spawning
from mc_envs._numba import is_cached
from mc_envs.agents.base import Budget

if TYPE_CHECKING:
    import gymnasium as gym
    import numpy as np
    from numba.core.registry import CPUDispatcher

    from mc_envs.agents.base import Searcher


POLL = 0.25  # seconds between two looks at the cache
STEP_UP = 1.0  # seconds of plain Python after which a stand-in with no clock may compile helpers
STEP_UP_COST = 2.0  # seconds of work left that make compiling them worth it (they take 1 to 2 s)
DISABLED = os.environ.get("MC_ENVS_COMPILE_AHEAD", "1") == "0"
_children: dict[tuple, subprocess.Popen] = {}
_lock = threading.Lock()
_enabled = [True]


def enable(on: bool = True) -> None:
    """Turns the stand-in, and the interpreted kernels of a cold env (:mod:`mc_envs.interpret`),
    on or off in this process (workers turn them off: they compile while the caller stands in
    for them)."""
    _enabled[0] = bool(on)
    interpret.enable(on)


@contextlib.contextmanager
def allowed(on: bool) -> Iterator[None]:
    """Within the block, the stand-in is on if it was or if ``on`` (a worker's task that nobody
    stands in for: a race's searches)."""
    before = _enabled[0]
    _enabled[0] = before or bool(on)
    try:
        yield
    finally:
        _enabled[0] = before


def children() -> list[subprocess.Popen]:
    """The compiling children this process started that are still running."""
    with _lock:
        return [p for p in _children.values() if p.poll() is None]


def wait(timeout: float | None = None) -> bool:
    """Waits for every compiling child; returns whether they have all ended."""
    return spawning.wait_for(children(), timeout)


class StandIn:
    """One search run on the generic path until its compiled entry points are cached.

    Args:
        entries: the search's numba dispatchers.
        child: the compiling process (None when another search of this process started it).
    """

    def __init__(self, entries: list[CPUDispatcher], child: subprocess.Popen | None) -> None:
        self.entries, self.child = entries, child
        self.start = time.perf_counter()
        self.switched: float | None = None  # seconds into the search when it went compiled
        self.playouts = 0  # playouts made on the generic path
        self.due = False  # STEP_UP seconds have passed (see watch)
        self.stepped = False  # its program may compile its per-step helpers (compiled_steps)

    def ready(self) -> bool:
        """Whether every entry point can now load from the cache."""
        return all(is_cached(f) for f in self.entries)

    def watch(self, control: np.ndarray, slot: int, done: threading.Event, steps: bool) -> None:
        """A daemon thread that sets ``control[slot]`` (a pause) once the cache is ready, and,
        with ``steps`` (a search with no clock whose program has per-step helpers), once
        :data:`STEP_UP` seconds have passed (:attr:`due`: the runner then asks :meth:`step_up`)."""

        def look() -> None:
            while not done.wait(POLL):
                if self.ready():
                    control[slot] = 1
                    return
                if steps and not self.due and time.perf_counter() - self.start >= STEP_UP:
                    self.due = True
                    control[slot] = 1

        threading.Thread(target=look, name="mc-envs-compile-watch", daemon=True).start()

    def step_up(self, done: int, left: int | None) -> bool:
        """At the pause :attr:`due` asked for, after ``done`` playouts with ``left`` more in the
        budget (None: no playout budget): whether the program compiles its per-step helpers from
        now on (:func:`compiled_steps`), which it does when plain Python would take longer than
        :data:`STEP_UP_COST` over the work left. Once a search."""
        if not self.due or self.stepped:
            return False
        spent = time.perf_counter() - self.start
        self.due = False
        self.stepped = left is None or spent * left / max(done, 1) >= STEP_UP_COST
        return self.stepped

    def note(self) -> dict[str, object]:
        """What ``result.extra["compile"]`` says."""
        child = self.child
        status = "shared" if child is None else child.poll()
        return {
            "cold": True,
            "generic_seconds": round(
                (self.switched if self.switched is not None else time.perf_counter() - self.start),
                3,
            ),
            "generic_playouts": self.playouts,
            "compiled": self.switched is not None,
            "stepped_up": self.stepped,
            "child": "running" if status is None else status,
        }


def stand_in(agent: Searcher, env: gym.Env, entries: list[CPUDispatcher]) -> StandIn | None:
    """A :class:`StandIn` when ``entries`` are not compiled yet and a child can compile them;
    None when they are (or when the stand-in is off, or the search cannot be sent to a child:
    the caller then compiles before its clock, as without this module)."""
    if DISABLED or not _enabled[0] or all(is_cached(f) for f in entries):
        return None
    key = tuple(id(f) for f in entries)  # entry points live as long as the process
    with _lock:
        child = _children.get(key)
        if child is not None and child.poll() is not None:
            return None  # it ended and the cache still lacks them: compile here
        if child is not None:
            return StandIn(entries, None)
        try:
            payload = pickle.dumps((agent, env))
        except Exception:  # noqa: BLE001 - an unpicklable search compiles here
            return None
        # After the env's own compiling children: the search's callees are theirs.
        after = ",".join(str(p.pid) for p in interpret.children())
        child = spawning.spawn("mc_envs.agents.compile_ahead", payload, {spawning.AFTER: after})
        if child is None:
            return None  # no child can start here: compile here
        _children[key] = child
        return StandIn(entries, child)


def _main() -> int:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # compiling is background work: the search that waits for it comes first
    # An env made on a cold cache has a child compiling the game's kernels, which the search
    # calls: this one started once it had ended (spawning.spawn), to compile them once.
    agent, env = pickle.loads(sys.stdin.buffer.read())  # sent by the parent process only
    agent.run_search(env, Budget(playouts=1))
    return 0


def compiled_steps(steps: tuple, standin: StandIn | None) -> bool:
    """Whether a cold cache's stand-in runs its per-step helpers ``steps`` compiled: the cache
    holds them, or the stand-in has stepped up (:meth:`StandIn.step_up`: a search with no clock
    that plain Python would keep for 2 s more). As Python they cost NRPA on SameGame 4 s every
    1,000 playouts; compiling them, 1 to 2 s that a short search would rather spend searching."""
    return (standin is not None and standin.stepped) or all(is_cached(s) for s in steps)


if __name__ == "__main__":
    sys.exit(_main())
