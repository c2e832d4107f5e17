"""The README's API example runs as written (with a shorter time limit)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_api_example_runs(capsys):
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert "time_limit=10" in block
    exec(compile(block.replace("time_limit=10", "time_limit=1"), "README.md", "exec"), {})
    score, moves, playouts = capsys.readouterr().out.split()
    assert float(score) > 0 and int(moves) > 0 and int(playouts) > 0


def test_the_rl_libraries_example_runs(capsys):
    section = README.read_text().split("## With RL libraries", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "total_timesteps=20_000" in block
    exec(compile(block.replace("20_000", "64"), "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("-1.0 True True cell (row 1, col 1)")
    assert lines[1].startswith("illegal action 4 (r1c1): cell (row 1, col 1) is occupied")


def test_the_evaluator_example_runs(capsys):
    section = README.read_text().split("### Learned models in PUCT", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(block, "README.md", "exec"), {})
    move, iterations = capsys.readouterr().out.split()
    assert 0 <= int(move) < 7 and int(iterations) == 200


def test_the_vector_env_example_runs(capsys):
    section = README.read_text().split("### Vector envs", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "total_timesteps=4_096" in block
    exec(compile(block.replace("4_096", "1_024"), "README.md", "exec"), {})
    assert capsys.readouterr().out.split() == ["(1024,", "2,", "6,", "7)", "1024", "ConnectFour"]
