"""The AEC env shared by the PettingZoo modules :mod:`~mc_envs.pettingzoo.connect_four_v0`,
:mod:`~mc_envs.pettingzoo.tictactoe_v0` and :mod:`~mc_envs.pettingzoo.go_v0`, and the wrappers
their ``env()`` adds.

Agents are ``"player_0"`` (moves first: X, or Black in Go) and ``"player_1"``. Each observation is
a dict: ``"observation"`` = the game env's int8 planes from that agent's side, and
``"action_mask"`` = int8 over the actions, all zero when it is not that agent's turn. Connect Four
and Tic-Tac-Toe have two planes (the agent's stones, then the opponent's); Go has AlphaGo Zero's
``2 * history + 1`` as pgx computes them for that agent (for each of the last ``history`` positions
the agent's stones, then the opponent's; then a plane of the agent's colour, 0 Black, 1 White).
Rewards come at the end: +1 to the winner, -1 to the loser, 0 for a draw; a Go game stopped at
its move cap (``max_moves``) is truncated instead: ``truncations`` True for both agents, rewards
0, and ``infos[agent]["max_moves_reached"]`` True. The raw env raises
:class:`mc_envs.IllegalActionError` on an illegal action (the state is unchanged); ``env()`` wraps it
as PettingZoo classic does, so that an illegal action ends the game with -1 for the agent that
tried it and 0 for the other.

Render modes, as PettingZoo classic's (``connect_four_v3``, ``tictactoe_v3``): ``"human"`` draws
the board in a window after every step (pygame, imported then) and ``render()`` returns None;
``"rgb_array"``: ``render()`` returns the board as an ``H x W x 3`` uint8 array
(:func:`mc_envs.render.frame`); ``"ansi"``: ``render()`` returns the board as text, and nothing is
printed. ``render()`` without a render mode warns and returns None. The pygame modes need the
``render`` extra.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from mc_envs.envs.connect_four import ConnectFourEnv
from mc_envs.envs.go import GoEnv
from mc_envs.envs.tictactoe import TicTacToeEnv
from mc_envs.envs.two_player import TwoPlayerEnv
from mc_envs.kernel import CAP_INFO

GAMES: dict[str, type[TwoPlayerEnv]] = {
    "connect_four": ConnectFourEnv,
    "tictactoe": TicTacToeEnv,
    "go": GoEnv,
}


def other_side(planes: np.ndarray) -> np.ndarray:
    """Planes computed for the player to move, as the other player sees them: the two planes of
    each position swapped (its stones first), and Go's last plane, the colour, inverted."""
    out = planes.copy()
    pairs = planes.shape[0] // 2 * 2
    out[0:pairs:2], out[1:pairs:2] = planes[1:pairs:2], planes[0:pairs:2]
    if planes.shape[0] % 2:
        out[-1] = 1 - planes[-1]
    return out


class TwoPlayerAEC(AECEnv):
    """A PettingZoo AEC env over one of the suite's two-player envs.

    Args:
        game: ``"connect_four"``, ``"tictactoe"`` or ``"go"``.
        render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"`` (the module docstring).
        **config: the game env's own arguments (Go: ``size``, ``komi``, ``max_moves``,
            ``history``).

    Raises:
        ValueError: an unknown game or render mode, naming the known ones, or a bad config.
    """

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "mc_envs_two_player_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self, game: str = "connect_four", render_mode: str | None = None, **config: Any
    ) -> None:
        super().__init__()
        if game not in GAMES:
            raise ValueError(f"game must be one of {sorted(GAMES)}, got {game!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        self.game = game
        self.metadata = {**self.metadata, "name": f"mc_envs_{game}_v0"}
        self.render_mode = render_mode
        self.env = GAMES[game](**config, render_mode=render_mode, illegal_action="raise")
        self.possible_agents = ["player_0", "player_1"]
        self.agents = self.possible_agents[:]
        n = int(self.env.action_space.n)
        self._obs_space = spaces.Dict(
            {
                "observation": self.env.observation_space,
                "action_mask": spaces.Box(0, 1, (n,), dtype=np.int8),
            }
        )
        self._act_space = spaces.Discrete(n)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        self._reset_dicts()

    def _reset_dicts(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict] = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._reset_dicts()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        base = self.env
        planes = base._observation()  # from the mover's side
        me = self.possible_agents.index(agent)
        mover = base.current_player
        if me != mover:
            planes = other_side(planes)
        mask = np.zeros(self._act_space.n, dtype=np.int8)
        if me == mover:
            mask[base.legal_actions()] = 1
        return {"observation": planes, "action_mask": mask}

    def step(self, action: object) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        _, _, terminated, truncated, info = self.env.step(action)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if terminated:
            r0 = float(self.env.returns()[0])
            self.rewards = {"player_0": r0, "player_1": -r0}
            self.terminations = {a: True for a in self.agents}
        elif truncated:  # Go's move cap: no rewards, and infos say why
            self.truncations = {a: True for a in self.agents}
            self.infos = {a: {CAP_INFO: True} for a in self.agents}
        self.agent_selection = self.possible_agents[self.env.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> np.ndarray | str | None:
        """The board as ``render_mode`` says (the module docstring): text for ``"ansi"``, an
        ``H x W x 3`` array for ``"rgb_array"``, None after drawing the window for ``"human"``."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        return self.env.render()

    def close(self) -> None:
        """Closes the ``"human"`` window, if one was opened."""
        self.env.close()


def wrap(raw: TwoPlayerAEC) -> AECEnv:
    """PettingZoo classic's wrappers: an illegal action ends the game with -1 for the agent that
    tried it, an action outside the space fails an assertion, and calls must come in order."""
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def env_functions(
    module_name: str, game: str, title: str
) -> tuple[Callable[..., TwoPlayerAEC], Callable[..., AECEnv]]:
    """The ``raw_env`` and ``env`` functions of the PettingZoo module ``module_name`` of ``game``
    (``title`` names it in their docstrings), as PettingZoo classic's modules have them."""

    def raw_env(render_mode: str | None = None, **config: Any) -> TwoPlayerAEC:
        return TwoPlayerAEC(game, render_mode=render_mode, **config)

    def env(render_mode: str | None = None, **config: Any) -> AECEnv:
        return wrap(raw_env(render_mode=render_mode, **config))

    raw_env.__doc__ = f"""The {title} AEC env without wrappers: an illegal action raises
        :class:`mc_envs.IllegalActionError` and changes nothing.

        Args:
            render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``
                (:mod:`mc_envs.pettingzoo.aec`).
            **config: the game env's own arguments, if it takes any.
        """
    env.__doc__ = f"""The {title} AEC env with PettingZoo classic's wrappers: an illegal action
        ends the game with -1 for the agent that tried it and 0 for the other.

        Args:
            render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``
                (:mod:`mc_envs.pettingzoo.aec`).
            **config: the game env's own arguments, if it takes any.
        """
    for function in (raw_env, env):
        function.__module__ = module_name
        function.__qualname__ = function.__name__
    return raw_env, env


class _CallableModule(types.ModuleType):
    """An env module that the call form of version 0.1, ``connect_four_v0()``, still builds."""

    def __call__(self, render_mode: str | None = None) -> TwoPlayerAEC:
        name = self.__name__.rpartition(".")[2]
        warnings.warn(
            f"calling {name}() is deprecated: use {name}.env() (with PettingZoo's wrappers) "
            f"or {name}.raw_env(), as in PettingZoo classic",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.raw_env(render_mode=render_mode)


def keep_old_call_form(module_name: str) -> None:
    """Lets the module ``module_name`` be called like the function it replaced (deprecated)."""
    sys.modules[module_name].__class__ = _CallableModule
