"""NRPA's variants from the literature, as one checked record of options.

Each option's default is plain NRPA (Rosin 2011); the search is bit-for-bit the same when every
option keeps its default.

- ``tau``, ``bias`` (GNRPA, Cazenave 2020): a move is sampled with probability proportional to
  ``exp(weight / tau + bias * h)``, where ``h`` is the game's heuristic value of the move
  (:attr:`mc_envs.core.Kernel.bias`; SameGame: the group's size minus two), and the adaptation
  step becomes ``alpha / tau``.
- ``stabilize`` (Stabilized NRPA, Cazenave, Sevestre and Toulemont 2020): every level-1 iteration
  runs this many rollouts with the same policy, then adapts once towards the best.
- ``repeats`` (restarts with limited repetitions): a level ends early once its child has returned
  the level's best score again this many times in a row; the top level then restarts from a zero
  policy
  (with a budget), so the time goes to new runs instead of a converged one.
- ``codes``: ``"game"`` keys the policy by the game's move code (SameGame: a Zobrist-style hash of
  the group's colour and cells), ``"action"`` by the action itself (the group's anchor cell).
- ``warm_start``: a sequence of actions from the searched position; the first run starts with it
  as the top level's best and its policy adapted once towards it (a restart starts cold).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

CODES = ("game", "action")


@dataclass(frozen=True)
class Variants:
    """NRPA's variant options (see the module docstring), checked on construction."""

    tau: float = 1.0
    bias: float = 0.0
    stabilize: int = 1
    repeats: int = 0
    codes: str = "game"
    warm_start: Sequence[int] | None = None  # kept as a tuple of ints

    def __post_init__(self) -> None:
        if not (isinstance(self.tau, (int, float)) and math.isfinite(self.tau) and self.tau > 0):
            raise ValueError(f"NRPA tau must be a finite number > 0, got {self.tau!r}")
        if not (isinstance(self.bias, (int, float)) and math.isfinite(self.bias)):
            raise ValueError(f"NRPA bias must be a finite number, got {self.bias!r}")
        for name, low in (("stabilize", 1), ("repeats", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"NRPA {name} must be an int >= {low}, got {value!r}")
        if self.codes not in CODES:
            raise ValueError(f"NRPA codes must be one of {CODES}, got {self.codes!r}")
        if self.warm_start is not None:
            seq = self.warm_start
            if not isinstance(seq, Sequence) or isinstance(seq, str):
                raise ValueError(f"NRPA warm_start must be a sequence of actions, got {seq!r}")
            if any(isinstance(a, bool) or not isinstance(a, int) or a < 0 for a in seq):
                raise ValueError("NRPA warm_start must hold non-negative int actions")
            object.__setattr__(self, "warm_start", tuple(int(a) for a in seq))

    def params(self) -> dict[str, object]:
        """The options that differ from plain NRPA (for records and checkpoints)."""
        out: dict[str, object] = {}
        for name, default in (
            ("tau", 1.0),
            ("bias", 0.0),
            ("stabilize", 1),
            ("repeats", 0),
            ("codes", "game"),
        ):
            value = getattr(self, name)
            if value != default:
                out[name] = value
        if self.warm_start is not None:
            out["warm_start"] = list(self.warm_start)
        return out
