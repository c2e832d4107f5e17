"""The uniformly random agent: a baseline and an opponent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mc_envs.agents.base import Budget, Searcher, SearchResult
from mc_envs.core import unwrap
from mc_envs.rng import Rng

if TYPE_CHECKING:
    import gymnasium as gym
    from typing_extensions import Unpack

    from mc_envs.agents.base import SearchOptions


class RandomAgent(Searcher):
    """Plays uniformly random legal moves.

    Args:
        seed: seeds the agent's own random stream.
    """

    name = "random"

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = int(seed)
        self._rng = Rng(self.seed)

    @property
    def params(self) -> dict:
        """The constructor arguments (for records)."""
        return {"seed": self.seed}

    def act(self, env: gym.Env) -> int:
        """A uniformly random legal action."""
        actions = unwrap(env).legal_actions()
        if len(actions) == 0:
            raise ValueError("no legal move: the game is over")
        return self._rng.choice(actions)

    def run_search(
        self, env: gym.Env, budget: Budget, **options: Unpack[SearchOptions]
    ) -> SearchResult:
        """One random game from the env's state (the env is restored afterwards), whatever the
        budget.

        Raises:
            TypeError: an option (the agent has none).
        """
        if options:
            raise TypeError(f"RandomAgent.search takes no {', '.join(sorted(options))}")
        import time

        base = unwrap(env)
        start, snapshot = time.perf_counter(), base.clone_state()
        actions: list[int] = []
        try:
            while len(base.legal_actions()):
                a = self.act(base)
                base.step(a)
                actions.append(a)
            score = base.score
        finally:
            base.restore_state(snapshot)
        return SearchResult(score, actions, 1, time.perf_counter() - start, 1)
