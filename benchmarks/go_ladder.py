"""The Go ladder of issue 43: UCT's settings one by one against GNU Go 3.8 at level 10 on 9x9.

Gelly and Silver (AIJ 2011) measured MoGo's settings against GNU Go 3.7 level 10 on 9x9; this
runs our UCT through the same steps, each an arm of ``mc-envs arena`` (colours alternating, komi
7.5, Tromp-Taylor scoring after two passes, GNU Go's own ``final_score`` recorded beside ours),
every game saved as SGF under ``benchmarks/results/go_ladder/<arm>/`` with the match's record
``arena.json``::

    python benchmarks/go_ladder.py --arms random eye rave --jobs 2 --hours 1   # play, resumable
    python benchmarks/go_ladder.py --table                                      # the results table

A run plays each arm named up to its number of games, two games at a time with ``--jobs 2`` (each
side uses one core), and stops after ``--hours`` (the games in progress are lost, the others
kept): run it again and it goes on where the records end. ``--table`` reads the records only and
prints the results page's table (``--out``: also the JSON summary).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from reporting import ROOT, provenance, save_report

GNUGO = "/usr/games/gnugo --mode gtp --chinese-rules --positional-superko --capture-all-dead"
LEVEL10 = f"gtp:{GNUGO} --level 10"
MONTE_CARLO = f"gtp:{GNUGO} --level 10 --monte-carlo"
RESULTS = ROOT / "benchmarks" / "results" / "go_ladder"
BASE = "uct:iterations=3000,reuse=false"


class Arm(NamedTuple):
    """One setting of the ladder: our agent's spec against an opponent, on a board size."""

    name: str
    what: str  # the setting, as the results table says it
    spec: str
    opponent: str = LEVEL10
    games: int = 50
    size: int = 9


ARMS = [
    Arm("random", "UCT, uniform random playouts", f"{BASE},policy=random"),
    Arm("eye", "+ the eye rule (`policy=eye`)", f"{BASE},policy=eye"),
    Arm("rave", "+ RAVE (`rave=1000`, `c=0`)", f"{BASE},policy=eye,rave=1000,c=0"),
    Arm("mogo", "+ MoGo's playouts (`policy=mogo`)", f"{BASE},policy=mogo,rave=1000,c=0"),
    Arm(
        "priors",
        "+ priors (`knowledge=mogo`)",
        f"{BASE},policy=mogo,rave=1000,c=0,knowledge=mogo",
    ),
    Arm(
        "reuse",
        "+ tree reuse (`reuse=true`)",
        "uct:iterations=3000,policy=mogo,rave=1000,c=0,knowledge=mogo,reuse=true",
    ),
    Arm(
        "full-10k",
        "the same at 10,000 playouts a move",
        "uct:iterations=10000,policy=mogo,rave=1000,c=0,knowledge=mogo,reuse=true",
        games=100,
    ),
    Arm("uct-go", "`uct-go`, its time setting", "uct-go", games=100),
    Arm(
        "uct-go-mc",
        "`uct-go`, against GNU Go's Monte Carlo mode (`--monte-carlo`)",
        "uct-go",
        opponent=MONTE_CARLO,
        games=50,
    ),
    Arm("uct-go-13", "`uct-go` on 13x13", "uct-go", games=20, size=13),
]
BY_NAME = {arm.name: arm for arm in ARMS}


def play(arm: Arm, jobs: int, deadline: float) -> bool:
    """Plays the arm's missing games (resuming its record) until the deadline; True when the arm
    has all its games."""
    folder = RESULTS / arm.name
    done = _games_done(folder)
    if done >= arm.games:
        return True
    left = deadline - time.time()
    if left <= 0:
        return False
    command = [sys.executable, "-m", "mc_envs.cli", "arena", "go", arm.spec, arm.opponent]
    command += ["--games", str(arm.games), "--sgf-dir", str(folder), "--jobs", str(jobs)]
    command += ["--size", str(arm.size), "--komi", "7.5"]
    command += ["--resume"] if (folder / "arena.json").exists() else []
    print(f"{arm.name}: {done}/{arm.games} games recorded; playing on", flush=True)
    child = subprocess.Popen(command, cwd=ROOT, start_new_session=True)
    try:
        child.wait(timeout=left)
    except subprocess.TimeoutExpired:
        # The arena ends its games and keeps its record on SIGTERM (SIGINT may be ignored: a
        # process started in the background inherits that).
        os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        return False
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    if child.returncode in (130, 143, -signal.SIGTERM):  # stopped from outside: kept, resumable
        return False
    if child.returncode != 0:
        raise SystemExit(f"{arm.name}: the arena exited with {child.returncode}")
    return _games_done(folder) >= arm.games


def _record(folder: Path) -> dict | None:
    path = folder / "arena.json"
    return json.loads(path.read_text()) if path.exists() else None


def _games_done(folder: Path) -> int:
    record = _record(folder)
    return 0 if record is None else len(record["games"])


def rows() -> list[dict]:
    """One row per arm with a record: its setting and agent A's summary."""
    out = []
    for arm in ARMS:
        record = _record(RESULTS / arm.name)
        if record is not None and record["games"]:
            out.append({"arm": arm.name, "what": arm.what, "spec": arm.spec,
                        "opponent": arm.opponent, "size": arm.size, "target": arm.games,
                        "summary": record["summary"]})  # fmt: skip
    return out


def table(found: list[dict]) -> str:
    """The results page's table: every arm in the ladder's order, those not played yet too."""
    lines = [
        "| arm | setting | board | games | wins | win rate | 95% interval | as Black | as White "
        "| GNU Go's count differs | s a game |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    played = {row["arm"]: row["summary"] for row in found}
    for arm in ARMS:
        head = f"| `{arm.name}` | {arm.what} | {arm.size}x{arm.size} "
        s = played.get(arm.name)
        if s is None:
            lines.append(head + f"| 0 of {arm.games} | not played yet | | | | | | |")
            continue
        lo, hi = s["interval"]
        lines.append(
            head + f"| {s['games']} of {arm.games} | {s['wins']} | {100 * s['score']:.0f}% "
            f"| {100 * lo:.0f}-{100 * hi:.0f}% "
            f"| {s['as_black']['wins']}/{s['as_black']['games']} "
            f"| {s['as_white']['wins']}/{s['as_white']['games']} "
            f"| {s['disagreements']} of {s['compared']} | {s['seconds_per_game']:.0f} |"
        )
    return "\n".join(lines)


def specs() -> str:
    """The arms' agent specs, as a list for the results page (a preset with its keywords)."""
    from mc_envs.agents.mcts.presets import SPEC_PRESETS

    def spec(arm: Arm) -> str:
        words = SPEC_PRESETS.get(arm.spec)
        if words is None:
            return f"`{arm.spec}`"
        return f"`{arm.spec}` = `UCT(" + ", ".join(f"{k}={v!r}" for k, v in words.items()) + ")`"

    return "\n".join(f"- `{arm.name}`: {spec(arm)}" for arm in ARMS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", nargs="+", choices=list(BY_NAME), default=[])
    parser.add_argument("--jobs", type=int, default=2, help="games at a time (default 2)")
    parser.add_argument("--hours", type=float, default=1.0, help="stop playing after this long")
    parser.add_argument("--table", action="store_true", help="print the results table")
    parser.add_argument("--out", type=Path, help="with --table: write the JSON summary here")
    args = parser.parse_args(argv)
    deadline = time.time() + 3600 * args.hours
    for name in args.arms:
        if not play(BY_NAME[name], args.jobs, deadline):
            print(f"{name}: stopped before its last game; run again to go on", flush=True)
            break
    if args.table:
        found = rows()
        print(table(found))
        print()
        print(specs())
        if args.out is not None:
            save_report(args.out, {**provenance(argv), "arms": found})
    return 0


if __name__ == "__main__":
    sys.exit(main())
