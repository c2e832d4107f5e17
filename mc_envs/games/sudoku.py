"""Sudoku as a constraint satisfaction problem (Cazenave 2009, section 5.3): rules, kernels, text.

Every cell is a variable whose domain is a bitmask of the values still allowed (bit ``v - 1`` for
value ``v``). Assigning a value removes it from the domains of the empty cells of the same row,
column and box (forward checking). As soon as an empty cell has an empty domain the game is a dead
end and ends. A game is solved when every cell holds a value.

Actions: ``cell * size + (value - 1)`` with ``cell = row * size + column`` (row 0 at the top).

Legal actions depend on the branching mode stored in the state:

- ``BRANCH_MRV`` (0): only the values of the most constrained empty cell (the smallest domain;
  ties go to the lowest cell index), as in the paper's search, where one variable is branched on
  at a time;
- ``BRANCH_ALL`` (1): every value of every empty cell.

Score: the number of filled cells, givens included, so a solved grid scores ``size * size`` whatever
the puzzle; the reward of a move is 1 (one more cell). This is the paper's playout score (the depth
reached before a dead end) plus the constant number of givens.

Playout policies (codes of :data:`POLICIES`):

- ``"random"``: a uniformly chosen legal action;
- ``"mrv"``: the empty cell with the smallest domain (ties: lowest index), one of its values chosen
  uniformly (the paper's playout). Under ``BRANCH_MRV`` both policies make the same choices.

Text format: ``size * size`` symbols row by row, whitespace ignored; ``.`` or ``0`` for an empty
cell; values ``1``-``9``, then for 16x16 ``A``-``G`` for 10-16 (case-insensitive).

State layout (one flat int64 array; copying it is a complete snapshot)::

    index                      meaning
    0                          SIZE      n (9 or 16)
    1                          BOX       box side b (3 or 4), n = b * b
    2                          FILLED    number of filled cells (the score)
    3                          DEAD      1 when an empty cell has an empty domain
    4                          BRANCH    branching mode (BRANCH_MRV or BRANCH_ALL)
    5                          MOVES     moves played since the puzzle
    6, 7                       reserved (0)
    HEADER + cell              value of the cell, 0 when empty        (cell = row * n + column)
    HEADER + n*n + cell        domain bitmask of the cell, 0 when filled
    HEADER + 2*n*n + cell      domain size of the cell, n + 1 when filled (so the most
                               constrained empty cell is the first minimum of this section)
    HEADER + 3*n*n + cell      1 when the cell is a given of the puzzle, else 0 (the kernels never
                               read or change it; drawings tell givens from played values by it)
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import Kernel
from mc_envs.rng import rng_below

SIZE, BOX, FILLED, DEAD, BRANCH, MOVES = range(6)
HEADER = 8
BRANCH_MRV, BRANCH_ALL = 0, 1
BRANCHINGS = {"mrv": BRANCH_MRV, "all": BRANCH_ALL}
POLICY_RANDOM, POLICY_MRV = 0, 1
POLICIES = {"random": POLICY_RANDOM, "mrv": POLICY_MRV}
SYMBOLS = "123456789ABCDEFG"


def box_side(size: int) -> int:
    """The box side of a grid: 3 for 9x9, 4 for 16x16.

    Raises:
        ValueError: if ``size`` is not 9 or 16.
    """
    if size not in (9, 16):
        raise ValueError(f"Sudoku size must be 9 or 16, got {size!r}")
    return 3 if size == 9 else 4


# -- compiled rules -------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def popcount(x: int) -> int:
    """The number of set bits of a non-negative integer below 2**32."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@njit(cache=True, nogil=True)
def nth_bit(mask: int, k: int) -> int:
    """The index of the ``k``-th set bit of ``mask`` (k = 0 is the lowest)."""
    i = 0
    while True:
        if mask & (1 << i):
            if k == 0:
                return i
            k -= 1
        i += 1


@njit(cache=True, nogil=True)
def mrv_cell(state: np.ndarray) -> int:
    """The empty cell with the smallest domain (lowest index on ties), -1 if the grid is full."""
    n = state[SIZE]
    cells = n * n
    sizes = HEADER + 2 * cells
    best, best_count = -1, n + 1
    for c in range(cells):
        k = state[sizes + c]
        if k < best_count:
            best, best_count = c, k
            if k <= 1:
                break
    return best


@njit(cache=True, nogil=True)
def is_over(state: np.ndarray) -> bool:
    """True when the grid is full or a dead end."""
    n = state[SIZE]
    return state[DEAD] != 0 or state[FILLED] == n * n


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """Writes the legal actions, sorted, into ``out`` and returns their number."""
    if is_over(state):
        return 0
    n = state[SIZE]
    cells = n * n
    dom = HEADER + cells
    count = 0
    if state[BRANCH] == BRANCH_MRV:
        c = mrv_cell(state)
        d = state[dom + c]
        for v in range(n):
            if d & (1 << v):
                out[count] = c * n + v
                count += 1
        return count
    for c in range(cells):
        if state[HEADER + c] == 0:
            d = state[dom + c]
            for v in range(n):
                if d & (1 << v):
                    out[count] = c * n + v
                    count += 1
    return count


@njit(cache=True, nogil=True)
def _remove(state: np.ndarray, p: int, bit: int, dom: int, cells: int) -> None:
    d = state[dom + p]
    if d & bit:  # filled cells have an empty domain, so they never match
        d ^= bit
        state[dom + p] = d
        state[dom + cells + p] -= 1
        if d == 0:
            state[DEAD] = 1


@njit(cache=True, nogil=True)
def assign(state: np.ndarray, cell: int, value: int) -> None:
    """Puts ``value`` (1-based) in the empty ``cell`` and forward-checks its row, column and box."""
    n = state[SIZE]
    b = state[BOX]
    dom = HEADER + n * n
    cells = n * n
    bit = 1 << (value - 1)
    state[HEADER + cell] = value
    state[dom + cell] = 0
    state[dom + cells + cell] = n + 1
    state[FILLED] += 1
    r = cell // n
    col = cell - r * n
    for i in range(n):
        _remove(state, r * n + i, bit, dom, cells)
        _remove(state, i * n + col, bit, dom, cells)
    r0 = (r // b) * b
    c0 = (col // b) * b
    for i in range(b):
        for j in range(b):
            _remove(state, (r0 + i) * n + c0 + j, bit, dom, cells)


@njit(cache=True, nogil=True)
def play(state: np.ndarray, action: int, ws: np.ndarray) -> float:
    """Applies a legal action in place; the reward is 1 (one more filled cell)."""
    n = state[SIZE]
    assign(state, action // n, action % n + 1)
    state[MOVES] += 1
    return 1.0


@njit(cache=True, nogil=True)
def score(state: np.ndarray) -> float:
    """The number of filled cells, givens included."""
    return float(state[FILLED])


@njit(cache=True, nogil=True)
def choose(state: np.ndarray, policy: int, rng: np.ndarray, ws: np.ndarray) -> int:
    """One move of a playout policy; -1 when the game is over."""
    if is_over(state):
        return -1
    if policy == POLICY_MRV:
        n = state[SIZE]
        c = mrv_cell(state)
        d = state[HEADER + n * n + c]
        return c * n + nth_bit(d, rng_below(rng, popcount(d)))
    k = legal(state, ws, ws)
    return ws[rng_below(rng, k)]


@njit(cache=True, nogil=True)
def playout(
    state: np.ndarray, policy: int, rng: np.ndarray, ws: np.ndarray, seq: np.ndarray, start: int
) -> int:
    """Plays to the end with the policy of that code; writes the actions to ``seq[start:]``."""
    count = 0
    while True:
        a = choose(state, policy, rng, ws)
        if a < 0:
            return count
        play(state, a, ws)
        seq[start + count] = a
        count += 1


@njit(cache=True, nogil=True)
def observe(state: np.ndarray, out: np.ndarray) -> None:
    """Writes the grid (``size`` x ``size``, 0 for empty) into ``out``."""
    n = state[SIZE]
    for r in range(n):
        for c in range(n):
            out[r, c] = state[HEADER + r * n + c]


def workspace(state: np.ndarray) -> np.ndarray:
    """The scratch array of the kernels: room for every action of the grid."""
    n = int(state[SIZE])
    return np.zeros(n * n * n, dtype=np.int64)


def make_kernel(size: int) -> Kernel:
    """The compiled rules of a ``size`` x ``size`` grid.

    One kernel serves both sizes and both branching modes (they are in the state), so one compiled
    search serves them all.
    """
    box_side(size)
    return Kernel(
        name="sudoku",
        legal=legal,
        play=play,
        playout=playout,
        score=score,
        workspace=workspace,
        max_moves=size * size,
        max_actions=size * size * size,
        policies=dict(POLICIES),
        observe=observe,
    )


# -- states, text and generation ------------------------------------------------------------------


def _where(index: int, size: int) -> str:
    return f"row {index // size + 1}, column {index % size + 1}"


def new_state(grid: np.ndarray, branching: str = "mrv") -> np.ndarray:
    """The state of a puzzle: givens placed, domains forward-checked.

    Args:
        grid: ``size * size`` values (any shape), 0 for an empty cell.
        branching: ``"mrv"`` or ``"all"`` (see the module docstring).

    Raises:
        ValueError: a value out of range or two equal givens in a row, column or box (the message
            names both positions, rows and columns counted from 1), or an unknown branching.
    """
    values = np.ascontiguousarray(np.asarray(grid, dtype=np.int64).ravel())
    cells = values.shape[0]
    size = int(round(cells**0.5))
    if size * size != cells:
        raise ValueError(f"a Sudoku grid has 81 or 256 cells, got {cells}")
    b = box_side(size)
    if branching not in BRANCHINGS:
        raise ValueError(f"branching must be one of {sorted(BRANCHINGS)}, got {branching!r}")
    i, j, unit = _conflict(values, size, b)
    if i >= 0:
        v = int(values[i])
        if j < 0:
            raise ValueError(f"value {v} at {_where(i, size)} is outside 1..{size}")
        raise ValueError(
            f"given {SYMBOLS[v - 1]} at {_where(i, size)} repeats the "
            f"{SYMBOLS[v - 1]} at {_where(j, size)} in the same {UNITS[unit]}"
        )
    return _lay(values, size, b, BRANCHINGS[branching])


UNITS = ("row", "column", "box")


@njit(cache=True, nogil=True)
def _conflict(values: np.ndarray, size: int, box: int) -> tuple[int, int, int]:
    """The first fault of a grid's givens, cell by cell and for each cell its row, column, box:
    ``(i, -1, 0)`` for a value outside 0..size at cell ``i``, ``(i, j, unit)`` for a given at ``i``
    repeating the given at ``j`` in a unit of :data:`UNITS`, ``(-1, -1, 0)`` when there is none."""
    seen = np.full((3, size, size + 1), -1, np.int64)  # [unit, which, value] -> cell
    for i in range(values.shape[0]):
        v = values[i]
        if v == 0:
            continue
        if v < 1 or v > size:
            return i, -1, 0
        r = i // size
        c = i - r * size
        for unit, which in enumerate((r, c, (r // box) * box + c // box)):
            j = seen[unit, which, v]
            if j >= 0:
                return i, j, unit
            seen[unit, which, v] = i
    return -1, -1, 0


@njit(cache=True, nogil=True)
def _lay(values: np.ndarray, size: int, box: int, branch: int) -> np.ndarray:
    """The state of givens that :func:`_conflict` found no fault in."""
    cells = size * size
    state = np.zeros(HEADER + 4 * cells, dtype=np.int64)
    state[SIZE], state[BOX], state[BRANCH] = size, box, branch
    state[HEADER + cells : HEADER + 2 * cells] = (1 << size) - 1
    state[HEADER + 2 * cells : HEADER + 3 * cells] = size
    for i in range(cells):
        if values[i]:
            assign(state, i, values[i])
            state[HEADER + 3 * cells + i] = 1
    return state


def parse(text: str, size: int | None = None) -> np.ndarray:
    """Reads a puzzle from text (see the module docstring for the format).

    Args:
        text: 81 or 256 symbols, whitespace ignored.
        size: 9 or 16 to require that size; by default it follows from the length.

    Returns:
        The grid, ``size`` x ``size`` int64, 0 for an empty cell.

    Raises:
        ValueError: wrong length, or a bad symbol (naming its row, column and the symbol).
    """
    symbols = "".join(text.split())
    if size is None:
        size = 9 if len(symbols) == 81 else 16 if len(symbols) == 256 else 0
    if size not in (9, 16) or len(symbols) != size * size:
        want = "81 or 256" if size not in (9, 16) else str(size * size)
        raise ValueError(f"a Sudoku puzzle has {want} symbols, got {len(symbols)}")
    grid = np.zeros(size * size, dtype=np.int64)
    for i, ch in enumerate(symbols):
        if ch in ".0":
            continue
        v = SYMBOLS.find(ch.upper()) + 1
        if not 1 <= v <= size:
            raise ValueError(
                f"bad symbol {ch!r} at {_where(i, size)}: use '.' or '0' for empty and "
                f"{SYMBOLS[:size]} for values"
            )
        grid[i] = v
    return grid.reshape(size, size)


def to_text(grid: np.ndarray) -> str:
    """One line of ``size * size`` symbols, ``.`` for empty: the inverse of :func:`parse`."""
    return "".join("." if v == 0 else SYMBOLS[v - 1] for v in np.asarray(grid).ravel().tolist())


def format_grid(grid: np.ndarray) -> str:
    """The grid as text, one row a line, boxes separated by ``|`` and ``-`` (``.`` for empty)."""
    values = np.asarray(grid).ravel()
    size = int(round(len(values) ** 0.5))
    b = box_side(size)
    lines = []
    for r in range(size):
        if r and r % b == 0:
            lines.append("-+-".join(["-" * (2 * b - 1)] * b))
        row = [to_text(values[r * size + c : r * size + c + 1]) for c in range(size)]
        lines.append(" | ".join(" ".join(row[i : i + b]) for i in range(0, size, b)))
    return "\n".join(lines)


def grid_of(state: np.ndarray) -> np.ndarray:
    """The grid values of a state, ``size`` x ``size``, 0 for empty."""
    n = int(state[SIZE])
    return state[HEADER : HEADER + n * n].reshape(n, n).copy()


def givens_of(state: np.ndarray) -> np.ndarray:
    """A bool mask of the puzzle's givens, ``size`` x ``size``."""
    n = int(state[SIZE])
    return state[HEADER + 3 * n * n : HEADER + 4 * n * n].reshape(n, n) != 0


def is_valid_solution(grid: np.ndarray) -> bool:
    """True when the grid is full and every row, column and box holds each value once."""
    g = np.asarray(grid).reshape(-1)
    size = int(round(len(g) ** 0.5))
    b = box_side(size)
    rows = g.reshape(size, size)
    want = np.arange(1, size + 1)
    boxes = rows.reshape(b, b, b, b).transpose(0, 2, 1, 3).reshape(size, size)
    return all(
        np.array_equal(np.sort(unit), want) for grid2 in (rows, rows.T, boxes) for unit in grid2
    )


def action_to_string(state: np.ndarray, action: int) -> str:
    """The move in Sudoku notation, rows and columns from 1: ``"r3c4=7"`` (16x16: values 1-9 then
    A-G)."""
    n = int(state[SIZE])
    cell, v = divmod(int(action), n)
    r, c = divmod(cell, n)
    return f"r{r + 1}c{c + 1}={SYMBOLS[v]}"
