"""Gumbel AlphaZero's root (Danihelka et al., ICLR 2022), over M trees at once.

At the root, ``k`` actions are drawn without replacement by the Gumbel-top-k trick (the largest
``g(a) + logit(a)``, with ``g`` Gumbel noise); the simulations then go to them by sequential
halving: every survivor gets the same visits in a phase, and each phase keeps the better half by
``g(a) + logit(a) + sigma(q(a))``. The action played is the best survivor by that score; the
policy target is the improved policy ``softmax(logit + sigma(completed q))``, where an unvisited
action's value is completed by a mix of the network's value and the visited ones' mean.
``sigma(q) = (c_visit + max_a N(a)) * c_scale * q`` on values rescaled to [0, 1]. Below the root
the search is PUCT's.

The root's bookkeeping here is numpy over the batch; the compiled search takes the root action
each round (``forced``) and does the rest. The completed-value transform is one compiled function,
:func:`completed_sigma`, which the root (:func:`completed_sigma_rows`) and the interior nodes
(``mc_envs.agents.mcts.puct_batch_core.select_gumbel``) share.
"""

from __future__ import annotations

import math

import numpy as np

from mc_envs._numba import njit

C_VISIT, C_SCALE = 50.0, 0.1


@njit(cache=True, nogil=True)
def completed_sigma(p, q, visits, value, n, out):  # pragma: no cover (compiled)
    """``sigma(completed q)`` of ``n`` actions, written to ``out[:n]``: ``p`` their priors,
    ``q`` the values of the visited ones (in [0, 1], for the player to move), ``visits`` their
    counts, ``value`` the node's own value. An unvisited action's value is completed by
    ``(value + N * mean) / (1 + N)`` (``N`` the visits, ``mean`` the prior-weighted mean of the
    visited values); the completed values are rescaled to [0, 1] over the ``n`` actions and
    multiplied by ``(C_VISIT + max visits) * C_SCALE``."""
    total, most, wq, w = 0.0, 0.0, 0.0, 0.0
    for k in range(n):
        if visits[k] > 0.0:
            wq += p[k] * q[k]
            w += p[k]
            total += visits[k]
            most = max(most, visits[k])
    mix = (value + total * wq / w) / (1.0 + total) if w > 0.0 else value
    lo, hi = np.inf, -np.inf
    for k in range(n):
        out[k] = q[k] if visits[k] > 0.0 else mix
        lo, hi = min(lo, out[k]), max(hi, out[k])
    scale = (C_VISIT + most) * C_SCALE / max(hi - lo, 1e-8)
    for k in range(n):
        out[k] = (out[k] - lo) * scale


@njit(cache=True, nogil=True)
def completed_sigma_rows(priors, legal, q, visits, values, out):  # pragma: no cover (compiled)
    """:func:`completed_sigma` of each row's legal actions (``[M, A]`` arrays, ``values[M]``);
    ``out`` is zero off the legal actions."""
    m, a = priors.shape
    p, qs, vs, o = np.empty(a), np.empty(a), np.empty(a), np.empty(a)
    where = np.empty(a, np.int64)
    for b in range(m):
        n = 0
        for j in range(a):
            if legal[b, j]:
                where[n], p[n], qs[n], vs[n] = j, priors[b, j], q[b, j], visits[b, j]
                n += 1
        completed_sigma(p, qs, vs, values[b], n, o)
        out[b, :] = 0.0
        for k in range(n):
            out[b, where[k]] = o[k]


def visit_schedule(k: int, simulations: int) -> np.ndarray:
    """``[simulations]``: the visit count, before the visit, of the root action that simulation
    ``i`` goes to, when sequential halving over ``k`` actions spreads ``simulations`` visits (the
    action is the best-scored of the survivors that have exactly that count)."""
    if k <= 1:
        return np.arange(simulations)
    phases = math.ceil(math.log2(k))
    out: list[int] = []
    alive, count = k, 0
    while len(out) < simulations:
        per = max(1, simulations // (phases * alive))
        for _ in range(per):
            out += [count] * alive
            count += 1
        alive = max(2, alive // 2)
    return np.array(out[:simulations], np.int64)


class GumbelRoot:
    """The root of each of M trees under Gumbel AlphaZero (see the module docstring).

    Args:
        priors: ``[M, A]`` the network's priors at the roots (zero off the legal moves).
        legal: ``[M, A]`` bool, the roots' legal moves (a row without any: a finished game).
        values: ``[M]`` the network's value of each root for the player to move, on the scale
            of the search's ``q`` (in [0, 1]).
        k: the actions considered at most.
        simulations: the visits to share among the considered actions.
        rng: the Gumbel noise's generator.
    """

    def __init__(self, priors, legal, values, k, simulations, rng) -> None:
        m, a = priors.shape
        self.legal, self.priors = legal, np.where(legal, priors, 0.0)
        with np.errstate(divide="ignore"):
            self.logits = np.where(legal, np.log(np.maximum(priors, 1e-30)), -np.inf)
        self.values = values
        self.g = np.where(legal, rng.gumbel(size=(m, a)), -np.inf)
        n_legal = legal.sum(axis=1)
        self.k = np.minimum(k, n_legal)
        ranked = np.argsort(-(self.g + self.logits), axis=1, kind="stable")
        self.considered = np.zeros((m, a), bool)
        for b in range(m):
            self.considered[b, ranked[b, : self.k[b]]] = True
        self.schedule = {int(kb): visit_schedule(int(kb), simulations) for kb in set(self.k)}

    def _q(self, visits: np.ndarray, q: np.ndarray) -> np.ndarray:
        """:func:`completed_sigma` of every root's legal actions."""
        out = np.zeros(self.priors.shape)
        v, qs = np.asarray(visits, np.float64), np.asarray(q, np.float64)
        completed_sigma_rows(
            self.priors, self.legal, qs, v, np.asarray(self.values, np.float64), out
        )
        return out

    def forced(self, r: int, visits: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``[M]``: the root action of simulation ``r`` (0-based, after the root's evaluation)
        in each tree, -1 where the game is over."""
        want = np.array([self.schedule[int(kb)][r] if kb > 0 else -1 for kb in self.k])
        score = self.g + self.logits + self._q(visits, q)
        ok = self.considered & (visits == want[:, None])
        ok |= self.considered & ~ok.any(axis=1, keepdims=True)  # (never empty, but safe)
        best = np.argmax(np.where(ok, score, -np.inf), axis=1)
        return np.where(self.k > 0, best, -1)

    def result(self, visits: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The actions to play (the best of the most visited considered actions; -1 where the
        game is over) and the improved policies ``[M, A]`` (the training targets)."""
        sig = self._q(visits, q)
        top = np.where(self.considered, visits, -1).max(axis=1, keepdims=True)
        ok = self.considered & (visits == top)
        actions = np.argmax(np.where(ok, self.g + self.logits + sig, -np.inf), axis=1)
        z = np.where(self.legal, self.logits + sig, -np.inf)
        z = z - np.where(self.legal, z, -np.inf).max(axis=1, keepdims=True, initial=-1e300)
        policy = np.where(self.legal, np.exp(z), 0.0)
        policy /= np.maximum(policy.sum(axis=1, keepdims=True), 1e-30)
        return np.where(self.k > 0, actions, -1), policy
