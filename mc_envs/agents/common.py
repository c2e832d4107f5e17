"""Small compiled helpers shared by the search templates (callable from Python too)."""

from __future__ import annotations

from mc_envs._numba import njit, twin
from mc_envs.agents.base import Slot, StopCode


@njit(cache=True, nogil=True, inline="always")
def copy_into(to, of):
    """Copies ``of[:len(to)]`` into ``to``: a loop, not a slice assignment (see
    :func:`mc_envs.agents.ops._copy_state`); run as Python, its twin copies with numpy."""
    for j in range(to.shape[0]):
        to[j] = of[j]


def _copy_into(to, of):
    # As Python, an element at a time would take 0.6 ms for a state of Go's (1,171 numbers).
    to[:] = of[: to.shape[0]]


twin(copy_into, _copy_into)


@njit(cache=True, nogil=True)
def record(path, n, s, sh):
    """Stores ``path[:n]`` as the best sequence of ``sh`` (an :class:`mc_envs.agents.ops.Shared`) if ``s``
    beats it; raises the stop flag when ``s`` reaches ``sh.max_score``. Returns ``s``."""
    if s > sh.best_score[0]:
        control = sh.control
        control[Slot.BEST_WRITES] += 1
        for j in range(n):  # not a slice assignment: see ops._copy_state
            sh.best_seq[j] = path[j]
        sh.best_len[0] = n
        sh.best_score[0] = s
        control[Slot.BEST_WRITES] += 1
        if s >= sh.max_score:
            control[Slot.STOP] = StopCode.MAX_SCORE
    return s


@njit(cache=True, nogil=True)
def count_playout(control):
    """Counts one playout and raises the stop flag when the playout budget is spent."""
    control[Slot.PLAYOUTS] += 1
    if control[Slot.PLAYOUTS] >= control[Slot.PLAYOUT_LIMIT]:
        control[Slot.STOP] = StopCode.PLAYOUTS
