"""The compiled half of the batched PUCT search: M trees, one per game, advanced in lockstep.

Every operation is written for one tree (``tb``, the :class:`~mc_envs.agents.mcts.tree.TreeArrays`
of game ``b``) with the node operations of :mod:`mc_envs.agents.mcts.tree` and a selection rule of
:mod:`mc_envs.agents.mcts.selection` (``select_edge``, bound per search), and lifted over the batch by a compiled ``for b in range(m)`` (numba's stand-in for
``jax.vmap``). The game is touched only through the collaborators of :mod:`mc_envs.agents.ops`,
bound per kernel by :func:`batch_kernels`.

Trees: a :class:`~mc_envs.agents.mcts.tree.TreeArrays` whose every column has a leading game
axis: M games, N = simulations + 1 nodes and E = N * A edges a tree (``nodes [M, N, 4]``,
``stats [M, N, 3]``, ``edges [M, E, 2]`` ...); every tree's root is node 0 (:data:`ROOT_NODE`).

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
:func:`batch_kernels` binds the game's collaborators and the selection rule once per kernel.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.agents.common import copy_into
from mc_envs.agents.mcts.search import normalised_priors
from mc_envs.agents.mcts.selection import RULES, Settings, select_alphago
from mc_envs.agents.mcts.tree import (
    ACTION,
    CHILD,
    FIRST_EDGE,
    NO_CHILD,
    NUM_EDGES,
    TOTAL,
    VISITS,
    TreeArrays,
    backup,
    child_of,
    empty_arrays,
    expand,
    init_root,
    mark_over,
)
from mc_envs.agents.ops import (
    compiled_ops,
    compute_prior,
    legal,
    observe,
    play,
    player,
    playout,
    prior_op,
    returns,
    score,
)

if TYPE_CHECKING:
    from mc_envs.agents.mcts.search import KernelPrior
    from mc_envs.kernel import Kernel

ROOT_NODE = 0  # every tree's root

Leaves = namedtuple("Leaves", "states ws moves n obs masks node to_move exact")
Leaves.__doc__ = """The leaf reached in every tree in a round (shapes in the module docstring)."""

select_edge = select_alphago  # bound per search (batch_kernels)


def new_trees(m: int, nodes: int, edges: int) -> TreeArrays:
    """Storage for ``m`` trees of ``nodes`` nodes and ``edges`` edges each (the roots are made by
    :func:`_new_roots`)."""
    return empty_arrays(nodes, edges, (m,))


@njit(cache=True, nogil=True, inline="always")
def tree_of(t, b):
    """Tree ``b`` of the batch, as the :class:`~mc_envs.agents.mcts.tree.TreeArrays` the node
    operations take."""
    return TreeArrays(t.nodes[b], t.stats[b], t.edges[b], t.edge_priors[b], t.used[b], t.norm[b])


@njit(cache=True, nogil=True, inline="always")
def root_edge(tb, action):
    """The root's edge of ``action`` (its first edge if it has none)."""
    e0 = tb.nodes[ROOT_NODE, FIRST_EDGE]
    for k in range(tb.nodes[ROOT_NODE, NUM_EDGES]):
        if tb.edges[e0 + k, ACTION] == action:
            return e0 + k
    return e0


def _new_roots(t, roots, two_player):  # pragma: no cover (compiled)
    """Makes every tree a lone unexpanded root; its mover is the player who moved into it."""
    for b in range(roots.shape[0]):
        init_root(tree_of(t, b), 1 - player(roots, b) if two_player else 0)


def _simulate(
    t, roots, lv, rng, c, fpu, two_player, use_max, scale, forced, observing
):  # pragma: no cover
    """Descends every tree from its root to a leaf (an unexpanded node or a finished game) by
    ``select_edge``, playing the moves on a copy of the game's root state, and describes the
    leaf in ``lv`` (its observation too where ``observing``: an evaluator reads it). Every node
    on the path gets its visit now; :func:`expand_and_backup` adds the value. ``forced[b] >=
    0``: tree ``b``'s root action (Gumbel AlphaZero's root)."""
    s = Settings(c, fpu, 0.0, two_player, use_max, 0.0, 0.0)
    for b in range(roots.shape[0]):
        tb = tree_of(t, b)
        copy_into(lv.states[b], roots[b])
        ws = lv.ws[b]
        node = ROOT_NODE
        tb.stats[node, VISITS] += 1.0
        while tb.nodes[node, NUM_EDGES] > 0:
            if node == ROOT_NODE and forced[b] >= 0:
                e = root_edge(tb, forced[b])
            else:
                e = select_edge(tb, node, rng, s)
            child = tb.edges[e, CHILD]
            if child == NO_CHILD:
                child = child_of(tb, node, e, player(lv.states, b) if two_player else 0)
            play(lv.states, b, tb.edges[e, ACTION], ws)
            node = child
            tb.stats[node, VISITS] += 1.0
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
            if observing:
                observe(lv.states, b, lv.obs[b])
            lv.to_move[b] = player(lv.states, b) if two_player else 0


@njit(cache=True, nogil=True)
def expand_and_backup(t, lv, priors, values, noise, eps, two_player, buf):
    """Expands every tree's leaf with its priors (``priors[b]`` over the whole action space; the
    root's mixed with ``noise[b]`` by ``eps``) and backs its value up: ``values[b]``, for
    the player to move at the leaf, or the exact value of a finished game (whose node gets no
    edge)."""
    for b in range(lv.node.shape[0]):
        tb = tree_of(t, b)
        node = lv.node[b]
        n = lv.n[b]
        moves = lv.moves[b]
        if n == 0:
            mark_over(tb, node)
            backup(tb, node, lv.exact[b], two_player, 0.0)
            continue
        normalised_priors(priors[b], moves, n, buf)
        root_eps = eps if node == ROOT_NODE else 0.0
        expand(tb, node, moves, n, buf, noise[b], root_eps)
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
        tb = tree_of(t, b)
        e0 = tb.nodes[ROOT_NODE, FIRST_EDGE]
        for k in range(max(tb.nodes[ROOT_NODE, NUM_EDGES], 0)):
            a = tb.edges[e0 + k, ACTION]
            child = tb.edges[e0 + k, CHILD]
            if child != NO_CHILD and tb.stats[child, VISITS] > 0.0:
                visits[b, a] = int(tb.stats[child, VISITS])
                q[b, a] = tb.stats[child, TOTAL] / tb.stats[child, VISITS]


# -- the kernel-binding table -------------------------------------------------------------------

NewRoots = Callable[[TreeArrays, np.ndarray, bool], None]
"""``new_roots(trees, roots[M, L], two_player)``."""
Simulate = Callable[
    [TreeArrays, np.ndarray, Leaves, np.ndarray, float, float, bool, bool, float, np.ndarray, bool],
    None,
]
"""``simulate(trees, roots[M, L], leaves, rng, c, fpu, two_player, use_max, scale, forced[M],
observing)``: the settings as scalars, which numba's dispatcher types 2 us faster a call than a
NamedTuple."""
PlayoutValues = Callable[
    [Leaves, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, bool, np.ndarray], None
]
"""``playout_values(leaves, priors[M, A], values[M], policy, rng, seq, two_player, buf)``."""


class BatchKernels(NamedTuple):
    """The compiled per-game halves of a batched search (:func:`batch_kernels`)."""

    new_roots: NewRoots
    simulate: Simulate
    playout_values: PlayoutValues


def batch_kernels(
    kernel: Kernel, prior: KernelPrior | None = None, rule: str = "alphago"
) -> BatchKernels:
    """The compiled ``new_roots``, ``simulate`` (with the selection ``rule``, a name of
    :data:`mc_envs.agents.mcts.selection.RULES`) and ``playout_values`` (with the
    :class:`~mc_envs.agents.mcts.search.KernelPrior` ``prior``, uniform if None) of a kernel,
    each built once (:func:`~mc_envs._numba.instantiate`'s memo)."""
    if kernel.observe is None:
        raise ValueError(f"kernel {kernel.name!r} has no observe function: cannot batch it")
    ops = compiled_ops(kernel)
    suffix = f"batch_{kernel.name}"
    name = prior.name if prior is not None else "uniform"
    prior_ops = ops if prior is None else {**ops, "compute_prior": prior_op(kernel, name, prior.fn)}
    return BatchKernels(
        new_roots=instantiate(_new_roots, suffix, **ops),
        simulate=instantiate(_simulate, f"{suffix}_{rule}", select_edge=RULES[rule], **ops),
        playout_values=instantiate(_playout_values, f"{suffix}_{name}", **prior_ops),
    )
