"""Checks of the command line's input and output, so that a bad value or path is one line on
stderr (exit status 2) before any search starts, and a finished search's record is never lost."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2), not the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}\n")


if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[Parser]  # what Parser.add_subparsers() gives


N = TypeVar("N", int, float)


def _number(kind: type[N], low: float, strict: bool) -> Callable[[str], N]:
    """An argparse type: a ``kind`` number above ``low`` (or at least ``low`` when not strict)."""

    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value != value or (value <= low if strict else value < low) or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text} must be {'>' if strict else '>='} {low:g}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


POSITIVE_INT, POSITIVE_FLOAT, NATURAL = (
    _number(int, 0, True),
    _number(float, 0, True),
    _number(int, 0, False),
)


def read_input(path: Path, option: str) -> str:
    """The text of an input file given on the command line; UsageError naming it otherwise."""
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{option} {path}: unreadable: not UTF-8 text (byte {exc.start})"
        ) from None


def check_writable(path: Path, option: str) -> None:
    """Makes sure a file can be written there, before a long search: UsageError otherwise."""
    import tempfile

    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there: {exc.strerror or exc}") from None


def save_elsewhere(out: Path, record: dict, exc: OSError) -> int:
    """Writes a record that could not go to ``--out`` into the temporary folder; exit status 1."""
    import tempfile

    from mc_envs.records import write_record

    fallback = Path(tempfile.gettempdir()) / f"mc-envs-{os.getpid()}-{out.name}"
    write_record(fallback, record)
    print(
        f"error: --out {out}: cannot write: {exc.strerror or exc}; record saved to {fallback} "
        f"(score {record['score']:g})",
        file=sys.stderr,
    )
    return 1


def need(what: str, modules: list[tuple[str, str]]) -> None:
    """Makes sure the optional modules a command needs import, before it starts.

    Args:
        what: the command, the start of the message (``"mc-envs play"``).
        modules: ``(module, extra)`` pairs: the module and the extra of mc-envs that installs it.

    Raises:
        UsageError: one line naming the missing modules and the pip command of their extras,
            ``mc-envs play needs pygame: pip install "mc-envs[render]"``.
    """
    from mc_envs.extras import MissingExtra, require

    missing: dict[str, str] = {}
    for module, extra in modules:
        try:
            require(module, extra, what)
        except MissingExtra:
            missing[module] = extra
    if missing:
        extras = ",".join(dict.fromkeys(missing.values()))
        names = list(missing)
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        raise UsageError(f'{what} needs {listed}: pip install "mc-envs[{extras}]"')
