"""Morpion Solitaire in words and pictures: a move's name, why a move is illegal, the text grid of
a position (``to_text`` / ``from_text``, used by the tests and the ``ansi`` render mode), and the
observation planes.

Kept apart from :mod:`mc_envs.games.morpion` (the rules and kernels) so that each module stays small.
"""

from __future__ import annotations

import numpy as np

from mc_envs.games.morpion import (
    DEFAULT_SIZE,
    DIRECTION_NAMES,
    DOT,
    DX,
    DY,
    H_MOVES,
    HEADER,
    MOVE_SHIFT,
    SEG_SHIFT,
    cells,
    cross_origin,
    decode,
    empty_state,
    observe,
    rescan,
    size_of,
    variant_of,
)


def why_illegal(state: np.ndarray, action: int, origin: tuple[int, int] = (0, 0)) -> str | None:
    """Why ``action`` is not legal in ``state`` (None if it is legal).

    Args:
        state: a state array.
        action: an action index.
        origin: grid point printed as (0, 0) in the reason (the cross's corner gives MSR
            coordinates).

    Returns:
        A sentence naming the missing dot, the used segment or the touching parallel line.
    """
    g = size_of(state)
    if not 0 <= action < 20 * g * g:
        return f"action {action} is outside 0..{20 * g * g - 1}"
    x, y, d, p = decode(action, g)
    ox, oy = origin
    dx, dy = DX[d], DY[d]
    sx, sy = x - p * dx, y - p * dy
    name = DIRECTION_NAMES[d]
    c = cells(state)

    def pt(px: int, py: int) -> str:
        return f"({px - ox},{py - oy})"

    def inside(px: int, py: int) -> bool:
        return 0 <= px < g and 0 <= py < g

    if not (inside(sx, sy) and inside(sx + 4 * dx, sy + 4 * dy)):
        end = pt(sx + 4 * dx, sy + 4 * dy)
        return f"the {name} line {pt(sx, sy)}-{end} leaves the {g}x{g} grid"
    if c[y, x] & DOT:
        return f"there is already a dot at {pt(x, y)}: the new dot must go on a free point"
    for i in range(5):
        px, py = sx + i * dx, sy + i * dy
        if i != p and not c[py, px] & DOT:
            return f"missing dot at {pt(px, py)} on the {name} line through {pt(x, y)}"
    segbit = 1 << (SEG_SHIFT + d)
    for i in range(4):
        px, py = sx + i * dx, sy + i * dy
        if c[py, px] & segbit:
            return (
                f"overlapping line: the unit segment {pt(px, py)}-{pt(px + dx, py + dy)} "
                f"({name}) is already used"
            )
    if variant_of(state) == "5D":
        for i in (-1, 4):
            px, py = sx + i * dx, sy + i * dy
            if inside(px, py) and inside(px + dx, py + dy) and c[py, px] & segbit:
                tx, ty = (sx, sy) if i < 0 else (sx + 4 * dx, sy + 4 * dy)
                return (
                    f"touching parallel line: a {name} line already ends at {pt(tx, ty)}, "
                    "and in 5D parallel lines may not share a dot"
                )
    if not (int(c[y, x]) >> (MOVE_SHIFT + d * 5 + p)) & 1:
        return "not a legal move in this state"
    return None


_GLYPHS = {1: "-", 2: "|", 4: "\\", 8: "/"}


def to_text(state: np.ndarray, crop: bool = True) -> str:
    """A text picture: ``o`` dots, ``.`` free points, ``- | \\ /`` segments, ``X`` crossing
    diagonals. ``crop`` keeps the dots' bounding box plus one free point around it."""
    c = cells(state)
    g = c.shape[0]
    x0, y0, x1, y1 = 0, 0, g - 1, g - 1
    if crop:
        ys, xs = np.nonzero(c & DOT)
        if len(xs):
            x0, x1 = max(int(xs.min()) - 1, 0), min(int(xs.max()) + 1, g - 1)
            y0, y1 = max(int(ys.min()) - 1, 0), min(int(ys.max()) + 1, g - 1)
    w, h = 2 * (x1 - x0) + 1, 2 * (y1 - y0) + 1
    pic = [[" "] * w for _ in range(h)]
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            v = int(c[y, x])
            r, q = 2 * (y - y0), 2 * (x - x0)
            pic[r][q] = "o" if v & DOT else "."
            if v & 2 and q + 1 < w:
                pic[r][q + 1] = "-"
            if v & 4 and r + 1 < h:
                pic[r + 1][q] = "|"
            if v & 8 and r + 1 < h and q + 1 < w:
                pic[r + 1][q + 1] = "X" if pic[r + 1][q + 1] == "/" else "\\"
            if v & 16 and r >= 1 and q + 1 < w:
                pic[r - 1][q + 1] = "X" if pic[r - 1][q + 1] == "\\" else "/"
    return "\n".join("".join(row).rstrip() for row in pic)


def from_text(
    text: str, variant: str, size: int = DEFAULT_SIZE, at: tuple[int, int] = (0, 0), moves: int = 0
) -> np.ndarray:
    """A position from a text picture in the format of :func:`to_text`.

    Rows of even index hold dots (``o``) and free points (``.`` or space); the characters between
    them hold segments (``-`` ``|`` ``\\`` ``/``, ``X`` for both diagonals). Lines are taken as
    drawn: the picture must only contain whole lines. The picture's top-left point goes to grid
    point ``at``; ``moves`` sets the move counter (the score).
    """
    state = empty_state(variant, size)
    rows = text.strip("\n").split("\n")
    ax, ay = at
    flat = state[HEADER:]

    def put(x: int, y: int, bits: int) -> None:
        gx, gy = x + ax, y + ay
        if not (0 <= gx < size and 0 <= gy < size):
            raise ValueError(f"the picture does not fit the {size}x{size} grid at {at}")
        flat[gy * size + gx] |= bits

    for r, row in enumerate(rows):
        for q, ch in enumerate(row):
            if ch in " .":
                continue
            if r % 2 == 0 and q % 2 == 0:
                if ch != "o":
                    raise ValueError(
                        f"picture row {r + 1}, column {q + 1}: expected a dot, got {ch!r}"
                    )
                put(q // 2, r // 2, DOT)
            elif r % 2 == 0 and ch == "-":
                put(q // 2, r // 2, 1 << SEG_SHIFT)
            elif r % 2 == 1 and q % 2 == 0 and ch == "|":
                put(q // 2, r // 2, 2 << SEG_SHIFT)
            elif r % 2 == 1 and q % 2 == 1 and ch in "\\/X":
                if ch in "\\X":
                    put(q // 2, r // 2, 4 << SEG_SHIFT)
                if ch in "/X":
                    put(q // 2, r // 2 + 1, 8 << SEG_SHIFT)
            else:
                raise ValueError(f"picture row {r + 1}, column {q + 1}: unexpected {ch!r}")
    state[H_MOVES] = moves
    rescan(state)
    return state


def planes(state: np.ndarray) -> np.ndarray:
    """Observation planes ``(5, size, size)`` uint8 (:func:`mc_envs.games.morpion_layout.observe`)."""
    g = size_of(state)
    out = np.empty((5, g, g), dtype=np.uint8)
    observe(state, out)
    return out


def action_to_string(state: np.ndarray, action: int) -> str:
    """The move in MSR notation: the new dot ``(x,y)`` in the MSR frame (the cross in 0..9),
    the direction (``H V DN DP``) and the new dot's index along the line, e.g. ``"(3,-1) V 0"``."""
    size = size_of(state)
    ox, oy = cross_origin(size)
    x, y, d, pos = decode(action, size)
    return f"({x - ox},{y - oy}) {DIRECTION_NAMES[d]} {pos}"
