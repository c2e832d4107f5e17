"""SameGame playouts on column bitboards: the same games as :func:`samegame.playout`, faster.

:func:`playout` reads the state once into one ``uint64`` word per column and colour (bit y = the
cell y rows above the bottom, so gravity packs each column toward bit 0; colour 0's words hold
the occupancy), plays the whole game on these words, and writes the board, score, moves and the end
back into the state. For the same generator state it makes the same choices as
:func:`samegame.playout`: the groups are kept in a bitset indexed by action, so that the g-th group
in increasing action order, which is what the flood-fill playout draws, is the bitset's g-th set bit.

Vertical runs are filled in a few word operations (:func:`_fill`); a group is the union of the runs
reached from one cell through same-coloured neighbour columns (:func:`_flood`). After a move only
the zone changes: in each column the group touched, the cells from its lowest removed cell up, and
the cells next to those. The groups that may have a cell there (by their columns and top cell) are
put in doubt, the groups with a cell in the zone are found again, and a group in doubt whose top
cell no flood reached and still has a same-coloured neighbour is unchanged, so it stays. When a
column empties, the columns to its right shift, their actions change, and all groups are found again.

Boards taller than :data:`MAX_ROWS` rows or with more than :data:`MAX_COLORS` colours are played by
:func:`samegame.playout` itself.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types

from mc_envs._numba import ctlz, ctpop, cttz, intrinsic, njit, twin
from mc_envs.games import samegame as sg
from mc_envs.rng import rng_below

MAX_ROWS = 63
MAX_COLORS = 15

_0 = np.uint64(0)
_1 = np.uint64(1)
_2 = np.uint64(2)
_4 = np.uint64(4)
_8 = np.uint64(8)
_16 = np.uint64(16)
_32 = np.uint64(32)
_63 = np.uint64(63)
_64 = np.uint64(64)


@intrinsic(ctpop)
def _popcount(typingctx, x):
    """The number of set bits of an unsigned word (LLVM ``ctpop``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic(ctlz)
def _clz(typingctx, x):
    """The number of leading zero bits of an unsigned word; the word's width for 0 (``ctlz``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return x(x), codegen


@intrinsic(cttz)
def _ctz(typingctx, x):
    """The number of trailing zero bits of an unsigned word; the word's width for 0 (``cttz``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return x(x), codegen


@njit(cache=True, nogil=True)
def _fill(m, seeds, tall):
    """The runs of consecutive set bits of ``m`` that hold a bit of ``seeds`` (a subset of ``m``).

    Upward, adding the seeds carries through each run; downward, a Kogge-Stone fill over runs of up
    to 15 bits (63 when ``tall``).
    """
    f = (((m + seeds) ^ m) & m) | seeds
    g = m
    f |= g & (f >> _1)
    g &= g >> _1
    f |= g & (f >> _2)
    g &= g >> _2
    f |= g & (f >> _4)
    g &= g >> _4
    f |= g & (f >> _8)
    if tall:
        g &= g >> _8
        f |= g & (f >> _16)
        g &= g >> _16
        f |= g & (f >> _32)
    return f


@njit(cache=True, nogil=True)
def _flood(w, x0, seed, acc, base, stc, stp, tall):
    """Adds to ``acc`` the group of the cell ``seed`` (one bit) of the word ``w[x0]``, in the words
    ``w[base + x]`` of one colour's columns (zero words at both ends); ``acc[x]`` is column x's.
    Returns its size, the bit and word index of its top left cell, and its first and last word."""
    piece = _fill(w[x0], seed, tall)
    acc[x0 - base] |= piece
    size = _popcount(piece)
    top = _63 - _clz(piece)
    left = x0
    lo = x0
    hi = x0
    stc[0] = x0
    stp[0] = piece
    sp = 1
    while sp > 0:
        sp -= 1
        c = stc[sp]
        p = stp[sp]
        for nc in (c - 1, c + 1):
            t = w[nc] & p & ~acc[nc - base]
            if t:
                q = _fill(w[nc], t, tall)
                acc[nc - base] |= q
                stc[sp] = nc
                stp[sp] = q
                sp += 1
                size += _popcount(q)
                h = _63 - _clz(q)
                if h > top or (h == top and nc < left):
                    top = h
                    left = nc
                if nc < lo:
                    lo = nc
                elif nc > hi:
                    hi = nc
    return np.int64(size), np.int64(top), left, lo, hi


@njit(cache=True, nogil=True)
def _select(bits, k):
    """The index of the ``k``-th set bit (k = 0 is the lowest) of a bitset of words."""
    i = 0
    while True:
        w = bits[i]
        pc = np.int64(_popcount(w))
        if k < pc:
            for _ in range(k):
                w &= w - _1
            return i * 64 + np.int64(_ctz(w))
        k -= pc
        i += 1


@njit(cache=True, nogil=True)
def _compact(cw, x, m, planes, width):
    """Removes the cells ``m`` of column ``x`` from its words ``cw[k * width + x]`` for the first
    ``planes`` k; the cells above each removed run fall onto it."""
    while m:
        hi = _63 - _clz(m)
        lo = _64 - _clz(~m & ((_1 << hi) - _1))
        keep = (_1 << lo) - _1
        for i in range(x, planes * width, width):
            v = cw[i]
            cw[i] = (v & keep) | ((v >> (hi + _1)) << lo)
        m &= keep


@njit(cache=True, nogil=True)
def _read(s, rows, cols, colors, ncols):
    """The column words of the state: ``cw[k * (cols + 2) + x]`` for colour k (0 = occupancy) and
    column x - 1, with a zero word on each side."""
    width = cols + 2
    cw = np.zeros((colors + 1) * width, dtype=np.uint64)
    for x in range(1, ncols + 1):
        for r in range(rows):
            v = s[sg.HEADER + (r + 1) * width + x]
            if v > 0:
                bit = _1 << np.uint64(rows - 1 - r)
                cw[v * width + x] |= bit
                cw[x] |= bit
    return cw


@njit(cache=True, nogil=True)
def _write(s, cw, rows, cols, colors, ncols):
    """Writes the column words back into the state's board, for the first ``ncols`` columns."""
    width = cols + 2
    for x in range(1, ncols + 1):
        for r in range(rows):
            bit = _1 << np.uint64(rows - 1 - r)
            v = 0
            if cw[x] & bit:
                for k in range(1, colors + 1):
                    if cw[k * width + x] & bit:
                        v = k
                        break
            s[sg.HEADER + (r + 1) * width + x] = v


@njit(cache=True, nogil=True)
def _mark(bits, a, on):
    """Sets (``on``) or clears bit ``a`` of a bitset of words."""
    if on:
        bits[a >> 6] |= _1 << np.uint64(a & 63)
    else:
        bits[a >> 6] &= ~(_1 << np.uint64(a & 63))


# A compiled kernel longer than 60 lines on purpose: the hot playout, whose bitsets, group tables
# and flood stack are slices of two buffers kept in locals; helpers would pass them through memory
# at every move and add a specialisation each to compile.
@njit(cache=True, nogil=True)
def playout(s, policy, rng, ws, seq, start):
    """Plays to the end like :func:`samegame.playout` (same arguments, same games, same result)."""
    rows = np.int64(s[sg.ROWS])
    cols = np.int64(s[sg.COLS])
    colors = np.int64(s[sg.COLORS])
    if rows > MAX_ROWS or colors > MAX_COLORS:
        return sg.playout(s, policy, rng, ws, seq, start)
    tall = rows > 16
    n = rows * cols
    width = cols + 2
    ncols0 = np.int64(s[sg.NCOLS])
    ncols = ncols0
    cw = _read(s, rows, cols, colors, ncols)
    tabu = sg.tabu_color(s) if policy == 1 else -1
    nw = (n + 63) // 64
    # per column: visited and removed cells, the zone's lowest bit; the flood's stack; two bitsets
    uw = np.zeros(3 * width + n + 1 + 2 * nw, dtype=np.uint64)
    vis = uw[:width]
    rm = uw[width : 2 * width]
    zone = uw[2 * width : 3 * width]
    stp = uw[3 * width : 3 * width + n + 1]
    every = uw[3 * width + n + 1 : 3 * width + n + 1 + nw]
    allowed = uw[3 * width + n + 1 + nw :]
    # the groups' actions, the actions in doubt; by action: the group's colour, first and last
    # column, top cell's bit and column; the flood's stack
    iw = np.empty(8 * n + 1, dtype=np.int64)
    gact = iw[:n]
    doubt = iw[n : 2 * n]
    gcolor = iw[2 * n : 3 * n]
    glo = iw[3 * n : 4 * n]
    ghi = iw[4 * n : 5 * n]
    gtop = iw[5 * n : 6 * n]
    gleft = iw[6 * n : 7 * n]
    stc = iw[7 * n :]
    ng = 0
    nallowed = 0
    first = 1
    last = ncols
    zmin = 0
    k = 0
    gained = 0
    removed = 0
    while True:
        nd = 0
        i = 0
        while i < ng:  # set aside the groups that may have a cell in the zone
            a = gact[i]
            if glo[a] <= last and ghi[a] >= first and gtop[a] >= zmin:
                _mark(every, a, False)
                if tabu >= 0 and gcolor[a] != tabu:
                    _mark(allowed, a, False)
                    nallowed -= 1
                doubt[nd] = a
                nd += 1
                ng -= 1
                gact[i] = gact[ng]
            else:
                i += 1
        for x in range(ncols + 2):
            vis[x] = 0
        for x in range(first, last + 1):  # find every group with a cell in the zone
            inside = ~((_1 << zone[x]) - _1) & cw[x]
            for color in range(1, colors + 1):
                base = color * width
                wx = cw[base + x]
                seeds = wx & ((wx << _1) | (wx >> _1) | cw[base + x - 1] | cw[base + x + 1])
                seeds &= inside & ~vis[x]
                while seeds:
                    _, top, left, lo, hi = _flood(
                        cw, base + x, seeds & (~seeds + _1), vis, base, stc, stp, tall
                    )
                    seeds &= ~vis[x]
                    a = (rows - 1 - top) * cols + left - base - 1
                    gact[ng] = a
                    ng += 1
                    gcolor[a] = color
                    glo[a] = lo - base
                    ghi[a] = hi - base
                    gtop[a] = top
                    gleft[a] = left - base
                    _mark(every, a, True)
                    if tabu >= 0 and color != tabu:
                        _mark(allowed, a, True)
                        nallowed += 1
        for j in range(nd):  # a group in doubt whose top cell no flood reached is unchanged
            a = doubt[j]
            x = gleft[a]
            bit = _1 << np.uint64(gtop[a])
            base = gcolor[a] * width
            wx = cw[base + x]
            near = (wx << _1) | (wx >> _1) | cw[base + x - 1] | cw[base + x + 1]
            if wx & near & ~vis[x] & bit:
                gact[ng] = a
                ng += 1
                _mark(every, a, True)
                if tabu >= 0 and gcolor[a] != tabu:
                    _mark(allowed, a, True)
                    nallowed += 1
        if ng == 0:
            break
        if tabu >= 0 and nallowed > 0:
            a = _select(allowed, rng_below(rng, nallowed))
        else:
            a = _select(every, rng_below(rng, ng))
        seq[start + k] = a
        k += 1
        base = gcolor[a] * width
        size, _, _, lo, hi = _flood(
            cw, base + gleft[a], _1 << np.uint64(gtop[a]), rm, base, stc, stp, tall
        )
        lo -= base
        hi -= base
        gained += (size - 2) * (size - 2)
        removed += size
        # the zone: the cells that move (from the lowest removed cell up) and their neighbours
        first = max(lo - 1, 1)
        last = min(hi + 1, ncols)
        for x in range(first, last + 1):
            zone[x] = _64
        emptied = False
        for x in range(lo, hi + 1):
            low = _ctz(rm[x])
            zone[x] = min(zone[x], low - _1 if low > _0 else _0)
            zone[x - 1] = min(zone[x - 1], low)
            zone[x + 1] = min(zone[x + 1], low)
            _compact(cw, x, rm[x], colors + 1, width)
            rm[x] = 0
            if cw[x] == 0:
                emptied = True
        zmin = 63
        for x in range(first, last + 1):
            zmin = min(zmin, np.int64(zone[x]))
        if emptied:  # shift the columns left over the empty ones and find all groups again
            to = lo
            for x in range(lo, ncols + 1):
                if cw[x]:
                    if to != x:
                        for i in range(0, (colors + 1) * width, width):
                            cw[i + to] = cw[i + x]
                    to += 1
            for x in range(to, ncols + 1):
                for i in range(0, (colors + 1) * width, width):
                    cw[i + x] = 0
            ncols = to - 1
            ng = 0
            nallowed = 0
            every[:] = 0
            allowed[:] = 0
            zone[:] = 0
            first = 1
            last = ncols
    _write(s, cw, rows, cols, colors, ncols0)
    s[sg.SCORE] += gained
    s[sg.LEFT] -= removed
    s[sg.NCOLS] = ncols
    s[sg.MOVES] += k
    sg.finish(s)
    return k


# While the cache lacks this playout (2.4 s to compile), a call from Python plays by the
# flood-fill one (0.5 s): the same games, not 100 times slower as Python.
twin(playout, sg.playout)
