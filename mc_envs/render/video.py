"""Writing frames to files: animated GIF, MP4 (imageio + imageio-ffmpeg) and PNG pictures.

Frames are ``H x W x 3`` uint8 arrays, as returned by ``env.render()`` in ``"rgb_array"`` mode or by
:func:`mc_envs.render.frame`. GIF and MP4 need the ``video`` extra (imageio, imported only here);
PNG pictures are saved by pygame, so they need the ``render`` extra alone. A missing one raises
:class:`mc_envs.extras.MissingExtra`, an ImportError naming the extra to install.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import numpy as np

from mc_envs.extras import require

VIDEO_HINT = 'pip install "mc-envs[video]"'


def _imageio() -> ModuleType:
    return require("imageio.v3", "video", "writing a GIF")


def write_gif(
    frames: Iterable[np.ndarray], path: str | os.PathLike, fps: float = 4, loop: int = 0
) -> int:
    """Writes an animated GIF, one picture per frame; returns the number of frames.

    Every frame is kept, even when two are identical (each shows one move).
    """
    import numpy as np

    iio = _imageio()
    stack = np.stack(list(frames))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    duration = int(round(1000 / fps))
    # optimize=False keeps identical consecutive frames as separate frames.
    iio.imwrite(path, stack, extension=".gif", duration=duration, loop=loop, optimize=False)
    return len(stack)


def write_mp4(frames: Iterable[np.ndarray], path: str | os.PathLike, fps: float = 4) -> int:
    """Writes an H.264 MP4 (needs imageio-ffmpeg); returns the number of frames.

    Frame sizes are padded to even numbers, as the codec requires. ffmpeg runs in the caller's
    process group (``IMAGEIO_FFMPEG_NO_PREVENT_SIGINT=1`` unless set otherwise), so Ctrl-C stops
    it too.
    """
    import numpy as np

    imageio = require("imageio", "video", "writing an MP4")
    require("imageio_ffmpeg", "video", "writing an MP4")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    # imageio-ffmpeg starts ffmpeg with a preexec_fn (Python run in the forked child) unless this
    # is set: unsafe in a process whose other threads (JAX's, numba's) may hold locks at the fork.
    os.environ.setdefault("IMAGEIO_FFMPEG_NO_PREVENT_SIGINT", "1")
    n = 0
    with imageio.get_writer(
        str(path),
        format="FFMPEG",
        mode="I",
        fps=fps,
        codec="libx264",
        macro_block_size=1,
        pixelformat="yuv420p",
    ) as writer:
        for f in frames:
            h, w = f.shape[:2]
            if h % 2 or w % 2:
                f = np.pad(f, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")
            writer.append_data(f)
            n += 1
    return n


def write_png(frame: np.ndarray, path: str | os.PathLike) -> None:
    """Writes one frame as a PNG picture (whatever the file's name ends with), through pygame."""
    import numpy as np

    from mc_envs.render._pygame import require_pygame

    pygame = require_pygame("writing a PNG")
    pixels = np.ascontiguousarray(np.asarray(frame, dtype=np.uint8)[..., :3].swapaxes(0, 1))
    surface = pygame.surfarray.make_surface(pixels)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file:
        pygame.image.save(surface, file, "frame.png")


def write_png_frames(
    frames: Iterable[np.ndarray], folder: str | os.PathLike, stem: str = "frame"
) -> int:
    """Writes every frame as ``folder/<stem>_0000.png`` ...; returns the number of frames."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for n, f in enumerate(frames, 1):
        write_png(f, folder / f"{stem}_{n - 1:04d}.png")
    return n
