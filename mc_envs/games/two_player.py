"""What the two-player bitboard kernels share: the state header and the functions over it.

Both games start their state with the same fields (``STONES0, STONES1, PLAYER, MOVES, OVER,
RESULT``), so the score, player and returns functions are written once here, and the uniform
playout once as a template bound to each game's ``legal`` and ``play``.
"""

from __future__ import annotations

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.rng import rng_below

STONES0, STONES1, PLAYER, MOVES, OVER, RESULT = range(6)


@njit(cache=True, nogil=True)
def score(state: np.ndarray) -> float:
    """Always 0: a two-player game has returns, not a score."""
    return 0.0


@njit(cache=True, nogil=True)
def player(state: np.ndarray) -> int:
    """The player to move."""
    return state[PLAYER]


@njit(cache=True, nogil=True)
def returns(state: np.ndarray) -> float:
    """+1 if player 0 won, -1 if player 1 won, 0 for a draw or an unfinished game."""
    return float(state[RESULT])


def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """The game's ``legal`` (a stub that :func:`uniform_playout` binds per game)."""
    raise NotImplementedError("bound per game by uniform_playout")


def play(state: np.ndarray, action: int, ws: np.ndarray) -> float:
    """The game's ``play`` (a stub that :func:`uniform_playout` binds per game)."""
    raise NotImplementedError("bound per game by uniform_playout")


def _uniform_playout(state, policy, rng, ws, seq, start):
    count = 0
    while True:
        n = legal(state, ws, ws)
        if n == 0:
            return count
        a = ws[rng_below(rng, n)]
        play(state, a, ws)
        seq[start + count] = a
        count += 1


def uniform_playout(name: str, legal, play):
    """The game's playout: ``actions[rng_below(n)]`` over its sorted legal moves, to the end."""
    return instantiate(_uniform_playout, name, legal=legal, play=play)
