"""The compiled batch step: one numba call advances every sub-env of a vector env.

The work of one sub-env is written once (:func:`_one`), over a game's kernel functions bound as
globals by :func:`mc_envs._numba.instantiate` (:class:`Bindings`), and lifted over the batch by
:func:`_range`, a loop over a range of sub-envs: the serial entry point. The parallel one
(:func:`_chunks`) runs that same compiled loop on chunks of the batch, one per thread
(``prange``, which numba runs on every core). One entry point does the three operations
(:data:`STEP`, :data:`RESET`, :data:`REFRESH`): each is compiled once, on its first call, and a
game's kernels are compiled into it once (compile time grows with every copy of inlined code, and
with every layer of compiled calls, whose code LLVM optimizes again in each caller).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import prange

from mc_envs._numba import instantiate, njit
from mc_envs.kernel import Kernel
from mc_envs.rng import rng_below, rng_next

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


# What a state decides: recomputed from the states by REFRESH, carried by a clone_state.
DERIVED = ("legal", "n_legal", "masks", "obs", "players", "scores")


class Config(NamedTuple):
    """A call's settings."""

    template: np.ndarray  # [L]: the state a reset starts from when use_template
    use_template: bool  # False: the caller has written the new states before the call
    illegal_reward: float  # the reward of an illegal action
    opponent: int  # NO_OPPONENT or RANDOM_OPPONENT
    agent_player: int  # the agent's side against the opponent


class Outputs(NamedTuple):
    """Where a STEP writes the arrays ``step`` returns, each chunk's rows in the same pass as its
    steps, on the same threads (a Morpion batch of 1,024 has 26 MB of them: copied apart after
    the step, they took 2 ms of a 2.9 ms step on one thread)."""

    masks: np.ndarray  # [N, A] bool, as Buffers.masks
    obs: np.ndarray  # [N, ...] as Buffers.obs
    copy: bool  # False: nothing is written (the buffers themselves are returned)


# -- the kernel-binding table --------------------------------------------------------------------
# The game's functions the templates call, by the global names the templates use (the names of
# mc_envs.agents.ops's table). Signatures (state: the game's 1-D state array, ws: its workspace):
LegalFn = Callable[[np.ndarray, np.ndarray, np.ndarray], int]  # (state, ws, out) -> n
PlayFn = Callable[[np.ndarray, int, np.ndarray], float]  # (state, action, ws) -> reward
ScoreFn = Callable[[np.ndarray], float]  # (state) -> cumulative score
ObserveFn = Callable[[np.ndarray, np.ndarray], None]  # (state, out) writes the observation
PlayerFn = Callable[[np.ndarray], int]  # (state) -> 0 or 1, the player to move
ReturnsFn = Callable[[np.ndarray], float]  # (state) -> +1, -1, 0 for player 0, at the end


class Bindings(NamedTuple):
    """The globals bound in each template's instance for one kernel (:func:`bindings`)."""

    k_legal: LegalFn
    k_play: PlayFn
    k_score: ScoreFn
    k_observe: ObserveFn
    k_player: PlayerFn  # one-player games: always 0
    k_returns: ReturnsFn  # one-player games: always 0.0
    TWO_PLAYER: bool  # rewards from k_returns at the end (else from the score's change)


@njit(cache=True, nogil=True)
def _first_player(state: np.ndarray) -> int:
    return 0


@njit(cache=True, nogil=True)
def _no_returns(state: np.ndarray) -> float:
    return 0.0


def bindings(kernel: Kernel) -> Bindings:
    """The table of ``kernel``'s functions, with the one-player defaults.

    Raises:
        ValueError: the kernel has no ``observe`` function (a game that cannot run compiled).
    """
    if kernel.observe is None:
        raise ValueError(f"kernel {kernel.name!r} has no observe function to batch")
    two = kernel.player is not None
    return Bindings(
        k_legal=kernel.legal,
        k_play=kernel.play,
        k_score=kernel.score,
        k_observe=kernel.observe,
        k_player=kernel.player if two else _first_player,
        k_returns=kernel.returns if two else _no_returns,
        TWO_PLAYER=two,
    )


# The names of Bindings, bound per game by instantiate; these keep the module importable.
k_legal = k_play = k_score = k_observe = k_player = k_returns = None
TWO_PLAYER = False


# -- the templates (compiled per game; plain Python until bound) ----------------------------------


@njit(cache=True, nogil=True, inline="always")
def _unmark(i, b):
    # masks[i] is True exactly at legal[i, :n_legal[i]] (all True when there are none): clearing
    # those keeps a row of Morpion's 20,480 actions from being cleared whole at every step.
    # Called before anything writes legal[i].
    n = b.n_legal[i]
    if n == 0:
        for j in range(b.masks.shape[1]):
            b.masks[i, j] = False
    for j in range(n):
        b.masks[i, b.legal[i, j]] = False


def _refresh(i, b):  # pragma: no cover (compiled)
    # after _unmark(i, b): every derived buffer of sub-env i from its state
    s, legal, mask = b.states[i], b.legal[i], b.masks[i]
    n = k_legal(s, b.ws[i], legal)
    b.n_legal[i] = n
    if n == 0:  # the game is over: every action marked, as the single env's info["action_mask"]
        for j in range(mask.shape[0]):
            mask[j] = True
    for j in range(n):
        mask[legal[j]] = True
    k_observe(s, b.obs[i])
    b.players[i] = k_player(s)
    b.scores[i] = k_score(s)
    return n


def _opponent_move(i, b):  # pragma: no cover (compiled)
    s, ws, legal = b.states[i], b.ws[i], b.legal[i]
    n = k_legal(s, ws, legal)
    if n > 0:
        k_play(s, legal[rng_below(b.opp_rng[i], n)], ws)


def _begin_reset(i, b, c):  # pragma: no cover (compiled)
    # after _unmark(i, b): the new state (the template's, or the caller's) and opponent seed
    if c.use_template:
        s, t = b.states[i], c.template
        for j in range(t.shape[0]):  # a loop: a slice assignment compiles numba's shape check
            s[j] = t[j]
    if c.opponent == RANDOM_OPPONENT:
        rng = b.opp_rng[i]
        rng[0] = np.uint64(b.seeds[i, b.seed_next[i]])
        b.seed_next[i] += 1
        rng[0] = rng_next(rng)  # mc_envs.rng.rng_state of that seed


def _refused(i, action, b, c):  # pragma: no cover (compiled)
    # an illegal action (or a step after the end): the state, observation and mask stay
    over = b.n_legal[i] == 0
    if not over and b.masks[i, action]:
        return False
    b.rewards[i] = 0.0 if over else c.illegal_reward
    b.terminated[i] = True
    b.illegal[i] = True
    b.autoreset[i] = True
    return True


def _one(op, i, action, b, c):  # pragma: no cover (compiled)
    # One sub-env's STEP (or the reset that an autoreset makes of it), RESET or REFRESH, written
    # so that each part of the work appears once in the compiled code.
    resetting = op == RESET or (op == STEP and b.autoreset[i])
    stepping = op == STEP and not resetting
    if stepping and _refused(i, action, b, c):
        return
    mover, before = b.players[i], b.scores[i]
    _unmark(i, b)
    if resetting:
        _begin_reset(i, b, c)
    elif stepping:
        k_play(b.states[i], action, b.ws[i])
    if c.opponent == RANDOM_OPPONENT and (stepping or (resetting and c.agent_player == 1)):
        _opponent_move(i, b)
    over = _refresh(i, b) == 0
    if resetting:
        b.rewards[i] = 0.0
        b.terminated[i] = b.illegal[i] = b.autoreset[i] = False
    elif stepping:
        if TWO_PLAYER:
            result = k_returns(b.states[i]) if over else 0.0
            b.rewards[i] = result if mover == 0 else -result
        else:
            b.rewards[i] = b.scores[i] - before
        b.terminated[i] = b.autoreset[i] = over
        b.illegal[i] = False


@njit(cache=True, nogil=True, inline="always")
def _copy(src, dst, start, stop):
    # src[start:stop] into dst: a loop from 0 over views, so that numba knows its index is not
    # negative (no wraparound test, and the loop vectorizes); a slice assignment would copy src
    # to a temporary first.
    s, d = src[start:stop], dst[start:stop]
    for k in range(s.shape[0]):
        d[k] = s[k]


@njit(cache=True, nogil=True, inline="always")
def _write_outputs(lo, hi, b, out):
    # rows lo..hi of the arrays step returns: the masks copied, or, from SCATTER_FROM actions,
    # each row cleared and set at its legal actions (no read of the internal row); the obs copied
    a = out.masks.shape[1]
    if a >= SCATTER_FROM:
        for i in range(lo, hi):
            out.masks[i, :] = b.n_legal[i] == 0
            for j in range(b.n_legal[i]):
                out.masks[i, b.legal[i, j]] = True
    else:  # the rows are contiguous: copied as one run of bytes
        _copy(b.masks.reshape(b.masks.size), out.masks.reshape(out.masks.size), lo * a, hi * a)
    w = b.obs.size // b.obs.shape[0]
    _copy(b.obs.reshape(b.obs.size), out.obs.reshape(out.obs.size), lo * w, hi * w)


def _range(op, lo, hi, actions, where, b, c, out):  # pragma: no cover (compiled)
    # The serial entry point, and each chunk of the parallel one: sub-envs lo..hi. RESET touches
    # those of `where` only; STEP reads `actions` and writes `out`.
    for i in range(lo, hi):
        if op != RESET or where[i]:
            _one(op, i, actions[i], b, c)
    if op == STEP and out.copy:
        _write_outputs(lo, hi, b, out)


def _chunks(op, actions, where, b, c, out):  # pragma: no cover (compiled)
    # The parallel entry point: _range (not inlined, so that the per-sub-env code is compiled
    # into an ordinary loop and never into numba's parallel loop) over CHUNKS chunks.
    n = actions.shape[0]
    k = min(n, CHUNKS)
    for j in prange(k):
        _range(op, j * n // k, (j + 1) * n // k, actions, where, b, c, out)


Entry = Callable[..., None]
_serial: dict[str, Entry] = {}
_parallel: dict[str, Entry] = {}


def serial_entry(kernel: Kernel) -> Entry:
    """The serial entry point of ``kernel``'s batch: ``entry(op, 0, n, actions, where, buffers,
    config, out)`` does ``op`` for sub-envs 0..n (the module docstring), built once per kernel.

    ``op`` is :data:`STEP` (each sub-env steps with ``actions[i]``, or resets where
    ``buffers.autoreset``, and the outputs are written to ``out``), :data:`RESET` (the sub-envs
    where ``where`` is True are reset) or :data:`REFRESH` (every derived buffer recomputed from
    the states, after a restore). Each argument has one type whatever ``op`` is, so that the
    entry point is compiled once.

    Raises:
        ValueError: the kernel has no ``observe`` function (a game that cannot run compiled).
    """
    if kernel.name not in _serial:
        bound = bindings(kernel)._asdict()
        parts = {f.__name__: instantiate(f, kernel.name, inline=True, **bound) for f in _PARTS}
        one = instantiate(_one, kernel.name, inline=True, **bound, **parts)
        _serial[kernel.name] = instantiate(_range, kernel.name, _one=one)
    return _serial[kernel.name]


_PARTS = (_refresh, _opponent_move, _begin_reset, _refused)


def parallel_entry(kernel: Kernel) -> Entry:
    """The parallel entry point of ``kernel``'s batch: ``entry(op, actions, where, buffers,
    config, out)``, the serial entry point's work over all n sub-envs in chunks, on numba's
    threads."""
    if kernel.name not in _parallel:
        ranges = serial_entry(kernel)
        _parallel[kernel.name] = instantiate(_chunks, kernel.name, parallel=True, _range=ranges)
    return _parallel[kernel.name]
