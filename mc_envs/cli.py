"""mc-envs: solve puzzles, verify and replay records, play the games, match agents.

Games, their names and flags come from one table (mc_envs.registry.GAMES). Shipped records and
positions are taken by name where a file is (mc-envs verify rosin82, --board samegame3); mc-envs
records lists them. Benchmarks are scripts of the source tree (python benchmarks/NAME.py).
"""

from __future__ import annotations

import argparse
import inspect
import socket
import sys
import time
from pathlib import Path
from typing import Any

from mc_envs.cli_input import (
    NATURAL,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    Parser,
    UsageError,
    check_writable,
    need,
    read_input,
    save_elsewhere,
)
from mc_envs.cli_nrpa import (
    NRPA_VARIANTS,
    add_nrpa_flags,
    nrpa_policy,
    nrpa_scheme,
    nrpa_variants,
)
from mc_envs.cli_records import cmd_records, cmd_replay, cmd_verify, names_for, position_text
from mc_envs.gtp_engine import add_parser as add_gtp_parser
from mc_envs.registry import FLAGS, GAMES, Game, find, names


def _game_name(players: int | None = None) -> Any:
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


def _add_flags(parser: argparse.ArgumentParser, players: int | None = None) -> None:
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


def _env_kwargs(args: argparse.Namespace, game: Game) -> dict:
    """The env arguments of the game flags given, over the name's own (``sudoku16``: size 16)."""
    kwargs: dict[str, Any] = dict(game.cli)
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


def _make_agent(args: argparse.Namespace, env: Any) -> Any:
    from mc_envs import agents

    args.parallel = nrpa_scheme(args, env)
    parallel = {"workers": args.workers, "backend": args.backend, "address": args.address}
    common = {"seed": args.agent_seed, **parallel}
    if args.parallel != "root" and args.algo == "uct":
        raise UsageError(f"--parallel {args.parallel}: UCT has root parallelism only")
    if args.parallel != "root":
        common["parallel"] = args.parallel
    flags = [name for name in NRPA_VARIANTS if getattr(args, name, None) is not None]
    if flags and args.algo != "nrpa":
        raise UsageError(f"--{flags[0].replace('_', '-')} is an option of NRPA (--algo nrpa)")
    try:
        if args.algo == "nmcs":
            return agents.NMCS(level=args.level, policy=args.policy, **common)
        if args.algo == "nrpa":
            variants = nrpa_variants(args, env)
            policy = nrpa_policy(args, env)
            return agents.NRPA(level=args.level, policy=policy, **variants, **common)
        return agents.UCT(**common)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--algo {args.algo}: {exc}") from None


def _progress_line(elapsed: float, best: float, playouts: int) -> str:
    rate = playouts / elapsed if elapsed > 0 else 0.0
    return f"\r{elapsed:8.1f}s  best {best:10g}  playouts {playouts:>12,}  ({rate:,.0f}/s)  "


def cmd_solve(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import mc_envs  # noqa: F401
    from mc_envs.records import make_record, write_record

    game = find(args.game)
    env_id = game.env_id
    out = Path(args.out)
    check_writable(out, "--out")
    if args.checkpoint:
        check_writable(Path(args.checkpoint), "--checkpoint")
    env_kwargs = _env_kwargs(args, game)
    try:
        mode = {"render_mode": "ansi"} if game.until_solved else {}  # to show the end
        env = gym.make(env_id, illegal_action="raise", **env_kwargs, **mode)  # planners stay strict
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.game}: {exc}") from None
    env.reset(seed=args.seed)
    agent = _make_agent(args, env)
    root = args.workers > 1 and args.parallel == "root"
    first = f"{args.checkpoint}.w0" if root else args.checkpoint  # root: one file a worker
    if args.resume and args.checkpoint and not Path(first).is_file():
        raise UsageError(f"--resume: no checkpoint file {first}")
    params = dict(agent.params)
    if params.get("policy", "") is None:  # the game's: its race's policies, or its default
        race = args.parallel == "race"
        params["policy"] = list(env.unwrapped.nrpa_race) if race else env.unwrapped.default_policy
    saved: dict[str, Any] = {"score": None, "failed": None}

    def save(score: float, actions: list[int], seconds: float, playouts: int) -> None:
        record = make_record(
            env_id=env_id,
            env_kwargs=env_kwargs,
            reset_seed=args.seed,
            actions=actions,
            score=score,
            agent=agent.name,
            params=params,
            seconds=seconds,
            playouts=playouts,
        )
        try:
            write_record(out, record)
        except OSError as exc:  # the disk filled, the folder went: keep searching, save later
            saved["failed"] = (record, exc)
            return
        saved["score"], saved["failed"] = score, None

    def callback(progress: Any) -> bool:
        if not args.quiet:
            sys.stderr.write(
                _progress_line(progress.elapsed, progress.best_score, progress.playouts)
            )
            sys.stderr.flush()
        if progress.improved and (saved["score"] is None or progress.best_score > saved["score"]):
            save(progress.best_score, progress.best_actions, progress.elapsed, progress.playouts)
        return False

    if not args.quiet:
        sys.stderr.write(f"solving {env_id} {env_kwargs or ''} with {agent.name} {params}\n")
    time_limit = args.time
    if game.until_solved and time_limit is None and args.playouts is None:
        time_limit = 3600.0  # restart until solved (max_score), as in the paper
    try:
        extra = {}
        if args.checkpoint:
            if "checkpoint" not in inspect.signature(agent.run_search).parameters:
                raise UsageError(f"--checkpoint: {agent.name} does not save checkpoints")
            extra = {"checkpoint": args.checkpoint, "resume": args.resume}
        elif args.resume:
            raise UsageError("--resume needs --checkpoint FILE")
        result = agent.search(
            env, time_limit=time_limit, playouts=args.playouts, callback=callback, **extra
        )
    except ValueError as exc:
        if not args.checkpoint:
            raise
        raise UsageError(f"--checkpoint: {exc}") from None  # unreadable, another search's, ...
    except (
        KeyboardInterrupt
    ):  # outside the search loop (e.g. while compiling): nothing better to save
        sys.stderr.write("\ninterrupted\n")
        return 130
    if not args.quiet:
        sys.stderr.write(_progress_line(result.seconds, result.score, result.playouts) + "\n")
    if result.actions or saved["score"] is None:
        save(result.score, result.actions, result.seconds, result.playouts)
    if saved["failed"] is not None:
        return save_elsewhere(out, *saved["failed"])
    print(
        f"score {result.score:g} in {len(result.actions)} moves ({result.playouts:,} playouts, "
        f"{result.seconds:.1f} s, stopped: {result.stopped}); record written to {out}"
    )
    if game.until_solved:
        base = env.unwrapped
        for action in result.actions:
            base.step(action)
        state = "solved" if base.score >= base.max_score else "not solved"
        print(f"{state}:\n{env.render().rstrip()}")
    return 130 if result.stopped == "interrupt" else 0


def warm_here(levels: int, say: Any = None) -> str:
    """Compiles (or loads) every kernel and search of this machine into its numba cache; returns
    what it did, one line per env, each also given to ``say`` as it is done. Run on every node of
    a cluster by ``warmup --address``."""
    import gymnasium as gym

    import mc_envs
    from mc_envs._numba import cache_dir
    from mc_envs.agents import NMCS, NRPA, UCT

    lines: list[str] = []

    def line(text: str) -> None:
        lines.append(text)
        if say is not None:
            say(text)

    line(f"numba cache: {cache_dir()} (on {socket.gethostname()})")
    for env_id in sorted(mc_envs.ENVS):
        start = time.perf_counter()
        env = gym.make(env_id)
        env.reset(seed=0)
        UCT().search(env, iterations=2)
        if getattr(env.unwrapped.kernel, "player", None) is None:  # puzzles
            for level in range(levels + 1):
                NMCS(level=level).search(env, playouts=1)
            for level in range(1, levels + 1):
                NRPA(level=level).search(env, playouts=1)
        for threads in (1, 2):  # the vector env's serial and parallel steps
            vec = gym.make_vec(env_id, num_envs=2, threads=threads)
            vec.reset(seed=0)
            vec.step(vec.action_masks().argmax(1))
        line(f"{env_id}: ready in {time.perf_counter() - start:.1f} s")
    return "\n".join(lines)


def cmd_warmup(args: argparse.Namespace) -> int:
    if args.address is None:
        warm_here(args.levels, say=lambda text: print(text, flush=True))
        return 0
    from mc_envs.agents.parallel.pools import warm_cluster

    for report in warm_cluster(args.address, warm_here, args.levels):
        print(report)
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    game = find(args.game)
    vs = game.opponent if args.vs is None else args.vs
    if args.sgf and game.name != "go":
        raise UsageError(f"--sgf: SGF records are Go's; {game.name} has none")
    if args.terminal:
        if game.players != 2:
            raise UsageError(f"--terminal: only {names(players=2)} are played in the terminal")
        from mc_envs.two_player_cli import play_terminal

        vs = "random" if vs == "none" else vs
        try:
            play_terminal(
                args.game,
                vs,
                args.iterations,
                args.time,
                human_player=1 if args.second else 0,
                seed=args.seed,
                sgf=args.sgf,
                env_kwargs=_env_kwargs(args, game),
            )
        except KeyboardInterrupt:
            print("\ninterrupted", file=sys.stderr)
            return 130
        except ValueError as exc:  # an unknown agent spec
            raise UsageError(f"--vs {vs}: {exc}") from None
        return 0
    need("mc-envs play", [("pygame", "render")])
    from mc_envs.render.play import run

    kwargs = _env_kwargs(args, game)
    try:
        return run(
            args.game,
            vs=None if vs == "none" else vs,
            human_player=1 if args.second else 0,
            seed=args.seed,
            marks=args.marks,
            env_kwargs=kwargs,
            sgf=args.sgf,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.game}: {exc}") from None


def cmd_arena(args: argparse.Namespace) -> int:
    from mc_envs.two_player_cli import arena

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
            env_kwargs=_env_kwargs(args, find(args.game)),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``mc-envs`` (its help is plain text: the description is this
    module's docstring)."""
    parser = Parser(prog="mc-envs", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    solve = sub.add_parser("solve", help="search a puzzle, saving the best record as it improves")
    solve.add_argument("game", type=_game_name(1), help=f"one of {names(players=1)}")
    _add_flags(solve, players=1)
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

    verify = sub.add_parser(
        "verify",
        help="replay a record (mc-envs solution, Morpion MSR or PentaSol, Go SGF), certify it",
    )
    verify.add_argument("file", help="a record file, or a shipped record's name (mc-envs records)")
    verify.add_argument("--variant", choices=["5D", "5T"], help="Morpion rules to check against")
    verify.set_defaults(func=cmd_verify)

    warmup = sub.add_parser("warmup", help="compile and cache the kernels and searches")
    warmup.add_argument("--levels", type=NATURAL, default=2, help="NMCS and NRPA levels to compile")
    warmup.add_argument(
        "--address", help="a Ray cluster: compile on every node (each keeps its own cache)"
    )
    warmup.set_defaults(func=cmd_warmup)

    play = sub.add_parser(
        "play", help="play a game with the mouse in a window (render extra), or in the terminal"
    )
    play.add_argument("game", type=_game_name(), help=f"one of {names()}")
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
    _add_flags(play)
    play.add_argument(
        "--marks",
        default="none",
        choices=["none", "letters", "shapes"],
        help="SameGame: a letter or shape on each cell besides its colour",
    )
    play.add_argument("--sgf", help="Go: save the game as SGF to this file when it ends")
    play.set_defaults(func=cmd_play)

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

    arena = sub.add_parser("arena", help="two agents play both colours; wins/draws/losses")
    arena.add_argument("game", type=_game_name(2), help=f"one of {names(players=2)}")
    arena.add_argument(
        "agent_a", help="an agent spec: uct[-preset], puct[-preset|-heuristic], random"
    )
    arena.add_argument("agent_b")
    arena.add_argument("--games", type=POSITIVE_INT, default=20)
    arena.add_argument("--iterations", type=POSITIVE_INT, help="iterations per move of tree agents")
    arena.add_argument("--time", type=POSITIVE_FLOAT, help="seconds per move of tree agents")
    arena.add_argument("--seed", type=int, default=0)
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.add_argument("--sgf-dir", help="Go: write each game as DIR/game-N.sgf")
    _add_flags(arena, players=2)
    arena.set_defaults(func=cmd_arena)

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


if __name__ == "__main__":
    sys.exit(main())
