"""Go's speed, side by side with its peers on this CPU: pgx's ``go_9x9`` and OpenSpiel's C++ MCTS.

Run: ``python benchmarks/go_bench.py [--seconds S] [--out FILE] [--resume]``. One run measures,
each in a fresh process (so that JAX's and numba's threads and memory stay apart):

1. vector env steps/s of ``mc_envs/Go-v0`` (9x9, ``vectorization_mode="vector_entry_point"``) at
   N = 1, 64, 1,024, random legal actions drawn by numpy for the whole batch inside the timed loop
   (vector_bench.py's ``Draw``), against pgx ``go_9x9`` at the same N, its actions drawn on its
   side by ``jax.random.categorical`` inside its jitted step (vector_bench.py's way);
2. random playouts/s of the compiled kernel from the empty 9x9 board (and the moves a playout);
3. UCT iterations/s (``mc_envs.agents.UCT``, random rollouts) against OpenSpiel's C++ ``MCTSBot``
   through pyspiel (``RandomRolloutEvaluator``, UCT constant sqrt(2)) on 9x9 Go, komi 7.5, both
   ``--iterations`` a move (5,000) for ``--moves`` moves from the empty board, each playing its
   own choice; only the searches are timed;
4. clone+restore pairs per second (``clone_state`` then ``restore_state``) on a 9x9 position
   after 40 random moves.

The figures, the ratios ours / peer, the machine, its load average (1, 5, 15 minutes) at the start
and at the end, and the command are printed and written to ``--out`` (JSON, atomically after every
measurement; ``--resume`` keeps the measured ones). Nothing is asserted; a failed or timed-out
measurement is recorded as an ``error`` string. The issue's targets: vector env at N = 1,024
>= 10x pgx; UCT >= 5x OpenSpiel.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.reporting import playouts_from_start, provenance, save_report  # noqa: E402
from benchmarks.reporting import run_child as measured_apart  # noqa: E402

GO_ID = "mc_envs/Go-v0"
PGX_NAME = "go_9x9"
SIZES = (1, 64, 1024)
OUT = ROOT / "benchmarks" / "results" / "go_bench.json"
METHOD = {
    "vector": "steps/s = batch steps * N / wall seconds after a warmup (vector_bench_impls._timed);"
    " ours: gym.make_vec(GO_ID, num_envs=N, vectorization_mode='vector_entry_point'), actions by "
    "vector_bench_impls.Draw (numpy, uniform over each sub-env's legal actions, inside the timed "
    "loop), NEXT_STEP autoreset; pgx: pgx.make('go_9x9'), jax.vmap(auto_reset(step, init)) and "
    "jax.random.categorical over log(legal_action_mask) in one jitted batch step, "
    "block_until_ready after each",
    "playouts": "kernel.playout from the empty 9x9 board (a copy of it restored before each), "
    "uniform over the legal actions with the pass, to the end (two passes or 162 moves)",
    "uct": "ours: UCT(iterations=I, seed=move, reuse=False).search(env) on the env's compiled "
    "path; OpenSpiel: pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, seed), sqrt(2), I, "
    "10**9, False, seed, False).step(state) on pyspiel.load_game('go', board_size=9, komi=7.5); "
    "each plays its chosen move and searches again, --moves times from the empty board; "
    "iterations/s = moves * I / seconds spent searching (wall clock; iterations_per_cpu_s: the "
    "process's CPU seconds, which a busy machine's waits leave out; both searches are "
    "single-threaded)",
    "clone_restore": "pairs of env.clone_state() and env.restore_state(snapshot) per second on "
    "the 9x9 board after 40 random legal moves",
}


def _pgx_steps(n: int, seconds: float, seed: int = 0) -> dict:
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    from benchmarks.vector_bench_impls import _timed

    env = pgx.make(PGX_NAME)
    step_one = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def batch_step(state, key):
        key, k_act, k_step = jax.random.split(key, 3)
        logits = jnp.log(state.legal_action_mask.astype(jnp.float32))
        action = jax.random.categorical(k_act, logits, axis=-1)
        return step_one(state, action, jax.random.split(k_step, n)), key

    key, k_init = jax.random.split(jax.random.PRNGKey(seed))
    carry = [jax.jit(jax.vmap(env.init))(jax.random.split(k_init, n)), key]
    jax.block_until_ready(carry)

    def step() -> None:
        carry[0], carry[1] = batch_step(carry[0], carry[1])
        jax.block_until_ready(carry[0])

    out = _timed(step, seconds, n)
    out["jax_backend"] = jax.default_backend()
    return out


def _playouts(seconds: float) -> dict:
    kernel, root, state, ws, seq, rng = playouts_from_start(GO_ID)
    kernel.playout(state, 0, rng, ws, seq, 0)  # compile or load
    playouts = moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            state[:] = root
            moves += kernel.playout(state, 0, rng, ws, seq, 0)
        playouts += 100
    elapsed = time.perf_counter() - start
    return {
        "playouts_per_s": playouts / elapsed,
        "moves_per_playout": moves / playouts,
        "ns_per_move": 1e9 * elapsed / moves,
        "playouts": playouts,
        "seconds": round(elapsed, 4),
    }


def _our_uct(iterations: int, moves: int) -> dict:
    import gymnasium as gym

    import mc_envs  # noqa: F401
    from mc_envs.agents import UCT, compile_ahead

    compile_ahead.enable(False)  # the first search compiles here: no plain-Python stand-in timed
    env = gym.make(GO_ID).unwrapped
    env.reset(seed=0)
    UCT(iterations=50, seed=0, reuse=False).search(env)  # compile or load
    spent, cpu, done, played = 0.0, 0.0, 0, []
    for m in range(moves):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = UCT(iterations=iterations, seed=m, reuse=False).search(env)
        spent += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        done += result.iterations
        played.append(env.action_to_string(result.actions[0]))
        env.step(result.actions[0])
    return {
        "iterations_per_s": done / spent,
        "iterations_per_cpu_s": done / cpu,
        "iterations": done,
        "seconds": round(spent, 4),
        "cpu_seconds": round(cpu, 4),
        "moves": played,
    }


def _openspiel_uct(iterations: int, moves: int) -> dict:
    import pyspiel

    game = pyspiel.load_game("go", {"board_size": 9, "komi": 7.5})
    state = game.new_initial_state()
    spent, cpu, played = 0.0, 0.0, []
    for m in range(moves):
        bot = pyspiel.MCTSBot(
            game,
            pyspiel.RandomRolloutEvaluator(1, m),
            math.sqrt(2),
            iterations,
            10**9,
            False,
            m,
            False,
        )
        start, start_cpu = time.perf_counter(), time.process_time()
        action = bot.step(state)
        spent += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        played.append(state.action_to_string(state.current_player(), action))
        state.apply_action(action)
    return {
        "iterations_per_s": moves * iterations / spent,
        "iterations_per_cpu_s": moves * iterations / cpu,
        "iterations": moves * iterations,
        "seconds": round(spent, 4),
        "cpu_seconds": round(cpu, 4),
        "moves": played,
        "game": str(game.get_parameters()),
    }


def _clone_restore(seconds: float) -> dict:
    import gymnasium as gym
    import numpy as np

    import mc_envs  # noqa: F401

    env = gym.make(GO_ID).unwrapped
    _obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        _obs, _r, _term, _trunc, info = env.step(
            int(rng.choice(np.flatnonzero(info["action_mask"])))
        )
    pairs = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(1000):
            env.restore_state(env.clone_state())
        pairs += 1000
    elapsed = time.perf_counter() - start
    return {
        "pairs_per_s": pairs / elapsed,
        "pairs": pairs,
        "seconds": round(elapsed, 4),
        "state_int64s": int(env.state_view.size),
    }


def one(spec: dict) -> dict:
    """Runs the measurement ``spec`` (``what`` and its settings) in this process."""
    what = spec["what"]
    if what == "ours_vector":
        from benchmarks.vector_bench_impls import measure_numpy

        return measure_numpy("ours", GO_ID, spec["n"], spec["seconds"])
    if what == "pgx_vector":
        return _pgx_steps(spec["n"], spec["seconds"])
    if what == "playouts":
        return _playouts(spec["seconds"])
    if what == "ours_uct":
        return _our_uct(spec["iterations"], spec["moves"])
    if what == "openspiel_uct":
        return _openspiel_uct(spec["iterations"], spec["moves"])
    if what == "clone_restore":
        return _clone_restore(spec["seconds"])
    raise ValueError(f"unknown measurement {what!r}")


def run_child(spec: dict, timeout: float) -> dict:
    """``spec`` measured in a fresh process (:func:`benchmarks.reporting.run_child`)."""
    return measured_apart(__file__, spec, timeout)


def specs(args: argparse.Namespace) -> dict[str, dict]:
    """The measurements of this run, by name."""
    out = {}
    for n in args.sizes:
        out[f"ours_vector_n{n}"] = {"what": "ours_vector", "n": n, "seconds": args.seconds}
        out[f"pgx_vector_n{n}"] = {"what": "pgx_vector", "n": n, "seconds": args.seconds}
    out["playouts"] = {"what": "playouts", "seconds": args.seconds}
    for who in ("ours", "openspiel"):
        out[f"{who}_uct"] = {
            "what": f"{who}_uct",
            "iterations": args.iterations,
            "moves": args.moves,
        }
    out["clone_restore"] = {"what": "clone_restore", "seconds": args.seconds}
    return out


def ratios(m: dict) -> dict:
    """ours / peer for every pair measured."""
    out = {}
    for name, cell in m.items():
        if not name.startswith("ours_vector_n"):
            continue
        peer = m.get("pgx_" + name[5:], {})
        if "steps_per_s" in cell and "steps_per_s" in peer:
            out[f"vector_n{name[13:]}_ours_over_pgx"] = round(
                cell["steps_per_s"] / peer["steps_per_s"], 2
            )
    ours, peer = m.get("ours_uct", {}), m.get("openspiel_uct", {})
    if "iterations_per_s" in ours and "iterations_per_s" in peer:
        out["uct_ours_over_openspiel"] = round(
            ours["iterations_per_s"] / peer["iterations_per_s"], 2
        )
    if "iterations_per_cpu_s" in ours and "iterations_per_cpu_s" in peer:
        out["uct_ours_over_openspiel_cpu"] = round(
            ours["iterations_per_cpu_s"] / peer["iterations_per_cpu_s"], 2
        )
    return out


def figure(cell: dict) -> str:
    for k in ("steps_per_s", "playouts_per_s", "iterations_per_s", "pairs_per_s"):
        if k in cell:
            return f"{cell[k]:>14,.0f} {k.replace('_per_s', '/s')}"
    return f"{'':>14} {cell.get('error', '?')}"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds a measurement")
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="values of N")
    parser.add_argument("--iterations", type=int, default=5000, help="UCT iterations a move")
    parser.add_argument("--moves", type=int, default=4, help="UCT moves from the empty board")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a measurement")
    parser.add_argument(
        "--only", nargs="+", help="measure only these (names or their prefixes: ours_uct, pgx)"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--resume", action="store_true", help="keep what --out has measured")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.sizes) < 1 or args.iterations < 1 or args.moves < 1 or args.seconds <= 0:
        parser.error("--sizes, --iterations and --moves must be positive, --seconds above 0")
    return args


def main(argv: list[str] | None = None) -> dict:
    """Runs the benchmark (or with ``--one SPEC``, one measurement); returns the report."""
    args = parse(argv)
    if args.one:
        result = one(json.loads(args.one))
        print(json.dumps(result), flush=True)
        return result
    from benchmarks.vector_bench import machine

    out = args.out
    report = json.loads(out.read_text()) if args.resume and out.exists() else {}
    report.setdefault("measurements", {})
    run = provenance(argv)
    report.update(run, machine=machine(), method=METHOD)
    try:
        report["machine"]["versions"]["open_spiel"] = metadata.version("open_spiel")
    except metadata.PackageNotFoundError:
        report["machine"]["versions"]["open_spiel"] = None
    report["runs"] = [*report.get("runs", []), run]
    report["settings"] = {k: getattr(args, k) for k in ("seconds", "sizes", "iterations", "moves")}
    report["load_average"] = {"start": list(os.getloadavg())}
    save_report(out, report)
    m = report["measurements"]
    for name, spec in specs(args).items():
        if args.only and not any(name.startswith(prefix) for prefix in args.only):
            continue
        if name in m and "error" not in m[name] and m[name].get("spec") == spec:
            print(f"{name:<20} {figure(m[name])}  (kept, --resume)")
            continue
        m[name] = {"spec": spec, **run_child(spec, args.timeout)}
        report["ratios"] = ratios(m)
        save_report(out, report)
        print(f"{name:<20} {figure(m[name])}", flush=True)
    report["load_average"]["end"] = list(os.getloadavg())
    report["ratios"] = ratios(m)
    save_report(out, report)
    for k, v in report["ratios"].items():
        print(f"{k:<32} {v:.2f}x")
    print(
        f"load average: start {report['load_average']['start']}, "
        f"end {report['load_average']['end']} (cores: {os.cpu_count()})"
    )
    print(f"report: {out}")
    return report


if __name__ == "__main__":
    main()
