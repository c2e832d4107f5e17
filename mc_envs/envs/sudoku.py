"""The Sudoku env: a thin Gymnasium shell over :mod:`mc_envs.games.sudoku`."""

from __future__ import annotations

from typing import cast

import numpy as np
from gymnasium import spaces

from mc_envs.contract import PlanningContract
from mc_envs.core import Chooser, LegalDiscrete, PlanningEnv, PolicyFactory
from mc_envs.games import sudoku as rules
from mc_envs.games.sudoku_check import check_state
from mc_envs.games.sudoku_solve import generate, generate_many
from mc_envs.rng import Rng


def mrv_policy(env: PlanningContract) -> Chooser:
    """The paper's playout policy on the generic path: smallest domain first, a random value.

    From the sorted legal actions alone: the cell with the fewest legal values (the lowest cell on
    ties), then one of its values uniformly. The compiled ``"mrv"`` playout makes the same choices
    with the same generator calls.
    """
    size = cast(SudokuEnv, env.unwrapped).size

    def choose(actions: np.ndarray, rng: Rng) -> int:
        cells = actions // size
        starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
        counts = np.diff(np.r_[starts, len(actions)])
        i = int(np.argmin(counts))
        return int(actions[starts[i] + rng.below(int(counts[i]))])

    return choose


class SudokuEnv(PlanningEnv):
    """Sudoku as a constraint satisfaction problem, as in Cazenave (2009), section 5.3.

    ## Description

    Each cell of a 9x9 or 16x16 grid holds a domain of allowed values (a bitmask). Assigning a
    value to an empty cell removes it from the domains of the empty cells of its row, column and box
    (forward checking). When an empty cell has no value left the game is a dead end and ends; when
    every cell is filled the puzzle is solved. The puzzle is either given as text (``puzzle=``) or
    generated from the reset seed: a random complete grid with a share ``empty_fraction`` of its
    cells emptied (around 66% empty the 16x16 puzzles are hardest, per the paper).

    Text format: ``size * size`` symbols row by row (whitespace ignored), ``.`` or ``0`` for an
    empty cell, values ``1``-``9`` then, for 16x16, ``A``-``G`` for 10-16 (case-insensitive).

    ## Action Space

    ``Discrete(size ** 3)``: action ``cell * size + (value - 1)`` assigns ``value`` to
    ``cell = row * size + column`` (row 0 at the top). Which actions are legal depends on
    ``branching``: with ``"mrv"`` (default) only the values of the empty cell with the smallest
    domain (lowest index on ties), the paper's branching on one variable at a time, which keeps
    nested searches cheap; with ``"all"`` every value of every empty cell's domain. The action mask
    (``info["action_mask"]``, ``action_masks()``) follows ``legal_actions()``.

    ## Observation Space

    ``Box(0, size, (size, size), int8)``: the grid, 0 for an empty cell.

    ## Rewards

    +1 per move (one more filled cell). ``score`` is the number of filled cells, givens included,
    so a solved grid scores ``size * size`` (= ``max_score``) whatever the puzzle; it is the paper's
    playout score (cells assigned before a dead end) plus the constant number of givens.

    ## Episode End

    Terminates when the grid is full (solved) or a dead end is reached (an empty cell with an empty
    domain, possibly already at reset for an unsolvable puzzle). There is no truncation.

    ## Arguments

    - ``size``: 9 (default) or 16.
    - ``puzzle``: puzzle text (see above); None to generate from the reset seed. ``reset`` also
      accepts ``options={"puzzle": text}``.
    - ``empty_fraction``: share of cells emptied in generated puzzles; default 0.5 for 9x9 and 0.66
      for 16x16.
    - ``branching``: ``"mrv"`` (default) or ``"all"``, see Action Space.
    - ``render_mode``: None or ``"ansi"``.
    - ``illegal_action``: ``"terminate"`` (default: an illegal action ends the episode with
      reward 0 (forfeiting the points still to come) and ``info["illegal_action"]``, the state unchanged) or ``"raise"`` (raises
      :class:`mc_envs.IllegalActionError`); see :class:`mc_envs.PlanningEnv`.

    Playout policies: ``"mrv"`` (default; the paper's: smallest domain first, lowest cell on ties,
    a uniformly random value) and ``"random"`` (a uniformly random legal action). They coincide
    under ``branching="mrv"``.

    ## Version History

    - v0: first version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}
    game = "Sudoku"
    default_policy = "mrv"

    def __init__(
        self,
        size: int = 9,
        puzzle: str | None = None,
        empty_fraction: float | None = None,
        branching: str = "mrv",
        render_mode: str | None = None,
        illegal_action: str = "terminate",
    ) -> None:
        super().__init__(illegal_action=illegal_action)
        rules.box_side(size)
        if branching not in rules.BRANCHINGS:
            raise ValueError(
                f"branching must be one of {sorted(rules.BRANCHINGS)}, got {branching!r}"
            )
        self._check_render_mode(render_mode)
        if empty_fraction is None:
            empty_fraction = 0.5 if size == 9 else 0.66
        if not 0.0 <= empty_fraction <= 1.0:
            raise ValueError(f"empty_fraction must be in [0, 1], got {empty_fraction!r}")
        self.size = size
        self.branching = branching
        self.empty_fraction = float(empty_fraction)
        self.render_mode = render_mode
        self.puzzle = None if puzzle is None else rules.parse(puzzle, size)
        if self.puzzle is not None:
            rules.new_state(self.puzzle)  # reports conflicting givens now
        self.kernel = rules.make_kernel(size)
        self._config = (size, branching)
        self.max_score = float(size * size)
        self.action_space = LegalDiscrete(size**3).bind(self)
        self.observation_space = spaces.Box(0, size, shape=(size, size), dtype=np.int8)
        grid = self.puzzle if self.puzzle is not None else np.zeros((size, size), np.int64)
        self._set_state(rules.new_state(grid, branching))

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        if options and options.get("puzzle") is not None:
            grid = rules.parse(options["puzzle"], self.size)
        elif self.puzzle is not None:
            grid = self.puzzle
        else:
            grid = generate(self.size, self.empty_fraction, self.np_random)
        return rules.new_state(grid, self.branching)

    def _new_states(
        self, generators: list[np.random.Generator], options: dict | None, *, parallel: bool = False
    ) -> np.ndarray:
        if self.puzzle is not None or (options and options.get("puzzle") is not None):
            return super()._new_states(generators, options)
        grids = generate_many(self.size, self.empty_fraction, generators, parallel=parallel)
        return np.stack([rules.new_state(grid, self.branching) for grid in grids])

    def _start_state(self) -> np.ndarray | None:
        return None if self.puzzle is None else rules.new_state(self.puzzle, self.branching)

    def _check_state(self, data: np.ndarray) -> None:
        check_state(data, self._config)

    @property
    def grid(self) -> np.ndarray:
        """The current grid, ``size`` x ``size``, 0 for empty."""
        return rules.grid_of(self._state)

    @property
    def solved(self) -> bool:
        """True when every cell is filled."""
        return bool(self._state[rules.FILLED] == self.size * self.size)

    def policy(self, name: str | None) -> PolicyFactory:
        """``"mrv"`` (default) or ``"random"``; see the class docstring."""
        if (name or self.default_policy) == "mrv":
            return mrv_policy
        return super().policy(name)

    def _why_illegal(self, action: int) -> str:
        n = self.size
        cell, value = divmod(action, n)
        value += 1
        r, c = divmod(cell, n)
        where = f"cell (row {r + 1}, column {c + 1})"
        symbol = rules.SYMBOLS[value - 1]
        grid = self.grid
        if grid[r, c]:
            return f"{where} is already filled with {rules.SYMBOLS[grid[r, c] - 1]}"
        domain = int(self._state[rules.HEADER + n * n + cell])
        if not domain >> (value - 1) & 1:
            unit = "row" if value in grid[r] else "column" if value in grid[:, c] else "box"
            return f"{symbol} is not in the domain of {where}: it is already in its {unit}"
        best = int(rules.mrv_cell(self._state))
        br, bc = divmod(best, n)
        return (
            f"with branching='mrv' only the most constrained cell (row {br + 1}, column {bc + 1}) "
            f"may be assigned, not {where}"
        )

    def action_to_string(self, action: int) -> str:
        """The move in Sudoku notation, rows and columns from 1, e.g. ``"r3c4=7"``."""
        return rules.action_to_string(self._state, action)

    def _ansi(self) -> str:
        status = "solved" if self.solved else "dead end" if self._state[rules.DEAD] else "playing"
        return (
            f"{rules.format_grid(self.grid)}\nscore {self.score:g}/{self.max_score:g} ({status})\n"
        )
