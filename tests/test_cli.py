"""The mc-envs command: solve, verify (ours and Morpion records), warmup, bad input, Ctrl-C."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import cli_with_ctrl_c

from mc_envs.cli import main
from mc_envs.morpion_records import shipped_record


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "mc_envs.cli", *args], capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    out = tmp_path_factory.mktemp("solve") / "s.json"
    assert (
        main(
            [
                "solve",
                "samegame",
                "--position",
                "3",
                "--level",
                "1",
                "--playouts",
                "3000",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return out


def test_solve_writes_a_record_that_verifies(solved, capsys):
    record = json.loads(solved.read_text())
    assert record["format"] == "mc-envs/solution" and record["env_kwargs"] == {"position": 3}
    assert record["playouts"] == 3000 and record["agent"]["params"]["policy"] == "tabu"
    assert main(["verify", str(solved)]) == 0
    assert f"certified: score {record['score']:g}" in capsys.readouterr().out


def test_a_wrong_score_is_named(solved, tmp_path, capsys):
    record = json.loads(solved.read_text())
    record["score"] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    assert main(["verify", str(bad)]) == 1
    assert "score differs: the record says" in capsys.readouterr().err


def test_an_illegal_move_is_named(solved, tmp_path, capsys):
    record = json.loads(solved.read_text())
    record["actions"][4] = 224  # bottom-right cell: never a group's top-left cell after 4 moves
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    assert main(["verify", str(bad)]) == 1
    assert "move 5 (action 224) is illegal" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"format": "mc-envs/solution", ', "not valid JSON (line 1, column"),
        (
            '{"format": "mc-envs/solution", "env_id": "mc_envs/Nope-v0", "env_kwargs": {}, "actions": [], "score": 0}',
            "unknown env 'mc_envs/Nope-v0'",
        ),
        (
            '{"format": "mc-envs/solution", "env_id": "mc_envs/SameGame-v0", "env_kwargs": {}, "actions": [1.5], "score": 0}',
            "'actions' must be a list of integers",
        ),
        (
            '{"format": "mc-envs/solution", "env_kwargs": {}, "actions": [], "score": 0}',
            "missing field 'env_id'",
        ),
    ],
)
def test_bad_record_files_get_one_line_and_exit_2(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = run("verify", str(bad))
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name, score", [("rosin82", 82), ("rosin178", 178), ("bruneau170", 170)])
def test_morpion_records_verify(name, score, capsys):
    assert main(["verify", str(shipped_record(name))]) == 0
    assert f"record of {score} moves" in capsys.readouterr().out


def test_a_corrupted_morpion_record_is_rejected_with_its_move_number(tmp_path, capsys):
    doc = json.loads(shipped_record("rosin82").read_text())
    doc["moves"][40] = doc["moves"][10]  # move 41 repeats move 11
    bad = tmp_path / "bad82.json"
    bad.write_text(json.dumps(doc))
    assert main(["verify", str(bad)]) == 1
    assert "move 41 " in capsys.readouterr().err


def test_a_5t_record_fails_under_5d_rules(capsys):
    assert main(["verify", "--variant", "5D", str(shipped_record("rosin178"))]) == 1
    assert "wrong variant" in capsys.readouterr().err


def test_a_bad_board_file_is_a_usage_error(tmp_path, capsys):
    board = tmp_path / "board.txt"
    board.write_text("0123\n01x3\n")
    assert (
        main(
            [
                "solve",
                "samegame",
                "--board",
                str(board),
                "--quiet",
                "--out",
                str(tmp_path / "o.json"),
            ]
        )
        == 2
    )
    assert "line 2, column 3: bad symbol 'x'" in capsys.readouterr().err


def test_solve_sudoku_prints_the_solved_grid(tmp_path):
    out = tmp_path / "su.json"
    result = run(
        "solve",
        "sudoku",
        "--size",
        "9",
        "--seed",
        "4",
        "--level",
        "1",
        "--quiet",
        "--out",
        str(out),
    )
    assert result.returncode == 0 and "solved:" in result.stdout
    assert run("verify", str(out)).returncode == 0


def test_ctrl_c_saves_the_best_record_and_exits_130(tmp_path):
    out = tmp_path / "long.json"
    args = ["solve", "samegame", "--position", "1", "--level", "4", "--time", "120"]
    proc = subprocess.Popen(
        cli_with_ctrl_c(*args, "--quiet", "--out", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while not out.exists() and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stdout
    assert "stopped: interrupt" in stdout
    assert run("verify", str(out)).returncode == 0
    assert not [p for p in Path(tmp_path).iterdir() if p.name.endswith(".tmp")]


def test_arena_reports_wins_draws_losses(capsys):
    assert (
        main(
            [
                "arena",
                "tictactoe",
                "uct",
                "random",
                "--games",
                "4",
                "--iterations",
                "200",
                "--quiet",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "4 games:" in out and "wins" in out and "95% CI" in out


def test_solve_with_nrpa_writes_a_checkpoint(tmp_path):
    ck, out = tmp_path / "ck.json", tmp_path / "s.json"
    args = [
        "solve",
        "samegame",
        "--position",
        "2",
        "--algo",
        "nrpa",
        "--level",
        "1",
        "--playouts",
        "500",
        "--quiet",
    ]
    assert main([*args, "--checkpoint", str(ck), "--out", str(out)]) == 0
    assert json.loads(ck.read_text()) and main(["verify", str(out)]) == 0


def test_resume_without_checkpoint_is_a_usage_error(tmp_path, capsys):
    assert (
        main(
            [
                "solve",
                "samegame",
                "--position",
                "1",
                "--resume",
                "--quiet",
                "--out",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )
    assert "--resume needs --checkpoint" in capsys.readouterr().err


def test_a_checkpoint_with_several_workers_keeps_one_file_per_root_worker(tmp_path, capsys):
    args = ["solve", "samegame", "--position", "1", "--algo", "nrpa", "--workers", "2"]
    args += ["--parallel", "root"]  # with a budget and no --policy, SameGame races by default
    ck, out = tmp_path / "ck.json", tmp_path / "x.json"
    budget = ["--playouts", "400", "--quiet", "--out", str(out)]
    assert main([*args, "--parallel", "distributed", "--checkpoint", str(ck), *budget]) == 2
    assert "--checkpoint: parallel='distributed' keeps no checkpoint" in capsys.readouterr().err
    assert main([*args, "--resume", "--checkpoint", str(ck), *budget]) == 2
    assert f"no checkpoint file {ck}.w0" in capsys.readouterr().err
    assert main([*args, "--checkpoint", str(ck), *budget]) == 0
    first = json.loads(out.read_text())
    assert first["agent"]["params"]["policy"] == ["tabu", "random"]  # SameGame's nrpa_portfolio
    assert (tmp_path / "ck.json.w0").is_file() and (tmp_path / "ck.json.w1").is_file()
    more = ["--playouts", "800", "--quiet", "--out", str(out)]
    assert main([*args, "--checkpoint", str(ck), "--resume", *more]) == 0
    resumed = json.loads(out.read_text())
    assert resumed["playouts"] == 800 and resumed["score"] >= first["score"]
    assert main(["verify", str(out)]) == 0


def test_nrpa_races_the_games_policies_with_a_budget_else_takes_its_portfolio():
    import gymnasium as gym

    from mc_envs.cli import build_parser
    from mc_envs.cli.solve import make_agent

    env = gym.make("mc_envs/SameGame-v0", position=1)
    base = ["solve", "samegame", "--algo", "nrpa", "--out", "x.json"]
    cases = [
        ([], None),  # one worker: the game's default policy
        (["--workers", "2"], ("tabu", "random")),
        (["--workers", "3"], ("tabu", "random")),
        (["--workers", "2", "--policy", "random"], "random"),
        (["--workers", "2", "--parallel", "distributed"], None),
    ]
    for flags, policy in cases:
        agent = make_agent(build_parser().parse_args([*base, *flags]), env)
        assert agent.policy == policy and agent.params["policy"] == policy, flags
    races = [
        (["--workers", "2", "--time", "60"], "race"),  # a budget: the game's race
        (["--workers", "2", "--playouts", "900"], "race"),
        (["--time", "60"], "root"),  # one worker
        (["--workers", "2", "--time", "60", "--policy", "tabu"], "root"),
        (["--workers", "2", "--time", "60", "--parallel", "root"], "root"),
    ]
    for flags, scheme in races:
        agent = make_agent(build_parser().parse_args([*base, *flags]), env)
        assert agent.parallel == scheme, flags


def test_an_unreadable_checkpoint_is_a_usage_error(tmp_path, capsys):
    ck = tmp_path / "ck.json"
    ck.write_text("not json")
    args = ["solve", "samegame", "--position", "1", "--algo", "nrpa", "--checkpoint", str(ck)]
    assert main([*args, "--resume", "--quiet", "--out", str(tmp_path / "x.json")]) == 2
    assert f"--checkpoint: {ck}: not a JSON checkpoint" in capsys.readouterr().err


def test_solve_spreads_nmcs_top_level_moves_over_workers(tmp_path, capsys):
    out = tmp_path / "moves.json"
    args = ["solve", "samegame", "--position", "2", "--level", "2", "--playouts", "2000"]
    assert main([*args, "--workers", "2", "--parallel", "moves", "--quiet", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["agent"]["params"]["parallel"] == "moves" and record["playouts"] <= 2000
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    assert main([*args, "--algo", "nrpa", "--parallel", "moves", "--out", str(out)]) == 2
    assert "--algo nrpa: parallel must be one of" in capsys.readouterr().err


def test_warmup_compiles_the_named_agents_made_for_a_game():
    from mc_envs.agents.warmup.work import entries, run_entry

    go = [e for e in entries(["mc_envs/Go-v0"]) if e.kind == "uct-go"]
    assert [e.name for e in go] == ["Go-v0 uct-go"]
    run_entry(go[0], {})  # the preset's search (MoGo's playouts, RAVE, knowledge) runs
    assert not [e for e in entries(["mc_envs/ConnectFour-v0"]) if e.kind == "uct-go"]


def test_solve_with_nrpa_variants_names_them_in_the_record_and_warm_starts(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    args = ["solve", "samegame", "--position", "5", "--algo", "nrpa", "--level", "1", "--quiet"]
    variants = ["--bias", "-0.4", "--stabilize", "2", "--repeats", "5", "--codes", "action"]
    assert main([*args, "--playouts", "400", *variants, "--out", str(first)]) == 0
    record = json.loads(first.read_text())
    params = record["agent"]["params"]
    assert {k: params[k] for k in ("bias", "stabilize", "repeats", "codes")} == {
        "bias": -0.4,
        "stabilize": 2,
        "repeats": 5,
        "codes": "action",
    }
    warm = ["--playouts", "1", "--warm-start", str(first), "--out", str(second)]
    assert main([*args, *warm]) == 0
    assert json.loads(second.read_text())["score"] >= record["score"]
    assert main(["verify", str(second)]) == 0


def test_solve_nrpa_uses_the_games_variants_unless_flags_override_them(tmp_path):
    def params(game: str, *extra: str) -> dict:
        out = tmp_path / f"{game}{len(extra)}.json"
        args = ["solve", game, "--algo", "nrpa", "--level", "1", "--playouts", "50", "--quiet"]
        assert main([*args, *extra, "--out", str(out)]) == 0
        return json.loads(out.read_text())["agent"]["params"]

    chosen = params("samegame", "--position", "2")  # the ablation's choice
    assert (chosen["stabilize"], chosen["repeats"]) == (2, 20)
    plain = params("samegame", "--position", "2", "--stabilize", "1", "--repeats", "0")
    assert "stabilize" not in plain and "repeats" not in plain
    assert params("samegame", "--position", "2", "--stabilize", "3")["stabilize"] == 3
    assert not {"stabilize", "repeats"} & set(params("morpion5t"))


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--algo", "nmcs", "--bias", "1"], "--bias is an option of NRPA"),
        (["--algo", "nrpa", "--tau", "0"], "--tau"),
        (["--algo", "nrpa", "--codes", "cells"], "--codes"),
        (["--algo", "nrpa", "--warm-start", "missing.json"], "--warm-start missing.json"),
    ],
)
def test_bad_nrpa_variant_flags_exit_2_with_one_line(tmp_path, extra, message):
    done = run("solve", "samegame", "--position", "1", "--playouts", "10", *extra,
               "--out", str(tmp_path / "s.json"))  # fmt: skip
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_live_line_says_when_the_python_path_stands_in():
    from mc_envs.cli.solve import progress_line

    cold = progress_line(2.0, 31.0, 1_000, compiling=True)
    warm = progress_line(2.0, 31.0, 100_000, compiling=False)
    assert "Python path while numba compiles" in cold and "(500/s)" in cold
    assert "Python" not in warm and "(50,000/s)" in warm
    assert len(warm) >= len(cold)  # the next line covers the note the previous one wrote
