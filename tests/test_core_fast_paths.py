"""The single env's fast paths keep the contract: trusted snapshots only from clone_state, fresh
masks in every info, legal-action arrays nobody overwrites, restores that play on exactly."""

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import mc_envs
from mc_envs.core import IllegalActionError, State

IDS = sorted(mc_envs.ENVS)


def _env(env_id, seed=0):
    env = gym.make(env_id).unwrapped
    env.reset(seed=seed)
    return env


def _refusing(env, monkeypatch):
    """Makes the env's state check fail loudly, to see whether restore_state calls it."""

    def check(data):
        raise ValueError("checked")

    monkeypatch.setattr(env, "_check_state", check)


def test_a_clone_is_trusted_and_everything_else_is_checked(monkeypatch):
    env = _env("mc_envs/SameGame-v0")
    snap = env.clone_state()
    _refusing(env, monkeypatch)
    env.restore_state(snap)  # taken by the env itself: no check
    outside = [
        pickle.loads(pickle.dumps(snap)),
        copy.copy(snap),
        copy.deepcopy(snap),
        State(snap.game, snap.config, snap.data),
    ]
    for state in outside:
        assert state == snap
        with pytest.raises(ValueError, match="checked"):
            env.restore_state(state)


@pytest.mark.parametrize("env_id", IDS)
def test_a_corrupted_unpickled_state_is_refused(env_id):
    env = _env(env_id)
    back = pickle.loads(pickle.dumps(env.clone_state()))
    data = back.data.copy()
    data[: min(len(data), 8)] = -7  # the header, wherever the game keeps it
    before = env.clone_state()
    with pytest.raises(ValueError):
        env.restore_state(State(back.game, back.config, data))
    assert env.clone_state() == before
    env.restore_state(back)  # the intact one passes the check
    assert env.clone_state() == before


@pytest.mark.parametrize("env_id", IDS)
def test_restores_play_on_exactly_and_clones_stay_immutable(env_id):
    env, fresh = _env(env_id, seed=1), _env(env_id, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(3):
        actions = env.legal_actions()
        if len(actions) == 0:
            break
        env.step(int(rng.choice(actions)))
    snap = env.clone_state()
    kept = snap.data.copy()
    assert not snap.data.flags.writeable
    with pytest.raises(ValueError):
        snap.data[0] = 1
    trail = []
    for _ in range(2):
        env.restore_state(snap)
        fresh.restore_state(pickle.loads(pickle.dumps(snap)))  # checked, then the same
        steps = []
        while len(env.legal_actions()) and len(steps) < 40:
            assert env.legal_actions().tolist() == fresh.legal_actions().tolist()
            assert env.score == fresh.score
            a = int(rng.choice(env.legal_actions()))
            one, two = env.step(a), fresh.step(a)
            assert np.array_equal(one[0], two[0]) and one[1:4] == two[1:4]
            assert np.array_equal(one[4]["action_mask"], two[4]["action_mask"])
            steps.append(a)
        trail.append(steps)
    assert np.array_equal(snap.data, kept)
    assert np.array_equal(env.clone_state().data, fresh.clone_state().data)


@pytest.mark.parametrize("env_id", ["mc_envs/SameGame-v0", "mc_envs/ConnectFour-v0"])
def test_infos_masks_and_legal_actions_are_never_overwritten(env_id):
    env = _env(env_id)
    _, info = env.reset(seed=2)
    kept = []  # (info, its mask then, legal_actions(), the array then)
    rng = np.random.default_rng(1)
    snap = env.clone_state()
    while True:
        legal = env.legal_actions()
        assert np.flatnonzero(info["action_mask"]).tolist() == legal.tolist()
        assert info["action_mask"] is not env.action_masks()
        kept.append((info, info["action_mask"].copy(), legal, legal.copy()))
        if len(legal) == 0:
            break
        mask = env.action_masks()
        mask[:] = True  # the caller's own array: changes nothing in the env
        assert env.action_masks().tolist() == info["action_mask"].tolist()
        _, _, terminated, _, info = env.step(int(rng.choice(legal)))
        if terminated:
            break
    env.restore_state(snap)
    env.step(int(env.legal_actions()[0]))
    for info, mask, legal, values in kept:
        assert np.array_equal(info["action_mask"], mask)
        assert np.array_equal(legal, values)


def test_actions_are_read_as_before():
    env = _env("mc_envs/ConnectFour-v0")
    for action in (np.int64(3), np.int8(2), 4.0, True):
        env.reset(seed=0)
        _, _, _, _, info = env.step(action)
        assert "illegal_action" not in info
    for action in (2.5, "3", None, np.float64(1.5)):
        with pytest.raises(IllegalActionError, match="not an integer"):
            env.step(action)
    for action in (-1, 7, np.int64(99)):
        with pytest.raises(IllegalActionError, match="outside the action space"):
            env.step(action)


def test_an_illegal_action_still_ends_the_episode_with_its_reason():
    env = _env("mc_envs/SameGame-v0")
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.clone_state()
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == 0.0 and info["illegal_action"] and info["reason"]
    assert env.clone_state() == before
    env.illegal_action = "raise"
    with pytest.raises(IllegalActionError, match="cell"):
        env.step(illegal)


@pytest.mark.parametrize("env_id", IDS)
def test_a_playout_without_checks_makes_the_checked_playouts_moves(env_id):
    # play_out (the generic path's playout) plays what a loop of legal_actions and play_move
    # plays, to the same end, and leaves legal_actions fresh; an env that overrides play_move has
    # its moves made by it.
    from mc_envs.core import random_policy
    from mc_envs.rng import PlainRngView, rng_state

    fast, checked = _env(env_id, seed=3), _env(env_id, seed=3)
    seq = np.zeros(fast.kernel.max_moves + 1, dtype=np.int64)
    n = fast.play_out(random_policy(fast), PlainRngView(rng_state(7)), seq, 0)
    choose, rng, moves = random_policy(checked), PlainRngView(rng_state(7)), []
    while len(legal := checked.legal_actions()):
        moves.append(int(choose(legal, rng)))
        checked.play_move(moves[-1])
    assert n == len(moves) > 0 and seq[:n].tolist() == moves
    assert fast.clone_state() == checked.clone_state()
    assert fast.legal_actions().tolist() == [] and fast.score == checked.score

    made = []
    logged = _env(env_id, seed=3)
    play_move = type(logged).play_move

    class Logged(type(logged)):
        def play_move(self, action):
            made.append(action)
            return play_move(self, action)

    logged.__class__ = Logged
    assert logged.play_out(random_policy(logged), PlainRngView(rng_state(7)), seq, 0) == n
    assert made == moves
