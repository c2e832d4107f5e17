"""UCT: Monte Carlo Tree Search with UCB1 selection (Kocsis and Szepesvari 2006).

The four phases (selection by UCB1, expansion of one new node, a random playout, backup of the
result) run in :func:`mc_envs.agents.mcts.search._tree_search`, written once and either compiled per built-in game
(the fast path: the whole search inside numba) or run as plain Python over any env of the contract.

Two-player games: each node's value is from the point of view of the player who moved into it (win 1,
draw 0.5, loss 0), the move played is the most visited, and :class:`~mc_envs.agents.base.SearchResult`
gives the principal variation by visits in ``actions`` and ``score`` = the expected return in
[-1, 1] of that move for the player to move.

One-player puzzles (a kernel without ``player``, or an env without ``returns()``): values are playout
scores normalised by the smallest and largest seen, averaged (``backup="mean"``) or maximised
(``backup="max"``, as in single-player MCTS); ``score``/``actions`` are the best complete sequence
found, and :meth:`UCT.act` plays its first move.

Tree reuse: after ``act``, when the env has advanced by one or two moves along the tree (found by
comparing states), the search continues from that subtree.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from mc_envs.agents.base import NEG_INF, Budget, SearchResult, Slot, StopCode
from mc_envs.agents.mcts.presets import PRESETS, preset_iterations
from mc_envs.agents.mcts.rave import kernel_knowledge, knowledge_of, tree_options
from mc_envs.agents.mcts.search import (
    CHUNK_DONE,
    OUT_OF_ROOM,
    Scratch,
    compiled_search,
    generic_search,
)
from mc_envs.agents.mcts.selection import Settings
from mc_envs.agents.mcts.tree import MAX_TREE_BYTES, NARROW, WIDE, Tree, mix_noise
from mc_envs.agents.ops import generic_policy, move_bound
from mc_envs.agents.parallel.root import ParallelAgent, root_search, solo
from mc_envs.agents.runner import Runner, Runs, run
from mc_envs.core import unwrap
from mc_envs.rng import rng_state

if TYPE_CHECKING:
    import gymnasium as gym
    from numba.core.registry import CPUDispatcher

    from mc_envs.agents.checkpoint import Checker
    from mc_envs.agents.mcts.search import KernelPrior, Prior, SearchFn
    from mc_envs.core import PlanningEnv, PolicyFactory
    from mc_envs.state import State

DEFAULT_ITERATIONS = 1000
MAX_REUSED_NODES = 4_000_000


class TreeAgent(ParallelAgent):
    """What UCT and PUCT share: budgets, the tree and its reuse, the two search paths, results.

    Its constructor takes :class:`UCT`'s arguments, with UCT's defaults.
    """

    name = "tree"
    rule = "ucb1"  # the selection rule (mc_envs.agents.mcts.selection.RULES)
    schemes = {"root": root_search}

    def __init__(
        self,
        *,
        iterations: int | None = None,
        time_limit: float | None = None,
        c: float = math.sqrt(2.0),
        seed: int = 0,
        policy: str | Callable | None = None,
        backup: str = "mean",
        reuse: bool = True,
        compiled: bool = True,
        max_tree_bytes: int = MAX_TREE_BYTES,
        workers: int = 1,
        backend: str = "local",
        address: str | None = None,
        rave: float | None = None,
        rave_bias: float | None = None,
        knowledge: str | Callable | None = None,
        fpu: float = 1.0,
    ) -> None:
        self.options = tree_options(rave, rave_bias, knowledge, fpu)
        if self.options.wide:
            self.rule = "rave"
        if backup not in ("mean", "max"):
            raise ValueError(f"backup must be 'mean' or 'max', got {backup!r}")
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {iterations}")
        self.iterations = None if iterations is None else int(iterations)
        self.time_limit = time_limit
        self.c = float(c)
        self.seed = int(seed)
        self.policy = policy
        self.backup = backup
        self.reuse = bool(reuse)
        self.compiled = bool(compiled)
        self.max_tree_bytes = int(max_tree_bytes)
        self.init_parallel(workers, backend, address)
        self.reset()

    @classmethod
    def from_preset(cls, preset: str, **kwargs: Any) -> TreeAgent:  # the constructor's keywords
        """An agent with the iteration budget of a named difficulty (see :data:`mc_envs.agents.mcts.presets.PRESETS`)."""
        return cls(iterations=preset_iterations(preset), **kwargs)

    @staticmethod
    def presets() -> dict[str, int]:
        """The named difficulties and their iteration budgets."""
        return dict(PRESETS)

    def reset(self) -> None:
        """Forgets the tree and restarts the random stream from the seed."""
        self._tree: Tree | None = None
        self._tree_key: tuple[object, ...] | None = None
        self._rng = rng_state(self.seed)
        self._searches = 0

    def drop_tree(self) -> None:
        """Forgets the tree (the next search starts a new one); the random stream goes on."""
        self._tree = None

    @property
    def params(self) -> dict:
        """The constructor arguments (for records)."""
        policy = (
            self.policy if not callable(self.policy) else getattr(self.policy, "__name__", "custom")
        )
        return {
            "iterations": self.iterations,
            "time_limit": self.time_limit,
            "c": self.c,
            "seed": self.seed,
            "policy": policy,
            "backup": self.backup,
            "reuse": self.reuse,
            **(self._options_params() if self.options.wide else {}),
        }

    def _options_params(self) -> dict:
        o = self.options
        knowledge = o.knowledge
        if callable(knowledge):
            knowledge = getattr(knowledge, "__name__", "custom")
        return {"rave": o.rave, "rave_bias": o.rave_bias, "knowledge": knowledge, "fpu": o.fpu}

    # -- hooks for PUCT -------------------------------------------------------------------------

    def _compiled_prior(self, base: PlanningEnv) -> tuple[bool, KernelPrior | None]:
        """(the compiled path can serve this env's prior, the compiled prior or None)."""
        return True, None

    def _generic_prior(self) -> Prior | None:
        return None

    def _generic_fn(self, plain: bool = False, base: PlanningEnv | None = None) -> SearchFn:
        """The search run on the generic path (the template over the contract; ``plain``: its
        compiled helpers too) over the env ``base`` (the one being searched)."""
        o = self.options
        knowledge = o.knowledge
        if isinstance(knowledge, str):
            kernel = getattr(base, "kernel", None)
            game = getattr(base, "game", type(base).__name__)
            fn = knowledge_of(kernel, knowledge, game)
            assert kernel is not None  # knowledge_of found the knowledge in it
            knowledge = kernel_knowledge(kernel, fn)
        return generic_search(self._generic_prior(), plain, self.rule, o.amaf, knowledge)

    def _settings(self, two_player: bool, noise_eps: float) -> Settings:
        o = self.options
        b = o.rave_bias
        return Settings(
            c=self.c,
            fpu=o.fpu,
            noise_eps=noise_eps,
            two_player=two_player,
            use_max=self.backup == "max",
            rave_k=o.rave or 0.0,
            rave_b2=0.0 if b is None else b * b,
        )

    def _noise(self, n: int) -> np.ndarray | None:
        return None

    # -- searching ------------------------------------------------------------------------------

    def run_search(self, env: gym.Env, budget: Budget) -> SearchResult:
        """Searches from the env's current state (continuing the tree when it can) and leaves the env as it was.

        :meth:`search` is the public entry point (with ``workers > 1`` it runs root parallelism).

        Budgets: ``iterations``, ``playouts`` (one per iteration) and ``time_limit`` seconds; with none
        given, the agent's own (``iterations`` / ``time_limit`` of the constructor, else 1000
        iterations). ``callback`` gets progress reports for one-player puzzles.

        Raises:
            ValueError: the game is over (no legal move).
        """
        base = unwrap(env)
        if len(base.legal_actions()) == 0:
            raise ValueError("no legal move: the game is over")
        path = self._path(base)
        tree = self._root_tree(base, path)
        if not path.fast:  # matching the tree moved the env
            base.restore_state(cast("State", path.root))  # the generic path's root: a snapshot

        def program(env: gym.Env, runner: Runner) -> _Program:
            if path.two_player:
                # The runner applies time limits once a result exists; a two-player search always
                # has one (the move with most visits), so mark it as present from the start.
                runner.best.score[0] = 0.0
            return _Program(self, runner, path, tree, self._scratch(base, tree, path.two_player))

        runs = Runs(max_score=getattr(base, "max_score", None))
        ran = run(program, env, self._own_budget(budget), runs=runs)
        self._searches += 1
        if not self.reuse:
            self._tree = None
        return self._result(base, ran.runner, tree, path.two_player, ran.why, ran.seconds)

    def _own_budget(self, budget: Budget) -> Budget:
        """The call's budget, or with none the agent's own (else ``DEFAULT_ITERATIONS``)."""
        if budget.bounded:
            return budget
        iterations, seconds = self.iterations, self.time_limit
        if iterations is None and seconds is None:
            iterations = DEFAULT_ITERATIONS
        return replace(budget, time=seconds, iterations=iterations)

    def _path(self, base: PlanningEnv) -> _Path:
        """The compiled path when the env's kernel and this agent's prior and policy allow it,
        else the generic one."""
        kernel = getattr(base, "kernel", None)
        two_player = (
            kernel.player is not None
            if kernel is not None
            else callable(getattr(base, "returns", None))
        )
        prior_ok, kprior = self._compiled_prior(base)
        knowledge = self.options.knowledge
        if isinstance(knowledge, str):
            knowledge_of(kernel, knowledge, getattr(base, "game", type(base).__name__))
        elif knowledge is not None:
            prior_ok = False  # a Python function of the env
        if not (self.compiled and kernel is not None and prior_ok and not callable(self.policy)):
            policy = generic_policy(base, self.policy)
            fn = self._generic_fn(base=base)
            return _Path(False, fn, policy, base.clone_state(), two_player)
        policy = kernel.policies.get(self.policy or base.default_policy)
        if policy is None:
            raise ValueError(
                f"{base.game} has no playout policy {self.policy!r}; it has {sorted(kernel.policies)}"
            )
        name = knowledge if isinstance(knowledge, str) else None
        fn = compiled_search(kernel, kprior, self.rule, self.options.amaf, name)
        return _Path(True, fn, policy, np.array(base.state_view), two_player)

    def _scratch(self, base: PlanningEnv, tree: Tree, two_player: bool) -> Scratch:
        """The search's scratch and settings; the root's noise drawn, and mixed into the
        root's priors when it is already expanded."""
        max_actions = int(base.action_space.n)
        noise = np.zeros(max_actions)
        drawn = self._noise(len(base.legal_actions()))
        eps = 0.0
        if drawn is not None:
            eps = self.dirichlet_eps  # type: ignore[attr-defined]
            noise[: len(drawn)] = drawn
            mix_noise.py_func(tree.arrays, tree.root, noise, eps)
        return Scratch(
            moves=np.zeros(max_actions, dtype=np.int64),
            path=np.zeros(move_bound(base) + 1, dtype=np.int64),
            noise=noise,
            priors=np.zeros(max_actions),
            settings=self._settings(two_player, eps),
            marks=np.zeros((2, max_actions), dtype=np.int64),
            know_visits=np.zeros(max_actions),
            know_values=np.zeros(max_actions),
        )

    def _result(
        self,
        base: PlanningEnv,
        runner: Runner,
        tree: Tree,
        two_player: bool,
        why: str,
        seconds: float,
    ) -> SearchResult:
        """The result: the principal variation and the expected return of its first move
        (two-player), or the best sequence found (puzzles); the root's statistics."""
        control = runner.control
        actions, visits, values = tree.root_stats()
        if two_player:
            pv = tree.principal_variation()
            top = tree.best_child(tree.root)
            score = 2.0 * tree.mean_value(top[1]) - 1.0 if top else 0.0
        else:
            score, pv = runner.best.read(control)
            if score <= NEG_INF:
                score, pv = float(base.score), []
        return SearchResult(
            score=score,
            actions=pv,
            playouts=int(control[Slot.PLAYOUTS]),
            seconds=seconds,
            iterations=int(control[Slot.ITERATIONS]),
            stopped=why,
            root_actions=actions,
            root_visits=visits,
            root_values=values,
            extra={
                "tree_nodes": tree.size,
                "tree_bytes": tree.nbytes,
                "two_player": two_player,
                **({} if runner.standin is None else {"compile": runner.standin.note()}),
            },
        )

    def act(self, env: gym.Env) -> int:
        """The move to play: the most visited (two-player) or the first of the best sequence (puzzles)."""
        result = self.search(env)
        visits, actions = result.root_visits, result.root_actions
        by_visits = result.extra["two_player"] or not result.actions
        if by_visits and visits is not None and actions is not None:
            return int(actions[int(np.argmax(visits))])
        return int(result.actions[0])

    # -- tree reuse -----------------------------------------------------------------------------

    def _root_tree(self, base: PlanningEnv, path: _Path) -> Tree:
        fast, two_player, current = path.fast, path.two_player, path.root
        kernel, max_actions = getattr(base, "kernel", None), int(base.action_space.n)
        config = getattr(base.clone_state(), "config", None)
        key = (
            fast,
            getattr(base, "game", type(base).__name__),
            config,
            type(self._generic_prior()),
            self.options.key(),
        )
        tree = self._tree
        node = None
        if (
            self.reuse
            and tree is not None
            and self._tree_key == key
            and tree.size < MAX_REUSED_NODES
        ):
            if fast and kernel is not None:
                ws = kernel.workspace(current)
                out = np.zeros(max_actions, dtype=np.int64)

                def advance(state: np.ndarray, a: int) -> np.ndarray:
                    s = state.copy()
                    kernel.play(s, a, ws)
                    kernel.legal(s, ws, out)
                    return s

                row = cast(np.ndarray, current)  # the compiled path's root: a state array
                node = tree.node_of(row, advance, np.array_equal)
            else:

                def advance_env(state: State, a: int) -> State:
                    base.restore_state(state)
                    base.step(a)
                    return base.clone_state()

                snapshot = cast("State", current)  # the generic path's root: a snapshot
                node = tree.node_of(snapshot, advance_env, lambda x, y: x == y)
        if tree is None or node is None:
            tree = Tree(max_actions, edge_columns=WIDE if self.options.wide else NARROW)
            mover = 1 - int(base.current_player) if two_player else 0
            tree.new_root(mover, current)
        else:
            tree.set_root(node)
            tree.root_state = current
        self._tree, self._tree_key = tree, key
        return tree


class UCT(TreeAgent):
    """Upper Confidence bounds applied to Trees (UCB1 selection, random playouts).

    Args:
        iterations: the default budget of ``search``/``act`` (iterations = playouts); with neither
            this nor ``time_limit``, 1000. ``UCT.from_preset("hard")`` takes a named difficulty.
        time_limit: the default budget in seconds.
        c: the UCB1 exploration constant (values are in [0, 1]); default sqrt(2).
        seed: seeds the search's random stream; a fresh agent with a fixed seed and iteration budget
            gives a fixed result.
        policy: the playout policy: a name, ``None`` for the game's default, or a callable
            ``policy(env) -> chooser`` (generic path).
        backup: one-player puzzles: ``"mean"`` (average normalised score) or ``"max"`` (the best
            score below the node, SP-MCTS-style). Two-player games always average.
        reuse: keep the tree between moves and continue from the subtree reached.
        compiled: use the game's compiled search when it has one (the default) or force the generic
            Python path (slower, same result).
        max_tree_bytes: the tree's memory cap (2 GiB by default): a search whose tree would grow
            past it stops there (``stopped == "memory"``) and answers from the tree it has.
        workers, backend, address: root parallelism (:mod:`mc_envs.agents.parallel.root`).
        rave: RAVE (Gelly and Silver 2011, :mod:`mc_envs.agents.mcts.rave`) with the
            hand-selected schedule ``beta = sqrt(k / (3 N + k))``: this is ``k`` (> 0; MoGo's
            order: 1000). Selection then maximises ``(1 - beta) Q + beta Q~ + c sqrt(ln N / n)``
            (MoGo used a ``c`` near 0 with RAVE). None: off (the default).
        rave_bias: RAVE with the minimum-MSE schedule
            ``beta = n~ / (n + n~ + 4 n n~ b^2)``: this is ``b`` (> 0). Not with ``rave``.
        knowledge: priors as virtual visits and values (heuristic MC-RAVE): a name of the game
            kernel's ``knowledge`` table (compiled and generic paths), or a callable
            ``knowledge(env) -> (visits, values)`` over the legal actions in sorted order (generic
            path). Each new edge counts those virtual visits of that mean value in selection (in
            its own statistic and its AMAF one); reported visits and the move chosen leave them
            out. None: off (the default).
        fpu: with RAVE or knowledge, the value of an edge without visits, virtual visits or AMAF
            visits (first-play urgency); default 1 (tried before the others).
    """

    name = "uct"


class _Path(NamedTuple):
    """The path a tree search takes over one env: compiled (``fast``) or generic, the search
    template ``fn`` and the playout ``policy`` it runs, the ``root`` state (a compiled row, or a
    snapshot), and whether the game has two players."""

    fast: bool
    fn: SearchFn
    policy: int | PolicyFactory
    root: np.ndarray | State
    two_player: bool


class _Program:
    """One tree search for the :class:`~mc_envs.agents.runner.Runner`: calls the template until it is
    done, growing the tree when it asks, up to ``max_tree_bytes`` (then it stops, ``"memory"``).

    On a cold cache the runner binds it to the generic path until a child has compiled the fast
    one (:mod:`mc_envs.agents.compile_ahead`); the tree carries over."""

    algo = "tree"
    steps: tuple[CPUDispatcher, ...] = ()

    def __init__(
        self, agent: TreeAgent, runner: Runner, path: _Path, tree: Tree, scratch: Scratch
    ) -> None:
        self.agent, self.runner, self.tree, self.scratch = agent, runner, tree, scratch
        self.params: dict[str, object] = {}
        self.fast = path.fast
        self.fn, self.policy = path.fn, path.policy
        self.g = runner.game(2, path.fast)
        self.rng = agent._rng
        self._compiled = (path.fn, path.policy)  # the fast path's, when it is the one given

    @property
    def ahead(self) -> TreeAgent:
        """The agent as the compiling child needs it: without its tree."""
        return solo(self.agent, _tree=None, _tree_key=None)

    def entries(self) -> list[CPUDispatcher]:
        """The compiled entry point (for :mod:`mc_envs.agents.compile_ahead`)."""
        # asked on the compiled path only (the runner's program.fast): compiled_search's dispatcher
        return [cast("CPUDispatcher", self._compiled[0])]

    def bind(self, fast: bool, plain: bool = False) -> None:
        """Runs on the compiled path (``fast``) or the generic one (``plain``: its helpers
        uncompiled too) from the next call on."""
        agent, base = self.agent, self.runner.base
        self.g = self.runner.game(2, fast)
        if fast:
            self.fn, self.policy = self._compiled
        else:
            self.fn = agent._generic_fn(plain, base)
            self.policy = generic_policy(base, agent.policy)
        self.fast = fast

    def call(self, control: np.ndarray, restarts: bool) -> None:
        sh = self.runner.shared._replace(control=control)
        while True:
            code = self.fn(self.g, self.tree.arrays, self.scratch, self.policy, self.rng, sh)
            if code == OUT_OF_ROOM:
                if not self.tree.grow(self.agent.max_tree_bytes):
                    control[Slot.STOP] = StopCode.MEMORY
                    return
            elif code != CHUNK_DONE or control[Slot.PAUSE] != 0:
                return

    def dump(self) -> dict[str, object]:
        raise ValueError("tree searches have no checkpoints")

    def load(self, data: dict[str, object], check: Checker) -> None:
        raise ValueError("tree searches have no checkpoints")
