"""Morpion Solitaire 5D and 5T: random playouts per second, and NMCS score distributions.

Playouts: uniformly random games from the standard cross, run by a compiled loop (copy the start
state, play out) so the figure is the kernel's, as a compiled search sees it. Both wall-clock and
CPU-time rates are printed (CPU time is steadier on a shared machine). Reference on this machine
class: a C++ NRPA program reaches about 92,000 5D playouts/s on one core.

NMCS (Cazenave, IJCAI 2009) of levels 1 and 2, with memorisation, one complete search per seed
from the cross; every result is replayed on the env and checked. Paper: on 5D, level-2 NMCS peaks
near 66 and a level-4 run found 80. Records: 5D 82, 5T 178 (Rosin, NRPA).

Usage:
    .venv/bin/python benchmarks/morpion_bench.py [--playouts 100000] [--seeds 10]
        [--levels 1 2] [--variants 5D 5T]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import mc_envs  # noqa: F401  (registers the ids)
from mc_envs._numba import njit
from mc_envs.games import morpion as rules
from mc_envs.rng import rng_state


@njit(cache=True, nogil=True)
def _many_playouts(start, count, rng, ws, seq):
    state = start.copy()
    total = 0
    best = 0
    for _ in range(count):
        state[:] = start
        n = rules.playout(state, 0, rng, ws, seq, 0)
        total += n
        if n > best:
            best = n
    return total, best


def bench_playouts(variant: str, count: int) -> None:
    """Prints random playouts/s from the cross, with the mean and best score."""
    start = rules.initial_state(variant)
    ws = rules.workspace(start)
    seq = np.zeros(rules.max_moves(variant) + 1, dtype=np.int64)
    _many_playouts(start, 10, rng_state(0), ws, seq)  # compile / load from cache
    rng = rng_state(1)
    wall, cpu = time.perf_counter(), time.process_time()
    total, best = _many_playouts(start, count, rng, ws, seq)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"{variant} random playouts: {count / wall:,.0f}/s wall, {count / cpu:,.0f}/s CPU "
        f"({count:,} playouts), mean score {total / count:.2f}, best {best}"
    )


def bench_nmcs(variant: str, level: int, seeds: int) -> None:
    """Prints the score distribution of complete NMCS searches over seeds 0..seeds-1."""
    from mc_envs.agents import NMCS

    env = gym.make(f"mc_envs/MorpionSolitaire{variant}-v0")
    env.reset(seed=0)
    NMCS(level=level, seed=10**6).search(env, playouts=1)  # compile / load from cache
    scores, seconds, playouts = [], 0.0, 0
    for seed in range(seeds):
        result = NMCS(level=level, seed=seed).search(env)
        base = env.unwrapped
        snap = base.clone_state()
        for a in result.actions:
            base.step(a)
        assert base.score == result.score and len(base.legal_actions()) == 0, "bad replay"
        base.restore_state(snap)
        scores.append(result.score)
        seconds += result.seconds
        playouts += result.playouts
    print(
        f"{variant} NMCS level {level} over {seeds} seeds: mean {statistics.mean(scores):.1f}, "
        f"best {max(scores):g}, worst {min(scores):g}, {seconds / seeds:.1f} s/search, "
        f"{playouts / max(seconds, 1e-9):,.0f} playouts/s; scores {sorted(scores)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playouts", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--levels", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--variants", nargs="+", default=["5D", "5T"])
    args = parser.parse_args()
    for variant in args.variants:
        bench_playouts(variant, args.playouts)
    for variant in args.variants:
        for level in args.levels:
            bench_nmcs(variant, level, args.seeds)
    print("paper (Cazenave 2009), 5D: level-2 NMCS with memorisation peaks near 66; level 4: 80")
    print("records: 5D 82, 5T 178 (Rosin 2010-2011, NRPA)")


if __name__ == "__main__":
    main()
