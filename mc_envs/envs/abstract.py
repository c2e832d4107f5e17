"""The LeftMove and LeftmostPath envs: thin Gymnasium shells over :mod:`mc_envs.games.abstract`."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from mc_envs.core import LegalDiscrete, PlanningEnv
from mc_envs.games import abstract as rules


class TreeEnv(PlanningEnv):
    """A walk of ``depth`` left/right moves down a binary tree (see the subclasses)."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}
    _kind: str

    def __init__(
        self, depth: int = 10, render_mode: str | None = None, illegal_action: str = "terminate"
    ) -> None:
        super().__init__(illegal_action=illegal_action)
        self._check_render_mode(render_mode)
        rules.new_state(self._kind, depth)  # validates
        self.depth = int(depth)
        self.render_mode = render_mode
        self.kernel = rules.make_kernel(self.depth)
        self._config = (self.depth,)
        self.max_score = float(self.depth)
        self.action_space = LegalDiscrete(2).bind(self)
        self.observation_space = spaces.Box(0, self.depth, shape=(2,), dtype=np.int64)
        self._set_state(rules.new_state(self._kind, self.depth))

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        return rules.new_state(self._kind, self.depth)

    def _start_state(self) -> np.ndarray:
        return rules.new_state(self._kind, self.depth)

    def _check_state(self, data: np.ndarray) -> None:
        rules.check_state(data, self._config, self._kind)

    def action_to_string(self, action: int) -> str:
        """The move in the tree's notation: ``L`` (left) or ``R`` (right), e.g. ``"L"``."""
        return rules.action_to_string(self._state, action)

    def _ansi(self) -> str:
        moves, count = self._observation().tolist()
        return f"{self.game}: {moves}/{self.depth} moves, count {count}, score {self.score:g}\n"


def _tree_doc(title: str, description: str, observed: str, last_reward: str) -> str:
    """The docstring of a tree env: its own title, description, observation and last reward
    within the sections both envs share."""
    return f"""{title}

    ## Description

    {description}

    ## Action Space

    ``Discrete(2)``: 0 = left, 1 = right. Both are legal until the end.

    ## Observation Space

    ``Box(0, depth, (2,), int64)``: (moves played, {observed}).

    ## Rewards

    0 on every move but the last, which returns {last_reward}.

    ## Episode End

    Terminates after exactly ``depth`` moves. No truncation.

    ## Arguments

    - ``depth``: the depth of the tree (default 10); ``max_score = depth``.
    - ``render_mode``: None or ``"ansi"``.
    - ``illegal_action``: ``"terminate"`` (default: an illegal action ends the episode with
      reward 0 (forfeiting the points still to come) and ``info["illegal_action"]``, the state
      unchanged) or ``"raise"`` (raises :class:`mc_envs.IllegalActionError`); see
      :class:`mc_envs.PlanningEnv`.

    Playout policy: ``"random"`` (uniform), the default.

    ## Version History

    - v0: first version.
    """


class LeftMoveEnv(TreeEnv):
    __doc__ = _tree_doc(
        "The left move problem of Cazenave (2009), section 4.2.",
        """A walk down a complete binary tree of depth ``depth``: each move goes left or right. The
    score of a leaf is the number of left moves. Scores are weakly correlated with the tree
    structure, so nested searches without memorisation improve little with the level; the exact
    probabilities are given by :func:`mc_envs.games.abstract.score_distributions`.""",
        "left moves so far",
        "the score (the number of left moves)",
    )

    game = "LeftMove"
    _kind = "leftmove"


class LeftmostPathEnv(TreeEnv):
    __doc__ = _tree_doc(
        "The leftmost path problem of Cazenave (2009), section 4.1.",
        """A walk down a complete binary tree of depth ``depth``: each move goes left or right. The
    score of a leaf is the number of moves on the leftmost path, i.e. the left moves played before
    the first right move. A random playout finds the best score with probability
    ``2 ** -depth``; NMCS of level 1 always finds it.""",
        "left moves before the first right move so far",
        "the score",
    )

    game = "LeftmostPath"
    _kind = "leftmostpath"
