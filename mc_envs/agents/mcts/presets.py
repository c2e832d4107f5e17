"""Named difficulties for the tree searches: an iteration budget each (stopping early plays weaker).

Used by ``UCT.from_preset(name)``, ``PUCT.from_preset(name)``, the env option
``opponent="uct-<name>"`` and the ``play``/``arena`` commands.
"""

from __future__ import annotations

PRESETS: dict[str, int] = {
    "beginner": 20,
    "easy": 100,
    "medium": 1_000,
    "hard": 5_000,
    "expert": 20_000,
    "master": 100_000,
}


def preset_iterations(name: str) -> int:
    """The iteration budget of a named difficulty.

    Raises:
        ValueError: an unknown name.
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; use one of {list(PRESETS)}") from None
