"""Named difficulties for the tree searches: an iteration budget each (stopping early plays weaker).

Used by ``UCT.from_preset(name)``, ``PUCT.from_preset(name)``, the env option
``opponent="uct-<name>"`` and the ``play``/``arena`` commands.
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, int] = {
    "beginner": 20,
    "easy": 100,
    "medium": 1_000,
    "hard": 5_000,
    "expert": 20_000,
    "master": 100_000,
}


# Named agents that are a full set of constructor keywords: the spec ``"uct-go"`` is
# ``UCT(**SPEC_PRESETS["uct-go"])`` (the key is the whole spec: ``"uct-<name>"`` or
# ``"puct-<name>"``). A new one is a line here; ``known()``, the opponents registry and
# ``mc-envs arena`` pick it up, and ``"uct-go:rave=500"`` overrides one of its keywords.
SPEC_PRESETS: dict[str, dict[str, Any]] = {}


def preset_iterations(name: str) -> int:
    """The iteration budget of a named difficulty.

    Raises:
        ValueError: an unknown name.
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; use one of {list(PRESETS)}") from None
