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

The C++ reference is benchmarks/cpp/samegame_ref.cpp (the same rules, a plain flood fill): the
benchmark compiles it with ``g++ -O2`` into benchmarks/out/cpp/ and runs it beside ours, the two
sides alternating so that both see the same machine load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
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
from mc_envs.envs.samegame import standard_positions  # noqa: E402
from mc_envs.games import samegame as sg  # noqa: E402

CPP_SOURCE = ROOT / "benchmarks" / "cpp" / "samegame_ref.cpp"
CPP_BUILD = ROOT / "benchmarks" / "out" / "cpp"
POLICIES = ("random", "tabu")


def build_reference(build: Path = CPP_BUILD) -> Path:
    """Compiles the C++ reference with ``g++ -O2`` (once per version of its source).

    Returns:
        The path of the executable, ``samegame_ref_<hash of the source>`` in ``build``.

    Raises:
        RuntimeError: g++ is missing or the compilation fails (with g++'s message).
    """
    digest = hashlib.sha256(CPP_SOURCE.read_bytes()).hexdigest()[:12]
    binary = build / f"samegame_ref_{digest}"
    if binary.exists():
        return binary
    if shutil.which("g++") is None:
        raise RuntimeError("the C++ reference needs g++ (apt-get install g++)")
    build.mkdir(parents=True, exist_ok=True)
    partial = binary.with_suffix(f".{os.getpid()}.part")
    command = ["g++", "-O2", "-std=c++17", "-o", str(partial), str(CPP_SOURCE)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"g++ could not compile {CPP_SOURCE}:\n{done.stderr}")
    partial.replace(binary)
    return binary


def compiled_reference() -> Path:
    """:func:`build_reference`, or exit with its one-line reason."""
    try:
        return build_reference()
    except RuntimeError as exc:
        sys.exit(f"samegame_bench: {exc}")


def board_file(position: int, build: Path = CPP_BUILD) -> Path:
    """Standard position ``position`` as a board file the C++ reference reads."""
    path = build / f"samegame_position_{position}.txt"
    if not path.exists():
        build.mkdir(parents=True, exist_ok=True)
        path.write_text(sg.format_board(standard_positions()[position]) + "\n")
    return path


def reference(binary: Path, board: Path, *args: str | int, timeout: float = 600) -> dict:
    """One run of the C++ reference: its JSON line."""
    out = subprocess.run(
        [str(binary), str(board), *map(str, args)],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def env_at(position: int):
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    return env


def bench_playouts(n: int, reps: int, binary: Path) -> dict:
    """Playouts/s on standard position 1, ours and C++, one rep of each in turn, so that both
    see the same machine load; the medians of ``reps`` reps and their ratio."""
    env, board = env_at(1), board_file(1)
    rows = {}
    for policy in POLICIES:
        NMCS(level=0, policy=policy).search(env, playouts=100)  # compile or load the cache
        ours, cpp = [], []
        for rep in range(reps):
            r = NMCS(level=0, seed=rep, policy=policy).search(env, playouts=n)
            ours.append(n / r.seconds)
            cpp.append(reference(binary, board, "playouts", n, 1, policy)["per_s_median"])
        o, c = statistics.median(ours), statistics.median(cpp)
        rows[policy] = {"ours_per_s": o, "cpp_per_s": c, "ratio": o / c, "reps": reps, "n": n}
        print(
            f"playouts {policy:6s}: ours {o:10,.0f}/s   C++ {c:10,.0f}/s   ratio {o / c:.2f}"
            f"   (medians of {reps} alternating reps of {n:,})"
        )
    return rows


def bench_nmcs(levels: list[int], seeds: int, binary: Path) -> dict:
    """One complete NMCS (TabuColorRandom playouts) per level and seed on position 1, ours and
    C++: mean time, time per playout, mean score."""
    env, board = env_at(1), board_file(1)
    rows = {}
    for level in levels:
        NMCS(level=level).search(env, playouts=10)
        ours, ref = [], []
        for seed in range(seeds):
            r = NMCS(level=level, seed=seed, policy="tabu").search(env)
            c = reference(binary, board, "nmcs", level, seed, "tabu")
            ours.append((r.seconds, r.playouts, r.score))
            ref.append((c["seconds"], c["playouts"], c["score"]))
            print(
                f"nmcs level {level} seed {seed}: ours {r.seconds:7.2f} s {r.playouts:>9,} "
                f"playouts score {r.score:6g}   C++ {c['seconds']:7.2f} s "
                f"{c['playouts']:>9,} playouts score {c['score']:6g}"
            )
        t_ours, t_ref = sum(x[0] for x in ours), sum(x[0] for x in ref)
        us_ours = 1e6 * t_ours / sum(x[1] for x in ours)
        us_ref = 1e6 * t_ref / sum(x[1] for x in ref)
        rows[level] = {
            "ours_seconds": t_ours / seeds,
            "cpp_seconds": t_ref / seeds,
            "time_ratio": t_ours / t_ref,
            "ours_us_per_playout": us_ours,
            "cpp_us_per_playout": us_ref,
            "per_playout_ratio": us_ours / us_ref,
            "ours_mean_score": statistics.mean(x[2] for x in ours),
            "cpp_mean_score": statistics.mean(x[2] for x in ref),
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
    results: dict = {
        "command": " ".join(["samegame_bench.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg()},
    }
    if "playouts" in args.parts:
        results["playouts"] = bench_playouts(args.playouts, args.reps, compiled_reference())
    if "nmcs" in args.parts:
        results["nmcs"] = bench_nmcs(args.nmcs_levels, args.nmcs_seeds, compiled_reference())
    if "nrpa" in args.parts:
        results["nrpa"] = bench_nrpa(args.nrpa_playouts, args.nmcs_seeds)
    if "quality" in args.parts:
        results["quality"] = bench_quality(args.quality_levels, args.seeds, args.positions)
    if "startup" in args.parts:
        results["startup"] = bench_startup()
    results["machine"]["load_average_at_end"] = os.getloadavg()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
