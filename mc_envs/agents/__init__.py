"""Planners over the planning-env contract: NMCS, NRPA, UCT, PUCT and a random baseline.

Each agent uses a game's compiled search when the env carries a kernel, and a plain Python search
over the contract otherwise; both give the same result for a seed.

The modules are grouped by family: :mod:`mc_envs.agents.nested` (NMCS, NRPA), :mod:`mc_envs.agents.mcts` (UCT,
PUCT, batched PUCT), :mod:`mc_envs.agents.parallel` (pools, root parallelism, rounds, race) and
:mod:`mc_envs.agents.alphazero`; what every search shares stays here (:mod:`mc_envs.agents.base`,
:mod:`mc_envs.agents.ops`, :mod:`mc_envs.agents.runner`, :mod:`mc_envs.agents.checkpoint`, :mod:`mc_envs.agents.common`).
"""

from mc_envs.agents.base import Progress, SearchResult
from mc_envs.agents.mcts.puct import PUCT
from mc_envs.agents.mcts.uct import UCT
from mc_envs.agents.nested.nmcs import NMCS
from mc_envs.agents.nested.nrpa import NRPA
from mc_envs.agents.random_agent import RandomAgent
from mc_envs.agents.specs import register_opponents as _register_opponents

_register_opponents()  # opponent="uct" and play --vs find the agents by name (mc_envs.opponents)

__all__ = ["NMCS", "NRPA", "PUCT", "Progress", "RandomAgent", "SearchResult", "UCT"]
