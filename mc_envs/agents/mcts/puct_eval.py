"""PUCT with a learned evaluator: leaves evaluated in batches by ``evaluator(observations, masks)``.

This is the AlphaGo Zero / AlphaZero search: a leaf is expanded with the evaluator's move priors and
its value is backed up (no playout). To call a network on many leaves at once, each round descends
up to ``batch_size`` times before evaluating; every node on a descent's path gets its visit at once
(a *virtual loss*: a visit worth 0 until the value arrives), which steers the next descents of the
round elsewhere. The value is added when the batch comes back, so after each round the tree is as
if its visits had been made one by one with those values. A descent that reaches a leaf already
waiting in the round takes its virtual loss back and ends the round early.

The selection rule, the expansion and the backup are the compiled node operations of
:mod:`mc_envs.agents.mcts.tree` (the same as the playout search's); only the leaf evaluation differs. The search
runs over the planning-env contract (``clone_state``/``restore_state``/``legal_actions``/
``step``), with the state of a node's observation from ``env.observation()``.

Values: an evaluator returns, for each leaf, the value for the player to move there: in
``[-1, 1]`` in two-player games (+1 a win), in ``[0, 1]`` in one-player puzzles (a normalised
score; a finished game's score is divided by ``value_scale``, the env's ``max_score`` by default).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mc_envs.agents.base import ITERATION_LIMIT, ITERATIONS, STOP
from mc_envs.agents.common import count_playout, record
from mc_envs.agents.mcts.tree import (
    ACTION,
    DONE,
    EDGES,
    GROW,
    NEDGES,
    NODES,
    NOISE_EPS,
    PARENT,
    ROOT,
    TWO_PLAYER,
    VISITS,
    backup,
    child_of,
    expand,
    select_edge,
)

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def observe(env: Any) -> np.ndarray:
    """The observation of the env's current state (``env.observation()``)."""
    fn = getattr(env, "observation", None)
    if fn is None:
        raise TypeError(
            f"PUCT(evaluator=...) needs env.observation() on {type(env).__name__}: "
            "the observation of the current state"
        )
    return np.asarray(fn())


def evaluated_search(evaluator: Evaluator, batch_size: int, value_scale: float | None) -> Callable:
    """The leaf-batched search, with the signature of the tree template (``g, t, w, policy, rng,
    sh``), for the :class:`mc_envs.agents.mcts.uct.TreeAgent` program loop; ``g.states`` is an
    :class:`~mc_envs.agents.ops.EnvStates` whose slot 0 holds the root.

    Returns DONE when stopped, GROW when the tree needs room (every virtual loss resolved first).
    """

    def terminal_value(env: Any, two_player: bool) -> float:
        if two_player:
            returns = env.returns() if hasattr(env, "returns") else (0.0,)
            return float(returns[0])
        scale = value_scale if value_scale is not None else getattr(env, "max_score", None)
        if not scale:
            raise ValueError("PUCT(evaluator=...) on a puzzle needs value_scale= or env.max_score")
        return float(env.score) / float(scale)

    def flush(t: Any, w: Any, pending: list, two_player: bool) -> None:
        """Evaluates the pending leaves in one call, expands them and backs their values up."""
        if not pending:
            return
        obs = np.stack([p[1] for p in pending])
        masks = np.stack([p[2] for p in pending])
        priors, values = evaluator(obs, masks)
        priors = np.asarray(priors, dtype=np.float64).reshape(len(pending), -1)
        values = np.asarray(values, dtype=np.float64).reshape(len(pending))
        for j, (node, _, _, legal, mover, root) in enumerate(pending):
            p = priors[j][legal]
            total = float(p.sum())
            p = (
                p / total
                if total > 0 and np.isfinite(total)
                else np.full(len(legal), 1.0 / len(legal))
            )
            eps = w.cfg[NOISE_EPS] if root else 0.0
            expand(t, node, legal, len(legal), p, w.fbuf[0], eps, False)
            v = float(values[j])
            r = (v if mover == 0 else -v) if two_player else v
            backup(t, node, r, two_player, 0.0)
        pending.clear()

    def search(g: Any, t: Any, w: Any, policy: Any, rng: np.ndarray, sh: Any) -> int:
        states, control = g.states, sh.control
        two_player = w.cfg[TWO_PLAYER] != 0.0
        max_actions = w.moves.shape[0]
        root = t.used[ROOT]
        pending: list = []
        while True:
            room = (
                t.used[NODES] + 1 <= t.ni.shape[0]
                and t.used[EDGES] + max_actions * (len(pending) + 1) <= t.ea.shape[0]
            )
            stop = control[STOP] != 0 or control[ITERATIONS] >= control[ITERATION_LIMIT]
            if stop or not room or len(pending) == batch_size:
                flush(t, w, pending, two_player)
                if control[STOP] == 0 and control[ITERATIONS] >= control[ITERATION_LIMIT]:
                    control[STOP] = 4
                if control[STOP] != 0:
                    return DONE
                if t.used[NODES] + 1 > t.ni.shape[0] or t.used[EDGES] + max_actions > t.ea.shape[0]:
                    return GROW
                continue
            states.copy(1, 0)
            env = states.use(1)
            node = root
            depth = 0
            t.nf[node, VISITS] += 1.0  # the virtual loss, resolved by the backup
            while t.ni[node, NEDGES] > 0:
                e = select_edge(t, node, w.cfg, rng)
                node = child_of(t, node, e, int(env.current_player) if two_player else 0)
                env.step(int(t.ea[e, ACTION]))
                w.path[depth] = t.ea[e, ACTION]
                depth += 1
                t.nf[node, VISITS] += 1.0
            if any(p[0] == node for p in pending):  # a collision: evaluate the round first
                while True:  # this descent's virtual loss is taken back; it will be made again
                    t.nf[node, VISITS] -= 1.0
                    if node == root:
                        break
                    node = t.ni[node, PARENT]
                flush(t, w, pending, two_player)
                continue
            legal = np.asarray(env.legal_actions(), dtype=np.int64)
            if len(legal) == 0:  # a finished game: its value is known
                t.ni[node, NEDGES] = 0
                if not two_player:
                    record(w.path, depth, float(env.score), sh)
                backup(t, node, terminal_value(env, two_player), two_player, 0.0)
            else:
                mask = np.zeros(max_actions, dtype=bool)
                mask[legal] = True
                mover = int(env.current_player) if two_player else 0
                pending.append((node, observe(env), mask, legal, mover, node == root))
            control[ITERATIONS] += 1
            count_playout(control)

    return search
