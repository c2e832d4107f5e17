"""The snapshot of an env's state (:class:`State`) and the checks that game modules run on one."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def frozen_copy(array: np.ndarray) -> np.ndarray:
    """A read-only copy of ``array`` (what every snapshot holds)."""
    copy = np.array(array, copy=True)
    copy.flags.writeable = False
    return copy


@dataclass(frozen=True, eq=False)
class State:
    """An immutable, picklable snapshot of everything that decides an env's future.

    Attributes:
        game: the game's name, e.g. ``"SameGame"``.
        config: what makes two states comparable (board size, variant ...).
        data: a read-only copy of the game's flat state array.
    """

    game: str
    config: tuple
    data: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", frozen_copy(self.data))

    def __setstate__(self, state: dict) -> None:
        object.__setattr__(self, "game", state["game"])
        object.__setattr__(self, "config", state["config"])
        object.__setattr__(self, "data", frozen_copy(state["data"]))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State)
            and self.game == other.game
            and self.config == other.config
            and np.array_equal(self.data, other.data)
        )

    def __hash__(self) -> int:
        return hash((self.game, self.config, self.data.tobytes()))

    @classmethod
    def _trusted(cls, game: str, config: tuple, data: np.ndarray) -> State:
        """An env's snapshot of its own state (``data``: a fresh copy, made read-only here), marked
        so that ``restore_state`` skips the check; ``__setstate__`` drops the mark (pickles, copies)."""
        data.setflags(write=False)
        state = cls.__new__(cls)
        state.__dict__.update(game=game, config=config, data=data, _valid=True)
        return state


def check_layout(data: object, game: str, dtype: type, length: int) -> np.ndarray:
    """Checks the shape of a game's flat state array; returns it as an ndarray.

    Raises:
        ValueError: ``data`` is not a 1-D array of ``dtype`` with ``length`` entries.
    """
    if not isinstance(data, np.ndarray):
        raise ValueError(f"invalid {game} state: data is a {type(data).__name__}, not an array")
    if data.dtype != dtype or data.ndim != 1 or data.shape[0] != length:
        raise ValueError(
            f"invalid {game} state: data is {data.dtype}{list(data.shape)}, "
            f"expected {np.dtype(dtype)}[{length}]"
        )
    return data


def state_error(
    game: str, field: str, index: int | str, value: object, expected: str
) -> ValueError:
    """The error of an impossible value in a state: names the game, field and index."""
    return ValueError(f"invalid {game} state: {field} (index {index}) is {value}, {expected}")
