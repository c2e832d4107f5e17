"""The Tic-Tac-Toe Gymnasium env: a thin shell over :mod:`mc_envs.games.tictactoe`."""

from __future__ import annotations

from mc_envs.envs.two_player import TwoPlayerEnv
from mc_envs.games import tictactoe as rules


class TicTacToeEnv(TwoPlayerEnv):
    """Tic-Tac-Toe on a 3 x 3 board, two players, three in a row wins.

    ## Description
    Players alternate putting a stone on an empty cell; player 0 (``X``) moves first. Three stones
    in a row, column or diagonal win; a full board without a line is a draw. Perfect play draws.

    ## Action Space
    ``Discrete(9)``: the cell ``row * 3 + col``, row 0 at the top. Occupied cells are illegal
    (``action_masks()``, ``info["action_mask"]``); an illegal move ends the
    episode with reward -1 (or raises :class:`mc_envs.IllegalActionError` with
    ``illegal_action="raise"``), changing nothing.

    ## Observation Space
    ``Box(0, 1, (2, 3, 3), int8)`` from the side to move: plane 0 the mover's stones, plane 1 the
    opponent's, so a policy always sees the board as "my stones, their stones".

    ## Rewards
    For the player who just moved: +1 for a winning move, 0 otherwise (a draw is 0). With
    ``opponent=``, the reward is the agent's: +1 win, -1 when the opponent's answer wins, 0 else.

    ## Episode End
    Terminated at three in a row or a full board. Never truncated. ``info["current_player"]`` is the
    player to move; ``env.unwrapped.returns()`` gives ``[player 0, player 1]`` at the end.

    ## Arguments
    - ``opponent``: ``None`` (two-player, the default), an agent spec such as ``"random"``,
      ``"uct"`` or ``"uct-hard"`` (``mc_envs.agents.specs``; an unknown spec raises ValueError), an agent
      with ``.act(env)``, or a callable ``opponent(env) -> action``. The opponent answers inside
      ``step``; a spec's agent is seeded from the env's ``np_random`` (the reset seed).
    - ``agent_player``: with an opponent, the agent's side: 0 (moves first, default) or 1.
    - ``render_mode``: ``"ansi"``.
    - ``illegal_action``: ``"terminate"`` (default: an illegal action ends the episode with
      reward -1, a loss for the mover, and ``info["illegal_action"]``, the state unchanged) or
      ``"raise"`` (raises :class:`mc_envs.IllegalActionError`); see :class:`mc_envs.PlanningEnv`.

    Playout policy: ``"random"`` (uniform), the default.

    ## Version History
    - v0: first version.
    """

    game = "TicTacToe"
    rules = rules
    symmetry = "dihedral"

    def _why_illegal(self, action: int) -> str:
        return f"cell (row {action // 3}, col {action % 3}) is occupied"
