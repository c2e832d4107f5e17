"""Go's SGF records (mc_envs/go_sgf.py): round trips of random games, a hand-written record, the
verify command's exit codes, hostile files, arena and play saving games, sgfmill reading our
files with its own parser."""

from __future__ import annotations

import datetime as dt
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sgfmill import sgf

from mc_envs import go_sgf
from mc_envs.cli import main
from mc_envs.cli.arena import arena
from mc_envs.cli.two_player import play_terminal
from mc_envs.envs.go import GoEnv
from mc_envs.games import go_layout as layout


def random_game(size: int, seed: int, komi: float = 7.5) -> tuple[GoEnv, list[int], int]:
    """A random legal game to its end; returns the env, the actions and the stones captured."""
    env = GoEnv(size, komi, illegal_action="raise")
    env.reset(seed=0)
    rng = np.random.default_rng(seed)
    actions: list[int] = []
    while len(env.legal_actions()):
        legal = env.legal_actions()
        moves = legal[legal != size * size]  # a pass one time in 30, so games fill the board
        a = size * size if len(moves) == 0 or rng.random() < 1 / 30 else int(rng.choice(moves))
        env.step(a)
        actions.append(a)
    data = env.clone_state().data
    return env, actions, int(data[layout.CAPTURES] + data[layout.CAPTURES + 1])


@pytest.mark.parametrize(("size", "games"), [(5, 12), (9, 4), (19, 1)])
def test_round_trip_of_random_games(size: int, games: int) -> None:
    passes = captured = 0
    for seed in range(games):
        komi = (7.5, 0.0, 6.0)[seed % 3]  # integer komi: draws can happen
        env, actions, taken = random_game(size, seed, komi)
        record = go_sgf.game_record(env, actions, black="uct", white="random [x]")
        data = go_sgf.to_sgf(record, date=dt.date(2026, 11, 25))
        back = go_sgf.parse_sgf(data, "round.sgf")
        assert (back.size, back.komi, back.actions) == (size, komi, tuple(actions))
        assert back.colours == tuple(i % 2 for i in range(len(actions)))
        assert back.result == record.result == go_sgf.result_text(go_sgf.margin(env))
        assert (back.black, back.white, back.rules) == ("uct", "random [x]", "Chinese")
        verdict = go_sgf.verify(back)
        assert verdict.ok, verdict.message
        assert (verdict.score > 0) == (env.returns()[0] > 0)
        passes += actions.count(size * size)
        captured += taken
    assert passes >= 2 and captured > 0  # the games had passes and captures to carry


def test_a_game_stopped_at_the_move_cap_is_recorded_scored_with_a_comment() -> None:
    env = GoEnv(5, 7.5, max_moves=50, illegal_action="raise")
    rng = np.random.default_rng(1)
    for _ in range(20):  # a game that reaches the cap: random moves, a pass only when forced
        env.reset(seed=0)
        actions: list[int] = []
        terminated = truncated = False
        while not (terminated or truncated):
            legal = env.legal_actions()
            a = int(rng.choice(legal[:-1])) if len(legal) > 1 else 25
            _, _, terminated, truncated, _ = env.step(a)
            actions.append(a)
        if truncated:
            break
    assert truncated and len(actions) == 50
    record = go_sgf.game_record(env, actions, black="a", white="b")
    assert record.result == go_sgf.result_text(go_sgf.margin(env))
    assert record.comment == go_sgf.cap_note(50)
    back = go_sgf.parse_sgf(go_sgf.to_sgf(record), "cap.sgf")
    assert back.comment == record.comment and back.result == record.result
    verdict = go_sgf.verify(back)  # replayed under the default cap, 2 * 5 * 5 = 50 moves
    assert verdict.ok and "stopped at the move cap, 50 moves" in verdict.message, verdict.message
    env.reset(seed=0)
    unfinished = go_sgf.game_record(env, [])
    assert unfinished.result is None and unfinished.comment is None


def sgfmill_moves(data: bytes) -> tuple[sgf.Sgf_game, list[tuple[str, bytes]]]:
    """The moves of SGF bytes as sgfmill's own parser reads them: colour and raw point."""
    game = sgf.Sgf_game.from_bytes(data)
    return game, [n.get_raw_move() for n in game.get_main_sequence()[1:]]


@pytest.mark.parametrize("size", [5, 9, 19])
def test_sgfmill_reads_our_files(size: int) -> None:
    env, actions, _ = random_game(size, 7)
    data = go_sgf.to_sgf(go_sgf.game_record(env, actions, black="a", white="b"))
    game, moves = sgfmill_moves(data)
    root = game.get_root()
    assert game.get_size() == size and game.get_komi() == 7.5
    assert root.get("FF") == 4 and root.get("GM") == 1 and root.get("RU") == "Chinese"
    assert root.get("AP")[0] == "mc-envs" and root.get("PB") == "a" and root.get("PW") == "b"
    assert root.get("RE") == go_sgf.result_text(go_sgf.margin(env))
    assert len(root.get("DT")) == 10 and root.get("DT")[4] == "-"
    expected = []
    for i, a in enumerate(actions):  # aa is the top-left point: column letter, then row letter
        row, col = divmod(a, size)
        raw = b"" if a == size * size else bytes([97 + col, 97 + row])
        expected.append(("bw"[i % 2], raw))
    assert moves == expected
    assert size * size in actions  # a pass among them, written B[] or W[]


# A record in GNU Go's style, written by hand on a 5x5 board: Black takes the White stone at
# B5 (ba), then both pass (one as FF[3]'s tt). Black: aa ca bb and the point ba (empty, reaching
# only Black) = 4; White: ee = 1; komi 0.5: Black wins by 2.5. A variation and comments are
# skipped; RU[Japanese] is read as written.
GNUGO_STYLE = b"""(;GM[1]FF[4]
SZ[5]
GN[GNU Go 3.8 Random Seed 1764028800]
DT[2026-11-25]
KM[0.5]HA[0]RU[Japanese]AP[GNU Go:3.8]
PB[GNU Go]PW[mc-envs uct]RE[B+2.5]
;B[aa]C[a corner];W[ba]
(;B[ca];W[ee];B[bb]C[captures B5];W[];B[tt])
(;B[dd]))
"""


def test_hand_written_record(tmp_path: Path) -> None:
    path = tmp_path / "gnugo.sgf"
    path.write_bytes(GNUGO_STYLE)
    record = go_sgf.read_sgf(path)
    assert (record.size, record.komi, record.result) == (5, 0.5, "B+2.5")
    assert record.actions == (0, 1, 2, 24, 6, 25, 25)
    assert record.colours == (0, 1, 0, 1, 0, 1, 0)
    assert (record.black, record.white, record.rules) == ("GNU Go", "mc-envs uct", "Japanese")
    verdict = go_sgf.verify(record)
    assert verdict.ok and verdict.score == 2.5, verdict.message
    assert "Black 4, White 1" in verdict.message


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mc_envs.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_verify_exit_codes(tmp_path: Path) -> None:
    good = tmp_path / "good.sgf"
    good.write_bytes(GNUGO_STYLE)
    wrong = tmp_path / "wrong.sgf"
    wrong.write_bytes(GNUGO_STYLE.replace(b"RE[B+2.5]", b"RE[W+0.5]"))
    illegal = tmp_path / "illegal.sgf"
    illegal.write_bytes(GNUGO_STYLE.replace(b"W[ee]", b"W[aa]"))
    broken = tmp_path / "broken.sgf"
    broken.write_bytes(GNUGO_STYLE.replace(b"SZ[5]", b"SZ[4]"))
    done = cli("verify", str(good))
    assert done.returncode == 0 and "certified" in done.stdout, done.stderr
    done = cli("verify", str(wrong))
    assert done.returncode == 1
    assert "RE[W+0.5], we score B+2.5" in done.stderr
    done = cli("verify", str(illegal))
    assert (
        done.returncode == 1 and "move 4 (node 4, W A5) is illegal: A5 is occupied" in done.stderr
    )
    done = cli("verify", str(broken))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {broken}: node 0: property SZ[4]: the board size must be 5..19"
    ]


HOSTILE = {
    "not-sgf.sgf": (b"this is not a game record\n", "not an SGF file"),
    "json.sgf": (b'{"format": "mc-envs/solution"}', "not an SGF file"),
    "chess.sgf": (b"(;GM[3]SZ[8];B[aa])", "node 0: property GM[3]"),
    "big-board.sgf": (b"(;GM[1]SZ[21])", "node 0: property SZ[21]"),
    "tiny-board.sgf": (b"(;GM[1]SZ[3])", "node 0: property SZ[3]"),
    "non-square.sgf": (b"(;GM[1]SZ[9:13];B[aa])", "node 0: property SZ[9:13]"),
    "off-board.sgf": (b"(;GM[1]SZ[9];B[ee];W[jj])", "node 2: property W[jj]"),
    "handicap.sgf": (b"(;GM[1]SZ[9]HA[2]AB[cc][gg];W[ee])", "node 0: property HA[2]"),
    "setup.sgf": (b"(;GM[1]SZ[9];B[ee];AW[cc])", "node 2: property AW[cc]"),
    "komi.sgf": (b"(;GM[1]SZ[9]KM[six];B[ee])", "node 0: property KM[six]"),
    "result.sgf": (b"(;GM[1]SZ[9]RE[Black wins];B[ee])", "node 0: property RE[Black wins]"),
    "two-moves.sgf": (b"(;GM[1]SZ[9];B[ee]W[cc])", "node 1: property W[cc]"),
    "white-first.sgf": (b"(;GM[1]SZ[9]PL[W];W[ee])", "node 0: property PL[W]"),
    "huge.sgf": (b"(;GM[1]SZ[9]C[" + b"x" * go_sgf.MAX_BYTES + b"])", "bytes: not read"),
    "endless.sgf": (b"(;GM[1]SZ[5]" + b";B[];W[]" * 60 + b")", "node 101: property B[]"),
    "nested.sgf": (b"(;GM[1]SZ[5]" + b"(;B[]" * 60_000 + b")" * 60_001, "node 101"),
    "truncated.sgf": (b"(;GM[1]SZ[9];B[ee];W[", "not an SGF file"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_exit_2_with_one_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data, expected = HOSTILE[name]
    path = tmp_path / name
    path.write_bytes(data)
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"error: {path}: "), err
    assert expected in err, err
    if "node" in expected:
        assert "property" in err


def test_results_as_the_sgf_spec_writes_them() -> None:
    assert [go_sgf.result_text(m) for m in (3.5, -0.5, 0.0, 12)] == ["B+3.5", "W+0.5", "0", "B+12"]
    assert go_sgf.parse_result("W+Resign") == (1, None, "resignation")
    assert go_sgf.parse_result("B+T") == (0, None, "time")
    assert go_sgf.parse_result("Draw") == (None, 0.0, "draw")
    assert go_sgf.parse_result("W+7.5") == (1, -7.5, "score")
    assert go_sgf.parse_result("B+") == (0, None, "winner")
    assert go_sgf.parse_result("B+-3") is None and go_sgf.parse_result("X+1") is None


def test_verify_of_results_without_a_score() -> None:
    record = go_sgf.parse_sgf(GNUGO_STYLE)
    winner_only = go_sgf.verify(go_sgf.parse_sgf(GNUGO_STYLE.replace(b"B+2.5", b"B+")))
    assert winner_only.ok
    wrong_winner = go_sgf.verify(go_sgf.parse_sgf(GNUGO_STYLE.replace(b"B+2.5", b"W+")))
    assert not wrong_winner.ok
    ended = go_sgf.verify(go_sgf.parse_sgf(GNUGO_STYLE.replace(b"B+2.5", b"W+R")))
    assert not ended.ok and "ran to its end" in ended.message  # two passes ended it: no resign
    early = GNUGO_STYLE.replace(b"B+2.5", b"W+R").replace(b";W[];B[tt]", b"")
    resigned = go_sgf.verify(go_sgf.parse_sgf(early))
    assert resigned.ok and "White won by resignation" in resigned.message
    unknown = go_sgf.verify(go_sgf.parse_sgf(GNUGO_STYLE.replace(b"RE[B+2.5]", b"")))
    assert not unknown.ok and "no result to check" in unknown.message
    assert record.result == "B+2.5"


def test_arena_writes_one_file_a_game_matching_its_tally(tmp_path: Path) -> None:
    folder = tmp_path / "games"
    stats = arena(
        "go", "random", "uct", games=4, seed=3, iterations=20, progress=False,
        out=io.StringIO(), sgf_dir=folder,
    )  # fmt: skip
    files = sorted(folder.glob("*.sgf"))
    assert [f.name for f in files] == [f"game-{g}.sgf" for g in range(1, 5)]
    assert {f.name for f in folder.iterdir()} - {f.name for f in files} == {"arena.json"}
    tally = {"wins": 0, "draws": 0, "losses": 0}
    for g, path in enumerate(files):
        record = go_sgf.read_sgf(path)
        a_colour = g % 2  # agent_a is Black in games 1 and 3
        assert (record.black, record.white) == (("random", "uct"), ("uct", "random"))[a_colour]
        assert go_sgf.verify(record).ok
        winner, _, how = go_sgf.parse_result(record.result)
        key = "draws" if how == "draw" else ("wins" if winner == a_colour else "losses")
        tally[key] += 1
    assert tally == {k: stats[k] for k in tally}


def test_arena_and_terminal_play_take_the_game_flags(tmp_path: Path) -> None:
    folder = tmp_path / "small"
    done = cli("arena", "go", "random", "random", "--games", "2", "--size", "5", "--quiet",
               "--sgf-dir", str(folder))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 games" in done.stdout
    sizes = {go_sgf.read_sgf(path).size for path in folder.glob("*.sgf")}
    assert sizes == {5}
    path = tmp_path / "terminal.sgf"
    done = subprocess.run(
        [sys.executable, "-m", "mc_envs.cli", "play", "go", "--terminal", "--size", "7",
         "--vs", "random", "--sgf", str(path)],
        input="D4\n", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = go_sgf.read_sgf(path)
    assert record.size == 7 and record.actions[0] == 3 * 7 + 3  # D4: the middle of 7x7
    bad = cli("arena", "connect4", "random", "random", "--size", "5", "--quiet")
    assert bad.returncode == 2 and "--size" in bad.stderr and len(bad.stderr.splitlines()) == 1


def test_terminal_play_saves_the_game(tmp_path: Path) -> None:
    path = tmp_path / "terminal.sgf"
    moves = iter(["E5", "pass", "q"])
    play_terminal("go", "random", input_fn=lambda _: next(moves), out=io.StringIO(), sgf=str(path))
    record = go_sgf.read_sgf(path)
    assert record.actions[0] == 40 and record.actions[2] == 81 and len(record.actions) == 4
    assert (record.black, record.white, record.result) == ("human", "random", None)
    assert b"B[]" in path.read_bytes()  # the human's pass, FF[4]'s way


def test_play_window_saves_each_finished_game(tmp_path: Path) -> None:
    pytest.importorskip("pygame", reason="the render extra")
    from mc_envs.render.play import PlaySession

    path = tmp_path / "window.sgf"
    session = PlaySession(GoEnv(5), opponent=None)
    for action in (12, 6, 25):
        assert session.play(action)
    saved = go_sgf.save_session(path, session, None)
    assert saved is None and not path.exists()  # not over: nothing yet
    go_sgf.save_session(path, session, None, final=True)  # the window closed
    assert go_sgf.read_sgf(path).actions == (12, 6, 25)
    session.play(25)
    saved = go_sgf.save_session(path, session, "uct")
    record = go_sgf.read_sgf(path)
    assert saved is not None and record.actions == (12, 6, 25, 25)
    assert (record.black, record.white, record.result) == ("human", "uct", "W+7.5")  # 1 - 1 - 7.5


def test_replay_loads_sgf(tmp_path: Path) -> None:
    pytest.importorskip("pygame", reason="the render extra")
    from mc_envs.render import replay

    path = tmp_path / "gnugo.sgf"
    path.write_bytes(GNUGO_STYLE)
    game = replay.load(path)
    assert len(game) == 7 and game.outcome.endswith("wins")
    assert "Go 5x5" in game.title and "RE B+2.5" in game.title
    png = tmp_path / "last.png"
    assert replay.export(game, png=str(png)) == {"png": 1} and png.stat().st_size > 0
    illegal = tmp_path / "illegal.sgf"
    illegal.write_bytes(GNUGO_STYLE.replace(b"W[ee]", b"W[aa]"))
    with pytest.raises(ValueError, match="move 4 .*occupied"):
        replay.load(illegal)


def test_mutated_records_give_a_verdict_or_one_line() -> None:
    import random

    rnd = random.Random(42)
    alphabet = b"()[];\\:BWAEGMSZKRHPLt az19-+.\n\xff"
    for _ in range(400):
        data = bytearray(GNUGO_STYLE)
        for _ in range(rnd.randint(1, 5)):
            k = rnd.randrange(len(data))
            if rnd.random() < 0.5:
                data[k] = rnd.choice(alphabet)
            else:
                data.insert(k, rnd.choice(alphabet))
        try:
            verdict = go_sgf.verify(go_sgf.parse_sgf(bytes(data), "mutated.sgf"))
        except go_sgf.SgfError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("mutated.sgf: ")
        else:
            assert "\n" not in verdict.message


def test_play_window_saves_an_unfinished_game_when_closed(monkeypatch, tmp_path: Path) -> None:
    pytest.importorskip("pygame", reason="the render extra")
    from mc_envs.render import play, window

    class ClosesAfterAWhile(window.Window):
        frames = 0

        def pump(self) -> list:
            events = super().pump()
            ClosesAfterAWhile.frames += 1
            self.closed = self.closed or ClosesAfterAWhile.frames >= 90  # 3 s: random moved
            return events

        def close(self) -> None:  # keep the test display open
            self.closed = True

    monkeypatch.setattr(window, "Window", ClosesAfterAWhile)
    path = tmp_path / "closed.sgf"
    assert play.run("go", vs="random", human_player=1, sgf=str(path)) == 0
    record = go_sgf.read_sgf(path)
    assert len(record.actions) == 1 and record.colours == (0,)  # random (Black) moved; no RE
    assert (record.black, record.white, record.result) == ("random", "human", None)
