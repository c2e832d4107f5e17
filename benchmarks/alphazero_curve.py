"""An AlphaZero training run with its curve: the network's score against UCT as it trains.

    python benchmarks/alphazero_curve.py --minutes 60 --model runs/c4.npz
    python benchmarks/alphazero_curve.py --minutes 60 --model runs/c4.npz --resume   # next session

Trains with :func:`mc_envs.agents.alphazero.train` (the run saved beside ``--model`` after every iteration,
``--resume`` continuing it exactly) and, after every ``--eval-every``-th iteration, plays
``--eval-games`` games of PUCT (``--eval-sims`` simulations, the network as evaluator) against
UCT (``--eval-uct`` iterations, random playouts), each side first in half of them, every agent
seeded by the game's number. Score = (wins + draws / 2) / games, with its 95% Wilson interval.
The history (losses, positions, training seconds, scores) goes to ``--out`` (JSON) and the curve,
score against cumulative training time, beside it as a PNG. With ``--eval-positions``, every
evaluation also measures the share of value-keeping moves of PUCT (``--eval-sims``) on the
informative solved positions of ``benchmarks/data/connect4_positions.json``
(``benchmarks/connect4_value_moves.py``; monitoring only: nothing is chosen by it). Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.reporting import provenance  # noqa: E402
from mc_envs.records import write_atomic  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "alphazero_curve.json"


def scorer(env_id: str, games: int, uct: int, sims: int, positions: bool = False):
    """``evaluate(model, iteration)`` for :func:`mc_envs.agents.alphazero.train`: the model's score (and
    its value-keeping share with ``positions``)."""
    import gymnasium as gym

    from mc_envs.agents import UCT
    from mc_envs.agents.alphazero import alphazero_agent
    from mc_envs.cli.two_player import play_game, wilson_interval

    env = gym.make(env_id).unwrapped
    solved = solved_positions() if positions else []

    def evaluate(model, iteration: int) -> dict:
        points = 0.0
        for g in range(games):
            ours = alphazero_agent(model, sims=sims, seed=g)
            theirs = UCT(iterations=uct, seed=g)
            first, second = (ours, theirs) if g % 2 == 0 else (theirs, ours)
            r0 = play_game(env, first, second, seed=g)
            points += (1.0 + (r0 if g % 2 == 0 else -r0)) / 2
        lo, hi = wilson_interval(points, games)
        row = {"score_vs_uct": points / games, "interval95": [lo, hi], "eval_games": games}
        if positions:
            row["value_keeping"] = value_keeping(model, sims, solved)
        return row

    return evaluate


def solved_positions() -> list[dict]:
    """The informative solved positions of ``benchmarks/data/connect4_positions.json``."""
    from benchmarks.connect4_value_moves import POSITIONS

    return [p for p in json.loads(POSITIONS.read_text())["positions"] if p["informative"]]


def value_keeping(model, sims: int, chosen: list[dict]) -> float:
    """The share of value-keeping moves of PUCT + ``model`` on the solved positions ``chosen``."""
    from benchmarks.connect4_value_moves import model_moves

    moves = model_moves(model, chosen, sims)
    return sum(p["values"][str(m)] == p["value"] for p, m in zip(chosen, moves)) / len(chosen)


def plot(history: list[dict], uct: int, path: Path) -> None:
    """The score against UCT by cumulative training minutes, with the intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes, scores, lows, highs, total = [], [], [], [], 0.0
    kept = []  # (minutes, value-keeping share)
    for row in history:
        total += row["seconds"] / 60
        if "value_keeping" in row:
            kept.append((total, row["value_keeping"]))
        if "score_vs_uct" in row:
            minutes.append(total)
            scores.append(row["score_vs_uct"])
            lows.append(row["score_vs_uct"] - row["interval95"][0])
            highs.append(row["interval95"][1] - row["score_vs_uct"])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(minutes, scores, yerr=[lows, highs], marker="o", capsize=3, label="score")
    if kept:
        ax.plot(*zip(*kept, strict=True), marker="s", label="value-keeping (informative)")
        ax.legend(loc="lower right")
    ax.axhline(0.5, color="grey", lw=0.8)
    ax.set(xlabel="training minutes", ylabel=f"score against UCT {uct}", ylim=(0, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from mc_envs.agents.alphazero import TRAINING, add_training_arguments, train

    add_training_arguments(parser)
    parser.set_defaults(games=64)
    parser.add_argument("--model", required=True, help="the model file (the run beside it)")
    parser.add_argument("--eval-every", type=int, default=5)
    parser.add_argument("--eval-games", type=int, default=20)
    parser.add_argument("--eval-uct", type=int, default=200)
    parser.add_argument("--eval-sims", type=int, default=50)
    parser.add_argument("--eval-positions", action="store_true", help="value-keeping share too")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    kwargs = {k: getattr(args, k) for k in TRAINING}
    evaluate = scorer(args.env, args.eval_games, args.eval_uct, args.eval_sims, args.eval_positions)
    report = {**provenance(argv), "settings": {k: v for k, v in vars(args).items() if k != "out"}}
    report["settings"]["model"] = str(args.model)
    try:
        _, history = train(
            kwargs.pop("env"),
            out=str(args.model),
            log=lambda line: print(line, flush=True),
            evaluate=evaluate,
            evaluate_every=args.eval_every,
            **kwargs,
        )
    except (ValueError, ImportError) as exc:
        print(f"alphazero_curve: {exc}", file=sys.stderr)
        return 2
    report["history"] = history  # the resumed run's earlier iterations included
    report["training_minutes"] = sum(row["seconds"] for row in history) / 60
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(report, indent=1))
    plot(history, args.eval_uct, args.out.with_suffix(".png"))
    print(f"report: {args.out}")
    return 0


if __name__ == "__main__":
    if status := main():
        sys.exit(status)
