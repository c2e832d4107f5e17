"""NRPA's part of ``mc-envs solve``: its variant flags, the game's defaults, its portfolio."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mc_envs.cli.input import NATURAL, POSITIVE_FLOAT, POSITIVE_INT, UsageError
from mc_envs.core import unwrap

if TYPE_CHECKING:
    import gymnasium as gym


def add_nrpa_flags(solve: argparse.ArgumentParser) -> None:
    """Adds NRPA's variant flags to the ``solve`` parser (default None: the game's)."""
    nrpa = solve.add_argument_group(
        "NRPA's variants (default: the game's; see mc_envs.agents.nested.nrpa_options)"
    )
    nrpa.add_argument("--tau", type=POSITIVE_FLOAT, help="GNRPA's temperature")
    nrpa.add_argument("--bias", type=float, help="GNRPA's weight of the game's move bias")
    nrpa.add_argument("--stabilize", type=POSITIVE_INT, help="rollouts per level-1 iteration")
    nrpa.add_argument("--repeats", type=NATURAL, help="limited repetitions (0: off)")
    nrpa.add_argument("--codes", choices=["game", "action"], help="the policy's key")
    nrpa.add_argument(
        "--warm-start",
        dest="warm_start",
        help="a solution record to start from (a file, or a shipped record's name on Morpion)",
    )
    nrpa.add_argument(
        "--heats",
        type=POSITIVE_INT,
        help="a race's independent heats: the budget split, the best game kept (--parallel race)",
    )


NRPA_VARIANTS = ("tau", "bias", "stabilize", "repeats", "codes", "warm_start", "heats")
"""NRPA's variant options on the command line (mc_envs.agents.nested.nrpa_options, and a race's ``heats``);
None: the game's default."""


def nrpa_variants(  # NRPA's keywords, from argparse and the game: its constructor checks them
    args: argparse.Namespace, env: gym.Env
) -> dict[str, Any]:
    """NRPA's variant options: the game's (``nrpa_variants``), then those given as flags."""
    options: dict[str, Any] = dict(unwrap(env).nrpa_variants)
    for name in NRPA_VARIANTS:
        value = getattr(args, name, None)
        if value is not None:
            options[name] = value
    if isinstance(options.get("warm_start"), str):
        options["warm_start"] = record_actions(options["warm_start"], env)
    return options


def record_actions(value: str | Path, env: gym.Env) -> list[int]:
    """The actions of a record of the searched env (``--warm-start``): a solution record, or on
    Morpion an MSR/PentaSol record of the same rules (a file, or a shipped record's name)."""
    from mc_envs.cli.records import is_morpion_record, record_file
    from mc_envs.envs.morpion import MorpionSolitaireEnv
    from mc_envs.records import read_record

    path = record_file(str(value), "--warm-start")
    base = unwrap(env)
    if isinstance(base, MorpionSolitaireEnv) and is_morpion_record(path):
        from mc_envs import morpion_records

        try:
            record = morpion_records.read_record(path)
            if record.variant not in (None, base.variant):
                raise ValueError(f"a {record.variant} record, not {base.variant}")
            return morpion_records.record_actions(record.moves, base.size)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--warm-start {value}: {exc}") from None
    try:
        solution = read_record(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--warm-start {value}: {exc}") from None
    env_id = env.spec.id if env.spec is not None else None
    if solution["env_id"] != env_id:
        raise UsageError(f"--warm-start {value}: a record of {solution['env_id']}, not {env_id}")
    return [int(a) for a in solution["actions"]]


def nrpa_policy(args: argparse.Namespace, env: gym.Env) -> str | tuple[str, ...] | None:
    """``--policy``, else the game's ``nrpa_portfolio`` if the root workers suffice, else None."""
    names = tuple(unwrap(env).nrpa_portfolio)
    if args.policy is None and names and args.parallel == "root" and args.workers >= len(names):
        return names
    return args.policy


def nrpa_scheme(args: argparse.Namespace, env: gym.Env) -> str:
    """``--parallel``, else a race of the game's policies (``nrpa_race``: the 60 s ablation's
    best for SameGame) for NRPA with two or more workers, a budget and no ``--policy``, or with
    ``--heats`` above 1, else root parallelism."""
    if args.parallel is not None:
        return args.parallel
    if args.algo == "nrpa" and (getattr(args, "heats", None) or 1) > 1:
        return "race"
    budget = getattr(args, "time", None) is not None or getattr(args, "playouts", None) is not None
    races = bool(tuple(unwrap(env).nrpa_race))
    if args.algo == "nrpa" and args.policy is None and args.workers >= 2 and budget and races:
        return "race"
    return "root"
