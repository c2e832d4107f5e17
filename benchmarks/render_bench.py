"""Frames per second of ``render_mode="rgb_array"``: SameGame (target >= 200/s), Morpion, Connect Four.

Run: ``SDL_VIDEODRIVER=dummy python benchmarks/render_bench.py [--seconds 2]``. Each figure is the
number of ``env.render()`` calls per second on a position in the middle of a game (the frame is
drawn offscreen and copied out as an H x W x 3 uint8 array); it prints one line per game.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import gymnasium as gym  # noqa: E402

import mc_envs  # noqa: E402,F401


def _midgame(env_id: str, moves: int, **kwargs) -> gym.Env:
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    env.reset(seed=0)
    for _ in range(moves):
        legal = env.unwrapped.legal_actions()
        if len(legal) == 0:
            break
        env.step(int(legal[len(legal) // 2]))
    return env


def _envs() -> list[tuple[str, gym.Env]]:
    from mc_envs.envs.connect_four import ConnectFourEnv
    from mc_envs.morpion_records import load_record, record_actions, shipped_record

    out = [
        ("SameGame 15x15 (position 1, 10 moves)", _midgame("mc_envs/SameGame-v0", 10, position=1))
    ]
    morpion = gym.make("mc_envs/MorpionSolitaire5D-v0", render_mode="rgb_array")
    morpion.reset(seed=0)
    _, moves = load_record(shipped_record("rosin82"))
    for a in record_actions(moves, morpion.unwrapped.size):
        morpion.step(a)
    out.append(("Morpion 5D 32x32 (Rosin's 82 lines)", morpion))
    c4 = ConnectFourEnv(render_mode="rgb_array")
    c4.reset(seed=0)
    for a in (3, 3, 2, 4, 4, 2, 5, 1):
        c4.step(a)
    out.append(("Connect Four (8 stones)", c4))
    return out


def bench(env: gym.Env, seconds: float) -> tuple[float, tuple[int, ...]]:
    """Renders repeatedly for about ``seconds``; returns frames/s and the frame shape."""
    frame = env.render()  # warm up (fonts, caches)
    n, start = 0, time.perf_counter()
    while True:
        frame = env.render()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed, frame.shape


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per game")
    args = parser.parse_args()
    for name, env in _envs():
        fps, shape = bench(env, args.seconds)
        target = "  (target >= 200)" if name.startswith("SameGame") else ""
        print(f"{name:40s} {fps:8.0f} frames/s   frame {shape[1]}x{shape[0]}{target}")


if __name__ == "__main__":
    main()
