"""An AlphaZero model: a policy/value network, its file, and the PUCT player it guides."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mc_envs.agents.alphazero.net import forward, init_params, shapes
from mc_envs.agents.mcts.puct import PUCT
from mc_envs.records import write_atomic


@dataclass
class Model:
    """A policy/value network and what it plays.

    Attributes:
        env_id: the env it was trained on.
        params: the parameters of its architecture (:mod:`mc_envs.agents.alphazero.net`).
        arch: the architecture: ``{"kind": "mlp", "hidden": H}`` (two dense layers) or
            ``{"kind": "resnet", "shape": [C, H, W], "channels": K, "blocks": B, "hidden": H}``.
    """

    env_id: str
    params: dict[str, np.ndarray] = field(repr=False)
    arch: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.arch:
            self.arch = {"kind": "mlp", "hidden": int(self.params["w1"].shape[1])}

    @property
    def obs_size(self) -> int:
        if self.arch["kind"] == "mlp":
            return int(self.params["w1"].shape[0])
        return int(np.prod(self.arch["shape"]))

    @property
    def n_actions(self) -> int:
        return int(self.params["wp"].shape[1])

    def __call__(
        self, observations: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The evaluator: (priors over the legal moves, values in [-1, 1]) for a batch of leaves."""
        x = np.asarray(observations, dtype=np.float32).reshape(len(observations), -1)
        raw, values = forward(self.params, x, self.arch)
        logits = np.where(masks, raw, -np.inf)
        logits = logits - logits.max(axis=1, keepdims=True)
        priors = np.exp(logits)
        priors /= priors.sum(axis=1, keepdims=True)
        return priors, values

    def save(self, path: str | Path) -> None:
        """Writes the model to an ``.npz`` file, atomically."""
        meta = {"format": "mc-envs/alphazero", "version": 1, "env_id": self.env_id}
        meta["arch"] = self.arch
        buf = io.BytesIO()
        # numpy's stubs read **params as if it could hold allow_pickle (numpy >= 2.1); no layer is.
        np.savez(buf, meta=np.array(json.dumps(meta)), **self.params)  # type: ignore[arg-type]
        write_atomic(path, buf.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> Model:
        """Reads a model written by :meth:`save` (a file without ``arch`` is a two-layer MLP).

        Raises:
            ValueError: naming the file and the array or field that is missing or malformed.
        """
        data = _read_npz(path)
        try:
            meta = json.loads(str(data["meta"]))
        except (KeyError, ValueError):
            raise ValueError(f"{path}: not an mc-envs AlphaZero model (no meta)") from None
        if not isinstance(meta, dict) or meta.get("format") != "mc-envs/alphazero":
            raise ValueError(f"{path}: not an mc-envs AlphaZero model")
        if meta.get("version") != 1:
            raise ValueError(f"{path}: model version {meta.get('version')!r}, expected 1")
        arch = meta.get("arch")
        for name in ("w1", "wp") if arch is None else ("wp",):
            if name not in data or np.ndim(data[name]) != 2:
                raise ValueError(f"{path}: array {name} missing or not a matrix")
        if arch is None:
            arch = {"kind": "mlp", "hidden": int(data["w1"].shape[1])}
        if not isinstance(arch, dict):
            raise ValueError(f"{path}: field arch is not an object")
        n_actions = int(data["wp"].shape[1])
        obs_size = int(data["w1"].shape[0]) if arch.get("kind") == "mlp" and "w1" in data else 0
        if arch.get("kind") == "resnet" and isinstance(arch.get("shape"), list):
            obs_size = int(np.prod([x for x in arch["shape"] if isinstance(x, int)]))
        try:
            want = shapes(arch, obs_size, n_actions)
        except ValueError as exc:
            raise ValueError(f"{path}: field arch: {exc}") from None
        params = {}
        for name, shape in want.items():
            if name not in data:
                raise ValueError(f"{path}: array {name} missing")
            a = np.asarray(data[name])
            if a.dtype.kind != "f" or not np.all(np.isfinite(a)):
                raise ValueError(f"{path}: array {name} is not finite floats")
            if a.shape != shape:
                raise ValueError(f"{path}: array {name} has shape {a.shape}, expected {shape}")
            params[name] = a.astype(np.float32)
        return cls(str(meta.get("env_id")), params, arch)


def _read_npz(path: str | Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not an .npz model ({exc})") from None


SHIPPED = "data/connect4_alphazero.npz"


def shipped_model() -> Model:
    """The Connect Four model shipped with the package (``agents/data/connect4_alphazero.npz``)."""
    from importlib import resources

    return Model.load(str(resources.files("mc_envs.agents").joinpath(SHIPPED)))


def init_model(
    env_id: str,
    obs_size: int,
    n_actions: int,
    hidden: int = 128,
    seed: int = 0,
    *,
    arch: dict | None = None,
) -> Model:
    """A fresh network (He-initialised weights, zero biases): the two-layer MLP of ``hidden``
    units, or ``arch`` (:class:`Model`)."""
    arch = arch or {"kind": "mlp", "hidden": hidden}
    return Model(env_id, init_params(arch, obs_size, n_actions, seed), dict(arch))


def alphazero_agent(
    model: Model,
    *,
    sims: int = 200,
    seed: int = 0,
    **kwargs: Any,  # PUCT's keywords
) -> PUCT:
    """A PUCT player guided by ``model`` (AlphaZero's selection form), ``sims`` simulations a move."""
    return PUCT(evaluator=model, iterations=sims, form="alphazero", seed=seed, **kwargs)
