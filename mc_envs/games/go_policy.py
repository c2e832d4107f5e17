"""Go's playout policies beyond uniform random, and its tree knowledge, as numba kernels.

The policies (their codes are :data:`mc_envs.games.go.POLICIES`):

- ``"random"`` (:data:`RANDOM`): uniform over the legal actions, the pass included
  (:func:`mc_envs.games.go.playout`'s own loop).
- ``"eye"`` (:data:`EYE`): uniform over the legal moves that do not fill a true eye of the player
  to move; the pass only when no such move is left, so that random games end by passes once
  only eyes are left.
- ``"mogo"`` (:data:`MOGO`): MoGo's sequence (Gelly, Wang, Munos and Teytaud 2006, "Modification
  of UCT with patterns in Monte-Carlo Go", INRIA RR-6062), the first rule that gives a move:

  1. the last move left a chain of the mover's next to it in atari: save it, by its liberty
     if the stone there gives the chain more than one liberty, or by taking the last liberty of
     an opposing chain in atari next to it;
  2. the empty points among the 8 neighbours of the last move that match a 3x3 pattern
     (:data:`PATTERNS`: hane, cut and edge moves), unless the move is a self-atari;
  3. a capture anywhere: the last liberty of an opposing chain in atari;
  4. the ``"eye"`` move.

  Each rule draws uniformly among its moves, and no rule fills the mover's own true eye.

A true eye of colour ``c`` is an empty point whose orthogonal neighbours are all stones of ``c``
or off the board, and whose diagonal points hold at most one stone of the other colour, none
when the point is on the edge or in a corner (off-board diagonals count as neither).

The tree knowledge ``mogo_knowledge`` (the kernel's ``knowledge["mogo"]``) is Gelly and Silver's
heuristic prior (AIJ 2011, "Monte-Carlo tree search and rapid action value estimation in computer
Go", section 6): virtual visits and wins given to a new node's moves before any playout.

The workspace ``ws`` (:func:`mc_envs.games.go.workspace`): ``ws[:W]`` the legal points as words
(:func:`mc_envs.games.go_legal.legal_words`), then a list of candidate points.
"""

from __future__ import annotations

import itertools

import numpy as np

from mc_envs._numba import njit
from mc_envs.games.go_layout import (
    ACTION_OF,
    BOARD,
    COL_OF,
    EMPTY,
    LAST,
    OFF,
    PLAYER,
    POINT_OF,
    ROW_OF,
    SIZE,
    SLOT,
    STRIDE,
    _sections,
    atari_point,
    in_atari,
    lowest_bit,
)
from mc_envs.games.go_legal import kth_point, legal_words
from mc_envs.rng import rng_below

RANDOM, EYE, MOGO = 0, 1, 2

# Gelly and Silver's heuristic prior, as virtual visits: every move gets EVEN_VISITS at 0.5 (their
# even-game prior); a good move (a capture, an atari saved, a pattern answer to the last move, as
# the "mogo" policy's rules 1-3 find them) adds GOOD_VISITS won, a bad one (a self-atari, a move
# filling the mover's true eye, a first-line move with no stone within two lines, the pass while
# a move that fills no own eye is left) BAD_VISITS lost. A move only good is worth
# (10 * 0.5 + 20) / 30 = 0.83, only bad 5 / 30 = 0.17: the weight of 30 playouts, which a few
# hundred real visits outweigh (MoGo's equivalent experience was of that order).
EVEN_VISITS = 10.0
GOOD_VISITS = 20.0
BAD_VISITS = 20.0
LONE_DISTANCE = 2  # a first-line move is lone with no stone within this many lines (Chebyshev)

# MoGo's 3x3 patterns, as RR-6062's figures 2-4 draw them (this module's reading): the centre is
# the move, for either player. X and O are stones of the two colours (the pattern is matched both
# ways round, except where marked for X to move), "." an empty point, "?" anything (off the board
# too), "x" anything but X, "o" anything but O, "#" off the board (an edge pattern).
_PATTERNS = (
    (("XOX", "...", "???"), False),  # hane: the enclosing hane
    (("XO.", "...", "?.?"), False),  # hane: the non-cutting hane
    (("XO?", "X..", "x.?"), False),  # hane: the magari (turn)
    (("XOO", "...", "?.?"), True),  # hane: the thin hane, for X to move only
    (("XO?", "O.o", "?o?"), False),  # cut1: a cut neither protected nor answered by O
    (("?X?", "O.O", "ooo"), False),  # cut2: between two O stones, nothing of O below
    (("X.?", "O.?", "###"), False),  # edge: chase
    (("OX?", "X.O", "###"), False),  # edge: block a cut along the side
    (("?X?", "x.O", "###"), False),  # edge: block a connection along the side
    (("?XO", "x.x", "###"), False),  # edge: sagari (descent)
    (("?OX", "X.O", "###"), False),  # edge: cut along the side
)
# The 8 neighbours of a point p in the order of the pattern code's 2-bit fields (row by row, the
# centre left out): p - S - 1, p - S, p - S + 1, p - 1, p + 1, p + S - 1, p + S, p + S + 1.
_CELLS = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2))


def _pattern_table() -> np.ndarray:
    # Bit `code` of row c (the mover: 0 Black, 1 White): the 3x3 neighbourhood whose code (the
    # 8 neighbours' BOARD values, 2 bits each in _CELLS order) matches a pattern, under every
    # rotation and reflection and both colourings. 2 x 2^16 bits.
    bits = np.zeros((2, 1 << 16), np.bool_)
    for (rows, mover_only), mover, x in itertools.product(_PATTERNS, (0, 1), (1, 2)):
        if mover_only and x != mover + 1:
            continue
        o = 3 - x
        allowed = {
            "X": (x,),
            "O": (o,),
            ".": (EMPTY,),
            "?": (EMPTY, 1, 2, OFF),
            "x": (EMPTY, o, OFF),
            "o": (EMPTY, x, OFF),
            "#": (OFF,),
        }
        grid = np.array([list(r) for r in rows])
        for k, flip in itertools.product(range(4), (False, True)):
            g = np.rot90(grid[:, ::-1] if flip else grid, k)
            for values in itertools.product(*(allowed[g[r, c]] for r, c in _CELLS)):
                bits[mover, sum(v << (2 * i) for i, v in enumerate(values))] = True
    return np.packbits(bits, axis=1, bitorder="little").view(np.int64)


#: ``PATTERNS[c, code >> 6] >> (code & 63) & 1``: whether the neighbourhood of that code
#: (:func:`pattern_code`) matches a MoGo pattern for mover ``c``.
PATTERNS = _pattern_table()


@njit(cache=True, nogil=True, inline="always")
def pattern_code(state, pt, s):
    """The code of the 8 neighbours of ``pt``: their BOARD values, 2 bits each (_CELLS order)."""
    b = BOARD + pt
    return (
        state[b - s - 1]
        | (state[b - s] << 2)
        | (state[b - s + 1] << 4)
        | (state[b - 1] << 6)
        | (state[b + 1] << 8)
        | (state[b + s - 1] << 10)
        | (state[b + s] << 12)
        | (state[b + s + 1] << 14)
    )


@njit(cache=True, nogil=True, inline="always")
def matches(state, pt, s, c):
    """Whether the empty point ``pt`` matches a MoGo pattern for mover ``c`` (0 or 1)."""
    code = pattern_code(state, pt, s)
    return (PATTERNS[c, code >> 6] >> (code & 63)) & 1 == 1


@njit(cache=True, nogil=True)
def true_eye(state: np.ndarray, pt: int, own: int) -> bool:
    """Whether the empty point ``pt`` is a true eye of the colour whose BOARD value is ``own``
    (1 Black, 2 White): see the module's docstring."""
    s = state[STRIDE]
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        v = state[BOARD + q]
        if v != own and v != OFF:
            return False
    bad = edge = 0  # on the edge or in a corner, no opposing diagonal is allowed
    for q in (pt - s - 1, pt - s + 1, pt + s - 1, pt + s + 1):
        v = state[BOARD + q]
        if v == OFF:
            edge = 1
        elif v == 3 - own:
            bad += 1
    return bad + edge < 2


@njit(cache=True, nogil=True, inline="always")
def _legal_bit(ws, pt):
    return (ws[pt >> 6] >> (pt & 63)) & 1 == 1


@njit(cache=True, nogil=True)
def liberties_after(state: np.ndarray, pt: int, own: int) -> int:
    """The liberties (0, 1, or 2 for two or more) of the chain a stone of ``own`` (BOARD value)
    on the empty point ``pt`` would make, counting as liberties the neighbours it captures."""
    s = state[STRIDE]
    p, w, head, captured, ring, table = _sections(state)
    nxt, libs = head + p, head + 3 * p
    first = -1
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        v = state[BOARD + q]
        if v == EMPTY or (v == 3 - own and in_atari(state[libs + state[head + q]])):
            if first < 0:
                first = q
            elif q != first:
                return 2
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        if state[BOARD + q] != own:
            continue
        r = state[head + q]
        x = r
        while True:
            for y in (x - s, x - 1, x + 1, x + s):
                if y != pt and state[BOARD + y] == EMPTY:
                    if first < 0:
                        first = y
                    elif y != first:
                        return 2
            x = state[nxt + x]
            if x == r:
                break
    return 1 if first >= 0 else 0


@njit(cache=True, nogil=True, inline="always")
def _add(state, ws, w, m, pt, own):
    # Appends pt to the candidates ws[w:w + m] if it is legal, fills no own true eye and is not
    # there yet; returns the new count.
    if not _legal_bit(ws, pt) or true_eye(state, pt, own):
        return m
    for i in range(m):
        if ws[w + i] == pt:
            return m
    ws[w + m] = pt
    return m + 1


@njit(cache=True, nogil=True)
def _saves(state, ws, w, m, own, head):
    # Rule 1: the answers to an atari the last move made on a chain of the mover's next to it.
    n, s = state[SIZE], state[STRIDE]
    last = state[LAST]
    if last < 0 or last == n * n:
        return m
    nxt, libs = head + s * s, head + 3 * s * s
    lp = POINT_OF[n, last]
    for q in (lp - s, lp - 1, lp + 1, lp + s):
        if state[BOARD + q] != own or not in_atari(state[libs + state[head + q]]):
            continue
        r = state[head + q]
        lib = atari_point(state[libs + r])
        if liberties_after(state, lib, own) > 1:
            m = _add(state, ws, w, m, lib, own)
        x = r
        while True:  # the opposing chains in atari next to the chain: capture them
            for y in (x - s, x - 1, x + 1, x + s):
                if state[BOARD + y] == 3 - own:
                    t = state[libs + state[head + y]]
                    if in_atari(t):
                        m = _add(state, ws, w, m, atari_point(t), own)
            x = state[nxt + x]
            if x == r:
                break
    return m


@njit(cache=True, nogil=True)
def _pattern_moves(state, ws, w, m, own):
    # Rule 2: the empty neighbours of the last move that match a pattern and are no self-atari.
    n, s = state[SIZE], state[STRIDE]
    last = state[LAST]
    if last < 0 or last == n * n:
        return m
    lp = POINT_OF[n, last]
    for q in (lp - s - 1, lp - s, lp - s + 1, lp - 1, lp + 1, lp + s - 1, lp + s, lp + s + 1):
        empty = state[BOARD + q] == EMPTY
        if empty and matches(state, q, s, own - 1) and liberties_after(state, q, own) > 1:
            m = _add(state, ws, w, m, q, own)
    return m


@njit(cache=True, nogil=True)
def _captures(state, ws, w, m, own, head):
    # Rule 3: the last liberty of every opposing chain in atari (found from the ATARI marks).
    p, _, _, _, ring, _ = _sections(state)
    libs, atari = head + 3 * p, head + 4 * p
    theirs = ring + state[SLOT] * 2 * w + (2 - own) * w
    for i in range(w):
        g = state[theirs + i] & state[atari + i]
        while g:
            x = i * 64 + lowest_bit(g)
            g &= g - 1
            if state[head + x] == x:  # once a chain: at its representative
                m = _add(state, ws, w, m, atari_point(state[libs + x]), own)
    return m


@njit(cache=True, nogil=True)
def _eye_move(state, rng, ws, w, count):
    # A uniform draw among the legal points (ws[:w], count of them) that fill no own true eye:
    # a draw that hits an eye clears it and draws again; the pass when none is left.
    n = state[SIZE]
    own = state[PLAYER] + 1
    while count > 0:
        pt = kth_point(ws, w, rng_below(rng, count))
        if not true_eye(state, pt, own):
            return ACTION_OF[n, pt]
        ws[pt >> 6] &= ~(np.int64(1) << (pt & 63))
        count -= 1
    return n * n


@njit(cache=True, nogil=True)
def choose(state: np.ndarray, policy: int, rng: np.ndarray, ws: np.ndarray) -> int:
    """The action the policy of code ``policy`` (:data:`EYE` or :data:`MOGO`) plays in ``state``
    (not over), drawn from ``rng``; ``ws`` is the kernel's workspace."""
    p, w, head, captured, ring, table = _sections(state)
    count = legal_words(state, ws)
    if policy == MOGO:
        own = state[PLAYER] + 1
        m = _saves(state, ws, w, 0, own, head)
        if m == 0:
            m = _pattern_moves(state, ws, w, 0, own)
        if m == 0:
            m = _captures(state, ws, w, 0, own, head)
        if m:
            return ACTION_OF[state[SIZE], ws[w + rng_below(rng, m)]]
    return _eye_move(state, rng, ws, w, count)


@njit(cache=True, nogil=True)
def _lone_edge(state, pt, n, s):
    # Whether pt is on the first line with no stone within LONE_DISTANCE lines of it.
    r, c = ROW_OF[n, pt], COL_OF[n, pt]
    if r != 0 and c != 0 and r != n - 1 and c != n - 1:
        return False
    for dr in range(-LONE_DISTANCE, LONE_DISTANCE + 1):
        for dc in range(-LONE_DISTANCE, LONE_DISTANCE + 1):
            if 0 <= r + dr < n and 0 <= c + dc < n:
                v = state[BOARD + pt + dr * s + dc]
                if v != EMPTY:
                    return False
    return True


@njit(cache=True, nogil=True)
def mogo_knowledge(
    state: np.ndarray,
    actions: np.ndarray,
    n_actions: int,
    ws: np.ndarray,
    visits: np.ndarray,
    values: np.ndarray,
) -> None:
    """Gelly and Silver's heuristic prior for the ``n_actions`` legal ``actions`` of ``state``:
    ``visits[i]`` virtual visits of mean ``values[i]`` (for the player to move) for each, as the
    constants above say (``EVEN_VISITS``, ``GOOD_VISITS``, ``BAD_VISITS``)."""
    n, s = state[SIZE], state[STRIDE]
    p, w, head, captured, ring, table = _sections(state)
    own = state[PLAYER] + 1
    legal_words(state, ws)
    useful = False  # a legal point that fills no own true eye
    for i in range(w):
        word = ws[i]
        while word and not useful:
            useful = not true_eye(state, i * 64 + lowest_bit(word), own)
            word &= word - 1
    m = _saves(state, ws, w, 0, own, head)
    m = _pattern_moves(state, ws, w, m, own)
    m = _captures(state, ws, w, m, own, head)
    for i in range(n_actions):
        a = actions[i]
        good = False
        if a == n * n:
            bad = useful
        else:
            pt = POINT_OF[n, a]
            for j in range(m):
                good |= ws[w + j] == pt
            bad = (
                true_eye(state, pt, own)
                or liberties_after(state, pt, own) < 2
                or _lone_edge(state, pt, n, s)
            )
        v = EVEN_VISITS
        won = 0.5 * EVEN_VISITS
        if good:
            v += GOOD_VISITS
            won += GOOD_VISITS
        if bad:
            v += BAD_VISITS
        visits[i] = v
        values[i] = won / v
