"""Go's playout policies "eye" and "mogo" and its tree knowledge "mogo"
(mc_envs/games/go_policy.py): legal games that end, no own true eye filled, MoGo's answers on
ASCII positions, the prior's values; "random" unchanged."""

from __future__ import annotations

import hashlib
import json
import runpy
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import plain_go_legal

import mc_envs  # noqa: F401
from mc_envs import State
from mc_envs.games import go, go_policy, go_text
from mc_envs.games.go_check import check_state
from mc_envs.rng import Rng, rng_state


def go_env(size: int = 9, **kwargs):
    env = gym.make("mc_envs/Go-v0", size=size, illegal_action="raise", **kwargs).unwrapped
    env.reset()
    return env


def env_at(text: str, to_move: int, *moves: str):
    """A strict env from an ASCII board (rows apart by two spaces), then the GTP moves played."""
    rows = text.split("  ")
    env = go_env(len(rows))
    _, komi, max_moves, history = env._config
    data = go_text.parse_board(
        "\n".join(rows), to_move=to_move, komi=komi, max_moves=max_moves, history=history
    )
    env.restore_state(State("Go", env._config, data))
    for v in moves:
        env.step(go_text.parse_vertex(env.size, v))
    return env


def vertices(env, actions) -> set[str]:
    return {go_text.vertex(env.size, int(a)) for a in actions}


def plain_true_eye(board: np.ndarray, r: int, c: int, colour: int) -> bool:
    """The module docstring's true eye, read plainly on the (n, n) board (colour: 1 or 2)."""
    n = board.shape[0]
    if board[r, c]:
        return False
    for y, x in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= y < n and 0 <= x < n and board[y, x] != colour:
            return False
    diagonals = [(r + dy, c + dx) for dy in (-1, 1) for dx in (-1, 1)]
    inside = [(y, x) for y, x in diagonals if 0 <= y < n and 0 <= x < n]
    enemies = sum(board[y, x] == 3 - colour for y, x in inside)
    return enemies <= (0 if len(inside) < 4 else 1)


def kernel_playout(env, policy: str, seed: int) -> list[int]:
    state = np.array(env.state_view)
    seq = np.zeros(env.kernel.max_moves + 1, np.int64)
    code = env.kernel.policies[policy]
    n = env.kernel.playout(state, code, rng_state(seed), env.kernel.workspace(state), seq, 0)
    return seq[:n].tolist()


def replay(env, moves: list[int]) -> tuple[int, int]:
    """Replays a playout from the env's start, each move checked plainly; returns (own true eyes
    filled, passes made while a move filling no own eye was legal)."""
    n = env.size
    seen = {env.board.tobytes()}
    fills = early_passes = 0
    for a in moves:
        board, colour = env.board, env.current_player
        assert plain_go_legal(board, colour, seen, a), (go_text.format_board(env.state_view), a)
        if a == n * n:
            others = [
                b
                for b in env.legal_actions()[:-1]
                if not plain_true_eye(board, *divmod(int(b), n), colour + 1)
            ]
            early_passes += len(others) > 0
        else:
            fills += plain_true_eye(board, *divmod(a, n), colour + 1)
        env.step(a)
        seen.add(env.board.tobytes())
    check_state(np.array(env.state_view), env._config)
    assert not len(env.legal_actions())  # the game is over
    return fills, early_passes


@pytest.mark.parametrize(("size", "games"), [(9, 40), (5, 30), (19, 3)])
@pytest.mark.parametrize("policy", ["eye", "mogo"])
def test_eye_and_mogo_games_are_legal_end_and_fill_no_own_true_eye(size, games, policy) -> None:
    env = go_env(size)
    start = env.clone_state()
    ended_by_passes = 0
    for seed in range(games):
        env.restore_state(start)
        moves = kernel_playout(env, policy, seed)
        assert 0 < len(moves) <= env.kernel.max_moves
        assert replay(env, moves) == (0, 0)
        ended_by_passes += not env.kernel.truncated(env.state_view)
    assert ended_by_passes >= games * 0.8


def test_random_games_do_fill_own_true_eyes() -> None:
    # The eye test above can fail: uniform random games fill their own eyes and pass early.
    env = go_env(9)
    start = env.clone_state()
    fills = early = 0
    for seed in range(10):
        env.restore_state(start)
        f, e = replay(env, kernel_playout(env, "random", seed))
        fills, early = fills + f, early + e
    assert fills > 0 and early > 0


def test_random_playouts_are_unchanged() -> None:
    # A regression guard of a known answer: the hash of 50 seeded 9x9 "random" playouts as the
    # kernel played them before the eye and MoGo policies were added (main at a53dc64). Tests
    # and benchmarks compare these games with pgx and OpenSpiel, so they must stay the same.
    env = go_env(9)
    h = hashlib.sha256()
    for seed in range(50):
        h.update(np.array(kernel_playout(env, "random", seed), np.int64).tobytes())
    assert h.hexdigest()[:16] == "c8eb1b2873160206"


@pytest.mark.parametrize("policy", ["eye", "mogo"])
def test_the_generic_path_plays_the_compiled_policy_s_games(policy) -> None:
    env = go_env(7)
    moves = kernel_playout(env, policy, 11)
    choose = env.policy(policy)(env)
    rng = Rng(11)
    played = []
    while len(env.legal_actions()):
        played.append(choose(env.legal_actions(), rng))
        env.step(played[-1])
    assert played == moves


@pytest.mark.parametrize("policy", ["eye", "mogo"])
def test_uct_s_compiled_and_generic_paths_search_alike_with_the_policy(policy) -> None:
    from mc_envs.agents import UCT

    env = go_env(5)
    env.step(12)
    fast = UCT(iterations=300, seed=3, policy=policy).search(env)
    plain = UCT(iterations=300, seed=3, policy=policy, compiled=False).search(env)
    assert fast.actions == plain.actions
    assert np.array_equal(fast.root_visits, plain.root_visits)
    assert np.allclose(fast.root_values, plain.root_values)


def mogo_choices(env, trials: int = 200) -> set[str]:
    ws = env.kernel.workspace(env.state_view)
    out = set()
    for seed in range(trials):
        state = np.array(env.state_view)
        out.add(go.choose(state, go_policy.MOGO, rng_state(seed), ws))
        assert np.array_equal(state, env.state_view)
    return vertices(env, out)


EMPTY_ROW = "." * 9
# Black's D5 (row 5) is put in atari by White's D4; E5 saves it (3 liberties).
SAVE_BY_EXTENDING = "  ".join([EMPTY_ROW] * 3 + ["...O.....", "..OX....."] + [EMPTY_ROW] * 4)
# Black's C7 is put in atari by White's C6; extending to D7 gives one liberty (a ladder), but
# White's B7 is in atari: A7 captures it.
SAVE_BY_CAPTURING = "  ".join([EMPTY_ROW, ".XOO.....", ".OX.O....", ".X......."] + [EMPTY_ROW] * 5)


def test_mogo_answers_an_atari_by_extending_or_capturing() -> None:
    assert mogo_choices(env_at(SAVE_BY_EXTENDING, 1, "D4")) == {"E5"}
    assert mogo_choices(env_at(SAVE_BY_CAPTURING, 1, "C6")) == {"A7"}


def test_mogo_plays_the_hane_patterns_around_the_last_move() -> None:
    # White attaches at E5 to Black's D5: the four hanes around the two stones match.
    env = env_at("  ".join([EMPTY_ROW] * 4 + ["...X....."] + [EMPTY_ROW] * 4), 1, "E5")
    assert mogo_choices(env) == {"D6", "E6", "D4", "E4"}


def test_mogo_captures_anywhere_when_no_atari_and_no_pattern() -> None:
    # White's A1 is in atari; White's last move H8 stands alone (no pattern around it).
    env = env_at("  ".join([EMPTY_ROW] * 7 + ["X........", "O........"]), 1, "H8")
    assert mogo_choices(env) == {"B1"}
    # Without the capture, the eye move: anything legal.
    env = env_at("  ".join([EMPTY_ROW] * 7 + ["X........", "........."]), 1, "H8")
    assert len(mogo_choices(env)) > 20


def test_the_cut_pattern_matches_and_the_table_is_symmetric() -> None:
    env = env_at("  ".join([EMPTY_ROW] * 3 + ["...XO....", "...O....."] + [EMPTY_ROW] * 4), 0)
    s = env.size + 2
    e5 = (4 + 1) * s + 4 + 1  # the cutting point, row 4 col 4
    assert go_policy.matches(env.state_view, e5, s, 0) and go_policy.matches(
        env.state_view, e5, s, 1
    )
    far = (7 + 1) * s + 7 + 1
    assert not go_policy.matches(env.state_view, far, s, 0)
    bits = np.unpackbits(go_policy.PATTERNS.view(np.uint8), bitorder="little").reshape(2, -1)
    # Colour swap: a neighbourhood with the colours swapped matches for the other mover.
    codes = np.arange(1 << 16)
    fields = [(codes >> (2 * i)) & 3 for i in range(8)]
    swapped = sum(np.where((f == 1) | (f == 2), 3 - f, f) << (2 * i) for i, f in enumerate(fields))
    assert np.array_equal(bits[0], bits[1][swapped]) and bits[0].sum() > 1000


def knowledge(env) -> dict[str, tuple[float, float]]:
    state = np.array(env.state_view)
    actions = env.legal_actions()
    visits = np.full(len(actions), -1.0)
    values = np.full(len(actions), -1.0)
    ws = env.kernel.workspace(state)
    env.kernel.knowledge["mogo"](state, actions, len(actions), ws, visits, values)
    assert np.array_equal(state, env.state_view)
    assert (visits >= 0).all() and (values >= 0).all() and (values <= 1).all()
    return {go_text.vertex(env.size, int(a)): (v, q) for a, v, q in zip(actions, visits, values)}


def test_the_mogo_knowledge_values_saves_and_captures_above_lone_edge_moves() -> None:
    prior = knowledge(env_at(SAVE_BY_EXTENDING, 1, "D4"))
    assert prior["E5"][1] > 0.5 > prior["J1"][1] and prior["E5"][1] > prior["E7"][1]
    assert prior["pass"][1] < 0.5 and prior["E7"][1] == 0.5
    prior = knowledge(env_at(SAVE_BY_CAPTURING, 1, "C6"))
    assert prior["A7"][1] > 0.5 and prior["D7"][1] < 0.5  # D7 is a self-atari
    # A9: a Black stone there has one liberty (self-atari), not a lone first-line move.
    prior = knowledge(env_at("  ".join([".O.......", EMPTY_ROW, "....X...."] + [EMPTY_ROW] * 6), 0))
    assert prior["A9"][1] < 0.5 == prior["E5"][1]


def test_the_mogo_knowledge_is_a_prior_on_random_positions() -> None:
    env = go_env(9)
    rng = np.random.default_rng(0)
    for _ in range(60):
        prior = knowledge(env)
        assert all(v >= go_policy.EVEN_VISITS for v, _ in prior.values())
        legal = env.legal_actions()
        env.step(int(rng.choice(legal[:-1] if len(legal) > 1 else legal)))
        if not len(env.legal_actions()):
            break


def test_the_policy_benchmark_reports_every_policy_and_the_ratios(tmp_path, capsys) -> None:
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "go_policy.py"
    out = tmp_path / "go_policy.json"
    tiny = ["--size", "5", "--seconds", "0.05", "--rounds", "1", "--uct-seconds", "0.05"]
    tiny += ["--duel-games", "20"]
    saved, sys.argv = sys.argv, [str(script), *tiny, "--out", str(out)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved
    report = json.loads(out.read_text())
    figures = report["policies"]
    assert set(figures) == {"random", "eye", "mogo"}
    for f in figures.values():
        assert f["playouts_per_s"] > 0 and f["uct_iterations_per_s"] > 0
        assert 0 < f["moves_per_playout"] <= 50 and 0 <= f["ended_by_passes"] <= 1
    ratio = report["ratios"]["mogo_over_random"]["playouts_per_s"]
    assert (
        abs(ratio - figures["mogo"]["playouts_per_s"] / figures["random"]["playouts_per_s"]) < 1e-9
    )
    assert set(report["duels"]) == {"eye_vs_random", "mogo_vs_random", "mogo_vs_eye"}
    assert all(
        0 <= score <= 1 and score * 40 == round(score * 40) for score in report["duels"].values()
    )
    assert "mogo_over_random" in capsys.readouterr().out


def test_the_uct_go_preset_takes_four_stones_in_atari() -> None:
    """The shipped preset (MoGo's playouts, RAVE, priors, the tree kept) at a small budget: Black
    captures the four White stones whose last liberty is E8."""
    from mc_envs.agents.specs import known, parse

    assert "uct-go" in known()
    rows = [EMPTY_ROW, ".XXX.....", "XOOOOX...", ".XXXX....", *[EMPTY_ROW] * 5]
    env = env_at("  ".join(rows), 0)
    agent = parse("uct-go:iterations=500", seed=0)
    params = agent.params
    assert (params["policy"], params["knowledge"], params["reuse"]) == ("mogo", "mogo", True)
    assert go_text.vertex(9, agent.act(env)) == "E8"


@pytest.mark.parametrize("policy", ["random", "eye", "mogo"])
def test_the_playouts_twin_plays_the_compiled_playouts_game(policy) -> None:
    # What a cold cache runs for the playout (the "random" one compiled on its own, the others
    # as Python over the compiled moves): the same moves, the same final state.
    env = go_env(7)
    code = env.kernel.policies[policy]
    games = []
    for run in (go.playout, go._playout_twin):
        state = np.array(env.state_view)
        seq = np.zeros(env.kernel.max_moves + 1, np.int64)
        n = run(state, code, rng_state(3), env.kernel.workspace(state), seq, 0)
        games.append((state.tolist(), seq[:n].tolist()))
    assert games[0] == games[1] and len(games[0][1]) > 10
    assert go.playout.twin is go._playout_twin
