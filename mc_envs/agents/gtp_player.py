"""Any GTP engine as an agent: ``"gtp:/usr/games/gnugo --mode gtp --level 10"`` as a spec.

:class:`GtpPlayer` plays Go (``mc_envs/Go-v0``) through an outside program that speaks GTP
version 2 (the Go Text Protocol) on its stdin and stdout: GNU Go, KataGo, Leela Zero, Pachi, or
``mc-envs gtp`` itself. The program starts at the first move (``shlex`` splits the command line;
no shell), must answer ``protocol_version`` with ``2``, and gets the env's ``boardsize`` and
``komi`` and a ``clear_board``. Before each ``genmove`` for the colour to move, the player brings
the engine's board to the env's: the opponent's move since the last one (``play``), or, when the
env was reset, undone or restored, the game again from the start (``clear_board`` then the moves
it sent, as far as they match). A position reached otherwise (a restored snapshot of another
game) is set up stone by stone, so the engine does not know its earlier positions (superko).
The env stays the referee: an engine move that is illegal there raises :class:`GtpError`.

Resignation: an engine that answers ``resign`` passes from then on in that game (its later
moves are passes, the engine is not asked again) and :attr:`GtpPlayer.resigned` is True; the
game ends as any other, scored by the env (a resigning engine is nearly always behind and loses
the count). Give GNU Go ``--never-resign`` to have it play on.

Every read has a timeout. An engine that dies, answers garbage or nothing in time raises
:class:`GtpError` naming the engine and the last command, and is ended (``quit``, then
terminate, then kill). :meth:`GtpPlayer.close` ends it the same way, and so does the garbage
collector or the interpreter's exit.
"""

from __future__ import annotations

import contextlib
import queue
import shlex
import shutil
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from mc_envs.core import unwrap
from mc_envs.state import State

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.envs.go import GoEnv
    from mc_envs.state import State


STARTUP_TIMEOUT = 120.0  # seconds for the first answer (an engine may load a network)
COMMAND_TIMEOUT = 30.0
GENMOVE_TIMEOUT = 300.0


class GtpError(ValueError):
    """A GTP engine died, timed out, answered garbage, refused a command, or played a move that
    is illegal in the env; the message names the engine and the last command."""


def _reader(stream: IO[str], lines: queue.Queue) -> None:
    with contextlib.suppress(OSError, ValueError):  # closed by _shutdown while reading
        for line in iter(stream.readline, ""):
            lines.put(line)
    lines.put(None)  # end of file


def _shutdown(proc: subprocess.Popen, err: IO[bytes]) -> None:
    """Ends the engine: ``quit``, then terminate, then kill, each given 2 s; reaps it."""
    if proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.write("quit\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        for stop in (None, proc.terminate, proc.kill):
            if stop is not None:
                with contextlib.suppress(OSError):
                    stop()
            try:
                proc.wait(timeout=2.0)
                break
            except subprocess.TimeoutExpired:
                continue
    for stream in (proc.stdin, proc.stdout):
        with contextlib.suppress(OSError, ValueError):
            stream.close()  # type: ignore[union-attr]
    with contextlib.suppress(OSError):
        err.close()


class GtpPlayer:
    """A GTP engine playing Go: ``act(env)`` asks it ``genmove`` for the colour to move.

    Args:
        command: the engine's command line (a string split with ``shlex``, or a list).
        time_limit: if given, the engine gets ``time_settings 0 <seconds> 1`` (byo-yomi: this
            many seconds per move); GNU Go and most engines budget their moves by it.
        timeout: seconds to wait for a ``genmove`` answer (default 300, or 3x ``time_limit`` +
            30 when that is larger); other commands wait 30 s, the first one 120 s. A given
            ``timeout`` is the wait of every command.

    Raises:
        ValueError: an empty command line, or a program that is not found.
    """

    name = "gtp"

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        time_limit: float | None = None,
        timeout: float | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not argv:
            raise ValueError(
                "gtp: the engine's command line is empty (e.g. 'gtp:gnugo --mode gtp')"
            )
        if shutil.which(argv[0]) is None:
            raise ValueError(f"gtp: no program {argv[0]!r} (not found, or not executable)")
        self.argv = argv
        self.command = shlex.join(argv)
        self.time_limit = time_limit
        default = (
            GENMOVE_TIMEOUT if time_limit is None else max(GENMOVE_TIMEOUT, 3 * time_limit + 30)
        )
        self.genmove_timeout = default if timeout is None else float(timeout)
        self.command_timeout = COMMAND_TIMEOUT if timeout is None else float(timeout)
        self.startup_timeout = STARTUP_TIMEOUT if timeout is None else float(timeout)
        self.resigned = False
        self.last_command = ""
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._err: IO[bytes] | None = None
        self._finalizer: weakref.finalize | None = None
        self._config: tuple | None = None  # (size, komi) the engine was set to
        self._sim: GoEnv | None = None  # made by _shadow
        self._sim_key: tuple | None = None  # the config it was made for
        self._start: State | None = None  # the empty board's State, made by _shadow
        self._moves: list[int] = []  # the moves of the engine's game, from its empty board
        self._states: list[State] = []  # the env's state before each of them, then after the last

    @property
    def params(self) -> dict:
        """The engine's command line and budget (for records)."""
        return {"command": self.command, "time_limit": self.time_limit}

    @property
    def pid(self) -> int | None:
        """The engine's process id while it runs (None before the first move and after close)."""
        return None if self._proc is None else self._proc.pid

    # -- the process ----------------------------------------------------------------------------

    def start(self) -> None:
        """Starts the engine (done by the first move) and checks it speaks GTP version 2.

        Raises:
            GtpError: it cannot start, dies, or answers another protocol version.
        """
        if self._proc is not None:
            return
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 (closed with the engine)
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._err,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
        except OSError as exc:
            self._err.close()
            raise GtpError(f"GTP engine {self.command!r} did not start: {exc}") from None
        self._lines = queue.Queue()
        threading.Thread(target=_reader, args=(self._proc.stdout, self._lines), daemon=True).start()
        self._finalizer = weakref.finalize(self, _shutdown, self._proc, self._err)
        version = self.send("protocol_version", timeout=self.startup_timeout)
        if version.strip() != "2":
            self._fail(f"answered protocol_version with {version!r}, not 2")
        if self.time_limit is not None:
            self.send(f"time_settings 0 {max(1, round(self.time_limit))} 1")

    def close(self) -> None:
        """Ends the engine (``quit``, then terminate, then kill after 2 s each). Idempotent."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = None
        self._config = None

    def __enter__(self) -> GtpPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stderr_tail(self) -> str:
        if self._err is None or self._err.closed:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._err.seek(0)
            tail = self._err.read().decode("utf-8", "replace").strip()[-300:]
            return f"; its stderr ends: {tail!r}" if tail else ""
        return ""

    def _fail(self, what: str) -> None:
        code = None if self._proc is None else self._proc.poll()
        died = f" (it exited with code {code})" if code is not None else ""
        message = (
            f"GTP engine {self.command!r} {what}{died}, at command {self.last_command!r}"
            f"{self._stderr_tail()}"
        )
        self.close()
        raise GtpError(message)

    def send(self, command: str, timeout: float | None = None) -> str:
        """Sends one command and returns the answer's text (after ``=``), starting the engine first.

        Raises:
            GtpError: the engine refused it (``? message``; the engine keeps running), died,
                answered garbage or nothing within ``timeout`` seconds (the engine is ended).
        """
        if self._proc is None:
            self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        self.last_command = command
        try:
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            self._fail("died")
        wait = self.command_timeout if timeout is None else timeout
        first = self._line(wait)
        while not first.strip():
            first = self._line(wait)
        head = first.lstrip()
        status, _, rest = head[:1], None, head[1:].lstrip("0123456789")
        if status not in ("=", "?"):
            self._fail(f"answered garbage {first.strip()[:80]!r}")
        body = [rest.strip()]
        while (line := self._line(wait)).strip():
            body.append(line.rstrip("\r\n"))
        text = "\n".join(body).strip()
        if status == "?":
            raise GtpError(f"GTP engine {self.command!r} refused {command!r}: {text}")
        return text

    def _line(self, timeout: float) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self._fail(f"gave no answer within {timeout:g} s")
        if line is None:
            if self._proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(timeout=2.0)
            self._fail("died")
        return line

    # -- the game -------------------------------------------------------------------------------

    def reset(self) -> None:
        """A new game: the engine's board is brought to the env's at the next move."""
        self.resigned = False

    def act(self, env: gym.Env) -> int:
        """The engine's move for the player to move (``genmove``), after its board is the env's.

        The env is only read: the player follows the game on an env of its own.

        Raises:
            ValueError: the env is not Go or the game is over.
            GtpError: see :meth:`send`; also an engine move that is illegal in the env.
        """
        base = _go(env)
        if len(base.legal_actions()) == 0:
            raise ValueError("no legal move: the game is over")
        n = int(base.size)
        now = base.clone_state()
        sim = self._shadow(base)
        if self.resigned and now != self._start:
            return n * n
        self._sync(now, n, float(base.komi))
        colour = "bw"[base.current_player]
        answer = self.send(f"genmove {colour}", timeout=self.genmove_timeout).strip().lower()
        if answer == "resign":
            self.resigned = True
            return n * n
        vertices = {sim.action_to_string(a).lower(): a for a in range(n * n + 1)}
        if answer not in vertices:
            self._fail(f"answered genmove with {answer!r}, not a vertex of the {n}x{n} board")
        action = vertices[answer]
        sim.restore_state(now)
        try:
            sim.step(action)
        except ValueError as exc:  # IllegalActionError
            self._fail(f"played {answer!r}, illegal here ({exc})")
        self._moves.append(action)
        self._states.append(sim.clone_state())
        return action

    def final_score(self, env: gym.Env) -> str:
        """The engine's own count of the env's position (GTP ``final_score``: ``"B+3.5"``,
        ``"W+0.5"``, ``"0"``), after its board is brought to the env's (the last passes sent).

        Raises:
            ValueError: the env is not Go.
            GtpError: see :meth:`send` (an engine without ``final_score`` refuses it).
        """
        base = _go(env)
        self._shadow(base)
        self._sync(base.clone_state(), int(base.size), float(base.komi))
        return self.send("final_score", timeout=self.genmove_timeout).strip()

    def _shadow(self, base: GoEnv) -> GoEnv:
        """The player's own env of the game's config, where it replays and compares positions."""
        key = (type(base), base.size, base.komi, base.max_moves, base.history)
        if self._sim_key != key:
            self._sim = type(base)(
                size=base.size,
                komi=base.komi,
                max_moves=base.max_moves,
                history=base.history,
                illegal_action="raise",
            )
            self._sim.reset()
            self._start = self._sim.clone_state()
            self._sim_key = key
        return self._replay

    @property
    def _replay(self) -> GoEnv:
        """The player's own env of the game (made by :meth:`_shadow`, which every move calls
        first)."""
        assert self._sim is not None
        return self._sim

    def _sync(self, now: State, n: int, komi: float) -> None:
        """Brings the engine's board to the position ``now``."""
        if self._config != (n, komi):
            self.send(f"boardsize {n}")
            self.send(f"komi {komi:g}")
            self._config = (n, komi)
            self._restart()
        if self._states[-1] == now or self._follows(now, n):
            return
        found = [j for j, state in enumerate(self._states) if state == now]
        if found:  # an earlier position of the engine's game: the game again up to it
            moves = self._moves[: found[-1]]
            self._restart()
            for action in moves:
                self._play_next(action)
        elif now == self._start:
            self._restart()
        else:
            self._set_up(now)

    def _restart(self) -> None:
        self.send("clear_board")
        self.resigned = False
        assert self._start is not None  # made by _shadow, as the player's env
        self._moves, self._states = [], [self._start]

    def _play_next(self, action: int) -> None:
        """Plays ``action`` in the engine after its last move, and records it."""
        sim = self._replay
        sim.restore_state(self._states[-1])
        self.send(f"play {'bw'[sim.current_player]} {sim.action_to_string(action)}")
        sim.step(action)
        self._moves.append(action)
        self._states.append(sim.clone_state())

    def _follows(self, now: State, n: int) -> bool:
        """Plays the move that leads from the engine's position to ``now``, if one does."""
        sim = self._replay
        sim.restore_state(self._states[-1])
        before, mover = sim.board, sim.current_player
        sim.restore_state(now)
        added = ((before != mover + 1) & (sim.board == mover + 1)).ravel().nonzero()[0]
        if len(added) > 1:
            return False
        action = int(added[0]) if len(added) else n * n
        sim.restore_state(self._states[-1])
        if action not in sim.legal_actions():
            return False
        sim.step(action)
        if sim.clone_state() != now:
            return False
        self._play_next(action)
        return True

    def _set_up(self, now: State) -> None:
        """Puts the stones of ``now`` on the engine's empty board (no earlier positions known)."""
        self._restart()
        sim = self._replay
        sim.restore_state(now)
        board = sim.board.ravel()
        for point in board.nonzero()[0]:
            colour = "bw"[int(board[point]) - 1]
            self.send(f"play {colour} {sim.action_to_string(int(point))}")
        self._moves, self._states = [], [now]


def _go(env: gym.Env) -> GoEnv:
    """The Go env under ``env``'s wrappers; ValueError for any other game."""
    from mc_envs.envs.go import GoEnv

    base = unwrap(env)
    if not isinstance(base, GoEnv):
        raise ValueError(f"gtp: a GTP engine plays Go only, not {type(base).__name__}")
    return base
