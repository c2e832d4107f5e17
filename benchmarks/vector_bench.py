"""Vector env throughput: our compiled vector envs against Gymnasium's Sync/AsyncVectorEnv and pgx.

Run: ``python benchmarks/vector_bench.py --plot [--resume]`` (one run, every id of
``mc_envs.registry.ENVS`` at N = 1, 64, 1024, 8192, then MaskablePPO end to end; restrict with
``--ids``, ``--sizes``, ``--impls``, ``--no-ppo``). It measures:

1. steps/s (batch steps * N over a fixed wall time, after a warmup that takes compilation out) of
   ours (``vectorization_mode="vector_entry_point"``, default ``threads`` and ``copy``), of
   ``"sync"``, of ``"async"`` (one process per sub-env: only for N <= ``--async-max``), and of pgx
   (Connect Four and Tic-Tac-Toe; vmap + jit on this CPU). Random legal actions for the whole batch
   are drawn by one vectorized call per batch step, inside the timed loop; for the numpy-based
   envs the time in ``step`` alone is reported too.
2. The peak memory (max RSS) of each measurement, each run in a fresh process (``--one``).
3. MaskablePPO's wall time on Connect Four against the random player over ``SB3VecEnv`` against
   ``DummyVecEnv``, same seed and hyperparameters, with the mean reward of the last episodes.
4. The ratios ours / sync (and / async) and ours / pgx per id and N, printed and written with the
   figures, the machine and the command to ``benchmarks/results/vector_bench.json`` (atomically,
   after every measurement; ``--resume`` keeps the measured cells of that file and measures the
   rest, failures again); ``--plot`` draws steps/s against N beside it (``.png``).

Nothing is asserted; a failed or timed-out measurement is recorded as an ``error`` string.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.reporting import provenance, save_report  # noqa: E402
from benchmarks.reporting import run_child as measured_apart  # noqa: E402
from benchmarks.vector_bench_impls import PGX_NAMES, one  # noqa: E402

PACKAGES = ("numpy", "numba", "jax", "jaxlib", "pgx", "gymnasium", "torch")
PACKAGES += ("stable-baselines3", "sb3-contrib")
IMPLS = ("ours", "sync", "async", "pgx")
SIZES = (1, 64, 1024, 8192)
OUT = ROOT / "benchmarks" / "results" / "vector_bench.json"
PPO_ID = "mc_envs/ConnectFour-v0"
PPO_HYPER = {"n_steps": 128, "batch_size": 512}
ASYNC_SKIPPED = (
    "AsyncVectorEnv starts one process per sub-env: N = {n} processes on {cpus} cores would "
    "measure process scheduling and memory, not the env (runs only for N <= --async-max = {max})"
)
METHOD = {
    "steps": "steps/s = batch steps * N / wall seconds, timed for --seconds after a warmup (the "
    "first, compiling batch step and up to 0.5 s more are not timed)",
    "actions": "random legal actions for the whole batch drawn by one vectorized call per batch "
    "step, INSIDE the timed loop: numpy for ours/sync/async, the same draw for the three (up "
    "to 9 actions and from 256 sub-envs each mask row read as an integer, a table gives its count "
    "of legal actions and "
    "the k-th of them, k from one uniform per sub-env; up "
    "to 64 actions a uniform float32 per action times info['action_mask'], argmax per row; "
    "beyond, np.flatnonzero of the masks lists the batch's legal actions, np.bincount counts each "
    "sub-env's, one uniform per sub-env picks among them), "
    "jax.random.categorical over log(legal_action_mask) inside pgx's jitted step",
    "env_step_only_steps_per_s": "numpy-based envs: steps over the time spent in env.step alone "
    "(the draw left out)",
    "pgx": "pgx.make(name); jax.jit(jax.vmap(env.init)); one jitted function per batch step: "
    "draw, jax.vmap(pgx.experimental.auto_reset(env.step, env.init)), called once per batch step "
    "from Python with jax.block_until_ready; pgx has Connect Four and Tic-Tac-Toe only",
    "memory": "max_rss_kb = getrusage(RUSAGE_SELF).ru_maxrss of the fresh process that ran the "
    "measurement (imports and compilation included: gymnasium/numba/mc_envs for ours/sync/async, "
    "jax/pgx for pgx); rss_imports_kb = the peak after those imports, before the measurement; "
    "rss_end_kb = the resident set at the end of the timed loop; async also has "
    "max_rss_worker_kb, the largest worker process",
    "autoreset": "ours, sync and async: Gymnasium's NEXT_STEP autoreset (the step after an "
    "episode ends resets it and counts as a step); pgx: auto_reset within the same step",
}


def env_ids(names: list[str] | None) -> list[str]:
    """The ids of ``ENVS`` named by ``names`` (full ids, short names such as ``ConnectFour``, or
    command-line names and aliases), in the order given; all of them for None.

    Raises:
        SystemExit: an unknown name.
    """
    from mc_envs.registry import ENVS, find

    if not names:
        return list(ENVS)
    out = []
    for name in names:
        short = {i.split("/")[-1].rsplit("-v", 1)[0].lower(): i for i in ENVS}
        env_id = name if name in ENVS else short.get(name.lower())
        if env_id is None:
            try:
                env_id = find(name).env_id
            except ValueError as e:
                raise SystemExit(f"--ids: {e}; or one of {sorted(ENVS)}") from None
        if env_id not in out:
            out.append(env_id)
    return out


def machine() -> dict:
    """The platform, cores and library versions of this run."""
    import numba

    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "versions": versions,
    }


def run_child(spec: dict, timeout: float) -> dict:
    """``spec`` measured in a fresh process (:func:`benchmarks.reporting.run_child`)."""
    return measured_apart(__file__, spec, timeout)


def cells(ids: list[str], sizes: list[int], impls: list[str]) -> list[tuple[str, str, int]]:
    """The (impl, id, N) measurements asked for: pgx only where it has the game."""
    return [
        (impl, env_id, n)
        for env_id in ids
        for n in sizes
        for impl in impls
        if impl != "pgx" or env_id in PGX_NAMES
    ]


def key(m: dict) -> tuple[str, str, int]:
    return m["impl"], m["id"], m["n"]


def ratios(measurements: list[dict]) -> list[dict]:
    """ours / sync, ours / async and ours / pgx steps/s for every (id, N) measured by ours."""
    rate = {key(m): m["steps_per_s"] for m in measurements if "steps_per_s" in m}
    out = []
    for (impl, env_id, n), ours in rate.items():
        if impl != "ours":
            continue
        row = {"id": env_id, "n": n}
        for other in ("sync", "async", "pgx"):
            if (other, env_id, n) in rate:
                row[f"ours_over_{other}"] = round(ours / rate[other, env_id, n], 3)
        if len(row) > 2:
            out.append(row)
    return out


def human(x: float | None) -> str:
    if x is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def table(report: dict) -> str:
    """The steps/s, peak memory and ratios of the report, one line per (id, N)."""
    rate = {key(m): m.get("steps_per_s") for m in report["measurements"]}
    rss = {key(m): m.get("max_rss_kb") for m in report["measurements"]}
    rows = {(r["id"], r["n"]): r for r in report["ratios"]}
    head = f"{'id':<30}{'N':>6}" + "".join(f"{i:>9}" for i in IMPLS)
    head += f"{'ours/sync':>11}{'ours/pgx':>10}{'RSS MB ours/sync/pgx':>22}"
    lines = [head]
    for env_id, n in dict.fromkeys((m["id"], m["n"]) for m in report["measurements"]):
        line = f"{env_id:<30}{n:>6}" + "".join(
            f"{human(rate.get((i, env_id, n))):>9}" for i in IMPLS
        )
        r = rows.get((env_id, n), {})
        line += f"{r.get('ours_over_sync', '-'):>11}{r.get('ours_over_pgx', '-'):>10}"
        mb = [rss.get((i, env_id, n)) for i in ("ours", "sync", "pgx")]
        line += f"{'/'.join('-' if v is None else str(v // 1024) for v in mb):>22}"
        lines.append(line)
    ppo = report.get("ppo") or {}
    if "ours" in ppo and "dummy" in ppo:
        o, d = ppo["ours"], ppo["dummy"]
        lines.append(
            f"MaskablePPO {ppo['settings']['steps']} steps on {PPO_ID}: SB3VecEnv "
            f"{o.get('learn_s', o.get('error'))} s, DummyVecEnv {d.get('learn_s', d.get('error'))}"
            f" s, dummy/ours {ppo.get('dummy_over_ours_seconds', '-')}; mean episode reward "
            f"{_round(o.get('mean_episode_reward'))} vs {_round(d.get('mean_episode_reward'))}"
        )
    return "\n".join(lines)


def plot(report: dict, out: Path) -> None:
    """steps/s against N (log-log), one panel per id, a line per implementation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    ids = list(dict.fromkeys(m["id"] for m in report["measurements"]))
    cols = min(3, len(ids)) or 1
    rows = max(1, math.ceil(len(ids) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax in axes.flat[len(ids) :]:
        ax.set_visible(False)
    colors = dict(zip(IMPLS, ("C0", "C1", "C2", "C3"), strict=True))
    sizes = sorted({m["n"] for m in report["measurements"]})
    for ax, env_id in zip(axes.flat, ids, strict=False):
        for impl in IMPLS:
            points = sorted(
                (m["n"], m["steps_per_s"])
                for m in report["measurements"]
                if m["id"] == env_id and m["impl"] == impl and "steps_per_s" in m
            )
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", label=impl, color=colors[impl])
        ax.set(xscale="log", yscale="log", title=env_id.split("/")[-1], xlabel="N")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_ylabel("steps/s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    mach = report["machine"]
    fig.suptitle(
        f"random legal actions, the draw timed\n{mach['processor']}, {mach['cpu_count']} cores",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", help="ids or short names (default: every id)")
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="values of N")
    parser.add_argument(
        "--impls", default=",".join(IMPLS), help="comma-separated, of " + ",".join(IMPLS)
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds a measurement")
    parser.add_argument("--async-max", type=int, default=2, help="largest N for async")
    parser.add_argument("--timeout", type=float, help="seconds a measurement (10 * seconds + 120)")
    parser.add_argument("--no-ppo", action="store_true", help="skip the MaskablePPO comparison")
    parser.add_argument("--ppo-steps", type=int, default=100_000)
    parser.add_argument("--ppo-envs", type=int, default=16, help="n_envs of both PPO runs")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--resume", action="store_true", help="keep the cells --out has measured")
    parser.add_argument("--plot", action="store_true", help="write a PNG beside --out")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    if unknown := sorted(set(args.impls) - set(IMPLS)):
        parser.error(f"--impls: unknown {unknown}; choose from {list(IMPLS)}")
    if args.timeout is None:
        args.timeout = 10 * args.seconds + 120
    return args


def measure(report: dict, args: argparse.Namespace, out: Path) -> None:
    """Fills ``report["measurements"]`` cell by cell, saving after each."""
    done = {key(m): m for m in report["measurements"] if "steps_per_s" in m}  # errors: again
    todo = cells(env_ids(args.ids), args.sizes, args.impls)
    kept = [c for c in todo if c in done]
    if kept:
        print(f"{len(kept)} measurements already in {out}, kept (--resume)")
    cpus = os.cpu_count()
    for impl, env_id, n in todo:
        if (impl, env_id, n) in done:
            continue
        cell = {"impl": impl, "id": env_id, "n": n}
        if impl == "async" and n > args.async_max:
            why = ASYNC_SKIPPED.format(n=n, cpus=cpus, max=args.async_max)
            cell["skipped"] = why
        else:
            spec = {**cell, "seconds": args.seconds}
            cell.update(run_child(spec, args.timeout))
        report["measurements"] = [m for m in report["measurements"] if key(m) != key(cell)]
        report["measurements"].append(cell)
        report["ratios"] = ratios(report["measurements"])
        save_report(out, report)
        if "steps_per_s" in cell:
            only = cell.get("env_step_only_steps_per_s")
            extra = f" (step alone {human(only)})" if only else ""
            print(
                f"{impl:>5} {env_id:<30} N={n:<5} {human(cell['steps_per_s'])} steps/s{extra}, "
                f"max RSS {cell['max_rss_kb'] // 1024} MB",
                flush=True,
            )
        else:
            print(f"{impl:>5} {env_id:<30} N={n:<5} {cell.get('error') or 'skipped'}", flush=True)


def ppo(report: dict, args: argparse.Namespace, out: Path) -> None:
    """MaskablePPO over SB3VecEnv and over DummyVecEnv (kept from --out if already run alike)."""
    settings = {"id": PPO_ID, "opponent": "random", "steps": args.ppo_steps}
    settings.update(n_envs=args.ppo_envs, seed=0, hyper=PPO_HYPER, device="cpu")
    runs = report.get("ppo") or {}
    if runs.get("settings") != settings:
        runs = {}
    runs["settings"] = settings
    report["ppo"] = runs
    for kind in ("ours", "dummy"):
        if kind in runs and "error" not in runs[kind]:
            print(f"MaskablePPO over {kind}: kept from {out} (--resume)")
            continue
        spec = {"impl": f"ppo-{kind}", "id": PPO_ID, "steps": args.ppo_steps}
        spec.update(n_envs=args.ppo_envs, seed=0, hyper=PPO_HYPER)
        runs[kind] = run_child(spec, 300 + args.ppo_steps / 100)
        print(f"MaskablePPO over {kind}: {runs[kind]}", flush=True)
        save_report(out, report)
    if "learn_s" in runs["ours"] and "learn_s" in runs["dummy"]:
        runs["dummy_over_ours_seconds"] = round(
            runs["dummy"]["learn_s"] / runs["ours"]["learn_s"], 3
        )
    save_report(out, report)


def main(argv: list[str] | None = None) -> dict:
    """Runs the benchmark (or with ``--one SPEC``, one measurement); returns the report."""
    args = parse(argv)
    if args.one:
        result = one(json.loads(args.one))
        print(json.dumps(result), flush=True)
        return result
    out = args.out
    report = None
    if args.resume and out.exists():
        report = json.loads(out.read_text())
    if report is None:
        report = {"measurements": [], "ratios": []}
    run = provenance(argv)
    report.update(run, machine=machine(), method=METHOD)
    report["runs"] = [*report.get("runs", []), run]  # every command that added to the file
    report["settings"] = {
        "seconds": args.seconds,
        "sizes": args.sizes,
        "impls": args.impls,
        "async_max": args.async_max,
        "timeout_s": args.timeout,
    }
    save_report(out, report)
    measure(report, args, out)
    if not args.no_ppo:
        ppo(report, args, out)
    report["ratios"] = ratios(report["measurements"])
    save_report(out, report)
    print(table(report))
    if args.plot:
        plot(report, out.with_suffix(".png"))
        print(f"plot: {out.with_suffix('.png')}")
    print(f"report: {out}")
    return report


if __name__ == "__main__":
    main()
