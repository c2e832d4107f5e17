"""mc_envs.vector.SB3VecEnv: the same episodes, rewards, dones and infos as SB3's DummyVecEnv over
gym.make envs of the same id, PPO and MaskablePPO learning through it, and the attribute and
method forwarding SB3 and sb3-contrib rely on."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.evaluation import evaluate_policy as evaluate_masked
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

import mc_envs  # noqa: F401  (registers the ids)
from mc_envs import IllegalActionError
from mc_envs.envs.samegame import SameGameEnv
from mc_envs.games import sudoku as sudoku_rules
from mc_envs.vector import PlanningVectorEnv, SB3VecEnv

N = 4
CASES = [
    pytest.param("mc_envs/ConnectFour-v0", {"opponent": "random"}, id="ConnectFour-random"),
    pytest.param(
        "mc_envs/TicTacToe-v0", {"opponent": "random", "agent_player": 1}, id="TicTacToe-random-1"
    ),
    pytest.param("mc_envs/TicTacToe-v0", {}, id="TicTacToe"),
    pytest.param("mc_envs/SameGame-v0", {"rows": 5, "cols": 5, "colors": 3}, id="SameGame5x5"),
    pytest.param("mc_envs/Sudoku-v0", {}, id="Sudoku"),
    pytest.param("mc_envs/LeftmostPath-v0", {"depth": 4}, id="LeftmostPath4"),
    pytest.param("mc_envs/WeakSchur-v0", {"k": 3}, id="WeakSchur3"),
]


def _sb3(env_id: str, n: int = N, **kwargs) -> SB3VecEnv:
    return SB3VecEnv(
        gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    )


def _dummy(env_id: str, n: int = N, **kwargs) -> DummyVecEnv:
    return DummyVecEnv([lambda: gym.make(env_id, **kwargs)] * n)


def _same(a, b) -> bool:
    """Equal values of equal types (arrays: same dtype and contents)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def _assert_infos(expected: list[dict], got: list[dict], where: str) -> None:
    assert len(got) == len(expected)
    for i, (e, g) in enumerate(zip(expected, got, strict=True)):
        assert list(g) == list(e), f"{where}, sub-env {i}: keys {list(g)} != {list(e)}"
        for key in e:
            assert _same(e[key], g[key]), f"{where}, sub-env {i}, {key!r}: {g[key]!r} != {e[key]!r}"


def _assert_arrays(expected: np.ndarray, got: np.ndarray, where: str) -> None:
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
    assert np.array_equal(got, expected), f"{where}: {got} != {expected}"


def _actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A legal action per sub-env, but an illegal one (where there is one) one time in eight."""
    acts = np.empty(len(masks), np.int64)
    for i, mask in enumerate(masks):
        illegal = np.flatnonzero(~mask)
        pool = illegal if len(illegal) and rng.random() < 0.125 else np.flatnonzero(mask)
        acts[i] = rng.choice(pool)
    return acts


def _compare_episodes(dummy: DummyVecEnv, venv: SB3VecEnv, steps: int, seed: int) -> tuple:
    dummy.seed(seed)
    venv.seed(seed)
    _assert_arrays(dummy.reset(), venv.reset(), "reset obs")
    _assert_infos(dummy.reset_infos, venv.reset_infos, "reset infos")
    rng = np.random.default_rng(seed)
    ends = illegal = 0
    for t in range(steps):
        masks = venv.action_masks()
        expected_masks = np.stack([env.unwrapped.action_masks() for env in dummy.envs])
        _assert_arrays(expected_masks, masks, f"step {t} masks")
        acts = _actions(masks, rng)
        obs, rewards, dones, infos = dummy.step(acts)
        got = venv.step(acts)
        _assert_arrays(obs, got[0], f"step {t} obs")
        _assert_arrays(rewards, got[1], f"step {t} rewards")
        _assert_arrays(dones, got[2], f"step {t} dones")
        _assert_infos(infos, got[3], f"step {t} infos")
        _assert_infos(dummy.reset_infos, venv.reset_infos, f"step {t} reset infos")
        ends += int(dones.sum())
        illegal += sum("illegal_action" in info for info in infos)
    return ends, illegal


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_episodes_equal_dummy_vec_env(env_id, kwargs) -> None:
    dummy, venv = _dummy(env_id, **kwargs), _sb3(env_id, **kwargs)
    ends, illegal = _compare_episodes(dummy, venv, steps=120, seed=11)
    assert ends >= 3 * N  # several episode ends in every sub-env on average
    if env_id != "mc_envs/LeftmostPath-v0":  # both moves are always legal there
        assert illegal >= 2
    # a second seed through the same adapters: seed() applies at the next reset() again
    _compare_episodes(dummy, venv, steps=30, seed=12)


def test_episodes_equal_without_copies() -> None:
    """A vector env returning its buffers (copy=False): the adapter still returns fresh arrays
    and keeps each terminal observation and mask as they were."""
    kwargs = {"rows": 5, "cols": 5, "colors": 3}
    venv = SB3VecEnv(PlanningVectorEnv(SameGameEnv, N, copy=False, **kwargs))
    ends, _ = _compare_episodes(_dummy("mc_envs/SameGame-v0", **kwargs), venv, 80, seed=3)
    assert ends >= N
    obs, _, _, infos = venv.step(venv.action_masks().argmax(axis=1))
    kept = obs.copy(), [info["action_mask"].copy() for info in infos]
    venv.step(venv.action_masks().argmax(axis=1))
    assert np.array_equal(obs, kept[0])  # not overwritten by the next step
    assert all(np.array_equal(info["action_mask"], m) for info, m in zip(infos, kept[1]))


def test_reset_options_per_sub_env_as_dummy_vec_env() -> None:
    """set_options: one dict for all, or a list (grouped into partial resets), used once."""
    env_id = "mc_envs/Sudoku-v0"
    dummy, venv = _dummy(env_id), _sb3(env_id)
    dummy.seed(5)
    venv.seed(5)
    _assert_arrays(dummy.reset(), grids := venv.reset(), "seeded reset")
    text = sudoku_rules.to_text(grids[N - 1])  # the puzzle sub-env 3 drew
    given = [{"puzzle": text}, [{}, {"puzzle": text}, {}, {"puzzle": text}], None]
    for options, has_puzzle in zip(given, ([1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0]), strict=True):
        dummy.set_options(options)
        venv.set_options(options)  # None: the options above were used once
        obs = venv.reset()
        _assert_arrays(dummy.reset(), obs, f"reset obs with {options}")
        _assert_infos(dummy.reset_infos, venv.reset_infos, "reset infos")
        assert [int(np.array_equal(o, grids[N - 1])) for o in obs] == has_puzzle


@pytest.fixture
def one_torch_thread():
    """Small MLPs train many times faster on one thread (and leave the other core alone)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_torch_thread")
def test_ppo_learns_leftmost_path() -> None:
    """Random play scores ~0.94 on average at depth 4 (sum of 2^-k); PPO learns to go left."""
    env_id, kwargs = "mc_envs/LeftmostPath-v0", {"depth": 4}
    train = VecMonitor(_sb3(env_id, 8, **kwargs))
    model = PPO(
        "MlpPolicy",
        train,
        n_steps=32,
        batch_size=64,
        n_epochs=4,
        learning_rate=3e-3,
        seed=1,
        device="cpu",
    )
    evaluation = VecMonitor(_sb3(env_id, 16, **kwargs))
    evaluation.seed(100)
    before, _ = evaluate_policy(model, evaluation, n_eval_episodes=200, deterministic=False)
    model.learn(2048)
    after, _ = evaluate_policy(model, evaluation, n_eval_episodes=200, deterministic=False)
    best, _ = evaluate_policy(model, evaluation, n_eval_episodes=16, deterministic=True)
    assert before < 1.3
    assert after > 3.5
    assert best == 4.0


@pytest.mark.usefixtures("one_torch_thread")
def test_maskable_ppo_learns_tictactoe_against_random() -> None:
    """As X against the random player, uniformly random legal moves average ~0.3 (win - loss);
    MaskablePPO, reading the masks through the VecEnv, learns to win most games."""
    env_id, kwargs = "mc_envs/TicTacToe-v0", {"opponent": "random"}
    train = VecMonitor(_sb3(env_id, 8, **kwargs))
    assert is_masking_supported(train)
    model = MaskablePPO(
        "MlpPolicy",
        train,
        n_steps=64,
        batch_size=128,
        n_epochs=4,
        learning_rate=1e-3,
        seed=1,
        device="cpu",
    )
    evaluation = VecMonitor(_sb3(env_id, 16, **kwargs))
    evaluation.seed(100)
    before, _ = evaluate_masked(model, evaluation, n_eval_episodes=400, deterministic=False)
    model.learn(6144)
    after, _ = evaluate_masked(model, evaluation, n_eval_episodes=400, deterministic=True)
    assert before < 0.45
    assert after > 0.6
    masks = get_action_masks(train)
    assert masks.shape == (8, 9) and masks.dtype == np.bool_
    assert np.array_equal(masks, train.venv.action_masks())
    assert np.array_equal(get_action_masks(train.venv), train.venv.action_masks())


def test_get_attr_and_env_method_answer_per_sub_env_as_dummy_vec_env() -> None:
    env_id = "mc_envs/TicTacToe-v0"
    dummy, venv = _dummy(env_id, render_mode="ansi"), _sb3(env_id, render_mode="ansi")
    dummy.seed(2)
    venv.seed(2)
    dummy.reset(), venv.reset()
    rng = np.random.default_rng(2)
    for _ in range(3):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()])
        dummy.step(acts), venv.step(acts)
    players = venv.get_attr("current_player")
    assert players == dummy.get_attr("current_player") == [1, 1, 1, 1]
    for name in ("score", "illegal_action", "render_mode", "agent_player", "game", "spec"):
        assert venv.get_attr(name) == dummy.get_attr(name), name
    for got, expected in zip(venv.get_attr("board"), dummy.get_attr("board"), strict=True):
        _assert_arrays(expected, got, "board")
    assert venv.get_attr("current_player", indices=[2, 0]) == [players[2], players[0]]
    assert venv.get_attr("current_player", indices=1) == [players[1]]
    for name in ("legal_actions", "returns"):
        for got, expected in zip(venv.env_method(name), dummy.env_method(name), strict=True):
            _assert_arrays(expected, got, name)
    assert venv.env_method("render") == dummy.env_method("render")
    assert venv.env_method("action_to_string", 4) == dummy.env_method("action_to_string", 4)
    assert venv.env_method("clone_state") == dummy.env_method("clone_state")
    masks = venv.get_attr("action_masks")  # per sub-env callables, as bound methods in Dummy
    assert np.array_equal(np.stack([m() for m in masks]), venv.action_masks())
    assert np.array_equal(np.stack(venv.env_method("action_masks")), venv.action_masks())
    assert np.array_equal(venv.env_method("action_masks", indices=[3]), venv.action_masks()[3:])
    assert venv.env_is_wrapped(Monitor) == [False] * N
    assert venv.observation_space == dummy.observation_space
    assert venv.action_space == dummy.action_space
    assert venv.metadata == dummy.metadata and venv.render_mode == "ansi"


def test_np_random_per_sub_env_as_dummy_vec_env() -> None:
    kwargs = {"rows": 5, "cols": 5, "colors": 3}
    dummy, venv = _dummy("mc_envs/SameGame-v0", **kwargs), _sb3("mc_envs/SameGame-v0", **kwargs)
    dummy.seed(8)
    venv.seed(8)
    _assert_arrays(dummy.reset(), venv.reset(), "reset obs")
    states = [g.bit_generator.state for g in venv.get_attr("np_random")]
    assert states == [g.bit_generator.state for g in dummy.get_attr("np_random")]
    assert len({str(s) for s in states}) == N  # seeds 8, 9, 10, 11


def test_has_attr_set_attr_and_errors() -> None:
    venv = _sb3("mc_envs/TicTacToe-v0")
    venv.reset()
    assert venv.has_attr("action_masks") and venv.has_attr("current_player")
    assert not venv.has_attr("no_such_attribute")
    with pytest.raises(AttributeError, match="no_such_attribute"):
        venv.get_attr("no_such_attribute")
    with pytest.raises(AttributeError, match="unwrapped"):
        venv.get_attr("unwrapped")
    for method in ("step", "reset"):
        with pytest.raises(NotImplementedError, match=method):
            venv.env_method(method, 0) if method == "step" else venv.env_method(method)
    with pytest.raises(AttributeError, match="agent_player"):
        venv.set_attr("agent_player", 1)
    with pytest.raises(ValueError, match="illegal_action"):
        venv.set_attr("illegal_action", "raise", indices=[0])
    with pytest.raises(ValueError, match="illegal_action"):
        venv.set_attr("illegal_action", "sometimes")
    venv.set_attr("note", "mine", indices=[1])
    assert venv.get_attr("note", indices=1) == ["mine"]
    with pytest.raises(AttributeError, match="note"):
        venv.get_attr("note")  # not set in sub-env 0, as DummyVecEnv
    with pytest.raises(TypeError, match="PlanningVectorEnv"):
        SB3VecEnv(gym.make("mc_envs/TicTacToe-v0"))


def test_set_attr_illegal_action_raise_then_illegal_action_raises() -> None:
    venv = _sb3("mc_envs/TicTacToe-v0")
    venv.reset()
    venv.step(np.array([4, 0, 0, 0]))
    _, _, dones, infos = venv.step(np.array([4, 1, 2, 3]))  # default: an illegal move ends it
    assert dones.tolist() == [True, False, False, False] and infos[0]["illegal_action"] is True
    assert infos[0]["reason"] and infos[0]["action"] == 4 and "illegal_action" not in infos[1]
    venv.set_attr("illegal_action", "raise")
    assert venv.get_attr("illegal_action") == ["raise"] * N
    before = venv.vector_env.clone_state()
    with pytest.raises(IllegalActionError, match="sub-env 2"):
        venv.step(np.array([0, 5, 2, 5]))  # sub-env 2 already holds 0 and 2
    assert np.array_equal(venv.vector_env.clone_state().data, before.data)  # nothing stepped
    venv.set_attr("illegal_action", "terminate")
    _, rewards, dones, _ = venv.step(np.array([0, 5, 5, 5]))
    assert rewards.dtype == np.float32 and not dones.any()
    with pytest.raises(IllegalActionError, match="sub-env 0"):
        venv.step(np.array([9, 0, 0, 0]))  # outside the action space: raises under any policy
