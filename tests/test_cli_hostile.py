"""Hostile input on the command line: every bad file, value or path is one line on stderr and exit
2 (verify: 1 only for a wrong score or an illegal move), checked before any search starts, and a
finished search's record is never lost."""

import json
import tempfile
import time
from pathlib import Path

import pytest

from mc_envs import records
from mc_envs.cli import main
from mc_envs.records import make_record

QUICK = ["solve", "leftmove", "--depth", "6", "--level", "1", "--playouts", "20", "--quiet"]


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err


def record(**changes):
    base = make_record(
        env_id="mc_envs/LeftMove-v0",
        env_kwargs={"depth": 3},
        reset_seed=0,
        actions=[0, 0, 0],
        score=3.0,
        agent="test",
        params={},
        seconds=0.0,
        playouts=0,
    )
    base.update(changes)
    return base


def verify(tmp_path, capsys, content, want):
    path = tmp_path / "record.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    assert main(["verify", str(path)]) == want
    return one_line_error(capsys) if want else capsys.readouterr().out


def test_a_valid_record_certifies(tmp_path, capsys):
    assert "certified" in verify(tmp_path, capsys, record(), 0)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not UTF-8"),
        (record(env_id="CartPole-v1"), "not an mc_envs/ id"),
        (record(version=2), "field 'version'"),
        (record(version="1"), "field 'version'"),
        (record(env_kwargs={"depht": 3}), "takes no 'depht'"),
        (record(env_kwargs={"depth": "3"}), "key 'depth'"),
        (record(env_kwargs={"depth": -3}), "refuses them"),
        (record(actions=[0, 0.5, 0]), "index 1 is 0.5"),
        (record(score="3"), "field 'score'"),
        (record(reset_seed=-1), "reset_seed"),
        ('{"format": "mc-envs/solution", "a": ' + "[" * 100_000, "JSON"),
    ],
)
def test_a_bad_solution_record_is_unreadable_not_wrong(tmp_path, capsys, content, message):
    assert message in verify(tmp_path, capsys, content, 2)


@pytest.mark.parametrize(
    "content, want", [(record(score=2.0), "score differs"), (record(actions=[0, 7]), "illegal")]
)
def test_a_wrong_record_exits_1(tmp_path, capsys, content, want):
    assert want in verify(tmp_path, capsys, content, 1)


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"variant": "5D", "moves": [{"x": 1, "y": "a", "dir": "H", "pos": 0}]}', "move 1"),
        ('{"variant": "5D", "score": "x", "moves": []}', "'score'"),
        ('{"variant": "5E", "moves": []}', "variant"),
        ("# variant 5D\n(3,3)\n(1,2) - 7\n", "line 3"),
        ("# variant 5D\nnot a dot\n", "line 2"),
    ],
)
def test_a_bad_morpion_record_exits_2(tmp_path, capsys, content, message):
    assert message in verify(tmp_path, capsys, content, 2)


def test_verify_a_missing_file_exits_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "none.json")]) == 2
    err = one_line_error(capsys)
    assert f"{tmp_path / 'none.json'}: no such file, and no shipped record" in err
    assert "mc-envs records" in err


def test_verify_a_folder_exits_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 2
    assert "cannot read" in one_line_error(capsys)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--time", "-5"),
        ("--time", "0"),
        ("--time", "nan"),
        ("--level", "-1"),
        ("--workers", "0"),
        ("--playouts", "-1"),
        ("--depth", "0"),
    ],
)
def test_meaningless_numbers_are_refused_at_parse_time(capsys, option, value):
    with pytest.raises(SystemExit) as exit_:
        main(["solve", "leftmove", option, value])
    assert exit_.value.code == 2
    assert option in one_line_error(capsys)


def test_an_unwritable_out_fails_before_the_search(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    start = time.perf_counter()
    # --time 60 and no playout budget: it would search for a minute if it started
    argv = ["solve", "leftmove", "--depth", "40", "--level", "3", "--time", "60", "--quiet"]
    assert main([*argv, "--out", str(blocker / "out.json")]) == 2
    assert time.perf_counter() - start < 20
    assert "--out" in one_line_error(capsys)


def test_an_out_that_is_a_folder_is_refused(tmp_path, capsys):
    assert main([*QUICK, "--out", str(tmp_path)]) == 2
    assert "is a folder" in one_line_error(capsys)


def test_an_unwritable_checkpoint_fails_before_the_search(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = [*QUICK, "--algo", "nrpa", "--out", str(tmp_path / "s.json")]
    assert main([*argv, "--checkpoint", str(blocker / "c.json")]) == 2
    assert "--checkpoint" in one_line_error(capsys)


def test_resume_from_a_missing_checkpoint_is_a_usage_error(tmp_path, capsys):
    argv = [*QUICK, "--algo", "nrpa", "--out", str(tmp_path / "s.json")]
    assert main([*argv, "--checkpoint", str(tmp_path / "none.json"), "--resume"]) == 2
    assert "no checkpoint file" in one_line_error(capsys)


def test_a_binary_board_file_is_a_usage_error(tmp_path, capsys):
    board = tmp_path / "board.txt"
    board.write_bytes(b"\xff\xfe\x00\x01")
    assert main(["solve", "samegame", "--board", str(board), "--out", str(tmp_path / "s")]) == 2
    assert "--board" in one_line_error(capsys)


def test_a_bad_sudoku_puzzle_file_is_a_usage_error(tmp_path, capsys):
    puzzle = tmp_path / "p.txt"
    puzzle.write_text("12x" + "." * 78)
    assert main(["solve", "sudoku", "--puzzle", str(puzzle), "--out", str(tmp_path / "s")]) == 2
    assert "bad symbol 'x'" in one_line_error(capsys)


def test_a_failed_final_write_saves_the_record_elsewhere(tmp_path, capsys, monkeypatch):
    out = tmp_path / "s.json"
    real = records.write_record

    def failing(path, rec):
        if str(path) == str(out):
            raise OSError(28, "No space left on device")
        real(path, rec)

    monkeypatch.setattr(records, "write_record", failing)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # not the system's
    assert main([*QUICK, "--out", str(out)]) == 1
    err = one_line_error(capsys)
    assert "No space left on device" in err and "record saved to" in err
    fallback = err.split("record saved to ")[1].split(" (")[0]
    assert Path(fallback).parent == tmp_path
    monkeypatch.setattr(records, "write_record", real)
    assert main(["verify", fallback]) == 0
