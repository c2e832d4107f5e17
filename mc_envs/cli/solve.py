"""``mc-envs solve``: search a puzzle with a live progress line, saving the best record as it
improves (and on Ctrl-C)."""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mc_envs.cli.games import env_kwargs
from mc_envs.cli.input import UsageError, check_writable, save_elsewhere
from mc_envs.cli.nrpa import NRPA_VARIANTS, nrpa_policy, nrpa_scheme, nrpa_variants
from mc_envs.core import unwrap
from mc_envs.registry import Game, find

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.agents import NMCS, NRPA, UCT
    from mc_envs.agents.base import Progress, SearchOptions, SearchResult


def make_agent(args: argparse.Namespace, env: gym.Env) -> NMCS | NRPA | UCT:
    """The agent of ``--algo`` and its flags (``args.parallel`` set to the scheme it chose).

    Raises:
        UsageError: a flag the algorithm does not take, or a value it refuses.
    """
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


def progress_line(elapsed: float, best: float, playouts: int, compiling: bool = False) -> str:
    """The live line: elapsed seconds, best score, playouts and their rate, and whether the
    Python path stands in while numba compiles the search (a cold cache: a slower rate)."""
    rate = playouts / elapsed if elapsed > 0 else 0.0
    line = f"\r{elapsed:8.1f}s  best {best:10g}  playouts {playouts:>12,}  ({rate:,.0f}/s)  "
    return line + ("[Python path while numba compiles]  " if compiling else " " * 36)


class RecordSaver:
    """Writes the best record so far to ``--out``, atomically, each time the score improves; a
    failed write (a full disk) is kept, the search goes on, and the next save tries again."""

    def __init__(
        self,
        args: argparse.Namespace,
        env_id: str,
        kwargs: dict,
        agent: NMCS | NRPA | UCT,
        params: dict,
    ) -> None:
        self.args, self.env_id, self.kwargs, self.agent = args, env_id, kwargs, agent
        self.out = Path(args.out)
        self.params = params
        self.score: float | None = None
        self.failed: tuple[dict, OSError] | None = None

    def save(self, score: float, actions: list[int], seconds: float, playouts: int) -> None:
        """Writes one record (``failed`` holds it if the write fails)."""
        from mc_envs.records import make_record, write_record

        record = make_record(
            env_id=self.env_id,
            env_kwargs=self.kwargs,
            reset_seed=self.args.seed,
            actions=actions,
            score=score,
            agent=self.agent.name,
            params=self.params,
            seconds=seconds,
            playouts=playouts,
        )
        try:
            write_record(self.out, record)
        except OSError as exc:  # the disk filled, the folder went: keep searching, save later
            self.failed = (record, exc)
            return
        self.score, self.failed = score, None

    def callback(self, progress: Progress) -> bool:
        """The search's callback: the live line, and a save when the best score improved."""
        if not self.args.quiet:
            sys.stderr.write(
                progress_line(
                    progress.elapsed, progress.best_score, progress.playouts, progress.compiling
                )
            )
            sys.stderr.flush()
        if progress.improved and (self.score is None or progress.best_score > self.score):
            self.save(
                progress.best_score, progress.best_actions, progress.elapsed, progress.playouts
            )
        return False


def _make_env(args: argparse.Namespace, game: Game) -> tuple[gym.Env, dict]:
    import gymnasium as gym

    import mc_envs  # noqa: F401  (registers the ids)

    kwargs = env_kwargs(args, game)
    try:
        # the end is drawn; gym.make's keywords
        mode: dict[str, Any] = {"render_mode": "ansi"} if game.until_solved else {}
        env = gym.make(game.env_id, illegal_action="raise", **kwargs, **mode)  # planners: strict
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.game}: {exc}") from None
    env.reset(seed=args.seed)
    return env, kwargs


def _checkpointing(args: argparse.Namespace, agent: NMCS | NRPA | UCT) -> SearchOptions:
    """The search's checkpoint arguments, after the checks a search would make too late."""
    root = args.workers > 1 and args.parallel == "root"
    first = f"{args.checkpoint}.w0" if root else args.checkpoint  # root: one file a worker
    if args.resume and args.checkpoint and not Path(first).is_file():
        raise UsageError(f"--resume: no checkpoint file {first}")
    if not args.checkpoint:
        if args.resume:
            raise UsageError("--resume needs --checkpoint FILE")
        return {}
    if "checkpoint" not in inspect.signature(agent.run_search).parameters:
        raise UsageError(f"--checkpoint: {agent.name} does not save checkpoints")
    return {"checkpoint": args.checkpoint, "resume": args.resume}


def _recorded_params(
    args: argparse.Namespace, agent: NMCS | NRPA | UCT, env: gym.Env
) -> dict[str, object]:
    params = dict(agent.params)
    if params.get("policy", "") is None:  # the game's: its race's policies, or its default
        race = args.parallel == "race"
        params["policy"] = list(unwrap(env).nrpa_race) if race else unwrap(env).default_policy
    return params


def _report(result: SearchResult, game: Game, env: gym.Env, out: Path) -> None:
    print(
        f"score {result.score:g} in {len(result.actions)} moves ({result.playouts:,} playouts, "
        f"{result.seconds:.1f} s, stopped: {result.stopped}); record written to {out}"
    )
    if game.until_solved:
        base = unwrap(env)
        for action in result.actions:
            base.step(action)
        bound = base.max_score
        state = "solved" if bound is not None and base.score >= bound else "not solved"
        print(f"{state}:\n{str(env.render()).rstrip()}")


def cmd_solve(args: argparse.Namespace) -> int:
    """``mc-envs solve``: exit 0, 130 after Ctrl-C (the best record saved), 2 for bad input."""
    game = find(args.game)
    check_writable(Path(args.out), "--out")
    if args.checkpoint:
        check_writable(Path(args.checkpoint), "--checkpoint")
    env, kwargs = _make_env(args, game)
    agent = make_agent(args, env)
    extra = _checkpointing(args, agent)
    saver = RecordSaver(args, game.env_id, kwargs, agent, _recorded_params(args, agent, env))
    if not args.quiet:
        sys.stderr.write(f"solving {game.env_id} {kwargs or ''} with {agent.name} {saver.params}\n")
    time_limit = args.time
    if game.until_solved and time_limit is None and args.playouts is None:
        time_limit = 3600.0  # restart until solved (max_score), as in the paper
    try:
        result = agent.search(
            env, time_limit=time_limit, playouts=args.playouts, callback=saver.callback, **extra
        )
    except ValueError as exc:
        if not args.checkpoint:
            raise
        raise UsageError(f"--checkpoint: {exc}") from None  # unreadable, another search's, ...
    except KeyboardInterrupt:  # outside the search loop (compiling): nothing better to save
        sys.stderr.write("\ninterrupted\n")
        return 130
    if not args.quiet:
        sys.stderr.write(progress_line(result.seconds, result.score, result.playouts) + "\n")
    if result.actions or saver.score is None:
        saver.save(result.score, result.actions, result.seconds, result.playouts)
    if saver.failed is not None:
        return save_elsewhere(saver.out, *saver.failed)
    _report(result, game, env, saver.out)
    return 130 if result.stopped == "interrupt" else 0
