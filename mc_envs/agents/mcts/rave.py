"""RAVE and tree knowledge: the search template's hooks for them, and their options.

Rapid action value estimation (Gelly and Silver, "Monte-Carlo tree search and rapid action value
estimation in computer Go", AIJ 2011) keeps, on every edge of a wide tree
(:data:`mc_envs.agents.mcts.tree.WIDE`), an all-moves-as-first (AMAF) statistic: after each
iteration, every node on the iteration's path has each of its edges whose action its player to
move played later in the same iteration (in the tree or in the playout) credited with the
result, for that player. An edge is credited at most once an iteration, however often its action
was played (in Go a point can be played again after a capture): the first occurrence counts.
Players are taken to alternate (Go's passes are moves); in a one-player puzzle every move is the
one player's. The selection rule is :func:`mc_envs.agents.mcts.selection.select_rave`.

Tree knowledge (a kernel's ``knowledge`` function, :class:`mc_envs.kernel.Kernel`) gives each new
edge virtual visits and their mean value, which the rule adds to the edge's own statistic and to
its AMAF statistic (Gelly and Silver's heuristic MC-RAVE). Virtual visits are not real ones: the
root's reported visits, and the move chosen by visits, leave them out.

Each hook is bound into the one search template (:mod:`mc_envs.agents.mcts.search`), a no-op when
its option is off, so that plain UCT compiles to the loop it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.agents.mcts.tree import (
    ACTION,
    AMAF_TOTAL,
    AMAF_VISITS,
    FIRST_EDGE,
    KNOW_VALUE,
    KNOW_VISITS,
    MOVER,
    NUM_EDGES,
    PARENT,
    TreeArrays,
)
from mc_envs.core import unwrap
from mc_envs.kernel import KnowledgeFn, k_knowledge

if TYPE_CHECKING:
    import gymnasium as gym
    from numpy.typing import ArrayLike

    from mc_envs._numba import Dispatcher
    from mc_envs.agents.ops import EnvStates
    from mc_envs.kernel import Kernel

    #: Tree knowledge on the generic path: ``knowledge(env) -> (visits, values)`` over the legal
    #: actions in sorted order.
    EnvKnowledge = Callable[[gym.Env], tuple[ArrayLike, ArrayLike]]

# -- the AMAF update (after each iteration's backup) -----------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def no_amaf(t, node, path, depth, length, r, two_player, marks, stamp):
    """The AMAF update of a search without RAVE: none."""


@njit(cache=True, nogil=True, inline="always")
def update_amaf(t, node, path, depth, length, r, two_player, marks, stamp):
    """Credits the AMAF statistics of the iteration that played ``path[:length]`` from the root,
    reached the tree node ``node`` after ``depth`` moves and ended with ``r`` (player 0's return,
    or a puzzle's score).

    A backward walk over the path marks ``marks[player, action] = stamp`` (``stamp``: unique to the
    iteration, so the marks never need clearing) for every move played from there on; at each
    tree node on the way up, the edges whose action its player to move has marked are credited."""
    nodes, edges, wide = t.nodes, t.edges, t.edge_priors
    first = 1 - nodes[node, MOVER] if two_player else 0  # the player to move at ``node``
    win0 = (1.0 + r) * 0.5
    cur = node
    for j in range(length - 1, -1, -1):
        p = first ^ ((j - depth) & 1) if two_player else 0
        marks[p, path[j]] = stamp
        if j < depth:
            cur = nodes[cur, PARENT]  # the node where path[j] was played
            v = (win0 if p == 0 else 1.0 - win0) if two_player else r
            e0 = nodes[cur, FIRST_EDGE]
            for k in range(nodes[cur, NUM_EDGES]):
                if marks[p, edges[e0 + k, ACTION]] == stamp:
                    wide[e0 + k, AMAF_VISITS] += 1.0
                    wide[e0 + k, AMAF_TOTAL] += v


# -- the new edges' statistics (after each expansion) ----------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def no_edge_stats(t, e0, n, states, i, ws, moves, scratch):
    """A narrow tree's new edges: nothing beyond :func:`~mc_envs.agents.mcts.tree.expand`."""


@njit(cache=True, nogil=True, inline="always")
def write_edge_stats(t, e0, n, visits, values):
    """Empties the AMAF statistics of the ``n`` edges from ``e0`` and gives them ``visits[:n]``
    virtual visits (negative or NaN: none) of mean ``values[:n]``."""
    wide = t.edge_priors
    for k in range(n):
        wide[e0 + k, AMAF_VISITS] = 0.0
        wide[e0 + k, AMAF_TOTAL] = 0.0
        v = visits[k]
        wide[e0 + k, KNOW_VISITS] = v if v > 0.0 else 0.0
        wide[e0 + k, KNOW_VALUE] = values[k] if v > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def zero_edge_stats(t, e0, n, states, i, ws, moves, scratch):
    """A wide tree's new edges without knowledge: empty statistics, no virtual visits."""
    for k in range(n):
        scratch.know_visits[k] = 0.0
    write_edge_stats(t, e0, n, scratch.know_visits, scratch.know_values)


def _knowledge_edge_stats(t, e0, n, states, i, ws, moves, scratch):  # pragma: no cover (compiled)
    if n > 0:
        k_knowledge(states[i], moves, n, ws, scratch.know_visits, scratch.know_values)
    write_edge_stats(t, e0, n, scratch.know_visits, scratch.know_values)


class KnowledgeScratch(Protocol):
    """What the new-edge hooks use of a search's scratch
    (:class:`mc_envs.agents.mcts.search.Scratch`)."""

    @property
    def know_visits(self) -> np.ndarray: ...

    @property
    def know_values(self) -> np.ndarray: ...


# The generic path's new-edge hook, ``edge_stats(t, e0, n, states, i, ws, moves, scratch)``.
GenericEdgeStats = Callable[
    [TreeArrays, int, int, "EnvStates", int, None, np.ndarray, KnowledgeScratch], None
]


def compiled_edge_stats(kernel: Kernel, name: str) -> Dispatcher:
    """The compiled new-edge hook of the kernel's knowledge ``name`` (compiled, cached)."""
    return instantiate(
        _knowledge_edge_stats, f"{kernel.name}_{name}", k_knowledge=kernel.knowledge[name]
    )


def generic_edge_stats(knowledge: EnvKnowledge) -> GenericEdgeStats:
    """The generic path's new-edge hook of ``knowledge(env) -> (visits, values)``, called on the
    env in the node's state."""

    def edge_stats(t, e0, n, states, i, ws, moves, scratch):
        visits, values = scratch.know_visits, scratch.know_values
        if n > 0:
            v, q = knowledge(states.use(i))
            visits[:n], values[:n] = np.asarray(v, np.float64), np.asarray(q, np.float64)
        write_edge_stats.py_func(t, e0, n, visits, values)

    return edge_stats


def kernel_knowledge(kernel: Kernel, fn: KnowledgeFn) -> EnvKnowledge:
    """A kernel's compiled knowledge ``fn`` as a generic ``knowledge(env) -> (visits, values)``
    (the env's state array, a fresh workspace)."""

    def knowledge(env: gym.Env) -> tuple[np.ndarray, np.ndarray]:
        base = unwrap(env)
        state, actions = np.array(base.state_view), base.legal_actions()
        n = len(actions)
        visits, values = np.zeros(max(n, 1)), np.zeros(max(n, 1))
        if n:
            fn(state, actions, n, kernel.workspace(state), visits, values)
        return visits[:n], values[:n]

    return knowledge


# -- the options -----------------------------------------------------------------------------------


class TreeOptions(NamedTuple):
    """A tree agent's RAVE and knowledge options, checked (:func:`tree_options`)."""

    rave: float | None  # k of the hand-selected schedule
    rave_bias: float | None  # b of the minimum-MSE schedule
    knowledge: str | EnvKnowledge | None  # a kernel's knowledge name, or knowledge(env)
    fpu: float  # the value of an edge with no statistic at all (rule "rave")

    @property
    def amaf(self) -> bool:
        """Whether the search keeps AMAF statistics."""
        return self.rave is not None or self.rave_bias is not None

    @property
    def wide(self) -> bool:
        """Whether the tree has the wide edge columns (and the rule "rave")."""
        return self.amaf or self.knowledge is not None

    def key(self) -> tuple:
        """What a kept tree must have been searched with to be reused."""
        return (
            self.amaf,
            self.knowledge if isinstance(self.knowledge, str) else id(self.knowledge),
        )


def tree_options(
    rave: float | None, rave_bias: float | None, knowledge: str | EnvKnowledge | None, fpu: float
) -> TreeOptions:
    """The options, checked.

    Raises:
        ValueError: ``rave`` or ``rave_bias`` not a positive number, both given, ``knowledge``
            neither a name nor a callable, or ``fpu`` not finite (naming the keyword).
    """
    for name, value in (("rave", rave), ("rave_bias", rave_bias)):
        if value is not None and not (isinstance(value, (int, float)) and 0.0 < value < math.inf):
            raise ValueError(f"{name} must be a positive number or None, got {value!r}")
    if rave is not None and rave_bias is not None:
        raise ValueError(
            "give rave (the hand-selected schedule) or rave_bias (minimum MSE), not both"
        )
    if knowledge is not None and not (isinstance(knowledge, str) or callable(knowledge)):
        raise ValueError(f"knowledge must be a name, a callable or None, got {knowledge!r}")
    if not math.isfinite(fpu):
        raise ValueError(f"fpu must be a finite number, got {fpu!r}")
    return TreeOptions(
        None if rave is None else float(rave),
        None if rave_bias is None else float(rave_bias),
        knowledge,
        float(fpu),
    )


def knowledge_of(kernel: Kernel | None, name: str, game: str) -> KnowledgeFn:
    """The kernel's knowledge ``name``.

    Raises:
        ValueError: the game has no knowledge of that name (listing those it has).
    """
    table = {} if kernel is None else kernel.knowledge
    if name not in table:
        raise ValueError(f"{game} has no tree knowledge {name!r}; it has {sorted(table)}")
    return table[name]
