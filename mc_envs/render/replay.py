"""``mc-envs replay FILE``: step through a saved solution, or export it as GIF, MP4 or PNG.

A file is an mc-envs solution record (JSON with ``"format": "mc-envs/solution"``, see
:mod:`mc_envs.records`), a Morpion Solitaire record (MSR JSON or PentaSol text, see
:mod:`mc_envs.morpion_records`) or a Go game in SGF (``.sgf``, see :mod:`mc_envs.go_sgf`). Frame ``i`` shows the position after ``i`` moves with move
``i + 1`` highlighted (the move about to be played) and the score so far, so a replay of ``N`` moves
has ``N + 1`` frames.

In the window (:class:`ReplayViewer`, keys in :data:`VIEWER_KEYS`, shown by F1 or ``?``): the
replay starts playing; Right / Left (or . and ,) next and previous move, Space play/pause, + and -
speed, Home / End first and last position, a click or drag on the slider jumps to a move, q quits.
Esc closes the help and never quits, as in the play window. :meth:`ReplayViewer.process` handles a
list of events, so the viewer is testable without a screen.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from mc_envs.render._pygame import require_pygame

if TYPE_CHECKING:
    from pygame import Event, Surface

    from mc_envs.contract import Drawn
    from mc_envs.render.theme import Theme
    from mc_envs.state import State

SLIDER_HEIGHT = 28
KEYS_HEIGHT = 20  # the line of main keys between the frame and the slider
MIN_WIDTH = 360
# The viewer's help overlay (F1 or ?), and the main keys always shown under the frame.
VIEWER_KEYS: tuple[tuple[str, str], ...] = (
    ("Space", "play / pause (from the start at the end)"),
    ("Right, .", "next move (pauses)"),
    ("Left, ,", "previous move (pauses)"),
    ("Home, End", "first / last position"),
    ("+, Up", "faster"),
    ("-, Down", "slower"),
    ("click, drag", "on the slider: go to a move"),
    ("Esc", "close this help"),
    ("F1, ?", "show or hide this help"),
    ("q", "quit"),
)
KEY_BAR = "Space play/pause   Left/Right step   F1 help   q quit"


@dataclass
class Replay:
    """A game to replay: the env at its start, the actions, and what the file said.

    Attributes:
        env: the unwrapped env, at the start position.
        actions: the moves, as env actions.
        title: a short description (file name, game, recorded score).
        recorded_score: the score the file claims, if any.
        crop: the board area (pixels ``x, y, w, h``) that the whole game uses, for games whose
            drawing module has ``crop`` (Morpion), else None.
        outcome: how a two-player game ended (``"X wins"``, ``"draw"``), else ``""``.
    """

    env: Drawn
    actions: list[int]
    title: str
    recorded_score: float | None = None
    crop: tuple[int, int, int, int] | None = None
    states: list[State] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    outcome: str = ""

    def __post_init__(self) -> None:
        from mc_envs.core import IllegalActionError, strict

        env = self.env
        self.states = [env.clone_state()]
        self.scores = [float(env.score)]
        for i, a in enumerate(self.actions, 1):
            try:
                with strict(env):
                    env.step(int(a))
            except IllegalActionError as exc:
                move = f"action {a}" + (f", {exc.move}" if exc.move else "")
                raise ValueError(
                    f"{self.title}: move {i} ({move}) is illegal: {exc.reason}"
                ) from None
            self.states.append(env.clone_state())
            self.scores.append(float(env.score))
        if hasattr(env, "returns") and len(env.legal_actions()) == 0:
            from mc_envs.render.draw import module_for

            r = float(env.returns()[0])
            sides = getattr(module_for(env), "SIDES", ("player 0", "player 1"))
            self.outcome = "draw" if r == 0 else f"{sides[0 if r > 0 else 1]} wins"
        env.restore_state(self.states[0])

    def __len__(self) -> int:
        return len(self.actions)

    def goto(self, i: int) -> None:
        """Puts the env at the position after ``i`` moves."""
        self.env.restore_state(self.states[max(0, min(i, len(self.actions)))])

    def describe(self, i: int) -> str:
        """The status line of frame ``i``: the move, the score (puzzles), the next move, and at
        the end the recorded score, or how a two-player game ended."""
        n = len(self.actions)
        two_player = hasattr(self.env, "returns")
        text = f"move {i}/{n}" + ("" if two_player else f"   score {self.scores[i]:g}")
        if i < n:
            text += f"   next: {self.move_name(self.actions[i])}"
        elif self.outcome:
            text += f"   {self.outcome}"
        elif self.recorded_score is not None and not two_player:
            text += f"   (recorded {self.recorded_score:g})"
        return text

    def move_name(self, action: int) -> str:
        """The action in the game's notation (``env.action_to_string``)."""
        return self.env.action_to_string(int(action))


def load(
    path: str | os.PathLike,
    *,
    theme: Theme | None = None,
    crop: bool = True,
    variant: str | None = None,
) -> Replay:
    """Reads a solution record, a Morpion record or a Go SGF file and prepares its replay.

    ``variant`` sets the Morpion rules when the record does not say (default 5T, whose rules
    accept every 5D game too).

    Raises:
        ValueError: the file is neither, or a move is illegal (naming the move).
    """
    from mc_envs.render.draw import module_for
    from mc_envs.render.theme import default_theme

    theme = theme or default_theme()
    path = Path(path)
    from mc_envs import go_sgf

    if go_sgf.is_sgf(path):
        return _load_sgf(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    head = text.lstrip()[:1]
    record = None
    if head == "{":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
        if isinstance(obj, dict) and obj.get("format") == "mc-envs/solution":
            from mc_envs.records import read_record, replay_env

            record = read_record(path)
            env = cast("Drawn", replay_env(record).unwrapped)
            replay = Replay(
                env,
                [int(a) for a in record["actions"]],
                f"{path.name}: {record['env_id']}",
                float(record["score"]),
            )
    if record is None:
        replay = _load_morpion(path, variant)
    crop_of = getattr(module_for(replay.env), "crop", None) if crop else None
    if crop_of is not None:
        replay.crop = crop_of(replay.env, replay.states[-1].data, theme, MIN_WIDTH)
    return replay


def _load_sgf(path: Path) -> Replay:
    from mc_envs import go_sgf

    record = go_sgf.read_sgf(path)
    wrong = go_sgf.out_of_turn(record)
    if wrong:
        raise ValueError(f"{path}: {wrong}")
    players = f", {record.black or '?'} (B) vs {record.white or '?'} (W)"
    result = f", RE {record.result}" if record.result else ""
    title = f"{path.name}: Go {record.size}x{record.size}{players}{result}"
    return Replay(go_sgf.make_env(record), list(record.actions), title)


def _load_morpion(path: Path, default_variant: str | None = None) -> Replay:
    from mc_envs.envs.morpion import MorpionSolitaireEnv
    from mc_envs.morpion_records import load_record, record_actions

    try:
        variant, moves = load_record(path)
    except ValueError as exc:
        raise ValueError(
            f"{path}: neither an mc-envs solution record nor a Morpion record ({exc})"
        ) from None
    variant = variant or default_variant or "5T"
    for size in (32, 48, 64):
        try:
            actions = record_actions(moves, size)
        except ValueError:
            continue
        env = MorpionSolitaireEnv(variant, size=size)
        env.reset(seed=0)
        return Replay(env, actions, f"{path.name}: Morpion {variant}", float(len(moves)))
    raise ValueError(f"{path}: the record does not fit on a 64 x 64 grid")


def frame_surface(
    replay: Replay, i: int, theme: Theme | None = None, surface: Surface | None = None
) -> Surface:
    """The picture of frame ``i`` (position after ``i`` moves, the next move highlighted)."""
    from mc_envs.render.draw import board_size, draw_frame, draw_status, module_for
    from mc_envs.render.theme import default_theme

    pygame = require_pygame()
    theme = theme or default_theme()
    replay.goto(i)
    env = replay.env
    highlight = replay.actions[i] if i < len(replay.actions) else None
    status = replay.describe(i)
    if replay.crop is None:
        size = board_size(env, theme)
        size = (max(size[0], MIN_WIDTH), size[1])
        if surface is None or surface.get_size() != size:
            surface = pygame.Surface(size)
        surface.fill(theme.background)
        draw_frame(surface, env, theme, highlight, status=status)
        return surface
    x, y, w, h = replay.crop
    full = pygame.Surface(module_for(env).board_size(env, theme))
    module_for(env).draw(full, env, theme, highlight)
    size = (w, h + theme.status_height)
    if surface is None or surface.get_size() != size:
        surface = pygame.Surface(size)
    surface.blit(full, (0, 0), (x, y, w, h))
    draw_status(surface, status, theme)
    return surface


def frames(
    replay: Replay, theme: Theme | None = None, indices: Iterable[int] | None = None
) -> Iterator[np.ndarray]:
    """The frames as ``H x W x 3`` uint8 arrays: the start and the position after each move."""
    from mc_envs.render.draw import surface_to_array

    surface = None
    for i in range(len(replay) + 1) if indices is None else indices:
        surface = frame_surface(replay, i, theme, surface)
        yield surface_to_array(surface)


def export(
    replay: Replay,
    *,
    gif: str | None = None,
    mp4: str | None = None,
    png: str | None = None,
    fps: float = 4,
    theme: Theme | None = None,
) -> dict[str, int]:
    """Writes the replay without a window. ``png``: the final position, or every frame when it
    names a folder (an existing directory or a path ending with ``/``). Returns frames written per
    output."""
    from mc_envs.render import video

    written: dict[str, int] = {}
    all_frames: list[np.ndarray] = []
    if gif or mp4:
        all_frames = list(frames(replay, theme))
    if gif:
        written["gif"] = video.write_gif(all_frames, gif, fps=fps)
    if mp4:
        written["mp4"] = video.write_mp4(all_frames, mp4, fps=fps)
    if png:
        if os.path.isdir(png) or png.endswith(("/", os.sep)):
            source = all_frames if all_frames is not None else frames(replay, theme)
            written["png"] = video.write_png_frames(source, png)
        else:
            last = next(frames(replay, theme, [len(replay)]))
            video.write_png(last, png)
            written["png"] = 1
    return written


class ReplayViewer:
    """The replay window's logic: the current move, playing or paused, the speed, the slider, the
    help.

    A viewer starts playing from the first position (someone who opens a replay wants to watch
    it; Space pauses) and stops at the last. The help overlay (F1 or ``?``, :data:`VIEWER_KEYS`)
    holds the replay where it is while shown; a click or Esc closes it. Esc never quits, q does,
    as in the play window.

    Args:
        replay: what to show.
        theme: the drawing theme.
        fps: moves per second while playing.
        playing: start playing (the default) or paused.
    """

    SPEEDS = (0.5, 1, 2, 4, 8, 16, 32, 64)

    def __init__(
        self, replay: Replay, theme: Theme | None = None, fps: float = 4, *, playing: bool = True
    ) -> None:
        from mc_envs.render.theme import default_theme

        self.pygame = require_pygame()
        self.replay = replay
        self.theme = theme or default_theme()
        self.index = 0
        self.playing = bool(playing) and len(replay) > 0
        self.speed = min(self.SPEEDS, key=lambda s: abs(s - fps))
        self.show_help = False
        self.quit = False
        self._clock_ms = 0.0
        self._dragging = False
        self._board = frame_surface(replay, 0, self.theme)

    def size(self) -> tuple[int, int]:
        """The window size: a frame, the line of main keys and the slider under it (at least what
        the help needs)."""
        from mc_envs.render.theme import font
        from mc_envs.render.ui import HELP_LINE, help_line_top, help_width

        w, h = self._board.get_size()
        keys = 8 + font(16).size(KEY_BAR)[0] + 16 + font(16).size("playing x0.5/s")[0] + 8
        need = help_line_top(len(VIEWER_KEYS)) + HELP_LINE
        return max(w, keys, help_width(VIEWER_KEYS)), max(h + KEYS_HEIGHT + SLIDER_HEIGHT, need)

    def goto(self, i: int) -> None:
        """Shows the position after ``i`` moves (clamped)."""
        self.index = max(0, min(int(i), len(self.replay)))
        if self.index == len(self.replay):
            self.playing = False

    def _slider_index(self, x: int) -> int:
        w = self.size()[0]
        frac = (x - 10) / max(w - 20, 1)
        return round(max(0.0, min(1.0, frac)) * len(self.replay))

    def _on_slider(self, pos: tuple[int, int]) -> bool:
        return pos[1] >= self.size()[1] - SLIDER_HEIGHT

    def process(self, events: Iterable[Event], dt_ms: float = 0.0) -> int:
        """Handles events and ``dt_ms`` of elapsed time; returns the current move index."""
        pg = self.pygame
        for event in events:
            if event.type == pg.QUIT:
                self.quit = True
            elif event.type == pg.KEYDOWN:
                key, char = event.key, getattr(event, "unicode", "")
                if key == pg.K_F1 or char == "?":
                    self.show_help = not self.show_help
                elif key == pg.K_ESCAPE:
                    self.show_help = False
                elif key == pg.K_q and not getattr(event, "mod", 0) & pg.KMOD_CTRL:
                    self.quit = True
                elif key in (pg.K_RIGHT, pg.K_PERIOD):
                    self.playing = False
                    self.goto(self.index + 1)
                elif key in (pg.K_LEFT, pg.K_COMMA):
                    self.playing = False
                    self.goto(self.index - 1)
                elif key == pg.K_SPACE:
                    if self.index == len(self.replay):
                        self.index = 0
                    self.playing = not self.playing
                elif key == pg.K_HOME:
                    self.goto(0)
                elif key == pg.K_END:
                    self.goto(len(self.replay))
                elif char in ("+", "=") or key in (pg.K_PLUS, pg.K_KP_PLUS, pg.K_UP):
                    k = self.SPEEDS.index(self.speed)
                    self.speed = self.SPEEDS[min(k + 1, len(self.SPEEDS) - 1)]
                elif char == "-" or key in (pg.K_MINUS, pg.K_KP_MINUS, pg.K_DOWN):
                    k = self.SPEEDS.index(self.speed)
                    self.speed = self.SPEEDS[max(k - 1, 0)]
            elif event.type == pg.MOUSEBUTTONDOWN and event.button == 1 and self.show_help:
                self.show_help = False
            elif (
                event.type == pg.MOUSEBUTTONDOWN
                and event.button == 1
                and self._on_slider(event.pos)
            ):
                self._dragging = True
                self.playing = False
                self.goto(self._slider_index(event.pos[0]))
            elif event.type == pg.MOUSEMOTION and self._dragging:
                self.goto(self._slider_index(event.pos[0]))
            elif event.type == pg.MOUSEBUTTONUP:
                self._dragging = False
        if self.playing and dt_ms and not self.show_help:
            self._clock_ms += dt_ms
            step = 1000.0 / self.speed
            while self._clock_ms >= step and self.playing:
                self._clock_ms -= step
                self.goto(self.index + 1)
        else:
            self._clock_ms = 0.0
        return self.index

    def draw(self, surface: Surface) -> None:
        """Draws the current frame, the main keys, the slider and (if shown) the help."""
        from mc_envs.render.theme import text_surface
        from mc_envs.render.ui import draw_help

        pg = self.pygame
        theme = self.theme
        self._board = frame_surface(self.replay, self.index, theme, self._board)
        surface.fill(theme.background)
        surface.blit(self._board, (0, 0))
        w, h = self.size()
        top = h - SLIDER_HEIGHT
        row = top - KEYS_HEIGHT
        keys = text_surface(KEY_BAR, 16, theme.dim)
        surface.blit(keys, (8, row + (KEYS_HEIGHT - keys.get_height()) // 2))
        pg.draw.rect(surface, theme.grid, (10, top + SLIDER_HEIGHT // 2 - 2, w - 20, 4))
        n = max(len(self.replay), 1)
        x = 10 + round((w - 20) * self.index / n)
        pg.draw.circle(surface, theme.accent, (x, top + SLIDER_HEIGHT // 2), 7)
        label = f"{'playing' if self.playing else 'paused'} x{self.speed:g}/s"
        surf = text_surface(label, 16, theme.dim)
        surface.blit(surf, (w - surf.get_width() - 8, row + (KEYS_HEIGHT - surf.get_height()) // 2))
        if self.show_help:
            draw_help(surface, VIEWER_KEYS, theme, "Replay: keys and mouse")


def view(replay: Replay, fps: float = 4) -> int:
    """Opens the replay window; returns 0 when it is closed."""
    from mc_envs.render.window import Window

    viewer = ReplayViewer(replay, fps=fps)
    window = Window(viewer.size(), f"mc-envs replay: {replay.title}", fps=60)
    surface = window.pygame.Surface(viewer.size())
    dt = 0.0
    try:
        while not viewer.quit and not window.closed:
            viewer.process(window.pump(), dt)
            viewer.draw(surface)
            window.show(surface)
            dt = window.tick()
    finally:
        window.close()
    return 0
