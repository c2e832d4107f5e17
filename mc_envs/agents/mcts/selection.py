"""The selection rules of the tree searches (after mctx's ``action_selection``).

Every rule has one signature, ``rule(t, node, rng, s) -> edge``: ``t`` the
:class:`~mc_envs.agents.mcts.tree.TreeArrays`, ``node`` an expanded node with at least one edge,
``rng`` the search's random stream, ``s`` the :class:`Settings`. A search is compiled with its rule
bound (:func:`mc_envs._numba.instantiate`), so no rule tests a mode inside the loop.

- :func:`select_ucb1`: UCT's; every unvisited edge first (uniformly at random), then
  ``Q + c sqrt(ln N / n)``.
- :func:`select_alphago`: ``Q + c P / (1 + n)``; :func:`select_alphazero`:
  ``Q + c P sqrt(N) / (1 + n)``; ``Q = fpu`` for an unvisited edge, ties to the first edge.
- :func:`select_gumbel`: Gumbel MuZero's interior rule (the batched search's, below its root).
- :func:`select_rave`: UCT with RAVE and tree knowledge (Gelly and Silver 2011), on a wide tree.

``Q`` is a child's mean value for the player who moved into it (two-player games), or in puzzles
its mean (``use_max``: best) score normalised by the lowest and highest scores seen.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.agents.base import NEG_INF
from mc_envs.agents.mcts.gumbel import completed_sigma
from mc_envs.agents.mcts.tree import (
    AMAF_TOTAL,
    AMAF_VISITS,
    BEST,
    CHILD,
    FIRST_EDGE,
    HIGH,
    KNOW_VALUE,
    KNOW_VISITS,
    LOW,
    NO_CHILD,
    NOISED_PRIOR,
    NUM_EDGES,
    PRIOR,
    TOTAL,
    VISITS,
    TreeArrays,
)
from mc_envs.rng import rng_below


class Settings(NamedTuple):
    """A tree search's settings, fixed when it starts."""

    c: float  # the exploration constant
    fpu: float  # PUCT: the value of an unvisited edge (first-play urgency)
    noise_eps: float  # the weight of the root's noise (0: none)
    two_player: bool  # values are player 0's returns (else puzzle scores)
    use_max: bool  # puzzles: a node's value is its best score, not its mean
    rave_k: float  # RAVE's hand-selected schedule: its k (0: not this schedule)
    rave_b2: float  # RAVE's minimum-MSE schedule: the bias b squared (0: not this schedule)


@njit(cache=True, nogil=True, inline="always")
def node_q(stats, ch, two_player, use_max, lo, span):
    """The value in [0, 1] of a visited node ``ch`` for its mover (``stats``: the tree's;
    ``lo``, ``span``: the puzzle scores' normalisation, read once per node)."""
    if two_player:
        return stats[ch, TOTAL] / stats[ch, VISITS]
    x = stats[ch, BEST] if use_max else stats[ch, TOTAL] / stats[ch, VISITS]
    return (x - lo) / span if span > 0.0 else 0.5


# The rules read the settings and the tree's arrays into locals once, as the compiled loop would
# otherwise reload them (and reference-count the arrays) at every edge: 1.2x on UCT's iterations.


@njit(cache=True, nogil=True, inline="always")
def select_ucb1(t, node, rng, s):
    """UCB1: an unvisited edge (uniformly at random) while there is one, then the edge
    maximising ``Q + c sqrt(ln N / n)``."""
    nodes, stats, edges = t.nodes, t.stats, t.edges
    c, two_player, use_max = s.c, s.two_player, s.use_max
    lo, span = t.norm[LOW], t.norm[HIGH] - t.norm[LOW]
    n = nodes[node, NUM_EDGES]
    e0 = nodes[node, FIRST_EDGE]
    unvisited = 0
    for k in range(n):
        if edges[e0 + k, CHILD] == NO_CHILD:
            unvisited += 1
    if unvisited > 0:
        pick = rng_below(rng, unvisited)
        for k in range(n):
            if edges[e0 + k, CHILD] == NO_CHILD:
                if pick == 0:
                    return e0 + k
                pick -= 1
    logn = math.log(stats[node, VISITS])
    best_u = NEG_INF
    e = e0
    for k in range(n):
        ch = edges[e0 + k, CHILD]
        u = node_q(stats, ch, two_player, use_max, lo, span) + c * math.sqrt(
            logn / stats[ch, VISITS]
        )
        if u > best_u:
            best_u = u
            e = e0 + k
    return e


@njit(cache=True, nogil=True, inline="always")
def _select_puct(t, node, s, alphazero):
    """PUCT's rule, in the AlphaZero form (``alphazero``, a constant of the caller) or AlphaGo's."""
    nodes, stats, edges, priors = t.nodes, t.stats, t.edges, t.edge_priors
    c, fpu, two_player, use_max = s.c, s.fpu, s.two_player, s.use_max
    lo, span = t.norm[LOW], t.norm[HIGH] - t.norm[LOW]
    n = nodes[node, NUM_EDGES]
    e0 = nodes[node, FIRST_EDGE]
    sq = math.sqrt(max(stats[node, VISITS], 1.0))
    best_u = NEG_INF
    e = e0
    for k in range(n):
        ch = edges[e0 + k, CHILD]
        nv = 0.0
        q = fpu
        if ch != NO_CHILD:
            nv = stats[ch, VISITS]
            if nv > 0.0:
                q = node_q(stats, ch, two_player, use_max, lo, span)
        x = c * priors[e0 + k, NOISED_PRIOR]
        if alphazero:
            x *= sq
        u = q + x / (1.0 + nv)
        if u > best_u:
            best_u = u
            e = e0 + k
    return e


@njit(cache=True, nogil=True, inline="always")
def select_alphago(t, node, rng, s):
    """PUCT, AlphaGo's form: the edge maximising ``Q + c P / (1 + n)``."""
    return _select_puct(t, node, s, False)


@njit(cache=True, nogil=True, inline="always")
def select_alphazero(t, node, rng, s):
    """PUCT, AlphaZero's form: the edge maximising ``Q + c P sqrt(N) / (1 + n)``."""
    return _select_puct(t, node, s, True)


@njit(cache=True, nogil=True, inline="always")
def select_gumbel(t, node, rng, s):
    """Gumbel MuZero's interior selection (Danihelka et al. 2022): the edge maximising the
    improved policy ``softmax(log prior + sigma(completed q))`` (:func:`completed_sigma`, the
    node's value its running mean) minus its share of the visits."""
    n = t.nodes[node, NUM_EDGES]
    e0 = t.nodes[node, FIRST_EDGE]
    lo, span = t.norm[LOW], t.norm[HIGH] - t.norm[LOW]
    p, q, nv, sig = np.empty(n), np.zeros(n), np.zeros(n), np.empty(n)
    total = 0.0
    for k in range(n):
        ch = t.edges[e0 + k, CHILD]
        p[k] = t.edge_priors[e0 + k, PRIOR]
        if ch != NO_CHILD and t.stats[ch, VISITS] > 0.0:
            nv[k] = t.stats[ch, VISITS]
            q[k] = node_q(t.stats, ch, s.two_player, s.use_max, lo, span)
            total += nv[k]
    own = t.stats[node, VISITS] - 1.0  # this descent's visit has no value yet
    v = 0.5
    if own > 0.0 and s.two_player:
        v = 1.0 - t.stats[node, TOTAL] / own  # for the player to move here
    elif own > 0.0:
        v = node_q(t.stats, node, False, s.use_max, lo, span)
    completed_sigma(p, q, nv, v, n, sig)
    top = -np.inf
    for k in range(n):
        if p[k] > 0.0:
            top = max(top, math.log(p[k]) + sig[k])
    z = 0.0
    for k in range(n):
        if p[k] > 0.0:
            z += math.exp(math.log(p[k]) + sig[k] - top)
    best, e = -np.inf, e0
    for k in range(n):
        pi = math.exp(math.log(p[k]) + sig[k] - top) / z if p[k] > 0.0 else 0.0
        u = pi - nv[k] / (1.0 + total)
        if u > best:
            best, e = u, e0 + k
    return e


@njit(cache=True, nogil=True, inline="always")
def rave_beta(n, m, parent, s):
    """RAVE's weight of the AMAF value of an edge of ``n`` visits and ``m`` AMAF visits below a
    node of ``parent`` visits: ``sqrt(k / (3 N + k))`` (hand-selected schedule, ``s.rave_k``),
    ``m / (n + m + 4 n m b^2)`` (minimum MSE, ``s.rave_b2``), else 0."""
    if s.rave_k > 0.0:
        return math.sqrt(s.rave_k / (3.0 * parent + s.rave_k))
    if s.rave_b2 > 0.0:
        return m / (n + m + 4.0 * n * m * s.rave_b2)
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def select_rave(t, node, rng, s):
    """MC-RAVE (Gelly and Silver 2011) with tree knowledge as virtual visits: the edge
    maximising ``(1 - beta) Q + beta Q~ + c sqrt(ln N / n)`` (ties to the first edge).

    ``Q`` and ``n`` count the edge's visits and its knowledge's virtual visits (``KNOW_VISITS`` of
    mean ``KNOW_VALUE``); so do the AMAF ``Q~`` and its count; ``beta`` is :func:`rave_beta`.
    An edge with neither visits nor virtual visits is worth ``Q~`` when it has AMAF visits (beta
    1), else ``s.fpu``; its exploration term counts one visit."""
    nodes, stats, edges, wide = t.nodes, t.stats, t.edges, t.edge_priors
    c, fpu, two_player, use_max = s.c, s.fpu, s.two_player, s.use_max
    lo, span = t.norm[LOW], t.norm[HIGH] - t.norm[LOW]
    n = nodes[node, NUM_EDGES]
    e0 = nodes[node, FIRST_EDGE]
    parent = stats[node, VISITS]
    logn = math.log(max(parent, 1.0))
    best_u = NEG_INF
    e = e0
    for k in range(n):
        ch = edges[e0 + k, CHILD]
        kv = wide[e0 + k, KNOW_VISITS]
        kq = kv * wide[e0 + k, KNOW_VALUE]
        nv, qsum = kv, kq
        if ch != NO_CHILD and stats[ch, VISITS] > 0.0:
            real = stats[ch, VISITS]
            nv += real
            qsum += real * node_q(stats, ch, two_player, use_max, lo, span)
        m = wide[e0 + k, AMAF_VISITS]
        amaf = 0.0
        if m > 0.0:
            amaf = wide[e0 + k, AMAF_TOTAL] / m
            if not two_player:
                amaf = (amaf - lo) / span if span > 0.0 else 0.5
        m += kv
        amaf = (m - kv) / m * amaf + kq / m if m > 0.0 else 0.0
        if nv > 0.0:
            beta = rave_beta(nv, m, parent, s) if m > 0.0 else 0.0
            u = (1.0 - beta) * qsum / nv + beta * amaf + c * math.sqrt(logn / nv)
        else:
            u = (amaf if m > 0.0 else fpu) + c * math.sqrt(logn)
        if u > best_u:
            best_u = u
            e = e0 + k
    return e


select_edge = select_ucb1  # bound per rule by select_from_python


def _select_scalars(t, node, rng, c, fpu, two_player, use_max):  # pragma: no cover (compiled)
    return select_edge(t, node, rng, Settings(c, fpu, 0.0, two_player, use_max, 0.0, 0.0))


# ``select(t, node, rng, c, fpu, two_player, use_max) -> edge`` (:func:`select_from_python`).
SelectScalars = Callable[[TreeArrays, int, np.ndarray, float, float, bool, bool], int]


def select_from_python(rule: str) -> SelectScalars:
    """The rule as a compiled function to call from Python, ``select(t, node, rng, c, fpu,
    two_player, use_max)``: numba's dispatcher types scalars 2 us faster a call than a
    :class:`Settings`."""
    return instantiate(_select_scalars, rule, select_edge=RULES[rule])


RULES = {
    "ucb1": select_ucb1,
    "alphago": select_alphago,
    "alphazero": select_alphazero,
    "gumbel": select_gumbel,
    "rave": select_rave,
}
