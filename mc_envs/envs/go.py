"""The Go Gymnasium env: a thin shell over :mod:`mc_envs.games.go`."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

import numpy as np
from gymnasium import spaces

from mc_envs.contract import PlanningContract
from mc_envs.core import Chooser, PolicyFactory
from mc_envs.envs.two_player import Opponent, TwoPlayerEnv
from mc_envs.games import go, go_check, go_policy, go_text
from mc_envs.games import go_layout as layout
from mc_envs.kernel import CAP_INFO

if TYPE_CHECKING:
    from mc_envs.opponents import Player


def _compiled_policy(code: int, env: PlanningContract) -> Chooser:
    # The generic path's chooser of a compiled policy: the kernel's own move choice on the env's
    # state, drawn from the search's generator (the same moves as the compiled playout).
    base = cast(GoEnv, env.unwrapped)
    return lambda actions, rng: int(go_policy.choose(base._state, code, rng.state, base._ws))


class GoRules:
    """Go's rules for one config, read by :class:`~mc_envs.envs.two_player.TwoPlayerEnv` as it
    reads a game module (``KERNEL``, ``new_state``, ``board_of`` ...)."""

    PLAYER, OVER, RESULT = layout.PLAYER, layout.OVER, layout.RESULT

    def __init__(self, size: int, komi: float, max_moves: int | None, history: int) -> None:
        size, komi2, max_moves, history = layout.check_config(size, komi, max_moves, history)
        self.config = (size, komi2 / 2, max_moves, history)
        self.ROWS = self.COLS = size
        self.KERNEL = go.make_kernel(size, max_moves)
        self._start = layout.new_state(*self.config)

    def new_state(self) -> np.ndarray:
        """The empty board, Black to move."""
        return self._start.copy()

    def check_state(self, data: np.ndarray, config: tuple = ()) -> None:
        """:func:`mc_envs.games.go_check.check_state` for this config."""
        go_check.check_state(data, self.config)

    board_of = staticmethod(go_text.board_of)
    format_board = staticmethod(go_text.format_board)
    action_to_string = staticmethod(go_text.action_to_string)


class GoEnv(TwoPlayerEnv):
    """Go on an ``n x n`` board (9 by default) under Tromp-Taylor rules.

    ## Description
    Black (player 0) and White (player 1) take turns putting a stone on an empty point, or
    passing. Opponent chains left without a liberty are captured; a move whose own chain would
    then have none (suicide) is illegal, and so is a move that recreates any earlier whole-board
    position (positional superko, whoever was to move). Two passes in a row end the game; the
    move numbered ``max_moves`` truncates it (Episode End). Tromp-Taylor area scoring: a
    player's stones plus the empty regions that reach only that player's stones; White adds
    ``komi``. The rules and the observation follow pgx's ``go_9x9`` / ``go_19x19`` (which ends a
    game with a superko move as a loss for its player, where this env refuses the move, and ends
    it at the move cap where this env truncates it).

    ## Action Space
    ``Discrete(n * n + 1)``: ``row * n + col`` (row 0 at the top, col 0 at the left), and
    ``n * n`` to pass (always legal while the game goes on). Occupied points, suicides and
    superko moves are illegal (``action_masks()``, ``info["action_mask"]``); an illegal move
    ends the episode with reward -1 (or raises :class:`mc_envs.IllegalActionError` with
    ``illegal_action="raise"``), changing nothing. ``action_to_string`` gives GTP vertices
    (``"E5"``: columns A-T without I, rows counted from the bottom; ``"pass"``).

    ## Observation Space
    ``Box(0, 1, (2 * history + 1, n, n), int8)``, AlphaGo Zero's planes in pgx's order, channels
    first (pgx's observation transposed to ``(2, 0, 1)``): for ``k = 0 .. history - 1``, plane
    ``2k`` the stones of the player to move ``k`` moves ago (passes count as moves), plane
    ``2k + 1`` the opponent's (zeros before the first move), and the last plane the colour to
    move (all 0 for Black, all 1 for White). Row 0 at the top.

    ## Rewards
    At the end, for the player who made the last move: +1 if that player won, -1 if it lost, 0
    for a draw (an integer komi can tie); 0 during the game. With ``opponent=``, the reward is
    the agent's: +1 win, -1 loss.

    ## Episode End
    Terminated after two passes in a row: the game's end, scored. Truncated at the move numbered
    ``max_moves`` (passes included), the move cap: ``truncated=True``, ``terminated=False``,
    reward 0 and ``info["max_moves_reached"] = True`` (also when the opponent's answer reaches it);
    no move is legal after it (``legal_actions()`` is empty). pgx and OpenSpiel end a game there as
    a terminal, scored one; this env does not count the cap as an outcome to learn from. What the
    kernel does at the cap: it stops the game and scores the board by Tromp-Taylor, so that
    playouts stop there and the planners value them, and ``env.unwrapped.returns()`` gives that
    adjudication ``[Black, White]`` (records, SGF ``RE`` and ``mc-envs arena`` use it too); after
    two passes it gives the game's result. :meth:`area` gives the areas.

    ## Arguments
    - ``size``: the board's side, 5..19 (default 9).
    - ``komi``: White's compensation, a multiple of 0.5 (default 7.5).
    - ``max_moves``: the move count (passes included) that truncates the game (default
      ``2 * size * size``, as pgx).
    - ``history``: the positions the observation shows (default 8, AlphaGo Zero's).
    - ``opponent``: ``None`` (two-player, the default), an agent spec such as ``"random"`` or
      ``"uct"`` (``mc_envs.agents.specs``), an agent with ``.act(env)``, or a callable
      ``opponent(env) -> action``; it answers inside ``step``.
    - ``agent_player``: with an opponent, the agent's colour: 0 (Black, default) or 1 (White).
    - ``render_mode``: ``"ansi"`` (the board with GTP coordinates).
    - ``illegal_action``: ``"terminate"`` (default: reward -1, ``info["illegal_action"]``, the
      state unchanged) or ``"raise"``; see :class:`mc_envs.PlanningEnv`.

    Playout policies (:mod:`mc_envs.games.go_policy`): ``"random"`` (uniform over the legal
    actions, the pass included), the default; ``"eye"`` (uniform over the moves that fill no true
    eye of the mover's, the pass only when none is left); ``"mogo"`` (MoGo's: answer an atari,
    then a 3x3 hane or cut pattern next to the last move, then a capture, else the ``"eye"``
    move). Tree knowledge (UCT's priors): ``"mogo"``, Gelly and Silver's heuristic prior.

    ## Version History
    - v0: first version; the move cap truncates (it terminated, scored, before the Go issue's
      ``max_moves`` fix).
    """

    game = "Go"
    rules: GoRules
    symmetry = "dihedral"

    def __init__(
        self,
        size: int = 9,
        komi: float = 7.5,
        max_moves: int | None = None,
        history: int = 8,
        opponent: str | Opponent | Player | None = None,
        agent_player: int = 0,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
    ) -> None:
        self.rules = GoRules(size, komi, max_moves, history)
        self.size, self.komi, self.max_moves, self.history = self.rules.config
        super().__init__(opponent, agent_player, render_mode, illegal_action)
        self._config = self.rules.config
        n = self.size
        self.observation_space = spaces.Box(0, 1, (2 * self.history + 1, n, n), dtype=np.int8)

    def step(self, action: object):
        """Plays ``action`` (and the opponent's answer, if there is one), as
        :meth:`TwoPlayerEnv.step`; a game stopped at the move cap is truncated (the class
        docstring's Episode End).

        Raises:
            IllegalActionError: as :meth:`TwoPlayerEnv.step`.
        """
        obs, reward, terminated, truncated, info = super().step(action)
        cut = self.kernel.truncated
        if terminated and "illegal_action" not in info and cut is not None and cut(self._state):
            info[CAP_INFO] = True
            return obs, 0.0, False, True, info
        return obs, reward, terminated, truncated, info

    def policy(self, name: str | None) -> PolicyFactory:
        """Playout policies for the generic search path: ``"random"``, ``"eye"`` and ``"mogo"``
        (the last two choose each move by the compiled policy, as the compiled playout does)."""
        code = go.POLICIES.get(name or self.default_policy)
        if code is None or code == go_policy.RANDOM:
            return super().policy(name)
        return partial(_compiled_policy, code)

    def _why_illegal(self, action: int) -> str:
        pt = int(layout.POINT_OF[self.size, action])
        if self._state[layout.BOARD + pt] != layout.EMPTY:
            return f"{self.action_to_string(action)} is occupied"
        if go.suicide(self._state, pt):
            return f"{self.action_to_string(action)} is suicide (its chain would have no liberty)"
        return f"{self.action_to_string(action)} recreates an earlier position (positional superko)"

    def area(self) -> tuple[int, int]:
        """The Tromp-Taylor areas ``(Black, White)`` of the position now, without komi."""
        black, white = layout.area(self._state)
        return int(black), int(white)

    def action_to_string(self, action: int) -> str:
        """The move as a GTP vertex: ``"E5"`` (columns A-T without I, rows from the bottom) or
        ``"pass"``."""
        return go_text.action_to_string(self._state, action)

    def symmetries(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The board's 7 symmetries other than the identity, as index permutations ``(obs,
        actions)`` (see :meth:`TwoPlayerEnv.symmetries`); the pass maps to itself."""
        n, planes = self.size, 2 * self.history + 1
        obs = np.arange(planes * n * n).reshape(planes, n, n)
        cells = np.arange(n * n).reshape(n, n)
        out = []
        for flip in (0, 1):
            for k in range(4):
                if flip == 0 and k == 0:
                    continue

                def image(a: np.ndarray, k: int = k, flip: int = flip) -> np.ndarray:
                    return np.rot90(a[..., ::-1] if flip else a, k, axes=(-2, -1))

                actions = np.append(image(cells).ravel(), n * n)
                out.append((image(obs).ravel().copy(), actions))
        return out

    def _ansi(self) -> str:
        text = go_text.format_board(self._state)
        if self._state[layout.OVER]:
            black, white = self.area()
            r = int(self._state[layout.RESULT])
            winner = "draw" if r == 0 else f"{'Black' if r > 0 else 'White'} wins"
            return text + f"Black {black}, White {white} + {self.komi:g}: {winner}\n"
        return text + f"{('Black', 'White')[self.current_player]} to move\n"
