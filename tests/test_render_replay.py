"""Replays: GIF/PNG/MP4 export from the command line and the viewer's controls (headless)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import forget_pygame

from mc_envs.cli import main
from mc_envs.games import morpion as mrules
from mc_envs.morpion_records import load_record, shipped_record
from mc_envs.records import make_record, write_record

pygame = pytest.importorskip("pygame")
iio = pytest.importorskip("imageio.v3")

BOARD = "1122\n1122\n3344\n3345"


@pytest.fixture(autouse=True, scope="module")
def _forget_pygame():
    """Other test files check that stepping an env leaves pygame unimported: unload it after."""
    yield
    forget_pygame()


@pytest.fixture
def samegame_record(tmp_path: Path) -> Path:
    from mc_envs.envs.samegame import SameGameEnv

    env = SameGameEnv(board=BOARD)
    env.reset()
    actions = []
    for r, c in ((0, 1), (0, 3), (3, 0)):
        a = env.group_at(r, c)
        env.step(a)
        actions.append(a)
    record = make_record(
        env_id="mc_envs/SameGame-v0",
        env_kwargs={"board": BOARD},
        reset_seed=0,
        actions=actions,
        score=env.score,
        agent="test",
        params={},
        seconds=0.0,
        playouts=0,
    )
    path = tmp_path / "solution.json"
    write_record(path, record)
    return path


def test_replay_gif_has_one_frame_per_move_plus_the_start(
    samegame_record: Path, tmp_path: Path
) -> None:
    out = tmp_path / "replay.gif"
    png = tmp_path / "final.png"
    assert main(["replay", str(samegame_record), "--gif", str(out), "--png", str(png)]) == 0
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == 3 + 1
    final = iio.imread(png)
    assert final.shape == frames.shape[1:]
    assert np.abs(final.astype(int) - frames[-1].astype(int)).max() < 48  # GIF palette vs PNG
    assert not np.array_equal(frames[0], frames[1])


def test_replay_png_folder_and_mp4(samegame_record: Path, tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    mp4 = tmp_path / "replay.mp4"
    assert main(["replay", str(samegame_record), "--png", str(folder), "--mp4", str(mp4)]) == 0
    assert len(list(folder.glob("*.png"))) == 4
    assert mp4.stat().st_size > 0
    frames = iio.imread(mp4, index=None, plugin="pyav") if _has_pyav() else None
    if frames is not None:
        assert len(frames) == 4


def _has_pyav() -> bool:
    try:
        import av  # noqa: F401
    except ImportError:
        return False
    return True


def test_replay_of_a_bad_file_exits_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n")
    assert main(["replay", str(bad), "--gif", str(tmp_path / "x.gif")]) == 2
    assert "bad.txt" in capsys.readouterr().err


def test_rosin_82_gif_shows_82_lines(tmp_path: Path) -> None:
    from mc_envs.render import replay
    from mc_envs.render.draw import morpion as d
    from mc_envs.render.theme import default_theme

    out = tmp_path / "rosin82.gif"
    assert main(["replay", str(shipped_record("rosin82")), "--gif", str(out)]) == 0
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == 83
    last = frames[-1].astype(int)

    # Count the record's lines whose 4 unit segments all show the line colour in the last frame.
    game = replay.load(shipped_record("rosin82"))
    th = default_theme()
    cx, cy = game.crop[:2]
    want = np.array(th.morpion_line)
    _, moves = load_record(shipped_record("rosin82"))
    ox, oy = game.env.origin
    drawn = 0
    for m in moves:
        pts = [(x + ox, y + oy) for x, y in m.line()]
        ok = True
        for a, b in zip(pts, pts[1:]):
            pa, pb = d.point_center(*a, th), d.point_center(*b, th)
            x, y = (pa[0] + pb[0]) // 2 - cx, (pa[1] + pb[1]) // 2 - cy
            ok &= bool(np.abs(last[y, x] - want).max() < 40)
        drawn += ok
    assert drawn == 82
    # ... and the drawing itself reports 82 lines at the end, 0 at the start
    game.goto(len(game))
    surface = pygame.Surface(d.board_size(game.env, th))
    assert d.draw(surface, game.env, th) == 82
    assert int(game.env._state[mrules.H_MOVES]) == 82


def test_viewer_controls(samegame_record: Path) -> None:
    from mc_envs.render.replay import ReplayViewer, load

    pygame.display.init()
    viewer = ReplayViewer(load(samegame_record))

    def key(k, char=""):
        return pygame.event.Event(pygame.KEYDOWN, key=k, unicode=char, mod=0)

    assert viewer.process([key(pygame.K_RIGHT), key(pygame.K_RIGHT)]) == 2
    assert viewer.process([key(pygame.K_LEFT)]) == 1
    assert viewer.process([key(pygame.K_END)]) == 3
    assert viewer.process([key(pygame.K_HOME)]) == 0
    w, h = viewer.size()
    slider = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(w - 10, h - 5), button=1)
    assert viewer.process([slider]) == 3
    viewer.process([pygame.event.Event(pygame.MOUSEBUTTONUP, pos=(w - 10, h - 5), button=1)])
    viewer.process([key(pygame.K_HOME), key(pygame.K_SPACE)])
    assert viewer.playing
    speed = viewer.speed
    viewer.process([key(pygame.K_PLUS, "+")])
    assert viewer.speed > speed
    assert viewer.process([], dt_ms=1000.0 / viewer.speed + 1) == 1
    surface = pygame.Surface(viewer.size())
    viewer.draw(surface)
    assert viewer.replay.describe(1).startswith("move 1/3")
