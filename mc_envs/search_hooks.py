"""What a search's generic path asks of a built-in env besides the planning contract: a move
without the step's observation, NRPA's move codes, selective filters and move bias
(:class:`SearchHooks`, a base of :class:`mc_envs.core.PlanningEnv`, through the game's
:class:`~mc_envs.kernel.Kernel`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, cast

import numpy as np

from mc_envs.kernel import Kernel
from mc_envs.rng import Rng

if TYPE_CHECKING:
    from mc_envs.contract import PlanningContract


class SearchHooks:
    """A search's calls of an env over its kernel: :meth:`play_move` (a move, as the compiled
    search makes it), :meth:`play_out` (a playout's moves), :meth:`move_code` and
    :meth:`legal_codes` (NRPA's policy keys), :meth:`selection_key` and :meth:`select_moves`
    (selective policies), :meth:`move_bias` (GNRPA's bias). A user's env may offer any of them;
    the generic path does without (a move is then a ``step``, a move's code the action)."""

    kernel: Kernel
    game: ClassVar[str]
    _state: np.ndarray
    _ws: np.ndarray
    _out: np.ndarray
    _legal_cache: np.ndarray | None

    if TYPE_CHECKING:

        def legal_actions(self) -> np.ndarray: ...  # PlanningEnv's

        def _check_action(self, action: object) -> int: ...  # PlanningEnv's

    def play_move(self, action: int) -> float:
        """Plays a legal action as a compiled search does: the game's move alone, without the
        observation, info and opponent's answer of ``step`` (a search's generic path makes tens of
        thousands a second); returns the kernel's reward of the move.

        Raises:
            IllegalActionError: the action is not legal now; nothing changes.
        """
        a = self._check_action(action)
        reward = float(self.kernel.play(self._state, a, self._ws))
        self._legal_cache = None
        return reward

    def play_out(
        self, choose: Callable[[np.ndarray, Rng], int], rng: Rng, seq: np.ndarray, start: int
    ) -> int:
        """Plays to the end of the game as a search's generic playout: each move is
        ``choose(legal, rng)`` of the legal actions the kernel lists, played as :meth:`play_move`
        plays it but without its check (the move was taken from the list; generic UCT on 9x9 Go
        runs 1.5x as fast). Writes the moves into ``seq[start:]``; returns how many. An env
        whose :meth:`play_move` is another (a subclass's, or one set on the instance) has its
        moves made by it, checked."""
        if getattr(self.play_move, "__func__", None) is not SearchHooks.play_move:
            return playout_by_moves(
                cast("PlanningContract", self), self.play_move, choose, rng, seq, start
            )
        n = 0
        kernel, state, ws, out = self.kernel, self._state, self._ws, self._out
        while True:
            k = int(kernel.legal(state, ws, out))
            self._legal_cache = None
            if k == 0:
                return n
            a = int(choose(out[:k], rng))
            kernel.play(state, a, ws)
            seq[start + n] = a
            n += 1

    def move_code(self, action: int) -> int:
        """The code of a legal action in the current state (NRPA's policy key); the action by default."""
        if self.kernel.code is None:
            return int(action)
        return int(self.kernel.code(self._state, int(action), self._ws))

    def legal_codes(self, out: np.ndarray, codes: np.ndarray) -> int:
        """Writes the legal actions, sorted (as :meth:`legal_actions`), into ``out`` and their
        codes (as :meth:`move_code` gives each) into ``codes``; returns how many. One kernel call
        where the game lists codes with its moves (:attr:`Kernel.legal_codes`: SameGame's 40-odd
        groups a state cost one pass, not one flood fill each)."""
        listed = self.kernel.legal_codes
        if listed is None:
            legal = self.legal_actions()
            n = len(legal)
            out[:n] = legal
            codes[:n] = legal if self.kernel.code is None else [self.move_code(a) for a in legal]
            return n
        n = int(listed(self._state, self._ws, out, codes))
        if self._legal_cache is None:
            self._legal_cache = out[:n].copy()  # the step's legality check reads it
        return n

    def selection_key(self, name: str) -> int:
        """The key of the game's selective policy ``name`` in the current state (for NRPA).

        Raises:
            ValueError: the game has no selective policy of that name.
        """
        key = self.kernel.selections.get(name)
        if key is None:
            raise ValueError(
                f"{self.game} has no selective policy {name!r}; it has "
                f"{['random', *sorted(self.kernel.selections)]}"
            )
        return int(key(self._state))

    def select_moves(self, moves: np.ndarray, codes: np.ndarray, n: int, key: int) -> int:
        """Applies the game's selective filter (:attr:`Kernel.select`) to ``moves[:n]`` and
        ``codes[:n]`` in place in the current state; returns how many moves it keeps."""
        if self.kernel.select is None or key < 0:
            return n
        return int(self.kernel.select(self._state, moves, codes, n, key))

    def move_bias(self, moves: np.ndarray, n: int, out: np.ndarray) -> None:
        """Writes the game's heuristic value of each of the legal ``moves[:n]`` into ``out[:n]``
        (:attr:`Kernel.bias`, GNRPA's bias); zeros when the game has none."""
        if self.kernel.bias is None:
            out[:n] = 0.0
        else:
            self.kernel.bias(self._state, moves, n, out, self._ws)


def playout_by_moves(
    env: PlanningContract,
    move: Callable[[int], object],
    choose: Callable[[np.ndarray, Rng], int],
    rng: Rng,
    seq: np.ndarray,
    start: int,
) -> int:
    """Plays ``env`` to the end through ``move`` (its ``play_move`` or ``step``), each move
    ``choose(env.legal_actions(), rng)``; writes the moves into ``seq[start:]`` and returns how
    many (the generic playout of an env without :meth:`SearchHooks.play_out`)."""
    n = 0
    legal = env.legal_actions()
    while len(legal):
        a = int(choose(legal, rng))
        move(a)
        seq[start + n] = a
        n += 1
        legal = env.legal_actions()
    return n
