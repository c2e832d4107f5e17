"""Parallel machinery: every agent's ``workers`` / ``backend`` / ``address`` and root parallelism
(:mod:`~mc_envs.agents.parallel.root`), worker pools over processes and Ray (:mod:`~mc_envs.agents.parallel.pools`),
the one progress loop of every scheme (:mod:`~mc_envs.agents.parallel.rounds`) and the race of a
portfolio of policies (:mod:`~mc_envs.agents.parallel.race`)."""

from mc_envs.agents.parallel.pools import BACKENDS, RayPool, make_pool
from mc_envs.agents.parallel.root import ParallelAgent, root_search, worker_seed

__all__ = ["BACKENDS", "ParallelAgent", "RayPool", "make_pool", "root_search", "worker_seed"]
