"""The long-run benchmark scripts of the source tree: certified results, resumable reports."""

import json
import runpy
import sys
from pathlib import Path

import gymnasium as gym

from mc_envs.records import read_record, verify_record

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def bench(name, *args):
    """Runs ``python benchmarks/<name>.py ARGS`` in this process."""
    script = BENCHMARKS / f"{name.replace('-', '_')}.py"
    saved, sys.argv = sys.argv, [str(script), *args]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved


def test_morpion_records_certifies_its_games_and_reports_the_score_against_time(tmp_path):
    out = tmp_path / "morpion.json"
    bench(
        "morpion-records",
        *("--variants", "5D", "--algo", "nmcs", "--level", "1", "--time", "1"),
        *("--out", str(out), "--plot"),
    )
    report = json.loads(out.read_text())
    (run,) = report["variants"]
    assert run["variant"] == "5D" and run["score"] == len(run["actions"]) >= 40
    scores = [s for _, s in run["trace"]]
    assert scores == sorted(scores) and scores[-1] == run["score"]
    record = read_record(out.with_name(run["solution"]))
    verdict = verify_record(record)
    assert verdict.ok and verdict.score == run["score"]
    assert out.with_suffix(".png").stat().st_size > 10_000
    assert report["published"]["5D"]["record (NRPA)"] == 82


def test_samegame_standard_resumes_with_the_positions_already_played(tmp_path, capsys):
    out = tmp_path / "standard.json"
    common = ("--algo", "nmcs", "--level", "1", "--time-per-position", "0.5", "--out", str(out))
    bench("samegame-standard", *common, "--positions", "2")
    first = json.loads(out.read_text())["positions"]
    capsys.readouterr()
    bench("samegame-standard", *common, "--positions", "1", "2", "--resume")
    assert "positions [2] already played" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert [r["position"] for r in report["positions"]] == [1, 2]
    assert report["positions"][1] == first[0]
    assert report["total"] == sum(r["score"] for r in report["positions"])
    for run in report["positions"]:
        env = gym.make("mc_envs/SameGame-v0", position=run["position"]).unwrapped
        env.reset()
        for action in run["actions"]:
            env.step(action)
        assert env.score == run["score"] > 0


def test_connect4_positions_and_the_value_moves_benchmark_resume(tmp_path, capsys):
    positions = tmp_path / "positions.json"
    bench(
        "connect4-positions",
        *("--count", "4", "--min-plies", "24", "--max-plies", "30", "--seed", "3"),
        *("--table-bits", "16", "--out", str(positions)),
    )
    data = json.loads(positions.read_text())
    assert len(data["positions"]) == 4 and data["provenance"]["command"]
    env = gym.make("mc_envs/ConnectFour-v0", illegal_action="raise").unwrapped
    for p in data["positions"]:
        env.reset(seed=0)
        for column in p["moves"]:
            env.step(column)
        assert sorted(map(int, p["values"])) == env.legal_actions().tolist()
        assert p["value"] == max(p["values"].values())
        assert p["informative"] == (len(set(p["values"].values())) > 1)
    out = tmp_path / "value_moves.json"
    common = (
        "--positions",
        str(positions),
        "--agents",
        "uct200",
        "--every",
        "1",
        "--out",
        str(out),
    )
    bench("connect4-value-moves", *common, "--limit", "2")
    first = json.loads(out.read_text())["moves"]["uct200"]
    bench("connect4-value-moves", *common, "--resume")
    report = json.loads(out.read_text())
    moves = report["moves"]["uct200"]
    assert len(moves) == 4 and moves[:2] == first
    kept = sum(p["values"][str(m)] == p["value"] for p, m in zip(data["positions"], moves))
    assert report["summary"]["uct200"]["all"]["preserved"] == kept
    assert "UCT 200 iterations" in capsys.readouterr().out
