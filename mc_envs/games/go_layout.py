"""Go's state layout (see :mod:`mc_envs.games.go` for the rules), and the kernels that only read
it: the table of earlier positions, the Tromp-Taylor area, the observation; empty boards.

The board is padded with one ring of off-board points, so that the four neighbours of a point
``p`` are ``p - S``, ``p - 1``, ``p + 1`` and ``p + S`` with the stride ``S = n + 2``; the point
of cell ``(row, col)`` is ``(row + 1) * S + col + 1`` (``P = S * S`` points)::

    9x9, S = 11:    0   1   2 ...  10        off-board ring
                   11 [12  13 ...  20] 21    row 0 (the top): points 12..20
                   ...
                   99 [100 ...    108] 109   row 8 (the bottom)
                  110 111 ...        120     off-board ring

Chains are cycles of stones linked by ``NEXT``; every stone names its chain's representative
(``HEAD``), where the chain's stone count and its pseudo-liberties live. A pseudo-liberty is a
pair (stone, adjacent empty point), so a point next to two stones of a chain counts twice; the
representative keeps their count, the sum of their points and the sum of their squares packed in
one word (:func:`lib_term`). The chain is captured when the count is 0 and in atari (one real
liberty) when every pseudo-liberty is the same point: ``count * squares == sum ** 2`` (Cauchy-
Schwarz; the liberty is then ``sum / count``). Merges add the words, captures give liberties back.
``ATARI`` marks every stone of a chain in atari, repainted along the chain when that changes, so
that the legal points are found with word operations: an empty point is not a suicide exactly when
a neighbour is empty, or a stone of the mover's not in atari, or an opponent's in atari.

Superko: the Zobrist hash of the position (stones only, not the player to move) of every position
so far is kept in an open-addressing table. A move at ``p`` can only recreate an earlier position
if a stone of the mover's colour once stood at ``p`` and was captured since (it must have left
``p`` and only captures remove stones), so the hash of a candidate is computed and looked up only
where ``CAPTURED`` has that bit; and the opponent's stone just played at ``q`` stands on a point
that was empty a move ago, so unless the opponent once lost a stone on ``q`` an earlier position
can only come back by a move that captures it: most positions never touch the table.

State layout (one flat int64 array; copying it is a complete snapshot)::

    index                  meaning
    0   SIZE               n
    1   STRIDE             S = n + 2
    2   PLAYER             the colour to move: 0 Black, 1 White
    3   MOVES              moves played, passes included
    4   OVER               1 once the game has ended
    5   RESULT             at the end: +1 Black won, -1 White won, 0 a draw (0 while playing)
    6   PASSES             passes in a row just played (0, 1 or 2)
    7   KOMI2              komi in half points (15 for 7.5), to White
    8   MAX_MOVES          the move count that ends the game
    9   HISTORY            the positions the observation shows (AlphaGo Zero: 8)
    10  HASH               the Zobrist hash of the position
    11  CAPTURES           stones captured by Black, 12: by White
    13  LAST               the last action (-1 before the first move)
    14  POSITIONS          the positions in the table
    15  SLOT               MOVES % HISTORY: the ring slot of the current board (kept, not divided)
    BOARD + p              point p: 0 empty, 1 Black, 2 White, 3 off the board       (P entries)
    HEAD + p               a stone's chain representative; 0 where there is no stone (P)
    NEXT + p               the next stone of the stone's chain (a cycle); 0 where none (P)
    STONES + h             at a representative h: the chain's stones; 0 elsewhere     (P)
    LIBS + h               at a representative h: its pseudo-liberties, packed; 0 elsewhere (P)
    ATARI + w              bit p of words w = 0..W-1: the stone at p is of a chain in atari  (W)
    CAPTURED + c * W + w   bit p of words w = 0..W-1: a stone of colour c was captured at p
    RING + (t % H) * 2W    the board after move t, for the last H moves (t = MOVES - H + 1 ..
                           MOVES): Black's bits (W words, bit p), then White's (W words)
    TABLE + i              the hashes of every position so far (T slots, 0 = free; linear probing)

with ``P = S * S``, ``W = ceil(P / 64)``, ``H = HISTORY`` and ``T`` the smallest power of two of
at least ``2 * (MAX_MOVES + 1)`` (at most half full: a lookup mostly reads one slot);
:func:`offsets` gives the sections.
"""

from __future__ import annotations

import numpy as np
from numba.core import cgutils, types

from mc_envs._numba import ctpop, cttz, intrinsic, njit
from mc_envs.games.two_player import MOVES as MOVES
from mc_envs.games.two_player import OVER as OVER
from mc_envs.games.two_player import PLAYER as PLAYER
from mc_envs.games.two_player import RESULT as RESULT

# PLAYER, MOVES, OVER and RESULT sit where the two-player bitboard kernels have them, so that
# their score, player and returns functions serve Go as they are.
SIZE, STRIDE, PASSES, KOMI2 = 0, 1, 6, 7
MAX_MOVES, HISTORY, HASH, CAPTURES, _CAPTURES1, LAST, POSITIONS, SLOT = range(8, 16)
HEADER = 16
BOARD = HEADER  # the first section
MIN_SIZE, MAX_SIZE = 5, 19
EMPTY, BLACK, WHITE, OFF = 0, 1, 2, 3
LIB_COUNT_BITS, LIB_SUM_BITS = 11, 20  # then the sum of squares: 29 bits (n <= 19)
_COUNT_MASK = (1 << LIB_COUNT_BITS) - 1
_SUM_MASK = (1 << LIB_SUM_BITS) - 1
_SQUARES_SHIFT = LIB_COUNT_BITS + LIB_SUM_BITS

# Zobrist keys of a stone of colour c (0 Black, 1 White) at point p, and of the empty board.
_KEYS = np.random.default_rng(0x60B0A4D).integers(
    1, 2**63 - 1, size=(2, (MAX_SIZE + 2) ** 2), dtype=np.int64
)
KEYS = _KEYS
EMPTY_HASH = np.int64(0x2545F4914F6CDD1D)


def _tables() -> tuple[np.ndarray, ...]:
    # Per board size n: the action of each point (-1 off the board), the point of each action
    # (the pass: 0), the bits of the points on the board (W words), and each point's row and
    # column (0 off the board).
    points = (MAX_SIZE + 2) ** 2
    action_of = np.full((MAX_SIZE + 1, points), -1, np.int64)
    point_of = np.zeros((MAX_SIZE + 1, MAX_SIZE * MAX_SIZE + 1), np.int64)
    on_board = np.zeros((MAX_SIZE + 1, (points + 63) // 64), np.uint64)
    row_of = np.zeros((MAX_SIZE + 1, points), np.int64)
    col_of = np.zeros((MAX_SIZE + 1, points), np.int64)
    for n in range(MIN_SIZE, MAX_SIZE + 1):
        s = n + 2
        for r in range(n):
            for c in range(n):
                pt = (r + 1) * s + c + 1
                action_of[n, pt] = r * n + c
                point_of[n, r * n + c] = pt
                on_board[n, pt >> 6] |= np.uint64(1) << np.uint64(pt & 63)
                row_of[n, pt], col_of[n, pt] = r, c
    return action_of, point_of, on_board.view(np.int64), row_of, col_of


ACTION_OF, POINT_OF, ON_BOARD, ROW_OF, COL_OF = _tables()


@intrinsic(ctpop)
def popcount(typingctx, x):
    """The set bits of an int64 (LLVM's ctpop)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic(cttz)
def lowest_bit(typingctx, x):
    """The index of the lowest set bit of a non-zero int64 (LLVM's cttz)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], cgutils.true_bit)

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _srl(x, k):
    # x shifted right by k (1..63) as an unsigned word
    return (x >> k) & ((np.int64(1) << (64 - k)) - 1)


def offsets(size: int, max_moves: int, history: int) -> tuple[int, ...]:
    """The sections of a state: ``(P, W, T, HEAD, NEXT, STONES, LIBS, CAPTURED, RING, TABLE,
    LENGTH)`` for that board size, move limit and history (``ATARI`` is ``LIBS + P``)."""
    s = size + 2
    p = s * s
    w = (p + 63) // 64
    t = 1
    while t < 2 * (max_moves + 1):
        t *= 2
    head = HEADER + p
    captured = head + 4 * p + w  # after ATARI = LIBS + P
    ring = captured + 2 * w
    table = ring + 2 * w * history
    return (p, w, t, head, head + p, head + 2 * p, head + 3 * p, captured, ring, table, table + t)


@njit(cache=True, nogil=True, inline="always")
def _sections(state):
    s = state[STRIDE]
    p = s * s
    w = (p + 63) >> 6
    head = HEADER + p
    captured = head + 4 * p + w  # after ATARI = LIBS + P
    ring = captured + 2 * w
    table = ring + 2 * w * state[HISTORY]
    return p, w, head, captured, ring, table


@njit(cache=True, nogil=True, inline="always")
def lib_term(p):
    """The packed pseudo-liberty of point ``p``: count 1, sum ``p``, sum of squares ``p * p``."""
    return 1 + (p << LIB_COUNT_BITS) + ((p * p) << _SQUARES_SHIFT)


@njit(cache=True, nogil=True, inline="always")
def in_atari(libs):
    """Whether a chain whose packed pseudo-liberties are ``libs`` has exactly one liberty."""
    count = libs & _COUNT_MASK
    total = (libs >> LIB_COUNT_BITS) & _SUM_MASK
    return count > 0 and count * (libs >> _SQUARES_SHIFT) == total * total


@njit(cache=True, nogil=True, inline="always")
def atari_point(libs):
    """The one liberty of a chain in atari whose packed pseudo-liberties are ``libs``."""
    return ((libs >> LIB_COUNT_BITS) & _SUM_MASK) // (libs & _COUNT_MASK)


@njit(cache=True, nogil=True, inline="always")
def _table_key(h):
    return h if h != 0 else np.int64(1)


@njit(cache=True, nogil=True, inline="always")
def seen_in(state, table, h):
    # seen() with the table's start given (the table runs to the end of the state)
    t = state.shape[0] - table
    key = _table_key(h)
    i = key & (t - 1)
    for _ in range(t):
        k = state[table + i]
        if k == key:
            return True
        if k == 0:
            return False
        i = (i + 1) & (t - 1)
    return False


@njit(cache=True, nogil=True)
def seen(state: np.ndarray, h: int) -> bool:
    """Whether the position of hash ``h`` occurred in the game so far."""
    p, w, head, captured, ring, table = _sections(state)
    return seen_in(state, table, h)


@njit(cache=True, nogil=True)
def _remember(state, h):
    p, w, head, captured, ring, table = _sections(state)
    t = state.shape[0] - table
    key = _table_key(h)
    i = key & (t - 1)
    for _ in range(t):
        k = state[table + i]
        if k == key:
            return
        if k == 0:
            state[table + i] = key
            state[POSITIONS] += 1
            return
        i = (i + 1) & (t - 1)


_LINKED = 4  # area(): an empty point on its stack holds _LINKED + the point below it (0: none)


@njit(cache=True, nogil=True)
def area(state: np.ndarray) -> tuple[int, int]:
    """Tromp-Taylor area of (Black, White): stones plus the empty regions that reach only that
    colour (no komi). ``state`` must be writable: each region's flood fill keeps its stack in
    the empty points themselves (no allocation; compiling numba's allocators cost the move
    kernel 0.2-0.3 s), and the board is left as it was."""
    n, s = state[SIZE], state[STRIDE]
    black = white = 0
    for r in range(n):
        for col in range(n):
            pt = (r + 1) * s + col + 1
            v = state[BOARD + pt]
            if v == BLACK:
                black += 1
            elif v == WHITE:
                white += 1
            elif v == EMPTY:
                state[BOARD + pt] = _LINKED
                top, size, reach = pt, 0, 0
                while top:
                    x = top
                    top = state[BOARD + x] - _LINKED
                    size += 1
                    for q in (x - s, x - 1, x + 1, x + s):
                        u = state[BOARD + q]
                        if u == EMPTY:
                            state[BOARD + q] = _LINKED + top
                            top = q
                        elif EMPTY < u < OFF:  # a stone
                            reach |= u
                state[BOARD + pt] = EMPTY  # the region's other points come later in the scan
                if reach == BLACK:
                    black += size
                elif reach == WHITE:
                    white += size
            else:  # a point of a region counted from an earlier point: put back as it was
                state[BOARD + pt] = EMPTY
    return black, white


@njit(cache=True, nogil=True)
def observe(state: np.ndarray, out: np.ndarray) -> None:
    """Writes AlphaGo Zero's planes into ``out`` ``(2 * H + 1, n, n)``, in pgx's order: for
    ``k = 0 .. H - 1`` plane ``2k`` holds the stones of the player to move ``k`` moves ago
    (passes count), plane ``2k + 1`` the opponent's (zeros before the first move), and the last
    plane the colour to move (0 Black, 1 White), row 0 at the top."""
    n = state[SIZE]
    p, w, head, captured, ring, table = _sections(state)
    h_ = state[HISTORY]
    c = state[PLAYER]
    m = state[MOVES]
    out[:] = 0
    for k in range(min(h_, m + 1)):
        base = ring + ((m - k) % h_) * 2 * w
        for side in range(2):  # the mover's stones, then the opponent's
            words = base + (c if side == 0 else 1 - c) * w
            plane = 2 * k + side
            for i in range(w):
                word = state[words + i]
                while word:
                    pt = i * 64 + lowest_bit(word)
                    out[plane, ROW_OF[n, pt], COL_OF[n, pt]] = 1
                    word &= word - 1
    if c:
        out[2 * h_] = 1


def new_state(size: int = 9, komi: float = 7.5, max_moves: int | None = None, history: int = 8):
    """The empty board, Black to move.

    Raises:
        ValueError: a size outside 5..19, a komi that is not a multiple of 0.5, a move limit
            below 1 or a history below 1.
    """
    size, komi2, max_moves, history = check_config(size, komi, max_moves, history)
    p, w, t, head, nxt, stones, libs, captured, ring, table, length = offsets(
        size, max_moves, history
    )
    state = np.zeros(length, dtype=np.int64)
    state[SIZE], state[STRIDE] = size, size + 2
    state[KOMI2], state[MAX_MOVES], state[HISTORY] = komi2, max_moves, history
    state[HASH], state[LAST] = EMPTY_HASH, -1
    s = size + 2
    for pt in range(p):
        r, col = divmod(pt, s)
        if not (1 <= r <= size and 1 <= col <= size):
            state[BOARD + pt] = OFF
    _remember(state, state[HASH])
    return state


def check_config(size, komi, max_moves, history) -> tuple[int, int, int, int]:
    """``(size, komi2, max_moves, history)`` checked (``max_moves=None``: ``2 * size * size``).

    Raises:
        ValueError: naming the bad argument and its value.
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise ValueError(f"Go size must be an integer in {MIN_SIZE}..{MAX_SIZE}, got {size!r}")
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"Go size must be an integer in {MIN_SIZE}..{MAX_SIZE}, got {size!r}")
    try:
        komi2 = float(komi) * 2
    except (TypeError, ValueError):
        raise ValueError(f"komi must be a number, got {komi!r}") from None
    if isinstance(komi, bool) or komi2 != round(komi2) or abs(komi2) > 2 * 1000:
        raise ValueError(f"komi must be a multiple of 0.5 within -1000..1000, got {komi!r}")
    if max_moves is None:
        max_moves = 2 * size * size
    if isinstance(max_moves, bool) or not isinstance(max_moves, (int, np.integer)):
        raise ValueError(f"max_moves must be a positive integer, got {max_moves!r}")
    if not 1 <= max_moves <= 100_000:
        raise ValueError(f"max_moves must be in 1..100000, got {max_moves!r}")
    if isinstance(history, bool) or not isinstance(history, (int, np.integer)):
        raise ValueError(f"history must be an integer in 1..64, got {history!r}")
    if not 1 <= history <= 64:
        raise ValueError(f"history must be an integer in 1..64, got {history!r}")
    return int(size), int(round(komi2)), int(max_moves), int(history)
