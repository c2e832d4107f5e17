"""16x16 Sudoku at 66% empty: NMCS levels 0, 1, 2 and depth-first forward checking.

Cazenave (2009), table 2: 100 problems with 66% of empty cells, solved by Forward Checking (a
depth-first search, smallest domain first, values in random order), Iterative Sampling (NMCS level
0: playouts until one solves the grid) and NMCS of levels 1 and 2 restarted until the grid is
solved. Paper (2009 hardware): FC > 446,771 s (21 unsolved at 20,000 s each), IS 61.83 s,
level 1 1.34 s, level 2 1.64 s; without memorisation level 1 7.00 s, level 2 4.87 s.

Puzzles are ``gymnasium.make("mc_envs/Sudoku-v0", size=16)`` reset with seeds 0..N-1. Every
solution found is replayed on the env and checked.

Usage:
    .venv/bin/python benchmarks/sudoku_bench.py [--puzzles 100] [--time-limit 60]
        [--node-limit 1000000] [--methods dfs is nmcs1 nmcs2 nmcs1-nomemo nmcs2-nomemo]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import mc_envs  # noqa: F401  (registers the ids)
from mc_envs.agents import NMCS
from mc_envs.games import sudoku as S
from mc_envs.games.sudoku_solve import dfs
from mc_envs.rng import rng_state

METHODS = {
    "dfs": None,
    "is": (0, True),
    "nmcs1": (1, True),
    "nmcs2": (2, True),
    "nmcs1-nomemo": (1, False),
    "nmcs2-nomemo": (2, False),
}


def run_nmcs(env: gym.Env, level: int, memorize: bool, seed: int, limit: float) -> tuple:
    """(solved, seconds, playouts) of NMCS restarted until solved or ``limit`` seconds."""
    result = NMCS(level=level, seed=seed, memorize=memorize).search(env, time_limit=limit)
    solved = result.score == 256.0
    if solved:
        base = env.unwrapped
        snap = base.clone_state()
        for a in result.actions:
            base.step(a)
        assert S.is_valid_solution(base.grid), "invalid solution"
        base.restore_state(snap)
    return solved, result.seconds, result.playouts


def run_dfs(env: gym.Env, seed: int, node_limit: int) -> tuple:
    """(solved, seconds, nodes) of randomized depth-first forward checking."""
    state = env.unwrapped.state_view.copy()
    out = np.zeros(256, dtype=np.int64)
    start = time.perf_counter()
    found, nodes, _ = dfs(state, rng_state(seed), True, 1, node_limit, out)
    seconds = time.perf_counter() - start
    if found:
        assert S.is_valid_solution(out), "invalid solution"
    return bool(found), seconds, int(nodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puzzles", type=int, default=100)
    parser.add_argument("--empty", type=float, default=0.66, help="empty fraction")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per puzzle (NMCS)")
    parser.add_argument("--node-limit", type=int, default=1_000_000, help="DFS nodes per puzzle")
    parser.add_argument("--methods", nargs="+", default=["dfs", "is", "nmcs1", "nmcs2"])
    args = parser.parse_args()
    env = gym.make("mc_envs/Sudoku-v0", size=16, empty_fraction=args.empty)
    # Warm up (compile) every method on one puzzle first, so times are of searching only.
    env.reset(seed=10**6)
    for name in args.methods:
        if METHODS[name] is None:
            run_dfs(env, 0, 1000)
        else:
            run_nmcs(env, *METHODS[name], seed=0, limit=5.0)
    print(f"{args.puzzles} generated 16x16 puzzles, {args.empty:.0%} empty")
    print(
        f"{'method':>13} {'solved':>7} {'total s':>9} {'mean s':>8} {'median s':>9} "
        f"{'max s':>8} {'work':>12}"
    )
    for name in args.methods:
        times, work, solved = [], 0, 0
        for i in range(args.puzzles):
            env.reset(seed=i)
            if METHODS[name] is None:
                ok, seconds, units = run_dfs(env, i, args.node_limit)
            else:
                ok, seconds, units = run_nmcs(env, *METHODS[name], seed=i, limit=args.time_limit)
            solved += ok
            times.append(seconds)
            work += units
        unit = "nodes" if METHODS[name] is None else "playouts"
        print(
            f"{name:>13} {solved:>3}/{args.puzzles:<3} {sum(times):9.2f} "
            f"{statistics.mean(times):8.3f} {statistics.median(times):9.3f} {max(times):8.2f} "
            f"{work:>12,} {unit}"
        )
    print(
        f"Unsolved puzzles count their full budget ({args.time_limit:g} s for NMCS, "
        f"{args.node_limit:,} nodes for DFS)."
    )


if __name__ == "__main__":
    main()
