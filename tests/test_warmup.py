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


def test_envs_that_share_compiled_code_go_to_one_child():
    # Morpion 5D and 5T share one kernel: a child on 5D goes on with 5T, and the other child
    # takes another game meanwhile instead of compiling Morpion's searches again.
    from mc_envs.agents.warmup.children import Child, _next, _queues, group
    from mc_envs.agents.warmup.work import entries

    d, t, sg = (f"mc_envs/{g}-v0" for g in ("MorpionSolitaire5D", "MorpionSolitaire5T", "SameGame"))
    assert group(d) == group(t) != group(sg)
    queues = _queues(entries([d, t, sg]))
    a, b = Child.__new__(Child), Child.__new__(Child)
    a.entry = b.entry = None
    a.entry = _next(queues, a, [b])
    b.entry = _next(queues, b, [a])
    assert (a.entry.env_id, b.entry.env_id) == (d, sg)
    morpion = []
    while (entry := _next(queues, a, [b])) is not None and entry.env_id != sg:
        morpion.append(entry.env_id)
    assert morpion == [d] * (len(entries([d])) - 1) + [t] * len(entries([t]))
