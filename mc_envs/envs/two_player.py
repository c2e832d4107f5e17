"""What the two-player envs share: rewards for the mover, two-plane observations, the built-in opponent."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Protocol, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mc_envs import opponents
from mc_envs.core import Kernel, PlanningEnv

Opponent = Callable[[gym.Env], int]  # the move of the side the env plays itself


class Rules(Protocol):
    """What a two-player env reads of its game's rules: a game module
    (:mod:`mc_envs.games.tictactoe`, :mod:`mc_envs.games.connect_four`) or Go's rules for one
    config (:class:`mc_envs.envs.go.GoRules`); ``PLAYER``, ``OVER`` and ``RESULT`` index the
    state's header (:mod:`mc_envs.games.two_player`)."""

    KERNEL: Kernel
    ROWS: int
    COLS: int
    PLAYER: int
    OVER: int
    RESULT: int

    def new_state(self) -> np.ndarray: ...
    def check_state(self, data: np.ndarray, config: tuple = ()) -> None: ...
    def board_of(self, state: np.ndarray) -> np.ndarray: ...
    def format_board(self, state: np.ndarray) -> str: ...
    def action_to_string(self, state: np.ndarray, action: int) -> str: ...


def two_player_doc(
    title: str, description: str, actions: str, observation: str, episode_end: str, policy: str
) -> str:
    """The docstring of a Tic-Tac-Toe-like env (Gymnasium's sections): its own parts within the
    rewards and arguments every such env shares."""
    return f"""{title}

    ## Description
    {description}

    ## Action Space
    {actions} (``action_masks()``, ``info["action_mask"]``); an illegal move ends the
    episode with reward -1 (or raises :class:`mc_envs.IllegalActionError` with
    ``illegal_action="raise"``), changing nothing.

    ## Observation Space
    {observation}

    ## Rewards
    For the player who just moved: +1 for a winning move, 0 otherwise (a draw is 0). With
    ``opponent=``, the reward is the agent's: +1 win, -1 when the opponent's answer wins, 0 else.

    ## Episode End
    {episode_end}

    ## Arguments
    - ``opponent``: ``None`` (two-player, the default), an agent's name such as ``"random"``,
      ``"uct"`` or ``"uct-hard"`` (the agent specs of ``mc_envs.agents.specs``, found through
      ``mc_envs.opponents``; an unknown name raises ValueError), an agent with ``.act(env)``, or a
      callable ``opponent(env) -> action``. The opponent answers inside ``step``; a named agent
      is seeded from the env's ``np_random`` (the reset seed).
    - ``agent_player``: with an opponent, the agent's side: 0 (moves first, default) or 1.
    - ``render_mode``: ``"ansi"``.
    - ``illegal_action``: ``"terminate"`` (default: an illegal action ends the episode with
      reward -1, a loss for the mover, and ``info["illegal_action"]``, the state unchanged) or
      ``"raise"`` (raises :class:`mc_envs.IllegalActionError`); see :class:`mc_envs.PlanningEnv`.

    {policy}

    ## Version History
    - v0: first version.
    """


class TwoPlayerEnv(PlanningEnv):
    """Base of the two-player envs over a game module ``rules`` (see the subclasses' docstrings).

    Without ``opponent`` the env is the plain alternating game: ``current_player`` says who moves and
    the reward is for the player who just moved. With ``opponent`` it is a one-agent env: the agent
    plays ``agent_player`` and the built-in player answers inside ``step``.

    An illegal action under ``illegal_action="terminate"`` (the default) ends the episode with
    reward -1 for the player who tried it (a loss, as in pgx and PettingZoo classic) and no answer
    from the opponent; ``"raise"`` raises :class:`~mc_envs.IllegalActionError` (see
    :class:`~mc_envs.core.PlanningEnv`). An illegal move of the built-in opponent always raises.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2}
    rules: Rules  # the game's rules module (a class attribute), or Go's rules for one config
    illegal_reward: ClassVar[float] = -1.0
    #: The board's symmetries that keep the rules: "mirror" (left-right) or "dihedral" (all 8).
    symmetry: ClassVar[str] = "mirror"

    def __init__(
        self,
        opponent: str | Opponent | opponents.Player | None = None,
        agent_player: int = 0,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
    ) -> None:
        super().__init__(illegal_action=illegal_action)
        if isinstance(opponent, str):
            opponents.resolve(opponent)  # a bad name or argument fails now, naming the known ones
        self._check_render_mode(render_mode)
        if agent_player not in (0, 1):
            raise ValueError(f"agent_player must be 0 or 1, got {agent_player!r}")
        self.render_mode = render_mode
        self.kernel = self.rules.KERNEL
        self._config = ()
        rows, cols = self.rules.ROWS, self.rules.COLS
        self.action_space = spaces.Discrete(self.kernel.max_actions)
        self.observation_space = spaces.Box(0, 1, (2, rows, cols), dtype=np.int8)
        self.agent_player = int(agent_player)
        self.opponent_spec = opponent
        self._opponent: Opponent | None = None
        self._opponent_turn = False
        self._set_state(self.rules.new_state())

    # -- the game -------------------------------------------------------------------------------

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        return self.rules.new_state()

    def _start_state(self) -> np.ndarray:
        return self.rules.new_state()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Starts a new game; with an opponent playing first, its first move is already made."""
        super().reset(seed=seed, options=options)
        if self.opponent_spec is not None:
            self._opponent = opponent = self._make_opponent(self.opponent_spec)
            if self.agent_player == 1:
                self._opponent_move(opponent)
        return self._observation(), self._info()

    def _check_state(self, data: np.ndarray) -> None:
        self.rules.check_state(data, self._config)

    def _info(self) -> dict:
        return {"action_mask": self._info_mask(), "current_player": self.current_player}

    @property
    def current_player(self) -> int:
        """The player to move: 0 (``X``, moves first) or 1 (``O``)."""
        return int(self._state[self.rules.PLAYER])

    @property
    def score(self) -> float:
        """Always 0: two-player games have :meth:`returns`, not a score."""
        return 0.0

    def returns(self) -> np.ndarray:
        """OpenSpiel-style returns ``[player 0, player 1]``: +1 win, -1 loss, 0 draw or unfinished."""
        r = float(self._state[self.rules.RESULT])
        return np.array([r, -r])

    @property
    def board(self) -> np.ndarray:
        """The board (row 0 at the top): 0 empty, 1 player 0's stone, 2 player 1's stone. A copy."""
        return self.rules.board_of(self._state)

    def _mover_reward(self, mover: int) -> float:
        r = float(self._state[self.rules.RESULT])
        return r if mover == 0 else -r

    def action_to_string(self, action: int) -> str:
        """The move as its cell (Tic-Tac-Toe ``"r1c1"``) or column (Connect Four ``"col 3"``)."""
        return self.rules.action_to_string(self._state, action)

    def step(self, action: object):
        """Plays ``action`` for the player to move (and the opponent's answer, if there is one).

        Raises:
            IllegalActionError: the action is not an integer of the action space, or the move is
                illegal (or the game over) and ``illegal_action`` is ``"raise"``; nothing changes.
        """
        a = self._action_index(action)
        reason = self._illegal_reason(a)
        if reason is not None:
            return self._refuse(a, reason)
        mover = self.current_player
        self.kernel.play(self._state, a, self._ws)
        self._legal_cache = None
        terminated = bool(self._state[self.rules.OVER])
        if self._opponent is not None and not self._opponent_turn and not terminated:
            self._opponent_move(self._opponent)
            terminated = bool(self._state[self.rules.OVER])
        reward = self._mover_reward(mover) if terminated else 0.0
        return self._observation(), reward, terminated, False, self._info()

    # -- the built-in opponent ------------------------------------------------------------------

    def _opponent_move(self, opponent: Opponent) -> None:
        self._opponent_turn = True  # a search by the opponent through step() sees the plain game
        try:
            a = int(opponent(self))
        finally:
            self._opponent_turn = False
        a = self._check_action(a)
        self.kernel.play(self._state, a, self._ws)
        self._legal_cache = None

    def _make_opponent(self, spec: object) -> Opponent:
        act = getattr(spec, "act", None)
        if callable(act):
            return cast(Opponent, act)
        if callable(spec):
            return cast(Opponent, spec)
        if isinstance(spec, str):
            return opponents.resolve(spec, seed=int(self.np_random.integers(2**31))).act
        raise ValueError(
            f"opponent must be an agent's name (mc_envs.opponents), an agent with .act(env) or a "
            f"callable, got {spec!r}"
        )

    def symmetries(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The board's symmetries other than the identity, as index permutations: for each, the
        pair ``(obs, actions)`` such that ``observation().ravel()[obs]`` is the transformed
        position's observation and ``pi[actions]`` a move distribution ``pi`` carried to it (the
        mask likewise). Training augments its data with them.
        """
        rows, cols = self.rules.ROWS, self.rules.COLS
        planes = np.arange(2 * rows * cols).reshape(2, rows, cols)
        cells = np.arange(rows * cols).reshape(rows, cols)
        maps: list[Callable[..., np.ndarray]] = [lambda a: a[..., ::-1]]
        if self.symmetry == "dihedral":
            maps = [
                lambda a, k=k, f=f: np.rot90(a[..., ::-1] if f else a, k, axes=(-2, -1))
                for f in (0, 1)
                for k in range(4)
            ][1:]
        acts = (
            (lambda m: m(cells).ravel())
            if self.kernel.max_actions == rows * cols
            else (lambda m: m(np.arange(cols)[None, :]).ravel())
        )
        return [(m(planes).ravel().copy(), acts(m).copy()) for m in maps]

    def _ansi(self) -> str:
        text = self.rules.format_board(self._state)
        if self._state[self.rules.OVER]:
            r = int(self._state[self.rules.RESULT])
            return text + ("draw\n" if r == 0 else f"{'XO'[0 if r > 0 else 1]} wins\n")
        return text + f"{'XO'[self.current_player]} to move\n"
