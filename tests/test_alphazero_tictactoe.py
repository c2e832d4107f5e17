"""AlphaZero learns Tic-Tac-Toe in about a minute: the model never loses to a perfect player, from
any opening, on either side."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import value

import mc_envs  # noqa: F401
from mc_envs.agents.alphazero import alphazero_agent, train
from mc_envs.games import tictactoe as ttt


def best_replies(s: np.ndarray) -> list[int]:
    """Every move of the player to move that keeps the position's minimax value."""
    out = np.zeros(9, dtype=np.int64)
    moves = [int(a) for a in out[: ttt.legal(s, None, out)]]
    scores = {}
    for a in moves:
        t = s.copy()
        ttt.play(t, a, None)
        scores[a] = -value(tuple(t))
    return [a for a in moves if scores[a] == max(scores.values())]


def losing_lines(agent, env, me: int, line: tuple = ()) -> list[tuple]:
    """The lines of play the agent (side ``me``) loses, the opponent playing every best reply
    (every move, at its first turn)."""
    s = env.unwrapped._state
    if s[ttt.OVER]:
        return [line] if env.unwrapped.returns()[me] < 0 else []
    if env.unwrapped.current_player == me:
        moves = [int(agent.act(env.unwrapped))]
    else:
        first = len(line) < 2  # the opponent's first move: every one
        moves = list(env.unwrapped.legal_actions()) if first else best_replies(s)
    lost = []
    for a in moves:
        snapshot = env.unwrapped.clone_state()
        env.unwrapped.step(int(a))
        lost += losing_lines(agent, env, me, (*line, int(a)))
        env.unwrapped.restore_state(snapshot)
    return lost


@pytest.mark.parametrize(("sims", "gumbel"), [(32, None), (16, 9)], ids=["puct", "gumbel"])
def test_a_model_trained_in_about_a_minute_never_loses_to_a_perfect_player(sims, gumbel) -> None:
    model, history = train(
        "mc_envs/TicTacToe-v0",
        minutes=4,  # a bound; the iterations end it first
        iterations=12,
        games=64,
        sims=sims,
        gumbel=gumbel,
        steps=100,
        batch=256,
        hidden=64,
        mirror=True,
        seed=0,
        log=lambda line: None,
    )
    assert len(history) == 12 and history[-1]["loss_after"] < history[0]["loss_before"]
    env = gym.make("mc_envs/TicTacToe-v0")
    env.reset(seed=0)
    agent = alphazero_agent(model, sims=64, seed=0)
    for me in (0, 1):
        assert losing_lines(agent, env, me) == [], f"the model loses as player {me}"
