"""The learner: the network's parameters, Adam's state and the replay buffer, trained with JAX."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mc_envs.agents.alphazero.checkpoint import Training, load_training, restore_rng
from mc_envs.agents.alphazero.model import Model
from mc_envs.agents.alphazero.net import forward, is_weight
from mc_envs.extras import require

LOSS_ROWS = 8192


def window_size(
    seen: int, capacity: int, window: int, alpha: float = 0.75, beta: float = 0.4
) -> int:
    """How many of the most recent positions training samples from, after ``seen`` in all: all of
    them up to ``window``, then a window growing sublinearly (KataGo's ``c (1 + beta ((n / c) **
    alpha - 1) / alpha)``, ``c = window``), never more than ``capacity``."""
    if seen <= window:
        return max(seen, 0)
    grown = window * (1 + beta * ((seen / window) ** alpha - 1) / alpha)
    return int(min(grown, capacity, seen))


class Trainer:
    """The network's parameters, Adam's state and the replay buffer (a ring of ``capacity``
    positions), trained with JAX.

    ``symmetries`` (``env.symmetries()``: pairs of observation and action index permutations)
    augment every position stored: each is stored once more per symmetry. Minibatches are drawn
    from the most recent :func:`window_size` positions (``window`` the smallest).
    """

    def __init__(
        self,
        model: Model,
        *,
        lr: float = 1e-3,
        l2: float = 1e-4,
        capacity: int = 50_000,
        window: int | None = None,
        symmetries: Sequence[tuple[np.ndarray, np.ndarray]] = (),
    ):
        jax = require("jax", "alphazero", "training")
        jnp = require("jax.numpy", "alphazero", "training")
        optax = require("optax", "alphazero", "training")
        self.jax, self.model = jax, model
        self.params = {k: jnp.asarray(v) for k, v in model.params.items()}
        self.opt = optax.adam(lr)
        self.opt_state = self.opt.init(self.params)
        self.capacity, self.size, self.next, self.seen = capacity, 0, 0, 0
        self.window = capacity if window is None else min(window, capacity)
        self.symmetries = [(np.asarray(o), np.asarray(a)) for o, a in symmetries]
        self.buffer = {
            "obs": np.zeros((capacity, model.obs_size), np.float32),
            "mask": np.zeros((capacity, model.n_actions), bool),
            "pi": np.zeros((capacity, model.n_actions), np.float32),
            "z": np.zeros(capacity, np.float32),
        }

        arch, weights = model.arch, [k for k in model.params if is_weight(k)]

        def loss_fn(params, obs, mask, pi, z):
            raw, v = forward(params, obs, arch, jnp)
            logp = jax.nn.log_softmax(jnp.where(mask, raw, -1e9))
            policy = -(pi * jnp.where(mask, logp, 0.0)).sum(axis=1).mean()
            value = ((v - z) ** 2).mean()
            reg = sum((params[k] ** 2).sum() for k in weights)
            return policy + value + l2 * reg

        def step(params, opt_state, obs, mask, pi, z):
            loss, grads = jax.value_and_grad(loss_fn)(params, obs, mask, pi, z)
            updates, opt_state = self.opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

        self._loss = jax.jit(loss_fn)
        self._step = jax.jit(step)

    def training(self, rng: np.random.Generator, progress: dict) -> Training:
        """The run's state: parameters, Adam's state, the buffer, ``rng``'s state, ``progress``."""
        leaves = [np.asarray(v) for v in self.jax.tree_util.tree_leaves(self.opt_state)]
        params = {k: np.asarray(v) for k, v in self.params.items()}
        state = dict(rng.bit_generator.state)
        progress = {**progress, "seen": self.seen}
        return Training(params, leaves, self.buffer, self.size, self.next, state, progress)

    def restore(self, path: str | Path, rng: np.random.Generator) -> dict:
        """Continues the run saved in ``path`` (:func:`mc_envs.agents.alphazero.checkpoint.save_training`):
        parameters, Adam's state, buffer and ``rng``; returns the saved progress.

        Raises:
            ValueError: naming the file and what is malformed; nothing is changed then.
        """
        t = load_training(path, self.training(rng, {}))
        restore_rng(np.random.default_rng(), t.rng_state, str(path))  # checked before any change
        seen = t.progress.get("seen", t.size)
        if not isinstance(seen, int) or seen < t.size:
            raise ValueError(f"{path}: field progress.seen is {seen!r}, not a count >= size")
        treedef = self.jax.tree_util.tree_structure(self.opt_state)
        jnp = self.jax.numpy
        self.opt_state = self.jax.tree_util.tree_unflatten(
            treedef, [jnp.asarray(v) for v in t.opt_leaves]
        )
        self.params = {k: jnp.asarray(v) for k, v in t.params.items()}
        self.model.params = dict(t.params)
        self.buffer, self.size, self.next, self.seen = t.buffer, t.size, t.next, seen
        restore_rng(rng, t.rng_state, str(path))
        return t.progress

    def add(self, obs: np.ndarray, mask: np.ndarray, pi: np.ndarray, z: np.ndarray) -> None:
        """Stores positions in the ring buffer, and their images under every symmetry."""
        obs = np.asarray(obs, np.float32).reshape(len(z), -1)
        rows = [(obs, mask, pi)] + [(obs[:, o], mask[:, a], pi[:, a]) for o, a in self.symmetries]
        for o, m, p in rows:
            for start in range(0, len(z), self.capacity):
                self._put(o[start:], m[start:], p[start:], z[start:])

    def _put(self, obs, mask, pi, z) -> None:
        n = min(len(z), self.capacity)
        idx = (self.next + np.arange(n)) % self.capacity
        self.buffer["obs"][idx], self.buffer["mask"][idx] = obs[:n], mask[:n]
        self.buffer["pi"][idx], self.buffer["z"][idx] = pi[:n], z[:n]
        self.next = int((self.next + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)
        self.seen += n

    def recent(self, n: int) -> np.ndarray:
        """The buffer rows of the ``n`` most recent positions (``n`` at most ``size``)."""
        return (self.next - 1 - np.arange(min(n, self.size))) % self.capacity

    def loss(self) -> float:
        """The loss over the most recent positions (at most ``LOSS_ROWS``)."""
        idx = np.sort(self.recent(LOSS_ROWS))
        b = {k: v[idx] for k, v in self.buffer.items()}
        return float(self._loss(self.params, b["obs"], b["mask"], b["pi"], b["z"]))

    def train(self, steps: int, batch: int, rng: np.random.Generator) -> float:
        """``steps`` Adam steps on random minibatches of the window; returns the last one's loss."""
        loss = float("nan")
        window = window_size(self.seen, self.size, self.window)
        for _ in range(steps):
            r = rng.integers(0, window, size=min(batch, window))
            idx = (self.next - 1 - r) % self.capacity
            b = {k: v[idx] for k, v in self.buffer.items()}
            self.params, self.opt_state, loss = self._step(
                self.params, self.opt_state, b["obs"], b["mask"], b["pi"], b["z"]
            )
        self.model.params = {k: np.asarray(v) for k, v in self.params.items()}
        return float(loss)
