"""The Connect Four Gymnasium env: a thin shell over :mod:`mc_envs.games.connect_four`."""

from __future__ import annotations

from mc_envs.envs.two_player import TwoPlayerEnv
from mc_envs.games import connect_four as rules


class ConnectFourEnv(TwoPlayerEnv):
    """Connect Four on 7 columns x 6 rows, two players, four in a row wins.

    ## Description
    Players alternate dropping a stone into a column; it falls to the lowest empty cell. Player 0
    (``X``) moves first. Four stones in a row horizontally, vertically or diagonally win; a full
    board is a draw. The first player wins with perfect play, starting in the centre column.

    ## Action Space
    ``Discrete(7)``: the column, 0..6 from the left. A full column is illegal
    (``action_masks()``, ``info["action_mask"]``); an illegal move ends the
    episode with reward -1 (or raises :class:`mc_envs.IllegalActionError` with
    ``illegal_action="raise"``), changing nothing.

    ## Observation Space
    ``Box(0, 1, (2, 6, 7), int8)`` from the side to move, row 0 at the top: plane 0 the mover's
    stones, plane 1 the opponent's.

    ## Rewards
    For the player who just moved: +1 for a winning move, 0 otherwise (a draw is 0). With
    ``opponent=``, the reward is the agent's: +1 win, -1 when the opponent's answer wins, 0 else.

    ## Episode End
    Terminated at four in a row or a full board (42 stones). Never truncated.
    ``info["current_player"]`` is the player to move; ``env.unwrapped.returns()`` gives
    ``[player 0, player 1]`` at the end.

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

    Playout policy: ``"random"`` (uniform), the default. A heuristic move prior for PUCT is
    :func:`mc_envs.games.connect_four.heuristic_prior` (``mc_envs.agents.mcts.puct.connect_four_prior``).

    ## Version History
    - v0: first version.
    """

    game = "ConnectFour"
    rules = rules

    def _why_illegal(self, action: int) -> str:
        return f"column {action} is full"
