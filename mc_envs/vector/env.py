"""The compiled vector env of every built-in id: N sub-envs stepped by one numba call."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import Any, SupportsIndex, cast

import numpy as np
from gymnasium.spaces import Discrete
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mc_envs.core import ILLEGAL_ACTION_POLICIES, IllegalActionError, PlanningEnv, State
from mc_envs.interpret import stop as stop_interpreting
from mc_envs.interpret import uncached
from mc_envs.kernel import CAP_INFO
from mc_envs.state import frozen_copy
from mc_envs.vector.args import checked_actions, opponent_kind, reset_mask, step_limit, unbound
from mc_envs.vector.cold import INTERPRET_BELOW, stand_in
from mc_envs.vector.compiled import (
    DERIVED,
    RANDOM_OPPONENT,
    REFRESH,
    RESET,
    STEP,
    Buffers,
    Config,
    Outputs,
)
from mc_envs.vector.state import VectorState, rows_of
from mc_envs.vector.threads import Runner

SEED_BLOCK = 32  # opponent seeds drawn ahead per sub-env, one numpy call per block


class PlanningVectorEnv(VectorEnv):
    """N sub-envs of one built-in id, stepped together by one compiled call.

    Made by ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``
    for every id of the suite, with the single env's kwargs. For the same reset seed and actions it
    gives exactly the episodes of ``vectorization_mode="sync"``: the same observations, rewards,
    terminations, truncations and infos (``action_mask``, ``current_player``, ``score`` in puzzles,
    and ``illegal_action``, ``action``, ``reason`` where an illegal action ended an episode, each
    with its ``_key`` mask), with NEXT_STEP autoreset: the step after an episode ends resets that
    sub-env, ignoring its action, and returns reward 0.

    What runs compiled: the rules, the illegal-action policy, rewards, observations, masks, the
    reset of games that start from a fixed position, and ``opponent="random"``. Random starts
    (SameGame boards, generated Sudoku puzzles) are drawn in Python from each sub-env's own
    ``np_random`` (seeded ``seed + i`` as SyncVectorEnv does), only for the sub-envs that reset.
    Opponents that are searches, agents or callables are refused (use
    ``vectorization_mode="sync"`` for them): they cannot run inside the compiled step.

    Planning in batch: :meth:`clone_state` snapshots all N sub-envs (:class:`VectorState`),
    :meth:`restore_state` restores them (or N single-env ``State`` objects), and
    :meth:`action_masks` gives the ``[N, A]`` masks.

    Args:
        env_class: the single env's class.
        num_envs: N.
        copy: return copies of the observation and mask buffers (the default, as SyncVectorEnv);
            ``False`` returns the buffers themselves, overwritten by the next step.
        threads: ``1`` steps on the calling thread, ``k`` on ``k`` threads; ``None`` (the default)
            steps on the calling thread while the parallel steps compile on another, then times
            steps both ways and keeps the faster, from 64 sub-envs
            (:class:`~mc_envs.vector.threads.Runner`): the first call compiles the serial steps
            (on a cold cache, the game's kernels, over which the steps run as Python until a
            child has compiled them: :class:`~mc_envs.vector.cold.Split`), and no call after it
            compiles anything on the calling thread. The threads are numba's (OpenMP where
            available): a process forked after a parallel step must not step one in the child
            (GNU OpenMP is not fork-safe); start children with spawn or forkserver, as the
            agents' pools do, or use ``threads=1`` there.
        max_episode_steps: as ``gym.make``'s (``gym.make_vec`` passes it here): an episode is
            truncated at that many steps, exactly as a TimeLimit on each sub-env of
            ``vectorization_mode="sync"``; None or -1 for no limit. The step counts are the
            episodes', as TimeLimit's: a snapshot does not hold them (:meth:`restore_state`
            leaves them as they are).
        **kwargs: the single env's keyword arguments.

    Raises:
        ValueError: a kwarg that cannot run compiled (naming it), or any error of the single env's
            constructor for its kwargs.
        TypeError: ``max_episode_steps`` is not an integer.
    """

    def __init__(
        self,
        env_class: type[PlanningEnv],
        num_envs: int = 1,
        *,
        copy: bool = True,
        threads: int | None = None,
        max_episode_steps: int | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be None or a positive integer, got {threads!r}")
        self.max_episode_steps = step_limit(max_episode_steps)
        small = num_envs < INTERPRET_BELOW  # else Python could not step a call's games
        if not small:
            stop_interpreting()  # compile here, from now on
        with contextlib.nullcontext() if small else uncached():  # (the cold-start module's note)
            self.proto = proto = env_class(**kwargs)  # checks the kwargs; draws starts, reasons
            start = proto._start_state()  # (Morpion's: its scan compiled for 1.5 s)
        self.num_envs = n = int(num_envs)
        self.copy = copy
        self._pool_obs: list[np.ndarray] = []
        self._pool_masks: list[np.ndarray] = []
        self.env_kwargs = dict(kwargs)
        self.render_mode = proto.render_mode
        self.metadata = {**proto.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.single_observation_space = proto.observation_space
        self.observation_space = batch_space(proto.observation_space, n)
        self.single_action_space = unbound(proto.action_space)
        self.action_space = batch_space(self.single_action_space, n)
        self._opponent = opponent_kind(proto)
        self._agent_player = int(getattr(proto, "agent_player", 0))
        kernel = proto.kernel
        self._run = Runner(kernel, n, threads, self._opponent)
        if small and not stand_in(type(self), env_class, threads, kwargs, self._run.entries()):
            stop_interpreting()
        self._two_player = kernel.player is not None
        self._capped = kernel.truncated is not None  # else Buffers.cut stays False
        self._use_template = start is not None
        self._template = np.array(start if start is not None else proto._state, copy=True)
        self._buffers = new_buffers(proto, n)
        # The arguments a call does not use, of the types of those it does (one compilation).
        self._no_actions = np.zeros(n, np.int64)
        self._nowhere = np.zeros(n, np.bool_)
        self._no_outputs = Outputs(self._buffers.masks, self._buffers.obs, False)
        self._all = np.ones(n, np.bool_)
        self._all.flags.writeable = False
        self._truncated = np.zeros(n, np.bool_)
        self._elapsed = np.zeros(n, np.int64)  # steps in the episode, for max_episode_steps
        self._seeds: list[int | None] = [None] * n
        self._rngs: list[np.random.Generator | None] = [None] * n
        self._configs: dict[tuple[bool, float], Config] = {}
        self._reset_called = False
        self.closed = False
        if not small:
            args = (self._no_actions, self._nowhere, self._buffers)  # (reset's types: writable)
            self._run.prepare(RESET, *args, self._config(self._use_template), self._no_outputs)

    # -- policy and configuration -----------------------------------------------------------------

    @property
    def illegal_action(self) -> str:
        """What ``step`` does with an illegal action, as the single env: ``"terminate"`` or
        ``"raise"`` (:class:`mc_envs.PlanningEnv`)."""
        return self.proto.illegal_action

    @illegal_action.setter
    def illegal_action(self, policy: str) -> None:
        if policy not in ILLEGAL_ACTION_POLICIES:
            raise ValueError(
                f"illegal_action must be one of {list(ILLEGAL_ACTION_POLICIES)}, got {policy!r}"
            )
        self.proto.illegal_action = policy

    def _config(self, template: bool) -> Config:
        reward = float(self.proto.illegal_reward)
        config = self._configs.get((template, reward))
        if config is None:  # made once: a step's Python work counts at N = 1,024 (~50 us a step)
            config = Config(self._template, template, reward, self._agent_player)
            self._configs[template, reward] = config
        return config

    @property
    def parallel(self) -> bool | None:
        """Whether steps run on every core (None while the first steps are timing both ways)."""
        return self._run.parallel

    # -- random starts ------------------------------------------------------------------------------

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]  # one per sub-env
        """Each sub-env's seed, as SyncVectorEnv's: ``(seed, seed + 1, ...)`` after
        ``reset(seed=seed)``, the seeds of a list as given (a ``None`` keeps that sub-env's), and
        for a generator never seeded the random entropy it was made from (drawn now, as
        ``Env.np_random_seed``)."""
        return tuple(self._seed_of(i) for i in range(self.num_envs))

    @property  # type: ignore[misc]  # read-only, as SyncVectorEnv's
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """Each sub-env's ``np_random`` (what draws its random starts and opponent seeds)."""
        return tuple(self._rng(i) for i in range(self.num_envs))

    def _seed_of(self, i: int) -> int:
        self._rng(i)
        return cast(int, self._seeds[i])  # set by _rng

    def _rng(self, i: int) -> np.random.Generator:
        rng = self._rngs[i]
        if rng is None:
            rng, self._seeds[i] = seeding.np_random(self._seeds[i])
            self._rngs[i] = rng
        return rng

    def _draw_starts(self, where: np.ndarray, options: dict | None) -> None:
        """Writes a new start into each sub-env of ``where`` from its own ``np_random``."""
        rows = np.flatnonzero(where)
        if rows.size:
            generators = [self._rng(int(i)) for i in rows]
            # Starts on every core only when the steps always are: a start function's parallel
            # variant compiled at the switch would stall a step (the automatic choice's steps)
            parallel = self._run.parallel is True and not self._run.watching
            self._buffers.states[rows] = self.proto._new_states(
                generators, options, parallel=parallel
            )

    def _draw_seeds(self, where: np.ndarray) -> None:
        """Refills the opponent seeds of the sub-envs of ``where`` (the draws of their resets)."""
        seeds, seed_next = self._buffers.seeds, self._buffers.seed_next
        for i in np.flatnonzero(where):
            seeds[i] = self._rng(int(i)).integers(2**31, size=SEED_BLOCK)
            seed_next[i] = 0

    # -- the Gymnasium API ----------------------------------------------------------------------------

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        """Resets the sub-envs (all, or ``options["reset_mask"]``'s) as SyncVectorEnv does.

        ``seed``: ``None`` keeps each sub-env's generator, an int seeds sub-env ``i`` with
        ``seed + i``, a list gives one seed (or None) per sub-env.
        """
        n = self.num_envs
        seeds: list[int | None]
        if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(n)]
        elif seed is None:
            seeds = [None] * n
        else:
            seeds = list(cast(list, seed))
        if len(seeds) != n:
            raise ValueError(f"reset: {len(seeds)} seeds for num_envs={n}")
        options = dict(options) if options else None
        where = self._all
        if options is not None and "reset_mask" in options:
            where = reset_mask(options.pop("reset_mask"), n)
            options = options or None
        spent = (
            self._buffers.seed_next >= SEED_BLOCK
        )  # opponent seeds to draw: none left, or reseeded
        for i in np.flatnonzero(where):
            chosen = seeds[i]
            if chosen is not None:
                self._rngs[i], self._seeds[i] = seeding.np_random(int(chosen))
                spent[i] = True
        template = self._use_template and options is None
        if not template:
            self._draw_starts(where, options)
        if self._opponent == RANDOM_OPPONENT:
            self._draw_seeds(where & spent)
        config = self._config(template)
        self._run(RESET, self._no_actions, np.array(where), self._buffers, config, self._no_outputs)
        self._elapsed[where] = 0
        self._truncated[where] = False
        self._reset_called = True
        b = self._buffers
        if not self.copy:
            return b.obs, self._info(b.masks, None)
        obs, masks = _free(self._pool_obs, b.obs), _free(self._pool_masks, b.masks)
        np.copyto(obs, b.obs)
        np.copyto(masks, b.masks)
        return obs, self._info(masks, None)

    def step(self, actions: np.ndarray | Sequence[SupportsIndex]):
        """Steps every sub-env (resetting those whose episode ended at the previous step).

        Raises:
            IllegalActionError: (a ValueError) ``actions`` is not N integers of the action space,
                naming the sub-env and the value; or, with ``illegal_action="raise"``, an action is
                illegal, naming the sub-env and why. Nothing is stepped then.
        """
        if not self._reset_called:
            raise RuntimeError("step() before reset(): call reset() first")
        b = self._buffers
        autoreset = b.autoreset
        acts = checked_actions(actions, autoreset, int(cast(Discrete, self.single_action_space).n))
        if self.proto.illegal_action == "raise":
            self._raise_illegal(acts, autoreset)
        # np.count_nonzero, not .any(): 0.4 us against 1.4 on 1,024 flags, and a step is ~50 us
        if not self._use_template and np.count_nonzero(autoreset):
            self._draw_starts(autoreset, None)
        if self.copy:  # arrays no one holds; the step writes its outputs into them
            obs, masks = _free(self._pool_obs, b.obs), _free(self._pool_masks, b.masks)
        else:
            obs, masks = b.obs, b.masks
        limit = self.max_episode_steps
        resetting = autoreset.copy() if limit is not None else autoreset
        config, out = self._config(self._use_template), Outputs(masks, obs, bool(self.copy))
        self._run(STEP, acts, self._nowhere, b, config, out)
        if limit is not None:
            self._count_steps(resetting, limit)
        if self._opponent == RANDOM_OPPONENT:
            spent = b.seed_next >= SEED_BLOCK
            if np.count_nonzero(spent):
                self._draw_seeds(spent)
        info = self._info(masks, acts if np.count_nonzero(b.illegal) else None)
        if not self._capped:
            return obs, b.rewards.copy(), b.terminated.copy(), self._truncated.copy(), info
        if np.count_nonzero(b.cut):  # the game's move cap (Kernel.truncated), as the single env
            info[CAP_INFO], info["_" + CAP_INFO] = b.cut.copy(), b.cut.copy()
        truncated = self._truncated | b.cut
        return obs, b.rewards.copy(), b.terminated.copy(), truncated, info

    def _count_steps(self, resetting: np.ndarray, limit: int) -> None:
        """``max_episode_steps`` as Gymnasium's TimeLimit on each sub-env: truncated once an
        episode has taken ``limit`` steps (terminated or not), which autoresets it next step."""
        elapsed, truncated = self._elapsed, self._truncated
        elapsed += 1
        elapsed[resetting] = 0  # this step reset them: a new episode, no step taken yet
        np.greater_equal(elapsed, limit, out=truncated)
        np.logical_or(self._buffers.autoreset, truncated, out=self._buffers.autoreset)

    def _raise_illegal(self, acts: np.ndarray, autoreset: np.ndarray) -> None:
        b = self._buffers
        bad = (~b.masks[np.arange(self.num_envs), acts] | (b.n_legal == 0)) & ~autoreset
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            a = int(acts[i])
            env = self._sub_env(i)
            reason = env._illegal_reason(a) or "not a legal move in this state"
            raise IllegalActionError(a, f"{reason} (sub-env {i})", env.action_to_string(a))

    def _sub_env(self, i: int) -> PlanningEnv:
        """The prototype env holding sub-env ``i``'s state (for reasons, names and drawing)."""
        self.proto._set_state(self._buffers.states[i].copy())
        return self.proto

    def _info(self, masks: np.ndarray, acts: np.ndarray | None) -> dict[str, Any]:
        b, every = self._buffers, self._all
        info: dict[str, Any] = {"action_mask": masks, "_action_mask": every}
        info["current_player"], info["_current_player"] = b.players.copy(), every
        if not self._two_player:
            info["score"], info["_score"] = b.scores.copy(), every
        if acts is not None:
            illegal = b.illegal.copy()
            action = np.zeros(self.num_envs, np.int64)
            reason = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(illegal):
                action[i] = acts[i]
                reason[i] = self._sub_env(int(i))._illegal_reason(int(acts[i]))
            info.update(illegal_action=illegal, _illegal_action=illegal.copy())
            info.update(
                action=action, _action=illegal.copy(), reason=reason, _reason=illegal.copy()
            )
        return info

    # -- planning in batch ------------------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """``[N, A]`` bool: True exactly at each sub-env's legal actions, all False where the
        game is over (a copy; as the single env's ``action_masks()``, where ``info["action_mask"]``
        marks every action, see :class:`mc_envs.PlanningEnv`)."""
        b = self._buffers
        masks = b.masks.copy()
        masks[b.n_legal == 0] = False
        return masks

    def players(self) -> np.ndarray:
        """``[N]`` int: the player to move in each sub-env (a copy; as ``info["current_player"]``)."""
        return self._buffers.players.copy()

    def observation(self) -> np.ndarray:
        """The observations of the current states, ``[N, ...]`` (a copy)."""
        return self._buffers.obs.copy()

    @property
    def autoreset(self) -> np.ndarray:
        """``[N]`` bool: the sub-envs whose next step resets them (a copy)."""
        return self._buffers.autoreset.copy()

    def clone_state(self) -> VectorState:
        """A snapshot of all N sub-envs (:class:`VectorState`): array copies, no check."""
        b = self._buffers
        snap = VectorState(self.proto.game, self.proto._config, b.states, b.autoreset, b.opp_rng)
        # A legal row is read up to its count only: the columns no sub-env uses are left out
        # (Morpion's rows are 20,480 wide, of which a few dozen are used).
        used = int(b.n_legal.max())
        derived = tuple(
            frozen_copy(b.legal[:, :used] if name == "legal" else getattr(b, name))
            for name in DERIVED
        )
        object.__setattr__(snap, "_derived", derived)  # from checked states; dropped by pickling
        return snap

    def restore_state(self, states: VectorState | Sequence[State]) -> None:
        """Continues every sub-env from ``states``: a :class:`VectorState` of this id and config,
        or N single-env :class:`mc_envs.State` objects (which leave the autoreset flags clear).

        A snapshot that did not come from :meth:`clone_state` in this process (unpickled, built by
        hand) is checked first, each row by the game's ``check_state``; nothing changes if one
        fails.

        Raises:
            TypeError, ValueError: another game, config, size or count, or an invalid state
                (naming the sub-env and the field).
        """
        b, proto, n = self._buffers, self.proto, self.num_envs
        if isinstance(states, VectorState):
            if states.game != proto.game or states.config != proto._config:
                raise ValueError(
                    f"cannot restore a {states.game} vector state with config {states.config} "
                    f"into a {proto.game} vector env with config {proto._config}"
                )
            if states.data.shape != b.states.shape or states.data.dtype != b.states.dtype:
                raise ValueError(
                    f"cannot restore states of {states.data.dtype}{list(states.data.shape)} into "
                    f"{n} sub-envs of {b.states.dtype}[{b.states.shape[1]}]"
                )
            rows, autoreset, rng = states.data, states.autoreset, states.opponent_rng
            if autoreset.shape != (n,) or rng.shape != (n, 1) or rng.dtype != np.uint64:
                raise ValueError("restore_state: autoreset or opponent_rng of the wrong shape")
            derived = getattr(states, "_derived", None)
        else:
            rows = rows_of(states, proto.game, proto._config, n, b.states.dtype, b.states.shape[1])
            autoreset, rng, derived = np.zeros(n, np.bool_), b.opp_rng.copy(), None
        if derived is None:
            for i in range(n):
                try:
                    proto._check_state(np.array(rows[i]))
                except ValueError as e:
                    raise ValueError(f"sub-env {i}: {e}") from None
        b.states[:] = rows
        b.autoreset[:] = autoreset
        b.opp_rng[:] = rng
        if derived is None:
            config = self._config(self._use_template)
            self._run(REFRESH, self._no_actions, self._nowhere, b, config, self._no_outputs)
        else:
            for name, array in zip(DERIVED, derived, strict=True):
                (b.legal[:, : array.shape[1]] if name == "legal" else getattr(b, name))[...] = array
        self._reset_called = True

    def render(self) -> tuple[Any, ...] | None:
        """Each sub-env's frame (``render_mode`` as the single env), drawn from its state."""
        if self.render_mode is None:
            return None
        return tuple(self._sub_env(i).render() for i in range(self.num_envs))

    def close_extras(self, **kwargs: object) -> None:
        """Closes the prototype env (its window, if one was opened)."""
        self._run.close()
        self.proto.close()


def new_buffers(proto: PlanningEnv, n: int) -> Buffers:
    """The buffers of ``n`` sub-envs, each in ``proto``'s state (derived buffers zero)."""
    kernel, state = proto.kernel, proto._state
    a = int(proto.action_space.n)
    obs_space = proto.observation_space
    return Buffers(
        states=np.repeat(state[None, :], n, axis=0),
        ws=np.repeat(kernel.workspace(state)[None, :], n, axis=0),
        legal=np.zeros((n, max(a, kernel.max_actions)), np.int64),
        n_legal=np.zeros(n, np.int64),
        masks=np.zeros((n, a), np.bool_),
        obs=np.zeros((n, *obs_space.shape), obs_space.dtype),
        players=np.zeros(n, np.int64),
        scores=np.zeros(n, np.float64),
        rewards=np.zeros(n, np.float64),
        terminated=np.zeros(n, np.bool_),
        illegal=np.zeros(n, np.bool_),
        autoreset=np.zeros(n, np.bool_),
        opp_rng=np.zeros((n, 1), np.uint64),
        seeds=np.zeros((n, SEED_BLOCK), np.int64),
        seed_next=np.full(n, SEED_BLOCK, np.int64),
        cut=np.zeros(n, np.bool_),
    )


POOL = 4
_FREE = 3  # the pool's list, the loop's name, getrefcount's argument


def _free(pool: list[np.ndarray], like: np.ndarray) -> np.ndarray:
    """An array shaped as ``like`` that nothing else shares, for a copy of it: an array of ``pool``
    that no one holds any more (no name, view or container refers to it), else a new one kept in
    the pool. New arrays cost page faults (a Morpion batch's masks are 20 MB); reused ones do not."""
    for buf in pool:
        if sys.getrefcount(buf) <= _FREE:
            return buf
    buf = np.empty_like(like)
    if len(pool) < POOL:
        pool.append(buf)
    return buf
