"""Go's rules in lockstep with pgx's Go (``go_9x9``, or pgx's ``Go(size=n)``): random games.

Every game is played on both sides at once, a batch of games at a time (pgx vmapped and jitted
once). Each move is drawn uniformly from our legal moves; at every step, for every game: the legal
moves, the board, the captures, the observation (pgx's ``(n, n, 17)`` transposed to our channels
first), the player to move and the end; at the end, the winner.

Where pgx and we differ by design (pgx's superko, from its source ``pgx/_src/games/go.py``):
pgx's legal mask refuses only the simple ko (the point of a single stone just captured by a
single stone that was surrounded); any other move that recreates an earlier position stays in its
mask, and playing it ends the game (``is_psk``) as a loss for its player. We refuse every such move.
So a move in pgx's mask and not in ours must be such a case: each one is checked, not skipped: it
is a superko move by our rules (the point empty, not a suicide), and pgx, playing it on a copy
of the game, ends the game with its player losing. A move in our mask and not in pgx's fails.
pgx also gives White a tie (``black - komi > white`` wins for Black, else White): with a
half-point komi there is none. The move cap (``max_termination_steps``, ``2 * n * n`` moves as
our ``max_moves``): pgx ends the game there as a terminal, scored one; our kernel stops and scores
it the same (``OVER``, ``RESULT``: compared as any end) and tells it apart (``go.truncated``),
which our envs report as a truncation (reward 0): each such game is checked to have ended on
both sides at the cap, not by two passes, pgx's winner equal to our kernel's.

    python benchmarks/go_lockstep.py --games 10000 --out benchmarks/results/go_lockstep.json --resume
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from mc_envs.games import go, go_text
from mc_envs.games import go_layout as layout

BATCH = 100


class Pgx:
    """pgx's Go on a batch of games, its step jitted once (vmapped)."""

    def __init__(self, size: int, batch: int) -> None:
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.go import Go

        self.jax, self.jnp = jax, jnp
        self.env = pgx.make("go_9x9") if size == 9 else Go(size=size)
        self.batch = batch
        self._init = jax.jit(jax.vmap(self.env.init))
        self._step = jax.jit(jax.vmap(self.env.step))

    def init(self, seed: int) -> Any:
        return self._init(self.jax.random.split(self.jax.random.PRNGKey(seed), self.batch))

    def step(self, state: Any, actions: np.ndarray) -> Any:
        return self._step(state, self.jnp.asarray(actions, dtype=self.jnp.int32))

    @staticmethod
    def view(state: Any) -> dict[str, np.ndarray]:
        """What the comparisons read, as numpy arrays."""
        order = np.asarray(state._player_order)
        rewards = np.asarray(state.rewards)
        return {
            "mask": np.asarray(state.legal_action_mask),
            "board": np.sign(np.asarray(state._x.board)),
            "captured": np.asarray(state._x.num_captured),
            "obs": np.asarray(state.observation),
            "colour": np.asarray(state._x.color),
            "terminated": np.asarray(state.terminated),
            "psk": np.asarray(state._x.is_psk),
            "passes": np.asarray(state._x.consecutive_pass_count),
            # pgx's rewards are per player; player order[colour] plays that colour
            "black_reward": rewards[np.arange(len(order)), order[:, 0]],
        }


def _our_board(state: np.ndarray) -> np.ndarray:
    cells = go_text.board_of(state).ravel()
    return np.where(cells == 1, 1, np.where(cells == 2, -1, 0))


def lockstep(
    games: int, *, size: int = 9, seed: int = 0, batch: int = BATCH, pgx: Pgx | None = None
) -> dict[str, int]:
    """Plays ``games`` random games (a multiple of ``batch``) on both sides; returns counts.

    Raises:
        AssertionError: the first difference, naming the game (chunk seed and index) and moves.
    """
    pgx = pgx or Pgx(size, batch)
    stats = dict.fromkeys(
        ("games", "moves", "captures", "two_passes", "move_limit", "black_wins", "superko"), 0
    )
    stats["pgx_counted_twice"] = 0
    for chunk in range(games // batch):
        _chunk(pgx, size, seed * 1_000_003 + chunk, batch, stats)
    return stats


def _chunk(pgx: Pgx, size: int, seed: int, batch: int, stats: dict[str, int]) -> None:
    rng = np.random.default_rng(seed)
    n2 = size * size
    states = np.stack([go.new_state(size)] * batch)
    ws = go.workspace(states[0])
    out = np.zeros(n2 + 1, np.int64)
    obs = np.zeros((17, size, size), np.int8)
    theirs = pgx.init(seed)
    moves: list[list[int]] = [[] for _ in range(batch)]
    done = np.zeros(batch, bool)
    while not done.all():
        view = pgx.view(theirs)
        actions = np.zeros(batch, np.int64)
        probes: dict[int, list[int]] = {}
        for g in np.flatnonzero(~done):
            s = states[g]
            where = f"{size}x{size} chunk seed {seed} game {g} after moves {moves[g]}"
            ours = out[: go.legal(s, ws, out)].copy()
            mask = np.zeros(n2 + 1, bool)
            mask[ours] = True
            assert not (mask & ~view["mask"][g]).any(), (where, "legal here, not in pgx")
            extra = np.flatnonzero(view["mask"][g] & ~mask).tolist()
            for a in extra:  # pgx's mask keeps superko moves: ours refuses them
                pt = int(layout.POINT_OF[size, a])
                assert s[layout.BOARD + pt] == 0 and not go.suicide(s, pt), (where, a)
            if extra:
                probes[int(g)] = extra
            assert (_our_board(s) == view["board"][g]).all(), (where, "board")
            assert s[layout.PLAYER] == view["colour"][g], (where, "colour")
            layout.observe(s, obs)
            assert (obs == view["obs"][g].transpose(2, 0, 1)).all(), (where, "observation")
            actions[g] = ours[rng.integers(len(ours))]
        _probe(pgx, theirs, actions, probes, view, stats, size, seed)
        theirs = pgx.step(theirs, actions)
        after = pgx.view(theirs)
        for g in np.flatnonzero(~done):
            s = states[g]
            a = int(actions[g])
            c = int(s[layout.PLAYER])
            counted = _pgx_count(s, a)
            stones = np.count_nonzero(_our_board(s))
            before = int(s[layout.CAPTURES + c])
            go.play(s, a, ws)
            moves[g].append(a)
            where = f"{size}x{size} chunk seed {seed} game {g} after moves {moves[g]}"
            taken = int(s[layout.CAPTURES + c]) - before
            placed = int(a < size * size)
            assert taken == stones + placed - np.count_nonzero(_our_board(s)), (where, "captures")
            grew = int(after["captured"][g][c] - view["captured"][g][c])
            assert grew == counted, (where, "pgx's capture count", grew, counted, taken)
            stats["moves"] += 1
            stats["captures"] += taken
            stats["pgx_counted_twice"] += int(counted != taken)
            assert bool(s[layout.OVER]) == bool(after["terminated"][g]), (where, "end")
            assert not after["psk"][g], (where, "pgx saw a superko we allowed")
            if s[layout.OVER]:
                done[g] = True
                result = int(s[layout.RESULT])
                assert result == int(after["black_reward"][g]), (where, "winner")
                assert (_our_board(s) == after["board"][g]).all(), (where, "final board")
                stats["games"] += 1
                stats["black_wins"] += result > 0
                cut = bool(go.truncated(s))
                at_cap = len(moves[g]) == 2 * size * size  # pgx's max_termination_steps
                assert cut == (at_cap and after["passes"][g] < 2), (where, "the move cap")
                stats["move_limit" if cut else "two_passes"] += 1


def _pgx_count(state: np.ndarray, action: int) -> int:
    """pgx's ``num_captured`` increase for a move: it counts (stone, side of the move) pairs, so
    a captured chain that touches the move on k sides counts k times."""
    n, s = int(state[layout.SIZE]), int(state[layout.STRIDE])
    if action == n * n:
        return 0
    p = s * s
    head, stones, libs = layout.HEADER + p, layout.HEADER + 3 * p, layout.HEADER + 4 * p
    pt = int(layout.POINT_OF[n, action])
    opp = 2 - int(state[layout.PLAYER])
    total = 0
    for q in (pt - s, pt - 1, pt + 1, pt + s):
        if state[layout.BOARD + q] == opp:
            h = state[head + q]
            if layout.in_atari(state[libs + h]):
                total += int(state[stones + h])
    return total


def _probe(pgx, theirs, actions, probes, view, stats, size, seed) -> None:
    """Plays each superko move that pgx allows on a copy of pgx's batch: pgx must end the game
    there as a loss for its player (``is_psk``)."""
    while probes:
        trial = actions.copy()
        for g, extra in probes.items():
            trial[g] = extra.pop()
        after = pgx.view(pgx.step(theirs, trial))
        for g in list(probes):
            where = f"{size}x{size} chunk seed {seed} game {g}: superko move {trial[g]}"
            assert after["terminated"][g] and after["psk"][g], (where, "pgx did not end it")
            reward = after["black_reward"][g] * (1 if view["colour"][g] == 0 else -1)
            assert reward == -1, (where, "pgx's superko loss for its player")
            stats["superko"] += 1
            if not probes[g]:
                del probes[g]


def _commit() -> str:
    """The source tree's commit (``git rev-parse HEAD``), or ``"unknown"``."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    """The command line: runs (or resumes) the games and writes the counts as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--out", type=Path, default=Path("go_lockstep.json"))
    parser.add_argument("--resume", action="store_true", help="go on from --out's counts")
    args = parser.parse_args(argv)
    report = {"size": args.size, "seed": args.seed, "batch": args.batch, "chunks": 0, "seconds": 0}
    if args.resume and args.out.exists():
        report = json.loads(args.out.read_text())
        for key in ("size", "seed", "batch"):
            if report[key] != getattr(args, key):
                parser.error(f"--resume: {args.out} has {key} {report[key]}")
    stats = report.setdefault("stats", {})
    report.setdefault("commit", _commit())
    pgx = Pgx(args.size, args.batch)
    start = time.perf_counter()
    while report["chunks"] * args.batch < args.games:
        chunk = report["chunks"]
        counts = dict.fromkeys(("games", "moves", "captures", "two_passes"), 0)
        counts.update(dict.fromkeys(("move_limit", "black_wins", "superko"), 0))
        counts["pgx_counted_twice"] = 0
        _chunk(pgx, args.size, args.seed * 1_000_003 + chunk, args.batch, counts)
        for key, value in counts.items():
            stats[key] = stats.get(key, 0) + value
        report["chunks"] = chunk + 1
        report["seconds"] = round(report["seconds"] + time.perf_counter() - start, 1)
        start = time.perf_counter()
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(report, indent=1) + "\n")
        os.replace(tmp, args.out)
        print(f"{stats['games']} games, {stats['moves']} moves, {stats['superko']} superko "
              f"cases checked, {report['seconds']} s", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
