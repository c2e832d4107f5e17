"""What the two-player bitboard kernels share: the state header and the functions over it.

Both games start their state with the same fields (``STONES0, STONES1, PLAYER, MOVES, OVER,
RESULT``), so the score, player and returns functions are written once here (Go's header has
``PLAYER``, ``MOVES``, ``OVER`` and ``RESULT`` at the same places and uses them too), and the
uniform playout once as a template bound to each game's ``legal`` and ``play``.
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import state_error

# The header (the first six int64 of a state):
#
#     index   meaning
#     0       STONES0   bitboard of player 0's stones
#     1       STONES1   bitboard of player 1's stones
#     2       PLAYER    the player to move (0 or 1)
#     3       MOVES     stones on the board
#     4       OVER      1 once the game has ended
#     5       RESULT    at the end: +1 player 0 won, -1 player 1 won, 0 draw
STONES0, STONES1, PLAYER, MOVES, OVER, RESULT = range(6)
_FIELDS = ("stones of player 0", "stones of player 1", "player", "moves", "over", "result")


def check_header(game: str, s: list[int], cells: int, valid: int, won: tuple[bool, bool]) -> None:
    """Checks the shared header of a two-player state (as a list): stones within the ``valid``
    bits and disjoint, player and move count following from the stone counts (player 0 first),
    and the end flags matching ``won`` (whether each player has a winning line) and a full board.

    Raises:
        ValueError: naming the field and index of the first inconsistency.
    """
    for i in (STONES0, STONES1):
        if s[i] < 0 or s[i] & ~valid:
            raise state_error(game, _FIELDS[i], i, hex(s[i]), f"expected bits within {hex(valid)}")
    if s[STONES0] & s[STONES1]:
        raise state_error(
            game, _FIELDS[STONES1], STONES1, hex(s[STONES1]), "shares cells with player 0"
        )
    n0, n1 = bin(s[STONES0]).count("1"), bin(s[STONES1]).count("1")
    if n0 - n1 not in (0, 1):
        raise state_error(
            game, _FIELDS[STONES0], STONES0, f"{n0} stones", f"against {n1}: impossible"
        )
    if s[PLAYER] != n0 - n1:
        raise state_error(game, "player", PLAYER, s[PLAYER], f"expected {n0 - n1} from the stones")
    if s[MOVES] != n0 + n1:
        raise state_error(game, "moves", MOVES, s[MOVES], f"expected {n0 + n1} stones on the board")
    if all(won) or (won[0] and n0 == n1) or (won[1] and n0 != n1):
        raise state_error(
            game, "result", RESULT, s[RESULT], f"impossible: wins {won} after {n0}+{n1} moves"
        )
    over = int(any(won) or n0 + n1 == cells)
    result = 1 if won[0] else -1 if won[1] else 0
    if s[OVER] != over or s[RESULT] != result:
        i = OVER if s[OVER] != over else RESULT
        raise state_error(game, _FIELDS[i], i, s[i], f"expected {(over, result)[i - OVER]}")


def settle(state: np.ndarray, won: tuple[bool, bool], cells: int, line: str) -> np.ndarray:
    """Completes a state parsed from a board (its stones set): the move count and the mover from
    the stone counts (player 0 first), the end flags from ``won`` (whether each player has
    ``line``, e.g. "four in a row") and a full board of ``cells`` stones; returns ``state``.

    Raises:
        ValueError: impossible stone counts, or both players with a line.
    """
    n0, n1 = bin(int(state[STONES0])).count("1"), bin(int(state[STONES1])).count("1")
    if not 0 <= n0 - n1 <= 1:
        raise ValueError(f"impossible position: {n0} X and {n1} O")
    state[MOVES], state[PLAYER] = n0 + n1, n0 - n1
    if all(won):
        raise ValueError(f"impossible position: both players have {line}")
    if any(won):
        state[OVER], state[RESULT] = 1, 1 if won[0] else -1
    elif n0 + n1 == cells:
        state[OVER] = 1
    return state


@njit(cache=True, nogil=True, inline="always")  # in every move: a call here costs 20% of UCT
def place(state: np.ndarray, p: int, stones: int, won: bool, cells: int) -> float:
    """The end of a move of player ``p``: stores its ``stones``, passes the turn, and ends the
    game when the move ``won`` (returns 1.0) or fills the ``cells`` of the board (returns 0.0)."""
    state[STONES0 + p] = stones
    state[MOVES] += 1
    state[PLAYER] = 1 - p
    if won:
        state[OVER] = 1
        state[RESULT] = 1 - 2 * p
        return 1.0
    if state[MOVES] == cells:
        state[OVER] = 1
        state[RESULT] = 0
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def score(state: np.ndarray) -> float:
    """Always 0: a two-player game has returns, not a score."""
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def player(state: np.ndarray) -> int:
    """The player to move."""
    return state[PLAYER]


@njit(cache=True, nogil=True, inline="always")
def returns(state: np.ndarray) -> float:
    """+1 if player 0 won, -1 if player 1 won, 0 for a draw or an unfinished game."""
    return float(state[RESULT])
