"""The ids of the suite, registered with Gymnasium by string entry points (no game is imported)."""

from __future__ import annotations

import gymnasium as gym

# id -> (entry point, default kwargs). One line per env.
ENVS: dict[str, tuple[str, dict]] = {
    "mc_envs/SameGame-v0": ("mc_envs.envs.samegame:SameGameEnv", {}),
    "mc_envs/Sudoku-v0": ("mc_envs.envs.sudoku:SudokuEnv", {}),
    "mc_envs/LeftMove-v0": ("mc_envs.envs.abstract:LeftMoveEnv", {}),
    "mc_envs/LeftmostPath-v0": ("mc_envs.envs.abstract:LeftmostPathEnv", {}),
    "mc_envs/MorpionSolitaire5D-v0": (
        "mc_envs.envs.morpion:MorpionSolitaireEnv",
        {"variant": "5D"},
    ),  # noqa: E501
    "mc_envs/MorpionSolitaire5T-v0": (
        "mc_envs.envs.morpion:MorpionSolitaireEnv",
        {"variant": "5T"},
    ),  # noqa: E501
    "mc_envs/TicTacToe-v0": ("mc_envs.envs.tictactoe:TicTacToeEnv", {}),
    "mc_envs/ConnectFour-v0": ("mc_envs.envs.connect_four:ConnectFourEnv", {}),
}


def register_all() -> None:
    """Registers every id of :data:`ENVS` (idempotent)."""
    for env_id, (entry_point, kwargs) in ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs))
