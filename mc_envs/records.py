"""Solution records: JSON files that say which env, which start, which moves and which score.

A record is ``{"format": "mc-envs/solution", "version": 1, "env_id", "env_kwargs", "reset_seed",
"actions", "score", "agent": {"name", "params"}, "seconds", "playouts", "created",
"mc_envs_version"}``. Files are written atomically (a temporary file beside the target, then a
rename), so a reader never sees half a record. Records are plain JSON: never pickled or evaluated.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import inspect
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import gymnasium as gym

FORMAT = "mc-envs/solution"
VERSION = 1
REQUIRED = ("env_id", "env_kwargs", "actions", "score")


class RecordError(ValueError):
    """A record file that cannot be read: its message is one line naming the file and the fault."""


def write_atomic(path: str | os.PathLike, text: str | bytes) -> None:
    """Writes ``text`` (or bytes) to ``path`` so that the file is either the old one or the whole
    new one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; records are meant to be shared
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def make_record(
    *,
    env_id: str,
    env_kwargs: dict,
    reset_seed: int | None,
    actions: list[int],
    score: float,
    agent: str,
    params: dict,
    seconds: float,
    playouts: int,
) -> dict:
    """A record as a dict, stamped with the time and the package version."""
    from mc_envs import __version__

    return {
        "format": FORMAT,
        "version": VERSION,
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "reset_seed": reset_seed,
        "actions": [int(a) for a in actions],
        "score": float(score),
        "agent": {"name": agent, "params": params},
        "seconds": round(float(seconds), 3),
        "playouts": int(playouts),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "mc_envs_version": __version__,
    }


def write_record(path: str | os.PathLike, record: dict) -> None:
    """Writes a record atomically."""
    write_atomic(path, json.dumps(record, indent=1) + "\n")


def read_record(path: str | os.PathLike) -> dict:
    """Reads and checks a solution record: its shape, and that it names an env of this package
    with keyword arguments that env accepts.

    Raises:
        RecordError: unreadable file (missing, a folder, binary or not UTF-8), invalid JSON (with
            line and column), wrong format or a newer version, a missing or mistyped field (with
            the index of a bad action), an env id outside ``mc_envs/``, or an unknown or mistyped
            env keyword.
    """
    name = str(path)
    record = _load_json(path, name)
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f'{name}: not an mc-envs solution record (no "format": "{FORMAT}")')
    for key in REQUIRED:
        if key not in record:
            raise RecordError(f"{name}: missing field {key!r}")
    version = record.get("version", VERSION)
    if not _is_int(version) or not 1 <= version <= VERSION:
        raise RecordError(
            f"{name}: field 'version' is {version!r}; this mc-envs reads versions 1..{VERSION}"
        )
    _check_env(name, record)
    _check_fields(name, record)
    return record


def _load_json(path: str | os.PathLike, name: str) -> object:
    """The JSON value of a file, or a :class:`RecordError` saying why not."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise RecordError(f"{name}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{name}: unreadable: not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:
        raise RecordError(f"{name}: not valid JSON: nested too deeply") from None


def _check_env(name: str, record: dict) -> None:
    """The record's env id is one of this package's, and its keyword arguments that env's."""
    import gymnasium as gym

    import mc_envs  # noqa: F401  (registers the ids)

    env_id = record["env_id"]
    if (
        not isinstance(env_id, str)
        or not env_id.startswith("mc_envs/")
        or env_id not in gym.registry
    ):
        raise RecordError(f"{name}: field 'env_id': unknown env {env_id!r} (not an mc_envs/ id)")
    if not isinstance(record["env_kwargs"], dict):
        raise RecordError(f"{name}: field 'env_kwargs' must be an object")
    _check_env_kwargs(name, env_id, record["env_kwargs"])


def _check_fields(name: str, record: dict) -> None:
    """The record's actions, score and reset seed are of their types."""
    actions = record["actions"]
    if not isinstance(actions, list):
        raise RecordError(f"{name}: field 'actions' must be a list of integers")
    for i, a in enumerate(actions):
        if not _is_int(a):
            raise RecordError(
                f"{name}: field 'actions' must be a list of integers: index {i} is {a!r}"
            )
    score = record["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)) or score != score:
        raise RecordError(f"{name}: field 'score' must be a number, got {score!r}")
    seed = record.get("reset_seed")
    if seed is not None and (not _is_int(seed) or seed < 0):
        raise RecordError(
            f"{name}: field 'reset_seed' must be null or an integer >= 0, got {seed!r}"
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# The JSON types a record may give for each annotation word of an env's keyword argument.
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "bool": (bool,),
    "None": (type(None),),
    "np.ndarray": (list,),
}


def _check_env_kwargs(name: str, env_id: str, kwargs: dict) -> None:
    """Refuses keywords the env's constructor does not take, and values of the wrong JSON type."""
    import gymnasium as gym

    entry = gym.spec(env_id).entry_point
    module, _, cls_name = str(entry).partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    params = inspect.signature(cls).parameters
    for key, value in kwargs.items():
        if key not in params or key == "render_mode":
            allowed = sorted(k for k in params if k != "render_mode")
            raise RecordError(
                f"{name}: field 'env_kwargs': {env_id} takes no {key!r} (it takes {allowed})"
            )
        words = str(params[key].annotation).replace(" ", "").split("|")
        if not all(w in _JSON_TYPES for w in words):
            continue  # an object or callable argument: the env itself checks it
        types = tuple(t for w in words for t in _JSON_TYPES[w])
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            raise RecordError(
                f"{name}: field 'env_kwargs' key {key!r}: {value!r} is not a "
                f"{params[key].annotation}"
            )


@dataclass(frozen=True)
class Verdict:
    """What replaying a record showed.

    Attributes:
        ok: the moves are legal and the replayed score equals the recorded one.
        score: the replayed score (up to the first illegal move).
        moves: how many moves were replayed.
        message: one line for people.
    """

    ok: bool
    score: float
    moves: int
    message: str


def replay_env(record: dict, render_mode: str | None = None) -> gym.Env:
    """The env of a record, reset to its start, strict: an illegal move raises."""
    env = gym.make(record["env_id"], render_mode=render_mode, **record["env_kwargs"])
    if hasattr(env.unwrapped, "illegal_action"):
        env.unwrapped.illegal_action = "raise"
    env.reset(seed=record.get("reset_seed"))
    return env


def verify_record(record: dict) -> Verdict:
    """Replays a record from its start and compares the score.

    Raises:
        RecordError: the env refuses the record's keyword arguments (a bad board, position ...).
    """
    from mc_envs.core import IllegalActionError, PlanningContract

    try:
        env = replay_env(record)
    except (TypeError, ValueError) as exc:
        raise RecordError(f"field 'env_kwargs': {record['env_id']} refuses them: {exc}") from None
    base = cast(PlanningContract, env.unwrapped)  # an mc_envs/ id (check_record)
    for i, action in enumerate(record["actions"], start=1):
        try:
            env.step(action)
        except IllegalActionError as exc:
            return Verdict(
                False, base.score, i - 1, f"move {i} (action {action}) is illegal: {exc.reason}"
            )
    score = float(base.score)
    n = len(record["actions"])
    if score != float(record["score"]):
        return Verdict(
            False,
            score,
            n,
            f"score differs: the record says {record['score']:g}, the replay gives {score:g}",
        )
    return Verdict(True, score, n, f"certified: score {score:g} in {n} moves on {record['env_id']}")
