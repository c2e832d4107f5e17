"""benchmarks/vector_bench.py on its smallest configurations: every cell asked for is measured in
its own process, with steps/s, peak memory and the ratios; --resume keeps the measured cells and
measures the missing ones; the plot is drawn; MaskablePPO runs over both vector envs."""

import json
import runpy
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "vector_bench.py"
SMALL = ("--ids", "TicTacToe", "LeftMove", "--sizes", "1", "4", "--seconds", "0.2", "--no-ppo")
TTT, LEFT = "mc_envs/TicTacToe-v0", "mc_envs/LeftMove-v0"


def bench(*args):
    """Runs ``python benchmarks/vector_bench.py ARGS`` in this process (measurements in children)."""
    saved, sys.argv = sys.argv, [str(SCRIPT), *args]
    try:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    finally:
        sys.argv = saved


def cells(report):
    return {(m["impl"], m["id"], m["n"]): m for m in report["measurements"]}


def test_vector_bench_measures_every_cell_with_memory_and_ratios_and_resumes(tmp_path, capsys):
    out = tmp_path / "vector.json"
    bench(*SMALL, "--impls", "ours,sync,pgx", "--out", str(out), "--plot")
    report = json.loads(out.read_text())
    measured = cells(report)
    wanted = {(i, e, n) for i in ("ours", "sync") for e in (TTT, LEFT) for n in (1, 4)}
    wanted |= {("pgx", TTT, 1), ("pgx", TTT, 4)}  # pgx has no LeftMove
    assert set(measured) == wanted
    for cell in measured.values():
        assert cell["steps_per_s"] > 0 and cell["batch_steps"] >= 1, cell
        assert cell["max_rss_kb"] >= cell["rss_imports_kb"] > 10_000, cell
        assert cell["steps"] == cell["batch_steps"] * cell["n"]
    assert (
        measured["ours", TTT, 4]["env_step_only_steps_per_s"]
        >= measured["ours", TTT, 4]["steps_per_s"]
    )
    ratios = {(r["id"], r["n"]): r for r in report["ratios"]}
    assert set(ratios) == {(e, n) for e in (TTT, LEFT) for n in (1, 4)}
    for (env_id, n), row in ratios.items():
        ours = measured["ours", env_id, n]["steps_per_s"]
        assert abs(row["ours_over_sync"] - ours / measured["sync", env_id, n]["steps_per_s"]) < 1e-2
        assert ("ours_over_pgx" in row) == (env_id == TTT)
    assert report["command"].startswith("vector_bench.py --ids TicTacToe")
    assert report["machine"]["cpu_count"] >= 1 and report["machine"]["versions"]["pgx"]
    assert "INSIDE the timed loop" in report["method"]["actions"]
    assert out.with_suffix(".png").stat().st_size > 10_000
    table = capsys.readouterr().out
    assert "ours/sync" in table and TTT in table

    # A killed run: one cell missing. --resume measures it alone and keeps the others as they were;
    # async beyond --async-max is recorded as skipped, with the reason, without running.
    del_key = ("sync", LEFT, 4)
    report["measurements"] = [
        m for m in report["measurements"] if (m["impl"], m["id"], m["n"]) != del_key
    ]
    out.write_text(json.dumps(report))
    bench(
        *SMALL, "--impls", "ours,sync,pgx,async", "--async-max", "0", "--out", str(out), "--resume"
    )
    assert "9 measurements already in" in capsys.readouterr().out
    again = cells(json.loads(out.read_text()))
    for k, cell in measured.items():
        assert (again[k] == cell) != (k == del_key), k
    assert again[del_key]["steps_per_s"] > 0
    for e in (TTT, LEFT):
        for n in (1, 4):
            assert "one process per sub-env" in again["async", e, n]["skipped"]
    assert len(json.loads(out.read_text())["runs"]) == 2


def test_vector_bench_times_maskable_ppo_over_both_vector_envs(tmp_path):
    out = tmp_path / "ppo.json"
    bench(
        *("--ids", "ConnectFour", "--sizes", "2", "--impls", "ours", "--seconds", "0.2"),
        *("--ppo-steps", "256", "--out", str(out)),
    )
    ppo = json.loads(out.read_text())["ppo"]
    assert ppo["settings"]["steps"] == 256 and ppo["settings"]["hyper"]["n_steps"] == 128
    for kind in ("ours", "dummy"):
        run = ppo[kind]
        assert run["learn_s"] > 0 and run["steps_done"] >= 256 and run["max_rss_kb"] > 0, run
        assert -1 <= run["mean_episode_reward"] <= 1 and run["episodes_averaged"] > 0
    assert ppo["dummy_over_ours_seconds"] > 0
