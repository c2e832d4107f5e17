"""Racing a portfolio of policies: every policy probes, the best ``workers`` of them go on.

Which selective policy suits a position is not known in advance. On the standard SameGame set the
tabu colour that gives the best NRPA games is often not the colour with most cells (position 11,
where all five colours have 45 cells: 60 s of NRPA level 3 found 2,591 with colour 1, the default,
and 3,273 with colour 3). A race gives every policy of the agent's portfolio (its ``policy``
tuple, or the game's ``nrpa_race`` when it has none) a short *probe* search with its own seed,
then lets the ``workers`` best probes continue their own searches (resumed from their
checkpoints: nothing of the probe is lost) for the rest of the budget. It is successive halving
cut once, over agents that can checkpoint.

Heats: with ``agent.heats`` H > 1 the budget is split into H races run one after the other, each
with fresh seeds (heat ``h`` gives policy ``i`` the seed ``worker_seed(seed, h * E + i)`` for E
policies: heat 0 is the one-heat race), and the best game of all heats is kept. On the standard
SameGame set a finalist's NRPA level 3 has run most of its 100 top-level iterations after 300 s a
position and then rarely improves; two independent races of 300 s found more than one race of
600 s (docs/results.md).

Budgets (of one heat; heat ``h`` of H gets ``P // H`` playouts, the first ``P % H`` heats one
more, or a time share: what is left of the time when it starts, over the heats left):

- ``time_limit`` T: the probes share ``PROBE`` of T, ``workers`` at a time (each probe gets
  ``PROBE * T / waves`` seconds, saved in the race checkpoint); the finalists search for what is
  left of T. A probe cut short by a stop gets, when the race resumes, its share less the seconds
  its own checkpoint says it ran, so a resumed race splits its time as an unstopped one.
- ``playouts`` P (deterministic: the result depends only on the seed and P): each of the E probes
  gets ``PROBE * P // E`` playouts; the finalists share the rest, each resuming its own search.

Checkpoints: ``checkpoint=PATH`` keeps the race's state in ``PATH`` (JSON: the policies, the heat
under way, the time kept for the later heats, a probe's seconds, the probes' scores, the finalists,
and each finished heat's best game, which is replayed to its score when read) and policy ``i``'s
search in ``PATH.e<i>`` (in heat ``h > 0``: ``PATH.h<h>.e<i>``; a heat's files are removed when it
ends); ``resume`` continues the race where it stopped, given what is left of the time. Without a
checkpoint the searches' files go to a temporary directory. Those files are local: a race runs on
this machine (processes, or a local Ray), not on a Ray cluster.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, cast

from mc_envs.agents.base import NEG_INF, Budget, SearchResult, StopReason
from mc_envs.agents.checkpoint import Checker, is_seconds, read_checkpoint, saved_seconds
from mc_envs.agents.ops import move_bound
from mc_envs.agents.parallel.messages import Budgets, Done, Task
from mc_envs.agents.parallel.root import Parallel, open_pool, solo, worker_seed
from mc_envs.agents.parallel.rounds import Rounds, why_ended
from mc_envs.core import unwrap
from mc_envs.records import write_atomic

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.core import PlanningEnv

PROBE = 0.4  # the share of the budget that the probes take
FORMAT = "mc-envs/race"
UNTIL_TOLD = 1e9  # checkpoint_every of the searches' own files (saved when they stop)


class Racing(Parallel, Protocol):
    """What a race reads of its agent (an :class:`~mc_envs.agents.nested.nrpa.NRPA`): its
    policies, its heats, and the key of a policy in a game's state (which checks the name)."""

    policy: str | tuple[str, ...] | None
    heats: int

    def selection_key(self, base: PlanningEnv) -> int:
        """The key of the agent's policy in ``base``'s state."""
        ...


class Row(TypedDict, total=False):
    """A policy's row of a race's table (``heat`` with more than one heat)."""

    policy: str
    seed: int
    probe: float | None
    final: float | None
    heat: int


class HeatSummary(TypedDict):
    """A finished (or cut short) heat: its best game, its counters and its table."""

    score: float
    actions: list[int]
    playouts: int
    iterations: int
    race: list[Row]


def entrants(agent: Racing, env: gym.Env) -> tuple[str, ...]:
    """The policies raced: the agent's ``policy`` tuple, else the game's ``nrpa_race``.

    Raises:
        ValueError: fewer than two policies, or one the game does not have.
    """
    game = tuple(getattr(unwrap(env), "nrpa_race", ()))
    names = agent.policy if isinstance(agent.policy, tuple) else ()
    if agent.policy is None:
        names = game
    if len(names) < 2:
        raise ValueError(
            f"a race needs at least two policies; got policy={agent.policy!r} and the game "
            f"races {game}"
        )
    for name in names:
        solo(agent, policy=name).selection_key(unwrap(env))  # raises for an unknown name
    return names


class RaceState:
    """The race's progress: the heat under way, the seconds kept for the later heats, a probe's
    seconds (``share``), each probe's score, the finalists, and the finished heats' best games
    (saved as JSON at ``path``)."""

    def __init__(self, names: tuple[str, ...], heats: int, path: Path | None) -> None:
        self.names, self.heats, self.path = names, heats, path
        self.heat = 0
        self.reserve: float | None = None
        self.share: float | None = None
        self.probes: dict[int, float] = {}
        self.finalists: list[int] | None = None
        self.done: list[HeatSummary] = []

    def finish_heat(self, summary: HeatSummary) -> None:
        """Keeps a finished heat's best game and counters and starts the next heat."""
        self.done.append(summary)
        self.heat += 1
        self.reserve, self.share, self.probes, self.finalists = None, None, {}, None

    def save(self) -> None:
        if self.path is not None:
            data = {
                "format": FORMAT,
                "policies": list(self.names),
                "heats": self.heats,
                "heat": self.heat,
                "reserve": self.reserve,
                "share": self.share,
                "probes": {str(i): s for i, s in sorted(self.probes.items())},
                "finalists": self.finalists,
                "done": self.done,
            }
            write_atomic(self.path, json.dumps(data, allow_nan=True))

    def load(self, base: PlanningEnv) -> None:
        """Reads the saved state, every field checked (a finished heat's game is replayed from
        ``base``'s state to its score). A file without heats is a one-heat race's.

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
        if data.get("heats", 1) != self.heats:
            raise ValueError(
                f"{where}: field 'heats': {data.get('heats', 1)!r} is not this race's {self.heats}"
            )
        heat, done = data.get("heat", 0), data.get("done", [])
        reserve, share = data.get("reserve"), data.get("share")
        if isinstance(heat, bool) or not isinstance(heat, int) or not 0 <= heat <= self.heats:
            raise ValueError(f"{where}: field 'heat': {heat!r} is not a heat 0..{self.heats}")
        if reserve is not None and not _number(reserve, 0.0):
            raise ValueError(f"{where}: field 'reserve': {reserve!r} is not a number >= 0")
        if share is not None and not is_seconds(share):
            raise ValueError(f"{where}: field 'share': {share!r} is not a number of seconds >= 0")
        if not isinstance(done, list) or len(done) != heat:
            raise ValueError(f"{where}: field 'done': not a list of the {heat} finished heats")
        check = Checker(where, base, move_bound(base))
        for h, summary in enumerate(done):
            self.done.append(self._heat_summary(summary, f"done[{h}]", check))
        self.heat, self.reserve = heat, None if reserve is None else float(reserve)
        self.share = None if share is None else float(share)
        self._load_probes(data, where)

    def _load_probes(self, data: dict[str, object], where: str) -> None:
        probes, finalists = data.get("probes"), data.get("finalists")
        n = len(self.names)
        if not isinstance(probes, dict):
            raise ValueError(f"{where}: field 'probes': not an object")
        for key, score in probes.items():
            if not key.isdigit() or int(key) >= n:
                raise ValueError(
                    f"{where}: field 'probes': {key!r} is not a policy index 0..{n - 1}"
                )
            if not _number(score):
                raise ValueError(f"{where}: field 'probes.{key}': {score!r} is not a number")
            self.probes[int(key)] = float(score)
        if finalists is not None:
            if not isinstance(finalists, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and i in self.probes
                for i in finalists
            ):
                raise ValueError(f"{where}: field 'finalists': not a list of probed indices")
            self.finalists = list(finalists)

    def _heat_summary(self, summary: object, field: str, check: Checker) -> HeatSummary:
        where = str(self.path)
        if not isinstance(summary, dict):
            raise ValueError(f"{where}: field '{field}': not an object")
        for key in ("playouts", "iterations"):
            check.count(summary.get(key), f"{field}.{key}")
        actions = check.actions(summary.get("actions"), f"{field}.actions")
        reached = check.score_after(actions, f"{field}.actions")
        score = check.number(summary.get("score"), f"{field}.score")
        empty = not actions and score == NEG_INF  # a heat that ended before its first game
        if not empty and score != reached:
            raise ValueError(
                f"{where}: field '{field}.score': {score!r} is not the score of its actions"
            )
        table = summary.get("race")
        rows = table if isinstance(table, list) and len(table) == len(self.names) else None
        if rows is None or not all(_row(r, n) for r, n in zip(rows, self.names)):
            raise ValueError(f"{where}: field '{field}.race': not a table of {list(self.names)}")
        return cast(HeatSummary, dict(summary))  # every field checked above


def _number(value: object, low: float = -math.inf) -> bool:
    """Whether ``value`` is a JSON number (not a bool, not NaN) of at least ``low``."""
    return (
        not isinstance(value, bool) and isinstance(value, (int, float)) and value >= low
    )  # NaN fails the comparison


def spent(path: str) -> float:
    """The seconds that the search checkpointed at ``path`` has run (0 without a file).

    Raises:
        ValueError: an unreadable checkpoint, or one whose ``control.seconds`` is not seconds.
    """
    if not Path(path).exists():
        return 0.0
    return saved_seconds(read_checkpoint(path), path)


def _row(row: object, name: str) -> bool:
    """Whether ``row`` is a race table's row of the policy ``name``."""
    return (
        isinstance(row, dict)
        and row.get("policy") == name
        and isinstance(row.get("seed"), int)
        and all(row.get(k) is None or _number(row.get(k)) for k in ("probe", "final"))
    )


def race_search(
    agent: Racing,
    env: gym.Env,
    budget: Budget,
    *,
    checkpoint: str | None = None,
    resume: bool = False,
    checkpoint_every: float = 5.0,
) -> SearchResult:
    """Races the policies of ``agent`` (the module docstring) from ``env``, ``agent.heats`` heats.

    Returns:
        The best game of all searches; playouts summed over them; ``extra["race"]`` lists each
        policy with its seed, its probe's score and (for a finalist) its final score, heat after
        heat (with more than one heat, each row also names its ``heat``).

    Raises:
        ValueError: a budget, policies or a checkpoint a race cannot take (see :func:`_check`).
    """
    _check(agent, budget, checkpoint, resume)
    time_limit, playouts = budget.time, budget.playouts
    names = entrants(agent, env)
    base = unwrap(env)
    heats = agent.heats
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if checkpoint is None:
        tmp = tempfile.TemporaryDirectory(prefix="mc-envs-race-")
    root = Path(tmp.name) / "race" if tmp is not None else Path(str(checkpoint))
    state = RaceState(names, heats, root if checkpoint is not None else None)
    if resume:
        state.load(base)
    every = checkpoint_every if checkpoint is not None else UNTIL_TOLD
    start = time.perf_counter()
    pool = open_pool(agent, base)
    rounds = Rounds(pool, time_limit, budget.callback, start=start)  # the race ends at T + GRACE
    for summary in state.done:
        rounds.show(summary["score"], summary["actions"])
    current: HeatSummary | None = None
    reasons: list[str] = []
    try:
        while state.heat < heats and not rounds.why:
            seconds = _heat_seconds(state, time_limit, start)
            reasons, current = _run_heat(
                agent, names, state, rounds, root, every, resume, (seconds, playouts)
            )
    finally:
        pool.close()
        if tmp is not None:
            tmp.cleanup()
    return _result(state, current, reasons, rounds, time.perf_counter() - start)


def _run_heat(
    agent: Racing,
    names: tuple[str, ...],
    state: RaceState,
    rounds: Rounds,
    root: Path,
    every: float,
    resume: bool,
    budget: tuple[float | None, int | None],
) -> tuple[list[str], HeatSummary | None]:
    """Runs heat ``state.heat`` in ``budget`` = (its seconds, the race's playouts): the stop
    reasons of its searches, and its summary if the race was stopped during it (None: finished,
    saved, its files removed)."""
    h, heats = state.heat, agent.heats
    seconds, playouts = budget
    share = None if playouts is None else playouts // heats + (h < playouts % heats)
    prefix = f"{root}.h{h}" if h else str(root)
    heat = Heat(agent.workers, _racers(agent, names, h), state, rounds, prefix, every, resume)
    results = heat.run(seconds, share)
    reasons = [r.stopped for r in results.values()]
    current = heat.summary(results, h if heats > 1 else None)
    if rounds.why:
        return reasons, current
    state.finish_heat(current)
    state.save()
    for i in range(len(names)):
        Path(f"{prefix}.e{i}").unlink(missing_ok=True)
    return reasons, None


class Heat:
    """One heat of a race: every policy of ``racers`` not yet probed probes (``workers`` at a
    time), then the best ``workers`` continue their searches (files ``<prefix>.e<i>``)."""

    def __init__(
        self,
        workers: int,
        racers: list[Racing],
        state: RaceState,
        rounds: Rounds,
        prefix: str,
        every: float,
        resume: bool,
    ) -> None:
        self.workers, self.racers, self.state, self.rounds = workers, racers, state, rounds
        self.prefix, self.every, self.resume = prefix, every, resume

    def task(self, i: int, budget: Budgets) -> Task:
        path = f"{self.prefix}.e{i}"
        again = Path(path).exists() and (self.resume or i in self.state.probes)
        return Task(
            self.racers[i],
            {
                **budget,
                "checkpoint": path,
                "resume": again,
                "checkpoint_every": self.every,
                "stand_in": True,  # nobody stands in for a racer: on a cold cache it searches
            },
        )  # on the generic path while its kernels compile, keeping its time share

    def probe(self, i: int, playouts: int | None, timed: bool) -> Budgets:
        """Probe ``i``'s budget: ``playouts``, and when ``timed`` its share of the time less what
        it ran before a stop."""
        probe: Budgets = {} if playouts is None else {"playouts": playouts}
        if timed and self.state.share is not None:
            ran = spent(f"{self.prefix}.e{i}") if self.resume else 0.0
            probe["time_limit"] = max(self.state.share - ran, 0.0)
        return probe

    def run(self, seconds: float | None, playouts: int | None) -> dict[int, Done]:
        """Probes, then finals, within ``seconds`` or ``playouts``; the searches' results."""
        state, rounds, n = self.state, self.rounds, len(self.racers)
        each = max(int(PROBE * playouts) // n, 1) if playouts is not None else None
        start = time.perf_counter()
        results: dict[int, Done] = {}
        todo = [i for i in range(n) if i not in state.probes]
        if todo:
            if seconds is not None and state.share is None:
                state.share = PROBE * seconds / math.ceil(len(todo) / self.workers)
                state.save()
            timed = seconds is not None
            done = rounds.run([self.task(i, self.probe(i, each, timed)) for i in todo])
            if len(done) == len(todo):  # else an interrupt left some unreturned: none is kept
                results.update(zip(todo, done))
                if not rounds.why:
                    state.probes.update((i, float(r.score)) for i, r in zip(todo, done))
            state.save()
        if not rounds.why and state.finalists is None:
            ranked = sorted(state.probes, key=lambda i: (-state.probes[i], i))
            state.finalists = ranked[: self.workers]
            state.save()
        if not rounds.why and state.finalists is not None:
            final: Budgets = {}
            if seconds is not None:
                final["time_limit"] = max(seconds - (time.perf_counter() - start), 0.0)
            if each is not None and playouts is not None:
                rest = max(playouts - each * n, 0)
                k = len(state.finalists)
                shares = [each + rest // k + (1 if j < rest % k else 0) for j in range(k)]
            batch = [
                self.task(i, {**final, **({"playouts": shares[j]} if each is not None else {})})
                for j, i in enumerate(state.finalists)
            ]
            done = rounds.run(batch)
            if len(done) == len(batch):
                results.update(zip(state.finalists, done))
        return results

    def summary(self, results: dict[int, Done], heat: int | None) -> HeatSummary:
        """The heat's best game, counters and table (rows naming ``heat`` unless None)."""
        score, actions = NEG_INF, []
        for result in results.values():
            if result.score > score:
                score, actions = result.score, list(result.actions)
        finalists = self.state.finalists or []
        table: list[Row] = []
        for i, racer in enumerate(self.racers):
            final = results[i].score if i in finalists and i in results else None
            name = cast(str, racer.policy)  # one name: a racer runs one policy
            row = Row(policy=name, seed=racer.seed, probe=self.state.probes.get(i), final=final)
            table.append(row if heat is None else {**row, "heat": heat})
        return {
            "score": float(score),
            "actions": [int(a) for a in actions],
            "playouts": sum(int(r.playouts) for r in results.values()),
            "iterations": sum(int(r.iterations) for r in results.values()),
            "race": table,
        }


def _check(agent: Racing, budget: Budget, checkpoint: str | None, resume: bool) -> None:
    """Refuses a race without a time or playout budget, on a cluster, or resumed from nothing."""
    if budget.iterations is not None or (budget.time is None and budget.playouts is None):
        raise ValueError("a race needs a time_limit or a playouts budget (not iterations)")
    if agent.address is not None:
        raise ValueError("a race runs on this machine (its searches resume from local files)")
    if resume and checkpoint is None:
        raise ValueError("resume=True needs checkpoint=PATH")


def _racers(agent: Racing, names: tuple[str, ...], heat: int) -> list[Racing]:
    """The searches of heat ``heat``: one per policy name, each with its own seed."""
    return [
        solo(agent, policy=n, seed=worker_seed(agent.seed, heat * len(names) + i), heats=1)
        for i, n in enumerate(names)
    ]


def _heat_seconds(state: RaceState, time_limit: float | None, start: float) -> float | None:
    """The seconds of the heat under way: an even share of what is left for the heats not run
    (the rest is reserved, and saved, for them)."""
    if time_limit is None:
        return None
    if state.reserve is None:
        left = max(time_limit - (time.perf_counter() - start), 0.0)
        state.reserve = left - left / (state.heats - state.heat)
        state.save()
    return max(time_limit - (time.perf_counter() - start) - state.reserve, 0.0)


def _result(
    state: RaceState,
    current: HeatSummary | None,
    reasons: list[str],
    rounds: Rounds,
    seconds: float,
) -> SearchResult:
    """The best game of the finished heats and of the heat cut short (``current``), if any;
    ``reasons``: why the last heat's searches stopped."""
    heats = [*state.done, *([current] if current is not None else [])]
    score, actions = rounds.shown_score, rounds.shown_actions
    for summary in heats:
        if summary["score"] > score:
            score, actions = summary["score"], summary["actions"]
    stopped = why_ended(rounds, reasons, reasons[-1] if reasons else StopReason.TIME)
    return SearchResult(
        score=float(score) if score > NEG_INF else float("-inf"),
        actions=list(actions),
        playouts=sum(s["playouts"] for s in heats),
        seconds=seconds,
        iterations=sum(s["iterations"] for s in heats),
        stopped=stopped,
        extra={"race": [row for s in heats for row in s["race"]]},
    )
