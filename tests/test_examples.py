"""Each example runs, and does what it says."""

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np

from mc_envs.agents import NMCS
from mc_envs.testing import check_planning_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def test_solve_samegame_example_writes_a_certified_record(tmp_path):
    out = tmp_path / "s.json"
    run = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "solve_samegame.py"),
            "--position",
            "2",
            "--seconds",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    )
    assert "certified: score" in run.stdout and out.exists()


def test_custom_env_example_conforms_and_nmcs_finds_the_optimum():
    module = runpy.run_path(str(EXAMPLES / "custom_env.py"), run_name="example")
    coin_walk, best_walk = module["CoinWalk"], module["best_walk"]
    coins = np.random.default_rng(1).integers(0, 10, size=40)
    check_planning_env(lambda: coin_walk(coins, 15))
    env = coin_walk(coins, 15)
    result = NMCS(level=2, seed=0).search(env, playouts=5000)
    assert result.score == best_walk(coins, 15)
    snap = env.clone_state()
    assert sum(env.step(a)[1] for a in result.actions) == result.score
    env.restore_state(snap)


def test_custom_env_example_runs_as_a_script():
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "custom_env.py")],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    )
    assert "optimum by dynamic programming" in run.stdout


def test_maskable_ppo_example_learns_to_lose_less_against_random():
    module = runpy.run_path(str(EXAMPLES / "maskable_ppo_tictactoe.py"), run_name="example")
    results = module["main"](["--steps", "4096", "--games", "200", "--seed", "0"])
    before, after = results["untrained"], results["trained"]
    assert sum(before.values()) == sum(after.values()) == 200
    assert after["losses"] < before["losses"]
    assert after["wins"] + after["draws"] / 2 > before["wins"] + before["draws"] / 2


def test_cleanrl_ppo_example_learns_connect_four_against_random():
    run = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "cleanrl_ppo.py"),
            "--total-timesteps",
            "40000",
            "--eval-games",
            "500",
            "--seed",
            "1",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
        timeout=300,
    )
    found = re.findall(r"win rate against the random player, (\w+): +([0-9.]+)", run.stdout)
    rates = {name: float(rate) for name, rate in found}
    assert set(rates) == {"untrained", "trained"}, run.stdout
    assert 0.3 < rates["untrained"] < 0.75  # about a random player's, moving first
    assert rates["trained"] >= rates["untrained"] + 0.1, rates
    assert "40,000 steps on 64 envs in" in run.stdout
