"""Missing optional extras: every command and import names the extra and the pip command in one
line (exit status 2 for a command), never a traceback. Each case runs in a fresh Python whose
sitecustomize (on PYTHONPATH) makes pygame, imageio, stable_baselines3 and pettingzoo
unimportable, as on an installation without those extras."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = ("pygame", "imageio", "imageio_ffmpeg", "stable_baselines3", "pettingzoo", "ray")
BLOCKER = f'''
import os
import sys

BLOCKED = tuple(os.environ.get("BLOCKED", {",".join(BLOCKED)!r}).split(","))


class _Blocker:
    """Refuses to find the blocked modules, as if they were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
'''


@pytest.fixture(scope="module")
def no_extras(tmp_path_factory):
    """Runs Python code or the mc-envs command without the blocked extras."""
    folder = tmp_path_factory.mktemp("no_extras")
    (folder / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]))

    def run(*args, stdin=subprocess.DEVNULL, cwd=None, blocked=BLOCKED):
        return subprocess.run(
            [sys.executable, *args],
            capture_output=True,
            text=True,
            env=dict(env, BLOCKED=",".join(blocked)),
            stdin=stdin,
            cwd=cwd or folder,
            timeout=120,
        )

    return run


def test_the_blocker_blocks(no_extras):
    result = no_extras("-c", "import pygame")
    assert result.returncode == 1 and "No module named 'pygame'" in result.stderr
    assert no_extras("-c", "import numpy, gymnasium, mc_envs").returncode == 0


@pytest.mark.parametrize(
    "code, extra",
    [
        ("from mc_envs.vector import SB3VecEnv", "rl"),
        ("from mc_envs.vector.sb3 import SB3VecEnv", "rl"),
        ("import mc_envs.pettingzoo", "pettingzoo"),
        ("from mc_envs.pettingzoo import connect_four_v0", "pettingzoo"),
        ("import mc_envs.pettingzoo.tictactoe_v0", "pettingzoo"),
    ],
)
def test_an_import_without_its_extra_names_the_pip_command(no_extras, code, extra):
    probe = (
        "import sys\n"
        "from mc_envs.extras import MissingExtra\n"
        f"try:\n    {code}\n"
        "except MissingExtra as exc:\n"
        "    assert isinstance(exc, ImportError) and not isinstance(exc, ModuleNotFoundError)\n"
        "    print(exc)\n"
        "    sys.exit(0)\n"
        "sys.exit('imported without the extra')\n"
    )
    result = no_extras("-c", probe)
    assert result.returncode == 0, result.stderr
    assert f'pip install "mc-envs[{extra}]"' in result.stdout


def test_mc_envs_and_its_envs_need_no_extra(no_extras):
    code = (
        "import gymnasium as gym, mc_envs, sys\n"
        "from mc_envs.vector import PlanningVectorEnv\n"
        "env = gym.make('mc_envs/ConnectFour-v0', render_mode='ansi')\n"
        "env.reset(seed=0); env.step(3); print(env.render())\n"
        "assert 'pygame' not in sys.modules\n"
    )
    result = no_extras("-c", code)
    assert result.returncode == 0, result.stderr


RENDER = 'pip install "mc-envs[render]"'
BOTH = 'pip install "mc-envs[render,video]"'


@pytest.mark.parametrize(
    "args, message",
    [
        (["play", "connect4"], f"mc-envs play needs pygame: {RENDER}"),
        (["play", "samegame", "--position", "1"], f"mc-envs play needs pygame: {RENDER}"),
        (["replay", "rosin82"], f"mc-envs replay needs pygame: {RENDER}"),
        (["replay", "rosin82", "--png", "x.png"], f"mc-envs replay --png needs pygame: {RENDER}"),
        (
            ["replay", "rosin82", "--gif", "x.gif"],
            f"mc-envs replay --gif needs pygame and imageio: {BOTH}",
        ),
        (
            ["replay", "rosin82", "--mp4", "x.mp4"],
            f"mc-envs replay --mp4 needs pygame, imageio and imageio_ffmpeg: {BOTH}",
        ),
        (
            ["solve", "leftmove", "--workers", "2", "--backend", "ray", "--playouts", "9"],
            "mc-envs solve: backend='ray' needs ray: pip install \"mc-envs[distributed]\"",
        ),
    ],
)
def test_a_command_without_its_extra_is_one_line_and_exit_2(no_extras, tmp_path, args, message):
    result = no_extras(
        "-m", "mc_envs.cli", *args, *(["--quiet"] if args[0] == "solve" else []), cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"error: {message}\n"
    assert not list(tmp_path.iterdir())  # nothing written


def test_replay_png_needs_the_render_extra_alone(no_extras, tmp_path):
    blocked = [m for m in BLOCKED if m not in ("pygame",)]
    result = no_extras("-m", "mc_envs.cli", "replay", "rosin178", "--png", "x.png",
                       cwd=tmp_path, blocked=blocked)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = no_extras("-m", "mc_envs.cli", "replay", "rosin178", "--gif", "x.gif",
                       cwd=tmp_path, blocked=blocked)  # fmt: skip
    assert result.returncode == 2 and result.stderr == (
        'error: mc-envs replay --gif needs imageio: pip install "mc-envs[video]"\n'
    )


def test_commands_that_need_no_extra_run_without_any(no_extras, tmp_path):
    for args in (["verify", "rosin82"], ["records"], ["play", "tictactoe", "--terminal"]):
        result = no_extras("-m", "mc_envs.cli", *args, cwd=tmp_path)
        assert result.returncode == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr
