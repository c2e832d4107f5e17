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
earlier positions), are in :mod:`mc_envs.games.go_layout`; its names are importable from here.
"""

from __future__ import annotations

import sys

import numpy as np

from mc_envs._numba import njit
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
    ON_BOARD,
    OVER,
    PASSES,
    PLAYER,
    POINT_OF,
    RESULT,
    SIZE,
    STRIDE,
    _remember,
    _sections,
    _srl,
    area,
    in_atari,
    lib_term,
    lowest_bit,
    popcount,
    seen_in,
)
from mc_envs.games.go_layout import check_config as check_config
from mc_envs.games.go_layout import new_state as new_state
from mc_envs.games.go_layout import observe as observe
from mc_envs.games.go_layout import offsets as offsets

# The header has PLAYER and RESULT where the bitboard games have them: their functions serve Go.
from mc_envs.games.two_player import player as player
from mc_envs.games.two_player import returns as returns
from mc_envs.games.two_player import score as score
from mc_envs.rng import rng_below

POLICIES = {"random": 0}
SUICIDE, LIVES, TAKES = 0, 1, 2  # what a stone on an empty point does


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
def put_stone(state: np.ndarray, pt: int, c: int) -> None:
    """Puts a stone of colour ``c`` on the empty point ``pt`` and merges it with its chains,
    updating liberties, the hash and the current board's bits; captures nothing."""
    s = state[STRIDE]
    p, w, head, captured, ring, table = _sections(state)
    nxt, stones, libs = head + p, head + 2 * p, head + 3 * p
    own = c + 1
    state[BOARD + pt] = own
    state[head + pt] = pt
    state[nxt + pt] = pt
    state[stones + pt] = 1
    mine = 0
    term = lib_term(pt)
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        v = state[BOARD + q]
        if v == EMPTY:
            mine += lib_term(q)
        elif v != OFF:
            state[libs + state[head + q]] -= term
    state[libs + pt] = mine
    h = pt
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        if state[BOARD + q] == own:
            other = state[head + q]
            if other != h:
                h = _merge(state, h, other, head)
    state[HASH] ^= KEYS[c, pt]
    slot = ring + (state[MOVES] % state[HISTORY]) * 2 * w + c * w + (pt >> 6)
    state[slot] |= np.int64(1) << (pt & 63)


@njit(cache=True, nogil=True)
def _capture(state, h, c):
    # Removes the chain of representative h (colour c); gives its points back as liberties to the
    # adjacent chains of the other colour; returns the stones removed.
    s = state[STRIDE]
    p, w, head, captured, ring, table = _sections(state)
    nxt, stones, libs = head + p, head + 2 * p, head + 3 * p
    taker = 2 - c
    slot = ring + (state[MOVES] % state[HISTORY]) * 2 * w + c * w
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
        state[captured + c * w + (x >> 6)] |= bit
        term = lib_term(x)
        for q in (x - s, x - 1, x + 1, x + s):
            if state[BOARD + q] == taker:
                state[libs + state[head + q]] += term
        x = after
        if x == h:
            break
    state[stones + h] = 0
    state[libs + h] = 0
    return removed


@njit(cache=True, nogil=True, inline="always")
def _side(state, q, own, head, libs):
    # What the neighbour q gives a stone of colour own - 1: 1 a liberty (empty, or an own chain
    # not in atari), 2 a capture (an opposing chain in atari), 0 neither.
    v = state[BOARD + q]
    if v == EMPTY:
        return 1
    if v == OFF:
        return 0
    atari = in_atari(state[libs + state[head + q]])
    if v == own:
        return 0 if atari else 1
    return 2 if atari else 0


@njit(cache=True, nogil=True, inline="always")
def _outcome(state, pt, head, libs):
    # What a stone of the player to move on the empty point pt does: SUICIDE, or LIVES (no
    # capture), or TAKES (captures). The four neighbours unrolled, without early exits: 40%
    # faster than a loop over them that returns at the first capture.
    s = state[STRIDE]
    own = state[PLAYER] + 1
    r = _side(state, pt - s, own, head, libs) | _side(state, pt - 1, own, head, libs)
    r |= _side(state, pt + 1, own, head, libs) | _side(state, pt + s, own, head, libs)
    if r & 2:
        return TAKES
    return LIVES if r else SUICIDE


@njit(cache=True, nogil=True)
def suicide(state: np.ndarray, pt: int) -> bool:
    """Whether a stone of the player to move on the empty point ``pt`` would be suicide."""
    p, w, head, captured, ring, table = _sections(state)
    return _outcome(state, pt, head, head + 3 * p) == SUICIDE


@njit(cache=True, nogil=True, inline="always")
def _atari_head(state, q, opp, head, libs):
    # The representative of the chain at q if it is of colour opp - 1 and in atari, else 0 (no
    # stone has representative 0: point 0 is off the board).
    if state[BOARD + q] != opp:
        return 0
    r = state[head + q]
    return r if in_atari(state[libs + r]) else 0


@njit(cache=True, nogil=True, inline="always")
def _chain_key(state, r, colour, nxt):
    # The XOR of the Zobrist keys of the stones of the chain of representative r (0: none).
    h = np.int64(0)
    if r == 0:
        return h
    x = r
    while True:
        h ^= KEYS[colour, x]
        x = state[nxt + x]
        if x == r:
            return h


@njit(cache=True, nogil=True, inline="always")
def _legal_at(state, pt, head, libs, captured, w, table):
    # is_legal_point with the sections given
    outcome = _outcome(state, pt, head, libs)
    if outcome == SUICIDE:
        return False
    c = state[PLAYER]
    if not (state[captured + c * w + (pt >> 6)] >> (pt & 63)) & 1:
        return True  # no stone of this colour was ever captured here: no earlier position
    h = state[HASH] ^ KEYS[c, pt]
    if outcome == TAKES:  # the hash after the captures: each captured chain's stones removed
        s = state[STRIDE]
        nxt = head + s * s
        opp = 2 - c
        r0 = _atari_head(state, pt - s, opp, head, libs)
        r1 = _atari_head(state, pt - 1, opp, head, libs)
        r2 = _atari_head(state, pt + 1, opp, head, libs)
        r3 = _atari_head(state, pt + s, opp, head, libs)
        h ^= _chain_key(state, r0, 1 - c, nxt)
        if r1 != r0:
            h ^= _chain_key(state, r1, 1 - c, nxt)
        if r2 != r0 and r2 != r1:
            h ^= _chain_key(state, r2, 1 - c, nxt)
        if r3 != r0 and r3 != r1 and r3 != r2:
            h ^= _chain_key(state, r3, 1 - c, nxt)
    return not seen_in(state, table, h)


@njit(cache=True, nogil=True)
def is_legal_point(state: np.ndarray, pt: int) -> bool:
    """Whether the player to move may play on point ``pt`` (empty): no suicide, no superko."""
    p, w, head, captured, ring, table = _sections(state)
    return _legal_at(state, pt, head, head + 3 * p, captured, w, table)


@njit(cache=True, nogil=True, inline="always")
def _legal_word(state, i, slot, w, mine_captured, head, libs, captured, table):
    # The legal points of word i (bits p of i * 64 .. i * 64 + 63) for the player to move: an
    # empty point with an empty neighbour where no stone of the mover's colour was ever captured
    # is legal at once; the other empty points are tested one by one.
    n, s = state[SIZE], state[STRIDE]
    lo = i - 1 if i > 0 else 0
    hi = i + 1 if i + 1 < w else w - 1
    e = ON_BOARD[n, i] & ~(state[slot + i] | state[slot + w + i])
    e_lo = ON_BOARD[n, lo] & ~(state[slot + lo] | state[slot + w + lo]) if i > 0 else 0
    e_hi = ON_BOARD[n, hi] & ~(state[slot + hi] | state[slot + w + hi]) if i + 1 < w else 0
    near = (e << 1) | _srl(e_lo, 63) | _srl(e, 1) | (e_hi << 63)
    near |= (e << s) | _srl(e_lo, 64 - s) | _srl(e, s) | (e_hi << (64 - s))
    easy = e & near & ~state[mine_captured + i]
    hard = e & ~easy
    once = state[mine_captured + i]
    plain = hard & ~once  # no earlier position to recreate: only suicide to test
    while plain:
        b = lowest_bit(plain)
        if _outcome(state, i * 64 + b, head, libs) != SUICIDE:
            easy |= np.int64(1) << b
        plain &= plain - 1
    hard &= once
    while hard:
        b = lowest_bit(hard)
        if _legal_at(state, i * 64 + b, head, libs, captured, w, table):
            easy |= np.int64(1) << b
        hard &= hard - 1
    return easy


@njit(cache=True, nogil=True)
def legal_words(state: np.ndarray, out: np.ndarray) -> int:
    """Writes the legal points of the player to move as W words of bits (bit p: point p) into
    ``out[:W]``; returns how many (the pass, always legal while the game goes on, not included)."""
    p, w, head, captured, ring, table = _sections(state)
    slot = ring + (state[MOVES] % state[HISTORY]) * 2 * w
    mine_captured = captured + state[PLAYER] * w
    count = 0
    for i in range(w):
        word = _legal_word(state, i, slot, w, mine_captured, head, head + 3 * p, captured, table)
        out[i] = word
        count += popcount(word)
    return count


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """Writes the legal actions, ascending (the pass last), into ``out``; none once the game is
    over. ``ws`` is not used."""
    if state[OVER]:
        return 0
    n = state[SIZE]
    p, w, head, captured, ring, table = _sections(state)
    slot = ring + (state[MOVES] % state[HISTORY]) * 2 * w
    mine_captured = captured + state[PLAYER] * w
    k = 0
    for i in range(w):
        word = _legal_word(state, i, slot, w, mine_captured, head, head + 3 * p, captured, table)
        while word:
            out[k] = ACTION_OF[n, i * 64 + lowest_bit(word)]
            k += 1
            word &= word - 1
    out[k] = n * n
    return k + 1


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
    h_ = state[HISTORY]
    if h_ > 1:  # the board after this move starts as a copy of the board before it
        src = ring + (state[MOVES] % h_) * 2 * w
        dst = ring + ((state[MOVES] + 1) % h_) * 2 * w
        for i in range(2 * w):
            state[dst + i] = state[src + i]
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


@njit(cache=True, nogil=True)
def playout(
    state: np.ndarray, policy: int, rng: np.ndarray, ws: np.ndarray, seq: np.ndarray, start: int
) -> int:
    """Plays to the end, each move drawn uniformly from the legal actions (the pass included), as
    ``legal(...)[rng_below(rng, n)]`` would; writes the actions into ``seq[start:]`` and returns
    how many."""
    n = state[SIZE]
    w = (state[STRIDE] * state[STRIDE] + 63) >> 6
    count = 0
    while not state[OVER]:
        k = rng_below(rng, legal_words(state, ws) + 1)
        a = n * n
        for i in range(w):
            word = ws[i]
            c = popcount(word)
            if k < c:
                for _ in range(k):
                    word &= word - 1
                a = ACTION_OF[n, i * 64 + lowest_bit(word)]
                break
            k -= c
        play(state, a, ws)
        seq[start + count] = a
        count += 1
    return count


@njit(cache=True, nogil=True)
def truncated(state: np.ndarray) -> bool:
    """Whether the game was stopped by the move cap (``max_moves``) rather than ended by two
    passes: over, and the last move not a second pass in a row."""
    return state[OVER] != 0 and state[PASSES] < 2


def workspace(state: np.ndarray) -> np.ndarray:
    """Scratch space: the legal points of a playout (W words of bits), room for a move list."""
    return np.zeros(int(state[SIZE]) ** 2 + 1, dtype=np.int64)


def make_kernel(size: int, max_moves: int) -> Kernel:
    """The compiled rules for boards of ``size`` with games of at most ``max_moves`` moves."""
    return Kernel.from_module(
        sys.modules[__name__],
        name="go",
        max_moves=max_moves,
        max_actions=int(size) ** 2 + 1,
        two_player=True,
        truncated=truncated,
    )
