"""The planning-env contract: snapshots, legal actions, errors, and the base class of built-in envs.

Every env of the suite is a ``gymnasium.Env`` that also offers, on ``env.unwrapped``:

``clone_state() -> State``, ``restore_state(state)``, ``legal_actions() -> int64 array`` (sorted,
empty exactly when the game is over), ``action_masks() -> bool array``, ``current_player``,
``score`` and ``max_score``. Planners rely on nothing else, so a user's own env that offers these
works with every agent (the generic path). ``action_to_string(action)`` names a move in the game's
own notation for people (replay, play, error messages). Built-in envs also carry a :class:`Kernel` of compiled
rules, which agents use for their compiled search (the fast path).

``info["action_mask"]`` is ``action_masks()`` except where the game is over: there it is all True,
so that a loop sampling from it never meets an empty mask (see :class:`PlanningEnv`).

Illegal actions follow the env's ``illegal_action`` policy (see :class:`PlanningEnv`): by default an
illegal action ends the episode with a penalty, as RL libraries expect; ``"raise"`` is the strict
mode that planners, ``mc-envs verify``, play and replay use (:func:`strict`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar, cast

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from mc_envs.contract import PlanningContract as PlanningContract  # re-exported
from mc_envs.interpret import constructor
from mc_envs.kernel import Kernel as Kernel  # re-exported: part of the contract
from mc_envs.rng import Rng
from mc_envs.search_hooks import SearchHooks
from mc_envs.spaces import LegalDiscrete as LegalDiscrete  # re-exported: part of the contract
from mc_envs.state import State as State  # re-exported: part of the contract
from mc_envs.state import check_layout as check_layout
from mc_envs.state import state_error as state_error


class IllegalActionError(ValueError):
    """An action that is not legal in the current state. The state is left unchanged.

    Attributes:
        action: the refused action.
        reason: why it was refused.
        move: the action in the game's notation (``env.action_to_string``), when known.
    """

    def __init__(self, action: object, reason: str, move: str | None = None) -> None:
        where = f" ({move})" if move else ""
        super().__init__(f"illegal action {action!r}{where}: {reason}")
        self.action = action
        self.reason = reason
        self.move = move


ILLEGAL_ACTION_POLICIES = ("terminate", "raise")


E = TypeVar("E")


@contextmanager
def strict(env: E) -> Iterator[E]:
    """Within the block, ``env`` raises :class:`IllegalActionError` on an illegal action.

    Sets ``env.unwrapped.illegal_action = "raise"`` and restores the previous policy on exit (also
    when the block raises). An env without an ``illegal_action`` attribute is left as it is: the
    planning-env contract has it raise already. Planners, ``verify``, play and replay step through
    this, so that a wrong move is an error and never a silently ended episode::

        with strict(env):
            env.step(action)  # IllegalActionError if the action is illegal

    Yields:
        ``env`` itself.
    """
    base: Any = getattr(env, "unwrapped", env)  # any env: the policy is set only where it exists
    previous = getattr(base, "illegal_action", None)
    if previous is None:
        yield env
        return
    base.illegal_action = "raise"
    try:
        yield env
    finally:
        base.illegal_action = previous


# A playout policy for the generic search path: called with the env at the start of a playout, it
# returns the chooser used for every move of that playout: chooser(legal_actions, rng) -> action.
Chooser = Callable[[np.ndarray, Rng], int]
PolicyFactory = Callable[[PlanningContract], Chooser]


def random_policy(env: PlanningContract) -> Chooser:
    """The uniform playout policy, valid for every env."""
    return lambda actions, rng: rng.choice(actions)


class PlanningEnv(SearchHooks, gym.Env[np.ndarray, np.int64]):
    """Base class of the built-in envs: the contract implemented over a flat state array.

    Subclasses define ``game``, ``_config`` (a tuple), ``_new_state(seed, options)`` returning the
    initial state array (and ``_start_state()`` when every reset starts from one state), the
    ``observation_space``, and a :class:`Kernel` in ``kernel`` whose ``observe`` writes the
    observation. The state array is ``self._state``; a scratch array for the kernel is ``self._ws``.

    ``default_policy`` names the playout policy a planner uses when given none; ``nrpa_variants``
    holds the NRPA options (:mod:`mc_envs.agents.nested.nrpa_options`) that ``mc-envs solve --algo nrpa`` uses for
    the game unless its flags say otherwise (the library's ``NRPA`` stays plain by default), and
    ``nrpa_portfolio`` the policies its root-parallel workers take in turn when ``--policy`` is not
    given and there are at least as many workers (empty: every worker uses ``default_policy``), and
    ``nrpa_race`` the policies a race (``parallel="race"``, :mod:`mc_envs.agents.parallel.race`) tries when given none
    (empty: the game has nothing to race).

    Action masks. :meth:`action_masks` is True exactly at :meth:`legal_actions` (sb3-contrib's
    MaskablePPO convention), so all False once the game is over. ``info["action_mask"]`` (of
    ``reset`` and ``step``) is the same mask, except in a state where the game is over (the step
    that ends a game, and anything after it), where it is all True, as pgx's
    ``legal_action_mask`` at a terminal state: no move is legal, and the next step of a vector env
    (Gymnasium's NEXT_STEP autoreset, ``gym.make_vec`` in every mode) resets the episode and
    ignores its action, so any action is a valid answer. A loop that samples from the mask
    (``rng.choice(np.flatnonzero(mask))``, masked logits) never meets an empty mask, in the single
    env, SyncVectorEnv and the compiled vector env alike. An episode ended by an illegal action or
    a time limit keeps the legal moves' mask (the game is not over). Tell the end of a game from
    ``terminated`` or ``legal_actions()``, not from the info mask.

    Illegal actions. An action of the action space that is not legal in the current state (or any
    action once the game is over) is handled by the policy ``illegal_action``, given to every
    built-in env's constructor and switchable per instance (``env.unwrapped.illegal_action =
    "raise"``, or for a block :func:`strict`):

    - ``"terminate"`` (the default, as in pgx and PettingZoo classic): the state is left unchanged
      and ``step`` returns ``terminated=True``, the reward :attr:`illegal_reward` (0 once the game
      is already over) and ``info["illegal_action"] = True`` with ``info["action"]`` and
      ``info["reason"]``. Gymnasium's ``check_env`` and mask-less RL algorithms (PPO, DQN) sample any
      action of the space; with this policy they learn that illegal moves lose instead of crashing.
      The episode is over: call ``reset()``. The game itself is not over (``legal_actions()`` still
      lists its moves), so a caller that ignores ``terminated`` may go on playing legal moves.
    - ``"raise"``: ``step`` raises :class:`IllegalActionError` (a ``ValueError``) naming the action
      and the reason, and the state is left unchanged.

    An action that is not an integer of the action space raises :class:`IllegalActionError` under
    both policies: it is a bug of the caller, not a move (PettingZoo asserts it the same way).

    ``illegal_reward`` is 0 in one-player puzzles, where a reward is the score that the move gains:
    ending the game early already forfeits every point still to come, which is the real penalty,
    and the episode's return stays the puzzle's score (``env.unwrapped.score``). A fixed negative
    value would not scale across games whose scores run from +1 a cell (Sudoku) to thousands
    (SameGame); Jumanji's puzzles end an invalid action's episode with reward 0 the same way. One
    caveat: under SameGame's ``penalty="jsgames"`` or ``"schadd"`` an illegal move ends the game
    without the leftover penalty; train with action masks there. Two-player games use -1 (a loss
    for the player who moved, as pgx and PettingZoo classic).
    """

    game: ClassVar[str] = "abstract"
    default_policy: ClassVar[str] = "random"
    nrpa_variants: ClassVar[dict[str, object]] = {}
    nrpa_portfolio: ClassVar[tuple[str, ...]] = ()
    nrpa_race: tuple[str, ...] = ()
    illegal_reward: ClassVar[float] = 0.0
    kernel: Kernel
    observation_space: gym.spaces.Box
    action_space: gym.spaces.Discrete
    _config: tuple
    _state: np.ndarray
    _ws: np.ndarray  # the kernel's scratch array, and the legal actions' buffer: set with _state
    _out: np.ndarray
    _render_window: object  # the "human" mode's window (mc_envs.render.window), made on first use
    _render_surface: object
    max_score: float | None = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # Gymnasium 1.x reads how vector envs autoreset from the metadata: the next step() after
        # the end of an episode resets (the default of gym.make_vec's sync and async envs).
        cls.metadata = {**cls.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}
        if "__init__" in cls.__dict__:  # made with cold kernels interpreted (mc_envs.interpret)
            cls.__init__ = constructor(cls.__dict__["__init__"])  # type: ignore[method-assign]

    def __init__(self, illegal_action: str = "terminate") -> None:
        # Computed when first asked: the legal actions (None after every change of the state), and
        # the mask and score, each with the legal array it goes with (stale once that is replaced).
        self._legal_cache: np.ndarray | None = None
        self._mask_cache: tuple[np.ndarray, np.ndarray] | None = None
        self._score_cache: tuple[np.ndarray, float] | None = None
        self.illegal_action = illegal_action

    @property
    def illegal_action(self) -> str:
        """What ``step`` does with an illegal action: ``"terminate"`` or ``"raise"`` (see above)."""
        return self._illegal_action

    @illegal_action.setter
    def illegal_action(self, policy: str) -> None:
        if policy not in ILLEGAL_ACTION_POLICIES:
            raise ValueError(
                f"{type(self).__name__}: illegal_action must be one of "
                f"{list(ILLEGAL_ACTION_POLICIES)}, got {policy!r}"
            )
        self._illegal_action = policy

    # -- the kernel-backed contract -------------------------------------------------------------

    def _check_render_mode(self, render_mode: str | None) -> None:
        """Refuses a render mode the env does not list in ``metadata["render_modes"]``."""
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        raise NotImplementedError

    def _new_states(
        self, generators: list[np.random.Generator], options: dict | None, *, parallel: bool = False
    ) -> np.ndarray:
        """One start per generator, stacked: what ``_new_state(None, options)`` returns with that
        generator as ``np_random`` (the vector env's resets). Games whose starts cost more than
        their random draws override it to make the starts in one call, on every core if
        ``parallel``."""
        keep = self._np_random
        try:
            rows = []
            for generator in generators:
                self._np_random = generator
                rows.append(self._new_state(None, options))
        finally:
            self._np_random = keep
        return np.stack(rows)

    def _start_state(self) -> np.ndarray | None:
        """The state every reset without options starts from, if resets draw no randomness (the
        compiled vector env then resets from it without Python); None otherwise."""
        return None

    def _observation(self) -> np.ndarray:
        out = np.empty(self.observation_space.shape, self.observation_space.dtype)
        self.kernel.observe(self._state, out)
        return out

    def _set_state(self, state: np.ndarray) -> None:
        self._state = state
        self._ws = self.kernel.workspace(state)
        self._out = np.empty(self.kernel.max_actions, dtype=np.int64)
        self._legal_cache = None

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Starts a new episode; see the env's docstring for what ``seed`` decides."""
        super().reset(seed=seed)
        self._set_state(self._new_state(seed, options))
        return self._observation(), self._info()

    def observation(self) -> np.ndarray:
        """The observation of the current state (what ``reset`` and ``step`` return)."""
        return self._observation()

    @property
    def state_view(self) -> np.ndarray:
        """A read-only view of the current flat state array (the layout is the game's, see its
        ``mc_envs.games`` module). Searches, drawing and tools read this; only the env writes."""
        view = self._state.view()
        view.flags.writeable = False
        return view

    def legal_actions(self) -> np.ndarray:
        """The legal actions, sorted, as int64; empty exactly when the game is over."""
        legal = self._legal_cache
        if legal is None:
            n = self.kernel.legal(self._state, self._ws, self._out)
            legal = self._legal_cache = self._out[:n].copy()  # the caller may keep it
        return legal

    def _legal_mask(self) -> np.ndarray:
        """The mask of :meth:`legal_actions`, cached with it; never handed out (copy it)."""
        legal = self.legal_actions()
        cached = self._mask_cache
        if cached is not None and cached[0] is legal:
            return cached[1]
        mask = np.zeros(self.action_space.n, dtype=bool)
        mask[legal] = True
        self._mask_cache = (legal, mask)
        return mask

    def action_to_string(self, action: int) -> str:
        """The move in the game's own notation (see the env's docstring); the number by default."""
        return str(int(action))

    def action_masks(self) -> np.ndarray:
        """A bool mask over the action space, True exactly at :meth:`legal_actions` (a new array
        each call: the caller may keep or change it)."""
        return self._legal_mask().copy()

    def _action_index(self, action: object) -> int:
        """The action as an int of the action space; raises :class:`IllegalActionError` if not."""
        if isinstance(action, (int, np.integer)):  # exact: nothing to check
            a = int(action)
        else:
            try:
                a = int(action)  # type: ignore[call-overload]  # what int() refuses is caught
            except (TypeError, ValueError):
                raise IllegalActionError(action, "not an integer action") from None
            if a != action:
                raise IllegalActionError(action, "not an integer action")
        if not 0 <= a < self.action_space.n:
            raise IllegalActionError(a, f"outside the action space 0..{self.action_space.n - 1}")
        return a

    def _illegal_reason(self, a: int) -> str | None:
        """Why action ``a`` of the action space is illegal now, or None if it is legal."""
        if self._legal_mask()[a]:
            return None
        if len(self.legal_actions()) == 0:
            return "the game is over"
        return self._why_illegal(a)

    def _check_action(self, action: object) -> int:
        """The action as an int if it is legal; raises :class:`IllegalActionError` otherwise."""
        a = self._action_index(action)
        reason = self._illegal_reason(a)
        if reason is not None:
            raise IllegalActionError(a, reason, self.action_to_string(a))
        return a

    def _why_illegal(self, action: int) -> str:
        return "not a legal move in this state"

    def _refuse(
        self, action: int, reason: str
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """``step``'s answer to an illegal action under the ``illegal_action`` policy."""
        if self._illegal_action == "raise":
            raise IllegalActionError(action, reason, self.action_to_string(action))
        over = len(self.legal_actions()) == 0
        info = self._info()
        info.update(illegal_action=True, action=action, reason=reason)
        reward = 0.0 if over else float(self.illegal_reward)
        return self._observation(), reward, True, False, info

    def step(self, action: object) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Plays one action; an illegal one is handled by the ``illegal_action`` policy.

        Raises:
            IllegalActionError: the action is not an integer of the action space, or it is illegal
                and the policy is ``"raise"``; the state is unchanged.
        """
        a = self._action_index(action)
        reason = self._illegal_reason(a)
        if reason is not None:
            return self._refuse(a, reason)
        before = self.score
        self.kernel.play(self._state, a, self._ws)
        self._legal_cache = None
        terminated = len(self.legal_actions()) == 0
        return self._observation(), self._reward(before), terminated, False, self._info()

    def _reward(self, score_before: float) -> float:
        """The reward of the move just played: the score it gained (puzzles)."""
        return self.score - score_before

    def _info_mask(self) -> np.ndarray:
        """``info["action_mask"]``: :meth:`action_masks`, or all True once the game is over (see
        the class docstring)."""
        if len(self.legal_actions()) == 0:
            return np.ones(self.action_space.n, dtype=bool)
        return self.action_masks()

    def _info(self) -> dict[str, Any]:
        return {
            "action_mask": self._info_mask(),
            "current_player": self.current_player,
            "score": self.score,
        }

    @property
    def current_player(self) -> int:
        """Whose turn it is: always 0 in one-player puzzles."""
        return 0

    @property
    def score(self) -> float:
        """The cumulative score so far."""
        legal = self._legal_cache
        cached = self._score_cache
        if cached is not None and cached[0] is legal:
            return cached[1]
        score = float(self.kernel.score(self._state))
        if legal is not None:  # kept until the state changes (only once listed: see Kernel.score)
            self._score_cache = (legal, score)
        return score

    def clone_state(self) -> State:
        """An immutable snapshot of the current state (an array copy), which ``restore_state``
        trusts without checking it."""
        return State._trusted(self.game, self._config, self._state.copy())

    def restore_state(self, state: State) -> None:
        """Continues exactly from ``state``; a snapshot of another game or size raises. A state
        not taken by :meth:`clone_state` (unpickled, copied, built by hand) is checked first, by
        the game's ``check_state`` (ValueError unless the kernel can run from it)."""
        if not isinstance(state, State):
            raise TypeError(f"restore_state expects a mc_envs.State, got {type(state).__name__}")
        if state.game != self.game or state.config != self._config:
            raise ValueError(
                f"cannot restore a {state.game} state with config {state.config} "
                f"into a {self.game} env with config {self._config}"
            )
        data = state.data.copy()
        if not getattr(state, "_valid", False):
            self._check_state(data)
            object.__setattr__(state, "_valid", True)  # a State's data is read-only
        current = getattr(self, "_state", None)
        if current is not None and data.shape == current.shape:  # same config: _ws, _out fit
            self._state = data
            self._legal_cache = None
        else:
            self._set_state(data)

    def _check_state(self, data: np.ndarray) -> None:
        """Raises ValueError unless ``data`` is a state the kernel can run from (the game's
        ``check_state``). Every state that comes from outside the env passes here first."""

    def policy(self, name: str | None) -> PolicyFactory:
        """The generic-path playout policy of that name (see the env's docstring for names)."""
        name = name or self.default_policy
        if name == "random":
            return random_policy
        raise ValueError(
            f"{self.game} has no playout policy {name!r}; it has {sorted(self.kernel.policies)}"
        )

    def render(self) -> str | np.ndarray | None:
        """Renders as set by ``render_mode``: ``"ansi"`` returns text, ``"rgb_array"`` an
        ``H x W x 3`` uint8 frame drawn offscreen, ``"human"`` shows the state in a window at
        ``metadata["render_fps"]``. The pygame modes import :mod:`render` (and pygame) only now;
        without pygame they raise ImportError naming ``pip install "mc-envs[render]"``."""
        if self.render_mode == "ansi":
            return self._ansi()
        if self.render_mode in ("rgb_array", "human"):
            from mc_envs.render import (
                render_env,  # lazy: mc_envs never imports pygame at module top
            )

            return render_env(self)
        return None

    def close(self) -> None:
        """Closes the ``"human"`` window, if one was opened."""
        if getattr(self, "_render_window", None) is not None:
            from mc_envs.render import close_env

            close_env(self)
        super().close()

    def _ansi(self) -> str:
        raise NotImplementedError


def unwrap(env: gym.Env) -> PlanningEnv:
    """``env.unwrapped``: the planning env under a (possibly wrapped) env, typed as the
    :class:`PlanningEnv` every built-in env is. A user's env that only provides
    :class:`PlanningContract` gets the agents' generic paths, which use no more than that."""
    return cast(PlanningEnv, env.unwrapped)
