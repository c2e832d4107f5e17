"""Nested Monte Carlo Search (Cazenave, IJCAI 2009), with memorisation of the best sequence.

A level-0 search is one playout. A level-l search plays a game move by move; before each move it
tries every legal move followed by a level-(l-1) search and plays the move that led to the best
score. With memorisation, the best complete sequence found so far is kept and followed when no
later trial beats it, so a level-l result is never worse than any playout it saw. Ties between
equally good moves are broken uniformly at random.

The algorithm is written once, in :func:`_nmcs`, against the state operations of
:mod:`mc_envs.agents.ops`: compiled per built-in game, and run as plain Python on any other env.

Long runs: every level keeps its loop state (moves committed, next candidate, best score, tie
counts) in a row of ``frames``/``scores`` when it stops or pauses between two candidates, so the
search can be saved to a JSON checkpoint after any playout and continued, in the same process or
after a crash, exactly as if it had not stopped (``search(..., checkpoint=, resume=)``).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mc_envs._numba import Dispatcher, instantiate
from mc_envs.agents.base import NEG_INF, SearchResult, Slot, StopCode
from mc_envs.agents.common import count_playout, record
from mc_envs.agents.nested.nmcs_parallel import moves_search
from mc_envs.agents.ops import (
    bind_generic,
    compiled_ops,
    copy_state,
    generic_policy,
    legal,
    play,
    playout,
    score,
)
from mc_envs.agents.parallel.root import root_search
from mc_envs.agents.runner import NestedAgent, Runner
from mc_envs.core import unwrap
from mc_envs.rng import plain_rng_state, rng_below

if TYPE_CHECKING:
    import gymnasium as gym
    from numba.core.registry import CPUDispatcher

    from mc_envs.agents.checkpoint import Checker
    from mc_envs.agents.nested.nmcs_parallel import Moving
    from mc_envs.core import PolicyFactory
    from mc_envs.kernel import Kernel

# A level's resumable state, one row per level: frames[level, F_*] (int64) and scores[level, S_*].
F_ACTIVE, F_PLAYED, F_NEXT, F_TIES, F_STEP_MOVE, F_STEP_TIES = range(6)
S_BEST, S_STEP_BEST = range(2)
FRAME_SIZE = 6

Nest = namedtuple("Nest", "moves seqs lens path frames scores run_best")
Nest.__doc__ = """The arrays of one NMCS search, one row per level (``level + 2`` rows).

Attributes:
    moves: ``[level, action]`` the legal moves of each level's current step.
    seqs, lens: each level's best sequence from its start, ``seqs[l, :lens[l]]``; row ``L + 1``
        holds the best completed run.
    path: the moves from the root to the state being searched.
    frames, scores: each level's loop state (``F_*``, ``S_*``) while paused.
    run_best: ``[score]`` of the best completed run.
"""

Knobs = namedtuple("Knobs", "policy memorize")
Knobs.__doc__ = """NMCS's settings: the playout policy (a kernel's code, or a generic factory) and
whether the best sequence is memorised."""


# A compiled template longer than 60 lines on purpose: one loop runs every level, so that one
# instance per game serves every level (numba's cache does not keep a recursive function, and an
# instance per level made each level compile again all it calls); the current level's loop state
# (the moves committed, the next candidate, the best score, the tie counts) lives in locals numba
# keeps in registers, and goes to its row of frames/scores only when a child search starts.
def _nmcs(top, d0, g, a, k, rng, sh):
    """One level-``top`` search from ``g.states[top]``, whose moves from the root are path[:d0].

    Leaves the best sequence from this node in ``a.seqs[top, :a.lens[top]]`` and returns its score
    (without memorisation: the sequence actually played and its score).

    A level-``lv`` search (``lv`` >= 2) runs a level-``lv - 1`` search from ``g.states[lv - 1]``
    for each candidate: the loop saves its level's state in ``a.frames[lv]``/``a.scores[lv]``
    (``F_NEXT``: the candidate), goes down to the child, and when the child ends comes back up
    to that state with the child's score. Resumable: when the search is stopped or asked to pause
    (``control[Slot.PAUSE]``) between two candidate moves, every level under way keeps its state
    there with ``frames[lv, F_ACTIVE]`` set; called again (with the same ``states[top]``), each
    level replays its committed moves and continues exactly where it stopped.
    """
    states, ws, control = g.states, g.ws, sh.control
    moves, seqs, lens, path, frames, scores = a.moves, a.seqs, a.lens, a.path, a.frames, a.scores
    lv, d = top, d0  # the level under way and its first move's index in path
    enter, back = True, False  # a level's loop (re)starts; a child's search has just ended
    played = first = ties = step_move = step_ties = n = 0
    best = step_best = s = NEG_INF
    while True:
        if enter:  # a level starts, resumes, or its child's search ended: its state from its row
            enter = False
            if frames[lv, F_ACTIVE] != 0:
                played, first, ties = frames[lv, F_PLAYED], frames[lv, F_NEXT], frames[lv, F_TIES]
                step_move, step_ties = frames[lv, F_STEP_MOVE], frames[lv, F_STEP_TIES]
                best, step_best = scores[lv, S_BEST], scores[lv, S_STEP_BEST]
                if back:  # states[lv] untouched by the child: only d goes back
                    d -= played + 1
                else:  # resumed: its committed moves replayed
                    for j in range(played):
                        play(states, lv, path[d + j], ws)
            else:
                frames[lv, F_ACTIVE] = 1
                played = first = ties = step_move = step_ties = 0
                best = step_best = NEG_INF
            n = -1  # the step's legal moves are not listed yet
        if back:  # candidate ``first`` scored ``s`` through the child's search
            back = False
            sub = seqs[lv - 1, : lens[lv - 1]]
        else:
            if n < 0:
                if control[Slot.STOP] != StopCode.NONE or control[Slot.PAUSE] != 0:
                    break  # ``first`` is 0 except on a resumed step, which continues at ``first``
                n = legal(states, lv, ws, moves[lv])
                if n > 0 and first == 0:
                    step_best = NEG_INF
                    step_move = moves[lv, 0]
                    step_ties = 0
            if n == 0:  # the level's game is over: its search ends
                frames[lv, F_ACTIVE] = 0
                if played == 0 or not k.memorize:
                    lens[lv] = played
                    best = score(states, lv)
                    record(path, d + played, best, sh)
                if lv == top:
                    return best
                s, lv = best, lv + 1  # back to the parent, at the candidate it was trying
                enter = back = True
                continue
            if first == n:  # every candidate tried: the step's move is played
                first = 0
                m = seqs[lv, played] if k.memorize else step_move
                play(states, lv, m, ws)
                path[d + played] = m
                if not k.memorize:
                    seqs[lv, played] = m
                played += 1
                n = -1
                continue
            m = moves[lv, first]
            copy_state(states, lv - 1, lv)
            play(states, lv - 1, m, ws)
            path[d + played] = m
            start = d + played + 1
            if lv > 1:  # the child's search from the candidate's state: this level waits
                frames[lv, F_PLAYED], frames[lv, F_NEXT], frames[lv, F_TIES] = played, first, ties
                frames[lv, F_STEP_MOVE], frames[lv, F_STEP_TIES] = step_move, step_ties
                scores[lv, S_BEST], scores[lv, S_STEP_BEST] = best, step_best
                lv, d, enter = lv - 1, start, True
                continue
            n_sub = playout(states, 0, k.policy, rng, ws, path, start)
            s = score(states, 0)
            count_playout(control)
            record(path, start + n_sub, s, sh)
            sub = path[start : start + n_sub]
        # Against the best sequence (memorised) or this step's best move: a tie is taken with
        # probability 1 / (ties + 1), so that every tied candidate is equally likely.
        m = moves[lv, first]
        held, held_ties = (best, ties) if k.memorize else (step_best, step_ties)
        take = s > held
        if s == held:
            held_ties += 1
            take = rng_below(rng, held_ties + 1) == 0
        elif take:
            held_ties = 0
        if k.memorize:
            ties = held_ties
            if take:
                best = s
                seqs[lv, played] = m
                for j in range(len(sub)):  # not a slice assignment: see ops._copy_state
                    seqs[lv, played + 1 + j] = sub[j]
                lens[lv] = played + 1 + len(sub)
        else:
            step_ties = held_ties
            if take:
                step_best = s
                step_move = m
        first += 1
        if control[Slot.STOP] != StopCode.NONE or control[Slot.PAUSE] != 0:
            break
    # stopped or paused: this level's state kept (the levels above kept theirs on the way down)
    frames[lv, F_PLAYED], frames[lv, F_NEXT], frames[lv, F_TIES] = played, first, ties
    frames[lv, F_STEP_MOVE], frames[lv, F_STEP_TIES] = step_move, step_ties
    scores[lv, S_BEST], scores[lv, S_STEP_BEST] = best, step_best
    return scores[top, S_BEST]


def _iterate(level, restarts, g, a, k, rng, sh):
    """Runs complete level-``level`` searches from ``g.states[level + 1]`` until told to stop.

    ``a.run_best`` receives the best result of the completed runs: [score] and its sequence in
    ``a.seqs[level + 1]``. With ``restarts`` false, exactly one run. A run that was stopped or
    paused part-way (``frames[level, F_ACTIVE]`` set) is continued by the next call.
    """
    top = level + 1
    control, seqs, lens = sh.control, a.seqs, a.lens
    while control[Slot.STOP] == StopCode.NONE and control[Slot.PAUSE] == 0:
        copy_state(g.states, level, top)
        if level == 0:
            n = playout(g.states, 0, k.policy, rng, g.ws, a.path, 0)
            s = score(g.states, 0)
            count_playout(control)
            record(a.path, n, s, sh)
            for j in range(n):
                seqs[0, j] = a.path[j]
            lens[0] = n
        else:
            s = _nmcs(level, 0, g, a, k, rng, sh)
            if a.frames[level, F_ACTIVE] != 0:  # stopped or paused: the run continues later
                break
        control[Slot.RUNS] += 1
        if s > a.run_best[0]:
            a.run_best[0] = s
            for j in range(lens[level]):  # not a slice assignment: see ops._copy_state
                seqs[top, j] = seqs[level, j]
            lens[top] = lens[level]
        if not restarts:
            break
    return a.run_best[0]


_generic = bind_generic(_iterate, _nmcs=bind_generic(_nmcs))
_plain = bind_generic(_iterate, plain=True, _nmcs=bind_generic(_nmcs, plain=True))


def compiled_entry(kernel: Kernel) -> Dispatcher:
    """The compiled NMCS of a kernel (made once): one entry point serves every level (the
    search's first argument)."""
    ops = compiled_ops(kernel)
    return instantiate(
        _iterate, kernel.name, **ops, _nmcs=instantiate(_nmcs, kernel.name, inline=True, **ops)
    )


class NMCS(NestedAgent):
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
        workers, backend, address: parallel search (:mod:`mc_envs.agents.parallel.root`).
        parallel: how the workers share the search: ``"root"`` (the default: independent searches
            from derived seeds, the best kept) or ``"moves"`` (level >= 2: the top level's
            candidate moves, each followed by a level-(L-1) search, are evaluated on the workers;
            :func:`mc_envs.agents.nested.nmcs_parallel.moves_search`; its result does not depend on the number
            of workers).
    """

    name = "nmcs"
    schemes = {"root": root_search, "moves": moves_search}

    def __init__(
        self,
        level: int = 1,
        *,
        seed: int = 0,
        policy: str | Callable | None = None,
        memorize: bool = True,
        compiled: bool = True,
        workers: int = 1,
        backend: str = "local",
        address: str | None = None,
        parallel: str = "root",
    ) -> None:
        if level < 0:
            raise ValueError(f"level must be >= 0, got {level}")
        if parallel == "moves" and level < 2:
            raise ValueError("parallel='moves' spreads level-(L-1) searches: it needs level >= 2")
        self.level = int(level)
        self.seed = int(seed)
        self.policy = policy
        self.memorize = bool(memorize)
        self.compiled = bool(compiled)
        self.init_parallel(workers, backend, address, parallel)

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

    def program(self, env: gym.Env, runner: Runner) -> _Program:
        """This agent's search of ``env`` as a program for ``runner``."""
        return _Program(self, env, runner)


class _Program:
    """One NMCS search over one env: its arrays and entry point, for :class:`Runner`."""

    algo = "nmcs"
    steps: tuple[CPUDispatcher, ...] = ()
    fn: Callable[..., None]  # the compiled entry point or the generic search

    def __init__(self, agent: NMCS, env: gym.Env, runner: Runner) -> None:
        self.agent, self.runner = agent, runner
        self.ahead = agent
        self.params = agent.params
        base = self.base = unwrap(env)
        kernel = getattr(base, "kernel", None)
        self.fast = agent.compiled and kernel is not None and not callable(agent.policy)
        max_moves, max_actions = runner.max_moves, int(base.action_space.n)
        slots = agent.level + 2
        if (
            self.fast
            and kernel is not None
            and kernel.policies.get(agent.policy or base.default_policy) is None
        ):
            names = sorted(kernel.policies)
            raise ValueError(f"{base.game} has no playout policy {agent.policy!r}; it has {names}")
        self.bind(self.fast)
        self.a = Nest(
            moves=np.zeros((slots, max_actions), dtype=np.int64),
            seqs=np.zeros((slots, max_moves + 1), dtype=np.int64),
            lens=np.zeros(slots, dtype=np.int64),
            path=np.zeros(max_moves + 1, dtype=np.int64),
            frames=np.zeros((slots, FRAME_SIZE), dtype=np.int64),
            scores=np.zeros((slots, 2), dtype=np.float64),
            run_best=np.full(1, NEG_INF),
        )
        self.rng = plain_rng_state(agent.seed)

    def entries(self) -> list[CPUDispatcher]:
        """The compiled entry points (for :mod:`mc_envs.agents.compile_ahead`)."""
        return [compiled_entry(self.base.kernel)]

    def bind(self, fast: bool, plain: bool = False) -> None:
        """Runs on the compiled path (``fast``) or the generic one (``plain``: its helpers
        uncompiled too) from the next call on; the search's own arrays carry over, and a level
        rebuilds its state from its moves."""
        agent, base = self.agent, self.base
        self.g = self.runner.game(agent.level + 2, fast)
        policy: int | PolicyFactory
        if fast:
            name = agent.policy if isinstance(agent.policy, str) else None
            policy = base.kernel.policies[name or base.default_policy]
            self.fn = self.entries()[0]
        else:
            policy = generic_policy(base, agent.policy)
            self.fn = _plain if plain else _generic
        self.k = Knobs(policy, agent.memorize)
        self.fast = fast

    def call(self, control: np.ndarray, restarts: bool) -> None:
        sh = self.runner.shared._replace(control=control)
        self.fn(self.agent.level, restarts, self.g, self.a, self.k, self.rng, sh)

    def result(self, why: str, seconds: float) -> SearchResult:
        """The search's result: without memorisation, the best completed run's game."""
        return self.runner.result(why, seconds, self.answer())

    def answer(self) -> tuple[float, list[int]] | None:
        """Without memorisation, the best completed run (the game the search played)."""
        control, top = self.runner.control, self.agent.level + 1
        stopped = control[Slot.STOP]
        if control[Slot.RUNS] > 0 and not self.agent.memorize and stopped != StopCode.MAX_SCORE:
            return float(self.a.run_best[0]), self.a.seqs[top, : self.a.lens[top]].tolist()
        return None

    def dump(self) -> dict[str, object]:
        a = self.a
        return {
            "frames": a.frames.tolist(),
            "scores": a.scores.tolist(),
            "seqs": [_trimmed(row) for row in a.seqs],
            "lens": a.lens.tolist(),
            "path": _trimmed(a.path),
            "rng": [int(x) for x in self.rng],
            "run_best": float(a.run_best[0]),
        }

    def load(self, data: dict[str, object], check: Checker) -> None:
        a, slots = self.a, len(self.a.frames)
        max_moves, max_actions = self.runner.max_moves, a.moves.shape[1]
        frames = data.get("frames")
        if not isinstance(frames, list) or len(frames) != slots:
            raise check.fail("search.frames", f"expected {slots} rows (a level-{slots - 2} search)")
        highs = {
            F_ACTIVE: 1,
            F_PLAYED: max_moves,
            F_NEXT: max_actions,
            F_TIES: 2**62,
            F_STEP_MOVE: max_actions - 1,
            F_STEP_TIES: 2**62,
        }
        rows = []
        for r, row in enumerate(frames):
            rows.append(check.ints(row, f"search.frames[{r}]", 0, 2**62, length=FRAME_SIZE))
            for f, high in highs.items():
                if rows[r][f] > high:
                    raise check.fail(f"search.frames[{r}][{f}]", f"{rows[r][f]} > {high}")
        scores = data.get("scores")
        if not isinstance(scores, list) or len(scores) != slots:
            raise check.fail("search.scores", f"expected {slots} rows")
        scores = [check.numbers(row, f"search.scores[{r}]", 2) for r, row in enumerate(scores)]
        lens = check.ints(data.get("lens"), "search.lens", 0, max_moves, length=slots)
        seqs = data.get("seqs")
        if not isinstance(seqs, list) or len(seqs) != slots:
            raise check.fail("search.seqs", f"expected {slots} rows")
        seqs = [check.actions(row, f"search.seqs[{r}]") for r, row in enumerate(seqs)]
        path = check.actions(data.get("path"), "search.path")
        rng = check.rng(data.get("rng"), "search.rng")
        run_best = check.number(data.get("run_best"), "search.run_best")
        self._check_resume(check, rows, seqs, lens, path)
        a.frames[:] = np.asarray(rows, dtype=np.int64)
        a.scores[:] = np.asarray(scores, dtype=np.float64)
        a.lens[:] = lens
        for row, seq in enumerate(seqs):
            a.seqs[row, : len(seq)] = seq
        a.path[: len(path)] = path
        self.rng[:] = np.asarray(rng, dtype=np.uint64)
        a.run_best[0] = run_best

    def _check_resume(
        self, check: Checker, frames: list, seqs: list, lens: list, path: list
    ) -> None:
        """Refuses a paused search whose replayed moves would not be legal: every move the
        resumed levels replay or may play must be legal where it is played."""
        prefix: list[int] = []
        d0 = 0
        path = path + [0] * (self.runner.max_moves + 1 - len(path))  # saved without trailing 0s
        for level in range(self.agent.level, 0, -1):
            frame = frames[level]
            if frame[F_ACTIVE] == 0:
                return
            played, first = frame[F_PLAYED], frame[F_NEXT]
            field = f"search.path[{d0}:{d0 + played}]"
            committed = path[d0 : d0 + played]
            if len(committed) != played:
                raise check.fail(field, "runs past the longest game")
            legal = check.legal_after(prefix, committed, field)
            if first > len(legal) or len(legal) == 0:
                raise check.fail(f"search.frames[{level}][{F_NEXT}]", "no such candidate move")
            seq = (seqs[level] + [0] * lens[level])[: lens[level]]
            if self.agent.memorize and lens[level] > 0:
                if seq[:played] != committed or lens[level] <= played:
                    raise check.fail(f"search.seqs[{level}]", "does not extend the moves played")
                check.legal_after(prefix, seq, f"search.seqs[{level}]")
            elif self.agent.memorize and first > 0:
                raise check.fail(f"search.lens[{level}]", "a step under way has no best sequence")
            if not self.agent.memorize and first > 0 and frame[F_STEP_MOVE] not in legal:
                raise check.fail(f"search.frames[{level}][{F_STEP_MOVE}]", "not a legal move")
            if level == 1 or frames[level - 1][F_ACTIVE] == 0:
                return
            if first >= len(legal):
                raise check.fail(f"search.frames[{level}][{F_NEXT}]", "no candidate left")
            prefix = [*prefix, *committed, int(legal[first])]
            d0 += played + 1


def _trimmed(row: np.ndarray) -> list[int]:
    """The row without its trailing zeros (fresh arrays are zeros: loading restores them)."""
    nz = np.flatnonzero(row)
    return row[: nz[-1] + 1 if len(nz) else 0].tolist()


if TYPE_CHECKING:  # NMCS is what its moves scheme reads of it (mypy checks the assignment)
    _moving: type[Moving] = NMCS
