"""The ecosystem's conventions in the vector envs, each checked against its peer: np_random_seed
as SyncVectorEnv's (and DummyVecEnv's through SB3VecEnv), max_episode_steps truncating as sync's
TimeLimit, bool actions as the single env and SyncVectorEnv take them, and the terminal-step mask
that a loop sampling from the mask survives."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding
from stable_baselines3.common.vec_env import DummyVecEnv

import mc_envs
from mc_envs.vector import PlanningVectorEnv, SB3VecEnv

SMALL_SAMEGAME = {"rows": 5, "cols": 5, "colors": 3}


def both(env_id: str, n: int, **kwargs) -> tuple[gym.vector.VectorEnv, PlanningVectorEnv]:
    sync = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", **kwargs)
    ours = gym.make_vec(env_id, num_envs=n, **kwargs)  # the default mode: vector_entry_point
    assert isinstance(ours, PlanningVectorEnv)
    return sync, ours


def assert_same_step(a: tuple, b: tuple, where: str) -> None:
    for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and np.array_equal(x, y), (where, name, x, y)
    assert set(a[4]) == set(b[4]), (where, sorted(a[4]), sorted(b[4]))
    for key in a[4]:
        x, y = np.asarray(a[4][key]), np.asarray(b[4][key])
        assert x.dtype == y.dtype and np.array_equal(x, y), (where, key, x, y)


def sample(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """CleanRL's masked sampling, one legal action a row: fails on an empty mask."""
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])


# -- np_random_seed -------------------------------------------------------------------------------


def test_np_random_seed_is_sync_vector_envs_for_every_kind_of_seed() -> None:
    sync, ours = both("mc_envs/SameGame-v0", 4, **SMALL_SAMEGAME)  # starts drawn from np_random
    fresh = ours.np_random_seed
    assert len(fresh) == 4 and all(type(s) is int and s >= 0 for s in fresh)
    assert ours.np_random_seed == fresh  # drawn once, as Env.np_random_seed
    for s, generator in zip(fresh, ours.np_random, strict=True):  # the generator of that seed
        assert generator.bit_generator.state == seeding.np_random(s)[0].bit_generator.state
    mask = np.array([True, False, True, False])
    expected = [(42, 43, 44, 45), (42, 43, 44, 45), (1, 43, 3, 4), (7, 43, 9, 4)]
    for (seed, reset_mask), seeds in zip(
        [(42, None), (None, None), ([1, None, 3, 4], None), (7, mask)], expected, strict=True
    ):
        options = None if reset_mask is None else {"reset_mask": reset_mask}
        o1, _ = sync.reset(seed=seed, options=None if options is None else dict(options))
        o2, _ = ours.reset(seed=seed, options=None if options is None else dict(options))
        assert ours.np_random_seed == sync.np_random_seed == seeds
        rows = mask if reset_mask is not None else np.ones(4, bool)
        assert np.array_equal(o1[rows], o2[rows])  # and the same starts from those seeds
    assert isinstance(ours.np_random, tuple) and len(ours.np_random) == 4


def test_sb3_get_attr_np_random_seed_as_dummy_vec_env() -> None:
    env_id = "mc_envs/TicTacToe-v0"
    venv = SB3VecEnv(gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point"))
    dummy = DummyVecEnv([lambda: gym.make(env_id)] * 4)
    for env in (venv, dummy):
        env.seed(42)
        env.reset()
    assert venv.get_attr("np_random_seed") == dummy.get_attr("np_random_seed") == [42, 43, 44, 45]
    assert venv.get_attr("np_random_seed", indices=[2]) == [44]


# -- max_episode_steps ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env_id", "kwargs", "limit", "early"),
    [
        ("mc_envs/ConnectFour-v0", {}, 3, False),
        ("mc_envs/TicTacToe-v0", {"opponent": "random"}, 4, True),  # wins, illegal moves
        ("mc_envs/SameGame-v0", SMALL_SAMEGAME, 4, True),  # random starts at every autoreset
    ],
)
def test_max_episode_steps_truncates_exactly_as_sync(
    env_id: str, kwargs: dict, limit: int, early: bool
) -> None:
    n = 3
    sync, ours = both(env_id, n, max_episode_steps=limit, **kwargs)
    assert ours.max_episode_steps == limit and ours.spec.kwargs["max_episode_steps"] == limit
    o1, i1 = sync.reset(seed=5)
    o2, i2 = ours.reset(seed=5)
    assert_same_step((o1, 0, 0, 0, i1), (o2, 0, 0, 0, i2), "reset")
    rng = np.random.default_rng(0)
    size = sync.single_action_space.n
    elapsed, resetting = np.zeros(n, int), np.zeros(n, bool)
    truncations = terminations_first = 0
    for t in range(40):
        legal = sample(i1["action_mask"], rng)
        actions = np.where(rng.random(n) < 0.9, legal, rng.integers(size, size=n))  # some illegal
        out1, out2 = sync.step(actions), ours.step(actions)
        i1 = out1[4]
        assert_same_step(out1, out2, f"step {t}")
        elapsed = np.where(resetting, 0, elapsed + 1)
        terminated, truncated = out2[2], out2[3]
        assert np.array_equal(truncated, elapsed >= limit)  # TimeLimit's rule, step by step
        truncations += int(truncated.sum())
        terminations_first += int((terminated & (elapsed < limit)).sum())
        resetting = terminated | truncated
    assert truncations > 0 and (terminations_first > 0) == early  # both kinds of end compared


def test_max_episode_steps_values_as_gym_make() -> None:
    env = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2, max_episode_steps=-1)  # no limit
    env.reset(seed=0)
    for a in (0, 1, 3, 4):
        assert not env.step(np.array([a, a]))[3].any()
    with pytest.raises(ValueError, match="max_episode_steps must be positive"):
        gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2, max_episode_steps=0)
    with pytest.raises(TypeError, match="max_episode_steps must be None or an integer"):
        gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2, max_episode_steps="3")


def test_sb3_vec_env_over_a_step_limit_is_dummy_vec_envs_time_limit() -> None:
    env_id, n = "mc_envs/ConnectFour-v0", 3
    venv = SB3VecEnv(gym.make_vec(env_id, num_envs=n, max_episode_steps=3))
    dummy = DummyVecEnv([lambda: gym.make(env_id, max_episode_steps=3)] * n)
    for env in (venv, dummy):
        env.seed(1)
    assert np.array_equal(venv.reset(), dummy.reset())
    spec, expected = venv.get_attr("spec")[0], dummy.get_attr("spec")[0]
    assert spec.max_episode_steps == expected.max_episode_steps == 3
    assert spec.kwargs == expected.kwargs
    rng = np.random.default_rng(1)
    time_limits = 0
    for t in range(12):
        actions = rng.integers(7, size=n)
        (o1, r1, d1, infos1), (o2, r2, d2, infos2) = dummy.step(actions), venv.step(actions)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2), t
        for a, b in zip(infos1, infos2, strict=True):
            assert list(a) == list(b) and a["TimeLimit.truncated"] == b["TimeLimit.truncated"]
            time_limits += b["TimeLimit.truncated"]
    assert time_limits > 0


# -- bool actions ---------------------------------------------------------------------------------


def test_bool_actions_are_0_and_1_in_the_single_env_sync_and_vector_envs() -> None:
    env_id = "mc_envs/ConnectFour-v0"
    single = gym.make(env_id)
    single.reset(seed=0)
    by_int = single.step(1)[0]
    for action in (True, np.True_, np.array(True)):
        single.reset(seed=0)
        assert np.array_equal(single.step(action)[0], by_int), type(action)
    sync, ours = both(env_id, 3)
    twin = gym.make_vec(env_id, num_envs=3)
    venv = SB3VecEnv(gym.make_vec(env_id, num_envs=3))
    for env in (sync, ours, twin):
        env.reset(seed=0)
    venv.reset()
    for actions in (np.array([True, False, True]), [False, True, True]):
        expected = sync.step(actions)
        assert_same_step(expected, ours.step(actions), str(actions))
        assert_same_step(expected, twin.step(np.asarray(actions, dtype=np.int64)), "as ints")
        assert np.array_equal(venv.step(np.asarray(actions))[0], expected[0])


# -- the mask after a game's end ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env_id", "kwargs", "steps"),
    [
        ("mc_envs/TicTacToe-v0", {}, 100),
        ("mc_envs/ConnectFour-v0", {"opponent": "random"}, 100),
        ("mc_envs/SameGame-v0", SMALL_SAMEGAME, 100),
        ("mc_envs/LeftMove-v0", {"depth": 3}, 60),
        ("mc_envs/MorpionSolitaire5T-v0", {"size": 12}, 150),  # 2,880 actions: rows from lists
    ],
)
def test_a_loop_sampling_from_the_mask_survives_many_episodes(
    env_id: str, kwargs: dict, steps: int
) -> None:
    n = 6
    sync, ours = both(env_id, n, **kwargs)
    buffers = gym.make_vec(env_id, num_envs=n, copy=False, **kwargs)  # returns its own buffers
    envs = (sync, ours, buffers)
    out = [(*env.reset(seed=3), None, None, None) for env in envs]
    rng = np.random.default_rng(0)
    ended = 0
    for t in range(steps):
        actions = sample(out[0][1]["action_mask"], rng)  # a legal action, or any once over
        out = [env.step(actions) for env in envs]
        assert_same_step(out[0], out[1], f"step {t}")
        assert_same_step(out[0], out[2], f"step {t}, copy=False")
        terminated, masks = out[0][2], out[0][4]["action_mask"]
        assert masks[terminated].all() and masks[~terminated].any(axis=1).all()
        assert not ours.action_masks()[terminated].any()  # the env's own masks stay exact
        ended += int(terminated.sum())
        out = [(o[0], o[4]) for o in out]
    assert ended >= 2 * n


@pytest.mark.parametrize("env_id", ["mc_envs/TicTacToe-v0", "mc_envs/Sudoku-v0"])
def test_the_single_env_marks_every_action_once_the_game_is_over(env_id: str) -> None:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    for _ in range(10):
        terminated = False
        while not terminated:
            action = int(sample(info["action_mask"][None], rng)[0])
            _, _, terminated, _, info = env.step(action)
        base = env.unwrapped
        assert info["action_mask"].all() and info["action_mask"].dtype == bool
        assert base.legal_actions().size == 0 and not base.action_masks().any()
        _, reward, terminated, _, after = env.step(0)  # after the end: refused, nothing changes
        assert reward == 0 and terminated and after["illegal_action"]
        assert after["action_mask"].all()
        _, info = env.reset()


def test_an_episode_ended_by_an_illegal_action_keeps_the_legal_mask() -> None:
    sync, ours = both("mc_envs/TicTacToe-v0", 2)
    sync.reset(seed=0)
    ours.reset(seed=0)
    for actions in ([4, 4], [4, 0]):  # sub-env 0: O on X's centre, illegal
        expected, got = sync.step(np.array(actions)), ours.step(np.array(actions))
        assert_same_step(expected, got, str(actions))
    assert got[2].tolist() == [True, False] and got[4]["illegal_action"].tolist() == [True, False]
    assert got[4]["action_mask"][0].sum() == 8 and not got[4]["action_mask"][0, 4]


def test_a_restored_game_over_refuses_every_action_as_the_single_env() -> None:
    single = gym.make("mc_envs/TicTacToe-v0").unwrapped
    single.reset(seed=0)
    for a in (0, 3, 1, 4, 2):  # X takes the top row
        single.step(a)
    over = single.clone_state()
    ours = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=2)
    ours.reset(seed=0)
    ours.restore_state([over, over])  # no autoreset pending: the step plays on the finished game
    _, rewards, terminated, _, info = ours.step(np.array([5, 8]))
    _, reward, _, _, expected = single.step(5)
    assert rewards.tolist() == [reward] * 2 == [0.0, 0.0] and terminated.all()
    assert info["illegal_action"].all() and info["reason"][0] == expected["reason"]
    assert info["action_mask"].all() and expected["action_mask"].all()
    assert np.array_equal(ours.clone_state().data[0], over.data)  # nothing was played
    ours.restore_state([over, over])
    ours.illegal_action = "raise"
    with pytest.raises(mc_envs.IllegalActionError, match="game is over"):
        ours.step(np.array([5, 8]))
