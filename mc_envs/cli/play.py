"""``mc-envs play``: a game in a window (the render extra) or, two-player, in the terminal.

The command builds the agents the window plays with: the opponent by name (``--vs``, through
:mod:`mc_envs.opponents`) and, in a puzzle, the hint, so that :mod:`mc_envs.render` never
imports the planners (docs/contributing.md, the layers).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from mc_envs.cli.games import env_kwargs
from mc_envs.cli.input import UsageError, need
from mc_envs.registry import find, names

if TYPE_CHECKING:
    import gymnasium as gym


class PuzzleHint:
    """The hint of the play window in a puzzle: the first move of the best sequence an NMCS level 1
    search finds in ``playouts`` playouts.

    Args:
        playouts: the search's playout budget.
    """

    def __init__(self, playouts: int = 2000) -> None:
        self.playouts = int(playouts)

    def act(self, env: gym.Env) -> int:
        """The hinted action (``env`` left as it was)."""
        from mc_envs.agents import NMCS

        return int(NMCS(level=1, seed=0).search(env, playouts=self.playouts).actions[0])


def _play_in_terminal(args: argparse.Namespace, vs: str | None) -> int:
    from mc_envs.cli.two_player import play_terminal

    game = find(args.game)
    if game.players != 2:
        raise UsageError(f"--terminal: only {names(players=2)} are played in the terminal")
    vs = "random" if vs in (None, "none") else vs
    try:
        play_terminal(
            args.game,
            vs,
            args.iterations,
            args.time,
            human_player=1 if args.second else 0,
            seed=args.seed,
            sgf=args.sgf,
            env_kwargs=env_kwargs(args, game),
        )
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except ValueError as exc:  # an unknown agent spec
        raise UsageError(f"--vs {vs}: {exc}") from None
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    """``mc-envs play``: exit 0 when the window closes (130 after Ctrl-C in the terminal)."""
    game = find(args.game)
    vs = game.opponent if args.vs is None else args.vs
    if args.sgf and game.name != "go":
        raise UsageError(f"--sgf: SGF records are Go's; {game.name} has none")
    if args.terminal:
        return _play_in_terminal(args, vs)
    need("mc-envs play", [("pygame", "render")])
    from mc_envs.render.play import run

    kwargs = env_kwargs(args, game)
    try:
        return run(
            args.game,
            vs=None if vs == "none" else vs,
            human_player=1 if args.second else 0,
            seed=args.seed,
            marks=args.marks,
            env_kwargs=kwargs,
            hint_agent=PuzzleHint() if game.players == 1 else None,
            sgf=args.sgf,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.game}: {exc}") from None
