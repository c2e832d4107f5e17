"""The ``mc-envs`` command: solve, verify, warmup (and the subcommands later issues add)."""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path
from typing import Any

# game name on the command line -> (env id, kwargs builder)
GAMES = {
    "samegame": "mc_envs/SameGame-v0",
    "morpion5d": "mc_envs/MorpionSolitaire5D-v0",
    "morpion5t": "mc_envs/MorpionSolitaire5T-v0",
    "sudoku": "mc_envs/Sudoku-v0",
    "leftmove": "mc_envs/LeftMove-v0",
    "leftmostpath": "mc_envs/LeftmostPath-v0",
}


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


def _env_kwargs(args: argparse.Namespace) -> dict:
    kwargs: dict[str, Any] = {}
    if args.position is not None:
        kwargs["position"] = args.position
    if args.board is not None:
        try:
            kwargs["board"] = Path(args.board).read_text()
        except OSError as exc:
            raise UsageError(f"{args.board}: cannot read: {exc.strerror}") from None
    if args.size is not None:
        kwargs["size"] = args.size
    if args.puzzle is not None:
        path = Path(args.puzzle)
        kwargs["puzzle"] = path.read_text().strip() if path.is_file() else args.puzzle
    if args.depth is not None:
        kwargs["depth"] = args.depth
    return kwargs


def _make_agent(args: argparse.Namespace) -> Any:
    import agents

    parallel = {"workers": args.workers, "backend": args.backend, "address": args.address}
    common = {"seed": args.agent_seed, **parallel}
    if args.parallel != "root" and args.algo == "uct":
        raise UsageError(f"--parallel {args.parallel}: UCT has root parallelism only")
    if args.parallel != "root":
        common["parallel"] = args.parallel
    try:
        if args.algo == "nmcs":
            return agents.NMCS(level=args.level, policy=args.policy, **common)
        if args.algo == "nrpa":
            return agents.NRPA(level=args.level, policy=args.policy, **common)
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

    env_id = GAMES[args.game]
    try:
        env_kwargs = _env_kwargs(args)
        env = gym.make(env_id, illegal_action="raise", **env_kwargs)  # planners stay strict
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.game}: {exc}") from None
    env.reset(seed=args.seed)
    agent = _make_agent(args)
    params = dict(agent.params)
    if params.get("policy", "") is None:
        params["policy"] = env.unwrapped.default_policy
    out = Path(args.out)
    saved = {"score": None}

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
        write_record(out, record)
        saved["score"] = score

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
    if args.game == "sudoku" and time_limit is None and args.playouts is None:
        time_limit = 3600.0  # restart until the grid is solved (max_score), as in the paper
    try:
        extra = {}
        if args.checkpoint:
            if "checkpoint" not in inspect.signature(agent.search).parameters:
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
    print(
        f"score {result.score:g} in {len(result.actions)} moves ({result.playouts:,} playouts, "
        f"{result.seconds:.1f} s, stopped: {result.stopped}); record written to {out}"
    )
    if args.game == "sudoku":
        from mc_envs.games.sudoku import format_grid

        for action in result.actions:
            env.step(action)
        state = "solved" if env.unwrapped.solved else "not solved"
        print(f"{state}:\n{format_grid(env.unwrapped.grid)}")
    return 130 if result.stopped == "interrupt" else 0


def _is_morpion_record(path: str) -> bool:
    """MSR JSON (a "moves" list and no mc-envs "format") or PentaSol text (not JSON)."""
    import json

    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return False
    if not text.lstrip().startswith("{"):
        return bool(text.strip())
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(doc, dict) and "format" not in doc and "moves" in doc


def cmd_verify(args: argparse.Namespace) -> int:
    from mc_envs.records import RecordError, read_record, verify_record

    if _is_morpion_record(args.file):
        from mc_envs import morpion_records

        try:
            record = morpion_records.read_record(args.file)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        variant = args.variant or record.variant or "5T"
        try:
            score = morpion_records.verify_record(args.file, variant=variant)
        except ValueError as exc:
            print(f"{exc}", file=sys.stderr)
            return 1
        print(f"{args.file}: certified: Morpion {variant} record of {score} moves")
        return 0
    try:
        record = read_record(args.file)
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    verdict = verify_record(record)
    print(f"{args.file}: {verdict.message}", file=sys.stdout if verdict.ok else sys.stderr)
    return 0 if verdict.ok else 1


def cmd_warmup(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import mc_envs
    from agents import NMCS, NRPA, UCT
    from mc_envs._numba import cache_dir

    print(f"numba cache: {cache_dir()}")
    for env_id in sorted(mc_envs.ENVS):
        start = time.perf_counter()
        env = gym.make(env_id)
        env.reset(seed=0)
        UCT().search(env, iterations=2)
        if getattr(env.unwrapped.kernel, "player", None) is None:  # puzzles
            for level in range(args.levels + 1):
                NMCS(level=level).search(env, playouts=1)
            for level in range(1, args.levels + 1):
                NRPA(level=level).search(env, playouts=1)
        print(f"{env_id}: ready in {time.perf_counter() - start:.1f} s")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    if args.terminal:
        if args.game not in ("tictactoe", "connect4"):
            raise UsageError(
                f"--terminal: only tictactoe and connect4 are played in the terminal, not {args.game}"
            )
        from mc_envs.two_player_cli import play_terminal

        vs = "random" if args.vs == "none" else args.vs
        play_terminal(
            args.game,
            vs,
            args.iterations,
            args.time,
            human_player=1 if args.second else 0,
            seed=args.seed,
        )
        return 0
    from render.play import run

    kwargs: dict[str, Any] = {}
    if args.position is not None:
        kwargs["position"] = args.position
    if args.depth is not None:
        kwargs["depth"] = args.depth
    vs = None if args.vs == "none" else args.vs
    try:
        return run(
            args.game,
            vs=vs,
            human_player=1 if args.second else 0,
            seed=args.seed,
            marks=args.marks,
            env_kwargs=kwargs,
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.game}: {exc}") from None


def cmd_replay(args: argparse.Namespace) -> int:
    from render import replay

    try:
        game = replay.load(args.file, variant=args.variant)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.gif or args.mp4 or args.png:
        written = replay.export(game, gif=args.gif, mp4=args.mp4, png=args.png, fps=args.fps)
        for kind, n in written.items():
            out = getattr(args, kind)
            print(f"{out}: {n} frame(s) ({kind}) of {game.title}, {len(game)} moves")
        return 0
    return replay.view(game, fps=args.fps)


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
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0


BENCHMARKS = {
    "samegame": "samegame_bench.py",
    "samegame-standard": "samegame_standard.py",
    "morpion": "morpion_bench.py",
    "morpion-records": "morpion_records.py",
    "sudoku": "sudoku_bench.py",
    "abstract": "abstract_theory.py",
    "two-player": "two_player_bench.py",
    "render": "render_bench.py",
}


def cmd_bench(args: argparse.Namespace) -> int:
    import runpy

    script = Path(__file__).resolve().parent.parent / "benchmarks" / BENCHMARKS[args.name]
    if not script.exists():
        raise UsageError(
            f"bench {args.name}: {script} not found (benchmarks ship with the source tree)"
        )
    saved, sys.argv = sys.argv, [str(script), *args.args]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``mc-envs``."""
    parser = argparse.ArgumentParser(prog="mc-envs", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    solve = sub.add_parser("solve", help="search a puzzle, saving the best record as it improves")
    solve.add_argument("game", choices=sorted(GAMES))
    where = solve.add_mutually_exclusive_group()
    where.add_argument("--position", type=int, help="SameGame standard position 1..20")
    where.add_argument("--board", help="SameGame board file (one row a line, digits)")
    solve.add_argument("--seed", type=int, default=None, help="reset seed (random boards, puzzles)")
    solve.add_argument("--size", type=int, help="Sudoku size (9 or 16)")
    solve.add_argument("--puzzle", help="Sudoku puzzle text or file")
    solve.add_argument("--depth", type=int, help="depth of LeftMove / LeftmostPath")
    solve.add_argument("--algo", default="nmcs", choices=["nmcs", "nrpa", "uct"])
    solve.add_argument("--level", type=int, default=2)
    solve.add_argument("--policy", default=None, help="playout policy name (default: the game's)")
    solve.add_argument("--agent-seed", type=int, default=0, help="seed of the search")
    solve.add_argument(
        "--time", type=float, default=None, help="seconds (default: one complete search)"
    )
    solve.add_argument("--playouts", type=int, default=None, help="playout budget")
    solve.add_argument("--workers", type=int, default=1, help="processes (or Ray tasks)")
    solve.add_argument(
        "--parallel",
        default="root",
        choices=["root", "moves", "distributed"],
        help="how workers share the search: independent searches (root), NMCS's top-level moves "
        "(moves), NRPA's top-level iterations (distributed)",
    )
    solve.add_argument("--backend", default="local", choices=["local", "ray"])
    solve.add_argument("--address", help="Ray cluster address (backend ray)")
    solve.add_argument(
        "--checkpoint", help="save the search state to this JSON file every few seconds"
    )
    solve.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    solve.add_argument("--out", default="solution.json")
    solve.add_argument("--quiet", action="store_true")
    solve.set_defaults(func=cmd_solve)

    verify = sub.add_parser(
        "verify", help="replay a record (mc-envs solution, Morpion MSR or PentaSol) and certify it"
    )
    verify.add_argument("file")
    verify.add_argument("--variant", choices=["5D", "5T"], help="Morpion rules to check against")
    verify.set_defaults(func=cmd_verify)

    warmup = sub.add_parser("warmup", help="compile and cache the kernels and searches")
    warmup.add_argument("--levels", type=int, default=2, help="NMCS and NRPA levels to compile")
    warmup.set_defaults(func=cmd_warmup)

    play = sub.add_parser("play", help="play a game with the mouse in a window")
    play.add_argument(
        "game",
        choices=[
            "samegame",
            "morpion5d",
            "morpion5t",
            "sudoku",
            "sudoku16",
            "tictactoe",
            "connect4",
            "leftmove",
            "leftmostpath",
        ],
    )
    play.add_argument(
        "--vs", default="uct", help="two-player opponent: uct[-preset], puct, random, none"
    )
    play.add_argument("--second", action="store_true", help="two-player: let the opponent start")
    play.add_argument(
        "--terminal", action="store_true", help="two-player: play in the terminal, no window"
    )
    play.add_argument(
        "--iterations", type=int, help="the opponent's iterations per move (terminal)"
    )
    play.add_argument("--time", type=float, help="the opponent's seconds per move (terminal)")
    play.add_argument("--seed", type=int, default=0, help="reset seed (random boards, puzzles)")
    play.add_argument("--position", type=int, help="SameGame standard position 1..20")
    play.add_argument("--depth", type=int, help="depth of LeftMove / LeftmostPath")
    play.add_argument(
        "--marks",
        default="none",
        choices=["none", "letters", "shapes"],
        help="SameGame: a letter or shape on each cell besides its colour",
    )
    play.set_defaults(func=cmd_play)

    replay = sub.add_parser("replay", help="watch a record, or export it as GIF / MP4 / PNG")
    replay.add_argument("file", help="an mc-envs solution record or a Morpion MSR/PentaSol record")
    replay.add_argument("--gif", help="write an animated GIF (one frame per move plus the start)")
    replay.add_argument("--mp4", help="write an MP4 video (needs imageio-ffmpeg)")
    replay.add_argument("--png", help="write the final position, or every frame into a folder")
    replay.add_argument("--fps", type=float, default=4, help="moves per second")
    replay.add_argument(
        "--variant", choices=["5D", "5T"], help="Morpion rules if the file does not say"
    )
    replay.set_defaults(func=cmd_replay)
    arena = sub.add_parser("arena", help="two agents play both colours; wins/draws/losses")
    arena.add_argument("game", choices=["tictactoe", "connect4"])
    arena.add_argument("agent_a", help="uct[-preset], puct, random, nmcs ...")
    arena.add_argument("agent_b")
    arena.add_argument("--games", type=int, default=20)
    arena.add_argument("--iterations", type=int, help="iterations per move of tree agents")
    arena.add_argument("--time", type=float, help="seconds per move of tree agents")
    arena.add_argument("--seed", type=int, default=0)
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.set_defaults(func=cmd_arena)

    bench = sub.add_parser("bench", help="run a benchmark from the source tree's benchmarks/")
    bench.add_argument("name", choices=sorted(BENCHMARKS))
    bench.add_argument("args", nargs=argparse.REMAINDER, help="passed to the benchmark script")
    bench.set_defaults(func=cmd_bench)
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


if __name__ == "__main__":
    sys.exit(main())
