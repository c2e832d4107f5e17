"""The SameGame Gymnasium env: a thin shell over :mod:`mc_envs.games.samegame`."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import cast

import numpy as np
from gymnasium import spaces

from mc_envs.contract import PlanningContract
from mc_envs.core import Chooser, Kernel, LegalDiscrete, PlanningEnv, PolicyFactory
from mc_envs.games import samegame as sg
from mc_envs.games import samegame_bits
from mc_envs.games import samegame_select as sgs
from mc_envs.games.samegame_check import check_state
from mc_envs.rng import Rng


def _kernel(rows: int, cols: int) -> Kernel:
    return Kernel(
        name="samegame",
        legal=sg.legal,
        play=sg.play,
        playout=samegame_bits.playout,
        score=sg.score,
        workspace=sg.workspace,
        max_moves=rows * cols // 2 + 1,
        max_actions=rows * cols,
        policies=dict(sg.POLICIES),
        code=sg.code,
        legal_codes=sg.legal_codes,
        select=sgs.select_rule,
        selections=sgs.selections(9),
        bias=sgs.size_bias,
        observe=sg.observe,
    )


@lru_cache(maxsize=1)
def standard_positions() -> dict[int, np.ndarray]:
    """The 20 standard positions (Schadd et al. 2008) as 15 x 15 arrays, colours 1..5."""
    text = resources.files("mc_envs").joinpath("data/samegame/standard_20.txt").read_text()
    positions: dict[int, np.ndarray] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("position "):
            number = int(line.split()[1])
            block = "\n".join(lines[i + 1 : i + 16])
            positions[number] = sg.parse_board(block, source=f"standard_20.txt position {number}")
    return positions


def _tabu_policy(contract: PlanningContract) -> Chooser:
    env = cast(SameGameEnv, contract)
    tabu = sg.tabu_color(env._state)
    cols = env.cols

    def choose(actions: np.ndarray, rng: Rng) -> int:
        colors = sg.board_of(env._state)[actions // cols, actions % cols]
        allowed = actions[colors != tabu]
        return rng.choice(allowed) if len(allowed) else rng.choice(actions)

    return choose


class SameGameEnv(PlanningEnv):
    """SameGame: remove groups of same-coloured cells for (n - 2)^2 points each.

    ## Description
    A grid of coloured cells. A move removes a 4-connected group of n >= 2 cells of one colour
    and scores (n - 2)^2; cells fall down and empty columns close up to the left. Clearing the
    board scores 1000 more. Standard test set: ``position=1..20`` (Schadd et al. 2008), the set
    used by the NMCS, SP-MCTS and NRPA papers.

    ## Action Space
    ``Discrete(rows * cols)``: the cell index ``row * cols + col`` (row 0 at the top). Each
    group has one action: its cell with the smallest index (top row of the group, then its
    leftmost cell there). Other cells of a group are not legal actions; use ``action_masks()``.

    ## Observation Space
    ``Box(0, colors, (rows, cols), int8)``: the colour of each cell, 0 for empty, row 0 at the top.

    ## Rewards
    The points of the move: (n - 2)^2, plus 1000 on the move that clears the board, or minus the
    leftover penalty on the last move (``penalty``, see below).

    ## Episode End
    Terminated when no group of two cells remains. Never truncated.

    ## Arguments
    - ``position``: 1..20, a standard position (15 x 15, 5 colours).
    - ``board``: an array (rows x cols, 0 = empty, colours 1..k) or text (top row first, digits
      0..k-1 per cell, '.' empty).
    - ``rows``, ``cols``, ``colors``: size of random boards (default 15, 15, 5), drawn from the
      reset seed when neither ``position`` nor ``board`` is given.
    - ``penalty``: ``"none"`` (default, as in the literature), ``"jsgames"`` (minus (N - 2)^2 for
      the N cells left) or ``"schadd"`` (minus (n - 2)^2 for each colour with n >= 2 left).
    - ``render_mode``: ``"ansi"``.
    - ``illegal_action``: ``"terminate"`` (default: an illegal action ends the episode with
      reward 0 (forfeiting the points still to come) and ``info["illegal_action"]``, the state unchanged) or ``"raise"`` (raises
      :class:`mc_envs.IllegalActionError`); see :class:`mc_envs.PlanningEnv`.

    Playout policies: ``"random"`` and ``"tabu"`` (TabuColorRandom, Schadd 2008: the colour with
    most cells at the start of the playout is played only when nothing else is legal; the default).
    NRPA's selective policies (:mod:`mc_envs.games.samegame_select`): ``"tabu"``, ``"tabu-k"``
    (the colour with the k-th most cells is tabu, k = 2 .. colours) and ``"tabu-late"``;
    ``nrpa_race`` lists what a race tries (:mod:`mc_envs.agents.parallel.race`): every tabu colour, then ``"random"``.

    ## Version History
    - v0: first version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}
    game = "SameGame"
    default_policy = "tabu"
    nrpa_variants = {"stabilize": 2, "repeats": 20}
    nrpa_portfolio = ("tabu", "random")

    def __init__(
        self,
        position: int | None = None,
        board: np.ndarray | str | None = None,
        rows: int = 15,
        cols: int = 15,
        colors: int = 5,
        penalty: str = "none",
        render_mode: str | None = None,
        illegal_action: str = "terminate",
    ) -> None:
        super().__init__(illegal_action=illegal_action)
        if penalty not in sg.PENALTIES:
            raise ValueError(f"penalty must be one of {sorted(sg.PENALTIES)}, got {penalty!r}")
        if position is not None and board is not None:
            raise ValueError("give either position= or board=, not both")
        self._fixed: np.ndarray | None = None
        if position is not None:
            positions = standard_positions()
            if position not in positions:
                raise ValueError(f"position must be 1..{len(positions)}, got {position!r}")
            self._fixed = positions[position]
        elif board is not None:
            self._fixed = sg.parse_board(board) if isinstance(board, str) else sg.board_array(board)
        if self._fixed is not None:
            rows, cols = self._fixed.shape
            colors = max(int(self._fixed.max()), 1)
        if not (1 <= rows <= 64 and 1 <= cols <= 64 and 1 <= colors <= 9):
            raise ValueError(f"size {rows}x{cols} with {colors} colours is out of range")
        self.rows, self.cols, self.colors, self.penalty = rows, cols, colors, penalty
        self.nrpa_race = ("tabu", *(f"tabu-{k}" for k in range(2, colors + 1)), "random")
        self.render_mode = render_mode
        self.kernel = _kernel(rows, cols)
        self._config = (rows, cols, colors, penalty)
        self.action_space = LegalDiscrete(rows * cols).bind(self)
        self.observation_space = spaces.Box(0, colors, (rows, cols), dtype=np.int8)
        self._set_state(
            sg.new_state(
                self._fixed if self._fixed is not None else np.zeros((rows, cols)), colors, penalty
            )
        )

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        if self._fixed is not None:
            board = self._fixed
        else:
            board = self.np_random.integers(1, self.colors + 1, size=(self.rows, self.cols))
        return sg.new_state(board, self.colors, self.penalty)

    def _new_states(
        self, generators: list[np.random.Generator], options: dict | None, *, parallel: bool = False
    ) -> np.ndarray:
        if self._fixed is not None:
            return super()._new_states(generators, options)
        shape = (self.rows, self.cols)
        boards = np.stack([g.integers(1, self.colors + 1, size=shape) for g in generators])
        return sg.new_states(boards, self.colors, self.penalty)

    def _start_state(self) -> np.ndarray | None:
        if self._fixed is None:
            return None
        return sg.new_state(self._fixed, self.colors, self.penalty)

    def _check_state(self, data: np.ndarray) -> None:
        check_state(data, self._config)

    def _why_illegal(self, action: int) -> str:
        board = sg.board_of(self._state)
        r, c = divmod(action, self.cols)
        if board[r, c] == 0:
            return f"cell (row {r}, col {c}) is empty"
        return f"cell (row {r}, col {c}) is not the canonical cell of a group of 2 or more"

    def action_to_string(self, action: int) -> str:
        """The move in SameGame notation: the cell and colour of its group, e.g. ``"r3c4 colour 2"``."""
        return sg.action_to_string(self._state, action)

    def policy(self, name: str | None) -> PolicyFactory:
        """Playout policies for the generic search path: ``"random"`` and ``"tabu"``."""
        if (name or self.default_policy) == "tabu":
            return _tabu_policy
        return super().policy(name)

    @property
    def board(self) -> np.ndarray:
        """The board (rows x cols, 0 = empty), a copy."""
        return sg.board_of(self._state).copy()

    def group_at(self, row: int, col: int) -> int | None:
        """The action of the group containing cell (row, col), or None if it is not in a group."""
        board = sg.board_of(self._state)
        color = board[row, col]
        if color == 0:
            return None
        seen, stack = {(row, col)}, [(row, col)]
        while stack:
            r, c = stack.pop()
            for q in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if (
                    q not in seen
                    and 0 <= q[0] < self.rows
                    and 0 <= q[1] < self.cols
                    and board[q] == color
                ):
                    seen.add(q)
                    stack.append(q)
        if len(seen) < 2:
            return None
        r, c = min(seen)
        return r * self.cols + c

    def _ansi(self) -> str:
        return sg.format_board(sg.board_of(self._state)) + f"\nscore {self.score:g}\n"
