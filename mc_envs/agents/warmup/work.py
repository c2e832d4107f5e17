"""What a warm-up child does: the entries (an env id and what to run on it) and running them."""

from __future__ import annotations

import json
import resource
import sys
import time
from typing import TYPE_CHECKING, NamedTuple, cast

from mc_envs.core import unwrap

if TYPE_CHECKING:
    import gymnasium as gym
    from numba.core.event import Event

    from mc_envs.core import PlanningEnv
    from mc_envs.vector import PlanningVectorEnv


class Entry(NamedTuple):
    """One piece of warm-up work: ``kind`` (``env``, ``nmcs``, ``nrpa``, ``uct``, ``puct``,
    ``search_batch``, ``vector``, or a named agent of :data:`GAME_PRESETS`) on ``env_id``, with
    ``arg`` (a vector env's thread count)."""

    env_id: str
    kind: str
    arg: int = 0

    @property
    def name(self) -> str:
        """How the warm-up names the entry, e.g. ``SameGame-v0 vector threads 2``."""
        short = self.env_id.partition("/")[2]
        return f"{short} {self.kind}" + (f" threads {self.arg}" if self.kind == "vector" else "")


class Done(NamedTuple):
    """What a child answers for an entry."""

    name: str
    seconds: float
    compiled: int  # numba compilations (0: everything came from the cache)
    peak_rss: int  # the child's peak resident memory so far, bytes
    error: str | None = None


# The named agents (:data:`mc_envs.agents.mcts.presets.SPEC_PRESETS`) made for one game, whose
# searches compile their own variant (a playout policy, RAVE, knowledge).
GAME_PRESETS = {"mc_envs/Go-v0": ["uct-go"]}


def entries(env_ids: list[str] | None = None) -> list[Entry]:
    """The warm-up's work for ``env_ids`` (default: every registered id), an env's entries
    together: its single env first (its kernels), then the searches, then its vector env. NMCS
    and NRPA are one entry each: one compiled search serves every level."""
    from mc_envs.registry import ENVS, GAMES

    puzzles = {game.env_id for game in GAMES if game.players == 1}
    out: list[Entry] = []
    for env_id in sorted(ENVS) if env_ids is None else env_ids:
        out.append(Entry(env_id, "env"))
        if env_id in puzzles:
            out += [Entry(env_id, "nmcs"), Entry(env_id, "nrpa")]
        out += [Entry(env_id, "uct"), Entry(env_id, "puct")]
        out += [Entry(env_id, name) for name in GAME_PRESETS.get(env_id, [])]
        out += [Entry(env_id, "vector", 1), Entry(env_id, "vector", 2)]
        out.append(Entry(env_id, "search_batch"))
    return out


def run_entry(entry: Entry, envs: dict[str, gym.Env]) -> None:
    """Runs ``entry`` once with the smallest budget that compiles it (``envs``: this process's
    single envs by id, made on their ``env`` entry)."""
    import gymnasium as gym

    from mc_envs.agents import NMCS, NRPA, PUCT, UCT

    env = envs.get(entry.env_id)
    if env is None:
        env = envs[entry.env_id] = gym.make(entry.env_id)
        env.reset(seed=0)
    if entry.kind == "env":
        base: PlanningEnv = unwrap(env)  # a planning env (mc_envs.core)
        base.restore_state(base.clone_state())
        env.step(int(base.legal_actions()[0]))
        env.reset(seed=0)
    elif entry.kind == "nmcs":
        NMCS(level=1).search(env, playouts=1)
    elif entry.kind == "nrpa":
        NRPA(level=1).search(env, playouts=1)
    elif entry.kind in ("uct", "puct"):
        (UCT if entry.kind == "uct" else PUCT)().search(env, iterations=2)
    elif entry.kind in GAME_PRESETS.get(entry.env_id, []):
        from mc_envs.agents.base import Searcher
        from mc_envs.agents.specs import parse

        agent = parse(entry.kind)
        if not isinstance(agent, Searcher):
            raise TypeError(f"{entry.kind}: a preset of {entry.env_id} that does not search")
        agent.search(env, iterations=2)
    else:
        threads = entry.arg if entry.kind == "vector" else 1
        made = gym.make_vec(entry.env_id, num_envs=2, threads=threads)
        vec = cast("PlanningVectorEnv", made)  # an mc_envs id's vector entry point
        vec.reset(seed=0)
        if entry.kind == "vector":
            vec.step(vec.action_masks().argmax(1))
        else:
            PUCT().search_batch(vec, simulations=2)
        vec.close()


def peak_rss() -> int:
    """This process's peak resident memory, in bytes (Linux counts ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def serve() -> None:
    """A child: reads entries (JSON lines) on stdin until it closes, answers a :class:`Done`
    for each (one JSON line on stdout)."""
    from numba.core import event

    class Count(event.Listener):
        n = 0

        def on_start(self, ev: Event) -> None:
            self.n += 1

        def on_end(self, ev: Event) -> None:
            pass

    counter = Count()
    event.register("numba:compile", counter)
    envs: dict[str, gym.Env] = {}
    for line in sys.stdin:
        entry = Entry(*json.loads(line))
        before, start, error = counter.n, time.perf_counter(), None
        try:
            run_entry(entry, envs)
        except Exception as exc:  # noqa: BLE001 - reported, the warm-up goes on
            error = f"{type(exc).__name__}: {exc}"
        done = Done(entry.name, time.perf_counter() - start, counter.n - before, peak_rss(), error)
        print(json.dumps(done._asdict()), flush=True)
