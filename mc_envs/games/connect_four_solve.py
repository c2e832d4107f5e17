"""Connect Four solved exactly: a compiled negamax over the rules' bitboards.

:func:`solve` gives a position's game-theoretic value and :func:`move_values` the value of every
legal move, both from the side of the player to move: +1 a win, 0 a draw, -1 a loss with perfect
play by both sides (the weak value: how fast a win comes is not distinguished).

The search is alpha-beta negamax on the bitboards of :mod:`mc_envs.games.connect_four` (same bit
layout, ``bit = col * 7 + row``, a sentinel bit on top of every column), in the form of
(current player's stones, all stones). It uses the standard techniques of Connect Four solvers:

- a move that wins at once ends the search of a node (+1);
- an opponent's immediate threat must be blocked (two at once lose), and a move just under an
  opponent's winning cell is never played (it would hand that cell over);
- moves are ordered by the number of winning cells they create, then centre first;
- the weak value is found by two null-window searches (is it a win? else, is it a loss?);
- a transposition table keeps a lower and an upper bound of every position it has searched,
  keyed by the unique number ``stones of the mover + all stones`` (49 bits, stored whole, so a
  hit is never a different position). Bounds are game-theoretic facts, so the table stays valid
  across searches and is shared by them.

Every search takes a node budget and raises :class:`SolverBudgetError` when it is spent, so no
call runs unbounded. Input states are checked with :func:`connect_four.check_state` first.
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import State
from mc_envs.games.connect_four import COLS, HEIGHT, VALID, check_state
from mc_envs.games.two_player import OVER, PLAYER, RESULT, STONES0, STONES1

BOTTOM = sum(1 << (7 * c) for c in range(COLS))  # the lowest cell of every column
ORDER = np.array([3, 2, 4, 1, 5, 0, 6], dtype=np.int64)  # centre first
DEFAULT_NODES = 50_000_000
# Statistics array of a search: nodes visited, node budget, and 1 once the budget is spent.
NODES, LIMIT, ABORTED = range(3)
SCORES = 42  # the row of the ordering scratch space that holds the scores


class SolverBudgetError(RuntimeError):
    """A search needed more nodes than its budget allowed."""


@njit(cache=True, nogil=True)
def winning_cells(stones: int, mask: int) -> int:
    """The empty cells (reachable or not) where one more stone would give ``stones`` four in a row.

    Args:
        stones: the bitboard of one player's stones.
        mask: the bitboard of all stones.
    """
    # Vertical: three stones just below the cell.
    r = (stones << 1) & (stones << 2) & (stones << 3)
    for s in (7, 6, 8):
        # The cell x completes one of the four windows of four along direction s that contain it.
        low = (stones << s) & (stones << (2 * s))  # x-s and x-2s
        r |= low & (stones << (3 * s))
        r |= low & (stones >> s)
        high = (stones >> s) & (stones >> (2 * s))  # x+s and x+2s
        r |= high & (stones << s)
        r |= high & (stones >> (3 * s))
    return r & (VALID ^ mask)


@njit(cache=True, nogil=True)
def _popcount(x: int) -> int:
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True, nogil=True)
def _probe(tt_keys: np.ndarray, tt_bounds: np.ndarray, key: int) -> tuple:
    i = key % tt_keys.shape[0]
    if tt_keys[i] == key:
        return np.int64(tt_bounds[i, 0]), np.int64(tt_bounds[i, 1])
    return np.int64(-1), np.int64(1)


@njit(cache=True, nogil=True)
def _store(tt_keys: np.ndarray, tt_bounds: np.ndarray, key: int, lo: int, hi: int) -> None:
    i = key % tt_keys.shape[0]
    if tt_keys[i] != key:
        tt_keys[i] = key
        tt_bounds[i, 0] = lo
        tt_bounds[i, 1] = hi
    else:
        tt_bounds[i, 0] = max(tt_bounds[i, 0], lo)
        tt_bounds[i, 1] = min(tt_bounds[i, 1], hi)


# A compiled kernel longer than 60 lines on purpose: the solver's recursive alpha-beta, whose move
# ordering, transposition table and bounds share the locals of one node; a helper call per node
# would slow the search.
@njit(nogil=True)  # not cached: numba's cache of a recursive function crashes when loaded
def negamax(
    mine: int,
    mask: int,
    alpha: int,
    beta: int,
    tt_keys: np.ndarray,
    tt_bounds: np.ndarray,
    stats: np.ndarray,
    order: np.ndarray,
) -> int:
    """The value of a position for the player to move, within the window (``alpha``, ``beta``).

    Fail-soft: a result at or below ``alpha`` is an upper bound of the value, one at or above
    ``beta`` a lower bound, one strictly between them the value. The position must not be over
    (the previous move did not win).

    Args:
        mine: the stones of the player to move.
        mask: all stones.
        alpha: the lower end of the window, in -1..1.
        beta: the upper end of the window, in -1..1, above ``alpha``.
        tt_keys: the transposition table's keys (-1 = empty), any length.
        tt_bounds: its (lower, upper) bounds, one row a key.
        stats: ``[nodes, node budget, aborted]``; once aborted, every call returns 0 at once.
        order: scratch space for the move ordering, (43, 7) int64: row ``p`` holds the moves,
            best first, of the position with ``p`` stones (0..41), row 42 their scores.
    """
    if stats[ABORTED]:
        return 0
    stats[NODES] += 1
    if stats[NODES] > stats[LIMIT]:
        stats[ABORTED] = 1
        return 0
    if mask == VALID:
        return 0
    possible = (mask + BOTTOM) & VALID
    if winning_cells(mine, mask) & possible:
        return 1
    theirs = mine ^ mask
    threats = winning_cells(theirs, mask)
    forced = threats & possible
    if forced:
        if forced & (forced - 1):
            return -1  # two immediate threats: one of them will be played
        possible = forced
    possible &= ~(threats >> 1)  # the cell under a threat would give the threat away
    if possible == 0:
        return -1
    key = mine + mask
    lo, hi = _probe(tt_keys, tt_bounds, key)
    if lo >= beta:
        return lo
    if hi <= alpha:
        return hi
    alpha, beta = max(alpha, lo), min(beta, hi)
    if alpha >= beta:
        return alpha
    moves = order[_popcount(mask)]
    scores = order[SCORES]
    n = 0
    for c in ORDER:
        move = possible & (np.int64(0x3F) << (7 * c))
        if move:
            sc = _popcount(winning_cells(mine | move, mask | move))
            j = n
            while j > 0 and scores[j - 1] < sc:  # stable: equal scores keep centre first
                moves[j], scores[j] = moves[j - 1], scores[j - 1]
                j -= 1
            moves[j], scores[j] = move, sc
            n += 1
    best = -1
    for i in range(n):
        move = moves[i]
        v = -negamax(
            theirs, mask | move, -beta, -max(alpha, best), tt_keys, tt_bounds, stats, order
        )
        if stats[ABORTED]:
            return 0
        if v > best:
            best = v
            if best >= beta:
                _store(tt_keys, tt_bounds, key, best, 1)
                return best
    if best > alpha:
        _store(tt_keys, tt_bounds, key, best, best)
    else:
        _store(tt_keys, tt_bounds, key, -1, best)
    return best


@njit(nogil=True)  # not cached either: it calls the recursive negamax
def weak_value(
    mine: int, mask: int, tt_keys: np.ndarray, tt_bounds: np.ndarray, stats: np.ndarray
) -> int:
    """The weak value (+1, 0, -1) of a position not over, by two null-window searches."""
    order = np.zeros((SCORES + 1, COLS), dtype=np.int64)
    if negamax(mine, mask, 0, 1, tt_keys, tt_bounds, stats, order) >= 1:
        return 1
    if negamax(mine, mask, -1, 0, tt_keys, tt_bounds, stats, order) <= -1:
        return -1
    return 0


def bitboards(state: np.ndarray | State) -> tuple[int, int]:
    """The solver's form of a Connect Four state: (stones of the player to move, all stones).

    Args:
        state: a kernel state array or a :class:`~mc_envs.core.State` of ``ConnectFour``.

    Raises:
        ValueError: not a Connect Four state, or an impossible one (see ``check_state``).
    """
    if isinstance(state, State):
        if state.game != "ConnectFour":
            raise ValueError(f"a {state.game} state given to the Connect Four solver")
        state = state.data
    check_state(state)
    mask = int(state[STONES0]) | int(state[STONES1])
    return int(state[STONES0 + int(state[PLAYER])]), mask


class Solver:
    """An exact Connect Four solver with its own transposition table.

    Args:
        table_bits: the table holds about ``2 ** table_bits`` positions (17 bytes each).
        max_nodes: the default node budget of one call.
    """

    def __init__(self, table_bits: int = 22, max_nodes: int = DEFAULT_NODES) -> None:
        if not 10 <= table_bits <= 28:
            raise ValueError(f"table_bits must be within 10..28, got {table_bits}")
        size = (1 << table_bits) + 1  # odd: the 7-bit column structure of keys spreads better
        self.tt_keys = np.full(size, -1, dtype=np.int64)
        self.tt_bounds = np.zeros((size, 2), dtype=np.int8)
        self.max_nodes = max_nodes
        self.nodes = 0  # nodes visited by the last call

    def _search(self, mine: int, mask: int, max_nodes: int | None) -> int:
        limit = self.max_nodes if max_nodes is None else max_nodes
        if limit < 1:
            raise ValueError(f"max_nodes must be positive, got {limit}")
        stats = np.array([0, limit, 0], dtype=np.int64)
        v = weak_value(mine, mask, self.tt_keys, self.tt_bounds, stats)
        self.nodes += int(stats[NODES])
        if stats[ABORTED]:
            raise SolverBudgetError(f"the Connect Four solver spent its budget of {limit} nodes")
        return int(v)

    def solve(self, state: np.ndarray | State, *, max_nodes: int | None = None) -> int:
        """The value of ``state`` for the player to move: +1 win, 0 draw, -1 loss.

        A finished game has its result from the side of the player who would move next.

        Raises:
            ValueError: an invalid state.
            SolverBudgetError: the search needed more than ``max_nodes`` nodes.
        """
        mine, mask = bitboards(state)
        data = state.data if isinstance(state, State) else state
        self.nodes = 0
        if data[OVER]:
            return int(data[RESULT]) * (1 - 2 * int(data[PLAYER]))
        return self._search(mine, mask, max_nodes)

    def move_values(
        self, state: np.ndarray | State, *, max_nodes: int | None = None
    ) -> dict[int, int]:
        """The value of every legal move (a column) for the player making it; empty once over.

        ``max_nodes`` bounds each move's search.

        Raises:
            ValueError: an invalid state.
            SolverBudgetError: a move's search needed more than ``max_nodes`` nodes.
        """
        mine, mask = bitboards(state)
        data = state.data if isinstance(state, State) else state
        self.nodes = 0
        values: dict[int, int] = {}
        if data[OVER]:
            return values
        for c in range(COLS):
            h = int(data[HEIGHT + c])
            if h == 6:
                continue
            move = 1 << (7 * c + h)
            if winning_cells(mine, mask) & move:
                values[c] = 1
            else:
                values[c] = -self._search(mine ^ mask, mask | move, max_nodes)
        return values


_default: Solver | None = None


def _solver() -> Solver:
    global _default
    if _default is None:
        _default = Solver()
    return _default


def solve(state: np.ndarray | State, *, max_nodes: int = DEFAULT_NODES) -> int:
    """The value of ``state`` for the player to move (+1 win, 0 draw, -1 loss), with a shared
    :class:`Solver`. See :meth:`Solver.solve`."""
    return _solver().solve(state, max_nodes=max_nodes)


def move_values(state: np.ndarray | State, *, max_nodes: int = DEFAULT_NODES) -> dict[int, int]:
    """The value of every legal move for the player to move, with a shared :class:`Solver`.
    See :meth:`Solver.move_values`."""
    return _solver().move_values(state, max_nodes=max_nodes)
