"""The array-based search tree shared by UCT and PUCT: its named columns and node operations.

A tree is a :class:`TreeArrays`: four tables whose columns have names (``t.stats[node, VISITS]``,
``t.edges[e, CHILD]``), and two small vectors. The batched search
(:mod:`mc_envs.agents.mcts.puct_batch`) puts a leading game axis ``[M, ...]`` on every array. The
node operations (:func:`expand`, :func:`child_of`, :func:`backup` ...) are written for one tree;
the selection rules are in :mod:`mc_envs.agents.mcts.selection`, the search template in
:mod:`mc_envs.agents.mcts.search`.

Why tables and not one array per column (as mctx's ``Tree``): a compiled search passes the tree to
its inlined node operations, and each pass reference-counts every array of the tuple; thirteen
column arrays made UCT's iterations 1.85x slower than these six arrays.

A node's MOVER is the player who played the move leading to it; its values are from that player's
point of view. Two-player values are in [0, 1] (win 1, draw 0.5, loss 0). One-player values are
raw scores, normalised at selection by the lowest and highest playout score seen (``norm[LOW]``,
``norm[HIGH]``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, TypeVar, cast

import numpy as np

from mc_envs._numba import njit
from mc_envs.agents.base import NEG_INF

if TYPE_CHECKING:
    from mc_envs.state import State

S = TypeVar("S")  # a state as a search keeps it: a compiled row or an env's snapshot

PARENT, FIRST_EDGE, NUM_EDGES, MOVER = range(4)  # nodes[node, ...]
VISITS, TOTAL, BEST = range(3)  # stats[node, ...]
ACTION, CHILD = range(2)  # edges[edge, ...]
PRIOR, NOISED_PRIOR = range(2)  # edge_priors[edge, ...]
# The wide edge_priors of RAVE and tree knowledge (mc_envs.agents.mcts.rave), after the two above:
# AMAF_VISITS and AMAF_TOTAL (the all-moves-as-first statistic, values for the edge's mover),
# KNOW_VISITS and KNOW_VALUE (the game knowledge's virtual visits and their mean value).
AMAF_VISITS, AMAF_TOTAL, KNOW_VISITS, KNOW_VALUE = range(2, 6)
NARROW, WIDE = 2, 6  # the column counts of edge_priors
NODES, EDGES, ROOT = range(3)  # used[...]
LOW, HIGH = range(2)  # norm[...]

NO_PARENT = -1  # nodes[root, PARENT]
NO_EDGE = -1  # nodes[node, FIRST_EDGE] of a node not expanded
UNEXPANDED = -1  # nodes[node, NUM_EDGES] until expanded (0: the game is over there)
NO_CHILD = -1  # edges[edge, CHILD] of an edge not followed yet
MAX_TREE_BYTES = 2**31  # the default memory cap of a tree


class TreeArrays(NamedTuple):
    """A search tree (shapes for one tree; a batch of M trees has a leading ``M`` axis)."""

    nodes: np.ndarray  # [N, 4] int64: PARENT, FIRST_EDGE, NUM_EDGES, MOVER (who moved into it)
    stats: np.ndarray  # [N, 3] float64: VISITS, TOTAL (sum of values for MOVER), BEST value
    edges: np.ndarray  # [E, 2] int64: ACTION, CHILD
    edge_priors: np.ndarray  # [E, 2 or 6] float64: PRIOR, NOISED_PRIOR (with root noise:
    # selection's); wide (RAVE, knowledge): AMAF_VISITS, AMAF_TOTAL, KNOW_VISITS, KNOW_VALUE
    used: np.ndarray  # [3] int64: NODES used, EDGES used, the ROOT node
    norm: np.ndarray  # [2] float64: the LOW and HIGH playout score seen (puzzles)


NODE_BYTES = 8 * (4 + 3)
EDGE_BYTES = 8 * (2 + NARROW)


def empty_arrays(
    nodes: int, edges: int, batch: tuple[int, ...] = (), edge_columns: int = NARROW
) -> TreeArrays:
    """Uninitialised storage for a tree (or ``batch`` trees) of ``nodes`` nodes and ``edges``
    edges, ``edge_columns`` (NARROW or WIDE) in ``edge_priors``; :func:`init_root` makes the
    root."""
    return TreeArrays(
        nodes=np.empty(batch + (nodes, 4), np.int64),
        stats=np.empty(batch + (nodes, 3)),
        edges=np.empty(batch + (edges, 2), np.int64),
        edge_priors=np.empty(batch + (edges, edge_columns)),
        used=np.zeros(batch + (3,), np.int64),
        norm=np.empty(batch + (2,)),
    )


@njit(cache=True, nogil=True, inline="always")
def init_root(t, mover):
    """Empties the tree: a lone unexpanded root (node 0) moved into by ``mover``."""
    t.used[NODES] = 1
    t.used[EDGES] = 0
    t.used[ROOT] = 0
    t.nodes[0, PARENT] = NO_PARENT
    t.nodes[0, FIRST_EDGE] = NO_EDGE
    t.nodes[0, NUM_EDGES] = UNEXPANDED
    t.nodes[0, MOVER] = mover
    t.stats[0, VISITS] = 0.0
    t.stats[0, TOTAL] = 0.0
    t.stats[0, BEST] = NEG_INF
    t.norm[LOW] = np.inf
    t.norm[HIGH] = -np.inf


def has_room(t: TreeArrays, edges: int) -> bool:
    """Whether the tree has room for one more node and ``edges`` more edges."""
    return bool(t.used[NODES] + 1 <= t.nodes.shape[0] and t.used[EDGES] + edges <= t.edges.shape[0])


@njit(cache=True, nogil=True, inline="always")
def noised(prior, noise, eps):
    """A prior mixed with the root's noise: ``(1 - eps) prior + eps noise`` (``prior`` when
    ``eps`` is 0)."""
    return (1.0 - eps) * prior + eps * noise if eps > 0.0 else prior


@njit(cache=True, nogil=True, inline="always")
def mix_noise(t, node, noise, eps):
    """Sets the noised priors of ``node``'s edges (:func:`noised`), as :func:`expand` does."""
    e0 = t.nodes[node, FIRST_EDGE]
    for k in range(t.nodes[node, NUM_EDGES]):
        t.edge_priors[e0 + k, NOISED_PRIOR] = noised(t.edge_priors[e0 + k, PRIOR], noise[k], eps)


@njit(cache=True, nogil=True, inline="always")
def expand(t, node, moves, n, priors, noise, eps):
    """Makes the ``n`` legal ``moves`` the edges of ``node``, with ``priors[:n]`` mixed with
    ``noise`` by ``eps`` (:func:`noised`)."""
    e0 = t.used[EDGES]
    t.nodes[node, FIRST_EDGE] = e0
    t.nodes[node, NUM_EDGES] = n
    for k in range(n):
        t.edges[e0 + k, ACTION] = moves[k]
        t.edges[e0 + k, CHILD] = NO_CHILD
        t.edge_priors[e0 + k, PRIOR] = priors[k]
        t.edge_priors[e0 + k, NOISED_PRIOR] = noised(priors[k], noise[k], eps)
    t.used[EDGES] = e0 + n


@njit(cache=True, nogil=True, inline="always")
def mark_over(t, node):
    """Expands ``node`` with no edge: the game is over there."""
    t.nodes[node, FIRST_EDGE] = t.used[EDGES]
    t.nodes[node, NUM_EDGES] = 0


@njit(cache=True, nogil=True, inline="always")
def child_of(t, node, e, mover):
    """The child node along edge ``e`` of ``node``, made (unvisited, moved into by ``mover``) if
    it does not exist yet."""
    child = t.edges[e, CHILD]
    if child == NO_CHILD:
        child = t.used[NODES]
        t.used[NODES] = child + 1
        t.nodes[child, PARENT] = node
        t.nodes[child, FIRST_EDGE] = NO_EDGE
        t.nodes[child, NUM_EDGES] = UNEXPANDED
        t.nodes[child, MOVER] = mover
        t.stats[child, VISITS] = 0.0
        t.stats[child, TOTAL] = 0.0
        t.stats[child, BEST] = NEG_INF
        t.edges[e, CHILD] = child
    return child


@njit(cache=True, nogil=True, inline="always")
def backup(t, node, r, two_player, visits):
    """Backs the result ``r`` up from ``node`` to the root: player 0's return in [-1, 1]
    (two-player; each node gets it from its mover's side, in [0, 1]) or a score (one-player,
    also widening ``t.norm``). Adds ``visits`` (0 when the visit was counted on the way down, as
    a virtual loss)."""
    if not two_player:
        if r < t.norm[LOW]:
            t.norm[LOW] = r
        if r > t.norm[HIGH]:
            t.norm[HIGH] = r
    root = t.used[ROOT]
    while True:
        t.stats[node, VISITS] += visits
        v = r
        if two_player:
            v = (1.0 + r) * 0.5 if t.nodes[node, MOVER] == 0 else (1.0 - r) * 0.5
        t.stats[node, TOTAL] += v
        if v > t.stats[node, BEST]:
            t.stats[node, BEST] = v
        if node == root:
            break
        node = t.nodes[node, PARENT]


@njit(cache=True, nogil=True, inline="always")
def take_back_visit(t, node):
    """Takes back the visit (a virtual loss) that a descent counted on every node from ``node``
    up to the root, as if the descent had not been made."""
    root = t.used[ROOT]
    while True:
        t.stats[node, VISITS] -= 1.0
        if node == root:
            break
        node = t.nodes[node, PARENT]


class Tree:
    """A search tree that grows (see the module docstring) and its root's state.

    Args:
        max_actions: the size of the action space.
        nodes: the initial node capacity.
        edge_columns: ``edge_priors``' columns: NARROW, or WIDE for RAVE and tree knowledge.
    """

    def __init__(self, max_actions: int, nodes: int = 1024, edge_columns: int = NARROW) -> None:
        self.max_actions = int(max_actions)
        edges = max(nodes * 2, 2 * self.max_actions)
        self.arrays = empty_arrays(nodes, edges, edge_columns=edge_columns)
        self.edge_bytes = 8 * (2 + edge_columns)
        self.root_state: np.ndarray | State | None = None  # a compiled row, or an env's snapshot

    def new_root(self, mover: int, root_state: np.ndarray | State) -> None:
        """Empties the tree; the root's mover is the player who moved into it."""
        init_root.py_func(self.arrays, mover)
        self.root_state = root_state

    @property
    def nbytes(self) -> int:
        """The memory held by the tree's arrays."""
        return sum(a.nbytes for a in self.arrays)

    @property
    def size(self) -> int:
        """The nodes in use."""
        return int(self.arrays.used[NODES])

    def grow(self, limit: int | None = None) -> bool:
        """Doubles whichever of the node and edge stores is short of room; returns False, and
        leaves the tree as it is, when the tree would then hold more than ``limit`` bytes."""
        t = self.arrays
        nodes, edges = len(t.nodes), len(t.edges)
        if t.used[NODES] + 1 > nodes:
            nodes *= 2
        if t.used[EDGES] + self.max_actions > edges:
            edges = max(2 * edges, int(t.used[EDGES]) + 2 * self.max_actions)
        if limit is not None and nodes * NODE_BYTES + edges * self.edge_bytes > limit:
            return False
        self.arrays = t._replace(
            nodes=_resized(t.nodes, nodes),
            stats=_resized(t.stats, nodes),
            edges=_resized(t.edges, edges),
            edge_priors=_resized(t.edge_priors, edges),
        )
        return True

    @property
    def root(self) -> int:
        return int(self.arrays.used[ROOT])

    def set_root(self, node: int) -> None:
        """Continues the search from ``node`` (a node of the tree, reached by play), keeping
        only its subtree: the rest of the tree can no longer be reached, and a tree kept move
        after move would otherwise fill its memory cap with it."""
        t = self.arrays
        order = np.empty(int(t.used[NODES]), np.int64)
        nodes, edges = subtree(t, node, order)
        kept = empty_arrays(
            max(1024, 2 * nodes),
            max(2 * edges, 2 * self.max_actions),
            edge_columns=t.edge_priors.shape[1],
        )
        copy_subtree(t, order, nodes, kept)
        self.arrays = kept

    def mean_value(self, node: int) -> float:
        """The mean value of a visited node for its mover."""
        t = self.arrays
        return float(t.stats[node, TOTAL] / t.stats[node, VISITS])

    def edges(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """(actions, child nodes or NO_CHILD) of an expanded node; empty if not expanded."""
        t = self.arrays
        n = int(t.nodes[node, NUM_EDGES])
        if n <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        e0 = int(t.nodes[node, FIRST_EDGE])
        return t.edges[e0 : e0 + n, ACTION].copy(), t.edges[e0 : e0 + n, CHILD].copy()

    def children(self, node: int) -> list[tuple[int, int]]:
        """(action, child) for the children that exist."""
        actions, kids = self.edges(node)
        return [(int(a), int(k)) for a, k in zip(actions, kids) if k != NO_CHILD]

    def node_of(
        self, state: S, advance: Callable[[S, int], S], equal: Callable[[S, S], bool]
    ) -> int | None:
        """The node holding ``state``: the root, or a node one or two moves below it (a child's
        state is ``advance(its parent's, action)``), else None."""
        # A tree is kept for one path (the tree agent's key): its root is of the caller's kind.
        root_state = cast(S, self.root_state)
        if equal(root_state, state):
            return self.root
        frontier = [(self.root, root_state)]
        for _ in range(2):
            nxt = []
            for node, here in frontier:
                for a, child in self.children(node):
                    there = advance(here, a)
                    if equal(there, state):
                        return child
                    nxt.append((child, there))
            frontier = nxt
        return None

    def root_stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(actions, visits, mean values) of the root's edges; visits 0 and value NaN when unvisited."""
        t = self.arrays
        actions, kids = self.edges(self.root)
        made = kids != NO_CHILD
        visits = np.where(made, t.stats[np.where(made, kids, 0), VISITS], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(made, t.stats[np.where(made, kids, 0), TOTAL] / visits, np.nan)
        return actions, visits.astype(np.int64), values

    def root_amaf(self) -> tuple[np.ndarray, np.ndarray]:
        """(AMAF visits, AMAF total values) of the root's edges, in :meth:`edges`' order (a wide
        tree's; virtual visits of knowledge are not in them)."""
        t = self.arrays
        n = max(int(t.nodes[self.root, NUM_EDGES]), 0)
        e0 = int(t.nodes[self.root, FIRST_EDGE])
        rows = t.edge_priors[e0 : e0 + n]
        return rows[:, AMAF_VISITS].copy(), rows[:, AMAF_TOTAL].copy()

    def best_child(self, node: int) -> tuple[int, int] | None:
        """(action, child) with the most visits (ties: higher mean value, then first), or None."""
        best, key = None, None
        for a, k in self.children(node):
            n = self.arrays.stats[k, VISITS]
            if n <= 0:
                continue
            cand = (n, self.mean_value(k))
            if key is None or cand > key:
                best, key = (a, k), cand
        return best

    def principal_variation(self) -> list[int]:
        """The moves from the root, following the most visited child while it has visits."""
        pv: list[int] = []
        node = self.root
        while True:
            step = self.best_child(node)
            if step is None:
                return pv
            pv.append(step[0])
            node = step[1]


@njit(cache=True, nogil=True)
def subtree(t, node, order):
    """Writes the nodes of the subtree below ``node`` into ``order``, breadth first from
    ``node``; returns (their number, their edges' number)."""
    order[0] = node
    head, tail, edges = 0, 1, 0
    while head < tail:
        x = order[head]
        head += 1
        n = t.nodes[x, NUM_EDGES]
        if n > 0:
            edges += n
            e0 = t.nodes[x, FIRST_EDGE]
            for k in range(n):
                child = t.edges[e0 + k, CHILD]
                if child != NO_CHILD:
                    order[tail] = child
                    tail += 1
    return tail, edges


@njit(cache=True, nogil=True)
def copy_subtree(t, order, count, out):
    """Copies the ``count`` nodes of ``order`` (:func:`subtree`'s) into the empty tree ``out``,
    numbered in that order (the root 0), with their edges; ``out`` has room for them."""
    new = np.full(t.nodes.shape[0], -1, np.int64)
    for i in range(count):
        new[order[i]] = i
    e = 0
    for i in range(count):
        x = order[i]
        # loops, not slice assignments: see agents/ops._copy_state
        for j in range(t.nodes.shape[1]):
            out.nodes[i, j] = t.nodes[x, j]
        for j in range(t.stats.shape[1]):
            out.stats[i, j] = t.stats[x, j]
        out.nodes[i, PARENT] = NO_PARENT if i == 0 else new[t.nodes[x, PARENT]]
        n = t.nodes[x, NUM_EDGES]
        if t.nodes[x, FIRST_EDGE] != NO_EDGE:
            out.nodes[i, FIRST_EDGE] = e
        if n > 0:
            e0 = t.nodes[x, FIRST_EDGE]
            for k in range(n):
                for j in range(t.edges.shape[1]):
                    out.edges[e + k, j] = t.edges[e0 + k, j]
                for j in range(t.edge_priors.shape[1]):
                    out.edge_priors[e + k, j] = t.edge_priors[e0 + k, j]
                child = t.edges[e0 + k, CHILD]
                if child != NO_CHILD:
                    out.edges[e + k, CHILD] = new[child]
            e += n
    out.used[NODES] = count
    out.used[EDGES] = e
    out.used[ROOT] = 0
    for j in range(t.norm.shape[0]):
        out.norm[j] = t.norm[j]


def _resized(a: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n,) + a.shape[1:], dtype=a.dtype)
    out[: len(a)] = a
    return out
