"""The registry of players by name (mc_envs.opponents): the envs' ``opponent=`` and the play
window find the agents there, and the agents come in from above (their own registration, or the
entry point group for a program that never imported them)."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import gymnasium as gym
import pytest
import tomllib

import mc_envs  # noqa: F401
from mc_envs import opponents

ROOT = Path(__file__).resolve().parent.parent


class Fixed:
    def __init__(self, action: int) -> None:
        self.action = action

    def act(self, env) -> int:
        return self.action


@pytest.fixture
def registry(monkeypatch):
    """A registry holding only what the test registers (the real one restored after)."""
    monkeypatch.setattr(opponents, "_FACTORIES", {})
    monkeypatch.setattr(opponents, "_loaded", set())
    monkeypatch.setattr(opponents, "entry_points", lambda group: [])
    monkeypatch.setattr(opponents, "declared_in_source", lambda: [])
    return opponents


def test_names_and_prefixes_resolve_case_insensitively(registry) -> None:
    made = []
    registry.register("left", lambda spec, *, seed: made.append((spec, seed)) or Fixed(0))
    registry.register("col:", lambda spec, *, seed: Fixed(int(spec.partition(":")[2])))
    assert registry.resolve("LEFT", seed=7).act(None) == 0 and made == [("LEFT", 7)]
    assert registry.resolve("col:5").act(None) == 5
    assert registry.known() == ["left", "col:<argument>"]
    with pytest.raises(ValueError, match=r"unknown agent 'right'; use one of \['left', 'col:"):
        registry.find("right")
    with pytest.raises(ValueError, match="unknown agent 'lefty'"):
        registry.find("lefty")


def test_an_unknown_name_loads_the_entry_points_once(registry, monkeypatch) -> None:
    calls = []

    def register() -> None:
        calls.append(1)
        registry.register("late", lambda spec, *, seed: Fixed(3))

    point = EntryPoint("plugin", "x:register", opponents.GROUP)
    monkeypatch.setattr(EntryPoint, "load", lambda self: register)
    monkeypatch.setattr(
        opponents, "entry_points", lambda group: [point] * (group == "mc_envs.opponents")
    )
    assert registry.resolve("late").act(None) == 3
    with pytest.raises(ValueError, match=r"unknown agent 'other'; use one of \['late'\]"):
        registry.find("other")
    assert calls == [1]


def test_the_agents_fill_the_registry_with_every_spec() -> None:
    from mc_envs.agents.specs import known

    for name in known():
        name = "gtp:" if name.startswith("gtp:") else name
        assert opponents.find(name) is opponents.find(name.upper())
    assert opponents.resolve("uct-hard", seed=3).iterations > opponents.resolve("uct").iterations


def test_an_env_plays_against_a_registered_name(registry) -> None:
    registry.register("corner", lambda spec, *, seed: Fixed(0))
    env = gym.make("mc_envs/TicTacToe-v0", opponent="corner")
    env.reset(seed=0)
    obs, *_ = env.step(4)
    assert obs[:, 0, 0].tolist() == [0, 1] and obs[:, 1, 1].tolist() == [1, 0]
    with pytest.raises(ValueError, match="unknown agent 'edge'.*'corner'"):
        gym.make("mc_envs/TicTacToe-v0", opponent="edge")


# A fresh process that never imports mc_envs.agents, given this checkout's entry point as the
# installed distribution would give it (argv[1]), or none at all (a source tree pip has not
# installed: the registry reads the group from the pyproject.toml beside the package).
ENTRY_POINT_ALONE = """
import sys
from importlib import metadata
import gymnasium as gym
import mc_envs, mc_envs.opponents as registry
points = [metadata.EntryPoint("agents", sys.argv[1], registry.GROUP)] if sys.argv[1:] else []
registry.entry_points = lambda group: points if group == registry.GROUP else []
if points:
    registry.declared_in_source = lambda: []
assert "mc_envs.agents" not in sys.modules
env = gym.make("mc_envs/ConnectFour-v0", opponent="uct")
assert "mc_envs.agents" in sys.modules
env.reset(seed=0)
obs, reward, terminated, truncated, info = env.step(3)
print(int(obs.sum()))
"""


@pytest.mark.parametrize("installed", [True, False])
def test_opponent_uct_reaches_the_agents_through_the_declared_entry_point(installed) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = project["project"]["entry-points"][opponents.GROUP]
    assert declared == {"agents": "mc_envs.agents.specs:register_opponents"}
    assert {p.name: p.value for p in opponents.declared_in_source()} == declared
    done = subprocess.run(
        [sys.executable, "-c", ENTRY_POINT_ALONE, *[declared["agents"]] * installed],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["2"]  # our stone and the opponent's answer
