"""mc-envs: solve puzzles, verify and replay records, play the games, match agents.

Games, their names and flags come from one table (mc_envs.registry.GAMES). Shipped records and
positions are taken by name where a file is (mc-envs verify rosin82, --board samegame3); mc-envs
records lists them. Benchmarks are scripts of the source tree (python benchmarks/NAME.py).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from mc_envs.cli.games import add_game_flags, env_kwargs, game_name
from mc_envs.cli.gtp_engine import add_parser as add_gtp_parser
from mc_envs.cli.input import NATURAL, POSITIVE_FLOAT, POSITIVE_INT, Parser, UsageError
from mc_envs.cli.nrpa import add_nrpa_flags
from mc_envs.cli.play import cmd_play
from mc_envs.cli.records import cmd_records, cmd_replay, cmd_verify
from mc_envs.cli.solve import cmd_solve
from mc_envs.registry import find, names

if TYPE_CHECKING:
    from mc_envs.cli.input import Subparsers


def cmd_warmup(args: argparse.Namespace) -> int:
    from mc_envs.agents.warmup import warm_here

    if args.address is None:
        warm_here(say=lambda text: print(text, flush=True))
        return 0
    from mc_envs.agents.parallel.pools import warm_cluster

    for report in warm_cluster(args.address, warm_here):
        print(report)
    return 0


def cmd_arena(args: argparse.Namespace) -> int:
    from mc_envs.cli.arena import arena

    kwargs = env_kwargs(args, find(args.game))
    if args.komi is not None:
        if find(args.game).env_id != "mc_envs/Go-v0":
            raise UsageError(f"--komi: Go's; {args.game} has none")
        kwargs["komi"] = args.komi
    try:
        arena(
            args.game,
            args.agent_a,
            args.agent_b,
            args.games,
            seed=args.seed,
            iterations=args.iterations,
            time=args.time,
            progress=not args.quiet,
            sgf_dir=args.sgf_dir,
            env_kwargs=kwargs,
            resume=args.resume,
            jobs=args.jobs,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        where = f"; {args.sgf_dir}/arena.json has the finished games (--resume)" * bool(
            args.sgf_dir
        )
        print(f"\ninterrupted{where}", file=sys.stderr)
        return 130
    return 0


def _add_solve(sub: Subparsers) -> None:
    """``mc-envs solve``."""
    solve = sub.add_parser("solve", help="search a puzzle, saving the best record as it improves")
    solve.add_argument("game", type=game_name(1), help=f"one of {names(players=1)}")
    add_game_flags(solve, players=1)
    solve.add_argument("--seed", type=int, default=None, help="reset seed (random boards, puzzles)")
    solve.add_argument("--algo", default="nmcs", choices=["nmcs", "nrpa", "uct"])
    solve.add_argument("--level", type=NATURAL, default=2)
    solve.add_argument("--policy", help="playout policy (default: the game's)")
    solve.add_argument("--agent-seed", type=int, default=0, help="seed of the search")
    solve.add_argument(
        "--time", type=POSITIVE_FLOAT, default=None, help="seconds (default: one complete search)"
    )
    solve.add_argument("--playouts", type=POSITIVE_INT, default=None, help="playout budget")
    solve.add_argument("--workers", type=POSITIVE_INT, default=1, help="processes (or Ray tasks)")
    solve.add_argument(
        "--parallel",
        default=None,
        choices=["root", "moves", "distributed", "race"],
        help="how workers share the search: independent searches (root), NMCS's top-level moves "
        "(moves), NRPA's top-level iterations (distributed), NRPA's race of the game's policies "
        "(race: each probes, the best --workers go on). Default: a race for NRPA with 2 or more "
        "workers, a budget and no --policy on a game that races its policies (SameGame), or "
        "with --heats above 1, else root",
    )
    solve.add_argument("--backend", default="local", choices=["local", "ray"])
    solve.add_argument("--address", help="Ray cluster address (backend ray)")
    solve.add_argument(
        "--checkpoint", help="save the search state to this JSON file every few seconds"
    )
    solve.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    add_nrpa_flags(solve)
    solve.add_argument("--out", default="solution.json")
    solve.add_argument("--quiet", action="store_true")
    solve.set_defaults(func=cmd_solve)


def _add_verify_and_warmup(sub: Subparsers) -> None:
    """``mc-envs verify`` and ``warmup``."""
    verify = sub.add_parser(
        "verify",
        help="replay a record (mc-envs solution, Morpion MSR or PentaSol, Go SGF), certify it",
    )
    verify.add_argument("file", help="a record file, or a shipped record's name (mc-envs records)")
    verify.add_argument("--variant", choices=["5D", "5T"], help="Morpion rules to check against")
    verify.set_defaults(func=cmd_verify)

    warmup = sub.add_parser("warmup", help="compile and cache the kernels and searches")
    warmup.add_argument(
        "--address", help="a Ray cluster: compile on every node (each keeps its own cache)"
    )
    warmup.set_defaults(func=cmd_warmup)


def _add_play(sub: Subparsers) -> None:
    """``mc-envs play``."""
    play = sub.add_parser(
        "play", help="play a game with the mouse in a window (render extra), or in the terminal"
    )
    play.add_argument("game", type=game_name(), help=f"one of {names()}")
    play.add_argument(
        "--vs", help="two-player opponent: an agent spec (uct[-preset], puct, random) or none"
    )
    play.add_argument("--second", action="store_true", help="two-player: let the opponent start")
    play.add_argument(
        "--terminal",
        action="store_true",
        help="two-player: play in the terminal, no window; q or end of input (Ctrl-D) leaves "
        "the game (exit 0), Ctrl-C at your move exits 130",
    )
    play.add_argument(
        "--iterations", type=POSITIVE_INT, help="the opponent's iterations per move (terminal)"
    )
    play.add_argument(
        "--time", type=POSITIVE_FLOAT, help="the opponent's seconds per move (terminal)"
    )
    play.add_argument("--seed", type=int, default=0, help="reset seed (random boards, puzzles)")
    add_game_flags(play)
    play.add_argument(
        "--marks",
        default="none",
        choices=["none", "letters", "shapes"],
        help="SameGame: a letter or shape on each cell besides its colour",
    )
    play.add_argument("--sgf", help="Go: save the game as SGF to this file when it ends")
    play.set_defaults(func=cmd_play)


def _add_replay_and_records(sub: Subparsers) -> None:
    """``mc-envs replay`` and ``records``."""
    replay = sub.add_parser(
        "replay", help="watch a record in a window, or export it as GIF, MP4 or PNG"
    )
    replay.add_argument(
        "file",
        help="an mc-envs solution record, a Morpion MSR/PentaSol record, a Go SGF, or a shipped "
        "record's name (mc-envs records)",
    )
    replay.add_argument(
        "--gif", help="write an animated GIF, one frame per move plus the start (video extra)"
    )
    replay.add_argument("--mp4", help="write an MP4 video (video extra)")
    replay.add_argument(
        "--png",
        help="write the final position, or every frame into a folder (render extra alone)",
    )
    replay.add_argument("--fps", type=POSITIVE_FLOAT, default=4, help="moves per second")
    replay.add_argument(
        "--variant", choices=["5D", "5T"], help="Morpion rules if the file does not say"
    )
    replay.set_defaults(func=cmd_replay)

    records = sub.add_parser(
        "records", help="list the shipped records and positions, taken by name where a file is"
    )
    records.set_defaults(func=cmd_records)


def _add_arena(sub: Subparsers) -> None:
    """``mc-envs arena``."""
    arena = sub.add_parser("arena", help="two agents play both colours; wins/draws/losses")
    arena.add_argument("game", type=game_name(2), help=f"one of {names(players=2)}")
    arena.add_argument(
        "agent_a",
        help="an agent spec: uct[-preset], puct[-preset|-heuristic], random, gtp:COMMAND; "
        "options after a colon: uct:iterations=3000,reuse=false",
    )
    arena.add_argument("agent_b")
    arena.add_argument("--games", type=POSITIVE_INT, default=20)
    arena.add_argument("--iterations", type=POSITIVE_INT, help="iterations per move of tree agents")
    arena.add_argument("--time", type=POSITIVE_FLOAT, help="seconds per move of tree agents")
    arena.add_argument("--seed", type=int, default=0)
    arena.add_argument("--quiet", action="store_true", help="no line per game")
    arena.add_argument(
        "--sgf-dir",
        help="Go: write each game as DIR/game-N.sgf, and the match's record as DIR/arena.json",
    )
    arena.add_argument(
        "--resume", action="store_true", help="continue the match recorded in --sgf-dir"
    )
    arena.add_argument(
        "--jobs", type=POSITIVE_INT, default=1, help="games at a time, in worker processes"
    )
    arena.add_argument("--komi", type=float, help="Go: White's komi (default 7.5)")
    add_game_flags(arena, players=2)
    arena.set_defaults(func=cmd_arena)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``mc-envs`` (its help is plain text: the description is this
    module's docstring)."""
    parser = Parser(prog="mc-envs", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_solve, _add_verify_and_warmup, _add_play, _add_replay_and_records, _add_arena):
        add(sub)
    add_gtp_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mc-envs``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:  # an optional extra that a command reached deeper down
        if "pip install" not in str(exc):
            raise
        print(f"error: mc-envs {args.command}: {exc}", file=sys.stderr)
        return 2
