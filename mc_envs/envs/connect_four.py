"""The Connect Four Gymnasium env: a thin shell over :mod:`mc_envs.games.connect_four`."""

from __future__ import annotations

from mc_envs.envs.two_player import TwoPlayerEnv, two_player_doc
from mc_envs.games import connect_four as rules


class ConnectFourEnv(TwoPlayerEnv):
    __doc__ = two_player_doc(
        "Connect Four on 7 columns x 6 rows, two players, four in a row wins.",
        """Players alternate dropping a stone into a column; it falls to the lowest empty cell.
    Player 0 (``X``) moves first. Four stones in a row horizontally, vertically or diagonally win;
    a full board is a draw. The first player wins with perfect play, starting in the centre
    column.""",
        """``Discrete(7)``: the column, 0..6 from the left. A full column is illegal""",
        """``Box(0, 1, (2, 6, 7), int8)`` from the side to move, row 0 at the top: plane 0 the
    mover's stones, plane 1 the opponent's.""",
        """Terminated at four in a row or a full board (42 stones). Never truncated.
    ``info["current_player"]`` is the player to move; ``env.unwrapped.returns()`` gives
    ``[player 0, player 1]`` at the end.""",
        """Playout policy: ``"random"`` (uniform), the default. A heuristic move prior for PUCT is
    :func:`mc_envs.games.connect_four.heuristic_prior`
    (``mc_envs.agents.mcts.puct.connect_four_prior``).""",
    )

    game = "ConnectFour"
    rules = rules

    def _why_illegal(self, action: int) -> str:
        return f"column {action} is full"
