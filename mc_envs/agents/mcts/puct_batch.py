"""Batched PUCT: M games searched at once, one tree each, advanced in lockstep (after mctx).

The games are the M sub-envs of a compiled vector env (:class:`mc_envs.vector.PlanningVectorEnv`).
Each of the ``simulations`` rounds is three calls, none of them Python per game or per depth step:

1. ``simulate`` (compiled, :mod:`mc_envs.agents.mcts.puct_batch_core`): in every tree, a descent from the root
   by the PUCT rule to a leaf, on a copy of that game's state; the leaf's observation and legal-move
   mask are written into ``[M, ...]`` arrays (the game kernel's ``observe`` and ``legal``).
2. One call ``evaluator(observations[K], masks[K]) -> (priors[K, A], values[K])`` for the K <= M
   leaves that need a value (a finished game's value is exact: its returns, not evaluated). Without
   an evaluator, a compiled stand-in gives the kernel prior (or uniform priors) and one random
   playout's result.
3. ``expand_and_backup`` (compiled): every leaf gets its legal moves as edges, with the priors
   (normalised over the legal moves), and its value is backed up to the root.

Each tree holds ``simulations + 1`` nodes, fixed for the search, so all games advance together.
The first round evaluates the roots; a search of S simulations makes S evaluations a game and
leaves S - 1 visits on the root's edges, exactly as :class:`agents.PUCT` with the same evaluator
and ``batch_size=1`` (no virtual loss across descents of one tree: each tree has one leaf a round).

Values, as :mod:`mc_envs.agents.mcts.puct_eval`: the evaluator gives the value for the player to move at the
leaf, in [-1, 1] in two-player games; nodes hold values in [0, 1] from the view of the player who
moved into them (:mod:`mc_envs.agents.mcts.tree`). In puzzles the evaluator's values are normalised scores in
[0, 1] and a finished game's score is divided by ``value_scale`` (the env's ``max_score`` by
default); a search without an evaluator backs up raw playout scores.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mc_envs.agents.mcts.gumbel import GumbelRoot
from mc_envs.agents.mcts.puct_batch_core import (
    Leaves,
    batch_functions,
    expand_and_backup,
    new_trees,
    root_counts,
)
from mc_envs.agents.mcts.tree import MAX_TREE_BYTES, NF, NI, KernelPrior
from mc_envs.rng import rng_state

if TYPE_CHECKING:
    from mc_envs.vector import PlanningVectorEnv

NO_ACTION = -1  # the action chosen in a game that is already over

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class BatchResult:
    """The outcome of a batched search over M games.

    Attributes:
        actions: ``[M]`` int64, each game's most visited root action (the first of equals), or
            :data:`NO_ACTION` (-1) where the game is over.
        visits: ``[M, A]`` int64, the root visit counts by action (the training target of
            AlphaZero's policy, after :attr:`policy`'s normalisation).
        q: ``[M, A]`` float, each root action's mean value for the player to move (two-player
            games: an expected return in [-1, 1]); NaN where unvisited.
        values: ``[M]`` float, ``q`` of the chosen action (NaN where the game is over).
        simulations: the rounds run (evaluations a game).
        evaluator_calls: how many times the evaluator was called (at most ``simulations``).
        seconds: the wall-clock time of the search.
        improved: ``[M, A]`` with ``gumbel``: the improved policy (:mod:`mc_envs.agents.mcts.gumbel`).
    """

    actions: np.ndarray
    visits: np.ndarray
    q: np.ndarray
    values: np.ndarray
    simulations: int
    evaluator_calls: int
    seconds: float
    improved: np.ndarray | None = None

    @property
    def policy(self) -> np.ndarray:
        """``[M, A]``: the visit distribution at each root (zeros where the game is over), or
        with ``gumbel``, Gumbel AlphaZero's improved policy."""
        if self.improved is not None:
            return self.improved
        total = self.visits.sum(axis=1, keepdims=True)
        return self.visits / np.maximum(total, 1)


def search_batch(
    vector_env: Any,
    *,
    simulations: int,
    evaluator: Evaluator | None,
    mode: int,
    c: float,
    fpu: float,
    prior: KernelPrior | None = None,
    policy: str | None = None,
    use_max: bool = False,
    dirichlet_alpha: float | None = None,
    dirichlet_eps: float = 0.25,
    noise_seed: Sequence[int] = (0,),
    rng: np.ndarray | None = None,
    value_scale: float | None = None,
    max_tree_bytes: int = MAX_TREE_BYTES,
    gumbel: int | None = None,
) -> BatchResult:
    """Searches every sub-env of ``vector_env`` from its current state; leaves them as they were.

    :meth:`agents.PUCT.search_batch` calls this with the agent's settings.

    Args:
        vector_env: a :class:`mc_envs.vector.PlanningVectorEnv` (``gym.make_vec(id, num_envs=M,
            vectorization_mode="vector_entry_point")``), possibly wrapped.
        simulations: the rounds; every tree gets this many evaluations.
        evaluator: ``evaluator(observations[K], masks[K]) -> (priors[K, A], values[K])``, or None
            for ``prior``'s priors (uniform if None) and random playouts with ``policy``.
        mode, c, fpu: the selection rule (:data:`mc_envs.agents.mcts.tree.MODE_ALPHAGO` or
            :data:`~mc_envs.agents.mcts.tree.MODE_ALPHAZERO`), its constant and the first-play urgency.
        use_max: puzzles: back up the best value (``backup="max"``) rather than the mean.
        dirichlet_alpha, dirichlet_eps: root noise ``(1 - eps) P + eps Dir(alpha)`` (None: none),
            game ``b``'s drawn ``b``-th from ``numpy.random.default_rng(noise_seed)``.
        rng: the playouts' random stream (:func:`mc_envs.rng.rng_state`), advanced in place.
        value_scale: puzzles with an evaluator: a finished game's score is divided by this
            (default: the env's ``max_score``).
        max_tree_bytes: the cap on the M trees' memory.
        gumbel: Gumbel AlphaZero's root over at most this many actions
            (:mod:`mc_envs.agents.mcts.gumbel`; needs an evaluator, and replaces the root noise): the
            actions are its choices and :attr:`BatchResult.policy` its improved policy.

    Raises:
        TypeError: ``vector_env`` is not a compiled vector env.
        ValueError: ``simulations < 1``, a prior of another game, trees over ``max_tree_bytes``,
            or an evaluator's output of the wrong shape or not finite (naming the shape).
    """
    from mc_envs.vector import PlanningVectorEnv  # here: importing agents imports no vector env

    start = time.perf_counter()
    venv = getattr(vector_env, "unwrapped", vector_env)
    if not isinstance(venv, PlanningVectorEnv):
        raise TypeError(
            "search_batch needs a compiled vector env (gym.make_vec(id, num_envs=M, "
            f"vectorization_mode='vector_entry_point')), got {type(vector_env).__name__}"
        )
    if int(simulations) < 1:
        raise ValueError(f"simulations must be >= 1, got {simulations}")
    if gumbel is not None and (evaluator is None or dirichlet_alpha is not None or gumbel < 1):
        raise ValueError(
            f"gumbel={gumbel!r} needs an evaluator, no dirichlet_alpha, and at least 1 action"
        )
    simulations = int(simulations)
    proto = venv.proto
    kernel = proto.kernel
    if prior is not None and prior.game != proto.game:
        raise ValueError(f"the prior {prior.name!r} is for {prior.game}, not {proto.game}")
    two_player = kernel.player is not None
    m, a = venv.num_envs, int(venv.single_action_space.n)
    fns = batch_functions(kernel, prior if evaluator is None else None)

    nodes, edges = simulations + 1, (simulations + 1) * a
    nbytes = m * (nodes * (NI + NF) * 8 + edges * 4 * 8)
    if nbytes > max_tree_bytes:
        raise ValueError(
            f"{m} trees of {simulations} simulations need {nbytes} bytes, over "
            f"max_tree_bytes={max_tree_bytes}: search fewer games or simulations at once"
        )
    t = new_trees(m, nodes, edges)
    roots = np.array(venv.clone_state().data)  # [M, L]
    lv = _leaves(roots, kernel, venv, a)
    scale = 1.0
    if not two_player and evaluator is not None:
        scale = value_scale if value_scale is not None else getattr(proto, "max_score", None)
        if not scale:
            raise ValueError("a batched search of a puzzle with an evaluator needs value_scale=")
    policy_code = 0
    if evaluator is None:
        name = policy if policy is not None else proto.default_policy
        if not isinstance(name, str) or name not in kernel.policies:
            raise ValueError(
                f"{proto.game} has no compiled playout policy {name!r}; it has "
                f"{sorted(kernel.policies)}"
            )
        policy_code = kernel.policies[name]
    rng = rng if rng is not None else rng_state(0)
    seq = np.zeros(kernel.max_moves + 1, np.int64)
    buf = np.zeros(max(a, lv.moves.shape[1]))
    priors, values = np.zeros((m, a)), np.zeros(m)
    noise = np.zeros((m, a))
    eps = float(dirichlet_eps) if dirichlet_alpha is not None else 0.0

    fns["new_roots"](t, roots, two_player)
    calls = 0
    forced = np.full(m, -1, np.int64)
    visits = np.zeros((m, a), np.int64)
    q = np.full((m, a), np.nan)
    root = None
    for r in range(simulations):
        if root is not None:
            visits[:], q[:] = 0, np.nan
            root_counts(t, visits, q)
            forced[:] = root.forced(r - 1, visits, q)
        fns["simulate"](t, roots, lv, rng, mode, c, fpu, two_player, use_max, scale, forced)
        if r == 0 and dirichlet_alpha is not None:
            _draw_noise(noise, lv.n, float(dirichlet_alpha), noise_seed)
        if evaluator is None:
            fns["playout_values"](lv, priors, values, policy_code, rng, seq, two_player, buf)
        else:
            calls += _evaluate(evaluator, lv, priors, values)
        expand_and_backup(t, lv, priors, values, noise, eps, two_player, buf)
        if r == 0 and gumbel:
            v = (values + 1.0) / 2.0 if two_player else values
            gen = np.random.default_rng(list(noise_seed))
            root = GumbelRoot(priors * lv.masks, lv.masks.copy(), v, gumbel, simulations - 1, gen)

    visits[:], q[:] = 0, np.nan
    root_counts(t, visits, q)
    improved = None
    if root is not None:
        gumbel_actions, improved = root.result(visits, q)
    if two_player:
        q = 2.0 * q - 1.0
    over = ~visits.any(axis=1)
    actions = np.where(over, NO_ACTION, np.argmax(visits, axis=1))
    if root is not None:
        actions = np.where(over, NO_ACTION, gumbel_actions)
    chosen = q[np.arange(m), np.maximum(actions, 0)]
    return BatchResult(
        actions=actions.astype(np.int64),
        visits=visits,
        q=q,
        values=np.where(over, np.nan, chosen),
        simulations=simulations,
        evaluator_calls=calls,
        seconds=time.perf_counter() - start,
        improved=improved,
    )


def _leaves(roots: np.ndarray, kernel: Any, venv: PlanningVectorEnv, a: int) -> Leaves:
    m = len(roots)
    space = venv.single_observation_space
    return Leaves(
        states=roots.copy(),
        ws=np.repeat(kernel.workspace(roots[0])[None, :], m, axis=0),
        moves=np.zeros((m, max(a, kernel.max_actions)), np.int64),
        n=np.zeros(m, np.int64),
        obs=np.zeros((m, *space.shape), space.dtype),
        masks=np.zeros((m, a), np.bool_),
        node=np.zeros(m, np.int64),
        to_move=np.zeros(m, np.int64),
        exact=np.zeros(m),
    )


def _draw_noise(noise: np.ndarray, n: np.ndarray, alpha: float, seed: Sequence[int]) -> None:
    """Root noise of each game over its ``n[b]`` legal moves (in their order), drawn in turn from
    one generator, so that game 0's is the single-game search's for the same seed."""
    gen = np.random.default_rng(list(seed))
    for b, k in enumerate(n):
        if k > 0:
            noise[b, :k] = gen.dirichlet([alpha] * int(k))


def _evaluate(evaluator: Evaluator, lv: Leaves, priors: np.ndarray, values: np.ndarray) -> int:
    """Calls the evaluator once on the leaves that need a value; writes its priors and values
    into the rows of those games. Returns 1, or 0 when every leaf is a finished game."""
    need = lv.n > 0
    if need.all():
        rows, obs, masks = None, lv.obs.copy(), lv.masks.copy()
    elif need.any():
        rows = np.flatnonzero(need)
        obs, masks = lv.obs[rows], lv.masks[rows]
    else:
        return 0
    k, a = masks.shape
    out = evaluator(obs, masks)
    if not isinstance(out, tuple) or len(out) != 2:
        raise ValueError(
            f"the evaluator must return (priors[{k}, {a}], values[{k}]), got {type(out).__name__}"
        )
    p = np.asarray(out[0], dtype=np.float64)
    v = np.asarray(out[1], dtype=np.float64)
    if p.shape != (k, a):
        raise ValueError(f"the evaluator returned priors of shape {p.shape}, expected ({k}, {a})")
    if v.shape != (k,):
        raise ValueError(f"the evaluator returned values of shape {v.shape}, expected ({k},)")
    if not np.isfinite(v).all():
        raise ValueError("the evaluator returned a value that is not finite")
    if rows is None:
        priors[:] = p
        values[:] = v
    else:
        priors[rows] = p
        values[rows] = v
    return 1
