"""SameGame benchmark: our playouts and NMCS beside the C++ reference, measured in the same run.

    python benchmarks/samegame_bench.py                       # everything, a few minutes
    python benchmarks/samegame_bench.py --parts playouts nmcs # only some parts
    python benchmarks/samegame_bench.py --parts quality --seeds 5 --quality-levels 1 2

Parts: ``playouts`` (random and TabuColorRandom playouts/s on standard position 1, ours and C++),
``nmcs`` (NMCS level 1 and 2 on position 1: time, playouts, score, ours and C++), ``nrpa``
(NRPA level 2 playouts per CPU second on position 1, both policies; no C++ reference), ``quality``
(NMCS with and without memorisation on the 20 standard positions: mean score per position),
``startup`` (wall time of ``mc-envs solve samegame --position 1 --time 1`` with a cold and a warm
numba cache). Results are printed and written to benchmarks/out/samegame.json.

The C++ reference is ``../shared/bench/run_ref.sh`` beside the project's root; set
``MC_ENVS_SAMEGAME_REF`` to the path of ``run_ref.sh`` to use another one (e.g. from a worktree).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mc_envs  # noqa: E402,F401
from mc_envs.agents import NMCS, NRPA  # noqa: E402

REF = Path(os.environ.get("MC_ENVS_SAMEGAME_REF", ROOT.parent / "shared" / "bench" / "run_ref.sh"))
POLICY_CODE = {"random": 0, "tabu": 1}


def reference(*args: str | int) -> dict | None:
    """One run of the C++ reference (None if it is not beside the project)."""
    if not REF.exists():
        return None
    out = subprocess.run(
        ["bash", str(REF), *map(str, args)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def env_at(position: int):
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    return env


def bench_playouts(n: int, reps: int) -> dict:
    """Alternates one rep of ours and one of C++, so that both see the same machine load."""
    env = env_at(1)
    rows = {}
    for policy, code in POLICY_CODE.items():
        NMCS(level=0, policy=policy).search(env, playouts=100)  # compile or load the cache
        ours, cpp = [], []
        for rep in range(reps):
            r = NMCS(level=0, seed=rep, policy=policy).search(env, playouts=n)
            ours.append(n / r.seconds)
            ref = reference("playouts", n, 1, code)
            cpp.append(ref["playouts_per_s_median"] if ref else float("nan"))
        o, c = statistics.median(ours), statistics.median(cpp)
        rows[policy] = {"ours_per_s": o, "cpp_per_s": c, "ratio": o / c, "reps": reps}
        print(
            f"playouts {policy:6s}: ours {o:10,.0f}/s   C++ {c:10,.0f}/s   ratio {o / c:.2f}"
            f"   (medians of {reps} alternating reps of {n:,})"
        )
    return rows


def bench_nmcs(levels: list[int], seeds: int) -> dict:
    env = env_at(1)
    rows = {}
    for level in levels:
        NMCS(level=level).search(env, playouts=10)
        ours, ref = [], []
        for seed in range(seeds):
            r = NMCS(level=level, seed=seed, policy="tabu").search(env)
            ours.append((r.seconds, r.playouts, r.score))
            c = reference("nmcs", level, seed, 1)
            if c:
                ref.append((c["seconds"], c["playouts"], c["score"]))
            print(
                f"nmcs level {level} seed {seed}: ours {r.seconds:7.2f} s {r.playouts:>9,} playouts score {r.score:6g}"
                + (
                    f"   C++ {c['seconds']:7.2f} s {c['playouts']:>9,} playouts score {c['score']:6g}"
                    if c
                    else ""
                )
            )
        t_ours = sum(x[0] for x in ours)
        t_ref = sum(x[0] for x in ref) if ref else float("nan")
        us_ours = 1e6 * t_ours / sum(x[1] for x in ours)
        us_ref = 1e6 * t_ref / sum(x[1] for x in ref) if ref else float("nan")
        rows[level] = {
            "ours_seconds": t_ours / seeds,
            "cpp_seconds": t_ref / seeds,
            "time_ratio": t_ours / t_ref,
            "ours_us_per_playout": us_ours,
            "cpp_us_per_playout": us_ref,
            "per_playout_ratio": us_ours / us_ref,
            "ours_mean_score": statistics.mean(x[2] for x in ours),
            "cpp_mean_score": statistics.mean(x[2] for x in ref) if ref else None,
        }
        print(
            f"nmcs level {level}: mean time ours {t_ours / seeds:.2f} s, C++ {t_ref / seeds:.2f} s "
            f"(ratio {t_ours / t_ref:.2f}); per playout {us_ours:.1f} us vs {us_ref:.1f} us "
            f"(ratio {us_ours / us_ref:.2f})"
        )
    return rows


def bench_nrpa(playouts: int, seeds: int) -> dict:
    """NRPA's throughput: playouts per CPU second (``time.process_time``) of level-2 searches."""
    env = env_at(1)
    rows = {}
    for policy in ("tabu", "random"):
        NRPA(level=2, policy=policy).search(env, playouts=200)  # compile or load the cache
        rates = []
        for seed in range(seeds):
            start = time.process_time()
            r = NRPA(level=2, seed=seed, policy=policy).search(env, playouts=playouts)
            rates.append(r.playouts / (time.process_time() - start))
        rows[policy] = {"playouts_per_cpu_s_median": statistics.median(rates), "seeds": seeds}
        print(
            f"nrpa level 2 {policy:6s}: {statistics.median(rates):10,.0f} playouts per CPU second"
            f"   (median of {seeds} seeds, {playouts:,} playouts each)"
        )
    return rows


def bench_quality(levels: list[int], seeds: int, positions: list[int]) -> dict:
    rows = {}
    for level in levels:
        for memorize in (True, False):
            per_position = {}
            for position in positions:
                env = env_at(position)
                scores = [
                    NMCS(level=level, seed=s, memorize=memorize).search(env).score
                    for s in range(seeds)
                ]
                per_position[position] = statistics.mean(scores)
            key = f"level{level}_{'memorize' if memorize else 'no_memorize'}"
            rows[key] = per_position
            total = sum(per_position.values())
            print(f"quality {key}: total of per-position means over {seeds} seeds = {total:,.0f}")
            print("  " + " ".join(f"{p}:{v:.0f}" for p, v in per_position.items()))
    return rows


def bench_startup() -> dict:
    cli = [
        sys.executable,
        "-m",
        "mc_envs.cli",
        "solve",
        "samegame",
        "--position",
        "1",
        "--level",
        "1",
        "--time",
        "1",
        "--quiet",
        "--out",
    ]
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "cache"))
        for label in ("cold", "warm"):
            start = time.perf_counter()
            subprocess.run(
                [*cli, str(Path(tmp) / "s.json")], env=env, check=True, capture_output=True
            )
            rows[label] = time.perf_counter() - start
            print(
                f"startup {label}: mc-envs solve samegame --position 1 --time 1 took {rows[label]:.2f} s wall"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--parts", nargs="+", default=["playouts", "nmcs", "nrpa", "quality", "startup"]
    )
    parser.add_argument("--playouts", type=int, default=20000, help="playouts per rep")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--nmcs-levels", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--nmcs-seeds", type=int, default=2)
    parser.add_argument("--nrpa-playouts", type=int, default=60000)
    parser.add_argument("--quality-levels", type=int, nargs="+", default=[1])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per position (quality)")
    parser.add_argument("--positions", type=int, nargs="+", default=list(range(1, 21)))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "samegame.json"))
    args = parser.parse_args()
    results: dict = {"machine": {"cpus": os.cpu_count()}}
    if "playouts" in args.parts:
        results["playouts"] = bench_playouts(args.playouts, args.reps)
    if "nmcs" in args.parts:
        results["nmcs"] = bench_nmcs(args.nmcs_levels, args.nmcs_seeds)
    if "nrpa" in args.parts:
        results["nrpa"] = bench_nrpa(args.nrpa_playouts, args.nmcs_seeds)
    if "quality" in args.parts:
        results["quality"] = bench_quality(args.quality_levels, args.seeds, args.positions)
    if "startup" in args.parts:
        results["startup"] = bench_startup()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
