"""Arena matches between two agents (``mc-envs arena``): resumable, N games at a time.

::

    from mc_envs.cli.arena import arena
    stats = arena("connect4", "uct-hard", "random", games=20)    # W/D/L with a 95% interval
    arena("go", "uct:iterations=3000", "gtp:/usr/games/gnugo --mode gtp --level 10",
          games=200, sgf_dir="match", resume=True, jobs=2)

Agent A moves first in the even-numbered games (game 1, 3 ... counting from 1). Game ``g``
(from 0) is reset with seed ``seed + g`` and its agents, made afresh from their specs, get seeds
``seed + 2 g`` (A) and ``seed + 2 g + 1`` (B): a game depends on its index only, so a resumed
match, or one played ``jobs`` at a time, plays the games it would have played in one go (for
agents reproducible by seed and iteration budget). With ``sgf_dir`` (Go), every game is saved
there as SGF and the match's record, ``arena.json`` (:mod:`mc_envs.cli.arena_state`), is rewritten
after each game; ``resume`` continues it. Go games are scored by us (Tromp-Taylor, after the two
passes); a GTP side's own ``final_score`` is recorded beside, and the summary counts the games
where it names another winner.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time as _time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO, cast

import gymnasium as gym

from mc_envs.cli.arena_pool import play_in_workers
from mc_envs.cli.arena_state import (
    GameEntry,
    GoScore,
    MatchConfig,
    Record,
    Summary,
    Tally,
    open_record,
)
from mc_envs.cli.two_player import (
    check_sgf,
    game_id,
    make_agent,
    play_game,
    save_sgf,
    wilson_interval,
)

if TYPE_CHECKING:
    from mc_envs.envs.go import GoEnv
    from mc_envs.envs.two_player import TwoPlayerEnv
    from mc_envs.opponents import Player

GO = "mc_envs/Go-v0"
GO_KOMI = 7.5  # the arena's komi for Go unless one is given (Go-v0's default too)
SIDES = ("A", "B")


class Match(NamedTuple):
    """What decides a match's games (picklable: workers get it).

    Attributes:
        env_id: the game's env id.
        env_kwargs: the env's keyword arguments (Go: ``size`` and ``komi`` always).
        agent_a, agent_b: the agents' specs (or an agent object's class name).
        seed: the match's seed (see the module docstring).
        iterations, time: a budget per move for both agents (None: the specs').
    """

    env_id: str
    env_kwargs: dict[str, object]
    agent_a: str
    agent_b: str
    seed: int
    iterations: int | None
    time: float | None

    def config(self, games: int) -> MatchConfig:
        """The config of a match record (:mod:`mc_envs.cli.arena_state`)."""
        return cast(MatchConfig, {**self._asdict(), "games": games})  # fields: a test holds them


@functools.cache
def _env(env_id: str, kwargs: tuple) -> TwoPlayerEnv:
    """One strict env of the game per process (games run one after another in a process)."""
    return cast("TwoPlayerEnv", gym.make(env_id, illegal_action="raise", **dict(kwargs)).unwrapped)


def _close(agent: Player) -> None:
    from mc_envs.agents.gtp_player import GtpPlayer

    if isinstance(agent, GtpPlayer):
        agent.close()


def play_one(match: Match, index: int, *, agents: tuple = (None, None), sgf_dir: str | None = None,
             width: int = 1) -> GameEntry:  # fmt: skip
    """Plays game ``index`` of a match and returns its entry (see :mod:`mc_envs.cli.arena_state`).

    Args:
        match: the match.
        index: the game, from 0: its seeds and colours follow from it.
        agents: agent objects ``(A, B)`` to use (and keep), None for a side whose agent the game
            makes from its spec, and closes (a GTP engine is ended) however the game ends.
        sgf_dir: Go: the folder of the game's SGF file, ``game-<index + 1>.sgf``.
        width: the game numbers' width in file names (zero-padded).
    """
    env = _env(match.env_id, tuple(sorted(match.env_kwargs.items())))
    made: list[Player] = []
    try:
        sides = []
        for i, (spec, given) in enumerate(zip((match.agent_a, match.agent_b), agents)):
            if given is None:
                seed = match.seed + 2 * index + i
                made.append(make_agent(spec, seed=seed, iterations=match.iterations,
                                       time_limit=match.time))  # fmt: skip
            sides.append(made[-1] if given is None else given)
        a_first = index % 2 == 0
        first, second = sides if a_first else sides[::-1]
        moves: list[int] = []
        start = _time.perf_counter()
        r0 = play_game(env, first, second, seed=match.seed + index, moves=moves)
        seconds = _time.perf_counter() - start
        go = match.env_id == GO
        scored = _go_result(cast("GoEnv", env), (first, second)) if go else _no_go_result()
        entry: GameEntry = {
            "index": index,
            "black": "A" if a_first else "B",
            "result": int(r0 if a_first else -r0),
            "moves": moves,
            **scored,
            "seconds": round(seconds, 3),
            "sgf": None,
        }
        if sgf_dir is not None:
            entry["sgf"] = sgf = f"game-{index + 1:0{width}d}.sgf"
            names = (match.agent_a, match.agent_b)[:: 1 if a_first else -1]
            save_sgf(Path(sgf_dir) / sgf, env, moves, *names)
        return entry
    finally:
        for agent in made:
            _close(agent)


def _no_go_result() -> GoScore:
    return {"score": None, "margin": None, "gtp_score": None, "disagree": None}


def _go_result(env: GoEnv, players: tuple) -> GoScore:
    """Our score of a finished Go game, and the first GTP side's ``final_score`` beside it."""
    from mc_envs.agents.gtp_player import GtpError, GtpPlayer
    from mc_envs.go_sgf import margin, parse_result, result_text

    ours = margin(env)
    out: GoScore = {"score": result_text(ours), "margin": ours, "gtp_score": None, "disagree": None}
    engine = next((p for p in players if isinstance(p, GtpPlayer)), None)
    if engine is not None:
        try:
            theirs = engine.final_score(env)
        except GtpError as exc:
            print(f"final_score not recorded: {exc}", file=sys.stderr)
            return out
        parsed = parse_result(theirs)
        winner = None if ours == 0 else int(ours < 0)
        out["gtp_score"], out["disagree"] = theirs, parsed is None or parsed[0] != winner
    return out


def summary(entries: list[GameEntry]) -> Summary:
    """Agent A's tally of finished games: ``wins``, ``draws``, ``losses``, ``score`` (wins +
    draws / 2, a game) and its 95% Wilson ``interval``; the same per colour (``as_black``,
    ``as_white``); ``disagreements`` of a GTP side's ``final_score`` with ours on the winner,
    out of ``compared``; ``seconds_per_game``."""

    def tally(games: list[GameEntry]) -> Tally:
        wins = sum(e["result"] > 0 for e in games)
        draws = sum(e["result"] == 0 for e in games)
        score = (wins + 0.5 * draws) / max(len(games), 1)
        lo, hi = wilson_interval(wins + 0.5 * draws, len(games))
        return {"games": len(games), "wins": wins, "draws": draws,
                "losses": len(games) - wins - draws, "score": score, "interval": (lo, hi)}  # fmt: skip

    compared = [e for e in entries if e["disagree"] is not None]
    seconds = sum(e["seconds"] for e in entries) / max(len(entries), 1)
    return {
        **tally(entries),
        "as_black": tally([e for e in entries if e["black"] == "A"]),
        "as_white": tally([e for e in entries if e["black"] == "B"]),
        "disagreements": sum(bool(e["disagree"]) for e in compared),
        "compared": len(compared),
        "seconds_per_game": seconds,
    }


def _print_summary(match: str, stats: Summary, go: bool, out: TextIO) -> None:
    words = ("as Black", "as White") if go else ("moving first", "moving second")

    def line(t: Tally) -> str:
        lo, hi = t["interval"]
        return (f"{t['games']} games: {t['wins']} wins, {t['draws']} draws, {t['losses']} losses; "
                f"score {t['score']:.3f} (95% CI {lo:.3f}-{hi:.3f})")  # fmt: skip

    print(f"{match}, {line(stats)}", file=out)
    if stats["games"]:
        print(f"  {words[0]}: {line(stats['as_black'])}", file=out)
        print(f"  {words[1]}: {line(stats['as_white'])}", file=out)
        print(f"  {stats['seconds_per_game']:.1f} s a game", end="", file=out)
        if stats["compared"]:
            print(f"; the GTP engine's final_score names another winner in "
                  f"{stats['disagreements']} of {stats['compared']} games", end="", file=out)  # fmt: skip
        print(file=out)


def _short(spec: str) -> str:
    """A spec as a game's line names it: a GTP engine by its program's name."""
    if not spec.startswith("gtp:"):
        return spec
    words = spec[4:].split()
    return f"gtp:{Path(words[0]).name}" if words else spec


def _game_line(entry: GameEntry, games: int, names: tuple[str, str]) -> str:
    """A finished game, in one line: number, who played which colour, result, the engine's
    count."""
    names = (_short(names[0]), _short(names[1]))
    first = names[SIDES.index(entry["black"])]
    second = names[1 - SIDES.index(entry["black"])]
    verdict = {1: f"{names[0]} wins", 0: "draw", -1: f"{names[1]} wins"}[int(entry["result"])]
    go = entry["score"] is not None
    colours = ("Black", "White") if go else ("first", "second")
    score = f" {entry['score']}," if go else ","
    text = (f"game {entry['index'] + 1}/{games}: {first} ({colours[0]}) vs {second} "
            f"({colours[1]}):{score} {verdict}")  # fmt: skip
    if entry["gtp_score"] is not None:
        agree = "disagrees" if entry["disagree"] else "agrees"
        text += f"; engine's final_score {entry['gtp_score']} ({agree})"
    return text + f"; {entry['seconds']:.1f} s"


def arena(
    game: str,
    agent_a: str | Player,
    agent_b: str | Player,
    games: int = 10,
    *,
    seed: int = 0,
    iterations: int | None = None,
    time: float | None = None,
    progress: bool = True,
    out: TextIO | None = None,
    sgf_dir: str | Path | None = None,
    env_kwargs: dict[str, object] | None = None,
    resume: bool = False,
    jobs: int = 1,
) -> Summary:
    """Plays ``games`` games between two agents, alternating who moves first, and reports.

    Args:
        game: a two-player game's name (``"connect4"``, ``"go"``) or env id.
        agent_a, agent_b: agent specs (:func:`mc_envs.agents.specs.parse`) or agent objects
            (kept across games; ``jobs`` 1 only).
        games: the number of games; ``agent_a`` moves first in the even-numbered ones.
        seed: game ``g`` (from 0) is reset with ``seed + g``; agent ``i`` (0 for A) made from a
            spec gets ``seed + 2 * g + i``.
        iterations, time: a budget per move for both agents made from specs.
        progress: print a line per finished game on stderr.
        out: where to print the summary (stdout by default).
        sgf_dir: Go: write game ``g`` (from 1) to ``sgf_dir/game-g.sgf`` and the match's record
            to ``sgf_dir/arena.json`` after each game (:mod:`mc_envs.cli.arena_state`).
        env_kwargs: the env's keyword arguments (Go's ``size``, ``komi``: 7.5 unless given).
        resume: continue the match recorded in ``sgf_dir`` (same config; ``games`` may grow):
            the games recorded are not played again.
        jobs: games played at a time, each in a worker process (spec strings only).

    Returns:
        :func:`summary` of agent A's games (``wins``, ``draws``, ``losses``, ``score``,
        ``interval`` ... over every recorded game of the match up to ``games``).

    Raises:
        ValueError: an unknown game or spec, options that do not go together, a record that
            cannot be used (:class:`mc_envs.cli.arena_state.ArenaStateError`); a failed game.
    """
    out = out or sys.stdout
    env_id = game_id(game)
    check_sgf(env_id, None if sgf_dir is None else str(sgf_dir), "--sgf-dir")
    given = tuple(None if isinstance(x, str) else x for x in (agent_a, agent_b))
    if resume and sgf_dir is None:
        raise ValueError("--resume: needs --sgf-dir DIR, the folder of the match's arena.json")
    if jobs > 1 and given != (None, None):
        raise ValueError("jobs above 1 take agent specs (strings), not agent objects")
    match = _match(env_id, agent_a, agent_b, seed, iterations, time, env_kwargs)
    record = None if sgf_dir is None else open_record(sgf_dir, match.config(games), resume=resume)
    done = {} if record is None else record.games
    _play_all(match, done, record, games, jobs, given, sgf_dir, progress)
    stats = summary(_upto(done, games))
    if record is not None:
        record.save(stats)
    _print_summary(f"{match.agent_a} vs {match.agent_b} at {game}", stats, env_id == GO, out)
    return stats


def _play_all(
    match: Match,
    done: dict[int, GameEntry],
    record: Record | None,
    games: int,
    jobs: int,
    given: tuple,
    sgf_dir: str | Path | None,
    progress: bool,
) -> None:
    """Plays the games of ``range(games)`` not ``done`` into it, the record saved after each."""
    pending = [g for g in range(games) if g not in done]
    names = (match.agent_a, match.agent_b)
    width = len(str(games))
    with contextlib.closing(_played(match, pending, jobs, given, sgf_dir, width)) as played:
        for entry in played:
            done[entry["index"]] = entry
            if record is not None:
                record.save(summary(_upto(done, games)))
            if progress:
                print(_game_line(entry, games, names), file=sys.stderr, flush=True)


def _upto(done: dict[int, GameEntry], games: int) -> list[GameEntry]:
    return [done[g] for g in sorted(done) if g < games]


def _match(
    env_id: str,
    agent_a: str | Player,
    agent_b: str | Player,
    seed: int,
    iterations: int | None,
    time: float | None,
    env_kwargs: dict[str, object] | None,
) -> Match:
    """The match, its agents named; Go's ``size`` and ``komi`` written out (komi 7.5 unless
    given)."""
    kwargs = dict(env_kwargs or {})
    if env_id == GO:
        kwargs.setdefault("komi", GO_KOMI)
        go = cast("GoEnv", _env(env_id, tuple(sorted(kwargs.items()))))
        kwargs |= {"size": int(go.size), "komi": float(go.komi)}
    name_a, name_b = (x if isinstance(x, str) else type(x).__name__ for x in (agent_a, agent_b))
    return Match(env_id, kwargs, name_a, name_b, seed, iterations, time)


def _played(
    match: Match,
    pending: list[int],
    jobs: int,
    given: tuple,
    sgf_dir: str | Path | None,
    width: int,
) -> Generator[GameEntry, None, None]:
    """The entries of the pending games as they finish (in worker processes when ``jobs`` > 1)."""
    folder = None if sgf_dir is None else str(sgf_dir)
    if jobs > 1 and len(pending) > 1:
        play = functools.partial(play_one, match, sgf_dir=folder, width=width)
        yield from play_in_workers(play, pending, jobs)
        return
    for index in pending:
        yield play_one(match, index, agents=given, sgf_dir=folder, width=width)
