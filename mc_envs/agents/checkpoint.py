"""Search checkpoints: JSON files (never pickles) holding a search's state, written atomically.

A checkpoint is ``{"format": "mc-envs/checkpoint", "version": 1, "algo", "params", "state", "best":
{"score", "actions"}, "control": {"playouts", "runs", "iterations", "seconds"}, "search": {...}}``:
``state`` fingerprints the searched position so that a checkpoint is never resumed on another one,
``control.seconds`` is the search time over every call that resumed the search (absent in older
files: 0), and ``search`` is the algorithm's own data (NRPA: every level's policy, best sequence and
iteration counter and the random stream; NMCS: every level's loop state, the moves committed, the
best sequences and the random stream, saved between two playouts). Files are replaced with
:func:`mc_envs.records.write_atomic`, so a crash or a SIGKILL leaves the previous complete file.

A checkpoint carries a ``checksum`` (SHA-256 of the rest, canonical JSON), so an edited or
corrupted file is refused; and every value is checked on load (:class:`Checker`: types, ranges,
and that every move sequence the search will replay is legal from the searched state) before any
compiled code sees it. Files of earlier versions without a checksum are still read, and checked.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from mc_envs.core import unwrap
from mc_envs.records import write_atomic

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.core import PlanningEnv

FORMAT = "mc-envs/checkpoint"
FILE_VERSION = 1


def state_fingerprint(env: gym.Env) -> dict[str, str]:
    """The game and a hash of the env's current state (its ``clone_state()`` data)."""
    base = unwrap(env)
    snap = base.clone_state()
    data = getattr(snap, "data", None)
    raw = np.ascontiguousarray(data).tobytes() if data is not None else repr(snap).encode()
    game = getattr(base, "game", type(base).__name__)
    config = repr(getattr(snap, "config", ""))
    return {"game": str(game), "config": config, "sha1": hashlib.sha1(raw).hexdigest()}


def checksum(data: dict[str, object]) -> str:
    """The SHA-256 of a checkpoint's data without its ``checksum`` field (canonical JSON)."""
    body = {k: v for k, v in data.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def write_checkpoint(path: str | Path, data: dict[str, object]) -> None:
    """Writes a checkpoint with its checksum, atomically (the file is the old one or the whole
    new one)."""
    data = {**data, "checksum": checksum(data)}
    write_atomic(path, json.dumps(data, separators=(",", ":")))


def read_checkpoint(path: str | Path) -> dict[str, object]:
    """Reads a checkpoint written by :func:`write_checkpoint`.

    Raises:
        ValueError: the file is missing, unreadable, not a checkpoint of a version this package
            reads, or its checksum does not match (edited or corrupted).
    """
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such checkpoint file") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the checkpoint: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a JSON checkpoint (not UTF-8 text)") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: not a JSON checkpoint ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not an mc-envs checkpoint (format {FORMAT!r} expected)")
    if data.get("version") != FILE_VERSION:
        raise ValueError(
            f"{path}: checkpoint version {data.get('version')!r}, expected {FILE_VERSION}"
        )
    if "checksum" in data and data["checksum"] != checksum(data):
        raise ValueError(f"{path}: checksum mismatch: the checkpoint was edited or corrupted")
    return data


def is_seconds(value: object) -> bool:
    """Whether ``value`` is a finite JSON number >= 0 (a bool is not)."""
    return (
        not isinstance(value, bool) and isinstance(value, (int, float)) and 0.0 <= value < math.inf
    )  # NaN fails the comparison


def saved_seconds(data: dict[str, object], path: str | Path) -> float:
    """A checkpoint's ``control.seconds`` (0 in files of older versions, which have none).

    Raises:
        ValueError: naming ``path`` and the field, for a value that is not seconds >= 0.
    """
    control = data.get("control")
    seconds = control.get("seconds", 0.0) if isinstance(control, dict) else 0.0
    if not is_seconds(seconds):
        raise ValueError(
            f"{path}: checkpoint field control.seconds: expected seconds >= 0, got {seconds!r}"
        )
    return float(seconds)


R = TypeVar("R")  # what Checker._after reads from the env


class Checker:
    """Checks a checkpoint's values before a search loads them; every error names the file and
    the field (and index).

    Args:
        path: the file, for messages.
        env: the searched env (``unwrap(env)``), at the searched state.
        max_moves: the longest game from that state.
    """

    def __init__(self, path: str, env: gym.Env, max_moves: int) -> None:
        self.path = path
        self.env = unwrap(env)
        self.max_moves = int(max_moves)
        self.max_actions = int(self.env.action_space.n)

    def fail(self, field: str, what: str) -> ValueError:
        """The error for ``field``."""
        return ValueError(f"{self.path}: checkpoint field {field}: {what}")

    def mapping(self, data: object, key: str) -> dict[str, object]:
        """``data[key]``, which must be a JSON object."""
        value = data.get(key) if isinstance(data, dict) else None
        if not isinstance(value, dict):
            raise self.fail(key, "missing or not an object")
        return value

    def number(self, value: object, field: str) -> float:
        """A float (or -inf/NaN-free number), as written by a search."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise self.fail(field, f"expected a number, got {value!r}")
        return float(value)

    def count(self, value: object, field: str, high: int | None = None) -> int:
        """An int in ``0..high``."""
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(field, f"expected an int >= 0, got {value!r}")
        if high is not None and value > high:
            raise self.fail(field, f"{value} is above its maximum {high}")
        return value

    def ints(
        self, value: object, field: str, low: int, high: int, length: int | None = None
    ) -> list[int]:
        """A list of ints in ``low..high`` (of ``length`` items when given)."""
        if not isinstance(value, list):
            raise self.fail(field, "expected a list")
        if length is not None and len(value) != length:
            raise self.fail(field, f"expected {length} items, got {len(value)}")
        for i, x in enumerate(value):
            if isinstance(x, bool) or not isinstance(x, int) or not low <= x <= high:
                raise self.fail(f"{field}[{i}]", f"expected an int in {low}..{high}, got {x!r}")
        return value

    def numbers(self, value: object, field: str, length: int | None = None) -> list[float]:
        """A list of numbers (of ``length`` items when given)."""
        if not isinstance(value, list):
            raise self.fail(field, "expected a list")
        if length is not None and len(value) != length:
            raise self.fail(field, f"expected {length} items, got {len(value)}")
        return [self.number(x, f"{field}[{i}]") for i, x in enumerate(value)]

    def actions(self, value: object, field: str) -> list[int]:
        """A list of actions of the action space, at most a game long."""
        seq = self.ints(value, field, 0, self.max_actions - 1)
        if len(seq) > self.max_moves:
            raise self.fail(field, f"{len(seq)} moves, longer than any game ({self.max_moves})")
        return seq

    def rng(self, value: object, field: str) -> list[int]:
        """A random stream's state (one 64-bit word)."""
        return self.ints(value, field, 0, 2**64 - 1, length=1)

    def legal_after(self, prefix: list[int], seq: list[int], field: str) -> np.ndarray:
        """Refuses ``seq`` unless ``prefix + seq`` is a legal sequence from the searched state;
        returns the legal actions after it (the env is left as it was)."""
        return self._after(prefix, seq, field, lambda env: np.array(env.legal_actions(), copy=True))

    def score_after(self, seq: list[int], field: str) -> float:
        """Refuses ``seq`` unless it is a legal sequence from the searched state; returns the
        score it reaches (the env is left as it was)."""
        return self._after([], seq, field, lambda env: float(env.score))

    def _after(
        self, prefix: list[int], seq: list[int], field: str, read: Callable[[PlanningEnv], R]
    ) -> R:
        env = self.env
        snap = env.clone_state()
        try:
            for i, a in enumerate([*prefix, *seq]):
                legal = env.legal_actions()
                j = int(np.searchsorted(legal, a))
                if j == len(legal) or legal[j] != a:
                    where = f"{field}[{i - len(prefix)}]" if i >= len(prefix) else field
                    raise self.fail(where, f"move {a} is not legal there")
                env.step(int(a))
            return read(env)
        finally:
            env.restore_state(snap)


def check_checkpoint(
    data: dict[str, object], algo: str, params: dict[str, object], env: gym.Env
) -> None:
    """Refuses to resume a checkpoint of another algorithm, parameters or position.

    Raises:
        ValueError: naming what differs.
    """
    if data.get("algo") != algo:
        raise ValueError(f"checkpoint is of a {data.get('algo')!r} search, not {algo!r}")
    here = state_fingerprint(env)
    if data.get("state") != here:
        raise ValueError(
            f"checkpoint is of another position ({data.get('state')}), this env holds {here}"
        )
    saved = data.get("params", {})
    if not isinstance(saved, dict):
        raise ValueError(f"checkpoint field 'params': {saved!r} is not an object")
    for key, value in params.items():
        if key in ("workers",):
            continue
        if saved.get(key) != value:
            raise ValueError(
                f"checkpoint was saved with {key}={saved.get(key)!r}, this search has {value!r}"
            )
