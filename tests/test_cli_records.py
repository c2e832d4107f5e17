"""The shipped records and positions by name (mc-envs records, verify NAME, replay NAME, --board
NAME, --puzzle NAME, --warm-start NAME), the plain-text help, and the end of play --terminal."""

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import cli_with_ctrl_c

import mc_envs  # noqa: F401
from mc_envs import morpion_records
from mc_envs.cli import build_parser, main
from mc_envs.cli.input import UsageError
from mc_envs.cli.nrpa import record_actions
from mc_envs.cli.records import catalogue, position_text, record_file

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT), SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
DATA = resources.files("mc_envs").joinpath("data")


def run(*args, cwd, stdin=subprocess.DEVNULL, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "mc_envs.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=ENV,
        stdin=stdin,
        timeout=timeout,
    )


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def morpion_files():
    return sorted(e.name for e in DATA.joinpath("morpion").iterdir() if e.name.endswith(".json"))


def test_records_lists_every_shipped_record_with_its_game_moves_source_and_path(capsys):
    assert main(["records"]) == 0
    out = capsys.readouterr().out
    assert morpion_files(), "no shipped Morpion record"
    for file in morpion_files():
        record = morpion_records.read_record(DATA.joinpath("morpion", file))
        name = file.removesuffix(".json").removeprefix("msr_")
        row = next(line for line in out.splitlines() if line.split()[:1] == [name])
        assert f"morpion{record.variant.lower()}" in row
        assert f"{len(record.moves)} moves" in row
        assert record.meta["author"] in row
        assert row.endswith(f"mc_envs/data/morpion/{file}")
    assert re.search(r"^samegame1\.\.samegame20 +samegame +15x15 .*standard_20\.txt$", out, re.M)
    assert re.search(r"^sudoku1\.\.sudoku18 +sudoku +9x9", out, re.M)
    assert {"rosin82", "rosin178", "bruneau170"} <= {s.name for s in catalogue()}


def test_every_shipped_record_name_verifies(capsys):
    for shipped in (s for s in catalogue() if s.kind == "record"):
        assert main(["verify", shipped.name]) == 0, shipped.name
        assert f"{shipped.name}: certified: Morpion" in capsys.readouterr().out


@pytest.mark.parametrize(
    "arg", ["rosin82", "ROSIN82", "mc_envs/data/morpion/msr_rosin82.json"], ids=str
)
def test_verify_by_name_or_the_docs_path_works_from_any_folder(tmp_path, arg):
    result = run("verify", arg, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{arg}: certified: Morpion 5D record of 82 moves"


def test_the_records_the_docs_name_resolve_from_any_folder(tmp_path, monkeypatch):
    text = "\n".join((ROOT / name).read_text() for name in ("docs/guides/cli.md", "README.md"))
    command = r"mc-envs (?:verify|replay) "
    named = set(re.findall(rf"^{command}(\S+)", text, re.M))  # code blocks
    named |= set(re.findall(rf"`{command}([^`\s]+)", text))  # inline code
    named -= {"FILE", "solution.json", "games/game-01.sgf"}  # a placeholder, what solve
    # and arena --sgf-dir write in the lines above them
    assert {"rosin82", "rosin178", "mc_envs/data/morpion/msr_rosin82.json"} <= named
    monkeypatch.chdir(tmp_path)
    for arg in named:
        assert record_file(arg).is_file(), arg


def test_a_file_that_exists_wins_over_a_name(tmp_path, monkeypatch, capsys):
    doc = json.loads(record_file("rosin82").read_text())
    doc["moves"][40] = doc["moves"][10]  # move 41 repeats move 11
    monkeypatch.chdir(tmp_path)
    Path("rosin82").write_text(json.dumps(doc))
    assert record_file("rosin82") == Path("rosin82")
    assert main(["verify", "rosin82"]) == 1  # the local file, not the shipped record
    assert "move 41 " in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, tried, named",
    [
        (["verify", "rosin83"], "rosin83", "no such file, and no shipped record"),
        (["replay", "rosin83", "--png", "x.png"], "rosin83", "no such file, and no shipped record"),
        (["verify", "nothing/here.json"], "nothing/here.json", "no such file, and no shipped"),
        (
            ["verify", "samegame3"],
            "samegame3",
            "a shipped position of samegame (give it to --board)",
        ),
        (
            ["solve", "samegame", "--board", "samegame21", "--quiet"],
            "--board samegame21",
            "no shipped position; samegame takes samegame1..samegame20",
        ),
        (
            ["solve", "samegame", "--board", "sudoku2", "--quiet"],
            "--board sudoku2",
            "no such file, and a shipped position of sudoku",
        ),
        (
            ["solve", "sudoku", "--puzzle", "rosin82", "--quiet"],
            "--puzzle rosin82",
            "no such file, and a shipped record of morpion5d",
        ),
    ],
)
def test_an_unknown_name_is_one_line_naming_what_was_tried(
    tmp_path, monkeypatch, capsys, args, tried, named
):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = one_line_error(capsys)
    assert err.startswith(f"error: {tried}: ") and named in err and "mc-envs records" in err
    assert not list(tmp_path.iterdir())


def test_replay_a_record_by_name_as_gif_and_png(tmp_path, capsys):
    iio = pytest.importorskip("imageio.v3")
    gif, png = tmp_path / "out.gif", tmp_path / "x.png"
    assert main(["replay", "rosin82", "--gif", str(gif)]) == 0
    assert main(["replay", "rosin178", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert f"{gif}: 83 frame(s) (gif)" in out and f"{png}: 1 frame(s) (png)" in out
    assert iio.imread(gif).shape[0] == 83
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from mc_envs.render import replay

    game = replay.load(record_file("rosin178"))
    want = next(replay.frames(game, indices=[len(game)]))
    assert np.array_equal(iio.imread(png), want)  # the last position, pixel for pixel


def test_a_named_samegame_position_is_the_standard_board(tmp_path, capsys):
    from mc_envs.envs.samegame import standard_positions
    from mc_envs.games.samegame import parse_board

    for n in (1, 3, 20):
        assert np.array_equal(
            parse_board(position_text(f"samegame{n}", "board", "samegame")), standard_positions()[n]
        )
    out = tmp_path / "s.json"
    args = ["solve", "samegame", "--board", "samegame3", "--level", "1", "--playouts", "50"]
    assert main([*args, "--quiet", "--out", str(out)]) == 0
    board = json.loads(out.read_text())["env_kwargs"]["board"]
    assert np.array_equal(parse_board(board), standard_positions()[3])
    assert main(["verify", str(out)]) == 0


def test_a_named_sudoku_puzzle_is_the_files_and_is_solved(tmp_path, capsys):
    lines = DATA.joinpath("sudoku", "tdoku_test_puzzles.txt").read_text().splitlines()
    unique = [line.split(":") for line in lines if line and not line.startswith("#")]
    unique = [row for row in unique if row[1] == "1"]
    assert position_text("sudoku2", "puzzle", "sudoku") == unique[1][0]
    out = tmp_path / "s.json"
    args = ["solve", "sudoku", "--puzzle", "sudoku2", "--level", "1", "--out", str(out)]
    assert main([*args, "--quiet"]) == 0
    grid = "".join(re.findall(r"\d", capsys.readouterr().out.split("solved:")[1]))[:81]
    assert grid == unique[1][2]
    assert json.loads(out.read_text())["env_kwargs"]["puzzle"] == unique[1][0]


def test_a_puzzle_text_is_not_taken_for_a_name():
    assert position_text("." * 81, "puzzle", "sudoku") is None


def test_warm_start_takes_a_shipped_morpion_record_of_the_same_rules():
    env = gym.make("mc_envs/MorpionSolitaire5D-v0", illegal_action="raise")
    env.reset(seed=0)
    actions = record_actions("rosin82", env)
    assert len(actions) == 82
    for a in actions:
        env.step(a)
    assert env.unwrapped.score == 82
    env5t = gym.make("mc_envs/MorpionSolitaire5T-v0")
    with pytest.raises(UsageError, match="--warm-start rosin82: a 5D record, not 5T"):
        record_actions("rosin82", env5t)
    with pytest.raises(UsageError, match="--warm-start rosin83: no such file.*mc-envs records"):
        record_actions("rosin83", env5t)


def all_help_texts():
    parser = build_parser()
    texts = {"mc-envs": parser.format_help()}
    sub = next(a for a in parser._actions if a.choices and "solve" in a.choices)
    for name, child in sub.choices.items():
        texts[name] = child.format_help()
    return texts


def test_every_help_is_plain_text():
    texts = all_help_texts()
    assert {"solve", "verify", "replay", "play", "records", "arena", "warmup"} <= set(texts)
    flat = {name: " ".join(text.split()) for name, text in texts.items()}
    assert "shipped position's name: samegame1..samegame20" in flat["solve"]
    assert "mc-envs records" in flat["verify"] and "render extra alone" in flat["replay"]
    for name, text in texts.items():
        assert "`" not in text, f"{name} --help has backticks:\n{text}"
        assert not re.search(r":[a-z]+:", text), f"{name} --help has a role:\n{text}"
    result = run("--help", cwd=ROOT)  # the command's own output too
    assert result.returncode == 0 and result.stdout.startswith("usage: mc-envs")
    assert "`" not in result.stdout and not re.search(r":[a-z]+:", result.stdout)


def test_the_plain_text_check_catches_sphinx_markup():
    marked = "see :data:`mc_envs.registry.GAMES` and ``mc-envs``"
    assert "`" in marked and re.search(r":[a-z]+:", marked)


def test_end_of_input_leaves_play_terminal_cleanly(tmp_path):
    result = run("play", "connect4", "--terminal", "--vs", "random", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("end of input: game left unfinished")
    assert "Traceback" not in result.stderr and "EOFError" not in result.stderr


def read_until(stream, text: str, budget: float) -> str:
    """Reads a pipe until ``text`` appears (a prompt has no newline), within ``budget`` seconds."""
    seen, deadline = b"", time.monotonic() + budget
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {text!r} within {budget} s: {seen.decode()!r}"
        if select.select([stream], [], [], left)[0]:
            chunk = os.read(stream.fileno(), 4096)
            assert chunk, f"the pipe closed before {text!r}: {seen.decode()!r}"
            seen += chunk
    return seen.decode()


def test_ctrl_c_at_the_prompt_exits_130_in_one_line(tmp_path):
    proc = subprocess.Popen(
        cli_with_ctrl_c("play", "tictactoe", "--terminal", "--vs", "random"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=ENV,
    )
    try:
        read_until(proc.stdout, "q to quit): ", budget=60)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err.decode().strip() == "interrupted"
