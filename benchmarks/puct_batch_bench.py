"""Batched PUCT against a loop of single-game PUCT searches, with the same network and simulations.

Run: ``python benchmarks/puct_batch_bench.py [--sims 100] [--sizes 1 16 64 256]``. On Connect Four
positions (a few random moves from the start, one per game), with a random-weights two-layer MLP
evaluator in numpy (:func:`mc_envs.agents.alphazero.init_model`, the shipped model's shape):

- batched: ``PUCT(evaluator=net).search_batch(vector_env)`` over M sub-envs, positions/s = M /
  the search's wall time (the best of ``--repeats``), and the share of it spent in the network;
- single: ``PUCT(evaluator=net, batch_size=B).search(env)`` on ``--single-positions`` positions
  one after another (B = 8, today's self-play, and B = 1), positions/s = positions / wall time.

The ratios batched / single (B = 8) are printed and written with the figures, the machine and the
command to ``benchmarks/results/puct_batch_bench.json``. Compilation is out of the timings (one
warm-up search each). Nothing is asserted.

BLAS threads: OpenBLAS is limited to one thread (``OPENBLAS_NUM_THREADS=1``, set here unless the
caller set it). With its default threads, on this 2-core machine under load, one call of the MLP
on 64 rows took 31 ms instead of 0.15 ms (from 64 rows OpenBLAS splits the product over threads,
which then wait for busy cores); the single-game search's batches of 8 rows stay below that size.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported: see the docstring

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.reporting import provenance, save_report  # noqa: E402

ENV_ID = "mc_envs/ConnectFour-v0"
OUT = ROOT / "benchmarks" / "results" / "puct_batch_bench.json"


def positions(count: int, seed: int) -> list:
    """``count`` Connect Four states, each 2 to 10 random moves from the start, none finished."""
    import gymnasium as gym

    import mc_envs  # noqa: F401

    rng = np.random.default_rng(seed)
    env = gym.make(ENV_ID).unwrapped
    out = []
    while len(out) < count:
        env.reset(seed=0)
        for _ in range(int(rng.integers(2, 11))):
            env.step(int(rng.choice(env.legal_actions())))
            if len(env.legal_actions()) == 0:
                break
        if len(env.legal_actions()):
            out.append(env.clone_state())
    return out


class Timed:
    """The evaluator, counting the seconds spent in it."""

    def __init__(self, net) -> None:
        self.net, self.seconds = net, 0.0

    def __call__(self, observations: np.ndarray, masks: np.ndarray):
        start = time.perf_counter()
        out = self.net(observations, masks)
        self.seconds += time.perf_counter() - start
        return out


def batched(net, states: list, sims: int, repeats: int) -> dict:
    import gymnasium as gym

    from mc_envs.agents import PUCT

    venv = gym.make_vec(ENV_ID, num_envs=len(states), vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    venv.restore_state(states)
    best = None
    for _ in range(repeats):
        timed = Timed(net)
        agent = PUCT(iterations=sims, evaluator=timed, form="alphazero", c=1.5)
        result = agent.search_batch(venv)
        if best is None or result.seconds < best[0]:
            best = (result.seconds, timed.seconds)
    seconds, in_net = best
    return {
        "games": len(states),
        "seconds": round(seconds, 4),
        "positions_per_s": round(len(states) / seconds, 2),
        "network_share": round(in_net / seconds, 3),
    }


def single(net, states: list, sims: int, batch_size: int) -> dict:
    import gymnasium as gym

    from mc_envs.agents import PUCT

    env = gym.make(ENV_ID).unwrapped
    env.reset(seed=0)
    timed = Timed(net)
    start = time.perf_counter()
    for state in states:
        env.restore_state(state)
        agent = PUCT(
            iterations=sims, evaluator=timed, batch_size=batch_size, form="alphazero", c=1.5
        )
        agent.search(env)
    seconds = time.perf_counter() - start
    return {
        "batch_size": batch_size,
        "games": len(states),
        "seconds": round(seconds, 4),
        "positions_per_s": round(len(states) / seconds, 2),
        "network_share": round(timed.seconds / seconds, 3),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument("--single-positions", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--note", default="", help="e.g. how busy the machine was")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    report = {**provenance(argv), "note": args.note}
    report["openblas_threads"] = os.environ["OPENBLAS_NUM_THREADS"]
    report["settings"] = {"sims": args.sims, "hidden": args.hidden, "form": "alphazero", "c": 1.5}

    from mc_envs.agents.alphazero import init_model

    net = init_model(ENV_ID, 2 * 6 * 7, 7, hidden=args.hidden, seed=args.seed)
    states = positions(max(max(args.sizes), args.single_positions), args.seed)
    batched(net, states[:2], 2, 1)  # compiles
    single(net, states[:1], 2, 8)

    report["single"] = [single(net, states[: args.single_positions], args.sims, b) for b in (8, 1)]
    baseline = report["single"][0]["positions_per_s"]
    print(
        f"single-game PUCT, {args.sims} sims: {baseline} positions/s (batch_size=8), "
        f"{report['single'][1]['positions_per_s']} (batch_size=1)"
    )
    report["batched"] = []
    for m in args.sizes:
        row = batched(net, states[:m], args.sims, args.repeats)
        row["ratio_to_single"] = round(row["positions_per_s"] / baseline, 2)
        report["batched"].append(row)
        print(
            f"batched M={m:4d}: {row['positions_per_s']:9.1f} positions/s, "
            f"x{row['ratio_to_single']} the single-game loop, "
            f"network {100 * row['network_share']:.0f}% of the time"
        )
        save_report(args.out, report)
    return report


if __name__ == "__main__":
    main()
