"""``mc-envs warmup``: every registered env ready, in a file of its own so that it runs last, on
the cache the other tests filled, also on pytest-xdist (``--dist loadfile`` hands out files in
their order: tests/conftest.py puts the ``last`` tests at the end)."""

import pytest

import mc_envs
from mc_envs.cli import main


@pytest.mark.last  # what the other tests compiled, it loads
@pytest.mark.timeout(900)  # compiles every kernel, search and vector step from a cold cache
def test_warmup_readies_every_registered_env(capsys):
    assert main(["warmup"]) == 0
    out = capsys.readouterr().out
    assert "numba cache:" in out
    for env_id in mc_envs.ENVS:
        assert f"{env_id}: ready in" in out
