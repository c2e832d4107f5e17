"""The shipped records and positions, by name, for the command line: ``mc-envs records`` lists
them, ``mc-envs verify rosin82`` and ``mc-envs replay rosin82`` take a record's name where they take
a file, ``--board samegame3`` and ``--puzzle sudoku5`` a position's.

They are the package data (``mc_envs/data``), found through importlib.resources, so the names work
from a wheel as from a source tree. A file that exists always wins over a name; a path written
inside the package (``mc_envs/data/morpion/msr_rosin82.json``, as the docs write it) that does not
exist from the current folder is read from the package.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path, PurePosixPath

from mc_envs.cli.input import UsageError, need

PACKAGE = "mc_envs"
RECORDS_DIR = "data/morpion"
LISTED_BY = "mc-envs records lists them"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")  # what a name looks like (puzzle text does not)


@dataclass(frozen=True)
class Shipped:
    """A shipped record or position.

    Attributes:
        name: what the command line takes (``rosin82``, ``samegame3``).
        kind: ``"record"`` (verify, replay, --warm-start) or ``"position"`` (a game flag).
        game: the command-line name of its game.
        size: the record's moves, or the position's size.
        source: who made it.
        path: the file inside the package (``mc_envs/data/morpion/msr_rosin82.json``).
        flag: the game flag a position is given to (``board``, ``puzzle``), else None.
        text: the position's text, as the flag takes it (None for records).
    """

    name: str
    kind: str
    game: str
    size: str
    source: str
    path: str
    flag: str | None = None
    text: str | None = None


def _data(path: str) -> Path:
    """A file of the package data, as a file system path."""
    return Path(str(resources.files(PACKAGE).joinpath(path)))


def _records() -> list[Shipped]:
    """The Morpion records of ``mc_envs/data/morpion`` (MSR JSON), named after their file."""
    found = []
    folder = resources.files(PACKAGE).joinpath(RECORDS_DIR)
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        doc = json.loads(entry.read_text(encoding="utf-8"))
        name = entry.name.removesuffix(".json").removeprefix("msr_")
        source = str(doc.get("author", "unknown"))
        variant = str(doc.get("variant", "5T")).lower()
        moves = f"{len(doc.get('moves', []))} moves"
        path = f"{PACKAGE}/{RECORDS_DIR}/{entry.name}"
        found.append(Shipped(name, "record", f"morpion{variant}", moves, source, path))
    return found


def _samegame_boards(text: str) -> list[str]:
    """The boards of ``standard_20.txt``: a line ``position N``, then the rows of digits."""
    boards: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("position "):
            boards.append("")
        elif boards and line and not line.startswith("#"):
            boards[-1] += line + "\n"
    return boards


def _sudoku_puzzles(text: str) -> list[str]:
    """The puzzles of ``tdoku_test_puzzles.txt`` with exactly one solution, in the file's order."""
    rows = (line.split(":") for line in text.splitlines() if line and not line.startswith("#"))
    return [row[0] for row in rows if len(row) > 1 and row[1] == "1"]


@dataclass(frozen=True)
class _PositionSet:
    prefix: str
    game: str
    flag: str
    path: str
    source: str
    texts: Callable[[str], list[str]]
    size: Callable[[str], str]


_POSITION_SETS = (
    _PositionSet(
        "samegame",
        "samegame",
        "board",
        "data/samegame/standard_20.txt",
        "Schadd et al. (2008)",
        _samegame_boards,
        lambda board: f"{len(board.split())}x{len(board.split()[0])}",
    ),
    _PositionSet(
        "sudoku",
        "sudoku",
        "puzzle",
        "data/sudoku/tdoku_test_puzzles.txt",
        "tdoku's tests (Tom Dillon)",
        _sudoku_puzzles,
        lambda puzzle: f"{'9x9' if len(puzzle) == 81 else '16x16'}, 1 solution",
    ),
)


@cache
def catalogue() -> tuple[Shipped, ...]:
    """Every shipped record and position, records first."""
    found = _records()
    for s in _POSITION_SETS:
        texts = s.texts(resources.files(PACKAGE).joinpath(s.path).read_text(encoding="utf-8"))
        path = f"{PACKAGE}/{s.path}"
        for i, text in enumerate(texts, 1):
            found.append(
                Shipped(
                    f"{s.prefix}{i}", "position", s.game, s.size(text), s.source, path, s.flag, text
                )
            )
    return tuple(found)


def shipped(name: str) -> Shipped | None:
    """The shipped record or position of that name (any case), else None."""
    key = name.lower()
    return next((s for s in catalogue() if s.name == key), None)


def _in_package(value: str) -> Path | None:
    """``mc_envs/data/...`` written from the source tree's root: the package's file, if any."""
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if len(parts) < 2 or parts[0] != PACKAGE or ".." in parts:
        return None
    entry = resources.files(PACKAGE).joinpath(*parts[1:])
    return Path(str(entry)) if entry.is_file() else None


def record_file(value: str, option: str = "") -> Path:
    """The file of a record argument: the path if it exists, else the shipped record of that name,
    else the package's file of a path written inside the package.

    Args:
        value: what the command line got.
        option: the option that took it (``"--warm-start"``), for the message; "" for a positional.

    Raises:
        UsageError: none of them, naming what was tried and ``mc-envs records``.
    """
    path = Path(value)
    if path.exists():
        return path
    found = shipped(value)
    if found is not None and found.kind == "record":
        return _data(found.path.removeprefix(f"{PACKAGE}/"))
    in_package = _in_package(value)
    if in_package is not None:
        return in_package
    where = f"{option} {value}".strip()
    if found is not None:
        raise UsageError(
            f"{where}: a shipped position of {found.game} (give it to "
            f"--{found.flag}), not a record; {LISTED_BY}"
        )
    raise UsageError(f"{where}: no such file, and no shipped record of that name; {LISTED_BY}")


def position_text(value: str, flag: str, game: str) -> str | None:
    """The text of a shipped position given to ``--flag`` of ``game`` by name, or None when
    ``value`` is a file that exists or does not look like a name (puzzle text).

    Raises:
        UsageError: a name that is neither a file nor a shipped position of that game and flag.
    """
    if Path(value).exists() or not _NAME.fullmatch(value):
        return None
    found = shipped(value)
    if found is not None and found.flag == flag and found.game == game:
        return found.text
    what = f"a shipped {found.kind} of {found.game}" if found else "no shipped position"
    raise UsageError(
        f"--{flag} {value}: no such file, and {what}; {game} takes "
        f"{names_for(game, flag) or 'no shipped position'} ({LISTED_BY})"
    )


def names_for(game: str, flag: str) -> str:
    """The names a game's flag takes, as ``samegame1..samegame20``."""
    names = [s.name for s in catalogue() if s.game == game and s.flag == flag]
    return f"{names[0]}..{names[-1]}" if len(names) > 1 else "".join(names)


def cmd_records(args: argparse.Namespace) -> int:
    """``mc-envs records``: the shipped records one a line, the positions one set a line."""
    rows = [("name", "game", "moves/size", "source", "file in the package")]
    seen: set[tuple[str, str | None]] = set()
    for s in catalogue():
        if s.kind == "record":
            rows.append((s.name, s.game, s.size, s.source, s.path))
        elif (s.game, s.flag) not in seen:
            seen.add((s.game, s.flag))
            rows.append((names_for(s.game, s.flag or ""), s.game, s.size, s.source, s.path))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
    boards = ", ".join(f"--{s.flag} NAME ({s.game})" for s in _POSITION_SETS)
    print(f"\nrecords: mc-envs verify NAME, mc-envs replay NAME; positions: {boards}")
    return 0


def is_morpion_record(path: Path) -> bool:
    """MSR JSON (a "moves" list and no mc-envs "format") or PentaSol text (not JSON)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return False
    if not text.lstrip().startswith("{"):
        return bool(text.strip())
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(doc, dict) and "format" not in doc and "moves" in doc


def cmd_verify(args: argparse.Namespace) -> int:
    """``mc-envs verify FILE``: exit 0 certified, 1 wrong, 2 unreadable."""
    from mc_envs import go_sgf
    from mc_envs.records import RecordError, read_record, verify_record

    path = record_file(args.file)
    if go_sgf.is_sgf(path):
        return _verify_sgf(args.file, path)
    if is_morpion_record(path):
        from mc_envs import morpion_records

        try:
            record = morpion_records.read_record(path)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        variant = args.variant or record.variant or "5T"
        try:
            score = morpion_records.verify_record(path, variant=variant)
        except ValueError as exc:
            print(f"{exc}", file=sys.stderr)
            return 1
        print(f"{args.file}: certified: Morpion {variant} record of {score} moves")
        return 0
    try:
        solution = read_record(path)
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        verdict = verify_record(solution)
    except RecordError as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    print(f"{args.file}: {verdict.message}", file=sys.stdout if verdict.ok else sys.stderr)
    return 0 if verdict.ok else 1


def _verify_sgf(name: str, path: Path) -> int:
    """``mc-envs verify game.sgf``: exit 0 certified, 1 an illegal move or another result, 2
    unreadable (one line naming the node and the property)."""
    from mc_envs import go_sgf

    try:
        verdict = go_sgf.verify(go_sgf.read_sgf(path))
    except go_sgf.SgfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{name}: {verdict.message}", file=sys.stdout if verdict.ok else sys.stderr)
    return 0 if verdict.ok else 1


def cmd_replay(args: argparse.Namespace) -> int:
    """``mc-envs replay FILE``: the window, or GIF / MP4 (video extra) and PNG (render alone)."""
    path = record_file(args.file)
    modules = [("pygame", "render")]
    if args.gif or args.mp4:
        modules.append(("imageio", "video"))
    if args.mp4:
        modules.append(("imageio_ffmpeg", "video"))
    option = " ".join(f"--{k}" for k in ("gif", "mp4", "png") if getattr(args, k))
    need(f"mc-envs replay {option}".strip(), modules)
    from mc_envs.render import replay

    try:
        game = replay.load(path, variant=args.variant)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.gif or args.mp4 or args.png:
        written = replay.export(game, gif=args.gif, mp4=args.mp4, png=args.png, fps=args.fps)
        for kind, n in written.items():
            out = getattr(args, kind)
            print(f"{out}: {n} frame(s) ({kind}) of {game.title}, {len(game)} moves")
        return 0
    return replay.view(game, fps=args.fps)
