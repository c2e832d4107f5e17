"""The games table and the agent specs: one description of each game, one parser of agent names."""

from __future__ import annotations

import importlib

import gymnasium as gym
import pytest

import mc_envs
from mc_envs.registry import ENVS, FLAGS, GAMES, find, names


def test_every_name_and_alias_is_unique_and_found() -> None:
    keys = [g.name for g in GAMES] + [a for g in GAMES for a in g.aliases]
    assert len(keys) == len(set(keys))
    for g in GAMES:
        assert find(g.name) is g and all(find(a) is g for a in g.aliases)
        assert find(g.env_id).env_id == g.env_id and find(g.name.upper()) is g
    with pytest.raises(ValueError, match="unknown game 'chess'; choose one of"):
        find("chess")


def test_the_registered_ids_are_the_table_s() -> None:
    assert set(ENVS) == {g.env_id for g in GAMES} == set(mc_envs.ENVS)
    for g in GAMES:
        assert set(g.flags) <= set(FLAGS) and g.players in (1, 2)
        assert (g.opponent is not None) == (g.players == 2)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_each_game_makes_its_env_and_has_its_drawing(game) -> None:
    env = gym.make(game.env_id, **game.cli).unwrapped
    assert env.game == game.game
    module = importlib.import_module(f"mc_envs.render.draw.{game.drawing}")
    for function in ("board_size", "draw", "cell_at", "cell_center", "status", "click"):
        assert callable(getattr(module, function)), (game.name, function)


def test_agent_specs_are_parsed_in_one_place() -> None:
    from mc_envs.agents import PUCT, UCT, RandomAgent
    from mc_envs.agents.specs import known, parse

    assert isinstance(parse("random"), RandomAgent)
    hard = parse("uct-hard", seed=3)
    assert isinstance(hard, UCT) and hard.iterations == 5000 and hard.seed == 3
    assert parse("UCT").iterations == 1000 and isinstance(parse("puct-heuristic"), PUCT)
    assert parse("uct-easy", iterations=7).iterations == 7
    assert "uct-master" in known() and "puct-heuristic" in known()
    for bad in ("nmcs", "uct-impossible", "random-hard", "uct-heuristic", ""):
        with pytest.raises(ValueError, match="unknown agent .*use one of .*'uct-hard'"):
            parse(bad)


def test_an_unknown_opponent_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown agent 'strong'.*'uct-hard'"):
        gym.make("mc_envs/ConnectFour-v0", opponent="strong")
    from mc_envs.render.play import make_opponent

    with pytest.raises(ValueError, match="unknown agent"):
        make_opponent("uct-superhuman")
    assert make_opponent("none") is None


def test_two_player_names() -> None:
    assert names(players=2) == ["tictactoe", "connect4", "go"]
    from mc_envs.cli.two_player import game_id

    assert game_id("ttt") == "mc_envs/TicTacToe-v0"
    with pytest.raises(ValueError, match="not a two-player game"):
        game_id("samegame")
