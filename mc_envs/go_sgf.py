"""Go game records in SGF (FF[4]), the Go world's record format, read and written with sgfmill.

A written record has, in its root node, ``FF[4] GM[1] CA[UTF-8] SZ KM RU PB PW RE DT AP``, then
one node per move: ``B[dc]`` / ``W[dc]`` with SGF points (column letter then row letter, ``aa``
the top-left point, so ``dc`` is column 3, row 2 from the top: action ``2 * n + 3``), and a pass as
an empty ``B[]`` / ``W[]`` (FF[4]; ``tt`` is read as a pass too on boards up to 19x19).

- ``RU[Chinese]``: the rules name readers know (KGS, CGOS, Sabaki, KataGo) nearest to ours; the
  exact rules are Go-v0's: Tromp-Taylor area scoring (every stone on the board counts as alive),
  positional superko, suicide illegal.
- ``RE`` as the SGF spec writes it, from Go-v0's area score: ``B+3.5``, ``W+0.5``, ``0`` for a
  draw; no ``RE`` when the game was left before its end. A game stopped at the move cap
  (``max_moves``: truncated in the env) gets the Tromp-Taylor score of the board there, the
  adjudication that ``returns()`` and the planners use, and a ``GC`` saying so. Read: also ``Draw``, ``B+`` (winner
  only), ``B+R`` / ``B+Resign``, ``B+T`` / ``B+Time``, ``B+F`` / ``B+Forfeit``, ``?`` and ``Void``.
- Read: the main line only (variations are skipped), a missing ``SZ`` is 19 and a missing ``KM``
  0 (sgfmill's default). Refused, each with a one-line :class:`SgfError` naming the node (0 is
  the root) and the property: not SGF, ``GM`` other than 1, ``SZ`` outside 5..19 or non-square,
  a point off the board, setup stones (``AB``, ``AW``, ``AE``: handicap stones included) and
  ``HA`` of 2 or more, ``PL[W]`` at the start (Go-v0 starts with Black), ``B`` and ``W`` in one
  node, more than ``4 * n * n`` moves, a file over :data:`MAX_BYTES`.

:func:`verify` replays a record under the strict rules and compares ``RE`` with our score.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, SupportsFloat, cast

from mc_envs.records import Verdict, write_atomic

if TYPE_CHECKING:
    import gymnasium as gym

    from mc_envs.contract import Session
    from mc_envs.envs.go import GoEnv
    from mc_envs.state import State

MAX_BYTES = 1 << 20  # a Go game record is a few KB; sgfmill parses 1 MiB in about 0.6 s
RULES = "Chinese"
COLOURS = ("b", "w")
NAMES = ("Black", "White")
_RESULT = re.compile(r"([BW])\+(.*)", re.IGNORECASE)
_HOW = {"r": "resignation", "resign": "resignation", "t": "time", "time": "time"}
_HOW |= {"f": "forfeit", "forfeit": "forfeit"}


class SgfError(ValueError):
    """An SGF file that cannot be read as a Go-v0 game: one line naming the file, the node
    (0 is the root) and the property."""


@dataclass(frozen=True)
class GoRecord:
    """A Go game as an SGF file gives it.

    Attributes:
        size: the board's side.
        komi: White's komi.
        actions: the moves as Go-v0 actions (``row * size + col``, row 0 at the top;
            ``size * size`` a pass).
        colours: who made each move: 0 Black, 1 White.
        result: ``RE`` as written (``"B+3.5"``, ``"W+R"``, ``"0"``), or None.
        black, white: ``PB`` and ``PW``, or None.
        rules: ``RU``, or None.
        nodes: the node index (0 the root) of each move, for messages.
        comment: ``GC`` (the game's comment), or None.
    """

    size: int
    komi: float
    actions: tuple[int, ...]
    colours: tuple[int, ...]
    result: str | None = None
    black: str | None = None
    white: str | None = None
    rules: str | None = None
    nodes: tuple[int, ...] = ()
    comment: str | None = None

    def __post_init__(self) -> None:
        if not self.nodes:
            object.__setattr__(self, "nodes", tuple(range(1, len(self.actions) + 1)))


def result_text(margin: float) -> str:
    """``RE`` of Black's margin (Black's area minus White's minus komi): ``"B+3.5"``,
    ``"W+0.5"``, ``"0"`` for a draw."""
    if margin == 0:
        return "0"
    return f"{'B' if margin > 0 else 'W'}+{abs(margin):g}"


def margin(env: GoEnv) -> float:
    """Black's Tromp-Taylor margin on the board of a Go env now: areas, then komi to White."""
    black, white = env.area()
    return float(black - white - env.komi)


def game_record(
    env: gym.Env, actions: list[int], *, black: str | None = None, white: str | None = None
) -> GoRecord:
    """The record of a game played on ``env`` (a Go env, unwrapped, at the game's last
    position): ``RE`` from our score if the game is over (or stopped at the move cap, with a
    ``GC`` saying so), else none."""
    go = cast("GoEnv", env.unwrapped)
    over = len(go.legal_actions()) == 0
    truncated = go.kernel.truncated
    cut = over and truncated is not None and bool(truncated(go.state_view))
    return GoRecord(
        size=int(go.size),
        komi=float(go.komi),
        actions=tuple(int(a) for a in actions),
        colours=tuple(i % 2 for i in range(len(actions))),
        result=result_text(margin(go)) if over else None,
        black=black,
        white=white,
        rules=RULES,
        comment=cap_note(go.max_moves) if cut else None,
    )


def cap_note(max_moves: int) -> str:
    """``GC`` of a game stopped at the move cap."""
    return f"stopped at the move cap (max_moves={max_moves}): RE is the Tromp-Taylor score there"


def to_sgf(record: GoRecord, *, date: _dt.date | None = None) -> bytes:
    """The record as SGF FF[4] bytes (UTF-8); ``date`` for ``DT`` (default: today, UTC)."""
    from sgfmill import sgf

    from mc_envs import __version__

    game = sgf.Sgf_game(record.size)
    root = game.get_root()
    root.set("KM", float(record.komi))
    root.set("RU", record.rules or RULES)
    fields = (("PB", record.black), ("PW", record.white), ("RE", record.result))
    for key, value in (*fields, ("GC", record.comment)):
        if value is not None:
            root.set(key, str(value))
    game.set_date(date or _dt.datetime.now(_dt.timezone.utc).date())
    root.set("AP", ("mc-envs", __version__))
    n = record.size
    for colour, action in zip(record.colours, record.actions):
        node = game.extend_main_sequence()
        if action == n * n:  # FF[4]'s pass (sgfmill would write FF[3]'s tt)
            node.set_raw("BW"[colour], b"")
        else:
            row, col = divmod(int(action), n)
            node.set_move(COLOURS[colour], (n - 1 - row, col))  # sgfmill: rows from the bottom
    return game.serialise()


def write_sgf(path: str | os.PathLike, record: GoRecord, *, date: _dt.date | None = None) -> None:
    """Writes the record atomically (a temporary file, then a rename)."""
    write_atomic(path, to_sgf(record, date=date))


def save_game(
    path: str | os.PathLike,
    env: gym.Env,
    actions: list[int],
    *,
    black: str | None = None,
    white: str | None = None,
) -> GoRecord:
    """Writes the game played on ``env`` (see :func:`game_record`) to ``path``; returns it."""
    record = game_record(env, actions, black=black, white=white)
    write_sgf(path, record)
    return record


def save_session(
    path: str | os.PathLike,
    session: Session,
    vs: str | None,
    saved: State | None = None,
    final: bool = False,
) -> State | None:
    """The play window's save (:class:`mc_envs.render.play.PlaySession`): writes its Go game
    when it is over (or, ``final``, unfinished with moves) and differs from ``saved``, the state
    written last; returns the state written, else ``saved``. ``PB`` / ``PW``: ``human`` and
    ``vs``."""
    from mc_envs.games.go_layout import LAST

    env = session.env.unwrapped  # (the env itself: the session's is unwrapped)
    now = session.env.clone_state()
    if now == saved or not (session.over or (final and session.moves)):
        return saved
    states = [*session.undo_stack[1:], now] if session.undo_stack else []
    names = ["human", vs or "human"][:: -1 if session.human_player else 1]
    save_game(path, env, [int(s.data[LAST]) for s in states], black=names[0], white=names[1])
    return now


def is_sgf(path: str | os.PathLike) -> bool:
    """A ``.sgf`` file name, or a file whose text starts with ``(;``."""
    path = Path(path)
    if path.suffix.lower() == ".sgf":
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.lstrip().startswith(b"(;")


def read_sgf(path: str | os.PathLike) -> GoRecord:
    """Reads a Go game from an SGF file (see the module's docstring for what it refuses).

    Raises:
        SgfError: one line naming the file, and the node and property at fault.
    """
    name = str(path)
    try:
        if Path(path).stat().st_size > MAX_BYTES:
            raise SgfError(f"{name}: over {MAX_BYTES:,} bytes: not read (a game is a few KB)")
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SgfError(f"{name}: cannot read: {exc.strerror}") from None
    return parse_sgf(data, name)


def parse_sgf(data: bytes, name: str = "<sgf>") -> GoRecord:
    """Reads a Go game from SGF bytes; ``name`` for the messages.

    Raises:
        SgfError: see :func:`read_sgf`.
    """
    from sgfmill import sgf, sgf_grammar

    if len(data) > MAX_BYTES:
        raise SgfError(f"{name}: over {MAX_BYTES:,} bytes: not read (a game is a few KB)")
    try:
        coarse = sgf_grammar.parse_sgf_game(bytes(data))
    except ValueError as exc:
        raise SgfError(f"{name}: not an SGF file ({exc})") from None
    fault = _Faults(name, coarse.sequence[0])
    size = _board_size(fault)
    try:
        game = sgf.Sgf_game.from_coarse_game_tree(coarse)
    except (ValueError, LookupError):
        raise fault(0, "CA", "an unknown character set") from None
    try:
        fault.nodes = game.get_main_sequence()
    except (ValueError, LookupError) as exc:
        raise SgfError(f"{name}: node 0: {exc}") from None
    komi = _komi(fault.nodes[0], fault)
    result = _check_start(fault)
    actions, colours, where = _moves(fault, size)
    return GoRecord(
        size=size,
        komi=komi,
        actions=tuple(actions),
        colours=tuple(colours),
        result=result,
        black=fault.text("PB"),
        white=fault.text("PW"),
        rules=fault.text("RU"),
        nodes=tuple(where),
        comment=fault.text("GC"),
    )


class _Node(Protocol):
    """What is read of an sgfmill node (sgfmill has no types): ``get`` reads a value as its
    property's type says (KM a float), ``get_move`` the colour and (row, col) from the bottom."""

    def has_property(self, identifier: str) -> bool: ...
    def get_raw_list(self, identifier: str) -> list[bytes]: ...
    def get(self, identifier: str) -> object: ...
    def get_move(self) -> tuple[str | None, tuple[int, int] | None]: ...


class _Faults:
    """The errors of one SGF file, each naming the node and quoting the property at fault; and its
    root's text properties, read."""

    def __init__(self, name: str, root: dict[str, list[bytes]]) -> None:
        self.name = name
        self.root = root  # the root node's raw properties
        self.nodes: list[_Node] = []  # the main sequence, once read

    def __call__(self, node: int, prop: str, why: str) -> SgfError:
        raw = b"][".join(self._raw(node, prop)).decode("utf-8", "replace")[:40]
        raw = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in raw)
        return SgfError(f"{self.name}: node {node}: property {prop}[{raw}]: {why}")

    def _raw(self, node: int, prop: str) -> list[bytes]:
        return self.root.get(prop, [b""]) if node == 0 else self.nodes[node].get_raw_list(prop)

    def text(self, prop: str) -> str | None:
        """The root's property ``prop`` as text (None: absent)."""
        if not self.nodes[0].has_property(prop):
            return None
        try:
            return str(self.nodes[0].get(prop))
        except (ValueError, LookupError) as exc:
            raise self(0, prop, f"unreadable ({exc or 'malformed'})") from None


def _board_size(fault: _Faults) -> int:
    """The board size of a Go record (GM[1]), square and within Go-v0's sizes."""
    from mc_envs.games.go_layout import MAX_SIZE, MIN_SIZE

    root = fault.root
    gm = root.get("GM", [b"1"])[0].strip()
    if gm != b"1":
        raise fault(0, "GM", "not a Go record (Go is GM[1])")
    size_raw = root.get("SZ", [b"19"])[0].strip()
    if b":" in size_raw:
        raise fault(0, "SZ", "a non-square board; Go-v0 boards are square")
    if not size_raw.isdigit() or not MIN_SIZE <= int(size_raw) <= MAX_SIZE:
        raise fault(0, "SZ", f"the board size must be {MIN_SIZE}..{MAX_SIZE}")
    return int(size_raw)


def _check_start(fault: _Faults) -> str | None:
    """Checks the game starts as Go-v0's (no handicap, Black first); its result (None: unknown)."""
    handicap = fault.root.get("HA", [b"0"])[0].strip()
    if not handicap.isdigit():
        raise fault(0, "HA", "not a number")
    if int(handicap) >= 2:
        raise fault(0, "HA", "handicap games are not supported (Go-v0 starts on an empty board)")
    if (fault.text("PL") or "B").upper().startswith("W"):
        raise fault(0, "PL", "White to play first is not supported (Go-v0 starts with Black)")
    result = fault.text("RE")
    if result is not None:
        result = result.strip()
        if parse_result(result) is None:
            raise fault(0, "RE", "not a result (B+3.5, W+R, 0, Draw, Void or ?)")
    return result


def _moves(fault: _Faults, size: int) -> tuple[list[int], list[int], list[int]]:
    """The moves of the main sequence: their actions, colours (0 Black) and nodes."""
    actions: list[int] = []
    colours: list[int] = []
    where: list[int] = []
    for i, node in enumerate(fault.nodes):
        for prop in ("AB", "AW", "AE"):
            if node.has_property(prop):
                raise fault(i, prop, "setup stones are not supported (Go-v0 replays moves)")
        has = [c for c in ("B", "W") if node.has_property(c)]
        if not has:
            continue
        if len(has) == 2:
            raise fault(i, "W", "B and W in one node")
        if len(actions) >= 4 * size * size:
            raise fault(i, has[0], f"more than {4 * size * size} moves")
        try:
            _, point = node.get_move()
        except ValueError:
            raise fault(i, has[0], f"not a point of the {size}x{size} board") from None
        actions.append(size * size if point is None else (size - 1 - point[0]) * size + point[1])
        colours.append(0 if has[0] == "B" else 1)
        where.append(i)
    return actions, colours, where


def _komi(root: _Node, fault: _Faults) -> float:
    try:
        komi = float(cast(SupportsFloat, root.get("KM"))) if root.has_property("KM") else 0.0
    except (ValueError, LookupError):
        raise fault(0, "KM", "not a number") from None
    if not abs(komi) <= 1000 or komi * 2 != round(komi * 2):  # nan and inf fail the first
        raise fault(0, "KM", "komi must be a multiple of 0.5 within -1000..1000")
    return komi


def parse_result(text: str) -> tuple[int | None, float | None, str] | None:
    """``RE`` read: ``(winner, margin, how)`` with winner 0 Black, 1 White or None; the margin
    when a score is given; how one of ``score``, ``winner``, ``draw``, ``resignation``,
    ``time``, ``forfeit``, ``unknown``, ``void``. None when the text is not a result."""
    t = text.strip()
    if t.lower() in ("0", "draw", "jigo"):
        return None, 0.0, "draw"
    if t == "?":
        return None, None, "unknown"
    if t.lower() == "void":
        return None, None, "void"
    found = _RESULT.fullmatch(t)
    if not found:
        return None
    winner = "BW".index(found.group(1).upper())
    rest = found.group(2).strip()
    if not rest:
        return winner, None, "winner"
    if rest.lower() in _HOW:
        return winner, None, _HOW[rest.lower()]
    try:
        value = float(rest)
    except ValueError:
        return None
    if value != value or value <= 0 or value == float("inf"):
        return None
    return winner, value if winner == 0 else -value, "score"


def make_env(record: GoRecord) -> GoEnv:
    """The strict Go env of a record at its start (``max_moves`` at least the record's moves)."""
    from mc_envs.envs.go import GoEnv

    n = record.size
    env = GoEnv(n, record.komi, max(2 * n * n, len(record.actions)), illegal_action="raise")
    env.reset(seed=0)
    return env


def out_of_turn(record: GoRecord) -> str | None:
    """The first move played out of turn (Go-v0 alternates, Black first), described; or None."""
    for i, colour in enumerate(record.colours):
        if colour != i % 2:
            node = record.nodes[i]
            return (
                f"move {i + 1} (node {node}): {NAMES[colour]} plays out of turn "
                f"({NAMES[i % 2]} to move; a pass is B[] or W[])"
            )
    return None


def _replay(record: GoRecord, env: GoEnv) -> Verdict | None:
    """Plays the record's moves in ``env``; the verdict on the first out of turn or illegal (None:
    every move played)."""
    from mc_envs.core import IllegalActionError

    for i, (colour, action) in enumerate(zip(record.colours, record.actions)):
        move = f"move {i + 1} (node {record.nodes[i]}, {COLOURS[colour].upper()} "
        move += f"{env.action_to_string(action)})"
        if colour != env.current_player and len(env.legal_actions()):
            return Verdict(False, margin(env), i, f"{out_of_turn(record)}")
        try:
            env.step(action)
        except IllegalActionError as exc:
            return Verdict(False, margin(env), i, f"{move} is illegal: {exc.reason}")
    return None


def verify(record: GoRecord) -> Verdict:
    """Replays a record (illegal moves raise) and compares ``RE`` with our score.

    Certified (``ok``): every move legal, and ``RE`` equals our Tromp-Taylor score of the last
    position (the winner alone for ``B+``; a resignation, time or forfeit only when the moves
    stop before the game's end). Not certified: an illegal move (named), a result that differs,
    or no result to compare (``RE`` missing, ``?`` or ``Void``). ``Verdict.score`` is Black's
    margin.
    """
    env = make_env(record)
    n = len(record.actions)
    refused = _replay(record, env)
    if refused is not None:
        return refused
    score = margin(env)
    ours = result_text(score)
    black, white = env.area()
    detail = f"Black {black}, White {white}, komi {env.komi:g}"
    over = len(env.legal_actions()) == 0
    where = "" if over else " (the moves stop before two passes: scored as the board stands)"
    cut = env.kernel.truncated
    if over and cut is not None and cut(env.state_view):
        where = f" (stopped at the move cap, {env.max_moves} moves: scored as the board stands)"
    said = record.result
    parsed = parse_result(said) if said is not None else None
    if parsed is None or parsed[2] in ("unknown", "void"):
        what = "no RE" if said is None else f"RE[{said}]"
        return Verdict(False, score, n, f"{what}: no result to check; we score {ours}{where}")
    winner, value, how = parsed
    if how in ("resignation", "time", "forfeit"):
        if over:
            return Verdict(
                False,
                score,
                n,
                f"result differs: RE[{said}] ({how}), but the game ran to its end, where we "
                f"score {ours} ({detail})",
            )
        text = f"certified: {n} legal moves; RE[{said}]: {NAMES[winner or 0]} won by {how}"
        return Verdict(True, score, n, text)
    same = (winner == (0 if score > 0 else 1)) if how == "winner" else value == score
    if score == 0 and how == "winner":
        same = False
    if not same:
        return Verdict(
            False, score, n, f"result differs: RE[{said}], we score {ours} ({detail}){where}"
        )
    size = record.size
    return Verdict(
        True,
        score,
        n,
        f"certified: {n} legal moves on {size}x{size}, RE[{said}] = our score ({detail}){where}",
    )
