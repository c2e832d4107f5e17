"""Morpion Solitaire 5D and 5T: the rules as numba kernels, with incremental legal-move upkeep.

A move adds one dot and draws a line of 5 consecutive dots (4 unit segments) through it, in one of
4 directions; the other 4 dots of the line must already exist. 5T: no unit segment may be used
twice (parallel lines may share an end dot). 5D: parallel lines may not share any dot (touching end
to end is forbidden too). The game starts from the standard 36-dot cross; score = number of moves.

Coordinates: ``x`` to the right, ``y`` downward (as PentaSol). Directions and unit steps::

    0 H  (1, 0)   "-"
    1 V  (0, 1)   "|"
    2 DN (1, 1)   "\\"     MSR's DN
    3 DP (1, -1)  "/"      MSR's DP

A line is its *start* (its dot of smallest x, or smallest y for V) and direction: dots
``start + i * step``, ``i = 0..4``.
Action encoding (one Discrete index)::

    action = (cell * 4 + direction) * 5 + pos        cell = y * size + x  (the new dot)

``pos`` (0..4) is the index of the new dot along the line, so the line starts at
``(x, y) - pos * (dx, dy)``. The space has ``20 * size * size`` actions. Each legal move has exactly
one encoding: a line with 4 dots has exactly one missing dot, which is the new one.

State layout (one flat int32 array)::

    index          content
    0              variant: 0 = 5T, 1 = 5D
    1              size (the grid is size x size dots)
    2              moves played so far (= the score)
    3              number of legal moves
    4..7           bounding box of the dots: x0, y0, x1, y1 (every new dot lies within 4 of it)
    8 + y*size + x the cell (x, y), a bit field:
                     bit 0         a dot
                     bits 1..4     SEG[d]: the unit segment from this dot to the next one in
                                   direction d is drawn
                     bits 8..27    MOVES: bit 8 + d*5 + pos is set when (this cell, d, pos) is a
                                   legal move, i.e. this cell is the new dot of a legal line
    8 + size*size  the row masks, ``words(size)`` per row: bit x % 31 of word
      + y*W + x//31  x // 31 of row y is set when cell (x, y) has a legal move

The legal moves live in the cells, so copying the array is enough to continue a game exactly, and
``legal`` lists them sorted by visiting, row by row, only the cells that the row masks name. After a
move only nearby cells change: the new dot's own moves are cleared, moves on parallel lines
overlapping the new line are cleared, and the (at most 20) lines through the new dot are tested. A
playout draws ``actions[rng_below(rng, n)]`` from the sorted legal actions, exactly as a generic
search over ``legal`` would: the sorted order is the cells' order, so it finds the k-th action from
the number of legal moves per row, which it keeps in ``ws`` (``ws[y]``, updated by the same
changes).
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import Kernel
from mc_envs.games.morpion_layout import (
    DOT,
    H_MOVES,
    H_NLEGAL,
    H_SIZE,
    H_VARIANT,
    H_X0,
    H_X1,
    H_Y0,
    H_Y1,
    HEADER,
    MOVE_BITS,
    MOVE_SHIFT,
    SEG_SHIFT,
    legal,
    mark_cell,
    observe,
    window,
    words,
)
from mc_envs.rng import rng_below

VARIANTS = ("5T", "5D")
DIRECTION_NAMES = ("H", "V", "DN", "DP")
DX = (1, 0, 1, 1)
DY = (0, 1, 1, -1)
DEFAULT_SIZE = 32
MIN_SIZE = 12

# Proven bounds on a game from the cross: 5D 121 (Kawamura 2017), 5T 705 (Demaine et al. 2006).
MAX_MOVES = {"5D": 121, "5T": 705}

# The 36 dots of the standard cross, in the MSR frame (0..9 on both axes).
CROSS = tuple(
    [(x, y) for y in (0, 9) for x in range(3, 7)]
    + [(x, y) for y in (3, 6) for x in (0, 1, 2, 3, 6, 7, 8, 9)]
    + [(x, y) for x in (0, 9) for y in (4, 5)]
    + [(x, y) for x in (3, 6) for y in (1, 2, 7, 8)]
)


def cross_origin(size: int) -> tuple[int, int]:
    """The grid position of the cross's corner (MSR point (0, 0)): the cross sits in the middle."""
    o = (size - 10) // 2
    return o, o


def encode(x: int, y: int, direction: int, pos: int, size: int) -> int:
    """The action of the move whose new dot is grid point ``(x, y)``."""
    return ((y * size + x) * 4 + direction) * 5 + pos


def decode(action: int, size: int) -> tuple[int, int, int, int]:
    """``(x, y, direction, pos)`` of an action (grid coordinates)."""
    cell, rest = divmod(int(action), 20)
    direction, pos = divmod(rest, 5)
    y, x = divmod(cell, size)
    return x, y, direction, pos


# -- kernels ----------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _step(d, g):
    if d == 0:
        return 1
    if d == 1:
        return g
    if d == 2:
        return g + 1
    return 1 - g


@njit(cache=True, nogil=True)
def _dxy(d):
    if d == 0:
        return 1, 0
    if d == 1:
        return 0, 1
    if d == 2:
        return 1, 1
    return 1, -1


@njit(cache=True, nogil=True)
def _line_missing(state, sx, sy, d):
    """Tests the line from grid point (sx, sy) in direction d: returns the position (0..4) of its
    only missing dot when it is a legal move, else -1."""
    g = state[H_SIZE]
    dx, dy = _dxy(d)
    if sx < 0 or sy < 0 or sx >= g or sy >= g:
        return -1
    ex = sx + 4 * dx
    ey = sy + 4 * dy
    if ex < 0 or ey < 0 or ex >= g or ey >= g:
        return -1
    off = _step(d, g)
    base = HEADER + sy * g + sx
    segbit = 1 << (SEG_SHIFT + d)
    missing = -1
    for i in range(5):
        v = state[base + i * off]
        if v & DOT == 0:
            if missing >= 0:
                return -1
            missing = i
        if i < 4 and v & segbit:
            return -1
    if missing < 0:
        return -1
    if state[H_VARIANT] == 1:
        # 5D: no dot of the line may lie on a drawn parallel line, i.e. no drawn segment of
        # direction d may end at the dot before the start or leave the last dot.
        px = sx - dx
        py = sy - dy
        if px >= 0 and py >= 0 and px < g and py < g and state[base - off] & segbit:
            return -1
        if state[base + 4 * off] & segbit:
            return -1
    return missing


@njit(cache=True, nogil=True)
def _popcount(x):
    x = np.int64(x)  # as numba computes it (numpy's int32 scalars would overflow when interpreted)
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return (x * 0x01010101 & 0xFFFFFFFF) >> 24


# A compiled kernel longer than 60 lines on purpose: it runs at every move of every playout, and
# its scans of the new line's neighbourhood share the locals it computes; helpers would cost a
# call and a specialisation each. ``track`` is a constant at each call: one specialisation each.
@njit(cache=True, nogil=True, constants=True)
def _apply(state, action, rows, track):
    """Plays a legal action in place. ``track`` (a random playout, which plays to the end) keeps
    ``rows[y]``, the number of legal moves whose new dot is on row y, up to date instead of the row
    masks; the playout clears the masks when the game is over."""
    g = state[H_SIZE]
    cell = action // 20
    d = (action // 5) % 4
    p = action % 5
    cx = cell % g
    cy = cell // g
    dx, dy = _dxy(d)
    off = _step(d, g)
    start = cell - p * off
    sx = cx - p * dx
    sy = cy - p * dy
    removed = 0

    # 1. The new dot is no longer free: all its moves go (a contiguous block of actions).
    v = state[HEADER + cell]
    mv = (v >> MOVE_SHIFT) & 0xFFFFF
    if mv:
        removed = _popcount(mv)
        if track:
            rows[cy] -= removed
        else:
            mark_cell(state, cx, cy, False)
    state[HEADER + cell] = (v & ~MOVE_BITS) | DOT

    # 2. Parallel lines that now overlap the new line go: starts start + k * off with |k| <= 3
    #    (5T: they would share a segment) or |k| <= 4 (5D: they would share a dot). Such a line is
    #    stored at its missing dot m = start + j * off with position q, where k = j - q.
    reach = 4 if state[H_VARIANT] == 1 else 3
    for j in range(-reach, reach + 5):
        mx = sx + j * dx
        my = sy + j * dy
        if mx < 0 or my < 0 or mx >= g or my >= g:
            continue
        m = start + j * off
        w = state[HEADER + m]
        bits = (w >> (MOVE_SHIFT + d * 5)) & 31
        if bits == 0:
            continue
        qlo = j - reach
        if qlo < 0:
            qlo = 0
        qhi = j + reach
        if qhi > 4:
            qhi = 4
        for q in range(qlo, qhi + 1):
            if bits & (1 << q):
                w &= ~(1 << (MOVE_SHIFT + d * 5 + q))
                removed += 1
                if track:
                    rows[my] -= 1
        state[HEADER + m] = w
        if not track and w & MOVE_BITS == 0:
            mark_cell(state, mx, my, False)

    # 3. Draw the line.
    segbit = 1 << (SEG_SHIFT + d)
    for i in range(4):
        state[HEADER + start + i * off] |= segbit

    # 4. Lines through the new dot may have become legal. Per direction, read the 9 points
    #    c - 4 .. c + 4 (bit j + 4: a dot; off-grid points block) and the 10 segments leaving
    #    c - 5 .. c + 4 (bit j + 5), then test the 5 windows at once with bit masks.
    added = 0
    five_d = state[H_VARIANT] == 1
    interior = cx >= 5 and cy >= 5 and cx < g - 5 and cy < g - 5
    for e in range(4):
        ex, ey = _dxy(e)
        eoff = _step(e, g)
        ebit = 1 << (SEG_SHIFT + e)
        dots = 0
        blocked = 0
        segs = 0
        for j in range(-5, 5):
            if not interior:
                px = cx + j * ex
                py = cy + j * ey
                if px < 0 or py < 0 or px >= g or py >= g:
                    if j >= -4:
                        blocked |= 1 << (j + 4)
                    continue
            w = state[HEADER + cell + j * eoff]
            if j >= -4 and w & DOT:
                dots |= 1 << (j + 4)
            if w & ebit:
                segs |= 1 << (j + 5)
        empties = ~(dots | blocked) & 0x1FF
        if empties == 0:
            continue
        for i in range(5):
            wmask = 0x1F << (4 - i)
            if blocked & wmask:
                continue
            em = empties & wmask
            if em == 0 or em & (em - 1):
                continue
            if five_d:
                if segs & (0x3F << (4 - i)):
                    continue
            elif segs & (0xF << (5 - i)):
                continue
            b = 0
            while em > 1:
                em >>= 1
                b += 1
            j = b - 4
            m = cell + j * eoff
            q = j + i
            state[HEADER + m] |= 1 << (MOVE_SHIFT + e * 5 + q)
            added += 1
            if track:
                rows[cy + j * ey] += 1
            else:
                mark_cell(state, cx + j * ex, cy + j * ey, True)
    state[H_NLEGAL] += added - removed
    state[H_MOVES] += 1
    if cx < state[H_X0]:
        state[H_X0] = cx
    if cx > state[H_X1]:
        state[H_X1] = cx
    if cy < state[H_Y0]:
        state[H_Y0] = cy
    if cy > state[H_Y1]:
        state[H_Y1] = cy


@njit(cache=True, nogil=True)
def play(state, action, ws):
    """Plays a legal action in place; returns the reward (1.0: one more move)."""
    _apply(state, action, ws, False)
    return 1.0


@njit(cache=True, nogil=True)
def playout(state, policy, rng, ws, seq, start):
    """Plays uniformly random moves to the end; writes them into ``seq[start:start + n]``.

    Each move is ``actions[rng_below(rng, n)]`` over the sorted legal actions (policy 0, the only
    one), so that a generic search choosing from ``legal`` reproduces it exactly. The sorted order
    is the order of the cells, so the k-th action is found from per-row counts kept in ``ws``.
    Those counts replace the row masks while it plays; at the end, when no cell has a move, it
    clears the masks.
    """
    g = state[H_SIZE]
    x0, y0, x1, y1 = window(state)
    for y in range(g):
        ws[y] = 0
    for y in range(y0, y1 + 1):
        t = 0
        base = HEADER + y * g
        for x in range(x0, x1 + 1):
            mv = (state[base + x] >> MOVE_SHIFT) & 0xFFFFF
            if mv:
                t += _popcount(mv)
        ws[y] = t
    k = 0
    while True:
        n = state[H_NLEGAL]
        if n <= 0:
            break
        r = rng_below(rng, n)
        y = 0
        while r >= ws[y]:
            r -= ws[y]
            y += 1
        c = y * g + window(state)[0]
        while True:
            mv = (state[HEADER + c] >> MOVE_SHIFT) & 0xFFFFF
            if mv:
                pc = _popcount(mv)
                if r < pc:
                    break
                r -= pc
            c += 1
        b = 0
        while True:
            if mv & 1:
                if r == 0:
                    break
                r -= 1
            mv >>= 1
            b += 1
        a = c * 20 + b
        seq[start + k] = a
        k += 1
        _apply(state, a, ws, True)
    state[HEADER + g * g :] = 0  # the game is over: no cell has a legal move
    return k


@njit(cache=True, nogil=True)
def score(state):
    """The score: the number of moves played."""
    return float(state[H_MOVES])


@njit(cache=True, nogil=True)
def rescan(state):
    """Recomputes every cell's legal moves and the count from the dots and segments alone."""
    g = state[H_SIZE]
    total = 0
    state[H_X0] = g
    state[H_Y0] = g
    state[H_X1] = -1
    state[H_Y1] = -1
    for c in range(g * g):
        state[HEADER + c] &= ~MOVE_BITS
        if state[HEADER + c] & DOT:
            x = c % g
            y = c // g
            state[H_X0] = min(state[H_X0], x)
            state[H_Y0] = min(state[H_Y0], y)
            state[H_X1] = max(state[H_X1], x)
            state[H_Y1] = max(state[H_Y1], y)
    for y in range(g):
        for x in range(g):
            for d in range(4):
                q = _line_missing(state, x, y, d)
                if q >= 0:
                    m = y * g + x + q * _step(d, g)
                    state[HEADER + m] |= 1 << (MOVE_SHIFT + d * 5 + q)
                    total += 1
    state[H_NLEGAL] = total
    state[HEADER + g * g :] = 0
    for c in range(g * g):
        if state[HEADER + c] & MOVE_BITS:
            mark_cell(state, c % g, c // g, True)


# -- Python helpers ---------------------------------------------------------------------------


def workspace(state: np.ndarray) -> np.ndarray:
    """The scratch array of a playout: one count of legal moves per grid row."""
    return np.zeros(int(state[H_SIZE]), dtype=np.int64)


def empty_state(variant: str, size: int = DEFAULT_SIZE) -> np.ndarray:
    """A grid with no dot at all (for hand-made positions)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown Morpion variant {variant!r}; expected '5D' or '5T'")
    if size < MIN_SIZE:
        raise ValueError(f"grid size {size} is too small; need at least {MIN_SIZE}")
    state = np.zeros(HEADER + size * size + size * words(size), dtype=np.int32)
    state[H_VARIANT] = VARIANTS.index(variant)
    state[H_SIZE] = size
    return state


def initial_state(variant: str, size: int = DEFAULT_SIZE) -> np.ndarray:
    """The standard 36-dot cross in the middle of a ``size`` x ``size`` grid."""
    state = empty_state(variant, size)
    ox, oy = cross_origin(size)
    for x, y in CROSS:
        state[HEADER + (y + oy) * size + x + ox] = DOT
    rescan(state)
    return state


def variant_of(state: np.ndarray) -> str:
    """``"5D"`` or ``"5T"``."""
    return VARIANTS[int(state[H_VARIANT])]


def size_of(state: np.ndarray) -> int:
    """The grid size."""
    return int(state[H_SIZE])


def cells(state: np.ndarray) -> np.ndarray:
    """The cell bit fields as a ``(size, size)`` view, indexed ``[y, x]``."""
    g = size_of(state)
    return state[HEADER : HEADER + g * g].reshape(g, g)


def max_moves(variant: str, size: int = DEFAULT_SIZE) -> int:
    """The free points of the grid: a bound on any checked state's game (one new dot a move); games
    from the cross are bounded by :data:`MAX_MOVES`, but a consistent state need not come from it."""
    return size * size - len(CROSS)


def kernel(variant: str, size: int = DEFAULT_SIZE) -> Kernel:
    """The compiled rules of a variant on a ``size`` x ``size`` grid.

    Both variants have the same kernel (the variant is in the state), so a search compiled for
    one serves the other; the name includes the grid size when it is not the default, since
    ``max_actions`` depends on it.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown Morpion variant {variant!r}; expected '5D' or '5T'")
    name = "morpion" + ("" if size == DEFAULT_SIZE else f"_{size}")
    return Kernel(
        name=name,
        legal=legal,
        play=play,
        playout=playout,
        score=score,
        workspace=workspace,
        max_moves=max_moves(variant, size),
        max_actions=20 * size * size,
        policies={"random": 0},
        observe=observe,
    )
