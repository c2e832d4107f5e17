"""SameGame rules on ASCII boards, the standard set, bad input, snapshots."""

import gymnasium as gym
import numpy as np
import pytest

import mc_envs
from mc_envs.envs.samegame import SameGameEnv, standard_positions
from mc_envs.games import samegame as sg


def make(text, **kw):
    env = SameGameEnv(board=text, **kw)
    env.reset()
    return env


def text_of(env):
    return sg.format_board(env.board)


def test_a_group_falls_and_scores():
    env = make("""
        1..
        000
        121
    """)
    assert env.legal_actions().tolist() == [3]  # the three 0s; their top-left cell is row 1, col 0
    _, reward, terminated, _, info = env.step(3)
    assert reward == 1.0  # (3 - 2)^2
    assert text_of(env) == "...\n1..\n121"
    assert not terminated and env.legal_actions().tolist() == [3]  # the 1 fell onto the other 1
    assert info["score"] == 1.0


def test_empty_columns_close_up_to_the_left():
    env = make("""
        0.1
        0.1
    """)
    env.step(0)  # removes column 0; column 2 shifts to column 0
    assert text_of(env) == "1..\n1.."
    _, reward, terminated, _, _ = env.step(0)
    assert reward == 1000.0 and terminated and env.score == 1000.0


def test_canonical_cell_is_the_top_left_most_cell_of_the_group():
    env = make("""
        10
        00
    """)
    assert env.legal_actions().tolist() == [1]
    assert env.group_at(1, 0) == 1
    env.illegal_action = "raise"
    with pytest.raises(mc_envs.IllegalActionError, match="not the canonical cell"):
        env.step(3)


@pytest.mark.parametrize("penalty, expected", [("none", 0.0), ("jsgames", -9.0), ("schadd", -1.0)])
def test_leftover_penalties(penalty, expected):
    env = make("0112020", penalty=penalty)
    _, reward, terminated, _, _ = env.step(1)  # the 1s (gain 0); left: 0 2 0 2 0, no group
    assert terminated and text_of(env) == "02020.."
    # N = 5 cells left; colour 0 has 3, colour 2 has 2
    assert reward == expected and env.score == expected


def test_game_over_when_no_pairs_and_clear_bonus_only_on_clear():
    env = make("01\n10")
    assert env.legal_actions().tolist() == []
    assert env.score == 0.0


def test_the_standard_positions_load():
    positions = standard_positions()
    assert sorted(positions) == list(range(1, 21))
    for board in positions.values():
        assert board.shape == (15, 15) and set(np.unique(board)) == {1, 2, 3, 4, 5}
    env = gym.make("mc_envs/SameGame-v0", position=1)
    obs, info = env.reset()
    # top-left of position 1 is '3' in the file (colour 4 here), bottom-right is '2' (colour 3)
    assert obs[0, 0] == 4 and obs[14, 14] == 3
    assert info["action_mask"].sum() == len(env.unwrapped.legal_actions()) > 0


def test_random_boards_come_from_the_reset_seed():
    env = gym.make("mc_envs/SameGame-v0", rows=6, cols=7, colors=3)
    a, _ = env.reset(seed=5)
    b, _ = env.reset(seed=5)
    c, _ = env.reset(seed=6)
    assert a.shape == (6, 7) and np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize(
    "text, message",
    [
        ("012\n01\n", "line 2: row has 2 cells, expected 3"),
        ("012\n0x2\n", "line 2, column 2: bad symbol 'x'"),
        ("", "no board rows"),
    ],
)
def test_malformed_boards_name_line_and_column(text, message):
    with pytest.raises(ValueError, match=message):
        SameGameEnv(board=text)


def test_wrong_width_against_the_first_row_is_reported():
    with pytest.raises(ValueError, match="line 3: row has 4 cells, expected 3"):
        sg.parse_board("012\n012\n0120")


def test_illegal_actions_leave_the_state_unchanged():
    env = gym.make("mc_envs/SameGame-v0", position=2, illegal_action="raise").unwrapped
    env.reset()
    snap = env.clone_state()
    empty_or_single = next(a for a in range(225) if a not in set(env.legal_actions()))
    for bad in (empty_or_single, -1, 225, 1.5, "a"):
        with pytest.raises(mc_envs.IllegalActionError):
            env.step(bad)
        assert env.clone_state() == snap


def test_restore_refuses_another_size_or_game():
    small = SameGameEnv(rows=5, cols=5)
    small.reset(seed=0)
    big = SameGameEnv(position=1)
    big.reset()
    with pytest.raises(ValueError, match="cannot restore a SameGame state with config"):
        big.restore_state(small.clone_state())
    with pytest.raises(TypeError):
        big.restore_state("not a state")


def test_kernel_playout_matches_the_env_played_with_the_same_stream():
    import itertools

    from mc_envs.rng import Rng, rng_state

    env = SameGameEnv(position=3)
    env.reset()
    playouts = (sg.playout, env.kernel.playout)  # the flood fill and the bitboards
    for (policy_name, code), playout in itertools.product(sg.POLICIES.items(), playouts):
        s = env._state.copy()
        ws = sg.workspace(s)
        seq = np.zeros(200, dtype=np.int64)
        n = playout(s, code, rng_state(11), ws, seq, 0)
        replay = SameGameEnv(position=3)
        replay.reset()
        choose = replay.policy(policy_name)(replay)
        rng = Rng(11)
        actions = []
        while len(replay.legal_actions()):
            a = choose(replay.legal_actions(), rng)
            replay.step(a)
            actions.append(a)
        assert actions == seq[:n].tolist()
        assert replay.score == sg.score(s)


def test_pygame_is_not_imported_by_stepping():
    import subprocess
    import sys

    code = (
        "import sys, gymnasium as gym, mc_envs\n"
        "env = gym.make('mc_envs/SameGame-v0', position=1)\n"
        "env.reset()\n"
        "env.step(env.unwrapped.legal_actions()[0])\n"
        "assert 'pygame' not in sys.modules, 'pygame was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ansi_render():
    env = gym.make("mc_envs/SameGame-v0", board="01\n01", render_mode="ansi")
    env.reset()
    assert env.render() == "01\n01\nscore 0\n"


def test_legal_codes_lists_what_legal_and_code_give_one_by_one():
    env = SameGameEnv(position=3)
    env.reset()
    rng = np.random.default_rng(5)
    out, codes, actions = (np.zeros(225, dtype=np.int64) for _ in range(3))
    checked = 0
    for _ in range(3):
        s = env._state.copy()
        ws = sg.workspace(s)
        while True:
            n = sg.legal_codes(s, ws, out, codes)
            assert n == sg.legal(s, ws, actions)
            assert out[:n].tolist() == actions[:n].tolist()
            assert codes[:n].tolist() == [sg.code(s, a, ws) for a in out[:n]]
            assert len(set(codes[:n].tolist())) == n and (codes[:n] >= 0).all()
            checked += n
            if n == 0:
                break
            sg.play(s, out[rng.integers(n)], ws)
    assert checked > 100
