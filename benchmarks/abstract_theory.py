"""LeftMove: the exact probability that NMCS finds the best score, beside measured frequencies.

Cazenave (2009), section 4.2: a dynamic programme gives the probability that a level-l search
without memorisation of the best sequence finds the best score of a depth-d LeftMove tree. This
script prints it beside the frequency measured by running NMCS many times, without and with
memorisation (the paper: level 3 at depth 9, 0.41 without against 0.80 with).

Usage:
    .venv/bin/python benchmarks/abstract_theory.py [--runs 10000] [--depths 5 9 15] [--levels 1 2 3]
"""

from __future__ import annotations

import argparse
import math
import time

import gymnasium as gym

import mc_envs  # noqa: F401  (registers the ids)
from mc_envs.agents import NMCS
from mc_envs.games.abstract import best_score_probability


def measure(depth: int, level: int, memorize: bool, runs: int) -> tuple[float, float]:
    """(frequency of the best score over ``runs`` complete searches, seconds)."""
    env = gym.make("mc_envs/LeftMove-v0", depth=depth)
    env.reset()
    start = time.perf_counter()
    hits = sum(
        NMCS(level=level, seed=seed, memorize=memorize).search(env).score == depth
        for seed in range(runs)
    )
    return hits / runs, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="searches per entry")
    parser.add_argument("--depths", type=int, nargs="+", default=[5, 9, 15])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    print(f"LeftMove, P(best score), {args.runs} searches per measured entry")
    header = ("depth", 5), ("level", 5), ("theory", 8), ("no memo", 8), ("(z)", 6), ("memo", 8)
    print(" ".join(f"{name:>{width}}" for name, width in header), f"{'secs':>6}")
    for depth in args.depths:
        for level in args.levels:
            p = best_score_probability(depth, level)
            without, t1 = measure(depth, level, False, args.runs)
            with_memo, t2 = measure(depth, level, True, args.runs)
            sigma = math.sqrt(max(p * (1 - p), 1e-12) / args.runs)
            z = (without - p) / sigma
            print(
                f"{depth:5d} {level:5d} {p:8.4f} {without:8.4f} {z:6.2f} {with_memo:8.4f} "
                f"{t1 + t2:6.1f}"
            )
    print("z: (measured without memorisation - theory) / standard error; |z| < 3 expected.")


if __name__ == "__main__":
    main()
