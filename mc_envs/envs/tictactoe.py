"""The Tic-Tac-Toe Gymnasium env: a thin shell over :mod:`mc_envs.games.tictactoe`."""

from __future__ import annotations

from mc_envs.envs.two_player import TwoPlayerEnv, two_player_doc
from mc_envs.games import tictactoe as rules


class TicTacToeEnv(TwoPlayerEnv):
    __doc__ = two_player_doc(
        "Tic-Tac-Toe on a 3 x 3 board, two players, three in a row wins.",
        """Players alternate putting a stone on an empty cell; player 0 (``X``) moves first. Three
    stones in a row, column or diagonal win; a full board without a line is a draw. Perfect play
    draws.""",
        """``Discrete(9)``: the cell ``row * 3 + col``, row 0 at the top. Occupied cells are
    illegal""",
        """``Box(0, 1, (2, 3, 3), int8)`` from the side to move: plane 0 the mover's stones, plane 1
    the opponent's, so a policy always sees the board as "my stones, their stones".""",
        """Terminated at three in a row or a full board. Never truncated. ``info["current_player"]``
    is the player to move; ``env.unwrapped.returns()`` gives ``[player 0, player 1]`` at the
    end.""",
        """Playout policy: ``"random"`` (uniform), the default.""",
    )

    game = "TicTacToe"
    rules = rules
    symmetry = "dihedral"

    def _why_illegal(self, action: int) -> str:
        return f"cell (row {action // 3}, col {action % 3}) is occupied"
