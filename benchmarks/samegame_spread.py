"""The spread between seeds of one configuration on the standard SameGame set, games re-checked.

    python benchmarks/samegame_spread.py benchmarks/results/samegame_standard_..._seed0.json \\
        benchmarks/results/samegame_standard_..._seed1.json --out benchmarks/results/spread.json

Reads two or more reports of ``samegame_standard.py`` that differ only in ``--seed``, replays every
game in a fresh env (an illegal move or a score that differs is an error), and prints each
position's score per seed with its minimum, maximum and range, then each seed's total over the
positions that every report has, their mean and range. Reports of a race in heats (``--heats``)
also get each heat's total: per position, the best game of that heat alone (the best final or probe
of its rows in the position's race table), so that what the later heats added is measured. A
report that is unreadable, lacks a field, or whose configuration differs from the first one's is
named with the field, and the script exits with status 2. Nothing is asserted about the scores.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.reporting import provenance, save_report  # noqa: E402
from benchmarks.samegame_standard import replayed  # noqa: E402

SAME = (
    "algo",
    "policy",
    "level",
    "iterations",
    "time_per_position",
    "workers",
    "variants",
    "parallel",
    "heats",
)
"""The fields that every report must share (the configuration)."""


class ReportError(ValueError):
    """A report that cannot be used, with the file and field at fault."""


def _load(path: Path) -> dict:
    try:
        report = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not a readable JSON report ({exc})") from None
    if not isinstance(report, dict) or not isinstance(report.get("positions"), list):
        raise ReportError(f"{path}: field 'positions': missing or not a list")
    for i, run in enumerate(report["positions"]):
        where = f"{path}: positions[{i}]"
        if not isinstance(run, dict):
            raise ReportError(f"{where}: not an object")
        position, score, actions = run.get("position"), run.get("score"), run.get("actions")
        if isinstance(position, bool) or not isinstance(position, int) or not 1 <= position <= 20:
            raise ReportError(f"{where}: field 'position': {position!r} is not 1..20")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ReportError(f"{where}: field 'score': {score!r} is not a number")
        if not isinstance(actions, list) or not all(
            isinstance(a, int) and not isinstance(a, bool) and 0 <= a < 225 for a in actions
        ):
            raise ReportError(f"{where}: field 'actions': not a list of cells 0..224")
    return report


def _checked(path: Path, report: dict) -> dict[int, float]:
    """Each position's score, after its game replays to it."""
    scores: dict[int, float] = {}
    for run in report["positions"]:
        position = run["position"]
        try:
            got = replayed(position, run["actions"])
        except ValueError as exc:  # IllegalActionError
            raise ReportError(
                f"{path}: position {position}: the game does not replay: {exc}"
            ) from None
        if got != run["score"]:
            raise ReportError(
                f"{path}: position {position}: the game replays to {got:g}, not {run['score']:g}"
            )
        scores[position] = float(run["score"])
    return scores


def _heat_bests(path: Path, run: dict, heats: int) -> list[float]:
    """Each heat's best score in a position's race table (``run["race"]``), heat 0 first."""
    rows = run.get("race")
    where = f"{path}: position {run['position']}: field 'race'"
    if not isinstance(rows, list):
        raise ReportError(f"{where}: missing or not a list in a report of heats")
    bests: dict[int, float] = {}
    for i, row in enumerate(rows):
        heat = row.get("heat") if isinstance(row, dict) else None
        if isinstance(heat, bool) or not isinstance(heat, int) or not 0 <= heat < heats:
            raise ReportError(f"{where}[{i}]: field 'heat': {heat!r} is not a heat 0..{heats - 1}")
        for key in ("probe", "final"):
            x = row.get(key)
            if x is None:
                continue
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise ReportError(f"{where}[{i}]: field {key!r}: {x!r} is not a number")
            bests[heat] = max(bests.get(heat, x), x)
    if len(bests) != heats:
        raise ReportError(f"{where}: scores for heats {sorted(bests)}, not for all {heats}")
    if max(bests.values()) != run["score"]:
        raise ReportError(f"{where}: its heats' best {max(bests.values()):g} is not the score")
    return [bests[h] for h in range(heats)]


def _heat_totals(path: Path, report: dict, common: list[int]) -> list[float] | None:
    """Each heat's total over the ``common`` positions (None for a report without heats)."""
    heats = report.get("heats")
    if isinstance(heats, bool) or not isinstance(heats, int) or heats < 2:
        return None
    runs = {run["position"]: run for run in report["positions"]}
    bests = [_heat_bests(path, runs[p], heats) for p in common]
    return [sum(b[h] for b in bests) for h in range(heats)]


def _seed(report: dict) -> int | None:
    """The report's ``--seed`` (from its field, or the command that wrote it; None if neither)."""
    if isinstance(report.get("seed"), int):
        return report["seed"]
    words = str(report.get("command", "")).split()
    if "--seed" not in words:
        return 0  # samegame_standard.py's default
    i = words.index("--seed") + 1
    return int(words[i]) if i < len(words) and words[i].lstrip("-").isdigit() else None


def spread(paths: list[Path]) -> dict:
    """The per-position and total spread of the reports (see the module docstring)."""
    reports = [_load(p) for p in paths]
    for path, report in zip(paths[1:], reports[1:]):
        for field in SAME:
            if report.get(field) != reports[0].get(field):
                raise ReportError(
                    f"{path}: field {field!r}: {report.get(field)!r}, but {paths[0]} has "
                    f"{reports[0].get(field)!r} (compare runs of one configuration)"
                )
    scores = [_checked(p, r) for p, r in zip(paths, reports)]
    common = sorted(set.intersection(*(set(s) for s in scores)))
    rows = []
    for position in common:
        values = [s[position] for s in scores]
        rows.append(
            {"position": position, "scores": values, "min": min(values), "max": max(values)}
        )
    totals = [sum(s[p] for p in common) for s in scores]
    heats = [_heat_totals(p, r, common) for p, r in zip(paths, reports)]
    return {
        "reports": [str(p) for p in paths],
        "seeds": [_seed(r) for r in reports],
        "configuration": {f: reports[0].get(f) for f in SAME},
        "positions": rows,
        "totals": totals,
        "mean_total": sum(totals) / len(totals) if totals else 0.0,
        "range_total": (max(totals) - min(totals)) if totals else 0.0,
        "heat_totals": heats,
        "replayed": True,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+", help="samegame_standard.py reports")
    parser.add_argument("--out", type=Path, default=None, help="also write the spread as JSON")
    args = parser.parse_args(argv)
    if len(args.reports) < 2:
        parser.error("give at least two reports (one per seed)")
    try:
        result = spread(args.reports)
    except ReportError as exc:
        print(f"samegame_spread: {exc}", file=sys.stderr)
        return 2
    n = len(args.reports)
    print(
        f"{'pos':>3} " + " ".join(f"{'run ' + str(i):>8}" for i in range(n)) + "      min      max"
    )
    for row in result["positions"]:
        cells = " ".join(f"{s:>8,.0f}" for s in row["scores"])
        print(f"{row['position']:>3} {cells} {row['min']:>8,.0f} {row['max']:>8,.0f}")
    totals = " ".join(f"{t:>8,.0f}" for t in result["totals"])
    print(
        f"{'all':>3} {totals}   mean {result['mean_total']:,.0f}, range {result['range_total']:,.0f}"
    )
    for i, heats in enumerate(result["heat_totals"]):
        if heats is not None:
            alone = ", ".join(f"heat {h} {t:,.0f}" for h, t in enumerate(heats))
            print(f"run {i}, each heat alone: {alone}; best of them {result['totals'][i]:,.0f}")
    print(f"{len(result['positions'])} positions in every report; every game replays to its score")
    if args.out:
        save_report(args.out, {**provenance(argv), **result})
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
