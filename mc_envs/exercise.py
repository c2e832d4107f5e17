"""The compiling child of a cold env (``python -m mc_envs.exercise``): it plays the env through
its whole interface, which compiles its game's kernels into the on-disk cache, in the order its
parent waits for them.

:mod:`mc_envs.interpret` starts it and runs the kernels as Python meanwhile. Each call so run is
timed there; the parent sends the kernels it has spent the most time in, as a line of names of
:class:`~mc_envs.kernel.Kernel` fields, over a pipe (:mod:`mc_envs.wishes`). Before each of its
stages, the child reads the last line, leaves out the stages the parent compiles itself (a search
with no clock), tells the parent which stage it starts, and compiles first the stage of the first
name not compiled yet (a cold NRPA waits for ``legal_codes``; a batched search says it will wait
for ``playout`` before its first call); when that stage compiles for seconds (:func:`_costly`: a
playout without a cheaper twin that calls them), the stages of the kernels it calls first
(:data:`~mc_envs.wishes.CALLED`). A playout that calls the kernel its parent compiles (Go's calls
``play``, Morpion's does not) comes after the other stages, the wished ones first, while that
kernel is not cached, and then waits for it, rather than compile it a second time. The parts
(:func:`~mc_envs._numba.parts`) of the kernel the parent takes come before anything (Go's
scoring, while the parent compiles the legal moves' superko test before the move: each then
loads the other's, and the move and the legal moves, which every search waits for, take about
as long). Without a wish (no search yet, or no pipe: Windows), the stages follow
:data:`STAGES`, which begins with those.

The same entry point runs a :func:`mc_envs.interpret.stand_in`'s job.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mc_envs._numba import compile_parts, is_cached, reach
from mc_envs.interpret import everything
from mc_envs.rng import rng_state
from mc_envs.wishes import CALLED, ENV, Child

if TYPE_CHECKING:
    from mc_envs.core import PlanningEnv

Stage = Callable[["PlanningEnv", np.ndarray], None]  # what compiles some kernels: (env, legal)
EPISODES, STEPS = 2, 400  # what the child plays: enough to reach every kernel a step calls
WAIT, POLL = 30.0, 0.05  # seconds: the longest wait for the parent's kernels, between two looks


def exercise(env: PlanningEnv, wishes: Child | None = None) -> None:
    """Plays the env through its whole interface, which compiles its kernels: from its first
    state (made as Python), the :data:`STAGES` in the order ``wishes`` asks (else as listed),
    but for those its parent compiles itself, then :data:`EPISODES` random episodes of at most
    :data:`STEPS` moves, which compile the rest (what a step returns, what makes a state:
    SameGame's board layout, Morpion's line scan, 0.7 s each, at the next reset)."""
    wishes = wishes or Child()
    with everything():
        env.reset(seed=0)
    legal = env.legal_actions()
    todo = dict(STAGES)
    first = True  # no stage compiled yet
    while todo and len(legal):
        wished, taken = wishes.latest()
        for name in taken & todo.keys():
            _drop(todo, todo[name])
        if not todo:
            break
        wished = [name for name in wished if name in todo]
        if wished and _costly(env, wished[0]):  # what it calls first, compiled
            wished = [name for name in CALLED if name in todo] or wished
        names = wished or list(todo)
        for kernel in _kernels(env, taken) if first and wishes.listening() else ():
            # before anything else, the parts of the kernel the parent compiles (Go's move: its
            # scoring), which the parent then loads: its search waits for that kernel
            compile_parts(kernel)
        playout = todo[names[0]] is _playout and wishes.listening()
        if playout and _pending(env, taken):
            # it calls what the parent is compiling: its own parts first (Go's random draws),
            # then the other stages (those wished first), a look after each, and a wait when
            # none is left
            compile_parts(env.kernel.playout)
            names = [name for name in (*names, *todo) if todo[name] is not _playout] or names
            if todo[names[0]] is _playout:
                _await(env, wishes, taken)
        stage = todo[names[0]]
        wishes.at(_drop(todo, stage))
        stage(env, legal)
        first = False
    wishes.at([])
    rng = np.random.default_rng(0)
    for episode in range(EPISODES):
        env.reset(seed=episode)
        for _ in range(STEPS):
            legal = env.legal_actions()
            if len(legal) == 0:
                break
            env.action_masks()
            snapshot = env.clone_state()
            action = int(rng.choice(legal))
            env.step(action)
            env.restore_state(snapshot)
            _, _, terminated, truncated, _ = env.step(action)
            env.score  # noqa: B018 - a property that may call a kernel
            if terminated or truncated:
                break
    env.reset(seed=0)


def _drop(todo: dict[str, Stage], stage: Stage) -> list[str]:
    """Takes ``stage`` out of ``todo`` under each of its names; returns them."""
    names = [name for name, value in todo.items() if value is stage]
    for name in names:
        del todo[name]
    return names


def _costly(env: PlanningEnv, name: str) -> bool:
    """Whether a stage compiles for seconds before it serves: a playout without a twin that
    calls the kernels of :data:`~mc_envs.wishes.CALLED` (they come first: the searches call them
    too); Morpion's calls neither."""
    playout = env.kernel.playout
    if name != "playout" or getattr(playout, "twin", None) is not None:
        return False
    return any(getattr(env.kernel, field) in reach(playout) for field in CALLED)


def _kernels(env: PlanningEnv, names: set[str]) -> list[Callable[..., object]]:
    """The env's kernels of these :class:`~mc_envs.kernel.Kernel` fields (those it has)."""
    kernels = (getattr(env.kernel, name, None) for name in names)
    return [k for k in kernels if k is not None]


def _pending(env: PlanningEnv, taken: set[str]) -> list[Callable[..., object]]:
    """The kernels the parent compiles itself (``taken``) that the playout calls and the cache
    lacks yet (Go's ``play``; Morpion's playout makes its moves without ``play``)."""
    called = reach(env.kernel.playout)
    return [k for k in _kernels(env, taken) if k in called and not is_cached(k)]


def _await(env: PlanningEnv, wishes: Child, taken: set[str]) -> None:
    """Waits, :data:`WAIT` seconds at most, until the cache has the kernels the parent compiles
    itself, or the parent has gone (its pipe closed): a playout calls them (Go's ``play``, 2.4
    s), which this child would compile a second time."""
    end = time.monotonic() + WAIT
    while _pending(env, taken) and wishes.listening() and time.monotonic() < end:
        time.sleep(POLL)


def _observe(env: PlanningEnv, legal: np.ndarray) -> None:
    env.observation()


def _legal(env: PlanningEnv, legal: np.ndarray) -> None:
    env.restore_state(env.clone_state())  # forgets the moves listed: the kernel lists them
    env.legal_actions()
    env.score  # noqa: B018 - a property that may call a kernel


def _play(env: PlanningEnv, legal: np.ndarray) -> None:
    snapshot = env.clone_state()
    env.play_move(int(legal[0]))  # its legality read from the moves listed, not listed again
    env.restore_state(snapshot)


def _codes(env: PlanningEnv, legal: np.ndarray) -> None:
    """NRPA's move codes, with the argument types of its generic path."""
    moves, codes = _moves(env, legal)
    env.legal_codes(moves, codes)


def _select(env: PlanningEnv, legal: np.ndarray) -> None:
    """Each of NRPA's selective filters, as its generic path calls them."""
    moves, codes = _moves(env, legal)
    env.legal_codes(moves, codes)
    for name in env.kernel.selections:
        try:
            key = env.selection_key(name)
        except ValueError:  # not for this state (SameGame's tabu-k with fewer colours)
            continue
        env.select_moves(moves.copy(), codes.copy(), len(legal), key)


def _bias(env: PlanningEnv, legal: np.ndarray) -> None:
    """NRPA's move bias (``bias=``, the rarest of its calls)."""
    moves, _ = _moves(env, legal)
    env.move_bias(moves, len(legal), np.zeros(len(moves)))


def _moves(env: PlanningEnv, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # the generic path's move and code buffers, one slot an action
    moves = np.zeros(int(env.action_space.n), np.int64)
    moves[: len(legal)] = legal
    return moves, np.zeros_like(moves)


def _playout(env: PlanningEnv, legal: np.ndarray) -> None:
    """A playout by the game's compiled ``playout`` kernel (every search calls it, an env step
    does not), its :func:`~mc_envs._numba.twin` first: what stands in for it meanwhile."""
    kernel = env.kernel
    if not kernel.policies:
        return
    policy = kernel.policies.get(env.default_policy, min(kernel.policies.values()))
    for playout in (getattr(kernel.playout, "twin", None), kernel.playout):
        if playout is not None:
            state = np.array(env.clone_state().data, copy=True)
            seq = np.zeros(kernel.max_moves + 1, np.int64)
            playout(state, int(policy), rng_state(0), kernel.workspace(state), seq, 0)


# A stage under each name its parent may wish for (the Kernel's fields), in the order that serves
# what every search calls first (the legal moves, the move), then the rest of a step (the
# observation), then what some searches call.
STAGES: dict[str, Stage] = {
    "legal": _legal,
    "score": _legal,
    "play": _play,
    "observe": _observe,
    "legal_codes": _codes,
    "code": _codes,
    "select": _select,
    "playout": _playout,
    "bias": _bias,
}


def _main() -> int:
    # Not niced, unlike a search's compiling child: the env runs slowly until this one ends.
    job = pickle.loads(sys.stdin.buffer.read())  # sent by the parent process only
    if callable(job):  # a stand_in's job
        job()
        return 0
    exercise(job, Child.named(os.environ.get(ENV)))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
