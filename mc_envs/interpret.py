"""Cold caches in a single env: the game's kernels run as Python while a child process compiles them.

An env met with an empty numba cache would compile its game's kernels as it is made and at its
first step (SameGame 2.4 s, Go 4.5 s on a 2-core machine). Instead, an env is made with the
kernels the cache lacks interpreted, and one whose game's kernels are not cached then starts a
child process (:mod:`mc_envs.exercise`, the env pickled on its standard input) that plays the
same env through its whole interface, which compiles everything the env calls into the on-disk
cache, first what this process waits for (:func:`_tell`). Until the child ends, a call from
Python of a game kernel that the cache lacks runs the kernel's own Python code
(:class:`mc_envs._numba.Interpretable`): the same source, interpreted, a step in milliseconds
instead of microseconds. Once the child has
ended, each kernel loads from the cache at its next call. One process at a time compiles a game
for a cache (a lock file beside it): the other processes that make its env meanwhile (a
subprocess vector env's) interpret its kernels until that process's child has ended.

The same holds beyond a game's kernels (:func:`stand_in`): a small vector env's steps
(:mod:`mc_envs.vector.cold`) and a batched search (:mod:`mc_envs.agents.mcts.puct_batch`) run as
Python while a child makes and runs the same ones, once this process's earlier children have
ended (their kernels are its callees).

Off where compiling is the job: with ``MC_ENVS_COMPILE_AHEAD=0`` (the test suite sets it), in a
parallel search's workers (:func:`enable`), and from the moment a compiled vector env is made in
the process with :data:`mc_envs.vector.cold.INTERPRET_BELOW` sub-envs or more (:func:`stop`): it
steps a thousand games a call, which Python could not.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import pickle
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mc_envs._numba import (
    Interpretable,
    clock,
    compile_parts,
    interpreter,
    is_cached,
    timed,
    weight,
)
from mc_envs.spawning import AFTER, spawn, wait_for
from mc_envs.wishes import CALLED, Parent

if TYPE_CHECKING:
    from numba.core.registry import CPUDispatcher

    from mc_envs.search_hooks import SearchHooks

try:
    import fcntl
except ImportError:  # Windows: no lock between processes, each compiles with its own child
    fcntl = None  # type: ignore[assignment]

DISABLED = os.environ.get("MC_ENVS_COMPILE_AHEAD", "1") == "0"
GAME_MODULES = ("mc_envs.games.", "mc_envs.kernel", "mc_envs.rng")
WISH_EVERY = 0.05  # seconds between two wishes sent
_enabled = [True]
_depth = [0]  # env constructors running in this process
_started: set[str] = set()  # the games a child was started for, once a process
_children: list[subprocess.Popen] = []
_prefixes: list[tuple[str, ...]] = [GAME_MODULES]  # whose kernels run as Python (+ stand_in's)
_modules: dict[object, str] = {}  # dispatcher -> its function's module
_polled = [-1.0]  # when _rule last looked at the children
_until: dict[Interpretable, float] = {}  # dispatcher -> until when _rule runs it as Python unasked
_jobs: dict[tuple, subprocess.Popen] = {}  # stand_in's children, by their entry points
_foreign: list[Path] = []  # the locks of other processes compiling a game this one interprets
_looked = [0.0]  # when _foreign was last looked at
_lock = threading.Lock()
_cold: dict[int, float] = {}  # dispatcher id -> when the cache was last seen to lack it
RECHECK = 0.1  # seconds between two looks at the cache for one kernel (a look: 0.1 ms)
POLL = 0.02  # seconds between two looks at the children (and a kernel interpreted unasked)
interpreted = [0]  # kernel calls run as Python in this process
_spent: dict[tuple[str, str], float] = {}  # seconds run as Python, by game and Kernel field
_channels: dict[str, Parent] = {}  # a game -> the pipes to and from its compiling child
_wished = [0.0]  # when the last wish was sent
_sharing = [False]  # see sharing()
_declared: list[tuple[str, ...]] = [()]  # the wishes of the search in sharing(), first


def enable(on: bool = True) -> None:
    """Turns interpreting on or off in this process (a search's workers turn it off)."""
    _enabled[0] = bool(on)
    if not on:
        interpreter[0] = None


def stop() -> None:
    """Compiles from now on in this process (a compiled vector env is being made)."""
    enable(False)


def children() -> list[subprocess.Popen]:
    """The compiling children this process started that are still running."""
    with _lock:
        return [p for p in _children if p.poll() is None]


def wait(timeout: float | None = None) -> bool:
    """Waits for every compiling child; returns whether they have all ended."""
    return wait_for(children(), timeout)


def lock_path(game: str) -> Path:
    """The file whose lock a process holds while it compiles ``game``'s env kernels (one at a
    time per cache: the envs of a subprocess vector env wait for the first one's child)."""
    return Path(os.environ.get("NUMBA_CACHE_DIR", tempfile.gettempdir())) / f"compiling-{game}.lock"


def _held(path: Path) -> bool:
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases a lock this took
    return False


def _busy() -> bool:
    """Whether a compiling child of this process, or another process's, is still at work (the
    other processes' looked at every RECHECK seconds)."""
    if children():
        return True
    now = time.monotonic()
    if _foreign and now - _looked[0] >= RECHECK:
        _looked[0] = now
        _foreign[:] = [path for path in _foreign if _held(path)]
    return bool(_foreign)


def _rule(dispatcher: Interpretable, args: tuple) -> bool:
    """Whether a call from Python with ``args`` that would compile ``dispatcher`` runs it as
    Python instead: while a child compiles, unless the cache holds code for exactly these types
    (one for other types, a child's compiled caller's, would be compiled here meanwhile)."""
    now = time.monotonic()
    if now < _until.get(dispatcher, 0.0):  # on an interpreted call's hot path
        interpreted[0] += 1
        return True
    if _depth[0] == 0 and now - _polled[0] >= POLL:
        _polled[0] = now
        if not _busy():
            interpreter[0] = None  # every child has ended: compile (or load) from now on
            for game in list(_channels):
                _channels.pop(game).close()
            _prefixes[0] = GAME_MODULES
            _until.clear()
            return False
    if not built_in(dispatcher):
        return False
    if not _lacks(dispatcher, args, now):
        return False
    if _sharing[0] and _depth[0] == 0 and _take(dispatcher):
        return False
    _until[dispatcher] = now + POLL
    interpreted[0] += 1
    return True


def _take(dispatcher: Interpretable) -> bool:
    """Whether this process compiles a game kernel it would run as Python: the one of
    :data:`~mc_envs.wishes.CALLED` (every search calls them) that compiles for the longest of
    those not cached (:func:`~mc_envs._numba.weight`), unless its game's child is compiling it
    (:meth:`mc_envs.wishes.Parent.take`): the child takes the others. Before it, this process
    compiles the parts of the others that the child is not compiling now (Go's superko test,
    while the child compiles the move's scoring, the move's part): each process then loads the
    other's, and both end sooner."""
    key = timed.get(dispatcher)
    if key is None or key[1] not in CALLED:
        return False
    game, name = key
    channel = _channels.get(game)
    if channel is None or not channel.take(name, lambda: _heaviest(dispatcher, game)):
        return False
    for kernel in _others(dispatcher, game):
        if not channel.compiling(timed[kernel][1]):
            compile_parts(kernel)
    return True


def _heaviest(dispatcher: Interpretable, game: str) -> bool:
    others = _others(dispatcher, game)
    return not any(weight(k) > weight(dispatcher) and not is_cached(k) for k in others)


def _others(dispatcher: Interpretable, game: str) -> list[Interpretable]:
    # the kernels of CALLED of that game but dispatcher
    return [k for k, (g, n) in timed.items() if g == game and n in CALLED and k is not dispatcher]


@contextlib.contextmanager
def sharing(on: bool = True, wishes: tuple[str, ...] = ()) -> Iterator[None]:
    """Within the block, while a child compiles a cold env's kernels, this process compiles one
    of them instead of running it as Python (:func:`_take`): both cores compile. For a search
    with no clock (nothing reads its time or hears from it until it ends): a kernel compiles for
    seconds, where as Python it would have returned in milliseconds. ``wishes``: the
    :class:`~mc_envs.kernel.Kernel` fields the search will call most, told to the child before
    its first call (a batched search's playouts: the child compiles that stage next)."""
    before = _sharing[0], _declared[0]
    _sharing[0], _declared[0] = bool(on), tuple(wishes) if on else ()
    if on:  # what is wished from now on: this search's calls, not those of the steps before
        _spent.clear()
        _wished[0] = float("-inf")  # its first call is told at once
        for channel in _channels.values():
            channel.tell(list(wishes))
    try:
        yield
    finally:
        _sharing[0], _declared[0] = before


@contextlib.contextmanager
def everything() -> Iterator[None]:
    """Within the block, every game kernel called from Python that this process has not compiled
    yet runs as Python, cached or not, child or not: to step through a kernel with a debugger,
    and for the tests that check the interpreted kernels play as the compiled ones."""
    with _ruled(_game_kernel):
        yield


@contextlib.contextmanager
def uncached() -> Iterator[None]:
    """Within the block, a game kernel called from Python runs as Python where neither this
    process nor the cache has code for its argument types: a large vector env makes its
    prototype env so (a state made as Python in milliseconds, not compiled for 0.3 to 0.7 s on
    the way to its first step), and the kernels compile with its steps."""
    with _ruled(_uncached):
        yield


@contextlib.contextmanager
def _ruled(rule: Callable[[Interpretable, tuple], bool]) -> Iterator[None]:
    # ``rule`` decides within the block, the rule before it after
    before = interpreter[0]
    interpreter[0] = rule
    try:
        yield
    finally:
        interpreter[0] = before


def _uncached(dispatcher: Interpretable, args: tuple) -> bool:
    return built_in(dispatcher) and _lacks(dispatcher, args, time.monotonic())


def _lacks(dispatcher: Interpretable, args: tuple, now: float) -> bool:
    """Whether the cache lacks ``dispatcher`` for ``args``, looked up at most once per
    :data:`RECHECK` seconds: an interpreted kernel calls others many times (Morpion's start
    state, 23,000 calls: 1.8 s of looking up each, 0.2 s of work)."""
    if now - _cold.get(id(dispatcher), -RECHECK) < RECHECK:
        return True
    if is_cached(dispatcher, args):
        return False
    _cold[id(dispatcher)] = now
    return True


def _game_kernel(dispatcher: Interpretable, args: tuple) -> bool:
    if not built_in(dispatcher):
        return False
    interpreted[0] += 1
    return True


def constructor(init: Callable[..., None]) -> Callable[..., None]:
    """An env class's ``__init__`` that interprets the game kernels the cache lacks while it
    runs (the env makes its first state), then calls :func:`begin`."""

    @functools.wraps(init)
    def construct(self: SearchHooks, *args: object, **kwargs: object) -> None:
        if DISABLED or not _enabled[0]:
            init(self, *args, **kwargs)
            return
        _depth[0] += 1
        interpreter[0] = _rule
        try:
            init(self, *args, **kwargs)
        finally:
            _depth[0] -= 1
        if _depth[0] == 0:  # the outermost class's __init__ has run: the env is whole
            begin(self)

    return construct


def begin(env: SearchHooks) -> None:
    """Once an env is made: if its game's kernels are not cached (and no child was started for
    that game in this process), starts the child that compiles them, and interprets them
    meanwhile; or, if another process's child compiles them, interprets them until it ends."""
    try:
        if DISABLED or not _enabled[0] or env.kernel.name in _started:
            return
        _started.add(env.kernel.name)
        kernels = [getattr(env.kernel, f) for f in ("play", "legal", "observe")]
        if not all(built_in(f) for f in kernels):
            return  # a game of the user's: its kernels compile here, as they always did
        if all(is_cached(f) for f in kernels):
            return
        path = lock_path(env.kernel.name)
        lock = _claim(path)
        if lock is None:
            _foreign.append(path)
        else:
            _start(env, lock)
    finally:
        if _depth[0] == 0 and not _busy():
            interpreter[0] = None


def built_in(kernel: object) -> bool:
    """Whether ``kernel`` is one of mc-envs' own numba functions (a child can import it), not a
    user's."""
    module = _modules.get(kernel)  # looked up once a kernel: on a call's hot path
    if module is None:
        if not isinstance(kernel, Interpretable):
            return False
        module = _modules[kernel] = getattr(kernel.py_func, "__module__", None) or ""
    return module.startswith(_prefixes[0])


def stand_in(
    job: Callable[[], object], modules: tuple[str, ...], entries: Sequence[CPUDispatcher]
) -> bool:
    """Interprets the uncached kernels of ``modules`` (as well as the game's) while a child runs
    ``job``, which compiles ``entries`` (a batched search's, a small vector env's) into the cache;
    the child starts after this process's other compiling children. Returns whether the caller
    goes on without compiling them: they are cached, or a child compiles them; False when
    interpreting is off in this process or no child can run ``job``: the caller compiles them."""
    if DISABLED or not _enabled[0]:
        return False
    if all(is_cached(f) for f in entries):
        return True
    key = tuple(id(f) for f in entries)  # entry points live as long as the process
    with _lock:
        child = _jobs.get(key)
    if child is None:
        try:
            payload = pickle.dumps(job)
        except Exception:  # noqa: BLE001 - a job that cannot be sent compiles here
            return False
        after = ",".join(str(p.pid) for p in children())
        child = spawn("mc_envs.exercise", payload, {AFTER: after})
        if child is None:
            return False
        with _lock:
            _jobs[key] = child
            _children.append(child)
    if child.poll() is not None:
        return False  # it ended and the cache still lacks them: compile here
    _prefixes[0] = tuple(dict.fromkeys((*_prefixes[0], *modules)))
    interpreter[0] = _rule
    return True


def _claim(path: Path) -> int | None:
    """An open file holding ``path``'s lock; None if another process holds it; -1 where no
    lock can be taken (the child starts without one)."""
    if fcntl is None:
        return -1
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _start(env: SearchHooks, lock: int) -> None:
    try:
        _spawn(env, lock)
    finally:
        if lock >= 0:
            os.close(lock)  # the child holds the lock through its copy of the file, if it started


def _spawn(env: SearchHooks, lock: int) -> None:
    keep = (lock,) if lock >= 0 else ()
    if fcntl is None:  # Windows: no descriptor passes to a child; the stages in their order
        helper(env, keep)
        return
    channel = Parent()
    try:
        child = helper(env, (*keep, *channel.child_fds), channel.env)
    finally:
        channel.started()
    if child is None:
        channel.close()
        return
    kernel = env.kernel
    for field in dataclasses.fields(kernel):
        value = getattr(kernel, field.name)
        if isinstance(value, Interpretable):
            timed[value] = (kernel.name, field.name)
    _channels[kernel.name] = channel
    clock[0] = _tell


def _tell(kernel: Interpretable, seconds: float) -> None:
    """The clock of every call run as Python: sums the time of each game kernel's, and tells
    its game's child the kernels by that time, the most first (:mod:`mc_envs.exercise`), after
    those the search declared (:func:`sharing`), every :data:`WISH_EVERY` seconds at most."""
    key = timed.get(kernel)
    # not while an env is made: what it calls once, not what searches wait for
    if key is None or _depth[0]:
        return
    _spent[key] = _spent.get(key, 0.0) + seconds
    now = time.monotonic()
    if now - _wished[0] < WISH_EVERY:
        return
    _wished[0] = now
    game = key[0]
    channel = _channels.get(game)
    if channel is not None:
        ranked = sorted((k for k in _spent if k[0] == game), key=_spent.__getitem__, reverse=True)
        declared = list(_declared[0])
        channel.tell(declared + [name for _, name in ranked if name not in declared])


def helper(
    job: object, keep: tuple[int, ...] = (), env: dict[str, str] | None = None
) -> subprocess.Popen | None:
    """Starts a compiling child now, counted among this process's :func:`children`: it runs
    ``job()``, or :func:`mc_envs.exercise.exercise` on an env; ``keep``: file descriptors left
    open in it, ``env``: its added environment variables. None where none can run (compiling
    ahead is off, the job cannot be sent, no process can start): the caller compiles."""
    if DISABLED:
        return None
    try:
        payload = pickle.dumps(job)
    except Exception:  # noqa: BLE001 - a job that cannot be sent compiles here
        return None
    child = spawn("mc_envs.exercise", payload, env, keep=keep)
    if child is not None:
        with _lock:
            _children.append(child)
    return child
