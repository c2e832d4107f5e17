"""Connect Four test positions with the exact value of every move, for move-quality benchmarks.

    python benchmarks/connect4_positions.py --count 200 --seed 0 \
        --out benchmarks/data/connect4_positions.json

A position is the moves of a game from the empty board, ``plies`` of them (drawn uniformly from
``--min-plies..--max-plies``), each move drawn from the Connect Four heuristic prior of the rules
(centre columns weigh more, a win 100 times more, a block of the opponent's win 50 times more):
random but sane play. Finished positions, positions with one legal move and repeats are skipped.
Every legal move of a position is then solved exactly (``mc_envs.games.connect_four_solve``):
+1 the mover wins after it, 0 draw, -1 loss, with perfect play. A position is ``informative``
when its moves do not all have the same value. The file records how it was made (command, seed,
solver time).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.reporting import provenance  # noqa: E402
from mc_envs.games import connect_four as c4  # noqa: E402
from mc_envs.games.connect_four_solve import Solver  # noqa: E402
from mc_envs.records import write_atomic  # noqa: E402

FORMAT = "mc-envs/connect4-positions"


def state_of(moves: list[int]) -> np.ndarray:
    """The kernel state after ``moves`` (columns) from the empty board.

    Raises:
        ValueError: a move into a full column or after the end of the game.
    """
    state = c4.new_state()
    for i, column in enumerate(moves):
        if state[c4.OVER] or not 0 <= column < c4.COLS or state[c4.HEIGHT + column] >= c4.ROWS:
            raise ValueError(f"move {i} ({column}) of {moves} is not legal")
        c4.play(state, column, None)
    return state


def sane_game(rng: np.random.Generator, plies: int) -> list[int] | None:
    """``plies`` moves drawn from the heuristic prior; None when the game ends first."""
    state = c4.new_state()
    actions = np.zeros(c4.COLS, dtype=np.int64)
    prior = np.zeros(c4.COLS)
    moves = []
    for _ in range(plies):
        n = c4.legal(state, None, actions)
        if n == 0:
            return None
        c4.heuristic_prior(state, actions, n, prior)
        column = int(actions[rng.choice(n, p=prior[:n])])
        c4.play(state, column, None)
        moves.append(column)
    return None if state[c4.OVER] else moves


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-plies", type=int, default=8)
    parser.add_argument("--max-plies", type=int, default=30)
    parser.add_argument("--max-nodes", type=int, default=2_000_000_000, help="a move's budget")
    parser.add_argument("--table-bits", type=int, default=24)
    parser.add_argument("--out", default="benchmarks/data/connect4_positions.json")
    args = parser.parse_args(argv)
    if not 1 <= args.min_plies <= args.max_plies <= 40:
        parser.error("need 1 <= --min-plies <= --max-plies <= 40")
    report = {
        "format": FORMAT,
        "version": 1,
        "provenance": provenance(argv),
        "seed": args.seed,
        "plies": [args.min_plies, args.max_plies],
        "values": "per legal column: +1 the mover wins after it, 0 draw, -1 loss (perfect play)",
        "positions": [],
    }
    rng = np.random.default_rng(args.seed)
    solver = Solver(table_bits=args.table_bits, max_nodes=args.max_nodes)
    seen: set[tuple[int, ...]] = set()
    start = time.perf_counter()
    attempts = 0
    while len(report["positions"]) < args.count:
        attempts += 1
        if attempts > 100 * args.count:
            raise SystemExit(f"only {len(report['positions'])} positions in {attempts} games")
        moves = sane_game(rng, int(rng.integers(args.min_plies, args.max_plies + 1)))
        if moves is None:
            continue
        state = state_of(moves)
        key = (int(state[c4.STONES0]), int(state[c4.STONES1]))
        if key in seen or c4.legal(state, None, np.zeros(c4.COLS, np.int64)) < 2:
            continue
        seen.add(key)
        t0 = time.perf_counter()
        values = solver.move_values(state)
        entry = {
            "moves": moves,
            "values": {str(c): v for c, v in values.items()},
            "value": max(values.values()),
            "informative": len(set(values.values())) > 1,
            "nodes": solver.nodes,
            "seconds": round(time.perf_counter() - t0, 3),
        }
        report["positions"].append(entry)
        print(
            f"{len(report['positions']):4d} plies {len(moves):2d} value {entry['value']:+d} "
            f"{entry['nodes']:>12,} nodes {entry['seconds']:8.2f} s",
            flush=True,
        )
    positions = report["positions"]
    report["solver_seconds"] = round(sum(p["seconds"] for p in positions), 1)
    report["seconds"] = round(time.perf_counter() - start, 1)
    report["informative"] = sum(p["informative"] for p in positions)
    write_atomic(Path(args.out), json.dumps(report, indent=1))
    print(
        f"{len(positions)} positions ({report['informative']} informative), solver "
        f"{report['solver_seconds']} s, written to {args.out}"
    )


if __name__ == "__main__":
    main()
