"""The array-based search tree shared by UCT and PUCT, and the one template that searches it.

:func:`_tree_search` is written once against the state operations of :mod:`mc_envs.agents.ops`. Compiled per
kernel (and per compiled prior), it is the fast path, with no Python per iteration; bound to
:class:`~mc_envs.agents.ops.EnvStates` it runs over any env of the contract. Both give the same tree for a
seed and an iteration budget.

Tree layout (parallel arrays, grown by doubling in Python when the template asks for room)::

    ni[node]   int64   PARENT, EDGE0 (first edge), NEDGES (-1 = not expanded), MOVER
    nf[node]   float   VISITS, TOTAL (sum of values for MOVER), BEST (max value seen)
    ea[edge]   int64   ACTION, CHILD (-1 = no node yet)
    ep[edge]   float   PRIOR_CLEAN (from the prior), PRIOR (with root noise)
    used       int64   NODES used, EDGES used, ROOT node

A node's MOVER is the player who played the move leading to it; its values are from that player's
point of view. Two-player values are in [0, 1] (win 1, draw 0.5, loss 0). One-player values are
raw scores, normalised at selection by the smallest and largest playout score seen (``norm``).

An iteration copies the root state (slot 0) to slot 1 and descends. A node is expanded (its legal
moves become edges) the second time the search reaches it; the root at once. UCB1 tries every
unvisited edge first (chosen uniformly at random) and then maximises ``Q + c sqrt(ln N / n)``;
PUCT maximises ``Q + c P / (1 + n)`` (AlphaGo) or ``Q + c P sqrt(N) / (1 + n)`` (AlphaZero), with
``Q = fpu`` for an unvisited edge, ties to the first edge. The first new node is evaluated by one
playout, and the result is backed up to the root.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from mc_envs._numba import instantiate, njit
from mc_envs.agents.base import ITERATION_LIMIT, ITERATIONS, NEG_INF, STOP
from mc_envs.agents.common import count_playout, record
from mc_envs.agents.ops import (
    bind_generic,
    compiled_ops,
    compute_prior,
    copy_state,
    legal,
    play,
    player,
    playout,
    prior_op,
    returns,
    score,
)
from mc_envs.rng import rng_below

PARENT, EDGE0, NEDGES, MOVER = range(4)
NI = 4
VISITS, TOTAL, BEST = range(3)
NF = 3
ACTION, CHILD = 0, 1
PRIOR_CLEAN, PRIOR = 0, 1
NODES, EDGES, ROOT = range(3)
# cfg fields
C, MODE, FPU, BACKUP_MAX, NOISE_EPS, TWO_PLAYER = range(6)
CFG_SIZE = 6
MODE_UCB, MODE_ALPHAGO, MODE_ALPHAZERO = 0, 1, 2
DONE, GROW, PAUSE = 0, 1, 2
MAX_TREE_BYTES = 2**31  # the default memory cap of a tree
# Iterations between returns to Python: a fresh read of the stop flag, which a compiled loop could
# otherwise keep in a register.
CHUNK = 512

Arrays = namedtuple("Arrays", "ni nf ea ep used norm")
Arrays.__doc__ = """The tree's arrays (see the module docstring); ``norm`` is [lowest, highest]
playout score seen (one-player normalisation)."""

Scratch = namedtuple("Scratch", "moves path fbuf cfg")
Scratch.__doc__ = """A search's scratch: the legal moves, the path of an iteration, ``fbuf[0]`` the
root's Dirichlet noise and ``fbuf[1]`` the priors of a node, and ``cfg`` the settings (``C``,
``MODE``, ``FPU``, ``BACKUP_MAX``, ``NOISE_EPS``, ``TWO_PLAYER``)."""


@njit(cache=True, nogil=True, inline="always")
def expand(t, node, moves, n, priors, noise, eps, uniform):
    """Makes the ``n`` legal ``moves`` the edges of ``node``, with ``priors[:n]`` (or ``1 / n``
    when ``uniform``), mixed with the root's ``noise`` when ``eps > 0``."""
    e0 = t.used[EDGES]
    t.ni[node, EDGE0] = e0
    t.ni[node, NEDGES] = n
    for k in range(n):
        t.ea[e0 + k, ACTION] = moves[k]
        t.ea[e0 + k, CHILD] = -1
        p = 1.0 / n if uniform else priors[k]
        t.ep[e0 + k, PRIOR_CLEAN] = p
        if eps > 0.0:
            p = (1.0 - eps) * p + eps * noise[k]
        t.ep[e0 + k, PRIOR] = p
    t.used[EDGES] = e0 + n


@njit(cache=True, nogil=True, inline="always")
def select_edge(t, node, cfg, rng):
    """The edge to follow from an expanded ``node`` with at least one edge: UCB1 (unvisited edges
    first, uniformly) or PUCT (AlphaGo or AlphaZero form), by ``cfg[MODE]``."""
    mode, c, fpu = int(cfg[MODE]), cfg[C], cfg[FPU]
    return select_edge_by(
        t, node, rng, mode, c, fpu, cfg[TWO_PLAYER] != 0.0, cfg[BACKUP_MAX] != 0.0
    )


@njit(cache=True, nogil=True, inline="always")
def select_edge_by(t, node, rng, mode, c, fpu, two_player, use_max):
    """:func:`select_edge` with the settings read from ``cfg`` once per search, not per node."""
    ni, nf, ea, ep = t.ni, t.nf, t.ea, t.ep
    lo = t.norm[0]
    span = t.norm[1] - t.norm[0]
    n = ni[node, NEDGES]
    e0 = ni[node, EDGE0]
    nparent = nf[node, VISITS]
    e = e0
    if mode == MODE_UCB:
        unvisited = 0
        for k in range(n):
            if ea[e0 + k, CHILD] < 0:
                unvisited += 1
        if unvisited > 0:
            pick = rng_below(rng, unvisited)
            for k in range(n):
                if ea[e0 + k, CHILD] < 0:
                    if pick == 0:
                        return e0 + k
                    pick -= 1
        logn = math.log(nparent)
        best_u = NEG_INF
        for k in range(n):
            ch = ea[e0 + k, CHILD]
            nv = nf[ch, VISITS]
            if two_player:
                q = nf[ch, TOTAL] / nv
            else:
                x = nf[ch, BEST] if use_max else nf[ch, TOTAL] / nv
                q = (x - lo) / span if span > 0.0 else 0.5
            u = q + c * math.sqrt(logn / nv)
            if u > best_u:
                best_u = u
                e = e0 + k
        return e
    sq = math.sqrt(max(nparent, 1.0))
    best_u = NEG_INF
    for k in range(n):
        ch = ea[e0 + k, CHILD]
        nv = 0.0
        q = fpu
        if ch >= 0:
            nv = nf[ch, VISITS]
            if nv > 0.0:
                if two_player:
                    q = nf[ch, TOTAL] / nv
                else:
                    x = nf[ch, BEST] if use_max else nf[ch, TOTAL] / nv
                    q = (x - lo) / span if span > 0.0 else 0.5
        if mode == MODE_ALPHAGO:
            u = q + c * ep[e0 + k, PRIOR] / (1.0 + nv)
        else:
            u = q + c * ep[e0 + k, PRIOR] * sq / (1.0 + nv)
        if u > best_u:
            best_u = u
            e = e0 + k
    return e


@njit(cache=True, nogil=True, inline="always")
def child_of(t, node, e, mover):
    """The child node along edge ``e`` of ``node``, made (unvisited, moved into by ``mover``) if
    it does not exist yet."""
    child = t.ea[e, CHILD]
    if child < 0:
        child = t.used[NODES]
        t.used[NODES] = child + 1
        t.ni[child, PARENT] = node
        t.ni[child, EDGE0] = -1
        t.ni[child, NEDGES] = -1
        t.ni[child, MOVER] = mover
        t.nf[child, VISITS] = 0.0
        t.nf[child, TOTAL] = 0.0
        t.nf[child, BEST] = NEG_INF
        t.ea[e, CHILD] = child
    return child


@njit(cache=True, nogil=True, inline="always")
def backup(t, node, r, two_player, visits):
    """Backs the result ``r`` up from ``node`` to the root: player 0's return in [-1, 1]
    (two-player; each node gets it from its MOVER's side, in [0, 1]) or a score (one-player,
    also widening ``t.norm``). Adds ``visits`` (0 when the visit was counted on the way down, as
    a virtual loss)."""
    if not two_player:
        if r < t.norm[0]:
            t.norm[0] = r
        if r > t.norm[1]:
            t.norm[1] = r
    root = t.used[ROOT]
    while True:
        t.nf[node, VISITS] += visits
        v = r
        if two_player:
            v = (1.0 + r) * 0.5 if t.ni[node, MOVER] == 0 else (1.0 - r) * 0.5
        t.nf[node, TOTAL] += v
        if v > t.nf[node, BEST]:
            t.nf[node, BEST] = v
        if node == root:
            break
        node = t.ni[node, PARENT]


def _tree_search(g, t, w, policy, rng, sh):
    """Runs iterations from ``g.states[0]`` (the root node ``t.used[ROOT]``) until told to stop.

    Returns GROW when the tree needs more room (the caller grows it and calls again), PAUSE after
    CHUNK iterations (the caller calls again), else DONE.
    """
    states, ws, control = g.states, g.ws, sh.control
    moves, path, fbuf, cfg = w.moves, w.path, w.fbuf, w.cfg
    two_player = cfg[TWO_PLAYER] != 0.0
    mode, c, fpu, use_max = int(cfg[MODE]), cfg[C], cfg[FPU], cfg[BACKUP_MAX] != 0.0
    ucb = mode == MODE_UCB
    max_actions = moves.shape[0]
    root = t.used[ROOT]
    done = 0
    while control[STOP] == 0:
        if done == CHUNK:
            return PAUSE
        done += 1
        if control[ITERATIONS] >= control[ITERATION_LIMIT]:
            control[STOP] = 4
            break
        if t.used[NODES] + 1 > t.ni.shape[0] or t.used[EDGES] + max_actions > t.ea.shape[0]:
            return GROW
        copy_state(states, 1, 0)
        node = root
        depth = 0
        while True:
            if t.ni[node, NEDGES] < 0:
                if t.nf[node, VISITS] == 0.0 and node != root:
                    break  # a new leaf: evaluated by a playout
                n = legal(states, 1, ws, moves)
                if not ucb and n > 0:
                    compute_prior(states, 1, moves, n, fbuf[1])
                eps = cfg[NOISE_EPS] if node == root else 0.0
                expand(t, node, moves, n, fbuf[1], fbuf[0], eps, ucb)
            if t.ni[node, NEDGES] == 0:
                break  # the game is over here
            e = select_edge_by(t, node, rng, mode, c, fpu, two_player, use_max)
            if t.ea[e, CHILD] >= 0:
                node = t.ea[e, CHILD]
            else:  # the mover is asked of the game only for a new node
                node = child_of(t, node, e, player(states, 1) if two_player else 0)
            a = t.ea[e, ACTION]
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
        control[ITERATIONS] += 1
    return DONE


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

    def __init__(self, name: str, game: str, fn: Any) -> None:
        self.name, self.game, self.fn = name, game, fn

    def __call__(self, env: Any) -> np.ndarray:
        base = env.unwrapped
        actions = base.legal_actions()
        out = np.zeros(max(len(actions), 1))
        if len(actions):
            self.fn(np.array(base.state_view), actions, len(actions), out)
        return out[: len(actions)]


def generic_prior(prior: Any) -> Any:
    """The generic-path binding of ``compute_prior`` for a prior callable (or None: uniform)."""

    def compute_prior(states, i, actions, n, out):
        env = states.use(i)
        if prior is None:
            for k in range(n):
                out[k] = 1.0 / n
            return
        if isinstance(prior, KernelPrior):
            prior.fn(np.array(env.state_view), actions, n, out)
            return
        p = np.asarray(prior(env), dtype=np.float64)
        vals = p[actions[:n]] if len(p) == env.action_space.n else p[:n]
        total = float(vals.sum())
        out[:n] = vals / total if total > 0 else 1.0 / n

    return compute_prior


_compiled: dict[tuple[str, str], Any] = {}


def compiled_search(kernel: Any, prior: KernelPrior | None = None) -> Any:
    """The cached compiled tree search of a kernel, with a compiled prior (uniform if None)."""
    name = prior.name if prior is not None else "uniform"
    key = (kernel.name, name)
    fn = _compiled.get(key)
    if fn is None:
        ops = dict(compiled_ops(kernel))
        if prior is not None:
            ops["compute_prior"] = prior_op(kernel, name, prior.fn)
        fn = _compiled[key] = instantiate(_tree_search, f"{kernel.name}_{name}", **ops)
    return fn


def generic_search(prior: Any = None, plain: bool = False) -> Any:
    """The tree search as plain Python over :class:`~mc_envs.agents.ops.EnvStates` (``plain``: its
    compiled helpers too, :func:`~mc_envs.agents.ops.bind_generic`)."""
    return bind_generic(_tree_search, plain=plain, compute_prior=generic_prior(prior))


# -- the tree ---------------------------------------------------------------------------------------


class Tree:
    """The arrays of a search tree (see the module docstring) and its root's state.

    Args:
        max_actions: the size of the action space.
        nodes: the initial node capacity.
    """

    def __init__(self, max_actions: int, nodes: int = 1024) -> None:
        self.max_actions = int(max_actions)
        self.ni = np.zeros((nodes, NI), dtype=np.int64)
        self.nf = np.zeros((nodes, NF))
        edges = max(nodes * 2, 2 * self.max_actions)
        self.ea = np.zeros((edges, 2), dtype=np.int64)
        self.ep = np.zeros((edges, 2))
        self.used = np.zeros(3, dtype=np.int64)
        self.norm = np.array([np.inf, -np.inf])
        self.root_state: Any = None

    def new_root(self, mover: int, root_state: Any) -> None:
        """Empties the tree; the root's MOVER is the player who moved into it."""
        self.used[:] = (1, 0, 0)
        self.ni[0] = (-1, -1, -1, mover)
        self.nf[0] = (0.0, 0.0, NEG_INF)
        self.norm[:] = (np.inf, -np.inf)
        self.root_state = root_state

    @property
    def nbytes(self) -> int:
        """The memory held by the tree's arrays."""
        return self.ni.nbytes + self.nf.nbytes + self.ea.nbytes + self.ep.nbytes

    def grow(self, limit: int | None = None) -> bool:
        """Doubles whichever of the node and edge stores is short of room; returns False, and
        leaves the tree as it is, when the tree would then hold more than ``limit`` bytes."""
        nodes, edges = len(self.ni), len(self.ea)
        if self.used[NODES] + 1 > nodes:
            nodes *= 2
        if self.used[EDGES] + self.max_actions > edges:
            edges = max(2 * edges, int(self.used[EDGES]) + 2 * self.max_actions)
        node_bytes = self.ni.itemsize * NI + self.nf.itemsize * NF
        edge_bytes = self.ea.itemsize * 2 + self.ep.itemsize * 2
        if limit is not None and nodes * node_bytes + edges * edge_bytes > limit:
            return False
        if nodes != len(self.ni):
            self.ni = _resized(self.ni, nodes)
            self.nf = _resized(self.nf, nodes)
        if edges != len(self.ea):
            self.ea = _resized(self.ea, edges)
            self.ep = _resized(self.ep, edges)
        return True

    @property
    def root(self) -> int:
        return int(self.used[ROOT])

    def edges(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """(actions, child nodes or -1) of an expanded node; empty if not expanded."""
        n = int(self.ni[node, NEDGES])
        if n <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        e0 = int(self.ni[node, EDGE0])
        return self.ea[e0 : e0 + n, ACTION].copy(), self.ea[e0 : e0 + n, CHILD].copy()

    def children(self, node: int) -> list[tuple[int, int]]:
        """(action, child) for the children that exist."""
        actions, kids = self.edges(node)
        return [(int(a), int(k)) for a, k in zip(actions, kids) if k >= 0]

    def root_stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(actions, visits, mean values) of the root's edges; visits 0 and value NaN when unvisited."""
        actions, kids = self.edges(self.root)
        visits = np.array([self.nf[k, VISITS] if k >= 0 else 0.0 for k in kids])
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.array(
                [self.nf[k, TOTAL] / self.nf[k, VISITS] if k >= 0 else np.nan for k in kids]
            )
        return actions, visits.astype(np.int64), values

    def best_child(self, node: int) -> tuple[int, int] | None:
        """(action, child) with the most visits (ties: higher mean value, then first), or None."""
        best, key = None, None
        for a, k in self.children(node):
            n = self.nf[k, VISITS]
            if n <= 0:
                continue
            cand = (n, self.nf[k, TOTAL] / n)
            if key is None or cand > key:
                best, key = (a, k), cand
        return best

    def principal_variation(self) -> list[int]:
        """The moves from the root, following the most visited child while it has visits."""
        pv, node = [], self.root
        while True:
            step = self.best_child(node)
            if step is None:
                return pv
            pv.append(step[0])
            node = step[1]


def _resized(a: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n,) + a.shape[1:], dtype=a.dtype)
    out[: len(a)] = a
    return out


def default_cfg() -> np.ndarray:
    """A cfg array with every field zero."""
    return np.zeros(CFG_SIZE)
