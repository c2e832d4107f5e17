"""Nested Monte Carlo Search (Cazenave, IJCAI 2009), with memorisation of the best sequence.

A level-0 search is one playout. A level-l search plays a game move by move; before each move it
tries every legal move followed by a level-(l-1) search and plays the move that led to the best
score. With memorisation, the best complete sequence found so far is kept and followed when no
later trial beats it, so a level-l result is never worse than any playout it saw. Ties between
equally good moves are broken uniformly at random.

The algorithm is written once, in :func:`_nmcs`, against the state operations of
:mod:`agents.ops`: compiled per built-in game, and run as plain Python on any other env.

Long runs: every level keeps its loop state (moves committed, next candidate, best score, tie
counts) in a row of ``frames``/``scores`` when it stops or pauses between two candidates, so the
search can be saved to a JSON checkpoint after any playout and continued, in the same process or
after a crash, exactly as if it had not stopped (``search(..., checkpoint=, resume=)``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import (
    CONTROL_SIZE,
    NEG_INF,
    PLAYOUT_LIMIT,
    PLAYOUTS,
    RUNS,
    STOP,
    Best,
    Callback,
    SearchResult,
    new_control,
    run_search,
)
from agents.common import count_playout, record, stop_reason
from agents.ops import (
    EnvStates,
    bind_generic,
    compiled_ops,
    compiled_states,
    generic_policy,
    move_bound,
)
from agents.parallel import accepts_workers
from mc_envs._numba import instantiate
from mc_envs.rng import rng_below, rng_state

PARALLEL = ("root", "moves")  # how workers share a search (the NMCS ``parallel`` argument)

PAUSE = CONTROL_SIZE  # an extra control slot: pause after the next playout (checkpoints)

# A level's resumable state, one row per level: frames[level, F_*] (int64) and scores[level, S_*].
F_ACTIVE, F_PLAYED, F_NEXT, F_TIES, F_STEP_MOVE, F_STEP_TIES = range(6)
S_BEST, S_STEP_BEST = range(2)
FRAME_SIZE = 6


def _nmcs(
    level,
    d0,
    states,
    ws,
    moves,
    seqs,
    lens,
    path,
    frames,
    scores,
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

    Resumable: when the search is stopped or asked to pause (``control[PAUSE]``) between two
    candidate moves, it saves its loop state in ``frames[level]``/``scores[level]`` and returns with
    ``frames[level, F_ACTIVE]`` still set; its parent then saves its own state the same way. Called
    again (with the parent's ``states[level]`` as before), it replays its committed moves and
    continues exactly where it stopped.
    """
    if frames[level, F_ACTIVE] != 0:  # resume: rebuild this level's state from its moves
        played = frames[level, F_PLAYED]
        first = frames[level, F_NEXT]
        ties = frames[level, F_TIES]
        step_move = frames[level, F_STEP_MOVE]
        step_ties = frames[level, F_STEP_TIES]
        best = scores[level, S_BEST]
        step_best = scores[level, S_STEP_BEST]
        for j in range(played):
            play(states, level, path[d0 + j], ws)  # noqa: F821
    else:
        frames[level, F_ACTIVE] = 1
        played = 0
        first = 0
        ties = 0
        step_move = 0
        step_ties = 0
        best = NEG_INF
        step_best = NEG_INF
    pause = False
    while True:
        if control[STOP] != 0 or control[PAUSE] != 0:
            pause = True  # ``first`` is 0 except on a resumed step, which continues at ``first``
            break
        n = legal(states, level, ws, moves[level])  # noqa: F821
        if n == 0:
            break
        if first == 0:
            step_best = NEG_INF
            step_move = moves[level, 0]
            step_ties = 0
        for i in range(first, n):
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
                    frames,
                    scores,
                    policy,
                    rng,
                    memorize,
                    control,
                    best_score,
                    best_seq,
                    best_len,
                    max_score,
                )
                if frames[level - 1, F_ACTIVE] != 0:  # the child paused: candidate i continues
                    pause = True
                    first = i
                    break
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
            if control[STOP] != 0 or control[PAUSE] != 0:
                pause = True
                first = i + 1
                break
        if pause:
            break
        first = 0
        m = seqs[level, played] if memorize else step_move
        play(states, level, m, ws)  # noqa: F821
        path[d0 + played] = m
        if not memorize:
            seqs[level, played] = m
        played += 1
    if pause:
        frames[level, F_PLAYED] = played
        frames[level, F_NEXT] = first
        frames[level, F_TIES] = ties
        frames[level, F_STEP_MOVE] = step_move
        frames[level, F_STEP_TIES] = step_ties
        scores[level, S_BEST] = best
        scores[level, S_STEP_BEST] = step_best
        return best
    frames[level, F_ACTIVE] = 0
    if played == 0 or not memorize:
        lens[level] = played
        best = score(states, level)  # noqa: F821
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
    frames,
    scores,
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
    ``seqs[level + 1]``. With ``restarts`` false, exactly one run. A run that was stopped or paused
    part-way (``frames[level, F_ACTIVE]`` set) is continued by the next call.
    """
    top = level + 1
    while control[STOP] == 0 and control[PAUSE] == 0:
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
                frames,
                scores,
                policy,
                rng,
                memorize,
                control,
                best_score,
                best_seq,
                best_len,
                max_score,
            )
            if frames[level, F_ACTIVE] != 0:  # stopped or paused: the run continues later
                break
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
    frames,
    scores,
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


@accepts_workers
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
        workers, backend, address: parallel search (:mod:`agents.parallel`).
        parallel: how the workers share the search: ``"root"`` (the default: independent searches
            from derived seeds, the best kept) or ``"moves"`` (level >= 2: the top level's
            candidate moves, each followed by a level-(L-1) search, are evaluated on the workers;
            :func:`agents.nmcs_parallel.moves_search`; its result does not depend on the number
            of workers).
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
        parallel: str = "root",
    ) -> None:
        if level < 0:
            raise ValueError(f"level must be >= 0, got {level}")
        if parallel not in PARALLEL:
            raise ValueError(f"parallel must be one of {PARALLEL}, got {parallel!r}")
        if parallel == "moves" and level < 2:
            raise ValueError("parallel='moves' spreads level-(L-1) searches: it needs level >= 2")
        self.parallel = parallel
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
        params = {
            "level": self.level,
            "seed": self.seed,
            "policy": policy,
            "memorize": self.memorize,
        }
        if self.parallel != "root":
            params["parallel"] = self.parallel
        return params

    def search(
        self,
        env: Any,
        *,
        time_limit: float | None = None,
        playouts: int | None = None,
        iterations: int | None = None,
        callback: Callback | None = None,
        checkpoint: str | None = None,
        resume: bool = False,
        checkpoint_every: float = 5.0,
    ) -> SearchResult:
        """Searches from the env's current state and leaves the env as it was.

        With no budget, runs one complete level-``level`` search (the paper's algorithm). With a
        budget (``time_limit`` seconds, ``playouts``, or ``iterations`` = complete runs), restarts
        until the budget ends, and stops early as soon as the env's ``max_score`` is reached;
        the best sequence found is returned.

        Args:
            checkpoint: a JSON file where the search's state (the moves committed at every level,
                the best sequences, the random stream, the counters) is saved every
                ``checkpoint_every`` seconds and at the end (atomically). Saving waits for the
                next playout to end; it does not change the search's result.
            resume: continue the search saved in ``checkpoint`` (same env state and parameters)
                exactly where it was; budgets count from the start of the saved search (playouts,
                runs), the time limit from now.
        """
        if self.parallel == "moves":
            from agents.nmcs_parallel import moves_search

            if checkpoint is not None:
                raise ValueError(
                    "a checkpoint holds one search: use parallel='root' with checkpoint="
                )
            return moves_search(
                self,
                env,
                time_limit=time_limit,
                playouts=playouts,
                iterations=iterations,
                callback=callback,
            )
        return _Run(self, env, time_limit, playouts, iterations).run(
            time_limit=time_limit,
            callback=callback,
            checkpoint=checkpoint,
            resume=resume,
            checkpoint_every=checkpoint_every,
        )

    def act(self, env: Any) -> int:
        """The first move of a complete search from the env's state."""
        result = self.search(env)
        if not result.actions:
            raise ValueError("no legal move: the game is over")
        return result.actions[0]


class _Run:
    """One NMCS search over one env: its arrays, its entry point, and the pause/save loop."""

    def __init__(
        self,
        agent: NMCS,
        env: Any,
        time_limit: float | None,
        playouts: int | None,
        iterations: int | None,
    ) -> None:
        self.agent = agent
        base = self.base = env.unwrapped
        kernel = getattr(base, "kernel", None)
        custom = callable(agent.policy)
        self.fast = agent.compiled and kernel is not None and not custom
        self.restarts = any(b is not None for b in (time_limit, playouts, iterations))
        # complete runs to do: None = until a budget ends; one without a budget
        self.limit = iterations if iterations is not None else (None if self.restarts else 1)
        self.iterations = iterations
        max_moves = move_bound(base)
        max_actions = int(base.action_space.n)
        slots = agent.level + 2
        if self.fast:
            self.policy = kernel.policies.get(agent.policy or base.default_policy)
            if self.policy is None:
                raise ValueError(
                    f"{base.game} has no playout policy {agent.policy!r}; "
                    f"it has {sorted(kernel.policies)}"
                )
            self.states = compiled_states(base, slots)
            self.ws = kernel.workspace(self.states[0])
            self.fn = compiled_entry(kernel, agent.level)
            self.snapshot = None
        else:
            self.policy = generic_policy(base, agent.policy)
            self.snapshot = base.clone_state()
            self.states = EnvStates(base, slots)
            self.ws = None
            self.fn = _generic
        bound = getattr(base, "max_score", None)
        self.max_score = float(bound) if self.restarts and bound is not None else 1.0e300
        self.control = np.zeros(CONTROL_SIZE + 2, dtype=np.int64)
        self.control[:CONTROL_SIZE] = new_control(playouts, None)
        self.best = Best(max_moves)
        self.moves = np.zeros((slots, max_actions), dtype=np.int64)
        self.seqs = np.zeros((slots, max_moves + 1), dtype=np.int64)
        self.lens = np.zeros(slots, dtype=np.int64)
        self.path = np.zeros(max_moves + 1, dtype=np.int64)
        self.frames = np.zeros((slots, FRAME_SIZE), dtype=np.int64)
        self.scores = np.zeros((slots, 2), dtype=np.float64)
        self.rng = rng_state(agent.seed)
        self.run_best = np.full(1, NEG_INF)

    def call(self, restarts: bool, control: np.ndarray) -> float:
        return self.fn(
            self.agent.level,
            restarts,
            self.states,
            self.ws,
            self.moves,
            self.seqs,
            self.lens,
            self.path,
            self.frames,
            self.scores,
            self.policy,
            self.rng,
            self.agent.memorize,
            control,
            self.best.score,
            self.best.seq,
            self.best.length,
            self.max_score,
            self.run_best,
        )

    def warm_up(self) -> None:
        """Compiles (or loads from the cache) before the clock starts."""
        if self.fast:
            idle = np.zeros_like(self.control)
            idle[STOP] = 1
            self.call(False, idle)

    # -- checkpoints ------------------------------------------------------------------------------

    def dump(self) -> dict[str, Any]:
        """The checkpoint data: JSON-ready, everything that decides the search's future."""
        from agents.checkpoint import state_fingerprint

        score, actions = self.best.read(self.control)
        return {
            "format": "mc-envs/checkpoint",
            "version": 1,
            "algo": "nmcs",
            "params": self.agent.params,
            "state": state_fingerprint(self.base),
            "best": {"score": score, "actions": actions},
            "control": {
                "playouts": int(self.control[PLAYOUTS]),
                "runs": int(self.control[RUNS]),
            },
            "search": {
                "frames": self.frames.tolist(),
                "scores": self.scores.tolist(),
                "seqs": [_trimmed(row) for row in self.seqs],
                "lens": self.lens.tolist(),
                "path": _trimmed(self.path),
                "rng": [int(x) for x in self.rng],
                "run_best": float(self.run_best[0]),
            },
        }

    def load(self, data: dict[str, Any]) -> None:
        """Restores the search saved by :meth:`dump`."""
        from agents.checkpoint import check_checkpoint

        check_checkpoint(data, "nmcs", self.agent.params, self.base)
        s = data["search"]
        if len(s["frames"]) != len(self.frames):
            raise ValueError("checkpoint of another level")
        self.frames[:] = np.asarray(s["frames"], dtype=np.int64)
        self.scores[:] = np.asarray(s["scores"], dtype=np.float64)
        self.lens[:] = np.asarray(s["lens"], dtype=np.int64)
        for row, seq in enumerate(s["seqs"]):
            self.seqs[row, : len(seq)] = seq
        self.path[: len(s["path"])] = s["path"]
        self.rng[:] = np.asarray(s["rng"], dtype=np.uint64)
        self.run_best[0] = s["run_best"]
        best = data["best"]
        n = len(best["actions"])
        self.best.seq[:n] = best["actions"]
        self.best.length[0] = n
        self.best.score[0] = best["score"]
        self.control[PLAYOUTS] = data["control"]["playouts"]
        self.control[RUNS] = data["control"]["runs"]
        if self.control[PLAYOUTS] >= self.control[PLAYOUT_LIMIT]:
            self.control[STOP] = 3
        if self.best.score[0] >= self.max_score:
            self.control[STOP] = 2

    def run(
        self,
        *,
        time_limit: float | None,
        callback: Callback | None,
        checkpoint: str | None,
        resume: bool,
        checkpoint_every: float,
    ) -> SearchResult:
        from agents.checkpoint import read_checkpoint, write_checkpoint

        if resume:
            if checkpoint is None:
                raise ValueError("resume=True needs checkpoint=PATH")
            self.load(read_checkpoint(checkpoint))
        self.warm_up()
        control = self.control
        limit = self.limit
        done = threading.Event()

        def ticker() -> None:  # asks the search to pause after the next playout
            while not done.wait(checkpoint_every):
                control[PAUSE] = 1

        def work() -> None:
            while control[STOP] == 0:
                if limit is not None and control[RUNS] >= limit:
                    return
                self.call(limit is None, control)
                if control[PAUSE] != 0:
                    if control[STOP] == 0:
                        write_checkpoint(checkpoint, self.dump())
                    control[PAUSE] = 0

        if checkpoint is not None:
            threading.Thread(target=ticker, name="mc-envs-checkpoint", daemon=True).start()
        try:
            why, seconds = run_search(
                work, control, self.best, time_limit=time_limit, callback=callback
            )
        finally:
            done.set()
            if self.snapshot is not None:
                self.base.restore_state(self.snapshot)
        if checkpoint is not None:
            write_checkpoint(checkpoint, self.dump())
        top = self.agent.level + 1
        if control[RUNS] > 0 and not self.agent.memorize and control[STOP] != 2:
            score, actions = float(self.run_best[0]), self.seqs[top, : self.lens[top]].tolist()
        else:
            score, actions = self.best.read(control)
        if score == NEG_INF:  # interrupted before a first result
            score = float("-inf")
        if not why:
            why = stop_reason(control[STOP])
            if why == "complete" and self.iterations is not None:
                why = "iterations"
        return SearchResult(
            score=score,
            actions=actions,
            playouts=int(control[PLAYOUTS]),
            seconds=seconds,
            iterations=int(control[RUNS]),
            stopped=why,
        )


def _trimmed(row: np.ndarray) -> list[int]:
    """The row without its trailing zeros (fresh arrays are zeros: loading restores them)."""
    nz = np.flatnonzero(row)
    return row[: nz[-1] + 1 if len(nz) else 0].tolist()
