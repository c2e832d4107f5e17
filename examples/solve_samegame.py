"""Solve a standard SameGame position with Nested Monte Carlo Search and save a verified record.

python examples/solve_samegame.py --position 1 --seconds 10 --out solution.json
"""

import argparse

import gymnasium as gym

import mc_envs  # noqa: F401  (registers the ids)
from mc_envs.agents import NMCS
from mc_envs.records import make_record, verify_record, write_record

parser = argparse.ArgumentParser()
parser.add_argument("--position", type=int, default=1)
parser.add_argument("--level", type=int, default=1)
parser.add_argument("--seconds", type=float, default=10.0)
parser.add_argument("--out", default="solution.json")
args = parser.parse_args()

env = gym.make("mc_envs/SameGame-v0", position=args.position)
env.reset()
agent = NMCS(level=args.level, seed=0)  # TabuColorRandom playouts: SameGame's default policy
result = agent.search(env, time_limit=args.seconds)
print(f"score {result.score:g} in {len(result.actions)} moves, {result.playouts:,} playouts")

record = make_record(
    env_id="mc_envs/SameGame-v0",
    env_kwargs={"position": args.position},
    reset_seed=None,
    actions=result.actions,
    score=result.score,
    agent=agent.name,
    params=agent.params,
    seconds=result.seconds,
    playouts=result.playouts,
)
write_record(args.out, record)
print(verify_record(record).message)
