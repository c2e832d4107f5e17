"""Races of policies (mc_envs.agents.parallel.race) and SameGame's ranked tabu colours."""

import json
import pickle
import re
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from helpers import replayed_score, samegame

import mc_envs  # noqa: F401
from mc_envs.agents.nested.nrpa import NRPA
from mc_envs.agents.parallel import race
from mc_envs.agents.parallel.root import worker_seed
from mc_envs.cli import main
from mc_envs.games import samegame as sg

NAMES = ("tabu", "random", "tabu-2")


def test_tabu_k_is_the_colour_with_the_k_th_most_cells_ties_to_the_lower():
    board = np.array([[1, 1, 1, 2], [2, 2, 2, 2], [3, 3, 3, 3], [3, 4, 0, 0]])[::-1]
    env = gym.make("mc_envs/SameGame-v0", board=board).unwrapped
    env.reset()
    ranks = [env.selection_key(n) for n in ("tabu", "tabu-2", "tabu-3", "tabu-4")]
    assert ranks == [2, 3, 1, 4]  # 5, 5, 3 and 1 cells
    assert env.nrpa_race == ("tabu", "tabu-2", "tabu-3", "tabu-4", "random")
    with pytest.raises(ValueError, match="tabu-5: this board has 4 colour"):
        env.selection_key("tabu-5")


def test_a_race_probes_every_policy_and_continues_the_best_from_its_probe():
    env = samegame(7)
    agent = NRPA(level=1, seed=5, policy=NAMES, parallel="race")
    result = agent.search(env, playouts=900)
    probe = int(0.4 * 900) // 3  # 120 playouts a probe, the rest to the one finalist
    singles = [
        NRPA(level=1, seed=worker_seed(5, i), policy=n).search(env, playouts=probe)
        for i, n in enumerate(NAMES)
    ]
    table = result.extra["race"]
    assert [row["probe"] for row in table] == [s.score for s in singles]
    best = max(range(3), key=lambda i: (singles[i].score, -i))
    finalist = NRPA(level=1, seed=worker_seed(5, best), policy=NAMES[best])
    alone = finalist.search(env, playouts=900 - 2 * probe)  # probe + rest in one go
    assert [row["final"] for row in table] == [alone.score if i == best else None for i in range(3)]
    assert result.score == max(alone.score, *(s.score for s in singles))
    assert result.playouts == 900
    assert replayed_score(env, result.actions) == result.score
    again = agent.search(env, playouts=900)
    assert (again.score, again.actions) == (result.score, result.actions)


def test_a_race_on_two_processes_keeps_the_two_best_probes():
    env = samegame(11)
    result = NRPA(level=1, seed=3, parallel="race", workers=2).search(env, playouts=1200)
    table = result.extra["race"]
    assert [row["policy"] for row in table] == list(env.nrpa_race)
    ranked = sorted(range(len(table)), key=lambda i: (-table[i]["probe"], i))
    assert [i for i, row in enumerate(table) if row["final"] is not None] == sorted(ranked[:2])
    assert result.score == max(row["final"] for row in table if row["final"] is not None)
    assert result.playouts == 1200 and replayed_score(env, result.actions) == result.score


def test_a_stopped_race_resumes_to_the_games_of_an_unstopped_one(tmp_path):
    env = samegame(7)
    agent = NRPA(level=1, seed=2, policy=NAMES, parallel="race")
    whole = agent.search(env, playouts=900)
    ck = tmp_path / "race.json"
    stopped = agent.search(env, playouts=900, callback=lambda p: True, checkpoint=str(ck))
    assert stopped.stopped == "callback" and ck.is_file()
    resumed = agent.search(env, playouts=900, checkpoint=str(ck), resume=True)
    assert (resumed.score, resumed.actions) == (whole.score, whole.actions)
    assert resumed.extra["race"] == whole.extra["race"]


def test_a_race_refuses_what_it_cannot_run(tmp_path):
    env = samegame(7)
    race = NRPA(level=1, policy=NAMES, parallel="race")
    with pytest.raises(ValueError, match="time_limit or a playouts budget"):
        race.search(env, iterations=2)
    cluster = NRPA(level=1, policy=NAMES, parallel="race", backend="ray", address="ray://h:1")
    with pytest.raises(ValueError, match="on this machine"):
        cluster.search(env, playouts=10)
    with pytest.raises(ValueError, match="several policies"):
        NRPA(level=1, policy="tabu", parallel="race")
    with pytest.raises(ValueError, match="tabu-9: this board has 5 colour"):
        NRPA(level=1, policy=("tabu", "tabu-9"), parallel="race").search(env, playouts=10)
    morpion = gym.make("mc_envs/MorpionSolitaire5D-v0").unwrapped
    morpion.reset()
    with pytest.raises(ValueError, match="at least two policies"):
        NRPA(level=1, parallel="race").search(morpion, playouts=10)
    ck = tmp_path / "race.json"
    race.search(env, playouts=300, checkpoint=str(ck))
    data = json.loads(ck.read_text())
    for field, value in (("probes", {"7": 1.0}), ("finalists", [9]), ("policies", ["tabu"])):
        ck.write_text(json.dumps({**data, field: value}))
        with pytest.raises(ValueError, match=f"{ck}: field '{field}'"):
            race.search(env, playouts=300, checkpoint=str(ck), resume=True)
    ck.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable race checkpoint"):
        race.search(env, playouts=300, checkpoint=str(ck), resume=True)


def test_a_kernel_pickles_its_module_functions_by_name():
    kernel = samegame(1).kernel
    back = pickle.loads(pickle.dumps(kernel))
    assert back.play is sg.play and back.legal_codes is sg.legal_codes
    assert back.selections.keys() == kernel.selections.keys()
    ttt = gym.make("mc_envs/TicTacToe-v0").unwrapped.kernel  # its playout is not a module global
    assert pickle.loads(pickle.dumps(ttt)).playout.py_func.__name__ == ttt.playout.py_func.__name__
    # The named tables too (priors, knowledge): in another process, a function pickled by value
    # is a new dispatcher, without numba's cache.
    go = gym.make("mc_envs/Go-v0", size=9).unwrapped.kernel
    c4 = gym.make("mc_envs/ConnectFour-v0").unwrapped.kernel
    code = (
        "import pickle, sys; from mc_envs.games import connect_four, go_policy; "
        "go, c4 = pickle.loads(sys.stdin.buffer.read()); "
        "assert go.knowledge['mogo'] is go_policy.mogo_knowledge, go.knowledge; "
        "assert c4.knowledge['tactics'] is connect_four.tactics, c4.knowledge; "
        "assert c4.priors['c4heuristic'] is connect_four.heuristic_prior, c4.priors"
    )
    child = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps((go, c4)), capture_output=True, timeout=120
    )
    assert child.returncode == 0, child.stderr.decode()[-2000:]


def test_solve_races_the_games_policies(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = ["solve", "samegame", "--position", "7", "--algo", "nrpa", "--level", "1"]
    assert (
        main([*args, "--parallel", "race", "--playouts", "600", "--quiet", "--out", str(out)]) == 0
    )
    record = json.loads(out.read_text())
    assert record["agent"]["params"]["policy"] == [
        "tabu",
        "tabu-2",
        "tabu-3",
        "tabu-4",
        "tabu-5",
        "random",
    ]
    assert record["agent"]["params"]["parallel"] == "race" and record["playouts"] == 600
    assert main(["verify", str(out)]) == 0
    assert main([*args, "--parallel", "race", "--policy", "tabu", "--out", str(out)]) == 2
    assert "a race needs several policies" in capsys.readouterr().err


def test_heats_are_independent_races_with_fresh_seeds_the_best_kept():
    env = samegame(7)
    agent = NRPA(level=1, seed=5, policy=NAMES, parallel="race", heats=2)
    assert agent.params["heats"] == 2
    result = agent.search(env, playouts=1801)
    first = NRPA(level=1, seed=5, policy=NAMES, parallel="race").search(env, playouts=901)
    table = result.extra["race"]
    assert [row["heat"] for row in table] == [0, 0, 0, 1, 1, 1]
    assert [{k: v for k, v in row.items() if k != "heat"} for row in table[:3]] == first.extra[
        "race"
    ]
    probe = int(0.4 * 900) // 3
    seeds = [worker_seed(5, 3 + i) for i in range(3)]
    singles = [
        NRPA(level=1, seed=s, policy=n).search(env, playouts=probe) for s, n in zip(seeds, NAMES)
    ]
    assert [row["seed"] for row in table[3:]] == seeds
    assert [row["probe"] for row in table[3:]] == [s.score for s in singles]
    finals = [row["final"] for row in table if row["final"] is not None]
    assert len(finals) == 2 and result.score == max(finals + [first.score])
    assert result.playouts == 1801 and replayed_score(env, result.actions) == result.score


def test_a_race_resumes_in_its_second_heat_and_checks_the_first_heats_game(tmp_path):
    env = samegame(7)
    agent = NRPA(level=1, seed=2, policy=NAMES, parallel="race", heats=2)
    ck = tmp_path / "race.json"
    whole = agent.search(env, playouts=1200, checkpoint=str(ck))
    data = json.loads(ck.read_text())
    assert data["heat"] == 2 and len(data["done"]) == 2
    assert not list(tmp_path.glob("race.json.*"))  # a finished heat's searches are removed
    again = agent.search(env, playouts=1200, checkpoint=str(ck), resume=True)
    assert (again.score, again.actions, again.extra) == (whole.score, whole.actions, whole.extra)
    assert again.playouts == whole.playouts == 1200
    after_first = {**data, "heat": 1, "done": data["done"][:1], "probes": {}, "finalists": None}
    ck.write_text(json.dumps(after_first))
    resumed = agent.search(env, playouts=1200, checkpoint=str(ck), resume=True)
    assert (resumed.score, resumed.actions) == (whole.score, whole.actions)
    assert resumed.extra["race"] == whole.extra["race"] and resumed.playouts == 1200
    done = data["done"][0]
    better = {**done, "score": done["score"] + 1}
    illegal = {**done, "actions": [224, *done["actions"]]}
    for field, value, bad in (
        ("heats", 3, "heats"),
        ("heat", 5, "heat"),
        ("done", [], "done"),
        ("done", [better], "done[0].score"),
        ("done", [illegal], "done[0].actions"),
        ("done", [{**done, "race": done["race"][:2]}], "done[0].race"),
        ("done", [{**done, "playouts": -1}], "done[0].playouts"),
        ("reserve", float("nan"), "reserve"),
    ):
        ck.write_text(json.dumps({**after_first, field: value}))
        with pytest.raises(ValueError, match=rf"{ck}: .*field '?{re.escape(bad)}"):
            agent.search(env, playouts=1200, checkpoint=str(ck), resume=True)


def test_a_timed_race_gives_every_heat_its_share(tmp_path):
    env = samegame(7)
    agent = NRPA(level=1, seed=4, policy=NAMES, parallel="race", heats=2)
    result = agent.search(env, time_limit=1.5, checkpoint=str(tmp_path / "race.json"))
    table = result.extra["race"]
    assert all(row["probe"] is not None for row in table)
    assert [row["heat"] for row in table if row["final"] is not None] == [0, 1]
    assert replayed_score(env, result.actions) == result.score


def test_a_race_stopped_in_its_probes_gives_each_its_share_less_what_it_ran(tmp_path, monkeypatch):
    env = samegame(7)
    agent = NRPA(level=1, seed=2, policy=NAMES, parallel="race", workers=2)
    ck = tmp_path / "race.json"
    stopped = agent.search(
        env, time_limit=20.0, checkpoint=str(ck), callback=lambda p: p.playouts >= 5000
    )
    data = json.loads(ck.read_text())
    assert stopped.stopped == "callback" and data["probes"] == {}
    share = data["share"]  # PROBE of the time (less the pool's start), two waves of probes
    assert 0.0 < share <= 0.4 * 20.0 / 2
    files = [tmp_path / f"race.json.e{i}" for i in range(3)]
    ran = [json.loads(f.read_text())["control"]["seconds"] if f.exists() else 0.0 for f in files]
    assert max(ran) > 0.0 and all(r < share for r in ran)  # cut short within their share
    given: dict[int, float] = {}
    task = race.Heat.task

    def recording(heat, i, budget):
        given.setdefault(i, budget["time_limit"])
        return task(heat, i, budget)

    monkeypatch.setattr(race.Heat, "task", recording)
    agent.search(
        env,
        time_limit=20.0 - stopped.seconds,
        checkpoint=str(ck),
        resume=True,
        callback=lambda p: True,
    )
    assert [given[i] for i in range(3)] == pytest.approx([share - r for r in ran], abs=1e-3)


def test_heats_need_a_race_and_a_positive_count(tmp_path, capsys):
    for heats in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="heats must be an int >= 1"):
            NRPA(level=1, policy=NAMES, parallel="race", heats=heats)
    with pytest.raises(ValueError, match="need parallel='race'"):
        NRPA(level=1, heats=2)
    args = ["solve", "samegame", "--position", "7", "--algo", "nrpa", "--level", "1"]
    assert main([*args, "--heats", "2", "--playouts", "50", "--parallel", "root"]) == 2
    assert "heats=2 are a race's" in capsys.readouterr().err
    out = tmp_path / "r.json"
    assert main([*args, "--heats", "2", "--playouts", "600", "--quiet", "--out", str(out)]) == 0
    params = json.loads(out.read_text())["agent"]["params"]
    assert params["heats"] == 2 and params["parallel"] == "race"
