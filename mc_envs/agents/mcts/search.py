"""The one template that searches a tree (:mod:`mc_envs.agents.mcts.tree`) with playouts.

:func:`_tree_search` is written once against the state operations of :mod:`mc_envs.agents.ops`
and a selection rule (``select_edge``, :mod:`mc_envs.agents.mcts.selection`). Compiled per kernel,
compiled prior and rule, it is the fast path, with no Python per iteration; bound to
:class:`~mc_envs.agents.ops.EnvStates` it runs over any env of the contract. Both give the same
tree for a seed and an iteration budget.

An iteration copies the root state (slot 0) to slot 1 and descends. A node is expanded (its legal
moves become edges, with ``compute_prior``'s priors) the second time the search reaches it; the
root at once. The first new node is evaluated by one playout, and the result is backed up to the
root. Two hooks serve RAVE and tree knowledge (:mod:`mc_envs.agents.mcts.rave`), no-ops without
them: ``edge_stats`` after an expansion, ``amaf_backup`` after the backup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.agents.base import Slot, StopCode
from mc_envs.agents.common import count_playout, record
from mc_envs.agents.mcts.rave import (
    compiled_edge_stats,
    generic_edge_stats,
    no_amaf,
    no_edge_stats,
    update_amaf,
    zero_edge_stats,
)
from mc_envs.agents.mcts.selection import RULES, Settings, select_ucb1
from mc_envs.agents.mcts.tree import (
    ACTION,
    CHILD,
    EDGES,
    FIRST_EDGE,
    NO_CHILD,
    NODES,
    NUM_EDGES,
    ROOT,
    UNEXPANDED,
    VISITS,
    TreeArrays,
    backup,
    child_of,
    expand,
)
from mc_envs.agents.ops import (
    bind_generic,
    compiled_ops,
    compute_prior,
    copy_state,
    legal,
    plain_python,
    play,
    player,
    playout,
    prior_op,
    returns,
    score,
)
from mc_envs.core import unwrap

if TYPE_CHECKING:
    import gymnasium as gym
    from numpy.typing import ArrayLike

    from mc_envs._numba import Dispatcher
    from mc_envs.agents.mcts.rave import EnvKnowledge
    from mc_envs.agents.ops import EnvStates, Game, Shared
    from mc_envs.core import PolicyFactory
    from mc_envs.kernel import Kernel, PriorFn

    #: A move prior of the generic path, ``prior(env) -> probabilities``: indexed by action over
    #: the whole action space, or aligned with ``env.legal_actions()``.
    Prior = Callable[[gym.Env], ArrayLike]

# What the template returns to its caller (the tree agent's program).
ENDED = 0  # the control block says stop (a StopCode is set)
OUT_OF_ROOM = 1  # the tree needs more room: grow it and call again
CHUNK_DONE = 2  # CHUNK iterations done: call again
# Iterations between returns to Python: a fresh read of the stop flag, which a compiled loop could
# otherwise keep in a register.
CHUNK = 512

select_edge = select_ucb1  # bound per search (instantiate / bind_generic), as are:
edge_stats = no_edge_stats
amaf_backup = no_amaf


@njit(cache=True, nogil=True, inline="always")
def no_priors(states, i, actions, n, out):
    """``compute_prior`` of UCB1, which reads no prior: the edges get what ``out`` holds (0).
    Binding it rather than :func:`uniform_priors` keeps UCT's loop as fast as it was."""


@njit(cache=True, nogil=True, inline="always")
def uniform_priors(states, i, actions, n, out):
    """``compute_prior`` of a search without prior: ``1 / n`` for each of the ``n`` actions
    (inlined into the search, unlike :func:`mc_envs.agents.ops.uniform_prior`)."""
    for k in range(n):
        out[k] = 1.0 / n


class Scratch(NamedTuple):
    """A search's scratch space and settings."""

    moves: np.ndarray  # [A] int64, the legal moves of a node
    path: np.ndarray  # [max moves + 1] int64, the moves of an iteration
    noise: np.ndarray  # [A] float64, the root's Dirichlet noise (used when settings.noise_eps > 0)
    priors: np.ndarray  # [A] float64, the priors of the node being expanded
    settings: Settings
    marks: np.ndarray  # [2, A] int64, RAVE: the iteration that last saw a player's move
    know_visits: np.ndarray  # [A] float64, knowledge: the virtual visits of a new node's edges
    know_values: np.ndarray  # [A] float64, knowledge: their mean values


# A tree search, compiled or generic: ``fn(g, t, scratch, policy, rng, sh) -> ENDED, OUT_OF_ROOM
# or CHUNK_DONE``; ``policy`` is a kernel's policy code (compiled) or a factory (generic).
SearchFn = Callable[["Game", TreeArrays, Scratch, "int | PolicyFactory", np.ndarray, "Shared"], int]
# ``compute_prior(states, i, actions, n, out)`` of the generic path.
ComputePrior = Callable[["EnvStates", int, np.ndarray, int, np.ndarray], None]
# The search template's RAVE hooks (their arguments: :func:`update_amaf`, :func:`zero_edge_stats`).
Hook = Callable[..., None]


def _tree_search(g, t, scratch, policy, rng, sh):
    """Runs iterations from ``g.states[0]`` (the root node ``t.used[ROOT]``) until told to stop;
    returns ENDED, OUT_OF_ROOM or CHUNK_DONE."""
    states, ws, control = g.states, g.ws, sh.control
    moves, path, s = scratch.moves, scratch.path, scratch.settings
    two_player = s.two_player
    root = t.used[ROOT]
    # Room for a node and an expansion's edges (the tree grows between calls, never during one).
    node_room, edge_room = t.nodes.shape[0] - 1, t.edges.shape[0] - moves.shape[0]
    done = 0
    while control[Slot.STOP] == StopCode.NONE:
        if done == CHUNK:
            return CHUNK_DONE
        done += 1
        if control[Slot.ITERATIONS] >= control[Slot.ITERATION_LIMIT]:
            control[Slot.STOP] = StopCode.ITERATIONS
            break
        if t.used[NODES] > node_room or t.used[EDGES] > edge_room:
            return OUT_OF_ROOM
        copy_state(states, 1, 0)
        node = root
        depth = 0
        while True:
            if t.nodes[node, NUM_EDGES] == UNEXPANDED:
                if t.stats[node, VISITS] == 0.0 and node != root:
                    break  # a new leaf: evaluated by a playout
                n = legal(states, 1, ws, moves)
                if n > 0:
                    compute_prior(states, 1, moves, n, scratch.priors)
                eps = s.noise_eps if node == root else 0.0
                expand(t, node, moves, n, scratch.priors, scratch.noise, eps)
                edge_stats(t, t.nodes[node, FIRST_EDGE], n, states, 1, ws, moves, scratch)
            if t.nodes[node, NUM_EDGES] == 0:
                break  # the game is over here
            e = select_edge(t, node, rng, s)
            if t.edges[e, CHILD] != NO_CHILD:
                node = t.edges[e, CHILD]
            else:  # the mover is asked of the game only for a new node
                node = child_of(t, node, e, player(states, 1) if two_player else 0)
            a = t.edges[e, ACTION]
            play(states, 1, a, ws)
            path[depth] = a
            depth += 1
        k = playout(states, 1, policy, rng, ws, path, depth)
        count_playout(control)
        if two_player:
            r = returns(states, 1)
        else:
            r = score(states, 1)
            record(path, depth + k, r, sh)
        backup(t, node, r, two_player, 1.0)
        stamp = control[Slot.ITERATIONS] + 1
        amaf_backup(t, node, path, depth, depth + k, r, two_player, scratch.marks, stamp)
        control[Slot.ITERATIONS] += 1
    return ENDED


# -- priors -----------------------------------------------------------------------------------------


class KernelPrior:
    """A move prior with a compiled form, usable by PUCT's compiled search.

    Called with an env it returns probabilities over the legal actions (in their sorted order);
    ``fn(state, actions, n, out)`` is the numba function computing them from the state array.

    Args:
        name: names the compiled search instance.
        game: the ``game`` name of the envs it applies to.
        fn: the numba function.
    """

    def __init__(self, name: str, game: str, fn: PriorFn) -> None:
        self.name, self.game, self.fn = name, game, fn

    def __call__(self, env: gym.Env) -> np.ndarray:
        base = unwrap(env)
        actions = base.legal_actions()
        out = np.zeros(max(len(actions), 1))
        if len(actions):
            self.fn(np.array(base.state_view), actions, len(actions), out)
        return out[: len(actions)]


@njit(cache=True, nogil=True, inline="always")
def normalised_priors(row, moves, n, out):
    """``out[:n]``: ``row`` at the ``n`` legal ``moves``, summing to 1 (uniform when their sum is
    not a positive finite number)."""
    total = 0.0
    for k in range(n):
        total += row[moves[k]]
    if total > 0.0 and np.isfinite(total):
        for k in range(n):
            out[k] = row[moves[k]] / total
    else:
        for k in range(n):
            out[k] = 1.0 / n


def generic_prior(prior: Prior | None) -> ComputePrior:
    """The generic-path binding of ``compute_prior`` for a prior callable (or None: uniform)."""

    normalised = plain_python(normalised_priors)

    def compute_prior(states, i, actions, n, out):
        env = states.use(i)
        if prior is None:
            out[:n] = 1.0 / n
            return
        if isinstance(prior, KernelPrior):
            prior.fn(np.array(env.state_view), actions, n, out)
            return
        p = np.asarray(prior(env), dtype=np.float64)
        if len(p) == env.action_space.n:
            normalised(p, actions, n, out)
        else:
            normalised(p, np.arange(n), n, out)

    return compute_prior


def compiled_search(
    kernel: Kernel,
    prior: KernelPrior | None = None,
    rule: str = "ucb1",
    amaf: bool = False,
    knowledge: str | None = None,
) -> Dispatcher:
    """The compiled tree search of a kernel (each made once: :func:`~mc_envs._numba.instantiate`'s
    memo), with a compiled prior (uniform if None), a selection rule (a name of
    :data:`mc_envs.agents.mcts.selection.RULES`), AMAF statistics (``amaf``) and the kernel's tree
    knowledge ``knowledge`` (a name of ``kernel.knowledge``). A search with either of the last two
    needs a wide tree."""
    name = prior.name if prior is not None else "uniform"
    ops = dict(compiled_ops(kernel))
    ops["compute_prior"] = uniform_priors if prior is None else prior_op(kernel, name, prior.fn)
    amaf_backup, edge_stats = _hooks(amaf, knowledge is not None)
    if knowledge is not None:
        edge_stats = compiled_edge_stats(kernel, knowledge)
    suffix = f"{kernel.name}_{name}_{rule}"
    suffix += ("_amaf" if amaf else "") + (f"_k{knowledge}" if knowledge is not None else "")
    return instantiate(
        _tree_search,
        suffix,
        select_edge=RULES[rule],
        amaf_backup=amaf_backup,
        edge_stats=edge_stats,
        **ops,
    )


def _hooks(amaf: bool, wide: bool) -> tuple[Dispatcher, Dispatcher]:
    """The template's RAVE hooks, ``amaf_backup`` and ``edge_stats``, compiled."""
    return (
        update_amaf if amaf else no_amaf,
        zero_edge_stats if wide or amaf else no_edge_stats,
    )


def generic_search(
    prior: Prior | None = None,
    plain: bool = False,
    rule: str = "ucb1",
    amaf: bool = False,
    knowledge: EnvKnowledge | None = None,
) -> SearchFn:
    """The tree search as plain Python over :class:`~mc_envs.agents.ops.EnvStates` (``plain``: its
    compiled helpers too, :func:`~mc_envs.agents.ops.bind_generic`), with AMAF statistics
    (``amaf``) and ``knowledge(env) -> (visits, values)`` (or None)."""
    select = plain_python(RULES[rule]) if plain else RULES[rule]
    amaf_backup, edge_stats = _hooks(amaf, knowledge is not None)
    backup_hook: Hook = plain_python(amaf_backup) if plain else amaf_backup
    stats_hook: Hook
    if knowledge is not None:
        stats_hook = generic_edge_stats(knowledge)
    elif plain:
        stats_hook = plain_python(edge_stats)
    else:  # it takes the states, which numba cannot type here
        stats_hook = edge_stats.py_func
    return bind_generic(
        _tree_search,
        plain=plain,
        compute_prior=generic_prior(prior),
        select_edge=select,
        amaf_backup=backup_hook,
        edge_stats=stats_hook,
    )
