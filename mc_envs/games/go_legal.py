"""Go's legal moves (see :mod:`mc_envs.games.go` for the rules, :mod:`mc_envs.games.go_layout`
for the state): suicide read from the atari marks with word operations, and positional superko
looked up only where a repetition is possible.
"""

from __future__ import annotations

import numpy as np
from numba import types

from mc_envs._numba import njit, parts
from mc_envs.games.go_layout import (
    ACTION_OF,
    BOARD,
    EMPTY,
    HASH,
    KEYS,
    LAST,
    OFF,
    ON_BOARD,
    OVER,
    PLAYER,
    POINT_OF,
    SIZE,
    SLOT,
    STRIDE,
    _sections,
    _srl,
    atari_point,
    in_atari,
    lowest_bit,
    popcount,
    seen_in,
)

SUICIDE, LIVES, TAKES = 0, 1, 2  # what a stone on an empty point does


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


@njit(cache=True, nogil=True)
def _atari_head(state, q, opp, head, libs):
    # The representative of the chain at q if it is of colour opp - 1 and in atari, else 0 (no
    # stone has representative 0: point 0 is off the board).
    if state[BOARD + q] != opp:
        return 0
    r = state[head + q]
    return r if in_atari(state[libs + r]) else 0


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _repeats(state, pt, takes, head, libs, table):
    # Whether a stone of the player to move on pt (not a suicide; ``takes``: it captures)
    # recreates an earlier position: the hash after the move (and its captures) looked up.
    c = state[PLAYER]
    h = state[HASH] ^ KEYS[c, pt]
    if takes:  # the hash after the captures: each captured chain's stones removed
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
    return seen_in(state, table, h)


@njit(cache=True, nogil=True, inline="always")
def _legal_at(state, pt, head, libs, captured, w, table):
    # is_legal_point with the sections given
    outcome = _outcome(state, pt, head, libs)
    if outcome == SUICIDE:
        return False
    c = state[PLAYER]
    if not (state[captured + c * w + (pt >> 6)] >> (pt & 63)) & 1:
        return True  # no stone of this colour was ever captured here: no earlier position
    return not _repeats(state, pt, outcome == TAKES, head, libs, table)


@njit(cache=True, nogil=True)
def is_legal_point(state: np.ndarray, pt: int) -> bool:
    """Whether the player to move may play on point ``pt`` (empty): no suicide, no superko."""
    p, w, head, captured, ring, table = _sections(state)
    return _legal_at(state, pt, head, head + 3 * p, captured, w, table)


@njit(cache=True, nogil=True, inline="always")
def _open(state, n, j, mine, theirs, atari):
    # The points of word j that give a stone next to them a liberty or a capture: the empty
    # points, the mover's stones of chains not in atari, the opponent's of chains in atari.
    own, opp, marked = state[mine + j], state[theirs + j], state[atari + j]
    return (ON_BOARD[n, j] & ~(own | opp)) | (own & ~marked) | (opp & marked)


@njit(cache=True, nogil=True, inline="always")
def _suspects(state, head, captured, w):
    # Where a move may recreate an earlier position: -1 at every point where a stone of the
    # mover's colour was once captured, 0 nowhere, p > 0 at point p only. The opponent's stone
    # just played at q was not on q the move before, so an earlier position with a stone on q
    # can only be one from before a capture on q: if the opponent never lost a stone on q, only
    # a move that takes the stone at q (on its chain's last liberty, if in atari) can repeat one.
    n = state[SIZE]
    last = state[LAST]
    if last < 0 or last == n * n:
        return -1
    q = POINT_OF[n, last]
    opp = 1 - state[PLAYER]
    if state[BOARD + q] != opp + 1 or (state[captured + opp * w + (q >> 6)] >> (q & 63)) & 1:
        return -1
    libs = state[head + 3 * state[STRIDE] * state[STRIDE] + state[head + q]]
    return atari_point(libs) if in_atari(libs) else 0


@njit(cache=True, nogil=True, inline="always")
def _grab(state, j, theirs, atari):
    # The opponent's stones of chains in atari in word j.
    return state[theirs + j] & state[atari + j]


@njit(cache=True, nogil=True, inline="always")
def _legal_word(state, i, mine, theirs, w, mine_captured, head, captured, table, suspects):
    # The legal points of word i (bits p of i * 64 .. i * 64 + 63) for the player to move
    # (``mine``, ``theirs``: the current board's bits of each side): an empty point next to
    # an open one (:func:`_open`) is not a suicide; where no stone of the mover's colour was ever
    # captured it is legal at once, elsewhere its superko is tested one point at a time.
    n, s = state[SIZE], state[STRIDE]
    atari = head + 4 * (s * s)
    e = ON_BOARD[n, i] & ~(state[mine + i] | state[theirs + i])
    x = _open(state, n, i, mine, theirs, atari)
    x_lo = _open(state, n, i - 1, mine, theirs, atari) if i > 0 else 0
    x_hi = _open(state, n, i + 1, mine, theirs, atari) if i + 1 < w else 0
    near = (x << 1) | _srl(x_lo, 63) | _srl(x, 1) | (x_hi << 63)
    near |= (x << s) | _srl(x_lo, 64 - s) | _srl(x, s) | (x_hi << (64 - s))
    ok = e & near
    once = state[mine_captured + i]
    check = once  # suspects < 0: every point where the mover lost a stone
    if suspects == 0:
        check = 0
    elif suspects > 0:
        check &= np.int64(1) << (suspects & 63) if suspects >> 6 == i else 0
    legal = ok & ~check
    hard = ok & check
    if hard:  # the points next to an opponent's chain in atari: the moves that capture
        g = _grab(state, i, theirs, atari)
        g_lo = _grab(state, i - 1, theirs, atari) if i > 0 else 0
        g_hi = _grab(state, i + 1, theirs, atari) if i + 1 < w else 0
        takes = (g << 1) | _srl(g_lo, 63) | _srl(g, 1) | (g_hi << 63)
        takes |= (g << s) | _srl(g_lo, 64 - s) | _srl(g, s) | (g_hi << (64 - s))
        libs = head + 3 * s * s
    while hard:
        b = lowest_bit(hard)
        if not _repeats(state, i * 64 + b, (takes >> b) & 1, head, libs, table):
            legal |= np.int64(1) << b
        hard &= hard - 1
    return legal


@njit(cache=True, nogil=True)
def legal_words(state: np.ndarray, out: np.ndarray) -> int:
    """Writes the legal points of the player to move as W words of bits (bit p: point p) into
    ``out[:W]``; returns how many (the pass, always legal while the game goes on, not included)."""
    p, w, head, captured, ring, table = _sections(state)
    c = state[PLAYER]
    slot = ring + state[SLOT] * 2 * w
    mine, theirs = slot + c * w, slot + (1 - c) * w
    mine_captured = captured + c * w
    suspects = _suspects(state, head, captured, w)
    count = 0
    for i in range(w):
        word = _legal_word(
            state, i, mine, theirs, w, mine_captured, head, captured, table, suspects
        )
        out[i] = word
        count += popcount(word)
    return count


@njit(cache=True, nogil=True, inline="always")
def kth_point(ws, w, k):
    """The point of the ``k``-th set bit (from 0) of the words ``ws[:w]`` (:func:`legal_words`'),
    or -1 when fewer are set."""
    for i in range(w):
        word = ws[i]
        c = popcount(word)
        if k < c:
            for _ in range(k):
                word &= word - 1
            return i * 64 + lowest_bit(word)
        k -= c
    return -1


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """Writes the legal actions, ascending (the pass last), into ``out``; none once the game is
    over. ``ws[:W]`` gets the legal points as words (:func:`legal_words`)."""
    if state[OVER]:
        return 0
    n = state[SIZE]
    legal_words(state, ws)
    k = 0
    for i in range((state[STRIDE] * state[STRIDE] + 63) >> 6):
        word = ws[i]
        while word:
            out[k] = ACTION_OF[n, i * 64 + lowest_bit(word)]
            k += 1
            word &= word - 1
    out[k] = n * n
    return k + 1


# The superko test, a sixth of the legal moves' compiling: compiled first by the process that
# compiles the move (see mc_envs.interpret) while the other compiles the move's scoring.
parts(legal, (_repeats, types.int64[::1], *(types.int64,) * 5))
