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


# A constructor keyword's value as a spec gives it (mc_envs.agents.specs.option_value).
OptionValue = bool | int | float | str | None

# Named agents that are a full set of constructor keywords: the spec ``"uct-go"`` is
# ``UCT(**SPEC_PRESETS["uct-go"])`` (the key is the whole spec: ``"uct-<name>"`` or
# ``"puct-<name>"``). A new one is a line here; ``known()``, the opponents registry and
# ``mc-envs arena`` pick it up, and ``"uct-go:rave=500"`` overrides one of its keywords.
SPEC_PRESETS: dict[str, dict[str, OptionValue]] = {
    # Go (issue 43's ladder): MoGo's playouts, RAVE with Gelly and Silver's hand schedule and no
    # UCB term (as MoGo), their heuristic prior, the tree kept between moves. 50,000 playouts a
    # move, at most 10 s: about 2.5 s a move on one core of a 2-core machine at 9x9, so that two
    # games (each side one core) run at a time; the same seed gives the same games wherever the
    # playouts, not the clock, end the search. On 13x13 and 19x19 the clock ends it.
    "uct-go": {
        "policy": "mogo",
        "rave": 1000.0,
        "c": 0.0,
        "knowledge": "mogo",
        "reuse": True,
        "iterations": 50_000,
        "time_limit": 10.0,
    },
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
