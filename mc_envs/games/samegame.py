"""SameGame rules: a numba kernel over one flat int32 array, and the board text format.

A move removes a 4-connected group of n >= 2 cells of one colour and scores (n - 2)^2. Cells above
fall down; an empty column is removed and the columns to its right shift left. Clearing the board
scores a 1000 bonus. The game ends when no group of two cells remains.

State layout (int32), for R rows and C columns, on a board padded with a border of -1 cells so
that the flood fill needs no bounds checks (W = C + 2)::

    s[0] score        s[1] moves played    s[2] R        s[3] C        s[4] colours
    s[5] penalty      s[6] cells left      s[7] columns in use (a left-packed prefix)
    s[8] end scored   s[9] unused
    s[10 + (r + 1) * W + (c + 1)] colour at row r (0 = TOP), column c (0 = LEFT); 0 = empty

                 c=0       c=1            c=C-1
    border    [10]     [11]     ...     [10+W-1]          all -1
    r=0       [10+W]=-1 [10+W+1] [10+W+2] ... [10+2W-1]=-1  top row
    ...
    r=R-1     the bottom row, where cells rest; then a last border row

An action is the cell index ``r * C + c`` (unpadded); the action of a group is its canonical cell,
the group's cell with the smallest index (its top row, then its leftmost cell there). Scanning cells
in index order finds groups in increasing order of their actions, so the kernel lists them sorted.

Leftover penalties, applied once at the end when cells remain (with the same +1000 for a clear):
``"none"`` (0, the literature's default) no penalty; ``"jsgames"`` (1) minus (N - 2)^2 for the N
cells left; ``"schadd"`` (2) minus (n_c - 2)^2 for each colour with n_c >= 2 cells left.
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import njit
from mc_envs.games.samegame_text import board_array as board_array  # re-exported
from mc_envs.games.samegame_text import format_board as format_board  # re-exported
from mc_envs.games.samegame_text import parse_board as parse_board  # re-exported
from mc_envs.rng import rng_below

SCORE, MOVES, ROWS, COLS, COLORS, PENALTY, LEFT, NCOLS, ENDED = range(9)
HEADER = 10
BORDER = -1
CLEAR_BONUS = 1000
PENALTIES = {"none": 0, "jsgames": 1, "schadd": 2}
POLICIES = {"random": 0, "tabu": 1}

# Workspace (int32): ws[0] visit stamp, then visited[P], stack[P], column-of[P] over padded cells
# (P = (R + 2) * W), then for groups: cell[N], action[N], colour[N], candidates[N] (N = R * C).


def _sizes(rows: int, cols: int) -> tuple[int, int, int]:
    width = cols + 2
    return width, (rows + 2) * width, rows * cols


def new_state(board: np.ndarray, colors: int, penalty: str = "none") -> np.ndarray:
    """The state array of a board (R x C ints, 0 = empty, colours 1..colors; gravity is applied)."""
    return new_states(np.asarray(board)[None], colors, penalty)[0]


def new_states(boards: np.ndarray, colors: int, penalty: str = "none") -> np.ndarray:
    """The states of K boards of one size (K x R x C), stacked: :func:`new_state` of each."""
    boards = np.ascontiguousarray(boards, dtype=np.int32)
    count, rows, cols = boards.shape
    s = np.zeros((count, HEADER + _sizes(rows, cols)[1]), dtype=np.int32)
    s[:, ROWS], s[:, COLS], s[:, COLORS], s[:, PENALTY] = rows, cols, colors, PENALTIES[penalty]
    _lay_all(s, boards)
    return s


@njit(cache=True, nogil=True)
def _lay_all(states, boards):
    for i in range(states.shape[0]):
        _lay(states[i], boards[i])


@njit(cache=True, nogil=True)
def _lay(s, board):
    """Lays ``board`` into the state ``s`` (its header's sizes set): cells fall down, empty
    columns close up to the left, the border is written; scores the end if no group is left."""
    rows, cols = board.shape
    width = cols + 2
    s[HEADER:] = BORDER
    for r in range(rows):
        for c in range(cols):
            s[HEADER + (r + 1) * width + c + 1] = 0
    left = column = 0
    for c in range(cols):
        row = rows - 1
        for r in range(rows - 1, -1, -1):
            if board[r, c] > 0:
                s[HEADER + (row + 1) * width + column + 1] = board[r, c]
                row -= 1
        if row < rows - 1:
            left += rows - 1 - row
            column += 1
    s[LEFT], s[NCOLS] = left, column
    if not has_group(s):
        finish(s)


def workspace(state: np.ndarray) -> np.ndarray:
    """Scratch space for the kernel functions."""
    width, padded, n = _sizes(int(state[ROWS]), int(state[COLS]))
    ws = np.zeros(1 + 3 * padded + 4 * n, dtype=np.int32)
    ws[1 + 2 * padded : 1 + 3 * padded] = np.arange(padded) % width
    return ws


def board_of(state: np.ndarray) -> np.ndarray:
    """The board as an R x C array (row 0 at the top), a view into the state."""
    rows, cols = int(state[ROWS]), int(state[COLS])
    return state[HEADER:].reshape(rows + 2, cols + 2)[1:-1, 1:-1]


_H1 = np.uint64(0x9E3779B97F4A7C15)
_H2 = np.uint64(0xBF58476D1CE4E5B9)
_H3 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _H2
    z = (z ^ (z >> np.uint64(27))) * _H3
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def _cell_hash(p):
    return _mix(p * _H1 + np.uint64(1))


@njit(cache=True, nogil=True)
def _group_code(h, color):
    """A group's code from the XOR of its cells' hashes and its colour."""
    return np.int64(_mix(h ^ (np.uint64(color) * _H3)) >> np.uint64(2))


@njit(cache=True, nogil=True)
def find_groups(s, ws, codes=None):
    """Lists the groups of 2+ cells by increasing action; returns how many.

    Fills the workspace's group cell (padded index), action and colour arrays, and with ``codes``
    (an int64 array) the groups' move codes, as :func:`code` gives them, in the same pass.
    """
    rows = np.int64(s[ROWS])
    cols = np.int64(s[COLS])
    ncols = np.int64(s[NCOLS])
    width = cols + 2
    padded = (rows + 2) * width
    n = rows * cols
    b = s[HEADER:]
    ws[0] += 1
    stamp = ws[0]
    visited = ws[1 : 1 + padded]
    stack = ws[1 + padded : 1 + 2 * padded]
    g0 = 1 + 3 * padded
    gcell = ws[g0 : g0 + n]
    gaction = ws[g0 + n : g0 + 2 * n]
    gcolor = ws[g0 + 2 * n : g0 + 3 * n]
    ng = 0
    for r in range(rows):
        row = (r + 1) * width + 1
        for c in range(ncols):
            i = row + c
            color = b[i]
            if color == 0 or visited[i] == stamp:
                continue
            if b[i + 1] != color and b[i + width] != color:
                continue  # alone: cells above and to the left were scanned already
            visited[i] = stamp
            stack[0] = i
            sp = 1
            size = 0
            h = np.uint64(0)
            while sp > 0:
                sp -= 1
                p = np.uint64(stack[sp])
                size += 1
                if codes is not None:
                    h ^= _cell_hash(p)
                for q in (
                    p - np.uint64(1),
                    p + np.uint64(1),
                    p - np.uint64(width),
                    p + np.uint64(width),
                ):
                    if b[q] == color and visited[q] != stamp:
                        visited[q] = stamp
                        stack[sp] = q
                        sp += 1
            if size >= 2:
                gcell[ng] = i
                gaction[ng] = r * cols + c
                gcolor[ng] = color
                if codes is not None:
                    codes[ng] = _group_code(h, color)
                ng += 1
    return ng


@njit(cache=True, nogil=True)
def has_group(s):
    """True when some group of two cells remains."""
    rows = np.int64(s[ROWS])
    width = np.int64(s[COLS]) + 2
    ncols = np.int64(s[NCOLS])
    b = s[HEADER:]
    for r in range(rows):
        row = (r + 1) * width + 1
        for c in range(ncols):
            i = row + c
            v = b[i]
            if v != 0 and (b[i + 1] == v or b[i + width] == v):
                return True
    return False


@njit(cache=True, nogil=True)
def remove(s, cell, ws):
    """Removes the group at padded index ``cell``, applies gravity; returns its size."""
    rows = np.int64(s[ROWS])
    width = np.int64(s[COLS]) + 2
    ncols = np.int64(s[NCOLS])
    padded = (rows + 2) * width
    b = s[HEADER:]
    stack = ws[1 + padded : 1 + 2 * padded]
    colof = ws[1 + 2 * padded : 1 + 3 * padded]
    color = b[cell]
    b[cell] = 0
    stack[0] = cell
    sp = 1
    size = 0
    minc = colof[cell]
    maxc = minc
    while sp > 0:
        sp -= 1
        p = np.uint64(stack[sp])
        size += 1
        pc = colof[p]
        if pc < minc:
            minc = pc
        elif pc > maxc:
            maxc = pc
        for q in (p - np.uint64(1), p + np.uint64(1), p - np.uint64(width), p + np.uint64(width)):
            if b[q] == color:
                b[q] = 0
                stack[sp] = q
                sp += 1
    for c in range(minc, maxc + 1):  # gravity: compact each touched column downwards
        w = rows * width + c
        for i in range(rows * width + c, 0, -width):
            v = b[i]
            if v <= 0:
                if v < 0:
                    break
                continue
            if w != i:
                b[w] = v
                b[i] = 0
            w -= width
    bottom = rows * width
    w = minc
    for c in range(minc, ncols + 1):  # drop empty columns, shifting the rest left
        if b[bottom + c] == 0:
            continue
        if w != c:
            for i in range(width + c, bottom + c + 1, width):
                b[i - c + w] = b[i]
                b[i] = 0
        w += 1
    s[NCOLS] = w - 1
    s[LEFT] -= size
    return size


@njit(cache=True, nogil=True)
def color_counts(s):
    """The cells of each colour, indexed by colour (index 0 unused)."""
    counts = np.zeros(s[COLORS] + 1, dtype=np.int64)
    for v in s[HEADER:]:
        if v > 0:
            counts[v] += 1
    return counts


@njit(cache=True, nogil=True)
def finish(s):
    """Scores the end of the game once: the clear bonus or the leftover penalty."""
    if s[ENDED]:
        return 0
    s[ENDED] = 1
    delta = 0
    if s[LEFT] == 0:
        delta = CLEAR_BONUS
    elif s[PENALTY] == 1:
        if s[LEFT] > 2:
            delta = -(s[LEFT] - 2) * (s[LEFT] - 2)
    elif s[PENALTY] == 2:
        counts = color_counts(s)
        for k in range(1, s[COLORS] + 1):
            if counts[k] >= 2:
                delta -= (counts[k] - 2) * (counts[k] - 2)
    s[SCORE] += delta
    return delta


@njit(cache=True, nogil=True)
def _listed(s, ws, out, ng):
    if ng == 0:
        finish(s)
    rows = np.int64(s[ROWS])
    cols = np.int64(s[COLS])
    g0 = 1 + 3 * (rows + 2) * (cols + 2) + rows * cols
    for j in range(ng):  # a slice assignment would compile numba's shape error message (1-2 s)
        out[j] = ws[g0 + j]
    return ng


@njit(cache=True, nogil=True)
def legal(s, ws, out):
    """Writes the actions (canonical cells) of the groups, sorted, into ``out``; returns how many."""
    return _listed(s, ws, out, find_groups(s, ws))


@njit(cache=True, nogil=True)
def legal_codes(s, ws, out, codes):
    """:func:`legal`, and the actions' codes (as :func:`code` gives them) in ``codes``, in one pass."""
    return _listed(s, ws, out, find_groups(s, ws, codes))


@njit(cache=True, nogil=True)
def padded_index(s, action):
    """The padded state index of the cell of an action."""
    cols = np.int64(s[COLS])
    return (action // cols + 1) * (cols + 2) + action % cols + 1


@njit(cache=True, nogil=True)
def play(s, action, ws):
    """Removes the group at ``action``; returns the points of the group.

    The end of the game (clear bonus or penalty) is scored by the next :func:`legal` or
    :func:`playout` call, which finds that no group is left.
    """
    size = remove(s, padded_index(s, action), ws)
    gain = (size - 2) * (size - 2)
    s[SCORE] += gain
    s[MOVES] += 1
    return float(gain)


@njit(cache=True, nogil=True)
def flood(s, cell, ws):
    """The group at padded index ``cell``: its number of cells and the XOR of their hashes (the
    board is not changed)."""
    rows = np.int64(s[ROWS])
    width = np.int64(s[COLS]) + 2
    padded = (rows + 2) * width
    b = s[HEADER:]
    visited = ws[1 : 1 + padded]
    stack = ws[1 + padded : 1 + 2 * padded]
    ws[0] += 1
    stamp = ws[0]
    color = b[cell]
    visited[cell] = stamp
    stack[0] = cell
    sp = 1
    size = 0
    h = np.uint64(0)
    while sp > 0:
        sp -= 1
        p = np.uint64(stack[sp])
        size += 1
        h ^= _cell_hash(p)
        for q in (p - np.uint64(1), p + np.uint64(1), p - np.uint64(width), p + np.uint64(width)):
            if b[q] == color and visited[q] != stamp:
                visited[q] = stamp
                stack[sp] = q
                sp += 1
    return size, h


@njit(cache=True, nogil=True)
def code(s, action, ws):
    """NRPA's code of the move ``action`` (before it is played): a hash of its colour and the
    positions of the cells it removes (Rosin 2011, Cazenave), a non-negative int64."""
    cell = padded_index(s, action)
    # np.uint64: run as Python while flood runs compiled (a cold cache), the hash comes back a
    # Python int, which numba would pass to an int64 specialization of _group_code
    h = np.uint64(flood(s, cell, ws)[1])
    return _group_code(h, s[HEADER + cell])


@njit(cache=True, nogil=True)
def tabu_color(s):
    """The colour with the most cells (lowest colour on ties): TabuColorRandom's tabu colour."""
    counts = color_counts(s)
    best = 1
    for k in range(2, s[COLORS] + 1):
        if counts[k] > counts[best]:
            best = k
    return best


@njit(cache=True, nogil=True)
def playout(s, policy, rng, ws, seq, start):
    """Plays to the end: uniformly random groups (policy 0) or TabuColorRandom (policy 1)."""
    rows = np.int64(s[ROWS])
    cols = np.int64(s[COLS])
    n = rows * cols
    g0 = 1 + 3 * (rows + 2) * (cols + 2)
    gcell = ws[g0 : g0 + n]
    gaction = ws[g0 + n : g0 + 2 * n]
    gcolor = ws[g0 + 2 * n : g0 + 3 * n]
    cand = ws[g0 + 3 * n : g0 + 4 * n]
    tabu = tabu_color(s) if policy == 1 else -1
    k = 0
    while True:
        ng = find_groups(s, ws)
        if ng == 0:
            break
        if tabu >= 0:
            m = 0
            for j in range(ng):
                if gcolor[j] != tabu:
                    cand[m] = j
                    m += 1
            g = np.int64(cand[rng_below(rng, m)]) if m > 0 else rng_below(rng, ng)
        else:
            g = rng_below(rng, ng)
        size = remove(s, np.int64(gcell[g]), ws)  # as play: one specialization
        s[SCORE] += (size - 2) * (size - 2)
        seq[start + k] = gaction[g]
        k += 1
    s[MOVES] += k
    finish(s)
    return k


@njit(cache=True, nogil=True)
def observe(s, out):
    """Writes the board (R x C, row 0 at the top, 0 = empty) into ``out``."""
    width = s[COLS] + 2
    for r in range(s[ROWS]):
        for c in range(s[COLS]):
            out[r, c] = s[HEADER + (r + 1) * width + c + 1]


@njit(cache=True, nogil=True)
def score(s):
    """The cumulative score."""
    return float(s[SCORE])


def action_to_string(state: np.ndarray, action: int) -> str:
    """The move in SameGame notation: the group's cell ``r<row>c<col>`` (0-based, row 0 at the
    top) and its colour, e.g. ``"r3c4 colour 2"``; ``"r3c4 empty"`` on an empty cell."""
    r, c = divmod(int(action), int(state[COLS]))
    color = int(board_of(state)[r, c]) if 0 <= r < int(state[ROWS]) else 0
    return f"r{r}c{c} " + (f"colour {color}" if color else "empty")
