"""The conformance suite of the planning-env contract, importable to check your own envs.

    from mc_envs.testing import check_planning_env
    check_planning_env(lambda: MyEnv())

Each check raises :class:`ConformanceError` naming the check and what differed.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import cast

import gymnasium as gym
import numpy as np

from mc_envs.core import IllegalActionError, PlanningContract, State, strict


class ConformanceError(AssertionError):
    """An env broke the planning-env contract."""


def _fail(check: str, message: str) -> None:
    raise ConformanceError(f"[{check}] {message}")


def _same(a: object, b: object) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return (
            isinstance(b, (tuple, list, np.ndarray))
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def _check_legal(
    check: str, env: PlanningContract, terminated: bool, truncated: bool = False
) -> np.ndarray:
    # A truncated game may have moves left (a time limit) or none (a move cap the game enforces).
    legal = env.legal_actions()
    if not isinstance(legal, np.ndarray) or legal.dtype != np.int64:
        _fail(check, f"legal_actions() must be an int64 ndarray, got {type(legal).__name__}")
    if len(legal) and (np.any(np.diff(legal) <= 0)):
        _fail(check, f"legal_actions() must be sorted without repeats: {legal[:20]}")
    mask = env.action_masks()
    if mask.dtype != bool or mask.shape != (env.action_space.n,):
        _fail(check, f"action_masks() must be a bool array of shape ({env.action_space.n},)")
    if not np.array_equal(np.flatnonzero(mask), legal):
        _fail(check, "action_masks() is not True exactly at legal_actions()")
    if terminated == (len(legal) > 0) and not truncated:
        state = "over" if terminated else "not over"
        _fail(check, f"the game is {state} but legal_actions() has {len(legal)} actions")
    return legal


def _rollout(env: PlanningContract, rng: np.random.Generator, steps: int) -> list[tuple]:
    trace = []
    for _ in range(steps):
        legal = env.legal_actions()
        if len(legal) == 0:
            break
        a = int(rng.choice(legal))
        obs, reward, terminated, truncated, info = env.step(a)
        trace.append((a, obs, reward, terminated, truncated, info, _score(env)))
        if terminated or truncated:
            break
    return trace


def _score(env: PlanningContract) -> float | None:
    return getattr(env, "score", None)


def gymnasium_checks(env: gym.Env) -> None:
    """Gymnasium's ``check_env``, with its step-determinism check made valid for raising envs.

    ``check_env`` draws the action of its step-determinism check before its seeded reset. An env
    whose start depends on the seed (a random board) and that refuses illegal actions may then be
    handed an action that is illegal after that reset. This runs the same checks in the same order,
    drawing that one action after the seeded reset. For an env with a fixed start, plain
    ``check_env`` passes as well.
    """
    from gymnasium.utils import env_checker as ec

    ec.check_action_space(env.action_space)
    ec.check_observation_space(env.observation_space)
    ec.check_reset_return_info_deprecation(env)
    ec.check_reset_return_type(env)
    ec.check_reset_seed_determinism(env)
    ec.check_reset_options(env)
    ec.env_reset_passive_checker(env)
    ec.env_step_passive_checker(env, env.action_space.sample())
    env.reset(seed=123)
    action = env.action_space.sample()
    results = []
    for _ in range(2):
        env.reset(seed=123)
        results.append(env.step(action))
    for label, x, y in zip(("observation", "reward", "terminated", "truncated", "info"), *results):
        if not _same(x, y):
            raise AssertionError(f"stepping after reset(seed=123) is not deterministic: {label}")
    if results[0][3]:
        raise AssertionError("the env truncates after one step")
    ec.check_returned_data_not_reused(env)


def check_planning_env(
    make_env: Callable[[], gym.Env], *, seed: int = 0, steps: int = 200, check_gym: bool = True
) -> None:
    """Runs every check of the contract on envs made by ``make_env``.

    Args:
        make_env: builds a fresh env (e.g. ``lambda: gymnasium.make("mc_envs/SameGame-v0")``).
        seed: seeds the resets and the random actions.
        steps: how many random actions the clone/restore check replays.
        check_gym: also run Gymnasium's ``check_env``.

    Raises:
        ConformanceError: naming the first check that failed.
    """
    rng = np.random.default_rng(seed)
    wrapped = make_env()  # kept alive while its unwrapped env is checked
    env = _check_members(wrapped.unwrapped, check_gym)
    _check_reset(env, make_env, seed)
    root, trace = _check_replay(env, rng, steps)
    _check_fresh_env(env, make_env, root, trace, seed)
    _check_snapshots(env, root)
    _check_terminate_policy(make_env, seed)
    # Random games: invariants at every step, illegal actions refused without effect.
    with strict(env):
        _random_games(env, rng, seed)


def _check_members(base: gym.Env, check_gym: bool) -> PlanningContract:
    """The contract's members and action space, then Gymnasium's checks; the env, so typed."""
    for name in ("clone_state", "restore_state", "legal_actions", "action_masks"):
        if not callable(getattr(base, name, None)):
            _fail("members", f"env.unwrapped has no method {name}()")
    for name in ("current_player", "score", "max_score"):
        if not hasattr(base, name):
            _fail("members", f"env.unwrapped has no attribute {name}")
    if not isinstance(base.action_space, gym.spaces.Discrete):
        _fail("members", "the action space must be Discrete")
    env = cast(PlanningContract, base)  # its members were checked above
    if check_gym:
        try:
            gymnasium_checks(base)
        except Exception as exc:  # noqa: BLE001
            _fail("gymnasium check_env", f"{type(exc).__name__}: {exc}")
    return env


def _check_reset(env: PlanningContract, make_env: Callable[[], gym.Env], seed: int) -> None:
    """reset()'s info keys and player, and two envs reset with one seed observe the same."""
    obs1, info1 = env.reset(seed=seed)
    for key in ("action_mask", "current_player"):
        if key not in info1:
            _fail("info", f"reset() info lacks {key!r}")
    if env.current_player not in (0, 1):
        _fail("members", f"current_player must be 0 or 1, got {env.current_player!r}")
    other = cast(PlanningContract, make_env().unwrapped)
    obs2, _ = other.reset(seed=seed)
    if not _same(obs1, obs2):
        _fail("reset seed", "two envs reset with the same seed give different observations")


def _check_replay(
    env: PlanningContract, rng: np.random.Generator, steps: int
) -> tuple[State, list]:
    """Clone, play, restore, replay: every step must match. The snapshot and the steps played."""
    root = env.clone_state()
    frozen = pickle.dumps(root)
    trace = _rollout(env, rng, steps)
    if pickle.dumps(root) != frozen:
        _fail("snapshot immutability", "playing after clone_state() changed the snapshot")
    end = env.clone_state()
    env.restore_state(root)
    for k, (a, obs, reward, terminated, truncated, info, score) in enumerate(trace):
        step = env.step(a)
        got = (step[0], step[1], step[2], step[3], step[4], _score(env))
        want = (obs, reward, terminated, truncated, info, score)
        labels = ("observation", "reward", "terminated", "truncated", "info", "score")
        for label, x, y in zip(labels, got, want):
            if not _same(x, y):
                if label == "info":
                    keys = sorted(k for k in set(x) | set(y) if not _same(x.get(k), y.get(k)))
                    label = f"info{keys}"
                _fail(
                    "clone/restore replay",
                    f"step {k + 1} (action {a}): {label} differs after restore: {y!r} before, {x!r} after",
                )
    if env.clone_state() != end:
        _fail("clone/restore replay", "the replayed game ends in a different state")
    return root, trace


def _check_fresh_env(
    env: PlanningContract, make_env: Callable[[], gym.Env], root: State, trace: list, seed: int
) -> None:
    """Restore into a second, fresh env and continue identically."""
    second = cast(PlanningContract, make_env().unwrapped)
    second.reset(seed=seed + 1)
    second.restore_state(root)
    env.restore_state(root)
    for k, (a, *_rest) in enumerate(trace[:50]):
        r1, r2 = env.step(a), second.step(a)
        if not all(_same(x, y) for x, y in zip(r1, r2)) or _score(env) != _score(second):
            _fail(
                "restore into a fresh env",
                f"step {k + 1} (action {a}) differs between the two envs",
            )


def _check_snapshots(env: PlanningContract, root: State) -> None:
    """Pickled snapshots restore too; a foreign one is refused, without effect."""
    copy = pickle.loads(pickle.dumps(root))
    if copy != root:
        _fail("pickling", "an unpickled snapshot differs from the original")
    env.restore_state(copy)
    if env.clone_state() != root:
        _fail("pickling", "restoring an unpickled snapshot does not give the same state")
    foreign = State("not-a-game", ("x",), np.zeros(3))
    before = env.clone_state()
    try:
        env.restore_state(foreign)
    except (ValueError, TypeError):
        pass
    else:
        _fail("foreign snapshot", "restore_state() accepted a snapshot of another game")
    if env.clone_state() != before:
        _fail("foreign snapshot", "a refused restore_state() changed the state")


def _random_games(env: PlanningContract, rng: np.random.Generator, seed: int) -> None:
    """Three random games, checking the invariants and refusing an illegal action at every step."""
    for game in range(3):
        env.reset(seed=seed + 10 + game)
        terminated = truncated = False
        limit = getattr(getattr(env, "kernel", None), "max_moves", None) or 100_000
        for _ in range(limit + 1):
            legal = _check_legal("random game", env, terminated, truncated)
            if terminated or truncated:
                break
            illegal = np.setdiff1d(np.arange(env.action_space.n), legal)
            if len(illegal):
                bad = int(rng.choice(illegal))
                snap = env.clone_state()
                try:
                    env.step(bad)
                except IllegalActionError:
                    pass
                else:
                    _fail("illegal action", f"step({bad}) was accepted but {bad} is not legal")
                if env.clone_state() != snap:
                    _fail("illegal action", f"the refused step({bad}) changed the state")
            _, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
            mask, over = info["action_mask"], len(env.legal_actions()) == 0
            if not np.array_equal(mask, env.action_masks()) and not (over and np.all(mask)):
                _fail(
                    "info",
                    "info['action_mask'] differs from action_masks() (or, once the "
                    "game is over, from all True)",
                )
        else:
            _fail("random game", f"the game did not end within {limit} moves")
        if terminated:
            snap = env.clone_state()
            try:
                env.step(0)
            except IllegalActionError:
                pass
            else:
                _fail("illegal action", "a step after the end of the game was accepted")
            if env.clone_state() != snap:
                _fail("illegal action", "a refused step after the end changed the state")


def _check_terminate_policy(make_env: Callable[[], gym.Env], seed: int) -> None:
    """An env with an ``illegal_action`` policy: under ``"terminate"`` an illegal action ends the
    episode with ``info["illegal_action"]`` and leaves the state unchanged, also after the end."""
    wrapped = make_env()
    env = cast(PlanningContract, wrapped.unwrapped)  # checked by check_planning_env
    if not hasattr(env, "illegal_action"):
        return
    env.illegal_action = "terminate"
    wrapped.reset(seed=seed)
    rng = np.random.default_rng(seed)
    legal = env.legal_actions()
    illegal = np.setdiff1d(np.arange(env.action_space.n), legal)
    while len(legal) and not len(illegal):
        wrapped.step(int(rng.choice(legal)))
        legal = env.legal_actions()
        illegal = np.setdiff1d(np.arange(env.action_space.n), legal)
    for bad in illegal[:1].tolist() + ([] if len(legal) else [0]):
        snap = env.clone_state()
        _, reward, terminated, truncated, info = wrapped.step(bad)
        if not (terminated and not truncated and info.get("illegal_action") is True):
            _fail(
                "terminate policy",
                f"step({bad}) (illegal) must return terminated=True, truncated=False and "
                f"info['illegal_action']=True; got {terminated}, {truncated}, {info}",
            )
        if not isinstance(info.get("reason"), str) or info.get("action") != bad:
            _fail("terminate policy", f"info lacks the action and reason of step({bad}): {info}")
        if not isinstance(reward, float):
            _fail("terminate policy", f"the reward of step({bad}) is not a float: {reward!r}")
        if env.clone_state() != snap:
            _fail("terminate policy", f"the illegal step({bad}) changed the state")
