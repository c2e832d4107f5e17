"""Validation of Sudoku states from outside (kept apart from the rules module's kernels)."""

from __future__ import annotations

import numpy as np

from mc_envs.core import check_layout, state_error
from mc_envs.games.sudoku import BRANCHINGS, HEADER, MOVES, _where, box_side

_FIELDS = ("size", "box", "filled", "dead", "branch", "moves", "reserved", "reserved")


def _popcounts(a: np.ndarray) -> np.ndarray:
    """The number of set bits of each entry of a non-negative array below 2**32."""
    return np.unpackbits(a.astype("<u4").view(np.uint8)).reshape(-1, 32).sum(axis=1)


def check_state(data: np.ndarray, config: tuple) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a state of a
    ``config = (size, branching)`` grid: values 1..size with no repeat in a row, column or box,
    every domain, domain size and counter exactly what forward checking gives, and the givens
    (0 or 1, on filled cells) accounting for every filled cell that is not a move."""
    size, branching = config
    b, cells = box_side(size), size * size
    s = check_layout(data, "Sudoku", np.int64, HEADER + 4 * cells)
    h = s[:HEADER].tolist()
    grid, bits, boxes = _check_values(s[HEADER : HEADER + cells], size)
    empty, dsize = _check_domains(s, size, grid, bits, boxes)
    givens = s[HEADER + 3 * cells : HEADER + 4 * cells]
    bad = (givens != 0) & ((givens != 1) | empty)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise state_error(
            "Sudoku",
            f"given at {_where(i, size)}",
            HEADER + 3 * cells + i,
            givens[i],
            "expected 0, or 1 on a filled cell",
        )
    filled = cells - int(empty.sum())
    expected = (size, b, filled, int(bool((dsize == 0).any())), BRANCHINGS[branching])
    for i, want in enumerate(expected):
        if h[i] != want:
            raise state_error("Sudoku", _FIELDS[i], i, h[i], f"expected {want}")
    moves = filled - int(givens.sum())  # every filled cell is a given or a move
    if h[MOVES] != moves or h[6] != 0 or h[7] != 0:
        i = MOVES if h[MOVES] != moves else 6 if h[6] else 7
        raise state_error(
            "Sudoku", _FIELDS[i], i, h[i], f"expected {moves}" if i == MOVES else "expected 0"
        )


def _check_values(values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values 0..size, none repeated in a row, column or box; the grid, its bits, its boxes' bits."""
    b = box_side(size)
    if values.min() < 0 or values.max() > size:
        i = int(np.flatnonzero((values < 0) | (values > size))[0])
        raise state_error(
            "Sudoku", f"value at {_where(i, size)}", HEADER + i, values[i], f"expected 0..{size}"
        )
    grid = values.reshape(size, size)
    bits = np.where(grid > 0, np.left_shift(1, grid - 1), 0)
    boxes = bits.reshape(b, b, b, b).swapaxes(1, 2).reshape(size, size)
    for unit, lines in (("row", bits), ("column", bits.T), ("box", boxes)):
        repeats = _popcounts(np.bitwise_or.reduce(lines, axis=1)) != np.count_nonzero(lines, axis=1)
        if repeats.any():
            k = int(np.flatnonzero(repeats)[0]) + 1
            raise state_error(
                "Sudoku", "values", f"{unit} {k}", "invalid", f"a value repeats in {unit} {k}"
            )
    return grid, bits, boxes


def _check_domains(
    s: np.ndarray, size: int, grid: np.ndarray, bits: np.ndarray, boxes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The domains and domain sizes are what forward checking gives; the empty cells, the sizes."""
    b, cells = box_side(size), size * size
    peers = (
        np.bitwise_or.reduce(bits, axis=1)[:, None]
        | np.bitwise_or.reduce(bits, axis=0)[None, :]
        | np.bitwise_or.reduce(boxes, axis=1).reshape(b, b).repeat(b, 0).repeat(b, 1)
    )
    empty = (grid == 0).ravel()
    domain = np.where(empty, ((1 << size) - 1) & ~peers.ravel(), 0)
    dsize = np.where(empty, _popcounts(domain), size + 1)
    for name, start, want in (("domain", cells, domain), ("domain size", 2 * cells, dsize)):
        got = s[HEADER + start : HEADER + start + cells]
        if (got != want).any():
            i = int(np.flatnonzero(got != want)[0])
            raise state_error(
                "Sudoku",
                f"{name} at {_where(i, size)}",
                HEADER + start + i,
                got[i],
                f"expected {want[i]}",
            )
    return empty, dsize
