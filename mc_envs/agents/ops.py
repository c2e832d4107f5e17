"""The collaborators every search template calls, declared once, and their two bindings.

A search algorithm is written once, as plain Python functions ("templates") that touch game states
only through the operations declared below, always by slot index into a ``states`` store. The
declarations are stubs: a binding replaces them in a copy of the template's globals.

- :func:`compiled_ops` binds them to the numba functions of a game's
  :class:`~mc_envs.core.Kernel`, found in its one table (``Kernel.bindings``, a
  :class:`~mc_envs.kernel.KernelBindings`) (``states`` is a 2-D array, one state per row); the
  template is then compiled with :func:`mc_envs._numba.instantiate`: the fast path.
- :data:`GENERIC_OPS` binds them to plain Python over :class:`EnvStates` (snapshots of any env of
  the planning-env contract): :func:`bind_generic` gives the template as a Python function.

The tests check that both bindings give the same result for a seed.

The runner's side of every search is one :class:`Shared` record (the control block, the best
sequence found so far and the score that ends the search), written by :func:`mc_envs.agents.common.record`.
"""

from __future__ import annotations

import functools
import types
from collections import namedtuple
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numba.core.dispatcher import Dispatcher

from mc_envs._numba import instantiate, njit
from mc_envs.agents.common import count_playout, record
from mc_envs.core import Kernel, PolicyFactory, random_policy, unwrap
from mc_envs.kernel import (
    KernelBindings,
    k_bias,
    k_legal,
    k_legal_codes,
    k_observe,
    k_play,
    k_player,
    k_playout,
    k_prior,
    k_returns,
    k_score,
    k_select,
)
from mc_envs.rng import PLAIN_RNG, PlainRngView
from mc_envs.search_hooks import playout_by_moves

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.contract import PlanningContract
    from mc_envs.core import PlanningEnv

Game = namedtuple("Game", "states ws")
Game.__doc__ = """The game side of a search: ``states`` (a slot store: a 2-D array, one state per row, or
an :class:`EnvStates`) and ``ws`` (the kernel's scratch array; None on the generic path)."""

Shared = namedtuple("Shared", "control best_score best_seq best_len max_score")
Shared.__doc__ = """What a search shares with its runner.

Attributes:
    control: the int64 control block (:mod:`mc_envs.agents.base`: stop flag, counters, budgets).
    best_score: ``[score]`` of the best complete sequence found so far.
    best_seq: its actions, ``best_seq[:best_len[0]]``.
    best_len: ``[length]``.
    max_score: a score that ends the search when reached (``1e300`` for none).
"""

# Game's two fields as the collaborators take them (see its docstring).
Slots: TypeAlias = "np.ndarray | EnvStates"
Scratch: TypeAlias = "np.ndarray | None"

# -- the collaborators: declared here, replaced by a binding ---------------------------------------


def _unbound(name: str) -> None:
    raise NotImplementedError(
        f"{name} is a search template's collaborator: bind the template with "
        "mc_envs.agents.ops.compiled_ops (then mc_envs._numba.instantiate) or mc_envs.agents.ops.bind_generic"
    )


def copy_state(states: Slots, dst: int, src: int) -> None:
    """Makes slot ``dst`` a copy of slot ``src``."""
    _unbound("copy_state")


def legal(states: Slots, i: int, ws: Scratch, out: np.ndarray) -> int:
    """Writes the legal actions of slot ``i``, sorted, into ``out[:n]``; returns ``n``."""
    _unbound("legal")
    return 0


def play(states: Slots, i: int, action: int, ws: Scratch) -> float:
    """Plays a legal ``action`` in slot ``i``; returns its reward."""
    _unbound("play")
    return 0.0


def playout(
    states: Slots,
    i: int,
    policy: int | PolicyFactory,
    rng: np.ndarray,
    ws: Scratch,
    seq: np.ndarray,
    start: int,
) -> int:
    """Plays slot ``i`` to the end with ``policy``, writing the actions to ``seq[start:]``;
    returns how many."""
    _unbound("playout")
    return 0


def score(states: Slots, i: int) -> float:
    """The cumulative score of slot ``i`` (one-player games)."""
    _unbound("score")
    return 0.0


def player(states: Slots, i: int) -> int:
    """The player to move in slot ``i`` (two-player games; 0 otherwise)."""
    _unbound("player")
    return 0


def returns(states: Slots, i: int) -> float:
    """At the end of a two-player game in slot ``i``: +1 player 0 won, -1 player 1 won, 0 draw."""
    _unbound("returns")
    return 0.0


def legal_codes(states: Slots, i: int, ws: Scratch, out: np.ndarray, codes: np.ndarray) -> int:
    """``legal``, also writing each action's move code (NRPA's policy key) into ``codes[:n]``."""
    _unbound("legal_codes")
    return 0


def select(states: Slots, i: int, moves: np.ndarray, codes: np.ndarray, n: int, key: int) -> int:
    """The game's selective move filter (:attr:`Kernel.select`): keeps ``m <= n`` moves and
    their codes in place; returns ``m``. ``key < 0`` keeps them all."""
    _unbound("select")
    return n


def bias(states: Slots, i: int, ws: Scratch, moves: np.ndarray, n: int, out: np.ndarray) -> None:
    """Writes the game's heuristic value of each of the ``n`` legal ``moves`` of slot ``i`` into
    ``out[:n]`` (:attr:`Kernel.bias`; GNRPA's bias, before its weight); zeros without one."""
    _unbound("bias")


def compute_prior(states: Slots, i: int, actions: np.ndarray, n: int, out: np.ndarray) -> None:
    """Writes a prior probability for each of the ``n`` legal ``actions`` of slot ``i``."""
    _unbound("compute_prior")


def observe(states: Slots, i: int, out: np.ndarray) -> None:
    """Writes the observation of slot ``i`` into ``out`` (the kernel's ``observe``; compiled
    binding only: the batched PUCT's leaves)."""
    _unbound("observe")


# -- compiled binding: states is a 2-D array, one game state per row ------------------------------
# Each collaborator is a template over the kernel's functions, by the names of the one table
# mc_envs.kernel.KernelBindings (k_legal, k_play ...), instantiated per kernel and inlined into
# the search that calls it: compiled as a function of its own, each one-line wrapper compiled
# again the kernel it calls (LLVM optimises every callee again in each caller's module), 0.8 to
# 1.6 CPU s a wrapper for Go's and SameGame's playouts.


def _copy_state(states, dst, src):
    # A loop, not a slice assignment: numba compiles a slice's shape check with its error
    # message's formatting, 0.9 s of every cold search's compilation
    to, of = states[dst], states[src]
    for j in range(to.shape[0]):
        to[j] = of[j]


def _legal(states, i, ws, out):
    return k_legal(states[i], ws, out)


def _play(states, i, action, ws):
    return k_play(states[i], action, ws)


def _playout(states, i, policy, rng, ws, seq, start):
    return k_playout(states[i], policy, rng, ws, seq, start)


def _score(states, i):
    return k_score(states[i])


def _player(states, i):
    return k_player(states[i])


def _returns(states, i):
    return k_returns(states[i])


def _legal_codes(states, i, ws, out, codes):
    return k_legal_codes(states[i], ws, out, codes)


def _select(states, i, moves, codes, n, key):
    return k_select(states[i], moves, codes, n, key)


def _bias(states, i, ws, moves, n, out):
    k_bias(states[i], moves, n, out, ws)


def _observe(states, i, out):
    k_observe(states[i], out)


def _prior(states, i, actions, n, out):
    k_prior(states[i], actions, n, out)


@njit(cache=True, nogil=True)
def uniform_prior(states, i, actions, n, out):
    """The uniform prior: ``1 / n`` for each of the ``n`` legal actions."""
    for k in range(n):
        out[k] = 1.0 / n


@njit(cache=True, nogil=True)
def first_player(states, i):
    """``player`` of one-player games."""
    return 0


@njit(cache=True, nogil=True)
def no_returns(states, i):
    """``returns`` of one-player games."""
    return 0.0


def compiled_ops(kernel: Kernel) -> Mapping[str, Any]:  # Any: see _ops
    """The numba bindings of every collaborator for ``kernel``, instances of the templates above
    over its table (:attr:`Kernel.bindings <mc_envs.kernel.Kernel.bindings>`).

    One-player kernels get ``player`` = 0 and ``returns`` = 0; kernels without a selective filter
    keep every move; ``compute_prior`` is uniform (:func:`prior_op` binds a kernel's own).
    """
    return _ops(kernel.name, kernel.bindings)


@functools.cache
def _ops(name: str, table: KernelBindings) -> Mapping[str, Any]:
    # Remembered: a search asks at every call (instantiate's memo: 11 look-ups, 25 us). Any:
    # spread as instantiate's bindings, whose values mypy would check against its bool options.
    bind = table._asdict()
    two = table.TWO_PLAYER
    return types.MappingProxyType(
        {
            "copy_state": instantiate(_copy_state, name, inline=True),
            "legal": instantiate(_legal, name, inline=True, **bind),
            "play": instantiate(_play, name, inline=True, **bind),
            "playout": instantiate(_playout, name, inline=True, **bind),
            "score": instantiate(_score, name, inline=True, **bind),
            "legal_codes": instantiate(_legal_codes, name, inline=True, **bind),
            "select": instantiate(_select, name, inline=True, **bind),
            "bias": instantiate(_bias, name, inline=True, **bind),
            "player": instantiate(_player, name, inline=True, **bind) if two else first_player,
            "returns": instantiate(_returns, name, inline=True, **bind) if two else no_returns,
            "observe": instantiate(_observe, name, inline=True, **bind),
            "compute_prior": uniform_prior,
        }
    )


def prior_op(kernel: Kernel, name: str, fn: Callable[..., object] | None = None) -> Dispatcher:
    """The ``compute_prior`` binding of a compiled prior: ``fn``, or the kernel's prior ``name``."""
    return instantiate(
        _prior, f"{kernel.name}_{name}", inline=True, k_prior=fn or kernel.priors[name]
    )


def compiled_states(env: gym.Env, slots: int) -> np.ndarray:
    """A store of ``slots`` states, every row a copy of the env's current state array."""
    return np.tile(unwrap(env).state_view, (slots, 1))


# -- generic binding: states is an EnvStates over the contract ------------------------------------


class EnvStates:
    """Slots of snapshots over one working env, restoring only when the slot in use changes.

    Args:
        env: an env implementing the planning-env contract (``unwrap(env)`` is used).
        slots: how many snapshots to hold; all start as the env's current state.
    """

    def __init__(self, env: gym.Env, slots: int) -> None:
        self.env = unwrap(env)
        root = self.env.clone_state()
        self.snap = [root] * slots
        self.live = 0  # the slot the env currently holds
        self.dirty = False

    def use(self, i: int) -> PlanningEnv:
        """The working env, holding slot ``i``."""
        if i != self.live:
            if self.dirty:
                self.snap[self.live] = self.env.clone_state()
            self.env.restore_state(self.snap[i])
            self.live = i
        self.dirty = True
        return self.env

    def copy(self, dst: int, src: int) -> None:
        """Makes slot ``dst`` a copy of slot ``src``."""
        if self.live == src and self.dirty:
            self.snap[src] = self.env.clone_state()
            self.dirty = False
        self.snap[dst] = self.snap[src]
        if self.live == dst:
            self.env.restore_state(self.snap[dst])
            self.dirty = False


def generic_policy(env: PlanningContract, policy: str | PolicyFactory | None) -> PolicyFactory:
    """The playout policy factory for the generic path: a callable as given, else the env's own
    policy of that name (``env.policy(name)``), else uniform random for ``None`` / ``"random"``."""
    if callable(policy):
        return policy
    if hasattr(env, "policy"):
        return env.policy(policy)
    if policy in (None, "random"):
        return random_policy
    raise ValueError(f"{type(env).__name__} has no playout policy {policy!r}: only 'random'")


def _py_copy_state(states: EnvStates, dst: int, src: int) -> None:
    states.copy(dst, src)


def _py_legal(states: EnvStates, i: int, ws: None, out: np.ndarray) -> int:
    actions = states.use(i).legal_actions()
    out[: len(actions)] = actions
    return len(actions)


def _py_play(states: EnvStates, i: int, action: int, ws: None) -> float:
    env = states.use(i)
    move = getattr(env, "play_move", None)  # a built-in env's: the move without an observation
    if move is not None:
        return float(move(int(action)))
    return float(env.step(int(action))[1])


def _py_playout(states, i, policy, rng, ws, seq, start):
    env = states.use(i)
    choose = policy(env)
    view = PlainRngView(rng)
    out = getattr(env, "play_out", None)  # a built-in env's: the moves without their checks
    if out is not None:
        return out(choose, view, seq, start)
    return playout_by_moves(env, getattr(env, "play_move", env.step), choose, view, seq, start)


def _py_score(states: EnvStates, i: int) -> float:
    return float(states.use(i).score)


def _py_legal_codes(states: EnvStates, i: int, ws: None, out: np.ndarray, codes: np.ndarray) -> int:
    env = states.use(i)
    listed = getattr(env, "legal_codes", None)  # a built-in env's: one kernel call
    if listed is not None:
        return int(listed(out, codes))
    n = _py_legal(states, i, ws, out)
    move_code = getattr(env, "move_code", None)
    for j in range(n):
        codes[j] = int(move_code(int(out[j]))) if move_code is not None else int(out[j])
    return n


def _py_select(states: EnvStates, i: int, moves, codes, n: int, key: int) -> int:
    if key < 0:
        return n
    return int(states.use(i).select_moves(moves, codes, n, key))


def _py_bias(states: EnvStates, i: int, ws: None, moves, n: int, out) -> None:
    env = states.use(i)
    move_bias = getattr(env, "move_bias", None)
    if move_bias is None:
        out[:n] = 0.0
    else:
        move_bias(moves, n, out)


def _py_player(states: EnvStates, i: int) -> int:
    return int(states.use(i).current_player)


def _py_returns(states: EnvStates, i: int) -> float:
    env = states.use(i)
    return float(env.returns()[0]) if hasattr(env, "returns") else 0.0


def _py_uniform_prior(states, i, actions, n, out):
    out[:n] = 1.0 / n


GENERIC_OPS = {
    "copy_state": _py_copy_state,
    "legal": _py_legal,
    "play": _py_play,
    "playout": _py_playout,
    "score": _py_score,
    "player": _py_player,
    "returns": _py_returns,
    "legal_codes": _py_legal_codes,
    "select": _py_select,
    "bias": _py_bias,
    "compute_prior": _py_uniform_prior,
    # The shared helpers as plain Python: a search that stands in on a cold cache
    # (mc_envs.agents.compile_ahead) must not wait for them to compile.
    "record": record.py_func,
    "count_playout": count_playout.py_func,
}


def bind_generic(
    template: Callable[..., object],
    *,
    plain: bool = False,
    keep: tuple = (),
    **bindings: object,
) -> types.FunctionType:
    """The template as a plain Python function over :data:`GENERIC_OPS` (and ``bindings``).

    ``plain``: the compiled helpers it calls (``record``, a policy table's updates ...) run as
    plain Python too (their ``py_func``: slower, the same results), so that it starts at once on
    a cold numba cache (:mod:`mc_envs.agents.compile_ahead`), except those in ``keep`` (its
    per-step helpers, worth compiling when they can be).
    """
    if not isinstance(template, types.FunctionType):
        raise TypeError(f"bind_generic takes a plain function, got {template!r}")
    namespace = dict(template.__globals__)
    namespace.update(GENERIC_OPS)
    if plain:
        _unjit(namespace, keep)
    namespace.update(bindings)
    fn = types.FunctionType(template.__code__, namespace, template.__name__, template.__defaults__)
    namespace[template.__name__] = fn
    return fn


# A numba function -> its plain Python twin (module-level: made once).
_PLAIN: dict[Dispatcher, Callable[..., Any]] = {}


def _unjit(namespace: dict[str, object], keep: tuple = ()) -> None:
    # the numba functions of a namespace as plain Python, and the ones they call, all the way down
    for name, value in list(namespace.items()):
        if isinstance(value, Dispatcher) and value not in keep:
            namespace[name] = plain_python(value)


def plain_python(fn: Dispatcher) -> Callable[..., Any]:  # Any: as the dispatcher's own call
    """``fn``'s Python code, its numba callees plain Python too, all the way down (made once)."""
    done = _PLAIN.get(fn)
    if done is not None:
        return done
    py = fn.py_func
    if py.__module__ == "mc_envs.rng" and py.__name__ in PLAIN_RNG:
        done = _PLAIN[fn] = PLAIN_RNG[py.__name__]  # the generator's draws, in plain Python
        return done
    namespace = dict(py.__globals__)
    done = _PLAIN[fn] = types.FunctionType(
        py.__code__, namespace, py.__name__, py.__defaults__, py.__closure__
    )  # kept before its callees are: a cycle ends here
    _unjit(namespace)
    return done


def move_bound(base: PlanningEnv) -> int:
    """An upper bound on the moves left: the kernel's, the env's or its spec's, else 100,000."""
    kernel = getattr(base, "kernel", None)
    if kernel is not None:
        return int(kernel.max_moves)
    for name in ("max_moves", "max_episode_steps"):
        value = getattr(base, name, None)
        if value:
            return int(value)
    spec = getattr(base, "spec", None)
    if spec is not None and spec.max_episode_steps:
        return int(spec.max_episode_steps)
    return 100_000
