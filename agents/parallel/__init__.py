"""Parallel machinery: every agent's ``workers`` / ``backend`` / ``address`` and root parallelism
(:mod:`~agents.parallel.root`), worker pools over processes and Ray (:mod:`~agents.parallel.pools`),
the one progress loop of every scheme (:mod:`~agents.parallel.rounds`) and the race of a
portfolio of policies (:mod:`~agents.parallel.race`)."""

from agents.parallel.pools import BACKENDS, RayPool, make_pool
from agents.parallel.root import ParallelAgent, root_search, worker_seed

__all__ = ["BACKENDS", "ParallelAgent", "RayPool", "make_pool", "root_search", "worker_seed"]
