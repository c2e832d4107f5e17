"""The long-run benchmark scripts of the source tree: certified results, resumable reports."""

import json
import runpy
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

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


def test_morpion_records_resume_keeps_the_variants_of_earlier_runs(tmp_path):
    out = tmp_path / "morpion.json"
    common = ("--algo", "nmcs", "--level", "1", "--time", "0.5", "--out", str(out), "--resume")
    bench("morpion-records", "--variants", "5D", *common)
    bench("morpion-records", "--variants", "5T", *common)
    report = json.loads(out.read_text())
    assert [r["variant"] for r in report["variants"]] == ["5D", "5T"]


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


def test_samegame_standard_races_in_heats_and_names_them(tmp_path):
    from helpers import samegame

    from mc_envs.agents import NRPA

    # A race's time limit counts from the call, compilation included: the searches are made
    # ready first, so that the first heat does not spend the second's time compiling them.
    NRPA(level=1, parallel="race", heats=2).search(samegame(3), playouts=300)
    out = tmp_path / "heats.json"
    race = ("--parallel", "race", "--heats", "2", "--level", "1", "--time-per-position", "1.5")
    bench("samegame-standard", *race, "--positions", "3", "--out", str(out))
    report = json.loads(out.read_text())
    (run,) = report["positions"]
    assert report["heats"] == 2 and run["replayed"]
    assert sorted({row["heat"] for row in run["race"]}) == [0, 1]
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no checkpoint left behind


def test_a_timed_search_cut_short_resumes_for_the_time_it_has_left(tmp_path):
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks.reporting import drop_checkpoint, timed_search
    from mc_envs.agents import NRPA

    env = gym.make("mc_envs/SameGame-v0", position=3).unwrapped
    env.reset()
    ck = tmp_path / "p3.ck.json"
    NRPA(level=2, iterations=10).search(env, playouts=10)  # compiled: the workers load it
    first = timed_search(NRPA(level=2, seed=1, workers=2), env, 3.0, checkpoint=ck)
    assert {p.name for p in tmp_path.iterdir()} == {
        f"{ck.name}{e}" for e in (".w0", ".w1", ".time.json")
    }
    spent = json.loads(Path(f"{ck}.time.json").read_text())["seconds"]
    assert abs(spent - first["seconds"]) < 1e-3
    more = timed_search(
        NRPA(level=2, seed=1, workers=2), env, spent + 6.0, checkpoint=ck, resume=True
    )
    assert more["trace"][: len(first["trace"]) - 1] == first["trace"][:-1]
    assert more["playouts"] > first["playouts"] and more["score"] >= first["score"]
    assert spent + 5.5 < more["seconds"] < spent + 30  # six more seconds, workers starting in it
    # No time left for the workers to start: the files' best games still come back.
    spent = json.loads(Path(f"{ck}.time.json").read_text())["seconds"]
    last = timed_search(
        NRPA(level=2, seed=1, workers=2), env, spent + 0.01, checkpoint=ck, resume=True
    )
    assert last["score"] >= more["score"] and last["seconds"] < spent + 5
    drop_checkpoint(ck)
    assert not list(tmp_path.iterdir())


def test_the_nrpa_ablation_writes_every_configuration_and_a_summary(tmp_path, capsys):
    bench(
        "nrpa-ablation",
        *("--time-per-position", "0.5", "--workers", "1", "--level", "1"),
        *("--positions", "2", "--configs", "tabu", "bias-neg", "--out-dir", str(tmp_path)),
    )
    summary = json.loads((tmp_path / "summary.json").read_text())["configs"]
    assert set(summary) == {"tabu", "bias-neg"}
    for name, row in summary.items():
        report = json.loads((tmp_path / f"{name}.json").read_text())
        assert row["total"] == report["total"] == report["positions"][0]["score"] > 0
        assert report["positions"][0]["replayed"] is True
    assert json.loads((tmp_path / "bias-neg.json").read_text())["variants"]["bias"] == -0.3
    assert (tmp_path / "summary.png").stat().st_size > 10_000


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
    # A residual network's model plays there too, and its untrained twin has its architecture.
    from mc_envs.agents.alphazero.model import init_model

    arch = {"kind": "resnet", "shape": [2, 6, 7], "channels": 4, "blocks": 1, "hidden": 8}
    resnet = tmp_path / "resnet.npz"
    init_model("mc_envs/ConnectFour-v0", 84, 7, arch=arch).save(resnet)
    nets = tmp_path / "nets.json"
    bench(
        "connect4-value-moves",
        *("--positions", str(positions), "--model", str(resnet), "--sims", "8"),
        *("--agents", "puct200_model", "puct200_untrained", "--out", str(nets)),
    )
    moves = json.loads(nets.read_text())["moves"]
    assert all(len(moves[a]) == 4 for a in ("puct200_model", "puct200_untrained"))


def test_the_inference_sweep_scores_every_setting_on_the_informative_positions(tmp_path):
    positions = tmp_path / "positions.json"
    bench(
        "connect4-positions",
        *("--count", "6", "--min-plies", "24", "--max-plies", "30", "--seed", "5"),
        *("--table-bits", "16", "--out", str(positions)),
    )
    informative = [p for p in json.loads(positions.read_text())["positions"] if p["informative"]]
    assert informative  # the seed gives some
    out = tmp_path / "sweep.json"
    bench(
        "alphazero-inference-sweep",
        *("--positions", str(positions), "--sims", "20", "--batch", "1", "8"),
        *("--c", "2", "--fpu", "0.5", "--out", str(out)),
    )
    rows = json.loads(out.read_text())["rows"]
    assert [(r["batch_size"], r["c"], r["fpu"]) for r in rows] == [(1, 2.0, 0.5), (8, 2.0, 0.5)]
    for row in rows:
        assert row["positions"] == len(informative) == len(row["moves"])
        kept = sum(p["values"][str(m)] == p["value"] for p, m in zip(informative, row["moves"]))
        assert row["preserved"] == kept


def test_cold_time_limit_times_two_calls_on_an_empty_cache(tmp_path):
    out = tmp_path / "cold.json"
    bench("cold-time-limit", "--cases", "nmcs1", "--time", "1", "--out", str(out))
    (first, second) = json.loads(out.read_text())["cases"]["nmcs1"]["calls"]
    assert first["compile"]["cold"] and first["playouts"] > 0 and first["seconds"] < 2.0
    assert second["seconds"] < 2.0 and second["score"] > 0


def test_cold_start_measures_a_first_step_cold_then_cached_and_resumes(tmp_path, capsys):
    out = tmp_path / "cold.json"
    case = "TicTacToe-v0 env"
    bench("cold-start", "--cases", case, "--out", str(out))
    report = json.loads(out.read_text())
    cold, cached = report["cases"][case]["cold"], report["cases"][case]["cached"]
    compiled = report["cases"][case]["compiled"]
    # Cold, the env's kernels run as Python while a child compiles them; the process that waits
    # for its compiler compiles; the third loads it all from the cache the first one's child filled.
    assert cold["interpreted"] > 0 and cold["compiles"] == 0
    assert compiled["compiles"] > 0 and compiled["interpreted"] == 0
    assert cached["compiles"] == 0 and cached["interpreted"] == 0
    assert cold["first_s"] >= cold["import_s"] + cold["call_s"] > 0
    assert report["cases"][case]["pgx"]["first_s"] > 0
    assert f"{case} " in capsys.readouterr().out
    bench("cold-start", "--cases", case, "--resume", "--out", str(out))
    assert json.loads(out.read_text())["cases"] == report["cases"]  # nothing measured again
    assert f"{case} " not in capsys.readouterr().out
    assert report["cases"][case]["commit"] == report["commit"]  # what each case was measured on
    # --again measures the chosen cases again (here: the env cases of that one id).
    bench("cold-start", "--cases", case, "--kinds", "env", "--resume", "--again", "--out", str(out))
    assert f"{case} " in capsys.readouterr().out
    again = json.loads(out.read_text())["cases"][case]
    assert again["cold"]["interpreted"] > 0 and again["date"] >= report["cases"][case]["date"]


def _greedy_report(path, position, seed, pick):
    """A samegame_standard-like report of one game: always the ``pick``-th legal group."""
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    actions = []
    while len(legal := env.legal_actions()) > 0:
        actions.append(int(legal[pick % len(legal)]))
        env.step(actions[-1])
    run = {"position": position, "score": float(env.score), "actions": actions}
    report = {"algo": "nrpa", "level": 3, "workers": 2, "seed": seed, "positions": [run]}
    path.write_text(json.dumps(report))
    return report


def test_samegame_spread_replays_every_game_and_names_a_bad_report(tmp_path, capsys):
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks.samegame_spread import main as spread

    a, b = tmp_path / "s0.json", tmp_path / "s1.json"
    ra, rb = _greedy_report(a, 4, 0, 0), _greedy_report(b, 4, 1, 1)
    out = tmp_path / "spread.json"
    assert spread([str(a), str(b), "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    scores = [ra["positions"][0]["score"], rb["positions"][0]["score"]]
    assert scores[0] != scores[1] and result["totals"] == scores
    assert result["range_total"] == abs(scores[0] - scores[1]) and result["seeds"] == [0, 1]
    capsys.readouterr()
    rb["positions"][0]["score"] += 1
    b.write_text(json.dumps(rb))
    assert spread([str(a), str(b)]) == 2
    assert f"{b}: position 4: the game replays to {scores[1]:g}" in capsys.readouterr().err
    rb["positions"][0]["score"] -= 1
    rb["level"] = 4
    b.write_text(json.dumps(rb))
    assert spread([str(a), str(b)]) == 2
    assert f"{b}: field 'level': 4, but {a} has 3" in capsys.readouterr().err
    b.write_text('{"positions": [{"position": 4, "score": 1, "actions": [999]}]}')
    assert spread([str(a), str(b)]) == 2
    assert "positions[0]: field 'actions'" in capsys.readouterr().err
    b.write_text("{not json")
    assert spread([str(a), str(b)]) == 2
    assert "not a readable JSON report" in capsys.readouterr().err


def test_samegame_spread_totals_each_heat_of_a_race_in_heats(tmp_path, capsys):
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks.samegame_spread import main as spread

    paths = [tmp_path / "s0.json", tmp_path / "s1.json"]
    reports = [_greedy_report(path, 4, seed, seed) for seed, path in enumerate(paths)]
    for path, report in zip(paths, reports):
        run = report["positions"][0]
        score = run["score"]
        run["race"] = [
            {"policy": "tabu", "probe": score - 10, "final": score - 5, "heat": 0},
            {"policy": "random", "probe": score - 30, "final": None, "heat": 0},
            {"policy": "tabu", "probe": score - 20, "final": score, "heat": 1},
            {"policy": "random", "probe": score - 40, "final": None, "heat": 1},
        ]
        report["heats"] = 2
        path.write_text(json.dumps(report))
    out = tmp_path / "spread.json"
    assert spread([str(p) for p in paths] + ["--out", str(out)]) == 0
    scores = [r["positions"][0]["score"] for r in reports]
    assert json.loads(out.read_text())["heat_totals"] == [[s - 5, s] for s in scores]
    assert f"each heat alone: heat 0 {scores[0] - 5:,.0f}, heat 1 {scores[0]:,.0f}" in (
        capsys.readouterr().out
    )
    reports[1]["positions"][0]["race"][2]["final"] = None  # the heats' best is below the score
    paths[1].write_text(json.dumps(reports[1]))
    assert spread([str(p) for p in paths]) == 2
    assert f"{paths[1]}: position 4: field 'race': its heats' best" in capsys.readouterr().err
    for row, bad in (({"probe": "3", "heat": 1}, "'probe': '3'"), ({"probe": 1}, "'heat': None")):
        reports[1]["positions"][0]["race"][2] = row
        paths[1].write_text(json.dumps(reports[1]))
        assert spread([str(p) for p in paths]) == 2
        assert f"field 'race'[2]: field {bad} is not" in capsys.readouterr().err


# benchmarks/vector_bench.py on its smallest configurations: every cell asked for is measured in
# its own process, with steps/s, peak memory and the ratios; --resume keeps the measured cells.
SMALL = ("--ids", "TicTacToe", "LeftMove", "--sizes", "1", "4", "--seconds", "0.2", "--no-ppo")
TTT, LEFT = "mc_envs/TicTacToe-v0", "mc_envs/LeftMove-v0"


def cells(report):
    return {(m["impl"], m["id"], m["n"]): m for m in report["measurements"]}


def test_vector_bench_measures_every_cell_with_memory_and_ratios_and_resumes(tmp_path, capsys):
    out = tmp_path / "vector.json"
    bench("vector-bench", *SMALL, "--impls", "ours,sync,pgx", "--out", str(out), "--plot")
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
        "vector-bench",
        *SMALL,
        "--impls",
        "ours,sync,pgx,async",
        "--async-max",
        "0",
        "--out",
        str(out),
        "--resume",
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
        "vector-bench",
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


def test_vector_bench_draws_uniform_legal_actions_for_the_whole_batch():
    impls = runpy.run_path(str(BENCHMARKS / "vector_bench_impls.py"))
    draw = impls["Draw"](seed=3)
    assert impls["CODED"] < 10 < impls["SMALL"]  # 7 actions: rows as integers, 10: floats
    copies = impls["CODED_FROM"] // 4  # the four rows repeated: a batch the coded draw takes
    for width, repeat in ((7, 1), (7, copies), (10, copies)):
        mask = np.zeros((4, width), bool)
        mask[0, [1, 5]] = True
        mask[2, width - 1] = True
        mask[3] = True  # row 1 has no legal action: action 0
        batch = np.tile(mask, (repeat, 1))
        counts = np.zeros((4, width), np.int64)
        draws = 4000 // repeat
        for _ in range(draws):
            np.add.at(counts, (np.arange(4 * repeat) % 4, draw(batch)), 1)
        total = draws * repeat
        rows = [0, 2, 3]
        assert (counts[rows][~mask[rows]] == 0).all() and counts[1, 0] == total
        assert counts[2, width - 1] == total and abs(counts[0, 1] - total / 2) < 0.05 * total
        expected = total / width  # uniform over a full row
        assert counts[3].min() > 0.85 * expected and counts[3].max() < 1.15 * expected
        assert (draw(np.zeros((3 * repeat, width), bool)) == 0).all()
    wide = np.zeros((3, 100), bool)  # beyond 64 actions: the legal actions listed
    wide[0, [3, 97]] = wide[2, 50] = True
    picks = np.array([draw(wide) for _ in range(400)])
    assert set(picks[:, 0]) == {3, 97} and (picks[:, 1] == 0).all() and (picks[:, 2] == 50).all()
    assert (draw(np.zeros((2, 100), bool)) == 0).all()


def test_vector_bench_lists_large_sparse_masks_from_bits_as_flatnonzero_does():
    impls = runpy.run_path(str(BENCHMARKS / "vector_bench_impls.py"))
    rng = np.random.default_rng(0)
    for width in (impls["PACKED_A"], 729, 1000):  # a whole number of 64-bit words, and not
        mask = rng.random((7, width)) < 0.01
        mask[1] = False
        mask[2, [0, 63, 64, width - 1]] = True
        flat = np.flatnonzero(mask)
        row, action = impls["_listed"](mask)
        assert np.array_equal(row, flat // width) and np.array_equal(action, flat % width)
    draw = impls["Draw"](seed=1)
    rows = impls["PACKED_CELLS"] // 1000 + 1  # a batch the packed listing takes
    mask = np.zeros((rows, 1000), bool)
    mask[:, [2, 700, 999]] = True
    mask[0] = False  # no legal action: action 0
    counts = np.zeros(1000, np.int64)
    for _ in range(20):
        picks = draw(mask)
        assert picks[0] == 0
        np.add.at(counts, picks[1:], 1)
    third = counts.sum() / 3
    assert set(np.flatnonzero(counts)) == {2, 700, 999}
    assert all(abs(counts[a] - third) < 0.05 * third for a in (2, 700, 999))


def test_selfplay_bench_times_both_self_plays_with_the_same_network(tmp_path):
    out = tmp_path / "selfplay.json"
    bench("selfplay-bench", "--sims", "4", "--single-games", "1", "--games", "3", "--out", str(out))
    report = json.loads(out.read_text())
    one, together = report["one_at_a_time"], report["together"]
    assert one["positions"] >= 7 and together["positions"] >= 3 * 7  # Connect Four games
    assert together["ratio"] == round(together["positions_per_s"] / one["positions_per_s"], 2)
    assert report["settings"]["sims"] == 4 and report["command"].startswith("selfplay_bench.py")


def test_alphazero_curve_scores_the_network_against_uct_as_it_trains(tmp_path):
    out, model = tmp_path / "curve.json", tmp_path / "ttt.npz"
    common = ("--env", "mc_envs/TicTacToe-v0", "--model", str(model), "--games", "4", "--sims", "8")
    common += ("--steps", "10", "--hidden", "8", "--eval-every", "1", "--eval-games", "2")
    common += ("--eval-uct", "20", "--eval-sims", "8", "--out", str(out))
    common += ("--net", "resnet", "--channels", "4", "--blocks", "1")
    bench("alphazero-curve", *common, "--iterations", "1")
    bench("alphazero-curve", *common, "--iterations", "2", "--resume")
    report = json.loads(out.read_text())
    assert [row["iteration"] for row in report["history"]] == [0, 1]  # the resumed run's too
    for row in report["history"]:
        assert row["eval_games"] == 2 and row["score_vs_uct"] in (0.0, 0.25, 0.5, 0.75, 1.0)
        assert row["interval95"][0] <= row["score_vs_uct"] <= row["interval95"][1]
    assert out.with_suffix(".png").stat().st_size > 5_000


def test_go_bench_measures_ours_and_the_peers_side_by_side_and_resumes(tmp_path, capsys):
    # Every measurement of benchmarks/go_bench.py at a tiny budget, each in its own process;
    # --resume measures again only what the report lacks.
    out = tmp_path / "go.json"
    tiny = ("--seconds", "0.1", "--sizes", "1", "--iterations", "40", "--moves", "2")
    bench("go-bench", *tiny, "--out", str(out))
    report = json.loads(out.read_text())
    m = report["measurements"]
    assert set(m) == {"ours_vector_n1", "pgx_vector_n1", "playouts", "ours_uct"} | {
        "openspiel_uct",
        "clone_restore",
    }
    for name in ("ours_vector_n1", "pgx_vector_n1"):
        assert m[name]["steps_per_s"] > 0 and m[name]["steps"] == m[name]["batch_steps"], m[name]
    assert m["pgx_vector_n1"]["jax_backend"] == "cpu"
    assert m["playouts"]["playouts_per_s"] > 0 and 2 < m["playouts"]["moves_per_playout"] <= 162
    for who in ("ours_uct", "openspiel_uct"):
        assert m[who]["iterations"] == 80 and len(m[who]["moves"]) == 2, m[who]
    assert m["clone_restore"]["pairs_per_s"] > 0
    ratios = report["ratios"]
    pgx = m["pgx_vector_n1"]["steps_per_s"]
    assert abs(ratios["vector_n1_ours_over_pgx"] - m["ours_vector_n1"]["steps_per_s"] / pgx) < 0.01
    osp = m["openspiel_uct"]["iterations_per_s"]
    assert abs(ratios["uct_ours_over_openspiel"] - m["ours_uct"]["iterations_per_s"] / osp) < 0.01
    assert [len(report["load_average"][k]) for k in ("start", "end")] == [3, 3]
    assert report["command"].startswith("go_bench.py --seconds 0.1")
    assert "uct_ours_over_openspiel" in capsys.readouterr().out

    del m["clone_restore"]
    out.write_text(json.dumps(report))
    bench("go-bench", *tiny, "--out", str(out), "--resume")
    again = json.loads(out.read_text())["measurements"]
    assert again["clone_restore"]["pairs_per_s"] > 0
    assert all(again[k] == v for k, v in m.items())
    assert capsys.readouterr().out.count("(kept, --resume)") == 5
