"""The standard SameGame set: our NMCS or NRPA on the 20 positions beside the published columns.

    python benchmarks/samegame_standard.py --algo nrpa --level 4 --time-per-position 600 --workers 2
    python benchmarks/samegame_standard.py --algo nmcs --level 3 --time-per-position 60 --plot
    python benchmarks/samegame_standard.py --algo nrpa --level 3 --time-per-position 5 --positions 1 2
    python benchmarks/samegame_standard.py --policy tabu --bias -0.5 --stabilize 2 --resume --out F
    python benchmarks/samegame_standard.py --parallel race --heats 2 --stabilize 2 --repeats 20 \
        --time-per-position 600 --workers 2 --seed 0 --resume --plot --out F

Prints one row per position (our score, playouts, and the published SP-MCTS 2008, NMCS level 3 and
selective NRPA level 4 scores from mc_envs/data/samegame/published_scores.csv) and the totals;
writes everything, with each position's best score against time, to benchmarks/out/
samegame_standard_<algo>_l<level>.json; with ``--plot``, draws the score of every position against
time (matplotlib, Agg backend) into a PNG beside it, like the figures of the NMCS paper.
NRPA's variants (mc_envs.agents.nested.nrpa_options) are options. Every game found is replayed in a fresh env
and must give its score. A position's search keeps a checkpoint beside the report until the
position is reported: ``--resume`` continues it for the time it has left.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402

import mc_envs  # noqa: E402, F401
from benchmarks import reporting  # noqa: E402
from mc_envs.agents import NMCS, NRPA  # noqa: E402

COLUMNS = {
    "SP-MCTS 2008": "SPMCTS1_Schadd2008",
    "NMCS L3": "NMCS_L3_mem_Cazenave2009",
    "sel. NRPA L4": "SelectiveNRPA_L4_Cazenave2016",
}


def published() -> dict[int, dict[str, int]]:
    """Per position, the published scores of the columns shown."""
    text = resources.files("mc_envs").joinpath("data/samegame/published_scores.csv").read_text()
    rows = {}
    for row in csv.DictReader(text.splitlines()):
        rows[int(row["position"])] = {name: int(row[key]) for name, key in COLUMNS.items()}
    return rows


def variants(args: argparse.Namespace) -> dict:
    """NRPA's variant options given on the command line (mc_envs.agents.nested.nrpa_options)."""
    return {
        "tau": args.tau,
        "bias": args.bias,
        "stabilize": args.stabilize,
        "repeats": args.repeats,
        "codes": args.codes,
    }


def warm_starts(path: Path | None) -> dict[int, list[int]]:
    """Each position's actions in an earlier report (``--warm-from``), for NRPA's warm starts."""
    if path is None:
        return {}
    return {
        int(r["position"]): list(r["actions"]) for r in json.loads(path.read_text())["positions"]
    }


def make_agent(args: argparse.Namespace, position: int, warm: dict[int, list[int]]):
    seed = args.seed * 100 + position
    policy = tuple(args.policy or [None])  # NRPA reads a tuple of one name as that name
    common = {"seed": seed, "workers": args.workers, "backend": args.backend}
    if args.parallel != "root":
        common["parallel"] = args.parallel
    if args.algo == "nmcs":
        return NMCS(level=args.level, policy=policy[0], **common)
    return NRPA(
        level=args.level,
        iterations=args.iterations,
        policy=policy,
        warm_start=warm.get(position),
        heats=args.heats,
        **variants(args),
        **common,
    )


def replayed(position: int, actions: list[int]) -> float:
    """The score of ``actions`` replayed in a fresh env of the position (strict: an illegal move
    raises)."""
    env = gym.make("mc_envs/SameGame-v0", position=position, illegal_action="raise").unwrapped
    env.reset()
    for a in actions:
        env.step(a)
    return float(env.score)


def play(
    args: argparse.Namespace, position: int, warm: dict[int, list[int]], checkpoint: Path
) -> dict:
    env = gym.make("mc_envs/SameGame-v0", position=position).unwrapped
    env.reset()
    agent = make_agent(args, position, warm)
    found = reporting.timed_search(agent, env, args.time_per_position, checkpoint, args.resume)
    reporting.interrupted(found, f"position {position}")
    run = {"position": position, **found}
    if replayed(position, run["actions"]) != run["score"]:
        raise RuntimeError(f"position {position}: the game found does not replay to its score")
    run["replayed"] = True
    return run


def plot(runs: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for run in runs:
        xs = [t for t, _ in run["trace"]]
        ys = [s for _, s in run["trace"]]
        ax1.step(xs, ys, where="post", linewidth=0.8, label=str(run["position"]))
    ax1.set_xlabel("seconds")
    ax1.set_ylabel("best score")
    ax1.set_title("each position")
    ax1.legend(fontsize=6, ncol=2)
    horizon = max(max(t for t, _ in run["trace"]) for run in runs)
    grid = [horizon * i / 200 for i in range(201)]
    totals = [sum(reporting.best_at(run["trace"], t) for run in runs) for t in grid]
    ax2.plot(grid, totals, label=f"ours: {totals[-1]:,.0f}")
    table = published()
    for name, color in zip(COLUMNS, ("tab:gray", "tab:red", "tab:green")):
        total = sum(table[r["position"]][name] for r in runs)
        ax2.axhline(total, color=color, linestyle="--", linewidth=0.8, label=f"{name}: {total:,}")
    ax2.set_xlabel("seconds per position")
    ax2.set_ylabel("total score")
    ax2.set_title("total over the positions played")
    ax2.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def print_row(run: dict, table: dict, names: list[str]) -> None:
    cells = " ".join(f"{table[run['position']][n]:>13,}" for n in names)
    print(f"{run['position']:>3} {run['score']:>7,.0f} {run['playouts']:>10,} {cells}", flush=True)


def write_report(
    out: Path, args: argparse.Namespace, origin: dict, runs: list, table: dict, names
) -> None:
    """The JSON report of the positions played so far, written atomically."""
    report = {
        **origin,
        "algo": args.algo,
        "policy": args.policy,
        "level": args.level,
        "iterations": args.iterations,
        "time_per_position": args.time_per_position,
        "workers": args.workers,
        "backend": args.backend,
        **({"parallel": args.parallel} if args.parallel != "root" else {}),
        **({"heats": args.heats} if args.heats != 1 else {}),
        "seed": args.seed,
        **({"variants": variants(args)} if args.algo == "nrpa" else {}),
        "warm_from": str(args.warm_from) if args.warm_from else None,
        "total": sum(r["score"] for r in runs),
        "published_totals": {n: sum(table[r["position"]][n] for r in runs) for n in names},
        "positions": sorted(runs, key=lambda r: r["position"]),
    }
    reporting.save_report(out, report)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", choices=("nmcs", "nrpa"), default="nrpa")
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=100, help="NRPA's N per level")
    parser.add_argument("--time-per-position", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--backend", choices=("local", "ray"), default="local")
    parser.add_argument(
        "--policy",
        choices=("tabu", "tabu-late", "random", *(f"tabu-{k}" for k in range(2, 6))),
        nargs="+",
        default=None,
        help="NRPA's selective tabu colour (tabu-k: the colour with the k-th most cells) or plain "
        "NRPA, or several (NRPA: one per worker, a portfolio; or the policies of a race); NMCS's "
        "playouts (default: tabu)",
    )
    parser.add_argument(
        "--parallel",
        choices=("root", "race"),
        default="root",
        help="NRPA: root workers, or a race of the policies (default: every tabu colour and plain "
        "NRPA probe, the best --workers continue; mc_envs.agents.parallel.race)",
    )
    parser.add_argument(
        "--heats",
        type=int,
        default=1,
        help="NRPA race: split each position's time into this many races with fresh seeds, the "
        "best game kept (mc_envs.agents.parallel.race)",
    )
    parser.add_argument("--bias", type=float, default=0.0, help="NRPA: GNRPA's bias weight")
    parser.add_argument("--codes", choices=("game", "action"), default="game", help="NRPA's key")
    parser.add_argument(
        "--warm-from", type=Path, default=None, help="NRPA: warm-start from this report's games"
    )
    parser.add_argument("--positions", type=int, nargs="*", default=list(range(1, 21)))
    reporting.add_run_arguments(parser, "positions", "<out>_p<position>.ck.json")
    args = parser.parse_args(argv)
    if args.algo == "nmcs" and args.policy and len(args.policy) > 1:
        parser.error("--policy: a portfolio of several policies is NRPA's (--algo nrpa)")
    if args.algo == "nmcs" and args.parallel == "race":
        parser.error("--parallel race: a race is NRPA's (--algo nrpa)")
    if args.heats < 1 or args.heats > 1 and args.parallel != "race":
        parser.error("--heats: an int >= 1; more than one needs --parallel race")

    table = published()
    names = list(COLUMNS)
    header = f"{'pos':>3} {'ours':>7} {'playouts':>10} " + " ".join(f"{n:>13}" for n in names)
    print(
        f"SameGame standard set: {args.algo} level {args.level}, {args.time_per_position:g} s per "
        f"position, {args.workers} worker(s), {args.backend}"
    )
    print(header)
    out = (
        args.out
        or ROOT / "benchmarks" / "out" / f"samegame_standard_{args.algo}_l{args.level}.json"
    )
    origin = reporting.provenance(argv)
    runs = (
        reporting.previous_runs(out, "positions", "position", args.positions) if args.resume else []
    )
    if runs:
        print(f"resuming from {out}: positions {[r['position'] for r in runs]} already played")
    for run in runs:
        print_row(run, table, names)
    warm = warm_starts(args.warm_from)
    for position in args.positions:
        if any(r["position"] == position for r in runs):
            continue
        checkpoint = out.with_name(f"{out.stem}_p{position}.ck.json")
        run = play(args, position, warm, checkpoint)
        run["commit"] = origin["commit"]
        runs.append(run)
        print_row(run, table, names)
        write_report(out, args, origin, runs, table, names)  # after every position
        reporting.drop_checkpoint(checkpoint)
    ours = sum(r["score"] for r in runs)
    totals = {n: sum(table[r["position"]][n] for r in runs) for n in names}
    print(
        f"{'all':>3} {ours:>7,.0f} {sum(r['playouts'] for r in runs):>10,} "
        + " ".join(f"{totals[n]:>13,}" for n in names)
    )
    write_report(out, args, origin, runs, table, names)
    print(f"wrote {out}")
    if args.plot:
        png = out.with_suffix(".png")
        plot(runs, png, f"{args.algo} level {args.level}, {args.workers} worker(s)")
        print(f"wrote {png}")


if __name__ == "__main__":
    main()
