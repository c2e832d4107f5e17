"""Go's playout policies side by side: ``"random"``, ``"eye"`` and ``"mogo"`` on one board.

Run: ``python benchmarks/go_policy.py [--size 9] [--seconds S] [--rounds R] [--uct-seconds T]
[--out FILE]``. In one process, after a warm-up playout of each policy (compiled before any
timing), every round measures each policy in turn for ``S`` seconds, so that the machine's drift
falls on all alike: compiled playouts from the empty board (``kernel.playout``, a copy of the
board restored before each), counting playouts, moves, and the games ended by two passes rather
than by the move cap. Then a UCT search of ``T`` seconds from the empty board with each policy
(``UCT(policy=..., seed=1, reuse=False)``, the compiled path), iterations/s. Last, how strong
the policies play against each other: ``--duel-games`` games of each pair from the empty board,
each side moving by its own policy (colours alternating), scored for the first of the pair
(1 a win, 0.5 a draw; a game cut by the move cap counts by the kernel's Tromp-Taylor score).

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
DUELS = (("eye", "random"), ("mogo", "random"), ("mogo", "eye"))
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


def _duel(kernel, root, first: str, second: str, games: int, rng) -> float:
    import numpy as np

    from mc_envs.games import go_policy
    from mc_envs.games.go_layout import PLAYER, RESULT
    from mc_envs.rng import rng_below

    ws, legal = kernel.workspace(root), np.zeros(kernel.max_actions, np.int64)
    points = 0.0
    for game in range(games):
        state = root.copy()
        black, white = (first, second) if game % 2 == 0 else (second, first)
        while n := kernel.legal(state, ws, legal):  # 0 once the game is over
            code = kernel.policies[(black, white)[state[PLAYER]]]
            if code == go_policy.RANDOM:
                a = legal[rng_below(rng, n)]
            else:
                a = go_policy.choose(state, code, rng, ws)
            kernel.play(state, a, ws)
        result = state[RESULT] if game % 2 == 0 else -state[RESULT]
        points += 1.0 if result > 0 else 0.5 if result == 0 else 0.0
    return points / games


def measure(size: int, seconds: float, rounds: int, uct_seconds: float, duel_games: int) -> dict:
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
    out["duels"] = {f"{a}_vs_{b}": _duel(kernel, root, a, b, duel_games, rng) for a, b in DUELS}
    return out


def main(argv: list[str] | None = None) -> dict:
    """Runs the benchmark; returns the report (also written to ``--out``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seconds", type=float, default=3.0, help="per policy and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--uct-seconds", type=float, default=1.0)
    parser.add_argument("--duel-games", type=int, default=400, help="per pair of policies")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    report = provenance(argv) | {"load_average": {"start": list(os.getloadavg())}}
    figures = measure(args.size, args.seconds, args.rounds, args.uct_seconds, args.duel_games)
    duels = figures.pop("duels")
    report["load_average"]["end"] = list(os.getloadavg())
    base = figures["random"]
    report["size"], report["policies"], report["duels"] = args.size, figures, duels
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
    print("duels (score of the first): " + ", ".join(f"{k} {v:.3f}" for k, v in duels.items()))
    return report


if __name__ == "__main__":
    main()
