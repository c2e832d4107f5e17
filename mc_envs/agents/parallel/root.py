"""Parallel and distributed search: how every agent takes ``workers``, ``backend``, ``address`` and
``parallel``; root parallelism; when a scheme made of rounds gives way to it.

Every agent derives from :class:`ParallelAgent`. With ``workers=1`` and ``parallel="root"`` its
search runs in the caller; otherwise the scheme named by ``parallel`` runs it (the agent's
``schemes`` table): ``"root"`` (:func:`root_search`, every agent), NMCS's ``"moves"``
(:func:`mc_envs.agents.nested.nmcs_parallel.moves_search`) and NRPA's ``"distributed"``
(:func:`mc_envs.agents.nested.nrpa_distributed.distributed_search`). Each scheme submits tasks to a pool and
follows them with :class:`mc_envs.agents.parallel.rounds.Rounds`: live progress for the callback, the time limit
(counted from the call), Ctrl-C, the calling process standing in for workers that are slow to
start or lost, and the playouts of the finished tasks.

Root parallelism: ``N`` independent searches of the same agent from the same state, each with a
seed derived from the agent's seed (:func:`worker_seed`), the best result kept. Playout and
iteration budgets are split between the workers (a budget means the same total work); the time
limit, counted from the call, applies to each (a worker that starts late searches for what is
left). A worker's result depends only on its seed and budget, so every backend
gives the same result for the same seeds.
"""

from __future__ import annotations

import ast
import copy
import multiprocessing as mp
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

from mc_envs.agents.base import (
    NEG_INF,
    Budget,
    Searcher,
    SearchOptions,
    SearchResult,
    StopReason,
)
from mc_envs.agents.parallel.messages import Budgets, Searching, Task
from mc_envs.agents.parallel.pools import BACKENDS, Pool, make_pool
from mc_envs.agents.parallel.rounds import Rounds, why_ended
from mc_envs.core import strict, unwrap
from mc_envs.rng import plain_rng_state

if TYPE_CHECKING:
    import gymnasium as gym
    from typing_extensions import Unpack

    from mc_envs.core import PlanningEnv


def worker_seed(seed: int, index: int) -> int:
    """The seed of worker (or task) ``index`` of an agent seeded with ``seed`` (unrelated streams)."""
    return int(plain_rng_state((int(seed) << 16) ^ (index + 1))[0]) & 0x7FFFFFFFFFFFFFFF


def check_parallel(workers: int, backend: str) -> None:
    """Validates the parallel keywords.

    Raises:
        ValueError: ``workers`` below 1 or an unknown backend.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def check_main_guarded() -> None:
    """Refuses to start worker processes from an unguarded script or from inside a worker's import
    of one (each ``spawn`` worker imports the main script: unguarded, it would search again).

    Raises:
        RuntimeError: naming the fix.
    """
    fix = 'put the script\'s search under `if __name__ == "__main__":`'
    if getattr(mp.current_process(), "_inheriting", False):
        raise RuntimeError(
            f"a worker process is importing the main script, which starts a parallel search: {fix}"
        )
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or getattr(main, "__spec__", None) is not None and path.endswith("__main__.py"):
        return  # interactive, -c, or a package's __main__ (pytest, python -m pkg)
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return
    guarded = any(isinstance(node, ast.Name) and node.id == "__name__" for node in ast.walk(tree))
    if not guarded:
        raise RuntimeError(f"{path} starts a parallel search without a main guard: {fix}")


class ParallelAgent(Searcher):
    """The parallel keywords of every agent and the dispatch of ``search`` to a scheme.

    Subclasses implement :meth:`run_search` (one search in this process) and may list more schemes
    in ``schemes`` (name -> ``fn(agent, env, budget, **options) -> SearchResult``), naming in
    ``checkpointed`` those that take ``checkpoint=``.
    """

    schemes: ClassVar[dict[str, Callable[..., SearchResult]]] = {}
    checkpointed: ClassVar[frozenset[str]] = frozenset({"root"})  # schemes that take checkpoint=
    seed: int

    def init_parallel(
        self,
        workers: int = 1,
        backend: str = "local",
        address: str | None = None,
        parallel: str = "root",
    ) -> None:
        """Sets and validates ``workers``, ``backend``, ``address`` and ``parallel``."""
        check_parallel(workers, backend)
        if parallel not in self.schemes:
            raise ValueError(f"parallel must be one of {tuple(self.schemes)}, got {parallel!r}")
        self.workers, self.backend, self.address, self.parallel = (
            int(workers),
            backend,
            address,
            parallel,
        )

    def dispatch(
        self, env: gym.Env, budget: Budget, **options: Unpack[SearchOptions]
    ) -> SearchResult:
        """Runs the search here (one worker, root scheme) or by the agent's scheme."""
        if self.workers == 1 and self.parallel == "root":
            with strict(env):  # a planner's wrong move is an error, never an ended episode
                return self.run_search(env, budget, **options)
        if options.get("checkpoint") is not None and self.parallel not in self.checkpointed:
            raise ValueError(
                f"parallel={self.parallel!r} keeps no checkpoint: use one of "
                f"{sorted(self.checkpointed)} (one checkpoint file per search) or workers=1"
            )
        if options.get("checkpoint") is None:
            options = options.copy()
            options.pop("checkpoint", None)
            options.pop("resume", None)
        return self.schemes[self.parallel](self, env, budget, **options)

    def act(self, env: gym.Env) -> int:
        """The first move of a complete search from the env's state."""
        result = self.search(env)
        if not result.actions:
            raise ValueError("no legal move: the game is over")
        return result.actions[0]


class Parallel(Searching, Protocol):
    """What the parallel schemes read of an agent: its parallel keywords, its seed and its
    search (a :class:`ParallelAgent` is one; a scheme's own protocol adds what it reads more)."""

    workers: int
    backend: str
    address: str | None
    parallel: str
    seed: int


A = TypeVar("A", bound=Parallel)


def solo(agent: A, **changes: object) -> A:
    """A copy of ``agent`` searching alone (one worker, root scheme) with ``changes`` applied."""
    clone = copy.copy(agent)
    clone.workers, clone.parallel = 1, "root"
    for key, value in changes.items():
        setattr(clone, key, value)
    return clone


def worker_agents(agent: ParallelAgent) -> list[ParallelAgent]:
    """Copies of ``agent`` searching alone with the derived seeds; an agent whose ``policy`` is a
    tuple (a portfolio) gives worker ``i`` the policy ``i`` modulo its length."""
    portfolio = getattr(agent, "policy", None)
    clones = []
    for i in range(agent.workers):
        own = {"policy": portfolio[i % len(portfolio)]} if isinstance(portfolio, tuple) else {}
        clones.append(solo(agent, seed=worker_seed(agent.seed, i), **own))
    return clones


def open_pool(agent: Parallel, env: gym.Env) -> Pool:
    """The agent's pool over ``env``. Nothing is awaited: workers load or compile their code on
    their first task while the calling process stands in for them (:mod:`mc_envs.agents.parallel.rounds`);
    ``mc-envs warmup --address`` compiles every node of a cluster ahead."""
    if agent.workers > 1 and agent.backend == "local":
        check_main_guarded()
    return make_pool(agent.workers, agent.backend, env, agent.address)


FALLBACK = 0.75  # rounds that keep less than this share of the workers busy give way to root


def root_instead(agent: Parallel, rounds: Rounds) -> str:
    """Why a scheme made of rounds (``moves``, ``distributed``) should give way to root
    parallelism for the rest of its time; ``""`` to go on.

    Root parallelism keeps every worker busy; a round keeps them busy for its tasks and idle for
    its cost (dispatch, results, the slowest task). Its tasks' search seconds also grow when the
    workers share the cores (so, measured alone, they would overrate the rounds): the scheme gives
    way when its rounds keep less than ``FALLBACK`` of the workers busy (NRPA level 2 on
    SameGame, 2 workers: 0.45-0.65; level 3: over 0.9).
    """
    busy = rounds.busy()
    if busy is None or busy >= FALLBACK * agent.workers:
        return ""
    return (
        f"parallel={agent.parallel!r} kept {busy:.2f} of {agent.workers} workers busy over "
        f"{rounds.batches} rounds (its tasks are too small for what a round costs): root "
        f"parallelism for the remaining {rounds.remaining() or 0.0:.1f} s"
    )


def run_root(
    agent: Parallel, rounds: Rounds, best_score: float, best_actions: list
) -> tuple[int, float, list]:
    """Root parallelism on an open pool for the time left (a scheme's fallback):
    ``agent.workers`` searches of the whole agent, seeded after the tasks already run.

    Returns:
        Their runs (iterations), and the better of ``best_score``/``best_actions`` and theirs.
    """
    batch = [
        Task(solo(agent, seed=worker_seed(agent.seed, rounds.tasks + i)), {})
        for i in range(agent.workers)
    ]
    runs = 0
    for r in rounds.run(batch):
        runs += r.iterations
        if r.score > best_score:
            best_score, best_actions = r.score, list(r.actions)
    return runs, best_score, best_actions


def root_search(
    agent: ParallelAgent, env: gym.Env, budget: Budget, **saving: Unpack[SearchOptions]
) -> SearchResult:
    """Root-parallel search: ``agent.workers`` independent seeded searches, the best kept.

    Args:
        agent: a :class:`ParallelAgent`.
        env: the env to search from (its state is sent to the workers; it is left unchanged).
        budget: its time counts from the call (workers that start late search for what is
            left); playouts and iterations are totals, split evenly between the workers; the
            callback receives :class:`~mc_envs.agents.base.Progress` about the best of all workers.
        saving: ``checkpoint=PATH`` (worker ``i`` saves its search to ``PATH.w<i>``),
            ``resume`` and ``checkpoint_every``, passed on to every worker's search; with
            ``resume``, a worker whose file is missing (the search ended before it started)
            starts afresh.

    Returns:
        The best worker's score and actions (ties: the lowest worker index); playouts and
        iterations summed over workers; ``extra["workers"]`` holds each worker's result and
        ``extra["participation"]`` who ran them (see :meth:`mc_envs.agents.parallel.rounds.Rounds.participation`).
    """
    start = time.perf_counter()
    base = unwrap(env)
    batch = _worker_batch(agent, budget, saving)
    pool = open_pool(agent, base)
    rounds = Rounds(pool, budget.time, budget.callback, start=start, env=base)
    try:
        ordered = rounds.run(batch)
    finally:
        rounds.close()
        pool.close()
    for i, result in enumerate(ordered):
        budgets = batch[i].budgets
        path = budgets.get("checkpoint")
        if result.score == NEG_INF and budgets.get("resume") and path is not None:
            ordered[i] = result._replace(**_saved_best(path, base))
    score, actions = rounds.shown_score, rounds.shown_actions
    if ordered:
        top = max(ordered, key=lambda r: r.score)
        if top.score >= score:
            score, actions = top.score, top.actions
    reasons = [r.stopped for r in ordered]
    stopped = why_ended(rounds, reasons, reasons[0] if reasons else StopReason.INTERRUPT)
    return SearchResult(
        score=float(score) if score > NEG_INF else float("-inf"),
        actions=list(actions),
        playouts=rounds.playouts(budget.playouts is not None),
        seconds=time.perf_counter() - rounds.start,
        iterations=sum(r.iterations for r in ordered),
        stopped=stopped,
        extra={
            "workers": [r.row() for r in ordered],
            "backend": agent.backend,
            "participation": rounds.participation(),
        },
    )


def _worker_batch(agent: ParallelAgent, budget: Budget, saving: SearchOptions) -> list[Task]:
    """Each worker's agent and its share of the budget (and its own checkpoint file)."""
    batch = []
    n = int(agent.workers)
    for i, clone in enumerate(worker_agents(agent)):
        share: Budgets = {**budget.counts(n, i)}
        checkpoint = saving.get("checkpoint")
        if checkpoint is not None:
            path = f"{checkpoint}.w{i}"
            resume = bool(saving.get("resume")) and Path(path).exists()
            share.update(saving)
            share["checkpoint"], share["resume"] = path, resume
        batch.append(Task(clone, share))
    return batch


def _saved_best(path: str, base: PlanningEnv) -> dict:
    """The best game a resumed worker's file holds, for a worker that never handed it back (it
    started too late for the time left): its score and actions if they replay legally from
    ``base``'s state to that score, and the playouts it counts; nothing otherwise."""
    from mc_envs.agents.checkpoint import Checker, read_checkpoint
    from mc_envs.agents.ops import move_bound

    try:
        data = read_checkpoint(path)
        check = Checker(path, base, move_bound(base))
        best, control = check.mapping(data, "best"), check.mapping(data, "control")
        actions = check.actions(best.get("actions"), "best.actions")
        score = check.score_after(actions, "best.actions")
        playouts = check.count(control.get("playouts"), "control.playouts")
    except ValueError:
        return {}
    return {"score": score, "actions": actions, "playouts": playouts, "stopped": StopReason.TIME}
