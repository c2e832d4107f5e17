"""Checks of Go states that come from outside (unpickled, built by hand): everything the kernels
rely on is recomputed from the board and compared, so that a state that passes is one the
kernels can play from (:func:`check_state`)."""

from __future__ import annotations

import numpy as np

from mc_envs.core import check_layout, state_error
from mc_envs.games import go_layout as layout

_HEADER_NAMES = (
    "size",
    "stride",
    "player",
    "moves",
    "over",
    "result",
    "passes",
    "komi2",
    "max_moves",
    "history",
    "hash",
    "captures by Black",
    "captures by White",
    "last",
    "positions",
    "slot",
)


def _fail(field: str, index: int, value, expected: str) -> ValueError:
    return state_error("Go", field, index, value, expected)


def _header(s: list[int], size: int, komi2: int, max_moves: int, history: int) -> None:
    for i, want in (
        (layout.SIZE, size),
        (layout.STRIDE, size + 2),
        (layout.KOMI2, komi2),
        (layout.MAX_MOVES, max_moves),
        (layout.HISTORY, history),
    ):
        if s[i] != want:
            raise _fail(_HEADER_NAMES[i], i, s[i], f"expected {want} for this config")
    n2 = size * size
    moves = s[layout.MOVES]
    checks = (
        (layout.SLOT, s[layout.SLOT] == moves % history, f"expected {moves % history}"),
        (layout.PLAYER, s[layout.PLAYER] in (0, 1), "expected 0 or 1"),
        (layout.MOVES, 0 <= moves <= max_moves, f"expected 0..{max_moves}"),
        (layout.PASSES, 0 <= s[layout.PASSES] <= min(2, moves), "expected 0..2, at most the moves"),
        (
            layout.LAST,
            -1 <= s[layout.LAST] <= n2 and (s[layout.LAST] == -1) == (moves == 0),
            "impossible",
        ),
        (layout.LAST, s[layout.PASSES] == 0 or s[layout.LAST] == n2, f"expected {n2} after a pass"),
        (layout.CAPTURES, 0 <= s[layout.CAPTURES] <= moves * n2, "impossible"),
        (layout.CAPTURES + 1, 0 <= s[layout.CAPTURES + 1] <= moves * n2, "impossible"),
        (layout.POSITIONS, 1 <= s[layout.POSITIONS] <= moves + 1, f"expected 1..{moves + 1}"),
    )
    for i, ok, expected in checks:
        if not ok:
            raise _fail(_HEADER_NAMES[i], i, s[i], expected)


def _chains(data: np.ndarray, size: int, sec: tuple[int, ...]) -> int:
    """Checks the chains against the board's connected stones; returns the position's hash."""
    p, w, t, head, nxt, stones, libs, *_ = sec
    s = size + 2
    board = data[layout.BOARD : layout.BOARD + p]
    for pt in range(p):
        r, c = divmod(pt, s)
        inside = 1 <= r <= size and 1 <= c <= size
        v = int(board[pt])
        if (v == layout.OFF) == inside or not 0 <= v <= layout.OFF:
            raise _fail("board", layout.BOARD + pt, v, "expected 0..2 on the board, 3 off it")
        if v == layout.EMPTY or v == layout.OFF:
            for base, name in ((head, "head"), (nxt, "next")):
                if data[base + pt] != 0:
                    raise _fail(name, base + pt, data[base + pt], "expected 0 without a stone")
    h = int(layout.EMPTY_HASH)
    owner = np.zeros(p, dtype=bool)
    for pt in range(p):
        v = int(board[pt])
        if v not in (layout.BLACK, layout.WHITE):
            continue
        h ^= int(layout.KEYS[v - 1, pt])
        if owner[pt]:
            continue
        chain, todo, packed = [pt], [pt], 0
        owner[pt] = True
        while todo:
            x = todo.pop()
            for q in (x - s, x - 1, x + 1, x + s):
                if board[q] == v and not owner[q]:
                    owner[q] = True
                    chain.append(q)
                    todo.append(q)
                elif board[q] == layout.EMPTY:
                    packed += (
                        1 + (q << layout.LIB_COUNT_BITS) + ((q * q) << (layout.LIB_COUNT_BITS + 20))
                    )
        rep = int(data[head + pt])
        if rep not in chain or any(data[head + x] != rep for x in chain):
            raise _fail("head", head + pt, rep, "expected one stone of the chain for all of it")
        x, cycle = rep, set()
        for _ in range(len(chain)):
            cycle.add(x)
            x = int(data[nxt + x])
            if not 0 <= x < p:
                break
        if x != rep or cycle != set(chain):
            raise _fail("next", nxt + rep, data[nxt + rep], "expected a cycle over the chain")
        for base, name, want in ((stones, "stones", len(chain)), (libs, "liberties", packed)):
            if data[base + rep] != want:
                raise _fail(name, base + rep, data[base + rep], f"expected {want}")
        if packed == 0:
            raise _fail("liberties", libs + rep, 0, "a chain on the board has a liberty")
    heads = {int(data[head + pt]) for pt in range(p) if board[pt] in (layout.BLACK, layout.WHITE)}
    for base, name in ((stones, "stones"), (libs, "liberties")):
        for pt in range(p):
            if pt not in heads and data[base + pt] != 0:
                raise _fail(name, base + pt, data[base + pt], "expected 0 off a representative")
    return h  # keys and the empty hash are below 2**63: so is their xor


def _atari(data: np.ndarray, sec: tuple[int, ...]) -> None:
    """Checks the ATARI marks: exactly the stones of the chains in atari (after :func:`_chains`)."""
    p, w, t, head, nxt, stones, libs, *_ = sec
    board = data[layout.BOARD : layout.BOARD + p]
    want = np.zeros(w, dtype=np.uint64)
    for pt in np.flatnonzero((board == layout.BLACK) | (board == layout.WHITE)).tolist():
        if layout.in_atari(int(data[libs + data[head + pt]])):
            want[pt >> 6] |= np.uint64(1) << np.uint64(pt & 63)
    marks = data[libs + p : libs + p + w]
    wrong = np.flatnonzero(marks != want.view(np.int64))
    if len(wrong):
        i = int(wrong[0])
        raise _fail(
            "atari marks", libs + p + i, marks[i], f"expected {int(want.view(np.int64)[i])}"
        )


def _bits(board: np.ndarray, colour: int, w: int) -> np.ndarray:
    words = np.zeros(w, dtype=np.uint64)
    for pt in np.flatnonzero(board == colour):
        words[pt >> 6] |= np.uint64(1) << np.uint64(pt & 63)
    return words.view(np.int64)


def _rings(data: np.ndarray, s: list[int], size: int, sec: tuple[int, ...]) -> None:
    p, w, t, head, nxt, stones, libs, captured, ring, table, length = sec
    on = layout.ON_BOARD[size, :w]
    for i in range(captured, ring):
        if data[i] & ~on[(i - captured) % w]:
            raise _fail("captured", i, data[i], "expected bits on the board only")
    board = data[layout.BOARD : layout.BOARD + p]
    history, moves = s[layout.HISTORY], s[layout.MOVES]
    now = np.concatenate([_bits(board, layout.BLACK, w), _bits(board, layout.WHITE, w)])
    for slot in range(history):
        words = data[ring + 2 * w * slot : ring + 2 * w * (slot + 1)]
        base = ring + 2 * w * slot
        if slot == moves % history:
            wrong = np.flatnonzero(words != now)
            if len(wrong):
                i = int(wrong[0])
                raise _fail("current board bits", base + i, words[i], f"expected {now[i]}")
        elif slot > moves:  # no move has written it yet
            if words.any():
                i = int(np.flatnonzero(words)[0])
                raise _fail("history bits", base + i, words[i], "expected 0 before the move")
        else:
            black, white = words[:w], words[w:]
            bad = (black & white) | ((black | white) & ~on)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise _fail("history bits", base + i, words[i], "expected a board")


def _table(data: np.ndarray, s: list[int], h: int, sec: tuple[int, ...]) -> None:
    t, table = sec[2], sec[9]
    slots = data[table : table + t]
    used = np.flatnonzero(slots)
    if len(used) != s[layout.POSITIONS]:
        raise _fail(
            "positions", layout.POSITIONS, s[layout.POSITIONS], f"the table holds {len(used)}"
        )
    for i in used.tolist():
        j = int(slots[i]) & (t - 1)
        while j != i:  # a lookup from the key's home slot must reach it
            if slots[j] == 0 or (slots[j] == slots[i]):
                raise _fail("positions table", table + i, slots[i], "expected reachable, once")
            j = (j + 1) & (t - 1)
    key = h if h != 0 else 1
    if key not in set(slots[used].tolist()):
        raise _fail("positions table", table, "without the position", f"expected hash {h}")


def check_state(data: np.ndarray, config: tuple = (9, 7.5, None, 8)) -> None:
    """Raises ValueError, naming the field and index, unless ``data`` is a Go position of this
    ``config`` ``(size, komi, max_moves, history)`` that the kernels can play from: the header
    in range, chains, liberties and hash as the board gives them, the history boards and the
    table of earlier positions well formed, and the end flags as the rules give them."""
    size, komi2, max_moves, history = layout.check_config(*config)
    sec = layout.offsets(size, max_moves, history)
    check_layout(data, "Go", np.int64, sec[-1])
    s = data[: layout.HEADER].tolist()
    _header(s, size, komi2, max_moves, history)
    h = _chains(data, size, sec)
    _atari(data, sec)
    if s[layout.HASH] != h:
        raise _fail("hash", layout.HASH, s[layout.HASH], f"expected {h} from the board")
    _rings(data, s, size, sec)
    _table(data, s, h, sec)
    over = int(s[layout.PASSES] >= 2 or s[layout.MOVES] >= max_moves)
    result = 0
    if over:
        black, white = layout.area(np.array(data))  # a copy: area() writes while it counts
        margin = 2 * (black - white) - komi2
        result = (margin > 0) - (margin < 0)
    if s[layout.OVER] != over:
        raise _fail("over", layout.OVER, s[layout.OVER], f"expected {over}")
    if s[layout.RESULT] != result:
        raise _fail("result", layout.RESULT, s[layout.RESULT], f"expected {result}")
