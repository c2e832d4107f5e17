"""Morpion Solitaire game records: MSR JSON and PentaSol text, read, write, convert and verify.

Two formats (see ``mc_envs/data/morpion/README.md``):

- **MSR** (JSON, spec 0.1 of github.com/sjourdois/morpion-solitaire): ``{"version": "0.1",
  "variant": "5D" | "5T", "score": n, "moves": [{"x", "y", "dir", "pos"}, ...], ...}``. The
  starting cross occupies 0..9 on both axes; ``(x, y)`` is the new dot, ``dir`` one of ``H``,
  ``V``, ``DP`` = (1, -1), ``DN`` = (1, 1), and ``pos`` (0..4) the new dot's index along the line,
  so the line starts at ``(x, y) - pos * dir``.
- **PentaSol** (text): comment lines start with ``#``; the first other line is the reference dot
  ``(X,Y)``, the position of the cross's point (3, 3); then one move a line, ``(x,y) D k`` with
  ``D`` in ``- | \\ /`` and ``k`` (-2..2) the offset from the new dot to the line's middle dot,
  in x except for ``|`` (in y). y grows downward in both formats here, so ``\\`` is DN and ``/``
  is DP. PentaSol carries no variant; :func:`write_pentasol` notes it in a comment
  (``# variant 5D``) that :func:`read_pentasol` understands.

Records are plain JSON or text, never pickles. Errors name the file and the line or move number.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from mc_envs.games import morpion as rules
from mc_envs.games.morpion_text import why_illegal
from mc_envs.records import write_atomic

DIRECTIONS = rules.DIRECTION_NAMES  # ("H", "V", "DN", "DP"), indices of the kernel
PENTASOL_GLYPHS = {"H": "-", "V": "|", "DN": "\\", "DP": "/"}
_FROM_GLYPH = {v: k for k, v in PENTASOL_GLYPHS.items()}
SHIPPED = {
    "rosin82": "msr_rosin82.json",
    "rosin178": "msr_rosin178.json",
    "bruneau170": "msr_bruneau170.json",
}


@dataclass(frozen=True)
class MorpionMove:
    """One move in the MSR frame (the cross in 0..9): new dot ``(x, y)``, direction, position."""

    x: int
    y: int
    dir: str
    pos: int

    def line(self) -> list[tuple[int, int]]:
        """The 5 dots of the line, from its start."""
        d = DIRECTIONS.index(self.dir)
        dx, dy = rules.DX[d], rules.DY[d]
        sx, sy = self.x - self.pos * dx, self.y - self.pos * dy
        return [(sx + i * dx, sy + i * dy) for i in range(5)]


@dataclass
class MorpionRecord:
    """A game record: its variant (None when the file does not say) and its moves."""

    variant: str | None
    moves: list[MorpionMove]
    meta: dict[str, object] = field(default_factory=dict)  # the record's other JSON fields


def shipped_record(name: str) -> Path:
    """Path of a shipped record: ``"rosin82"`` (5D), ``"rosin178"``, ``"bruneau170"`` (5T)."""
    if name not in SHIPPED:
        raise ValueError(f"no shipped Morpion record {name!r}; there are {sorted(SHIPPED)}")
    return Path(str(resources.files("mc_envs").joinpath("data/morpion").joinpath(SHIPPED[name])))


# -- MSR JSON ---------------------------------------------------------------------------------


def _parse_move(obj: object, where: str) -> MorpionMove:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a move must be an object with x, y, dir, pos")
    for key in ("x", "y", "pos"):
        v = obj.get(key)
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"{where}: {key!r} must be an integer, got {v!r}")
    if obj.get("dir") not in DIRECTIONS:
        got = obj.get("dir")
        raise ValueError(f"{where}: 'dir' must be one of {list(DIRECTIONS)}, got {got!r}")
    if not 0 <= obj["pos"] <= 4:
        raise ValueError(f"{where}: 'pos' must be 0..4, got {obj['pos']}")
    return MorpionMove(obj["x"], obj["y"], obj["dir"], obj["pos"])


def _read_text(path: Path) -> str:
    """The file's text; ValueError naming the file when it cannot be read or is not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: unreadable: not UTF-8 text (byte {e.start})") from None


def read_msr(path: str | os.PathLike) -> MorpionRecord:
    """Reads an MSR JSON record.

    Raises:
        ValueError: naming the file and the line (bad JSON) or the move (bad field).
    """
    path = Path(path)
    try:
        doc = json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: line {e.lineno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise ValueError(f"{path}: invalid JSON: nested too deeply") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("moves"), list):
        raise ValueError(f"{path}: not an MSR record (expected an object with a 'moves' list)")
    variant = doc.get("variant")
    if variant is not None and variant not in rules.VARIANTS:
        raise ValueError(f"{path}: unsupported variant {variant!r}; only 5D and 5T are supported")
    for key in ("score", "available_moves"):
        v = doc.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise ValueError(f"{path}: {key!r} must be an integer >= 0, got {v!r}")
    moves = [_parse_move(m, f"{path}: move {i}") for i, m in enumerate(doc["moves"], 1)]
    meta = {k: v for k, v in doc.items() if k not in ("moves", "variant")}
    return MorpionRecord(variant, moves, meta)


def write_msr(
    path: str | os.PathLike, variant: str, moves: Sequence[MorpionMove], **meta: object
) -> None:
    """Writes an MSR JSON record atomically; ``meta`` adds fields (author, description ...)."""
    if variant not in rules.VARIANTS:
        raise ValueError(f"variant must be '5D' or '5T', got {variant!r}")
    doc: dict[str, object] = {"version": "0.1", "variant": variant, "score": len(moves)}
    doc.update(meta)
    doc["moves"] = [{"x": m.x, "y": m.y, "dir": m.dir, "pos": m.pos} for m in moves]
    write_atomic(path, json.dumps(doc, indent=2) + "\n")


# -- PentaSol text ----------------------------------------------------------------------------

_REF = re.compile(r"^\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$")
_MOVE = re.compile(r"^\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)\s+([-|\\/])\s+([+-]?\d+)$")
_VARIANT = re.compile(r"\b(5[DT])\b")


def read_pentasol(path: str | os.PathLike) -> MorpionRecord:
    """Reads a PentaSol text record (variant from a ``# ... 5D`` / ``5T`` comment, else None).

    Raises:
        ValueError: naming the file and the line of a malformed entry.
    """
    path = Path(path)
    variant = None
    ref: tuple[int, int] | None = None
    moves: list[MorpionMove] = []
    for lineno, raw in enumerate(_read_text(path).splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            found = _VARIANT.search(line)
            if found and variant is None:
                variant = found.group(1)
            continue
        if ref is None:
            m = _REF.match(line)
            if not m:
                raise ValueError(
                    f"{path}: line {lineno}: expected the reference dot '(X,Y)', got {raw[:80]!r}"
                )
            ref = (int(m.group(1)), int(m.group(2)))
            continue
        m = _MOVE.match(line)
        if not m:
            raise ValueError(
                f"{path}: line {lineno}: expected a move '(x,y) D k', got {raw[:80]!r}"
            )
        k = int(m.group(4))
        if not -2 <= k <= 2:
            raise ValueError(f"{path}: line {lineno}: offset {k} is outside -2..2")
        x = int(m.group(1)) - ref[0] + 3
        y = int(m.group(2)) - ref[1] + 3
        moves.append(MorpionMove(x, y, _FROM_GLYPH[m.group(3)], 2 - k))
    if ref is None:
        raise ValueError(f"{path}: no reference dot '(X,Y)' found")
    return MorpionRecord(variant, moves, {})


def write_pentasol(
    path: str | os.PathLike, moves: Sequence[MorpionMove], variant: str | None = None
) -> None:
    """Writes a PentaSol text record atomically, every coordinate >= 0."""
    xs = [0] + [p[0] for m in moves for p in m.line()]
    ys = [0] + [p[1] for m in moves for p in m.line()]
    ox, oy = -min(xs), -min(ys)
    lines = ["# Morpion Solitaire game (PentaSol format)"]
    if variant is not None:
        if variant not in rules.VARIANTS:
            raise ValueError(f"variant must be '5D' or '5T', got {variant!r}")
        lines.append(f"# variant {variant}")
    lines.append(f"({3 + ox},{3 + oy})")
    for m in moves:
        k = 2 - m.pos
        offset = f"{k:+d}" if k else "0"
        lines.append(f"({m.x + ox},{m.y + oy}) {PENTASOL_GLYPHS[m.dir]} {offset}")
    write_atomic(path, "\n".join(lines) + "\n")


# -- loading, converting, verifying -----------------------------------------------------------


def read_record(path: str | os.PathLike) -> MorpionRecord:
    """Reads an MSR JSON or a PentaSol record (JSON when the file starts with ``{``)."""
    path = Path(path)
    head = _read_text(path).lstrip()[:1]
    return read_msr(path) if head == "{" else read_pentasol(path)


def load_record(path: str | os.PathLike) -> tuple[str | None, list[MorpionMove]]:
    """``(variant, moves)`` of an MSR or PentaSol file (variant None if the file does not say)."""
    record = read_record(path)
    return record.variant, record.moves


def record_actions(moves: Iterable[MorpionMove], size: int = rules.DEFAULT_SIZE) -> list[int]:
    """The env actions of MSR moves on a ``size`` x ``size`` grid (the cross in the middle).

    Raises:
        ValueError: naming the first move (1-based) whose line leaves the grid.
    """
    ox, oy = rules.cross_origin(size)
    out = []
    for i, m in enumerate(moves, 1):
        for px, py in m.line():
            if not (0 <= px + ox < size and 0 <= py + oy < size):
                raise ValueError(
                    f"move {i} ({m.x},{m.y} {m.dir} {m.pos}): point ({px},{py}) is outside the "
                    f"{size}x{size} grid; use a larger size"
                )
        out.append(rules.encode(m.x + ox, m.y + oy, DIRECTIONS.index(m.dir), m.pos, size))
    return out


def action_moves(actions: Iterable[int], size: int = rules.DEFAULT_SIZE) -> list[MorpionMove]:
    """The MSR moves of env actions (inverse of :func:`record_actions`)."""
    ox, oy = rules.cross_origin(size)
    out = []
    for a in actions:
        x, y, d, pos = rules.decode(int(a), size)
        out.append(MorpionMove(x - ox, y - oy, DIRECTIONS[d], pos))
    return out


def _is_legal(state: np.ndarray, action: int) -> bool:
    cell, rest = divmod(action, 20)
    return bool((int(state[rules.HEADER + cell]) >> (rules.MOVE_SHIFT + rest)) & 1)


def replay_moves(
    moves: Sequence[MorpionMove],
    variant: str,
    size: int = rules.DEFAULT_SIZE,
    source: str = "record",
) -> np.ndarray:
    """Replays moves from the cross and returns the final state array.

    Raises:
        ValueError: ``"<source>: move <i> (x,y dir pos): <why>"`` for the first illegal move,
            with ``i`` 1-based; a move legal in 5T but not in 5D is called a wrong variant.
    """
    if variant not in rules.VARIANTS:
        raise ValueError(f"{source}: variant must be '5D' or '5T', got {variant!r}")
    try:
        actions = record_actions(moves, size)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None
    state = rules.initial_state(variant, size)
    ws = rules.workspace(state)
    origin = rules.cross_origin(size)
    for i, (m, a) in enumerate(zip(moves, actions, strict=True), 1):
        if not _is_legal(state, a):
            why = why_illegal(state, a, origin) or "not a legal move"
            if variant == "5D":
                loose = state.copy()
                loose[rules.H_VARIANT] = rules.VARIANTS.index("5T")
                rules.rescan(loose)
                if _is_legal(loose, a):
                    why = f"wrong variant: the move is legal in 5T but not in 5D ({why})"
            raise ValueError(f"{source}: move {i} ({m.x},{m.y} {m.dir} {m.pos}) is illegal: {why}")
        rules.play(state, a, ws)
    return state


def verify_record(
    path: str | os.PathLike, variant: str | None = None, size: int = rules.DEFAULT_SIZE
) -> int:
    """Replays a record file and returns its certified score (the number of moves).

    Args:
        path: an MSR JSON or PentaSol file.
        variant: the rules to check against; None takes the file's variant (5T if it has none:
            every 5D game is also a 5T game).
        size: the grid size used for the replay.

    Raises:
        ValueError: naming the file and the 1-based number of the first illegal move and why
            (missing dot, overlapping line, touching parallel line, wrong variant), or a score
            that differs from the one the file states.
    """
    record = read_record(path)
    rules_variant = variant or record.variant or "5T"
    state = replay_moves(record.moves, rules_variant, size, source=str(path))
    n = len(record.moves)
    stated = record.meta.get("score")
    if stated is not None and stated != n:
        raise ValueError(f"{path}: the record states score {stated} but has {n} moves")
    available = record.meta.get("available_moves")
    if available is not None and rules_variant == (record.variant or rules_variant):
        left = int(state[rules.H_NLEGAL])
        if available != left:
            raise ValueError(
                f"{path}: the record states {available} moves left at the end; "
                f"the replay finds {left}"
            )
    return n
