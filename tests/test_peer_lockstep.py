"""Tic-Tac-Toe and Connect Four in lockstep with two independent implementations of their rules:
OpenSpiel's C++ games and PettingZoo classic's. Random games (seeded): at every step the legal
moves, the player to move, the end and the winner must agree."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401

pyspiel = pytest.importorskip("pyspiel")
classic = pytest.importorskip("pettingzoo.classic")

GAMES = 1500  # a game a step at a time in three implementations: about 3 s a game kind and peer

# Our action -> the peer's action. PettingZoo's Tic-Tac-Toe numbers the cells column by column.
PEERS = {
    "TicTacToe": ("tic_tac_toe", "tictactoe_v3", lambda a: (a % 3) * 3 + a // 3),
    "ConnectFour": ("connect_four", "connect_four_v3", lambda a: a),
}


def _ours(game: str):
    env = gym.make(f"mc_envs/{game}-v0", illegal_action="raise").unwrapped
    env.reset(seed=0)
    return env


def _zoo_legal(zoo, to_peer) -> list[int]:
    mask = zoo.observe(zoo.agent_selection)["action_mask"]
    peer_legal = set(np.flatnonzero(mask).tolist())
    return sorted(a for a in range(len(mask)) if to_peer(a) in peer_legal)


@pytest.mark.parametrize("game", sorted(PEERS))
def test_random_games_agree_with_openspiel_and_pettingzoo(game: str) -> None:
    spiel_name, zoo_name, to_peer = PEERS[game]
    spiel_game = pyspiel.load_game(spiel_name)
    zoo = getattr(classic, zoo_name).env()
    env = _ours(game)
    rng = np.random.default_rng(2026)
    ends = {"draw": 0, "won": 0}
    for g in range(GAMES):
        env.reset(seed=g)
        state = spiel_game.new_initial_state()
        zoo.reset(seed=g)
        terminated, reward, mover, moves = False, 0.0, 0, []
        while not terminated:
            ours = env.legal_actions().tolist()
            where = f"{game} game {g} after moves {moves}"
            assert sorted(map(to_peer, ours)) == sorted(state.legal_actions()), where
            assert ours == _zoo_legal(zoo, to_peer), where
            assert env.current_player == state.current_player(), where
            assert zoo.agent_selection == zoo.possible_agents[env.current_player], where
            action = int(rng.choice(ours))
            mover = env.current_player
            moves.append(action)
            _, reward, terminated, truncated, _ = env.step(action)
            state.apply_action(to_peer(action))
            zoo.step(to_peer(action))
            assert not truncated
            assert state.is_terminal() == terminated, where
            assert any(zoo.terminations.values()) == terminated, where
        returns = state.returns()
        assert returns[mover] == reward and returns[1 - mover] == -reward, (game, g)
        zoo_rewards = [zoo.rewards[agent] for agent in zoo.possible_agents]
        assert zoo_rewards[mover] == reward and zoo_rewards[1 - mover] == -reward, (game, g)
        ends["won" if reward else "draw"] += 1
    assert ends["won"] > 0 and ends["draw"] > 0, ends  # both endings were compared
