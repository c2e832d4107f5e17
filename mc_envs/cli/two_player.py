"""Terminal play and arena matches for the two-player games (the ``mc-envs play`` / ``arena`` commands).

Plain functions, no argparse, so scripts and tests call them directly::

    from mc_envs.cli.two_player import play_terminal
    play_terminal("tictactoe", vs="uct", iterations=2000)         # a human game in the terminal

The arena's matches (:func:`mc_envs.cli.arena.arena`) play their games with :func:`play_game`.

Agent specs are those of :mod:`mc_envs.agents.specs` (``"random"``, ``"uct"``, ``"uct-hard"``,
``"puct-heuristic"`` ...); games are the two-player games of :data:`mc_envs.registry.GAMES`.
Agents live in :mod:`mc_envs.agents` and are imported only when these functions run.
"""

from __future__ import annotations

import math
import sys
import time as _time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

import gymnasium as gym

if TYPE_CHECKING:
    from mc_envs.envs.two_player import TwoPlayerEnv
    from mc_envs.opponents import Player


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
) -> Player:
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
    sgf: str | None = None,
    env_kwargs: dict[str, Any] | None = None,  # gym.make's keywords
) -> float:
    """A human against an agent in the terminal.

    Args:
        game: ``"tictactoe"`` or ``"connect4"`` (or an env id).
        vs: the agent spec of the opponent (see :func:`make_agent`).
        iterations, time: the opponent's budget per move (iterations, or seconds).
        human_player: 0 to move first (``X``), 1 to move second (``O``).
        seed: the opponent's seed.
        input_fn: reads the human's move (``input`` by default; a test passes its own), an
            action number or its name (``E5``, ``pass`` in Go).
        out: where to print (stdout by default).
        sgf: Go: the SGF file the game is saved to when play ends (``RE`` only if it is over).
        env_kwargs: the env's keyword arguments (Go's ``size``, ``komi`` ...).

    Returns:
        The human's result: +1 win, 0 draw, -1 loss (also when the human leaves with ``q`` or
        at the end of the input).

    Raises:
        KeyboardInterrupt: Ctrl-C (``mc-envs play --terminal`` exits 130).
    """
    out = out or sys.stdout
    env_id = game_id(game)
    check_sgf(env_id, sgf, "--sgf")
    made = gym.make(env_id, render_mode="ansi", illegal_action="raise", **(env_kwargs or {}))
    env = cast("TwoPlayerEnv", made.unwrapped)
    env.reset(seed=seed)
    agent = make_agent(vs, seed=seed, iterations=iterations, time_limit=time)
    actions: list[int] = []
    try:
        return _play_terminal(env, agent, vs, human_player, input_fn, out, actions)
    finally:
        if sgf is not None:
            names = ("human", vs) if human_player == 0 else (vs, "human")
            save_sgf(sgf, env, actions, *names)
            print(f"game saved to {sgf}", file=out)


def _play_terminal(
    env: TwoPlayerEnv,
    agent: Player,
    vs: str,
    human_player: int,
    input_fn: Callable[[str], str],
    out: TextIO,
    actions: list[int],
) -> float:
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
                action = _action_of(env, text)
                env.step(action)
                actions.append(action)
            except ValueError as exc:
                print(f"  {exc}", file=out)
            continue
        start = _time.perf_counter()
        a = agent.act(env)
        move = env.action_to_string(a)
        print(f"{vs} plays {a} = {move} ({_time.perf_counter() - start:.2f} s)", file=out)
        env.step(a)
        actions.append(int(a))
    print(env.render(), file=out)
    r = float(env.returns()[human_player])
    print({1.0: "you win", 0.0: "draw", -1.0: "you lose"}[r], file=out)
    return r


def _action_of(env: TwoPlayerEnv, text: str) -> int:
    """The action a person typed: its number, or its name (``E5``, ``pass``) among the legal
    moves."""
    if text.lstrip("-").isdigit():
        return int(text)
    for a in env.legal_actions():
        if env.action_to_string(int(a)).lower() == text.lower():
            return int(a)
    raise ValueError(f"{text!r} is neither an action number nor a legal move's name")


def check_sgf(env_id: str, path: str | None, option: str) -> None:
    """Refuses an SGF option for a game other than Go.

    Raises:
        ValueError: naming the option and the game.
    """
    if path is not None and env_id != "mc_envs/Go-v0":
        raise ValueError(f"{option}: SGF records are Go's; {env_id} has none")


def save_sgf(path: str | Path, env: gym.Env, actions: list[int], black: str, white: str) -> None:
    """Writes the Go game played on ``env`` as SGF (atomically); see :mod:`mc_envs.go_sgf`."""
    from mc_envs.go_sgf import save_game

    save_game(path, env, actions, black=black, white=white)


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (draws may count as half successes)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def play_game(
    game: gym.Env, first: Player, second: Player, seed: int = 0, moves: list[int] | None = None
) -> float:
    """Plays one game between two agents (``first`` moves first) on the two-player env under
    ``game`` (wrapped or not); returns player 0's result. ``moves``, if given, gets the actions
    played."""
    env = cast("TwoPlayerEnv", game.unwrapped)
    env.reset(seed=seed)
    for agent in (first, second):
        if hasattr(agent, "reset"):
            agent.reset()
    players = (first, second)
    while len(env.legal_actions()):
        action = int(players[env.current_player].act(env))
        env.step(action)
        if moves is not None:
            moves.append(action)
    return float(env.returns()[0])
