"""benchmarks/vector_cold.py's side-by-side runs: alternating with pgx's, medians compared (the
runs themselves are the benchmark's; here they are replaced by recorded figures)."""

import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "vector_cold.py"


@pytest.fixture
def module():
    return runpy.run_path(str(SCRIPT))


def test_runs_alternate_with_pgx_and_the_first_steps_are_the_medians(module, monkeypatch):
    calls, ours, theirs = [], iter([3.3, 2.7, 3.7]), iter([2.6, 4.3, 3.2])

    def vector_cold(env_id, n, *, steps, cap):
        calls.append(("ours", steps, cap))
        return {"id": env_id, "first_step_s": next(ours), "worst_later_step_s": 0.004 * steps}

    def pgx_cold(game, n):
        calls.append(("pgx", game))
        return {"game": game, "first_step_s": next(theirs)}

    side_by_side = module["side_by_side"]
    monkeypatch.setitem(side_by_side.__globals__, "vector_cold", vector_cold)
    monkeypatch.setitem(side_by_side.__globals__, "pgx_cold", pgx_cold)
    mine, peer = side_by_side("mc_envs/TicTacToe-v0", 1024, repeat=3, steps=50, cap=9.0)
    assert calls == [
        ("pgx", "tic_tac_toe"),
        ("ours", 50, 9.0),  # the first run also times the later steps
        ("pgx", "tic_tac_toe"),
        ("ours", 0, 0.0),
        ("pgx", "tic_tac_toe"),
        ("ours", 0, 0.0),
    ]
    assert mine["first_step_s"] == 3.3 and mine["first_step_runs"] == [3.3, 2.7, 3.7]
    assert mine["worst_later_step_s"] == 0.2  # the later steps: the first run's
    assert peer["first_step_s"] == 3.2 and peer["first_step_runs"] == [2.6, 4.3, 3.2]


def test_a_failed_run_is_reported_rather_than_left_out_of_the_median(module, monkeypatch):
    runs = iter([{"first_step_s": 1.0}, {"error": "exit code 1"}])
    side_by_side = module["side_by_side"]
    monkeypatch.setitem(side_by_side.__globals__, "vector_cold", lambda *a, **k: next(runs))
    mine, peer = side_by_side("mc_envs/SameGame-v0", repeat=2, steps=5, cap=1.0)
    assert mine == {"error": "exit code 1"} and peer is None  # (pgx has no SameGame)


def test_cold_start_reports_the_median_of_repeated_cold_runs_each_on_an_empty_cache(monkeypatch):
    cold_start = runpy.run_path(str(SCRIPT.parent / "cold_start.py"))
    firsts = iter([4.0, 9.0, 3.0])  # the cold runs' first results
    caches = []

    def child(code, cache, timeout=900.0, ahead=True):
        if not ahead:  # the fully compiled run, on its own cache
            return {"first_s": 20.0, "result": [1.0, [0]]}
        if cache in caches:  # the second run on a cache: the cached one
            return {"first_s": 0.1, "result": [1.0, [0]]}
        caches.append(cache)
        first = next(firsts)
        run = {"first_s": first, "cpu_s": first + 0.5, "result": [1.0, [0]], "top": []}
        return {**run, "compile_cpu_s": 0.0, "stood_in": True}

    monkeypatch.setitem(cold_start["first_result"].__globals__, "child", child)
    case = cold_start["first_result"]("mc_envs/LeftMove-v0", "nmcs", repeat=3)
    assert len(set(caches)) == 3  # each cold run on its own empty cache
    assert case["cold"]["first_s"] == 4.0 and case["cold"]["cpu_s"] == 4.5  # the median run, whole
    assert case["cold"]["first_s_runs"] == [4.0, 9.0, 3.0]
    assert case["cached"]["first_s"] == 0.1 and case["same_result"] is True
    assert "median of 3 runs" in cold_start["line"]("LeftMove-v0 nmcs", {**case, "pgx": None})


def test_a_failed_cold_run_counts_as_the_slowest():
    cold_start = runpy.run_path(str(SCRIPT.parent / "cold_start.py"))
    runs = [{"first_s": 5.0}, {"error": "killed"}, {"first_s": 6.0}, {"first_s": 2.0}]
    middle = cold_start["median_run"](runs)
    assert middle["first_s"] == 5.0 and middle["first_s_runs"] == [5.0, None, 6.0, 2.0]
    assert "first_s_runs" not in cold_start["median_run"]([{"first_s": 1.0}])
