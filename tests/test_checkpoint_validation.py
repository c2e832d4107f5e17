"""Hand-edited and corrupted checkpoints: a clear error or a correct resume, never a crash or a hang.

The resumes run in a child process with a timeout, so a crash of compiled code is a failure of the
test, not the end of the run.
"""

import json
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import gymnasium as gym
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents import NMCS, NRPA
from mc_envs.agents.checkpoint import checksum, read_checkpoint

ROOT = Path(__file__).resolve().parent.parent

RESUME = """
import json, sys
sys.path.insert(0, {root!r})
import gymnasium as gym
import mc_envs
from mc_envs.agents import NMCS, NRPA
env = gym.make("mc_envs/SameGame-v0", position=3).unwrapped
env.reset()
for path in json.loads(sys.stdin.read()):
    try:
        r = {agent}.search(env, playouts={playouts}, checkpoint=path, resume=True)
        print("OK", r.score, flush=True)
    except ValueError as exc:
        print("ERROR", str(exc).replace(chr(10), " "), flush=True)
"""


def samegame() -> gym.Env:
    env = gym.make("mc_envs/SameGame-v0", position=3).unwrapped
    env.reset()
    return env


def _resume_all(paths: list[Path], agent: str, playouts: int) -> list[str]:
    script = RESUME.format(root=str(ROOT), agent=agent, playouts=playouts)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        input=json.dumps([str(p) for p in paths]),
        capture_output=True,
        text=True,
        timeout=240,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, (
        f"the resuming process died ({proc.returncode}): {proc.stderr[-2000:]}"
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == len(paths), proc.stdout + proc.stderr[-2000:]
    return lines


def _mutants(data: dict, fields: list[str], count: int, seed: int) -> list[dict]:
    """Copies of ``data`` with one number of ``search[field]`` changed (checksum dropped: the file
    looks like one of the first version, so only the value checks stand between it and the
    compiled code)."""
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        copy = json.loads(json.dumps(data))
        copy.pop("checksum", None)
        field = rnd.choice(fields)
        holder = copy["search"]
        key = field
        value = holder[key]
        while isinstance(value, (list, dict)) and value:
            holder = value
            key = (
                rnd.choice(sorted(value)) if isinstance(value, dict) else rnd.randrange(len(value))
            )
            value = holder[key]
        if isinstance(value, (list, dict)):
            continue
        holder[key] = rnd.choice(
            [-1, -(2**40), 2**40, 10**6, 224, 225, 226, int(value) + 1, int(value) - 1, 0, 3.5]
        )
        out.append(copy)
    return out


def _checkpoint(tmp_path: Path, agent, playouts: int) -> dict:
    path = tmp_path / "ck.json"
    agent.search(samegame(), playouts=playouts, checkpoint=str(path), checkpoint_every=0.05)
    return json.loads(path.read_text())


def test_an_edited_checkpoint_fails_its_checksum(tmp_path):
    data = _checkpoint(tmp_path, NMCS(level=2, seed=1), 400)
    assert data["checksum"] == checksum(data)
    data["search"]["path"][0] += 1
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="checksum mismatch"):
        read_checkpoint(path)
    with pytest.raises(ValueError, match="checksum mismatch"):
        NMCS(level=2, seed=1).search(samegame(), playouts=800, checkpoint=str(path), resume=True)


def test_a_checkpoint_without_checksum_still_resumes_to_the_same_result(tmp_path):
    env = samegame()
    whole = NMCS(level=2, seed=1).search(env, playouts=800)
    data = _checkpoint(tmp_path, NMCS(level=2, seed=1), 400)
    data.pop("checksum")
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    resumed = NMCS(level=2, seed=1).search(env, playouts=800, checkpoint=str(path), resume=True)
    assert (resumed.score, resumed.actions) == (whole.score, whole.actions)


def test_negative_and_huge_frames_are_refused_with_the_field_named(tmp_path):
    data = _checkpoint(tmp_path, NMCS(level=2, seed=1), 400)
    data.pop("checksum")
    for value in (-1, 10**9):
        data["search"]["frames"][2][1] = value
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ValueError, match=r"search\.frames\[2\]"):
            NMCS(level=2, seed=1).search(
                samegame(), playouts=800, checkpoint=str(path), resume=True
            )


def test_a_checkpoint_whose_params_are_not_an_object_is_refused_naming_the_field(tmp_path):
    data = _checkpoint(tmp_path, NMCS(level=2, seed=1), 400)
    data.pop("checksum")  # a hand-edited file (without a checksum, it is still read)
    for value in ([1, 2], "level=2", 3, None):
        data["params"] = value
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ValueError, match="checkpoint field 'params': .* is not an object"):
            NMCS(level=2, seed=1).search(
                samegame(), playouts=800, checkpoint=str(path), resume=True
            )


def test_a_checkpoint_counts_the_seconds_of_every_call_and_refuses_bad_ones(tmp_path):
    path = tmp_path / "ck.json"
    agent = NRPA(level=2, iterations=10, seed=1)
    first = agent.search(samegame(), time_limit=0.2, checkpoint=str(path))
    assert read_checkpoint(path)["control"]["seconds"] == round(first.seconds, 3)
    again = agent.search(samegame(), time_limit=0.2, checkpoint=str(path), resume=True)
    saved = read_checkpoint(path)["control"]["seconds"]
    assert saved == pytest.approx(first.seconds + again.seconds, abs=0.002)
    data = read_checkpoint(path)
    data.pop("checksum")
    for value in (-1.0, "3", None, 1e400):
        data["control"]["seconds"] = value
        path.write_text(json.dumps(data))
        with pytest.raises(ValueError, match=r"field control\.seconds"):
            agent.search(samegame(), time_limit=0.2, checkpoint=str(path), resume=True)
    del data["control"]["seconds"]  # a file of an older version: no seconds, read as 0
    path.write_text(json.dumps(data))
    agent.search(samegame(), time_limit=0.2, checkpoint=str(path), resume=True)
    assert read_checkpoint(path)["control"]["seconds"] < saved


@pytest.mark.parametrize("memorize", [True, False])
def test_mutated_nmcs_checkpoints_never_crash_or_hang(tmp_path, memorize):
    data = _checkpoint(tmp_path, NMCS(level=2, seed=1, memorize=memorize), 400)
    assert any(row[0] for row in data["search"]["frames"]), "the checkpoint holds a paused search"
    mutants = _mutants(data, ["frames", "path", "seqs", "lens", "scores"], 40, seed=int(memorize))
    paths = []
    for i, mutant in enumerate(mutants):
        paths.append(tmp_path / f"m{i}.json")
        paths[-1].write_text(json.dumps(mutant))
    start = time.monotonic()
    lines = _resume_all(paths, f"NMCS(level=2, seed=1, memorize={memorize})", 800)
    assert time.monotonic() - start < 200
    errors = [line for line in lines if line.startswith("ERROR")]
    assert errors, "no mutant was refused: the mutations are too weak to test anything"
    assert all("checkpoint field search." in line for line in errors), errors


def test_mutated_nrpa_checkpoints_never_crash_or_hang(tmp_path):
    data = _checkpoint(tmp_path, NRPA(level=2, iterations=10, seed=2), 150)
    mutants = _mutants(data, ["seqs", "lens", "iters", "active", "policies"], 40, seed=3)
    paths = []
    for i, mutant in enumerate(mutants):
        paths.append(tmp_path / f"n{i}.json")
        paths[-1].write_text(json.dumps(mutant))
    lines = _resume_all(paths, "NRPA(level=2, iterations=10, seed=2)", 300)
    errors = [line for line in lines if line.startswith("ERROR")]
    assert errors and all("checkpoint field search." in line for line in errors), errors


UNGUARDED = """
import sys
sys.path.insert(0, {root!r})
import gymnasium as gym
import mc_envs
from mc_envs.agents import NMCS
env = gym.make("mc_envs/SameGame-v0", position=1)
env.reset()
print(NMCS(level=1, workers=2).search(env, playouts=200).score)
"""


def test_a_parallel_search_from_an_unguarded_script_fails_at_once_naming_the_fix(tmp_path):
    script = tmp_path / "research.py"
    script.write_text(textwrap.dedent(UNGUARDED.format(root=str(ROOT))))
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    assert 'if __name__ == "__main__":' in proc.stderr
    assert time.monotonic() - start < 60
    guarded = tmp_path / "guarded.py"
    body = textwrap.indent(textwrap.dedent(UNGUARDED.format(root=str(ROOT))), "    ")
    guarded.write_text(f'if __name__ == "__main__":\n{body}')
    proc = subprocess.run(
        [sys.executable, str(guarded)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout.split()[-1]) > 0
