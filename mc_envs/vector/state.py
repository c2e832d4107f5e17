"""The snapshot of a whole vector env: every sub-env's state at once (:class:`VectorState`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from mc_envs.core import State
from mc_envs.state import frozen_copy


@dataclass(frozen=True, eq=False)
class VectorState:
    """An immutable, picklable snapshot of all N sub-envs of a :class:`PlanningVectorEnv`.

    Attributes:
        game: the game's name, e.g. ``"ConnectFour"``.
        config: what makes two states comparable (as :class:`mc_envs.State`'s).
        data: ``[N, L]``, read-only: row ``i`` is sub-env ``i``'s flat state array.
        autoreset: ``[N]`` bool, read-only: the sub-envs whose next step resets them.
        opponent_rng: ``[N, 1]`` uint64, read-only: the random opponent's generators (unused
            when there is no opponent).

    ``states[i]`` is sub-env ``i``'s :class:`mc_envs.State`, which a single env of the same id and
    kwargs restores. A snapshot taken by ``clone_state`` also carries the derived buffers (legal
    moves, masks, observations), so that restoring it is array copies only; pickling drops them
    with the mark of trust, so an unpickled snapshot is checked and recomputed on restore.
    """

    game: str
    config: tuple
    data: np.ndarray = field(repr=False)
    autoreset: np.ndarray = field(repr=False)
    opponent_rng: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        for name in ("data", "autoreset", "opponent_rng"):
            object.__setattr__(self, name, frozen_copy(getattr(self, name)))

    def __getstate__(self) -> dict:
        return {
            k: getattr(self, k) for k in ("game", "config", "data", "autoreset", "opponent_rng")
        }

    def __setstate__(self, state: dict) -> None:
        for name in ("game", "config"):
            object.__setattr__(self, name, state[name])
        for name in ("data", "autoreset", "opponent_rng"):
            object.__setattr__(self, name, frozen_copy(state[name]))

    def __len__(self) -> int:
        return int(self.data.shape[0])

    def __getitem__(self, i: int) -> State:
        return State(self.game, self.config, self.data[i])

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, VectorState)
            and self.game == other.game
            and self.config == other.config
            and np.array_equal(self.data, other.data)
            and np.array_equal(self.autoreset, other.autoreset)
            and np.array_equal(self.opponent_rng, other.opponent_rng)
        )

    def __hash__(self) -> int:
        return hash((self.game, self.config, self.data.tobytes(), self.autoreset.tobytes()))


def rows_of(
    states: Iterable[State], game: str, config: tuple, n: int, dtype: np.dtype, length: int
) -> np.ndarray:
    """The ``[N, L]`` state rows of a sequence of N single-env :class:`mc_envs.State` objects.

    Raises:
        TypeError: ``states`` is not a sequence of ``State``.
        ValueError: not N of them, or one of another game, config or layout (naming its index).
    """
    try:
        items = list(states)
    except TypeError:
        raise TypeError(
            f"restore_state expects a VectorState or a sequence of mc_envs.State, "
            f"got {type(states).__name__}"
        ) from None
    if len(items) != n:
        raise ValueError(f"restore_state: got {len(items)} states for {n} sub-envs")
    rows = np.empty((n, length), dtype=dtype)
    for i, s in enumerate(items):
        if not isinstance(s, State):
            raise TypeError(f"restore_state: states[{i}] is a {type(s).__name__}, not a State")
        if s.game != game or s.config != config:
            raise ValueError(
                f"restore_state: states[{i}] is a {s.game} state with config {s.config}, "
                f"this vector env is {game} with config {config}"
            )
        if s.data.dtype != dtype or s.data.shape != (length,):
            raise ValueError(
                f"restore_state: states[{i}] data is {s.data.dtype}{list(s.data.shape)}, "
                f"expected {np.dtype(dtype)}[{length}]"
            )
        rows[i] = s.data
    return rows
