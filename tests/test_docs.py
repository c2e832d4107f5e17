"""The documentation site: it builds with warnings as errors, every registered id has its page
(from the env's docstring) with its picture, and the guides' code examples run as written.

``make test`` builds the site before the tests and names it in ``MC_ENVS_DOCS_HTML``; run alone,
this module builds it into a temporary folder.
"""

import html
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from mc_envs.registry import ENVS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PICTURES = DOCS / "pictures"
SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Episode End",
    "Arguments",
    "Version History",
)


def slug(env_id):
    return env_id.partition("/")[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    built = os.environ.get("MC_ENVS_DOCS_HTML")
    if built:
        return ROOT / built
    out = tmp_path_factory.mktemp("html")
    build = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-q", "-W", "--keep-going"]
    proc = subprocess.run(
        [*build, str(DOCS), str(out)], capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, f"the docs build failed:\n{proc.stderr[-4000:]}"
    return out


# -- the docs extra alone ----------------------------------------------------------------------

# What `pip install ".[docs]"` does not install, though this venv has it: the child below hides it.
BOOTSTRAP = {"pip", "setuptools", "_distutils_hack"}  # in every venv, loaded before any code runs
EXTRAS_NAMED_BY_THE_ISSUE = {
    "stable_baselines3", "sb3_contrib", "pettingzoo", "torch", "jax", "optax", "ray", "pygame",
    "imageio", "moviepy", "matplotlib", "pyspiel", "pgx",
}  # fmt: skip

# The child hides those modules from every import finder (as if not installed: an import raises
# ModuleNotFoundError and importlib.util.find_spec answers None), checks that it does, and then
# runs the docs build. Sphinx's own autodoc mocks, added later in front, still answer.
DOCS_ALONE = """
import importlib.util, json, sys
HIDDEN = set(json.loads(sys.argv[1]))

class Hide:
    def __init__(self, finder):
        self.finder = finder
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return None
        return self.finder.find_spec(name, path, target)
    def __getattr__(self, attribute):
        return getattr(self.finder, attribute)

sys.meta_path[:] = [Hide(finder) for finder in sys.meta_path]
assert not HIDDEN & set(sys.modules), sorted(HIDDEN & set(sys.modules))
assert importlib.util.find_spec("pettingzoo") is None
try:
    import stable_baselines3
except ModuleNotFoundError:
    pass
else:
    raise AssertionError("stable_baselines3 is still importable")
from sphinx.cmd.build import main
sys.exit(main(sys.argv[2:]))
"""


def _not_in_the_docs_extra():
    """Top-level modules of this venv that `pip install ".[docs]"` would not install: those of
    every distribution outside the requirement closure of mc-envs[docs]."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    needed, todo = set(), [("mc-envs", frozenset({"docs"}))]
    while todo:
        name, extras = todo.pop()
        if (canonicalize_name(name), extras) in needed:
            continue
        needed.add((canonicalize_name(name), extras))
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:  # a requirement for another platform
            continue
        for req in map(Requirement, requires):
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras or {""}):
                todo.append((req.name, frozenset(req.extras)))
    needed_names = {name for name, _ in needed}
    return {
        module
        for module, dists in metadata.packages_distributions().items()
        if module.isidentifier()
        and module not in BOOTSTRAP
        and not any(canonicalize_name(d) in needed_names for d in dists)
    }


@pytest.mark.timeout(120)
def test_the_docs_extra_alone_builds_the_site(tmp_path):
    """With every package outside mc-envs[docs] unimportable, the site builds with warnings as
    errors (autodoc stands in for the extras, docs/conf.py). The dummy builder reads every page and
    imports every documented module, as the html build does, without writing the pages (the html
    build runs in ``make test`` and in the ``site`` fixture below)."""
    hidden = _not_in_the_docs_extra()
    assert hidden >= EXTRAS_NAMED_BY_THE_ISSUE, EXTRAS_NAMED_BY_THE_ISSUE - hidden
    build = ["-b", "dummy", "-E", "-q", "-W", "--keep-going", str(DOCS), str(tmp_path / "out")]
    proc = subprocess.run(
        [sys.executable, "-c", DOCS_ALONE, json.dumps(sorted(hidden)), *build],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, (
        f"the docs extra alone cannot build the site:\n{proc.stderr[-4000:]}"
    )


def test_every_id_has_a_committed_picture():
    pictures = json.loads((PICTURES / "pictures.json").read_text())
    assert sorted(pictures) == sorted(ENVS), "run docs/make_pictures.py for the missing ids"
    for env_id, entry in pictures.items():
        head = (PICTURES / entry["picture"]).read_bytes()[:8]
        assert head.startswith((b"\x89PNG", b"GIF8")), env_id
        assert entry["caption"], env_id


@pytest.mark.timeout(240)  # builds the whole site when make test has not
def test_every_id_has_a_page_with_its_picture(site):
    pictures = json.loads((PICTURES / "pictures.json").read_text())
    index = (site / "envs" / "index.html").read_text()
    for env_id in ENVS:
        page_path = site / "envs" / f"{slug(env_id)}.html"
        assert page_path.exists(), f"{env_id} has no page"
        assert f'href="{slug(env_id)}.html"' in index, f"the envs index does not link {env_id}"
        page = page_path.read_text()
        assert env_id in page
        for section in SECTIONS:  # the docstring's sections, as headings
            assert re.search(rf"<h2>{section}<a", page), f"{env_id}: no {section} section"
        images = re.findall(r'<img[^>]+src="([^"]+)"', page)
        assert len(images) == 1, f"{env_id}: {len(images)} pictures"
        shown = (page_path.parent / images[0]).resolve()
        committed = PICTURES / pictures[env_id]["picture"]
        assert shown.read_bytes() == committed.read_bytes(), f"{env_id} shows another picture"
        assert pictures[env_id]["caption"].split(":")[0] in page


def test_a_missing_picture_is_a_build_warning(tmp_path, monkeypatch):
    """What makes ``-W`` fail the build when an id has no picture."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import env_pages
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    (tmp_path / "pictures").mkdir()
    pictures = json.loads((PICTURES / "pictures.json").read_text())
    missing = "mc_envs/ConnectFour-v0"
    for env_id, entry in pictures.items():
        if env_id != missing:
            name = entry["picture"]
            (tmp_path / "pictures" / name).write_bytes((PICTURES / name).read_bytes())
    (tmp_path / "pictures" / "pictures.json").write_text(json.dumps(pictures))
    warnings = []
    monkeypatch.setattr(env_pages.logger, "warning", warnings.append)
    env_pages.generate(SimpleNamespace(srcdir=str(tmp_path)))
    assert warnings == [f"{missing} has no picture: run docs/make_pictures.py {missing}"]
    assert "figure" not in (tmp_path / "envs" / f"{slug(missing)}.md").read_text()
    assert "figure" in (tmp_path / "envs" / "SameGame-v0.md").read_text()


def test_the_script_draws_the_committed_picture():
    """docs/make_pictures.py works, and a committed picture is what it draws (a cheap id)."""
    pytest.importorskip("pygame")
    iio = pytest.importorskip("imageio.v3")
    sys.path.insert(0, str(DOCS))
    try:
        import make_pictures
    finally:
        sys.path.remove(str(DOCS))
    from mc_envs.render.draw import surface_to_array
    from mc_envs.render.replay import frame_surface

    replay, caption = make_pictures.game("mc_envs/LeftMove-v0")
    drawn = surface_to_array(frame_surface(replay, len(replay)))
    committed = json.loads((PICTURES / "pictures.json").read_text())["mc_envs/LeftMove-v0"]
    assert caption == committed["caption"]
    assert (iio.imread(PICTURES / committed["picture"])[..., :3] == drawn).all()


# -- the guides' code examples --------------------------------------------------------------------

# Budgets shortened for the tests (the examples keep their real ones).
SHORTER = {
    "time_limit=10": "time_limit=1",
    "total_timesteps=20_000": "total_timesteps=64",
    "total_timesteps=4_096": "total_timesteps=1_024",
}


def _blocks():
    for path in sorted(DOCS.rglob("*.md")):
        if "_build" in path.parts or path.parent.name == "envs":
            continue
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S)):
            if not block.startswith("# not run"):
                yield pytest.param(block, id=f"{path.relative_to(DOCS)}#{i}")


def _illegal_actions(out):
    lines = out.splitlines()
    assert lines[0].startswith("-1.0 True True cell (row 1, col 1)")
    assert lines[1].startswith("illegal action 4 (r1c1): cell (row 1, col 1) is occupied")


def _evaluator(out):
    move, iterations = out.split()
    assert 0 <= int(move) < 7 and int(iterations) == 200


def _vector(out):
    assert out.split() == ["(1024,", "2,", "6,", "7)", "1024", "ConnectFour"]


# What a block prints, where it says (found by a line of the block).
OUTPUTS = {
    "print(reward, terminated, info": _illegal_actions,
    "def evaluator(observations, masks)": _evaluator,
    "snapshot = envs.clone_state()": _vector,
    "print(result.score, len(result.actions)": lambda out: float(out.split()[0]) > 0,
    "enough(progress)": lambda out: out.split() == ["callback", "True", "True"],
    "print(env.returns())": lambda out: "[" in out,
    "print(more.score == whole.score": lambda out: out.split() == ["True", "True"],
    "print(verify_record(": lambda out: out.split() == ["True"],
    "print(0 <= agent.act(env) < 7)": lambda out: out.split() == ["True"],
}


@pytest.mark.timeout(300)  # the first run compiles kernels; MaskablePPO imports torch
@pytest.mark.parametrize("block", list(_blocks()))
def test_the_guides_examples_run(block, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' mkdtemp() folders
    for long, short in SHORTER.items():
        block = block.replace(long, short)
    exec(compile(block, "docs", "exec"), {"__name__": "docs_example"})
    out = capsys.readouterr().out
    checks = [check for marker, check in OUTPUTS.items() if marker in block]
    assert len(checks) <= 1
    for check in checks:
        assert check(out) is not False, out


def test_the_moved_examples_keep_their_budgets():
    """The shortened budgets are the ones the guides show (a renamed budget would run in full)."""
    text = "".join((DOCS / "guides" / name).read_text() for name in ("rl.md", "planning.md"))
    for long in SHORTER:
        assert long in text


# -- the results page ------------------------------------------------------------------------------

RESULTS = DOCS / "results.md"
REPORTS = ROOT / "benchmarks" / "results"


def _report(name):
    return json.loads((REPORTS / name).read_text())


def _figures_from_the_reports():
    """Figures of the results page, computed from the reports they come from."""
    figures = []
    bench = _report("samegame_bench.json")
    for policy in ("random", "tabu"):
        row = bench["playouts"][policy]
        figures += [f"{row['ours_per_s']:,.0f}", f"{row['cpp_per_s']:,.0f}", f"{row['ratio']:.2f}"]
    level2 = bench["nmcs"]["2"]
    figures += [f"{level2['ours_seconds']:.1f} s", f"{level2['cpp_seconds']:.1f} s"]
    vector = _report("vector_bench_full.json")
    by = {(m["impl"], m["id"], m["n"]): m.get("steps_per_s") for m in vector["measurements"]}
    for game in ("ConnectFour", "TicTacToe"):
        ours, sync, pgx = (
            by[(impl, f"mc_envs/{game}-v0", 1024)] for impl in ("ours", "sync", "pgx")
        )
        figures += [f"{ours / 1e6:.1f}M", f"{ours / sync:.0f}", f"{ours / pgx:.1f}"]
    for name in (
        "samegame_spread_race_heats2_600s.json",
        "samegame_spread_race_stab2_rep20_300s.json",
    ):
        spread = _report(name)
        figures += [f"{total:,.0f}" for total in spread["totals"]]
        figures += [f"{spread['mean_total']:,.0f}, {spread['range_total']:,.0f}"]
    ablation = _report("nrpa_ablation_60s/summary.json")["configs"]
    figures += [f"{config['total']:,.0f}" for config in ablation.values()]
    for name in ("alphazero_arena_lr.json",):
        for games in _report(name)["matches"].values():
            score = sum(1.0 if g > 0 else 0.5 if g == 0 else 0.0 for g in games) / len(games)
            figures.append(f"{score:.3f}")
    value = _report("connect4_value_moves_lr.json")["summary"]["puct200_model"]["informative"]
    figures.append(f"{value['share']:.3f}")
    for case in _report("cold_time_limit.json")["cases"].values():
        call = case["calls"][0]
        figures.append(f"{call['seconds']:.2f} s, {call['playouts']:,}, {call['score']:,.0f}")
    warmup = _report("cold_start.json")["cases"]["warmup"]["cold"]
    figures += [
        f"{warmup['peak_rss_sum'] / 2**20:.0f} MB",
        f"{warmup['peak_rss_max'] / 2**20:.0f} MB",
    ]
    again = _report("cold_start_vector_2026-11-29.json")["cases"]  # the slow steps' cases
    worst = max(case["cold"]["worst_later_step_s"] for case in again.values())
    figures.append(f"no later step over {worst * 1e3:.0f} ms")
    cases = _report("cold_start.json")["cases"]
    night = _report("cold_start_2026-11-29_night.json")["cases"]  # the run before, another hour
    searches = [name for name, case in cases.items() if case["group"] == "search"]
    compiled = [
        sum(run[name]["compiled"]["first_s"] for name in searches) for run in (night, cases)
    ]
    figures.append(f"({compiled[0]:.1f} s against {compiled[1]:.1f} s)")
    for name in ("Go-v0 uct", "Go-v0 search_batch", "MorpionSolitaire5T-v0 nrpa"):
        figures.append(f"{cases[name]['cold']['first_s']:.2f} s")
    slower = _report("cold_start_searches_2026-11-29.json")["cases"]  # a slower hour
    for name in ("Go-v0 puct", "Go-v0 search_batch", "MorpionSolitaire5D-v0 nrpa"):
        figures.append(f"{slower[name]['cold']['first_s']:.2f} s")
    figures.append(f"({cases['MorpionSolitaire5D-v0 nrpa']['cold']['first_s']:.2f} s here)")
    figures += _second_vm_figures()
    for name in sorted(REPORTS.glob("cluster_bench_l3_*.json")):
        rates = {
            (m["scheme"], m["workers"]): m["playouts_per_s"] for m in _report(name.name)["measured"]
        }
        figures.append(f"{rates[('distributed_l3', 2)] / rates[('distributed_l3', 1)]:.2f}")
    go = _report("go_bench.json")
    measured = go["measurements"]
    figures += [
        f"{measured['ours_vector_n1024']['steps_per_s']:,.0f}",
        f"{measured['pgx_vector_n1024']['steps_per_s']:,.0f}",
        f"ours {go['ratios']['vector_n1024_ours_over_pgx']:.1f}x",
        f"ours {go['ratios']['uct_ours_over_openspiel']:.2f}x",
    ]
    policies = _report("go_policy.json")
    for name in ("random", "eye", "mogo"):
        figures.append(f"{policies['policies'][name]['playouts_per_s']:,.0f}")
        figures.append(f"{policies['policies'][name]['uct_iterations_per_s']:,.0f}")
    for name in ("eye", "mogo"):
        figures.append(f"({policies['ratios'][f'{name}_over_random']['playouts_per_s']:.2f}x)")
    figures += [f"{score:.2f} against" for score in policies["duels"].values()]
    selfplay = _report("selfplay_bench.json")
    figures += [
        f"{selfplay['together']['positions_per_s']:,.0f}",
        f"{selfplay['together']['ratio']:.1f}x",
    ]
    return figures


GROUPS = ("search", "env", "vector")
GO_KINDS = (("UCT", "uct"), ("PUCT", "puct"), ("`search_batch`", "search_batch"))


def _second_vm_figures():
    """The full cold-start run on the second VM, as the results page sums it up."""
    cases = _report("cold_start_2026-11-29_second_vm_full.json")["cases"]
    groups = {group: {n: c for n, c in cases.items() if c["group"] == group} for group in GROUPS}
    first = sorted(case["cold"]["first_s"] for case in groups["search"].values())
    envs = sorted(case["cold"]["first_s"] for case in groups["env"].values())
    assert all(case["same_result"] for case in groups["search"].values())
    ratios = sorted(
        case["cold"]["first_step_s"] / case["pgx"]["first_step_s"]
        for case in groups["vector"].values()
        if case.get("pgx")
    )
    later = max(case["cold"]["worst_later_step_s"] for case in groups["vector"].values())
    warmup = cases["warmup"]["cold"]
    return [
        f"the {len(first)} searches {first[0]:.2f} to {first[-1]:.2f} s",
        *(f"{kind} {cases[f'Go-v0 {name}']['cold']['first_s']:.2f} s" for kind, name in GO_KINDS),
        f"first steps {envs[0]:.2f} to {envs[-1]:.2f} s",
        f"{ratios[0]:.2f}x to {ratios[-1]:.2f}x pgx's, no later step over {later * 1e3:.0f} ms",
        f"warm-up {warmup['seconds']:.1f} s, {warmup['peak_rss_sum'] / 2**20:.0f} MB",
    ]


def test_the_results_page_has_the_cold_start_tables():
    """The cold-start tables on the results page are the ones its report gives
    (``python benchmarks/cold_start.py --markdown --out benchmarks/results/cold_start.json``)."""
    cold_start = runpy.run_path(str(ROOT / "benchmarks" / "cold_start.py"))
    tables = cold_start["markdown"](_report("cold_start.json"))
    assert tables.count("\n| `") >= 60  # the env, search and vector rows
    page = RESULTS.read_text()
    missing = [line for line in tables.splitlines() if line not in page]
    assert missing == [], "run benchmarks/cold_start.py --markdown and update docs/results.md"


def _changelog_figures():
    """Figures of the changelog's cold-start entries, computed from the runs they come from (the
    results page holds the last full run only)."""
    figures = []
    batch = _report("cold_start_search_batch_2026-11-29.json")["cases"]  # after its change
    before = _report("cold_start_search_batch_2026-11-29_before.json")["cases"]
    summed = [sum(cases[name]["cold"]["first_s"] for name in batch) for cases in (batch, before)]
    figures.append(f"summed {summed[0]:.2f} s against {summed[1]:.2f} s")
    go = [cases["Go-v0 search_batch"]["cold"]["first_s"] for cases in (batch, before)]
    figures.append(f"Go {go[0]:.2f} against {go[1]:.2f} s")
    after = _report("cold_start_searches_2026-11-29.json")["cases"]  # the parts, Go's three
    before = _report("cold_start_searches_2026-11-29_before.json")["cases"]
    for name in ("Go-v0 uct", "Go-v0 puct", "Go-v0 search_batch"):
        figures.append(
            f"{after[name]['cold']['first_s']:.2f} s ({before[name]['cold']['first_s']:.2f} s"
        )
    after = _report("cold_start_playout_parts_2026-11-29.json")["cases"]  # Go's playout's parts
    before = _report("cold_start_playout_parts_2026-11-29_before.json")["cases"]
    for name, words in (("Go-v0 search_batch", "`search_batch` on Go"), ("Go-v0 uct", "UCT on Go")):
        first = after[name]["cold"]["first_s"], before[name]["cold"]["first_s"]
        figures.append(f"{words} {first[0]:.2f} s ({first[1]:.2f} s")
    vector = _report("cold_start_vector_standin_2026-11-29.json")["cases"]  # the stand-in
    for name in ("ConnectFour-v0 vector", "Go-v0 vector", "TicTacToe-v0 vector"):
        first, pgx = vector[name]["cold"]["first_step_s"], vector[name]["pgx"]["first_step_s"]
        figures.append(f"{first:.2f} s ({first / pgx:.2f}x")
    summed = sum(case["cold"]["first_step_s"] for case in vector.values())
    figures.append(f"summed {summed:.2f} s")
    return figures


def test_the_changelog_has_the_figures_of_the_cold_start_runs_measured_again():
    """The runs measured again after each change to the cold start (the changelog's figures)."""
    text = " ".join((ROOT / "CHANGELOG.md").read_text().split())
    missing = [figure for figure in _changelog_figures() if figure not in text]
    assert missing == [], f"figures of benchmarks/results/ that CHANGELOG.md lacks: {missing}"


def test_the_results_page_has_the_go_ladders_table():
    """The ladder's table on the results page is the one its records under
    benchmarks/results/go_ladder/ give (``python benchmarks/go_ladder.py --table``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import go_ladder
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    found = go_ladder.rows()
    assert any(row["summary"]["games"] >= 50 for row in found)
    page = RESULTS.read_text()
    missing = [line for line in go_ladder.table(found).splitlines() if line not in page]
    missing += [line for line in go_ladder.specs().splitlines() if line not in page]
    assert missing == [], "run python benchmarks/go_ladder.py --table and update docs/results.md"


def test_the_results_page_has_the_figures_of_its_reports():
    page = " ".join(RESULTS.read_text().split())  # a figure may wrap at a space
    figures = _figures_from_the_reports()
    assert len(figures) >= 40
    missing = [f for f in figures if f not in page]
    assert missing == [], f"figures of benchmarks/results/ that docs/results.md lacks: {missing}"


def _tables(text):
    """(caption, header cells, body rows) of each Markdown table; the caption is the paragraph
    just above the table, or above the tables right before it."""
    blocks = re.split(r"\n\s*\n", text)
    caption = ""
    for before, block in zip(["", *blocks], blocks):
        lines = block.strip().splitlines()
        if lines and lines[0].startswith("|"):
            caption = caption if before.lstrip().startswith("|") else before
            cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
            yield caption, [c.lower() for c in cells[0]], cells[2:]


def test_the_results_page_is_tables_with_their_commands():
    text = RESULTS.read_text()
    assert not re.search(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b", text), "a commit"
    assert "../" not in text and "/work/" not in text and "/tmp/" not in text
    tables = list(_tables(text))
    assert len(tables) >= 20
    for caption, header, rows in tables:
        has_command = "command" in header or re.search(r"`(python|bash|mc-envs|pytest)\s", caption)
        assert has_command, f"a table without its command: {header}"
        if "command" in header:
            column = header.index("command")
            assert all(row[column] for row in rows), f"a row without a command: {header}"
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert all("|---" in section for section in sections), "a section without a table"


# -- code fits the page ----------------------------------------------------------------------------

CODE_WIDTH = 88  # furo's content column shows about this many characters of code


def _wide_code_lines(site):
    """(page, line) for every line of a code block of the built site over CODE_WIDTH."""
    for page in sorted(site.rglob("*.html")):
        for block in re.findall(r"<pre[^>]*>(.*?)</pre>", page.read_text(), re.S):
            for line in html.unescape(re.sub(r"<[^>]+>", "", block)).splitlines():
                if len(line) > CODE_WIDTH:
                    yield page.relative_to(site).as_posix(), line


# Guides whose code is still to be rewrapped (their authors' files): listed here so that every
# other page is held to the width now; a listed page whose code fits fails the test, to be
# taken off the list.
NOT_YET_WRAPPED: set[str] = set()


@pytest.mark.timeout(240)  # builds the whole site when make test has not
def test_code_blocks_fit_the_page(site):
    wide = {page for page, _ in _wide_code_lines(site)}
    assert sorted(wide - NOT_YET_WRAPPED) == [], f"code lines over {CODE_WIDTH} characters"
    fitting = sorted(NOT_YET_WRAPPED - wide)
    assert fitting == [], f"{fitting} fit the page now: take them off NOT_YET_WRAPPED"
