"""Nested Monte Carlo Search (Cazenave, IJCAI 2009), with memorisation of the best sequence.

A level-0 search is one playout. A level-l search plays a game move by move; before each move it
tries every legal move followed by a level-(l-1) search and plays the move that led to the best
score. With memorisation, the best complete sequence found so far is kept and followed when no
later trial beats it, so a level-l result is never worse than any playout it saw. Ties between
equally good moves are broken uniformly at random.

The algorithm is written once, in :func:`_nmcs`, against the state operations of
:mod:`agents.ops`: compiled per built-in game, and run as plain Python on any other env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import (
    NEG_INF,
    RUNS,
    STOP,
    Best,
    Callback,
    SearchResult,
    new_control,
    run_search,
)
from agents.common import count_playout, record, stop_reason
from agents.ops import EnvStates, bind_generic, compiled_ops, compiled_states, generic_policy
from mc_envs._numba import instantiate
from mc_envs.rng import rng_below, rng_state


def _nmcs(
    level,
    d0,
    states,
    ws,
    moves,
    seqs,
    lens,
    path,
    policy,
    rng,
    memorize,
    control,
    best_score,
    best_seq,
    best_len,
    max_score,
):
    """One level-``level`` search from ``states[level]``, whose moves from the root are path[:d0].

    Leaves the best sequence from this node in ``seqs[level, :lens[level]]`` and returns its score
    (without memorisation: the sequence actually played and its score).
    """
    best = NEG_INF
    ties = 0
    played = 0
    while control[STOP] == 0:
        n = legal(states, level, ws, moves[level])  # noqa: F821
        if n == 0:
            break
        step_best = NEG_INF
        step_move = moves[level, 0]
        step_ties = 0
        for i in range(n):
            m = moves[level, i]
            copy_state(states, level - 1, level)  # noqa: F821
            play(states, level - 1, m, ws)  # noqa: F821
            path[d0 + played] = m
            start = d0 + played + 1
            if level == 1:
                k = playout(states, 0, policy, rng, ws, path, start)  # noqa: F821
                s = score(states, 0)  # noqa: F821
                count_playout(control)
                record(path, start + k, s, control, best_score, best_seq, best_len, max_score)
                sub = path[start : start + k]
            else:
                s = _nmcs(
                    level - 1,
                    start,
                    states,
                    ws,
                    moves,
                    seqs,
                    lens,
                    path,
                    policy,
                    rng,
                    memorize,
                    control,
                    best_score,
                    best_seq,
                    best_len,
                    max_score,
                )
                sub = seqs[level - 1, : lens[level - 1]]
            if memorize:
                take = s > best
                if s == best:
                    ties += 1
                    take = rng_below(rng, ties + 1) == 0
                elif take:
                    ties = 0
                if take:
                    best = s
                    seqs[level, played] = m
                    seqs[level, played + 1 : played + 1 + len(sub)] = sub
                    lens[level] = played + 1 + len(sub)
            else:
                take = s > step_best
                if s == step_best:
                    step_ties += 1
                    take = rng_below(rng, step_ties + 1) == 0
                elif take:
                    step_ties = 0
                if take:
                    step_best = s
                    step_move = m
            if control[STOP] != 0:
                break
        if control[STOP] != 0:
            break
        m = seqs[level, played] if memorize else step_move
        play(states, level, m, ws)  # noqa: F821
        path[d0 + played] = m
        if not memorize:
            seqs[level, played] = m
        played += 1
    if played == 0 or not memorize:
        lens[level] = played
        best = score(states, level)  # noqa: F821
        if control[STOP] == 0:
            record(path, d0 + played, best, control, best_score, best_seq, best_len, max_score)
    return best


def _iterate(
    level,
    restarts,
    states,
    ws,
    moves,
    seqs,
    lens,
    path,
    policy,
    rng,
    memorize,
    control,
    best_score,
    best_seq,
    best_len,
    max_score,
    run_best,
):
    """Runs complete level-``level`` searches from ``states[level + 1]`` until told to stop.

    ``run_best`` receives the best result of the completed runs: [score] and its sequence in
    ``seqs[level + 1]``. With ``restarts`` false, exactly one run.
    """
    top = level + 1
    while control[STOP] == 0:
        copy_state(states, level, top)  # noqa: F821
        if level == 0:
            k = playout(states, 0, policy, rng, ws, path, 0)  # noqa: F821
            s = score(states, 0)  # noqa: F821
            count_playout(control)
            record(path, k, s, control, best_score, best_seq, best_len, max_score)
            seqs[0, :k] = path[:k]
            lens[0] = k
        else:
            s = _nmcs(
                level,
                0,
                states,
                ws,
                moves,
                seqs,
                lens,
                path,
                policy,
                rng,
                memorize,
                control,
                best_score,
                best_seq,
                best_len,
                max_score,
            )
        if control[STOP] == 0:  # a complete run
            control[RUNS] += 1
            if s > run_best[0]:
                run_best[0] = s
                seqs[top, : lens[level]] = seqs[level, : lens[level]]
                lens[top] = lens[level]
        if not restarts:
            break
    return run_best[0]


_generic = bind_generic(_iterate, _nmcs=bind_generic(_nmcs))


def _no_deeper(
    level,
    d0,
    states,
    ws,
    moves,
    seqs,
    lens,
    path,
    policy,
    rng,
    memorize,
    control,
    best_score,
    best_seq,
    best_len,
    max_score,
):
    """Stands for the level below level 1, which is never searched (playouts are used instead)."""
    return NEG_INF


_entry_points: dict[tuple[str, int], Callable] = {}


def compiled_entry(kernel: Any, level: int) -> Callable:
    """The cached compiled NMCS of a kernel for one level.

    Numba's cache does not survive recursive functions called from other cached functions, so each
    level is its own instance calling the instance of the level below.
    """
    key = (kernel.name, level)
    fn = _entry_points.get(key)
    if fn is None:
        ops = compiled_ops(kernel)
        below = instantiate(_no_deeper, kernel.name, **ops)
        for lv in range(1, level + 1):
            below = instantiate(_nmcs, f"{kernel.name}_l{lv}", **ops, _nmcs=below)
        fn = _entry_points[key] = instantiate(
            _iterate, f"{kernel.name}_l{level}", **ops, _nmcs=below
        )
    return fn


class NMCS:
    """Nested Monte Carlo Search.

    Args:
        level: nesting level; 0 is iterative sampling (repeated playouts).
        seed: seeds the search's random stream; a fixed seed and playout budget give a fixed result.
        policy: the playout policy: a name (``"random"`` for every game, or a game's own, e.g.
            SameGame's ``"tabu"``), ``None`` for the game's default, or a callable
            ``policy(env) -> chooser(actions, rng) -> action`` (runs on the generic path).
        memorize: keep and follow the best sequence found (True), or the paper's ablation that
            only follows the best move of each step (False).
        compiled: use the game's compiled search when it has one (True, the default), or force
            the generic Python path (False: slower, same result).
    """

    name = "nmcs"

    def __init__(
        self,
        level: int = 1,
        *,
        seed: int = 0,
        policy: str | Callable | None = None,
        memorize: bool = True,
        compiled: bool = True,
    ) -> None:
        if level < 0:
            raise ValueError(f"level must be >= 0, got {level}")
        self.level = int(level)
        self.seed = int(seed)
        self.policy = policy
        self.memorize = bool(memorize)
        self.compiled = bool(compiled)
        self._runs = 0

    @property
    def params(self) -> dict:
        """The constructor arguments (for records)."""
        policy = (
            self.policy if not callable(self.policy) else getattr(self.policy, "__name__", "custom")
        )
        return {"level": self.level, "seed": self.seed, "policy": policy, "memorize": self.memorize}

    def search(
        self,
        env: Any,
        *,
        time_limit: float | None = None,
        playouts: int | None = None,
        iterations: int | None = None,
        callback: Callback | None = None,
    ) -> SearchResult:
        """Searches from the env's current state and leaves the env as it was.

        With no budget, runs one complete level-``level`` search (the paper's algorithm). With a
        budget (``time_limit`` seconds, ``playouts``, or ``iterations`` = complete runs), restarts
        until the budget ends, and stops early as soon as the env's ``max_score`` is reached;
        the best sequence found is returned.
        """
        base = env.unwrapped
        kernel = getattr(base, "kernel", None)
        custom = callable(self.policy)
        fast = self.compiled and kernel is not None and not custom
        restarts = any(b is not None for b in (time_limit, playouts, iterations))
        max_moves = _max_moves(base)
        max_actions = int(base.action_space.n)
        slots = self.level + 2
        if fast:
            policy = kernel.policies.get(self.policy or base.default_policy)
            if policy is None:
                raise ValueError(
                    f"{base.game} has no playout policy {self.policy!r}; it has {sorted(kernel.policies)}"
                )
            states = compiled_states(base, slots)
            ws = kernel.workspace(states[0])
            fn = compiled_entry(kernel, self.level)
            snapshot = None
        else:
            policy = generic_policy(base, self.policy)
            snapshot = base.clone_state()
            states = EnvStates(base, slots)
            ws = None
            fn = _generic
        bound = getattr(base, "max_score", None)
        max_score = float(bound) if restarts and bound is not None else 1.0e300
        control = new_control(playouts, None)
        best = Best(max_moves)
        moves = np.zeros((slots, max_actions), dtype=np.int64)
        seqs = np.zeros((slots, max_moves + 1), dtype=np.int64)
        lens = np.zeros(slots, dtype=np.int64)
        path = np.zeros(max_moves + 1, dtype=np.int64)
        rng = rng_state(self.seed)
        run_best = np.full(1, NEG_INF)

        if fast:  # compile (or load from the cache) before the clock starts
            idle = new_control(None, None)
            idle[STOP] = 1
            fn(
                self.level,
                False,
                states,
                ws,
                moves,
                seqs,
                lens,
                path,
                policy,
                rng,
                self.memorize,
                idle,
                best.score,
                best.seq,
                best.length,
                max_score,
                run_best,
            )

        def work() -> None:
            runs_left = iterations
            while True:
                fn(
                    self.level,
                    restarts and iterations is None,
                    states,
                    ws,
                    moves,
                    seqs,
                    lens,
                    path,
                    policy,
                    rng,
                    self.memorize,
                    control,
                    best.score,
                    best.seq,
                    best.length,
                    max_score,
                    run_best,
                )
                if runs_left is None:
                    return
                runs_left -= 1
                if runs_left <= 0 or control[STOP] != 0:
                    return

        try:
            why, seconds = run_search(work, control, best, time_limit=time_limit, callback=callback)
        finally:
            if snapshot is not None:
                base.restore_state(snapshot)
        top = self.level + 1
        if control[RUNS] > 0 and not self.memorize and control[STOP] != 2:
            score, actions = float(run_best[0]), seqs[top, : lens[top]].tolist()
        else:
            score, actions = best.read(control)
        if score == NEG_INF:  # interrupted before a first result
            score = float("-inf")
        if not why:
            why = stop_reason(control[STOP])
            if why == "complete" and iterations is not None:
                why = "iterations"
        return SearchResult(
            score=score,
            actions=actions,
            playouts=int(control[1]),
            seconds=seconds,
            iterations=int(control[RUNS]),
            stopped=why,
        )

    def act(self, env: Any) -> int:
        """The first move of a complete search from the env's state."""
        result = self.search(env)
        if not result.actions:
            raise ValueError("no legal move: the game is over")
        return result.actions[0]


def _max_moves(base: Any) -> int:
    kernel = getattr(base, "kernel", None)
    if kernel is not None:
        return int(kernel.max_moves)
    for name in ("max_moves", "max_episode_steps"):
        value = getattr(base, name, None)
        if value:
            return int(value)
    spec = getattr(base, "spec", None)
    if spec is not None and spec.max_episode_steps:
        return int(spec.max_episode_steps)
    return 100_000
