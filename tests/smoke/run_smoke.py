"""Installs a built mc-envs wheel into a fresh venv per Python and runs ``smoke_wheel.py`` there.

Usage (the standard library only, so any python3 runs it)::

    python3 tests/smoke/run_smoke.py --wheel dist/mc_envs-0.2.0-py3-none-any.whl --python 3.10 --python 3.13
    python3 tests/smoke/run_smoke.py --check-pythons 3.10 3.13   # only find the interpreters

Each run makes, in one temporary directory removed afterwards: a venv of that Python with the
wheel and its ``render`` extra installed from the package index, an empty numba cache (each
venv compiles cold, as a new user's does), and a user's project folder holding its own
``agents.py`` (which raises on import) and an empty ``render/`` package, into which the smoke
script is copied and run. ``--deps-from SITE_PACKAGES`` instead installs the wheel alone and
reaches the dependencies already installed in that site-packages (through a ``.pth`` line,
which runs none of that folder's own ``.pth`` files, so an editable install there stays
invisible). A Python is given as ``3.10`` (found under ``$(pyenv root)/versions/3.10*`` or as
``python3.10`` on PATH) or as the path of an interpreter.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SMOKE = Path(__file__).resolve().parent / "smoke_wheel.py"
INSTALL_TIMEOUT = 900  # seconds: pip's downloads
SMOKE_TIMEOUT = 900  # seconds: cold numba compiles of every check
USER_AGENTS = 'raise ImportError("user\'s agents.py shadowed the library")\n'


@dataclass
class Outcome:
    """One venv's run: the exit code (0 passed), its output and the seconds of each stage."""

    python: str
    returncode: int
    output: str
    seconds: dict[str, float]


def _run(command: list[str], *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """Runs a command in its own process group; on timeout the whole group is killed."""
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        **kwargs,
    ) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            output, _ = process.communicate()
            output += f"\n{command[0]}: killed after {timeout:g} s\n"
            return subprocess.CompletedProcess(command, -9, output)
        _kill_group(process.pid)  # anything it started and left running
        return subprocess.CompletedProcess(command, process.returncode, output)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def kill_leftovers(root: Path, wait: float = 10.0) -> list[int]:
    """Kills every process whose command line names a path under ``root`` (the venv's python:
    a compiling child that mc_envs started in its own session, which outlives the smoke script
    and its process group and would still be writing into the numba cache while ``root`` is
    removed); waits ``wait`` seconds at most for them to end. Linux (``/proc``) only. Returns
    their pids."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    prefix, killed = str(root), []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or not ours to read
        if any(arg.decode(errors="replace").startswith(prefix) for arg in args):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
    end = time.monotonic() + wait
    while time.monotonic() < end and any(_alive(pid) for pid in killed):
        time.sleep(0.05)
    return killed


def _alive(pid: int) -> bool:
    # a killed child of this process is a zombie until reaped: count it as ended. The test of
    # mc_envs.spawning._ended, which this script cannot import: it runs on a bare python3.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _version_of(python: str) -> str | None:
    """``"3.10"`` for a working interpreter, None when it does not run (a pyenv shim of another
    version, a broken link)."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _pyenv_root() -> Path | None:
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run(
            [pyenv, "root"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
        if done.returncode == 0 and done.stdout.strip():
            return Path(done.stdout.strip())
    return None


def find_python(version: str) -> str:
    """The interpreter of ``version`` (``"3.13"``), or ``version`` itself when it is a path.

    Raises:
        LookupError: no working interpreter of that version, naming where it looked.
    """
    if os.sep in version:
        if _version_of(version) is None:
            raise LookupError(f"{version}: not a working Python interpreter")
        return version
    looked = []
    root = _pyenv_root()
    if root is not None:
        pattern = str(root / "versions" / f"{version}*" / "bin" / f"python{version}")
        looked.append(pattern)
        for candidate in sorted(glob.glob(pattern), reverse=True):
            if _version_of(candidate) == version:
                return candidate
    looked.append(f"python{version} on PATH")
    on_path = shutil.which(f"python{version}")
    if on_path and _version_of(on_path) == version:
        return on_path
    raise LookupError(
        f"python{version} not found (looked at {' and '.join(looked)}); "
        f"install it, e.g. `pyenv install {version}`"
    )


def _user_folder(into: Path) -> Path:
    """A user's project folder: its own agents.py and an empty render/ package, and the script."""
    into.mkdir()
    (into / "agents.py").write_text(USER_AGENTS)
    (into / "render").mkdir()
    (into / "render" / "__init__.py").write_text("")
    shutil.copy(SMOKE, into / SMOKE.name)
    return into


def run_smoke(
    python: str, wheel: Path, *, deps_from: Path | None = None, timeout: float = SMOKE_TIMEOUT
) -> Outcome:
    """Makes a fresh venv of ``python``, installs ``wheel`` and runs the smoke script there.

    Args:
        python: the interpreter the venv is made from.
        wheel: the built wheel.
        deps_from: a site-packages holding the dependencies (numpy, numba, gymnasium,
            pygame-ce): the wheel is then installed without them, and nothing is downloaded.
        timeout: seconds for the smoke script (it is killed then, with all it started).

    Returns:
        The outcome; the venv and everything the run wrote are removed, after the processes the
        script left running there (its compiling children) are killed (:func:`kill_leftovers`).
    """
    seconds: dict[str, float] = {}
    log: list[str] = []

    def stage(name: str, command: list[str], timeout: float, **kwargs) -> bool:
        began = time.perf_counter()
        done = _run(command, timeout=timeout, **kwargs)
        seconds[name] = time.perf_counter() - began
        log.append(f"$ {' '.join(command)}\n{done.stdout}")
        return done.returncode == 0

    with tempfile.TemporaryDirectory(prefix="mc-envs-smoke-") as tmp:
        venv = Path(tmp) / "venv"
        vpy = str(venv / "bin" / "python")
        # A new user's environment: no path, venv or mc-envs setting of the caller's.
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("MC_ENVS_")
        }
        env.update(
            NUMBA_CACHE_DIR=str(Path(tmp) / "numba-cache"),
            PYTHONNOUSERSITE="1",
            SDL_VIDEODRIVER="dummy",
            SDL_AUDIODRIVER="dummy",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        ok = stage("venv", [python, "-m", "venv", str(venv)], 300, env=env)
        if ok and deps_from is not None:
            purelib = _run(
                [vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                timeout=60,
                env=env,
            ).stdout.strip()
            (Path(purelib) / "_mc_envs_smoke_deps.pth").write_text(f"{deps_from}\n")
            install = [vpy, "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)]
        else:
            install = [vpy, "-m", "pip", "install", "--quiet", f"{wheel}[render]"]
        ok = ok and stage("install", install, INSTALL_TIMEOUT, env=env)
        try:
            if ok:
                folder = _user_folder(Path(tmp) / "project")
                command = [vpy, SMOKE.name]
                ok = stage("smoke", command, timeout, env=env, cwd=folder)
        finally:
            kill_leftovers(Path(tmp))
        return Outcome(python, 0 if ok else 1, "\n".join(log), seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="the built wheel to install")
    parser.add_argument(
        "--python", action="append", default=[], help="a version (3.10) or an interpreter's path"
    )
    parser.add_argument("--deps-from", type=Path, help="site-packages holding the dependencies")
    parser.add_argument(
        "--check-pythons", nargs="+", metavar="VERSION", help="only find these interpreters"
    )
    args = parser.parse_args(argv)
    try:
        if args.check_pythons:
            for version in args.check_pythons:
                print(f"python{version}: {find_python(version)}")
            return 0
        if args.wheel is None or not args.python:
            parser.error("--wheel and at least one --python are needed")
        if not args.wheel.is_file():
            parser.error(f"--wheel {args.wheel}: no such file")
        pythons = [find_python(version) for version in args.python]
    except LookupError as error:
        print(f"run_smoke: {error}", file=sys.stderr)
        return 2
    failed = 0
    for python in pythons:
        outcome = run_smoke(python, args.wheel.resolve(), deps_from=args.deps_from)
        print(outcome.output, flush=True)
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in outcome.seconds.items())
        verdict = "passed" if outcome.returncode == 0 else "FAILED"
        print(f"smoke {verdict} with {python}: {stages}", flush=True)
        failed += outcome.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
