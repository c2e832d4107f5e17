"""Pauses the machine itself imposes on a busy process: no mc-envs code runs.

    python benchmarks/vm_gaps.py [--seconds 20] [--procs 1 2 3] [--out FILE]

For each count K of ``--procs``, K processes each spin a plain Python loop for ``--seconds``
and record every gap over 30 ms between two turns of their loop (the process was not running
then), with the host's steal time from ``/proc/stat`` (Linux: time a virtual CPU was ready but
the host ran something else) over the same span. On the 2-core VM the cold-start figures come
from, a process alone saw no gap; two processes, one per core, saw gaps of 100 ms while steal
time rose: the host takes a virtual CPU away for 100 ms at a time when both are busy, and a
vector env's step that falls in such a pause takes 100 ms more (a cold env's compiling child
keeps the second core busy). Nothing is asserted; :func:`main` prints one line per K.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from pathlib import Path

GAP = 0.03  # seconds: a longer pause between two turns of the loop is recorded


def _steal() -> int:
    """The host's steal time so far, in clock ticks (0 where /proc/stat does not say)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8])
    except (OSError, IndexError, ValueError):
        return 0


def spin(seconds: float) -> list[float]:
    """Spins for ``seconds``; the pauses over :data:`GAP`, in milliseconds."""
    end = time.perf_counter() + seconds
    last, gaps = time.perf_counter(), []
    while last < end:
        now = time.perf_counter()
        if now - last > GAP:
            gaps.append(round((now - last) * 1e3, 1))
        last = now
    return gaps


def measure(procs: int, seconds: float) -> dict:
    """``procs`` spinning processes at once: each one's pauses, and the steal time meanwhile."""
    before = _steal()
    with multiprocessing.get_context("spawn").Pool(procs) as pool:
        gaps = pool.map(spin, [seconds] * procs)
    return {"procs": procs, "seconds": seconds, "gaps_ms": gaps, "steal_ticks": _steal() - before}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", type=Path, help="write the measurements here as JSON")
    args = parser.parse_args(argv)
    found = []
    for k in args.procs:
        row = measure(k, args.seconds)
        found.append(row)
        pauses = [g for each in row["gaps_ms"] for g in each]
        print(
            f"{k} process(es), {args.seconds:.0f} s: {len(pauses)} pauses over "
            f"{GAP * 1e3:.0f} ms (longest {max(pauses, default=0.0):.1f} ms), "
            f"steal {row['steal_ticks']} ticks",
            flush=True,
        )
    if args.out:
        args.out.write_text(json.dumps({"gap_s": GAP, "runs": found}, indent=1))
    return found


if __name__ == "__main__":
    main()
