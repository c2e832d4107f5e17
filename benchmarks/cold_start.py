"""Cold start: seconds to the first result on an empty numba cache, side by side with pgx.

    python benchmarks/cold_start.py --out benchmarks/results/cold_start.json [--resume] [--quick]

Every case runs in a fresh process whose ``NUMBA_CACHE_DIR`` is a new, empty directory, then
again in a second fresh process on the cache the first one filled ("cached"). Seconds count from
the process's start (imports included) to the first result:

- ``<Id> env``: ``gym.make``, ``reset(seed=0)`` and a first ``step`` of every id's single env
  (target 1 s); pgx's jitted ``init`` and ``step`` for the games it has.
- ``<Id> nmcs``, ``nrpa``, ``uct``, ``puct``, ``search_batch``: the env made, then a first search
  (NMCS and NRPA level 1, 1,000 playouts, on the puzzles; UCT and PUCT 1,000 iterations;
  ``PUCT.search_batch`` over 8 sub-envs, 100 simulations) (target 5 s).
- ``<Id> vector``: :mod:`benchmarks.vector_cold` (N = 1,024; target: pgx's first step, and no
  later step over 100 ms), where that module is present; ``--repeat K`` runs ours and pgx's K
  times each, alternately, and compares the medians of their first steps. For the env and
  search cases, ``--repeat K`` makes K cold runs, each on its own empty cache, and reports the
  median one.
- ``warmup``: ``python -m mc_envs.agents.warmup`` on an empty cache, then on the cache it filled:
  total seconds, each entry's seconds cold and cached, peak resident memory (target 120 s, 1 GB).

The package's Python bytecode is compiled first, as an installed wheel's is (a machine that sets
``PYTHONDONTWRITEBYTECODE`` would otherwise compile ``mc_envs``'s sources in every process).

Each cold case also says where its compile time went: numba's ``numba:compile`` events, the
functions of most CPU seconds of their own (their callees' compiles not counted), and the
process's CPU seconds to the first result (``cpu_s``: steadier than the wall clock on a busy
machine, but one core's work only: numba compiles on one). The report is
written after every case, each with the commit and date it was measured at; ``--resume`` skips
the cases it already holds (``--again``: measures the chosen ones again, ``--kinds`` or ``--cases``
choosing them). Nothing is asserted. ``search_batch``'s result (root visits and actions) is
compared as the others' (score and moves) with the compiled search's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.reporting import (  # noqa: E402
    package_bytecode,
    provenance,
    run_code,
    save_report,
)

ROOT = Path(__file__).resolve().parent.parent
PGX = {"ConnectFour-v0": "connect_four", "TicTacToe-v0": "tic_tac_toe", "Go-v0": "go_9x9"}
TARGET = {"env": 1.0, "search": 5.0, "warmup": 120.0}
RSS_TARGET = 2**30
ENTRY = re.compile(r"^  (.+?)\s+([0-9.]+) s  (.+)$")  # a line of the warm-up
QUICK = ("SameGame-v0 env", "SameGame-v0 nmcs", "ConnectFour-v0 env", "ConnectFour-v0 uct")

_PROBE = r"""
from numba.core import event
stack, own = [], {}
class _Compiles(event.Listener):
    def on_start(self, ev):
        stack.append([ev.data["dispatcher"].py_func.__qualname__, time.process_time(), 0.0])
    def on_end(self, ev):
        name, start, inner = stack.pop()
        took = time.process_time() - start
        if stack:
            stack[-1][2] += took
        own[name] = own.get(name, 0.0) + took - inner
event.register("numba:compile", _Compiles())
"""
_OURS = r"""
import time
t0 = time.perf_counter()
import json
import gymnasium as gym
import mc_envs
AGENTS
PROBE
t_import = time.perf_counter()
env = gym.make(ID)
env.reset(seed=0)
t_setup = time.perf_counter()
CALL
t_first = time.perf_counter()
top = sorted(own.items(), key=lambda kv: -kv[1])
from mc_envs import interpret
note = (getattr(globals().get("result"), "extra", None) or {}).get("compile") or {}
def digest(visits):  # search_batch's root visits, as a hash (a Morpion batch has 163,840)
    import hashlib, numpy
    return hashlib.sha1(numpy.asarray(visits, numpy.int64).tobytes()).hexdigest()[:16]
print(json.dumps({"first_s": round(t_first - t0, 3), "cpu_s": round(time.process_time(), 3),
                  "import_s": round(t_import - t0, 3),
                  "setup_s": round(t_setup - t_import, 3), "call_s": round(t_first - t_setup, 3),
                  "compile_cpu_s": round(sum(own.values()), 3), "compiles": len(own),
                  "top": [[k, round(v, 3)] for k, v in top[:8]],
                  "interpreted": interpret.interpreted[0], "stood_in": bool(note),
                  "result": None if "result" not in globals() else
                  [digest(result.visits), result.actions.tolist()] if hasattr(result, "visits")
                  else [float(result.score), list(map(int, result.actions))]}), flush=True)
interpret.wait(600)  # the children that fill the cache, before the cached run
if "compile_ahead" in globals():
    compile_ahead.wait(600)
"""
CALLS = {
    "env": "env.step(int(env.unwrapped.legal_actions()[0]))",
    "nmcs": "result = NMCS(level=1, seed=1).search(env, playouts=1000)",
    "nrpa": "result = NRPA(level=1, seed=1).search(env, playouts=1000)",
    "uct": "result = UCT(seed=1).search(env, iterations=1000)",
    "puct": "result = PUCT(seed=1).search(env, iterations=1000)",
    "search_batch": "vec = gym.make_vec(ID, num_envs=8)\nvec.reset(seed=0)\n"
    "result = PUCT(seed=1).search_batch(vec, simulations=100)",
}
_PGX = r"""
import time
t0 = time.perf_counter()
import json
import jax
import pgx
env = pgx.make(GAME)
state = jax.jit(env.init)(jax.random.PRNGKey(0))
state = jax.block_until_ready(jax.jit(env.step)(state, state.legal_action_mask.argmax()))
print(json.dumps({"first_s": round(time.perf_counter() - t0, 3)}))
"""


def child(code: str, cache: str, timeout: float = 900.0, ahead: bool = True) -> dict[str, Any]:
    """Runs ``code`` in a fresh process on the numba cache ``cache``: its last JSON line, or
    ``{"error": ...}``. ``ahead``: as a user's process runs (a cold env's kernels interpreted and
    a cold search's generic path standing in while children compile); else everything compiles
    in the process before it runs (``MC_ENVS_COMPILE_AHEAD=0``)."""
    return run_code(code, cache, timeout, MC_ENVS_COMPILE_AHEAD="1" if ahead else "0")


def first_result(env_id: str, kind: str, repeat: int = 1) -> dict[str, Any]:
    """A case of the ``env`` or ``search`` group: cold, then cached, and pgx's where it has
    the game (single env only). With ``repeat`` > 1 the cold run is made that many times, each
    on its own empty cache: ``cold`` is the run of the median first result (the lower middle
    one of an even count), and ``cold["first_s_runs"]`` lists every run's."""
    agents = (
        "" if kind == "env" else "from mc_envs.agents import NMCS, NRPA, PUCT, UCT, compile_ahead"
    )
    code = _OURS.replace("AGENTS", agents).replace("PROBE", _PROBE).replace("CALL", CALLS[kind])
    code = code.replace("ID", repr(env_id))
    runs, repeat = [], max(repeat, 1)
    for k in range(repeat):
        with tempfile.TemporaryDirectory(prefix="mc-envs-cold-") as cache:
            runs.append(child(code, cache))
            if k == repeat - 1:  # the cached run, on the last cold run's cache
                cached = child(code, cache)
    cold = median_run(runs)
    with tempfile.TemporaryDirectory(prefix="mc-envs-cold-") as cache:
        compiled = child(code, cache, ahead=False)
    short = env_id.partition("/")[2]
    peer = None
    if kind == "env" and short in PGX:
        peer = child(_PGX.replace("GAME", repr(PGX[short])), tempfile.gettempdir())
    group = "env" if kind == "env" else "search"
    same = None  # an env's first step; a search's result, search_batch's root visits
    if kind != "env":
        same = compiled.get("result") is not None and all(
            run.get("result") == compiled["result"] for run in runs
        )
    return {
        "group": group,
        "call": CALLS[kind],
        "cold": cold,
        "cached": cached,
        "compiled": compiled,
        "same_result": same,  # a search's first result, cold, as the compiled search's
        "pgx": peer,
    }


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of the median ``first_s`` (the lower middle one of an even count; a failed run
    counts as the slowest), with ``first_s_runs``, every run's in order (None: failed), where
    there are several."""
    ranked = sorted(runs, key=lambda run: run.get("first_s", float("inf")))
    middle = dict(ranked[(len(ranked) - 1) // 2])
    if len(runs) > 1:
        middle["first_s_runs"] = [run.get("first_s") for run in runs]
    return middle


def vector_case(env_id: str, steps: int, cap: float, repeat: int = 1) -> dict[str, Any]:
    """``benchmarks/vector_cold.py``'s cold start of the vector env at N = 1,024, and pgx's:
    with ``repeat`` > 1, each run that many times, alternately, the first steps their medians."""
    try:
        from benchmarks import vector_cold
    except ImportError:
        return {"group": "vector", "skipped": "benchmarks/vector_cold.py is not on this tree"}
    ours, peer = vector_cold.side_by_side(env_id, 1024, repeat=repeat, steps=steps, cap=cap)
    return {"group": "vector", "cold": ours, "pgx": peer}


def _tree_memory(pid: int, peak: dict[str, int], stop: threading.Event) -> None:
    """Samples ``pid`` and its descendants every 0.1 s: the peak of their summed resident memory
    (``peak["sum"]``) and the largest peak of one of them (``peak["max"]``, VmHWM), bytes."""
    while not stop.wait(0.1):
        parents: dict[int, int] = {}
        status: dict[int, dict[str, int]] = {}
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                fields = dict(
                    line.split(":", 1) for line in (proc / "status").read_text().splitlines()
                )
                parents[int(proc.name)] = int(fields["PPid"])
                status[int(proc.name)] = {
                    k: int(fields[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM") if k in fields
                }
            except (OSError, ValueError, KeyError):
                continue
        tree, grew = {pid}, True
        while grew:
            more = {p for p, parent in parents.items() if parent in tree} - tree
            tree |= more
            grew = bool(more)
        peak["sum"] = max(peak["sum"], sum(status.get(p, {}).get("VmRSS", 0) for p in tree))
        peak["max"] = max([peak["max"], *(status.get(p, {}).get("VmHWM", 0) for p in tree)])


def warmup_run(cache: str) -> dict[str, Any]:
    """``python -m mc_envs.agents.warmup`` on ``cache``: seconds, entries, memory."""
    package_bytecode()
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mc_envs.agents.warmup"],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak, stop = {"sum": 0, "max": 0}, threading.Event()
    sampler = threading.Thread(target=_tree_memory, args=(proc.pid, peak, stop), daemon=True)
    sampler.start()
    out, err = proc.communicate(timeout=3600)
    stop.set()
    sampler.join()
    entries = {}
    for line in out.splitlines():
        entry = ENTRY.match(line)
        if entry:
            name, seconds, what = entry.groups()
            entries[name] = {"seconds": float(seconds), "compiled": what.startswith("compiled")}
    return {
        "seconds": round(time.perf_counter() - start, 2),
        "exit": proc.returncode,
        "peak_rss_sum": peak["sum"],
        "peak_rss_max": peak["max"],
        "entries": entries,
        **({"error": err.strip()[-500:]} if proc.returncode else {}),
    }


def warmup_case() -> dict[str, Any]:
    """The warm-up on an empty cache, then again on the cache it filled."""
    with tempfile.TemporaryDirectory(prefix="mc-envs-cold-") as cache:
        cold = warmup_run(cache)
        cached = warmup_run(cache)
    return {"group": "warmup", "cold": cold, "cached": cached}


def cases(env_ids: list[str]) -> list[tuple[str, str, str]]:
    """Every case: (name, env id, kind), an id's cases together."""
    from mc_envs.registry import GAMES

    puzzles = {game.env_id for game in GAMES if game.players == 1}
    out = []
    for env_id in env_ids:
        short = env_id.partition("/")[2]
        kinds = ["env", *(["nmcs", "nrpa"] if env_id in puzzles else [])]
        for kind in (*kinds, "uct", "puct", "search_batch", "vector"):
            out.append((f"{short} {kind}", env_id, kind))
    first = [case for case in out if case[0] in QUICK]  # the cases, then the warm-up
    return [*first, ("warmup", "", "warmup"), *(case for case in out if case not in first)]


def line(name: str, case: dict[str, Any]) -> str:
    """A case's printed figures with their ratios to the target."""
    if "skipped" in case:
        return f"{name:<34} skipped: {case['skipped']}"
    cold, cached, peer = case["cold"], case.get("cached") or {}, case.get("pgx") or {}
    if "error" in cold:
        return f"{name:<34} error: {cold['error']}"
    if case["group"] == "warmup":
        return (
            f"{name:<34} {cold['seconds']:7.1f} s cold ({cold['seconds'] / 120:.2f}x the 120 s target), "
            f"{cached.get('seconds', 0):.1f} s cached; peak RSS: one process "
            f"{cold['peak_rss_max'] / 2**20:,.0f} MB, all at once {cold['peak_rss_sum'] / 2**20:,.0f}"
            f" MB ({cold['peak_rss_sum'] / RSS_TARGET:.2f}x the 1 GB target)"
        )
    if case["group"] == "vector":
        worst = cold.get("worst_later_step_s", 0.0)
        ratio = (
            f" ({cold['first_step_s'] / peer['first_step_s']:.2f}x pgx)"
            if peer.get("first_step_s")
            else ""
        )
        runs = len(cold.get("first_step_runs", [1]))
        median = f" (median of {runs} runs, alternating with pgx's)" if runs > 1 else ""
        return (
            f"{name:<34} {cold['first_step_s']:7.2f} s first step{median}{ratio}, worst later step "
            f"{worst * 1e3:.0f} ms ({worst / 0.1:.2f}x the 100 ms target)"
        )
    target = TARGET[case["group"]]
    pgx = f"  pgx {peer['first_s']:.2f} s" if "first_s" in peer else ""
    top = ", ".join(f"{n} {s:.1f}" for n, s in cold["top"][:3])
    compiled = (case.get("compiled") or {}).get("first_s", float("nan"))
    runs = cold.get("first_s_runs")
    median = f", median of {len(runs)} runs" if runs else ""
    return (
        f"{name:<34} {cold['first_s']:7.2f} s cold ({cold['first_s'] / target:.2f}x the {target:g} s target;"
        f" {_how(case['group'], cold)}{median}), {compiled:.2f} s compiled first,"
        f" {cached.get('first_s', float('nan')):.2f} s cached; compiled in the process"
        f" {cold['compile_cpu_s']:.1f} CPU s ({top}){pgx}"
    )


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _how(group: str, cold: dict[str, Any]) -> str:
    """How a cold case got its first result: a search's generic path standing in, the env's
    kernels interpreted, or compiled in the process."""
    if group == "search" and cold.get("stood_in"):
        return "generic path"
    return "interpreted" if cold.get("interpreted") else "compiled"


def markdown(report: dict) -> str:
    """The results page's tables: first results (env and search cases), and the warm-up's
    entries, cold and cached."""
    rows = [
        "| case | cold | how | compiled first | cached | target | pgx |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, case in report["cases"].items():
        if case["group"] not in TARGET or "first_s" not in case["cold"]:
            continue
        cold, peer = case["cold"], (case.get("pgx") or {}).get("first_s")
        compiled = (case.get("compiled") or {}).get("first_s")
        runs = cold.get("first_s_runs")
        median = f" (median of {len(runs)})" if runs else ""
        rows.append(
            f"| `{name}` | {cold['first_s']:.2f} s{median} | {_how(case['group'], cold)} | "
            + ("-" if compiled is None else f"{compiled:.2f} s")
            + f" | {_seconds(case['cached'].get('first_s'))} | {TARGET[case['group']]:g} s | "
            + _seconds(peer)
            + " |"
        )
    warmup = report["cases"].get("warmup")
    if warmup and "entries" in warmup["cold"]:
        cold, cached = warmup["cold"], warmup["cached"]
        rows += ["", "| compiled entry point | cold | cached |", "|---|---|---|"]
        for name, entry in cold["entries"].items():
            again = cached["entries"].get(name, {}).get("seconds")
            rows.append(
                f"| {name} | {entry['seconds']:.2f} s | "
                + ("-" if again is None else f"{again:.2f} s")
                + " |"
            )
        rows.append(f"| the whole warm-up | {cold['seconds']:.1f} s | {cached['seconds']:.1f} s |")
    return "\n".join(rows + _vector_rows(report))


def _vector_rows(report: dict) -> list[str]:
    """The vector envs' table: the first step at N = 1,024 (the median of its runs), pgx's, and
    the worst of the later steps."""
    rows = []
    for name, case in report["cases"].items():
        cold = case["cold"]
        if case["group"] != "vector" or "first_step_s" not in cold:
            continue
        peer = (case.get("pgx") or {}).get("first_step_s")
        ratio = "-" if peer is None else f"{cold['first_step_s'] / peer:.2f}x"
        runs = ", ".join(f"{s:.2f}" for s in cold.get("first_step_runs", [cold["first_step_s"]]))
        rows.append(
            f"| `{name.removesuffix(' vector')}` | {cold['first_step_s']:.2f} s | {runs} | "
            f"{_seconds(peer)} | {ratio} | {cold['worst_later_step_s'] * 1e3:.0f} ms |"
        )
    header = "| vector env, N = 1,024 | first step | runs | pgx | ours/pgx | worst later step |"
    return ["", header, "|---|---|---|---|---|---|", *rows] if rows else []


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/cold_start.json")
    parser.add_argument("--resume", action="store_true", help="skip the cases the report holds")
    parser.add_argument("--quick", action="store_true", help="only: " + ", ".join(QUICK))
    parser.add_argument("--cases", nargs="+", help="only these cases (names as printed)")
    parser.add_argument("--kinds", nargs="+", help="only cases of these kinds (env, nmcs, ...)")
    parser.add_argument(
        "--again", action="store_true", help="with --resume: measure the chosen cases again"
    )
    parser.add_argument("--steps", type=int, default=5000, help="later vector steps timed")
    parser.add_argument("--cap", type=float, default=60.0, help="vector stepping, seconds at most")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="cold runs of each case, the median reported (vector cases: ours and pgx's, alternately)",
    )
    parser.add_argument("--markdown", action="store_true", help="print the report's tables only")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(Path(args.out).read_text())))
        return {}
    from mc_envs.registry import ENVS

    out = Path(args.out)
    report = {**provenance(argv), "targets": TARGET, "cases": {}}
    if args.resume and out.exists():
        before = json.loads(out.read_text())
        report["cases"] = before["cases"]
        for case in report["cases"].values():  # each case says when and on what it was measured
            case.setdefault("commit", before.get("commit"))
            case.setdefault("date", before.get("date"))
    wanted = args.cases or (QUICK if args.quick else None)
    for name, env_id, kind in cases(sorted(ENVS)):
        if (wanted and name not in wanted) or (args.kinds and kind not in args.kinds):
            continue
        if name in report["cases"] and not args.again:
            continue
        if kind == "warmup":
            case = warmup_case()
        elif kind == "vector":
            case = vector_case(env_id, args.steps, args.cap, args.repeat)
        else:
            case = first_result(env_id, kind, args.repeat)
        report["cases"][name] = {**case, "commit": report["commit"], "date": report["date"]}
        save_report(out, report)
        print(line(name, case), flush=True)
    print(f"report: {out}")
    return report


if __name__ == "__main__":
    main()
