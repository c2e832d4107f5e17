"""Weak Schur numbers: rules on small cases, the known WS(3) = 23 and WS(4) = 66, the planners."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs import IllegalActionError
from mc_envs.agents import NMCS, NRPA
from mc_envs.envs.weak_schur import WeakSchurEnv
from mc_envs.games import weak_schur as rules
from mc_envs.testing import check_planning_env

# A partition of 1..66 into 4 weakly sum-free parts (OEIS A072842, digit i = part of integer i).
WS4 = "112122213313333333232124144444144422244144441444412223333333331222"


def make(k: int) -> WeakSchurEnv:
    env = gym.make("mc_envs/WeakSchur-v0", k=k, illegal_action="raise").unwrapped
    env.reset()
    return env


def test_parts_open_in_order_and_sums_are_refused() -> None:
    env = make(3)
    assert env.legal_actions().tolist() == [0]  # 1 goes into A
    env.step(0)
    assert env.legal_actions().tolist() == [0, 1]  # 2: A, or the first empty part B
    with pytest.raises(IllegalActionError, match="parts open in order: 2 may go into AB"):
        env.step(2)
    env.step(0)  # A = {1, 2}
    assert env.legal_actions().tolist() == [1]  # 1 + 2 = 3: not A
    with pytest.raises(IllegalActionError, match=r"\(3 in A\): 1 \+ 2 = 3, all in part A"):
        env.step(0)
    env.step(1)
    env.step(0)  # 4 in A: 2 + 2 = 4 is allowed (the summands must differ)
    assert env.parts == [[1, 2, 4], [3], []] and env.score == 4
    assert env.action_to_string(2) == "5 in C"


def test_one_part_ends_at_2() -> None:
    env = make(1)
    env.step(0)
    env.step(0)
    assert env.score == 2 == env.max_score and len(env.legal_actions()) == 0


def longest(k: int) -> tuple[int, int]:
    """Exhaustive depth-first search over the kernel: (the longest game, games ended)."""
    out = np.zeros(k, dtype=np.int64)
    best, ended, stack = 0, 0, [rules.new_state(k)]
    while stack:
        state = stack.pop()
        n = rules.legal(state, out, out)
        if n == 0:
            best, ended = max(best, int(state[rules.N])), ended + 1
        for a in out[:n].tolist():
            child = state.copy()
            rules.play(child, a, out)
            stack.append(child)
    return best, ended


@pytest.mark.parametrize("k, ws", [(1, 2), (2, 8), (3, 23)])
def test_exhaustive_search_finds_ws_and_never_more(k: int, ws: int) -> None:
    best, ended = longest(k)
    assert best == ws and ended > 0


def test_the_known_66_partition_of_4_parts_is_legal_and_final() -> None:
    first: dict[str, int] = {}
    actions = [first.setdefault(d, len(first)) for d in WS4]  # parts renamed in opening order
    env = make(4)
    for a in actions:
        env.step(a)
    assert env.score == 66 == env.max_score
    assert all(rules.is_weakly_sum_free(part) for part in env.parts)
    assert len(env.legal_actions()) == 0  # 67 fits nowhere: WS(4) = 66
    for p in range(4):
        assert rules.sum_in(env.state_view, p) is not None


def test_nmcs_and_nrpa_find_23_with_three_parts() -> None:
    env = make(3)
    result = NMCS(level=1, seed=0).search(env, playouts=20_000)
    assert result.score == 23 and result.stopped == "max_score"
    nrpa = NRPA(level=2, seed=0).search(env, playouts=50_000)
    assert nrpa.score == 23
    for a in nrpa.actions:
        env.step(a)
    assert env.score == 23


@pytest.mark.parametrize("level, playouts", [(1, 300), (2, 600)])
def test_compiled_and_generic_nmcs_agree(level: int, playouts: int) -> None:
    env = make(5)
    fast, generic = (
        NMCS(level=level, seed=7, compiled=c).search(env, playouts=playouts) for c in (True, False)
    )
    assert (fast.score, fast.actions, fast.playouts) == (
        generic.score,
        generic.actions,
        generic.playouts,
    )
    assert fast.score >= 40


def test_compiled_and_generic_nrpa_agree() -> None:
    env = make(4)
    fast, generic = (
        NRPA(level=2, iterations=10, seed=7, compiled=c).search(env, playouts=150)
        for c in (True, False)
    )
    assert (fast.score, fast.actions, fast.playouts) == (
        generic.score,
        generic.actions,
        generic.playouts,
    )


def test_conformance_and_bad_arguments() -> None:
    check_planning_env(lambda: gym.make("mc_envs/WeakSchur-v0", k=4))
    assert WeakSchurEnv().k == 5 and WeakSchurEnv().max_score is None
    assert rules.bound(5) == 1631 >= rules.BEST_KNOWN[5]
    with pytest.raises(ValueError, match=r"k \(the number of parts\) must be an integer in 1..6"):
        WeakSchurEnv(k=7)
