"""The typed messages between a parallel search's master and its workers.

The master sends a :class:`Task` (an agent-like search and its budgets); while it runs, the worker
sends :class:`Improved` and :class:`Counted` progress, then :class:`Ended`; the task's result is a
:class:`Done`, or :class:`Lost` when its worker died. (:mod:`mc_envs.agents.parallel.pools` carries
them; :mod:`mc_envs.agents.parallel.rounds` reads them.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from mc_envs.agents.base import Callback, SearchKeywords, SearchResult

if TYPE_CHECKING:
    import gymnasium as gym
    from typing_extensions import Unpack


class Improved(NamedTuple):
    """A worker's message: task number ``task`` found a better game."""

    task: int
    score: float
    actions: list[int]


class Counted(NamedTuple):
    """A worker's message: task number ``task`` has made ``playouts`` so far."""

    task: int
    playouts: int


class Ended(NamedTuple):
    """A worker's message: task number ``task`` ended (its result follows)."""

    task: int


Message = Improved | Counted | Ended


class Budgets(SearchKeywords, total=False):
    """A task's budgets: its ``search`` keywords, and what its worker reads before the call
    (:func:`mc_envs.agents.parallel.pools.run_task`): ``deadline`` (``time.time()`` seconds) and
    ``stand_in``."""

    deadline: float
    stand_in: bool


class Searching(Protocol):
    """What a task runs: an agent, or a part of one's search (a candidate move, a level), with
    an agent's ``search``."""

    def search(
        self,
        env: gym.Env,
        *,
        callback: Callback | None = None,
        **budget: Unpack[SearchKeywords],
    ) -> SearchResult:
        """Searches from the env's state (the keywords as an agent's ``search`` takes them)."""
        ...


class Task(NamedTuple):
    """A task of a batch: the agent-like ``search`` a worker runs and its ``budgets``."""

    search: Searching
    budgets: Budgets


class Done(NamedTuple):
    """A task's result, as its worker hands it back.

    Attributes:
        score: the best score its search found (``NEG_INF``: none).
        actions: the moves of that game.
        playouts: the playouts it made.
        seconds: how long it searched.
        iterations: its iterations (complete runs, tree iterations).
        stopped: why it stopped (a :class:`~mc_envs.agents.base.StopReason`).
        ready: seconds from the task's start to its first report (None: it never ran).
        node: the process that ran it (``host:pid``, or ``"caller"``; None: none returned it).
        by: ``"worker"`` or ``"caller"``, the copy that counted (None: none).
        cancelled: a caller's copy cancelled because a worker's copy came first.
    """

    score: float
    actions: list[int]
    playouts: int
    seconds: float
    iterations: int
    stopped: str
    ready: float | None = None
    node: str | None = None
    by: str | None = None
    cancelled: bool = False

    @classmethod
    def of(cls, result: SearchResult) -> Done:
        """A search's result as the plain data a worker sends back."""
        return cls(
            score=float(result.score),
            actions=[int(a) for a in result.actions],
            playouts=int(result.playouts),
            seconds=float(result.seconds),
            iterations=int(result.iterations),
            stopped=result.stopped,
        )

    def row(self) -> dict[str, object]:
        """The public row of ``SearchResult.extra["workers"]`` (every field but ``cancelled``)."""
        row = self._asdict()
        del row["cancelled"]
        return row


class Lost(NamedTuple):
    """A task's result when its worker died (``why``: what the pool knows of it)."""

    why: str


Outcome = Done | Lost


class Channel(Protocol):
    """A task's way to its master: where :func:`run_task` reports (a pool's worker side)."""

    def put(self, message: Message) -> None:
        """Sends a progress message."""

    def stopped(self, index: int) -> bool:
        """Whether task ``index`` must return now."""
        ...

    def where(self) -> str:
        """The process running the task (``host:pid``, or ``"caller"``)."""
        ...
