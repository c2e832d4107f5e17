"""Who owns each point of a Go board under Tromp-Taylor scoring, point by point (the drawing shows
the territory with it; :func:`mc_envs.games.go_layout.area` counts the same areas in the kernel).

A stone belongs to its colour; an empty point belongs to a colour when the empty region it lies in
reaches stones of that colour only; a region that reaches both colours, or none (an empty board),
is neutral.
"""

from __future__ import annotations

import numpy as np

NEUTRAL, BLACK, WHITE = 0, 1, 2


def owners(board: np.ndarray) -> np.ndarray:
    """The owner of every point of ``board``.

    Args:
        board: an ``(n, n)`` array, row 0 at the top: 0 empty, 1 Black, 2 White (as
            :func:`mc_envs.games.go_text.board_of` gives it).

    Returns:
        An ``(n, n)`` int8 array: 1 Black's (a black stone, or an empty point whose region reaches
        only black stones), 2 White's, 0 neutral.

    Raises:
        ValueError: a board that is not a square array of 0, 1 and 2.
    """
    board = np.asarray(board)
    if board.ndim != 2 or board.shape[0] != board.shape[1]:
        raise ValueError(f"a Go board is a square array, got shape {board.shape}")
    if not np.isin(board, (0, 1, 2)).all():
        raise ValueError("a Go board holds 0 (empty), 1 (Black) or 2 (White) only")
    n = board.shape[0]
    out = board.astype(np.int8)
    seen = board != 0
    for r0 in range(n):
        for c0 in range(n):
            if seen[r0, c0]:
                continue
            seen[r0, c0] = True
            region, stack, reach = [], [(r0, c0)], 0
            while stack:
                r, c = stack.pop()
                region.append((r, c))
                for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= rr < n and 0 <= cc < n:
                        v = int(board[rr, cc])
                        if v:
                            reach |= v
                        elif not seen[rr, cc]:
                            seen[rr, cc] = True
                            stack.append((rr, cc))
            owner = reach if reach in (BLACK, WHITE) else NEUTRAL
            for r, c in region:
                out[r, c] = owner
    return out
