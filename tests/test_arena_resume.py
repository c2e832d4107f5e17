"""Agent specs with options, and the resumable arena (``mc-envs arena --sgf-dir --resume --jobs``)."""

from __future__ import annotations

import pytest

from mc_envs.agents import specs
from mc_envs.agents.mcts import presets
from mc_envs.agents.specs import parse


def test_spec_options_reach_the_constructor() -> None:
    agent = parse("uct:iterations=3000,policy=eye,reuse=false,c=1", seed=3)
    assert (agent.iterations, agent.policy, agent.reuse, agent.seed) == (3000, "eye", False, 3)
    assert agent.c == 1.0 and isinstance(agent.c, float)
    hard = parse("UCT-hard:c=0.5", iterations=7)  # the caller's budget over the preset's
    assert (hard.iterations, hard.c) == (7, 0.5)
    assert parse("uct-hard:iterations=9", iterations=7).iterations == 9  # the spec's own wins
    assert parse("puct:fpu=0.25,iterations=none,time_limit=1.5").time_limit == 1.5
    assert parse("random:seed=5").seed == 5
    assert specs.option_value("1e3") == 1000.0 and specs.option_value("None") is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("uct:rollouts=5", r"unknown option 'rollouts'; UCT takes \[.*'iterations'.*'reuse'"),
        ("puct:nope=1", r"unknown option 'nope'; PUCT takes \[.*'fpu'"),
        ("uct:iterations=abc", r"option iterations='abc' is not int \| None"),
        ("uct:reuse=1", r"option reuse=1 is not bool"),
        ("uct:c=wide", r"option c='wide' is not float"),
        ("uct:iterations", r"option 'iterations' is not key=value"),
        ("uct:c=1,c=2", r"option 'c' given twice"),
        ("uct:iterations=0", r"iterations must be >= 1"),
        ("random-hard", r"unknown agent 'random-hard'; use one of \[.*'uct:<options>'"),
    ],
)
def test_bad_spec_options_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(spec)


def test_a_named_keyword_preset_is_one_dict_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(presets.SPEC_PRESETS, "uct-test", {"iterations": 321, "reuse": False})
    assert "uct-test" in specs.known()
    agent = parse("uct-test:c=0.25")
    assert (agent.iterations, agent.reuse, agent.c) == (321, False, 0.25)


def test_options_work_as_opponent_names() -> None:
    import mc_envs.agents  # noqa: F401  (fills the registry)
    from mc_envs import opponents

    assert opponents.resolve("uct:iterations=5", seed=1).iterations == 5
    assert opponents.resolve("uct-hard:c=0.125", seed=1).c == 0.125
