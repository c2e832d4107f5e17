"""The two abstract binary-tree problems of Cazenave (2009, section 4): rules, kernels, theory.

A game is a walk down a complete binary tree of depth ``d``: every move goes left (action 0) or
right (action 1), and the game ends after exactly ``d`` moves. The score of a leaf is

- LeftMove: the number of left moves of the walk;
- LeftmostPath: the number of moves on the leftmost path, i.e. the left moves before the first
  right move.

The best score is ``d`` in both (all left). The score is given at the end: :func:`score` is 0 until
the last move, so the reward of the last move is the whole score.

State layout (one flat int64 array; copying it is a complete snapshot)::

    index   meaning
    0       DEPTH     d, the number of moves of a game
    1       MOVES     moves played so far
    2       COUNT     left moves so far (LeftMove), or before the first right move (LeftmostPath)
    3       ON_PATH   1 while no right move has been played, else 0
    4       KIND      LEFTMOVE (0) or LEFTMOSTPATH (1)

Both games share one set of kernels (the game is in the state), so one compiled search serves both.
"""

from __future__ import annotations

import sys
from math import comb

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import Kernel, check_layout, state_error
from mc_envs.rng import rng_below

DEPTH, MOVES, COUNT, ON_PATH, KIND = range(5)
LENGTH = 5
LEFT, RIGHT = 0, 1
LEFTMOVE, LEFTMOSTPATH = 0, 1
KINDS = {"leftmove": LEFTMOVE, "leftmostpath": LEFTMOSTPATH}
POLICIES = {"random": 0}


def new_state(game: str, depth: int) -> np.ndarray:
    """The root of a depth ``depth`` tree of ``"leftmove"`` or ``"leftmostpath"``.

    Raises:
        ValueError: an unknown game or a depth below 1.
    """
    if game not in KINDS:
        raise ValueError(f"unknown abstract game {game!r}; use one of {sorted(KINDS)}")
    if int(depth) != depth or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    state = np.zeros(LENGTH, dtype=np.int64)
    state[DEPTH], state[ON_PATH], state[KIND] = depth, 1, KINDS[game]
    return state


_FIELDS = ("depth", "moves played", "count", "on path", "kind")


def check_state(data: np.ndarray, config: tuple, game: str | None = None) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a state of a depth
    ``config[0]`` tree (of ``game``, ``"leftmove"`` or ``"leftmostpath"``, when given)."""
    (depth,) = config
    s = check_layout(data, "binary tree", np.int64, LENGTH).tolist()
    moves = s[MOVES]
    kinds = [KINDS[game]] if game is not None else sorted(KINDS.values())
    expected = (
        (DEPTH, s[DEPTH] == depth, f"expected {depth}"),
        (KIND, s[KIND] in kinds, f"expected one of {kinds}"),
        (MOVES, 0 <= moves <= depth, f"expected 0..{depth}"),
        (ON_PATH, s[ON_PATH] in (0, 1), "expected 0 or 1"),
        (COUNT, 0 <= s[COUNT] <= moves, f"expected 0..{moves} (the moves played)"),
        (ON_PATH, s[ON_PATH] == 1 or moves > 0, "expected 1 before the first move"),
        (COUNT, not s[ON_PATH] or s[COUNT] == moves, f"expected {moves}: no right move yet"),
        (COUNT, s[ON_PATH] or s[COUNT] < moves, f"expected < {moves}: a right move was played"),
    )
    for index, ok, why in expected:
        if not ok:
            raise state_error("binary tree", _FIELDS[index], index, s[index], why)


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """Writes the legal actions (0 = left, 1 = right) into ``out``; none at a leaf."""
    if state[MOVES] >= state[DEPTH]:
        return 0
    out[0] = LEFT
    out[1] = RIGHT
    return 2


@njit(cache=True, nogil=True)
def _step(state: np.ndarray, action: int) -> None:
    state[MOVES] += 1
    if action == RIGHT:
        state[ON_PATH] = 0
    elif state[KIND] == LEFTMOVE or state[ON_PATH]:
        state[COUNT] += 1


@njit(cache=True, nogil=True)
def score(state: np.ndarray) -> float:
    """The score of the leaf reached, 0 before the end of the game."""
    if state[MOVES] < state[DEPTH]:
        return 0.0
    return float(state[COUNT])


@njit(cache=True, nogil=True)
def play(state: np.ndarray, action: int, ws: np.ndarray) -> float:
    """Applies a move; the reward is the score on the last move, else 0."""
    _step(state, action)
    return score(state)


@njit(cache=True, nogil=True)
def playout(
    state: np.ndarray, policy: int, rng: np.ndarray, ws: np.ndarray, seq: np.ndarray, start: int
) -> int:
    """Uniform moves to the end: ``actions[rng_below(2)]`` of ``[0, 1]``, as the generic path."""
    count = 0
    while state[MOVES] < state[DEPTH]:
        a = rng_below(rng, 2)
        _step(state, a)
        seq[start + count] = a
        count += 1
    return count


@njit(cache=True, nogil=True)
def observe(state: np.ndarray, out: np.ndarray) -> None:
    """Writes the observation ``(moves played, count)`` into ``out``."""
    out[0] = state[MOVES]
    out[1] = state[COUNT]


def workspace(state: np.ndarray) -> np.ndarray:
    """The (unused) scratch array."""
    return np.zeros(2, dtype=np.int64)


def make_kernel(depth: int) -> Kernel:
    """The compiled rules of both games at that depth (one kernel: the game is in the state)."""
    return Kernel.from_module(sys.modules[__name__], name="bintree", max_moves=depth, max_actions=2)


# -- exact theory (Cazenave 2009, section 4.2) ----------------------------------------------------


def score_distributions(depth: int, level: int, ties: str = "random") -> np.ndarray:
    """The paper's dynamic programme for LeftMove searched by NMCS without memorisation.

    ``P[l, d, s]`` is the probability that a level ``l`` search from a node with ``d`` moves left
    finds ``s`` more left moves. Level 0 is one uniform playout: binomial(d, 1/2). A level ``l``
    search compares, at each step, a level ``l - 1`` search after the left move (1 + its score)
    with one after the right move, plays the better move and continues; the moves below a node only
    shift the score, so the chance of going left depends on ``d`` and ``l`` only.

    Args:
        depth: the largest ``d``.
        level: the largest ``l``.
        ties: how equal scores are broken: ``"random"`` (the paper), ``"left"`` (the first action,
            as an argmax keeping the first maximum) or ``"right"``.

    Returns:
        ``P`` of shape ``(level + 1, depth + 1, depth + 1)``.
    """
    share = {"random": 0.5, "left": 1.0, "right": 0.0}[ties]
    p = np.zeros((level + 1, depth + 1, depth + 1))
    for d in range(depth + 1):
        for s in range(d + 1):
            p[0, d, s] = comb(d, s) / 2.0**d
    for lv in range(1, level + 1):
        p[lv, 0, 0] = 1.0
        for d in range(1, depth + 1):
            below = p[lv - 1, d - 1, :d]  # a level l-1 search after either move: d-1 moves left
            right_cdf = np.cumsum(below)  # P(right score <= i)
            # P(left chosen) = sum over left scores x: P(X=x) * [P(Y < x+1) + share * P(Y = x+1)]
            p_left = 0.0
            for x in range(d):
                less = right_cdf[x]  # P(Y <= x) = P(Y < x + 1)
                equal = below[x + 1] if x + 1 < d else 0.0
                p_left += below[x] * (less + share * equal)
            p[lv, d, 1 : d + 1] += p_left * p[lv, d - 1, :d]
            p[lv, d, :d] += (1.0 - p_left) * p[lv, d - 1, :d]
    return p


def best_score_probability(depth: int, level: int, ties: str = "random") -> float:
    """The probability that NMCS of that level without memorisation scores ``depth`` (LeftMove)."""
    return float(score_distributions(depth, level, ties)[level, depth, depth])


def action_to_string(state: np.ndarray, action: int) -> str:
    """``"L"`` (action 0, left) or ``"R"`` (action 1, right)."""
    return "LR"[int(action)]
