"""The Weak Schur env: a thin Gymnasium shell over :mod:`mc_envs.games.weak_schur`."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from mc_envs.core import LegalDiscrete, PlanningEnv
from mc_envs.games import weak_schur as rules


class WeakSchurEnv(PlanningEnv):
    """Weak Schur numbers: partition 1, 2, 3 ... into ``k`` weakly sum-free parts, as far as possible.

    ## Description

    Integers are placed in order, each into one of ``k`` parts. A part must stay weakly sum-free:
    no ``x + y = z`` with ``x != y`` and all three in the part. The score is the last integer
    placed; the best possible is the weak Schur number ``WS(k)``: 2, 8, 23, 66 for ``k = 1..4``,
    and at least 196 for ``k = 5`` (Eliahou et al. 2012; 196 is conjectured to be exact).
    Parts open in order (the next integer may go into an open part or into the first empty one),
    which removes the ``k!`` renamings of a partition from the search.

    ## Action Space

    ``Discrete(k)``: the part (0 = A, 1 = B ...) that receives the next integer. Legal exactly when
    the part stays weakly sum-free and is open or the first empty part (``action_masks()``).

    ## Observation Space

    ``Box(-1, k - 1, (bound,), int8)``: the part of each integer 1..bound, -1 while not placed;
    ``bound`` is the longest possible game (:func:`mc_envs.games.weak_schur.bound`).

    ## Rewards

    +1 per integer placed; 0 for an illegal action (see ``illegal_action``).

    ## Episode End

    Terminates when the next integer fits in no part, or on an illegal action (by default). Never
    truncated.

    ## Arguments

    - ``k``: the number of parts, 1..6 (default 5). ``max_score`` is ``WS(k)`` for ``k <= 4``,
      else None.
    - ``render_mode``: None, ``"ansi"`` (one line per part), ``"rgb_array"`` or ``"human"``.
    - ``illegal_action``: ``"terminate"`` (default: the episode ends with reward 0 and
      ``info["illegal_action"]``, the state unchanged) or ``"raise"`` (:class:`IllegalActionError`).

    Playout policy: ``"random"`` (uniform), the default. NRPA's move code is the pair (integer,
    part).

    ## Version History

    - v0: first version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 8}
    game = "WeakSchur"

    def __init__(
        self, k: int = 5, render_mode: str | None = None, illegal_action: str = "terminate"
    ) -> None:
        super().__init__(illegal_action=illegal_action)
        self._check_render_mode(render_mode)
        self.bound = rules.bound(k)  # validates k
        self.k = int(k)
        self.render_mode = render_mode
        self.kernel = rules.make_kernel(self.k)
        self._config = (self.k,)
        known = rules.KNOWN.get(self.k)
        self.max_score = None if known is None else float(known)
        self.action_space = LegalDiscrete(self.k).bind(self)
        self.observation_space = spaces.Box(-1, self.k - 1, (self.bound,), dtype=np.int8)
        self._set_state(rules.new_state(self.k))

    def _check_state(self, data: np.ndarray) -> None:
        rules.check_state(data, self._config)

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        return rules.new_state(self.k)

    def _start_state(self) -> np.ndarray:
        return rules.new_state(self.k)

    def _why_illegal(self, action: int) -> str:
        x, used = int(self._state[rules.N]) + 1, int(self._state[rules.USED])
        if action > used:
            return f"parts open in order: {x} may go into {rules.PARTS[: used + 1]}"
        pair = rules.sum_in(self._state, action)
        if pair is not None:
            return f"{pair[0]} + {pair[1]} = {x}, all in part {rules.PARTS[action]}"
        return "the game is over"

    def action_to_string(self, action: int) -> str:
        """The move as ``"<integer> in <part>"``, e.g. ``"24 in B"``."""
        return rules.action_to_string(self._state, action)

    @property
    def parts(self) -> list[list[int]]:
        """The parts so far, each a sorted list of integers."""
        return rules.parts_of(self._state)

    def _ansi(self) -> str:
        return f"{rules.format_parts(self._state)}\nn = {self.score:g} with k = {self.k}\n"
