"""Go in text: GTP vertices (``"E5"``, ``"pass"``), ASCII boards, positions set up from a board.

Vertices follow GTP: columns ``A``-``T`` without ``I`` from the left, rows counted from the
bottom (row 0 of an action, the top row, is row ``n``). ASCII boards list the rows from the top,
``X`` for Black, ``O`` for White and ``.`` for an empty point; :func:`format_board` adds the
coordinates, which :func:`parse_board` accepts and ignores.
"""

from __future__ import annotations

import numpy as np

from mc_envs.games import go
from mc_envs.games import go_layout as layout

COLUMNS = "ABCDEFGHJKLMNOPQRST"
SYMBOLS = ".XO"


def action_to_string(state: np.ndarray, action: int) -> str:
    """The move as a GTP vertex: ``"E5"`` (columns without I, rows from the bottom) or ``"pass"``."""
    n = int(state[layout.SIZE])
    return vertex(n, action)


def vertex(size: int, action: int) -> str:
    """The GTP vertex of ``action`` on a board of ``size``.

    Raises:
        ValueError: an action outside ``0..size * size``.
    """
    action = int(action)
    if action == size * size:
        return "pass"
    if not 0 <= action < size * size:
        raise ValueError(f"Go action must be in 0..{size * size} on {size}x{size}, got {action}")
    row, col = divmod(action, size)
    return f"{COLUMNS[col]}{size - row}"


def parse_vertex(size: int, text: str) -> int:
    """The action of a GTP vertex (``"E5"``, ``"e5"``, ``"pass"``) on a board of ``size``.

    Raises:
        ValueError: not a vertex of that board, naming the text.
    """
    t = str(text).strip().upper()
    if t == "PASS":
        return size * size
    if len(t) >= 2 and t[0] in COLUMNS[:size] and t[1:].isdigit():
        col, number = COLUMNS.index(t[0]), int(t[1:])
        if 1 <= number <= size:
            return (size - number) * size + col
    raise ValueError(
        f"{text!r} is not a vertex of the {size}x{size} board (columns {COLUMNS[0]}-"
        f"{COLUMNS[size - 1]} without I, rows 1-{size}, or 'pass')"
    )


def board_of(state: np.ndarray) -> np.ndarray:
    """The board as an ``(n, n)`` int8 array, row 0 at the top: 0 empty, 1 Black, 2 White."""
    n, s = int(state[layout.SIZE]), int(state[layout.STRIDE])
    cells = state[layout.BOARD : layout.BOARD + s * s].reshape(s, s)[1 : n + 1, 1 : n + 1]
    return cells.astype(np.int8)


def format_board(state: np.ndarray) -> str:
    """The board with GTP coordinates: a line of column letters, then one line per row from the
    top, each led by its row number (``X`` Black, ``O`` White, ``.`` empty)."""
    board = board_of(state)
    n = board.shape[0]
    lines = ["   " + " ".join(COLUMNS[:n])]
    for r, row in enumerate(board):
        lines.append(f"{n - r:2d} " + " ".join(SYMBOLS[v] for v in row))
    return "\n".join(lines) + "\n"


def _rows(text: str) -> list[str]:
    rows = []
    for line in text.strip().splitlines():
        row = "".join(line.split())
        if not row or row == COLUMNS[: len(row)]:
            continue  # a blank line or the line of column letters
        rows.append(row.strip("0123456789"))
    return rows


def parse_board(
    text: str,
    *,
    to_move: int = 0,
    komi: float = 7.5,
    max_moves: int | None = None,
    history: int = 8,
) -> np.ndarray:
    """A position from an ASCII board (rows from the top; ``X``, ``O``, ``.``; coordinates as
    :func:`format_board` writes them are ignored), with ``to_move`` (0 Black, 1 White) to play.

    The position starts a new game record: it is the only earlier position superko knows, and
    the move count is 0.

    Raises:
        ValueError: a board that is not square or not 5..19 wide, an unknown symbol, or a chain
            without a liberty (naming its vertex).
    """
    rows = _rows(text)
    n = len(rows)
    if not layout.MIN_SIZE <= n <= layout.MAX_SIZE or any(len(r) != n for r in rows):
        raise ValueError(
            f"a Go board is n lines of n points (n in {layout.MIN_SIZE}..{layout.MAX_SIZE}), "
            f"got {[len(r) for r in rows]}"
        )
    cells = np.zeros((n, n), dtype=np.int8)
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch.upper() not in SYMBOLS:
                raise ValueError(f"unknown point {ch!r} at {vertex(n, r * n + c)}; use X, O or .")
            cells[r, c] = SYMBOLS.index(ch.upper())
    return from_board(cells, to_move=to_move, komi=komi, max_moves=max_moves, history=history)


def from_board(
    cells: np.ndarray,
    *,
    to_move: int = 0,
    komi: float = 7.5,
    max_moves: int | None = None,
    history: int = 8,
) -> np.ndarray:
    """A position from an ``(n, n)`` array (0 empty, 1 Black, 2 White; row 0 at the top); see
    :func:`parse_board`.

    Raises:
        ValueError: a bad array, ``to_move`` not 0 or 1, or a chain without a liberty.
    """
    cells = np.asarray(cells)
    if cells.ndim != 2 or cells.shape[0] != cells.shape[1]:
        raise ValueError(f"a Go board is a square array, got shape {cells.shape}")
    if not np.isin(cells, (0, 1, 2)).all():
        raise ValueError("a Go board holds 0 (empty), 1 (Black) or 2 (White) only")
    if to_move not in (0, 1):
        raise ValueError(f"to_move must be 0 (Black) or 1 (White), got {to_move!r}")
    n = cells.shape[0]
    state = layout.new_state(n, komi, max_moves, history)
    s = n + 2
    for r in range(n):
        for c in range(n):
            if cells[r, c]:
                go.put_stone(state, (r + 1) * s + c + 1, int(cells[r, c]) - 1)
    p, w, t, head, nxt, stones, libs, captured, ring, table, length = layout.offsets(
        n, int(state[layout.MAX_MOVES]), history
    )
    for r in range(n):
        for c in range(n):
            pt = (r + 1) * s + c + 1
            if cells[r, c] and state[libs + state[head + pt]] == 0:
                colour = "Black" if cells[r, c] == 1 else "White"
                raise ValueError(f"the {colour} chain at {vertex(n, r * n + c)} has no liberty")
    state[table:] = 0
    state[layout.POSITIONS] = 0
    layout._remember(state, state[layout.HASH])
    state[layout.PLAYER] = to_move
    return state


def planes(state: np.ndarray) -> np.ndarray:
    """The observation: ``(2 * history + 1, n, n)`` int8 (see :func:`mc_envs.games.layout.observe`)."""
    n, h = int(state[layout.SIZE]), int(state[layout.HISTORY])
    out = np.empty((2 * h + 1, n, n), dtype=np.int8)
    layout.observe(state, out)
    return out
