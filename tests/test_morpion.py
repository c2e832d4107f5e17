"""Morpion Solitaire 5D/5T: rules on text pictures, the records, the kernel against the env."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mc_envs
from mc_envs import IllegalActionError
from mc_envs.envs.morpion import MorpionSolitaireEnv
from mc_envs.games import morpion as rules
from mc_envs.games import morpion_text as mtext
from mc_envs.morpion_records import (
    MorpionMove,
    action_moves,
    load_record,
    read_pentasol,
    record_actions,
    shipped_record,
    verify_record,
    write_msr,
    write_pentasol,
)
from mc_envs.rng import Rng, rng_state

RECORDS = [("rosin82", "5D", 82), ("rosin178", "5T", 178), ("bruneau170", "5T", 170)]


def moves_at(state: np.ndarray) -> list[tuple[int, int, str, int]]:
    """Legal moves as (x, y, direction, pos) in grid coordinates."""
    out = np.zeros(20 * rules.size_of(state) ** 2, dtype=np.int64)
    n = rules.legal(state, rules.workspace(state), out)
    moves = []
    for a in out[:n]:
        x, y, d, p = rules.decode(int(a), rules.size_of(state))
        moves.append((x, y, rules.DIRECTION_NAMES[d], p))
    return moves


# -- the start --------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["5D", "5T"])
def test_start_has_28_moves(variant):
    env = gym.make(f"mc_envs/MorpionSolitaire{variant}-v0").unwrapped
    env.reset(seed=0)
    legal = env.legal_actions()
    assert len(legal) == 28
    assert np.all(np.diff(legal) > 0)
    assert env.score == 0 and env.max_score is None
    obs = env._observation()
    assert obs.shape == (5, 32, 32) and obs[0].sum() == 36 and obs[1:].sum() == 0


@pytest.mark.parametrize("variant", ["5D", "5T"])
def test_check_env(variant):
    env = gym.make(f"mc_envs/MorpionSolitaire{variant}-v0", render_mode="ansi").unwrapped
    check_env(env)  # action_space.sample() draws legal actions


def test_ids_and_variant_kwargs():
    assert "mc_envs/MorpionSolitaire5D-v0" in mc_envs.ENVS
    env = gym.make("mc_envs/MorpionSolitaire5T-v0", size=24).unwrapped
    assert env.variant == "5T" and env.size == 24 and env.action_space.n == 20 * 24 * 24
    with pytest.raises(ValueError, match="variant"):
        MorpionSolitaireEnv(variant="4D")
    with pytest.raises(ValueError, match="too small"):
        MorpionSolitaireEnv(size=8)


# -- rules on text pictures -------------------------------------------------------------------

TOUCH_H = """
o-o-o-o-o o o o .
"""

OVERLAP_H = """
o-o-o-o-o o o .
"""

GAP_H = """
o-o-o-o-o . o o o o
"""

TOUCH_DN = """
o
 \\
. o
   \\
. . o
     \\
. . . o
       \\
. . . . o

. . . . . o

. . . . . . o

. . . . . . . o

. . . . . . . . .
"""

CROSSING = """
o
|
o
|
o o o o .
|
o
|
o
"""


def picture(text, variant):
    return mtext.from_text(text, variant, size=16, at=(2, 2))


def test_touching_parallel_line_legal_in_5t_only():
    assert moves_at(picture(TOUCH_H, "5T")) == [(10, 2, "H", 4)]
    d = picture(TOUCH_H, "5D")
    assert moves_at(d) == []
    why = mtext.why_illegal(d, rules.encode(10, 2, 0, 4, 16))
    assert "touching parallel line" in why and "5D" in why


def test_overlapping_line_illegal_in_both():
    for variant in ("5D", "5T"):
        s = picture(OVERLAP_H, variant)
        assert moves_at(s) == []
        why = mtext.why_illegal(s, rules.encode(9, 2, 0, 4, 16))
        assert "overlapping line" in why and "already used" in why


def test_gap_between_parallel_lines():
    # The free point right after the line (grid x=7): the line 7..11 is legal in both variants,
    # 6..10 shares only the end dot of the drawn line, legal in 5T only. 8..12 (new dot x=12)
    # stays clear of the drawn line.
    assert moves_at(picture(GAP_H, "5T")) == [(7, 2, "H", 0), (7, 2, "H", 1), (12, 2, "H", 4)]
    assert moves_at(picture(GAP_H, "5D")) == [(7, 2, "H", 0), (12, 2, "H", 4)]


def test_diagonal_touching_and_mirror():
    assert moves_at(picture(TOUCH_DN, "5T")) == [(10, 10, "DN", 4)]
    assert moves_at(picture(TOUCH_DN, "5D")) == []
    # Mirrored top-bottom, "\" becomes "/": the same rule along DP.
    rows = TOUCH_DN.strip("\n").split("\n")
    mirrored = "\n".join(r.replace("\\", "/") for r in reversed(rows))
    assert moves_at(picture(mirrored, "5T")) == [(10, 2, "DP", 4)]
    assert moves_at(picture(mirrored, "5D")) == []


def test_lines_of_other_directions_may_cross():
    for variant in ("5D", "5T"):
        s = picture(CROSSING, variant)
        assert (6, 4, "H", 4) in moves_at(s)


def test_missing_dot_and_occupied_point_reasons():
    env = MorpionSolitaireEnv("5D")
    env.reset()
    ox, oy = env.origin
    why = env._why_illegal(rules.encode(ox + 4, oy + 4, 0, 0, 32))
    assert "missing dot" in why
    why = env._why_illegal(env.action_of(0, 3, "H", 0))
    assert "already a dot" in why


def test_text_round_trip_after_random_game():
    for variant in ("5D", "5T"):
        s = rules.initial_state(variant)
        seq = np.zeros(800, dtype=np.int64)
        n = rules.playout(s, 0, rng_state(7), rules.workspace(s), seq, 0)
        back = mtext.from_text(mtext.to_text(s, crop=False), variant, moves=n)
        assert np.array_equal(back, s)


def _random_games(variant, size, seed, games):
    """Random games from the cross: (start, workspace, the game's moves, its end state) each."""
    rng = rng_state(seed)
    start = rules.initial_state(variant, size)
    ws = rules.workspace(start)
    seq = np.zeros(1000, dtype=np.int64)
    for _ in range(games):
        s = start.copy()
        n = rules.playout(s, 0, rng, ws, seq, 0)
        yield start, ws, seq[:n].copy(), s


@pytest.mark.parametrize("size", [32, 13])  # 13: lines run into the grid's edges
@pytest.mark.parametrize("variant", ["5D", "5T"])
def test_incremental_moves_equal_full_rescan(variant, size):
    for start, ws, game, end in _random_games(variant, size, 11, 30):
        check = start.copy()
        for a in game[: len(game) // 2]:
            rules.play(check, a, ws)
        full = check.copy()
        rules.rescan(full)
        assert np.array_equal(full, check)
        full = end.copy()
        rules.rescan(full)
        assert np.array_equal(full, end) and end[rules.H_NLEGAL] == 0


@pytest.mark.parametrize("size", [32, 13, 64])  # 64: three mask words a row, the last one partial
def test_legal_lists_every_move_bit_in_cell_order(size):
    out = np.zeros(20 * size * size, dtype=np.int64)
    for start, ws, game, _ in _random_games("5T", size, 5, 10):
        s = start.copy()
        for a in game[: len(game) // 2]:
            rules.play(s, a, ws)
            bits = rules.cells(s).reshape(-1).astype(np.int64) >> rules.MOVE_SHIFT
            want = [c * 20 + b for c in np.flatnonzero(bits) for b in range(20) if bits[c] >> b & 1]
            got = rules.legal(s, ws, out)
            assert out[:got].tolist() == want


def test_a_wrong_row_mask_is_refused_by_name():
    env = MorpionSolitaireEnv("5D")
    env.reset()
    for _ in range(5):
        env.step(int(env.legal_actions()[0]))
    snap = env.clone_state()
    data = snap.data.copy()
    g = rules.size_of(data)
    masks = rules.HEADER + g * g
    y = int(np.flatnonzero(data[masks:].reshape(g, -1).any(axis=1))[0])
    data[masks + y * rules.words(g)] ^= 1 << 30  # a cell of the row without moves, marked
    with pytest.raises(ValueError, match=f"row mask y={y}, word 0"):
        env.restore_state(type(snap)(snap.game, snap.config, data))
    env.restore_state(snap)  # the untouched snapshot is still accepted


# -- the env contract -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["5D", "5T"])
def test_kernel_playout_equals_env_playout(variant):
    env = MorpionSolitaireEnv(variant)
    env.reset(seed=3)
    for seed in (1, 2, 3):
        s = env._state.copy()
        seq = np.zeros(env.kernel.max_moves + 1, dtype=np.int64)
        n = env.kernel.playout(s, 0, rng_state(seed), env.kernel.workspace(s), seq, 0)
        root = env.clone_state()
        rng = Rng(seed)
        played = []
        terminated = False
        while not terminated:
            actions = env.legal_actions()
            a = int(actions[rng.below(len(actions))])
            played.append(a)
            _, reward, terminated, truncated, info = env.step(a)
            assert reward == 1.0 and not truncated
        assert played == seq[:n].tolist()
        assert env.score == n == env.kernel.score(s)
        assert np.array_equal(env._state, s)
        env.restore_state(root)


def test_clone_restore_replay():
    env = MorpionSolitaireEnv("5T", render_mode="ansi")
    env.reset(seed=0)
    rng = Rng(5)
    for _ in range(10):
        env.step(env.legal_actions()[rng.below(len(env.legal_actions()))])
    snap = env.clone_state()
    obs0, legal0 = env._observation(), env.legal_actions().copy()
    trail = []
    while len(env.legal_actions()):
        a = int(env.legal_actions()[rng.below(len(env.legal_actions()))])
        trail.append((a, env._observation()))
        env.step(a)
    end = env.clone_state()
    env.restore_state(snap)
    assert np.array_equal(env._observation(), obs0)
    assert np.array_equal(env.legal_actions(), legal0)
    for a, obs in trail:
        assert np.array_equal(env._observation(), obs)
        env.step(a)
    assert env.clone_state() == end
    assert "score" in env.render()
    with pytest.raises(ValueError, match="5D"):
        MorpionSolitaireEnv("5D").restore_state(snap)


def test_illegal_action_leaves_state_unchanged():
    env = MorpionSolitaireEnv("5D", illegal_action="raise")
    env.reset()
    before = env.clone_state()
    with pytest.raises(IllegalActionError, match="already a dot"):
        env.step(env.action_of(3, 0, "H", 0))
    with pytest.raises(IllegalActionError, match="outside"):
        env.step(env.action_space.n)
    assert env.clone_state() == before


# -- records ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name,variant,score", RECORDS)
def test_records_verify(name, variant, score):
    path = shipped_record(name)
    assert verify_record(path) == score
    v, moves = load_record(path)
    assert v == variant and len(moves) == score
    env = MorpionSolitaireEnv(variant)
    env.reset()
    for a in record_actions(moves):
        env.step(a)
    assert env.score == score and len(env.legal_actions()) == 0
    assert action_moves(record_actions(moves)) == moves


def _first_user(moves, k):
    """1-based number of the first move after k (1-based) whose line uses move k's new dot."""
    dot = (moves[k - 1].x, moves[k - 1].y)
    for j in range(k + 1, len(moves) + 1):
        m = moves[j - 1]
        if dot in m.line():
            assert dot != (m.x, m.y)
            return j
    raise AssertionError("no later move uses that dot")


@pytest.mark.parametrize("name,variant,score", RECORDS)
def test_corrupted_records_rejected(tmp_path, name, variant, score):
    doc = json.loads(shipped_record(name).read_text())
    _, moves = load_record(shipped_record(name))
    # A move repeated: the copy (move 12) places a dot that is already there.
    bad = dict(doc, moves=doc["moves"][:11] + [doc["moves"][10]] + doc["moves"][11:])
    path = tmp_path / "repeated.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"repeated\.json: move 12 .*already a dot"):
        verify_record(path)
    # A move removed: the first later move through its dot misses it (numbers shift by one).
    expected = _first_user(moves, 5) - 1
    bad = dict(doc, moves=doc["moves"][:4] + doc["moves"][5:], score=score - 1)
    path = tmp_path / "removed.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=rf"move {expected} .*missing dot"):
        verify_record(path)
    # A wrong stated score.
    path.write_text(json.dumps(dict(doc, score=score + 1)))
    with pytest.raises(ValueError, match="states score"):
        verify_record(path)


def test_wrong_variant_named():
    with pytest.raises(ValueError, match=r"move 6 .*wrong variant"):
        verify_record(shipped_record("rosin178"), variant="5D")
    assert verify_record(shipped_record("rosin82"), variant="5T") == 82


def test_pentasol_round_trip(tmp_path):
    for name, variant, score in RECORDS:
        _, moves = load_record(shipped_record(name))
        path = tmp_path / f"{name}.txt"
        write_pentasol(path, moves, variant)
        record = read_pentasol(path)
        assert record.moves == moves and record.variant == variant
        assert verify_record(path) == score
    msr = tmp_path / "again.json"
    write_msr(msr, variant, moves, author="test")
    assert load_record(msr) == (variant, moves)


def test_pentasol_reading_conventions(tmp_path):
    # The cross's point (3, 3) is at (10, 20); "+2": the new dot is the line's left end.
    path = tmp_path / "g.txt"
    path.write_text("# Morpion Solitaire game\n(10,20)\n(7,17) | +2\n(8,21) - 0\n(9,16) \\ -2\n")
    assert read_pentasol(path).moves == [
        MorpionMove(0, 0, "V", 0),
        MorpionMove(1, 4, "H", 2),
        MorpionMove(2, -1, "DN", 4),
    ]


def test_malformed_files_named(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"variant": "5D",\n "moves": [\n')
    with pytest.raises(ValueError, match=r"broken\.json: line \d+: invalid JSON"):
        verify_record(path)
    bad_move = {"x": 1, "y": 2, "dir": "Q", "pos": 0}
    path.write_text(json.dumps({"variant": "5D", "moves": [bad_move]}))
    with pytest.raises(ValueError, match=r"broken\.json: move 1: 'dir'"):
        verify_record(path)
    path.write_text(json.dumps({"variant": "4T", "moves": []}))
    with pytest.raises(ValueError, match="unsupported variant"):
        verify_record(path)
    text = tmp_path / "broken.txt"
    text.write_text("(28,28)\n(27,25) - +2\n(32,32) ? 0\n")
    with pytest.raises(ValueError, match=r"broken\.txt: line 3"):
        verify_record(text)
    text.write_text("(28,28)\n(27,25) - +3\n")
    with pytest.raises(ValueError, match=r"line 2: offset 3"):
        verify_record(text)
    with pytest.raises(ValueError, match="outside the 12x12 grid"):
        verify_record(shipped_record("rosin178"), size=12)


def test_apply_compiled_once_per_track_flag():
    """_apply's ``track`` is a constant at each call (play: False, playout: True): it keeps one
    specialisation per constant, its pruned branches the playouts' speed, while a kernel of the
    default njit compiles once whatever constants its callers pass."""
    from mc_envs._numba import Dispatcher, Interpretable, njit

    assert type(rules._apply) is Interpretable and type(rules.play) is Dispatcher

    def flagged(x, on):
        return x + 1 if on else x - 1

    def callers(callee):
        @njit
        def both(x):
            return callee(x, True) + callee(x, False)

        return both

    kept, merged = njit(constants=True)(flagged), njit(flagged)
    assert callers(kept)(5) == callers(merged)(5) == 10
    assert (len(kept.signatures), len(merged.signatures)) == (2, 1)
