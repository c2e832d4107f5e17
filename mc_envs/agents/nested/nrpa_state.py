"""NRPA's search state in arrays: what a checkpoint holds, written and checked on load."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mc_envs.agents.base import NEG_INF
from mc_envs.agents.nested.nrpa_core import PRIME, Log, Tables, Work, clear_policy
from mc_envs.rng import plain_rng_state

if TYPE_CHECKING:
    from mc_envs.agents.checkpoint import Checker


class SearchState:
    """Every array of one NRPA search; ``dump``/``load`` turn it into JSON-ready data and back.

    Args:
        level: the search level.
        max_moves: longest game.
        max_actions: size of the action space.
        seed: seeds the random stream.
        max_delta: capacity of the buffered weight changes.
        max_log: capacity of each row's move log (codes over all of a sequence's steps).
        biased: whether the logs keep bias terms (GNRPA with a nonzero ``beta``).
    """

    def __init__(
        self,
        level: int,
        max_moves: int,
        max_actions: int,
        seed: int,
        max_delta: int,
        max_log: int,
        biased: bool = False,
    ) -> None:
        rows = level + 2
        self.level, self.max_moves = level, max_moves
        self.a = Work(
            moves=np.zeros(max_actions, dtype=np.int64),
            codes=np.zeros(max_actions, dtype=np.int64),
            probs=np.zeros(max_actions, dtype=np.float64),
            bias=np.zeros(max_actions, dtype=np.float64),
            seqs=np.zeros((rows, max_moves + 1), dtype=np.int64),
            lens=np.zeros(rows, dtype=np.int64),
            scores=np.full(rows, NEG_INF),
            iters=np.zeros(rows, dtype=np.int64),
            active=np.zeros(rows, dtype=np.int64),
            reps=np.zeros(rows, dtype=np.int64),
            dcode=np.zeros(max_delta, dtype=np.int64),
            dval=np.zeros(max_delta, dtype=np.float64),
        )
        self.log = Log(
            ok=np.zeros(rows, dtype=np.int64),
            codes=np.zeros((rows, max_log), dtype=np.int32),
            bias=np.zeros((rows, max_log if biased else 1), dtype=np.float64),
            off=np.zeros((rows, max_moves + 2), dtype=np.int64),
            pick=np.zeros((rows, max_moves + 1), dtype=np.int64),
        )
        self.pol = Tables(
            w=np.zeros((level + 1, PRIME), dtype=np.float64),
            mark=np.zeros((level + 1, PRIME), dtype=np.uint8),
            used=np.zeros((level + 1, PRIME), dtype=np.int32),
            nused=np.zeros(level + 1, dtype=np.int64),
        )
        self.rng = plain_rng_state(seed)

    def policy(self, row: int) -> dict[str, list]:
        """One policy row as touched indices (in order) and their weights."""
        idx = self.pol.used[row, : self.pol.nused[row]]
        return {"index": idx.tolist(), "weight": self.pol.w[row, idx].tolist()}

    def set_policy(self, row: int, policy: dict[str, object]) -> None:
        """Loads a policy row written by :meth:`policy` (indices already checked)."""
        p = self.pol
        clear_policy(p.w, p.mark, p.used, p.nused, row)
        idx = np.asarray(policy["index"], dtype=np.int64)
        p.w[row, idx] = np.asarray(policy["weight"], dtype=np.float64)
        p.mark[row, idx] = 1
        p.used[row, : len(idx)] = idx
        p.nused[row] = len(idx)

    def dump(self) -> dict[str, object]:
        """JSON-ready data (lists, ints, floats) of everything that decides the search's future."""
        a = self.a
        return {
            "seqs": [row[: max(int(n), 0)].tolist() for row, n in zip(a.seqs, a.lens)],
            "lens": a.lens.tolist(),
            "scores": a.scores.tolist(),
            "iters": a.iters.tolist(),
            "active": a.active.tolist(),
            "reps": a.reps.tolist(),
            "rng": [int(x) for x in self.rng],
            "policies": [self.policy(row) for row in range(self.level + 1)],
        }

    def load(self, data: dict[str, object], check: Checker, n_iter: int) -> None:
        """Restores what :meth:`dump` wrote, after checking every value with ``check`` (an
        :class:`mc_envs.agents.checkpoint.Checker`): every sequence a resumed search replays must be legal
        from the searched state."""
        rows = self.level + 2
        lens = check.ints(data.get("lens"), "search.lens", 0, self.max_moves, length=rows)
        scores = check.numbers(data.get("scores"), "search.scores", length=rows)
        iters = check.ints(data.get("iters"), "search.iters", 0, n_iter, length=rows)
        active = check.ints(data.get("active"), "search.active", 0, 1, length=rows)
        reps = [0] * rows  # checkpoints written before limited repetitions have none
        if "reps" in data:
            reps = check.ints(data["reps"], "search.reps", 0, 1 << 62, length=rows)
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
        a.reps[:] = reps
        for row, seq in enumerate(seqs):
            a.seqs[row, : len(seq)] = seq
        self.rng[:] = np.asarray(rng, dtype=np.uint64)
        self.log.ok[:] = 0  # the logs are rebuilt by the first adaptations
        for row, policy in enumerate(policies):
            self.set_policy(row, policy)
