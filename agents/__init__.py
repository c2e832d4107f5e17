"""Planners over the planning-env contract: NMCS, NRPA, UCT, PUCT and a random baseline.

Each agent uses a game's compiled search when the env carries a kernel, and a plain Python search
over the contract otherwise; both give the same result for a seed.
"""

from agents.base import Progress, SearchResult
from agents.nmcs import NMCS
from agents.nrpa import NRPA
from agents.puct import PUCT
from agents.random_agent import RandomAgent
from agents.uct import UCT

__all__ = ["NMCS", "NRPA", "PUCT", "Progress", "RandomAgent", "SearchResult", "UCT"]
