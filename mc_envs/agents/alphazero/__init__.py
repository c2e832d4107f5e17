"""AlphaZero on a CPU: self-play with PUCT and a policy/value network, trained with JAX and optax.

A :class:`Model` is a small network (two dense layers, or a residual convolutional network:
:mod:`mc_envs.agents.alphazero.net`) from an observation to move priors and a value for the player to
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

Modules: :mod:`~mc_envs.agents.alphazero.model` (the model, its file, its player),
:mod:`~mc_envs.agents.alphazero.net` (the networks), :mod:`~mc_envs.agents.alphazero.selfplay`,
:mod:`~mc_envs.agents.alphazero.trainer` (the learner and its replay buffer),
:mod:`~mc_envs.agents.alphazero.checkpoint` (training runs saved and resumed) and
:mod:`~mc_envs.agents.alphazero.loop` (:func:`train` and the command line).
"""

from mc_envs.agents.alphazero.loop import TRAINING, add_training_arguments, main, train
from mc_envs.agents.alphazero.model import (
    SHIPPED,
    Model,
    alphazero_agent,
    init_model,
    shipped_model,
)
from mc_envs.agents.alphazero.selfplay import self_play, self_play_batch
from mc_envs.agents.alphazero.trainer import Trainer, window_size

__all__ = [
    "SHIPPED",
    "TRAINING",
    "Model",
    "Trainer",
    "add_training_arguments",
    "alphazero_agent",
    "init_model",
    "main",
    "self_play",
    "self_play_batch",
    "shipped_model",
    "train",
    "window_size",
]
