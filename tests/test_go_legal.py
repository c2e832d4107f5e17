"""Go's legal moves (mc_envs/games/go_legal.py) against the rules read plainly, on random games:
suicide read from the atari marks, superko looked up only where a repetition is possible."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from helpers import plain_go_legal

import mc_envs  # noqa: F401
from mc_envs.games import go_text
from mc_envs.games.go_check import check_state


def _reference_legal(board: np.ndarray, colour: int, seen: set[bytes]) -> list[int]:
    """The legal points by the rules read plainly (:func:`helpers.plain_go_legal`)."""
    empty = np.flatnonzero(board.ravel() == 0).tolist()
    return [a for a in empty if plain_go_legal(board, colour, seen, a)]


def test_the_legal_moves_of_random_games_are_the_rules_read_plainly() -> None:
    # Superko is looked up only where the last move allows a repetition, and suicide is read
    # from the atari marks: both against a plain reading of the rules, every state checked.
    env = gym.make("mc_envs/Go-v0", size=7, illegal_action="raise").unwrapped
    rng = np.random.default_rng(3)
    repeats = 0
    for game in range(6):
        env.reset(seed=game)
        seen = {env.board.tobytes()}
        while len(env.legal_actions()):
            ours = env.legal_actions()[:-1].tolist()  # the pass last
            plain = _reference_legal(env.board, env.current_player, seen)
            assert ours == plain, (game, go_text.format_board(env.state_view))
            repeats += len(np.flatnonzero(env.board.ravel() == 0)) - len(plain)
            legal = np.array(ours + [49])
            moves = legal[legal != 49] if len(legal) > 1 and rng.random() > 0.03 else legal
            env.step(int(rng.choice(moves)))
            seen.add(env.board.tobytes())
            check_state(np.array(env.state_view), env._config)
    assert repeats > 0
