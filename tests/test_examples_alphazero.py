"""The evaluator and AlphaZero examples run and do what they say."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _run(name: str, *args: str) -> str:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
        timeout=600,
    )
    return run.stdout


def test_puct_with_a_custom_evaluator_blocks_the_threat():
    assert "O plays column 3" in _run("puct_evaluator.py")


def test_the_alphazero_loop_lowers_its_loss_and_plays():
    out = _run("alphazero_tictactoe.py", "--iterations", "3", "--games", "8")
    before, after = map(float, re.search(r"loss ([\d.]+) -> ([\d.]+)", out).groups())
    assert after < before
    wins, draws, losses = map(
        int, re.search(r"(\d+) wins, (\d+) draws, (\d+) losses", out).groups()
    )
    assert wins + draws + losses == 10
