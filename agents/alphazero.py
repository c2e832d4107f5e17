"""AlphaZero on a CPU: self-play with PUCT and a policy/value network, trained with JAX and optax.

A :class:`Model` is a small network (two dense layers, or a residual convolutional network:
:mod:`agents.alphazero_net`) from an observation to move priors and a value for the player to
move. Its forward pass is numpy, so a trained model plays (as
``PUCT(evaluator=model)``, :func:`alphazero_agent`) without JAX; training (:func:`train`) needs the
``alphazero`` extra (``pip install "mc-envs[alphazero]"``: JAX's CPU build and optax).

The loop (Silver et al. 2017, 2018): each iteration plays ``games`` games of self-play, every move
chosen by a PUCT search of ``sims`` simulations guided by the current network (the games
searched together in a vector env, one network call a simulation for all: :func:`self_play_batch`;
Dirichlet noise at the root; the first ``explore_moves`` moves sampled in proportion to the
visits, then the most visited); every position is stored with the search's visit distribution and the game's outcome
from the mover's side; then the network takes ``steps`` Adam steps on minibatches of the replay
buffer, minimising cross-entropy to the visit distributions plus the squared value error plus L2.

Models and training checkpoints are ``.npz`` files read with ``allow_pickle=False``; every array is
checked on load.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.alphazero_checkpoint import Training, load_training, restore_rng, save_training
from agents.alphazero_net import forward, init_params, is_weight, shapes
from agents.puct import PUCT
from mc_envs.records import write_atomic


@dataclass
class Model:
    """A policy/value network and what it plays.

    Attributes:
        env_id: the env it was trained on.
        params: the parameters of its architecture (:mod:`agents.alphazero_net`).
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
        np.savez(buf, meta=np.array(json.dumps(meta)), **self.params)
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

    return Model.load(str(resources.files("agents").joinpath(SHIPPED)))


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


def alphazero_agent(model: Model, *, sims: int = 200, seed: int = 0, **kwargs: Any) -> PUCT:
    """A PUCT player guided by ``model`` (AlphaZero's selection form), ``sims`` simulations a move."""
    return PUCT(evaluator=model, iterations=sims, form="alphazero", seed=seed, **kwargs)


def self_play(model: Model, *, sims: int, seed: int, explore_moves: int = 8, alpha: float = 1.0):
    """One game of self-play: the positions' (observations, masks, visit distributions, outcomes
    for the player to move there)."""
    import gymnasium as gym

    import mc_envs  # noqa: F401  (registers the ids)

    env = gym.make(model.env_id).unwrapped
    env.reset(seed=seed)
    agent = alphazero_agent(model, sims=sims, seed=seed, dirichlet_alpha=alpha, c=1.5)
    rng = np.random.default_rng(seed)
    obs, masks, pis, movers = [], [], [], []
    while len(env.legal_actions()):
        result = agent.search(env)
        pi = np.zeros(model.n_actions, np.float32)
        pi[result.root_actions] = result.root_visits / max(result.root_visits.sum(), 1)
        obs.append(np.asarray(env.observation(), np.float32).ravel())
        masks.append(env.action_masks())
        pis.append(pi)
        movers.append(env.current_player)
        if len(movers) <= explore_moves:
            action = int(rng.choice(model.n_actions, p=pi))
        else:
            action = int(result.root_actions[np.argmax(result.root_visits)])
        env.step(action)
    returns = env.returns()
    z = np.array([returns[m] for m in movers], np.float32)
    return np.array(obs), np.array(masks), np.array(pis), z


def self_play_batch(
    model: Model,
    *,
    games: int,
    sims: int,
    seed: int,
    parallel: int = 64,
    explore_moves: int = 8,
    alpha: float = 1.0,
):
    """``games`` games of self-play, ``parallel`` at a time in a compiled vector env, every move of
    every game chosen by one batched PUCT search (:meth:`agents.puct.PUCT.search_batch`: one
    network call a simulation for all the games). The same play as :func:`self_play` (noise at
    the root, the first ``explore_moves`` moves sampled from the visits, then the most visited);
    a game that ends makes room for the next. Two-player games.

    Returns:
        The positions of the finished games: (observations, masks, visit distributions, outcomes
        for the player to move there), as :func:`self_play`.
    """
    import gymnasium as gym

    import mc_envs  # noqa: F401  (registers the ids)

    m = min(parallel, games)
    envs = gym.make_vec(model.env_id, num_envs=m, vectorization_mode="vector_entry_point")
    base = envs.unwrapped
    if not base._two_player:
        raise ValueError(f"self_play_batch plays two-player games, not {model.env_id}")
    _, info = envs.reset(seed=seed)
    agent = alphazero_agent(model, sims=sims, seed=seed, dirichlet_alpha=alpha, c=1.5)
    rng = np.random.default_rng(seed)
    rows: list[list[tuple] | None] = [[] for _ in range(m)]  # each slot's game so far
    out: list[tuple] = []
    started = m
    finished = 0
    while finished < games:
        result = agent.search_batch(envs, simulations=sims)
        policy = result.policy.astype(np.float32)
        obs = np.asarray(base.observation(), np.float32).reshape(m, -1)
        masks, movers = info["action_mask"], info["current_player"]
        actions = result.actions.copy()
        resetting = base.autoreset
        playing = np.array([r is not None for r in rows]) & ~resetting & (actions >= 0)
        for i in np.flatnonzero(playing):
            rows[i].append((obs[i], masks[i], policy[i], int(movers[i])))
            if len(rows[i]) <= explore_moves:
                actions[i] = rng.choice(policy.shape[1], p=policy[i] / policy[i].sum())
        _, rewards, terminated, _, info = envs.step(np.maximum(actions, 0))
        for i in np.flatnonzero(terminated & playing):
            first = rewards[i] if rows[i][-1][3] == 0 else -rewards[i]  # player 0's return
            out += [(o, k, p, first if who == 0 else -first) for o, k, p, who in rows[i]]
            finished += 1
            rows[i] = [] if started < games else None  # the slot starts a game or idles
            started += 1
    envs.close()
    obs_, masks_, pis_, z_ = zip(*out, strict=True)
    return np.array(obs_), np.array(masks_), np.array(pis_), np.array(z_, np.float32)


class Trainer:
    """The network's parameters, Adam's state and the replay buffer, trained with JAX."""

    def __init__(self, model: Model, *, lr: float = 1e-3, l2: float = 1e-4, capacity: int = 50_000):
        try:
            import jax
            import jax.numpy as jnp
            import optax
        except ImportError:
            raise ImportError(
                'training needs JAX and optax: pip install "mc-envs[alphazero]"'
            ) from None
        self.jax, self.model = jax, model
        self.params = {k: jnp.asarray(v) for k, v in model.params.items()}
        self.opt = optax.adam(lr)
        self.opt_state = self.opt.init(self.params)
        self.capacity, self.size, self.next = capacity, 0, 0
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
        state = rng.bit_generator.state
        return Training(params, leaves, self.buffer, self.size, self.next, state, progress)

    def restore(self, path: str | Path, rng: np.random.Generator) -> dict:
        """Continues the run saved in ``path`` (:func:`agents.alphazero_checkpoint.save_training`):
        parameters, Adam's state, buffer and ``rng``; returns the saved progress.

        Raises:
            ValueError: naming the file and what is malformed; nothing is changed then.
        """
        t = load_training(path, self.training(rng, {}))
        restore_rng(np.random.default_rng(), t.rng_state, str(path))  # checked before any change
        treedef = self.jax.tree_util.tree_structure(self.opt_state)
        jnp = self.jax.numpy
        self.opt_state = self.jax.tree_util.tree_unflatten(
            treedef, [jnp.asarray(v) for v in t.opt_leaves]
        )
        self.params = {k: jnp.asarray(v) for k, v in t.params.items()}
        self.model.params = dict(t.params)
        self.buffer, self.size, self.next = t.buffer, t.size, t.next
        restore_rng(rng, t.rng_state, str(path))
        return t.progress

    def add(self, obs: np.ndarray, mask: np.ndarray, pi: np.ndarray, z: np.ndarray) -> None:
        """Stores positions in the ring buffer."""
        for i in range(len(z)):
            j = self.next
            self.buffer["obs"][j], self.buffer["mask"][j] = obs[i], mask[i]
            self.buffer["pi"][j], self.buffer["z"][j] = pi[i], z[i]
            self.next = (j + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)

    def loss(self) -> float:
        """The loss over the whole buffer."""
        b = {k: v[: self.size] for k, v in self.buffer.items()}
        return float(self._loss(self.params, b["obs"], b["mask"], b["pi"], b["z"]))

    def train(self, steps: int, batch: int, rng: np.random.Generator) -> float:
        """``steps`` Adam steps on random minibatches; returns the last minibatch loss."""
        loss = float("nan")
        for _ in range(steps):
            idx = rng.integers(0, self.size, size=min(batch, self.size))
            b = {k: v[idx] for k, v in self.buffer.items()}
            self.params, self.opt_state, loss = self._step(
                self.params, self.opt_state, b["obs"], b["mask"], b["pi"], b["z"]
            )
        self.model.params = {k: np.asarray(v) for k, v in self.params.items()}
        return float(loss)


def train(
    env_id: str = "mc_envs/ConnectFour-v0",
    *,
    minutes: float = 60.0,
    iterations: int | None = None,
    games: int = 16,
    sims: int = 50,
    steps: int = 200,
    batch: int = 256,
    hidden: int = 128,
    net: str = "mlp",
    channels: int = 32,
    blocks: int = 2,
    seed: int = 0,
    out: str | None = None,
    resume: bool = False,
    log: Any = print,
    evaluate: Any = None,
    evaluate_every: int = 1,
) -> tuple[Model, list[dict]]:
    """The AlphaZero loop for ``minutes`` (or until ``iterations`` iterations in all).

    With ``out``, after every iteration the model is saved there and the whole run (network,
    Adam's state, replay buffer, generator, progress) beside it, in ``<out>.train.npz``
    (:mod:`agents.alphazero_checkpoint`); ``resume`` continues that run exactly, as if it had not
    stopped (a model file without its run: from the network, with an empty buffer).

    ``evaluate(model, iteration) -> dict``, if given, runs after every ``evaluate_every``-th
    iteration; its dict joins that iteration's (a training curve: see
    ``benchmarks/alphazero_curve.py``).

    Returns:
        The model and one dict a iteration (games, positions, loss before and after, seconds),
        the resumed run's earlier iterations included.

    Raises:
        ValueError: a model or run file of another env or shape, or malformed (naming it).
    """
    import gymnasium as gym

    import mc_envs  # noqa: F401

    env = gym.make(env_id).unwrapped
    env.reset(seed=seed)
    obs_size, n_actions = int(np.asarray(env.observation()).size), int(env.action_space.n)
    run = Path(f"{out}.train.npz") if out else None
    if resume and out and Path(out).exists():
        model = Model.load(out)
        if model.env_id != env_id or model.obs_size != obs_size:
            raise ValueError(f"{out}: a model of {model.env_id}, not {env_id}")
    else:
        arch: dict = {"kind": net, "hidden": hidden}
        if net == "resnet":
            shape = [int(x) for x in env.observation_space.shape]
            arch.update(shape=shape, channels=channels, blocks=blocks)
        model = init_model(env_id, obs_size, n_actions, seed=seed, arch=arch)
    trainer = Trainer(model)
    rng = np.random.default_rng(seed)
    progress: dict = {"iteration": 0, "seconds": 0.0, "history": []}
    if resume and run is not None and run.exists():
        progress = trainer.restore(run, rng)
    history: list[dict] = progress["history"]
    it = progress["iteration"]
    start = time.perf_counter()
    while (iterations is None or it < iterations) and time.perf_counter() - start < minutes * 60:
        t0 = time.perf_counter()
        trainer.add(*self_play_batch(model, games=games, sims=sims, seed=seed * 1_000_003 + it))
        before = trainer.loss()
        trainer.train(steps, batch, rng)
        after = trainer.loss()
        seconds = time.perf_counter() - t0
        row = {"iteration": it, "positions": trainer.size, "loss_before": before}
        history.append({**row, "loss_after": after, "seconds": seconds})
        if evaluate is not None and (it + 1) % evaluate_every == 0:
            history[-1].update(evaluate(model, it))
        log(json.dumps(history[-1]))
        it += 1
        if out:
            model.save(out)
            progress = {
                "iteration": it,
                "seconds": progress["seconds"] + seconds,
                "history": history,
            }
            save_training(run, trainer.training(rng, progress))
    return model, history


TRAINING = ("env", "minutes", "iterations", "games", "sims", "steps", "hidden", "net", "channels")
TRAINING += ("blocks", "seed", "resume")


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """The command-line options of :func:`train` (named as its arguments), the model file aside."""
    parser.add_argument("--env", default="mc_envs/ConnectFour-v0")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--iterations", type=int, help="in all, a resumed run's earlier ones too")
    parser.add_argument("--games", type=int, default=16, help="self-play games an iteration")
    parser.add_argument("--sims", type=int, default=50)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--net", choices=("mlp", "resnet"), default="mlp")
    parser.add_argument("--channels", type=int, default=32, help="resnet: channels")
    parser.add_argument("--blocks", type=int, default=2, help="resnet: residual blocks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue the saved run exactly")


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.alphazero --minutes 50 --out model.npz [--resume]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_training_arguments(parser)
    parser.add_argument("--out", required=True, help="the model file (the run beside it)")
    args = parser.parse_args(argv)
    kwargs = {k: getattr(args, k) for k in TRAINING}
    try:
        train(kwargs.pop("env"), out=args.out, **kwargs)
    except (ValueError, ImportError) as exc:
        print(f"alphazero: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
