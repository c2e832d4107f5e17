"""The AlphaZero loop in a few lines: self-play with PUCT, a replay buffer, training (JAX + optax).

A short run on Tic-Tac-Toe, then the trained model plays a random player.
Needs the extra: pip install "mc-envs[alphazero]". Run: python examples/alphazero_tictactoe.py
"""

import argparse

import gymnasium as gym

import mc_envs  # noqa: F401
from mc_envs.agents import RandomAgent
from mc_envs.agents.alphazero import alphazero_agent, train
from mc_envs.cli.two_player import play_game


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    model, history = train(
        "mc_envs/TicTacToe-v0",
        iterations=args.iterations,
        games=args.games,
        sims=25,
        steps=100,
        batch=128,
        hidden=64,
    )
    print(f"loss {history[0]['loss_before']:.3f} -> {history[-1]['loss_after']:.3f}")
    env = gym.make("mc_envs/TicTacToe-v0").unwrapped
    wins = draws = 0
    for game in range(10):
        me, other = alphazero_agent(model, sims=25, seed=game), RandomAgent(seed=game)
        first, second = (me, other) if game % 2 == 0 else (other, me)
        result = play_game(env, first, second, seed=game)  # +1: the first player won
        mine = result if game % 2 == 0 else -result
        wins += mine > 0
        draws += mine == 0
    print(f"against random: {wins} wins, {draws} draws, {10 - wins - draws} losses")


if __name__ == "__main__":
    main()
