"""Sudoku beyond the rules: the exact solver (a compiled depth-first search over the kernel's
forward checking) and the generator of puzzles from a random full grid.

Kept apart from :mod:`mc_envs.games.sudoku` (the rules and the playout kernel) so that each module
stays small; both read the same state layout.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from mc_envs._numba import instantiate, njit
from mc_envs.games.sudoku import (
    DEAD,
    FILLED,
    HEADER,
    MOVES,
    SIZE,
    _lay,
    assign,
    box_side,
    mrv_cell,
    new_state,
)
from mc_envs.rng import rng_below, rng_next, rng_state


# A compiled kernel longer than 60 lines on purpose: the solver's depth-first search keeps its
# stack, candidates and counters in locals through one loop; helpers would cost a call per node
# and a specialisation each to compile.
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
    for j in range(state.shape[0]):  # loops, not slice assignments: see agents/ops._copy_state
        states[0, j] = state[j]
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
                    for j in range(cells):
                        solution[j] = s[HEADER + j]
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
        for j in range(states.shape[1]):
            states[top + 1, j] = states[top, j]
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


def _grids(size, box, seeds, holes, grids):  # pragma: no cover  (compiled by instantiate)
    """Writes into ``grids[i]`` the random complete grid of ``seeds[i]`` (randomized forward checking
    from the empty grid, with restarts) with the cells ``holes[i]`` emptied."""
    cells = size * size
    for i in prange(seeds.shape[0]):
        empty = _lay(np.zeros(cells, np.int64), size, box, 0)
        rng = np.empty(1, np.uint64)
        rng[0] = np.uint64(seeds[i])
        rng[0] = rng_next(rng)  # rng_state(seeds[i])
        grid = grids[i]
        while not dfs(empty, rng, True, 1, 20 * cells, grid)[0]:
            pass
        for h in holes[i]:
            grid[h] = 0


_grids_serial = instantiate(_grids, "serial")
_grids_parallel = instantiate(_grids, "parallel", parallel=True)
PARALLEL_FROM = 8  # puzzles made in one call from which both cores share them


def random_grid(size: int, seed: int) -> np.ndarray:
    """A random complete grid: randomized forward checking from the empty grid, with restarts.

    Args:
        size: 9 or 16.
        seed: decides the grid.
    """
    grids = np.zeros((1, size * size), dtype=np.int64)
    _grids_serial(
        size, box_side(size), np.array([seed], np.int64), np.zeros((1, 0), np.int64), grids
    )
    return grids[0].reshape(size, size)


def generate(size: int, empty_fraction: float, np_random: np.random.Generator) -> np.ndarray:
    """A puzzle: a random complete grid with ``round(empty_fraction * size**2)`` cells emptied.

    Args:
        size: 9 or 16.
        empty_fraction: the share of cells emptied, in [0, 1].
        np_random: the source of randomness (the env's ``np_random``).

    Raises:
        ValueError: an ``empty_fraction`` outside [0, 1].
    """
    return generate_many(size, empty_fraction, [np_random])[0].reshape(size, size)


def generate_many(
    size: int,
    empty_fraction: float,
    generators: list[np.random.Generator],
    *,
    parallel: bool = False,
) -> np.ndarray:
    """One puzzle per generator, ``[K, size * size]``: :func:`generate` of each, made in one
    compiled call (with ``parallel``, on every core from :data:`PARALLEL_FROM` puzzles)."""
    if not 0.0 <= empty_fraction <= 1.0:
        raise ValueError(f"empty_fraction must be in [0, 1], got {empty_fraction!r}")
    box = box_side(size)
    cells = size * size
    count = len(generators)
    seeds = np.empty(count, np.int64)
    holes = np.empty((count, int(round(empty_fraction * cells))), np.int64)
    for i, g in enumerate(generators):  # each generator draws as generate always has
        seeds[i] = g.integers(0, 2**63 - 1)
        holes[i] = g.choice(cells, size=holes.shape[1], replace=False)
    grids = np.empty((count, cells), np.int64)
    parallel = parallel and count >= PARALLEL_FROM
    (_grids_parallel if parallel else _grids_serial)(size, box, seeds, holes, grids)
    return grids
