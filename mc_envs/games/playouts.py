"""The uniform playout, written once for every kernel whose ``legal`` lists its moves sorted into
the scratch array ``ws``: ``actions[rng_below(n)]`` to the end of the game."""

from __future__ import annotations

import numpy as np

from mc_envs._numba import instantiate
from mc_envs.rng import rng_below


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
