"""Fuzzing the package's readers and ``restore_state`` with mutated valid inputs.

Every mutated file must give a result or a clear error (a ValueError or TypeError with a message),
never a crash or a hang. Mutated states reach compiled code, so they run in a child process
(tests/fuzz_child.py) with a time limit: a segfault or a hang there fails the test, not the run.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mc_envs
from mc_envs import morpion_records as mr
from mc_envs.envs.samegame import standard_positions
from mc_envs.games import samegame as sg
from mc_envs.games import sudoku as su
from mc_envs.games.sudoku_solve import generate
from mc_envs.records import RecordError, make_record, read_record, verify_record

HERE = Path(__file__).resolve().parent
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def mutated(draw, data: bytes) -> bytes:
    """``data`` with a few bytes replaced, deleted, inserted or the tail cut off."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set", "delete", "insert", "cut", "digit"]))
        i = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "set" and out:
            out[i] = draw(st.integers(0, 255))
        elif kind == "delete" and out:
            del out[i]
        elif kind == "insert":
            out[i:i] = draw(st.binary(min_size=1, max_size=4))
        elif kind == "cut":
            del out[i:]
        elif kind == "digit":
            out[i:i] = draw(st.sampled_from([b"-1", b"99999999999999999999", b"0", b"1e309", b"9"]))
    return bytes(out)


def clear_error(exc: BaseException) -> None:
    assert isinstance(exc, (ValueError, TypeError)), repr(exc)
    assert str(exc).strip(), repr(exc)


# -- solution records ------------------------------------------------------------------------

RECORD = json.dumps(
    make_record(
        env_id="mc_envs/SameGame-v0",
        env_kwargs={"board": "0011\n0120\n1122\n2200", "penalty": "none"},
        reset_seed=0,
        actions=[0, 2],
        score=0.0,
        agent="test",
        params={},
        seconds=0.0,
        playouts=0,
    ),
    indent=1,
).encode()

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


def read_and_verify(path: Path) -> None:
    try:
        record = read_record(path)
        verify_record(record)
    except (RecordError, ValueError, TypeError) as exc:
        clear_error(exc)


@FUZZ
@given(data=mutated(RECORD))
def test_mutated_record_bytes(tmp_path, data):
    path = tmp_path / "r.json"
    path.write_bytes(data)
    read_and_verify(path)


@FUZZ
@given(
    field=st.sampled_from(["env_id", "env_kwargs", "actions", "score", "version", "reset_seed"]),
    value=JSON_VALUES,
)
def test_record_fields_of_any_type(tmp_path, field, value):
    record = json.loads(RECORD)
    record[field] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record))
    read_and_verify(path)


@FUZZ
@given(key=st.sampled_from(["board", "penalty", "position", "rows", "colors"]), value=JSON_VALUES)
def test_record_env_kwargs_of_any_type(tmp_path, key, value):
    record = json.loads(RECORD)
    record["env_kwargs"][key] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record))
    read_and_verify(path)


# -- Morpion records ---------------------------------------------------------------------------

MSR = mr.shipped_record("rosin82").read_bytes()


def _pentasol() -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.txt"
        mr.write_pentasol(path, mr.read_record(mr.shipped_record("rosin82")).moves, "5D")
        return path.read_bytes()


PENTASOL = _pentasol()


@FUZZ
@given(data=st.one_of(mutated(MSR), mutated(PENTASOL)))
def test_mutated_morpion_records(tmp_path, data):
    path = tmp_path / "m.txt"
    path.write_bytes(data)
    try:
        mr.verify_record(path)
    except ValueError as exc:
        clear_error(exc)


# -- SameGame boards and Sudoku puzzles ------------------------------------------------------

BOARD = sg.format_board(standard_positions()[1]).encode()
PUZZLE = su.to_text(generate(9, 0.5, np.random.default_rng(0))).encode()


@FUZZ
@given(data=mutated(BOARD))
def test_mutated_samegame_boards(data):
    try:
        env = gym.make("mc_envs/SameGame-v0", board=data.decode("utf-8", "replace"))
        env.reset(seed=0)
    except ValueError as exc:
        clear_error(exc)


@FUZZ
@given(
    board=st.lists(
        st.lists(st.one_of(st.integers(-3, 12), st.floats(-1, 10)), min_size=0, max_size=5),
        min_size=0,
        max_size=5,
    )
)
def test_samegame_board_arrays(board):
    try:
        array = sg.board_array(board)
    except ValueError as exc:
        clear_error(exc)
        return
    assert array.min() >= 0 and array.max() <= 9


@FUZZ
@given(data=mutated(PUZZLE))
def test_mutated_sudoku_puzzles(data):
    try:
        env = gym.make("mc_envs/Sudoku-v0", puzzle=data.decode("utf-8", "replace"))
        env.reset(seed=0)
    except ValueError as exc:
        clear_error(exc)


# -- restore_state with mutated states, in a child process -------------------------------------

INTERESTING = [-1, 0, 1, 2, 3, 5, 7, 255, 2**31 - 1, -(2**31), 10**6]


def valid_states(env_id: str, count: int) -> list:
    """States along a random game of ``env_id`` (the start, the middle, the end)."""
    env = gym.make(env_id).unwrapped
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    states = [env.clone_state()]
    while len(env.legal_actions()):
        env.step(int(rng.choice(env.legal_actions())))
        states.append(env.clone_state())
    picks = np.linspace(0, len(states) - 1, count).round().astype(int)
    return [states[i] for i in picks]


def mutate_state(state, rng: np.random.Generator) -> dict:
    """A copy of ``state`` with a few values changed (interesting or random), two values
    swapped, its length changed, or its dtype changed; as JSON for the child."""
    data = np.array(state.data)
    dtype = str(data.dtype)
    kind = rng.choice(["value", "value", "value", "small", "swap", "length", "dtype"])
    info = np.iinfo(data.dtype)
    if kind in ("value", "small"):
        for _ in range(rng.integers(1, 4)):
            i = rng.integers(len(data))
            if kind == "small":  # near the old value: the likeliest to slip through a check
                value = int(data[i]) + int(rng.integers(-2, 3))
            elif rng.random() < 0.5:
                value = INTERESTING[rng.integers(len(INTERESTING))]
            else:
                value = int(rng.integers(info.min, info.max, endpoint=True))
            data[i] = np.clip(value, info.min, info.max)
    elif kind == "swap":
        i, j = rng.integers(len(data), size=2)
        data[[i, j]] = data[[j, i]]
    elif kind == "length":
        data = np.resize(data, rng.integers(0, len(data) + 4))
    else:
        dtype = str(rng.choice(["int32", "int64", "float64", "uint8"]))
    return {"game": state.game, "config": list(state.config), "dtype": dtype, "data": data.tolist()}


def run_child(cases: list[dict]) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, str(HERE / "fuzz_child.py")],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )
    assert proc.returncode == 0, f"child exit {proc.returncode}: {proc.stderr[-2000:]}"
    return [json.loads(line) for line in proc.stdout.splitlines()]


def hostile_batch(seed: int) -> list[dict]:
    """Mutations of states along a game of every registered id, from one seed."""
    rng = np.random.default_rng(seed)
    return [
        {"env_id": env_id, **mutate_state(state, rng)}
        for env_id in sorted(mc_envs.ENVS)
        for state in STATES[env_id]
        for _ in range(12)
    ]


STATES = {env_id: valid_states(env_id, 3) for env_id in sorted(mc_envs.ENVS)}


@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_restore_state_refuses_or_plays_mutated_states(seed):
    cases = hostile_batch(seed)
    results = run_child(cases)
    assert len(results) == len(cases)
    played = 0
    for case, result in zip(cases, results):
        if "refused" in result:
            assert result["refused"].strip(), case
        else:
            played += 1
    assert played < len(cases)  # the mutations do break states, and they are refused


def test_valid_states_restore_and_play_in_the_child():
    cases = [
        {
            "env_id": env_id,
            "game": s.game,
            "config": list(s.config),
            "dtype": str(s.data.dtype),
            "data": s.data.tolist(),
        }
        for env_id, states in STATES.items()
        for s in states
    ]
    assert all("played" in r for r in run_child(cases))


@pytest.mark.timeout(600)
def test_random_playouts_under_numba_bounds_checking(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(HERE.parent),
        "NUMBA_BOUNDSCHECK": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
    }
    # two children, every other id each: the ids' kernels compile on both cores
    children = [
        subprocess.Popen(
            [sys.executable, str(HERE / "fuzz_child.py"), "--playouts", str(k), "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(2)
    ]
    done: list[str] = []
    try:
        for child in children:
            out, err = child.communicate(timeout=540)
            assert child.returncode == 0 and "IndexError" not in err, err[-2000:]
            done += [json.loads(line)["env_id"] for line in out.splitlines()]
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert sorted(done) == sorted(mc_envs.ENVS)
