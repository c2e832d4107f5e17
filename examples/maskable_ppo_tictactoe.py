"""MaskablePPO (sb3-contrib) learns Tic-Tac-Toe against the built-in random player.

    python examples/maskable_ppo_tictactoe.py --steps 20000 --games 500

The env is a one-agent env (``opponent="random"``: the random player answers inside ``step``),
flattened for an MLP policy. MaskablePPO reads the legal moves from ``env.action_masks()`` (the
sb3-contrib convention every env of the suite follows), so the agent never plays an illegal move.
Without masks (plain PPO) an illegal move would end the game as a loss, reward -1.

Needs ``pip install "mc-envs[rl]"`` (stable-baselines3, sb3-contrib and PyTorch).
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import torch
from sb3_contrib import MaskablePPO

import mc_envs  # noqa: F401  (registers the ids)


def make_env() -> gym.Env:
    """Tic-Tac-Toe against the random player; the agent moves first; observation flattened."""
    return gym.wrappers.FlattenObservation(gym.make("mc_envs/TicTacToe-v0", opponent="random"))


def evaluate(model: MaskablePPO, games: int, seed: int) -> dict[str, int]:
    """Plays ``games`` games with the model's greedy masked policy; counts wins, draws, losses."""
    env = make_env()
    tally = {"wins": 0, "draws": 0, "losses": 0}
    for game in range(games):
        obs, info = env.reset(seed=seed + game)
        terminated = truncated = False
        while not (terminated or truncated):
            action, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
            obs, reward, terminated, truncated, info = env.step(int(action))
        tally[{1.0: "wins", 0.0: "draws", -1.0: "losses"}[float(reward)]] += 1
    return tally


def main(argv: list[str] | None = None) -> dict[str, dict[str, int]]:
    """Evaluates the untrained policy, trains, evaluates again; prints and returns both tallies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="training steps (agent moves)")
    parser.add_argument("--games", type=int, default=500, help="evaluation games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a small MLP: one thread is fastest and reproducible

    env = make_env()
    env.reset(seed=args.seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=64, seed=args.seed, verbose=0)
    results = {"untrained": evaluate(model, args.games, seed=10_000)}
    model.learn(total_timesteps=args.steps)
    results["trained"] = evaluate(model, args.games, seed=10_000)
    for name, t in results.items():
        print(
            f"{name:>9}: {t['wins']} wins, {t['draws']} draws, {t['losses']} losses "
            f"in {args.games} games against the random player"
        )
    return results


if __name__ == "__main__":
    main()
