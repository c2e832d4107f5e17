"""Planners over the planning-env contract: NMCS, NRPA, UCT, PUCT and a random baseline.

Each agent uses a game's compiled search when the env carries a kernel, and a plain Python search
over the contract otherwise; both give the same result for a seed.

The modules are grouped by family: :mod:`agents.nested` (NMCS, NRPA), :mod:`agents.mcts` (UCT,
PUCT, batched PUCT), :mod:`agents.parallel` (pools, root parallelism, rounds, race) and
:mod:`agents.alphazero`; what every search shares stays here (:mod:`agents.base`,
:mod:`agents.ops`, :mod:`agents.runner`, :mod:`agents.checkpoint`, :mod:`agents.common`). The
modules' earlier flat names (``agents.nrpa_options``, ``agents.puct``, ...) still import, with a
``DeprecationWarning`` naming the new one.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from agents.base import Progress, SearchResult
from agents.mcts.puct import PUCT
from agents.mcts.uct import UCT
from agents.nested.nmcs import NMCS
from agents.nested.nrpa import NRPA
from agents.random_agent import RandomAgent

__all__ = ["NMCS", "NRPA", "PUCT", "Progress", "RandomAgent", "SearchResult", "UCT"]

MOVED = {
    f"agents.{old}": f"agents.{family}.{old}"
    for family, olds in {
        "nested": (
            "nmcs",
            "nmcs_parallel",
            "nrpa",
            "nrpa_core",
            "nrpa_distributed",
            "nrpa_options",
            "nrpa_state",
        ),
        "mcts": ("tree", "uct", "puct", "puct_eval", "puct_batch", "puct_batch_core", "presets"),
        "parallel": ("pools", "rounds", "race"),
    }.items()
    for old in olds
}
MOVED.update(
    {
        "agents.alphazero_net": "agents.alphazero.net",
        "agents.alphazero_checkpoint": "agents.alphazero.checkpoint",
    }
)


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a module under its earlier name (:data:`MOVED`): the same module object."""

    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec):
        warnings.warn(f"{spec.name} moved to {MOVED[spec.name]}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module) -> None:
        pass


if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
    sys.meta_path.append(_Moved())
