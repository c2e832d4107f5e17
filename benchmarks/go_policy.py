"""Go's playout policies side by side: ``"random"``, ``"eye"`` and ``"mogo"`` on one board.

Run: ``python benchmarks/go_policy.py [--size 9] [--seconds S] [--rounds R] [--uct-seconds T]
[--out FILE]``. In one process, after a warm-up playout of each policy (compiled before any
timing), every round measures each policy in turn for ``S`` seconds, so that the machine's drift
falls on all alike: compiled playouts from the empty board (``kernel.playout``, a copy of the
board restored before each), counting playouts, moves, and the games ended by two passes rather
than by the move cap. Then a UCT search of ``T`` seconds from the empty board with each policy
(``UCT(policy=..., seed=1, reuse=False)``, the compiled path), iterations/s.

Printed and written to ``--out`` (JSON, atomically): the median over the rounds of each figure,
the ratios of each policy's playouts/s and UCT iterations/s to ``"random"``'s, the load average
(1, 5, 15 minutes) at the start and the end, and the command. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.reporting import provenance, save_report  # noqa: E402

POLICIES = ("random", "eye", "mogo")
OUT = ROOT / "benchmarks" / "results" / "go_policy.json"


def _playouts(kernel, root, code: int, seconds: float, rng) -> dict:
    import numpy as np

    state, ws = root.copy(), kernel.workspace(root)
    seq = np.zeros(kernel.max_moves + 1, np.int64)
    games = moves = passed = 0
    start = time.perf_counter()
    while games == 0 or time.perf_counter() - start < seconds:
        state[:] = root
        moves += kernel.playout(state, code, rng, ws, seq, 0)
        passed += not kernel.truncated(state)
        games += 1
    wall = time.perf_counter() - start
    return {"playouts_per_s": games / wall, "moves_per_s": moves / wall, "games": games} | {
        "moves_per_playout": moves / games,
        "ended_by_passes": passed / games,
    }


def _uct(env, policy: str, seconds: float) -> float:
    from mc_envs.agents import UCT

    result = UCT(policy=policy, seed=1, reuse=False).search(env, time_limit=seconds)
    return result.iterations / result.seconds


def measure(size: int, seconds: float, rounds: int, uct_seconds: float) -> dict:
    """The figures of every policy (module docstring), medians over ``rounds``."""
    import gymnasium as gym
    import numpy as np

    import mc_envs  # noqa: F401

    env = gym.make("mc_envs/Go-v0", size=size).unwrapped
    env.reset(seed=0)
    kernel, root = env.kernel, env.state_view.copy()
    rng = np.array([12345], dtype=np.uint64)
    for name in POLICIES:  # compile before timing
        _playouts(kernel, root, kernel.policies[name], 0.0, rng)
        _uct(env, name, 0.05)
    runs: dict[str, list[dict]] = {name: [] for name in POLICIES}
    for _ in range(rounds):
        for name in POLICIES:
            runs[name].append(_playouts(kernel, root, kernel.policies[name], seconds, rng))
    out = {}
    for name in POLICIES:
        out[name] = {k: statistics.median(r[k] for r in runs[name]) for k in runs[name][0]}
        out[name]["uct_iterations_per_s"] = _uct(env, name, uct_seconds)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Runs the benchmark; returns the report (also written to ``--out``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seconds", type=float, default=3.0, help="per policy and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--uct-seconds", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    report = provenance(argv) | {"load_average": {"start": list(os.getloadavg())}}
    figures = measure(args.size, args.seconds, args.rounds, args.uct_seconds)
    report["load_average"]["end"] = list(os.getloadavg())
    base = figures["random"]
    report["size"], report["policies"] = args.size, figures
    report["ratios"] = {
        f"{name}_over_random": {
            "playouts_per_s": figures[name]["playouts_per_s"] / base["playouts_per_s"],
            "moves_per_s": figures[name]["moves_per_s"] / base["moves_per_s"],
            "uct_iterations_per_s": figures[name]["uct_iterations_per_s"]
            / base["uct_iterations_per_s"],
        }
        for name in POLICIES[1:]
    }
    save_report(args.out, report)
    print(f"Go {args.size}x{args.size}, load average {report['load_average']}")
    print(
        f"{'policy':8} {'playouts/s':>11} {'moves/s':>10} {'moves':>6} {'passed':>7} {'UCT it/s':>9}"
    )
    for name, f in figures.items():
        print(
            f"{name:8} {f['playouts_per_s']:11.0f} {f['moves_per_s']:10.0f} "
            f"{f['moves_per_playout']:6.1f} {f['ended_by_passes']:7.2f} "
            f"{f['uct_iterations_per_s']:9.0f}"
        )
    for key, r in report["ratios"].items():
        print(f"{key}: " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()))
    return report


if __name__ == "__main__":
    main()
