"""PUCT with a learned evaluator: leaves evaluated in batches by ``evaluator(observations, masks)``.

This is the AlphaGo Zero / AlphaZero search: a leaf is expanded with the evaluator's move priors and
its value is backed up (no playout). To call a network on many leaves at once, each round descends
up to ``batch_size`` times before evaluating; every node on a descent's path gets its visit at once
(a *virtual loss*: a visit worth 0 until the value arrives), which steers the next descents of the
round elsewhere. The value is added when the batch comes back, so after each round the tree is as
if its visits had been made one by one with those values. A descent that reaches a leaf already
waiting in the round takes its virtual loss back and ends the round early.

The selection rule (:mod:`mc_envs.agents.mcts.selection`), the expansion and the backup are the
compiled node operations of :mod:`mc_envs.agents.mcts.tree` (the same as the playout search's);
only the leaf evaluation differs. The search
runs over the planning-env contract (``clone_state``/``restore_state``/``legal_actions``/
``step``), with the state of a node's observation from ``env.observation()``.

Values: an evaluator returns, for each leaf, the value for the player to move there: in
``[-1, 1]`` in two-player games (+1 a win), in ``[0, 1]`` in one-player puzzles (a normalised
score; a finished game's score is divided by ``value_scale``, the env's ``max_score`` by default).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from mc_envs.agents.base import Slot, StopCode
from mc_envs.agents.common import count_playout, record
from mc_envs.agents.mcts.search import ENDED, OUT_OF_ROOM, Scratch, normalised_priors
from mc_envs.agents.mcts.selection import SelectScalars, select_from_python
from mc_envs.agents.mcts.tree import (
    ACTION,
    NUM_EDGES,
    ROOT,
    VISITS,
    TreeArrays,
    backup,
    child_of,
    expand,
    has_room,
    mark_over,
    take_back_visit,
)

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.agents.mcts.search import SearchFn
    from mc_envs.agents.ops import EnvStates, Game, Shared
    from mc_envs.contract import PlanningContract
    from mc_envs.core import PolicyFactory

# The control block's slots and codes as plain ints: this search runs in Python, where reading an
# IntEnum member costs 1.5 us (12% of a descent).
STOP, ITERATIONS, ITERATION_LIMIT = int(Slot.STOP), int(Slot.ITERATIONS), int(Slot.ITERATION_LIMIT)
GO_ON, ITERATIONS_SPENT = int(StopCode.NONE), int(StopCode.ITERATIONS)

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


class Pending(NamedTuple):
    """A leaf waiting for the round's evaluation."""

    node: int
    observation: np.ndarray
    mask: np.ndarray  # [A] bool, True at the legal actions
    legal: np.ndarray  # the legal actions
    mover: int  # the player to move at the leaf
    at_root: bool


def observe(env: gym.Env) -> np.ndarray:
    """The observation of the env's current state (``env.observation()``)."""
    fn = getattr(env, "observation", None)
    if fn is None:
        raise TypeError(
            f"PUCT(evaluator=...) needs env.observation() on {type(env).__name__}: "
            "the observation of the current state"
        )
    return np.asarray(fn())


def evaluated_search(
    evaluator: Evaluator, batch_size: int, value_scale: float | None, rule: str
) -> SearchFn:
    """The leaf-batched search, with the signature of the tree template (``g, t, scratch,
    policy, rng, sh``), for the :class:`mc_envs.agents.mcts.uct.TreeAgent` program loop;
    ``g.states`` is an :class:`~mc_envs.agents.ops.EnvStates` whose slot 0 holds the root.
    ``rule`` names the selection rule (:data:`mc_envs.agents.mcts.selection.RULES`).

    Returns ENDED when told to stop, OUT_OF_ROOM when the tree needs room (every virtual loss
    resolved first).
    """
    return _EvaluatedSearch(evaluator, batch_size, value_scale, select_from_python(rule))


class _EvaluatedSearch:
    def __init__(
        self,
        evaluator: Evaluator,
        batch_size: int,
        value_scale: float | None,
        select: SelectScalars,
    ) -> None:
        self.evaluator, self.batch_size, self.value_scale = evaluator, batch_size, value_scale
        self.select = select
        self.pending: list[Pending] = []

    def terminal_value(self, env: PlanningContract, two_player: bool) -> float:
        if two_player:
            returns = env.returns() if hasattr(env, "returns") else (0.0,)
            return float(returns[0])
        scale = (
            self.value_scale if self.value_scale is not None else getattr(env, "max_score", None)
        )
        if not scale:
            raise ValueError("PUCT(evaluator=...) on a puzzle needs value_scale= or env.max_score")
        return float(env.score) / float(scale)

    def flush(self, t: TreeArrays, scratch: Scratch) -> None:
        """Evaluates the pending leaves in one call, expands them and backs their values up."""
        pending, two_player = self.pending, scratch.settings.two_player
        if not pending:
            return
        obs = np.stack([p.observation for p in pending])
        masks = np.stack([p.mask for p in pending])
        priors, values = self.evaluator(obs, masks)
        priors = np.asarray(priors, dtype=np.float64).reshape(len(pending), -1)
        values = np.asarray(values, dtype=np.float64).reshape(len(pending))
        for j, p in enumerate(pending):
            n = len(p.legal)
            normalised_priors(priors[j], p.legal, n, scratch.priors)
            eps = scratch.settings.noise_eps if p.at_root else 0.0
            expand(t, p.node, p.legal, n, scratch.priors, scratch.noise, eps)
            v = float(values[j])
            r = (v if p.mover == 0 else -v) if two_player else v
            backup(t, p.node, r, two_player, 0.0)
        pending.clear()

    def __call__(
        self,
        g: Game,
        t: TreeArrays,
        scratch: Scratch,
        policy: int | PolicyFactory,
        rng: np.ndarray,
        sh: Shared,
    ) -> int:
        control = sh.control
        max_actions = scratch.moves.shape[0]
        while True:
            room = has_room(t, max_actions * (len(self.pending) + 1))
            stop = control[STOP] != GO_ON or control[ITERATIONS] >= control[ITERATION_LIMIT]
            if stop or not room or len(self.pending) == self.batch_size:
                self.flush(t, scratch)
                if control[STOP] == GO_ON and control[ITERATIONS] >= control[ITERATION_LIMIT]:
                    control[STOP] = ITERATIONS_SPENT
                if control[STOP] != GO_ON:
                    return ENDED
                if not has_room(t, max_actions):
                    return OUT_OF_ROOM
                continue
            self.descend(g.states, t, scratch, rng, sh)

    def descend(
        self, states: EnvStates, t: TreeArrays, scratch: Scratch, rng: np.ndarray, sh: Shared
    ) -> None:
        """One descent from the root to a leaf, counting a visit (a virtual loss) on its path:
        the leaf joins the pending ones, or its known value is backed up (a finished game), or
        (a leaf already pending) the round is evaluated first and the descent taken back."""
        s = scratch.settings
        two_player = s.two_player
        states.copy(1, 0)
        env = states.use(1)
        root = node = int(t.used[ROOT])
        depth = 0
        t.stats[node, VISITS] += 1.0  # the virtual loss, resolved by the backup
        while t.nodes[node, NUM_EDGES] > 0:
            e = self.select(t, node, rng, s.c, s.fpu, s.two_player, s.use_max)
            node = child_of(t, node, e, int(env.current_player) if two_player else 0)
            env.step(int(t.edges[e, ACTION]))
            scratch.path[depth] = t.edges[e, ACTION]
            depth += 1
            t.stats[node, VISITS] += 1.0
        if any(p.node == node for p in self.pending):  # a collision: evaluate the round first
            take_back_visit(t, node)  # this descent will be made again
            self.flush(t, scratch)
            return
        legal = np.asarray(env.legal_actions(), dtype=np.int64)
        if len(legal) == 0:  # a finished game: its value is known
            mark_over(t, node)
            if not two_player:
                record(scratch.path, depth, float(env.score), sh)
            backup(t, node, self.terminal_value(env, two_player), two_player, 0.0)
        else:
            mask = np.zeros(scratch.moves.shape[0], dtype=bool)
            mask[legal] = True
            mover = int(env.current_player) if two_player else 0
            self.pending.append(Pending(node, observe(env), mask, legal, mover, node == root))
        sh.control[ITERATIONS] += 1
        count_playout(sh.control)
