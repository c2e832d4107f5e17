"""Terminal play and arena matches for the two-player games (the ``mc-envs play`` / ``arena`` commands).

Plain functions, no argparse, so scripts and tests call them directly::

    from mc_envs.two_player_cli import arena, play_terminal
    stats = arena("connect4", "uct-hard", "random", games=20)   # prints W/D/L with a 95% interval
    play_terminal("tictactoe", vs="uct", iterations=2000)         # a human game in the terminal

Agent specs are those of :mod:`mc_envs.agents.specs` (``"random"``, ``"uct"``, ``"uct-hard"``,
``"puct-heuristic"`` ...); games are the two-player games of :data:`mc_envs.registry.GAMES`.
Agents live in :mod:`mc_envs.agents` and are imported only when these functions run.
"""

from __future__ import annotations

import math
import sys
import time as _time
from collections.abc import Callable
from typing import Any, TextIO

import gymnasium as gym


def game_id(game: str) -> str:
    """The env id of a two-player game name (``tictactoe``, ``connect4``, an alias) or id.

    Raises:
        ValueError: an unknown game or a puzzle.
    """
    from mc_envs.registry import find, names

    found = find(game)
    if found.players != 2:
        raise ValueError(f"{game!r} is not a two-player game; use one of {names(players=2)}")
    return found.env_id


def make_agent(
    spec: str, *, seed: int = 0, iterations: int | None = None, time_limit: float | None = None
) -> Any:
    """An agent from a spec string (:func:`mc_envs.agents.specs.parse`: ``"uct-hard"``, ``"random"`` ...).

    Args:
        spec: the agent spec.
        seed: the agent's seed.
        iterations, time_limit: a budget for the tree searches (overrides a preset).

    Raises:
        ValueError: an unknown spec, naming the known ones.
    """
    from mc_envs.agents.specs import parse

    return parse(spec, seed=seed, iterations=iterations, time_limit=time_limit)


def play_terminal(
    game: str,
    vs: str = "uct",
    iterations: int | None = None,
    time: float | None = None,
    *,
    human_player: int = 0,
    seed: int = 0,
    input_fn: Callable[[str], str] = input,
    out: TextIO | None = None,
) -> float:
    """A human against an agent in the terminal.

    Args:
        game: ``"tictactoe"`` or ``"connect4"`` (or an env id).
        vs: the agent spec of the opponent (see :func:`make_agent`).
        iterations, time: the opponent's budget per move (iterations, or seconds).
        human_player: 0 to move first (``X``), 1 to move second (``O``).
        seed: the opponent's seed.
        input_fn: reads the human's move (``input`` by default; a test passes its own).
        out: where to print (stdout by default).

    Returns:
        The human's result: +1 win, 0 draw, -1 loss (also when the human leaves with ``q`` or
        at the end of the input).

    Raises:
        KeyboardInterrupt: Ctrl-C (``mc-envs play --terminal`` exits 130).
    """
    out = out or sys.stdout
    env = gym.make(game_id(game), render_mode="ansi", illegal_action="raise").unwrapped
    env.reset(seed=seed)
    agent = make_agent(vs, seed=seed, iterations=iterations, time_limit=time)
    while len(env.legal_actions()):
        print(env.render(), file=out)
        if env.current_player == human_player:
            moves = " ".join(f"{a}={env.action_to_string(a)}" for a in env.legal_actions())
            try:
                text = input_fn(f"your move ({moves}; q to quit): ").strip()
            except EOFError:  # stdin closed (Ctrl-D, </dev/null): leave as q does
                print("\nend of input: game left unfinished", file=out)
                return -1.0
            if text.lower() in ("q", "quit", "exit"):
                print("bye", file=out)
                return -1.0
            try:
                env.step(int(text))
            except ValueError as exc:
                print(f"  {exc}", file=out)
            continue
        start = _time.perf_counter()
        a = agent.act(env)
        move = env.action_to_string(a)
        print(f"{vs} plays {a} = {move} ({_time.perf_counter() - start:.2f} s)", file=out)
        env.step(a)
    print(env.render(), file=out)
    r = float(env.returns()[human_player])
    print({1.0: "you win", 0.0: "draw", -1.0: "you lose"}[r], file=out)
    return r


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (draws may count as half successes)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def play_game(env: Any, first: Any, second: Any, seed: int = 0) -> float:
    """Plays one game between two agents (``first`` moves first); returns player 0's result."""
    env.reset(seed=seed)
    for agent in (first, second):
        if hasattr(agent, "reset"):
            agent.reset()
    players = (first, second)
    while len(env.legal_actions()):
        env.step(players[env.current_player].act(env))
    return float(env.returns()[0])


def arena(
    game: str,
    agent_a: str | Any,
    agent_b: str | Any,
    games: int = 10,
    *,
    seed: int = 0,
    iterations: int | None = None,
    time: float | None = None,
    progress: bool = True,
    out: TextIO | None = None,
) -> dict:
    """Plays ``games`` games between two agents, alternating who moves first, and reports.

    Args:
        game: ``"tictactoe"`` or ``"connect4"`` (or an env id).
        agent_a, agent_b: agent specs (see :func:`make_agent`) or agent objects.
        games: the number of games; ``agent_a`` moves first in the even-numbered ones.
        seed: agent ``i`` of game ``g`` gets seed ``seed + 2 * g + i`` (spec strings only).
        iterations, time: a budget per move for both tree agents (spec strings only).
        progress: show a progress bar on stderr.
        out: where to print the summary (stdout by default).

    Returns:
        ``{"wins", "draws", "losses"}`` for ``agent_a``, its ``score`` (wins + draws / 2, per game)
        and the 95% Wilson interval of the score in ``interval``.
    """
    out = out or sys.stdout
    env = gym.make(game_id(game), illegal_action="raise").unwrapped
    wins = draws = losses = 0
    start = _time.perf_counter()
    for g in range(games):
        a = (
            make_agent(agent_a, seed=seed + 2 * g, iterations=iterations, time_limit=time)
            if isinstance(agent_a, str)
            else agent_a
        )
        b = (
            make_agent(agent_b, seed=seed + 2 * g + 1, iterations=iterations, time_limit=time)
            if isinstance(agent_b, str)
            else agent_b
        )
        a_first = g % 2 == 0
        r0 = play_game(env, a, b, seed=seed + g) if a_first else play_game(env, b, a, seed=seed + g)
        r = r0 if a_first else -r0
        wins, draws, losses = wins + (r > 0), draws + (r == 0), losses + (r < 0)
        if progress:
            done = (g + 1) / games
            bar = "#" * int(30 * done) + "-" * (30 - int(30 * done))
            print(
                f"\r[{bar}] {g + 1}/{games}  W {wins} D {draws} L {losses}  "
                f"{_time.perf_counter() - start:.1f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
    if progress:
        print(file=sys.stderr)
    score = (wins + 0.5 * draws) / max(games, 1)
    lo, hi = wilson_interval(wins + 0.5 * draws, games)
    name_a = agent_a if isinstance(agent_a, str) else type(agent_a).__name__
    name_b = agent_b if isinstance(agent_b, str) else type(agent_b).__name__
    print(
        f"{name_a} vs {name_b} at {game}, {games} games: {wins} wins, {draws} draws, {losses} losses; "
        f"score {score:.3f} (95% CI {lo:.3f}-{hi:.3f})",
        file=out,
    )
    return {"wins": wins, "draws": draws, "losses": losses, "score": score, "interval": (lo, hi)}
