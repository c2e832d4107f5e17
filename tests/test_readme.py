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
