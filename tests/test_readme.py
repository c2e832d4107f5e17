"""The README: its API example runs as written (with a shorter time limit), it stays a front page,
its links and images are absolute URLs (it is the PyPI description too) that lead to files of the
tree, its code fits the page, and its figures are those of the results page (the headline ones,
and a cold vector env's first step against pgx's). The examples that moved to the guides run in
tests/test_docs.py, with the same checks."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results.md"
REPO = "https://github.com/mc-envs/mc-envs/"
RAW = "https://raw.githubusercontent.com/mc-envs/mc-envs/main/"
CODE_WIDTH = 88

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_TARGETS = (
    re.compile(r"\]\(\s*<?([^)\s>]+)"),  # [text](target) and ![alt](target)
    re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$", re.M),  # [label]: target
    re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)"""),  # HTML
)


def targets(markdown):
    """Every link and image target of ``markdown`` outside code."""
    text = _CODE.sub("", _FENCE.sub("", markdown))
    return [m.group(1) for pattern in _TARGETS for m in pattern.finditer(text)]


def test_the_link_finder_sees_every_kind_of_link():
    text = (
        "[a](docs/a.md) ![b](pictures/b.gif) [c](https://x.org/c) [d]( <d.md> )\n"
        '[e]: ../e.md\n<img src="f.png"> <a href="#g">g</a>\n'
        "`[not](code.md)`\n```\n[nor](this.md)\n```\n"
    )
    assert sorted(targets(text)) == sorted(
        ["docs/a.md", "pictures/b.gif", "https://x.org/c", "d.md", "../e.md", "f.png", "#g"]
    )


def test_the_api_example_runs(capsys):
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert "from mc_envs.agents import" in block and "time_limit=10" in block
    exec(compile(block.replace("time_limit=10", "time_limit=1"), "README.md", "exec"), {})
    score, moves, playouts = capsys.readouterr().out.split()
    assert float(score) > 0 and int(moves) > 0 and int(playouts) > 0


def test_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    for needed in (
        "pip install mc-envs",
        "make demo",
        "make test",
        "make docs",
        "download.pytorch.org/whl/cpu",
        "## Headline results",
    ):
        assert needed in text, needed


def check_links(markdown):
    """Every target absolute; those into this repository lead to a file of the tree."""
    found = targets(markdown)
    relative = [t for t in found if not t.startswith(("https://", "http://"))]
    assert relative == [], f"PyPI cannot follow relative links: make them absolute: {relative}"
    ours = [t for t in found if t.startswith((REPO, RAW))]
    for target in ours:
        if target.startswith(RAW):
            path = target[len(RAW) :]
        else:
            kind, branch, path = target[len(REPO) :].split("/", 2)
            assert (kind, branch) in {("blob", "main"), ("tree", "main")}, target
        assert (ROOT / path.partition("#")[0]).exists(), f"{target}: no {path} in the tree"
    return ours


def test_links_and_images_are_absolute_and_lead_to_files_of_the_tree():
    ours = check_links(README.read_text())
    assert len(ours) >= 8
    assert any(t.startswith(RAW) for t in ours), "the picture is not a raw.githubusercontent URL"


@pytest.mark.parametrize(
    "markdown, complaint",
    [
        ("[guide](docs/install.md) ![x](docs/a.gif)", r"relative links.*docs/install\.md.*a\.gif"),
        ('<img src="docs/pictures/SameGame-v0.gif">', r"relative links.*SameGame-v0\.gif"),
        (f"[gone]({REPO}blob/main/docs/nothing.md)", r"no docs/nothing\.md in the tree"),
    ],
)
def test_a_relative_or_dead_link_is_refused(markdown, complaint):
    with pytest.raises(AssertionError, match=complaint):
        check_links(markdown)


def test_code_fits_the_page():
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", README.read_text(), re.S | re.M):
        for line in block.splitlines():
            assert len(line) <= CODE_WIDTH, f"a README code line of {len(line)} characters: {line}"


def test_the_headline_figures_are_those_of_the_results_page():
    text = README.read_text()
    headline = text.split("## Headline results", 1)[1].split("\n## ", 1)[0]
    figures = re.findall(r"\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+", headline)
    assert len(figures) >= 15
    results = RESULTS.read_text()
    missing = [f for f in figures if not re.search(rf"(?<![\d.,]){re.escape(f)}(?![\d,])", results)]
    assert missing == [], f"README figures that the results page does not have: {missing}"


def test_the_vector_envs_cold_first_step_against_pgx_is_the_results_pages_run():
    """The front page's range of a cold vector env's first step over pgx's is the one of the
    cold-start run on the results page (``benchmarks/results/cold_start.json``)."""
    cases = json.loads((ROOT / "benchmarks" / "results" / "cold_start.json").read_text())["cases"]
    ratios = [
        case["cold"]["first_step_s"] / case["pgx"]["first_step_s"]
        for case in cases.values()
        if case["group"] == "vector" and case.get("pgx")
    ]
    assert len(ratios) == 3  # Connect Four, Tic-Tac-Toe, Go
    figure = f"{min(ratios):.2f}x to {max(ratios):.2f}x the time of pgx's first step"
    assert figure in " ".join(README.read_text().split())
