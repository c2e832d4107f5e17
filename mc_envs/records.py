"""Solution records: JSON files that say which env, which start, which moves and which score.

A record is ``{"format": "mc-envs/solution", "version": 1, "env_id", "env_kwargs", "reset_seed",
"actions", "score", "agent": {"name", "params"}, "seconds", "playouts", "created",
"mc_envs_version"}``. Files are written atomically (a temporary file beside the target, then a
rename), so a reader never sees half a record. Records are plain JSON: never pickled or evaluated.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "mc-envs/solution"
VERSION = 1
REQUIRED = ("env_id", "env_kwargs", "actions", "score")


class RecordError(ValueError):
    """A record file that cannot be read: its message is one line naming the file and the fault."""


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Writes ``text`` to ``path`` so that the file is either the old one or the whole new one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; records are meant to be shared
        with os.fdopen(fd, "w") as handle:
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
    """Reads and checks the shape of a solution record.

    Raises:
        RecordError: unreadable file, invalid JSON (with line and column), wrong format, a missing
            or mistyped field, or an env id that is not registered.
    """
    import gymnasium as gym

    import mc_envs  # noqa: F401  (registers the ids)

    name = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise RecordError(f"{name}: cannot read: {exc.strerror}") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f'{name}: not an mc-envs solution record (no "format": "{FORMAT}")')
    for key in REQUIRED:
        if key not in record:
            raise RecordError(f"{name}: missing field {key!r}")
    if not isinstance(record["env_kwargs"], dict):
        raise RecordError(f"{name}: field 'env_kwargs' must be an object")
    actions = record["actions"]
    if not isinstance(actions, list) or not all(
        isinstance(a, int) and not isinstance(a, bool) for a in actions
    ):
        raise RecordError(f"{name}: field 'actions' must be a list of integers")
    if record["env_id"] not in gym.registry:
        raise RecordError(f"{name}: unknown env {record['env_id']!r}")
    return record


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


def replay_env(record: dict, render_mode: str | None = None) -> Any:
    """The env of a record, reset to its start, strict: an illegal move raises."""
    import gymnasium as gym

    env = gym.make(record["env_id"], render_mode=render_mode, **record["env_kwargs"])
    if hasattr(env.unwrapped, "illegal_action"):
        env.unwrapped.illegal_action = "raise"
    env.reset(seed=record.get("reset_seed"))
    return env


def verify_record(record: dict) -> Verdict:
    """Replays a record from its start and compares the score."""
    from mc_envs.core import IllegalActionError

    env = replay_env(record)
    base = env.unwrapped
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
