"""Search checkpoints: JSON files (never pickles) holding a search's state, written atomically.

A checkpoint is ``{"format": "mc-envs/checkpoint", "version": 1, "algo", "params", "state",
"best": {"score", "actions"}, "control": {...}, "search": {...}}``: ``state`` fingerprints the
searched position so that a checkpoint is never resumed on another one, and ``search`` is the
algorithm's own data (NRPA: every level's policy, best sequence and iteration counter and the random
stream; NMCS: every level's loop state, the moves committed, the best sequences and the random
stream, saved between two playouts). Files are replaced with
:func:`mc_envs.records.write_atomic`, so a crash or a SIGKILL leaves the previous complete file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from mc_envs.records import write_atomic

FORMAT = "mc-envs/checkpoint"
VERSION = 1


def state_fingerprint(env: Any) -> dict[str, str]:
    """The game and a hash of the env's current state (its ``clone_state()`` data)."""
    base = env.unwrapped
    snap = base.clone_state()
    data = getattr(snap, "data", None)
    raw = np.ascontiguousarray(data).tobytes() if data is not None else repr(snap).encode()
    game = getattr(base, "game", type(base).__name__)
    config = repr(getattr(snap, "config", ""))
    return {"game": str(game), "config": config, "sha1": hashlib.sha1(raw).hexdigest()}


def write_checkpoint(path: str | Path, data: dict[str, Any]) -> None:
    """Writes a checkpoint atomically (the file is the old one or the whole new one)."""
    write_atomic(path, json.dumps(data, separators=(",", ":")))


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """Reads a checkpoint written by :func:`write_checkpoint`.

    Raises:
        ValueError: the file is not a checkpoint of a version this package reads.
    """
    text = Path(path).read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a JSON checkpoint ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not an mc-envs checkpoint (format {FORMAT!r} expected)")
    if data.get("version") != VERSION:
        raise ValueError(f"{path}: checkpoint version {data.get('version')!r}, expected {VERSION}")
    return data


def check_checkpoint(data: dict[str, Any], algo: str, params: dict[str, Any], env: Any) -> None:
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
    for key, value in params.items():
        if key in ("workers",):
            continue
        if saved.get(key) != value:
            raise ValueError(
                f"checkpoint was saved with {key}={saved.get(key)!r}, this search has {value!r}"
            )
