"""The README: its API example runs as written (with a shorter time limit), its links lead to
files of the tree, and it stays a front page. The examples that moved to the guides run in
tests/test_docs.py, with the same checks."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def test_the_api_example_runs(capsys):
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert "time_limit=10" in block
    exec(compile(block.replace("time_limit=10", "time_limit=1"), "README.md", "exec"), {})
    score, moves, playouts = capsys.readouterr().out.split()
    assert float(score) > 0 and int(moves) > 0 and int(playouts) > 0


def test_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    for needed in ("make demo", "make test", "make docs", "download.pytorch.org/whl/cpu"):
        assert needed in text


def test_the_links_lead_to_files_of_the_tree():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert len(local) >= 8
    for link in local:
        assert (ROOT / link).exists(), link
