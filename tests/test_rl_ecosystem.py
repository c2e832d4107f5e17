"""The envs with the RL ecosystem: Gymnasium's and Stable-Baselines3's checkers, vector envs,
wrappers, and the illegal-action policies ("terminate" by default, "raise" for strict callers)."""

from __future__ import annotations

import copy
import pickle
import tempfile
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import mc_envs
from mc_envs import IllegalActionError, strict

# Every id with default kwargs, and the variants a user is likely to make.
CASES = [(env_id, {}) for env_id in sorted(mc_envs.ENVS)] + [
    ("mc_envs/SameGame-v0", {"position": 1}),
    ("mc_envs/SameGame-v0", {"rows": 6, "cols": 7, "colors": 3, "penalty": "jsgames"}),
    ("mc_envs/Sudoku-v0", {"size": 16}),
    ("mc_envs/Sudoku-v0", {"branching": "all"}),
    ("mc_envs/MorpionSolitaire5T-v0", {"size": 24}),
    ("mc_envs/LeftMove-v0", {"depth": 3}),
    ("mc_envs/LeftmostPath-v0", {"depth": 20}),
    ("mc_envs/TicTacToe-v0", {"opponent": "random"}),
    ("mc_envs/ConnectFour-v0", {"opponent": "random", "agent_player": 1}),
]
IDS = [f"{env_id.split('/')[1]}{kwargs or ''}" for env_id, kwargs in CASES]
TWO_PLAYER = ("mc_envs/TicTacToe-v0", "mc_envs/ConnectFour-v0", "mc_envs/Go-v0")


def _expected_penalty(env_id: str) -> float:
    return -1.0 if env_id in TWO_PLAYER else 0.0


def _first_illegal(env: gym.Env) -> int | None:
    """Plays the lowest legal move until some action of the space is illegal; returns it (None
    if the game ends first). Connect Four fills column 0 this way."""
    base = env.unwrapped
    while len(base.legal_actions()):
        illegal = np.flatnonzero(~base.action_masks())
        if len(illegal):
            return int(illegal[0])
        env.step(int(base.legal_actions()[0]))
    return None


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
def test_gymnasium_check_env_raw_and_made(env_id, kwargs) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gym.make(env_id, **kwargs).unwrapped)
        check_env(gym.make(env_id, **kwargs))
    unexpected = [
        str(w.message) for w in caught if "different from the unwrapped" not in str(w.message)
    ]
    assert unexpected == []


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
def test_stable_baselines3_check_env(env_id, kwargs) -> None:
    # Raw: passes; SB3 may only advise on the observation's layout (2-D boards and small planes
    # are not images for its CNN policy) ...
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_check_env(gym.make(env_id, **kwargs).unwrapped, warn=True)
    advice = [str(w.message) for w in caught]
    assert all("image" in m or "unconventional shape" in m for m in advice), advice
    # ... and flattened, as its MLP policies take it, it passes without a word.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(gym.wrappers.FlattenObservation(gym.make(env_id, **kwargs)), warn=True)


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
def test_illegal_action_terminates_with_the_penalty_and_changes_nothing(env_id, kwargs) -> None:
    env = gym.make(env_id, **kwargs)
    base = env.unwrapped
    assert base.illegal_action == "terminate"
    for seed in range(5, 25):  # a game with an opponent may end before a column fills
        env.reset(seed=seed)
        bad = _first_illegal(env)
        if bad is not None:
            break
    if bad is not None:  # LeftMove and LeftmostPath have no illegal move before the end
        snap = base.clone_state()
        obs, reward, terminated, truncated, info = env.step(bad)
        assert (reward, terminated, truncated) == (_expected_penalty(env_id), True, False)
        assert info["illegal_action"] is True and info["action"] == bad and info["reason"]
        assert base.clone_state() == snap
        assert np.array_equal(info["action_mask"], base.action_masks())
        assert env.observation_space.contains(obs)
    else:
        assert env_id in ("mc_envs/LeftMove-v0", "mc_envs/LeftmostPath-v0")
    # After the end of the game, any action: the episode ends again, reward 0, nothing changes.
    rng = np.random.default_rng(1)
    while len(base.legal_actions()):
        env.step(int(rng.choice(base.legal_actions())))
    snap = base.clone_state()
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["illegal_action"]) == (0.0, True, True)
    assert info["reason"] == "the game is over" and base.clone_state() == snap


@pytest.mark.parametrize("env_id", sorted(mc_envs.ENVS))
def test_strict_mode_raises_with_the_action_and_reason(env_id) -> None:
    env = gym.make(env_id, illegal_action="raise")
    env.reset(seed=2)
    base = env.unwrapped
    bad = _first_illegal(env)
    if bad is None:  # the binary trees: only after the end
        bad = 1
    snap = base.clone_state()
    with pytest.raises(IllegalActionError) as raised:
        env.step(bad)
    assert isinstance(raised.value, ValueError)
    assert raised.value.action == bad and raised.value.reason in str(raised.value)
    assert base.clone_state() == snap


def test_out_of_space_actions_raise_under_both_policies() -> None:
    env = gym.make("mc_envs/TicTacToe-v0")
    env.reset(seed=0)
    snap = env.unwrapped.clone_state()
    for bad in (9, -1, 1.5, "a"):
        with pytest.raises(IllegalActionError, match="outside the action space|not an integer"):
            env.unwrapped.step(bad)
    assert env.unwrapped.clone_state() == snap


def test_the_policy_is_switchable_per_instance_and_strict_restores_it() -> None:
    env = gym.make("mc_envs/ConnectFour-v0")
    env.reset(seed=0)
    for _ in range(6):
        env.step(0)  # column 0 is full
    base = env.unwrapped
    with strict(env):
        assert base.illegal_action == "raise"
        with pytest.raises(IllegalActionError, match="column"):
            env.step(0)
        with strict(base):  # nests
            pass
        assert base.illegal_action == "raise"
    assert base.illegal_action == "terminate"
    with pytest.raises(RuntimeError), strict(env):
        raise RuntimeError("the block fails")
    assert base.illegal_action == "terminate"
    assert env.step(0)[2] is True
    base.illegal_action = "raise"
    with pytest.raises(IllegalActionError):
        env.step(0)
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        base.illegal_action = "ignore"
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        gym.make("mc_envs/SameGame-v0", illegal_action="penalty")


def test_strict_leaves_an_env_without_a_policy_alone() -> None:
    class Plain:
        unwrapped = None

    env = Plain()
    env.unwrapped = env
    with strict(env) as same:
        assert same is env and not hasattr(env, "illegal_action")


def test_an_illegal_agent_move_against_an_opponent_loses_without_an_answer() -> None:
    env = gym.make("mc_envs/TicTacToe-v0", opponent="random")
    env.reset(seed=0)
    env.step(4)
    occupied = int(np.flatnonzero(~env.unwrapped.action_masks())[0])
    board = env.unwrapped.board
    _, reward, terminated, _, info = env.step(occupied)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    assert np.array_equal(env.unwrapped.board, board)  # the opponent did not answer


def test_the_conformance_suite_checks_the_terminate_policy() -> None:
    from mc_envs.envs.tictactoe import TicTacToeEnv
    from mc_envs.testing import ConformanceError, check_planning_env

    class Lenient(TicTacToeEnv):
        def _refuse(self, action, reason):  # ends the episode but forgets to say why
            if self.illegal_action == "raise":
                raise IllegalActionError(action, reason)
            return self._observation(), -1.0, True, False, self._info()

    with pytest.raises(ConformanceError, match="terminate policy"):
        check_planning_env(lambda: Lenient(), check_gym=False)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", sorted(mc_envs.ENVS))
def test_make_vec_with_action_masks_and_an_illegal_action(env_id, mode) -> None:
    # forkserver: the async workers must not be forked from a process that has imported JAX
    kwargs = {"vector_kwargs": {"context": "forkserver"}} if mode == "async" else {}
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, **kwargs)
    try:
        assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
        assert gym.make(env_id).metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
        obs, infos = envs.reset(seed=0)
        first_obs = obs[0].copy()
        rng = np.random.default_rng(0)
        n = envs.single_action_space.n
        for _ in range(8):  # sub-env 0 plays its lowest legal move, sub-env 1 a random one
            masks = infos["action_mask"]
            assert masks.shape == (2, n) and masks.dtype == bool
            if not masks[0].all():
                break
            actions = np.array([np.flatnonzero(masks[0])[0], rng.choice(np.flatnonzero(masks[1]))])
            obs, rewards, terminations, truncations, infos = envs.step(actions)
            assert not infos.get("illegal_action", np.zeros(2, bool)).any()
            if terminations.any():
                return  # a finished sub-env autoresets; the short games stop here
        masks = infos["action_mask"]
        if masks[0].all():  # the binary trees: both moves are legal until the end
            assert env_id in ("mc_envs/LeftMove-v0", "mc_envs/LeftmostPath-v0")
            return
        actions = np.array([np.flatnonzero(~masks[0])[0], np.flatnonzero(masks[1])[0]])
        _, rewards, terminations, _, infos = envs.step(actions)
        assert terminations[0] and infos["illegal_action"][0] and infos["_illegal_action"][0]
        assert rewards[0] == _expected_penalty(env_id)
        obs, rewards, terminations, _, infos = envs.step(
            np.array([0, np.flatnonzero(infos["action_mask"][1])[0]])
        )
        # NEXT_STEP: that step reset sub-env 0 (reset seeds follow from the first seed).
        assert rewards[0] == 0.0 and not terminations[0]
        assert obs.shape[1:] == first_obs.shape
    finally:
        envs.close()


def test_wrapped_envs_copy_pickle_and_record_an_illegal_ending() -> None:
    env = gym.wrappers.RecordEpisodeStatistics(
        gym.wrappers.FlattenObservation(
            gym.make("mc_envs/SameGame-v0", position=1, max_episode_steps=50)
        )
    )
    obs, info = env.reset(seed=0)
    assert obs.shape == (225,)
    legal = env.unwrapped.legal_actions()
    env.step(int(legal[0]))
    made = env.env.env  # gym.make's stack (FlattenObservation holds a lambda: no pickle)
    made.unwrapped.illegal_action = "raise"
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(made))):
        assert clone.unwrapped.clone_state() == env.unwrapped.clone_state()
        assert clone.unwrapped.illegal_action == "raise"
        with pytest.raises(IllegalActionError):
            clone.step(int(np.flatnonzero(~clone.unwrapped.action_masks())[0]))
    made.unwrapped.illegal_action = "terminate"
    bad = int(np.flatnonzero(~env.unwrapped.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(bad)
    assert terminated and reward == 0.0 and info["illegal_action"]
    assert info["episode"]["l"] == 2 and info["episode"]["r"] == env.unwrapped.score


@pytest.mark.parametrize("env_id", ["mc_envs/SameGame-v0", "mc_envs/Sudoku-v0"])
def test_maskless_ppo_and_dqn_train_through_illegal_actions(env_id) -> None:
    from stable_baselines3 import DQN, PPO
    from stable_baselines3.common.monitor import Monitor

    def make():
        return Monitor(gym.wrappers.FlattenObservation(gym.make(env_id)))

    temporary = set(Path(tempfile.gettempdir()).glob("SB3-*"))
    ppo = PPO("MlpPolicy", make(), n_steps=64, batch_size=32, n_epochs=1, seed=0)
    ppo.learn(total_timesteps=64)
    dqn = DQN("MlpPolicy", make(), learning_starts=32, buffer_size=200, seed=0)
    dqn.learn(total_timesteps=64)
    # the suite's SB3_LOGDIR (tests/conftest.py): no folder left in the temporary directory
    assert set(Path(tempfile.gettempdir()).glob("SB3-*")) == temporary
    # A random policy over the whole space hits illegal actions: episodes end instead of raising.
    episodes = ppo.env.envs[0].get_episode_lengths() + dqn.env.envs[0].get_episode_lengths()
    assert len(episodes) > 1 and min(episodes) >= 1
