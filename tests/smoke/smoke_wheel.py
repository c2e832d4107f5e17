"""Smoke checks of an installed mc-envs wheel, run by ``run_smoke.py`` in a fresh venv.

A plain script (no pytest in the venv): ``run_smoke.py`` copies it into a user's project folder
that holds its own ``agents.py`` and an empty ``render/`` package, and runs it there with the
venv's python, so the folder is first on ``sys.path`` as a user's own script's is. Each check
prints its seconds; the first failure ends the run with exit 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMEOUT = 300  # seconds for each command-line call (a cold numba compile included)


def check_the_users_modules_shadow_nothing() -> None:
    try:
        import agents  # noqa: F401  (the user's agents.py: it raises on import)
    except ImportError as error:
        assert "user's agents.py" in str(error), error
    else:
        raise AssertionError("the user's agents.py was not the module imported as agents")
    import render

    assert Path(render.__file__).parent == HERE / "render", render.__file__
    import mc_envs

    site = Path(sys.prefix).resolve()
    assert Path(mc_envs.__file__).resolve().is_relative_to(site), (mc_envs.__file__, site)
    assert not hasattr(render, "render_env")


def check_every_id_makes_steps_and_clones() -> None:
    import gymnasium as gym
    import numpy as np

    import mc_envs

    for env_id in mc_envs.ENVS:
        env = gym.make(env_id)
        obs, info = env.reset(seed=0)
        base = env.unwrapped
        snapshot = base.clone_state()
        legal = base.legal_actions()
        assert len(legal) > 0, env_id
        assert np.array_equal(np.flatnonzero(info["action_mask"]), legal), env_id
        after, *_ = env.step(int(legal[0]))
        base.restore_state(snapshot)
        assert base.clone_state() == snapshot, env_id
        assert np.array_equal(base.legal_actions(), legal), env_id
        again, *_ = env.step(int(legal[0]))
        assert np.array_equal(again, after), env_id
        env.close()


def _replays(env, result) -> None:
    """The result's actions are legal from the reset state and reach its score."""
    base = env.unwrapped
    for action in result.actions:
        assert action in base.legal_actions(), (action, result)
        env.step(int(action))
    assert base.score == result.score, (base.score, result.score)


def check_every_agent_searches() -> None:
    import gymnasium as gym

    from mc_envs.agents import NMCS, NRPA, PUCT, UCT, RandomAgent

    for name, agent, env_id, budget in (
        ("NMCS", NMCS(level=1, seed=0), "mc_envs/LeftMove-v0", {"playouts": 30}),
        ("NRPA", NRPA(level=1, iterations=10, seed=0), "mc_envs/LeftMove-v0", {}),
        ("RandomAgent", RandomAgent(seed=0), "mc_envs/SameGame-v0", {"playouts": 5}),
    ):
        env = gym.make(env_id)
        env.reset(seed=0)
        result = agent.search(env, **budget)
        assert result.playouts > 0 and result.actions, (name, result)
        _replays(env, result)
        print(f"    {name}: score {result.score:g} in {result.playouts} playouts", flush=True)
    for name, agent in (("UCT", UCT(iterations=200, seed=0)), ("PUCT", PUCT(iterations=200))):
        env = gym.make("mc_envs/ConnectFour-v0")
        env.reset(seed=0)
        result = agent.search(env)
        assert result.iterations == 200, (name, result)
        assert int(result.root_visits.sum()) >= 199, (name, result.root_visits)
        assert result.actions[0] in env.unwrapped.legal_actions(), (name, result)
        print(f"    {name}: move {result.actions[0]} after {result.iterations} iterations")


PLAY_AGAINST_UCT = """
import sys
import gymnasium as gym
import mc_envs
env = gym.make("mc_envs/ConnectFour-v0", opponent="uct")
assert "mc_envs.agents" in sys.modules, "the entry point mc_envs.opponents was not loaded"
obs, info = env.reset(seed=0)
before = int(obs.sum())
obs, reward, terminated, truncated, info = env.step(3)
assert int(obs.sum()) == before + 2, obs  # our stone and the opponent's answer
assert not terminated and not truncated and reward == 0
print("ok")
"""


def check_playing_against_uct() -> None:
    """In a fresh process that never imports the agents: ``opponent="uct"`` reaches them through
    the entry point group ``mc_envs.opponents`` of the installed wheel."""
    done = subprocess.run(
        [sys.executable, "-c", PLAY_AGAINST_UCT], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def check_render_gives_a_frame() -> None:
    import gymnasium as gym

    env = gym.make("mc_envs/ConnectFour-v0", render_mode="rgb_array")
    env.reset(seed=0)
    env.step(3)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.shape[0] > 100, frame.shape
    assert frame.std() > 0, "a blank frame"
    env.close()


def check_the_command_line_solves_and_verifies() -> None:
    scripts = Path(sys.executable).parent
    out = HERE / "solution.json"
    solve = [str(scripts / "mc-envs"), "solve", "leftmove", "--algo", "nmcs", "--level", "1"]
    solve += ["--playouts", "20", "--quiet", "--out", str(out)]
    done = subprocess.run(solve, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert out.is_file(), done.stdout
    # `python -m` puts the folder (and the user's agents.py, render/) first on sys.path.
    verify = [sys.executable, "-m", "mc_envs.cli", "verify", str(out)]
    done = subprocess.run(verify, capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "certified" in done.stdout, done.stdout
    import mc_envs

    assert json.loads(out.read_text())["mc_envs_version"] == mc_envs.__version__
    assert version("mc-envs") == mc_envs.__version__
    # A shipped record by name, from a folder that holds no copy of it.
    records = subprocess.run(
        [str(scripts / "mc-envs"), "records"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=HERE,
    )
    assert records.returncode == 0 and "rosin82" in records.stdout, records.stdout + records.stderr
    shipped = [str(scripts / "mc-envs"), "verify", "rosin82"]
    done = subprocess.run(shipped, capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE)
    assert done.returncode == 0 and "certified" in done.stdout, done.stdout + done.stderr


def check_a_vector_env_steps() -> None:
    import gymnasium as gym
    import numpy as np

    envs = gym.make_vec("mc_envs/TicTacToe-v0", num_envs=4, vectorization_mode="vector_entry_point")
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(12):  # past the end of every game: autoreset runs too
        mask = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask])
        obs, reward, terminated, truncated, info = envs.step(actions)
        assert obs.shape[0] == 4 and reward.shape == (4,)
    envs.close()


CHECKS = (
    check_the_users_modules_shadow_nothing,
    check_every_id_makes_steps_and_clones,
    check_every_agent_searches,
    check_playing_against_uct,
    check_render_gives_a_frame,
    check_the_command_line_solves_and_verifies,
    check_a_vector_env_steps,
)


def main() -> int:
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    print(f"python {sys.version.split()[0]} in {sys.prefix}", flush=True)
    start = time.perf_counter()
    for check in CHECKS:
        began = time.perf_counter()
        try:
            check()
        except Exception as error:
            print(f"FAILED {check.__name__}: {type(error).__name__}: {error}", flush=True)
            raise
        print(f"  ok {check.__name__} ({time.perf_counter() - began:.1f} s)", flush=True)
    print(f"  all checks in {time.perf_counter() - start:.1f} s")
    print(f"smoke: {len(CHECKS)} passed, 0 failed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
