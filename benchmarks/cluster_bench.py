"""What a round of parallel search costs, and a model of playouts/s at 8, 64 and 512 workers.

Measured on this machine (SameGame position 2), for 1, 2 and 4 workers on one backend:

- the cost of a round: rounds of tiny tasks (one playout each) through the same machinery as the
  searches (:class:`mc_envs.agents.parallel.rounds.Rounds` over a pool); the round's wall time less its tasks'
  search time, fitted as ``o(W) = o0 + o1 * W``; and the size of a task's result;
- playouts/s of one worker, root parallelism (NMCS level 1), ``parallel="moves"`` (NMCS level
  2), ``parallel="distributed"`` (NRPA level 2 and 3) and the race (NRPA level 1), each under a
  time limit (the fallback of distributed/moves to root parallelism switched off).

The model: a worker alone makes ``r1`` playouts/s; ``W`` workers get ``min(W, cores)`` cores'
worth (``cores`` calibrated from root parallelism at 2 workers: a busy machine gives them less
than 2). Root parallelism and the race keep every worker busy: ``min(W, cores) * r1``. A round of
distributed NRPA runs ``W`` level-(L-1) searches of ``t`` seconds each and costs ``o(W)`` more:
``min(W, cores) * r1 * t / (t + o(W))``. A step of ``moves`` spreads ``m`` candidates of ``t``
seconds over ``W`` workers in ``ceil(m / W)`` waves: ``m * t * r1 / (ceil(m / W) * t + o(W))``,
capped by the cores. ``o(W)`` is the measured dispatch (``o0 + o1 * W``) plus a task's own
set-up, calibrated from each scheme's run at 2 workers; ``t`` and ``m`` come from that run. Every
rate counts the workers' search time only (the start of the pool, ``worker_ready``, left out).
The model is checked against 4 workers here, then extrapolated to 8, 64 and 512 workers with one
core each.

    python benchmarks/cluster_bench.py --backend ray --address 127.0.0.1:6379 --time 5
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import gymnasium as gym  # noqa: E402
from reporting import provenance, save_report  # noqa: E402

import mc_envs  # noqa: E402, F401
from mc_envs.agents import NMCS, NRPA  # noqa: E402
from mc_envs.agents import parallel as parallel_module  # noqa: E402
from mc_envs.agents.parallel.root import open_pool, solo  # noqa: E402
from mc_envs.agents.parallel.rounds import Rounds  # noqa: E402

SCHEMES = {
    "root": lambda w, b, a: NMCS(level=1, seed=1, workers=w, backend=b, address=a),
    "moves": lambda w, b, a: NMCS(
        level=2, seed=1, workers=w, backend=b, address=a, parallel="moves"
    ),
    "distributed_l2": lambda w, b, a: NRPA(
        level=2, seed=1, workers=w, backend=b, address=a, parallel="distributed"
    ),
    "distributed_l3": lambda w, b, a: NRPA(
        level=3, seed=1, workers=w, backend=b, address=a, parallel="distributed"
    ),
    "race": lambda w, b, a: NRPA(level=1, seed=1, workers=w, backend=b, address=a, parallel="race"),
}
SOLO = {  # the one-worker search each scheme is measured against
    "root": NMCS(level=1, seed=1),
    "moves": NMCS(level=2, seed=1),
    "distributed_l2": NRPA(level=2, seed=1),
    "distributed_l3": NRPA(level=3, seed=1),
    "race": NRPA(level=1, seed=1),
}


def board() -> Any:
    env = gym.make("mc_envs/SameGame-v0", position=2)
    env.reset(seed=0)
    return env


def round_cost(workers: int, backend: str, address: str | None, rounds: int) -> dict:
    """Seconds a round of ``workers`` one-playout tasks takes beyond its tasks' search."""
    env = board()
    agent = NMCS(level=0, seed=1, workers=workers, backend=backend, address=address)
    pool = open_pool(agent, env.unwrapped)
    loop = Rounds(pool, None, None)  # no stand-in: the pool alone
    try:
        task = solo(agent)
        loop.run([(task, {"playouts": 1})] * workers)  # workers started, code loaded
        overheads, size = [], 0
        for _ in range(rounds):
            start = time.perf_counter()
            results = loop.run([(task, {"playouts": 1})] * workers)
            wall = time.perf_counter() - start
            overheads.append(wall - max(r.seconds for r in results))
            size = max(size, len(pickle.dumps(results[0])))
    finally:
        pool.close()
    overheads.sort()
    return {"workers": workers, "overhead_s": overheads[len(overheads) // 2], "result_bytes": size}


def measure(scheme: str, workers: int, backend: str, address: str | None, seconds: float) -> dict:
    env = board()
    agent = SOLO[scheme] if workers == 1 else SCHEMES[scheme](workers, backend, address)
    start = time.perf_counter()
    result = agent.search(env, time_limit=seconds)
    wall = time.perf_counter() - start
    extra = result.extra
    tasks = extra.get("tasks") or 0
    return {
        "scheme": scheme,
        "workers": workers,
        "playouts": result.playouts,
        "wall_s": round(wall, 3),
        "playouts_per_s": result.playouts / wall,
        "tasks": tasks,
        "steps": extra.get("steps") or extra.get("rounds") or 0,
        "participation": extra.get("participation"),
    }


def predict(scheme: str, workers: int, cores: float, r1: float, cost: float, shape: dict) -> float:
    """Playouts/s of ``scheme`` on ``workers`` workers with ``cores`` cores' worth of CPU and
    ``cost`` seconds per round beyond its tasks, while searching (see the module docstring)."""
    eff = min(workers, cores)
    if scheme in ("root", "race") or workers == 1:
        return eff * r1
    t = shape["task_s"]
    if scheme.startswith("distributed"):
        return eff * r1 * t / (t + cost)
    m = shape["candidates"]
    waves = math.ceil(m / workers)
    return min(m * t * r1 / (waves * t + cost), eff * r1)


def searching(run: dict, seconds: float) -> float:
    """The share of the time limit the workers searched (less their start: ``worker_ready``)."""
    seen = run.get("participation") or {}
    return max(seconds - float(seen.get("worker_ready") or 0.0), 0.1) / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local", choices=["local", "ray"])
    parser.add_argument("--address", help="a Ray cluster (backend ray)")
    parser.add_argument("--time", type=float, default=5.0, help="seconds per measured search")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=30, help="rounds timed per pool size")
    parser.add_argument("--schemes", default=",".join(SCHEMES))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/cluster_bench.json")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    schemes = args.schemes.split(",")
    if args.address:  # a race resumes its searches from local files: this machine only
        schemes = [s for s in schemes if s != "race"]
    parallel_module.FALLBACK = 0.0  # measure the schemes themselves, never root in their place
    for agent in SOLO.values():  # compiled before any clock
        agent.search(board(), playouts=1)

    costs = [round_cost(w, args.backend, args.address, args.rounds) for w in counts]
    for c in costs:
        print(
            f"round of {c['workers']} tasks: +{c['overhead_s'] * 1e3:.1f} ms, "
            f"result {c['result_bytes']} B",
            flush=True,
        )
    xs = [c["workers"] for c in costs]
    ys = [c["overhead_s"] for c in costs]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mean_x) ** 2 for x in xs) or 1.0
    o1 = max(sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / var, 0.0)
    fit = {"o0": max(mean_y - o1 * mean_x, 0.0), "o1": o1}

    cores = os.cpu_count() or 1
    rows, model = [], {}
    measured = {
        scheme: [measure(scheme, w, args.backend, args.address, args.time) for w in counts]
        for scheme in schemes
    }
    # Calibration at 2 workers: the cores' worth this machine gave them (root), then each round
    # scheme's cost per round beyond the dispatch (its tasks' own set-up); 4 workers check it.
    root = {r["workers"]: r for r in measured.get("root", [])}
    share = cores
    if 1 in root and 2 in root:
        bf = searching(root[2], args.time)
        share = min(max(root[2]["playouts_per_s"] / (root[1]["playouts_per_s"] * bf), 1.0), cores)
    for scheme, runs in measured.items():
        r1 = next(r["playouts_per_s"] for r in runs if r["workers"] == 1)
        multi = [r for r in runs if r["workers"] > 1 and r["tasks"]]
        shape = {"task_s": 0.0, "candidates": 1, "task_cost_s": 0.0}
        if multi:
            two = multi[0]
            per_task = two["playouts"] / max(two["tasks"], 1)
            shape = {
                "task_s": per_task / r1,
                "candidates": max(round(two["tasks"] / max(two["steps"], 1)), 1),
                "task_cost_s": 0.0,
            }
            rate = two["playouts_per_s"] / searching(two, args.time)
            w = two["workers"]
            if scheme.startswith("distributed"):
                total = min(w, share) * r1 * shape["task_s"] / rate - shape["task_s"]
            else:
                waves = math.ceil(shape["candidates"] / w)
                total = shape["candidates"] * shape["task_s"] * r1 / rate - waves * shape["task_s"]
            dispatch = fit["o0"] + fit["o1"] * w
            shape["task_cost_s"] = max(total - dispatch, 0.0)
        for r in runs:
            cost = fit["o0"] + fit["o1"] * r["workers"] + shape["task_cost_s"]
            r["predicted_per_s"] = predict(scheme, r["workers"], share, r1, cost, shape) * (
                searching(r, args.time) if r["workers"] > 1 else 1.0
            )
            print(
                f"{scheme:15} W={r['workers']}: {r['playouts_per_s']:10,.0f} playouts/s "
                f"measured, {r['predicted_per_s']:10,.0f} predicted",
                flush=True,
            )
        model[scheme] = {
            "r1": r1,
            **shape,
            "predicted_per_s": {
                str(w): predict(
                    scheme, w, w, r1, fit["o0"] + fit["o1"] * w + shape["task_cost_s"], shape
                )
                for w in (8, 64, 512)
            },
        }
        rows += runs
    for scheme, m in model.items():
        guess = ", ".join(f"{w}: {v:,.0f}" for w, v in m["predicted_per_s"].items())
        print(f"{scheme:15} model, one core per worker: {guess}")
    report = {
        "provenance": provenance(sys.argv),
        "backend": args.backend,
        "address": args.address,
        "cores": cores,
        "cores_worth_at_2_workers": share,
        "round_cost": costs,
        "round_cost_fit": fit,
        "measured": rows,
        "model": model,
    }
    save_report(args.out, report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
