"""The state operations a search is written against, in two bindings.

Each search algorithm is written once, as a plain Python function that touches game states only
through ``copy_state``, ``legal``, ``play``, ``playout`` and ``score`` (and, for two-player games,
``player`` and ``returns``; for NRPA, ``code`` and ``legal_codes``), always by slot index into a ``states`` store. Bound to the numba wrappers
of a game's :class:`~mc_envs.core.Kernel` and compiled, it is the fast path; bound to
:class:`EnvStates` it runs in plain Python over any env that implements the planning-env contract.
The tests check that both bindings give the same result for a seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.core import Kernel, random_policy
from mc_envs.rng import Rng

# -- compiled binding: states is a 2-D array, one game state per row ------------------------------


def _copy_state(states, dst, src):
    states[dst, :] = states[src, :]


def _legal(states, i, ws, out):
    return k_legal(states[i], ws, out)  # noqa: F821 (bound per kernel)


def _play(states, i, action, ws):
    return k_play(states[i], action, ws)  # noqa: F821


def _playout(states, i, policy, rng, ws, seq, start):
    return k_playout(states[i], policy, rng, ws, seq, start)  # noqa: F821


def _score(states, i):
    return k_score(states[i])  # noqa: F821


def _player(states, i):
    return k_player(states[i])  # noqa: F821


def _returns(states, i):
    return k_returns(states[i])  # noqa: F821


def _code(states, i, action, ws):
    return k_code(states[i], action, ws)  # noqa: F821


def _legal_codes(states, i, ws, out, codes):
    return k_legal_codes(states[i], ws, out, codes)  # noqa: F821


def _legal_then_codes(s, ws, out, codes):
    """The default ``legal_codes``: ``legal``, then ``code`` for every action."""
    n = k_legal(s, ws, out)  # noqa: F821
    for j in range(n):
        codes[j] = k_code(s, out[j], ws)  # noqa: F821
    return n


@njit(cache=True, nogil=True)
def action_code(state, action, ws):
    """The default move code (NRPA): the action itself."""
    return np.int64(action)


_compiled_ops: dict[str, dict[str, Any]] = {}


def compiled_ops(kernel: Kernel) -> dict[str, Any]:
    """The numba bindings of the state operations for ``kernel`` (built once per kernel)."""
    ops = _compiled_ops.get(kernel.name)
    if ops is None:
        bind = {
            "k_legal": kernel.legal,
            "k_play": kernel.play,
            "k_playout": kernel.playout,
            "k_score": kernel.score,
            "k_code": kernel.code if getattr(kernel, "code", None) is not None else action_code,
        }
        if kernel.player is not None:
            bind["k_player"] = kernel.player
            bind["k_returns"] = kernel.returns
        bind["k_legal_codes"] = (
            kernel.legal_codes
            if kernel.legal_codes is not None
            else instantiate(_legal_then_codes, kernel.name, **bind)
        )
        ops = {
            "copy_state": instantiate(_copy_state, kernel.name),
            "legal": instantiate(_legal, kernel.name, **bind),
            "play": instantiate(_play, kernel.name, **bind),
            "playout": instantiate(_playout, kernel.name, **bind),
            "score": instantiate(_score, kernel.name, **bind),
            "code": instantiate(_code, kernel.name, **bind),
            "legal_codes": instantiate(_legal_codes, kernel.name, **bind),
        }
        if kernel.player is not None:
            ops["player"] = instantiate(_player, kernel.name, **bind)
            ops["returns"] = instantiate(_returns, kernel.name, **bind)
        _compiled_ops[kernel.name] = ops
    return ops


def compiled_states(env: Any, slots: int) -> np.ndarray:
    """A store of ``slots`` states, every row a copy of the env's current state array."""
    row = env.unwrapped._state
    return np.tile(row, (slots, 1))


# -- generic binding: states is an EnvStates over the contract ------------------------------------


class EnvStates:
    """Slots of snapshots over one working env, restoring only when the slot in use changes.

    Args:
        env: an env implementing the planning-env contract (``env.unwrapped`` is used).
        slots: how many snapshots to hold; all start as the env's current state.
    """

    def __init__(self, env: Any, slots: int) -> None:
        self.env = env.unwrapped
        root = self.env.clone_state()
        self.snap = [root] * slots
        self.live = 0  # the slot the env currently holds
        self.dirty = False

    def use(self, i: int) -> Any:
        """The working env, holding slot ``i``."""
        if i != self.live:
            if self.dirty:
                self.snap[self.live] = self.env.clone_state()
            self.env.restore_state(self.snap[i])
            self.live = i
        self.dirty = True
        return self.env

    def copy(self, dst: int, src: int) -> None:
        if self.live == src and self.dirty:
            self.snap[src] = self.env.clone_state()
            self.dirty = False
        self.snap[dst] = self.snap[src]
        if self.live == dst:
            self.env.restore_state(self.snap[dst])
            self.dirty = False


def generic_policy(env: Any, policy: Any) -> Any:
    """The playout policy factory for the generic path: a callable as given, else the env's own
    policy of that name (``env.policy(name)``), else uniform random for ``None`` / ``"random"``."""
    if callable(policy):
        return policy
    if hasattr(env, "policy"):
        return env.policy(policy)
    if policy in (None, "random"):
        return random_policy
    raise ValueError(f"{type(env).__name__} has no playout policy {policy!r}: only 'random'")


class _RngView(Rng):
    """An :class:`Rng` sharing an existing state array."""

    def __init__(self, state: np.ndarray) -> None:  # noqa: D107
        self.state = state


def _py_copy_state(states: EnvStates, dst: int, src: int) -> None:
    states.copy(dst, src)


def _py_legal(states: EnvStates, i: int, ws: Any, out: np.ndarray) -> int:
    actions = states.use(i).legal_actions()
    out[: len(actions)] = actions
    return len(actions)


def _py_play(states: EnvStates, i: int, action: int, ws: Any) -> float:
    return float(states.use(i).step(int(action))[1])


def _py_playout(states, i, policy, rng, ws, seq, start):
    env = states.use(i)
    choose = policy(env)
    view = _RngView(rng)
    n = 0
    actions = env.legal_actions()
    while len(actions):
        a = int(choose(actions, view))
        env.step(a)
        seq[start + n] = a
        n += 1
        actions = env.legal_actions()
    return n


def _py_score(states: EnvStates, i: int) -> float:
    return float(states.use(i).score)


def _py_code(states: EnvStates, i: int, action: int, ws: Any) -> int:
    env = states.use(i)
    move_code = getattr(env, "move_code", None)
    return int(move_code(int(action))) if move_code is not None else int(action)


def _py_legal_codes(states: EnvStates, i: int, ws: Any, out: np.ndarray, codes: np.ndarray) -> int:
    n = _py_legal(states, i, ws, out)
    for j in range(n):
        codes[j] = _py_code(states, i, out[j], ws)
    return n


def _py_player(states: EnvStates, i: int) -> int:
    return int(states.use(i).current_player)


def _py_returns(states: EnvStates, i: int) -> float:
    env = states.use(i)
    return float(env.returns()[0]) if hasattr(env, "returns") else 0.0


GENERIC_OPS = {
    "copy_state": _py_copy_state,
    "legal": _py_legal,
    "play": _py_play,
    "playout": _py_playout,
    "score": _py_score,
    "player": _py_player,
    "returns": _py_returns,
    "code": _py_code,
    "legal_codes": _py_legal_codes,
}


def bind_generic(template: Any, **bindings: Any) -> Any:
    """The template as a plain Python function over :data:`GENERIC_OPS` (and ``bindings``)."""
    import types

    namespace = dict(template.__globals__)
    namespace.update(GENERIC_OPS)
    namespace.update(bindings)
    fn = types.FunctionType(template.__code__, namespace, template.__name__, template.__defaults__)
    namespace[template.__name__] = fn
    return fn


def move_bound(base: Any) -> int:
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
