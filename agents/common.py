"""Small compiled helpers shared by the search templates (callable from Python too)."""

from __future__ import annotations

from agents.base import PLAYOUT_LIMIT, PLAYOUTS, STOP, VERSION
from mc_envs._numba import njit


@njit(cache=True, nogil=True)
def record(path, n, s, control, best_score, best_seq, best_len, max_score):
    """Counts nothing; stores ``path[:n]`` as the best sequence if ``s`` beats it.

    Also raises the stop flag when ``s`` reaches ``max_score``.
    """
    if s > best_score[0]:
        control[VERSION] += 1
        best_seq[:n] = path[:n]
        best_len[0] = n
        best_score[0] = s
        control[VERSION] += 1
        if s >= max_score:
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
    return {0: "complete", 1: "stopped", 2: "max_score", 3: "playouts", 4: "iterations"}[int(code)]
