"""Training checkpoints of the AlphaZero loop: all a run needs to continue exactly where it stopped.

A checkpoint is one ``.npz`` file (read with ``allow_pickle=False``) holding the network's
parameters (``p_<layer>``), Adam's state as the leaves of its tree (``opt_<k>``, in
``jax.tree_util`` order), the replay buffer's filled rows (``buf_<field>``), and ``meta``: JSON
with the buffer's size and next slot, the minibatch generator's state (numpy's
``bit_generator.state``) and the run's progress (iterations done, training seconds, the history).
Every array and field is checked against what the run expects before anything is used.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import NamedTuple, TypeGuard

import numpy as np

from mc_envs.records import write_atomic

FORMAT = "mc-envs/alphazero-training"


class Training(NamedTuple):
    """A checkpoint's contents (see the module docstring)."""

    params: dict[str, np.ndarray]
    opt_leaves: list[np.ndarray]
    buffer: dict[str, np.ndarray]
    size: int
    next: int
    rng_state: dict
    progress: dict


def save_training(path: str | Path, training: Training) -> None:
    """Writes ``training`` to ``path`` atomically."""
    meta = {"format": FORMAT, "version": 1, "size": training.size, "next": training.next}
    meta.update(rng=training.rng_state, progress=training.progress)
    arrays = {f"p_{k}": v for k, v in training.params.items()}
    arrays.update({f"opt_{i}": np.asarray(v) for i, v in enumerate(training.opt_leaves)})
    arrays.update({f"buf_{k}": v[: training.size] for k, v in training.buffer.items()})
    buf = io.BytesIO()
    # numpy's stubs read **arrays as if it could hold allow_pickle (numpy >= 2.1); no key is that.
    np.savez_compressed(buf, meta=np.array(json.dumps(meta)), **arrays)  # type: ignore[arg-type]
    write_atomic(path, buf.getvalue())


def load_training(path: str | Path, like: Training) -> Training:
    """Reads a checkpoint whose arrays have the shapes and dtypes of ``like`` (a fresh run's).

    Raises:
        ValueError: naming the file and the array or field that is missing or malformed.
    """
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not a training checkpoint ({exc})") from None
    try:
        meta = json.loads(str(data["meta"]))
    except (KeyError, ValueError):
        raise ValueError(f"{path}: not a training checkpoint (no meta)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != 1:
        raise ValueError(f"{path}: not a version 1 {FORMAT} file")
    capacity = len(next(iter(like.buffer.values())))
    size, slot = meta.get("size"), meta.get("next")
    if not (_count(size) and _count(slot) and size <= capacity and slot < max(capacity, 1)):
        raise ValueError(f"{path}: buffer size {size!r} or next {slot!r} outside 0..{capacity}")
    progress, rng_state = meta.get("progress"), meta.get("rng")
    if not isinstance(progress, dict) or not _count(progress.get("iteration")):
        raise ValueError(f"{path}: field progress.iteration must be a count")
    if not isinstance(progress.get("history"), list) or not isinstance(rng_state, dict):
        raise ValueError(f"{path}: field progress.history or rng is malformed")

    def array(name: str, want: np.ndarray, rows: int | None = None) -> np.ndarray:
        a = data.get(name)
        shape = want.shape if rows is None else (rows, *want.shape[1:])
        if a is None or a.shape != shape or a.dtype != want.dtype:
            got = "missing" if a is None else f"{a.dtype}{list(a.shape)}"
            raise ValueError(f"{path}: array {name} is {got}, expected {want.dtype}{list(shape)}")
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise ValueError(f"{path}: array {name} has non-finite values")
        return a

    params = {k: array(f"p_{k}", v) for k, v in like.params.items()}
    opt = [array(f"opt_{i}", np.asarray(v)) for i, v in enumerate(like.opt_leaves)]
    buffer = {}
    for k, v in like.buffer.items():
        full = np.zeros_like(v)
        full[:size] = array(f"buf_{k}", v, size)
        buffer[k] = full
    return Training(params, opt, buffer, size, slot, rng_state, progress)


def restore_rng(rng: np.random.Generator, state: dict, where: str) -> None:
    """Puts a generator back in ``state`` (``bit_generator.state``), or raises naming ``where``."""
    try:
        rng.bit_generator.state = state
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise ValueError(
            f"{where}: field rng is not a {type(rng.bit_generator).__name__} state ({exc})"
        ) from None


def _count(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0
