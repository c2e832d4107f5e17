"""Sudoku beyond the rules: the exact solver (a compiled depth-first search over the kernel's
forward checking) and the generator of puzzles from a random full grid.

Kept apart from :mod:`mc_envs.games.sudoku` (the rules and the playout kernel) so that each module
stays small; both read the same state layout.
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import njit
from mc_envs.games.sudoku import (
    DEAD,
    FILLED,
    HEADER,
    MOVES,
    SIZE,
    assign,
    box_side,
    mrv_cell,
    new_state,
)
from mc_envs.rng import rng_below, rng_state


@njit(cache=True, nogil=True)
def dfs(
    state: np.ndarray,
    rng: np.ndarray,
    randomize: bool,
    max_solutions: int,
    node_limit: int,
    solution: np.ndarray,
) -> tuple:
    """Depth-first forward-checking search, branching on the most constrained cell.

    Values are tried in increasing order, or in a random order (a fresh shuffle at every node) when
    ``randomize``: the paper's "Forward Checking" baseline. ``state`` is not modified.

    Args:
        state: the state to search from.
        rng: a generator state (``mc_envs.rng.rng_state``), used when ``randomize``.
        randomize: shuffle the values of every node.
        max_solutions: stop after this many solutions.
        node_limit: stop after this many assignments.
        solution: receives the grid values of the first solution (``size * size`` ints).

    Returns:
        (solutions found, nodes, exhausted): ``exhausted`` is True when the whole tree was searched,
        so the solution count is exact.
    """
    n = state[SIZE]
    cells = n * n
    length = state.shape[0]
    depth_max = cells - state[FILLED] + 1
    states = np.empty((depth_max, length), dtype=np.int64)
    values = np.empty((depth_max, n), dtype=np.int64)
    nvalues = np.zeros(depth_max, dtype=np.int64)
    pos = np.zeros(depth_max, dtype=np.int64)
    cell_of = np.zeros(depth_max, dtype=np.int64)
    found = 0
    nodes = 0
    states[0, :] = state
    top = 0
    fresh = True  # states[top] has not been expanded yet
    while top >= 0:
        s = states[top]
        if fresh:
            fresh = False
            if s[DEAD] != 0:
                top -= 1
                continue
            if s[FILLED] == cells:
                if found == 0:
                    solution[:] = s[HEADER : HEADER + cells]
                found += 1
                if found >= max_solutions:
                    return found, nodes, False
                top -= 1
                continue
            c = mrv_cell(s)
            d = s[HEADER + cells + c]
            k = 0
            for v in range(n):
                if d & (1 << v):
                    values[top, k] = v + 1
                    k += 1
            if randomize:
                for i in range(k - 1, 0, -1):
                    j = rng_below(rng, i + 1)
                    t = values[top, i]
                    values[top, i] = values[top, j]
                    values[top, j] = t
            nvalues[top] = k
            pos[top] = 0
            cell_of[top] = c
        if pos[top] >= nvalues[top]:
            top -= 1
            continue
        if nodes >= node_limit:
            return found, nodes, False
        v = values[top, pos[top]]
        pos[top] += 1
        states[top + 1, :] = states[top]
        child = states[top + 1]
        assign(child, cell_of[top], v)
        child[MOVES] += 1
        nodes += 1
        top += 1
        fresh = True
    return found, nodes, True


def solve(
    grid: np.ndarray,
    *,
    seed: int | None = None,
    max_solutions: int = 1,
    node_limit: int = 10**9,
) -> tuple[np.ndarray | None, int, int, bool]:
    """Solves a puzzle by depth-first forward checking (see :func:`dfs`).

    Args:
        grid: the puzzle (0 for empty).
        seed: values in random order from this seed; None for increasing order.
        max_solutions: stop after this many solutions (counts them up to that).
        node_limit: stop after this many assignments.

    Returns:
        (first solution or None, solutions counted, nodes, exhausted).
    """
    state = new_state(grid)
    n = int(state[SIZE])
    out = np.zeros(n * n, dtype=np.int64)
    rng = rng_state(0 if seed is None else seed)
    found, nodes, exhausted = dfs(state, rng, seed is not None, max_solutions, node_limit, out)
    return (out.reshape(n, n) if found else None), int(found), int(nodes), bool(exhausted)


def random_grid(size: int, seed: int) -> np.ndarray:
    """A random complete grid: randomized forward checking from the empty grid, with restarts.

    Args:
        size: 9 or 16.
        seed: decides the grid.
    """
    empty = np.zeros(size * size, dtype=np.int64)
    state = new_state(empty)
    out = np.zeros(size * size, dtype=np.int64)
    rng = rng_state(seed)
    while True:
        found, _, _ = dfs(state, rng, True, 1, 20 * size * size, out)
        if found:
            return out.reshape(size, size)


def generate(size: int, empty_fraction: float, np_random: np.random.Generator) -> np.ndarray:
    """A puzzle: a random complete grid with ``round(empty_fraction * size**2)`` cells emptied.

    Args:
        size: 9 or 16.
        empty_fraction: the share of cells emptied, in [0, 1].
        np_random: the source of randomness (the env's ``np_random``).

    Raises:
        ValueError: an ``empty_fraction`` outside [0, 1].
    """
    if not 0.0 <= empty_fraction <= 1.0:
        raise ValueError(f"empty_fraction must be in [0, 1], got {empty_fraction!r}")
    box_side(size)
    grid = random_grid(size, int(np_random.integers(0, 2**63 - 1))).ravel()
    holes = np_random.choice(
        size * size, size=int(round(empty_fraction * size * size)), replace=False
    )
    grid[holes] = 0
    return grid.reshape(size, size)
