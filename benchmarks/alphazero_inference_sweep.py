"""PUCT's inference settings for a trained model, chosen on held-out positions.

    python benchmarks/connect4_positions.py --count 300 --seed 1 \
        --out benchmarks/data/connect4_positions_val.json
    python benchmarks/alphazero_inference_sweep.py --out benchmarks/results/alphazero_inference_sweep.json

The value-keeping share (``benchmarks/connect4_value_moves.py``) of PUCT + model at ``--sims``
simulations, on the informative positions of a *validation* file (seed 1; the benchmark's own
positions are seed 0 and are not read here), for every combination of the leaf batch
(``batch_size``: 1 is one leaf per network call, no virtual loss), the exploration constant ``c``
and the first-play value ``fpu``. The settings are then fixed for the benchmark's positions and
the matches. Nothing is asserted: it prints a table and writes the report.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mc_envs  # noqa: E402, F401
from benchmarks.connect4_value_moves import model_moves, summary  # noqa: E402
from benchmarks.reporting import provenance, save_report  # noqa: E402
from mc_envs.agents.alphazero import SHIPPED, Model  # noqa: E402

VALIDATION = Path(__file__).resolve().parent / "data" / "connect4_positions_val.json"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", default=str(VALIDATION))
    parser.add_argument("--model", help="an .npz model (default: the shipped one)")
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--batch", type=int, nargs="+", default=[8, 1])
    parser.add_argument("--c", type=float, nargs="+", default=[1.0, 1.5, 2.0, 3.0])
    parser.add_argument("--fpu", type=float, nargs="+", default=[0.5, 0.0])
    parser.add_argument("--out", default="benchmarks/out/alphazero_inference_sweep.json")
    args = parser.parse_args(argv)
    positions = json.loads(Path(args.positions).read_text())["positions"]
    informative = [p for p in positions if p["informative"]]
    model = Model.load(args.model or str(resources.files("mc_envs.agents").joinpath(SHIPPED)))
    rows = []
    for batch, c, fpu in itertools.product(args.batch, args.c, args.fpu):
        start = time.perf_counter()
        moves = model_moves(model, informative, args.sims, batch_size=batch, c=c, fpu=fpu)
        row = {"batch_size": batch, "c": c, "fpu": fpu, **summary(informative, moves)}
        row.update(seconds=round(time.perf_counter() - start, 1), moves=moves)
        rows.append(row)
        lo, hi = row["interval95"]
        print(
            f"batch {batch}  c {c:<4}  fpu {fpu:<4}  {row['preserved']:>3}/{row['positions']}"
            f"  {row['share']:.3f} ({lo:.3f}-{hi:.3f})  {row['seconds']} s",
            flush=True,
        )
    report = {
        **provenance(argv),
        "positions_file": args.positions,
        "model": args.model or SHIPPED,
        "sims": args.sims,
        "rows": rows,
    }
    save_report(Path(args.out), report)
    print(f"report: {args.out}")
    return report


if __name__ == "__main__":
    main()
