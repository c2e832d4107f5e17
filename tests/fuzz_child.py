"""Child process of tests/test_fuzz.py: runs hostile states through the compiled code.

Reads a JSON list of cases on stdin, ``{"env_id", "game", "config", "dtype", "data"}``; for each,
restores the state into a fresh env and, if it is accepted, plays it to the end (at most
``kernel.max_moves + 1`` moves) and runs a short compiled NMCS search from it. Prints one JSON line
per case: ``{"refused": message}`` or ``{"played": moves}``. A crash or a hang of the compiled code
kills or stalls this process, which the parent reports as a failure.

With ``--playouts [K N]`` instead, plays one random compiled playout of every registered id (or
of every N-th one from the K-th, in sorted order) from its reset state (run under
``NUMBA_BOUNDSCHECK=1`` by the parent) and prints the ids done.
"""

import json
import sys

import gymnasium as gym
import numpy as np

import mc_envs
from mc_envs.agents import NMCS
from mc_envs.core import State
from mc_envs.rng import rng_state


def play_case(case: dict) -> dict:
    env = gym.make(case["env_id"]).unwrapped
    env.reset(seed=0)
    config = tuple(case["config"])
    state = State(
        case["game"], config, np.array(case["data"], dtype=np.int64).astype(case["dtype"])
    )
    try:
        env.restore_state(state)
    except (TypeError, ValueError) as exc:
        return {"refused": str(exc)}
    NMCS(level=1, seed=0).search(env, playouts=3)  # a finished game too: it returns at once
    env.restore_state(state)
    moves = 0
    while len(env.legal_actions()) and moves <= env.kernel.max_moves:
        env.step(int(env.legal_actions()[0]))
        moves += 1
    assert moves <= env.kernel.max_moves, "a game longer than the kernel's max_moves"
    return {"played": moves}


def playouts(first: int = 0, every: int = 1) -> None:
    for env_id in sorted(mc_envs.ENVS)[first::every]:
        env = gym.make(env_id).unwrapped
        env.reset(seed=1)
        kernel = env.kernel
        state = env.state_view.copy()
        seq = np.zeros(kernel.max_moves + 1, dtype=np.int64)
        n = kernel.playout(state, 0, rng_state(3), kernel.workspace(state), seq, 0)
        replay = gym.make(env_id).unwrapped
        replay.reset(seed=1)
        for action in seq[:n]:
            replay.step(int(action))
        assert len(replay.legal_actions()) == 0, env_id
        print(json.dumps({"env_id": env_id, "moves": int(n)}), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--playouts"]:
        playouts(*map(int, sys.argv[2:4]))
    else:
        for case in json.load(sys.stdin):
            print(json.dumps(play_case(case)), flush=True)
