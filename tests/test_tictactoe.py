"""Tic-Tac-Toe: rules on ASCII boards, the env contract, and UCT against exact minimax values."""

from __future__ import annotations

import io

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import perfect_move, value

import mc_envs
from mc_envs.agents import UCT
from mc_envs.cli.arena import arena
from mc_envs.cli.two_player import play_terminal
from mc_envs.games import tictactoe as ttt


def make(**kwargs):
    env = gym.make("mc_envs/TicTacToe-v0", **kwargs).unwrapped
    env.reset(seed=0)
    return env


def at(text: str):
    env = make(illegal_action="raise")
    env._set_state(ttt.parse_board(text))
    return env


def test_rules_on_ascii_boards() -> None:
    s = ttt.parse_board("X X .\nO O .\n. . .")
    assert s[ttt.PLAYER] == 0 and not s[ttt.OVER]
    out = np.zeros(9, dtype=np.int64)
    assert out[: ttt.legal(s, None, out)].tolist() == [2, 5, 6, 7, 8]
    assert ttt.play(s, 2, None) == 1.0 and s[ttt.OVER] and s[ttt.RESULT] == 1
    assert ttt.legal(s, None, out) == 0
    full = ttt.parse_board("X O X\nX O O\nO X X")
    assert full[ttt.OVER] and full[ttt.RESULT] == 0
    assert ttt.format_board(ttt.parse_board("X . O\n. . .\n. . .")) == "X . O\n. . .\n. . .\n"
    with pytest.raises(ValueError):
        ttt.parse_board("O . .\n. . .\n. . .")  # O cannot have moved first


def test_env_contract_and_rewards() -> None:
    env = make(render_mode="ansi")
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, 3, 3) and info["current_player"] == 0 and info["action_mask"].all()
    rewards = []
    for a in (0, 3, 1, 4):
        obs, r, term, trunc, info = env.step(a)
        rewards.append(r)
    assert obs[0].sum() == 2 and obs[1].sum() == 2  # from the side to move (X)
    obs, r, term, trunc, info = env.step(2)
    assert (r, term, trunc) == (1.0, True, False)
    assert env.returns().tolist() == [1.0, -1.0]
    assert "X wins" in env.render()
    check_env(gym.make("mc_envs/TicTacToe-v0").unwrapped)


def test_illegal_moves_raise_and_change_nothing() -> None:
    env = make(illegal_action="raise")
    env.step(4)
    before = env.clone_state()
    for bad in (4, 9, -1, 1.5):
        with pytest.raises(mc_envs.IllegalActionError):
            env.step(bad)
        assert env.clone_state() == before
    env = at("X X X\nO O .\n. . .")
    before = env.clone_state()
    with pytest.raises(mc_envs.IllegalActionError, match="over"):
        env.step(5)
    assert env.clone_state() == before


def test_opponent_modes() -> None:
    env = gym.make("mc_envs/TicTacToe-v0", opponent="random")
    obs, info = env.reset(seed=3)
    assert info["current_player"] == 0
    obs, r, term, _, info = env.step(4)
    assert obs[0].sum() == 1 and obs[1].sum() == 1 and info["current_player"] == 0
    # a callable opponent that always takes the lowest free cell; the agent loses on its reply
    env = gym.make("mc_envs/TicTacToe-v0", opponent=lambda e: int(e.legal_actions()[0]))
    env.reset(seed=0)
    for a in (4, 8):
        env.step(a)  # O replies 0, then 1
    obs, r, term, _, _ = env.step(6)  # O completes 0-1-2
    assert term and r == -1.0
    env = gym.make("mc_envs/TicTacToe-v0", opponent="uct-easy", agent_player=1)
    obs, info = env.reset(seed=0)
    assert info["current_player"] == 1 and obs[1].sum() == 1


# -- exact values ---------------------------------------------------------------------------------


def test_uct_against_uct_draws_every_game() -> None:
    env = make()
    for g in range(6):
        env.reset(seed=g)
        players = (UCT(iterations=3000, seed=2 * g), UCT(iterations=3000, seed=2 * g + 1))
        while len(env.legal_actions()):
            env.step(players[env.current_player].act(env))
        assert env.returns()[0] == 0.0, f"game {g} not drawn"


def test_uct_never_loses_a_won_or_drawn_position() -> None:
    rng = np.random.default_rng(7)
    tested = {1: 0, 0: 0}
    while min(tested.values()) < 8:
        s = ttt.new_state()
        for _ in range(int(rng.integers(1, 6))):
            out = np.zeros(9, dtype=np.int64)
            n = ttt.legal(s, None, out)
            if n == 0:
                break
            ttt.play(s, int(out[rng.integers(n)]), None)
        v = value(tuple(s)) if not s[ttt.OVER] else None
        if v is None or v < 0 or tested[v] >= 8:
            continue
        tested[v] += 1
        env = make()
        env._set_state(s.copy())
        me = env.current_player
        agent = UCT(iterations=4000, seed=int(rng.integers(1000)))
        while len(env.legal_actions()):
            a = agent.act(env) if env.current_player == me else perfect_move(env._state)
            env.step(a)
        result = env.returns()[me]
        assert result >= v, f"UCT got {result} from a position of value {v}:\n{ttt.format_board(s)}"


def test_cli_functions() -> None:
    out = io.StringIO()
    stats = arena("tictactoe", "uct-medium", "random", games=4, progress=False, out=out)
    assert stats["losses"] == 0 and "95% CI" in out.getvalue()
    moves = iter(["4", "4", "0", "8", "2", "6", "1", "3", "5", "7"])
    r = play_terminal(
        "tictactoe", vs="uct", iterations=2000, input_fn=lambda _: next(moves), out=io.StringIO()
    )
    assert r in (-1.0, 0.0)


def test_play_game_takes_the_env_as_gym_make_gives_it():
    # gym.make wraps the env (OrderEnforcing ...), whose wrappers forward no planning method:
    # play_game plays on the env under them, the same game as on the unwrapped env.
    from mc_envs.agents import RandomAgent
    from mc_envs.cli.two_player import play_game

    results = []
    for env in (gym.make("mc_envs/TicTacToe-v0"), gym.make("mc_envs/TicTacToe-v0").unwrapped):
        moves: list[int] = []
        r = play_game(env, RandomAgent(seed=3), RandomAgent(seed=4), seed=5, moves=moves)
        results.append((r, moves))
    assert results[0] == results[1] and results[0][0] in (-1.0, 0.0, 1.0)
    assert len(results[0][1]) >= 5  # a whole game: at least five moves
