"""The warm-up's children: one process per core, fed entries one at a time, replaced when their
memory grows past a bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import gymnasium as gym

from mc_envs.agents.warmup.work import Done, Entry, entries

if TYPE_CHECKING:
    import selectors

RSS_BOUND = 350 * 2**20  # bytes: a child past this peak is replaced after its entry
CHILDREN = 2


class Child:
    """A serving child process and the env it works on."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mc_envs.agents.warmup", "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "MC_ENVS_COMPILE_AHEAD": "0"},
        )
        self.entry: Entry | None = None
        self.peak = 0

    @property
    def group(self) -> str | None:
        """The :func:`group` of the child's last entry."""
        return None if self.entry is None else group(self.entry.env_id)

    def give(self, entry: Entry) -> None:
        """Sends ``entry`` to the child."""
        assert self.proc.stdin is not None
        self.entry = entry
        self.proc.stdin.write(json.dumps(list(entry)) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> Done:
        """The child's answer to its entry (a failure if it died)."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            name = "?" if self.entry is None else self.entry.name
            return Done(name, 0.0, 0, self.peak, f"the child exited ({self.proc.wait()})")
        done = Done(**json.loads(line))
        self.peak = max(self.peak, done.peak_rss)
        return done

    def close(self) -> None:
        """Ends the child (it ends when its input closes)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def group(env_id: str) -> str:
    """The module of the env's class: ids of one module share their game's compiled code (Morpion
    5D and 5T, the two binary trees), which one child compiles and the other would again."""
    return str(gym.spec(env_id).entry_point).partition(":")[0]


def _queues(work: list[Entry]) -> dict[str, list[Entry]]:
    """The entries by :func:`group`, in their order."""
    queues: dict[str, list[Entry]] = {}
    for entry in work:
        queues.setdefault(group(entry.env_id), []).append(entry)
    return queues


def _next(queues: dict[str, list[Entry]], child: Child, others: list[Child]) -> Entry | None:
    """The next entry for ``child``: its group's, else a group nobody works on, else any."""
    busy = {c.group for c in others}
    for key in (child.group, *[g for g in queues if g not in busy], *queues):
        if key in queues and queues[key]:
            entry = queues[key].pop(0)
            if not queues[key]:
                del queues[key]
            return entry
    return None


def warm(env_ids: list[str] | None = None, children: int = CHILDREN) -> Iterator[Done]:
    """Runs the warm-up's entries on ``children`` processes; yields each :class:`Done` as it
    comes. A child past :data:`RSS_BOUND` is replaced before its next entry."""
    import selectors

    queues = _queues(entries(env_ids))
    pool: list[Child] = []
    watch = selectors.DefaultSelector()

    def start(child: Child | None = None) -> None:
        if child is None:
            if not queues:
                return
            child = Child()
        entry = _next(queues, child, [c for c in pool if c is not child])
        if entry is None:
            if child in pool:
                _retire(child, pool, watch)
            else:
                child.close()
            return
        if child not in pool:
            pool.append(child)
            watch.register(child.proc.stdout, selectors.EVENT_READ, child)  # type: ignore[arg-type]
        child.give(entry)

    try:
        for _ in range(children):
            start()
        while pool:
            for key, _ in watch.select():
                child: Child = key.data
                done = child.answer()
                yield done
                if done.peak_rss > RSS_BOUND or child.proc.poll() is not None:
                    _retire(child, pool, watch)
                    start()
                else:
                    start(child)
    finally:
        for child in list(pool):
            _retire(child, pool, watch)


def _retire(child: Child, pool: list[Child], watch: selectors.BaseSelector) -> None:
    assert child.proc.stdout is not None
    watch.unregister(child.proc.stdout)
    pool.remove(child)
    child.close()
