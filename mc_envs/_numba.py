"""Numba set-up shared by every kernel: the on-disk cache directory and per-game search instances.

The cache directory is chosen before numba is imported. ``NUMBA_CACHE_DIR`` is honoured when the user
sets it; otherwise the package uses ``~/.cache/mc-envs/numba-<hash>`` where the hash covers the
source of every module that may hold compiled code or a constant compiled code reads. Numba only
invalidates a cached function when its own file changes, not when a kernel it calls does, so
keying the directory on all those sources keeps caches honest.
A read-only home falls back to a temporary directory.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar, cast, overload

_ROOT = Path(__file__).resolve().parent.parent

# Modules that hold no compiled code and no constant a kernel reads: editing them keeps the cache
# (tests/test_structure.py checks that none of them compiles anything or is imported by code that
# does). Every other module of mc_envs, a new one included, is part of the cache's key.
NOT_COMPILED = (
    "render/",
    "cli/",
    "envs/",
    "pettingzoo/",
    "agents/__init__.py",
    "agents/alphazero/",
    "agents/checkpoint.py",
    "agents/compile_ahead.py",
    "agents/warmup/",
    "agents/gtp_player.py",
    "agents/specs.py",
    "extras.py",
    "interpret.py",
    "spawning.py",
    "wishes.py",
    "go_sgf.py",
    "morpion_records.py",
    "opponents.py",
    "records.py",
    "registry.py",
    "testing.py",
)


def compiled_sources() -> list[Path]:
    """The source files whose text keys the cache: every module except those of NOT_COMPILED."""
    package = _ROOT / "mc_envs"
    return [
        path
        for path in sorted(package.rglob("*.py"))
        if not path.relative_to(package).as_posix().startswith(NOT_COMPILED)
    ]


def _source_hash() -> str:
    digest = hashlib.sha1()
    for path in compiled_sources():
        digest.update(path.relative_to(_ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
        return True
    except OSError:
        return False


def cache_dir() -> Path:
    """The directory where compiled kernels are cached."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mc-envs"
    path = base / f"numba-{_source_hash()}"
    if not _writable(path):
        path = Path(tempfile.gettempdir()) / "mc-envs" / f"numba-{_source_hash()}"
        path.mkdir(parents=True, exist_ok=True)
    return path


def _configure() -> None:
    path = str(cache_dir())
    os.environ.setdefault("NUMBA_CACHE_DIR", path)
    # The vector envs' parallel steps (OpenMP, numba's default layer here) launch every few tens of
    # microseconds: GNU OpenMP's default spin (300,000 rounds) after each keeps a thread busy
    # through the Python work between steps; a short spin serves the next step without that.
    os.environ.setdefault("GOMP_SPINCOUNT", "30000")
    from numba.core import config

    # numba.config defines its settings at run time (from the environment): no type declares them.
    config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]  # type: ignore[attr-defined]
    _skip_blas_probe()


def _skip_blas_probe() -> None:
    """Imports numba's array maths without its BLAS probe, which imports scipy.linalg (0.6 s of
    every process's first kernel, cached or not, when scipy is installed) to choose the inner
    loop of ``np.trapz``; no kernel here uses BLAS, and ``np.dot`` in compiled code still finds
    it (numba looks again when such a call compiles)."""
    probe = "scipy.linalg.cython_blas"
    if probe in sys.modules or "numba.np.arraymath" in sys.modules:
        return
    sys.modules[probe] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules[probe]


_configure()

import numba  # noqa: E402
import numba.extending  # noqa: E402
import numpy as np  # noqa: E402
from numba.core import types as _types  # noqa: E402
from numba.core.dispatcher import OmittedArg  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

if TYPE_CHECKING:
    from typing_extensions import Unpack

# A call of a numba function as compiled code makes it: the function and its argument types.
Call: TypeAlias = "tuple[CPUDispatcher, Unpack[tuple[_types.Type, ...]]]"

# While a child process compiles a cold env's kernels (mc_envs.interpret), the rule that says
# which functions a call from Python runs as plain Python meanwhile; None: numba compiles them.
interpreter: list[Callable[[Interpretable, tuple], bool] | None] = [None]
# Told the seconds of each call run so of the ``timed`` kernels (the dispatcher, seconds);
# ``timed`` maps each to what its caller knows it by.
clock: list[Callable[[Interpretable, float], None] | None] = [None]
timed: dict[Interpretable, tuple[str, str]] = {}  # -> (game, kernel field)


class Interpretable(CPUDispatcher):
    """numba's CPU dispatcher, but a call from Python that would compile runs the function's
    Python code instead while :data:`interpreter` says so (its calls of other kernels go the same
    way), or its :func:`twin`. numba's C dispatcher reaches ``_compile_for_args`` only when no
    compiled code fits the arguments, so a compiled kernel's calls cost what they did."""

    twin: Callable[..., object] | None = None  # see twin()
    parts: tuple[Call, ...] = ()  # see parts()

    def _compile_for_args(self, *args: Any, **kws: Any) -> Any:
        rule = interpreter[0]
        if rule is not None and rule(self, args):
            key = "_timed" if self in timed else "_python"
            run = self.__dict__.get(key)
            if run is None:
                run = self.twin if self.twin is not None else _python(self.py_func)
                if key == "_timed":
                    run = _timed(self, run)
                self.__dict__[key] = run
            return run  # numba calls it with the args
        return super()._compile_for_args(*args, **kws)  # type: ignore[misc]  # numba: untyped


def twin(kernel: Interpretable, cheaper: Callable[..., object]) -> None:
    """Declares ``cheaper`` (a function of the same arguments and the same results, cheaper to
    compile: a numba function, or Python that calls one) ``kernel``'s twin: while a call from
    Python would run ``kernel`` as Python, it calls ``cheaper`` instead, compiled if the cache has
    it (SameGame's bitboard playout: 2.4 s of compiling, its flood-fill twin 0.5 s, and as Python
    both 100 times slower; Go's playout, its twin the "random" policy's alone)."""
    kernel.twin = cheaper


def parts(kernel: Interpretable, *calls: Call) -> None:
    """Declares callees of ``kernel``, each ``(dispatcher, *argument types)`` as ``kernel``
    calls it, that the process which does not compile ``kernel`` compiles first
    (:func:`compile_parts`): the last ones ``kernel`` reaches (numba compiles the callees in the
    order its code reads them). While one process compiles ``kernel`` from its first callee, the
    other caches them, and the first loads them from the cache when it gets there (Go's move:
    the scoring at the end of the game, which a cold env's child compiles while a search's
    process compiles the move; Go's legal moves: the superko test, which the search's process
    compiles before the move, see :mod:`mc_envs.interpret`)."""
    kernel.parts = calls


def compile_parts(kernel: object) -> None:
    """Compiles into the cache the :func:`parts` of ``kernel`` that it lacks, unless ``kernel``
    itself is cached (its callees came with it)."""
    if not isinstance(kernel, Interpretable) or is_cached(kernel):
        return
    for dispatcher, *argtypes in kernel.parts:
        if tuple(argtypes) not in dispatcher.overloads:
            dispatcher.compile(tuple(argtypes))  # loads it instead where the cache has it


def _timed(kernel: Interpretable, run: Callable[..., object]) -> Callable[..., object]:
    # what the clock is told: the kernels a search calls from Python, a few, not their callees
    def call(*args: object) -> object:
        start = time.perf_counter()
        try:
            return run(*args)
        finally:
            told = clock[0]
            if told is not None:
                told(kernel, time.perf_counter() - start)

    return call


def _python(py_func: Callable[..., object]) -> Callable[..., object]:
    """``py_func`` called as numba's dispatcher hands it the arguments: an omitted one as its
    default, wrapped."""
    if not py_func.__defaults__:
        return py_func

    def run(*args: object) -> object:
        return py_func(*(a.value if isinstance(a, OmittedArg) else a for a in args))

    return run


# A kernel run as Python does numba's wrapping integer arithmetic on numpy's scalars, which warn
# where numba is silent: ignored in the package's modules (a filter, not an errstate around each
# call: that took half of an interpreted call's time).
warnings.filterwarnings("ignore", "overflow encountered in", RuntimeWarning, r"mc_envs\.")


class Dispatcher(Interpretable):
    """numba's CPU dispatcher, but a call from compiled code compiles one specialization whatever
    constants it passes: numba would type ``f(x, 0)`` with ``Literal[int](0)`` and compile ``f``
    (and everything it calls with that argument) a second time next to ``f(x, i)``."""

    def get_call_template(self, args: Any, kws: Any) -> Any:
        args = tuple(_types.unliteral(a) for a in args)
        kws = {k: _types.unliteral(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


@overload
def njit(
    fn: Callable[..., object],
    *,
    cache: bool = False,
    constants: Literal[False] = False,
    **options: object,
) -> Dispatcher: ...


@overload
def njit(
    fn: None = None, *, cache: bool = False, constants: Literal[False] = False, **options: object
) -> Callable[[Callable[..., object]], Dispatcher]: ...


@overload
def njit(
    fn: None = None, *, cache: bool = False, constants: Literal[True], **options: object
) -> Callable[[Callable[..., object]], Interpretable]: ...


def njit(
    fn: Callable[..., object] | None = None,
    *,
    cache: bool = False,
    constants: bool = False,
    **options: object,
) -> Interpretable | Callable[[Callable[..., object]], Interpretable]:
    """``numba.njit`` with :class:`Dispatcher`: the same options, one specialization per
    argument types (constants count as their type).

    ``constants=True`` keeps numba's own dispatcher for a hot kernel whose flag argument selects
    code: each constant a compiled caller passes compiles a specialization with the branches it
    rules out pruned (Morpion's ``_apply(..., track)``: its playouts 5% slower without)."""

    def wrap(py_func: Callable[..., object]) -> Interpretable:
        return _made(Interpretable if constants else Dispatcher, py_func, cache, options)

    return wrap if fn is None else wrap(fn)


D = TypeVar("D", bound=Interpretable)


def _made(
    kind: type[D], py_func: Callable[..., object], cache: bool, options: Mapping[str, object]
) -> D:
    dispatcher = kind(py_func=py_func, locals={}, targetoptions={"nopython": True, **options})
    if cache:
        dispatcher.enable_caching()
    return dispatcher


class _Intrinsic(numba.core.extending._Intrinsic):  # type: ignore[misc]  # final in the stubs only
    """numba's intrinsic, callable from Python through its ``python`` twin (the interpreted
    kernels of :data:`interpreter` call it)."""

    python: Callable[..., Any]

    def __call__(self, *args: Any) -> Any:
        return self.python(*args)


def intrinsic(python: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """numba's ``intrinsic`` (LLVM code inlined into compiled callers) with ``python``, the same
    operation in Python, for calls from the interpreter; typed as compiled code calls it: with its
    arguments alone (numba's stubs type the call as the typing function's, whose first parameter
    is the typing context)."""

    def wrap(typing: Callable[..., Any]) -> Callable[..., Any]:
        made = _Intrinsic(getattr(typing, "__name__", str(typing)), typing)
        made._register()
        made.python = python
        return cast(Callable[..., Any], made)

    return wrap


def _word(x: int | np.integer) -> tuple[int, int, type]:
    """``x`` as an unsigned word: its value, its width in bits, and its numpy type (int for a
    Python int, taken as 64 bits)."""
    if isinstance(x, np.generic):
        kind = x.dtype.type
        width = x.dtype.itemsize * 8
        return int(x) & ((1 << width) - 1), width, kind
    return int(x) & 0xFFFF_FFFF_FFFF_FFFF, 64, int


def ctpop(x: int | np.integer) -> int | np.integer:
    """The set bits of an integer word, as LLVM's ``ctpop`` counts them, in ``x``'s type."""
    u, _, kind = _word(x)
    return kind(u.bit_count())


def ctlz(x: int | np.integer) -> int | np.integer:
    """The leading zero bits of an integer word (its width for 0), as LLVM's ``ctlz``."""
    u, width, kind = _word(x)
    return kind(width - u.bit_length())


def cttz(x: int | np.integer) -> int | np.integer:
    """The trailing zero bits of an integer word (its width for 0), as LLVM's ``cttz``."""
    u, width, kind = _word(x)
    return kind((u & -u).bit_length() - 1 if u else width)


def instantiate(
    template: Callable[..., object],
    suffix: str,
    *,
    parallel: bool = False,
    inline: bool = False,
    **bindings: object,
) -> Dispatcher:
    """Compile ``template`` with some of its global names bound to other functions.

    This is how one search written once (a plain Python function whose body calls ``legal``,
    ``play``, ``playout`` ... as globals) becomes one cached numba entry point per game: each
    instance gets its own qualified name, hence its own cache file. It is the one memo of compiled
    instances: the same template, suffix, options and bindings (those of the names the template
    reads; any other is ignored) give the same dispatcher, so callers keep no cache of their own.

    Args:
        template: a plain (not jitted) function.
        suffix: a name for this instance, unique per set of bindings (the game's name): numba's
            on-disk cache knows an instance by its name alone.
        parallel: compile with ``parallel=True``, so that ``prange`` loops run on every core.
        inline: inline the instance into its callers (numba's ``inline="always"``), for small
            per-item functions that a batch loop calls with many array arguments.
        **bindings: global names to rebind in the instance, usually numba kernels (a game's:
            :class:`mc_envs.kernel.KernelBindings`).

    Returns:
        The numba dispatcher of the instance (``cache=True``, ``nogil=True``).
    """
    if not isinstance(template, types.FunctionType):
        raise TypeError(f"instantiate takes a plain function, got {template!r}")
    reads = bindings.keys() & _names_read(template.__code__)
    key = (template, suffix, parallel, inline, frozenset(_identity(k, bindings[k]) for k in reads))
    found = _instances.get(key)
    if found is not None:
        return found
    namespace = dict(template.__globals__)
    namespace.update(bindings)
    fn = types.FunctionType(
        template.__code__, namespace, f"{template.__name__}__{suffix}", template.__defaults__
    )
    fn.__qualname__ = f"{template.__qualname__}__{suffix}"
    fn.__module__ = template.__module__
    options = {"nogil": True, "parallel": parallel, "inline": "always" if inline else "never"}
    dispatcher = _made(Dispatcher, fn, True, options)
    if namespace.get(template.__name__) is template:  # a self-call stays a self-call
        namespace[template.__name__] = dispatcher
    return _instances.setdefault(key, dispatcher)  # a thread that built it first wins


# instantiate's memo. A binding that is not a plain constant is keyed by its identity: the
# instance's namespace holds it, so that its id is never reused while the entry lives.
_instances: dict[tuple, Dispatcher] = {}
_CONSTANTS = frozenset((bool, int, float, str, type(None)))


def _identity(name: str, value: object) -> tuple:
    return (name, type(value), value) if type(value) in _CONSTANTS else (name, None, id(value))


@functools.cache
def _names_read(code: types.CodeType) -> frozenset[str]:
    """The global names a function's code (and the code nested in it) may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return frozenset(names)


@functools.cache
def weight(dispatcher: CPUDispatcher) -> int:
    """A rough measure of how long ``dispatcher`` compiles: the bytes of code of its function
    and of each numba function it reaches (Go's move, 5,520, compiles for longer than its legal
    moves, 4,096)."""
    return sum(len(fn.py_func.__code__.co_code) for fn in reach(dispatcher))


@functools.cache
def reach(dispatcher: CPUDispatcher) -> tuple[CPUDispatcher, ...]:
    """``dispatcher`` and every numba function its code may call, directly or not (the global
    names it reads)."""
    seen, todo, found = set(), [dispatcher], []
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        found.append(fn)
        namespace = fn.py_func.__globals__
        todo += [
            namespace[n]
            for n in _names_read(fn.py_func.__code__)
            if isinstance(namespace.get(n), CPUDispatcher)
        ]
    return tuple(found)


def is_cached(dispatcher: CPUDispatcher, args: tuple | None = None) -> bool:
    """Whether calling ``dispatcher`` finds compiled code: compiled in this process, or in the
    on-disk cache for its current source; with ``args``, code for exactly their types (what a call
    from Python with them would otherwise compile: a cached specialization for other types does
    not count). Unknown (numba's cache layout changed): True, so that callers compile as they
    always did."""
    if args is None and dispatcher.signatures:
        return True
    try:
        index = dispatcher._cache._cache_file._load_index()  # type: ignore[attr-defined]  # numba: set by enable_caching
        if args is None:
            return bool(index)
        sig = tuple(
            _types.Omitted(a.value) if isinstance(a, OmittedArg) else dispatcher.typeof_pyval(a)
            for a in args
        )  # as numba's _compile_for_args types a call
        return sig in dispatcher.overloads or any(key[0] == sig for key in index)
    except Exception:  # noqa: BLE001 - a private layout: any failure means "cannot tell"
        return True
