"""Go: Tromp-Taylor rules as numba kernels over one flat state array.

An action is ``row * n + col`` (row 0 at the top, col 0 at the left) on an ``n x n`` board,
``5 <= n <= 19``; ``n * n`` is a pass. Black (player 0) moves first. A stone goes on an empty
point; the opponent's chains left without a liberty are captured, then the mover's own chain must
have one (suicide is illegal). Positional superko: a move that recreates any earlier whole-board
position (whoever was to move) is illegal; a pass is always legal. Two passes in a row end the
game. Tromp-Taylor area scoring: a player's stones plus the empty regions that reach only that
player's stones; White adds komi.

The move cap: the move (passes included) numbered ``max_moves`` stops the game too, and the kernel
scores that position by Tromp-Taylor like any end (``OVER``, ``RESULT``), so that playouts stop
there and searches value them. The cap is not a rule of Go: :func:`truncated` tells such a stop
from the end of the game, and the envs report it as a truncation (Gymnasium's
``truncated=True``, reward 0; PettingZoo's ``truncations``).

The state layout, and the kernels that only read it (the area, the observation, the table of
earlier positions), are in :mod:`mc_envs.games.go_layout`, and the legal moves in
:mod:`mc_envs.games.go_legal`; the public names of both are importable from here.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import types

from mc_envs._numba import njit, parts, twin
from mc_envs.core import Kernel
from mc_envs.games.go_layout import (
    ACTION_OF,
    BOARD,
    CAPTURES,
    EMPTY,
    HASH,
    HISTORY,
    KEYS,
    KOMI2,
    LAST,
    MAX_MOVES,
    MOVES,
    OFF,
    OVER,
    PASSES,
    PLAYER,
    POINT_OF,
    RESULT,
    SIZE,
    SLOT,
    STRIDE,
    _remember,
    _sections,
    area,
    in_atari,
    lib_term,
)
from mc_envs.games.go_layout import check_config as check_config
from mc_envs.games.go_layout import new_state as new_state
from mc_envs.games.go_layout import observe as observe
from mc_envs.games.go_layout import offsets as offsets
from mc_envs.games.go_legal import is_legal_point as is_legal_point
from mc_envs.games.go_legal import kth_point, legal_words
from mc_envs.games.go_legal import legal as legal
from mc_envs.games.go_legal import suicide as suicide
from mc_envs.games.go_policy import EYE, MOGO, RANDOM, choose, mogo_knowledge

# The header has PLAYER and RESULT where the bitboard games have them: their functions serve Go.
from mc_envs.games.two_player import player as player
from mc_envs.games.two_player import returns as returns
from mc_envs.games.two_player import score as score
from mc_envs.rng import rng_below

# The playout policies (see :mod:`mc_envs.games.go_policy`): uniform, the eye rule, MoGo's.
POLICIES = {"random": RANDOM, "eye": EYE, "mogo": MOGO}


@njit(cache=True, nogil=True)
def _merge(state, a, b, head):
    # Chains a and b (representatives) become one, under the larger one's representative.
    p = state[STRIDE] * state[STRIDE]
    stones, libs, nxt = head + 2 * p, head + 3 * p, head + p
    if state[stones + a] < state[stones + b]:
        a, b = b, a
    s = b
    while True:
        state[head + s] = a
        s = state[nxt + s]
        if s == b:
            break
    na, nb = state[nxt + a], state[nxt + b]
    state[nxt + a] = nb
    state[nxt + b] = na
    state[stones + a] += state[stones + b]
    state[libs + a] += state[libs + b]
    state[stones + b] = 0
    state[libs + b] = 0
    return a


@njit(cache=True, nogil=True)
def _paint(state, r, on, atari, nxt):
    # Sets (on) or clears the ATARI bits of the stones of the chain of representative r.
    x = r
    while True:
        bit = np.int64(1) << (x & 63)
        if on:
            state[atari + (x >> 6)] |= bit
        else:
            state[atari + (x >> 6)] &= ~bit
        x = state[nxt + x]
        if x == r:
            break


@njit(cache=True, nogil=True, inline="always")
def _marked(state, x, atari):
    # The ATARI bit of the stone at x.
    return (state[atari + (x >> 6)] >> (x & 63)) & 1


@njit(cache=True, nogil=True, inline="always")
def _sync(state, r, atari, nxt, libs):
    # Repaints the chain of representative r if its liberties changed its atari status.
    on = in_atari(state[libs + r])
    if on != (_marked(state, r, atari) == 1):
        _paint(state, r, on, atari, nxt)


@njit(cache=True, nogil=True)
def put_stone(state: np.ndarray, pt: int, c: int) -> None:
    """Puts a stone of colour ``c`` on the empty point ``pt`` and merges it with its chains,
    updating liberties, atari marks, the hash and the current board's bits; captures nothing
    (an opposing chain left without a liberty keeps its marks until :func:`_capture`)."""
    s = state[STRIDE]
    p, w, head, captured, ring, table = _sections(state)
    nxt, stones, libs, atari = head + p, head + 2 * p, head + 3 * p, head + 4 * p
    own = c + 1
    state[BOARD + pt] = own
    state[head + pt] = pt
    state[nxt + pt] = pt
    state[stones + pt] = 1
    mine = 0
    stale = 0  # an own chain merged here was marked in atari
    term = lib_term(pt)
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        v = state[BOARD + q]
        if v == EMPTY:
            mine += lib_term(q)
        elif v != OFF:
            state[libs + state[head + q]] -= term
            if v == own:
                stale |= _marked(state, q, atari)
    state[libs + pt] = mine
    h = pt
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        v = state[BOARD + q]
        if v == own:
            other = state[head + q]
            if other != h:
                h = _merge(state, h, other, head)
        elif v == 3 - own:
            r = state[head + q]
            if state[libs + r] != 0:
                _sync(state, r, atari, nxt, libs)
    if stale or in_atari(state[libs + h]):
        _paint(state, h, in_atari(state[libs + h]), atari, nxt)
    state[HASH] ^= KEYS[c, pt]
    slot = ring + state[SLOT] * 2 * w + c * w + (pt >> 6)
    state[slot] |= np.int64(1) << (pt & 63)


@njit(cache=True, nogil=True)
def _capture(state, h, c):
    # Removes the chain of representative h (colour c); gives its points back as liberties to the
    # adjacent chains of the other colour; returns the stones removed.
    s = state[STRIDE]
    p, w, head, captured, ring, table = _sections(state)
    nxt, stones, libs = head + p, head + 2 * p, head + 3 * p
    atari = head + 4 * p
    taker = 2 - c
    slot = ring + state[SLOT] * 2 * w + c * w
    removed = state[stones + h]
    x = h
    while True:
        after = state[nxt + x]
        state[BOARD + x] = EMPTY
        state[head + x] = 0
        state[nxt + x] = 0
        state[HASH] ^= KEYS[c, x]
        bit = np.int64(1) << (x & 63)
        state[slot + (x >> 6)] &= ~bit
        state[atari + (x >> 6)] &= ~bit
        state[captured + c * w + (x >> 6)] |= bit
        term = lib_term(x)
        for q in (x - s, x - 1, x + 1, x + s):
            if state[BOARD + q] == taker:
                r = state[head + q]
                state[libs + r] += term
                _sync(state, r, atari, nxt, libs)
        x = after
        if x == h:
            break
    state[stones + h] = 0
    state[libs + h] = 0
    return removed


@njit(cache=True, nogil=True)
def _finish(state):
    black, white = area(state)
    margin = 2 * (black - white) - state[KOMI2]
    state[OVER] = 1
    state[RESULT] = 1 if margin > 0 else (-1 if margin < 0 else 0)


@njit(cache=True, nogil=True)
def play(state: np.ndarray, action: int, ws: np.ndarray) -> float:
    """Plays the legal ``action`` for the player to move; returns, if it ended the game, the
    mover's result (+1 win, -1 loss, 0 draw), else 0.0."""
    n, s = state[SIZE], state[STRIDE]
    c = state[PLAYER]
    p, w, head, captured, ring, table = _sections(state)
    here = state[SLOT]
    after = here + 1 if here + 1 < state[HISTORY] else 0
    if after != here:  # the board after this move starts as a copy of the board before it
        src, dst = ring + here * 2 * w, ring + after * 2 * w
        for i in range(2 * w):
            state[dst + i] = state[src + i]
    state[SLOT] = after
    state[MOVES] += 1
    state[LAST] = action
    if action == n * n:
        state[PASSES] += 1
    else:
        state[PASSES] = 0
        pt = POINT_OF[n, action]
        put_stone(state, pt, c)
        libs = head + 3 * p
        opp = 2 - c
        for q in (pt - s, pt - 1, pt + 1, pt + s):
            if state[BOARD + q] == opp:
                r = state[head + q]
                if state[libs + r] == 0:
                    state[CAPTURES + c] += _capture(state, r, 1 - c)
        _remember(state, state[HASH])
    state[PLAYER] = 1 - c
    if state[PASSES] >= 2 or state[MOVES] >= state[MAX_MOVES]:
        _finish(state)
        r = state[RESULT]
        return float(r if c == 0 else -r)
    return 0.0


parts(play, (_finish, types.int64[::1]))


@njit(cache=True, nogil=True)
def playout(
    state: np.ndarray, policy: int, rng: np.ndarray, ws: np.ndarray, seq: np.ndarray, start: int
) -> int:
    """Plays to the end with the policy of code ``policy`` (:data:`POLICIES`); writes the actions
    into ``seq[start:]`` and returns how many. ``"random"`` draws each move uniformly from the
    legal actions (the pass included), as ``legal(...)[rng_below(rng, n)]`` would; the others
    play :func:`mc_envs.games.go_policy.choose`."""
    if policy == RANDOM:
        return _random_playout(state, rng, ws, seq, start)
    count = 0
    while not state[OVER]:
        a = choose(state, policy, rng, ws)
        play(state, a, ws)
        seq[start + count] = a
        count += 1
    return count


@njit(cache=True, nogil=True)
def _random_playout(state, rng, ws, seq, start):
    # The "random" policy's playout: a sixth of the whole one's compiling (no policy's knowledge).
    n = state[SIZE]
    w = (state[STRIDE] * state[STRIDE] + 63) >> 6
    count = 0
    while not state[OVER]:
        pt = kth_point(ws, w, rng_below(rng, legal_words(state, ws) + 1))
        a = n * n if pt < 0 else ACTION_OF[n, pt]
        play(state, a, ws)
        seq[start + count] = a
        count += 1
    return count


def _playout_twin(
    state: np.ndarray, policy: int, rng: np.ndarray, ws: np.ndarray, seq: np.ndarray, start: int
) -> int:
    # What a call of playout from Python runs while the cache lacks it: the "random" playout
    # compiled as soon as the cache has it, the others as Python.
    if int(policy) == RANDOM:
        return _random_playout(state, rng, ws, seq, start)
    return playout.py_func(state, policy, rng, ws, seq, start)


twin(playout, _playout_twin)
# The random playout's draw and pick: compiled by a cold env's child while it waits for the move
# that its parent compiles (see mc_envs.exercise), so that the playout then compiles alone, and
# the interpreted playout calls them compiled meanwhile.
parts(
    playout,
    (rng_below, types.uint64[::1], types.int64),
    (kth_point, types.int64[::1], types.int64, types.int64),
)


@njit(cache=True, nogil=True)
def truncated(state: np.ndarray) -> bool:
    """Whether the game was stopped by the move cap (``max_moves``) rather than ended by two
    passes: over, and the last move not a second pass in a row."""
    return state[OVER] != 0 and state[PASSES] < 2


def workspace(state: np.ndarray) -> np.ndarray:
    """Scratch space: the legal points of a playout (W words of bits), then room for a list of
    points (the policies' candidate moves)."""
    w = (int(state[STRIDE]) ** 2 + 63) // 64
    return np.zeros(w + int(state[SIZE]) ** 2 + 1, dtype=np.int64)


def make_kernel(size: int, max_moves: int) -> Kernel:
    """The compiled rules for boards of ``size`` with games of at most ``max_moves`` moves."""
    return Kernel.from_module(
        sys.modules[__name__],
        name="go",
        max_moves=max_moves,
        max_actions=int(size) ** 2 + 1,
        two_player=True,
        truncated=truncated,
        knowledge={"mogo": mogo_knowledge},
    )
