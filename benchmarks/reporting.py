"""What the long-run benchmarks share: a timed search with its score trace, provenance, the report.

``samegame_standard.py`` and ``morpion_records.py`` run one search per problem under a time limit,
keep when each better score was found, write a JSON report atomically after every problem (so a
killed run loses one problem and ``--resume`` plays the rest), and can plot the best score against
time, like the figures of the NMCS paper.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent


def timed_search(
    agent: Any, env: Any, seconds: float, checkpoint: Path | None = None, resume: bool = False
) -> dict:
    """Runs ``agent.search`` on ``env`` for ``seconds``; the result and its (time, best) trace.

    With ``checkpoint``, the search is saved there (one file per root worker) and the time spent
    and the trace so far beside it (``<checkpoint>.time.json``, written on every improvement and
    every few seconds): ``resume`` continues a search killed or stopped earlier, for the seconds
    it has left, so that a long run may span sessions and still count its time once.
    """
    spent_file = Path(f"{checkpoint}.time.json") if checkpoint is not None else None
    spent, trace = 0.0, []
    if resume and spent_file is not None and spent_file.exists():
        saved = json.loads(spent_file.read_text())
        spent, trace = float(saved["seconds"]), [tuple(t) for t in saved["trace"]]
    last = [0.0]

    def save(elapsed: float) -> None:
        if spent_file is not None:
            save_report(spent_file, {"seconds": round(spent + elapsed, 3), "trace": trace})

    def progress(p) -> None:
        if p.improved:
            trace.append((round(spent + p.elapsed, 3), p.best_score))
        if p.improved or p.elapsed - last[0] >= 5.0:
            last[0] = p.elapsed
            save(p.elapsed)

    saving = {}
    if checkpoint is not None:
        saved = any(Path(f"{checkpoint}{end}").exists() for end in ("", ".w0"))
        saving = {"checkpoint": str(checkpoint), "resume": resume and saved}
    left = max(seconds - spent, 0.01)
    result = agent.search(env, time_limit=left, callback=progress, **saving)
    save(result.seconds)
    trace.append((round(spent + result.seconds, 3), result.score))
    return {
        "score": result.score,
        "actions": [int(a) for a in result.actions],
        "playouts": result.playouts,
        "seconds": spent + result.seconds,
        "trace": trace,
        "stopped": result.stopped,
        # mc_envs.agents.parallel.race's own report
        **({"race": result.extra["race"]} if "race" in result.extra else {}),
    }


def drop_checkpoint(checkpoint: Path) -> None:
    """Removes a finished search's checkpoint files (its workers' and its time file)."""
    for path in checkpoint.parent.glob(f"{checkpoint.name}*"):
        path.unlink()


def interrupted(run: dict, what: str) -> None:
    """Exits (130) when a timed search was interrupted: its problem is not reported as played,
    and ``--resume`` continues it from its checkpoint."""
    if run["stopped"] == "interrupt":
        print(f"\ninterrupted during {what}: --resume continues it", file=sys.stderr)
        raise SystemExit(130)


def best_at(trace: list, t: float) -> float:
    """The best score of a trace at time ``t`` (0 before the first entry)."""
    best = 0.0
    for at, score in trace:
        if at <= t:
            best = score
    return best


def provenance(argv: list[str] | None) -> dict:
    """The command, machine, date and source commit of a report (call it once, at the start: the
    commit is that of the code the run imported)."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {
        "command": " ".join(
            [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]
        ),
        "machine": platform.platform(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "commit": commit,
    }


def previous_runs(out: Path, field: str, key: str, wanted: list) -> list[dict]:
    """For ``--resume``: the runs in the report's list ``field`` whose ``key`` is in ``wanted``."""
    if not out.exists():
        return []
    return [r for r in json.loads(out.read_text())[field] if r[key] in wanted]


def save_report(out: Path, report: dict) -> None:
    """Writes a report atomically (a kill never leaves a torn file)."""
    from mc_envs.records import write_atomic

    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(report, indent=1))


def add_run_arguments(parser: argparse.ArgumentParser, what: str, checkpoint: str) -> None:
    """Adds the options the long-run benchmarks share: the seed, NRPA's variants, the report
    (``--out``, ``--plot``) and ``--resume``, which keeps ``what`` already in the report and
    continues a search cut short from its checkpoint file (``checkpoint``)."""
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tau", type=float, default=1.0, help="NRPA: GNRPA's temperature")
    parser.add_argument("--stabilize", type=int, default=1, help="NRPA: rollouts per level-1 step")
    parser.add_argument("--repeats", type=int, default=0, help="NRPA: limited repetitions")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--plot", action="store_true", help="also write a PNG of score vs time")
    parser.add_argument(
        "--resume",
        action="store_true",
        help=f"keep the {what} already in --out; continue a search cut short (its checkpoint "
        f"{checkpoint}) for the time it has left; play the rest",
    )


def run_child(script: str | Path, spec: dict, timeout: float) -> dict:
    """Runs ``spec`` in a fresh process (``script --one SPEC``): its last JSON line, or
    ``{"error": ...}`` when it fails or outlives ``timeout`` seconds (then its whole process
    group, async workers included, is killed)."""
    cmd = [sys.executable, str(Path(script).resolve()), "--one", json.dumps(spec)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"error": f"timeout: killed after {timeout:.0f} s"}
    except BaseException:  # Ctrl-C: the measurement's processes go with this one
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        return {"error": f"exit {proc.returncode}: {tail}"}
    return json.loads(lines[-1])


@functools.cache
def package_bytecode() -> None:
    """Compiles the bytecode of this tree's ``mc_envs``, as pip does when it installs the wheel.
    A machine that sets ``PYTHONDONTWRITEBYTECODE`` (this project's build VMs do) would
    otherwise compile the package's sources in every fresh process: 0.2 s of each import there,
    which no installed copy pays."""
    compileall.compile_dir(ROOT / "mc_envs", quiet=1)


def run_code(code: str, cache: str, timeout: float, **extra: str) -> dict[str, Any]:
    """Runs ``code`` (``python -c``) in a fresh process on the numba cache ``cache``, this tree
    first on its path (its bytecode compiled: :func:`package_bytecode`) and ``extra`` added to
    its environment: its last JSON line, or ``{"error": ...}`` when it fails or outlives
    ``timeout`` seconds."""
    package_bytecode()
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT), **extra}
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            cwd=str(ROOT),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit {done.returncode}: {done.stderr.strip()[-500:]}"}
    return json.loads(lines[-1])


class Playouts(NamedTuple):
    """A kernel's playouts from an env's start: ``state[:] = root``, then
    ``kernel.playout(state, 0, rng, ws, seq, 0)``, again and again."""

    kernel: Any
    root: Any
    state: Any
    ws: Any
    seq: Any
    rng: Any


def playouts_from_start(env_id: str) -> Playouts:
    """What :class:`Playouts` needs for ``env_id`` after ``reset(seed=0)`` (the random stream
    seeded 12345)."""
    import gymnasium as gym
    import numpy as np

    import mc_envs  # noqa: F401

    base = gym.make(env_id).unwrapped
    base.reset(seed=0)
    kernel = base.kernel
    root = base.state_view.copy()
    seq = np.zeros(kernel.max_moves + 1, dtype=np.int64)
    rng = np.array([12345], dtype=np.uint64)
    return Playouts(kernel, root, root.copy(), kernel.workspace(root), seq, rng)
