"""Cold start of the compiled vector envs, side by side with pgx: each case in a fresh process.

    python benchmarks/vector_cold.py [--ids ConnectFour Go] [--n 1024] [--steps 5000] [--no-pgx]
        [--repeat 5]

Each case runs in a new process whose ``NUMBA_CACHE_DIR`` is a new, empty directory. For an id
(:func:`vector_cold`): the seconds from the process's start (before ``import gymnasium``) to the
return of the first ``step`` of ``gym.make_vec(id, num_envs=n,
vectorization_mode="vector_entry_point")`` (imports, ``make_vec``, ``reset(seed=0)`` and that
step, each also given apart), then the slowest of the next ``steps`` steps (random legal actions,
drawn outside the timed call) and where it fell. Stepping goes on past ``steps`` until the
serial/parallel choice (:class:`mc_envs.vector.threads.Runner`) has been made, up to ``cap``
seconds, so that the measurement covers it. For pgx (:func:`pgx_cold`): the seconds from the
process's start to the return of the first jitted, vmapped batch step (``auto_reset(step,
init)``) of ``n`` games, ``jax.jit(jax.vmap(init))`` included. A single cold run varies by
10 to 15% on a 2-core VM (Tic-Tac-Toe's, the same code: 2.71 s to 3.67 s); ``--repeat K`` runs
each side K times, alternately, and compares the medians (:func:`side_by_side`).

Importing this module measures nothing (it puts this tree first on ``sys.path``);
``benchmarks/cold_start.py`` calls the two functions. Nothing is asserted: :func:`main` prints a
table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.reporting import run_code  # noqa: E402

PGX_GAMES = {
    "mc_envs/ConnectFour-v0": "connect_four",
    "mc_envs/TicTacToe-v0": "tic_tac_toe",
    "mc_envs/Go-v0": "go_9x9",
}
LIMIT_FIRST, LIMIT_LATER = None, 0.1  # the targets: pgx's first step; 100 ms a later step

_OURS = r"""
import time
t0 = time.perf_counter()
import json, sys
import gymnasium as gym
import numpy as np
import mc_envs
from benchmarks.vector_bench_impls import Draw
t_import = time.perf_counter()
env = gym.make_vec(SPEC["id"], num_envs=SPEC["n"], vectorization_mode="vector_entry_point",
                   **SPEC["kwargs"])
t_make = time.perf_counter()
obs, info = env.reset(seed=0)
t_reset = time.perf_counter()
draw = Draw(0)
obs, r, term, trunc, info = env.step(draw(info["action_mask"]))
t_first, cpu_first = time.perf_counter(), time.process_time()
worst, worst_at, k, chosen_at, slow = 0.0, 0, 0, None, []
import gc
full_gc = [0.0, 0.0, 0]  # a full collection's start; seconds of them (all threads'); how many
def _gc(phase, gc_info):
    if gc_info["generation"] == 2 and phase == "start":
        full_gc[0] = time.perf_counter()
    elif gc_info["generation"] == 2:
        full_gc[1] += time.perf_counter() - full_gc[0]
        full_gc[2] += 1
gc.callbacks.append(_gc)
while k < SPEC["steps"] or (chosen_at is None and time.perf_counter() - t_first < SPEC["cap"]):
    acts = draw(info["action_mask"])
    s, in_gc = time.perf_counter(), full_gc[1]
    obs, r, term, trunc, info = env.step(acts)
    took = time.perf_counter() - s
    k += 1
    if took > 0.02:
        slow.append((k, round(took * 1e3, 1), round((full_gc[1] - in_gc) * 1e3, 1)))
    if took > worst:
        worst, worst_at = took, k
    if chosen_at is None and env.unwrapped.parallel is not None:
        chosen_at = k
print(json.dumps({
    "first_step_s": round(t_first - t0, 3), "first_step_cpu_s": round(cpu_first, 3),
    "import_s": round(t_import - t0, 3), "make_s": round(t_make - t_import, 3), "reset_s": round(t_reset - t_make, 3),
    "step1_s": round(t_first - t_reset, 3), "later_steps": k,
    "worst_later_step_s": round(worst, 4), "worst_at": worst_at,
    "chosen_at": chosen_at, "parallel": env.unwrapped.parallel,
    "stepping_s": round(time.perf_counter() - t_first, 2),
    "background_compile_s": getattr(env.unwrapped._run.compiling, "seconds", None),
    "slow_steps": slow[:20], "full_gc_later": [full_gc[2], round(full_gc[1], 4)],
}))
"""

_PGX = r"""
import time
t0 = time.perf_counter()
import json
import jax, jax.numpy as jnp
import numpy as np
import pgx
from pgx.experimental import auto_reset
from benchmarks.vector_bench_impls import Draw
t_import = time.perf_counter()
env = pgx.make(SPEC["game"])
n = SPEC["n"]
step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))
key, k_init = jax.random.split(jax.random.PRNGKey(0))
state = jax.block_until_ready(jax.jit(jax.vmap(env.init))(jax.random.split(k_init, n)))
t_init = time.perf_counter()
acts = jnp.asarray(Draw(0)(np.asarray(state.legal_action_mask)))
state = jax.block_until_ready(step(state, acts, jax.random.split(key, n)))
t_first, cpu_first = time.perf_counter(), time.process_time()
print(json.dumps({
    "first_step_s": round(t_first - t0, 3), "first_step_cpu_s": round(cpu_first, 3), "import_s": round(t_import - t0, 3),
    "init_s": round(t_init - t_import, 3), "step1_s": round(t_first - t_init, 3),
}))
"""


def _child(code: str, spec: dict, timeout: float) -> dict[str, Any]:
    """Runs ``code`` (which reads ``SPEC``) in a new process on a new, empty numba cache: its
    last JSON line, or ``{"error": ...}``."""
    with tempfile.TemporaryDirectory(prefix="mc-envs-vector-cold-") as cache:
        script = f"import json as _j\nSPEC = _j.loads({json.dumps(spec)!r})\n{code}"
        return run_code(script, cache, timeout)


def vector_cold(
    env_id: str,
    n: int = 1024,
    *,
    steps: int = 5000,
    cap: float = 60.0,
    kwargs: dict | None = None,
    timeout: float = 900.0,
) -> dict[str, Any]:
    """The cold start of ``env_id``'s compiled vector env at ``n`` sub-envs, in a fresh process
    on an empty numba cache (the module docstring).

    Returns:
        ``first_step_s`` (process start to the first step's return) and its parts ``import_s``,
        ``make_s``, ``reset_s``, ``step1_s``, and the process's CPU seconds to then,
        ``first_step_cpu_s`` (less sensitive to a busy machine); ``worst_later_step_s`` and its step ``worst_at``
        among ``later_steps``; ``chosen_at``, the step after which the serial/parallel choice was
        made (None: not within ``cap`` s), and that choice, ``parallel``; ``slow_steps``, the
        first 20 later steps over 20 ms, (step, ms, ms of it in Python's full garbage
        collections, on any thread); ``full_gc_later``, those collections after the first step
        (how many, seconds);
        ``background_compile_s``, the parallel entry point's compilation on its own thread; or
        ``error``.
    """
    spec = {"id": env_id, "n": n, "steps": steps, "cap": cap, "kwargs": kwargs or {}}
    return {"id": env_id, "n": n, **_child(_OURS, spec, timeout)}


def pgx_cold(game: str, n: int = 1024, *, timeout: float = 900.0) -> dict[str, Any]:
    """pgx's cold start for ``game`` (a pgx name, e.g. ``"connect_four"``) at ``n`` games, in a
    fresh process: ``first_step_s`` (process start to the first batch step's return), its parts
    ``import_s``, ``init_s``, ``step1_s``, the CPU seconds ``first_step_cpu_s`` (XLA compiles on
    several threads); or ``error``."""
    return {"game": game, "n": n, **_child(_PGX, {"game": game, "n": n}, timeout)}


def side_by_side(
    env_id: str,
    n: int = 1024,
    *,
    repeat: int = 1,
    steps: int = 5000,
    cap: float = 60.0,
    pgx: bool = True,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``env_id``'s cold start and pgx's (None where pgx lacks the game, or not ``pgx``), each
    run ``repeat`` times, alternately (pgx, ours, pgx, ours ...), so that the machine's drift
    falls on both: ``first_step_s`` is then the median of the runs, listed in
    ``first_step_runs``. Our first run also times the later steps (``steps``, ``cap``); the
    others time the first step only."""
    game = PGX_GAMES.get(env_id) if pgx else None
    ours_runs: list[dict[str, Any]] = []
    peer_runs: list[dict[str, Any]] = []
    for k in range(repeat):
        if game:
            peer_runs.append(pgx_cold(game, n))
        later = (steps, cap) if k == 0 else (0, 0.0)
        ours_runs.append(vector_cold(env_id, n, steps=later[0], cap=later[1]))
    return _median(ours_runs), _median(peer_runs) if game else None


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    # the first run's figures, its first step the median of every run's (an error stands)
    failed = [run for run in runs if "first_step_s" not in run]
    if failed:
        return failed[0]
    firsts = [run["first_step_s"] for run in runs]
    return {**runs[0], "first_step_s": statistics.median(firsts), "first_step_runs": firsts}


def _row(ours: dict, peer: dict | None) -> str:
    if "error" in ours:
        return f"{ours['id']:<32} error: {ours['error']}"
    first, worst = ours["first_step_s"], ours["worst_later_step_s"]
    peer_s = "     -"
    if peer and "first_step_s" in peer:
        peer_s = f"{peer['first_step_s']:6.2f} s (cpu {peer['first_step_cpu_s']:5.2f})"
    runs = len(ours.get("first_step_runs", [1]))
    median = f" median of {runs}" if runs > 1 else ""
    return (
        f"{ours['id']:<32} {first:6.2f} s{median} (cpu {ours['first_step_cpu_s']:5.2f}, make {ours['make_s']:5.2f} reset {ours['reset_s']:5.2f}"
        f" step {ours['step1_s']:5.2f})  worst later {worst * 1e3:7.1f} ms at {ours['worst_at']:>5}"
        f" of {ours['later_steps']:>5}  chosen at {ours['chosen_at']} parallel={ours['parallel']}"
        f" (compiled in {ours['background_compile_s'] or 0:5.2f} s)  pgx {peer_s}"
    )


def main(argv: list[str] | None = None) -> dict:
    """Measures every id (or ``--ids``) and pgx's three games; prints a row per id."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", help="short names, e.g. ConnectFour (default: all)")
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--cap", type=float, default=60.0, help="seconds of stepping at most")
    parser.add_argument("--no-pgx", action="store_true")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each, alternately: the median first step"
    )
    parser.add_argument("--out", type=Path, help="write the report here as JSON")
    args = parser.parse_args(argv)
    from mc_envs.registry import ENVS

    ids = [i for i in ENVS if not args.ids or i.split("/")[1].rsplit("-v", 1)[0] in args.ids]
    report: dict[str, Any] = {"n": args.n, "ours": {}, "pgx": {}}
    for env_id in ids:
        ours, peer = side_by_side(
            env_id, args.n, repeat=args.repeat, steps=args.steps, cap=args.cap, pgx=not args.no_pgx
        )
        if peer is not None:
            report["pgx"][env_id] = peer
        report["ours"][env_id] = ours
        print(_row(ours, peer), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
