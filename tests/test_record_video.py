"""Frames work with Gymnasium's RecordVideo wrapper (needs the video extra: moviepy)."""

import gymnasium as gym
from gymnasium.wrappers import RecordVideo

import mc_envs  # noqa: F401


def test_record_video_writes_an_episode(tmp_path):
    env = gym.make("mc_envs/SameGame-v0", board="0011\n0122\n3344", render_mode="rgb_array")
    env = RecordVideo(
        env, video_folder=str(tmp_path), episode_trigger=lambda e: True, disable_logger=True
    )
    env.reset(seed=0)
    terminated, steps = False, 0
    while not terminated:
        _, _, terminated, _, _ = env.step(int(env.unwrapped.legal_actions()[0]))
        steps += 1
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert steps >= 2 and len(videos) == 1 and videos[0].stat().st_size > 1000
