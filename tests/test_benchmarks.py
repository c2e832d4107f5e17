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
