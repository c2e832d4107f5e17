"""The one random number generator of the search code: splitmix64 with Lemire's range reduction.

Compiled searches and the generic Python searches draw from the same stream, so that for a fixed seed
both make the same choices. The state is a ``uint64`` array of length 1, mutated in place.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mc_envs._numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True)
def rng_next(s: np.ndarray) -> np.uint64:
    """Advances the state and returns the next 64 random bits."""
    s[0] += _GOLDEN
    z = s[0]
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def rng_below(s: np.ndarray, n: int) -> int:
    """A uniform integer in ``[0, n)`` for ``1 <= n < 2**32``."""
    return np.int64(((rng_next(s) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, nogil=True)
def rng_uniform(s: np.ndarray) -> float:
    """A uniform float in ``[0, 1)`` with 53 random bits."""
    return float(rng_next(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def rng_state(seed: int) -> np.ndarray:
    """A fresh generator state for ``seed``; nearby seeds give unrelated streams."""
    mix = np.array([np.uint64(seed & 0xFFFFFFFFFFFFFFFF)], dtype=np.uint64)
    return np.array([rng_next(mix)], dtype=np.uint64)


class Rng:
    """Python handle on the shared generator, for the generic (uncompiled) search paths.

    Args:
        seed: any non-negative integer.
    """

    __slots__ = ("state",)

    def __init__(self, seed: int = 0) -> None:
        self.state = rng_state(seed)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        return rng_below(self.state, n)

    def uniform(self) -> float:
        """A uniform float in ``[0, 1)``."""
        return rng_uniform(self.state)

    def choice(self, actions: np.ndarray) -> int:
        """A uniformly chosen element of ``actions``."""
        return int(actions[rng_below(self.state, len(actions))])


_MASK = (1 << 64) - 1


def _splitmix(s: np.ndarray) -> int:
    """:func:`rng_next` in Python integers (the same 64 bits, nothing to compile):
    the generic path must not wait for numba on a cold cache (a test checks the two agree)."""
    x = (int(s[0]) + 0x9E3779B97F4A7C15) & _MASK
    s[0] = x
    z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def plain_rng_below(s: np.ndarray, n: int) -> int:
    """:func:`rng_below` in plain Python (the same draw)."""
    return ((_splitmix(s) >> 32) * int(n)) >> 32


def plain_rng_uniform(s: np.ndarray) -> float:
    """:func:`rng_uniform` in plain Python (the same draw)."""
    return float(_splitmix(s) >> 11) * (1.0 / 9007199254740992.0)


def plain_rng_state(seed: int) -> np.ndarray:
    """:func:`rng_state` in plain Python (the same state)."""
    mix = np.array([int(seed) & _MASK], dtype=np.uint64)
    return np.array([_splitmix(mix)], dtype=np.uint64)


PLAIN_RNG: dict[str, Callable[..., object]] = {
    "rng_below": plain_rng_below,
    "rng_uniform": plain_rng_uniform,
}


class PlainRngView(Rng):
    """An :class:`Rng` over an existing state array that draws in plain Python (the generic
    search path: the same draws as the compiled generator, nothing to compile)."""

    def __init__(self, state: np.ndarray) -> None:
        self.state = state

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        return plain_rng_below(self.state, n)

    def uniform(self) -> float:
        """A uniform float in ``[0, 1)``."""
        return plain_rng_uniform(self.state)

    def choice(self, actions: np.ndarray) -> int:
        """A uniformly chosen element of ``actions``."""
        return int(actions[plain_rng_below(self.state, len(actions))])
