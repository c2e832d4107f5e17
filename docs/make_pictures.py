"""Draws the picture of each registered id for its documentation page: a finished game.

    SDL_VIDEODRIVER=dummy python docs/make_pictures.py

writes ``docs/pictures/<Name>-v0.png`` (or ``.gif``, see ``ANIMATED``) for every id of
:data:`mc_envs.registry.ENVS` (or of the ids given) and ``docs/pictures/pictures.json`` (id -> the
picture's file and how the game was made, the caption on the page). A puzzle's game is one
complete seeded NMCS search (level 1 unless ``game`` says otherwise), a two-player game UCT
against UCT with a fixed number of iterations, Morpion a shipped record: the same pictures on
every run. The pictures are committed, so building the docs needs neither numba's compilation
nor pygame; ``tests/test_docs.py`` checks that every id has one. Run it again after changing a
game's drawing or adding a game.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import gymnasium as gym  # noqa: E402

import mc_envs  # noqa: E402, F401  (registers the ids)
from mc_envs.registry import ENVS, GAMES  # noqa: E402

OUT = Path(__file__).resolve().parent / "pictures"
# ids shown as an animated GIF of the whole game (frames per second), the others as a PNG of the end
ANIMATED = {"mc_envs/SameGame-v0": 5}
MORPION = Path(mc_envs.__file__).resolve().parent / "data" / "morpion"


def slug(env_id: str) -> str:
    """``mc_envs/SameGame-v0`` -> ``SameGame-v0`` (page and picture names)."""
    return env_id.partition("/")[2]


def searched(env_id: str, agent, **kwargs):
    """The env and the actions of one seeded search from its reset (seed 0)."""
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    result = agent.search(env)
    return env, [int(a) for a in result.actions], result.score


def self_play(env_id: str, iterations: int):
    """Two seeded UCT players, one game to its end."""
    from mc_envs.agents import UCT

    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    players = [UCT(iterations=iterations, seed=0), UCT(iterations=iterations, seed=1)]
    start = env.clone_state()
    actions, reward = [], 0.0
    while len(env.legal_actions()):
        action = players[env.current_player].act(env)
        actions.append(action)
        reward = env.step(action)[1]
    outcome = "a draw" if reward == 0 else f"player {(len(actions) - 1 + (reward < 0)) % 2} wins"
    env.restore_state(start)
    return env, actions, outcome


def game(env_id: str):
    """The replay of one finished game of ``env_id`` and its caption."""
    from mc_envs.agents import NMCS
    from mc_envs.render.replay import Replay, load

    name = slug(env_id)
    if name.startswith("MorpionSolitaire"):
        record = {"5D": "msr_rosin82.json", "5T": "msr_rosin178.json"}[ENVS[env_id][1]["variant"]]
        replay = load(MORPION / record)
        return replay, f"Rosin's record, {len(replay)} moves (mc_envs/data/morpion/{record})"
    if any(g.env_id == env_id and g.players == 2 for g in GAMES):
        iterations = 200 if name == "TicTacToe-v0" else 2_000
        env, actions, outcome = self_play(env_id, iterations)
        caption = f"UCT against UCT, {iterations:,} iterations a move, seeds 0 and 1: {outcome}"
        return Replay(env, actions, name), caption
    kwargs, agent, how = {}, NMCS(level=1, seed=0), "NMCS level 1, seed 0"
    if name == "SameGame-v0":
        kwargs, agent, how = {"position": 1}, NMCS(level=2, seed=0), "NMCS level 2, seed 0"
        how = f"Standard position 1, {how}"
    elif name == "Sudoku-v0":
        how = "A puzzle generated from reset seed 0, NMCS level 1, seed 0"
    elif name == "WeakSchur-v0":
        agent, how = NMCS(level=2, seed=0), "NMCS level 2, seed 0"
    env, actions, score = searched(env_id, agent, **kwargs)
    return Replay(env, actions, name), f"{how}: score {score:g}"


def write_small_gif(frames, path: Path, fps: float) -> None:
    """An animated GIF in 16 colours (a few hundred KB for a whole SameGame game)."""
    from PIL import Image

    pictures = [Image.fromarray(f).quantize(16, method=Image.Quantize.MEDIANCUT) for f in frames]
    duration = round(1000 / fps)
    pictures[0].save(path, save_all=True, append_images=pictures[1:], duration=duration, loop=0)


def main(ids: list[str]) -> int:
    from mc_envs.render.draw import surface_to_array
    from mc_envs.render.replay import frame_surface, frames
    from mc_envs.render.video import write_png

    OUT.mkdir(exist_ok=True)
    index = OUT / "pictures.json"
    pictures = json.loads(index.read_text()) if index.exists() else {}
    for env_id in ids or list(ENVS):
        replay, caption = game(env_id)
        name = slug(env_id)
        if env_id in ANIMATED:  # the last frame alone would hide the game (a cleared board)
            picture = f"{name}.gif"
            write_small_gif(frames(replay), OUT / picture, fps=ANIMATED[env_id])
        else:
            picture = f"{name}.png"
            write_png(surface_to_array(frame_surface(replay, len(replay))), OUT / picture)
        pictures[env_id] = {"picture": picture, "caption": caption}
        print(f"{env_id}: {picture}: {caption}")
    index.write_text(json.dumps(dict(sorted(pictures.items())), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
