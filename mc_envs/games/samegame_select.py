"""SameGame knowledge for NRPA: its selective policies and its GNRPA bias.

Selective policies (Cazenave 2016) keep the moves a rollout may sample; their key, computed once at
the root of a search, is the tabu colour (the colour with most cells, :func:`samegame.tabu_color`)
plus ``LATE * after`` for the late rule::

    "tabu"       key = tabu                 groups of the tabu colour only when no other is left
    "tabu-k"     key = the colour ranked k  the same with the colour of the k-th most cells as the
                                            tabu colour (k = 2 .. the board's colours; ties go to
                                            the lower colour): which colour is best to keep for
                                            one big final group is not always the commonest
    "tabu-late"  key = tabu + LATE * after  the same, but from move ``after`` of the game on (the
                                            root's move count + LATE_MOVES) tabu-colour pairs
                                            are allowed too: a pair that has not joined the big
                                            tabu group by then is usually stranded

The bias (GNRPA, Cazenave 2020) of a move is its group's size minus two (0 for a pair); NRPA's
``bias=`` weight multiplies it, so a negative weight prefers small groups and a positive one large.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from mc_envs._numba import njit
from mc_envs.games.samegame import (
    COLORS,
    COLS,
    HEADER,
    MOVES,
    color_counts,
    flood,
    padded_index,
    tabu_color,
)

LATE = 256  # the key's multiplier of the move from which tabu pairs are allowed
LATE_MOVES = 20  # "tabu-late": moves after the root before tabu pairs are allowed


@njit(cache=True, nogil=True)
def select_tabu(s, moves, codes, n, tabu):
    """NRPA's selective filter (Cazenave 2016): only the non-``tabu`` groups, if any and not all."""
    if tabu < 0:
        return n
    m = 0
    for j in range(n):  # compacts in place; with no non-tabu group nothing was moved
        a = moves[j]
        if s[HEADER + padded_index(s, a)] != tabu:
            moves[m] = a
            codes[m] = codes[j]
            m += 1
    return n if m == 0 else m


@njit(cache=True, nogil=True)
def size_bias(s, moves, n, out, ws):
    """GNRPA's bias of SameGame: each move's group size minus two."""
    for j in range(n):
        out[j] = float(flood(s, padded_index(s, moves[j]), ws)[0] - 2)


@njit(cache=True, nogil=True)
def _same_neighbours(b, p, width):
    """How many of the four neighbours of padded cell ``p`` have its colour, and the last one."""
    color = b[p]
    count = 0
    last = p
    for q in (p - 1, p + 1, p - width, p + width):
        if b[q] == color:
            count += 1
            last = q
    return count, last


@njit(cache=True, nogil=True)
def is_pair(s, cell):
    """True when the group at padded index ``cell`` has exactly two cells."""
    b = s[HEADER:]
    width = np.int64(s[COLS]) + 2
    count, other = _same_neighbours(b, cell, width)
    return count == 1 and _same_neighbours(b, other, width)[0] == 1


@njit(cache=True, nogil=True)
def select_rule(s, moves, codes, n, key):
    """The selective filter of both policies (see the module docstring); keeps all moves when
    none or all of them would be kept."""
    after = key // LATE
    tabu = key % LATE
    if key < 0 or after == 0 or s[MOVES] < after:
        return select_tabu(s, moves, codes, n, tabu if key >= 0 else -1)
    m = 0
    for j in range(n):
        a = moves[j]
        cell = padded_index(s, a)
        if s[HEADER + cell] != tabu or is_pair(s, cell):
            moves[m] = a
            codes[m] = codes[j]
            m += 1
    if m == 0:
        return n
    return m


def tabu_key(state: np.ndarray) -> int:
    """The key of ``"tabu"``: the tabu colour."""
    return int(tabu_color(state))


def ranked_colour(state: np.ndarray, rank: int) -> int:
    """The colour with the ``rank``-th most cells (1: :func:`samegame.tabu_color`; ties go to the
    lower colour).

    Raises:
        ValueError: ``rank`` is not 1 .. the board's number of colours.
    """
    colours = int(state[COLORS])
    if not 1 <= rank <= colours:
        raise ValueError(f"tabu-{rank}: this board has {colours} colour(s)")
    counts = color_counts(state)
    order = sorted(range(1, colours + 1), key=lambda c: (-counts[c], c))
    return order[rank - 1]


def selections(colours: int) -> dict[str, Callable[[np.ndarray], int]]:
    """SameGame's selective policies for boards of up to ``colours`` colours, by name."""
    out: dict[str, Callable[[np.ndarray], int]] = {"tabu": tabu_key, "tabu-late": tabu_late_key}
    out.update({f"tabu-{k}": partial(ranked_colour, rank=k) for k in range(2, colours + 1)})
    return out


def tabu_late_key(state: np.ndarray) -> int:
    """The key of ``"tabu-late"``: the tabu colour and the move from which tabu pairs are allowed."""
    return int(tabu_color(state)) + LATE * (int(state[MOVES]) + LATE_MOVES)
