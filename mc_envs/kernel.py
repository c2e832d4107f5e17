"""The compiled rules of a built-in game (:class:`Kernel`), as the compiled searches use them, and
the one table (:class:`KernelBindings`) by which every compiled template calls them."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from types import ModuleType
from typing import Any, NamedTuple, NoReturn

import numpy as np

from mc_envs._numba import instantiate, njit

#: The info key that says a step stopped the game at its move cap (``Kernel.truncated``).
CAP_INFO = "max_moves_reached"

# The kernel functions' signatures (arrays: the state, ``ws`` the scratch array, ``rng`` the shared
# generator's state of :mod:`mc_envs.rng`); see :class:`Kernel` for what each does.
LegalFn = Callable[[np.ndarray, np.ndarray, np.ndarray], int]  # (state, ws, out) -> n
PlayFn = Callable[[np.ndarray, int, np.ndarray], float]  # (state, action, ws) -> reward
PlayoutFn = Callable[[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, int], int]
StateFn = Callable[[np.ndarray], float]  # score(state), returns(state)
PlayerFn = Callable[[np.ndarray], int]  # player(state)
TruncatedFn = Callable[[np.ndarray], bool]  # truncated(state)
ObserveFn = Callable[[np.ndarray, np.ndarray], None]  # (state, out)
CodeFn = Callable[[np.ndarray, int, np.ndarray], int]  # (state, action, ws) -> code
LegalCodesFn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], int]
SelectFn = Callable[[np.ndarray, np.ndarray, np.ndarray, int, int], int]
BiasFn = Callable[[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray], None]
PriorFn = Callable[[np.ndarray, np.ndarray, int, np.ndarray], None]  # (state, actions, n, out)
# (state, actions, n, ws, visits, values): tree knowledge as virtual visits and values
KnowledgeFn = Callable[[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray], None]


@dataclass(frozen=True)
class Kernel:
    """The compiled rules of a built-in game, as used by the compiled searches.

    A game state is a flat numpy array. Every function below is a numba function:

    - ``legal(state, ws, out) -> n``: writes the legal actions, sorted, into ``out[:n]``.
    - ``play(state, action, ws) -> reward``: applies a legal action in place. A game may leave
      scoring the end of the game to the next ``legal`` or ``playout`` call.
    - ``playout(state, policy, rng, ws, seq, start) -> n``: plays to the end with the policy of
      that code, writes the ``n`` actions into ``seq[start:start + n]``.
    - ``score(state) -> float``: the cumulative score (one-player games), valid after ``legal``
      or ``playout``.

    ``workspace(state)`` (plain Python) returns the scratch array ``ws`` that the functions share.
    Two-player games also give ``player(state) -> 0 or 1`` (the player to move) and
    ``returns(state) -> float`` (at the end: +1 if player 0 won, -1 if player 1 won, 0 for a draw).
    ``observe(state, out)`` writes the env's observation of the state into ``out`` (an array of the
    observation space's shape and dtype): the single env and the compiled vector env
    (:mod:`mc_envs.vector`) both observe through it.
    A game that ends itself at a move cap its rules do not have (Go's ``max_moves``) gives
    ``truncated(state) -> bool``: whether a finished game was cut there. Searches value such a game
    by ``returns`` as any other end; the single and vector envs report it truncated (not
    terminated, reward 0), with ``info[CAP_INFO]`` True.
    A game may give ``code(state, action, ws) -> int >= 0``, the move's code for NRPA's policy,
    computed before the action is played; without it the code is the action. It may also give
    ``legal_codes(state, ws, out, codes) -> n``, ``legal`` that also writes every action's code
    into ``codes[:n]`` (equal to ``code``'s), when one pass costs less than ``code`` per action.

    Game knowledge that searches use lives here too, so that no search names a game:

    - ``select(state, moves, codes, n, key) -> m``: a selective move filter (NRPA's selective
      policies). It keeps ``m <= n`` of the legal moves (and their codes) in place and returns
      ``m``; ``key < 0`` keeps them all. ``selections`` maps a selective policy's name to a plain
      Python ``key(state) -> int`` computed once at the root of a search (SameGame: ``"tabu"`` ->
      the tabu colour).
    - ``bias(state, moves, n, out, ws)``: a heuristic value of each of the ``n`` legal moves in
      ``out[:n]`` (GNRPA's bias, which NRPA's ``bias=`` weighs; SameGame: the group's size).
    - ``priors``: named compiled move priors ``prior(state, actions, n, out)`` writing a
      probability for each of the ``n`` legal actions (PUCT's compiled priors).
    - ``knowledge``: named compiled tree knowledge ``fn(state, actions, n, ws, visits, values)``
      writing, for each of the ``n`` legal actions, a number of virtual visits (``>= 0``) and
      their mean value in [0, 1] for the player to move (UCT's priors, as Gelly and Silver's
      heuristic MC-RAVE).

    Attributes:
        name: unique among kernels; names the cached compiled searches.
        max_moves: an upper bound on the length of a game from any state of this config.
        max_actions: the size of the action space.
        policies: playout policy names -> codes understood by ``playout``.
    """

    name: str
    legal: LegalFn
    play: PlayFn
    playout: PlayoutFn
    score: StateFn
    workspace: Callable[[np.ndarray], np.ndarray]
    max_moves: int
    max_actions: int
    policies: dict[str, int]
    observe: ObserveFn
    player: PlayerFn | None = None
    returns: StateFn | None = None
    truncated: TruncatedFn | None = None
    code: CodeFn | None = None
    legal_codes: LegalCodesFn | None = None
    select: SelectFn | None = None
    bias: BiasFn | None = None
    selections: dict[str, Callable[[np.ndarray], int]] = field(default_factory=dict)
    priors: dict[str, PriorFn] = field(default_factory=dict)
    knowledge: dict[str, KnowledgeFn] = field(default_factory=dict)

    @classmethod
    def from_module(
        cls,
        module: ModuleType,
        *,
        name: str,
        max_moves: int,
        max_actions: int,
        two_player: bool = False,
        **extra: Any,
    ) -> Kernel:
        """The kernel of a game module that defines the functions under their names here
        (``legal``, ``play``, ``playout``, ``score``, ``workspace``, ``observe``, and with
        ``two_player`` ``player`` and ``returns``) and ``POLICIES``; ``extra``: the other fields.

        Raises:
            AttributeError: the module lacks one of those names.
        """
        names: tuple[str, ...] = ("legal", "play", "playout", "score", "workspace", "observe")
        names += ("player", "returns") if two_player else ()
        return cls(
            name=name,
            max_moves=int(max_moves),
            max_actions=int(max_actions),
            policies=dict(module.POLICIES),
            **{key: getattr(module, key) for key in names},
            **extra,
        )

    @functools.cached_property
    def bindings(self) -> KernelBindings:
        """This kernel's functions under the names every compiled template binds, with the
        defaults of the ones it does not give (:class:`KernelBindings`); made once a kernel."""
        return _table(self)

    def __reduce__(self) -> tuple:
        """Pickles each function that is a module global by its module and name, so that a kernel
        sent to a worker process keeps numba's on-disk cache: a numba function pickled by value is
        rebuilt without its cache and compiles again (seconds a function, on the first call)."""
        return (_rebuild, (tuple((f.name, _by_name(getattr(self, f.name))) for f in fields(self)),))


class _Global(NamedTuple):
    """A module global, pickled as its module and name."""

    module: str
    name: str


def _by_name(value: object) -> object:
    if isinstance(value, dict):  # priors, knowledge: each function by name too
        return {key: _by_name(v) for key, v in value.items()}
    module, name = getattr(value, "__module__", None), getattr(value, "__name__", None)
    if module and name and getattr(sys.modules.get(module), name, None) is value:
        return _Global(module, name)
    return value


def _global(value: object) -> object:
    if isinstance(value, dict):
        return {key: _global(v) for key, v in value.items()}
    if isinstance(value, _Global):
        return getattr(importlib.import_module(value.module), value.name)
    return value


def _rebuild(items: tuple[tuple[str, object], ...]) -> Kernel:
    values: dict[str, Any] = {key: _global(v) for key, v in items}  # Kernel's fields, as pickled
    return Kernel(**values)


# -- the kernel-binding table ------------------------------------------------------------------


class KernelBindings(NamedTuple):
    """A kernel's compiled functions under the global names every compiled template calls them
    by, with a default for each optional one (:attr:`Kernel.bindings`). A template (the searches
    of :mod:`mc_envs.agents.ops`, the vector env's step of :mod:`mc_envs.vector.compiled`) imports
    the placeholders below and is compiled per game with
    ``instantiate(template, kernel.name, **kernel.bindings._asdict())``
    (:func:`mc_envs._numba.instantiate`, which keys its memo on the names the template reads)."""

    k_legal: LegalFn
    k_play: PlayFn
    k_playout: PlayoutFn
    k_score: StateFn
    k_observe: ObserveFn
    k_player: PlayerFn  # one-player games: always 0
    k_returns: StateFn  # one-player games: always 0.0
    k_truncated: TruncatedFn  # games without a move cap: always False
    k_code: CodeFn  # games without move codes: the action
    k_legal_codes: LegalCodesFn  # without one: k_legal, then k_code for each action
    k_select: SelectFn  # games without a selective filter: every move kept
    k_bias: BiasFn  # games without a move bias: 0 for every move
    TWO_PLAYER: bool  # the game gives player (and returns)


def _table(kernel: Kernel) -> KernelBindings:
    codes = kernel.legal_codes
    if codes is None:
        code = kernel.code if kernel.code is not None else action_code
        codes = instantiate(_legal_then_codes, kernel.name, k_legal=kernel.legal, k_code=code)
    two = kernel.player is not None
    return KernelBindings(
        k_legal=kernel.legal,
        k_play=kernel.play,
        k_playout=kernel.playout,
        k_score=kernel.score,
        k_observe=kernel.observe,
        k_player=kernel.player if kernel.player is not None else player_zero,
        k_returns=kernel.returns if two and kernel.returns is not None else zero_return,
        k_truncated=kernel.truncated if kernel.truncated is not None else never_truncated,
        k_code=kernel.code if kernel.code is not None else action_code,
        k_legal_codes=codes,
        k_select=kernel.select if kernel.select is not None else keep_all,
        k_bias=kernel.bias if kernel.bias is not None else no_bias,
        TWO_PLAYER=two,
    )


def _unbound(*args: object) -> NoReturn:
    raise NotImplementedError(
        "a kernel function of a compiled template: bound per game by mc_envs._numba.instantiate "
        "with mc_envs.kernel.Kernel.bindings"
    )


# The placeholders of the table's names (and of a kernel's named priors and knowledge, bound one
# at a time): a template imports them, instantiate rebinds them per game.
k_legal: LegalFn = _unbound
k_play: PlayFn = _unbound
k_playout: PlayoutFn = _unbound
k_score: StateFn = _unbound
k_observe: ObserveFn = _unbound
k_player: PlayerFn = _unbound
k_returns: StateFn = _unbound
k_truncated: TruncatedFn = _unbound
k_code: CodeFn = _unbound
k_legal_codes: LegalCodesFn = _unbound
k_select: SelectFn = _unbound
k_bias: BiasFn = _unbound
TWO_PLAYER = False
k_prior: PriorFn = _unbound  # one of Kernel.priors
k_knowledge: KnowledgeFn = _unbound  # one of Kernel.knowledge


@njit(cache=True, nogil=True)
def player_zero(state):
    """The default ``player``: one-player games always have player 0 to move."""
    return 0


@njit(cache=True, nogil=True)
def zero_return(state):
    """The default ``returns`` of one-player games."""
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def never_truncated(state):
    """The default ``truncated``: a game without a move cap of its own."""
    return False


@njit(cache=True, nogil=True)
def action_code(state, action, ws):
    """The default move code (NRPA): the action itself."""
    return np.int64(action)


@njit(cache=True, nogil=True)
def keep_all(state, moves, codes, n, key):
    """The default selective filter: every legal move may be played."""
    return n


@njit(cache=True, nogil=True)
def no_bias(state, moves, n, out, ws):
    """The default move bias: zero for every move."""
    for j in range(n):
        out[j] = 0.0


def _legal_then_codes(s, ws, out, codes):  # pragma: no cover (compiled)
    # The default legal_codes: legal, then the kernel's code for every action.
    n = k_legal(s, ws, out)
    for j in range(n):
        codes[j] = k_code(s, out[j], ws)
    return n
