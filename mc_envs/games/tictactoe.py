"""Tic-Tac-Toe: rules as numba bitboard kernels, ASCII boards.

Cells are numbered ``row * 3 + col``, row 0 at the top; bit ``i`` of a bitboard is cell ``i``::

    0 | 1 | 2
    3 | 4 | 5
    6 | 7 | 8

Player 0 (``X``) moves first; player 1 is ``O``.

State layout: six int64, the two-player header of :mod:`mc_envs.games.two_player` (the stones'
bitboards, the mover, the move count, the end flag and the result); copying it is a complete
snapshot.
"""

from __future__ import annotations

import sys

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import Kernel, check_layout
from mc_envs.games import two_player
from mc_envs.games.playouts import uniform_playout
from mc_envs.games.two_player import OVER, PLAYER, RESULT, STONES0, STONES1, place  # noqa: F401

LENGTH = 6
ROWS = COLS = 3
CELLS = 9
FULL = (1 << CELLS) - 1
POLICIES = {"random": 0}
SYMBOLS = ".XO"

LINES = np.array(
    [
        0b000000111,
        0b000111000,
        0b111000000,  # rows
        0b001001001,
        0b010010010,
        0b100100100,  # columns
        0b100010001,
        0b001010100,
    ],  # diagonals
    dtype=np.int64,
)


def new_state() -> np.ndarray:
    """The empty board, player 0 to move."""
    return np.zeros(LENGTH, dtype=np.int64)


@njit(cache=True, nogil=True)
def has_line(stones: int) -> bool:
    """True if the bitboard holds three in a row."""
    for k in range(8):  # noqa: SIM110 (a plain loop for numba)
        if stones & LINES[k] == LINES[k]:
            return True
    return False


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """Writes the empty cells, ascending, into ``out``; none once the game is over."""
    if state[OVER]:
        return 0
    occupied = state[STONES0] | state[STONES1]
    n = 0
    for i in range(CELLS):
        if not (occupied >> i) & 1:
            out[n] = i
            n += 1
    return n


@njit(cache=True, nogil=True)
def play(state: np.ndarray, action: int, ws: np.ndarray) -> float:
    """Puts the mover's stone on cell ``action`` (legal); returns 1.0 if that move won, else 0.0."""
    p = state[PLAYER]
    stones = state[STONES0 + p] | (np.int64(1) << action)
    return place(state, p, stones, has_line(stones), CELLS)


playout = uniform_playout("tictactoe", legal, play)


@njit(cache=True, nogil=True)
def observe(state: np.ndarray, out: np.ndarray) -> None:
    """Writes the observation into ``out`` (2, 3, 3): plane 0 the mover's stones, plane 1 the
    opponent's."""
    p = state[PLAYER]
    mine, theirs = state[STONES0 + p], state[STONES1 - p]
    for cell in range(CELLS):
        r, c = cell // COLS, cell % COLS
        out[0, r, c] = (mine >> cell) & 1
        out[1, r, c] = (theirs >> cell) & 1


def workspace(state: np.ndarray) -> np.ndarray:
    """Scratch space: the legal-move list of a playout."""
    return np.zeros(CELLS, dtype=np.int64)


# The shared header's functions, under the names that Kernel.from_module reads.
score, player, returns = two_player.score, two_player.player, two_player.returns
KERNEL = Kernel.from_module(
    sys.modules[__name__], name="tictactoe", max_moves=CELLS, max_actions=CELLS, two_player=True
)


def check_state(data: np.ndarray, config: tuple = ()) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a reachable position."""
    s = check_layout(data, "TicTacToe", np.int64, LENGTH).tolist()
    won0, won1 = (any(s[i] & line == line for line in LINES.tolist()) for i in (STONES0, STONES1))
    two_player.check_header("TicTacToe", s, CELLS, FULL, (won0, won1))


def board_of(state: np.ndarray) -> np.ndarray:
    """The board as a (3, 3) int8 array: 0 empty, 1 player 0 (X), 2 player 1 (O)."""
    cells = np.arange(CELLS)
    board = ((state[STONES0] >> cells) & 1) + 2 * ((state[STONES1] >> cells) & 1)
    return board.reshape(ROWS, COLS).astype(np.int8)


def winning_line(state: np.ndarray) -> list[tuple[int, int]]:
    """The cells ``(row, col)`` (row 0 at the top) of every three in a row on the board, sorted;
    empty when nobody has one. A move that completes two lines at once gives both."""
    cells: set[int] = set()
    for stones in (int(state[STONES0]), int(state[STONES1])):
        for line in LINES.tolist():
            if stones & line == line:
                cells.update(i for i in range(CELLS) if (line >> i) & 1)
    return [divmod(i, COLS) for i in sorted(cells)]


def format_board(state: np.ndarray) -> str:
    """The board as three lines of ``X``, ``O`` and ``.``."""
    board = board_of(state)
    return "\n".join(" ".join(SYMBOLS[v] for v in row) for row in board) + "\n"


def parse_board(text: str) -> np.ndarray:
    """A state from three lines of ``X``/``O``/``.`` (spaces ignored); the mover follows from the counts.

    Raises:
        ValueError: wrong size, unknown symbols, or impossible stone counts.
    """
    rows = [line.replace(" ", "") for line in text.strip().splitlines() if line.strip()]
    if len(rows) != ROWS or any(len(r) != COLS for r in rows):
        raise ValueError(f"a Tic-Tac-Toe board is 3 lines of 3 cells, got {rows!r}")
    state = new_state()
    for i, ch in enumerate("".join(rows)):
        if ch not in SYMBOLS:
            raise ValueError(f"unknown cell {ch!r}; use X, O or .")
        if ch != ".":
            state[STONES0 + SYMBOLS.index(ch) - 1] |= 1 << i
    won = (bool(has_line(state[STONES0])), bool(has_line(state[STONES1])))
    return two_player.settle(state, won, CELLS, "three in a row")


def planes(state: np.ndarray) -> np.ndarray:
    """The observation: (2, 3, 3) int8 (see :func:`observe`)."""
    out = np.empty((2, ROWS, COLS), dtype=np.int8)
    observe(state, out)
    return out


def action_to_string(state: np.ndarray, action: int) -> str:
    """The move as its cell ``r<row>c<col>`` (0-based, row 0 at the top), e.g. ``"r1c1"`` for 4."""
    r, c = divmod(int(action), COLS)
    return f"r{r}c{c}"
