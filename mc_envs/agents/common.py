"""Small compiled helpers shared by the search templates (callable from Python too)."""

from __future__ import annotations

from mc_envs._numba import njit
from mc_envs.agents.base import PLAYOUT_LIMIT, PLAYOUTS, STOP, VERSION

STOP_REASONS = {
    0: "complete",
    1: "stopped",
    2: "max_score",
    3: "playouts",
    4: "iterations",
    5: "memory",
}


@njit(cache=True, nogil=True)
def record(path, n, s, sh):
    """Stores ``path[:n]`` as the best sequence of ``sh`` (an :class:`mc_envs.agents.ops.Shared`) if ``s``
    beats it; raises the stop flag when ``s`` reaches ``sh.max_score``. Returns ``s``."""
    if s > sh.best_score[0]:
        control = sh.control
        control[VERSION] += 1
        sh.best_seq[:n] = path[:n]
        sh.best_len[0] = n
        sh.best_score[0] = s
        control[VERSION] += 1
        if s >= sh.max_score:
            control[STOP] = 2
    return s


@njit(cache=True, nogil=True)
def count_playout(control):
    """Counts one playout and raises the stop flag when the playout budget is spent."""
    control[PLAYOUTS] += 1
    if control[PLAYOUTS] >= control[PLAYOUT_LIMIT]:
        control[STOP] = 3


def stop_reason(code: int) -> str:
    """The name of a stop code set inside a search."""
    return STOP_REASONS[int(code)]
