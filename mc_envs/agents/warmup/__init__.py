"""``mc-envs warmup``: compile every kernel that the envs, the vector envs and the agents use into
the numba cache, on every core, one line per compiled entry.

The work is a list of :class:`Entry` values (an env id and what to run on it: the single env's
step, a search, the vector env's step, ``PUCT.search_batch``). Two child processes (one per core,
``python -m mc_envs.agents.warmup --serve``) take the entries one at a time from this process, the
entries of the envs of one module in a row where they can (their kernels and searches compile
once, in that child), and answer each
with its seconds, whether it compiled anything (numba's ``numba:compile`` events) and the child's
peak resident memory. A child whose peak passes :data:`RSS_BOUND` is replaced by a fresh one
(numba keeps every module it compiled): the next one loads what is cached in milliseconds.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from mc_envs.agents.warmup.children import CHILDREN, RSS_BOUND, warm
from mc_envs.agents.warmup.work import Done, Entry, entries, run_entry

__all__ = ["CHILDREN", "RSS_BOUND", "Done", "Entry", "entries", "run_entry", "warm", "warm_here"]


def warm_here(say: Callable[[str], None] | None = None) -> str:
    """Compiles (or loads) every kernel and search into this machine's numba cache; returns what
    it did, one line per entry (name, seconds, compiled or cached) and one per env once all its
    entries are done, each also given to ``say`` as it comes. ``mc-envs warmup`` (and, on every
    node of a cluster, ``warmup --address``)."""
    from mc_envs._numba import cache_dir

    lines: list[str] = []

    def line(text: str) -> None:
        lines.append(text)
        if say is not None:
            say(text)

    start = time.perf_counter()
    line(f"numba cache: {cache_dir()} (on {socket.gethostname()}; {CHILDREN} processes)")
    left: dict[str, list[str]] = {}
    for entry in entries():
        left.setdefault(entry.env_id, []).append(entry.name)
    seconds: dict[str, float] = {}
    peak = 0
    for done in warm():
        what = (
            f"error: {done.error}"
            if done.error
            else (f"compiled ({done.compiled})" if done.compiled else "cached")
        )
        line(f"  {done.name:<40} {done.seconds:7.2f} s  {what}")
        peak = max(peak, done.peak_rss)
        env_id = next((e for e, names in left.items() if done.name in names), None)
        if env_id is None:
            continue
        left[env_id].remove(done.name)
        seconds[env_id] = seconds.get(env_id, 0.0) + done.seconds
        if not left[env_id]:
            line(f"{env_id}: ready in {seconds[env_id]:.1f} s")
    line(
        f"warmup: {time.perf_counter() - start:.1f} s; peak resident memory of a process "
        f"{peak / 2**20:.0f} MB (at most {CHILDREN} at once)"
    )
    return "\n".join(lines)
