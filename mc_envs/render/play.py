"""``mc-envs play GAME``: play any game of the suite with the mouse.

The window is a thin loop around :class:`PlaySession`, which holds the game and turns pygame events
into moves. :meth:`PlaySession.process` takes a list of events and returns the new state, so a whole
session can be scripted and tested without a screen (``SDL_VIDEODRIVER=dummy``).

Each game's drawing module (:mod:`mc_envs.render.draw`) says what a click or a key does in that game
(``click``, ``key``, ``highlight``, ``show_hint``); the session applies the answer, so it names no
game.

Keys (also in the help overlay, F1 or ``?``): :data:`SHORTCUTS`, then the game's own lines (what
a click does, its keys: :func:`mc_envs.render.draw.help_lines`). Esc closes the help, else cancels
the selection; it never quits (q does), as in the replay window. The status bar says how the game
ended once (the game's own status line), and in two-player games which side the person plays and
against whom ("You: X (first) vs uct"), as does the window title.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import mc_envs.render.draw as controls
from mc_envs.render._pygame import require_pygame
from mc_envs.render.ui import UiState, draw_help

if TYPE_CHECKING:
    import gymnasium as gym
    from pygame import Event, Surface

    from mc_envs.contract import Drawn
    from mc_envs.opponents import Player
    from mc_envs.render.theme import Theme
    from mc_envs.render.ui import Highlight
    from mc_envs.state import State

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("right click", "cancel the selection or the hint"),
    ("u, Ctrl+Z, Backspace", "undo"),
    ("r, Ctrl+Y", "redo"),
    ("n", "new game"),
    ("h", "hint from an agent"),
    ("Enter, Space", "play the hint"),
    ("Esc", "close this help, else cancel the selection or hint"),
    ("F1, ?", "show or hide this help"),
    ("q", "quit"),
)


def make_env(game: str, **kwargs: object) -> Drawn:
    """The unwrapped env of a command-line game name (:data:`mc_envs.registry.GAMES`), with
    play's defaults (Sudoku: every cell can be filled, ``branching="all"``) overridden by
    ``kwargs``."""
    from importlib import import_module

    from mc_envs.registry import find

    g = find(game)
    module, cls = g.entry_point.split(":")
    return getattr(import_module(module), cls)(**{**g.kwargs, **g.cli, **g.play, **kwargs})


def make_opponent(spec: str | None, seed: int = 0) -> Player | None:
    """An agent with ``act(env)`` for ``--vs``, found by name in :mod:`mc_envs.opponents` (the
    agent specs of :mod:`mc_envs.agents.specs`), or None for ``None``, ``"none"`` or ``"human"``
    (two people at one mouse).

    Raises:
        ValueError: an unknown spec, naming the known ones.
    """
    if spec in (None, "", "none", "human"):
        return None
    from mc_envs.opponents import resolve

    return resolve(spec, seed=seed)


@dataclass
class _Job:
    """An agent thinking in a background thread."""

    kind: str  # "move" (the opponent's move) or "hint"
    start: State  # what it thinks about
    thread: threading.Thread
    result: list


class PlaySession:
    """One game being played: the env, undo/redo, the selection, the background agent.

    Args:
        env: an unwrapped built-in env (see :func:`make_env`), already reset or not.
        opponent: for two-player games, an agent with ``act(env)`` that answers the human.
        human_player: the human's side in two-player games against an opponent (0 moves first).
        opponent_name: the opponent as the status bar names it (default: its class name).
        theme: a :class:`mc_envs.render.theme.Theme` (default theme if None).
        hint_agent: an agent with ``act(env)`` that gives the hints (default: UCT at the medium
            preset in two-player games; a puzzle has hints only from an agent given here, as
            ``mc-envs play`` gives NMCS level 1).
        env_factory: makes a fresh env of the same game for the agent to think on (default: the
            env's class with no arguments is not enough in general, so the session clones through
            ``restore_state`` on an env made by this factory; :func:`make_env` gives one).
        seed: the first reset seed; "new game" uses the next ones.
    """

    def __init__(
        self,
        env: gym.Env | Drawn,
        *,
        opponent: Player | None = None,
        human_player: int = 0,
        opponent_name: str | None = None,
        theme: Theme | None = None,
        hint_agent: Player | None = None,
        env_factory: Callable[[], gym.Env | Drawn] | None = None,
        seed: int | None = 0,
    ) -> None:
        from mc_envs.render.theme import default_theme

        self.pygame = require_pygame()
        self.env = cast("Drawn", env.unwrapped)
        self.theme = theme or default_theme()
        self.opponent = opponent
        self.human_player = int(human_player)
        self.opponent_name = opponent_name or type(opponent).__name__
        self.hint_agent = hint_agent
        self.env_factory = env_factory
        self.seed = seed
        self.two_player = hasattr(self.env, "returns")
        self.drawing = controls.module_for(self.env)
        self.undo_stack: list[State] = []
        self.redo_stack: list[State] = []
        self.ui = UiState()
        self.show_help = False
        self.quit = False
        self.job: _Job | None = None
        self.new_game(self.seed)

    # -- game control ---------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        """True when the game has ended."""
        return len(self.env.legal_actions()) == 0

    @property
    def moves(self) -> int:
        """Moves played since the start (the undo depth)."""
        return len(self.undo_stack)

    # the interaction state, as attributes for scripts and tests
    selected = property(lambda self: self.ui.selected, doc="The selected cell, or None.")
    candidates = property(lambda self: self.ui.candidates, doc="The moves being chosen among.")
    candidate = property(lambda self: self.ui.candidate, doc="The index of the shown candidate.")
    hint = property(lambda self: self.ui.hint, doc="The agent's suggested action, or None.")

    @property
    def message(self) -> str:
        """The last message of the status bar."""
        return self.ui.message

    @message.setter
    def message(self, text: str) -> None:
        self.ui.message = text

    def _clear_selection(self) -> None:
        self.ui.clear()

    def new_game(self, seed: int | None = None) -> None:
        """Resets the env (seeded) and forgets the history."""
        self.job = None
        self.env.reset(seed=seed)
        self.undo_stack.clear()
        self.redo_stack.clear()
        self._clear_selection()
        self.message = "new game"
        self._maybe_start_opponent()

    def play(self, action: int) -> bool:
        """Plays a legal action (saving the state for undo); returns False if it is illegal."""
        from mc_envs.core import IllegalActionError, strict

        before = self.env.clone_state()
        try:
            with strict(self.env):
                _, reward, terminated, _, _ = self.env.step(int(action))
        except IllegalActionError as exc:
            self.message = exc.reason
            return False
        self.undo_stack.append(before)
        self.redo_stack.clear()
        self.ui.clear(keep_selected=self.ui.sticky)
        # the game's status line says how it ended, so the message never repeats it
        self.message = f"+{reward:g}" if not self.two_player and reward else ""
        self._maybe_start_opponent()
        return True

    def undo(self) -> None:
        """Takes back the last move (against an opponent: back to the human's previous turn)."""
        self.job = None
        steps = 0
        while self.undo_stack:
            self.redo_stack.append(self.env.clone_state())
            self.env.restore_state(self.undo_stack.pop())
            steps += 1
            if not self._opponent_to_move():
                break
        self._clear_selection()
        self.message = f"undid {steps} move(s)" if steps else "nothing to undo"

    def redo(self) -> None:
        """Replays a move taken back by :meth:`undo`."""
        self.job = None
        if not self.redo_stack:
            self.message = "nothing to redo"
            return
        while self.redo_stack:
            self.undo_stack.append(self.env.clone_state())
            self.env.restore_state(self.redo_stack.pop())
            if not self._opponent_to_move():
                break
        self._clear_selection()
        self.message = "redo"

    # -- agents in the background ---------------------------------------------------------------

    def _opponent_to_move(self) -> bool:
        return (
            self.two_player
            and self.opponent is not None
            and not self.over
            and self.env.current_player != self.human_player
        )

    def _agent_env(self) -> Drawn:
        """A private copy of the env for an agent to search on (the window keeps drawing ours)."""
        if self.env_factory is not None:
            made = self.env_factory()
        else:
            made = object.__new__(type(self.env))
            made.__dict__.update(self.env.__dict__)
            made._render_window = None
        copy = cast("Drawn", made.unwrapped)
        copy.reset(seed=0)
        copy.restore_state(self.env.clone_state())
        return copy

    def _start(self, kind: str, think: Callable[[gym.Env], int]) -> None:
        env = self._agent_env().unwrapped  # (itself: a gym.Env)
        box: list = []

        def run() -> None:
            try:
                box.append(int(think(env)))
            except Exception as exc:  # shown in the status bar, never kills the window
                box.append(exc)

        thread = threading.Thread(target=run, name=f"mc-envs-{kind}", daemon=True)
        self.job = _Job(kind, self.env.clone_state(), thread, box)
        thread.start()

    def _maybe_start_opponent(self) -> None:
        opponent = self.opponent
        if opponent is None or (self.job is not None and self.job.kind == "move"):
            return
        if self._opponent_to_move():
            self.message = "thinking..."
            self._start("move", opponent.act)

    def request_hint(self) -> None:
        """Asks an agent for a move in the background; it is highlighted when ready."""
        if self.over or self.job is not None:
            return
        agent = self.hint_agent
        if agent is None and self.two_player:
            agent = make_opponent("uct-medium", seed=len(self.undo_stack))
        if agent is None:
            self.message = "no hint: this session was given no hint agent"
            return
        self.message = "looking for a hint..."
        self._start("hint", agent.act)

    def poll(self) -> None:
        """Collects a finished background job: plays the opponent's move or shows the hint."""
        job = self.job
        if job is None or job.thread.is_alive():
            return
        self.job = None
        if not job.result or job.start != self.env.clone_state():
            return  # the position changed meanwhile (undo, new game): the answer is stale
        answer = job.result[0]
        if isinstance(answer, Exception):
            self.message = f"agent failed: {answer}"
            return
        if job.kind == "move":
            self.message = ""
            self.play(answer)
        else:
            self._clear_selection()
            controls.show_hint(self.env, answer, self.ui)
            self.message = f"hint: {self.env.action_to_string(answer)} (click it, or Enter)"

    def wait(self, timeout: float = 30.0) -> None:
        """Waits for the background agent (tests and scripts), then collects its answer."""
        if self.job is not None:
            self.job.thread.join(timeout)
        self.poll()

    # -- events ---------------------------------------------------------------------------------

    def process(self, events: Iterable[Event]) -> State:
        """Handles pygame events (mouse, keys, quit) and returns the env's new state (a State)."""
        pg = self.pygame
        for event in events:
            if event.type == pg.QUIT:
                self.quit = True
            elif event.type == pg.MOUSEMOTION:
                self.ui.hover = self.drawing.cell_at(event.pos, self.env, self.theme)
            elif event.type == pg.MOUSEBUTTONDOWN and event.button == 1:
                if self.show_help:
                    self.show_help = False
                else:
                    self.click(event.pos)
            elif event.type == pg.MOUSEBUTTONDOWN and event.button == 3:
                self._clear_selection()
            elif event.type == pg.KEYDOWN:
                self.key(event.key, getattr(event, "unicode", ""), getattr(event, "mod", 0))
        self.poll()
        return self.env.clone_state()

    def _busy(self) -> bool:
        """The opponent is to move: the human's clicks wait."""
        if self._opponent_to_move():
            self.message = "wait: the opponent is thinking"
            return True
        return False

    def _act(self, action: int | None) -> None:
        """Plays what a control chose, unless the opponent is to move."""
        if action is not None and not self._busy():
            self.play(action)

    def click(self, pos: tuple[int, int]) -> None:
        """A left click at a pixel of the board: the game's drawing module says what it does."""
        cell = self.drawing.cell_at(pos, self.env, self.theme)
        if cell is None or self.over or self._busy():
            return
        self._act(controls.click(self.env, cell, self.ui))

    def key(self, key: int, char: str = "", mod: int = 0) -> None:
        """A key press: the window's shortcuts, then the game's keys, then Enter plays the hint."""
        pg = self.pygame
        ctrl = bool(mod & pg.KMOD_CTRL)
        if key in (pg.K_F1,) or char == "?":
            self.show_help = not self.show_help
        elif key == pg.K_ESCAPE:
            if self.show_help:
                self.show_help = False
            else:
                self._clear_selection()
        elif key == pg.K_q and not ctrl:
            self.quit = True
        elif (key == pg.K_z and ctrl) or key == pg.K_u or key == pg.K_BACKSPACE:
            self.undo()
        elif (key == pg.K_y and ctrl) or key == pg.K_r:
            self.redo()
        elif key == pg.K_n:
            self.seed = None if self.seed is None else self.seed + 1
            self.new_game(self.seed)
        elif key == pg.K_h:
            self.request_hint()
        elif not self.over:
            names = {pg.K_LEFT: "left", pg.K_RIGHT: "right", pg.K_UP: "up", pg.K_DOWN: "down"}
            names |= {pg.K_RETURN: "enter", pg.K_KP_ENTER: "enter", pg.K_SPACE: "space"}
            name = {**names, pg.K_TAB: "tab"}.get(key, "")
            action = controls.key(self.env, name, char, self.ui)
            if action is None and name in ("enter", "space"):
                action = self.ui.hint
            self._act(action)

    # -- drawing --------------------------------------------------------------------------------

    def highlight(self) -> Highlight:
        """What the board should emphasise now (the hint, the selection, the hovered move)."""
        return controls.highlight(self.env, self.ui)

    def sides(self) -> str:
        """Which side the person plays and against whom, e.g. ``"You: X (first) vs uct"``, or
        ``"X and O: two players"`` with no opponent; ``""`` in one-player games."""
        if not self.two_player:
            return ""
        names = getattr(self.drawing, "SIDES", ("player 0", "player 1"))
        if self.opponent is None:
            return f"{names[0]} and {names[1]}: two players"
        me = self.human_player
        return f"You: {names[me]} ({('first', 'second')[me]}) vs {self.opponent_name}"

    @property
    def title(self) -> str:
        """The window title: the game and, in two-player games, :meth:`sides`."""
        side = self.sides()
        return f"mc-envs play: {self.env.game}" + (f"   {side}" if side else "")

    def status_line(self) -> str:
        """The status bar: the game's line (how it ended, once), the sides, whose turn, moves, the
        last message."""
        parts = [self.drawing.status(self.env)]
        if self.two_player:
            parts.append(self.sides())
        if self.two_player and self.opponent is not None and not self.over:
            parts.append("your turn" if not self._opponent_to_move() else "opponent's turn")
        if not self.two_player and "moves" not in parts[0]:
            parts.append(f"moves {self.moves}")
        if self.message:
            parts.append(self.message)
        parts.append("F1: help")
        return "  |  ".join(parts)

    def frame_size(self) -> tuple[int, int]:
        """The window size: the board and the status bar, at least what the help needs."""
        from mc_envs.render.draw import board_size
        from mc_envs.render.ui import HELP_LINE, help_line_top, help_width

        w, h = board_size(self.env, self.theme)
        lines = self.help_lines()
        return max(w, 480, help_width(lines)), max(h, 360, help_line_top(len(lines)) + HELP_LINE)

    def draw(self, surface: Surface) -> None:
        """Draws the board, the status bar and (if shown) the help overlay."""
        from mc_envs.render.draw import draw_frame

        surface.fill(self.theme.background)
        draw_frame(surface, self.env, self.theme, self.highlight(), status=self.status_line())
        if self.show_help:
            draw_help(surface, self.help_lines(), self.theme, "Mouse and keys")

    def help_lines(self) -> tuple[tuple[str, str], ...]:
        """The help overlay: the game's lines (what a click does, its keys), then the window's
        shortcuts without the keys that the game takes for itself (Go: Space passes)."""
        own = controls.help_lines(self.env)
        taken = {k.lower() for keys, _ in own for k in keys.split(", ")}
        lines = []
        for keys, what in SHORTCUTS:
            left = [k for k in keys.split(", ") if k.lower() not in taken]
            if left:
                lines.append((", ".join(left), what))
        return own + tuple(lines)


def run(
    game: str,
    *,
    vs: str | None = "uct",
    human_player: int = 0,
    seed: int | None = 0,
    marks: str = "none",
    env_kwargs: dict | None = None,
    hint_agent: Player | None = None,
    sgf: str | None = None,
) -> int:
    """Opens the play window and runs until it is closed. Returns an exit status (0). ``sgf``:
    Go, the file each finished game is saved to (a game left unfinished if none finished);
    ``hint_agent``: see :class:`PlaySession`."""
    from mc_envs.go_sgf import save_session
    from mc_envs.render.theme import default_theme
    from mc_envs.render.window import Window

    kwargs = dict(env_kwargs or {})
    env = make_env(game, **kwargs)
    theme = default_theme() if marks == "none" else default_theme().with_(marks=marks)
    opponent = make_opponent(vs, seed=seed or 0) if hasattr(env, "returns") else None
    session = PlaySession(
        env,
        opponent=opponent,
        human_player=human_player,
        opponent_name=vs,
        theme=theme,
        hint_agent=hint_agent,
        env_factory=lambda: make_env(game, **kwargs),
        seed=seed,
    )
    window = Window(session.frame_size(), session.title, fps=30)
    surface = window.pygame.Surface(session.frame_size())
    saved = None
    try:
        while not session.quit and not window.closed:
            session.process(window.pump())
            session.draw(surface)
            window.show(surface)
            window.tick()
            saved = save_session(sgf, session, vs, saved) if sgf else None
    finally:
        if sgf and saved is None:
            save_session(sgf, session, vs, final=True)
        window.close()
    return 0
