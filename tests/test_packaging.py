"""The wheel a user installs carries every module and every data file of the source tree."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mc_envs",)


def _source_files():
    files = set()
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.add(path.relative_to(ROOT).as_posix())
    return files


def _copy_of_the_source(into):
    """A copy to build from, so the build writes nothing into the checkout and reads no stale
    build directory of an earlier one."""
    into.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, into / name)
    for top in PACKAGES:
        shutil.copytree(ROOT / top, into / top, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def test_the_wheel_holds_every_module_and_data_file_and_setuptools_warns_of_none(tmp_path):
    source = _copy_of_the_source(tmp_path / "source")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--wheel-dir", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert built.returncode == 0, built.stderr
    output = built.stdout + built.stderr
    assert "absent from the `packages` configuration" not in output
    assert "deprecated" not in output
    (wheel,) = tmp_path.glob("mc_envs-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_source_files() - inside)
    assert missing == []
    assert "mc_envs/data/samegame/standard_20.txt" in inside
