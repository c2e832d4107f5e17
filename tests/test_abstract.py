"""LeftMove and LeftmostPath: scores of hand-made walks, policies, and the NMCS theory."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from mc_envs import IllegalActionError
from mc_envs.envs.abstract import LeftmostPathEnv, LeftMoveEnv
from mc_envs.games import abstract as A
from mc_envs.rng import Rng, rng_state

L, R = 0, 1


@pytest.mark.parametrize(
    ("actions", "leftmove", "leftmostpath"),
    [
        ([L, L, L], 3, 3),
        ([R, R, R], 0, 0),
        ([L, R, L], 2, 1),
        ([R, L, L], 2, 0),
        ([L, L, R], 2, 2),
        ([L, L, L, L, R, L, L, L, L, L], 9, 4),
    ],
)
def test_scores_of_hand_made_walks(actions: list[int], leftmove: int, leftmostpath: int) -> None:
    for cls, want in [(LeftMoveEnv, leftmove), (LeftmostPathEnv, leftmostpath)]:
        env = cls(depth=len(actions), illegal_action="raise")
        env.reset()
        rewards = []
        for i, a in enumerate(actions):
            assert env.legal_actions().tolist() == [0, 1]
            obs, reward, terminated, truncated, info = env.step(a)
            rewards.append(reward)
            assert terminated == (i == len(actions) - 1) and not truncated
            assert obs[0] == i + 1
        assert rewards[:-1] == [0.0] * (len(actions) - 1) and rewards[-1] == want
        assert env.score == want == info["score"]
        assert env.legal_actions().size == 0 and not env.action_masks().any()
        with pytest.raises(IllegalActionError, match="game is over"):
            env.step(0)


def test_paper_figures_depth_3() -> None:
    """Figures 1 and 2 of the paper: the leaves of a depth-3 tree, left to right."""
    leaves = [[(i >> (2 - k)) & 1 for k in range(3)] for i in range(8)]
    for cls, want in [
        (LeftmostPathEnv, [3, 2, 1, 1, 0, 0, 0, 0]),
        (LeftMoveEnv, [3, 2, 2, 1, 2, 1, 1, 0]),
    ]:
        scores = []
        for walk in leaves:
            env = cls(depth=3)
            env.reset()
            for a in walk:
                env.step(a)
            scores.append(env.score)
        assert scores == want


def test_spaces_errors_and_registration() -> None:
    env = gym.make("mc_envs/LeftMove-v0", depth=4)
    assert env.unwrapped.max_score == 4.0 and env.action_space.n == 2
    obs, info = env.reset(seed=0)
    assert obs.tolist() == [0, 0] and info["action_mask"].tolist() == [True, True]
    with pytest.raises(IllegalActionError, match="outside the action space"):
        env.step(2)
    with pytest.raises(ValueError, match="depth"):
        LeftmostPathEnv(depth=0)
    assert gym.make("mc_envs/LeftmostPath-v0").unwrapped.depth == 10


def test_clone_restore_and_foreign_snapshots() -> None:
    env = LeftmostPathEnv(depth=6)
    env.reset()
    env.step(L)
    snap = env.clone_state()
    env.step(R)
    env.restore_state(snap)
    assert env._observation().tolist() == [1, 1]
    with pytest.raises(ValueError, match="LeftmostPath"):
        LeftMoveEnv(depth=6).restore_state(snap)
    with pytest.raises(ValueError, match="config"):
        LeftmostPathEnv(depth=7).restore_state(snap)


@pytest.mark.parametrize("env_id", ["mc_envs/LeftMove-v0", "mc_envs/LeftmostPath-v0"])
def test_check_env(env_id: str) -> None:
    check_env(gym.make(env_id, depth=5, render_mode="ansi").unwrapped)


@pytest.mark.parametrize("cls", [LeftMoveEnv, LeftmostPathEnv])
def test_kernel_playout_matches_env_policy(cls: type) -> None:
    env = cls(depth=20)
    for seed in range(5):
        env.reset()
        state = env._state.copy()
        seq = np.zeros(21, dtype=np.int64)
        rng = rng_state(seed)
        n = env.kernel.playout(state, 0, rng, env.kernel.workspace(state), seq, 0)
        chooser = env.policy("random")(env)
        generic = Rng(seed)
        played = []
        while env.legal_actions().size:
            played.append(chooser(env.legal_actions(), generic))
            env.step(played[-1])
        assert played == seq[:n].tolist() and env.score == env.kernel.score(state)


# -- theory ---------------------------------------------------------------------------------------


def test_dynamic_programme() -> None:
    p = A.score_distributions(12, 3)
    assert np.allclose(p.sum(axis=2)[:, 1:], 1.0)
    assert p[0, 12, 12] == pytest.approx(2.0**-12)
    assert p[0, 6, 3] == pytest.approx(math.comb(6, 3) / 64)
    assert p[1, 1, 1] == 1.0  # one move left: left scores 1, right 0
    # Two moves left, level 1: left gives 1 + B, right gives B' (B, B' fair coins); left wins
    # unless B = 0 and B' = 1 (a tie, a coin flip): P(left) = 7/8. Then the last move is left.
    assert p[1, 2, 2] == pytest.approx(7 / 8)
    assert A.best_score_probability(9, 3) == pytest.approx(0.41, abs=0.005)  # the paper's figure
    assert A.best_score_probability(9, 3, ties="left") > A.best_score_probability(9, 3)


def _brute_force(depth: int, level: int) -> float:
    """P(best score) by exhaustive enumeration of the random choices (tiny cases only)."""

    def dist(d: int, lv: int) -> dict[int, float]:
        if d == 0:
            return {0: 1.0}
        if lv == 0:
            return {s: math.comb(d, s) / 2**d for s in range(d + 1)}
        below = dist(d - 1, lv - 1)
        p_left = 0.0
        for x, px in below.items():
            for y, py in below.items():
                p_left += px * py * (1.0 if x + 1 > y else 0.5 if x + 1 == y else 0.0)
        rest = dist(d - 1, lv)
        out: dict[int, float] = {}
        for s, ps in rest.items():
            out[s + 1] = out.get(s + 1, 0.0) + p_left * ps
            out[s] = out.get(s, 0.0) + (1 - p_left) * ps
        return out

    return dist(depth, level).get(depth, 0.0)


def test_dynamic_programme_matches_enumeration() -> None:
    for depth in range(1, 8):
        for level in range(0, 3):
            assert A.best_score_probability(depth, level) == pytest.approx(
                _brute_force(depth, level)
            )


# -- NMCS against the theory ----------------------------------------------------------------------


def test_nmcs_level_1_always_finds_the_leftmost_path() -> None:
    from mc_envs.agents import NMCS

    for depth in (1, 2, 5, 10, 20, 40):
        env = gym.make("mc_envs/LeftmostPath-v0", depth=depth)
        env.reset()
        for seed in range(10):
            result = NMCS(level=1, seed=seed).search(env)
            assert result.score == depth and result.actions == [L] * depth
            assert result.playouts <= 2 * depth  # two playouts per step


@pytest.mark.parametrize(("level", "depth"), [(1, 6), (2, 6), (3, 5)])
def test_nmcs_without_memorisation_matches_the_theory(level: int, depth: int) -> None:
    from mc_envs.agents import NMCS

    env = gym.make("mc_envs/LeftMove-v0", depth=depth)
    env.reset()
    runs = 3000
    hits = sum(
        NMCS(level=level, seed=seed, memorize=False).search(env).score == depth
        for seed in range(runs)
    )
    p = A.best_score_probability(depth, level)
    sigma = math.sqrt(p * (1 - p) / runs)
    assert abs(hits / runs - p) < 4 * sigma, (hits / runs, p)


def test_memorisation_helps() -> None:
    from mc_envs.agents import NMCS

    env = gym.make("mc_envs/LeftMove-v0", depth=8)
    env.reset()
    runs = 1000
    hits = sum(NMCS(level=2, seed=s, memorize=True).search(env).score == 8 for s in range(runs))
    assert hits / runs > A.best_score_probability(8, 2) + 0.1


@pytest.mark.parametrize("env_id", ["mc_envs/LeftMove-v0", "mc_envs/LeftmostPath-v0"])
def test_nmcs_compiled_and_generic_paths_agree(env_id: str) -> None:
    from mc_envs.agents import NMCS

    env = gym.make(env_id, depth=12)
    env.reset()
    for memorize in (True, False):
        fast = NMCS(level=2, seed=7, memorize=memorize).search(env)
        slow = NMCS(level=2, seed=7, memorize=memorize, compiled=False).search(env)
        assert (fast.score, fast.actions, fast.playouts) == (
            slow.score,
            slow.actions,
            slow.playouts,
        )
