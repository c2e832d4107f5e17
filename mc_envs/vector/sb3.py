"""Stable-Baselines3's ``VecEnv`` over a compiled vector env (:class:`SB3VecEnv`).

SB3 resets a sub-env in the step that ends its episode, where Gymnasium's vector envs (and
:class:`~mc_envs.vector.PlanningVectorEnv`) reset it at the next step. The adapter steps all N
sub-envs in one compiled call, then resets the ones that ended with one partial reset
(``options={"reset_mask": done}``), so the episodes, observations, rewards, dones and infos are
exactly those of ``DummyVecEnv([lambda: gym.make(id, **kwargs)] * N)`` for the same seeds and
actions. Needs the ``rl`` extra (stable-baselines3): without it, importing this module raises
:class:`mc_envs.extras.MissingExtra`, an ImportError naming the extra and the pip command.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from mc_envs.extras import require

require("stable_baselines3", "rl", "mc_envs.vector.SB3VecEnv")

from stable_baselines3.common.vec_env.base_vec_env import (  # noqa: E402
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from mc_envs.vector.env import PlanningVectorEnv  # noqa: E402

# Methods of the single env that would change one sub-env's state or episode: the compiled vector
# env owns the states, so they cannot run on one sub-env (SB3VecEnv.step and reset step them all).
STATE_CHANGING = frozenset({"step", "reset", "restore_state", "_set_state"})
# Attributes of the single env that are not per sub-env but of the env object itself.
NOT_PER_SUB_ENV = frozenset({"unwrapped"})


class SB3VecEnv(VecEnv):
    """Stable-Baselines3's ``VecEnv`` over a :class:`~mc_envs.vector.PlanningVectorEnv`.

    Usage::

        venv = SB3VecEnv(gym.make_vec(id, num_envs=8, vectorization_mode="vector_entry_point"))
        model = PPO("MlpPolicy", venv).learn(10_000)

    It behaves as ``DummyVecEnv([lambda: gym.make(id, **kwargs)] * N)``: SB3's autoreset (a
    sub-env whose episode ends is reset in the same step; its info holds
    ``"terminal_observation"`` and ``"TimeLimit.truncated"``, its reset info goes to
    :attr:`reset_infos`), float32 rewards, bool dones, and one info dict per sub-env with the single
    env's keys (``action_mask``, ``current_player``, ``score`` in puzzles, and ``illegal_action``,
    ``action``, ``reason`` where an illegal action ended the episode). :meth:`seed` and
    :meth:`set_options` apply at the next :meth:`reset` (sub-env ``i`` gets ``seed + i``).

    :meth:`action_masks` gives the ``[N, A]`` masks, and ``env_method("action_masks")`` returns
    them too, which is what sb3-contrib's MaskablePPO reads. ``get_attr`` answers each sub-env
    with the single env's attribute in that sub-env's state (``current_player``, ``score``,
    ``board``, ...); methods from ``get_attr`` or ``env_method`` run on a sub-env's state, except
    those that would change it (``step``, ``reset``, ``restore_state``), which raise.
    ``set_attr("illegal_action", policy)`` switches the policy of every sub-env at once.

    The observation and action spaces are the single env's (the action space unbound from any
    env: its ``sample()`` draws from the whole space). Bad actions raise as the vector env does
    (:class:`mc_envs.IllegalActionError` naming the sub-env), before any sub-env is stepped.

    Args:
        vector_env: the compiled vector env, from ``gym.make_vec(id, num_envs=N,
            vectorization_mode="vector_entry_point", **kwargs)``.

    Attributes:
        vector_env: the wrapped :class:`~mc_envs.vector.PlanningVectorEnv` (for
            ``clone_state``/``restore_state`` of all sub-envs at once).

    Raises:
        TypeError: ``vector_env`` is not a :class:`~mc_envs.vector.PlanningVectorEnv`.
    """

    def __init__(self, vector_env: PlanningVectorEnv) -> None:
        if not isinstance(vector_env, PlanningVectorEnv):
            raise TypeError(
                "SB3VecEnv wraps a mc_envs.vector.PlanningVectorEnv (gym.make_vec(id, num_envs=N, "
                f"vectorization_mode='vector_entry_point')), got {type(vector_env).__name__}"
            )
        self.vector_env = vector_env
        self._proto = vector_env.proto
        self._extra: dict[str, dict[int, object]] = {}  # set_attr's additions: sub-env -> value
        self._actions: np.ndarray | None = None
        super().__init__(
            vector_env.num_envs,
            vector_env.single_observation_space,
            vector_env.single_action_space,
        )
        self.metadata = self._proto.metadata  # as DummyVecEnv: the single env's metadata

    # -- stepping -----------------------------------------------------------------------------

    def reset(self) -> VecEnvObs:
        """Resets every sub-env with the seeds of :meth:`seed` and the options of
        :meth:`set_options` (used once), as DummyVecEnv does.

        Returns:
            The ``[N, ...]`` observations; the reset infos are in :attr:`reset_infos`.
        """
        venv, n = self.vector_env, self.num_envs
        groups: dict[int, tuple[dict, np.ndarray]] = {}  # one partial reset per options object
        for i, options in enumerate(self._options):
            options = options or {}
            key = id(options) if options else 0
            groups.setdefault(key, (options, np.zeros(n, np.bool_)))[1][i] = True
        seeds = list(self._seeds)
        for options, mask in groups.values():
            if len(groups) == 1:
                obs, info = venv.reset(seed=seeds, options=options or None)
            else:
                obs, info = venv.reset(seed=seeds, options={**options, "reset_mask": mask})
        self.reset_infos = self._info_dicts(self._owned(info))
        self._reset_seeds()
        self._reset_options()
        return obs if venv.copy else obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        """Keeps the actions for :meth:`step_wait` (one per sub-env)."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Steps every sub-env with the actions of :meth:`step_async` and resets those whose
        episode ended (SB3's autoreset).

        Returns:
            ``(obs, rewards, dones, infos)``: ``[N, ...]`` observations (the reset observation
            where an episode ended), ``[N]`` float32 rewards, ``[N]`` bool dones, and N info dicts.

        Raises:
            IllegalActionError: (a ValueError) an action that is not an integer of the action
                space, or an illegal one under ``illegal_action="raise"``, naming the sub-env;
                nothing is stepped then.
        """
        venv = self.vector_env
        actions, self._actions = self._actions, None
        if actions is None:
            raise RuntimeError("step_wait() without step_async(): call step(actions)")
        obs, rewards, terminated, truncated, info = venv.step(actions)
        info = self._owned(info)  # the reset below must not overwrite the terminal masks
        dones = terminated | truncated
        infos = self._info_dicts(info, truncated & ~terminated)
        if dones.any():
            ended = np.flatnonzero(dones).tolist()
            last = obs[ended]  # fancy indexing: a copy, kept before the reset overwrites it
            obs, reset_info = venv.reset(options={"reset_mask": dones})
            reset_infos = self._info_dicts({k: v[ended] for k, v in reset_info.items()})
            for k, i in enumerate(ended):
                infos[i]["terminal_observation"] = last[k]
                self.reset_infos[i] = reset_infos[k]
        if not venv.copy:
            obs = obs.copy()
        return obs, rewards.astype(np.float32), dones, infos

    def _owned(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info``, its arrays copied if the vector env returns its buffers (``copy=False``)."""
        if self.vector_env.copy:
            return info
        return {key: np.array(value) for key, value in info.items()}

    def _info_dicts(
        self, info: dict[str, Any], time_limit: np.ndarray | None = None
    ) -> list[dict[str, Any]]:
        """The vector env's info arrays as N dicts with the single env's keys and Python types;
        with ``time_limit``, a step's (``"TimeLimit.truncated"`` last, as DummyVecEnv)."""
        columns = [("action_mask", list(info["action_mask"]))]
        columns.append(("current_player", info["current_player"].tolist()))
        if "score" in info:
            columns.append(("score", info["score"].tolist()))
        if time_limit is not None:
            columns.append(("TimeLimit.truncated", time_limit.tolist()))
        keys = [key for key, _ in columns]
        dicts = [dict(zip(keys, row, strict=True)) for row in zip(*(c for _, c in columns))]
        if "illegal_action" in info:
            action, reason = info["action"], info["reason"]
            for i in np.flatnonzero(info["illegal_action"]).tolist():
                d = dicts[i]
                flag = d.pop("TimeLimit.truncated", None)
                d.update(illegal_action=True, action=int(action[i]), reason=reason[i])
                if time_limit is not None:
                    d["TimeLimit.truncated"] = flag
        return dicts

    def action_masks(self) -> np.ndarray:
        """``[N, A]`` bool: True exactly at each sub-env's legal actions (MaskablePPO's masks)."""
        return self.vector_env.action_masks()

    def close(self) -> None:
        """Closes the vector env (and the single env's window, if one was opened)."""
        self.vector_env.close()

    # -- rendering ------------------------------------------------------------------------------

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each sub-env's ``rgb_array`` frame (``render_mode="rgb_array"``); Nones otherwise,
        with a warning, as DummyVecEnv."""
        if self.render_mode != "rgb_array":
            warnings.warn(
                f"The render mode is {self.render_mode}, but this method assumes it is "
                "`rgb_array` to obtain images.",
                stacklevel=2,
            )
            return [None] * self.num_envs
        return list(self.vector_env.render() or ())

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """SB3's rendering (``rgb_array`` frames tiled into one image), as DummyVecEnv."""
        return super().render(mode=mode)

    # -- attributes and methods of the sub-envs -------------------------------------------------

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The single env's attribute ``attr_name`` in each sub-env of ``indices``.

        State-dependent attributes (``current_player``, ``score``, ``board``, ...) are read in
        each sub-env's state; a method comes back as a callable running it on that sub-env.

        Raises:
            AttributeError: the single env has no such attribute, or it cannot be answered per
                sub-env (``unwrapped``), naming it.
        """
        return [self._attr(attr_name, i) for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Sets ``attr_name`` in the sub-envs of ``indices``.

        ``illegal_action`` is shared by all sub-envs: it is set for all of them at once. An
        attribute the single env does not have is kept per sub-env (``get_attr`` returns it for
        the sub-envs it was set in, as DummyVecEnv).

        Raises:
            ValueError: ``illegal_action`` for only some sub-envs, or an invalid policy.
            AttributeError: another attribute of the single env: the compiled sub-envs share it
                and it is fixed when the vector env is made (make a new one with that kwarg).
        """
        where = self._indices(indices)
        if attr_name == "illegal_action":
            if sorted(set(where)) != list(range(self.num_envs)):
                raise ValueError(
                    "set_attr('illegal_action'): the sub-envs of a compiled vector env share one "
                    f"policy; set it for all {self.num_envs} (indices=None), not {list(where)}"
                )
            self.vector_env.illegal_action = value
        elif attr_name in self._extra or not hasattr(self._proto, attr_name):
            self._extra.setdefault(attr_name, {}).update(dict.fromkeys(where, value))
        else:
            raise AttributeError(
                f"set_attr({attr_name!r}): the sub-envs of a compiled vector env share the single "
                f"env's {attr_name!r}, fixed when it is made; make a new vector env with it"
            )

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs
    ) -> list[Any]:
        """Calls the single env's method ``method_name`` in each sub-env of ``indices``.

        ``action_masks`` returns the ``[k, A]`` mask array itself (what sb3-contrib's
        ``get_action_masks`` stacks); other methods run on each sub-env's state.

        Raises:
            AttributeError: the single env has no such method.
            NotImplementedError: a method that changes a sub-env's state or episode (``step``,
                ``reset``, ``restore_state``, ...), naming it: use this VecEnv's ``step`` and
                ``reset``, or ``vector_env.restore_state``.
        """
        where = self._indices(indices)
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.vector_env.action_masks()[where]  # one array: np.stack reads it whole
            return masks  # type: ignore[return-value]
        return [self._attr(method_name, i)(*method_args, **method_kwargs) for i in where]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """Always False: the compiled sub-envs are not Gymnasium envs that wrappers could wrap."""
        return [False] * len(self._indices(indices))

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if isinstance(indices, np.integer):
            indices = int(indices)
        where = [int(i) for i in self._get_indices(indices)]
        for i in where:
            if not -self.num_envs <= i < self.num_envs:
                raise IndexError(f"sub-env index {i} out of range for num_envs={self.num_envs}")
        return [i % self.num_envs for i in where]

    def _attr(self, name: str, i: int) -> Any:
        """The single env's attribute ``name`` in sub-env ``i``."""
        if name in self._extra:
            if i not in self._extra[name]:
                raise AttributeError(
                    f"sub-env {i} has no attribute {name!r} (set_attr set it elsewhere)"
                )
            return self._extra[name][i]
        proto = self._proto
        if name in NOT_PER_SUB_ENV:
            raise AttributeError(
                f"{name!r} cannot be answered per sub-env of a compiled vector env: its sub-envs "
                "are rows of one batch, not env objects (see SB3VecEnv.vector_env)"
            )
        if name == "np_random":
            return self.vector_env._rng(i)
        if name == "np_random_seed":
            return self.vector_env._seed_of(i)
        if name in ("action_space", "observation_space"):
            return getattr(self, name)
        if name == "spec":
            spec = self.vector_env.spec
            if spec is None:
                return proto.spec
            kwargs = {k: v for k, v in spec.kwargs.items() if k not in _VECTOR_KWARGS}
            limit = kwargs.pop("max_episode_steps", spec.max_episode_steps)  # gym.make's place
            return dataclasses.replace(spec, kwargs=kwargs, max_episode_steps=limit)
        if name in vars(proto):  # set by the constructor: the same in every sub-env
            return vars(proto)[name]
        static = getattr(type(proto), name, _MISSING)
        if isinstance(static, property):  # read in sub-env i's state
            return getattr(self.vector_env._sub_env(i), name)
        if callable(static) and not isinstance(static, type):
            return partial(self._call, name, i)
        if static is _MISSING and not hasattr(proto, name):
            raise AttributeError(
                f"{type(proto).__name__} (the single env of this SB3VecEnv) has no attribute "
                f"{name!r}"
            )
        return getattr(proto, name)  # a constant of the class

    def _call(self, name: str, i: int, *args: object, **kwargs: object) -> object:
        """Runs the single env's method ``name`` in sub-env ``i``'s state."""
        if name in STATE_CHANGING:
            raise NotImplementedError(
                f"{name}() cannot run on one sub-env of a compiled vector env: the batch owns "
                "the states; use SB3VecEnv.step/reset, or vector_env.restore_state for all"
            )
        env = self.vector_env._sub_env(i)
        before = env._state.copy()
        method: Callable[..., object] = getattr(env, name)
        result = method(*args, **kwargs)
        if env._state.shape != before.shape or not np.array_equal(env._state, before):
            raise NotImplementedError(
                f"{name}() changed the state of sub-env {i}, which the compiled vector env "
                "cannot take back from its single env; the change was discarded"
            )
        return result


_VECTOR_KWARGS = ("num_envs", "vectorization_mode", "vector_kwargs")
_MISSING = object()
