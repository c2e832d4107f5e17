"""Go (mc_envs/Go-v0): the rules on ASCII boards, scores, the observation, snapshots, the
env's arguments and its vector env. The lockstep games against pgx are in tests/test_go_pgx.py.

Boards list the rows from the top (row 5 of a 5x5 board first); ``X`` Black, ``O`` White.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs import IllegalActionError, State
from mc_envs.core import strict
from mc_envs.games import go, go_text
from mc_envs.games import go_layout as layout
from mc_envs.games.go_check import check_state
from mc_envs.kernel import CAP_INFO
from mc_envs.rng import Rng, rng_state
from mc_envs.vector import PlanningVectorEnv


def grid(text: str) -> str:
    """An ASCII board from one line: rows apart by two spaces, points by one."""
    return "\n".join(text.split("  "))


def env_at(text: str, to_move: int = 0, **kwargs):
    """A strict Go env continuing from an ASCII board (one line, as :func:`grid` reads)."""
    text = grid(text)
    size = len(text.splitlines())
    env = gym.make("mc_envs/Go-v0", size=size, illegal_action="raise", **kwargs).unwrapped
    env.reset()
    _, komi, max_moves, history = env._config
    data = go_text.parse_board(
        text, to_move=to_move, komi=komi, max_moves=max_moves, history=history
    )
    env.restore_state(State("Go", env._config, data))  # from outside: checked
    return env


def play(env, *vertices: str):
    """Plays GTP vertices in turn; returns the last step's outputs."""
    out = None
    for v in vertices:
        out = env.step(go_text.parse_vertex(env.size, v))
    return out


def rows(env) -> list[str]:
    return ["".join(".XO"[v] for v in row) for row in env.board]


def captures(env) -> tuple[int, int]:
    s = env.state_view
    return int(s[layout.CAPTURES]), int(s[layout.CAPTURES + 1])


def refused(env, vertex: str, reason: str) -> None:
    before = env.clone_state()
    with pytest.raises(IllegalActionError, match=reason):
        play(env, vertex)
    assert env.clone_state() == before
    assert not env.action_masks()[go_text.parse_vertex(env.size, vertex)]


# -- captures and suicide ------------------------------------------------------------------------


def test_a_stone_is_captured_when_its_last_liberty_is_filled() -> None:
    env = env_at(". . . . .  . X . . .  X O . . .  . . . . .  . . . . .")
    play(env, "C3", "E1")
    assert rows(env)[2] == "XOX.."  # one liberty left: not yet
    play(env, "B2")
    assert rows(env)[2] == "X.X.." and captures(env) == (1, 0)
    b3 = go_text.parse_vertex(5, "B3")
    assert not env.action_masks()[b3]  # suicide for White, surrounded by Black
    play(env, "pass")
    assert env.action_masks()[b3]  # and free for Black


def test_a_chain_and_two_chains_at_once_are_captured() -> None:
    env = env_at("X O O O X  . X X . .  . . . . .  . . . . .  . . . . .")
    play(env, "D4")
    assert rows(env)[:2] == ["X...X", ".XXX."] and captures(env) == (3, 0)
    env = env_at(". O . O .  O X . X O  . O . O .  . . . . .  . . . . .", to_move=1)
    play(env, "C4")  # both Black stones had C4 as their last liberty
    assert rows(env)[1] == "O.O.O" and captures(env) == (0, 2)


def test_suicide_is_refused_for_a_stone_and_for_a_chain() -> None:
    env = env_at(". O . . .  O . . . .  . . . . .  . . . . .  . . . . .")
    refused(env, "A5", "suicide")
    env = env_at("X X O . .  . O O . .  O . . . .  . . . . .  . . . . .")
    refused(env, "A4", "suicide")  # A5-B5's last liberty, capturing nothing
    play(env, "E1")  # anything else is fine


def test_a_capture_that_looks_like_suicide_is_allowed() -> None:
    env = env_at(". O X . .  O X . . .  . . . . .  . . . . .  . . . . .")
    assert go.suicide(env.state_view, int(layout.POINT_OF[5, 0])) is False
    play(env, "A5")  # no liberty of its own, but B5 is captured
    assert rows(env)[:2] == ["X.X..", "OX..."] and captures(env) == (1, 0)


def test_an_occupied_point_is_refused_naming_it() -> None:
    env = env_at(". . . . .  . . . . .  . . X . .  . . . . .  . . . . .", to_move=1)
    refused(env, "C3", "C3 is occupied")


# -- ko and superko ------------------------------------------------------------------------------

KO = ". X O . .  X O . O .  . X O . .  . . . . .  . . . . ."


def test_ko_the_immediate_recapture_is_refused_and_allowed_after_a_threat() -> None:
    env = env_at(KO)
    play(env, "C4")
    assert rows(env)[1] == "X.XO." and captures(env) == (1, 0)
    refused(env, "B4", "recreates an earlier position")
    play(env, "E1", "E2")  # a ko threat and its answer: the position differs now
    play(env, "B4")
    assert rows(env)[1] == "XO.O." and captures(env) == (1, 1)


# A 3-move cycle: Black C5 puts two stones in atari ("sends two"), White E5 takes them, and
# Black D5 would take one back, recreating the position before C5. White's E5 took two stones,
# so this is no simple ko: pgx's mask allows D5 and ends the game there as Black's loss; we
# refuse D5 (positional superko).
SEND_TWO = ". O . X .  O O O O X  O . X O X  X X X X .  . O X O O"


def test_superko_refuses_a_longer_cycle_that_simple_ko_misses() -> None:
    env = env_at(SEND_TWO)
    play(env, "C5", "E5")
    assert rows(env)[0] == ".O..O" and captures(env) == (0, 2)
    refused(env, "D5", "recreates an earlier position")
    play(env, "B3")  # another move is fine, and the game goes on


def test_superko_counts_the_positions_whoever_was_to_move() -> None:
    # The same cycle entered with White to move first (a Black pass in between): D5 would make
    # the position of the start, where White was to move.
    env = env_at(SEND_TWO, to_move=1)
    play(env, "pass", "C5", "E5")
    refused(env, "D5", "recreates an earlier position")


# -- the end and the score -----------------------------------------------------------------------

WALL = ". . X O .  . . X O .  . . X O .  . . X O .  . . X O ."
# Seki: each chain has an eye (A5 Black's, D5 White's) and shares B1 with the other. Whoever
# fills B1 is captured; neither can play in the other's eye (suicide). Tromp-Taylor counts the
# stones and the eyes, and B1, reaching both colours, for no one: Black 8 + 1, White 14 + 1.
SEKI = ". X O . O  X X O O O  X X O O O  X X O O O  X . O O O"


@pytest.mark.parametrize(
    ("text", "komi", "areas", "returns"),
    [
        (WALL, 7.5, (15, 10), (-1, 1)),
        (WALL, 0.5, (15, 10), (1, -1)),
        (WALL, 5, (15, 10), (0, 0)),  # an integer komi can tie: a draw
        (SEKI, 0.5, (9, 15), (-1, 1)),
        (SEKI, -6.5, (9, 15), (1, -1)),
    ],
)
def test_two_passes_end_the_game_scored_by_tromp_taylor(text, komi, areas, returns) -> None:
    env = env_at(text, komi=komi)
    _, reward, terminated, truncated, _ = play(env, "pass")
    assert (reward, terminated) == (0.0, False)
    _, reward, terminated, truncated, _ = play(env, "pass")
    assert terminated and not truncated and len(env.legal_actions()) == 0
    assert env.area() == areas and tuple(env.returns()) == returns
    assert reward == returns[1]  # White passed last
    assert not env.action_masks().any()


def test_seki_filling_the_shared_liberty_loses_the_chain() -> None:
    env = env_at(SEKI)
    refused(env, "D5", "suicide")  # in White's eye
    play(env, "B1")  # legal, but Black's chain is left with A5 alone
    play(env, "A5")
    assert rows(env)[0] == "O.O.O" and captures(env) == (0, 9)


def test_the_move_limit_truncates_the_game_and_the_kernel_scores_it() -> None:
    env = gym.make("mc_envs/Go-v0", size=5, max_moves=3).unwrapped
    env.reset()
    env.step(12)
    env.step(25)  # a pass
    _, reward, terminated, truncated, info = env.step(13)
    assert truncated and not terminated and reward == 0.0 and info[CAP_INFO] is True
    assert env.area() == (25, 0) and len(env.legal_actions()) == 0
    # the kernel's adjudication, what searches value a playout stopped there by
    assert go.truncated(env.state_view) and list(env.returns()) == [1.0, -1.0]
    with pytest.raises(IllegalActionError), strict(env):  # nothing is legal after the cap
        env.step(25)


def test_two_passes_on_the_capped_move_end_the_game() -> None:
    env = gym.make("mc_envs/Go-v0", size=5, max_moves=3).unwrapped
    env.reset()
    env.step(12)
    env.step(25)
    _, reward, terminated, truncated, info = env.step(25)
    assert terminated and not truncated and reward == 1.0 and CAP_INFO not in info
    assert not go.truncated(env.state_view)


def test_an_opponent_reaching_the_move_limit_truncates_the_agent_s_step() -> None:
    env = gym.make("mc_envs/Go-v0", size=5, max_moves=4, opponent="random").unwrapped
    env.reset(seed=3)
    _, reward, terminated, truncated, _ = env.step(12)
    assert not (terminated or truncated) and env.state_view[layout.MOVES] == 2
    _, reward, terminated, truncated, info = env.step(6)  # the opponent's answer is move 4
    if env.state_view[layout.PASSES] < 2:
        assert truncated and not terminated and reward == 0.0 and info[CAP_INFO]
    else:  # the opponent passed twice in a row: the game's own end
        assert terminated and not truncated


def test_the_empty_board_passed_out_is_white_s_by_komi() -> None:
    env = gym.make("mc_envs/Go-v0").unwrapped
    env.reset()
    env.step(81)
    _, reward, terminated, _, _ = env.step(81)
    assert terminated and reward == 1.0 and tuple(env.returns()) == (-1, 1)
    assert "White wins" in env._ansi()


@pytest.mark.parametrize("size", [5, 9, 13, 19])
def test_the_kernel_s_area_counts_the_owned_points_and_leaves_the_state_as_it_was(size) -> None:
    from mc_envs.games.go_area import owners

    env = gym.make("mc_envs/Go-v0", size=size).unwrapped
    rng = np.random.default_rng(size)
    for game in range(8):
        env.reset(seed=game)
        for _ in range(int(rng.integers(0, 2 * size * size))):
            legal = env.legal_actions()
            if len(legal) == 0:
                break
            env.step(int(rng.choice(legal)))
        before = env._state.copy()
        own = owners(env.board)
        assert layout.area(env._state) == ((own == 1).sum(), (own == 2).sum())
        assert np.array_equal(env._state, before)


def test_a_read_only_ended_position_is_checked_without_writing_to_it() -> None:
    env = gym.make("mc_envs/Go-v0", size=5).unwrapped
    env.reset()
    env.step(25)
    env.step(25)  # two passes: the check scores the position with the kernel's area()
    data = env._state.copy()
    data.flags.writeable = False
    check_state(data, env._config)
    assert np.array_equal(data, env._state)


# -- the observation -----------------------------------------------------------------------------


def test_the_planes_follow_pgx_s_order_channels_first() -> None:
    env = gym.make("mc_envs/Go-v0", size=5, history=3).unwrapped
    obs, _ = env.reset()
    assert obs.shape == (7, 5, 5) and obs.dtype == np.int8 and not obs.any()
    for v in ("C3", "D3", "pass"):
        obs, *_ = env.step(go_text.parse_vertex(5, v))
    # White to move, after B C3, W D3, B pass: plane 2k the mover's stones k moves ago
    c3, d3 = (2, 2), (2, 3)
    assert obs[0][d3] == 1 and obs[1][c3] == 1 and obs[0].sum() == obs[1].sum() == 1
    assert obs[2][d3] == 1 and obs[3][c3] == 1  # the pass repeated the board
    assert obs[5][c3] == 1 and obs[4].sum() == 0  # two moves ago: only C3
    assert (obs[6] == 1).all()  # White to move
    obs, *_ = env.step(go_text.parse_vertex(5, "A1"))
    assert (obs[6] == 0).all() and obs[0][c3] == 1 and obs[1][d3] == 1


def test_the_history_planes_keep_captured_stones() -> None:
    env = env_at(KO, history=2)
    obs, *_ = play(env, "C4")
    b4 = (1, 1)
    assert obs[0][b4] == 0  # White to move: its stone B4 is gone now
    assert obs[2][b4] == 1  # and was there one move ago


# -- snapshots and checks ------------------------------------------------------------------------


def test_clone_restore_replays_200_random_moves_exactly() -> None:
    env = gym.make("mc_envs/Go-v0", max_moves=400).unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def moves(count):
        trace = []
        for _ in range(count):
            legal = env.legal_actions()
            stones = legal[legal < 81]  # no pass, so that the game lasts: captures follow
            a = int(rng.choice(stones if len(stones) else legal))
            obs, reward, terminated, truncated, info = env.step(a)
            trace.append((a, obs, reward, terminated, info["action_mask"]))
        return trace

    moves(30)
    snap = env.clone_state()
    trace = moves(200)
    end = env.clone_state()
    assert sum(captures(env)) > 20  # the replay covers captures
    env.restore_state(snap)
    for a, obs, reward, terminated, mask in trace:
        obs2, reward2, terminated2, _, info = env.step(a)
        assert np.array_equal(obs, obs2) and (reward, terminated) == (reward2, terminated2)
        assert np.array_equal(mask, info["action_mask"])
    assert env.clone_state() == end
    check_state(np.array(end.data), env._config)


@pytest.mark.parametrize(
    ("field", "change", "message"),
    [
        ("board", lambda d, sec: d.__setitem__(layout.BOARD + 40, 1), "board|head|hash"),
        ("hash", lambda d, sec: d.__setitem__(layout.HASH, d[layout.HASH] ^ 1), "hash"),
        ("libs", lambda d, sec: d.__setitem__(sec[6] + 12, d[sec[6] + 12] + 1), "liberties"),
        ("next", lambda d, sec: d.__setitem__(sec[4] + 12, 13), "next"),
        ("table", lambda d, sec: d.__setitem__(sec[9] + np.flatnonzero(d[sec[9] :])[0], 0), "pos"),
        ("player", lambda d, sec: d.__setitem__(layout.PLAYER, 2), "player"),
        ("over", lambda d, sec: d.__setitem__(layout.OVER, 1), "over"),
        ("ring", lambda d, sec: d.__setitem__(sec[8], 1), "bits"),
        ("atari", lambda d, sec: d.__setitem__(sec[6] + sec[0], 1 << 12), "atari marks"),
        ("slot", lambda d, sec: d.__setitem__(layout.SLOT, 5), "slot"),
    ],
)
def test_corrupted_states_are_refused_naming_the_field(field, change, message) -> None:
    env = gym.make("mc_envs/Go-v0").unwrapped
    env.reset()
    for v in ("A9", "B9", "J1", "A8"):  # A9 is captured: the table holds four positions
        env.step(go_text.parse_vertex(9, v))
    data = np.array(env.clone_state().data)
    check_state(data, env._config)
    change(data, layout.offsets(9, 162, 8))
    before = env.clone_state()
    with pytest.raises(ValueError, match=message):
        env.restore_state(State("Go", env._config, data))
    assert env.clone_state() == before


def test_boards_and_vertices() -> None:
    assert [go_text.vertex(9, a) for a in (0, 8, 72, 80, 81)] == ["A9", "J9", "A1", "J1", "pass"]
    assert go_text.vertex(19, 18) == "T19" and go_text.parse_vertex(19, "t1") == 360
    for n in (5, 9, 19):
        assert all(go_text.parse_vertex(n, go_text.vertex(n, a)) == a for a in range(n * n + 1))
    for bad in ("I5", "Z1", "A0", "A10", "", "E"):
        with pytest.raises(ValueError, match="not a vertex of the 9x9 board"):
            go_text.parse_vertex(9, bad)
    state = go_text.parse_board(grid(WALL))
    assert go_text.parse_board(go_text.format_board(state)).tolist() == state.tolist()
    with pytest.raises(ValueError, match="no liberty"):
        go_text.parse_board("XO...\nOO...\n.....\n.....\n.....")
    with pytest.raises(ValueError, match="n lines of n points"):
        go_text.parse_board("...\n...\n...")
    with pytest.raises(ValueError, match="unknown point 'Y' at B5"):
        go_text.parse_board(".Y...\n.....\n.....\n.....\n.....")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size": 4}, "size must be an integer in 5..19"),
        ({"size": 20}, "size must be an integer in 5..19"),
        ({"size": 9.0}, "size must be an integer"),
        ({"komi": 7.3}, "komi must be a multiple of 0.5"),
        ({"komi": "x"}, "komi must be a number"),
        ({"max_moves": 0}, "max_moves must be in 1..100000"),
        ({"history": 0}, "history must be an integer in 1..64"),
        ({"agent_player": 2}, "agent_player must be 0 or 1"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make("mc_envs/Go-v0", **kwargs)


# -- the kernel's playout, symmetries, opponents, the vector env ---------------------------------


def test_the_compiled_playout_draws_as_the_generic_path_does() -> None:
    env = gym.make("mc_envs/Go-v0", size=7).unwrapped
    env.reset()
    state = np.array(env.state_view)
    seq = np.zeros(env.kernel.max_moves + 1, np.int64)
    n = env.kernel.playout(state, 0, rng_state(5), env.kernel.workspace(state), seq, 0)
    rng = Rng(5)
    played = []
    while len(env.legal_actions()):
        a = rng.choice(env.legal_actions())  # the generic path's "random" policy
        played.append(a)
        env.step(a)
    assert played == seq[:n].tolist() and np.array_equal(state, env.state_view)


def test_the_symmetries_map_positions_to_their_images() -> None:
    env = gym.make("mc_envs/Go-v0", size=5, history=2).unwrapped
    image = gym.make("mc_envs/Go-v0", size=5, history=2).unwrapped
    env.reset()
    rng = np.random.default_rng(3)
    line = []
    for _ in range(12):
        line.append(int(rng.choice(env.legal_actions())))
        env.step(line[-1])
    syms = env.symmetries()
    assert len(syms) == 7
    for obs_perm, act_perm in syms:
        image.reset()
        inverse = np.argsort(act_perm)  # pi[act_perm] is the image's: action a -> inverse[a]
        for a in line:
            image.step(int(inverse[a]))
        assert np.array_equal(env.observation().ravel()[obs_perm], image.observation().ravel())
        assert np.array_equal(env.action_masks()[act_perm], image.action_masks())


def test_a_random_opponent_answers_inside_step() -> None:
    env = gym.make("mc_envs/Go-v0", size=5, opponent="random", agent_player=1).unwrapped
    _, info = env.reset(seed=1)
    assert info["current_player"] == 1 and env.state_view[layout.MOVES] == 1
    env.step(int(env.legal_actions()[0]))
    assert env.current_player == 1 and env.state_view[layout.MOVES] == 3


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": 5, "history": 2, "komi": 0.5},
        {"size": 7, "opponent": "random"},
        {"max_moves": 30},
        {"size": 5, "max_moves": 12, "opponent": "random"},
    ],
)
def test_the_vector_env_gives_the_episodes_of_sync(kwargs) -> None:
    n = 4
    sync = gym.make_vec("mc_envs/Go-v0", num_envs=n, vectorization_mode="sync", **kwargs)
    ours = gym.make_vec(
        "mc_envs/Go-v0", num_envs=n, vectorization_mode="vector_entry_point", **kwargs
    )
    assert isinstance(ours.unwrapped, PlanningVectorEnv)
    (o1, i1), (o2, _) = sync.reset(seed=5), ours.reset(seed=5)
    assert np.array_equal(o1, o2)
    rng = np.random.default_rng(0)
    ends = cuts = 0
    for t in range(150):
        masks = i1["action_mask"]
        acts = np.array(
            [rng.choice(np.flatnonzero(m)) if rng.random() > 0.02 else 0 for m in masks]
        )
        out1, out2 = sync.step(acts), ours.step(acts)
        for k in range(4):
            assert np.array_equal(out1[k], out2[k]), (t, k)
        for key in ("action_mask", "current_player"):
            assert np.array_equal(out1[4][key], out2[4][key]), (t, key)
        assert (CAP_INFO in out1[4]) == (CAP_INFO in out2[4]), t
        if CAP_INFO in out1[4]:
            for key in (CAP_INFO, "_" + CAP_INFO):
                assert np.array_equal(out1[4][key], out2[4][key]), (t, key)
            assert np.array_equal(out1[4][CAP_INFO], out1[3]), t  # the cap's truncations
        i1 = out1[4]
        ends += int((out1[2] | out1[3]).sum())
        cuts += int(out1[3].sum())
    assert ends >= n  # episodes ended (by the rules, an illegal point or the cap) and restarted
    if kwargs.get("max_moves", 162) <= 30:
        assert cuts > 0  # and some were truncated at the move cap


def test_uct_compiled_and_generic_paths_agree_on_go() -> None:
    from mc_envs.agents import UCT

    env = gym.make("mc_envs/Go-v0", size=5).unwrapped
    env.reset(seed=0)
    env.step(12)
    before = env.clone_state()
    fast = UCT(iterations=120, seed=5).search(env)
    slow = UCT(iterations=120, seed=5, compiled=False).search(env)
    assert env.clone_state() == before
    assert np.array_equal(fast.root_visits, slow.root_visits)
    assert np.allclose(fast.root_values, slow.root_values)
    assert fast.actions == slow.actions and fast.iterations == slow.iterations == 120


def test_go_reads_the_two_player_header_where_the_bitboard_games_have_it() -> None:
    from mc_envs.games import two_player

    for name in ("PLAYER", "MOVES", "OVER", "RESULT"):
        assert getattr(layout, name) == getattr(two_player, name), name
    env = gym.make("mc_envs/Go-v0", size=5).unwrapped
    env.reset()
    env.step(25)
    env.step(25)
    state = env.state_view
    assert go.player(state) == env.current_player == 0 and go.returns(state) == -1.0
