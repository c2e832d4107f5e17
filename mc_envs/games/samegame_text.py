"""SameGame's board text format: read (:func:`parse_board`), check (:func:`board_array`), write.

:mod:`mc_envs.games.samegame` re-exports these names.
"""

from __future__ import annotations

import numpy as np


def parse_board(text: str, *, source: str = "<board>") -> np.ndarray:
    """Reads a board: one line per row, top row first, one digit per cell (colours 0..k-1).

    ``.`` or ``-`` marks an empty cell. Blank lines and lines starting with ``#`` are skipped.
    Returns an R x C int32 array with colours 1..k and 0 for empty.

    Raises:
        ValueError: naming the source, line and column of a bad symbol or a ragged row.
    """
    rows: list[list[int]] = []
    width = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        row = []
        for col, ch in enumerate(line, start=1):
            if ch in ".-":
                row.append(0)
            elif ch.isdigit():
                row.append(int(ch) + 1)
            else:
                raise ValueError(
                    f"{source}: line {lineno}, column {col}: bad symbol {ch!r} "
                    "(expected a colour digit 0-9 or '.' for empty)"
                )
        if width is None:
            width = len(row)
        elif len(row) != width:
            raise ValueError(
                f"{source}: line {lineno}: row has {len(row)} cells, expected {width} like the first row"
            )
        rows.append(row)
    if not rows:
        raise ValueError(f"{source}: no board rows found")
    return np.array(rows, dtype=np.int32)


def board_array(board: object, *, source: str = "board") -> np.ndarray:
    """A board given as an array-like: checked to be 1..64 x 1..64 integers in 0..9 (0 = empty).

    Raises:
        ValueError: naming the source and the first bad cell (row, column) or the bad shape.
    """
    try:
        array = np.asarray(board)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{source}: not an array of colours ({exc})") from None
    if array.ndim != 2 or not (1 <= array.shape[0] <= 64 and 1 <= array.shape[1] <= 64):
        raise ValueError(
            f"{source}: expected rows x cols colours (1..64 each), got shape {array.shape}"
        )
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f"{source}: expected integer colours, got dtype {array.dtype}")
    bad = (array < 0) | (array > 9) | (array != np.round(array))
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"{source}: row {r}, col {c} is {array[r, c]!r}, expected 0..9 (0 = empty)"
        )
    return array.astype(np.int32)


def format_board(board: np.ndarray) -> str:
    """The text form of a board (the inverse of :func:`parse_board`)."""
    return "\n".join("".join("." if v == 0 else str(v - 1) for v in row) for row in board)
