"""Agent specs: one parser for the names that play, arena, the terminal and ``opponent=`` accept.

A spec is ``"random"``, ``"uct"``, ``"puct"``, ``"uct-<preset>"`` or ``"puct-<preset>"`` (a named
difficulty of :data:`mc_envs.agents.mcts.presets.PRESETS`: beginner, easy, medium, hard, expert, master), or
``"puct-heuristic"`` (PUCT with Connect Four's heuristic prior), or ``"alphazero"`` (PUCT with the
shipped Connect Four network, :mod:`mc_envs.agents.alphazero`, 200 simulations a move). ``"uct"`` and
``"puct"`` alone are the ``medium`` difficulty.

Go also takes any GTP engine: ``"gtp:<command line>"``, e.g. ``"gtp:/usr/games/gnugo --mode gtp
--level 10"`` (:class:`mc_envs.agents.gtp_player.GtpPlayer`: the program is started at its first
move, without a shell, and ended when the agent is closed or collected; a time budget becomes its
``time_settings``, an iteration budget is ignored; ``resign`` makes it pass for the rest of the
game). Anything else raises ``ValueError`` naming the known specs.

:func:`register_opponents` puts every spec into :mod:`mc_envs.opponents`, where the envs'
``opponent=`` and the play window find them by name: :mod:`mc_envs.agents` calls it when imported,
and the entry point ``mc_envs.opponents`` of this distribution names it for a program that never
imports the agents.
"""

from __future__ import annotations

from typing import Any

from mc_envs import opponents
from mc_envs.agents.mcts.presets import PRESETS

KINDS = ("random", "uct", "puct")
PRIORS = ("heuristic",)
GTP = "gtp:"


def known() -> list[str]:
    """Every spec :func:`parse` accepts."""
    tree = [f"{kind}{suffix}" for kind in KINDS[1:] for suffix in ["", *(f"-{p}" for p in PRESETS)]]
    return ["random", *tree, *(f"puct-{p}" for p in PRIORS), "alphazero", "gtp:<command line>"]


def parse(
    spec: str, *, seed: int = 0, iterations: int | None = None, time_limit: float | None = None
) -> Any:
    """The agent (with ``act(env)``) of a spec.

    Args:
        spec: see the module docstring (case-insensitive).
        seed: the agent's seed.
        iterations, time_limit: a budget per move for the tree searches, replacing the preset's.

    Raises:
        ValueError: an unknown spec, naming the known ones.
    """
    if str(spec).startswith(GTP):
        from mc_envs.agents.gtp_player import GtpPlayer

        return GtpPlayer(str(spec)[len(GTP) :], time_limit=time_limit)
    from mc_envs.agents.mcts.puct import PUCT
    from mc_envs.agents.mcts.uct import UCT
    from mc_envs.agents.random_agent import RandomAgent

    if str(spec).lower() == "alphazero":
        from mc_envs.agents.alphazero import alphazero_agent, shipped_model

        sims = iterations if iterations is not None else 200
        return alphazero_agent(shipped_model(), sims=sims, seed=seed, time_limit=time_limit)
    kind, _, option = str(spec).lower().partition("-")
    if (
        kind not in KINDS
        or (kind == "random" and option)
        or (option and option not in PRESETS and not (kind == "puct" and option in PRIORS))
    ):
        raise ValueError(f"unknown agent {spec!r}; use one of {known()}")
    if kind == "random":
        return RandomAgent(seed=seed)
    kwargs: dict[str, Any] = {"seed": seed, "iterations": PRESETS.get(option, PRESETS["medium"])}
    if option in PRIORS:
        from mc_envs.agents.mcts.puct import connect_four_prior

        kwargs["prior"] = connect_four_prior
    if iterations is not None or time_limit is not None:
        kwargs["iterations"], kwargs["time_limit"] = iterations, time_limit
    return (UCT if kind == "uct" else PUCT)(**kwargs)


def _player(spec: str, *, seed: int) -> Any:
    return parse(spec, seed=seed)


def register_opponents() -> None:
    """Registers every spec of :func:`known` in :mod:`mc_envs.opponents` (``gtp:`` as a prefix)."""
    for name in known():
        opponents.register(GTP if name.startswith(GTP) else name, _player)
