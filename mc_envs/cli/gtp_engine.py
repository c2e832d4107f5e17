"""``mc-envs gtp``: our agents as a Go engine speaking GTP version 2 on stdin and stdout.

GoGui, Sabaki, gogui-twogtp or any match runner start ``mc-envs gtp --agent uct-hard`` and send
commands one a line; :class:`GtpEngine` answers ``= result`` or ``? message`` followed by an
empty line, with the command's id if it had one. Vertices are GTP's (``E5``: columns A-T without
I, rows counted from the bottom; ``pass``), colours ``b``/``w``/``black``/``white``. The board is a
``mc_envs/Go-v0`` env in strict mode: a ``play`` it refuses answers ``? illegal move``. A move for
the colour not to move (GoGui sends setup stones so) first passes for the side to move.

Time: without ``time_settings`` the agent uses its own budget (a preset's iterations). With it,
each ``genmove`` of a tree search (UCT, PUCT) gets ``time_left / stones`` in byo-yomi and
``time_left / max(10, empty points / 2)`` in main time (at least the byo-yomi share
``byo_yomi_time / stones`` when there is byo-yomi), times 0.8, at least 0.05 s; before any
``time_left`` the main time (or the byo-yomi period) counts as left. ``final_score`` is the
Tromp-Taylor count of the board as it stands (every stone alive), komi to White.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from typing import TYPE_CHECKING, TextIO, overload

if TYPE_CHECKING:
    from mc_envs.cli.input import Subparsers

COMMANDS = (
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "undo",
    "showboard",
    "final_score",
    "time_settings",
    "time_left",
    "quit",
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class GtpFailure(Exception):
    """A command that fails: the engine answers ``? <message>`` and goes on."""


def _colour(text: str) -> int:
    c = text.lower()
    if c in ("b", "black"):
        return 0
    if c in ("w", "white"):
        return 1
    raise GtpFailure(f"syntax error: {text!r} is not a colour (b, w, black or white)")


@overload
def _number(text: str) -> int: ...
@overload
def _number(text: str, kind: type[float]) -> float: ...
def _number(text: str, kind: type[int] | type[float] = int) -> int | float:
    try:
        return kind(text)
    except ValueError:
        raise GtpFailure(f"syntax error: {text!r} is not a number") from None


def move_budget(
    settings: tuple[int, int, int] | None, left: tuple[float, int] | None, empty_points: int
) -> float | None:
    """Seconds for one move under GTP time settings (see the module docstring), or None.

    Args:
        settings: ``(main_time, byo_yomi_time, byo_yomi_stones)`` of ``time_settings``, or None.
        left: ``(time, stones)`` of the last ``time_left`` for our colour, or None.
        empty_points: the empty points of the board (our remaining moves: about half of them).
    """
    if settings is None:
        return None
    main, byo, stones = settings
    if byo > 0 and stones == 0:  # GTP: no time limit
        return None
    if left is None:
        left = (float(main), 0) if main > 0 else (float(byo), stones)
    seconds, stones_left = left
    if stones_left > 0:
        budget = seconds / stones_left
    else:
        budget = seconds / max(10, empty_points // 2)
        if byo > 0:
            budget = max(budget, byo / stones)
    return max(0.05, 0.8 * budget)


class GtpEngine:
    """A GTP version 2 engine over ``mc_envs/Go-v0`` and an agent spec.

    Args:
        agent: an agent spec of :mod:`mc_envs.agents.specs` (``"uct"``, ``"uct-hard"``,
            ``"random"``, ``"gtp:..."`` ...).
        size: the board's side at the start (``boardsize`` changes it).
        komi: the komi at the start (``komi`` changes it).
        seed: the agent's seed.
        max_moves: the env's move limit (default ``2 * size * size``); a game that reaches it is
            over: ``genmove`` answers ``pass`` and ``play`` ``? illegal move``.

    Each ``cmd_<name>(args)`` method answers the GTP command ``<name>``: it returns the result
    text or raises :class:`GtpFailure`; :meth:`handle` adds the ``=``/``?``, the id and the
    empty line.

    Raises:
        ValueError: an unknown agent spec, a bad size or komi.
    """

    def __init__(
        self,
        agent: str = "uct",
        *,
        size: int = 9,
        komi: float = 7.5,
        seed: int = 0,
        max_moves: int | None = None,
    ) -> None:
        from mc_envs.agents.specs import parse

        self.spec = agent
        self.agent = parse(agent, seed=seed)
        self.max_moves = max_moves
        self.time_settings: tuple[int, int, int] | None = None
        self.time_left: dict[int, tuple[float, int]] = {}
        self._new_game(size, komi)

    # -- the game -------------------------------------------------------------------------------

    def _new_game(self, size: int, komi: float) -> None:
        """An empty board of ``size`` with ``komi``.

        Raises:
            ValueError: a size or komi the env refuses.
        """
        from mc_envs.envs.go import GoEnv  # mc_envs/Go-v0

        env = GoEnv(
            size=size,
            komi=komi,
            max_moves=self.max_moves,
            illegal_action="raise",
            render_mode="ansi",
        )
        env.reset(seed=0)
        self.env, self.size, self.komi = env, size, komi
        self.moves: list[int] = []  # the env's moves, passes put in for out-of-turn moves included
        self.marks: list[int] = []  # len(moves) before each GTP move, for undo

    def _replay(self, moves: list[int], komi: float | None = None) -> None:
        """The game again from the empty board with ``moves`` (and a new komi), marks kept."""
        marks = self.marks
        self._new_game(self.size, self.komi if komi is None else komi)
        for action in moves:
            self._step(action)
        self.marks = marks

    def _step(self, action: int) -> None:
        self.env.step(action)
        self.moves.append(action)

    def _turn(self, colour: int) -> None:
        """Makes ``colour`` the side to move (a pass for the other side), for one GTP move."""
        self.marks.append(len(self.moves))
        if self.env.current_player != colour and len(self.env.legal_actions()):
            self._step(self.size * self.size)

    # -- commands -------------------------------------------------------------------------------

    def cmd_protocol_version(self, args: list[str]) -> str:
        return "2"

    def cmd_name(self, args: list[str]) -> str:
        return "mc-envs"

    def cmd_version(self, args: list[str]) -> str:
        from mc_envs._version import __version__

        return f"{__version__} ({self.spec})"

    def cmd_known_command(self, args: list[str]) -> str:
        self._need(args, 1, "known_command COMMAND")
        return "true" if args[0] in COMMANDS else "false"

    def cmd_list_commands(self, args: list[str]) -> str:
        return "\n".join(COMMANDS)

    def cmd_boardsize(self, args: list[str]) -> str:
        self._need(args, 1, "boardsize SIZE")
        size = _number(args[0])
        try:
            self._new_game(size, self.komi)
        except ValueError:
            raise GtpFailure("unacceptable size") from None
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        self._new_game(self.size, self.komi)
        self._drop_tree()
        return ""

    def cmd_komi(self, args: list[str]) -> str:
        self._need(args, 1, "komi KOMI")
        komi = _number(args[0], float)
        try:
            self._replay(list(self.moves), komi)
        except ValueError as exc:
            raise GtpFailure(f"unacceptable komi: {exc}") from None
        return ""

    def cmd_play(self, args: list[str]) -> str:
        self._need(args, 2, "play COLOUR VERTEX")
        colour = _colour(args[0])
        from mc_envs.games.go_text import parse_vertex

        try:
            action = parse_vertex(self.size, args[1])
        except ValueError as exc:
            raise GtpFailure(f"syntax error: {exc}") from None
        if not len(self.env.legal_actions()):
            raise GtpFailure("illegal move")
        moves = list(self.moves)
        self._turn(colour)
        if action not in self.env.legal_actions():
            self.marks.pop()
            if len(self.moves) != len(moves):  # take back the pass put in for the other side
                self._replay(moves)
            raise GtpFailure("illegal move")
        self._step(action)
        return ""

    def cmd_genmove(self, args: list[str]) -> str:
        self._need(args, 1, "genmove COLOUR")
        colour = _colour(args[0])
        if not len(self.env.legal_actions()):
            return "pass"
        self._turn(colour)
        action = self._choose(colour)
        self._step(action)
        return self.env.action_to_string(action)

    def cmd_undo(self, args: list[str]) -> str:
        if not self.marks:
            raise GtpFailure("cannot undo")
        mark = self.marks.pop()
        self._replay(self.moves[:mark])
        self._drop_tree()
        return ""

    def cmd_showboard(self, args: list[str]) -> str:
        return "\n" + str(self.env.render()).rstrip("\n")

    def cmd_final_score(self, args: list[str]) -> str:
        black, white = self.env.area()
        diff = black - white - self.env.komi
        return "0" if diff == 0 else f"{'B' if diff > 0 else 'W'}+{abs(diff):g}"

    def cmd_time_settings(self, args: list[str]) -> str:
        self._need(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        values = (_number(args[0]), _number(args[1]), _number(args[2]))
        if min(values) < 0:
            raise GtpFailure("syntax error: time settings are not negative")
        self.time_settings = values
        self.time_left = {}
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        self._need(args, 3, "time_left COLOUR TIME STONES")
        self.time_left[_colour(args[0])] = (_number(args[1], float), _number(args[2]))
        return ""

    def cmd_quit(self, args: list[str]) -> str:
        return ""

    @staticmethod
    def _need(args: list[str], count: int, usage: str) -> None:
        if len(args) < count:
            raise GtpFailure(f"syntax error (use: {usage})")

    def _drop_tree(self) -> None:
        """A tree search starts its next move with a new tree (after an undo or a new game)."""
        from mc_envs.agents.mcts.uct import TreeAgent

        if isinstance(self.agent, TreeAgent):
            self.agent.drop_tree()

    def _choose(self, colour: int) -> int:
        from mc_envs.agents.mcts.uct import TreeAgent

        empty = int((self.env.board == 0).sum())
        budget = move_budget(self.time_settings, self.time_left.get(colour), empty)
        agent = self.agent
        if budget is None or not isinstance(agent, TreeAgent):
            return int(agent.act(self.env))
        saved = agent.iterations, agent.time_limit
        agent.iterations, agent.time_limit = None, budget
        try:
            return int(agent.act(self.env))
        finally:
            agent.iterations, agent.time_limit = saved

    # -- the protocol ---------------------------------------------------------------------------

    def handle(self, line: str) -> tuple[str | None, bool]:
        """The answer to one input line and whether it was ``quit``; ``(None, False)`` for a
        line GTP ignores (empty, or a comment)."""
        line = _CONTROL.sub("", line).split("#", 1)[0].replace("\t", " ").strip()
        if not line:
            return None, False
        words = line.split()
        ident = words.pop(0) if words[0].isdigit() else ""
        if not words:
            return f"?{ident} syntax error: no command\n\n", False
        name, args = words[0], words[1:]
        method = getattr(self, f"cmd_{name}", None) if name in COMMANDS else None
        if method is None:
            return f"?{ident} unknown command\n\n", False
        try:
            result = method(args)
        except GtpFailure as exc:
            return f"?{ident} {exc}\n\n", False
        except Exception as exc:  # an agent's failure: answered, and the engine goes on
            return f"?{ident} {type(exc).__name__}: {exc}".replace("\n", " ") + "\n\n", False
        return f"={ident} {result}\n\n", name == "quit"

    def run(self, stdin: TextIO, stdout: TextIO) -> int:
        """Answers the commands of ``stdin`` on ``stdout`` until ``quit`` or the end of input."""
        for line in iter(stdin.readline, ""):
            answer, done = self.handle(line)
            if answer is not None:
                stdout.write(answer)
                stdout.flush()
            if done:
                break
        return 0


def add_parser(sub: Subparsers) -> None:
    """Adds the ``gtp`` subcommand to the ``mc-envs`` parser's subparsers."""
    from mc_envs.cli.input import POSITIVE_INT

    gtp = sub.add_parser(
        "gtp", help="Go: speak GTP version 2 on stdin/stdout (GoGui, Sabaki, match runners)"
    )
    gtp.add_argument(
        "--agent", default="uct", help="an agent spec: uct[-preset], puct, random, gtp:COMMAND"
    )
    gtp.add_argument("--size", type=POSITIVE_INT, default=9, help="board size at the start")
    gtp.add_argument("--komi", type=float, default=7.5, help="komi at the start")
    gtp.add_argument("--seed", type=int, default=0, help="the agent's seed")
    gtp.add_argument("--max-moves", type=POSITIVE_INT, help="the game's move limit (2*size*size)")
    gtp.set_defaults(func=cmd_gtp)


def cmd_gtp(args: argparse.Namespace) -> int:
    """``mc-envs gtp``: the engine on stdin/stdout; anything else printed goes to stderr."""
    from mc_envs.cli.input import UsageError

    try:
        engine = GtpEngine(
            args.agent, size=args.size, komi=args.komi, seed=args.seed, max_moves=args.max_moves
        )
    except ValueError as exc:
        raise UsageError(f"gtp: {exc}") from None
    out = sys.stdout
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    sys.stdout = sys.stderr  # an agent's prints must not corrupt the protocol
    try:
        return engine.run(stdin, out)
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout = out
