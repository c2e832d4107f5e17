"""The game arguments of every command: a game's name, its flags (``--position``, ``--size`` ...)
and the env arguments they make, all from the table of games (:data:`mc_envs.registry.GAMES`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mc_envs.cli.input import POSITIVE_INT, UsageError, read_input
from mc_envs.cli.records import names_for, position_text
from mc_envs.registry import FLAGS, GAMES, Game, find, names


def game_name(players: int | None = None) -> Callable[[str], str]:
    """argparse ``type=`` of a game argument: a name or alias of the games table."""

    def parse(text: str) -> str:
        try:
            game = find(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if players is not None and game.players != players:
            raise argparse.ArgumentTypeError(f"{text!r}: choose one of {names(players)}")
        return game.name

    return parse


def add_game_flags(parser: argparse.ArgumentParser, players: int | None = None) -> None:
    """The game flags of the table (``--position``, ``--size`` ...), each naming its games."""
    for flag, spec in FLAGS.items():
        users = [g.name for g in GAMES if flag in g.flags and players in (None, g.players)]
        if users:
            kind = POSITIVE_INT if spec.kind == "int" else str
            named = ", ".join(filter(None, (names_for(game, flag) for game in users)))
            named = f", or a shipped position's name: {named}" if named else ""
            parser.add_argument(
                f"--{flag}", type=kind, help=f"{spec.help} ({', '.join(users)}){named}"
            )


def env_kwargs(args: argparse.Namespace, game: Game) -> dict:
    """The env arguments of the game flags given, over the name's own (``sudoku16``: size 16)."""
    kwargs: dict[str, Any] = dict(game.cli)  # gym.make's keywords (EnvSpec.kwargs)
    for flag, spec in FLAGS.items():
        value = getattr(args, flag, None)
        if value is None:
            continue
        if flag not in game.flags:
            takes = " ".join(f"--{f}" for f in game.flags) or "no game flag"
            raise UsageError(f"--{flag}: {game.name} takes {takes}")
        named = position_text(value, flag, game.name) if spec.kind != "int" else None
        if named is not None:
            value = named
        elif spec.kind == "file":
            value = read_input(Path(value), f"--{flag}")
        elif spec.kind == "text":
            path = Path(value)
            value = read_input(path, f"--{flag}").strip() if path.is_file() else value
        kwargs[flag] = value
    return kwargs
