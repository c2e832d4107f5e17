"""PUCT: tree search guided by a move prior, in the AlphaGo and AlphaZero forms.

Selection maximises ``Q + c * P / (1 + n)`` (``form="alphago"``, the formula of the seed article)
or ``Q + c * P * sqrt(N) / (1 + n)`` (``form="alphazero"``), where ``Q`` is the child's mean value
in [0, 1] (``fpu`` for an unvisited child), ``P`` its prior, ``n`` its visits and ``N`` the parent's.
Leaves are evaluated by one random playout, or, with ``evaluator=``, by a learned model called on
batches of leaves (:mod:`mc_envs.agents.mcts.puct_eval`). Everything else (budgets, tree reuse, results) is as
in :class:`agents.UCT`.

Which path runs:

- ``prior=None`` (uniform) or a :class:`~mc_envs.agents.mcts.search.KernelPrior` matching the game (such as
  ``connect_four_prior``, built from the Connect Four kernel's ``priors``): the compiled search, priors computed inside numba at expansion.
- any other callable ``prior(env) -> probabilities`` (indexed by action over the whole action
  space, or aligned with ``env.legal_actions()``): the generic Python search, which calls it once
  per expanded node with the env in that node's state.

Many games at once: :meth:`PUCT.act_batch` and :meth:`PUCT.search_batch` search the M sub-envs of
a compiled vector env in lockstep, one tree each and one evaluator call a round for all M leaves
(:mod:`mc_envs.agents.mcts.puct_batch`).

``dirichlet_alpha`` adds AlphaZero's root noise ``(1 - eps) P + eps Dir(alpha)``, drawn from a numpy
generator seeded by ``(seed, search number)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mc_envs.agents.mcts.puct_batch import BatchConfig, BatchResult, search_batch
from mc_envs.agents.mcts.puct_eval import Evaluator, evaluated_search
from mc_envs.agents.mcts.search import KernelPrior
from mc_envs.agents.mcts.selection import Settings
from mc_envs.agents.mcts.tree import MAX_TREE_BYTES
from mc_envs.agents.mcts.uct import DEFAULT_ITERATIONS, TreeAgent

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.agents.mcts.search import Prior, SearchFn
    from mc_envs.core import PlanningEnv

FORMS = ("alphago", "alphazero")  # the selection rules of mc_envs.agents.mcts.selection


def kernel_prior(game_module: str, game: str, name: str) -> KernelPrior:
    """The compiled prior ``name`` of a built-in game's kernel as a :class:`KernelPrior`
    (``kernel_prior("connect_four", "ConnectFour", "c4heuristic")``)."""
    import importlib

    kernel = importlib.import_module(f"mc_envs.games.{game_module}").KERNEL
    return KernelPrior(name, game, kernel.priors[name])


def __getattr__(name: str) -> KernelPrior:
    # connect_four_prior: the example heuristic prior for Connect Four (centre columns first,
    # immediate wins and blocks strongly preferred), made on first use so that importing agents
    # imports no game.
    if name == "connect_four_prior":
        prior = kernel_prior("connect_four", "ConnectFour", "c4heuristic")
        globals()[name] = prior
        return prior
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_guides(prior: object, form: str, evaluator: object, batch_size: int) -> None:
    """Raises TypeError or ValueError for a PUCT's prior, form, evaluator and batch size that do
    not go together."""
    if evaluator is not None and not callable(evaluator):
        raise TypeError(
            f"evaluator must be a callable (observations, masks) -> (priors, values), got {evaluator!r}"
        )
    if evaluator is not None and prior is not None:
        raise ValueError("give PUCT a prior or an evaluator (which supplies the priors), not both")
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if form not in FORMS:
        raise ValueError(f"form must be one of {sorted(FORMS)}, got {form!r}")
    if prior is not None and not callable(prior):
        raise TypeError(f"prior must be None or a callable env -> probabilities, got {prior!r}")


class PUCT(TreeAgent):
    """Predictor + UCT: tree search with a move prior.

    Args:
        prior: ``None`` (uniform), a :class:`~mc_envs.agents.mcts.search.KernelPrior`, or a callable
            ``prior(env) -> probabilities`` (see the module docstring for which runs compiled).
        form: ``"alphago"`` (``Q + c P / (1 + n)``, the default) or ``"alphazero"``
            (``Q + c P sqrt(N) / (1 + n)``).
        c: the exploration constant (values are in [0, 1]).
        fpu: the value assumed for an unvisited child (first-play urgency), default 0.5.
        dirichlet_alpha: root noise concentration (None: no noise; AlphaZero used 0.3 for chess).
        dirichlet_eps: the weight of the noise.
        evaluator: a learned model ``evaluator(observations, action_masks) -> (priors, values)``
            over a batch of leaves (first axis), as AlphaZero's network: leaves are expanded with
            its priors and its values are backed up instead of playouts
            (:mod:`mc_envs.agents.mcts.puct_eval`). Values are for the player to move: in [-1, 1] in two-player
            games, in [0, 1] (a normalised score) in puzzles.
        batch_size: leaves evaluated per call of ``evaluator`` (with virtual loss).
        value_scale: puzzles with an evaluator: a finished game's score is divided by this
            (default: the env's ``max_score``).
        iterations, time_limit, seed, policy, backup, reuse: as for :class:`agents.UCT`.
        compiled, max_tree_bytes, workers, backend, address: as for :class:`agents.UCT`.
    """

    name = "puct"

    def __init__(
        self,
        *,
        prior: Prior | KernelPrior | None = None,
        form: str = "alphago",
        c: float = 2.0,
        fpu: float = 0.5,
        dirichlet_alpha: float | None = None,
        dirichlet_eps: float = 0.25,
        iterations: int | None = None,
        time_limit: float | None = None,
        seed: int = 0,
        policy: str | Callable | None = None,
        backup: str = "mean",
        reuse: bool = True,
        compiled: bool = True,
        max_tree_bytes: int = MAX_TREE_BYTES,
        workers: int = 1,
        backend: str = "local",
        address: str | None = None,
        evaluator: Evaluator | None = None,
        batch_size: int = 8,
        value_scale: float | None = None,
    ) -> None:
        _check_guides(prior, form, evaluator, batch_size)
        self.evaluator = evaluator
        self.batch_size = int(batch_size)
        self.value_scale = value_scale
        self.prior = prior
        self.form = form
        self.fpu = float(fpu)
        self.dirichlet_alpha = dirichlet_alpha
        self.dirichlet_eps = float(dirichlet_eps)
        self.rule = form
        super().__init__(
            iterations=iterations,
            time_limit=time_limit,
            c=c,
            seed=seed,
            policy=policy,
            backup=backup,
            reuse=reuse,
            compiled=compiled,
            max_tree_bytes=max_tree_bytes,
            workers=workers,
            backend=backend,
            address=address,
        )

    @property
    def params(self) -> dict:
        """The constructor arguments (for records)."""
        prior = (
            None
            if self.prior is None
            else getattr(self.prior, "name", None) or getattr(self.prior, "__name__", "custom")
        )
        return {
            **super().params,
            "prior": prior,
            "form": self.form,
            "fpu": self.fpu,
            "dirichlet_alpha": self.dirichlet_alpha,
            "dirichlet_eps": self.dirichlet_eps,
            **(
                {
                    "evaluator": getattr(self.evaluator, "__name__", type(self.evaluator).__name__),
                    "batch_size": self.batch_size,
                }
                if self.evaluator is not None
                else {}
            ),
        }

    def _compiled_prior(self, base: PlanningEnv) -> tuple[bool, KernelPrior | None]:
        if self.evaluator is not None:
            return False, None
        if self.prior is None:
            return True, None
        if isinstance(self.prior, KernelPrior) and self.prior.game == base.game:
            return True, self.prior
        return False, None

    def _generic_prior(self) -> Prior | None:
        return self.prior

    def _generic_fn(self, plain: bool = False, base: PlanningEnv | None = None) -> SearchFn:
        if self.evaluator is None:
            return super()._generic_fn(plain, base)
        return evaluated_search(self.evaluator, self.batch_size, self.value_scale, self.rule)

    def _settings(self, two_player: bool, noise_eps: float) -> Settings:
        return super()._settings(two_player, noise_eps)._replace(fpu=self.fpu)

    def _noise(self, n: int) -> np.ndarray | None:
        if self.dirichlet_alpha is None or n == 0:
            return None
        gen = np.random.default_rng([self.seed, self._searches])
        return gen.dirichlet([float(self.dirichlet_alpha)] * n)

    # -- many games at once -----------------------------------------------------------------------

    def search_batch(
        self,
        vector_env: gym.vector.VectorEnv,
        *,
        simulations: int | None = None,
        gumbel: int | None = None,
    ) -> BatchResult:
        """Searches the M sub-envs of a compiled vector env at once, one tree each, in lockstep.

        Each round descends every tree to a leaf (compiled), calls ``evaluator`` once on all the
        leaves, and expands and backs up every leaf (compiled) (:mod:`mc_envs.agents.mcts.puct_batch`). With
        ``batch_size=1`` and the same evaluator, game ``b``'s root visits are those of
        :meth:`search` on sub-env ``b`` alone. Without an evaluator, leaves get the
        :class:`~mc_envs.agents.mcts.search.KernelPrior` (or uniform priors) and one playout's value. The trees
        are not kept between calls; the sub-envs are left as they were.

        Args:
            vector_env: ``gym.make_vec(id, num_envs=M, vectorization_mode="vector_entry_point")``
                (a :class:`mc_envs.vector.PlanningVectorEnv`).
            simulations: evaluations a game (default: the agent's ``iterations``, else 1000).
            gumbel: Gumbel AlphaZero's root over at most this many actions
                (:mod:`mc_envs.agents.mcts.gumbel`: sequential halving; the actions are its choices and
                the result's ``policy`` its improved policy). Needs an evaluator and no
                ``dirichlet_alpha``.

        Returns:
            A :class:`~mc_envs.agents.mcts.puct_batch.BatchResult`: ``actions[M]``, root ``visits[M, A]``, ...

        Raises:
            TypeError: not a compiled vector env, or a prior or playout policy that is a Python
                callable (a batched search runs compiled).
            ValueError: a time limit without an iteration budget, or an evaluator's output of the
                wrong shape (naming it).
        """
        if simulations is None:
            if self.iterations is None and self.time_limit is not None:
                raise ValueError("search_batch needs simulations= (it takes no time limit)")
            simulations = self.iterations or DEFAULT_ITERATIONS
        prior = self.prior
        if prior is not None and not isinstance(prior, KernelPrior):
            raise TypeError("search_batch takes no Python prior: a KernelPrior or an evaluator")
        if self.evaluator is None and callable(self.policy):
            raise TypeError("search_batch takes no Python playout policy: a policy name")
        result = search_batch(
            vector_env,
            simulations=simulations,
            evaluator=self.evaluator,
            config=self._batch_config(gumbel),
            prior=prior,
            policy=self.policy if isinstance(self.policy, str) else None,
            rng=self._rng,
        )
        self._searches += 1
        return result

    def _batch_config(self, gumbel: int | None) -> BatchConfig:
        return BatchConfig(
            rule=self.rule,
            c=self.c,
            fpu=self.fpu,
            use_max=self.backup == "max",
            dirichlet_alpha=self.dirichlet_alpha,
            dirichlet_eps=self.dirichlet_eps,
            noise_seed=(self.seed, self._searches),
            value_scale=self.value_scale,
            max_tree_bytes=self.max_tree_bytes,
            gumbel=gumbel,
        )

    def act_batch(self, vector_env: gym.vector.VectorEnv) -> np.ndarray:
        """The move to play in each of the M sub-envs of a compiled vector env: ``[M]`` int64,
        the most visited root action of :meth:`search_batch` (-1 where the game is over, which a
        vector env's autoreset step ignores)."""
        return self.search_batch(vector_env).actions
