"""Compiling children: started on this process's ``sys.path``, fed their job on standard input,
and waited for; a child that must wait for others waits before it imports anything."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import threading
import time

AFTER = "MC_ENVS_COMPILE_AFTER"  # a child starts compiling once these processes have ended


def wait_for(processes: list[subprocess.Popen], timeout: float | None = None) -> bool:
    """Waits for ``processes``, ``timeout`` seconds in all at most; whether they have all ended."""
    end = None if timeout is None else time.monotonic() + timeout
    for process in processes:
        try:
            process.wait(None if end is None else max(end - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            return False
    return True


def spawn(
    module: str, payload: bytes, env: dict[str, str] | None = None, keep: tuple[int, ...] = ()
) -> subprocess.Popen | None:
    """A compiling child: ``module`` run as ``python -m`` runs it, on this process's
    ``sys.path``, with ``MC_ENVS_COMPILE_AHEAD=0`` and ``env``, ``payload`` fed to its standard
    input from a thread, the file descriptors ``keep`` open in it; None if no child can start
    here."""
    # The parent's path, its working directory where it has "" (python -c, the REPL): the child
    # imports the mc_envs its parent runs, not one in the directory it was started from.
    path = os.pathsep.join(p or os.getcwd() for p in sys.path)
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", _BOOT, module],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": path, "MC_ENVS_COMPILE_AHEAD": "0", **(env or {})},
            start_new_session=True,  # Ctrl-C at the caller's terminal does not cut it short
            pass_fds=keep,
        )
    except OSError:
        return None
    # Fed from a thread: a payload over the pipe's buffer (a Morpion env's, 200 kB) would hold
    # the caller until the child has imported its modules and reads it.
    threading.Thread(target=_feed, args=(child, payload), daemon=True).start()
    return child


def _feed(child: subprocess.Popen, payload: bytes) -> None:
    try:
        if child.stdin is not None:  # always: the child is started with a pipe for it
            child.stdin.write(payload)
            child.stdin.close()
    except OSError:
        pass  # it died at once: poll() says so, and the caller compiles


def _ended(pid: int) -> bool:
    if os.name == "nt":  # no /proc, and os.kill(pid, 0) would end the process: no wait there
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a child its parent has not reaped: a zombie
            return stat.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except OSError:  # gone, or no /proc here
        try:
            os.kill(pid, 0)
        except OSError:
            return True
        return False


def after(pids: str, timeout: float = 120.0) -> None:
    """Waits for the processes ``pids`` (comma-separated) to end, ``timeout`` seconds at most: a
    compiling child waits for its parent's earlier ones, whose kernels its job calls, so that
    they compile once and leave it the core meanwhile (the first lines of such a child: see
    :data:`_BOOT`; they use only ``os`` and ``time``)."""
    end = time.monotonic() + timeout
    waiting = [int(p) for p in pids.split(",") if p.strip().isdigit()]
    while waiting and time.monotonic() < end:
        waiting = [p for p in waiting if not _ended(p)]
        time.sleep(0.05 if waiting else 0.0)


# A child's program (``python -c _BOOT module``): off its path the working directory ("") that
# ``-c`` (as ``-m``) put first, then after() (a child that waits for others waits before it imports
# anything: its imports, 0.4 s of a core, would slow down the ones it waits for), then the module
# as ``-m`` runs it.
_BOOT = "\n".join(
    (
        "import os, runpy, sys, time",
        "sys.path[:1] = [p for p in sys.path[:1] if p]",
        inspect.getsource(_ended),
        inspect.getsource(after),
        f"after(os.environ.get({AFTER!r}, ''))",
        "runpy.run_module(sys.argv[1], run_name='__main__', alter_sys=True)",
    )
)
