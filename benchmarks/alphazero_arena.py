"""The shipped AlphaZero Connect Four model against UCT: W/D/L over both colours, 95% intervals.

    python benchmarks/alphazero_arena.py --games 200 --out benchmarks/results/alphazero_arena.json
    python benchmarks/alphazero_arena.py --resume --out benchmarks/results/alphazero_arena.json

Opponents: UCT with 200 iterations and with 2,000 (random playouts); ours: PUCT with the model as
evaluator, 200 simulations (AlphaZero's form). Game ``g`` gives the model the first move when ``g``
is even; every agent is seeded by the game number, so a run is reproducible. The report is written
after every game (``--resume`` plays only the games not in it). Nothing is asserted: it prints.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mc_envs  # noqa: E402, F401
from benchmarks.reporting import provenance  # noqa: E402
from mc_envs.agents import UCT  # noqa: E402
from mc_envs.agents.alphazero import Model, alphazero_agent  # noqa: E402
from mc_envs.cli.two_player import play_game, wilson_interval  # noqa: E402
from mc_envs.records import write_atomic  # noqa: E402

DEFAULT_MODEL = "data/connect4_alphazero.npz"


def summary(results: list[float]) -> dict:
    """W/D/L from the model's side and the Wilson interval of its score (a draw counts half)."""
    w = sum(r > 0 for r in results)
    d = sum(r == 0 for r in results)
    n = len(results)
    lo, hi = wilson_interval(w + 0.5 * d, n)
    return {
        "games": n,
        "wins": w,
        "draws": d,
        "losses": n - w - d,
        "score": (w + 0.5 * d) / max(n, 1),
        "interval95": [lo, hi],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="an .npz model (default: the shipped one)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--opponents", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--out", default="benchmarks/out/alphazero_arena.json")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    path = args.model or str(resources.files("mc_envs.agents").joinpath(DEFAULT_MODEL))
    model = Model.load(path)
    out = Path(args.out)
    report = (
        json.loads(out.read_text())
        if args.resume and out.exists()
        else {"provenance": provenance(argv), "model": path, "sims": args.sims, "matches": {}}
    )
    env = gym.make("mc_envs/ConnectFour-v0").unwrapped
    for iters in args.opponents:
        results = report["matches"].setdefault(f"uct{iters}", [])
        start = time.perf_counter()
        for g in range(len(results), args.games):
            ours = alphazero_agent(model, sims=args.sims, seed=g)
            theirs = UCT(iterations=iters, seed=g)
            first, second = (ours, theirs) if g % 2 == 0 else (theirs, ours)
            r0 = play_game(env, first, second, seed=g)
            results.append(r0 if g % 2 == 0 else -r0)
            write_atomic(out, json.dumps(report, indent=1))
        s = summary(results)
        print(
            f"PUCT {args.sims} sims + model vs UCT {iters}: {s['wins']} W / {s['draws']} D / "
            f"{s['losses']} L over {s['games']} games, score {s['score']:.3f} "
            f"(95% {s['interval95'][0]:.3f}-{s['interval95'][1]:.3f}), {time.perf_counter() - start:.0f} s"
        )
        report.setdefault("summary", {})[f"uct{iters}"] = s
        write_atomic(out, json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
