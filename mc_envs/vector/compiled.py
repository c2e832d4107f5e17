"""The compiled batch step: one numba call advances every sub-env of a vector env.

The work of one sub-env is written once, in :func:`_range`'s loop over a range of sub-envs, over
a game's kernel functions bound as globals by :func:`mc_envs._numba.instantiate` (the table
:class:`mc_envs.kernel.KernelBindings`): the serial entry point. The parallel one
(:func:`_chunks`) runs that same compiled loop on chunks of the batch, one per thread
(``prange``, which numba runs on every core). One entry point does the three operations
(:data:`STEP`, :data:`RESET`, :data:`REFRESH`): each is compiled once, on its first call, and a
game's kernels are compiled into it once (compile time grows with every copy of inlined code, and
with every layer of compiled calls, whose code LLVM optimizes again in each caller).
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import prange, types
from numba.core import cgutils

from mc_envs._numba import instantiate, intrinsic, njit
from mc_envs.kernel import (
    TWO_PLAYER,
    Kernel,
    k_legal,
    k_observe,
    k_play,
    k_player,
    k_returns,
    k_score,
    k_truncated,
)
from mc_envs.rng import rng_below, rng_next

if TYPE_CHECKING:
    from numba.core.registry import CPUDispatcher

NO_OPPONENT, RANDOM_OPPONENT = 0, 1
STEP, RESET, REFRESH = 0, 1, 2  # what a call of the batch entry points does (``op``)
SCATTER_FROM = 512  # actions from which a returned mask row is written from the legal list
CHUNKS = 64  # chunks of a parallel call (numba spreads them over its threads)


class Buffers(NamedTuple):
    """What a vector env of N sub-envs holds between calls; L is the state length, A the actions,
    W the workspace length, M >= A the length of a legal list."""

    states: np.ndarray  # [N, L] game dtype: the sub-envs' flat state arrays
    ws: np.ndarray  # [N, W] each sub-env's kernel workspace
    legal: np.ndarray  # [N, M] int64: the legal actions of each state, n_legal[i] of them
    n_legal: np.ndarray  # [N] int64: 0 once the game is over
    masks: np.ndarray  # [N, A] bool: True exactly at the legal actions; all True once over
    obs: np.ndarray  # [N, ...] the observations (the observation space's shape and dtype)
    players: np.ndarray  # [N] int64: the player to move
    scores: np.ndarray  # [N] float64: the cumulative score (puzzles)
    rewards: np.ndarray  # [N] float64: the last step's rewards
    terminated: np.ndarray  # [N] bool
    illegal: np.ndarray  # [N] bool: the step's action was illegal (``illegal_action="terminate"``)
    autoreset: np.ndarray  # [N] bool: reset at the next step (Gymnasium's NEXT_STEP autoreset)
    opp_rng: np.ndarray  # [N, 1] uint64: the random opponent's generator (:mod:`mc_envs.rng`)
    seeds: np.ndarray  # [N, K] int64: the opponent seeds the next resets take
    seed_next: np.ndarray  # [N] int64: the index in seeds[i] of the next one
    cut: np.ndarray  # [N] bool: the step stopped the game at its move cap (Kernel.truncated):
    # truncated, not terminated, reward 0


# What a state decides: recomputed from the states by REFRESH, carried by a clone_state.
DERIVED = ("legal", "n_legal", "masks", "obs", "players", "scores")


class Config(NamedTuple):
    """A call's settings."""

    template: np.ndarray  # [L]: the state a reset starts from when use_template
    use_template: bool  # False: the caller has written the new states before the call
    illegal_reward: float  # the reward of an illegal action
    agent_player: int  # the agent's side against the opponent (an entry point's OPPONENT)


class Outputs(NamedTuple):
    """Where a STEP writes the arrays ``step`` returns, each chunk's rows in the same pass as its
    steps, on the same threads (a Morpion batch of 1,024 has 26 MB of them: copied apart after
    the step, they took 2 ms of a 2.9 ms step on one thread)."""

    masks: np.ndarray  # [N, A] bool, as Buffers.masks
    obs: np.ndarray  # [N, ...] as Buffers.obs
    copy: bool  # False: nothing is written (the buffers themselves are returned)


# -- the templates (compiled per game; plain Python until bound) ----------------------------------
OPPONENT = NO_OPPONENT  # bound per instance: the opponent's code is compiled only where it plays


def _copy_items_py(src, dst, start, stop):
    dst.reshape(-1)[start:stop] = src.reshape(-1)[start:stop]


@intrinsic(_copy_items_py)
def _copy_items(typingctx, src, dst, start, stop):
    # dst.flat[start:stop] = src.flat[start:stop] for C-contiguous arrays of one dtype, as one
    # memcpy: a copy loop (through reshape) took 0.2 s of numba's 0.86 s for a Connect Four
    # _range (the vectorized loops and reshape's checks, compiled anew for every game).
    ok = all(isinstance(a, types.Array) and a.layout == "C" for a in (src, dst))
    if not ok or src.dtype != dst.dtype:
        return None
    sig = types.void(src, dst, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, d, lo, hi = args
        data = [context.make_array(t)(context, builder, a).data for t, a in ((src, s), (dst, d))]
        width = context.get_abi_sizeof(context.get_data_type(src.dtype))
        at = [cgutils.gep(builder, ptr, lo) for ptr in data]
        cgutils.raw_memcpy(builder, at[1], at[0], builder.sub(hi, lo), width)
        return context.get_dummy_value()

    return sig, codegen


def _fill_bools_py(dst, start, stop, value):
    dst.reshape(-1)[start:stop] = value


@intrinsic(_fill_bools_py)
def _fill_bools(typingctx, dst, start, stop, value):
    # dst.flat[start:stop] = value for a C-contiguous bool array, as one memset (a loop as Python,
    # while the entry point runs as Python: 2 ms for a row of Morpion's 20,480 actions)
    if not (isinstance(dst, types.Array) and dst.layout == "C" and dst.dtype == types.boolean):
        return None
    sig = types.void(dst, types.intp, types.intp, types.boolean)

    def codegen(context, builder, signature, args):
        d, lo, hi, v = args
        data = context.make_array(dst)(context, builder, d).data
        byte = builder.zext(v, cgutils.int8_t)
        cgutils.memset(builder, cgutils.gep(builder, data, lo), builder.sub(hi, lo), byte)
        return context.get_dummy_value()

    return sig, codegen


def _mark_py(masks, row, moves, n, value):
    masks[row, moves[:n]] = value


@intrinsic(_mark_py)
def _mark(typingctx, masks, row, moves, n, value):
    # masks[row, moves[j]] = value for j < n (C-contiguous bool masks, int64 moves): a Go row's
    # 80 legal moves took 16 of the 37 us of a sub-env's step as a Python loop
    ok = isinstance(masks, types.Array) and masks.layout == "C" and masks.ndim == 2
    ok = ok and masks.dtype == types.boolean and isinstance(moves, types.Array)
    if not ok or moves.layout != "C" or moves.dtype != types.int64:
        return None
    sig = types.void(masks, types.intp, moves, types.intp, types.boolean)

    def codegen(context, builder, signature, args):
        m, r, mv, k, v = args
        table = context.make_array(masks)(context, builder, m)
        width = cgutils.unpack_tuple(builder, table.shape)[1]
        start = builder.mul(r, width)
        listed = context.make_array(moves)(context, builder, mv).data
        byte = builder.zext(v, cgutils.int8_t)
        with cgutils.for_range(builder, k) as loop:
            action = builder.load(cgutils.gep(builder, listed, loop.index))
            builder.store(byte, cgutils.gep(builder, table.data, builder.add(start, action)))
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _write_outputs(lo, hi, legal, n_legal, masks, obs, out_masks, out_obs):
    # rows lo..hi of the arrays step returns: the masks copied, or, from SCATTER_FROM actions,
    # each row cleared and set at its legal actions (no read of the internal row); the obs copied
    a = out_masks.shape[1]
    if a >= SCATTER_FROM:
        for i in range(lo, hi):
            _fill_bools(out_masks, i * a, (i + 1) * a, n_legal[i] == 0)
            _mark(out_masks, i, legal[i], n_legal[i], True)
    else:  # the rows are contiguous: copied as one run of bytes
        _copy_items(masks, out_masks, lo * a, hi * a)
    w = obs.size // obs.shape[0]
    _copy_items(obs, out_obs, lo * w, hi * w)


# One kernel, not per-sub-env helpers: numba's inlining copies each helper's IR (0.6 s more
# compilation at Connect Four), and a helper reading the buffers from their NamedTuple at each
# sub-env reference-counts every array there (steps 6x slower).
def _range(op, lo, hi, actions, where, buffers, config, outputs):  # pragma: no cover (compiled)
    # The serial entry point, and each chunk of the parallel one: op for sub-envs lo..hi (RESET:
    # those of `where`; STEP: with `actions`, writing `out`), each part of the work written once.
    # The three records come as plain tuples (numba types a NamedTuple argument in Python, 14 us
    # a call) and are named here.
    b, c, out = Buffers(*buffers), Config(*config), Outputs(*outputs)
    states, ws, legal, n_legal, masks = b.states, b.ws, b.legal, b.n_legal, b.masks
    players, scores, rewards = b.players, b.scores, b.rewards
    terminated, illegal, autoreset, cut = b.terminated, b.illegal, b.autoreset, b.cut
    for i in range(lo, hi):
        if op == RESET and not where[i]:
            continue
        resetting = op == RESET or (op == STEP and autoreset[i])
        stepping = op == STEP and not resetting
        action, n, mover, before = actions[i], n_legal[i], players[i], scores[i]
        if stepping and (n == 0 or not masks[i, action]):  # state, observation and mask stay
            rewards[i] = c.illegal_reward if n > 0 else 0.0
            terminated[i] = illegal[i] = autoreset[i] = True
            cut[i] = False
            continue
        # masks[i] is True exactly at legal[i, :n] (all True when n = 0): clearing those keeps
        # a row of Morpion's 20,480 actions from being cleared whole at every step
        a = masks.shape[1]
        s, w, moves = states[i], ws[i], legal[i]
        if n == 0:
            _fill_bools(masks, i * a, (i + 1) * a, False)
        _mark(masks, i, moves, n, False)
        if resetting and c.use_template:  # else the caller has written the new state
            _copy_items(c.template, s, 0, s.shape[0])
        if resetting and OPPONENT == RANDOM_OPPONENT:
            rng = b.opp_rng[i]
            rng[0] = np.uint64(b.seeds[i, b.seed_next[i]])
            b.seed_next[i] += 1
            rng[0] = rng_next(rng)  # mc_envs.rng.rng_state of that seed
        if stepping:
            k_play(s, action, w)
        if OPPONENT == RANDOM_OPPONENT and (stepping or (resetting and c.agent_player == 1)):
            m = k_legal(s, w, moves)
            if m > 0:
                k_play(s, moves[rng_below(b.opp_rng[i], m)], w)
        n = n_legal[i] = k_legal(s, w, moves)
        if n == 0:  # over: every action marked, as the single env's info["action_mask"]
            _fill_bools(masks, i * a, (i + 1) * a, True)
        _mark(masks, i, moves, n, True)
        k_observe(s, b.obs[i])
        players[i], scores[i] = k_player(s), k_score(s)
        ended = stepping and n == 0
        stop = ended and k_truncated(s)  # at the move cap: truncated
        if stepping and TWO_PLAYER:
            result = k_returns(s) if ended and not stop else 0.0
            rewards[i] = result if mover == 0 else -result
        elif stepping:
            rewards[i] = scores[i] - before
        elif resetting:
            rewards[i] = 0.0
        if stepping or resetting:
            terminated[i], autoreset[i], cut[i] = ended and not stop, ended, stop
            illegal[i] = False
    if op == STEP and out.copy:
        _write_outputs(lo, hi, legal, n_legal, masks, b.obs, out.masks, out.obs)


def _chunks(op, actions, where, b, c, out):  # pragma: no cover (compiled)
    # The parallel entry point: _range (not inlined, so that the per-sub-env code is compiled
    # into an ordinary loop and never into numba's parallel loop) over CHUNKS chunks.
    n = actions.shape[0]
    k = min(n, CHUNKS)
    for j in prange(k):
        _range(op, j * n // k, (j + 1) * n // k, actions, where, b, c, out)


Entry = Callable[..., None]


def serial_entry(kernel: Kernel, opponent: int = NO_OPPONENT) -> CPUDispatcher:
    """The serial entry point of ``kernel``'s batch with ``opponent`` (:data:`NO_OPPONENT` or
    :data:`RANDOM_OPPONENT`): ``entry(op, 0, n, actions, where, buffers, config, out)`` does
    ``op`` for sub-envs 0..n, built once per kernel and opponent.

    ``op`` is :data:`STEP` (each sub-env steps with ``actions[i]``, or resets where
    ``buffers.autoreset``, and the outputs are written to ``out``), :data:`RESET` (the sub-envs
    where ``where`` is True are reset) or :data:`REFRESH` (every derived buffer recomputed from
    the states, after a restore). ``buffers``, ``config`` and ``out`` are :class:`Buffers`,
    :class:`Config` and :class:`Outputs` as plain tuples (``tuple(record)``). Each argument has
    one type whatever ``op`` is, so that the entry point is compiled once.
    """
    name = kernel.name + ("_opponent" if opponent == RANDOM_OPPONENT else "")
    return instantiate(_range, name, OPPONENT=opponent, **kernel.bindings._asdict())


def parallel_entry(kernel: Kernel, opponent: int = NO_OPPONENT) -> CPUDispatcher:
    """The parallel entry point of ``kernel``'s batch: ``entry(op, actions, where, buffers,
    config, out)``, the serial entry point's work over all n sub-envs in chunks, on numba's
    threads."""
    name = kernel.name + ("_opponent" if opponent == RANDOM_OPPONENT else "")
    return instantiate(_chunks, name, parallel=True, _range=serial_entry(kernel, opponent))


def python_entry(kernel: Kernel, opponent: int = NO_OPPONENT) -> Entry:
    """The serial entry point's own code run as Python, with the same arguments: its loop over
    the sub-envs interpreted, the game's kernels it calls compiled (each call from Python
    compiles one on its first call, for the types the entry point passes). A cold large vector
    env steps with it while a child compiles the entry point (:class:`mc_envs.vector.cold.Split`):
    14 to 38 ms a step at N = 1,024, where compiling the entry point took 1.2 s (Connect Four)
    to 2.1 s (Go)."""
    code = serial_entry(kernel, opponent).py_func
    namespace = {**code.__globals__, "_write_outputs": _write_outputs.py_func}
    return FunctionType(code.__code__, namespace, code.__name__)
