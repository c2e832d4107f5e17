"""Nested Rollout Policy Adaptation (Rosin, IJCAI 2011), with restarts and checkpoints.

A policy is a table of weights over *move codes* (a game's ``code(state, action)``, the action by
default; SameGame hashes the removed cells and their colour). A level-0 search is one rollout that
samples every move with probability proportional to ``exp(weight[code])``. A level-l search runs
``N`` iterations; each starts a level-(l-1) search from a copy of the level's policy, keeps the best
sequence seen (``>=``, as in the paper), and adapts the policy towards it: along the sequence, the
weight of the played move gains ``alpha`` and every legal move's weight loses ``alpha`` times its
probability under the policy before the adaptation.

Selective policies (Cazenave 2016) are the game's (:attr:`mc_envs.core.Kernel.select`): SameGame's
``policy="tabu"`` (its default) makes the colour with most cells in the searched position tabu; its
groups are played, and adapted over, only when no other group is left.

The templates, arrays and compiled entry points are in :mod:`mc_envs.agents.nested.nrpa_core`; this module is the
agent and its program for the :class:`~mc_envs.agents.runner.Runner` (budgets, checkpoints, results).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from mc_envs.agents.base import SearchResult
from mc_envs.agents.common import record
from mc_envs.agents.compile_ahead import compiled_steps
from mc_envs.agents.nested.nrpa_core import (
    DELTA_CAPACITY,
    GENERIC,
    LOG_CAPACITY,
    PLAIN,
    PRIME,
    QUICK,
    STEPS,
    Knobs,
    compiled_entry,
)
from mc_envs.agents.nested.nrpa_distributed import distributed_search
from mc_envs.agents.nested.nrpa_options import Variants
from mc_envs.agents.nested.nrpa_state import SearchState
from mc_envs.agents.parallel.race import race_search
from mc_envs.agents.parallel.root import root_search
from mc_envs.agents.runner import NestedAgent, Runner
from mc_envs.core import IllegalActionError, strict, unwrap

if TYPE_CHECKING:
    import gymnasium as gym
    from numba.core.registry import CPUDispatcher

    from mc_envs.agents.checkpoint import Checker
    from mc_envs.agents.nested.nrpa_distributed import Distributing
    from mc_envs.agents.parallel.race import Racing
    from mc_envs.core import PlanningEnv

__all__ = ["LOG_CAPACITY", "NRPA", "PRIME"]


class NRPA(NestedAgent):
    """Nested Rollout Policy Adaptation.

    Args:
        level: nesting level, 1 or more (Rosin's best results use 3 to 5).
        iterations: N, the iterations of every level (100 in the paper).
        alpha: the adaptation step (1.0 in the paper).
        seed: seeds the search's random stream; a fixed seed and playout budget give a fixed result.
        policy: ``"random"`` (plain NRPA: every legal move may be sampled), a game's selective
            policy (SameGame's ``"tabu"``), or ``None`` for the game's default (its default
            playout policy when that is a selective one, else ``"random"``). A tuple of names is
            a portfolio for root parallelism: worker ``i`` searches with name ``i % len(policy)``.
        compiled: use the game's compiled search when it has one (True, the default), or force the
            generic Python path (False: slower, same result).
        workers: processes (or Ray tasks) searching in parallel.
        backend: ``"local"`` (processes, the default) or ``"ray"``.
        address: the Ray cluster to join (``backend="ray"``); ``None`` starts or joins a local one.
        parallel: how ``workers > 1`` share the search: ``"root"`` (the default: independent
            searches from derived seeds, the best kept, :func:`mc_envs.agents.parallel.root.root_search`) or
            ``"distributed"`` (Negrevergne & Cazenave 2017: the top level's policy stays with the
            caller, and its iterations run as level-(L-1) searches on the workers, ``workers``
            at a time; see :func:`mc_envs.agents.nested.nrpa_distributed.distributed_search`) or ``"race"``
            (every policy of the portfolio, or of the game's ``nrpa_race``, probes; the best
            ``workers`` continue: :mod:`mc_envs.agents.parallel.race`).
        heats: a race's independent heats: the budget is split into this many races with fresh
            seeds, the best game kept (1, the default: one race; more needs ``parallel="race"``).
        tau, bias, stabilize, repeats, codes, warm_start: the variants of
            :mod:`mc_envs.agents.nested.nrpa_options` (GNRPA's temperature and bias weight, Stabilized NRPA's
            rollouts per level-1 iteration, limited repetitions, the policy's key, a starting
            sequence); their defaults are plain NRPA.
    """

    name = "nrpa"
    schemes = {"root": root_search, "distributed": distributed_search, "race": race_search}
    checkpointed = frozenset({"root", "race"})

    def __init__(
        self,
        level: int = 1,
        *,
        iterations: int = 100,
        alpha: float = 1.0,
        seed: int = 0,
        policy: str | tuple[str, ...] | None = None,
        compiled: bool = True,
        workers: int = 1,
        backend: str = "local",
        address: str | None = None,
        parallel: str = "root",
        tau: float = 1.0,
        bias: float = 0.0,
        stabilize: int = 1,
        repeats: int = 0,
        codes: str = "game",
        warm_start: list[int] | tuple[int, ...] | None = None,
        heats: int = 1,
    ) -> None:
        self.variants = Variants(tau, bias, stabilize, repeats, codes, warm_start)
        if level < 1:
            raise ValueError(f"level must be >= 1, got {level}")
        if iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {iterations}")
        names = tuple(policy) if isinstance(policy, (tuple, list)) else (policy,)
        if not names or any(name is not None and not isinstance(name, str) for name in names):
            raise ValueError(
                f"NRPA policy must be None, a name or a tuple of names, got {policy!r}"
            )
        portfolio = len(names) > 1
        if portfolio and (parallel == "distributed" or parallel == "root" and workers < len(names)):
            raise ValueError(
                f"a policy portfolio {names} needs parallel='race', or 'root' and at least "
                f"{len(names)} workers"
            )
        if parallel == "race" and len(names) == 1 and names[0] is not None:
            raise ValueError(f"a race needs several policies (or None: the game's), got {policy!r}")
        if isinstance(heats, bool) or not isinstance(heats, int) or heats < 1:
            raise ValueError(f"NRPA heats must be an int >= 1, got {heats!r}")
        if heats > 1 and parallel != "race":
            raise ValueError(f"heats={heats} are a race's: they need parallel='race'")
        if parallel == "distributed" and level < 2:
            raise ValueError("distributed NRPA spreads level-(L-1) searches: it needs level >= 2")
        self.level = int(level)
        self.iterations = int(iterations)
        self.alpha = float(alpha)
        self.seed = int(seed)
        self.policy = names if len(names) > 1 else names[0]
        self.compiled = bool(compiled)
        self.heats = heats
        self.init_parallel(workers, backend, address, parallel)

    @property
    def params(self) -> dict:
        """The constructor arguments (for records)."""
        return {
            "level": self.level,
            "iterations": self.iterations,
            "alpha": self.alpha,
            "seed": self.seed,
            "policy": self.policy,
            "workers": self.workers,
            **({"parallel": self.parallel} if self.parallel != "root" else {}),
            **({"heats": self.heats} if self.heats != 1 else {}),
            **self.variants.params(),
        }

    def selection_key(self, base: PlanningEnv) -> int:
        """The key of this search's selective policy in the env's state (``-1``: none)."""
        name = cast("str | None", self.policy)  # a portfolio is split before a search (__init__)
        kernel = getattr(base, "kernel", None)
        selections = getattr(kernel, "selections", {}) if kernel is not None else {}
        if name is None:
            default = getattr(base, "default_policy", "random")
            name = default if default in selections else "random"
        if name == "random":
            return -1
        if not hasattr(base, "selection_key"):
            raise ValueError(f"NRPA policy {name!r}: {type(base).__name__} has only 'random'")
        return int(base.selection_key(name))

    def program(self, env: gym.Env, runner: Runner) -> _Program:
        """This agent's search of ``env`` as a program for ``runner``."""
        return _Program(self, env, runner)


class _Program:
    """One NRPA search over one env: its arrays and entry point, for :class:`Runner` (and the
    master of distributed NRPA, which adapts the top level's policy with :meth:`adapt`)."""

    algo = "nrpa"
    steps = STEPS
    fn: Callable[..., None]  # compiled entry points or their generic twins
    adapt_fn: Callable[..., None]

    def __init__(self, agent: NRPA, env: gym.Env, runner: Runner) -> None:
        self.agent, self.runner = agent, runner
        self.ahead = agent
        base = self.base = unwrap(env)
        kernel = getattr(base, "kernel", None)
        self.fast = agent.compiled and kernel is not None
        key = agent.selection_key(base)
        self.params = {**agent.params, "tabu": key}
        max_moves, max_actions = runner.max_moves, int(base.action_space.n)
        self.bind(self.fast)
        delta = max(min(max_moves * max_actions, DELTA_CAPACITY), 1)
        log = min(max_moves * max_actions, LOG_CAPACITY)
        v = agent.variants
        self.s = SearchState(
            agent.level, max_moves, max_actions, agent.seed, delta, log, biased=v.bias != 0.0
        )
        self.k = Knobs(
            n_iter=agent.iterations,
            alpha=agent.alpha,
            key=key,
            tau=float(v.tau),
            beta=float(v.bias),
            stabilize=v.stabilize,
            repeats=v.repeats,
            plain=int(v.codes == "action"),
        )
        if v.warm_start is not None:
            self._warm(base, v.warm_start)

    def entries(self) -> list[CPUDispatcher]:
        """The compiled entry points (for :mod:`mc_envs.agents.compile_ahead`)."""
        return list(compiled_entry(self.base.kernel))

    def bind(self, fast: bool, plain: bool = False) -> None:
        """Runs on the compiled path (``fast``) or the generic one (``plain``: its helpers
        uncompiled too, but for its per-step ones where :func:`~mc_envs.agents.compile_ahead.compiled_steps`
        allows) from the next call on; the search state carries over, and a level rebuilds its
        state from its moves."""
        self.g = self.runner.game(2, fast)
        if fast:
            self.fn, self.adapt_fn = compiled_entry(self.base.kernel)
        elif plain:
            quick = compiled_steps(self.steps, self.runner.standin)
            self.fn, self.adapt_fn = QUICK if quick else PLAIN
        else:
            self.fn, self.adapt_fn = GENERIC
        self.fast = fast

    def _warm(self, base: PlanningEnv, seq: Sequence[int]) -> None:
        """Starts the first run from ``seq``: the top level's best, its policy adapted once."""
        snapshot = base.clone_state()
        try:
            with strict(base):
                for t, action in enumerate(seq):
                    if base.legal_actions().size == 0:
                        raise ValueError(f"NRPA warm_start: the game is over before move {t}")
                    base.step(int(action))
                score = float(base.score)
        except IllegalActionError as error:
            raise ValueError(f"NRPA warm_start: move {t} ({action}) is illegal: {error}") from None
        finally:
            base.restore_state(snapshot)
        a, level, n = self.s.a, self.agent.level, len(seq)
        a.seqs[level, :n] = seq
        a.lens[level] = n
        a.scores[level] = score
        a.active[level + 1] = 1
        self.adapt(level)
        record(a.seqs[level], n, score, self.runner.shared)

    def call(self, control: np.ndarray, restarts: bool) -> None:
        s, sh = self.s, self.runner.shared._replace(control=control)
        self.fn(self.agent.level, restarts, self.g, s.a, s.pol, s.log, self.k, s.rng, sh)

    def result(self, why: str, seconds: float) -> SearchResult:
        """The search's result, with each level's iterations in ``extra["level_iterations"]``."""
        return self.runner.result(why, seconds, extra={"level_iterations": self.s.a.iters.tolist()})

    def adapt(self, row: int) -> None:
        """Adapts policy row ``row`` towards the row's best sequence."""
        s = self.s
        self.adapt_fn(row, self.g, s.a, s.pol, s.log, self.k)

    def dump(self) -> dict[str, object]:
        return self.s.dump()

    def load(self, data: dict[str, object], check: Checker) -> None:
        self.s.load(data, check, self.agent.iterations)


if TYPE_CHECKING:  # NRPA is what its schemes read of it (mypy checks the assignments)
    _distributing: type[Distributing] = NRPA
    _racing: type[Racing] = NRPA
