"""The compiled half of the batched PUCT search: M trees, one per game, advanced in lockstep.

Every operation is written for one tree (``tb``, the :class:`mc_envs.agents.mcts.tree.Arrays` of game ``b``) with
the node operations of :mod:`mc_envs.agents.mcts.tree` (``select_edge_by``, ``child_of``, ``expand``,
``backup``), and lifted over the batch by a compiled ``for b in range(m)`` (numba's stand-in for
``jax.vmap``). The game is touched only through the collaborators of :mod:`mc_envs.agents.ops` (and
:func:`observe`, declared here), bound per kernel by :func:`batch_functions`.

Trees (:class:`Trees`), M games, N = simulations + 1 nodes and E = N * A edges a tree, the node
layout of :mod:`mc_envs.agents.mcts.tree` with a leading game axis::

    ni    [M, N, NI]  int64   PARENT, EDGE0, NEDGES (-1 = not expanded), MOVER
    nf    [M, N, NF]  float   VISITS, TOTAL (for MOVER), BEST
    ea    [M, E, 2]   int64   ACTION, CHILD (NO_CHILD = none yet)
    ep    [M, E, 2]   float   PRIOR_CLEAN, PRIOR (with root noise)
    used  [M, 3]      int64   NODES, EDGES, ROOT (always ROOT_NODE)
    norm  [M, 2]      float   lowest, highest value seen (one-player games)

Leaves (:class:`Leaves`), the round's leaf of every tree::

    states  [M, L]    the games' states: a copy of the root, then played down to the leaf
    ws      [M, W]    each game's kernel workspace
    moves   [M, A']   int64, the leaf's legal actions, n[M] of them (n = 0: the game is over)
    obs     [M, ...]  the leaf's observation (written only when n > 0)
    masks   [M, A]    bool, True exactly at the leaf's legal actions
    node    [M]       int64, the leaf's node
    to_move [M]       int64, the player to move at the leaf (0 in one-player games)
    exact   [M]       float, a finished game's value: player 0's return, or score / scale

A round is :func:`_simulate` (a leaf in every tree, with a visit on every node of its path counted
at once), the leaves' evaluation (the evaluator in Python, or :func:`_playout_values` here), and
:func:`expand_and_backup` (the leaf's edges from the priors; its value backed up, adding no visit).
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.agents.base import NEG_INF
from mc_envs.agents.mcts.gumbel import completed_sigma
from mc_envs.agents.mcts.tree import (
    ACTION,
    BEST,
    CHILD,
    EDGE0,
    EDGES,
    MOVER,
    NEDGES,
    NF,
    NI,
    NODES,
    PARENT,
    PRIOR_CLEAN,
    ROOT,
    TOTAL,
    VISITS,
    Arrays,
    backup,
    child_of,
    expand,
    select_edge_by,
)
from mc_envs.agents.ops import (
    compiled_ops,
    compute_prior,
    legal,
    play,
    player,
    playout,
    prior_op,
    returns,
    score,
)

ROOT_NODE = 0  # every tree's root
NO_CHILD = -1  # ea[..., CHILD] of an edge not yet followed
NO_PARENT = -1  # ni[..., PARENT] of the root
UNEXPANDED = -1  # ni[..., NEDGES] of a node whose moves are not edges yet

Trees = namedtuple("Trees", "ni nf ea ep used norm")
Trees.__doc__ = """M search trees of fixed capacity (shapes in the module docstring)."""

Leaves = namedtuple("Leaves", "states ws moves n obs masks node to_move exact")
Leaves.__doc__ = """The leaf reached in every tree in a round (shapes in the module docstring)."""


def observe(states: Any, i: int, out: np.ndarray) -> None:
    """Writes the observation of slot ``i`` into ``out`` (the kernel's ``observe``)."""
    raise NotImplementedError("observe is bound per kernel by mc_envs.agents.mcts.puct_batch_core")


k_observe = None  # bound per kernel


def _observe(states, i, out):  # pragma: no cover (compiled)
    k_observe(states[i], out)


def new_trees(m: int, nodes: int, edges: int) -> Trees:
    """Empty storage for ``m`` trees of ``nodes`` nodes and ``edges`` edges each (the roots are
    made by :func:`_new_roots`)."""
    return Trees(
        np.empty((m, nodes, NI), np.int64),
        np.empty((m, nodes, NF)),
        np.empty((m, edges, 2), np.int64),
        np.empty((m, edges, 2)),
        np.zeros((m, 3), np.int64),
        np.empty((m, 2)),
    )


@njit(cache=True, nogil=True, inline="always")
def tree_of(t, b):
    """Tree ``b`` of the batch, as the :class:`mc_envs.agents.mcts.tree.Arrays` the node operations take."""
    return Arrays(t.ni[b], t.nf[b], t.ea[b], t.ep[b], t.used[b], t.norm[b])


@njit(cache=True, nogil=True, inline="always")
def normalised_priors(row, moves, n, out):
    """``out[:n]``: ``row`` at the ``n`` legal ``moves``, summing to 1 (uniform when their sum is
    not a positive finite number), as the leaf-batched single-game search does."""
    total = 0.0
    for k in range(n):
        total += row[moves[k]]
    if total > 0.0 and np.isfinite(total):
        for k in range(n):
            out[k] = row[moves[k]] / total
    else:
        for k in range(n):
            out[k] = 1.0 / n


@njit(cache=True, nogil=True, inline="always")
def root_edge(tb, action):
    """The root's edge of ``action`` (its first edge if it has none)."""
    e0 = tb.ni[ROOT_NODE, EDGE0]
    for k in range(tb.ni[ROOT_NODE, NEDGES]):
        if tb.ea[e0 + k, ACTION] == action:
            return e0 + k
    return e0


@njit(cache=True, nogil=True, inline="always")
def _edge_q(tb, ch, two_player, use_max):
    """Child ``ch``'s mean value for the player who moved into it, in [0, 1]."""
    nv = tb.nf[ch, VISITS]
    if two_player:
        return tb.nf[ch, TOTAL] / nv
    span = tb.norm[1] - tb.norm[0]
    x = tb.nf[ch, BEST] if use_max else tb.nf[ch, TOTAL] / nv
    return (x - tb.norm[0]) / span if span > 0.0 else 0.5


@njit(cache=True, nogil=True, inline="always")
def select_gumbel(tb, node, two_player, use_max):
    """Gumbel MuZero's interior selection (Danihelka et al. 2022): the edge maximising the
    improved policy ``softmax(log prior + sigma(completed q))`` (:func:`completed_sigma`, the
    node's value its running mean) minus its share of the visits."""
    n = tb.ni[node, NEDGES]
    e0 = tb.ni[node, EDGE0]
    p, q, nv, sig = np.empty(n), np.zeros(n), np.zeros(n), np.empty(n)
    total = 0.0
    for k in range(n):
        ch = tb.ea[e0 + k, CHILD]
        p[k] = tb.ep[e0 + k, PRIOR_CLEAN]
        if ch >= 0 and tb.nf[ch, VISITS] > 0.0:
            nv[k] = tb.nf[ch, VISITS]
            q[k] = _edge_q(tb, ch, two_player, use_max)
            total += nv[k]
    own = tb.nf[node, VISITS] - 1.0  # this descent's visit has no value yet
    v = 0.5
    if own > 0.0 and two_player:
        v = 1.0 - tb.nf[node, TOTAL] / own  # for the player to move here
    elif own > 0.0:
        v = _edge_q(tb, node, False, use_max)
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


def _new_roots(t, roots, two_player):  # pragma: no cover (compiled)
    """Makes every tree a lone unexpanded root; its MOVER is the player who moved into it."""
    for b in range(roots.shape[0]):
        t.used[b, NODES] = 1
        t.used[b, EDGES] = 0
        t.used[b, ROOT] = ROOT_NODE
        t.ni[b, ROOT_NODE, PARENT] = NO_PARENT
        t.ni[b, ROOT_NODE, EDGE0] = -1
        t.ni[b, ROOT_NODE, NEDGES] = UNEXPANDED
        t.ni[b, ROOT_NODE, MOVER] = 1 - player(roots, b) if two_player else 0
        t.nf[b, ROOT_NODE, VISITS] = 0.0
        t.nf[b, ROOT_NODE, TOTAL] = 0.0
        t.nf[b, ROOT_NODE, BEST] = NEG_INF
        t.norm[b, 0] = np.inf
        t.norm[b, 1] = -np.inf


def _simulate(
    t, roots, lv, rng, mode, c, fpu, two_player, use_max, scale, forced
):  # pragma: no cover
    """Descends every tree from its root to a leaf (an unexpanded node or a finished game),
    playing the moves on a copy of the game's root state, and describes the leaf in ``lv``.
    Every node on the path gets its visit now; :func:`expand_and_backup` adds the value.
    ``forced[b] >= 0``: tree ``b`` is searched as Gumbel MuZero's, its root action ``forced[b]``
    and each interior node's by :func:`select_gumbel`."""
    for b in range(roots.shape[0]):
        tb = tree_of(t, b)
        lv.states[b, :] = roots[b, :]
        ws = lv.ws[b]
        node = ROOT_NODE
        tb.nf[node, VISITS] += 1.0
        while tb.ni[node, NEDGES] > 0:
            if forced[b] < 0:
                e = select_edge_by(tb, node, rng, mode, c, fpu, two_player, use_max)
            elif node == ROOT_NODE:
                e = root_edge(tb, forced[b])
            else:
                e = select_gumbel(tb, node, two_player, use_max)
            child = tb.ea[e, CHILD]
            if child == NO_CHILD:
                child = child_of(tb, node, e, player(lv.states, b) if two_player else 0)
            play(lv.states, b, tb.ea[e, ACTION], ws)
            node = child
            tb.nf[node, VISITS] += 1.0
        lv.node[b] = node
        n = legal(lv.states, b, ws, lv.moves[b])
        lv.n[b] = n
        mask = lv.masks[b]
        mask[:] = False
        if n == 0:
            lv.to_move[b] = 0
            lv.exact[b] = returns(lv.states, b) if two_player else score(lv.states, b) / scale
        else:
            for k in range(n):
                mask[lv.moves[b, k]] = True
            observe(lv.states, b, lv.obs[b])
            lv.to_move[b] = player(lv.states, b) if two_player else 0


@njit(cache=True, nogil=True)
def expand_and_backup(t, lv, priors, values, noise, eps, two_player, buf):
    """Expands every tree's leaf with its priors (``priors[b]`` over the whole action space; the
    root's mixed with ``noise[b]`` by ``eps``) and backs its value up: ``values[b]``, for the
    player to move at the leaf, or the exact value of a finished game (whose node gets no edge)."""
    for b in range(lv.node.shape[0]):
        tb = tree_of(t, b)
        node = lv.node[b]
        n = lv.n[b]
        moves = lv.moves[b]
        if n == 0:
            expand(tb, node, moves, 0, buf, noise[b], 0.0, False)  # NEDGES = 0: over
            backup(tb, node, lv.exact[b], two_player, 0.0)
            continue
        normalised_priors(priors[b], moves, n, buf)
        expand(tb, node, moves, n, buf, noise[b], eps if node == ROOT_NODE else 0.0, False)
        v = values[b]
        if two_player and lv.to_move[b] != 0:
            v = -v  # player 0's return
        backup(tb, node, v, two_player, 0.0)


def _playout_values(lv, priors, values, policy, rng, seq, two_player, buf):  # pragma: no cover
    """The evaluator of a search without one: the compiled prior (``compute_prior``) as the
    priors, and one playout's result as the value, for the player to move (two-player games) or
    the final score (puzzles)."""
    for b in range(lv.node.shape[0]):
        n = lv.n[b]
        if n == 0:
            continue
        moves = lv.moves[b]
        compute_prior(lv.states, b, moves, n, buf)
        row = priors[b]
        row[:] = 0.0
        for k in range(n):
            row[moves[k]] = buf[k]
        playout(lv.states, b, policy, rng, lv.ws[b], seq, 0)
        if two_player:
            r = returns(lv.states, b)
            values[b] = r if lv.to_move[b] == 0 else -r
        else:
            values[b] = score(lv.states, b)


@njit(cache=True, nogil=True)
def root_counts(t, visits, q):
    """Each tree's root: ``visits[b, a]`` of action ``a`` and ``q[b, a]`` its mean value for the
    player to move at the root, in [0, 1] (NaN when unvisited)."""
    for b in range(visits.shape[0]):
        n = t.ni[b, ROOT_NODE, NEDGES]
        e0 = t.ni[b, ROOT_NODE, EDGE0]
        for k in range(max(n, 0)):
            a = t.ea[b, e0 + k, ACTION]
            child = t.ea[b, e0 + k, CHILD]
            if child != NO_CHILD and t.nf[b, child, VISITS] > 0.0:
                visits[b, a] = int(t.nf[b, child, VISITS])
                q[b, a] = t.nf[b, child, TOTAL] / t.nf[b, child, VISITS]


_compiled: dict[tuple[str, str], dict[str, Any]] = {}


def batch_functions(kernel: Any, prior: Any = None) -> dict[str, Any]:
    """The compiled ``new_roots``, ``simulate`` and ``playout_values`` of a kernel (``playout_values`` with the :class:`~mc_envs.agents.mcts.tree.KernelPrior`
    ``prior``, uniform if None), built once per kernel and prior."""
    name = prior.name if prior is not None else "uniform"
    key = (kernel.name, name)
    fns = _compiled.get(key)
    if fns is None:
        if kernel.observe is None:
            raise ValueError(f"kernel {kernel.name!r} has no observe function: cannot batch it")
        ops = dict(compiled_ops(kernel))
        ops["observe"] = instantiate(_observe, kernel.name, k_observe=kernel.observe)
        suffix = f"batch_{kernel.name}"
        fns = {
            "new_roots": instantiate(_new_roots, suffix, **ops),
            "simulate": instantiate(_simulate, suffix, **ops),
        }
        if prior is not None:
            ops["compute_prior"] = prior_op(kernel, name, prior.fn)
        fns["playout_values"] = instantiate(_playout_values, f"{suffix}_{name}", **ops)
        _compiled[key] = fns
    return fns
