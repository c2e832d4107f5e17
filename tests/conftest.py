import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
# A search on a cold numba cache stands in on the generic path while a child compiles
# (mc_envs.agents.compile_ahead): off in the suite, and in its subprocesses, so that every test sees the
# compiled search it asserts on; tests/test_compile_ahead.py turns it on.
os.environ["MC_ENVS_COMPILE_AHEAD"] = "0"
# Stable-Baselines3 makes a folder (SB3-<time>) in the system's temporary directory at every
# learn() without a logger: the suite's, and its subprocesses', go into one, removed at the end.
_SB3_LOGS = tempfile.mkdtemp(prefix="mc-envs-tests-sb3-")
os.environ["SB3_LOGDIR"] = _SB3_LOGS
atexit.register(shutil.rmtree, _SB3_LOGS, True)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import traceback  # noqa: E402

import pytest  # noqa: E402

# JAX's threads do not survive os.fork() (it warns "this will likely lead to a deadlock"): no test
# may fork once JAX is imported; children start with spawn or forkserver. Every fork is noted here
# and the test that made it fails.
_forks_after_jax: list[str] = []


def _note_fork() -> None:
    if "jax" in sys.modules:
        _forks_after_jax.append("".join(traceback.format_stack(limit=12)))


os.register_at_fork(before=_note_fork)


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``last`` run after the others, in their order: the warm-up, which compiles
    every entry point, then loads much of what the other tests compiled into the same cache
    (124.3 s in a clean clone's ``make test`` on the 2-core VM, on two workers; 117.7 s in the
    suite run on one, 143.6 s at its place before). Its file holds no other test, so that
    pytest-xdist's ``--dist loadfile`` hands it out last too.

    Tests marked ``serial`` assert on what a busy machine changes (a Ray cluster's timeouts, a
    throughput judged on the clock): a pytest-xdist worker leaves them out, and the summary
    says so. ``make test`` runs the others on two workers, then these alone."""
    if hasattr(config, "workerinput"):
        kept, serial = [], []
        for item in items:
            (serial if item.get_closest_marker("serial") else kept).append(item)
        if serial:
            items[:] = kept
            config.hook.pytest_deselected(items=serial)
            config.workeroutput["serial_left_out"] = len(serial)  # type: ignore[attr-defined]
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)


_serial_left_out = [0]  # as every worker reports it (they all collect the same tests)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """pytest-xdist: a worker has ended."""
    _serial_left_out[0] = getattr(node, "workeroutput", {}).get("serial_left_out", 0)


def pytest_terminal_summary(terminalreporter) -> None:
    if _serial_left_out[0]:
        terminalreporter.write_line(
            f"{_serial_left_out[0]} tests marked serial did not run under pytest-xdist: "
            "`pytest -m serial` runs them (make test does)",
            yellow=True,
        )


@pytest.fixture(autouse=True)
def _no_fork_after_jax():
    before = len(_forks_after_jax)
    yield
    assert len(_forks_after_jax) == before, "os.fork() after JAX was imported:\n" + "\n".join(
        _forks_after_jax[before:]
    )
