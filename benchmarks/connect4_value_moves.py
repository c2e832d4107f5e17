"""How often an agent's move keeps a Connect Four position's exact value: AlphaZero's PUCT against UCT.

    python benchmarks/connect4_value_moves.py --out benchmarks/results/connect4_value_moves.json
    python benchmarks/connect4_value_moves.py --resume --out benchmarks/results/connect4_value_moves.json

The positions and the solved value of every move come from ``benchmarks/data/connect4_positions.json``
(``benchmarks/connect4_positions.py``). A move *preserves the value* when its value equals the best
move's: it keeps a win a win and a draw a draw. In a lost position every move loses, so every move
keeps the value: such positions, like those whose moves all win or all draw, are uninformative.
The share is reported over all positions and over the informative ones (moves of different
values), with a 95% Wilson interval, and over the informative won and drawn positions apart. Agents: PUCT with the shipped AlphaZero model,
200 simulations; UCT with 200 and 2,000 iterations (random playouts); PUCT with the untrained
network of the same shape. The agent of position ``i`` is seeded with ``i``. The report is written
every ``--every`` positions; ``--resume`` continues it. Nothing is asserted: it prints a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from importlib import resources
from pathlib import Path

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mc_envs  # noqa: E402, F401
from benchmarks.reporting import provenance  # noqa: E402
from mc_envs.agents import UCT  # noqa: E402
from mc_envs.agents.alphazero import SHIPPED, Model, alphazero_agent, init_model  # noqa: E402
from mc_envs.cli.two_player import wilson_interval  # noqa: E402
from mc_envs.records import write_atomic  # noqa: E402

ENV_ID = "mc_envs/ConnectFour-v0"
POSITIONS = Path(__file__).resolve().parent / "data" / "connect4_positions.json"
AGENTS = ("puct200_model", "uct200", "uct2000", "puct200_untrained", "random")
LABELS = {
    "puct200_model": "PUCT 200 sims + shipped model",
    "uct200": "UCT 200 iterations",
    "uct2000": "UCT 2,000 iterations",
    "puct200_untrained": "PUCT 200 sims + untrained network",
    "random": "uniform random move (expected)",
}


def make_agents(model_path: str, sims: int) -> dict:
    """Agent name -> a function from the position's index (its seed) to the agent."""
    model = Model.load(model_path)
    untrained = init_model(ENV_ID, model.obs_size, model.n_actions, arch=model.arch)
    return {
        "puct200_model": lambda i: alphazero_agent(model, sims=sims, seed=i),
        "uct200": lambda i: UCT(iterations=200, seed=i),
        "uct2000": lambda i: UCT(iterations=2000, seed=i),
        "puct200_untrained": lambda i: alphazero_agent(untrained, sims=sims, seed=i),
    }


def summary(positions: list[dict], moves: list[int], select=lambda p: True) -> dict:
    """The share of value-preserving moves over the positions ``select`` keeps, with its interval."""
    kept = [
        p["values"][str(m)] == p["value"]
        for p, m in zip(positions, moves, strict=True)
        if select(p)
    ]
    lo, hi = wilson_interval(sum(kept), len(kept))
    return {
        "positions": len(kept),
        "preserved": sum(kept),
        "share": sum(kept) / max(len(kept), 1),
        "interval95": [lo, hi],
    }


def random_summary(positions: list[dict], select=lambda p: True) -> dict:
    """The expected share of a uniformly random move: the mean fraction of best moves."""
    fractions = [
        sum(v == p["value"] for v in p["values"].values()) / len(p["values"])
        for p in positions
        if select(p)
    ]
    return {"positions": len(fractions), "share": sum(fractions) / max(len(fractions), 1)}


def play_position(env, position: dict, agent) -> int:
    """The column ``agent`` plays in ``position`` (``env`` reset and set to it)."""
    env.reset()
    for column in position["moves"]:
        env.step(column)
    return int(agent.act(env))


def model_moves(model, positions: list[dict], sims: int, **settings) -> list[int]:
    """The column PUCT + ``model`` (``sims`` simulations, PUCT ``settings``) plays in each
    position, seeded by its index."""
    env = gym.make(ENV_ID, illegal_action="raise").unwrapped
    return [
        play_position(env, p, alphazero_agent(model, sims=sims, seed=i, **settings))
        for i, p in enumerate(positions)
    ]


def summaries(positions: list[dict], moves: list[int] | None) -> dict:
    """Over all positions, the informative ones, and the informative ones of each value."""
    groups = {
        "all": lambda p: True,
        "informative": lambda p: p["informative"],
        "informative_win": lambda p: p["informative"] and p["value"] == 1,
        "informative_draw": lambda p: p["informative"] and p["value"] == 0,
    }
    if moves is None:
        return {name: random_summary(positions, f) for name, f in groups.items()}
    return {name: summary(positions, moves, f) for name, f in groups.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", default=str(POSITIONS))
    parser.add_argument("--limit", type=int, help="only the first LIMIT positions")
    parser.add_argument("--model", help="an .npz model (default: the shipped one)")
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--agents", nargs="+", choices=AGENTS[:-1], default=list(AGENTS[:-1]))
    parser.add_argument("--every", type=int, default=10, help="write the report this often")
    parser.add_argument("--out", default="benchmarks/out/connect4_value_moves.json")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    raw = Path(args.positions).read_bytes()
    positions = json.loads(raw)["positions"][: args.limit]
    digest = hashlib.sha256(raw).hexdigest()[:16]
    model_path = args.model or str(resources.files("mc_envs.agents").joinpath(SHIPPED))
    out = Path(args.out)
    if args.resume and out.exists():
        report = json.loads(out.read_text())
        if report["positions_sha256"] != digest or report["sims"] != args.sims:
            raise SystemExit(f"{out} was made from other positions or settings; no --resume")
    else:
        report = {
            "provenance": provenance(argv),
            "positions_file": args.positions,
            "positions_sha256": digest,
            "model": model_path,
            "sims": args.sims,
            "moves": {},
            "seconds": {},
        }
    agents = make_agents(model_path, args.sims)
    env = gym.make(ENV_ID, illegal_action="raise").unwrapped
    for name in args.agents:
        moves = report["moves"].setdefault(name, [])
        start = time.perf_counter()
        for i in range(len(moves), len(positions)):
            moves.append(play_position(env, positions[i], agents[name](i)))
            if len(moves) % args.every == 0 or len(moves) == len(positions):
                report["seconds"][name] = report["seconds"].get(name, 0.0) + (
                    time.perf_counter() - start
                )
                start = time.perf_counter()
                write_atomic(out, json.dumps(report, indent=1))
    report["summary"] = {
        name: summaries(positions, report["moves"][name])
        for name in AGENTS[:-1]
        if len(report["moves"].get(name, ())) == len(positions)
    }
    report["summary"]["random"] = summaries(positions, None)
    write_atomic(out, json.dumps(report, indent=1))
    print_table(report["summary"], len(positions))


def print_table(table: dict, n: int) -> None:
    """One line an agent: the share over all positions, over the informative ones, and over the
    informative won and drawn ones."""
    sizes = {group: g["positions"] for group, g in table["random"].items()}
    print(f"{n} positions; share of moves that keep the position's value (95% interval)")
    print(
        f"{'agent':34} {'all (' + str(sizes['all']) + ')':>22} "
        f"{'informative (' + str(sizes['informative']) + ')':>22} "
        f"{'win (' + str(sizes['informative_win']) + ')':>9} "
        f"{'draw (' + str(sizes['informative_draw']) + ')':>9}"
    )
    for name, s in table.items():
        cells = []
        for group in ("all", "informative", "informative_win", "informative_draw"):
            g = s[group]
            text = f"{g['share']:.3f}" if g["positions"] else "-"
            if "interval95" in g and group in ("all", "informative"):
                text += f" ({g['interval95'][0]:.3f}-{g['interval95'][1]:.3f})"
            cells.append(text)
        print(f"{LABELS[name]:34} {cells[0]:>22} {cells[1]:>22} {cells[2]:>9} {cells[3]:>9}")


if __name__ == "__main__":
    main()
