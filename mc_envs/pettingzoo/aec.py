"""The AEC env shared by the PettingZoo modules :mod:`~mc_envs.pettingzoo.connect_four_v0` and
:mod:`~mc_envs.pettingzoo.tictactoe_v0`, and the wrappers their ``env()`` adds.

Agents are ``"player_0"`` (moves first) and ``"player_1"``. Each observation is a dict:
``"observation"`` = (2, rows, cols) int8 planes from that agent's side (its stones, then the
opponent's) and ``"action_mask"`` = int8 over the actions, all zero when it is not that agent's turn.
Rewards come at the end: +1 to the winner, -1 to the loser, 0 for a draw. The raw env raises
:class:`mc_envs.IllegalActionError` on an illegal action (the state is unchanged); ``env()`` wraps it
as PettingZoo classic does, so that an illegal action ends the game with -1 for the agent that
tried it and 0 for the other.
"""

from __future__ import annotations

import sys
import types
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from mc_envs.envs.connect_four import ConnectFourEnv
from mc_envs.envs.tictactoe import TicTacToeEnv
from mc_envs.envs.two_player import TwoPlayerEnv

GAMES: dict[str, type[TwoPlayerEnv]] = {"connect_four": ConnectFourEnv, "tictactoe": TicTacToeEnv}


class TwoPlayerAEC(AECEnv):
    """A PettingZoo AEC env over one of the suite's two-player envs.

    Args:
        game: ``"connect_four"`` or ``"tictactoe"``.
        render_mode: None or ``"ansi"``.
    """

    metadata = {
        "render_modes": ["ansi"],
        "name": "mc_envs_two_player_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, game: str = "connect_four", render_mode: str | None = None) -> None:
        super().__init__()
        if game not in GAMES:
            raise ValueError(f"game must be one of {sorted(GAMES)}, got {game!r}")
        self.game = game
        self.metadata = {**self.metadata, "name": f"mc_envs_{game}_v0"}
        self.render_mode = render_mode
        self.env = GAMES[game](render_mode=render_mode, illegal_action="raise")
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
        planes = base.rules.planes(base.state_view)  # from the mover's side
        me = self.possible_agents.index(agent)
        mover = base.current_player
        if me != mover:
            planes = planes[::-1].copy()
        mask = np.zeros(self._act_space.n, dtype=np.int8)
        if me == mover:
            mask[base.legal_actions()] = 1
        return {"observation": planes, "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        _, _, terminated, _, _ = self.env.step(action)
        self._cumulative_rewards[agent] = 0.0
        if terminated:
            r0 = float(self.env.returns()[0])
            self.rewards = {"player_0": r0, "player_1": -r0}
            self.terminations = {a: True for a in self.agents}
        else:
            self.rewards = {a: 0.0 for a in self.agents}
        self.agent_selection = self.possible_agents[self.env.current_player]
        self._accumulate_rewards()
        if self.render_mode == "ansi":
            print(self.render(), end="")

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return self.env._ansi()

    def close(self) -> None:
        pass


def wrap(raw: TwoPlayerAEC) -> AECEnv:
    """PettingZoo classic's wrappers: an illegal action ends the game with -1 for the agent that
    tried it, an action outside the space fails an assertion, and calls must come in order."""
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


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
