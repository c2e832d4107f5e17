"""Time limits on an empty numba cache: how long the first searches of a fresh process take.

    python benchmarks/cold_time_limit.py --out benchmarks/results/cold_time_limit.json

Each case runs in a new process with a new, empty ``NUMBA_CACHE_DIR`` (so the process, its
workers and the compiling child all start cold), makes the env (SameGame position 2; its own
kernels compile there, before the clock), then calls the search twice with ``--time`` seconds,
one call right after the other. It reports each call's seconds counted from the call, playouts,
score, ``extra["compile"]`` (the generic stand-in: :mod:`mc_envs.agents.compile_ahead`) and, for the
parallel schemes, who searched. Nothing is asserted: it prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.reporting import provenance, save_report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "nmcs1": "NMCS(level=1, seed=1)",
    "nrpa2": "NRPA(level=2, seed=1)",
    "root_nmcs1_w2": "NMCS(level=1, seed=1, workers=2)",
    "distributed_nrpa2_w2": "NRPA(level=2, seed=1, workers=2, parallel='distributed')",
    "race_nrpa2_w2": "NRPA(level=2, seed=1, workers=2, parallel='race')",
    "uct": "UCT(seed=1)",
}
CHILD = """
import json, sys, time
import gymnasium as gym
import mc_envs
from mc_envs.agents import NMCS, NRPA, UCT, compile_ahead

if __name__ == "__main__":
    env = gym.make("mc_envs/SameGame-v0", position=2)
    env.reset()
    env.unwrapped.legal_actions()
    calls = []
    for _ in range(2):
        start = time.perf_counter()
        r = {agent}.search(env, time_limit={seconds})
        calls.append({{"seconds": round(time.perf_counter() - start, 3), "score": r.score,
                      "playouts": r.playouts, "compile": r.extra.get("compile"),
                      "participation": r.extra.get("participation")}})
    print(json.dumps(calls))
    compile_ahead.wait(timeout=300)  # the compiling child ends before its cache is removed
"""


def run_case(agent: str, seconds: float) -> list[dict]:
    """The two calls of one case, in a new process on an empty cache."""
    with tempfile.TemporaryDirectory(prefix="mc-envs-cold-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "MC_ENVS_COMPILE_AHEAD": "1"}
        env["PYTHONPATH"] = str(ROOT)
        script = Path(cache) / "cold_case.py"  # a file: the workers' spawn imports the main script
        script.write_text(CHILD.format(agent=agent, seconds=seconds))
        done = subprocess.run(
            [sys.executable, str(script)],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise SystemExit(f"cold_time_limit: {agent} failed:\n{done.stderr}")
        _wait_for_compilers(cache)
        return json.loads(done.stdout.strip().splitlines()[-1])


def _wait_for_compilers(cache: str, timeout: float = 300.0) -> None:
    """Waits for the compiling children that the case's workers started (a race's): they
    outlive their workers, and write into ``cache`` until they end (Linux: read from /proc)."""
    mark = f"NUMBA_CACHE_DIR={cache}".encode()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        busy = False
        for environ in Path("/proc").glob("[0-9]*/environ"):
            try:
                busy = busy or mark in environ.read_bytes().split(b"\0")
            except OSError:
                continue
        if not busy:
            return
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=float, default=8.0)
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--out", default="benchmarks/out/cold_time_limit.json")
    args = parser.parse_args(argv)
    report = {**provenance(argv), "time_limit": args.time, "cases": {}}
    for name in args.cases:
        calls = run_case(CASES[name], args.time)
        report["cases"][name] = {"agent": CASES[name], "calls": calls}
        for i, call in enumerate(calls):
            note = call["compile"] or {}
            who = call["participation"] or {}
            print(
                f"{name:<22} call {i}: {call['seconds']:6.2f} s  {call['playouts']:>9,} playouts"
                f"  score {call['score']:>6}  generic {note.get('generic_seconds', 0):5.2f} s"
                f"  caller tasks {who.get('caller_tasks', '-')}",
                flush=True,
            )
    save_report(Path(args.out), report)
    print(f"report: {args.out}")
    return report


if __name__ == "__main__":
    main()
