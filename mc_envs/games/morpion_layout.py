"""The state layout of Morpion Solitaire (:mod:`mc_envs.games.morpion` documents it) and the
kernels that read it without playing: the row masks of the cells with legal moves, and ``legal``.

Kept apart from the rules so that each module stays small; :mod:`mc_envs.games.morpion` imports
every name here, so ``morpion.HEADER`` and the like keep working.
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import njit

H_VARIANT, H_SIZE, H_MOVES, H_NLEGAL = 0, 1, 2, 3
H_X0, H_Y0, H_X1, H_Y1 = 4, 5, 6, 7
HEADER = 8
MASK_BITS = 31  # cells per row-mask word (an int32 without its sign bit)
DOT = 1
SEG_SHIFT = 1
MOVE_SHIFT = 8
MOVE_BITS = 0xFFFFF << MOVE_SHIFT


@njit(cache=True, nogil=True)
def observe(state, out):
    """Writes the observation planes into ``out`` (5, size, size): plane 0 the dots, plane 1 + d
    at ``[y, x]`` the drawn unit segment leaving (x, y) in direction d."""
    g = state[H_SIZE]
    for y in range(g):
        for x in range(g):
            cell = state[HEADER + y * g + x]
            out[0, y, x] = cell & DOT
            for d in range(4):
                out[1 + d, y, x] = (cell >> (SEG_SHIFT + d)) & 1


@njit(cache=True, nogil=True)
def words(size):
    """The row-mask words per grid row."""
    return (size + MASK_BITS - 1) // MASK_BITS


@njit(cache=True, nogil=True)
def mark_cell(state, x, y, on):
    """Sets (``on``) or clears the bit of cell ``(x, y)`` in its row mask."""
    g = state[H_SIZE]
    w = HEADER + g * g + y * words(g) + x // MASK_BITS
    bit = 1 << (x % MASK_BITS)
    if on:
        state[w] |= bit
    else:
        state[w] &= ~bit


@njit(cache=True, nogil=True)
def window(state):
    """The grid box where new dots can appear: the dots' bounding box grown by 4, clipped."""
    g = state[H_SIZE]
    x0 = max(state[H_X0] - 4, 0)
    y0 = max(state[H_Y0] - 4, 0)
    x1 = min(state[H_X1] + 4, g - 1)
    y1 = min(state[H_Y1] + 4, g - 1)
    return x0, y0, x1, y1


_DEBRUIJN = np.array(
    [0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8, 31, 27, 13, 23, 21, 19, 16, 7, 26,
     12, 18, 6, 11, 5, 10, 9], dtype=np.int64)  # fmt: skip
"""The index of a 32-bit word's only set bit, from the top 5 bits of its product by 0x077CB531."""


@njit(cache=True, nogil=True)
def legal(state, ws, out):
    """Writes the legal actions, sorted, into ``out[:n]`` and returns ``n``."""
    total = state[H_NLEGAL]
    g = state[H_SIZE]
    nw = words(g)
    x0, y0, x1, y1 = window(state)
    n = 0
    for y in range(y0, y1 + 1):
        if n >= total:
            break
        for k in range(x0 // MASK_BITS, x1 // MASK_BITS + 1):
            bits = state[HEADER + g * g + y * nw + k]
            while bits:
                low = bits & -bits
                bits ^= low
                x = k * MASK_BITS + _DEBRUIJN[((np.int64(low) * 0x077CB531) & 0xFFFFFFFF) >> 27]
                c = y * g + x
                mv = (state[HEADER + c] >> MOVE_SHIFT) & 0xFFFFF
                b = 0
                while mv:
                    if mv & 1:
                        out[n] = c * 20 + b
                        n += 1
                    mv >>= 1
                    b += 1
    return n
