"""The AlphaZero training loop and its command line (``python -m mc_envs.agents.alphazero``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from mc_envs.agents.alphazero.checkpoint import save_training
from mc_envs.agents.alphazero.model import Model, init_model
from mc_envs.agents.alphazero.selfplay import TwoPlayerGame, self_play_batch, two_player_env
from mc_envs.agents.alphazero.trainer import Trainer, window_size


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
    parallel: int = 64,
    capacity: int = 50_000,
    window: int | None = None,
    mirror: bool = False,
    lr: float = 1e-3,
    gumbel: int | None = None,
    opening: int = 0,
    cap_sims: int | None = None,
    cap_share: float = 0.25,
    seed: int = 0,
    out: str | None = None,
    resume: bool = False,
    log: Callable[[str], object] = print,
    evaluate: Callable[[Model, int], dict] | None = None,
    evaluate_every: int = 1,
) -> tuple[Model, list[dict]]:
    """The AlphaZero loop for ``minutes`` (or until ``iterations`` iterations in all).

    With ``out``, after every iteration the model is saved there and the whole run (network,
    Adam's state, replay buffer, generator, progress) beside it, in ``<out>.train.npz``
    (:mod:`mc_envs.agents.alphazero.checkpoint`); ``resume`` continues that run exactly, as if it had not
    stopped (a model file without its run: from the network, with an empty buffer).

    Self-play plays ``parallel`` games at a time (:func:`mc_envs.agents.alphazero.selfplay.self_play_batch`).
    The buffer keeps ``capacity`` positions; minibatches come from the most recent ``window``
    positions, a window that then grows with the positions seen
    (:func:`mc_envs.agents.alphazero.trainer.window_size`; ``None``: the whole buffer). ``mirror`` also
    stores every position's images under the board's symmetries (``env.symmetries()``).
    ``gumbel=k`` plays Gumbel AlphaZero's self-play (``k`` root actions considered).
    ``opening=K`` starts every self-play game after 0 to ``K`` unrecorded moves of the game's
    heuristic prior (:func:`mc_envs.agents.alphazero.selfplay.play_openings`). ``cap_sims=n`` turns on
    playout cap randomization: a share ``cap_share`` of the moves are full searches of ``sims``
    simulations, recorded; the others fast searches of ``n``, played only.

    ``evaluate(model, iteration) -> dict``, if given, runs after every ``evaluate_every``-th
    iteration; its dict joins that iteration's (a training curve: see
    ``benchmarks/alphazero_curve.py``).

    Returns:
        The model and one dict a iteration (positions, learning rate, loss before and after,
        seconds), the resumed run's earlier iterations included.

    Raises:
        ValueError: a model or run file of another env or shape, or malformed (naming it).
    """
    return _train(_Run(**locals()))


class _Run(NamedTuple):
    """The arguments of one :func:`train` call, by name."""

    env_id: str
    minutes: float
    iterations: int | None
    games: int
    sims: int
    steps: int
    batch: int
    hidden: int
    net: str
    channels: int
    blocks: int
    parallel: int
    capacity: int
    window: int | None
    mirror: bool
    lr: float
    gumbel: int | None
    opening: int
    cap_sims: int | None
    cap_share: float
    seed: int
    out: str | None
    resume: bool
    log: Callable[[str], object]
    evaluate: Callable[[Model, int], dict] | None
    evaluate_every: int


def _train(r: _Run) -> tuple[Model, list[dict]]:
    """:func:`train`'s loop: an iteration at a time, each saved with ``r.out``."""
    env = two_player_env(r.env_id)
    env.reset(seed=r.seed)
    model = _initial_model(r, env)
    symmetries = env.symmetries() if r.mirror else []
    trainer = Trainer(model, lr=r.lr, capacity=r.capacity, window=r.window, symmetries=symmetries)
    rng = np.random.default_rng(r.seed)
    run = Path(f"{r.out}.train.npz") if r.out else None
    progress: dict = {"iteration": 0, "seconds": 0.0, "history": []}
    if r.resume and run is not None and run.exists():
        progress = trainer.restore(run, rng)
    history: list[dict] = progress["history"]
    it = progress["iteration"]
    start = time.perf_counter()
    while (
        r.iterations is None or it < r.iterations
    ) and time.perf_counter() - start < r.minutes * 60:
        history.append(_iteration(r, model, trainer, rng, it))
        seconds = progress["seconds"] + history[-1]["seconds"]
        if r.evaluate is not None and (it + 1) % r.evaluate_every == 0:
            history[-1].update(r.evaluate(model, it))
        r.log(json.dumps(history[-1]))
        it += 1
        if r.out and run is not None:
            model.save(r.out)
            progress = {"iteration": it, "seconds": seconds, "history": history}
            save_training(run, trainer.training(rng, progress))
    return model, history


def _initial_model(r: _Run, env: TwoPlayerGame) -> Model:
    """The saved model to resume, or a new one of the architecture asked for.

    Raises:
        ValueError: the saved model is of another env or observation size.
    """
    obs_size, n_actions = int(np.asarray(env.observation()).size), int(env.action_space.n)
    if r.resume and r.out and Path(r.out).exists():
        model = Model.load(r.out)
        if model.env_id != r.env_id or model.obs_size != obs_size:
            raise ValueError(f"{r.out}: a model of {model.env_id}, not {r.env_id}")
        return model
    arch: dict = {"kind": r.net, "hidden": r.hidden}
    if r.net == "resnet":
        shape = [int(x) for x in env.observation_space.shape]
        arch.update(shape=shape, channels=r.channels, blocks=r.blocks)
    return init_model(r.env_id, obs_size, n_actions, seed=r.seed, arch=arch)


def _iteration(r: _Run, model: Model, trainer: Trainer, rng: np.random.Generator, it: int) -> dict:
    """Iteration ``it``: a batch of self-play games, then ``r.steps`` Adam steps; its row."""
    t0 = time.perf_counter()
    trainer.add(
        *self_play_batch(
            model,
            games=r.games,
            sims=r.sims,
            seed=r.seed * 1_000_003 + it,
            parallel=r.parallel,
            gumbel=r.gumbel,
            opening=r.opening,
            cap=None if r.cap_sims is None else (r.cap_sims, r.cap_share),
        )
    )
    before = trainer.loss()
    trainer.train(r.steps, r.batch, rng)
    after = trainer.loss()
    row: dict = {"iteration": it, "positions": trainer.size, "seen": trainer.seen}
    row.update(
        window=window_size(trainer.seen, trainer.size, trainer.window),
        lr=r.lr,
        loss_before=before,
    )
    return {**row, "loss_after": after, "seconds": time.perf_counter() - t0}


TRAINING: tuple[str, ...] = (
    "env",
    "minutes",
    "iterations",
    "games",
    "sims",
    "steps",
    "batch",
    "hidden",
    "net",
)
TRAINING += ("channels", "blocks", "parallel", "capacity", "window", "mirror", "lr", "gumbel")
TRAINING += ("opening", "cap_sims", "cap_share", "seed")
TRAINING += ("resume",)


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """The command-line options of :func:`train` (named as its arguments), the model file aside."""
    parser.add_argument("--env", default="mc_envs/ConnectFour-v0")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--iterations", type=int, help="in all, a resumed run's earlier ones too")
    parser.add_argument("--games", type=int, default=16, help="self-play games an iteration")
    parser.add_argument("--sims", type=int, default=50)
    parser.add_argument("--steps", type=int, default=200, help="Adam steps an iteration")
    parser.add_argument("--batch", type=int, default=256, help="minibatch positions")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--net", choices=("mlp", "resnet"), default="mlp")
    parser.add_argument("--channels", type=int, default=32, help="resnet: channels")
    parser.add_argument("--blocks", type=int, default=2, help="resnet: residual blocks")
    parser.add_argument("--parallel", type=int, default=64, help="self-play games at a time")
    parser.add_argument("--capacity", type=int, default=50_000, help="replay buffer positions")
    parser.add_argument("--window", type=int, help="smallest sampling window (default: all)")
    parser.add_argument("--mirror", action="store_true", help="augment with the symmetries")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    parser.add_argument("--gumbel", type=int, help="Gumbel AlphaZero: root actions considered")
    parser.add_argument(
        "--opening", type=int, default=0, help="up to this many prior moves open each game"
    )
    parser.add_argument(
        "--cap-sims", type=int, help="playout cap randomization: a fast search's simulations"
    )
    parser.add_argument("--cap-share", type=float, default=0.25, help="the share of full searches")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue the saved run exactly")


def main(argv: list[str] | None = None) -> int:
    """``python -m mc_envs.agents.alphazero --minutes 50 --out model.npz [--resume]``."""
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
