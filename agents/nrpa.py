"""Nested Rollout Policy Adaptation (Rosin, IJCAI 2011), with restarts and checkpoints.

A policy is a table of weights over *move codes* (a game's ``code(state, action)``, the action by
default; SameGame hashes the removed cells and their colour). A level-0 search is one rollout that
samples every move with probability proportional to ``exp(weight[code])``. A level-l search runs
``N`` iterations; each starts a level-(l-1) search from a copy of the level's policy, keeps the best
sequence seen (``>=``, as in the paper), and adapts the policy towards it: along the sequence, the
weight of the played move gains ``alpha`` and every legal move's weight loses ``alpha`` times its
probability under the policy before the adaptation.

The weights live in one row per level of a flat array indexed by ``code mod P`` (P prime), with the
list of touched indices per row, so copying or clearing a policy costs the entries it holds, not P.
Each level's best sequence carries a *move log*, the reduced codes of the allowed moves at every
step and the index of the one played, written by the rollout that found it: adapting reads the log
instead of replaying the sequence (a sequence without one is replayed, and its log filled).
No compiled code recurses: each level is its own compiled instance calling the one below, as in
:mod:`agents.nmcs`, and each level keeps its iteration counter and "an iteration is under way" flag
in arrays, so a search can pause at any iteration boundary, be saved to a JSON checkpoint, and
continue (in the same process, or after a crash) exactly as if it had not stopped.

The selective policy for SameGame (Cazenave 2016), ``policy="tabu"`` (SameGame's default): the
colour with most cells in the searched position is tabu; its groups are played, and adapted over,
only when no other group is left.

The algorithm is written once, in the templates below, against :mod:`agents.ops`: compiled per
built-in game, and run as plain Python over the contract for any other env (same result for a seed).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import (
    CONTROL_SIZE,
    ITERATIONS,
    NEG_INF,
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
from agents.ops import EnvStates, bind_generic, compiled_ops, compiled_states, move_bound
from mc_envs._numba import instantiate, njit
from mc_envs.rng import rng_state, rng_uniform

PARALLEL = ("root", "distributed")
PRIME = 524_287  # policy table size (2**19 - 1): codes are reduced modulo this prime
PAUSE = CONTROL_SIZE  # an extra control slot: pause at the next iteration boundary (checkpoints)
DELTA_CAPACITY = 1 << 20  # buffered weight changes of one adaptation before they are applied
LOG_CAPACITY = 1 << 20  # codes in one sequence's move log; a longer sequence is replayed instead


# -- policy tables: w[row, idx] weights, mark[row, idx] touched, used[row, :nused[row]] touched idx -


@njit(cache=True, nogil=True)
def clear_policy(w, mark, used, nused, row):
    """Resets a policy row to all-zero weights."""
    for j in range(nused[row]):
        k = used[row, j]
        w[row, k] = 0.0
        mark[row, k] = 0
    nused[row] = 0


@njit(cache=True, nogil=True)
def copy_policy(w, mark, used, nused, dst, src):
    """Makes policy row ``dst`` a copy of row ``src``."""
    clear_policy(w, mark, used, nused, dst)
    for j in range(nused[src]):
        k = used[src, j]
        w[dst, k] = w[src, k]
        mark[dst, k] = 1
        used[dst, j] = k
    nused[dst] = nused[src]


@njit(cache=True, nogil=True)
def add_weight(w, mark, used, nused, row, k, delta):
    """Adds ``delta`` to the weight at index ``k`` of a policy row."""
    if mark[row, k] == 0:
        mark[row, k] = 1
        used[row, nused[row]] = k
        nused[row] += 1
    w[row, k] += delta


# -- move logs: the legal codes along a sequence, kept so that adapting to it needs no replay ------


@njit(cache=True, nogil=True)
def copy_log(log, dst, src, n):
    """Makes the move log of row ``dst`` a copy of row ``src``'s first ``n`` steps."""
    lok, lcodes, loff, lpick = log
    lok[dst] = lok[src]
    if lok[src] != 0:
        for j in range(loff[src, n]):
            lcodes[dst, j] = lcodes[src, j]
        for t in range(n):
            loff[dst, t] = loff[src, t]
            lpick[dst, t] = lpick[src, t]
        loff[dst, n] = loff[src, n]


# -- move selection filters (the selective policies) ----------------------------------------------


@njit(cache=True, nogil=True)
def all_allowed(states, i, moves, codes, n, tabu):
    """No selection: every legal move may be played."""
    return n


def _samegame_filter():
    from mc_envs.games.samegame import HEADER, padded_index

    @njit(cache=True, nogil=True)
    def samegame_tabu(states, i, moves, codes, n, tabu):
        """SameGame's tabu colour: keeps the groups (and their codes) of other colours when some
        exist."""
        if tabu < 0:
            return n
        s = states[i]
        m = 0
        for j in range(n):
            if s[HEADER + padded_index(s, moves[j])] != tabu:
                m += 1
        if m == 0 or m == n:
            return n
        m = 0
        for j in range(n):
            a = moves[j]
            if s[HEADER + padded_index(s, a)] != tabu:
                moves[m] = a
                codes[m] = codes[j]
                m += 1
        return m

    return samegame_tabu


def _py_allowed(states, i, moves, codes, n, tabu):
    if tabu < 0:
        return n
    env = states.use(i)
    keep = env.board.ravel()[moves[:n]] != tabu
    m = int(keep.sum())
    if m == 0 or m == n:
        return n
    moves[:m] = moves[:n][keep]
    codes[:m] = codes[:n][keep]
    return m


# -- the search, written once ---------------------------------------------------------------------


def _rollout(
    states,
    ws,
    moves,
    codes,
    probs,
    seq,
    log,
    w,
    tabu,
    prime,
    control,
    rng,
    best_score,
    best_seq,
    best_len,
    max_score,
):
    """One level-0 search from ``states[0]`` with the weights ``w``; writes ``seq`` and row 0 of
    the move log, returns (score, n)."""
    lok, lcodes, loff, lpick = log
    cap = lcodes.shape[1]
    logged = True
    pos = 0
    copy_state(states, 1, 0)  # noqa: F821
    k = 0
    while True:
        n = legal_codes(states, 1, ws, moves, codes)  # noqa: F821
        if n == 0:
            break
        n = allowed(states, 1, moves, codes, n, tabu)  # noqa: F821
        if pos + n > cap:
            logged = False
        top = NEG_INF
        for j in range(n):
            c = codes[j] % prime
            if logged:
                lcodes[0, pos + j] = c
            x = w[c]
            probs[j] = x
            if x > top:
                top = x
        z = 0.0
        for j in range(n):
            e = math.exp(probs[j] - top)
            probs[j] = e
            z += e
        u = rng_uniform(rng) * z
        j = 0
        acc = probs[0]
        while acc <= u and j < n - 1:
            j += 1
            acc += probs[j]
        m = moves[j]
        play(states, 1, m, ws)  # noqa: F821
        seq[k] = m
        if logged:
            loff[0, k] = pos
            lpick[0, k] = j
            pos += n
        k += 1
    loff[0, k] = pos
    lok[0] = 1 if logged else 0
    s = score(states, 1)  # noqa: F821
    count_playout(control)
    record(seq, k, s, control, best_score, best_seq, best_len, max_score)
    return s, k


def _adapt(
    row,
    seqs,
    lens,
    log,
    states,
    ws,
    moves,
    codes,
    probs,
    w,
    mark,
    used,
    nused,
    dcode,
    dval,
    alpha,
    tabu,
    prime,
):
    """Adapts policy row ``row`` towards ``seqs[row, :lens[row]]`` (played from ``states[0]``).

    The legal codes of every step come from the move log of the row when it holds them (the
    rollout that found the sequence wrote them); otherwise the sequence is replayed, and the log
    filled on the way for the next adaptation.
    """
    lok, lcodes, loff, lpick = log
    length = lens[row]
    replay = lok[row] == 0
    fill = replay
    pos = 0
    if replay:
        copy_state(states, 1, 0)  # noqa: F821
    nd = 0
    for t in range(length):
        if replay:
            m = seqs[row, t]
            n = legal_codes(states, 1, ws, moves, codes)  # noqa: F821
            n = allowed(states, 1, moves, codes, n, tabu)  # noqa: F821
            pick = -1
            for j in range(n):
                codes[j] = codes[j] % prime
                if moves[j] == m:
                    pick = j
            if fill and pos + n > lcodes.shape[1]:
                fill = False
            if fill:
                for j in range(n):
                    lcodes[row, pos + j] = codes[j]
                loff[row, t] = pos
                lpick[row, t] = pick
                pos += n
            play(states, 1, m, ws)  # noqa: F821
        else:
            a = loff[row, t]
            n = loff[row, t + 1] - a
            pick = lpick[row, t]
            for j in range(n):
                codes[j] = lcodes[row, a + j]
        if nd + n > len(dcode):  # never on the built-in games; approximate beyond
            for j in range(nd):
                add_weight(w, mark, used, nused, row, dcode[j], dval[j])
            nd = 0
        top = NEG_INF
        for j in range(n):
            c = codes[j]
            dcode[nd + j] = c
            x = w[row, c]
            probs[j] = x
            if x > top:
                top = x
        z = 0.0
        for j in range(n):
            e = math.exp(probs[j] - top)
            probs[j] = e
            z += e
        for j in range(n):
            d = -alpha * probs[j] / z
            if j == pick:
                d += alpha
            dval[nd + j] = d
        nd += n
    if fill:
        loff[row, length] = pos
        lok[row] = 1
    for j in range(nd):
        add_weight(w, mark, used, nused, row, dcode[j], dval[j])


def _nrpa(
    level,
    n_iter,
    states,
    ws,
    moves,
    codes,
    probs,
    seqs,
    lens,
    log,
    scores,
    iters,
    active,
    w,
    mark,
    used,
    nused,
    dcode,
    dval,
    alpha,
    tabu,
    prime,
    control,
    rng,
    best_score,
    best_seq,
    best_len,
    max_score,
):
    """The level-``level`` search (``level >= 1``) with policy row ``level``; resumable.

    Continues from ``iters[level]``; ``active[level]`` says that the iteration under way already
    has its child initialised (a resumed search re-enters the child instead of restarting it).
    Returns the level's best score; its sequence is ``seqs[level, :lens[level]]``.
    """
    while iters[level] < n_iter:
        if control[STOP] != 0 or control[PAUSE] != 0:
            break
        below = level - 1
        if active[level] == 0:
            if level > 1:  # a rollout reads its parent's row: it never adapts it
                copy_policy(w, mark, used, nused, below, level)
            iters[below] = 0
            scores[below] = NEG_INF
            lens[below] = 0
            active[level] = 1
        if level == 1:
            s, k = _rollout(
                states,
                ws,
                moves,
                codes,
                probs,
                seqs[0],
                log,
                w[1],
                tabu,
                prime,
                control,
                rng,
                best_score,
                best_seq,
                best_len,
                max_score,
            )
            scores[0] = s
            lens[0] = k
        else:
            _nrpa(
                below,
                n_iter,
                states,
                ws,
                moves,
                codes,
                probs,
                seqs,
                lens,
                log,
                scores,
                iters,
                active,
                w,
                mark,
                used,
                nused,
                dcode,
                dval,
                alpha,
                tabu,
                prime,
                control,
                rng,
                best_score,
                best_seq,
                best_len,
                max_score,
            )
            if control[STOP] != 0 or control[PAUSE] != 0:
                break  # the child is unfinished: this iteration continues on resume
        active[level] = 0
        if scores[below] >= scores[level]:
            n = lens[below]
            scores[level] = scores[below]
            seqs[level, :n] = seqs[below, :n]
            lens[level] = n
            copy_log(log, level, below, n)
        _adapt(
            level,
            seqs,
            lens,
            log,
            states,
            ws,
            moves,
            codes,
            probs,
            w,
            mark,
            used,
            nused,
            dcode,
            dval,
            alpha,
            tabu,
            prime,
        )
        iters[level] += 1
    return scores[level]


def _iterate(
    level,
    restarts,
    n_iter,
    states,
    ws,
    moves,
    codes,
    probs,
    seqs,
    lens,
    log,
    scores,
    iters,
    active,
    w,
    mark,
    used,
    nused,
    dcode,
    dval,
    alpha,
    tabu,
    prime,
    control,
    rng,
    best_score,
    best_seq,
    best_len,
    max_score,
):
    """Runs complete level-``level`` searches from a zero policy until told to stop or pause.

    Row ``level + 1`` of ``seqs``/``lens``/``scores`` holds the best completed run;
    ``active[level + 1]`` says a run is under way. With ``restarts`` false, one run.
    """
    top = level + 1
    while control[STOP] == 0 and control[PAUSE] == 0:
        if active[top] == 0:
            clear_policy(w, mark, used, nused, level)
            iters[level] = 0
            scores[level] = NEG_INF
            lens[level] = 0
            active[top] = 1
        s = _nrpa(
            level,
            n_iter,
            states,
            ws,
            moves,
            codes,
            probs,
            seqs,
            lens,
            log,
            scores,
            iters,
            active,
            w,
            mark,
            used,
            nused,
            dcode,
            dval,
            alpha,
            tabu,
            prime,
            control,
            rng,
            best_score,
            best_seq,
            best_len,
            max_score,
        )
        if control[STOP] != 0 or control[PAUSE] != 0:
            break
        active[top] = 0
        control[RUNS] += 1
        if s > scores[top]:
            n = lens[level]
            scores[top] = s
            seqs[top, :n] = seqs[level, :n]
            lens[top] = n
        if not restarts:
            break
    return scores[top]


def _no_deeper(
    level,
    n_iter,
    states,
    ws,
    moves,
    codes,
    probs,
    seqs,
    lens,
    log,
    scores,
    iters,
    active,
    w,
    mark,
    used,
    nused,
    dcode,
    dval,
    alpha,
    tabu,
    prime,
    control,
    rng,
    best_score,
    best_seq,
    best_len,
    max_score,
):
    """Stands for the level below level 1, which is never searched (rollouts are used instead)."""
    return NEG_INF


def _generic_entry() -> Callable:
    common = {"allowed": _py_allowed}
    rollout = bind_generic(_rollout, **common)
    adapt = bind_generic(_adapt, **common)
    nrpa = bind_generic(_nrpa, _rollout=rollout, _adapt=adapt, **common)
    return bind_generic(_iterate, _nrpa=nrpa, **common), adapt


_generic, _generic_adapt = _generic_entry()
_entry_points: dict[tuple[str, int], tuple[Callable, Callable]] = {}


def compiled_entry(kernel: Any, level: int) -> tuple[Callable, Callable]:
    """The cached compiled NRPA of a kernel for one level, and its compiled adaptation."""
    key = (kernel.name, level)
    found = _entry_points.get(key)
    if found is None:
        ops = compiled_ops(kernel)
        selective = _samegame_filter() if kernel.name == "samegame" else all_allowed
        common = dict(ops, allowed=selective)
        rollout = instantiate(_rollout, kernel.name, **common)
        adapt = instantiate(_adapt, kernel.name, **common)
        below = instantiate(_no_deeper, kernel.name)
        for lv in range(1, level + 1):
            below = instantiate(
                _nrpa, f"{kernel.name}_l{lv}", **common, _rollout=rollout, _adapt=adapt, _nrpa=below
            )
        entry = instantiate(_iterate, f"{kernel.name}_l{level}", **common, _nrpa=below)
        found = _entry_points[key] = (entry, adapt)
    return found


# -- the search's state, in arrays (what a checkpoint holds) ---------------------------------------


class SearchState:
    """Every array of one NRPA search; ``dump``/``load`` turn it into JSON-ready data and back.

    Args:
        level: the search level.
        max_moves: longest game.
        max_actions: size of the action space.
        seed: seeds the random stream.
        max_delta: capacity of the buffered weight changes.
        max_log: capacity of each row's move log (codes over all of a sequence's steps).
    """

    ARRAYS = ("seqs", "lens", "scores", "iters", "active", "rng")

    def __init__(
        self, level: int, max_moves: int, max_actions: int, seed: int, max_delta: int, max_log: int
    ) -> None:
        rows = level + 2
        self.level = level
        self.moves = np.zeros(max_actions, dtype=np.int64)
        self.codes = np.zeros(max_actions, dtype=np.int64)
        self.probs = np.zeros(max_actions, dtype=np.float64)
        self.seqs = np.zeros((rows, max_moves + 1), dtype=np.int64)
        self.lens = np.zeros(rows, dtype=np.int64)
        self.scores = np.full(rows, NEG_INF)
        self.iters = np.zeros(rows, dtype=np.int64)
        self.active = np.zeros(rows, dtype=np.int64)
        # the move log of each row's sequence: the reduced codes of every step's allowed moves
        # (lcodes[row, loff[row, t]:loff[row, t + 1]]) and the index of the one played
        # (lpick[row, t]); lok[row] says that the log matches seqs[row]
        self.lok = np.zeros(rows, dtype=np.int64)
        self.lcodes = np.zeros((rows, max_log), dtype=np.int32)
        self.loff = np.zeros((rows, max_moves + 2), dtype=np.int64)
        self.lpick = np.zeros((rows, max_moves + 1), dtype=np.int64)
        self.log = (self.lok, self.lcodes, self.loff, self.lpick)
        self.w = np.zeros((level + 1, PRIME), dtype=np.float64)
        self.mark = np.zeros((level + 1, PRIME), dtype=np.uint8)
        self.used = np.zeros((level + 1, PRIME), dtype=np.int32)
        self.nused = np.zeros(level + 1, dtype=np.int64)
        self.dcode = np.zeros(max_delta, dtype=np.int64)
        self.dval = np.zeros(max_delta, dtype=np.float64)
        self.rng = rng_state(seed)

    def policy(self, row: int) -> dict[str, list]:
        """One policy row as touched indices (in order) and their weights."""
        idx = self.used[row, : self.nused[row]]
        return {"index": idx.tolist(), "weight": self.w[row, idx].tolist()}

    def set_policy(self, row: int, policy: dict[str, list]) -> None:
        """Loads a policy row written by :meth:`policy`."""
        clear_policy(self.w, self.mark, self.used, self.nused, row)
        idx = np.asarray(policy["index"], dtype=np.int64)
        self.w[row, idx] = np.asarray(policy["weight"], dtype=np.float64)
        self.mark[row, idx] = 1
        self.used[row, : len(idx)] = idx
        self.nused[row] = len(idx)

    def dump(self) -> dict[str, Any]:
        """JSON-ready data (lists, ints, floats) of everything that decides the search's future."""
        data: dict[str, Any] = {name: getattr(self, name).tolist() for name in self.ARRAYS}
        data["seqs"] = [row[: max(int(n), 0)].tolist() for row, n in zip(self.seqs, self.lens)]
        data["rng"] = [int(x) for x in self.rng]
        data["policies"] = [self.policy(row) for row in range(self.level + 1)]
        return data

    def load(self, data: dict[str, Any]) -> None:
        """Restores what :meth:`dump` wrote."""
        for name in ("lens", "scores", "iters", "active"):
            getattr(self, name)[:] = np.asarray(data[name], dtype=getattr(self, name).dtype)
        for row, seq in enumerate(data["seqs"]):
            self.seqs[row, : len(seq)] = seq
        self.rng[:] = np.asarray(data["rng"], dtype=np.uint64)
        self.lok[:] = 0  # the logs are rebuilt by the first adaptations
        for row, policy in enumerate(data["policies"]):
            self.set_policy(row, policy)


class NRPA:
    """Nested Rollout Policy Adaptation.

    Args:
        level: nesting level, 1 or more (Rosin's best results use 3 to 5).
        iterations: N, the iterations of every level (100 in the paper).
        alpha: the adaptation step (1.0 in the paper).
        seed: seeds the search's random stream; a fixed seed and playout budget give a fixed result.
        policy: ``"random"`` (plain NRPA: every legal move may be sampled), ``"tabu"`` (SameGame's
            selective policy: the tabu colour of Cazenave 2016), or ``None`` for the game's default
            (``"tabu"`` for SameGame, ``"random"`` otherwise). A tuple of names is a portfolio for
            root parallelism: worker ``i`` searches with name ``i % len(policy)``.
        compiled: use the game's compiled search when it has one (True, the default), or force the
            generic Python path (False: slower, same result).
        workers: processes (or Ray tasks) searching in parallel.
        backend: ``"local"`` (processes, the default) or ``"ray"``.
        address: the Ray cluster to join (``backend="ray"``); ``None`` starts or joins a local one.
        parallel: how ``workers > 1`` share the search: ``"root"`` (the default: independent
            searches from derived seeds, the best kept, :mod:`agents.parallel`) or
            ``"distributed"`` (Negrevergne & Cazenave 2017: the top level's policy stays with the
            caller, and its iterations run as level-(L-1) searches on the workers, ``workers``
            at a time; see :func:`agents.nrpa_distributed.distributed_search`).
    """

    name = "nrpa"

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
    ) -> None:
        if level < 1:
            raise ValueError(f"level must be >= 1, got {level}")
        if iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {iterations}")
        names = tuple(policy) if isinstance(policy, (tuple, list)) else (policy,)
        if not names or any(name not in (None, "random", "tabu") for name in names):
            raise ValueError(
                f"NRPA policy must be None, 'random', 'tabu' or a tuple of them, got {policy!r}"
            )
        if len(names) > 1 and (parallel != "root" or workers < len(names)):
            raise ValueError(
                f"a policy portfolio {names} needs parallel='root' and at least {len(names)} workers"
            )
        policy = names if len(names) > 1 else names[0]
        self.level = int(level)
        self.iterations = int(iterations)
        self.alpha = float(alpha)
        self.seed = int(seed)
        self.policy = policy
        self.compiled = bool(compiled)
        if parallel not in PARALLEL:
            raise ValueError(f"parallel must be one of {PARALLEL}, got {parallel!r}")
        if parallel == "distributed" and level < 2:
            raise ValueError("distributed NRPA spreads level-(L-1) searches: it needs level >= 2")
        from agents.parallel import check_parallel

        check_parallel(workers, backend)
        self.workers = int(workers)
        self.backend = backend
        self.address = address
        self.parallel = parallel

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
        }

    def _tabu(self, base: Any) -> int:
        name = self.policy
        samegame = getattr(base, "game", None) == "SameGame"
        if name is None:
            name = "tabu" if samegame else "random"
        if name == "random":
            return -1
        if not samegame:
            raise ValueError(
                f"NRPA policy 'tabu' is SameGame's; {type(base).__name__} has 'random'"
            )
        from mc_envs.games.samegame import tabu_color

        return int(tabu_color(base._state))

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
        from a zero policy until the budget ends, and stops as soon as the env's ``max_score`` is
        reached; the best sequence found is returned.

        Args:
            checkpoint: a JSON file where the search's state is saved every ``checkpoint_every``
                seconds and at the end (atomically).
            resume: continue the search saved in ``checkpoint`` (same env state and parameters);
                budgets count from the start of the saved search (playouts, runs), the time limit
                from now.
        """
        if self.workers > 1:
            from agents.parallel import parallel_search

            if checkpoint is not None:
                raise ValueError("a checkpoint holds one search: use workers=1 with checkpoint=")
            if self.parallel == "distributed":
                from agents.nrpa_distributed import distributed_search

                return distributed_search(
                    self,
                    env,
                    time_limit=time_limit,
                    playouts=playouts,
                    iterations=iterations,
                    callback=callback,
                )
            return parallel_search(
                self,
                env,
                time_limit=time_limit,
                playouts=playouts,
                iterations=iterations,
                callback=callback,
            )
        return _Run(self, env, playouts, iterations, timed=time_limit is not None).run(
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
    """One NRPA search over one env: its arrays, its entry point, and the pause/save loop."""

    def __init__(
        self,
        agent: NRPA,
        env: Any,
        playouts: int | None,
        iterations: int | None,
        timed: bool = False,
    ):
        self.agent = agent
        base = self.base = env.unwrapped
        kernel = getattr(base, "kernel", None)
        self.fast = agent.compiled and kernel is not None
        self.tabu = agent._tabu(base)
        self.iterations = iterations
        self.restarts = timed or any(b is not None for b in (playouts, iterations))
        max_moves = move_bound(base)
        max_actions = int(base.action_space.n)
        if self.fast:
            self.states = compiled_states(base, 2)
            self.ws = kernel.workspace(self.states[0])
            self.fn, self.adapt = compiled_entry(kernel, agent.level)
            self.snapshot = None
        else:
            self.snapshot = base.clone_state()
            self.states = EnvStates(base, 2)
            self.ws = None
            self.fn, self.adapt = _generic, _generic_adapt
        delta = min(max_moves * max_actions, DELTA_CAPACITY)
        log = min(max_moves * max_actions, LOG_CAPACITY)
        self.s = SearchState(agent.level, max_moves, max_actions, agent.seed, max(delta, 1), log)
        bound = getattr(base, "max_score", None)
        self.max_score = float(bound) if self.restarts and bound is not None else 1.0e300
        control = new_control(playouts, None)
        self.control = np.zeros(CONTROL_SIZE + 2, dtype=np.int64)
        self.control[:CONTROL_SIZE] = control
        self.best = Best(max_moves)

    def call(self, level: int, restarts: bool, control: np.ndarray) -> float:
        s = self.s
        return self.fn(
            level,
            restarts,
            self.agent.iterations,
            self.states,
            self.ws,
            s.moves,
            s.codes,
            s.probs,
            s.seqs,
            s.lens,
            s.log,
            s.scores,
            s.iters,
            s.active,
            s.w,
            s.mark,
            s.used,
            s.nused,
            s.dcode,
            s.dval,
            self.agent.alpha,
            self.tabu,
            PRIME,
            control,
            s.rng,
            self.best.score,
            self.best.seq,
            self.best.length,
            self.max_score,
        )

    def warm_up(self) -> None:
        """Compiles (or loads from the cache) before the clock starts."""
        if self.fast:
            idle = np.zeros_like(self.control)
            idle[STOP] = 1
            self.call(self.agent.level, False, idle)

    # -- checkpoints ------------------------------------------------------------------------------

    def dump(self) -> dict[str, Any]:
        from agents.checkpoint import state_fingerprint

        score, actions = self.best.read(self.control)
        return {
            "format": "mc-envs/checkpoint",
            "version": 1,
            "algo": "nrpa",
            "params": {**self.agent.params, "tabu": self.tabu},
            "state": state_fingerprint(self.base),
            "best": {"score": score, "actions": actions},
            "control": {
                "playouts": int(self.control[PLAYOUTS]),
                "runs": int(self.control[RUNS]),
                "iterations": int(self.control[ITERATIONS]),
            },
            "search": self.s.dump(),
        }

    def load(self, data: dict[str, Any]) -> None:
        from agents.checkpoint import check_checkpoint

        check_checkpoint(data, "nrpa", {**self.agent.params, "tabu": self.tabu}, self.base)
        self.s.load(data["search"])
        best = data["best"]
        n = len(best["actions"])
        self.best.seq[:n] = best["actions"]
        self.best.length[0] = n
        self.best.score[0] = best["score"]
        self.control[PLAYOUTS] = data["control"]["playouts"]
        self.control[RUNS] = data["control"]["runs"]
        self.control[ITERATIONS] = data["control"]["iterations"]

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
        level = self.agent.level
        done = threading.Event()

        def ticker() -> None:  # asks the search to pause at the next iteration boundary
            while not done.wait(checkpoint_every):
                control[PAUSE] = 1

        def work() -> None:
            runs_left = self.iterations
            if runs_left is not None:
                runs_left -= int(control[RUNS])
                if runs_left <= 0:
                    return
            while True:
                before = int(control[RUNS])
                self.call(level, self.restarts and self.iterations is None, control)
                if control[PAUSE] != 0:
                    write_checkpoint(checkpoint, self.dump())
                    control[PAUSE] = 0
                    continue
                if runs_left is None:
                    return
                runs_left -= int(control[RUNS]) - before
                if runs_left <= 0 or control[STOP] != 0:
                    return

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
        score, actions = self.best.read(control)
        if score == NEG_INF:
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
            extra={"level_iterations": self.s.iters.tolist()},
        )
