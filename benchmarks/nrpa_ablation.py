"""NRPA's variants at equal time on the standard SameGame set: one command, resumable, with a plot.

    python benchmarks/nrpa_ablation.py --time-per-position 60 --workers 2 --resume
    python benchmarks/nrpa_ablation.py --time-per-position 20 --workers 1 --positions 1 2 3 4 \\
        --configs tabu bias-neg bias-pos --out-dir benchmarks/out/screen

Every configuration is NRPA level 3 (N = 100) run by ``samegame_standard.py`` on each position for
the same wall time, with the same seeds; its report goes to ``<out-dir>/<config>.json`` after every
position, so ``--resume`` plays only what is missing. At the end, the totals and per-position scores
of every configuration played so far go to ``<out-dir>/summary.json``, with a plot beside it
(``summary.png``: the totals, and each position's score minus plain NRPA's). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import samegame_standard  # noqa: E402
from benchmarks.reporting import provenance, save_report  # noqa: E402

CONFIGS: dict[str, list[str]] = {
    "plain": ["--policy", "random"],
    "tabu": ["--policy", "tabu"],
    "portfolio": ["--policy", "tabu", "random"],
    "codes-action": ["--policy", "tabu", "--codes", "action"],
    "tabu-late": ["--policy", "tabu-late"],
    "bias-neg": ["--policy", "tabu", "--bias", "-0.3"],
    "bias-pos": ["--policy", "tabu", "--bias", "0.3"],
    "stabilize-2": ["--policy", "tabu", "--stabilize", "2"],
    "repeats-20": ["--policy", "tabu", "--repeats", "20"],
    "stabilize-2-repeats-20": ["--policy", "tabu", "--stabilize", "2", "--repeats", "20"],
    "portfolio-stabilize-2-repeats-20": [
        *("--policy", "tabu", "random"),
        *("--stabilize", "2", "--repeats", "20"),
    ],
    "race-stabilize-2-repeats-20": [
        *("--parallel", "race"),
        *("--stabilize", "2", "--repeats", "20"),
    ],
}
"""Each configuration's options of ``samegame_standard.py`` (besides level, time and workers)."""


def summary(out_dir: Path, names: list[str]) -> dict:
    """Totals and per-position scores of every configuration with a report in ``out_dir``."""
    rows = {}
    for name in names:
        path = out_dir / f"{name}.json"
        if path.exists():
            report = json.loads(path.read_text())
            rows[name] = {
                "options": CONFIGS[name],
                "total": report["total"],
                "positions": {r["position"]: r["score"] for r in report["positions"]},
                "playouts": sum(r["playouts"] for r in report["positions"]),
            }
    return rows


def plot(rows: dict, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(rows)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    totals = [rows[n]["total"] for n in names]
    ax1.barh(names, totals, color="tab:blue")
    for i, total in enumerate(totals):
        ax1.text(total, i, f" {total:,.0f} ({len(rows[names[i]]['positions'])} pos.)", va="center")
    ax1.set_xlim(min(totals) * 0.97, max(totals) * 1.03)
    ax1.set_xlabel("total score over the positions played")
    base = rows.get("plain")
    if base:
        for n in names:
            common = sorted(set(rows[n]["positions"]) & set(base["positions"]))
            diff = [rows[n]["positions"][p] - base["positions"][p] for p in common]
            ax2.plot(common, diff, marker="o", linewidth=0.8, label=n)
        ax2.set_xticks(sorted(base["positions"]))
        ax2.axhline(0, color="black", linewidth=0.6)
        ax2.set_xlabel("position")
        ax2.set_ylabel("score minus plain NRPA's")
        ax2.legend(fontsize=7, ncol=2)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-per-position", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--positions", type=int, nargs="*", default=list(range(1, 21)))
    parser.add_argument("--configs", nargs="*", choices=list(CONFIGS), default=list(CONFIGS))
    parser.add_argument("--out-dir", type=Path, default=None)
    parser.add_argument("--resume", action="store_true", help="play only what the reports lack")
    args = parser.parse_args(argv)
    seconds = f"{args.time_per_position:g}"
    out_dir = args.out_dir or ROOT / "benchmarks" / "results" / f"nrpa_ablation_{seconds}s"
    origin = provenance(argv)
    for name in args.configs:
        options = CONFIGS[name]
        if name.startswith("portfolio") and args.workers < 2:
            print(f"{name}: skipped, a portfolio needs 2 workers")
            continue
        print(f"\n== {name}: {' '.join(options)}", flush=True)
        samegame_standard.main(
            [
                *options,
                "--level",
                str(args.level),
                "--time-per-position",
                seconds,
                "--workers",
                str(args.workers),
                "--seed",
                str(args.seed),
                "--positions",
                *map(str, args.positions),
                "--out",
                str(out_dir / f"{name}.json"),
                *(["--resume"] if args.resume else []),
            ]
        )
    rows = summary(out_dir, list(CONFIGS))
    print(f"\n{'config':<34} {'total':>8} {'positions':>9} {'playouts':>12}")
    for name, row in rows.items():
        print(f"{name:<34} {row['total']:>8,.0f} {len(row['positions']):>9} {row['playouts']:>12,}")
    save_report(out_dir / "summary.json", {**origin, "configs": rows})
    title = f"NRPA level {args.level}, {seconds} s a position, {args.workers} worker(s)"
    plot(rows, out_dir / "summary.png", title)
    print(f"wrote {out_dir / 'summary.json'} and summary.png")


if __name__ == "__main__":
    main()
