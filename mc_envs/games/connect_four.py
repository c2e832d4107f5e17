"""Connect Four (7 columns x 6 rows): rules as numba bitboard kernels, ASCII boards, a move prior.

An action is a column, 0..6 from the left; the stone falls to the lowest empty cell. Player 0
(``X``) moves first; player 1 is ``O``. Four in a row horizontally, vertically or diagonally wins.

Bitboards use 7 bits per column, the top bit of each column a sentinel that stays 0, so that
shifting by 1 (vertical), 7 (horizontal), 6 and 8 (diagonals) never wraps::

    bit = col * 7 + row          (row 0 at the bottom)

      6 13 20 27 34 41 48        sentinel row
      5 12 19 26 33 40 47        top row
      ...
      0  7 14 21 28 35 42        bottom row

State layout (one flat int64 array; copying it is a complete snapshot)::

    index   meaning
    0..5    the two-player header of mc_envs.games.two_player (stones, mover, moves, end, result)
    6..12   HEIGHT    stones in column 0..6
"""

from __future__ import annotations

import sys

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import Kernel, check_layout, state_error
from mc_envs.games import two_player
from mc_envs.games.playouts import uniform_playout
from mc_envs.games.two_player import OVER, PLAYER, RESULT, STONES0, STONES1, place  # noqa: F401

HEIGHT = 6  # after the shared header of mc_envs.games.two_player
LENGTH = HEIGHT + 7
ROWS, COLS = 6, 7
POLICIES = {"random": 0}
SYMBOLS = ".XO"
# Centre-first weights of the heuristic prior, per column.
CENTRE_WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0, 3.0, 2.0, 1.0])


def new_state() -> np.ndarray:
    """The empty board, player 0 to move."""
    return np.zeros(LENGTH, dtype=np.int64)


@njit(cache=True, nogil=True)
def has_four(b: int) -> bool:
    """True if the bitboard holds four in a row."""
    for s in (1, 7, 6, 8):
        m = b & (b >> s)
        if m & (m >> (2 * s)):
            return True
    return False


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """Writes the columns that are not full, ascending, into ``out``; none once the game is over."""
    if state[OVER]:
        return 0
    n = 0
    for c in range(COLS):
        if state[HEIGHT + c] < ROWS:
            out[n] = c
            n += 1
    return n


@njit(cache=True, nogil=True)
def play(state: np.ndarray, action: int, ws: np.ndarray) -> float:
    """Drops the mover's stone in column ``action`` (legal); returns 1.0 if that move won, else 0.0."""
    p = state[PLAYER]
    h = state[HEIGHT + action]
    stones = state[STONES0 + p] | (np.int64(1) << (action * 7 + h))
    state[HEIGHT + action] = h + 1
    return place(state, p, stones, has_four(stones), ROWS * COLS)


playout = uniform_playout("connect_four", legal, play)


@njit(cache=True, nogil=True)
def heuristic_prior(state: np.ndarray, actions: np.ndarray, n: int, out: np.ndarray) -> None:
    """A simple move prior over ``actions[:n]`` written to ``out[:n]`` (sums to 1).

    Centre columns weigh more (1, 2, 3, 4, 3, 2, 1); a move that wins at once weighs 100 times
    more and a move that blocks the opponent's immediate win 50 times more.
    """
    p = state[PLAYER]
    mine, theirs = state[STONES0 + p], state[STONES1 - p]
    total = 0.0
    for i in range(n):
        c = actions[i]
        bit = np.int64(1) << (c * 7 + state[HEIGHT + c])
        w = CENTRE_WEIGHTS[c]
        if has_four(mine | bit):
            w *= 100.0
        elif has_four(theirs | bit):
            w *= 50.0
        out[i] = w
        total += w
    for i in range(n):
        out[i] /= total


@njit(cache=True, nogil=True)
def tactics(
    state: np.ndarray,
    actions: np.ndarray,
    n: int,
    ws: np.ndarray,
    visits: np.ndarray,
    values: np.ndarray,
) -> None:
    """Tree knowledge (``Kernel.knowledge["tactics"]``): virtual visits and values of
    ``actions[:n]`` for the player to move.

    A move that wins at once: 100 visits of value 1; a move that blocks the opponent's immediate
    win: 20 visits of value 0.75; any other move: its centre weight (1 to 4) in visits of value 0.5.
    """
    p = state[PLAYER]
    mine, theirs = state[STONES0 + p], state[STONES1 - p]
    for i in range(n):
        c = actions[i]
        bit = np.int64(1) << (c * 7 + state[HEIGHT + c])
        if has_four(mine | bit):
            visits[i], values[i] = 100.0, 1.0
        elif has_four(theirs | bit):
            visits[i], values[i] = 20.0, 0.75
        else:
            visits[i], values[i] = CENTRE_WEIGHTS[c], 0.5


@njit(cache=True, nogil=True)
def observe(state: np.ndarray, out: np.ndarray) -> None:
    """Writes the observation into ``out`` (2, 6, 7): row 0 at the top; plane 0 the mover's
    stones, plane 1 the opponent's."""
    p = state[PLAYER]
    mine, theirs = state[STONES0 + p], state[STONES1 - p]
    for r in range(ROWS):
        for c in range(COLS):
            bit = c * 7 + (ROWS - 1 - r)
            out[0, r, c] = (mine >> bit) & 1
            out[1, r, c] = (theirs >> bit) & 1


def workspace(state: np.ndarray) -> np.ndarray:
    """Scratch space: the legal-move list of a playout."""
    return np.zeros(COLS, dtype=np.int64)


# The shared header's functions, under the names that Kernel.from_module reads.
score, player, returns = two_player.score, two_player.player, two_player.returns
KERNEL = Kernel.from_module(
    sys.modules[__name__],
    name="connect_four",
    max_moves=ROWS * COLS,
    max_actions=COLS,
    two_player=True,
    priors={"c4heuristic": heuristic_prior},
    knowledge={"tactics": tactics},
)


# BITS[r, c]: the bit of the cell at row r (0 at the top), column c.
BITS = np.array(
    [[c * 7 + (ROWS - 1 - r) for c in range(COLS)] for r in range(ROWS)], dtype=np.int64
)


VALID = sum(0x3F << (7 * c) for c in range(COLS))  # every cell bit, no sentinel


def _four(b: int) -> bool:
    for shift in (1, 7, 6, 8):
        m = b & (b >> shift)
        if m & (m >> (2 * shift)):
            return True
    return False


def check_state(data: np.ndarray, config: tuple = ()) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a position whose stones
    rest on each other, with heights, counts and end flags that follow from them."""
    s = check_layout(data, "ConnectFour", np.int64, LENGTH).tolist()
    two_player.check_header(
        "ConnectFour", s, ROWS * COLS, VALID, (_four(s[STONES0]), _four(s[STONES1]))
    )
    both = s[STONES0] | s[STONES1]
    for c in range(COLS):
        h = s[HEIGHT + c]
        if not 0 <= h <= ROWS or (both >> (7 * c)) & 0x7F != (1 << h) - 1:
            column = bin((both >> (7 * c)) & 0x7F)
            raise state_error(
                "ConnectFour", f"height of column {c}", HEIGHT + c, h, f"stones {column}"
            )


def board_of(state: np.ndarray) -> np.ndarray:
    """The board as a (6, 7) int8 array, row 0 at the top: 0 empty, 1 player 0 (X), 2 player 1 (O)."""
    return (((state[STONES0] >> BITS) & 1) + 2 * ((state[STONES1] >> BITS) & 1)).astype(np.int8)


def winning_line(state: np.ndarray) -> list[tuple[int, int]]:
    """The cells ``(row, col)`` (row 0 at the top) of every four in a row on the board, sorted;
    empty when nobody has one. Five in a row, or a move that completes two fours, gives them all."""
    cells: set[int] = set()
    for b in (int(state[STONES0]), int(state[STONES1])):
        for s in (1, 7, 6, 8):
            starts = b & (b >> s) & (b >> 2 * s) & (b >> 3 * s)
            while starts:
                low = starts & -starts
                bit = low.bit_length() - 1
                cells.update(bit + k * s for k in range(4))
                starts ^= low
    return sorted((ROWS - 1 - bit % 7, bit // 7) for bit in cells)


def format_board(state: np.ndarray) -> str:
    """Six lines of ``X``, ``O`` and ``.`` (top row first) and a line of column numbers."""
    board = board_of(state)
    lines = [" ".join(SYMBOLS[v] for v in row) for row in board]
    return "\n".join(lines + [" ".join(str(c) for c in range(COLS))]) + "\n"


def parse_board(text: str) -> np.ndarray:
    """A state from six lines of seven ``X``/``O``/``.`` (top row first; spaces ignored).

    A trailing line of column digits is allowed. The mover follows from the counts.

    Raises:
        ValueError: wrong size, unknown symbols, floating stones, or impossible counts.
    """
    rows = [line.replace(" ", "") for line in text.strip().splitlines() if line.strip()]
    if rows and rows[-1].isdigit():
        rows = rows[:-1]
    if len(rows) != ROWS or any(len(r) != COLS for r in rows):
        raise ValueError(f"a Connect Four board is 6 lines of 7 cells, got {rows!r}")
    state = new_state()
    for c in range(COLS):
        column = [rows[ROWS - 1 - r][c] for r in range(ROWS)]  # bottom first
        for r, ch in enumerate(column):
            if ch not in SYMBOLS:
                raise ValueError(f"unknown cell {ch!r}; use X, O or .")
            if ch == ".":
                if any(x != "." for x in column[r:]):
                    raise ValueError(f"column {c} has a stone above an empty cell")
                break
            state[STONES0 + SYMBOLS.index(ch) - 1] |= 1 << (c * 7 + r)
            state[HEIGHT + c] += 1
    won = (bool(has_four(state[STONES0])), bool(has_four(state[STONES1])))
    return two_player.settle(state, won, ROWS * COLS, "four in a row")


def planes(state: np.ndarray) -> np.ndarray:
    """The observation: (2, 6, 7) int8 (see :func:`observe`)."""
    out = np.empty((2, ROWS, COLS), dtype=np.int8)
    observe(state, out)
    return out


def action_to_string(state: np.ndarray, action: int) -> str:
    """The move as its column, 0..6 from the left: ``"col 3"``."""
    return f"col {int(action)}"
