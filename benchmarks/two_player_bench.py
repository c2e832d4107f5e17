"""Two-player throughput: our envs and UCT beside PettingZoo's envs and OpenSpiel's C++ MCTS bot.

Run: ``python benchmarks/two_player_bench.py [--seconds S]``. Prints figures and ratios, measured in
the same run; nothing is asserted. The issue's targets: compiled UCT on Connect Four >= 2x
OpenSpiel's MCTSBot (random rollouts) iterations/s; our Connect Four env >= 5x PettingZoo steps/s.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import mc_envs  # noqa: E402, F401
from benchmarks.reporting import playouts_from_start  # noqa: E402
from mc_envs.agents import UCT  # noqa: E402

GAMES = {
    "connect_four": ("mc_envs/ConnectFour-v0", "connect_four_v3", "connect_four"),
    "tictactoe": ("mc_envs/TicTacToe-v0", "tictactoe_v3", "tic_tac_toe"),
}


def timed(fn, seconds: float) -> float:
    """Calls ``fn()`` (which returns a count) until ``seconds`` pass; returns count per second."""
    fn()  # warm-up (and compile)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        count += fn()
    return count / (time.perf_counter() - start)


def our_env_steps(env_id: str, seconds: float) -> float:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def episode() -> int:
        obs, info = env.reset()
        n, done = 0, False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            obs, r, done, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
            n += 1
        return n

    return timed(episode, seconds)


def pettingzoo_steps(name: str, seconds: float) -> float:
    from pettingzoo.classic import connect_four_v3, tictactoe_v3

    env = {"connect_four_v3": connect_four_v3, "tictactoe_v3": tictactoe_v3}[name].env()
    rng = np.random.default_rng(0)

    def episode() -> int:
        env.reset(seed=0)
        n = 0
        for _agent in env.agent_iter():
            obs, r, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            n += 1
        return n

    return timed(episode, seconds)


def our_playouts(env_id: str, seconds: float) -> float:
    kernel, root, state, ws, seq, rng = playouts_from_start(env_id)

    def batch() -> int:
        for _ in range(1000):
            state[:] = root
            kernel.playout(state, 0, rng, ws, seq, 0)
        return 1000

    return timed(batch, seconds)


def our_uct(env_id: str, iterations: int, seconds: float) -> float:
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)

    def search() -> int:
        return UCT(iterations=iterations, seed=0, reuse=False).search(env).iterations

    return timed(search, seconds)


def openspiel_mcts(game_name: str, iterations: int, seconds: float) -> float:
    import pyspiel
    from open_spiel.python.algorithms import mcts as py_mcts  # noqa: F401 (not used: C++ bot below)

    game = pyspiel.load_game(game_name)
    evaluator = pyspiel.RandomRolloutEvaluator(1, 0)
    bot = pyspiel.MCTSBot(game, evaluator, math.sqrt(2), iterations, 10**9, False, 0, False)
    state = game.new_initial_state()

    def search() -> int:
        bot.step(state)
        return iterations

    return timed(search, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--iterations", type=int, default=20000, help="UCT iterations per search")
    args = parser.parse_args()
    s = args.seconds
    for game, (env_id, pz_name, os_name) in GAMES.items():
        print(f"== {game}")
        ours = our_env_steps(env_id, s)
        try:
            pz = pettingzoo_steps(pz_name, s)
        except ImportError as exc:
            pz = float("nan")
            print(f"  (PettingZoo unavailable: {exc})")
        print(
            f"  env steps/s      mc_envs {ours:12,.0f}   PettingZoo {pz_name} {pz:12,.0f}   ratio {ours / pz:6.1f}x"
        )
        print(f"  random playouts/s  compiled kernel {our_playouts(env_id, s):12,.0f}")
        uct = our_uct(env_id, args.iterations, s)
        try:
            osp = openspiel_mcts(os_name, args.iterations, s)
        except ImportError as exc:
            osp = float("nan")
            print(f"  (OpenSpiel unavailable: {exc})")
        print(
            f"  UCT iterations/s mc_envs {uct:12,.0f}   OpenSpiel MCTSBot (C++, random rollouts) {osp:12,.0f}"
            f"   ratio {uct / osp:6.1f}x"
        )


if __name__ == "__main__":
    main()
