"""Validation of SameGame states from outside (kept apart from the rules module's kernels)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mc_envs.core import check_layout, state_error
from mc_envs.games.samegame import (
    BORDER,
    CLEAR_BONUS,
    COLORS,
    COLS,
    ENDED,
    HEADER,
    LEFT,
    MOVES,
    NCOLS,
    PENALTIES,
    PENALTY,
    ROWS,
    SCORE,
    _sizes,
)


def check_state(data: np.ndarray, config: tuple) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a SameGame state of
    ``config = (rows, cols, colors, penalty)`` that the kernels can run from: header equal to the
    config, border cells -1, colours 0..colors, gravity applied, the used columns a left-packed
    prefix, counters that match the board."""
    rows, cols, colors, penalty = config
    padded = _sizes(rows, cols)[1]
    s = check_layout(data, "SameGame", np.int32, HEADER + padded)
    h = s[:HEADER].tolist()
    for i, want in ((ROWS, rows), (COLS, cols), (COLORS, colors), (PENALTY, PENALTIES[penalty])):
        if h[i] != want:
            raise state_error("SameGame", _FIELDS[i], i, h[i], f"expected {want} for {config}")
    inner = _check_board(s[HEADER:], rows, cols, colors)
    _check_counters(h, inner, cols)


def _check_board(body: np.ndarray, rows: int, cols: int, colors: int) -> np.ndarray:
    """The cells in range and the borders -1, gravity applied; the board inside its border."""
    width = _sizes(rows, cols)[0]
    low, high = _bounds(rows, cols, colors)
    if np.less(body, low).any() or np.greater(body, high).any():
        i = int(np.flatnonzero((body < low) | (body > high))[0])
        r, c = i // width - 1, i % width - 1
        inside = 0 <= r < rows and 0 <= c < cols
        raise state_error(
            "SameGame",
            f"cell row {r}, col {c}" if inside else "border cell",
            HEADER + i,
            body[i],
            f"expected 0..{colors}" if inside else "expected -1",
        )
    inner = body.reshape(rows + 2, width)[1:-1, 1:-1]
    filled = inner > 0
    if np.greater(filled[:-1], filled[1:]).any():
        r, c = (int(v) for v in np.argwhere(filled[:-1] > filled[1:])[0])
        raise state_error(
            "SameGame",
            f"cell row {r}, col {c}",
            HEADER + (r + 1) * width + c + 1,
            inner[r, c],
            "above an empty cell (gravity not applied)",
        )
    return inner


def _check_counters(h: list, inner: np.ndarray, cols: int) -> None:
    """The header's counters match the board (``inner``, without its border)."""
    filled = inner > 0
    n = inner.size
    ncols, left = h[NCOLS], int(np.count_nonzero(filled))
    bottom = filled[-1]
    if not 0 <= ncols <= cols or not bottom[:ncols].all() or bottom[ncols:].any():
        used = np.flatnonzero(bottom).tolist()
        raise state_error("SameGame", "columns in use", NCOLS, ncols, f"non-empty columns {used}")
    if h[LEFT] != left:
        raise state_error("SameGame", "cells left", LEFT, h[LEFT], f"but {left} cells are filled")
    removed = n - left
    if not 0 <= h[MOVES] <= removed // 2:
        raise state_error(
            "SameGame",
            "moves played",
            MOVES,
            h[MOVES],
            f"impossible after removing {removed} cells",
        )
    if h[ENDED] not in (0, 1) or h[9] != 0:
        i = ENDED if h[ENDED] not in (0, 1) else 9
        raise state_error(
            "SameGame", _FIELDS[i], i, h[i], "expected 0 or 1" if i == ENDED else "expected 0"
        )
    if h[ENDED] and (
        ((inner[:, :-1] == inner[:, 1:]) & filled[:, :-1]).any()
        or ((inner[:-1] == inner[1:]) & filled[:-1]).any()
    ):
        raise state_error("SameGame", "end scored", ENDED, 1, "but a group of 2 remains")
    top = max(removed - 2, 0) ** 2 + (CLEAR_BONUS if h[ENDED] else 0)
    if not (-(n * n) if h[ENDED] and h[PENALTY] else 0) <= h[SCORE] <= top:
        raise state_error(
            "SameGame", "score", SCORE, h[SCORE], f"impossible after removing {removed} cells"
        )


_FIELDS = (
    "score",
    "moves played",
    "rows",
    "cols",
    "colours",
    "penalty",
    "cells left",
    "columns in use",
    "end scored",
    "unused",
)


@lru_cache(maxsize=16)
def _bounds(rows: int, cols: int, colors: int) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest value of each padded cell: -1 on the border, 0..colors inside."""
    low = np.full((rows + 2, cols + 2), BORDER, dtype=np.int32)
    high = low.copy()
    low[1:-1, 1:-1] = 0
    high[1:-1, 1:-1] = colors
    return low.ravel(), high.ravel()
