"""NRPA's compiled core: policy tables, move logs, the search templates and their arrays.

The weights live in one row per level of a flat array indexed by ``code mod P`` (P prime), with the
list of touched indices per row, so copying or clearing a policy costs the entries it holds, not P.
Each level's best sequence carries a *move log*, the reduced codes of the allowed moves at every
step and the index of the one played, written by the rollout that found it: adapting reads the log
instead of replaying the sequence (a sequence without one is replayed, and its log filled).
No compiled code recurses: one loop runs every level (:func:`_nrpa`), the level a number, so one
compiled instance per game serves every level; each level keeps its iteration counter and "an
iteration is under way" flag in arrays, so a search can pause at any iteration boundary and
continue exactly as if it had not stopped.

The templates are written once against the collaborators of :mod:`mc_envs.agents.ops` (``legal_codes``,
``select``, ``play``, ``score``, ``copy_state``): compiled per kernel, and run as plain Python over
the contract for any other env. Their arguments come in a few records: ``g``
(:class:`~mc_envs.agents.ops.Game`), ``a`` (:class:`Work`), ``pol`` (:class:`Tables`), ``log``
(:class:`Log`), ``k`` (:class:`Knobs`), the random stream ``rng`` and ``sh``
(:class:`~mc_envs.agents.ops.Shared`).
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable
from typing import TYPE_CHECKING

from mc_envs._numba import Dispatcher, instantiate, njit
from mc_envs.agents.base import NEG_INF, Slot, StopCode
from mc_envs.agents.common import count_playout, record
from mc_envs.agents.ops import (
    bias,
    bind_generic,
    compiled_ops,
    copy_state,
    legal_codes,
    play,
    score,
    select,
)
from mc_envs.rng import rng_uniform

if TYPE_CHECKING:
    from mc_envs.kernel import Kernel

PRIME = 524_287  # policy table size (2**19 - 1): codes are reduced modulo this prime
# (a global, so that the compiled search divides by a constant: ~10% more rollouts a second)
DELTA_CAPACITY = 1 << 20  # buffered weight changes of one adaptation before they are applied
LOG_CAPACITY = 1 << 20  # codes in one sequence's move log; a longer sequence is replayed instead

Work = namedtuple("Work", "moves codes probs bias seqs lens scores iters active reps dcode dval")
Work.__doc__ = """NRPA's per-search arrays; rows are levels (``level + 2`` rows).

Attributes:
    moves, codes, probs: one step's allowed moves, their reduced codes and probabilities.
    bias: one step's bias terms (``beta`` times the game's :attr:`~mc_envs.core.Kernel.bias`).
    seqs, lens, scores: each level's best sequence ``seqs[l, :lens[l]]`` and its score; row
        ``L + 1`` holds the best completed run.
    iters, active: each level's iteration counter and "an iteration is under way" flag.
    reps: each level's count of iterations that returned its best score again (``repeats``).
    dcode, dval: the buffered weight changes of one adaptation.
"""

Tables = namedtuple("Tables", "w mark used nused")
Tables.__doc__ = """The policies, one row per level: weights ``w[row, idx]``, ``mark[row, idx]`` set
when touched, and the touched indices ``used[row, :nused[row]]``."""

Log = namedtuple("Log", "ok codes bias off pick")
Log.__doc__ = """The move log of each row's sequence: the reduced codes of every step's allowed
moves ``codes[row, off[row, t]:off[row, t + 1]]`` and their bias terms ``bias[row, ...]`` (one
column only when ``beta`` is 0), the index of the one played ``pick[row, t]``, and ``ok[row]`` set
when the log matches ``seqs[row]``."""

Knobs = namedtuple("Knobs", "n_iter alpha key tau beta stabilize repeats plain")
Knobs.__doc__ = """NRPA's settings (:class:`mc_envs.agents.nested.nrpa.NRPA` documents them).

Attributes:
    n_iter, alpha: N iterations per level, the adaptation step.
    key: the selective policy's key (``-1``: none).
    tau, beta: GNRPA's temperature and bias weight (1 and 0: plain NRPA).
    stabilize: rollouts per level-1 iteration (Stabilized NRPA; 1: plain).
    repeats: a level ends after this many iterations returning its best score again (0: never).
    plain: 1 to key the policy by the action instead of the game's move code.
"""


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


@njit(cache=True, nogil=True, inline="always")
def draw(w, codes, terms, probs, n, tau, rng, lcodes, lbias, pos, logged, beta):
    """One rollout step: reduces the ``n`` legal ``codes`` modulo :data:`PRIME`, logs them at
    ``lcodes[pos:]`` (and their bias ``terms`` at ``lbias[pos:]`` when ``beta`` is nonzero) if
    ``logged``, weighs them by ``w`` into ``probs`` and returns the index of the one drawn."""
    for j in range(n):
        c = codes[j] % PRIME
        if logged:
            lcodes[pos + j] = c
            if beta != 0.0:
                lbias[pos + j] = terms[j]
        probs[j] = w[c] / tau + terms[j]
    u = rng_uniform(rng) * exp_weights(probs, n)
    j = 0
    acc = probs[0]
    while acc <= u and j < n - 1:
        j += 1
        acc += probs[j]
    return j


@njit(cache=True, nogil=True, inline="always")
def push(w, codes, terms, lcodes, lbias, at, biased, n, pick, tau, step, dcode, dval, nd):
    """Buffers one adaptation step's weight changes at ``dcode[nd:]``, ``dval[nd:]``: for the
    ``n`` reduced codes ``codes`` with bias ``terms``, or (``at >= 0``) those of a move log,
    ``lcodes[at:]`` with ``lbias[at:]`` if ``biased`` (zeros otherwise); ``w`` the weights,
    ``pick`` the one played. Returns ``nd + n``."""
    for j in range(n):
        if at >= 0:
            c = lcodes[at + j]
            bias_j = lbias[at + j] if biased else 0.0
        else:
            c = codes[j]
            bias_j = terms[j]
        dcode[nd + j] = c
        dval[nd + j] = w[c] / tau + bias_j
    z = exp_weights(dval[nd:], n)
    for j in range(n):
        d = -step * dval[nd + j] / z
        if j == pick:
            d += step
        dval[nd + j] = d
    return nd + n


@njit(cache=True, nogil=True)
def apply(w, mark, used, nused, row, dcode, dval, nd):
    """Adds the ``nd`` buffered changes ``dval`` at ``dcode`` to policy row ``row``."""
    for j in range(nd):
        add_weight(w, mark, used, nused, row, dcode[j], dval[j])


# -- the search, written once ---------------------------------------------------------------------


def _terms(g, i, a, n, k):
    """Prepares one step's ``n`` allowed moves of slot ``i``: keys them by the action with
    ``k.plain``, and writes their bias terms into ``a.bias`` when ``k.beta`` is nonzero (it stays
    all zeros otherwise)."""
    if k.plain != 0:
        for j in range(n):
            a.codes[j] = a.moves[j]
    if k.beta != 0.0:
        bias(g.states, i, g.ws, a.moves, n, a.bias)
        for j in range(n):
            a.bias[j] *= k.beta


def _rollout(g, a, log, w, k, rng, sh):
    """One level-0 search from ``g.states[0]`` with the weights ``w``; writes ``a.seqs[0]`` and
    row 0 of the move log, returns (score, n)."""
    states, ws = g.states, g.ws
    moves, codes, seq = a.moves, a.codes, a.seqs[0]
    lcodes, lbias, loff, lpick = log.codes[0], log.bias[0], log.off[0], log.pick[0]
    cap = len(lcodes)
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
        _terms(g, 1, a, n, k)
        j = draw(w, codes, a.bias, a.probs, n, k.tau, rng, lcodes, lbias, pos, logged, k.beta)
        m = moves[j]
        play(states, 1, m, ws)
        seq[t] = m
        if logged:
            loff[t] = pos
            lpick[t] = j
            pos += n
        t += 1
    loff[t] = pos
    log.ok[0] = 1 if logged else 0
    s = score(states, 1)
    count_playout(sh.control)
    record(seq, t, s, sh)
    return s, t


def _replay(row, g, a, log, k, t, pos, fill):
    """Replays step ``t`` of ``a.seqs[row]``: its allowed moves' reduced codes into ``a.codes``
    (and their bias), logged at ``pos`` if ``fill``; returns (n, the index played, fill)."""
    states, ws, moves, codes = g.states, g.ws, a.moves, a.codes
    lcodes, lbias = log.codes, log.bias
    m = a.seqs[row, t]
    n = legal_codes(states, 1, ws, moves, codes)
    n = select(states, 1, moves, codes, n, k.key)
    _terms(g, 1, a, n, k)
    pick = -1
    for j in range(n):
        codes[j] = codes[j] % PRIME
        if moves[j] == m:
            pick = j
    if fill and pos + n > lcodes.shape[1]:
        fill = False
    if fill:
        for j in range(n):
            lcodes[row, pos + j] = codes[j]
            if k.beta != 0.0:
                lbias[row, pos + j] = a.bias[j]
        log.off[row, t] = pos
        log.pick[row, t] = pick
    play(states, 1, m, ws)
    return n, pick, fill


def _adapt(row, g, a, pol, log, k):
    """Adapts policy row ``row`` towards ``a.seqs[row, :a.lens[row]]`` (played from
    ``g.states[0]``).

    The legal codes of every step come from the move log of the row when it holds them (the
    rollout that found the sequence wrote them); otherwise the sequence is replayed, and the log
    filled on the way for the next adaptation.
    """
    dcode, dval = a.dcode, a.dval
    w = pol.w[row]
    lcodes, lbias, loff, lpick = log.codes[row], log.bias[row], log.off[row], log.pick[row]
    step = k.alpha / k.tau
    biased = k.beta != 0.0
    length = a.lens[row]
    replay = log.ok[row] == 0
    fill = replay
    pos = 0
    if replay:
        copy_state(g.states, 1, 0)
    nd = 0
    for t in range(length):
        if replay:
            n, pick, fill = _replay(row, g, a, log, k, t, pos, fill)
            pos += n
        else:
            pick = lpick[t]
            n = loff[t + 1] - loff[t]
        if nd + n > len(dcode):  # never on the built-in games; approximate beyond
            apply(pol.w, pol.mark, pol.used, pol.nused, row, dcode, dval, nd)
            nd = 0
        at = -1 if replay else loff[t]
        nd = push(
            w, a.codes, a.bias, lcodes, lbias, at, biased, n, pick, k.tau, step, dcode, dval, nd
        )
    if fill:
        loff[length] = pos
        log.ok[row] = 1
    apply(pol.w, pol.mark, pol.used, pol.nused, row, dcode, dval, nd)


def _nrpa(top, g, a, pol, log, k, rng, sh):
    """The level-``top`` search (``top >= 1``) with policy row ``top``; resumable.

    One loop over every level, not a call per level: level ``lv``'s iteration runs its child
    (``lv - 1``) to the end before it keeps the child's best and adapts, and ``lv`` is the level
    whose loop is under way. Each level's iteration counter is ``a.iters[lv]``; ``a.active[lv]``
    says that its iteration under way already has its child initialised, so a resumed search
    goes down through the active levels into the one that was interrupted and continues it.
    Returns the level's best score; its sequence is ``a.seqs[top, :a.lens[top]]``.
    """
    control, iters, active = sh.control, a.iters, a.active
    lv = top
    while True:
        if iters[lv] < k.n_iter:
            if control[Slot.STOP] != StopCode.NONE or control[Slot.PAUSE] != 0:
                break
            if active[lv] == 0:
                if lv > 1:  # a rollout reads its parent's row: it never adapts it
                    copy_policy(pol.w, pol.mark, pol.used, pol.nused, lv - 1, lv)
                iters[lv - 1] = 0
                a.scores[lv - 1] = NEG_INF
                a.lens[lv - 1] = 0
                a.reps[lv - 1] = 0
                active[lv] = 1
            if lv > 1:
                lv -= 1  # into the child's loop
                continue
            for _ in range(k.stabilize):  # Stabilized NRPA: several rollouts, one adaptation
                s, n = _rollout(g, a, log, pol.w[1], k, rng, sh)
                a.scores[0] = s
                a.lens[0] = n
                _keep(1, a, log)
                if control[Slot.STOP] != StopCode.NONE:
                    break
        elif lv == top:
            break
        else:  # the child's loop is over: back to its parent's iteration
            lv += 1
            if control[Slot.STOP] != StopCode.NONE or control[Slot.PAUSE] != 0:
                break  # this iteration continues on resume
            _keep(lv, a, log)
        active[lv] = 0
        _adapt(lv, g, a, pol, log, k)
        iters[lv] += 1
        if k.repeats > 0 and a.reps[lv] >= k.repeats:
            iters[lv] = k.n_iter  # converged: the level ends early
    return a.scores[top]


@njit(cache=True, nogil=True)
def _keep(level, a, log):
    """Keeps the sequence of the level below as the level's best when it scores at least as
    much (``>=``, as in the paper), and counts how many times in a row the best score came back."""
    below = level - 1
    if a.scores[below] == a.scores[level]:
        a.reps[level] += 1
    else:
        a.reps[level] = 0
    if a.scores[below] >= a.scores[level]:
        n = a.lens[below]
        a.scores[level] = a.scores[below]
        for j in range(n):  # not a slice assignment: see ops._copy_state
            a.seqs[level, j] = a.seqs[below, j]
        a.lens[level] = n
        copy_log(log, level, below, n)


def _iterate(level, restarts, g, a, pol, log, k, rng, sh):
    """Runs complete level-``level`` searches from a zero policy until told to stop or pause.

    Row ``level + 1`` of ``seqs``/``lens``/``scores`` holds the best completed run;
    ``active[level + 1]`` says a run is under way. With ``restarts`` false, one run.
    """
    top = level + 1
    control = sh.control
    while control[Slot.STOP] == StopCode.NONE and control[Slot.PAUSE] == 0:
        if a.active[top] == 0:
            clear_policy(pol.w, pol.mark, pol.used, pol.nused, level)
            a.iters[level] = 0
            a.scores[level] = NEG_INF
            a.lens[level] = 0
            a.reps[level] = 0
            a.active[top] = 1
        s = _nrpa(level, g, a, pol, log, k, rng, sh)
        if control[Slot.STOP] != StopCode.NONE or control[Slot.PAUSE] != 0:
            break
        a.active[top] = 0
        control[Slot.RUNS] += 1
        if s > a.scores[top]:
            n = a.lens[level]
            a.scores[top] = s
            for j in range(n):
                a.seqs[top, j] = a.seqs[level, j]
            a.lens[top] = n
        if not restarts:
            break
    return a.scores[top]


def _generic_entry(plain: bool, keep: tuple = ()) -> tuple[Callable, Callable]:
    terms = bind_generic(_terms, plain=plain, keep=keep)
    rollout = bind_generic(_rollout, plain=plain, keep=keep, _terms=terms)
    replay = bind_generic(_replay, plain=plain, keep=keep, _terms=terms)
    adapt = bind_generic(_adapt, plain=plain, keep=keep, _replay=replay)
    nrpa = bind_generic(_nrpa, plain=plain, keep=keep, _rollout=rollout, _adapt=adapt)
    return bind_generic(_iterate, plain=plain, keep=keep, _nrpa=nrpa), adapt


GENERIC = _generic_entry(False)
"""The generic search: (entry point, adaptation), plain Python over the contract."""
PLAIN = _generic_entry(True)
"""The generic search with its helpers uncompiled too (a cold cache's stand-in)."""
STEPS = (draw, push, apply)
"""The helpers that NRPA's generic path calls at every step: 4 to 5 times faster compiled."""
QUICK = _generic_entry(True, STEPS)
"""The stand-in with :data:`STEPS` compiled (compiling them, 1 to 2 s, when the cache lacks them)."""


def compiled_entry(kernel: Kernel) -> tuple[Dispatcher, Dispatcher]:
    """The compiled NRPA of a kernel, and its compiled adaptation (made once:
    :func:`~mc_envs._numba.instantiate`'s memo). One entry point serves every level (the
    search's first argument)."""
    ops = compiled_ops(kernel)
    terms = instantiate(_terms, kernel.name, **ops)
    rollout = instantiate(_rollout, kernel.name, **ops, _terms=terms)
    replay = instantiate(_replay, kernel.name, inline=True, **ops, _terms=terms)
    adapt = instantiate(_adapt, kernel.name, **ops, _replay=replay)
    nrpa = instantiate(_nrpa, kernel.name, inline=True, **ops, _rollout=rollout, _adapt=adapt)
    entry = instantiate(_iterate, kernel.name, **ops, _nrpa=nrpa)
    return entry, adapt
