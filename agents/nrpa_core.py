"""NRPA's compiled core: policy tables, move logs, the search templates and their arrays.

The weights live in one row per level of a flat array indexed by ``code mod P`` (P prime), with the
list of touched indices per row, so copying or clearing a policy costs the entries it holds, not P.
Each level's best sequence carries a *move log*, the reduced codes of the allowed moves at every
step and the index of the one played, written by the rollout that found it: adapting reads the log
instead of replaying the sequence (a sequence without one is replayed, and its log filled).
No compiled code recurses: each level is its own compiled instance calling the one below, and each
level keeps its iteration counter and "an iteration is under way" flag in arrays, so a search can
pause at any iteration boundary and continue exactly as if it had not stopped.

The templates are written once against the collaborators of :mod:`agents.ops` (``legal_codes``,
``select``, ``play``, ``score``, ``copy_state``): compiled per kernel, and run as plain Python over
the contract for any other env. Their arguments come in a few records: ``g``
(:class:`~agents.ops.Game`), ``a`` (:class:`Work`), ``pol`` (:class:`Tables`), ``log``
(:class:`Log`), ``k`` (:class:`Knobs`), the random stream ``rng`` and ``sh``
(:class:`~agents.ops.Shared`).
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import NEG_INF, RUNS, STOP
from agents.common import count_playout, record
from agents.ops import (
    bind_generic,
    compiled_ops,
    copy_state,
    ladder,
    legal_codes,
    play,
    score,
    select,
)
from agents.runner import PAUSE
from mc_envs._numba import instantiate, njit
from mc_envs.rng import rng_state, rng_uniform

PRIME = 524_287  # policy table size (2**19 - 1): codes are reduced modulo this prime
DELTA_CAPACITY = 1 << 20  # buffered weight changes of one adaptation before they are applied
LOG_CAPACITY = 1 << 20  # codes in one sequence's move log; a longer sequence is replayed instead

Work = namedtuple("Work", "moves codes probs seqs lens scores iters active dcode dval")
Work.__doc__ = """NRPA's per-search arrays; rows are levels (``level + 2`` rows).

Attributes:
    moves, codes, probs: one step's allowed moves, their reduced codes and probabilities.
    seqs, lens, scores: each level's best sequence ``seqs[l, :lens[l]]`` and its score; row
        ``L + 1`` holds the best completed run.
    iters, active: each level's iteration counter and "an iteration is under way" flag.
    dcode, dval: the buffered weight changes of one adaptation.
"""

Tables = namedtuple("Tables", "w mark used nused")
Tables.__doc__ = """The policies, one row per level: weights ``w[row, idx]``, ``mark[row, idx]`` set
when touched, and the touched indices ``used[row, :nused[row]]``."""

Log = namedtuple("Log", "ok codes off pick")
Log.__doc__ = """The move log of each row's sequence: the reduced codes of every step's allowed
moves ``codes[row, off[row, t]:off[row, t + 1]]``, the index of the one played ``pick[row, t]``,
and ``ok[row]`` set when the log matches ``seqs[row]``."""

Knobs = namedtuple("Knobs", "n_iter alpha key prime")
Knobs.__doc__ = """NRPA's settings: N iterations per level, the adaptation step, the selective
policy's key (``-1``: none) and the table size."""


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
    lok, lcodes, loff, lpick = log.ok, log.codes, log.off, log.pick
    lok[dst] = lok[src]
    if lok[src] != 0:
        for j in range(loff[src, n]):
            lcodes[dst, j] = lcodes[src, j]
        for t in range(n):
            loff[dst, t] = loff[src, t]
            lpick[dst, t] = lpick[src, t]
        loff[dst, n] = loff[src, n]


@njit(cache=True, nogil=True)
def exp_weights(probs, n):
    """Turns the weights ``probs[:n]`` into ``exp(weight - max weight)`` in place; returns their
    sum (the softmax's denominator)."""
    top = NEG_INF
    for j in range(n):
        if probs[j] > top:
            top = probs[j]
    z = 0.0
    for j in range(n):
        e = math.exp(probs[j] - top)
        probs[j] = e
        z += e
    return z


# -- the search, written once ---------------------------------------------------------------------


def _rollout(g, a, log, w, k, rng, sh):
    """One level-0 search from ``g.states[0]`` with the weights ``w``; writes ``a.seqs[0]`` and
    row 0 of the move log, returns (score, n)."""
    states, ws = g.states, g.ws
    moves, codes, probs, seq = a.moves, a.codes, a.probs, a.seqs[0]
    lcodes, loff, lpick = log.codes, log.off, log.pick
    cap = lcodes.shape[1]
    prime = k.prime
    logged = True
    pos = 0
    copy_state(states, 1, 0)
    t = 0
    while True:
        n = legal_codes(states, 1, ws, moves, codes)
        if n == 0:
            break
        n = select(states, 1, moves, codes, n, k.key)
        if pos + n > cap:
            logged = False
        for j in range(n):
            c = codes[j] % prime
            if logged:
                lcodes[0, pos + j] = c
            probs[j] = w[c]
        u = rng_uniform(rng) * exp_weights(probs, n)
        j = 0
        acc = probs[0]
        while acc <= u and j < n - 1:
            j += 1
            acc += probs[j]
        m = moves[j]
        play(states, 1, m, ws)
        seq[t] = m
        if logged:
            loff[0, t] = pos
            lpick[0, t] = j
            pos += n
        t += 1
    loff[0, t] = pos
    log.ok[0] = 1 if logged else 0
    s = score(states, 1)
    count_playout(sh.control)
    record(seq, t, s, sh)
    return s, t


def _adapt(row, g, a, pol, log, k):
    """Adapts policy row ``row`` towards ``a.seqs[row, :a.lens[row]]`` (played from
    ``g.states[0]``).

    The legal codes of every step come from the move log of the row when it holds them (the
    rollout that found the sequence wrote them); otherwise the sequence is replayed, and the log
    filled on the way for the next adaptation.
    """
    states, ws = g.states, g.ws
    moves, codes, probs, seqs, dcode, dval = a.moves, a.codes, a.probs, a.seqs, a.dcode, a.dval
    w, mark, used, nused = pol.w, pol.mark, pol.used, pol.nused
    lcodes, loff, lpick = log.codes, log.off, log.pick
    alpha, prime = k.alpha, k.prime
    length = a.lens[row]
    replay = log.ok[row] == 0
    fill = replay
    pos = 0
    if replay:
        copy_state(states, 1, 0)
    nd = 0
    for t in range(length):
        if replay:
            m = seqs[row, t]
            n = legal_codes(states, 1, ws, moves, codes)
            n = select(states, 1, moves, codes, n, k.key)
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
            play(states, 1, m, ws)
        else:
            start = loff[row, t]
            n = loff[row, t + 1] - start
            pick = lpick[row, t]
            for j in range(n):
                codes[j] = lcodes[row, start + j]
        if nd + n > len(dcode):  # never on the built-in games; approximate beyond
            for j in range(nd):
                add_weight(w, mark, used, nused, row, dcode[j], dval[j])
            nd = 0
        for j in range(n):
            c = codes[j]
            dcode[nd + j] = c
            probs[j] = w[row, c]
        z = exp_weights(probs, n)
        for j in range(n):
            d = -alpha * probs[j] / z
            if j == pick:
                d += alpha
            dval[nd + j] = d
        nd += n
    if fill:
        loff[row, length] = pos
        log.ok[row] = 1
    for j in range(nd):
        add_weight(w, mark, used, nused, row, dcode[j], dval[j])


def _nrpa(level, g, a, pol, log, k, rng, sh):
    """The level-``level`` search (``level >= 1``) with policy row ``level``; resumable.

    Continues from ``a.iters[level]``; ``a.active[level]`` says that the iteration under way
    already has its child initialised (a resumed search re-enters the child instead of restarting
    it). Returns the level's best score; its sequence is ``a.seqs[level, :a.lens[level]]``.
    """
    control, seqs, lens, scores, iters, active = (
        sh.control,
        a.seqs,
        a.lens,
        a.scores,
        a.iters,
        a.active,
    )
    while iters[level] < k.n_iter:
        if control[STOP] != 0 or control[PAUSE] != 0:
            break
        below = level - 1
        if active[level] == 0:
            if level > 1:  # a rollout reads its parent's row: it never adapts it
                copy_policy(pol.w, pol.mark, pol.used, pol.nused, below, level)
            iters[below] = 0
            scores[below] = NEG_INF
            lens[below] = 0
            active[level] = 1
        if level == 1:
            s, n = _rollout(g, a, log, pol.w[1], k, rng, sh)
            scores[0] = s
            lens[0] = n
        else:
            _nrpa(below, g, a, pol, log, k, rng, sh)
            if control[STOP] != 0 or control[PAUSE] != 0:
                break  # the child is unfinished: this iteration continues on resume
        active[level] = 0
        if scores[below] >= scores[level]:
            n = lens[below]
            scores[level] = scores[below]
            seqs[level, :n] = seqs[below, :n]
            lens[level] = n
            copy_log(log, level, below, n)
        _adapt(level, g, a, pol, log, k)
        iters[level] += 1
    return scores[level]


def _iterate(level, restarts, g, a, pol, log, k, rng, sh):
    """Runs complete level-``level`` searches from a zero policy until told to stop or pause.

    Row ``level + 1`` of ``seqs``/``lens``/``scores`` holds the best completed run;
    ``active[level + 1]`` says a run is under way. With ``restarts`` false, one run.
    """
    top = level + 1
    control = sh.control
    while control[STOP] == 0 and control[PAUSE] == 0:
        if a.active[top] == 0:
            clear_policy(pol.w, pol.mark, pol.used, pol.nused, level)
            a.iters[level] = 0
            a.scores[level] = NEG_INF
            a.lens[level] = 0
            a.active[top] = 1
        s = _nrpa(level, g, a, pol, log, k, rng, sh)
        if control[STOP] != 0 or control[PAUSE] != 0:
            break
        a.active[top] = 0
        control[RUNS] += 1
        if s > a.scores[top]:
            n = a.lens[level]
            a.scores[top] = s
            a.seqs[top, :n] = a.seqs[level, :n]
            a.lens[top] = n
        if not restarts:
            break
    return a.scores[top]


def _no_deeper(level, g, a, pol, log, k, rng, sh):
    """Stands for the level below level 1, which is never searched (rollouts are used instead)."""
    return NEG_INF


def _generic_entry() -> tuple[Callable, Callable]:
    rollout = bind_generic(_rollout)
    adapt = bind_generic(_adapt)
    nrpa = bind_generic(_nrpa, _rollout=rollout, _adapt=adapt)
    return bind_generic(_iterate, _nrpa=nrpa), adapt


GENERIC = _generic_entry()
"""The generic search: (entry point, adaptation), plain Python over the contract."""
_entry_points: dict[tuple[str, int], tuple[Callable, Callable]] = {}


def compiled_entry(kernel: Any, level: int) -> tuple[Callable, Callable]:
    """The cached compiled NRPA of a kernel for one level (:func:`agents.ops.ladder`), and its
    compiled adaptation."""
    key = (kernel.name, level)
    found = _entry_points.get(key)
    if found is None:
        ops = compiled_ops(kernel)
        rollout = instantiate(_rollout, kernel.name, **ops)
        adapt = instantiate(_adapt, kernel.name, **ops)
        entry = ladder(
            kernel,
            level,
            step=_nrpa,
            entry=_iterate,
            bottom=_no_deeper,
            name="_nrpa",
            _rollout=rollout,
            _adapt=adapt,
        )
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

    def __init__(
        self, level: int, max_moves: int, max_actions: int, seed: int, max_delta: int, max_log: int
    ) -> None:
        rows = level + 2
        self.level, self.max_moves = level, max_moves
        self.a = Work(
            moves=np.zeros(max_actions, dtype=np.int64),
            codes=np.zeros(max_actions, dtype=np.int64),
            probs=np.zeros(max_actions, dtype=np.float64),
            seqs=np.zeros((rows, max_moves + 1), dtype=np.int64),
            lens=np.zeros(rows, dtype=np.int64),
            scores=np.full(rows, NEG_INF),
            iters=np.zeros(rows, dtype=np.int64),
            active=np.zeros(rows, dtype=np.int64),
            dcode=np.zeros(max_delta, dtype=np.int64),
            dval=np.zeros(max_delta, dtype=np.float64),
        )
        self.log = Log(
            ok=np.zeros(rows, dtype=np.int64),
            codes=np.zeros((rows, max_log), dtype=np.int32),
            off=np.zeros((rows, max_moves + 2), dtype=np.int64),
            pick=np.zeros((rows, max_moves + 1), dtype=np.int64),
        )
        self.pol = Tables(
            w=np.zeros((level + 1, PRIME), dtype=np.float64),
            mark=np.zeros((level + 1, PRIME), dtype=np.uint8),
            used=np.zeros((level + 1, PRIME), dtype=np.int32),
            nused=np.zeros(level + 1, dtype=np.int64),
        )
        self.rng = rng_state(seed)

    def policy(self, row: int) -> dict[str, list]:
        """One policy row as touched indices (in order) and their weights."""
        idx = self.pol.used[row, : self.pol.nused[row]]
        return {"index": idx.tolist(), "weight": self.pol.w[row, idx].tolist()}

    def set_policy(self, row: int, policy: dict[str, Any]) -> None:
        """Loads a policy row written by :meth:`policy` (indices already checked)."""
        p = self.pol
        clear_policy(p.w, p.mark, p.used, p.nused, row)
        idx = np.asarray(policy["index"], dtype=np.int64)
        p.w[row, idx] = np.asarray(policy["weight"], dtype=np.float64)
        p.mark[row, idx] = 1
        p.used[row, : len(idx)] = idx
        p.nused[row] = len(idx)

    def dump(self) -> dict[str, Any]:
        """JSON-ready data (lists, ints, floats) of everything that decides the search's future."""
        a = self.a
        return {
            "seqs": [row[: max(int(n), 0)].tolist() for row, n in zip(a.seqs, a.lens)],
            "lens": a.lens.tolist(),
            "scores": a.scores.tolist(),
            "iters": a.iters.tolist(),
            "active": a.active.tolist(),
            "rng": [int(x) for x in self.rng],
            "policies": [self.policy(row) for row in range(self.level + 1)],
        }

    def load(self, data: dict[str, Any], check: Any, n_iter: int) -> None:
        """Restores what :meth:`dump` wrote, after checking every value with ``check`` (an
        :class:`agents.checkpoint.Checker`): every sequence a resumed search replays must be legal
        from the searched state."""
        rows = self.level + 2
        lens = check.ints(data.get("lens"), "search.lens", 0, self.max_moves, length=rows)
        scores = check.numbers(data.get("scores"), "search.scores", length=rows)
        iters = check.ints(data.get("iters"), "search.iters", 0, n_iter, length=rows)
        active = check.ints(data.get("active"), "search.active", 0, 1, length=rows)
        seqs = data.get("seqs")
        if not isinstance(seqs, list) or len(seqs) != rows:
            raise check.fail("search.seqs", f"expected {rows} rows (a level-{self.level} search)")
        for r, seq in enumerate(seqs):
            check.actions(seq, f"search.seqs[{r}]")
            if len(seq) != lens[r]:
                raise check.fail(f"search.seqs[{r}]", f"{len(seq)} moves, lens says {lens[r]}")
            if seq:
                check.legal_after([], seq, f"search.seqs[{r}]")
        rng = check.rng(data.get("rng"), "search.rng")
        policies = data.get("policies")
        if not isinstance(policies, list) or len(policies) != self.level + 1:
            raise check.fail("search.policies", f"expected {self.level + 1} rows")
        for r, policy in enumerate(policies):
            field = f"search.policies[{r}]"
            if not isinstance(policy, dict):
                raise check.fail(field, "not an object")
            idx = check.ints(policy.get("index"), f"{field}.index", 0, PRIME - 1)
            check.numbers(policy.get("weight"), f"{field}.weight", length=len(idx))
            if len(set(idx)) != len(idx):
                raise check.fail(f"{field}.index", "an index appears twice")
        a = self.a
        a.lens[:] = lens
        a.scores[:] = scores
        a.iters[:] = iters
        a.active[:] = active
        for row, seq in enumerate(seqs):
            a.seqs[row, : len(seq)] = seq
        self.rng[:] = np.asarray(rng, dtype=np.uint64)
        self.log.ok[:] = 0  # the logs are rebuilt by the first adaptations
        for row, policy in enumerate(policies):
            self.set_policy(row, policy)
