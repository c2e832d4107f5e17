"""Agent specs with options, and the resumable arena (``mc-envs arena --sgf-dir --resume --jobs``)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import cli_with_ctrl_c

from mc_envs import go_sgf
from mc_envs.agents import RandomAgent, specs
from mc_envs.agents.mcts import presets
from mc_envs.agents.specs import parse
from mc_envs.cli import arena_state, main
from mc_envs.cli.arena import arena


def test_spec_options_reach_the_constructor() -> None:
    agent = parse("uct:iterations=3000,policy=eye,reuse=false,c=1", seed=3)
    assert (agent.iterations, agent.policy, agent.reuse, agent.seed) == (3000, "eye", False, 3)
    assert agent.c == 1.0 and isinstance(agent.c, float)
    hard = parse("UCT-hard:c=0.5", iterations=7)  # the caller's budget over the preset's
    assert (hard.iterations, hard.c) == (7, 0.5)
    assert parse("uct-hard:iterations=9", iterations=7).iterations == 9  # the spec's own wins
    assert parse("puct:fpu=0.25,iterations=none,time_limit=1.5").time_limit == 1.5
    assert parse("random:seed=5").seed == 5
    rave = parse("uct:rave=1000,reuse=false")  # a keyword UCT gained: an option at once
    assert rave.options.rave == 1000.0 and rave.rule == "rave"
    assert specs.option_value("1e3") == 1000.0 and specs.option_value("None") is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("uct:rollouts=5", r"unknown option 'rollouts'; UCT takes \[.*'iterations'.*'reuse'"),
        ("puct:nope=1", r"unknown option 'nope'; PUCT takes \[.*'fpu'"),
        ("uct:iterations=abc", r"option iterations='abc' is not int \| None"),
        ("uct:reuse=1", r"option reuse=1 is not bool"),
        ("uct:c=wide", r"option c='wide' is not float"),
        ("uct:iterations", r"option 'iterations' is not key=value"),
        ("uct:c=1,c=2", r"option 'c' given twice"),
        ("uct:iterations=0", r"iterations must be >= 1"),
        ("random-hard", r"unknown agent 'random-hard'; use one of \[.*'uct:<options>'"),
    ],
)
def test_bad_spec_options_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(spec)


def test_a_named_keyword_preset_is_one_dict_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(presets.SPEC_PRESETS, "uct-test", {"iterations": 321, "reuse": False})
    assert "uct-test" in specs.known()
    agent = parse("uct-test:c=0.25")
    assert (agent.iterations, agent.reuse, agent.c) == (321, False, 0.25)


def test_options_work_as_opponent_names() -> None:
    import mc_envs.agents  # noqa: F401  (fills the registry)
    from mc_envs import opponents

    assert opponents.resolve("uct:iterations=5", seed=1).iterations == 5
    assert opponents.resolve("uct-hard:c=0.125", seed=1).c == 0.125


# -- the resumable arena ---------------------------------------------------------------------------

GNUGO = "/usr/games/gnugo"
MARK = "97531"  # a GNU Go seed no other test uses: finds this file's engines among all processes
GNUGO_SPEC = f"gtp:{GNUGO} --mode gtp --level 0 --chinese-rules --positional-superko --seed {MARK}"
BASE = ["arena", "go", "uct:iterations=20", "random", "--size", "5", "--seed", "3", "--quiet"]


def children() -> set[int]:
    """This process's children, zombies included, but multiprocessing's resource tracker (one
    per interpreter, started by the first queue of worker processes, ending with it)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                cmdline = (stat.parent / "cmdline").read_bytes()
                if b"resource_tracker" not in cmdline:
                    found.add(int(stat.parent.name))
    return found


def engines() -> list[int]:
    """GNU Go processes started by this file's tests (their command line has MARK)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            words = cmdline.read_bytes().split(b"\0")
            if words[0].endswith(b"gnugo") and MARK.encode() in words:
                found.append(int(cmdline.parent.name))
    return found


def games_of(folder: Path) -> list[dict]:
    """The recorded games without their times (what decides them is compared)."""
    _, games = arena_state.load(folder / arena_state.STATE_NAME)
    return [{k: v for k, v in games[g].items() if k != "seconds"} for g in sorted(games)]


def run(*args: str) -> int:
    return main([*BASE, *args])


def test_an_interrupted_match_resumes_to_the_games_of_one_run(tmp_path: Path) -> None:
    before = children()
    whole, parts, jobs = tmp_path / "whole", tmp_path / "parts", tmp_path / "jobs"
    assert run("--games", "4", "--sgf-dir", str(whole)) == 0
    assert run("--games", "2", "--sgf-dir", str(parts)) == 0
    assert len(games_of(parts)) == 2
    assert run("--games", "4", "--sgf-dir", str(parts), "--resume") == 0
    assert games_of(parts) == games_of(whole) and len(games_of(whole)) == 4
    state = parts / arena_state.STATE_NAME  # a run killed during game 3: its entry never written
    data = json.loads(state.read_text())
    data["games"] = [g for g in data["games"] if g["index"] != 2]
    state.write_text(json.dumps(data))
    assert run("--games", "4", "--sgf-dir", str(parts), "--resume") == 0
    assert games_of(parts) == games_of(whole)
    assert run("--games", "4", "--sgf-dir", str(jobs), "--jobs", "2") == 0  # 2 worker processes
    assert games_of(jobs) == games_of(whole)
    saved = json.loads(state.read_text())
    assert saved["config"]["env_kwargs"] == {"size": 5, "komi": 7.5}
    assert [g["black"] for g in saved["games"]] == ["A", "B", "A", "B"]
    assert saved["summary"]["games"] == 4 and saved["summary"]["as_black"]["games"] == 2
    for game in saved["games"]:
        record = go_sgf.read_sgf(parts / game["sgf"])
        assert list(record.actions) == game["moves"] and record.result == game["score"]
        assert go_sgf.verify(record).ok and record.komi == 7.5
    assert children() - before == set()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "a match with 2 finished games is recorded there; add --resume"),
        (["--resume", "--seed", "4"], "the recorded match has seed 3, this command 4"),
        (["--resume", "--komi", "6.5"], "the recorded match has komi 7.5, this command 6.5"),
        (["--resume", "--size", "7"], "the recorded match has size 5, this command 7"),
        (["--resume", "--iterations", "5"], "has iterations None, this command 5"),
    ],
)
def test_a_recorded_match_is_never_overwritten_nor_mixed(
    tmp_path: Path, capsys: pytest.CaptureFixture, args: list[str], message: str
) -> None:
    folder = tmp_path / "m"
    assert run("--games", "2", "--sgf-dir", str(folder)) == 0
    state = folder / arena_state.STATE_NAME
    text = state.read_bytes()
    capsys.readouterr()
    assert run("--games", "4", "--sgf-dir", str(folder), *args) == 2
    err = capsys.readouterr().err
    assert message in err and str(state) in err and len(err.strip().splitlines()) == 1
    assert state.read_bytes() == text and len(list(folder.glob("*.sgf"))) == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t[: len(t) // 2], "not JSON ("),
        (lambda t: "[]", 'not an arena record (no "format": "mc-envs/arena")'),
        (lambda t: t.replace('"result": 1', '"result": 2', 1), "result not -1, 0 or 1"),
        (lambda t: t.replace('"index": 1', '"index": 0', 1), "index 0 repeated"),
        (lambda t: t.replace('"seed": 3', '"seed": "3"', 1), "config.seed is '3', not int"),
        (lambda t: t.replace('"black": "B"', '"black": "X"', 1), "black not A or B"),
        (lambda t: t.replace('"version": 1', '"version": 9', 1), "version 9"),
    ],
)
def test_a_corrupt_record_is_one_line_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture, edit: Any, message: str
) -> None:
    folder = tmp_path / "m"
    assert run("--games", "2", "--sgf-dir", str(folder)) == 0
    state = folder / arena_state.STATE_NAME
    state.write_text(edit(state.read_text()))
    text = state.read_bytes()
    capsys.readouterr()
    assert run("--games", "4", "--sgf-dir", str(folder), "--resume") == 2
    err = capsys.readouterr().err.strip()
    assert message in err and err.startswith(f"error: {state}: ") and len(err.splitlines()) == 1
    assert state.read_bytes() == text


def test_options_that_do_not_go_together(capsys: pytest.CaptureFixture) -> None:
    assert run("--games", "2", "--resume") == 2
    assert "--resume: needs --sgf-dir" in capsys.readouterr().err
    assert main(["arena", "connect4", "random", "random", "--komi", "6.5", "--quiet"]) == 2
    assert "--komi: Go's" in capsys.readouterr().err
    with pytest.raises(ValueError, match="jobs above 1 take agent specs"):
        arena("tictactoe", RandomAgent(seed=1), "random", games=2, jobs=2, progress=False)


def test_gnugo_final_score_is_recorded_beside_ours(tmp_path: Path) -> None:
    if not os.access(GNUGO, os.X_OK):
        pytest.fail(f"{GNUGO} is missing: apt-get install gnugo (GNU Go 3.8, Debian's package)")
    before = children()
    out = io.StringIO()
    stats = arena(
        "go", "uct:iterations=20", GNUGO_SPEC, games=2, seed=1, progress=False, out=out,
        sgf_dir=tmp_path, env_kwargs={"size": 5}, jobs=2,
    )  # fmt: skip
    games = games_of(tmp_path)
    assert len(games) == 2 and stats["compared"] == 2
    for game in games:
        winner, _, _ = go_sgf.parse_result(game["gtp_score"])
        ours = None if game["margin"] == 0 else int(game["margin"] < 0)
        assert game["disagree"] == (winner != ours)
    assert stats["disagreements"] == sum(g["disagree"] for g in games)
    assert "final_score names another winner in" in out.getvalue()
    assert children() - before == set() and engines() == []


def test_ctrl_c_ends_workers_and_engines_and_keeps_the_record(tmp_path: Path) -> None:
    if not os.access(GNUGO, os.X_OK):
        pytest.fail(f"{GNUGO} is missing: apt-get install gnugo (GNU Go 3.8, Debian's package)")
    state = tmp_path / arena_state.STATE_NAME
    args = [sys.executable, "-m", "mc_envs.cli", *BASE[:2], "uct:iterations=20", GNUGO_SPEC,
            *BASE[4:], "--games", "12", "--jobs", "2", "--sgf-dir", str(tmp_path)]  # fmt: skip
    interruptible = cli_with_ctrl_c(*args[3:])  # SIGINT reaches it from a background shell too
    proc = subprocess.Popen(
        interruptible, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 300
        while not (state.exists() and engines()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state.exists(), "no game finished in 300 s"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err and "--resume" in err
    assert engines() == []
    assert 1 <= len(games_of(tmp_path)) < 12  # stopped in the middle
    assert subprocess.run([*args, "--resume"], capture_output=True, timeout=600).returncode == 0
    assert len(games_of(tmp_path)) == 12


def test_a_killed_match_takes_its_workers_and_engines_with_it(tmp_path: Path) -> None:
    if not os.access(GNUGO, os.X_OK):
        pytest.fail(f"{GNUGO} is missing: apt-get install gnugo (GNU Go 3.8, Debian's package)")
    args = [sys.executable, "-m", "mc_envs.cli", *BASE[:2], "uct:iterations=20", GNUGO_SPEC,
            *BASE[4:], "--games", "400", "--jobs", "2", "--sgf-dir", str(tmp_path)]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        state = tmp_path / arena_state.STATE_NAME
        while not (state.exists() and engines()) and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = [pid for pid in alive() if parent_of(pid) == proc.pid]
        assert engines() and len(workers) >= 2  # two workers (and the resource tracker)
        proc.kill()
        proc.wait(timeout=60)
        deadline = time.monotonic() + 60
        while (engines() or set(workers) & alive()) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        proc.kill()
    assert engines() == [] and not set(workers) & alive()
    assert arena_state.load(state)[1]  # whole: the last rename or the one before


def alive() -> set[int]:
    """Running processes (zombies left out: a reaped-later orphan is not running)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            if stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.add(int(stat.parent.name))
    return found


def parent_of(pid: int) -> int:
    with contextlib.suppress(OSError, IndexError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return -1


def test_the_entry_type_and_the_entry_check_name_the_same_fields():
    # GameEntry types what play_one writes; ENTRY_FIELDS checks what a record file holds.
    from mc_envs.cli.arena_state import ENTRY_FIELDS, GameEntry

    assert GameEntry.__required_keys__ == frozenset(ENTRY_FIELDS)


def test_the_match_its_config_type_and_the_config_check_name_the_same_fields():
    # Match.config() writes Match's fields and games; MatchConfig types it; CONFIG_FIELDS
    # checks what a record file holds.
    from mc_envs.cli.arena import Match
    from mc_envs.cli.arena_state import CONFIG_FIELDS, MatchConfig

    assert MatchConfig.__required_keys__ == frozenset(CONFIG_FIELDS)
    assert MatchConfig.__required_keys__ == frozenset((*Match._fields, "games"))
