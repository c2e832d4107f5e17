"""The release: the sdist and wheel ``python -m build`` makes, their metadata, and the built wheel
installed into a fresh venv, used from a folder holding the user's own ``agents.py`` and
``render/`` (tests/smoke/)."""

import importlib.util
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path
from types import SimpleNamespace

import pytest
import tomllib

import mc_envs
from mc_envs import _version
from mc_envs.records import make_record

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mc_envs",)
REPOSITORY = "https://github.com/mc-envs/mc-envs"
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
NOT_SHIPPED = {"tests", "benchmarks", "results", "docs", "examples"}


def _source_files():
    files = set()
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.add(path.relative_to(ROOT).as_posix())
    return files


def _copy_of_the_checkout(into):
    """The files a clone would have (tracked or new, not ignored), copied, so the build writes
    nothing into the checkout and reads no stale build directory of an earlier one."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # not a tracked file deleted in the working tree
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def _load(path):
    name = f"_smoke_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """sdist and wheel as `python -m build` makes them (the wheel from the sdist), offline."""
    tmp = tmp_path_factory.mktemp("build")
    source = _copy_of_the_checkout(tmp / "source")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist")]
        + [str(source)],
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("mc_envs-*.whl")
    (sdist,) = (tmp / "dist").glob("mc_envs-*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"mc_envs-{_version.__version__}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
        top_level = archive.read(f"{info}/top_level.txt").decode()
        licence = archive.read(f"{info}/licenses/LICENSE").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    return SimpleNamespace(
        wheel=wheel,
        sdist=sdist,
        output=done.stdout + done.stderr,
        names=set(names),
        metadata=Parser().parsestr(metadata),
        top_level=top_level,
        licence=licence,
        entry_points=entry_points,
    )


def test_the_wheel_holds_every_module_and_data_file_and_setuptools_warns_of_none(built):
    assert "absent from the `packages` configuration" not in built.output
    assert "deprecated" not in built.output.lower()
    missing = sorted(_source_files() - built.names)
    assert missing == []
    assert "mc_envs/data/samegame/standard_20.txt" in built.names


def test_the_wheel_installs_mc_envs_alone_with_its_licence_and_no_tests_or_results(built):
    assert built.top_level.split() == ["mc_envs"]
    info = f"mc_envs-{_version.__version__}.dist-info/"
    strays = sorted(n for n in built.names if not n.startswith(("mc_envs/", info)))
    assert strays == []
    shipped = sorted(n for n in built.names if NOT_SHIPPED & set(n.split("/")[:-1]))
    assert shipped == []
    assert built.licence == (ROOT / "LICENSE").read_text()
    assert built.licence.startswith("MIT License\n\nCopyright (c) 2026 the mc-envs authors\n")


def test_the_wheel_declares_the_command_and_the_opponents_entry_point(built):
    """``mc-envs`` and the group ``mc_envs.opponents`` through which ``opponent="uct"`` reaches
    the agents in a program that never imported them (mc_envs.opponents)."""
    assert "[console_scripts]\nmc-envs = mc_envs.cli:main" in built.entry_points
    group = "[mc_envs.opponents]\nagents = mc_envs.agents.specs:register_opponents"
    assert group in built.entry_points, built.entry_points


def test_the_sdist_holds_the_build_inputs_and_licence_but_no_tests_or_benchmarks(built):
    top = f"mc_envs-{_version.__version__}"
    with tarfile.open(built.sdist) as archive:
        names = {m.name.removeprefix(f"{top}/") for m in archive.getmembers()}
    for needed in ("LICENSE", "README.md", "pyproject.toml", "PKG-INFO", "mc_envs/__init__.py"):
        assert needed in names
    if (ROOT / "CHANGELOG.md").exists():
        assert "CHANGELOG.md" in names
    shipped = sorted(n for n in names if NOT_SHIPPED & set(n.split("/")))
    assert shipped == []


def test_twine_check_passes_on_the_sdist_and_the_wheel(built):
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built.sdist), str(built.wheel)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_metadata_names_the_version_licence_pythons_and_repository(built):
    meta = built.metadata
    assert meta["Version"] == _version.__version__ == mc_envs.__version__
    assert built.wheel.name == f"mc_envs-{_version.__version__}-py3-none-any.whl"
    assert meta["License-Expression"] == "MIT AND BSD-2-Clause AND BSD-3-Clause"
    assert meta["Requires-Python"] == ">=3.10"
    classifiers = meta.get_all("Classifier")
    for version in PYTHONS:
        assert f"Programming Language :: Python :: {version}" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls["Repository"] == REPOSITORY


def test_the_version_has_one_source_and_records_carry_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "mc_envs._version.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", mc_envs.__version__)
    record = make_record(
        env_id="mc_envs/LeftMove-v0",
        env_kwargs={},
        reset_seed=None,
        actions=[0],
        score=1.0,
        agent="NMCS",
        params={},
        seconds=0.0,
        playouts=1,
    )
    assert record["mc_envs_version"] == _version.__version__


# A link or image target in Markdown: inline `[text](target)` / `![alt](target)`, a reference
# definition `[name]: target`, or an HTML `src=` / `href=`. Code is taken out first.
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_TARGETS = (
    re.compile(r"\]\(\s*<?([^)\s>]+)"),
    re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M),
    re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""", re.I),
)


def relative_links(markdown):
    """The link and image targets of ``markdown`` that are not absolute (http(s)://) or anchors."""
    text = _CODE.sub("", _FENCE.sub("", markdown))
    targets = [m.group(1) for pattern in _TARGETS for m in pattern.finditer(text)]
    return [t for t in targets if not t.startswith(("http://", "https://", "#"))]


def test_the_link_finder_finds_relative_links_and_images_outside_code():
    text = (
        "See [the guide](docs/guide.md), [site](https://x.org) and [top](#install).\n"
        "![a picture](docs/pictures/a.gif)\n"
        '<img src="pictures/b.png"> <a href="https://x.org/c">c</a>\n'
        "[ref]: ../results.md\n"
        "`[not](code.md)`\n```\n[nor](this.md)\n```\n"
    )
    found = relative_links(text)
    assert found == ["docs/guide.md", "docs/pictures/a.gif", "../results.md", "pictures/b.png"]


def test_the_pypi_description_has_only_absolute_links_and_images(built):
    assert built.metadata["Description-Content-Type"] == "text/markdown"
    description = built.metadata.get_payload()
    assert description.strip(), "the wheel's METADATA has no description"
    found = relative_links(description)
    assert found == [], f"README.md links PyPI cannot follow (make them absolute URLs): {found}"


@pytest.mark.timeout(900)
def test_the_wheel_in_a_fresh_venv_passes_the_smoke_suite_beside_a_users_agents_and_render(
    built,
):
    """tests/smoke/ on this Python (3.11); `make smoke` runs it on 3.10 and 3.13. The venv reaches
    this venv's numpy, numba, gymnasium and pygame through a path line, not its editable mc_envs:
    the smoke script checks that mc_envs is imported from the new venv."""
    smoke = _load(ROOT / "tests" / "smoke" / "smoke_wheel.py")
    runner = _load(ROOT / "tests" / "smoke" / "run_smoke.py")
    deps = Path(sysconfig.get_paths()["purelib"])
    outcome = runner.run_smoke(sys.executable, built.wheel, deps_from=deps, timeout=600)
    assert outcome.returncode == 0, outcome.output[-8000:]
    assert f"smoke: {len(smoke.CHECKS)} passed, 0 failed" in outcome.output.splitlines()


def test_the_smoke_run_kills_the_processes_it_left_in_its_folder_and_no_other(tmp_path):
    """A compiling child of the smoke script starts its own session: the script's process group
    ends without it, and it would still be writing into the folder the run removes."""
    runner = _load(ROOT / "tests" / "smoke" / "run_smoke.py")
    sleep = [sys.executable, "-c", "import sys, time; time.sleep(60)"]
    inside = subprocess.Popen([*sleep, str(tmp_path / "numba-cache")], start_new_session=True)
    outside = subprocess.Popen([*sleep, "elsewhere"], start_new_session=True)
    try:
        killed = runner.kill_leftovers(tmp_path)
        assert inside.wait(timeout=10) == -9 and killed == [inside.pid]
        assert outside.poll() is None
    finally:
        for process in (inside, outside):
            process.kill()
            process.wait()
