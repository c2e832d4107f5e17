"""The AlphaZero networks, written once over an array module: numpy to play, ``jax.numpy`` to train.

Two architectures, named by ``arch["kind"]``:

- ``"mlp"``: two hidden dense layers (``w1 b1 w2 b2``), then the move logits (``wp bp``) and the
  value (``wv bv``, tanh), from the flat observation.
- ``"resnet"``: the observation as ``arch["shape"]`` = (C, H, W) planes; a 3x3 convolution to
  ``channels`` (``c0_w c0_b``), ``blocks`` residual blocks of two 3x3 convolutions
  (``r<k>_w1 r<k>_b1 r<k>_w2 r<k>_b2``, ReLU after the sum), then from the flat trunk the move
  logits (``wp bp``) and the value through one hidden layer (``wh bh``, then ``wv bv``, tanh).

A 3x3 convolution (zero padding, stride 1) is one matrix product over the nine shifted copies of
the padded planes (channels last), so the same lines run in numpy and in JAX. Weights are named
with a ``w`` (L2-regularised in training); biases with a ``b``.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, TypeGuard, TypeVar

import numpy as np

if TYPE_CHECKING:
    import jax

# An array of the network: numpy's (to play) or JAX's (to train), as the array module ``xp`` makes.
Array = TypeVar("Array", np.ndarray, "jax.Array")

KINDS = ("mlp", "resnet")


def forward(
    params: dict[str, Array], observations: Array, arch: dict, xp: types.ModuleType = np
) -> tuple[Array, Array]:
    """The raw move logits ``[B, A]`` and values ``[B]`` (in [-1, 1]) of a batch of observations,
    with ``xp`` numpy or ``jax.numpy``."""
    b = observations.shape[0]
    if arch["kind"] == "mlp":
        x = observations.reshape(b, -1)
        h = xp.maximum(x @ params["w1"] + params["b1"], 0.0)
        h = xp.maximum(h @ params["w2"] + params["b2"], 0.0)
        return h @ params["wp"] + params["bp"], xp.tanh(h @ params["wv"] + params["bv"])[:, 0]
    c, hh, ww = arch["shape"]
    x = xp.transpose(observations.reshape(b, c, hh, ww), (0, 2, 3, 1))  # channels last
    h = xp.maximum(_conv3(x, params["c0_w"], params["c0_b"], xp), 0.0)
    for k in range(arch["blocks"]):
        y = xp.maximum(_conv3(h, params[f"r{k}_w1"], params[f"r{k}_b1"], xp), 0.0)
        h = xp.maximum(h + _conv3(y, params[f"r{k}_w2"], params[f"r{k}_b2"], xp), 0.0)
    flat = h.reshape(b, -1)
    hidden = xp.maximum(flat @ params["wh"] + params["bh"], 0.0)
    return flat @ params["wp"] + params["bp"], xp.tanh(hidden @ params["wv"] + params["bv"])[:, 0]


def _conv3(x: Array, w: Array, bias: Array, xp: types.ModuleType) -> Array:
    """3x3 convolution, zero padding: ``x`` [B, H, W, Cin], ``w`` [9 * Cin, Cout]."""
    _, hh, ww, _ = x.shape
    pad = xp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    patches = [pad[:, i : i + hh, j : j + ww, :] for i in range(3) for j in range(3)]
    return xp.concatenate(patches, axis=-1) @ w + bias


def shapes(arch: dict, obs_size: int, n_actions: int) -> dict[str, tuple[int, ...]]:
    """Every parameter's shape for ``arch`` (``hidden``, or ``shape``, ``channels``, ``blocks``,
    ``hidden``), observations of ``obs_size`` numbers and ``n_actions`` moves.

    Raises:
        ValueError: an unknown kind, or sizes that are not positive or do not fit the observation.
    """
    kind = arch.get("kind")
    if kind not in KINDS:
        raise ValueError(f"network kind {kind!r}: expected one of {list(KINDS)}")
    hidden = arch.get("hidden")
    if not _positive(hidden) or not _positive(obs_size) or not _positive(n_actions):
        raise ValueError(f"network sizes must be positive: hidden {hidden!r}")
    hidden = int(hidden)
    if kind == "mlp":
        return {
            "w1": (obs_size, hidden),
            "b1": (hidden,),
            "w2": (hidden, hidden),
            "b2": (hidden,),
            "wp": (hidden, n_actions),
            "bp": (n_actions,),
            "wv": (hidden, 1),
            "bv": (1,),
        }
    shape, channels, blocks = arch.get("shape"), arch.get("channels"), arch.get("blocks")
    dims = tuple(shape) if isinstance(shape, list | tuple) and len(shape) == 3 else ()
    if not all(map(_positive, dims)):
        dims = ()
    if not dims or int(np.prod(dims)) != obs_size or not _positive(channels):
        raise ValueError(f"resnet shape {shape!r} and channels {channels!r} do not fit {obs_size}")
    if not isinstance(blocks, int) or isinstance(blocks, bool) or not 0 <= blocks <= 20:
        raise ValueError(f"resnet blocks must be 0..20, got {blocks!r}")
    c, hh, ww = (int(x) for x in dims)
    channels = int(channels)
    out = {"c0_w": (9 * c, channels), "c0_b": (channels,)}
    for k in range(blocks):
        out.update({f"r{k}_w1": (9 * channels, channels), f"r{k}_b1": (channels,)})
        out.update({f"r{k}_w2": (9 * channels, channels), f"r{k}_b2": (channels,)})
    flat = hh * ww * channels
    out.update({"wp": (flat, n_actions), "bp": (n_actions,), "wh": (flat, hidden)})
    out.update({"bh": (hidden,), "wv": (hidden, 1), "bv": (1,)})
    return out


def init_params(arch: dict, obs_size: int, n_actions: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Fresh parameters: He-initialised weights (the output layers' scaled by 0.1), zero biases."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in shapes(arch, obs_size, n_actions).items():
        if name.startswith("b") or name.endswith(("_b", "_b1", "_b2")):
            params[name] = np.zeros(shape, np.float32)
            continue
        w = (rng.standard_normal(shape) * np.sqrt(2.0 / shape[0])).astype(np.float32)
        params[name] = w * 0.1 if name in ("wp", "wv") else w
    return params


def is_weight(name: str) -> bool:
    """Whether a parameter is a weight (regularised), not a bias."""
    return "w" in name


def _positive(x: object) -> TypeGuard[int | np.integer]:
    return isinstance(x, int | np.integer) and not isinstance(x, bool) and bool(x > 0)
