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

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from mc_envs import interpret
from mc_envs.agents.mcts.gumbel import GumbelRoot
from mc_envs.agents.mcts.puct_batch_core import (
    BatchKernels,
    Leaves,
    batch_kernels,
    expand_and_backup,
    new_trees,
    root_counts,
)
from mc_envs.agents.mcts.search import KernelPrior
from mc_envs.agents.mcts.selection import Settings
from mc_envs.agents.mcts.tree import EDGE_BYTES, MAX_TREE_BYTES, NODE_BYTES, TreeArrays
from mc_envs.rng import rng_state

if TYPE_CHECKING:
    import gymnasium as gym
    from gymnasium.spaces import Box, Discrete
    from numba.core.registry import CPUDispatcher

    from mc_envs.core import PlanningEnv
    from mc_envs.kernel import Kernel
    from mc_envs.vector import PlanningVectorEnv

NO_ACTION = -1  # the action chosen in a game that is already over
MODULES = ("mc_envs.agents.",)  # whose kernels run as Python while a cold search compiles

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


class BatchConfig(NamedTuple):
    """The settings of a batched search.

    Attributes:
        rule: the selection rule, ``"alphago"`` or ``"alphazero"``
            (:mod:`mc_envs.agents.mcts.selection`).
        c, fpu: the rule's constant and the first-play urgency.
        use_max: puzzles: back up the best value (``backup="max"``) rather than the mean.
        dirichlet_alpha, dirichlet_eps: root noise ``(1 - eps) P + eps Dir(alpha)`` (None: none),
            game ``b``'s drawn ``b``-th from ``numpy.random.default_rng(noise_seed)``.
        value_scale: puzzles with an evaluator: a finished game's score is divided by this
            (default: the env's ``max_score``).
        max_tree_bytes: the cap on the M trees' memory.
        gumbel: Gumbel AlphaZero's root over at most this many actions
            (:mod:`mc_envs.agents.mcts.gumbel`; needs an evaluator, and replaces the root noise):
            the actions are its choices and :attr:`BatchResult.policy` its improved policy.
    """

    rule: str = "alphago"
    c: float = 2.0
    fpu: float = 0.5
    use_max: bool = False
    dirichlet_alpha: float | None = None
    dirichlet_eps: float = 0.25
    noise_seed: Sequence[int] = (0,)
    value_scale: float | None = None
    max_tree_bytes: int = MAX_TREE_BYTES
    gumbel: int | None = None


DEFAULT_CONFIG = BatchConfig()


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


class _Batch(NamedTuple):
    """A batched search's arrays and compiled halves, made once per call."""

    fns: BatchKernels
    trees: TreeArrays
    roots: np.ndarray  # [M, L] the games' states
    leaves: Leaves
    settings: Settings
    scale: float  # puzzles with an evaluator: a finished game's score / scale
    policy: int  # the playout policy's code (no evaluator)
    priors: np.ndarray  # [M, A]
    values: np.ndarray  # [M]
    noise: np.ndarray  # [M, A]
    seq: np.ndarray  # a playout's moves
    buf: np.ndarray  # a leaf's priors


def search_batch(
    vector_env: gym.vector.VectorEnv,
    *,
    simulations: int,
    evaluator: Evaluator | None,
    config: BatchConfig = DEFAULT_CONFIG,
    prior: KernelPrior | None = None,
    policy: str | None = None,
    rng: np.ndarray | None = None,
) -> BatchResult:
    """Searches every sub-env of ``vector_env`` from its current state; leaves them as they were.

    :meth:`agents.PUCT.search_batch` calls this with the agent's settings.

    Args:
        vector_env: a :class:`mc_envs.vector.PlanningVectorEnv` (``gym.make_vec(id, num_envs=M,
            vectorization_mode="vector_entry_point")``), possibly wrapped.
        simulations: the rounds; every tree gets this many evaluations.
        evaluator: ``evaluator(observations[K], masks[K]) -> (priors[K, A], values[K])``, or None
            for ``prior``'s priors (uniform if None) and random playouts with ``policy``.
        config: the selection rule and the other settings (:class:`BatchConfig`).
        prior: the :class:`~mc_envs.agents.mcts.search.KernelPrior` of a search without evaluator.
        policy: the playout policy's name (None: the game's default).
        rng: the playouts' random stream (:func:`mc_envs.rng.rng_state`), advanced in place.

    Raises:
        TypeError: ``vector_env`` is not a compiled vector env.
        ValueError: ``simulations < 1``, a prior of another game, trees over ``max_tree_bytes``,
            or an evaluator's output of the wrong shape or not finite (naming the shape).
    """
    start = time.perf_counter()
    venv = _planning_vector_env(vector_env)
    simulations = int(simulations)
    _check(venv, simulations, evaluator, config, prior)
    job = _prepare(venv, simulations, evaluator, config, prior, policy)
    rng = rng if rng is not None else rng_state(0)
    # no clock: a cold game kernel may compile here, beside the child, its playouts first
    with interpret.sharing(wishes=("playout",) if evaluator is None else ()):
        root, calls = _rounds(job, simulations, evaluator, config, rng)
    visits, q = _root_counts(job)
    improved = None
    if root is not None:
        gumbel_actions, improved = root.result(visits, q)
    if job.settings.two_player:
        q = 2.0 * q - 1.0
    over = ~visits.any(axis=1)
    actions = np.where(over, NO_ACTION, np.argmax(visits, axis=1))
    if root is not None:
        actions = np.where(over, NO_ACTION, gumbel_actions)
    chosen = q[np.arange(len(actions)), np.maximum(actions, 0)]
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


def _planning_vector_env(vector_env: gym.vector.VectorEnv) -> PlanningVectorEnv:
    from mc_envs.vector import PlanningVectorEnv  # here: importing agents imports no vector env

    venv = getattr(vector_env, "unwrapped", vector_env)
    if not isinstance(venv, PlanningVectorEnv):
        raise TypeError(
            "search_batch needs a compiled vector env (gym.make_vec(id, num_envs=M, "
            f"vectorization_mode='vector_entry_point')), got {type(vector_env).__name__}"
        )
    return venv


def _num_actions(venv: PlanningVectorEnv) -> int:
    """The size of a sub-env's action space (a ``Discrete``)."""
    space = cast("Discrete", venv.single_action_space)  # the sub-env's, a Discrete
    return int(space.n)


def _check(
    venv: PlanningVectorEnv,
    simulations: int,
    evaluator: Evaluator | None,
    config: BatchConfig,
    prior: KernelPrior | None,
) -> None:
    """Raises ValueError for settings that cannot make a search."""
    if simulations < 1:
        raise ValueError(f"simulations must be >= 1, got {simulations}")
    gumbel = config.gumbel
    if gumbel is not None and (
        evaluator is None or config.dirichlet_alpha is not None or gumbel < 1
    ):
        raise ValueError(
            f"gumbel={gumbel!r} needs an evaluator, no dirichlet_alpha, and at least 1 action"
        )
    if prior is not None and prior.game != venv.proto.game:
        raise ValueError(f"the prior {prior.name!r} is for {prior.game}, not {venv.proto.game}")
    m, a = venv.num_envs, _num_actions(venv)
    nodes = simulations + 1
    nbytes = m * nodes * (NODE_BYTES + a * EDGE_BYTES)
    if nbytes > config.max_tree_bytes:
        raise ValueError(
            f"{m} trees of {simulations} simulations need {nbytes} bytes, over "
            f"max_tree_bytes={config.max_tree_bytes}: search fewer games or simulations at once"
        )


def _prepare(
    venv: PlanningVectorEnv,
    simulations: int,
    evaluator: Evaluator | None,
    config: BatchConfig,
    prior: KernelPrior | None,
    policy: str | None,
) -> _Batch:
    """The arrays and compiled halves of a search, with every tree a lone root."""
    proto = venv.proto
    kernel = proto.kernel
    two_player = kernel.player is not None
    m, a = venv.num_envs, _num_actions(venv)
    rule = "gumbel" if config.gumbel else config.rule
    fns = batch_kernels(kernel, prior if evaluator is None else None, rule)
    scale = 1.0
    if not two_player and evaluator is not None:
        given = config.value_scale
        if given is None:
            given = getattr(proto, "max_score", None)
        if not given:
            raise ValueError("a batched search of a puzzle with an evaluator needs value_scale=")
        scale = float(given)
    policy_code = 0
    if evaluator is None:
        name = policy if policy is not None else proto.default_policy
        if not isinstance(name, str) or name not in kernel.policies:
            raise ValueError(
                f"{proto.game} has no compiled playout policy {name!r}; it has "
                f"{sorted(kernel.policies)}"
            )
        policy_code = kernel.policies[name]
    _stand_in(venv, fns, evaluator is not None, config, prior, policy)
    roots = np.array(venv.clone_state().data)  # [M, L]
    lv = _leaves(roots, kernel, venv, a)
    eps = float(config.dirichlet_eps) if config.dirichlet_alpha is not None else 0.0
    settings = Settings(config.c, config.fpu, eps, two_player, config.use_max, 0.0, 0.0)
    trees = new_trees(m, simulations + 1, (simulations + 1) * a)
    fns.new_roots(trees, roots, two_player)
    return _Batch(
        fns=fns,
        trees=trees,
        roots=roots,
        leaves=lv,
        settings=settings,
        scale=scale,
        policy=policy_code,
        priors=np.zeros((m, a)),
        values=np.zeros(m),
        noise=np.zeros((m, a)),
        seq=np.zeros(kernel.max_moves + 1, np.int64),
        buf=np.zeros(max(a, lv.moves.shape[1])),
    )


def _stand_in(
    venv: PlanningVectorEnv,
    fns: BatchKernels,
    evaluated: bool,
    config: BatchConfig,
    prior: KernelPrior | None,
    policy: str | None,
) -> None:
    """On a cold cache, the search's kernels run as Python while a child compiles them
    (:func:`mc_envs.interpret.stand_in`): the same code, hence the same result, without the
    seconds of compiling first (13 s for Go). Nothing when they are cached, or where interpreting
    is off (a vector env of :data:`mc_envs.vector.cold.INTERPRET_BELOW` sub-envs or more was
    made in this process: Python could not search a thousand games)."""
    called = [fns.new_roots, fns.simulate, expand_and_backup, root_counts]
    if not evaluated:
        called.append(fns.playout_values)
    # numba dispatchers all (BatchKernels types its fields by their calls)
    entries = cast("list[CPUDispatcher]", called)
    proto = venv.proto
    job = functools.partial(
        _search_once, type(venv), type(proto), venv.env_kwargs, evaluated, config, prior, policy
    )
    interpret.stand_in(job, MODULES, entries)


def _search_once(
    vector_class: type[PlanningVectorEnv],
    env_class: type[PlanningEnv],
    kwargs: dict,
    evaluated: bool,
    config: BatchConfig,
    prior: KernelPrior | None,
    policy: str | None,
) -> None:
    """Two simulations of two games of ``env_class(**kwargs)`` with the search's settings (an
    evaluator's stand-in if it has one): what the compiling child does."""
    venv = vector_class(env_class, 2, threads=1, **kwargs)
    venv.reset(seed=0)
    evaluator = _flat if evaluated else None
    search_batch(
        venv, simulations=2, evaluator=evaluator, config=config, prior=prior, policy=policy
    )
    venv.close()


def _flat(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return masks.astype(np.float64), np.zeros(len(masks))


def _root_counts(job: _Batch) -> tuple[np.ndarray, np.ndarray]:
    """``visits[M, A]`` and ``q[M, A]`` (in [0, 1]) of the roots' actions."""
    visits = np.zeros(job.priors.shape, np.int64)
    q = np.full(job.priors.shape, np.nan)
    root_counts(job.trees, visits, q)
    return visits, q


def _rounds(
    job: _Batch,
    simulations: int,
    evaluator: Evaluator | None,
    config: BatchConfig,
    rng: np.ndarray,
) -> tuple[GumbelRoot | None, int]:
    """Runs the rounds; returns Gumbel's root (None without ``gumbel``) and the evaluator calls."""
    lv, s = job.leaves, job.settings
    calls = 0
    forced = np.full(len(job.roots), -1, np.int64)
    root = None
    for r in range(simulations):
        if root is not None:
            forced[:] = root.forced(r - 1, *_root_counts(job))
        job.fns.simulate(
            job.trees,
            job.roots,
            lv,
            rng,
            s.c,
            s.fpu,
            s.two_player,
            s.use_max,
            job.scale,
            forced,
            evaluator is not None,
        )
        if r == 0 and config.dirichlet_alpha is not None:
            _draw_noise(job.noise, lv.n, float(config.dirichlet_alpha), config.noise_seed)
        if evaluator is None:
            job.fns.playout_values(
                lv, job.priors, job.values, job.policy, rng, job.seq, s.two_player, job.buf
            )
        else:
            calls += _evaluate(evaluator, lv, job.priors, job.values)
        expand_and_backup(
            job.trees, lv, job.priors, job.values, job.noise, s.noise_eps, s.two_player, job.buf
        )
        if r == 0 and config.gumbel:
            v = (job.values + 1.0) / 2.0 if s.two_player else job.values
            gen = np.random.default_rng(list(config.noise_seed))
            masks = lv.masks.copy()
            root = GumbelRoot(job.priors * masks, masks, v, config.gumbel, simulations - 1, gen)
    return root, calls


def _leaves(roots: np.ndarray, kernel: Kernel, venv: PlanningVectorEnv, a: int) -> Leaves:
    m = len(roots)
    space = cast("Box", venv.single_observation_space)  # the sub-env's, a Box
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
