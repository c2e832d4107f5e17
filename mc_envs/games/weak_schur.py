"""Weak Schur numbers as a puzzle: rules, numba kernels, text.

Partition ``1..n`` into ``k`` parts, each *weakly sum-free*: no ``x + y = z`` with ``x != y`` and
``x, y, z`` in one part. ``WS(k)`` is the largest ``n`` for which this is possible: 2, 8, 23, 66
for ``k = 1..4``; ``WS(5) >= 196`` (Eliahou et al. 2012) and ``WS(6) >= 642`` (Rowley 2021).

A move puts the next integer ``n + 1`` into a part (action = part index ``0..k-1``); it is legal
exactly when the part stays weakly sum-free. Score = ``n``, the integers placed; the game ends
when the next integer fits nowhere.

Symmetry: renaming the parts gives an equivalent partition, so the rules open parts in order: an
integer may go into an opened part or into the *first* empty part only (1 always goes into part
0). Every partition has exactly one ordering of its parts that the rules allow, so searches see
each partition once instead of up to ``k!`` times; an empty part always accepts, so the game ends
only when all ``k`` parts are open and none accepts.

Lengths: a game never exceeds :func:`bound` ``(k)``: ``WS(k)`` where it is known (``k <= 4``),
else Bornsztein's (2001) upper bound ``floor(k! k e) + 1`` (1631 for ``k = 5``).

State layout (one flat int64 array; copying it is a complete snapshot)::

    index          meaning
    0              K       the number of parts
    1              N       integers placed (1..N), the score; the next integer is N + 1
    2              USED    parts opened so far (the parts 0..USED-1 are non-empty)
    3              BOUND   the longest possible game, :func:`bound` (k)
    4..7           reserved (0)
    HEADER + i - 1 the part (0..K-1) of integer i, for i = 1..BOUND; -1 while i is not placed

NRPA's move code is ``(N + 1) * K + part``: "this integer in this part".
"""

from __future__ import annotations

import math

import numpy as np

from mc_envs._numba import njit
from mc_envs.core import Kernel, check_layout, state_error
from mc_envs.games.playouts import uniform_playout

K, N, USED, BOUND = range(4)
HEADER = 8
POLICIES = {"random": 0}
PARTS = "ABCDEF"
MAX_K = len(PARTS)
KNOWN = {1: 2, 2: 8, 3: 23, 4: 66}  # WS(k), proven
BEST_KNOWN = {5: 196, 6: 642}  # lower bounds: the best partitions found


def bound(k: int) -> int:
    """The longest game with ``k`` parts: ``WS(k)`` if known, else ``floor(k! k e) + 1``.

    Raises:
        ValueError: ``k`` outside ``1..6``.
    """
    if not (isinstance(k, (int, np.integer)) and 1 <= k <= MAX_K):
        raise ValueError(f"k (the number of parts) must be an integer in 1..{MAX_K}, got {k!r}")
    return KNOWN.get(int(k), int(math.factorial(k) * k * math.e) + 1)


def new_state(k: int) -> np.ndarray:
    """The empty partition with ``k`` parts (nothing placed yet)."""
    b = bound(k)
    state = np.full(HEADER + b, -1, dtype=np.int64)
    state[:HEADER] = 0
    state[K], state[BOUND] = k, b
    return state


@njit(cache=True, nogil=True)
def _blocked(state: np.ndarray) -> int:
    """A bit per part that the next integer would break (x + y = next, x != y, both there)."""
    x = state[N] + 1
    mask = 0
    for y in range(1, (x + 1) // 2):  # y < x - y, so the two summands differ
        p = state[HEADER + y - 1]
        if p == state[HEADER + x - y - 1]:
            mask |= 1 << p
    return mask


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, ws: np.ndarray, out: np.ndarray) -> int:
    """Writes the parts that accept the next integer, sorted, into ``out``; returns their number."""
    if state[N] >= state[BOUND]:
        return 0
    mask = _blocked(state)
    count = 0
    for p in range(state[USED]):
        if not mask >> p & 1:
            out[count] = p
            count += 1
    if state[USED] < state[K]:
        out[count] = state[USED]
        count += 1
    return count


@njit(cache=True, nogil=True)
def play(state: np.ndarray, action: int, ws: np.ndarray) -> float:
    """Puts the next integer into part ``action`` (legal); the reward is 1."""
    state[N] += 1
    state[HEADER + state[N] - 1] = action
    if action == state[USED]:
        state[USED] += 1
    return 1.0


@njit(cache=True, nogil=True)
def score(state: np.ndarray) -> float:
    """The integers placed."""
    return float(state[N])


@njit(cache=True, nogil=True)
def code(state: np.ndarray, action: int, ws: np.ndarray) -> int:
    """NRPA's code of a move: ``(next integer) * K + part``."""
    return (state[N] + 1) * state[K] + action


playout = uniform_playout("weak_schur", legal, play)


@njit(cache=True, nogil=True)
def observe(state: np.ndarray, out: np.ndarray) -> None:
    """Writes the part of each integer 1..BOUND (-1 while unplaced) into ``out``."""
    for i in range(state[BOUND]):
        out[i] = state[HEADER + i]


def workspace(state: np.ndarray) -> np.ndarray:
    """The scratch array: room for the legal parts."""
    return np.zeros(MAX_K, dtype=np.int64)


def make_kernel(k: int) -> Kernel:
    """The compiled rules with ``k`` parts (one kernel for every ``k``: it is in the state)."""
    b = bound(k)
    return Kernel(
        name="weakschur",
        legal=legal,
        play=play,
        playout=playout,
        score=score,
        workspace=workspace,
        max_moves=b,
        max_actions=int(k),
        policies=dict(POLICIES),
        code=code,
        observe=observe,
    )


# -- reading states ---------------------------------------------------------------------------


def parts_of(state: np.ndarray) -> list[list[int]]:
    """The parts, each a sorted list of its integers."""
    parts: list[list[int]] = [[] for _ in range(int(state[K]))]
    for i in range(1, int(state[N]) + 1):
        parts[int(state[HEADER + i - 1])].append(i)
    return parts


def sum_in(state: np.ndarray, part: int) -> tuple[int, int] | None:
    """Two different integers ``x < y`` of ``part`` with ``x + y`` the next integer, or None."""
    x = int(state[N]) + 1
    for y in range(1, (x + 1) // 2):
        if state[HEADER + y - 1] == part == state[HEADER + x - y - 1]:
            return y, x - y
    return None


def is_weakly_sum_free(numbers: list[int]) -> bool:
    """True when no ``x + y = z`` with ``x != y``, all three in ``numbers``."""
    s = set(numbers)
    return not any(x + y in s for x in s for y in s if x < y)


def check_state(data: np.ndarray, config: tuple) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a state of ``config =
    (k,)``: the header, integers 1..N placed in parts 0..K-1 opened in order, the rest -1, and
    every part weakly sum-free."""
    (k,) = config
    b = bound(k)
    s = check_layout(data, "WeakSchur", np.int64, HEADER + b)
    for i, (name, want) in enumerate((("K", k), ("N", None), ("USED", None), ("BOUND", b))):
        if want is not None and s[i] != want:
            raise state_error("WeakSchur", name, i, s[i], f"expected {want}")
    n = int(s[N])
    if not 0 <= n <= b:
        raise state_error("WeakSchur", "N", N, n, f"expected 0..{b}")
    if (s[4:HEADER] != 0).any():
        i = 4 + int(np.flatnonzero(s[4:HEADER])[0])
        raise state_error("WeakSchur", "reserved", i, s[i], "expected 0")
    parts, rest = s[HEADER : HEADER + n], s[HEADER + n :]
    bad = np.flatnonzero((parts < 0) | (parts >= k))
    if len(bad):
        i = int(bad[0])
        raise state_error(
            "WeakSchur", f"part of {i + 1}", HEADER + i, parts[i], f"expected 0..{k - 1}"
        )
    if (rest != -1).any():
        i = n + int(np.flatnonzero(rest != -1)[0])
        raise state_error("WeakSchur", f"part of {i + 1}", HEADER + i, s[HEADER + i], "expected -1")
    opened = np.maximum.accumulate(np.concatenate([[-1], parts]))[:-1] + 1  # next part allowed
    late = np.flatnonzero(parts > opened)
    if len(late):
        i = int(late[0])
        raise state_error(
            "WeakSchur", f"part of {i + 1}", HEADER + i, parts[i], "a part opened out of order"
        )
    used = int(parts.max()) + 1 if n else 0
    if s[USED] != used:
        raise state_error("WeakSchur", "USED", USED, s[USED], f"expected {used}")
    for p in range(used):
        members = np.flatnonzero(parts == p) + 1
        if not is_weakly_sum_free(members.tolist()):
            raise state_error(
                "WeakSchur", "parts", f"part {PARTS[p]}", "invalid", "not weakly sum-free"
            )


def action_to_string(state: np.ndarray, action: int) -> str:
    """The move as ``"<next integer> in <part>"``, parts named A, B, C ...: ``"24 in B"``."""
    return f"{int(state[N]) + 1} in {PARTS[int(action)]}"


def format_parts(state: np.ndarray) -> str:
    """One line per part: ``"A: 1 2 4 8"``."""
    return "\n".join(
        f"{PARTS[p]}: {' '.join(map(str, part))}" for p, part in enumerate(parts_of(state))
    )
