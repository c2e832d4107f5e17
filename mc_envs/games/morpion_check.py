"""Validation of Morpion Solitaire states from outside (kept apart from the rules module).

:func:`check_state` recomputes, in numpy, everything the kernels of :mod:`mc_envs.games.morpion`
keep incrementally (the legal-move bits, their count, the row masks of the cells with moves, the
dots' bounding box) and compares it with the state, so that the compiled code only ever runs on a
state whose bookkeeping is exact.
"""

from __future__ import annotations

import numpy as np

from mc_envs.core import check_layout, state_error
from mc_envs.games import morpion as rules
from mc_envs.games.morpion_layout import MASK_BITS

_KNOWN = rules.DOT | (0xF << rules.SEG_SHIFT) | rules.MOVE_BITS
_HEADER = ("variant", "size", "moves played", "legal moves", "x0", "y0", "x1", "y1")
PAD = 5


def _shifted(padded: np.ndarray, g: int, dx: int, dy: int) -> np.ndarray:
    """``out[y, x] = grid[y + dy, x + dx]`` (0 off the grid) from a grid padded by ``PAD``."""
    return padded[PAD + dy : PAD + dy + g, PAD + dx : PAD + dx + g]


def legal_bits(cells: np.ndarray, five_d: bool) -> np.ndarray:
    """The move bits (bits 8..27 of each cell) that the dots and segments of ``cells`` give."""
    g = cells.shape[0]
    pad = np.zeros((g + 2 * PAD, g + 2 * PAD), dtype=np.int64)
    pad[PAD:-PAD, PAD:-PAD] = cells
    inside = np.zeros(pad.shape, dtype=bool)
    inside[PAD:-PAD, PAD:-PAD] = True
    moves = np.zeros(pad.shape, dtype=np.int64)
    for d, (dx, dy) in enumerate(zip(rules.DX, rules.DY)):
        segbit = 1 << (rules.SEG_SHIFT + d)
        points = [_shifted(pad, g, i * dx, i * dy) for i in range(-1, 5)]
        dots = [p & rules.DOT for p in points[1:]]
        ok = _shifted(inside, g, 4 * dx, 4 * dy) & (sum(dots) == 4)
        for p in points[1:5]:
            ok &= (p & segbit) == 0
        if five_d:
            ok &= ((points[0] & segbit) == 0) & ((points[5] & segbit) == 0)
        for q in range(5):
            hit = (ok & (dots[q] == 0)).astype(np.int64) << (rules.MOVE_SHIFT + d * 5 + q)
            moves[PAD + q * dy : PAD + q * dy + g, PAD + q * dx : PAD + q * dx + g] |= hit
    return moves[PAD:-PAD, PAD:-PAD]


def row_masks(has_moves: np.ndarray) -> np.ndarray:
    """The row masks (:mod:`mc_envs.games.morpion_layout`) of a ``(size, size)`` boolean grid of
    the cells with legal moves: ``(size, words(size))`` integers."""
    g = has_moves.shape[0]
    nw = rules.words(g)
    wide = np.zeros((g, nw * MASK_BITS), dtype=np.int64)
    wide[:, :g] = has_moves
    weights = np.int64(1) << np.arange(MASK_BITS, dtype=np.int64)
    return (wide.reshape(g, nw, MASK_BITS) * weights).sum(axis=2)


def check_state(data: np.ndarray, config: tuple) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a Morpion state of
    ``config = (variant, size)`` that the kernels can run from.

    Checked: the header equals the config; cells hold only dot, segment and move bits; every
    segment joins two dots inside the grid; the move bits, their count and the bounding box are
    exactly what the dots and segments give (and so are the row masks); and the counters match a
    game from the cross (``moves`` lines: 4 segments and one new dot each). A state that passes is not proven to be
    reachable from the cross, only consistent.
    """
    variant, g = config
    nw = rules.words(g)
    s = check_layout(data, "Morpion", np.int32, rules.HEADER + g * g + g * nw)
    h = s[: rules.HEADER].tolist()
    for i, want in ((rules.H_VARIANT, rules.VARIANTS.index(variant)), (rules.H_SIZE, g)):
        if h[i] != want:
            raise state_error("Morpion", _HEADER[i], i, h[i], f"expected {want} for {config}")
    cells = s[rules.HEADER : rules.HEADER + g * g].reshape(g, g).astype(np.int64)
    want = _check_cells(cells, variant)
    _check_masks(s[rules.HEADER + g * g :].reshape(g, nw), want)
    dots = cells & rules.DOT
    nlegal = int(np.unpackbits(want.astype("<u4").view(np.uint8)).sum())
    ys, xs = np.nonzero(dots)
    box = (
        [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(xs) else [g, g, -1, -1]
    )
    for i, value in ((rules.H_NLEGAL, nlegal), *zip(range(rules.H_X0, rules.H_Y1 + 1), box)):
        if h[i] != value:
            raise state_error("Morpion", _HEADER[i], i, h[i], f"expected {value}")
    segments = int(np.unpackbits(((cells >> rules.SEG_SHIFT) & 0xF).astype(np.uint8)).sum())
    moves, ndots = h[rules.H_MOVES], len(xs)
    if moves != segments // 4 or segments % 4 or ndots != len(rules.CROSS) + moves:
        raise state_error(
            "Morpion",
            "moves played",
            rules.H_MOVES,
            moves,
            f"but {segments} segments and {ndots} dots are drawn (4 and 1 a move, 36 dots first)",
        )


def _cell_error(what: str, bad: np.ndarray, value: np.ndarray, expected: str) -> ValueError:
    """The error at the first cell of ``bad``, showing its ``value``."""
    y, x = (int(v) for v in np.argwhere(bad)[0])
    where = rules.HEADER + y * bad.shape[0] + x
    return state_error("Morpion", f"{what} at x={x}, y={y}", where, value[y, x], expected)


def _check_cells(cells: np.ndarray, variant: str) -> np.ndarray:
    """Only known bits, every segment between two dots, the move bits the legal moves; those."""
    g = cells.shape[0]
    if (cells & ~_KNOWN).any():
        raise _cell_error("cell", (cells & ~_KNOWN) != 0, cells, "has unknown bits")
    dots = cells & rules.DOT
    pad = np.zeros((g + 2 * PAD, g + 2 * PAD), dtype=np.int64)
    pad[PAD:-PAD, PAD:-PAD] = dots
    for d, (dx, dy) in enumerate(zip(rules.DX, rules.DY)):
        seg = (cells >> (rules.SEG_SHIFT + d)) & 1
        bad = (seg == 1) & ((dots == 0) | (_shifted(pad, g, dx, dy) == 0))
        if bad.any():
            name = rules.DIRECTION_NAMES[d]
            raise _cell_error(f"{name} segment", bad, cells, "does not join two dots")
    want = legal_bits(cells & ~rules.MOVE_BITS, variant == "5D")
    got = cells & rules.MOVE_BITS
    if (got != want).any():
        raise _cell_error("move bits", got != want, got >> rules.MOVE_SHIFT, "not the legal moves")
    return want


def _check_masks(got_masks: np.ndarray, want: np.ndarray) -> None:
    """The row masks are those of the cells with legal moves (``want``, the move bits)."""
    g, nw = got_masks.shape
    masks = row_masks(want != 0)
    if (got_masks != masks).any():
        y, k = (int(v) for v in np.argwhere(got_masks != masks)[0])
        where = rules.HEADER + g * g + y * nw + k
        expected = f"expected {masks[y, k]} (the cells of the row with legal moves)"
        raise state_error("Morpion", f"row mask y={y}, word {k}", where, got_masks[y, k], expected)
