"""Morpion Solitaire 5D and 5T: our NMCS or NRPA under a time limit, beside the published records.

    python benchmarks/morpion_records.py --algo nrpa --level 3 --time 3600 --workers 2
    python benchmarks/morpion_records.py --variants 5T --algo nmcs --level 2 --time 600 --plot
    python benchmarks/morpion_records.py --time 5 --out /tmp/morpion.json

One search per variant from the standard cross. Prints our best game, the playouts and when the
best was found, beside the published results: the best human game (5D 68, Demaine et al. 2006; 5T
170, Bruneau 1976, by hand), level-4 NMCS (5D 80, Cazenave 2009, 5 hours on 64 cores) and the
records (5D 82 and 5T 178, Rosin's NRPA, 2010-2011). Every game is replayed and certified before it
is reported. Writes the report (with each best score against time) to
benchmarks/out/morpion_records_<algo>_l<level>.json after every variant, each best game as a
solution record beside it (for ``mc-envs verify`` and ``mc-envs replay``), and with ``--plot`` the
best score against time on a log scale, like Figure 10 of the NMCS paper. Every search saves a
checkpoint beside the report (one file per worker, and the time spent): ``--resume`` continues a
search that was cut short for the time it has left, so an hour's run may span sessions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402

import mc_envs  # noqa: E402, F401
from benchmarks import reporting  # noqa: E402
from mc_envs.agents import NMCS, NRPA  # noqa: E402
from mc_envs.records import make_record, verify_record, write_record  # noqa: E402

ENV_IDS = {"5D": "mc_envs/MorpionSolitaire5D-v0", "5T": "mc_envs/MorpionSolitaire5T-v0"}
PUBLISHED = {  # variant -> column -> moves
    "5D": {"human": 68, "NMCS L4 2009": 80, "record (NRPA)": 82},
    "5T": {"human": 170, "NMCS L4 2009": None, "record (NRPA)": 178},
}
COLUMNS = ["human", "NMCS L4 2009", "record (NRPA)"]


def make_agent(args: argparse.Namespace, variant: str):
    common = {"seed": args.seed * 10 + (1 if variant == "5D" else 2), "workers": args.workers}
    common["backend"] = args.backend
    if args.algo == "nmcs":
        return NMCS(level=args.level, **common)
    variants = {"tau": args.tau, "stabilize": args.stabilize, "repeats": args.repeats}
    return NRPA(level=args.level, iterations=args.iterations, **variants, **common)


def play(args: argparse.Namespace, variant: str, solution: Path) -> dict:
    """One timed search; the best game is certified and written as a solution record."""
    env = gym.make(ENV_IDS[variant]).unwrapped
    env.reset()
    agent = make_agent(args, variant)
    checkpoint = solution.with_name(solution.name.replace("_solution.json", ".ck.json"))
    run = reporting.timed_search(agent, env, args.time, checkpoint=checkpoint, resume=args.resume)
    reporting.interrupted(run, variant)
    record = make_record(
        env_id=ENV_IDS[variant],
        env_kwargs={},
        reset_seed=None,
        actions=run["actions"],
        score=run["score"],
        agent=args.algo,
        params=agent.params,
        seconds=run["seconds"],
        playouts=run["playouts"],
    )
    verdict = verify_record(record)
    if not verdict.ok:
        raise SystemExit(f"{variant}: the search's best game does not replay: {verdict.message}")
    write_record(solution, record)
    return {"variant": variant, **run, "params": agent.params, "solution": solution.name}


def row(run: dict) -> str:
    found = next(t for t, score in run["trace"] if score >= run["score"])
    published = PUBLISHED[run["variant"]]
    cells = " ".join(f"{published[c] if published[c] is not None else '-':>13}" for c in COLUMNS)
    return f"{run['variant']:>3} {run['score']:>5.0f} {found:>9.1f} {run['playouts']:>12,} {cells}"


def plot(runs: list[dict], path: Path, title: str) -> None:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 4.5), squeeze=False)
    for ax, run in zip(axes[0], runs):
        xs = [max(t, 1e-3) for t, _ in run["trace"]]
        ys = [s for _, s in run["trace"]]
        ax.step(xs, ys, where="post", label="ours")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        for k, (column, moves) in enumerate(PUBLISHED[run["variant"]].items(), start=1):
            if moves is not None:
                ax.axhline(moves, color=f"C{k}", linestyle="--", label=f"{column}: {moves}")
        ax.set_xlabel("seconds")
        ax.set_ylabel("best game (moves)")
        ax.set_title(f"Morpion {run['variant']}")
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", choices=sorted(ENV_IDS), default=["5D", "5T"])
    parser.add_argument("--algo", choices=("nmcs", "nrpa"), default="nrpa")
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=100, help="NRPA's N per level")
    parser.add_argument("--time", type=float, default=60.0, help="seconds per variant")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--backend", choices=("local", "ray"), default="local")
    reporting.add_run_arguments(parser, "variants", "<out>_<variant>.ck.json")
    args = parser.parse_args(argv)
    out = (
        args.out or ROOT / "benchmarks" / "out" / f"morpion_records_{args.algo}_l{args.level}.json"
    )
    print(
        f"Morpion Solitaire: {args.algo} level {args.level}, {args.time:g} s per variant, "
        f"{args.workers} worker(s), {args.backend}"
    )
    print(
        f"{'var':>3} {'ours':>5} {'found at s':>9} {'playouts':>12} "
        + " ".join(f"{c:>13}" for c in COLUMNS)
    )
    origin = reporting.provenance(argv)
    runs = (
        reporting.previous_runs(out, "variants", "variant", sorted(ENV_IDS)) if args.resume else []
    )
    for run in runs:
        print(row(run))
    for variant in args.variants:
        if any(r["variant"] == variant for r in runs):
            continue
        solution = out.with_name(f"{out.stem}_{variant}_solution.json")
        run = play(args, variant, solution)
        run["commit"] = origin["commit"]
        runs.append(run)
        print(row(run), flush=True)
        report = {
            **origin,
            "algo": args.algo,
            "level": args.level,
            "iterations": args.iterations,
            "time": args.time,
            "workers": args.workers,
            "backend": args.backend,
            "agent": runs[-1]["params"] if runs else None,
            "published": PUBLISHED,
            "variants": runs,
        }
        reporting.save_report(out, report)  # after every variant
        reporting.drop_checkpoint(
            solution.with_name(solution.name.replace("_solution.json", ".ck.json"))
        )
    print(f"wrote {out}")
    if args.plot and runs:
        png = out.with_suffix(".png")
        plot(runs, png, f"{args.algo} level {args.level}, {args.workers} worker(s)")
        print(f"wrote {png}")


if __name__ == "__main__":
    main()
