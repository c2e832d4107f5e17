"""AlphaZero self-play, one game at a time against many games searched together, same network.

Run: ``python benchmarks/selfplay_bench.py [--sims 50] [--games 64] [--parallel 64]``. With the
shipped Connect Four model (:func:`mc_envs.agents.alphazero.shipped_model`) and the same simulations a
move, it times

- one game at a time: :func:`mc_envs.agents.alphazero.self_play` (PUCT on one env, leaves evaluated in
  batches of 8), over ``--single-games`` games;
- together: :func:`mc_envs.agents.alphazero.self_play_batch`, ``--games`` games, ``--parallel`` at a time
  in a compiled vector env, one network call a simulation for all of them;

and prints positions/s (training positions recorded per second of wall time) and their ratio,
written with the machine and the command to ``benchmarks/results/selfplay_bench.json``. One
short warm-up of each compiles the searches first. Nothing is asserted. OpenBLAS is held to one
thread, as in ``puct_batch_bench.py`` (whose docstring says why).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.reporting import provenance, save_report  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "selfplay_bench.json"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=50, help="simulations a move (training's)")
    parser.add_argument("--single-games", type=int, default=4)
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--parallel", type=int, default=64)
    parser.add_argument("--note", default="", help="e.g. how busy the machine was")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    from mc_envs.agents.alphazero import self_play, self_play_batch, shipped_model

    model = shipped_model()
    self_play(model, sims=4, seed=0)  # compiles
    self_play_batch(model, games=2, sims=4, seed=0, parallel=2)
    report = {**provenance(argv), "note": args.note, "env_id": model.env_id}
    report["settings"] = {"sims": args.sims, "openblas_threads": os.environ["OPENBLAS_NUM_THREADS"]}

    start, positions = time.perf_counter(), 0
    for g in range(args.single_games):
        positions += len(self_play(model, sims=args.sims, seed=1 + g)[0])
    seconds = time.perf_counter() - start
    one = {"games": args.single_games, "positions": positions, "seconds": round(seconds, 2)}
    one["positions_per_s"] = round(positions / seconds, 1)
    report["one_at_a_time"] = one
    print(
        f"one game at a time: {one['positions_per_s']} positions/s ({positions} in {seconds:.1f} s)"
    )

    start = time.perf_counter()
    obs = self_play_batch(model, games=args.games, sims=args.sims, seed=1, parallel=args.parallel)[
        0
    ]
    seconds = time.perf_counter() - start
    together = {"games": args.games, "parallel": args.parallel, "positions": len(obs)}
    together.update(seconds=round(seconds, 2), positions_per_s=round(len(obs) / seconds, 1))
    together["ratio"] = round(together["positions_per_s"] / one["positions_per_s"], 2)
    report["together"] = together
    print(
        f"{args.parallel} games together: {together['positions_per_s']} positions/s "
        f"({len(obs)} in {seconds:.1f} s), x{together['ratio']}"
    )
    save_report(args.out, report)
    return report


if __name__ == "__main__":
    main()
