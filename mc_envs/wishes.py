"""The two pipes between a cold env's process and its game's compiling child
(:mod:`mc_envs.interpret` starts it, :mod:`mc_envs.exercise` runs in it).

Down, a line at a time (:meth:`Parent.tell`): the :class:`~mc_envs.kernel.Kernel` fields the
parent runs as Python, the most time first, then each field the parent compiles itself, written
``=name``. A search with no clock compiles on both cores: its process takes the kernel that
compiles the longest, unless the child is compiling it (:meth:`Parent.take`, under
:func:`mc_envs.interpret.sharing`), and the child leaves it out. Up (:meth:`Child.at`): the fields
of the stage the child compiles now. Neither side waits for the other: a line the pipe cannot
take now is dropped, and each reads the last whole line there is.
"""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Callable

ENV = "MC_ENVS_WISHES"  # the child's ends of the pipes: "down,up" (file descriptors)
CALLED = ("legal", "play")  # the kernels every search calls (a playout too)


class Lines:
    """The last whole line read from a descriptor without waiting, as words."""

    def __init__(self, fd: int | None) -> None:
        self.fd, self._rest = fd, b""
        self.words: list[str] = []

    def latest(self) -> list[str]:
        """The words of the last whole line (the ones before, if none came since)."""
        while self.fd is not None:
            try:
                if not select.select([self.fd], [], [], 0)[0]:
                    break
                chunk = os.read(self.fd, 4096)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:  # the other side closed it or exited
                self.fd = None
                break
            lines = (self._rest + chunk).split(b"\n")
            self._rest = lines.pop()
            if lines:
                self.words = lines[-1].decode("ascii", "replace").split()
        return self.words


def _write(fd: int | None, words: list[str]) -> bool:
    """Writes ``words`` as a line; False when the pipe cannot take it now or is gone."""
    if fd is None:
        return False
    try:
        os.write(fd, (" ".join(words) + "\n").encode("ascii"))
    except OSError:  # full (BlockingIOError), or the other side has ended
        return False
    return True


class Parent:
    """The parent's ends of one child's pipes; :attr:`env` and :attr:`child_fds` go to the child,
    then :meth:`started` closes the child's ends here."""

    def __init__(self) -> None:
        down_read, self._down = os.pipe()
        up_read, up_write = os.pipe()
        os.set_blocking(self._down, False)  # a line the pipe cannot take now is dropped
        self.child_fds = (down_read, up_write)
        self.env = {ENV: f"{down_read},{up_write}"}
        self._at = Lines(up_read)
        self._sent: list[str] | None = None
        self.wished: list[str] = []
        self.taken: str | None = None  # the field this process compiles itself

    def started(self) -> None:
        """Closes the child's ends in this process (the child has its copies)."""
        for fd in self.child_fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def tell(self, wished: list[str] | None = None) -> None:
        """Sends the fields run as Python, the most time first (``wished``; the last ones if
        None), and those this process compiles, if that line differs from the last one sent."""
        if wished is not None:
            self.wished = wished
        words = self.wished + ([] if self.taken is None else ["=" + self.taken])
        if words != self._sent and _write(self._down, words):
            self._sent = words

    def take(self, name: str, heaviest: Callable[[], bool] | None = None) -> bool:
        """Whether this process compiles the kernel ``name`` itself: one kernel at most, the
        caller's choice (``heaviest()``: whether it compiles the longest, asked only while none
        is taken), and not one the child is compiling now; the child is told at once. (Kernels
        share callees, which both would compile, and while this process compiles, its search
        stands still: it leaves the rest to the child.)"""
        if self.taken is not None:
            return name == self.taken
        if (heaviest is not None and not heaviest()) or self.compiling(name):
            return False
        self.taken = name
        self.tell()
        return True

    def compiling(self, name: str) -> bool:
        """Whether the child has told that it compiles the kernel ``name`` now."""
        return name in self._at.latest()

    def close(self) -> None:
        """Closes this process's ends."""
        for fd in (self._down, self._at.fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._at.fd = None


class Child:
    """The child's ends: where it hears what its parent wishes and takes (``down``), and tells
    which stage it is at (``up``); None: no such pipe (no parent to hear, as on Windows)."""

    def __init__(self, down: int | None = None, up: int | None = None) -> None:
        if up is not None:
            os.set_blocking(up, False)  # a parent that no longer reads holds nothing up
        self._wishes, self._up = Lines(down), up

    @classmethod
    def named(cls, spec: str | None) -> Child:
        """The ends that :data:`ENV`'s value ``spec`` names ("down,up"); none if it names none."""
        try:
            down, up = (int(fd) for fd in (spec or "").split(","))
        except ValueError:
            return cls()
        return cls(down, up)

    def latest(self) -> tuple[list[str], set[str]]:
        """The fields the parent runs as Python, the most time first, and those it compiles."""
        words = self._wishes.latest()
        return (
            [w for w in words if not w.startswith("=")],
            {w[1:] for w in words if w.startswith("=")},
        )

    def listening(self) -> bool:
        """Whether the parent's end of the pipe is still open (it may yet wish or compile)."""
        self._wishes.latest()
        return self._wishes.fd is not None

    def at(self, names: list[str]) -> None:
        """Tells the parent the fields of the stage this child compiles now (none: the rest)."""
        _write(self._up, names)
