"""The C++ SameGame reference of benchmarks/samegame_bench.py plays by our rules: compiled as the
benchmark compiles it (g++ -O2), it replays games of our env to the same scores and the same legal
moves at every step, on the standard position, random boards of several sizes and boards that get
cleared; its NMCS's best game replays in our env to its score."""

import json
import subprocess

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from benchmarks.samegame_bench import board_file, build_reference, reference
from mc_envs.games import samegame as sg


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    return build_reference(tmp_path_factory.mktemp("cpp"))


def games(env, count, seed):
    """``count`` games of uniformly random legal moves: per game the actions and, for the start
    and after every move, the score and the sorted legal actions."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        env.reset()
        u = env.unwrapped
        actions, seen = [], [(u.score, u.legal_actions().tolist())]
        while len(legal := u.legal_actions()):
            actions.append(int(rng.choice(legal)))
            env.step(actions[-1])
            seen.append((u.score, u.legal_actions().tolist()))
        yield actions, seen


def replay(binary, board, actions):
    done = subprocess.run(
        [str(binary), str(board), "replay"],
        input=" ".join(map(str, actions)),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


BOARDS = [  # (env kwargs, games, seed of the boards)
    ({"position": 1}, 4, None),
    ({"rows": 15, "cols": 15, "colors": 5}, 4, 1),
    ({"rows": 6, "cols": 9, "colors": 3}, 6, 2),
    ({"rows": 12, "cols": 5, "colors": 7}, 6, 3),
    ({"rows": 4, "cols": 4, "colors": 2}, 20, 4),  # small two-colour boards: some get cleared
    ({"rows": 1, "cols": 13, "colors": 2}, 6, 5),
]


@pytest.mark.timeout(240)  # compiles the reference once (a few seconds)
def test_the_reference_replays_our_games_to_the_same_scores_and_moves(binary, tmp_path):
    cleared = 0
    for index, (kwargs, count, seed) in enumerate(BOARDS):
        env = gym.make("mc_envs/SameGame-v0", **kwargs)
        env.reset(seed=seed)
        board = tmp_path / f"board{index}.txt"
        board.write_text(sg.format_board(env.unwrapped.board) + "\n")
        if seed is not None:  # the same board for every game of the set
            env = gym.make("mc_envs/SameGame-v0", board=env.unwrapped.board)
        for game, (actions, seen) in enumerate(games(env, count, seed=index)):
            lines = replay(binary, board, actions)
            theirs = [(line["score"], line["legal"]) for line in lines]
            assert theirs == seen, f"{kwargs}, game {game}: the C++ differs"
            cleared += lines[-1]["cells"] == 0
            assert (lines[-1]["cells"] == 0) == (seen[-1][0] >= 1000)
    assert cleared >= 2, "no game cleared its board: the +1000 went unchecked"


def test_the_reference_refuses_an_illegal_move(binary, tmp_path):
    board = board_file(1, tmp_path)
    done = subprocess.run(
        [str(binary), str(board), "replay"], input="0 0", capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1
    assert "move 2: action 0 is not a cell of a group" in done.stderr


def test_the_references_nmcs_game_replays_in_our_env(binary, tmp_path):
    result = reference(binary, board_file(1, tmp_path), "nmcs", 1, 3, "tabu", timeout=60)
    env = gym.make("mc_envs/SameGame-v0", position=1)
    env.reset()
    for action in result["actions"]:
        env.step(action)
    assert env.unwrapped.score == result["score"] > 0
    assert len(env.unwrapped.legal_actions()) == 0 and result["playouts"] > 0


@pytest.mark.parametrize("policy", ["random", "tabu"])
def test_the_references_playouts_score_like_ours(binary, tmp_path, policy):
    """Mean playout score on position 1, same rules and policy, different random streams (the
    tabu colour roughly doubles it, so a policy played differently shows)."""
    from mc_envs.agents import NMCS

    ref = reference(binary, board_file(1, tmp_path), "playouts", 2000, 1, policy, timeout=60)
    env = gym.make("mc_envs/SameGame-v0", position=1).unwrapped
    env.reset()
    ours = [NMCS(level=0, seed=s, policy=policy).search(env).score for s in range(400)]
    assert ref["per_s_median"] > 0
    assert abs(np.mean(ours) - ref["mean_score"]) < 4 * np.std(ours) / np.sqrt(400) + 5
