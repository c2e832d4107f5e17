"""The front end as a person meets it (headless: SDL_VIDEODRIVER=dummy): the end of a game said
once, the winning line marked, the sides named, help that tells the truth, the replay viewer's keys.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pygame_display  # noqa: F401  (autouse: a dummy display for the module)

from mc_envs.games import connect_four as c4rules
from mc_envs.games import tictactoe as tttrules
from mc_envs.registry import names
from mc_envs.state import State

pygame = pytest.importorskip("pygame")

# What a status line says when a game has ended, in every game's drawing.
END_WORDS = ("game over", "wins", "draw", "solved", "dead end")


def session_for(game: str, **kwargs):
    """A play session; its hints come from a random agent (a search's first compilation costs
    seconds; what a hint is worth is the agents' tests' business)."""
    from mc_envs.agents import RandomAgent
    from mc_envs.render.play import PlaySession, make_env

    kwargs.setdefault("hint_agent", RandomAgent(seed=0))
    return PlaySession(make_env(game), env_factory=lambda: make_env(game), **kwargs)


def env_at(game: str, text: str):
    """The unwrapped env of ``game`` at the position of an ASCII board."""
    from mc_envs.render.play import make_env

    rules = {"tictactoe": tttrules, "connect4": c4rules}[game]
    env = make_env(game)
    env.reset(seed=0)
    snap = env.clone_state()
    env.restore_state(State(snap.game, snap.config, rules.parse_board(text)))
    return env


def as_array(surface) -> np.ndarray:
    from mc_envs.render.draw import surface_to_array

    return surface_to_array(surface)


# -- the rules' winning lines, on ASCII boards ---------------------------------------------------


@pytest.mark.parametrize(
    "board,cells",
    [
        ("XXX\nOO.\n...", [(0, 0), (0, 1), (0, 2)]),
        ("XOX\nOX.\nX.O", [(0, 2), (1, 1), (2, 0)]),
        ("O.X\nXO.\nX.O", [(0, 0), (1, 1), (2, 2)]),
        ("XXO\nXOO\nX..", [(0, 0), (1, 0), (2, 0)]),
        ("XOX\nXOO\nOXX", []),  # a draw
        ("X..\n.O.\n...", []),
        # one move completes two lines: both are marked
        ("XXX\nOXO\nXOO", [(0, 0), (0, 1), (0, 2), (1, 1), (2, 0)]),
    ],
)
def test_tictactoe_winning_line(board: str, cells) -> None:
    state = tttrules.parse_board(board)
    tttrules.check_state(state)  # a position of a real game
    assert tttrules.winning_line(state) == cells


C4 = ".......\n.......\n"


@pytest.mark.parametrize(
    "board,cells",
    [
        (C4 + ".......\n.......\nOOO....\nXXXX...", [(5, c) for c in range(4)]),
        (C4 + "...X...\n...XO..\n...XO..\n...XO..", [(r, 3) for r in range(2, 6)]),
        (C4 + "...X...\n..XO...\n.XOO...\nXOOXX..", [(2, 3), (3, 2), (4, 1), (5, 0)]),
        (C4 + "X......\nOX.....\nOOX....\nXOOXX..", [(2, 0), (3, 1), (4, 2), (5, 3)]),
        # five in a row: all five are marked
        (C4 + ".......\n.......\nOOO.O..\nXXXXX..", [(5, c) for c in range(5)]),
        (C4 + ".......\n.......\nOO.O...\nXXOXXX.", []),
        (C4 + C4 + C4, []),
    ],
)
def test_connect_four_winning_line(board: str, cells) -> None:
    state = c4rules.parse_board(board)
    c4rules.check_state(state)
    assert c4rules.winning_line(state) == cells


# -- the winning line on the board ---------------------------------------------------------------

WON = {
    "tictactoe": "XOX\nOX.\nX.O",
    "connect4": C4 + "...X...\n..XO...\n.XOO...\nXOOXX..",
}
NOT_WON = {
    "tictactoe": "XOX\nOX.\n...",
    "connect4": C4 + ".......\n..XO...\n.XOO...\nXOOXX..",
}


def cells_that_differ(game: str, a: np.ndarray, b: np.ndarray) -> set[tuple[int, int]]:
    from mc_envs.render.draw import connect_four, tictactoe
    from mc_envs.render.theme import default_theme

    mod = {"tictactoe": tictactoe, "connect4": connect_four}[game]
    size = mod.GRID.cell(default_theme())
    differ = np.any(a != b, axis=2)
    return {
        (r, c)
        for r in range(mod.ROWS)
        for c in range(mod.COLS)
        if differ[r * size : (r + 1) * size, c * size : (c + 1) * size].any()
    }


@pytest.mark.parametrize("game", ["tictactoe", "connect4"])
def test_the_winning_line_is_marked_and_nothing_else(game: str) -> None:
    from mc_envs.render.draw import board_size, draw_env, module_for
    from mc_envs.render.theme import default_theme

    theme = default_theme()
    env = env_at(game, WON[game])
    mod = module_for(env)
    plain = pygame.Surface(board_size(env, theme))
    plain.fill(theme.background)
    mod.draw(plain, env, theme, win=())
    marked = as_array(draw_env(env))  # the default drawing: what play, replay and rgb_array show
    line = set(mod.winning_line(env.state_view))
    assert len(line) == {"tictactoe": 3, "connect4": 4}[game]
    assert cells_that_differ(game, marked, as_array(plain)) == line
    # a position without a winner is drawn as with no marks at all
    env = env_at(game, NOT_WON[game])
    plain.fill(theme.background)
    mod.draw(plain, env, theme, win=())
    assert cells_that_differ(game, as_array(draw_env(env)), as_array(plain)) == set()


def test_the_mark_is_the_themes() -> None:
    from mc_envs.render.draw import draw_env
    from mc_envs.render.theme import default_theme

    env = env_at("connect4", WON["connect4"])
    a = as_array(draw_env(env))
    b = as_array(draw_env(env, theme=default_theme().with_(win=(255, 0, 255))))
    assert np.all(b == (255, 0, 255), axis=2).sum() > 100
    assert not np.all(a == (255, 0, 255), axis=2).any()


# -- the end of the game, said once --------------------------------------------------------------


def end_words(text: str) -> int:
    return sum(text.count(w) for w in END_WORDS)


def play_out(s, seed: int, limit: int = 2000) -> None:
    """Plays random legal moves (the human's; an opponent answers) until the game ends."""
    rng = np.random.default_rng(seed)
    for _ in range(limit):
        s.wait(60)
        if s.over:
            return
        assert s.play(int(rng.choice(s.env.legal_actions())))
    raise AssertionError(f"{s.env.game}: no end after {limit} moves")


@pytest.mark.parametrize("game", names())
def test_the_status_says_once_how_the_game_ended(game: str) -> None:
    s = session_for(game)
    assert end_words(s.status_line()) == 0, s.status_line()
    play_out(s, seed=1)
    line = s.status_line()
    assert end_words(line) == 1, line
    assert line.count(s.drawing.status(s.env)) == 1, line


@pytest.mark.parametrize("game", names(players=2))
@pytest.mark.parametrize("human", [0, 1])
def test_the_status_says_once_how_a_game_against_an_agent_ended(game: str, human: int) -> None:
    from mc_envs.agents import RandomAgent

    s = session_for(game, opponent=RandomAgent(seed=3), human_player=human)
    play_out(s, seed=human)
    line = s.status_line()
    assert end_words(line) == 1, line
    result = float(s.env.returns()[0])
    said = "draw" if result == 0 else f"{s.drawing.SIDES[0 if result > 0 else 1]} wins"
    assert said in line


def test_the_status_bar_fits_the_window() -> None:
    """A long status line is written smaller, never cut at the right edge."""
    from mc_envs.agents import RandomAgent
    from mc_envs.render.theme import default_theme

    theme = default_theme()
    s = session_for("connect4", opponent=RandomAgent(seed=0), opponent_name="uct-expert")
    s.message = "a long message that would not fit at the status bar's usual size"
    surface = pygame.Surface(s.frame_size())
    s.draw(surface)
    strip = as_array(surface)[-theme.status_height :]
    assert np.any(strip != theme.background)
    assert np.all(strip[:, -6:] == theme.background)


# -- the sides -----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", names(players=2))
def test_the_window_says_which_side_the_person_plays(game: str) -> None:
    from mc_envs.agents import RandomAgent

    first = session_for(game, opponent=RandomAgent(seed=0), opponent_name="uct")
    x, o = first.drawing.SIDES  # X and O; Black and White
    assert f"You: {x} (first) vs uct" in first.status_line()
    assert f"You: {x} (first) vs uct" in first.title
    second = session_for(game, opponent=RandomAgent(seed=0), human_player=1)
    second.wait(30)
    assert f"You: {o} (second) vs RandomAgent" in second.status_line()
    assert f"You: {o} (second)" in second.title
    hot_seat = session_for(game)
    assert f"{x} and {o}: two players" in hot_seat.status_line()
    play_out(first, seed=0)
    assert f"You: {x} (first) vs uct" in first.status_line()  # still said at the end


@pytest.mark.parametrize("game", names(players=1))
def test_one_player_games_say_nothing_about_sides(game: str) -> None:
    s = session_for(game)
    assert s.sides() == ""
    for text in (s.status_line(), s.title):
        assert "You" not in text and " vs " not in text and "first" not in text


def test_play_run_titles_the_window_with_the_sides(monkeypatch) -> None:
    from mc_envs.render import play, window

    titles = []

    class Closed(window.Window):
        def __init__(self, size, title="", fps=30):
            titles.append(title)
            super().__init__(size, title, fps)
            self.closed = True

        def close(self) -> None:  # keep the test display open
            self.closed = True

    monkeypatch.setattr(window, "Window", Closed)
    assert play.run("tictactoe", vs="random", human_player=1) == 0
    assert titles == ["mc-envs play: TicTacToe   You: O (second) vs random"]


# -- help that tells the truth -------------------------------------------------------------------


def fingerprint(s) -> tuple:
    """Everything a key or a click of the play window can change."""
    ui = s.ui
    return (
        s.env.clone_state(),
        s.moves,
        ui.selected,
        tuple(ui.candidates),
        ui.candidate,
        ui.hint,
        s.show_help,
        s.quit,
        s.job is not None,
    )


def key_event(token: str):
    """The KEYDOWN event of a key as the help names it."""
    named = {
        "Ctrl+Z": (pygame.K_z, "\x1a", pygame.KMOD_CTRL),
        "Ctrl+Y": (pygame.K_y, "\x19", pygame.KMOD_CTRL),
        "Backspace": (pygame.K_BACKSPACE, "\b", 0),
        "Enter": (pygame.K_RETURN, "\r", 0),
        "Space": (pygame.K_SPACE, " ", 0),
        "Esc": (pygame.K_ESCAPE, "\x1b", 0),
        "Tab": (pygame.K_TAB, "\t", 0),
        "F1": (pygame.K_F1, "", 0),
        "?": (pygame.K_SLASH, "?", pygame.KMOD_SHIFT),
        "+": (pygame.K_EQUALS, "+", pygame.KMOD_SHIFT),
        "-": (pygame.K_MINUS, "-", 0),
        ".": (pygame.K_PERIOD, ".", 0),
        ",": (pygame.K_COMMA, ",", 0),
        "Left": (pygame.K_LEFT, "", 0),
        "Right": (pygame.K_RIGHT, "", 0),
        "Up": (pygame.K_UP, "", 0),
        "Down": (pygame.K_DOWN, "", 0),
        "Home": (pygame.K_HOME, "", 0),
        "End": (pygame.K_END, "", 0),
    }
    named = {name.lower(): value for name, value in named.items()}
    if token.lower() in named:
        k, char, mod = named[token.lower()]
    elif len(token) == 1 and token.isalnum():
        k, char, mod = pygame.key.key_code(token.lower()), token, 0
    else:
        raise AssertionError(f"the help names a key the test does not know: {token!r}")
    return pygame.event.Event(pygame.KEYDOWN, key=k, unicode=char, mod=mod)


def tokens(keys: str) -> list[str]:
    """The keys of a help line: ``"u, Ctrl+Z"`` -> u, Ctrl+Z; ``"1-9"`` -> 1..9; ``"arrows"``."""
    out = []
    for part in keys.split(", "):
        if len(part) == 3 and part[1] == "-" and part[0] < part[2]:
            first, last = part[0], part[2]
            out += [chr(c) for c in range(ord(first), ord(last) + 1)]
        elif part == "arrows":
            out += ["Left", "Right", "Up", "Down"]
        else:
            out.append(part)
    return out


def with_a_move(s) -> None:
    s.play(int(s.env.legal_actions()[0]))


def with_a_hint(s) -> None:
    from mc_envs.render import draw

    draw.show_hint(s.env, int(s.env.legal_actions()[-1]), s.ui)


def with_lines_to_choose(s) -> None:
    """Plays until a click on a point shows two lines or more (Morpion)."""
    rng = np.random.default_rng(0)
    for _ in range(60):
        for cell in range(s.env.size * s.env.size):
            s.ui.clear()
            s.click(s.drawing.cell_center(cell, s.env, s.theme))
            if len(s.ui.candidates) >= 2:
                return
            s.ui.clear()
        s.play(int(rng.choice(s.env.legal_actions())))
    raise AssertionError("no point with two lines")


def with_help(s) -> None:
    s.show_help = True


def with_an_undo(s) -> None:
    with_a_move(s)
    s.undo()


PREPARE = {
    "u": with_a_move,
    "Ctrl+Z": with_a_move,
    "Backspace": with_a_move,
    "r": with_an_undo,
    "Ctrl+Y": with_an_undo,
    "n": with_a_move,
    "Enter": with_a_hint,
    "Space": with_a_hint,
    "Esc": with_help,
    "right click": with_a_hint,
    "Tab": with_lines_to_choose,
}


def does_something(s, token: str) -> bool:
    """Posts the key or click of ``token`` (after setting up a position where it should act) and
    tells whether the session changed."""
    import mc_envs.render.draw as controls

    PREPARE.get(token, lambda s: None)(s)
    before = fingerprint(s)
    if token == "click":  # some click on the board does something
        w, h = controls.module_for(s.env).board_size(s.env, s.theme)
        for y in range(4, h, 8):
            for x in range(4, w, 8):
                down = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(x, y), button=1)
                s.process([down])
                if fingerprint(s) != before:
                    return True
        return False
    if token == "right click":
        s.process([pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(1, 1), button=3)])
    elif s.env.game == "Sudoku" and len(token) == 1 and (token.isdigit() or token.isupper()):
        # a value: typed in a cell where it is legal
        value = "123456789ABCDEFG".index(token)
        action = next(a for a in s.env.legal_actions() if a % s.env.size == value)
        s.ui.selected = int(action) // s.env.size
        before = fingerprint(s)
        s.process([key_event(token)])
    else:
        s.process([key_event(token)])
    changed = fingerprint(s) != before
    if token == "h":  # ... and the hint comes
        s.wait(60)
        changed &= s.ui.hint is not None and s.ui.hint in s.env.legal_actions()
    return changed


@pytest.mark.parametrize("game", names())
def test_every_line_of_the_help_does_what_it_says(game: str) -> None:
    from mc_envs.agents import RandomAgent

    opponent = RandomAgent(seed=0) if game in names(players=2) else None
    lines = session_for(game, opponent=opponent).help_lines()
    assert lines[0][0] == "click"  # the game says what a click does
    assert not any("status bar" in what for _, what in lines)  # no promise about the status bar
    for keys, what in lines:
        for token in tokens(keys) if keys != "click" and keys != "right click" else [keys]:
            s = session_for(game, opponent=opponent)
            assert does_something(s, token), f"{game}: {token!r} ({what}) does nothing"


def test_the_status_bars_promise_is_kept() -> None:
    s = session_for("samegame")
    assert s.status_line().endswith("F1: help")
    s.process([key_event("F1")])
    assert s.show_help


@pytest.mark.parametrize("game", names())
def test_the_help_overlay_shows_every_line(game: str) -> None:
    """Every help line is drawn inside the window: its row has text past the key column."""
    from mc_envs.render.ui import HELP_LINE, help_line_top

    s = session_for(game)
    lines = s.help_lines()
    surface = pygame.Surface(s.frame_size())
    s.draw(surface)
    hidden = as_array(surface)
    s.show_help = True
    s.draw(surface)
    shown = as_array(surface)
    assert help_line_top(len(lines)) + HELP_LINE <= shown.shape[0]
    text = np.array(s.theme.text)
    for i in range(len(lines)):
        row = shown[help_line_top(i) : help_line_top(i) + HELP_LINE]
        assert np.all(row == text, axis=2).sum() > 20, f"{game}: help line {i} not drawn"
    assert not np.array_equal(hidden, shown)


# -- the replay viewer ---------------------------------------------------------------------------


@pytest.fixture
def c4_replay(tmp_path):
    """A replay of a Connect Four game that X wins with the bottom row (7 moves)."""
    from mc_envs.records import make_record, write_record
    from mc_envs.render.replay import load

    record = make_record(
        env_id="mc_envs/ConnectFour-v0",
        env_kwargs={},
        reset_seed=0,
        actions=[0, 0, 1, 1, 2, 2, 3],
        score=0.0,
        agent="test",
        params={},
        seconds=0.0,
        playouts=0,
    )
    path = tmp_path / "c4.json"
    write_record(path, record)
    return load(path)


def viewer_for(replay, **kwargs):
    from mc_envs.render.replay import ReplayViewer

    return ReplayViewer(replay, **kwargs)


def test_the_viewer_starts_playing_and_stops_at_the_end(c4_replay) -> None:
    v = viewer_for(c4_replay)
    assert v.playing
    step = 1000.0 / v.speed + 1
    assert v.process([], dt_ms=step) == 1
    assert v.process([], dt_ms=step * 20) == len(c4_replay)
    assert not v.playing
    paused = viewer_for(c4_replay, playing=False)
    assert not paused.playing and paused.process([], dt_ms=step * 3) == 0


def test_viewer_help_esc_and_q(c4_replay) -> None:
    v = viewer_for(c4_replay)
    step = 1000.0 / v.speed + 1
    v.process([key_event("F1")])
    assert v.show_help
    assert v.process([], dt_ms=step * 3) == 0  # the replay waits while the help is shown
    v.process([key_event("Esc")])
    assert not v.show_help and not v.quit
    v.process([key_event("Esc")])  # Esc never quits, as in the play window
    assert not v.quit
    v.process([key_event("?")])
    assert v.show_help
    w, h = v.size()
    click = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(w - 10, h - 5), button=1)
    v.process([click])  # a click closes the help, and does not jump on the slider
    assert not v.show_help and v.index == 0
    v.process([key_event("q")])
    assert v.quit


def viewer_fingerprint(v) -> tuple:
    return (v.index, v.playing, v.speed, v.show_help, v.quit, v._dragging)


def test_every_key_of_the_viewers_help_does_something(c4_replay) -> None:
    from mc_envs.render.replay import KEY_BAR, SLIDER_HEIGHT, VIEWER_KEYS

    listed = {t for keys, _ in VIEWER_KEYS for t in tokens(keys)}
    for token in sorted(listed):
        v = viewer_for(c4_replay, playing=False)
        v.goto(3)
        w, h = v.size()
        y = h - SLIDER_HEIGHT // 2
        if token == "Esc":
            v.show_help = True
        if token == "drag":
            v.process([pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(w // 2, y), button=1)])
        before = viewer_fingerprint(v)
        if token == "click":
            event = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(w - 12, y), button=1)
        elif token == "drag":
            event = pygame.event.Event(pygame.MOUSEMOTION, pos=(12, y), rel=(0, 0), buttons=(1,))
        else:
            event = key_event(token)
        v.process([event])
        assert viewer_fingerprint(v) != before, f"replay viewer: {token!r} does nothing"
    # the keys under the frame are among them: "Space play/pause   Left/Right step ..."
    shown = [item.split(" ")[0] for item in KEY_BAR.split("   ")]
    assert {k for item in shown for k in item.split("/")} <= listed
    assert {"Space", "F1", "q"} <= {k for item in shown for k in item.split("/")}


def test_viewer_draws_its_keys_and_its_help(c4_replay) -> None:
    from mc_envs.render.replay import KEYS_HEIGHT, SLIDER_HEIGHT, VIEWER_KEYS
    from mc_envs.render.ui import HELP_LINE, help_line_top

    v = viewer_for(c4_replay)
    theme = v.theme
    surface = pygame.Surface(v.size())
    v.draw(surface)
    plain = as_array(surface)
    h = plain.shape[0]
    bar = plain[h - SLIDER_HEIGHT - KEYS_HEIGHT : h - SLIDER_HEIGHT]
    assert np.all(bar == theme.dim, axis=2).sum() > 50  # the key line is written
    v.process([key_event("F1")])
    v.draw(surface)
    helped = as_array(surface)
    assert help_line_top(len(VIEWER_KEYS)) + HELP_LINE <= h
    for i in range(len(VIEWER_KEYS)):
        row = helped[help_line_top(i) : help_line_top(i) + HELP_LINE]
        assert np.all(row == theme.text, axis=2).sum() > 20, f"help line {i} not drawn"
    assert not np.array_equal(plain, helped)


def test_the_last_frame_of_a_replay_marks_the_winning_four(c4_replay) -> None:
    from mc_envs.render.replay import frames
    from mc_envs.render.theme import default_theme

    win = default_theme().win
    first, last = (f for f in frames(c4_replay, indices=[0, len(c4_replay)]))
    assert not np.all(first == win, axis=2).any()
    assert np.all(last == win, axis=2).sum() > 4 * 100


def test_a_two_player_replay_says_once_how_the_game_ended(c4_replay) -> None:
    n = len(c4_replay)
    assert end_words(c4_replay.describe(0)) == 0 and end_words(c4_replay.describe(n - 1)) == 0
    last = c4_replay.describe(n)
    assert end_words(last) == 1 and "X wins" in last, last
