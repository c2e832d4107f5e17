"""Racing a portfolio of policies: every policy probes, the best ``workers`` of them go on.

Which selective policy suits a position is not known in advance. On the standard SameGame set the
tabu colour that gives the best NRPA games is often not the colour with most cells (position 11,
where all five colours have 45 cells: 60 s of NRPA level 3 found 2,591 with colour 1, the default,
and 3,273 with colour 3). A race gives every policy of the agent's portfolio (its ``policy``
tuple, or the game's ``nrpa_race`` when it has none) a short *probe* search with its own seed,
then lets the ``workers`` best probes continue their own searches (resumed from their
checkpoints: nothing of the probe is lost) for the rest of the budget. It is successive halving
cut once, over agents that can checkpoint.

Budgets:

- ``time_limit`` T: the probes not yet run share ``PROBE`` of T, ``workers`` at a time (a wave of
  probes lasts ``PROBE * T / waves``); the finalists search for what is left of T.
- ``playouts`` P (deterministic: the result depends only on the seed and P): each of the E probes
  gets ``PROBE * P // E`` playouts; the finalists share the rest, each resuming its own search.

Checkpoints: ``checkpoint=PATH`` keeps the race's state in ``PATH`` (JSON: the policies, the
probes' scores, the finalists) and policy ``i``'s search in ``PATH.e<i>``; ``resume`` continues
the race where it stopped. Without it the searches' files go to a temporary directory. Those
files are local: a race runs on this machine (processes, or a local Ray), not on a Ray cluster.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.base import NEG_INF, Callback, SearchResult
from agents.parallel import Rounds, open_pool, solo, worker_seed
from mc_envs.records import write_atomic

PROBE = 0.4  # the share of the budget that the probes take
FORMAT = "mc-envs/race"
UNTIL_TOLD = 1e9  # checkpoint_every of the searches' own files (saved when they stop)


def entrants(agent: Any, env: Any) -> tuple[str, ...]:
    """The policies raced: the agent's ``policy`` tuple, else the game's ``nrpa_race``.

    Raises:
        ValueError: fewer than two policies, or one the game does not have.
    """
    game = tuple(getattr(env.unwrapped, "nrpa_race", ()))
    names = agent.policy if isinstance(agent.policy, tuple) else ()
    if agent.policy is None:
        names = game
    if len(names) < 2:
        raise ValueError(
            f"a race needs at least two policies; got policy={agent.policy!r} and the game "
            f"races {game}"
        )
    for name in names:
        solo(agent, policy=name).selection_key(env.unwrapped)  # raises for an unknown name
    return names


class RaceState:
    """The race's progress: each probe's score, then the finalists (saved as JSON at ``path``)."""

    def __init__(self, names: tuple[str, ...], path: Path | None) -> None:
        self.names, self.path = names, path
        self.probes: dict[int, float] = {}
        self.finalists: list[int] | None = None

    def save(self) -> None:
        if self.path is not None:
            data = {
                "format": FORMAT,
                "policies": list(self.names),
                "probes": {str(i): s for i, s in sorted(self.probes.items())},
                "finalists": self.finalists,
            }
            write_atomic(self.path, json.dumps(data, allow_nan=True))

    def load(self) -> None:
        """Reads the saved state, every field checked.

        Raises:
            ValueError: naming the file and the field at fault.
        """
        where = str(self.path)
        try:
            data = json.loads(Path(where).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{where}: not a readable race checkpoint ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{where}: field 'format': not {FORMAT!r}")
        if data.get("policies") != list(self.names):
            raise ValueError(
                f"{where}: field 'policies': {data.get('policies')!r} is not this "
                f"race's {list(self.names)}"
            )
        probes, finalists = data.get("probes"), data.get("finalists")
        n = len(self.names)
        if not isinstance(probes, dict):
            raise ValueError(f"{where}: field 'probes': not an object")
        for key, score in probes.items():
            if not key.isdigit() or int(key) >= n:
                raise ValueError(
                    f"{where}: field 'probes': {key!r} is not a policy index 0..{n - 1}"
                )
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise ValueError(f"{where}: field 'probes.{key}': {score!r} is not a number")
            self.probes[int(key)] = float(score)
        if finalists is not None:
            if not isinstance(finalists, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and i in self.probes
                for i in finalists
            ):
                raise ValueError(f"{where}: field 'finalists': not a list of probed indices")
            self.finalists = list(finalists)


def race_search(
    agent: Any,
    env: Any,
    *,
    time_limit: float | None = None,
    playouts: int | None = None,
    iterations: int | None = None,
    callback: Callback | None = None,
    checkpoint: str | None = None,
    resume: bool = False,
    checkpoint_every: float = 5.0,
) -> SearchResult:
    """Races the policies of ``agent`` (see the module docstring) from ``env``'s state.

    Returns:
        The best game of all searches; playouts summed over them; ``extra["race"]`` lists each
        policy with its seed, its probe's score and (for a finalist) its final score.

    Raises:
        ValueError: no time or playout budget, an ``iterations`` budget, too few policies, or a
            race checkpoint that does not match.
    """
    if iterations is not None or (time_limit is None and playouts is None):
        raise ValueError("a race needs a time_limit or a playouts budget (not iterations)")
    if agent.address is not None:
        raise ValueError("a race runs on this machine (its searches resume from local files)")
    names = entrants(agent, env)
    base = env.unwrapped
    tmp = None if checkpoint is not None else tempfile.TemporaryDirectory(prefix="mc-envs-race-")
    root = Path(checkpoint) if checkpoint is not None else Path(tmp.name) / "race"
    state = RaceState(names, root if checkpoint is not None else None)
    if resume:
        if checkpoint is None:
            raise ValueError("resume=True needs checkpoint=PATH")
        state.load()
    every = checkpoint_every if checkpoint is not None else UNTIL_TOLD
    racers = [solo(agent, policy=n, seed=worker_seed(agent.seed, i)) for i, n in enumerate(names)]
    results: dict[int, dict] = {}

    def task(i: int, budget: dict[str, Any]) -> tuple[Any, dict]:
        path = f"{root}.e{i}"
        again = Path(path).exists() and (resume or i in state.probes)
        return racers[i], {**budget, "checkpoint": path, "resume": again, "checkpoint_every": every}

    each = max(int(PROBE * playouts) // len(names), 1) if playouts is not None else None
    start = time.perf_counter()
    pool = open_pool(agent, base)
    rounds = Rounds(pool, None, callback)
    try:
        todo = [i for i in range(len(names)) if i not in state.probes]
        if todo:
            waves = math.ceil(len(todo) / agent.workers)
            probe = {"time_limit": PROBE * time_limit / waves} if time_limit is not None else {}
            if each is not None:
                probe["playouts"] = each
            done = rounds.run([task(i, probe) for i in todo])
            if len(done) == len(todo):  # else an interrupt left some unreturned: none is kept
                results.update(zip(todo, done))
                if not rounds.why:
                    state.probes.update((i, float(r["score"])) for i, r in zip(todo, done))
            state.save()
        if not rounds.why and state.finalists is None:
            ranked = sorted(state.probes, key=lambda i: (-state.probes[i], i))
            state.finalists = ranked[: agent.workers]
            state.save()
        if not rounds.why:
            final: dict[str, Any] = {}
            if time_limit is not None:
                final["time_limit"] = max(time_limit - (time.perf_counter() - start), 0.0)
            if each is not None:
                rest = max(playouts - each * len(names), 0)
                k = len(state.finalists)
                shares = [each + rest // k + (1 if j < rest % k else 0) for j in range(k)]
            batch = [
                task(i, {**final, **({"playouts": shares[j]} if each is not None else {})})
                for j, i in enumerate(state.finalists)
            ]
            done = rounds.run(batch)
            if len(done) == len(batch):
                results.update(zip(state.finalists, done))
    finally:
        pool.close()
        if tmp is not None:
            tmp.cleanup()
    return _result(names, racers, state, results, rounds, time.perf_counter() - start)


def _result(
    names: tuple[str, ...],
    racers: list[Any],
    state: RaceState,
    results: dict[int, dict],
    rounds: Rounds,
    seconds: float,
) -> SearchResult:
    score, actions = rounds.shown_score, rounds.shown_actions
    for result in results.values():
        if result["score"] > score:
            score, actions = result["score"], result["actions"]
    finalists = state.finalists or []
    table = [
        {
            "policy": name,
            "seed": racers[i].seed,
            "probe": state.probes.get(i),
            "final": results[i]["score"] if i in finalists and i in results else None,
        }
        for i, name in enumerate(names)
    ]
    reasons = [r["stopped"] for r in results.values()]
    stopped = rounds.why if rounds.why not in ("", "max_score") else ""
    if not stopped:
        stopped = "max_score" if "max_score" in reasons else (reasons[-1] if reasons else "time")
    return SearchResult(
        score=float(score) if score > NEG_INF else float("-inf"),
        actions=list(actions),
        playouts=sum(r["playouts"] for r in results.values()),
        seconds=seconds,
        iterations=sum(r["iterations"] for r in results.values()),
        stopped=stopped,
        extra={"race": table},
    )
