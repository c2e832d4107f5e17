"""A small vector env met with a cold cache: its steps run as Python while a child compiles them.

A vector env of fewer than :data:`INTERPRET_BELOW` sub-envs (a batched search's eight games, a
few environments of a learner's first run) made with its entry point missing from the numba
cache would compile it at its first reset (1 s, and the game's kernels with it: 4 s for Go).
Instead, it steps as Python (:mod:`mc_envs.interpret`) while a child process makes the same
vector env and steps it (:func:`exercise`), which compiles the entry point into the cache;
from then on each call loads it. A vector env of more sub-envs compiles, as Python could not
step a thousand games a call.
"""

from __future__ import annotations

import functools

import numpy as np

from mc_envs import interpret

INTERPRET_BELOW = 64  # sub-envs: a vector env of fewer steps as Python while it compiles
MODULES = ("mc_envs.vector.",)  # whose kernels it interprets meanwhile
STEPS = 50  # what the child plays


def stand_in(
    vector_class: type, env_class: type, threads: int | None, kwargs: dict, entries: list
) -> bool:
    """Whether a vector env of fewer than :data:`INTERPRET_BELOW` sub-envs goes on without
    compiling its entry points ``entries`` in this process: they are cached, or a child compiles
    them while they run as Python (:func:`mc_envs.interpret.stand_in`)."""
    job = functools.partial(exercise, vector_class, env_class, threads, kwargs)
    return interpret.stand_in(job, MODULES, entries)


def exercise(
    vector_class: type, env_class: type, threads: int | None, kwargs: dict, steps: int = STEPS
) -> None:
    """Makes a vector env of two ``env_class(**kwargs)`` and steps it through resets, random
    legal actions and a restore (what the child does: one compiled entry point serves them
    all)."""
    venv = vector_class(env_class, 2, threads=threads, **kwargs)
    venv.reset(seed=0)
    snapshot = venv.clone_state()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = [rng.choice(np.flatnonzero(row)) for row in venv.action_masks()]
        venv.step(np.array(actions, np.int64))
    venv.restore_state(snapshot)
    venv.close()
